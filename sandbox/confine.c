/* confine.c - the child side of a worker (sbx_int.h's sbx_prepare and
 * sbx_child_main): what can fail in an ordinary way is prepared in the
 * parent (Landlock ruleset, seccomp program); the child then takes its
 * own process group and the parent-death signal, keeps descriptors 0-4
 * only (3 is out_fd; 4 the status pipe, which carries a setup failure
 * message, or the done record once fn returned; 5 the ruleset, closed
 * before fn runs; 6, a primed spare's job pipe; 7 a collection worker's
 * launcher connection), default signals, no_new_privs, rlimits, no
 * capabilities (a collection probe keeps perf's), Landlock, seccomp, then
 * runs fn and leaves.  Used by sandbox.c's own forks and by the zygote's
 * spares (zygote.c), below both.
 */
#include "sbx_int.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "base/util.h"

#define CHILD_OUT_FD 3
#define CHILD_STATUS_FD 4
#define CHILD_RULESET_FD 5

/* Report `what` failed (with errno) to the parent and leave. */
static void __attribute__((noreturn)) child_fail(int status_fd, const char *what)
{
	char msg[120];
	int e = errno;
	int n = snprintf(msg, sizeof(msg), "cannot %s: %s", what, strerror(e));
	size_t len = n < 0 ? 0 : (size_t)n < sizeof(msg) ? (size_t)n : sizeof(msg) - 1;

	/* If even this fails, the parent sees exit status SBX_SETUP_EXIT. */
	if (write(status_fd, msg, len) < 0)
		_exit(SBX_SETUP_EXIT);
	_exit(SBX_SETUP_EXIT);
}

/* Default handlers, SIGPIPE ignored (a write to a closed pipe fails with
 * EPIPE instead of killing), nothing blocked. */
static void child_signals(void)
{
	struct sigaction sa;
	sigset_t none;

	memset(&sa, 0, sizeof(sa));
	for (int sig = 1; sig < NSIG; sig++) {
		if (sig == SIGKILL || sig == SIGSTOP)
			continue;
		sa.sa_handler = sig == SIGPIPE ? SIG_IGN : SIG_DFL;
		sigaction(sig, &sa, NULL);  /* fails harmlessly on glibc's own */
	}
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
}

/* Close every descriptor from `first` on (a loop on old kernels). */
void sbx_close_from(unsigned first)
{
	struct rlimit rl;

	if (syscall(SYS_close_range, first, ~0U, 0) == 0)
		return;
	if (getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur > 1u << 20)
		rl.rlim_cur = 1u << 20;
	for (unsigned fd = first; fd < rl.rlim_cur; fd++)
		close((int)fd);
}

/* The launcher's socket (server, zygote) and a worker's own connection. */
static int launcher_socket = -1, launcher_conn = -1;

void sbx_set_launcher_fd(int fd)
{
	launcher_socket = fd;
}

int sbx_launcher_socket(void)
{
	return launcher_socket;
}

void sbx_launcher_socket_moved(int fd)
{
	launcher_socket = fd;
}

int sbx_launcher_conn(void)
{
	return launcher_conn;
}

static bool confined;

bool sbx_confined(void)
{
	return confined;
}

/* A collection worker's own connection to the launcher, before anything
 * is confined: one end goes to the launcher, which forks a handler for
 * it; -1 when there is no launcher or it cannot be reached. */
static int connect_launcher(void)
{
	char byte = 'C', cbuf[CMSG_SPACE(sizeof(int))];
	struct iovec iov = {&byte, 1};
	struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf,
			   .msg_controllen = sizeof(cbuf)};
	struct cmsghdr *c;
	int sv[2];

	if (launcher_socket < 0 || socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
		return -1;
	memset(cbuf, 0, sizeof(cbuf));
	c = CMSG_FIRSTHDR(&m);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &sv[1], sizeof(int));
	if (sendmsg(launcher_socket, &m, MSG_NOSIGNAL) != 1) {
		close(sv[0]), close(sv[1]);
		return -1;
	}
	close(sv[1]);
	return sv[0];
}

/* 0, 1 on /dev/null, 2 kept, 3 out, 4 status, 5 ruleset, 6 the job pipe
 * of a primed spare, 7 the launcher connection of a collection worker,
 * nothing else.  Returns the step that failed, or NULL. */
static const char *child_fds(const struct sbx_plan *p, int *status_fd)
{
	int conn = -1;

	if (p->pol->use_launcher) {
		int c = connect_launcher();
		if (c >= 0 && (conn = fcntl(c, F_DUPFD_CLOEXEC, 10)) < 0)
			return "move its launcher connection";
		if (c >= 0)
			close(c);
	}
	int out = fcntl(p->out_w, F_DUPFD_CLOEXEC, 10);
	int st = fcntl(p->status_w, F_DUPFD_CLOEXEC, 10);
	int rs = p->ruleset >= 0 ? fcntl(p->ruleset, F_DUPFD_CLOEXEC, 10) : -1;
	int job = p->job_r > 0 ? fcntl(p->job_r, F_DUPFD_CLOEXEC, 10) : -1;
	int null;

	if (out < 0 || st < 0 || (p->ruleset >= 0 && rs < 0) || (p->job_r > 0 && job < 0))
		return "move its pipes";
	if (job >= 0 && dup3(job, SBX_JOB_FD, O_CLOEXEC) < 0)
		return "move its job pipe";
	if (dup3(st, CHILD_STATUS_FD, O_CLOEXEC) < 0)
		return "move its status pipe";
	*status_fd = CHILD_STATUS_FD;
	if (dup2(out, CHILD_OUT_FD) < 0 ||
	    (rs >= 0 && dup3(rs, CHILD_RULESET_FD, O_CLOEXEC) < 0))
		return "move its pipes";
	null = open("/dev/null", O_RDWR);
	if (null < 0 || dup2(null, 0) < 0 || dup2(null, 1) < 0)
		return "open /dev/null for stdin and stdout";
	if (null > 2)
		close(null);
	if (job >= 0 && rs < 0)
		close(CHILD_RULESET_FD);
	if (conn >= 0) {
		if (dup3(conn, SBX_LAUNCH_CONN_FD, O_CLOEXEC) < 0)
			return "move its launcher connection";
		if (rs < 0)
			close(CHILD_RULESET_FD);
		if (job < 0)
			close(SBX_JOB_FD);
		sbx_close_from(SBX_LAUNCH_CONN_FD + 1);
		launcher_conn = SBX_LAUNCH_CONN_FD;
	} else if (job >= 0) {
		sbx_close_from(SBX_JOB_FD + 1);
	} else {
		sbx_close_from(rs >= 0 ? CHILD_RULESET_FD + 1 : CHILD_RULESET_FD);
	}
	launcher_socket = -1;
	return NULL;
}

/* Lower `res` to `v` (hard limit too, so the worker cannot raise it). */
static int set_limit(int res, uint64_t v, bool cpu)
{
	struct rlimit rl;

	if (getrlimit(res, &rl) < 0)
		return -1;
	if (rl.rlim_max != RLIM_INFINITY && v > rl.rlim_max)
		v = rl.rlim_max;
	rl.rlim_cur = v;
	/* RLIMIT_CPU: SIGXCPU at the soft limit, SIGKILL a second later. */
	rl.rlim_max = cpu && (rl.rlim_max == RLIM_INFINITY || v < rl.rlim_max) ? v + 1 : v;
	return setrlimit(res, &rl);
}

static const char *child_limits(const struct sbx_policy *pol)
{
	if (set_limit(RLIMIT_CORE, 0, false) < 0)
		return "set RLIMIT_CORE";
#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
	/* ASan and TSan reserve terabytes of address space for their shadow. */
	if (pol->max_address_space && set_limit(RLIMIT_AS, pol->max_address_space, false) < 0)
		return "set RLIMIT_AS";
#endif
	if (pol->max_cpu_seconds && set_limit(RLIMIT_CPU, pol->max_cpu_seconds, true) < 0)
		return "set RLIMIT_CPU";
	if (pol->max_open_files && set_limit(RLIMIT_NOFILE, pol->max_open_files, false) < 0)
		return "set RLIMIT_NOFILE";
	if (pol->max_file_size && set_limit(RLIMIT_FSIZE, pol->max_file_size, false) < 0)
		return "set RLIMIT_FSIZE";
	return NULL;
}

/* Capabilities a collection worker keeps (when it has them): tracing
 * system-wide (CAP_PERFMON, 38), kernel addresses (CAP_SYSLOG, 34),
 * attaching to another process (CAP_SYS_PTRACE, 19) and perf's locked
 * ring buffers (CAP_IPC_LOCK, 14).  Numbers, not the <linux/capability.h>
 * names, because Debian 12's glibc headers predate CAP_PERFMON. */
static const int collection_caps[] = {38, 34, 19, 14};

/* A worker of a root server keeps uid 0 but no capability (a collection
 * worker: only collection_caps); with no_new_privs, execve cannot give
 * any back. */
static int drop_caps(bool collection)
{
	struct __user_cap_header_struct hdr = {_LINUX_CAPABILITY_VERSION_3, 0};
	struct __user_cap_data_struct data[2], keep[2];

	if (syscall(SYS_capget, &hdr, data) < 0)
		return -1;
	if (!(data[0].effective | data[0].permitted | data[0].inheritable |
	      data[1].effective | data[1].permitted | data[1].inheritable))
		return 0;
	memset(keep, 0, sizeof(keep));
	for (size_t i = 0; collection && i < PL_ARRAY_LEN(collection_caps); i++) {
		int c = collection_caps[i];
		uint32_t bit = 1u << (c % 32);
		if (data[c / 32].permitted & bit) {
			keep[c / 32].permitted |= bit;
			keep[c / 32].effective |= bit;
		}
	}
	return (int)syscall(SYS_capset, &hdr, keep);
}

/* Every confinement step in order; the failed step, or NULL. */
static const char *child_confine(const struct sbx_plan *p, int *status_fd)
{
	const char *failed;

	if (setpgid(0, 0) < 0)
		return "make its own process group";
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0)
		return "set its parent-death signal";
	if (getppid() != p->parent)
		_exit(SBX_SETUP_EXIT);  /* the parent is already gone */
	child_signals();
	if ((failed = child_fds(p, status_fd)))
		return failed;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return "set no_new_privs";
	if ((failed = child_limits(p->pol)))
		return failed;
	if (drop_caps(p->pol->allow_perf_events && p->pol->exec_path) < 0)
		return "drop its capabilities";
	if (p->ruleset >= 0 && sbx_ll_restrict(CHILD_RULESET_FD) < 0)
		return "apply its Landlock ruleset";
	if (p->ruleset >= 0)
		close(CHILD_RULESET_FD);
	if (p->prog && sbx_sc_install(p->prog, p->pol->exec_path != NULL, getpid()) < 0)
		return "install its seccomp filter";
	return NULL;
}

/* The job is done: close the result pipe (the parent reads to its end),
 * then say so on the status pipe with the exit status, so the parent can
 * answer without waiting for this process to be torn down and reaped. */
static void __attribute__((noreturn)) child_done(int rc)
{
	unsigned char done[2] = {SBX_DONE_MARK, (unsigned char)(rc & 0xff)};

	close(CHILD_OUT_FD);
	if (write(CHILD_STATUS_FD, done, sizeof(done)) < 0)
		(void)0;  /* the parent then learns the status from the reap */
	_exit(rc & 0xff);
}

static sbx_preconfine_fn preconfine;

void sbx_set_preconfine(sbx_preconfine_fn fn)
{
	preconfine = fn;
}

void sbx_child_main(const struct sbx_plan *p)
{
	int status_fd = p->status_w;
	const char *failed;

	if (preconfine)
		preconfine(p->pol);
	failed = child_confine(p, &status_fd);

	if (failed)
		child_fail(status_fd, failed);
	confined = true;
	child_done(p->fn(p->arg, CHILD_OUT_FD));
}

/* The ruleset and the seccomp program for `pol`. */
enum pl_err sbx_prepare(const struct sbx_policy *pol, struct sbx_plan *p, int *abi,
			struct pl_error *err)
{
	enum pl_err rc;

	p->ruleset = -1;
	p->prog = NULL;
	*abi = sbx_ll_abi();
	if (!pol->no_seccomp &&
	    (rc = sbx_sc_program(pol->exec_path != NULL, pol->allow_network,
				 pol->allow_perf_events && pol->exec_path, &p->prog, err)))
		return rc;
	if (*abi >= 1 && (rc = sbx_ll_ruleset(pol, *abi, &p->ruleset, err)))
		return rc;
	return PL_OK;
}
