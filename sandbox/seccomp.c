/* seccomp.c - the system-call half of the sandbox: an allow-list whose
 * default action kills the whole worker process.
 *
 * The list is the table below, one row per system call with the reason
 * it is there.  Rows marked SC_EXEC are added only when the policy names
 * an exec_path: running a program needs fork, execve, wait and friends.
 * Rows marked SC_NET are added only when the policy has allow_network (a
 * debuginfod client): socket() of AF_INET and AF_INET6 (AF_UNIX and
 * AF_NETLINK fail with EACCES, so that glibc's nscd probe falls back
 * instead of killing; others kill), connect, send, receive, poll, socket
 * options and names, and AF_UNIX socketpair() for libcurl's resolver
 * thread.  Landlock still refuses TCP bind() (see landlock.c).
 * A few rows look at arguments: ioctl() only for TCGETS (isatty; other
 * requests fail with ENOTTY, as perf probes the terminal size), prlimit64
 * only to read a limit (a root worker could raise its own), fchmod
 * without setuid/setgid bits, clone of threads (and, with exec_path,
 * of processes without new namespaces), clone3
 * refused with ENOSYS (its flags sit behind a pointer; glibc then falls
 * back to clone), memfd_create with exec_path only for MFD_NOEXEC_SEAL
 * files (Landlock does not cover executing a memfd).  Anything else -
 * socket and connect without allow_network, ptrace, mount, bpf,
 * perf_event_open, process_vm_*, keyctl, chmod or chown by path (Landlock
 * does not cover metadata), new processes without exec_path, ... - kills.
 *
 * libseccomp compiles the table once per process and mode into BPF,
 * which the parent keeps; the child installs it with one seccomp() call
 * and no allocation.  In front of it the child puts a tiny guard that
 * knows its pid: tgkill() only at itself (so abort() works but other
 * processes cannot be signalled) and, with exec, setpgid() only into the
 * worker's own group (so no descendant can leave the group that the
 * parent kills).
 */
#include "sbx_int.h"

#include <errno.h>
#include <pthread.h>
#include <seccomp.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <unistd.h>

#include "base/util.h"

enum sc_rule {
	SC_ALLOW,       /* allowed whatever the arguments */
	SC_IOCTL_TTY,   /* only TCGETS; other requests fail with ENOTTY */
	SC_GET_LIMIT,   /* only reading a limit; setting one fails with EPERM */
	SC_SELF,        /* only with first argument 0: the calling process */
	SC_NO_NS,       /* clone without CLONE_NEW* flags */
	SC_THREAD,      /* clone of a thread (CLONE_THREAD), not of a process */
	SC_ENOSYS,      /* fails with ENOSYS so that glibc falls back */
	SC_PLAIN_MODE,  /* a mode without setuid, setgid or sticky bits */
	SC_PRCTL,       /* the read-only or self-only options in prctl_ok[] */
	SC_SOCKET,      /* AF_INET, AF_INET6; AF_UNIX, AF_NETLINK fail with EACCES */
	SC_UNIX_PAIR,   /* socketpair of AF_UNIX only */
	SC_MEMFD        /* any flags; with exec only MFD_NOEXEC_SEAL (else EPERM) */
};

#ifndef MFD_NOEXEC_SEAL
#define MFD_NOEXEC_SEAL 0x0008U  /* Linux 6.3; not in Debian 12's headers */
#endif

/* When a row applies (sc_row.when): always, or in these modes. */
enum { SC_ALWAYS = 0, SC_EXEC = 1, SC_NET = 2, SC_PERF = 4 };

struct sc_row {
	const char *name;
	unsigned char when;   /* SC_ALWAYS, or a mask: SC_EXEC when the policy
			       * has an exec_path, SC_NET with allow_network */
	enum sc_rule rule;
	const char *why;
};

static const struct sc_row sc_table[] = {
	/* descriptors: files, the result pipe, stderr */
	{"read", 0, SC_ALLOW, "read files and pipes"},
	{"write", 0, SC_ALLOW, "write the result pipe, stderr and files"},
	{"readv", 0, SC_ALLOW, "stdio and zlib read in pieces"},
	{"writev", 0, SC_ALLOW, "stdio writes in pieces"},
	{"pread64", 0, SC_ALLOW, "libelf/libdw and the dynamic loader read at offsets"},
	{"pwrite64", 0, SC_ALLOW, "write at offsets"},
	{"lseek", 0, SC_ALLOW, "stdio and libelf seek"},
	{"close", 0, SC_ALLOW, "close descriptors"},
	{"close_range", 0, SC_ALLOW, "close many descriptors at once"},
	{"dup", 0, SC_ALLOW, "descriptor plumbing"},
	{"dup2", 0, SC_ALLOW, "descriptor plumbing"},
	{"dup3", 0, SC_ALLOW, "descriptor plumbing"},
	{"fcntl", 0, SC_ALLOW, "O_NONBLOCK, FD_CLOEXEC, file status flags"},
	{"pipe2", 0, SC_ALLOW, "pipes between parts of a tool"},
	{"ioctl", 0, SC_IOCTL_TTY, "isatty() asks TCGETS; nothing else"},
	/* paths: Landlock decides which ones */
	{"openat", 0, SC_ALLOW, "open files (Landlock limits the paths)"},
	{"open", 0, SC_ALLOW, "old form of openat"},
	{"fstat", 0, SC_ALLOW, "file sizes for reading and mmap"},
	{"newfstatat", 0, SC_ALLOW, "stat(), lstat(), fstat() in glibc"},
	{"stat", 0, SC_ALLOW, "old form of newfstatat"},
	{"lstat", 0, SC_ALLOW, "old form of newfstatat"},
	{"statx", 0, SC_ALLOW, "newer stat"},
	{"getdents64", 0, SC_ALLOW, "readdir() over session folders"},
	{"access", 0, SC_ALLOW, "access() checks"},
	{"faccessat", 0, SC_ALLOW, "access() checks"},
	{"faccessat2", 0, SC_ALLOW, "access() checks"},
	{"readlink", 0, SC_ALLOW, "realpath() resolves symbolic links"},
	{"readlinkat", 0, SC_ALLOW, "realpath() resolves symbolic links"},
	{"getcwd", 0, SC_ALLOW, "realpath() of relative paths"},
	{"mkdir", 0, SC_ALLOW, "artifact folders (Landlock: write root only)"},
	{"mkdirat", 0, SC_ALLOW, "artifact folders"},
	{"rmdir", 0, SC_ALLOW, "remove temporary folders"},
	{"rename", 0, SC_ALLOW, "atomic artifact writes"},
	{"renameat", 0, SC_ALLOW, "atomic artifact writes"},
	{"renameat2", 0, SC_ALLOW, "atomic artifact writes"},
	{"unlink", 0, SC_ALLOW, "remove temporary files"},
	{"unlinkat", 0, SC_ALLOW, "remove temporary files"},
	{"fsync", 0, SC_ALLOW, "durable artifacts"},
	{"fdatasync", 0, SC_ALLOW, "durable artifacts"},
	{"ftruncate", 0, SC_ALLOW, "rewrite a file in place"},
	{"fchmod", 0, SC_PLAIN_MODE, "mode of a new artifact; never setuid or setgid"},
	/* memory */
	{"brk", 0, SC_ALLOW, "malloc"},
	{"mmap", 0, SC_ALLOW, "malloc of large blocks, mapped files"},
	{"munmap", 0, SC_ALLOW, "free of large blocks"},
	{"mremap", 0, SC_ALLOW, "realloc of large blocks"},
	{"mprotect", 0, SC_ALLOW, "malloc arenas, the dynamic loader"},
	{"madvise", 0, SC_ALLOW, "free() gives memory back"},
	/* threads, signals, time */
	{"futex", 0, SC_ALLOW, "glibc locks"},
	{"set_robust_list", 0, SC_ALLOW, "glibc thread setup"},
	{"rseq", 0, SC_ALLOW, "glibc thread setup"},
	{"rt_sigaction", 0, SC_ALLOW, "libraries install handlers"},
	{"rt_sigprocmask", 0, SC_ALLOW, "libraries block signals"},
	{"rt_sigreturn", 0, SC_ALLOW, "return from a handler"},
	{"sigaltstack", 0, SC_ALLOW, "handlers on their own stack (sanitizers)"},
	{"tgkill", 0, SC_ALLOW, "abort() and raise(); the guard keeps it to the worker itself"},
	{"restart_syscall", 0, SC_ALLOW, "a sleep interrupted by SIGSTOP/SIGCONT"},
	{"clock_gettime", 0, SC_ALLOW, "timing (when the vDSO cannot)"},
	{"clock_getres", 0, SC_ALLOW, "timing"},
	{"gettimeofday", 0, SC_ALLOW, "timing"},
	{"time", 0, SC_ALLOW, "timing"},
	{"clock_nanosleep", 0, SC_ALLOW, "sleep"},
	{"nanosleep", 0, SC_ALLOW, "sleep"},
	{"sched_yield", 0, SC_ALLOW, "spin locks"},
	/* identity and resources */
	{"getpid", 0, SC_ALLOW, "identity"},
	{"gettid", 0, SC_ALLOW, "identity"},
	{"getppid", 0, SC_ALLOW, "identity"},
	{"getuid", 0, SC_ALLOW, "identity"},
	{"geteuid", 0, SC_ALLOW, "identity"},
	{"getgid", 0, SC_ALLOW, "identity"},
	{"getegid", 0, SC_ALLOW, "identity"},
	{"uname", 0, SC_ALLOW, "system name and release"},
	{"sysinfo", 0, SC_ALLOW, "qsort() sizes its buffer by the physical memory"},
	{"prlimit64", 0, SC_GET_LIMIT, "getrlimit(); raising a limit fails with EPERM"},
	{"getrusage", 0, SC_ALLOW, "CPU time of the worker itself"},
	{"getrandom", 0, SC_ALLOW, "hash seeds, temporary names"},
	{"exit", 0, SC_ALLOW, "end a thread"},
	{"clone", 0, SC_THREAD, "threads of the worker (the engine hashes input beside parsing); a thread keeps the worker's filter and Landlock domain"},
	{"clone3", 0, SC_ENOSYS, "its flags cannot be checked; glibc falls back to clone"},
	{"exit_group", 0, SC_ALLOW, "end the worker"},
	{"memfd_create", 0, SC_MEMFD, "an anonymous file (a fetched debug file without a cache "
	 "folder); with exec_path only a non-executable one, else fexecve() of it would run "
	 "any program"},
	/* running exec_path */
	{"execve", 1, SC_ALLOW, "run exec_path (Landlock: that file only)"},
	{"execveat", 1, SC_ALLOW, "run exec_path"},
	{"clone", 1, SC_NO_NS, "fork() and posix_spawn(); no new namespaces"},
	{"fork", 1, SC_ALLOW, "start the program"},
	{"vfork", 1, SC_ALLOW, "start the program"},
	{"wait4", 1, SC_ALLOW, "wait for it"},
	{"waitid", 1, SC_ALLOW, "wait for it"},
	{"pidfd_open", 1, SC_ALLOW, "wait for it: poll wakes at its exit (no signal: pidfd_send_signal is not allowed)"},
	{"kill", 1, SC_ALLOW, "stop it (Landlock ABI 6 keeps signals inside the sandbox)"},
	{"setpgid", 1, SC_ALLOW, "job control; the guard keeps it to the worker's group"},
	{"setpriority", 1, SC_ALLOW, "nice the program it runs"},
	{"getpgid", 1, SC_ALLOW, "job control"},
	{"getpgrp", 1, SC_ALLOW, "job control"},
	{"pipe", 1, SC_ALLOW, "talk to it"},
	{"poll", SC_EXEC | SC_NET, SC_ALLOW, "talk to it; wait for a server"},
	{"ppoll", SC_EXEC | SC_NET, SC_ALLOW, "talk to it; wait for a server"},
	{"select", 1, SC_ALLOW, "talk to it"},
	{"pselect6", 1, SC_ALLOW, "talk to it"},
	{"rt_sigsuspend", 1, SC_ALLOW, "shells wait for children"},
	{"arch_prctl", 1, SC_ALLOW, "the new program's thread pointer"},
	{"set_tid_address", 1, SC_ALLOW, "the new program's glibc start"},
	{"capget", 1, SC_ALLOW, "perf checks its capabilities"},
	{"prctl", SC_ALWAYS, SC_PRCTL, "a worker names itself; perf reads the bounding set"},
	{"sched_getaffinity", 0, SC_ALLOW, "perf finds its CPUs; thread start-up under ASan asks too (read-only)"},
	{"sched_setaffinity", 1, SC_SELF, "perf pins itself"},
	{"get_mempolicy", 1, SC_ALLOW, "perf's NUMA setup"},
	{"set_mempolicy", 1, SC_ALLOW, "perf's NUMA setup (itself only)"},
	{"statfs", 1, SC_ALLOW, "perf looks for sysfs and procfs"},
	{"fstatfs", 1, SC_ALLOW, "file system type of an open file"},
	{"mincore", 1, SC_ALLOW, "perf script of a dwarf perf.data (and perf record) checks "
	 "which pages of its own memory are mapped; it reports residency only"},
	/* collection (perf record, stat, sched, lock and what it starts) */
	{"perf_event_open", SC_PERF, SC_ALLOW, "perf opens its counters and samplers"},
	{"bpf", SC_PERF, SC_ENOSYS, "perf probes for BPF; it does without"},
	{"unshare", SC_PERF, SC_ENOSYS, "perf tries namespaces; it does without"},
	{"setns", SC_PERF, SC_ENOSYS, "perf enters targets' namespaces; it does without"},
	{"sched_setscheduler", SC_PERF, SC_ALLOW, "perf bench and targets set their policy"},
	{"sched_getscheduler", SC_PERF, SC_ALLOW, "read the scheduling policy"},
	{"sched_getparam", SC_PERF, SC_ALLOW, "read the scheduling policy"},
	{"getpriority", SC_PERF, SC_ALLOW, "read a niceness"},
	{"eventfd2", SC_PERF, SC_ALLOW, "perf record's control and wake-up fds"},
	{"epoll_create1", SC_PERF, SC_ALLOW, "perf record waits on its ring buffers"},
	{"epoll_ctl", SC_PERF, SC_ALLOW, "perf record waits on its ring buffers"},
	{"epoll_wait", SC_PERF, SC_ALLOW, "perf record waits on its ring buffers"},
	{"epoll_pwait", SC_PERF, SC_ALLOW, "perf record waits on its ring buffers"},
	{"getcpu", SC_PERF, SC_ALLOW, "which CPU a thread runs on"},
	{"mlock", SC_PERF, SC_ALLOW, "pin ring buffers"},
	{"munlock", SC_PERF, SC_ALLOW, "unpin ring buffers"},
	{"membarrier", SC_PERF, SC_ALLOW, "runtimes of profiled targets"},
	{"pause", SC_PERF, SC_ALLOW, "targets that wait for a signal"},
	{"alarm", SC_PERF, SC_ALLOW, "targets that time themselves"},
	{"setitimer", SC_PERF, SC_ALLOW, "targets that time themselves"},
	{"getitimer", SC_PERF, SC_ALLOW, "targets that time themselves"},
	{"timerfd_create", SC_PERF, SC_ALLOW, "perf and targets wait on timers"},
	{"timerfd_settime", SC_PERF, SC_ALLOW, "perf and targets wait on timers"},
	{"sync_file_range", SC_PERF, SC_ALLOW, "perf record flushes perf.data"},
	{"fallocate", SC_PERF, SC_ALLOW, "perf record grows perf.data"},
	{"personality", SC_PERF, SC_ALLOW, "perf queries the execution domain"},

	/* network (a debuginfod client: libcurl and glibc's resolver) */
	{"socket", SC_NET, SC_SOCKET, "TCP to a server, UDP to the name server"},
	{"socketpair", SC_NET, SC_UNIX_PAIR, "libcurl wakes its resolver thread"},
	{"connect", SC_NET, SC_ALLOW, "reach the server (Landlock: no bind)"},
	{"getsockopt", SC_NET, SC_ALLOW, "SO_ERROR after a non-blocking connect"},
	{"setsockopt", SC_NET, SC_ALLOW, "TCP_NODELAY, keep-alive, IP_RECVERR"},
	{"getsockname", SC_NET, SC_ALLOW, "libcurl logs the local address"},
	{"getpeername", SC_NET, SC_ALLOW, "libcurl logs the peer address"},
	{"sendto", SC_NET, SC_ALLOW, "send a request"},
	{"recvfrom", SC_NET, SC_ALLOW, "read an answer"},
	{"sendmsg", SC_NET, SC_ALLOW, "send a request"},
	{"recvmsg", SC_NET, SC_ALLOW, "read an answer"},
	{"sendmmsg", SC_NET, SC_ALLOW, "glibc sends A and AAAA queries at once"},
	{"shutdown", SC_NET, SC_ALLOW, "close a connection"},
};

/* prctl() options a program run by a worker may use. */
static const int prctl_ok[] = {
	PR_CAPBSET_READ, PR_GET_NAME, PR_SET_NAME, PR_GET_DUMPABLE,
	PR_SET_PDEATHSIG, PR_GET_PDEATHSIG, PR_GET_NO_NEW_PRIVS,
};

#define CLONE_NEW_ANY (CLONE_NEWNS | CLONE_NEWCGROUP | CLONE_NEWUTS | CLONE_NEWIPC | \
		       CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNET)

/* Without exec, only PR_SET_NAME: a spare becomes "perflens-worker" once
 * its job comes (sandbox/zygote.c), after it was confined. */
static int add_prctl(scmp_filter_ctx ctx, int nr, int mode)
{
	int rc = 0;

	if (!(mode & SC_EXEC))
		return seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nr, 1,
					SCMP_A0(SCMP_CMP_EQ, (scmp_datum_t)PR_SET_NAME));
	for (size_t i = 0; i < PL_ARRAY_LEN(prctl_ok) && rc == 0; i++)
		rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nr, 1,
				      SCMP_A0(SCMP_CMP_EQ, (scmp_datum_t)prctl_ok[i]));
	return rc;
}

/* socket(): internet families allowed, local ones refused softly. */
static int add_socket(scmp_filter_ctx ctx, int nr)
{
	static const int allow[] = {AF_INET, AF_INET6}, refuse[] = {AF_UNIX, AF_NETLINK};
	int rc = 0;

	for (size_t i = 0; i < PL_ARRAY_LEN(allow) && rc == 0; i++)
		rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nr, 1,
				      SCMP_A0(SCMP_CMP_EQ, (scmp_datum_t)allow[i]));
	for (size_t i = 0; i < PL_ARRAY_LEN(refuse) && rc == 0; i++)
		rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EACCES), nr, 1,
				      SCMP_A0(SCMP_CMP_EQ, (scmp_datum_t)refuse[i]));
	return rc;
}

/* memfd_create(): Landlock does not cover executing a memfd, so a worker
 * that may exec gets only sealed non-executable ones. */
static int add_memfd(scmp_filter_ctx ctx, int nr, unsigned mode)
{
	int rc;

	if (!(mode & SC_EXEC))
		return seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nr, 0);
	rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nr, 1,
			      SCMP_A1(SCMP_CMP_MASKED_EQ, MFD_NOEXEC_SEAL, MFD_NOEXEC_SEAL));
	return rc ? rc : seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), nr, 1,
					  SCMP_A1(SCMP_CMP_MASKED_EQ, MFD_NOEXEC_SEAL, 0));
}

/* Add one row for `mode` (SC_EXEC | SC_NET bits); 0 or a negative errno
 * from libseccomp. */
static int add_row(scmp_filter_ctx ctx, const struct sc_row *r, unsigned mode)
{
	int nr = seccomp_syscall_resolve_name(r->name);
	int rc;

	if (nr < 0)
		return 0;  /* not a system call of this architecture */
	switch (r->rule) {
	case SC_ALLOW:
		return seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nr, 0);
	case SC_IOCTL_TTY:
		/* perf's PERF_EVENT_IOC_* and its targets' own ioctls on the
		 * files Landlock lets them open. */
		if (mode & SC_PERF)
			return seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nr, 0);
		rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nr, 1, SCMP_A1(SCMP_CMP_EQ, TCGETS));
		return rc ? rc : seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOTTY), nr, 1,
						  SCMP_A1(SCMP_CMP_NE, TCGETS));
	case SC_GET_LIMIT:
		rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nr, 1, SCMP_A2(SCMP_CMP_EQ, 0));
		return rc ? rc : seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), nr, 1,
						  SCMP_A2(SCMP_CMP_NE, 0));
	case SC_SELF:
		return seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nr, 1, SCMP_A0(SCMP_CMP_EQ, 0));
	case SC_NO_NS:
		return seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nr, 1,
					SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_NEW_ANY, 0));
	case SC_THREAD:
		return seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nr, 1,
					SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_THREAD, CLONE_THREAD));
	case SC_ENOSYS:
		return seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), nr, 0);
	case SC_PLAIN_MODE:
		return seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nr, 1,
					SCMP_A1(SCMP_CMP_MASKED_EQ, 07000, 0));
	case SC_PRCTL:
		return add_prctl(ctx, nr, mode);
	case SC_SOCKET:
		return add_socket(ctx, nr);
	case SC_UNIX_PAIR:
		return seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nr, 1, SCMP_A0(SCMP_CMP_EQ, AF_UNIX));
	case SC_MEMFD:
		return add_memfd(ctx, nr, mode);
	}
	return -EINVAL;
}

/* libseccomp's BPF for `ctx` into `out` (new); 0 or a negative errno. */
static int export_bpf(scmp_filter_ctx ctx, struct sock_fprog *out)
{
	int fd = memfd_create("sbx-seccomp", MFD_CLOEXEC);
	struct sock_filter *f;
	off_t size;
	int rc;

	if (fd < 0)
		return -errno;
	rc = seccomp_export_bpf(ctx, fd);
	size = rc ? 0 : lseek(fd, 0, SEEK_END);
	if (rc == 0 && (size <= 0 || size % (off_t)sizeof(*f) ||
			size / (off_t)sizeof(*f) > BPF_MAXINSNS))
		rc = -EIO;
	if (rc == 0) {
		f = pl_xmalloc((size_t)size);
		if (pread(fd, f, (size_t)size, 0) == size) {
			out->filter = f;
			out->len = (unsigned short)(size / (off_t)sizeof(*f));
		} else {
			free(f);
			rc = -EIO;
		}
	}
	close(fd);
	return rc;
}

/* Compile the table for one mode (SC_EXEC | SC_NET bits) into `out` (a
 * new BPF program). */
static enum pl_err build(unsigned mode, struct sock_fprog *out, struct pl_error *err)
{
	uint32_t kill = seccomp_api_get() >= 3 ? SCMP_ACT_KILL_PROCESS : SCMP_ACT_KILL;
	scmp_filter_ctx ctx = seccomp_init(kill);
	const struct sc_row *failed = NULL;
	int rc = 0;

	if (!ctx)
		return pl_fail(err, PL_ERR_INTERNAL, NULL, "cannot start a seccomp filter");
	seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, kill);
	seccomp_attr_set(ctx, SCMP_FLTATR_CTL_OPTIMIZE, 2);  /* a binary tree; best effort */
	for (size_t i = 0; i < PL_ARRAY_LEN(sc_table) && rc == 0; i++)
		if ((sc_table[i].when == SC_ALWAYS || (sc_table[i].when & mode)) &&
		    (rc = add_row(ctx, &sc_table[i], mode)))
			failed = &sc_table[i];
	if (rc == 0)
		rc = export_bpf(ctx, out);
	seccomp_release(ctx);
	if (rc && failed)
		return pl_fail(err, PL_ERR_INTERNAL, NULL, "cannot allow '%s' (%s) in the seccomp "
			       "filter: %s", failed->name, failed->why, strerror(-rc));
	if (rc)
		return pl_fail(err, PL_ERR_INTERNAL, NULL, "cannot build the seccomp filter: %s",
			       strerror(-rc));
	return PL_OK;
}

/* The compiled programs, indexed by mode (SC_EXEC | SC_NET | SC_PERF bits). */
static struct sock_fprog sc_progs[8];
static pthread_mutex_t sc_lock = PTHREAD_MUTEX_INITIALIZER;

enum pl_err sbx_sc_program(bool exec, bool network, bool perf, const struct sock_fprog **prog,
			   struct pl_error *err)
{
	unsigned mode = (exec ? SC_EXEC : 0) | (network ? SC_NET : 0) | (perf ? SC_PERF : 0);
	struct sock_fprog *p = &sc_progs[mode];
	enum pl_err rc = PL_OK;

	pthread_mutex_lock(&sc_lock);
	if (!p->filter)
		rc = build(mode, p, err);
	pthread_mutex_unlock(&sc_lock);
	*prog = p;
	return rc;
}

/* Low 32 bits of argument `i` (the kernel reads pids as int). */
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define ARG_LO(i) (offsetof(struct seccomp_data, args) + 8 * (i))
#else
#define ARG_LO(i) (offsetof(struct seccomp_data, args) + 8 * (i) + 4)
#endif

/* The guard, put in front of the allow-list in one program (one BPF JIT
 * instead of two): system call `nr` fails with `fail` unless argument
 * `arg` equals `self`; everything else goes on to the allow-list. */
#define GUARD_LEN 7

static void fill_guard(struct sock_filter *f, uint32_t nr, unsigned arg, uint32_t self,
		       uint32_t fail)
{
	const struct sock_filter guard[GUARD_LEN] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, seccomp_arch_native(), 0, 5),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, nr, 0, 3),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, ARG_LO(arg)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, self, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, fail),
	};

	memcpy(f, guard, sizeof(guard));
}

int sbx_sc_install(const struct sock_fprog *prog, bool exec, pid_t self)
{
	struct sock_filter f[GUARD_LEN + prog->len];
	struct sock_fprog all = {(unsigned short)(GUARD_LEN + prog->len), f};

	if (exec)
		fill_guard(f, SYS_setpgid, 1, (uint32_t)self, SECCOMP_RET_ERRNO | EPERM);
	else
		fill_guard(f, SYS_tgkill, 0, (uint32_t)self, SECCOMP_RET_KILL_PROCESS);
	memcpy(f + GUARD_LEN, prog->filter, prog->len * sizeof(*f));
	return (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &all);
}
