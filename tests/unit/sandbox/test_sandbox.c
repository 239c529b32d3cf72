/* test_sandbox.c - unit tests for sandbox/: outcomes, confinement, limits,
 * clean-up.
 *
 * Every fault a worker shows here (a segfault, a socket() call, a sleep
 * past its deadline, a flood of output) is triggered by a worker function
 * defined in this file; the product code has no such hooks.  Each test
 * builds a policy from base_policy(), runs a worker and checks the
 * outcome, the detail sentence and what the worker wrote.  Landlock
 * checks are skipped, with the reason printed, on kernels without it.
 * The "zygote" tests run jobs (sbx_spawn_job) through a zygote started
 * by the test itself; each test runs in its own forked process.
 */
#include <arpa/inet.h>
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <linux/landlock.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>
#include <zlib.h>
#include <zstd.h>

#include "testlib.h"
#include "base/error.h"
#include "tools/registry.h"
#include "sandbox/sandbox.h"
#include "base/util.h"

/* ------------------------------------------------------------ helpers */

static void base_policy(struct sbx_policy *pol)
{
	memset(pol, 0, sizeof(*pol));
	pol->timeout_ms = 20000;
	pol->max_result_bytes = 1 << 20;
}

static void run_ok(const struct sbx_policy *pol, sbx_fn fn, void *arg, struct sbx_result *res)
{
	struct pl_error err;

	pl_error_clear(&err);
	ck_assert_msg(sbx_run(pol, fn, arg, res, &err) == PL_OK, "sbx_run: %s", err.text);
}

/* Write `s` whole to `fd`; the worker's exit status. */
static int put(int fd, const char *s)
{
	size_t n = strlen(s), off = 0;

	while (off < n) {
		ssize_t w = write(fd, s + off, n - off);
		if (w <= 0)
			return 3;
		off += (size_t)w;
	}
	return 0;
}

static int putf(int fd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int putf(int fd, const char *fmt, ...)
{
	char buf[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	return put(fd, buf);
}

/* A fresh folder under /tmp, made by the test process. */
static void make_tmpdir(char *out, size_t cap)
{
	snprintf(out, cap, "/tmp/sbx-test-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(out));
}


/* Number of processes whose parent is `parent`; with `less_spare`, less
 * one that is a zygote's spare waiting for the next request (named
 * perflens-spare, or perflens-zygote just after its fork). */
static int children_of(pid_t parent, bool less_spare)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	char path[300], buf[512];
	int n = 0, spares = 0;

	ck_assert_ptr_nonnull(d);
	while ((e = readdir(d))) {
		FILE *f;
		char *rp, state;
		int ppid;
		if (e->d_name[0] < '0' || e->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/stat", e->d_name);
		if (!(f = fopen(path, "r")))
			continue;
		if (fgets(buf, sizeof(buf), f) && (rp = strrchr(buf, ')')) &&
		    sscanf(rp + 1, " %c %d", &state, &ppid) == 2 && ppid == parent) {
			if (less_spare && state != 'Z' && spares == 0 &&
			    (strstr(buf, "(perflens-spare)") || strstr(buf, "(perflens-zygote)")))
				spares++;
			else
				n++;
		}
		fclose(f);
	}
	closedir(d);
	return n;
}

static int count_children_of(pid_t parent)
{
	return children_of(parent, false);
}

/* Number of processes whose parent is this one. */
static int count_children(void)
{
	return count_children_of(getpid());
}

/* The zygote's children less its spare, which is forked once a job ended
 * (or just after a reply, for calls back to back).  A worker that has
 * answered may still be exiting, and the zygote reaps it a moment later:
 * on a loaded machine that moment passed 20 ms, so the count is taken
 * again until it reaches 0 or 3 s have gone (a worker that stays is a
 * leak, and still fails). */
static int count_workers_of(pid_t zygote)
{
	int n = 0;

	for (int i = 0; i < 150; i++) {
		usleep(20000);
		if ((n = children_of(zygote, true)) == 0)
			break;
	}
	return n;
}

/* Reap what a killed zygote left to us (its spare, a subreaper's orphan). */
static void reap_strays(void)
{
	usleep(20000);
	while (waitpid(-1, NULL, WNOHANG) > 0)
		;
}

static int count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	int n = 0;

	ck_assert_ptr_nonnull(d);
	while (readdir(d))
		n++;
	closedir(d);
	return n;
}

static bool landlock_or_skip(const char *test)
{
	if (sbx_landlock_available())
		return true;
	printf("skip %s: this kernel has no Landlock, so paths are not confined\n", test);
	return false;
}

/* The system folders a dynamically linked program needs to start. */
static size_t system_roots(const char **roots, size_t cap)
{
	static const char *const all[] = {"/usr", "/lib", "/lib64", "/bin"};
	size_t n = 0;

	for (size_t i = 0; i < PL_ARRAY_LEN(all) && n < cap; i++)
		if (access(all[i], F_OK) == 0)
			roots[n++] = all[i];
	return n;
}

static long long ms_now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (long long)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/* ------------------------------------------------------------ workers */

static int w_hello(void *arg, int out)
{
	(void)arg;
	return put(out, "hello from the sandbox");
}

static int w_exit7(void *arg, int out)
{
	(void)arg;
	put(out, "partial");
	return 7;
}

static int w_segv(void *arg, int out)
{
	(void)out;
	*(volatile int *)arg = 1;  /* arg is an unmapped address */
	return 0;
}

static int w_abort(void *arg, int out)
{
	(void)arg;
	(void)out;
	abort();
}

static int w_sleep(void *arg, int out)
{
	(void)arg;
	(void)out;
	sleep(100);
	return 0;
}

/* Forbidden calls, one per loop index of the test below. */
struct forbidden {
	const char *name;
	long nr;
	long a0, a1, a2;
};
static const struct forbidden forbidden[] = {
	{"socket", SYS_socket, AF_INET, SOCK_STREAM, 0},
	{"execve", SYS_execve, (long)"/bin/true", 0, 0},
	{"ptrace", SYS_ptrace, 0 /* PTRACE_TRACEME */, 0, 0},
	{"connect", SYS_connect, 0, 0, 0},
	{"bind", SYS_bind, 0, 0, 0},
	{"mount", SYS_mount, (long)"none", (long)"/nonexistent-sbx", (long)"tmpfs"},
	{"bpf", SYS_bpf, 0, 0, 0},
	{"perf_event_open", SYS_perf_event_open, 0, 0, -1},
	{"process_vm_readv", SYS_process_vm_readv, 1, 0, 0},
	{"keyctl", SYS_keyctl, 0, 0, 0},
	{"add_key", SYS_add_key, 0, 0, 0},
	{"fork", SYS_fork, 0, 0, 0},
	{"clone", SYS_clone, SIGCHLD, 0, 0},
	{"unshare", SYS_unshare, 0x10000000 /* CLONE_NEWUSER */, 0, 0},
	{"setsid", SYS_setsid, 0, 0, 0},
	{"chmod", SYS_chmod, (long)"/nonexistent-sbx", 0777, 0},
	{"kill", SYS_kill, 1, 0, 0},
	{"socketpair", SYS_socketpair, AF_UNIX, SOCK_STREAM, 0},
	{"fchmod", SYS_fchmod, -1, 04755 /* setuid */, 0},
};

static int w_forbidden(void *arg, int out)
{
	const struct forbidden *f = arg;

	syscall(f->nr, f->a0, f->a1, f->a2, 0, 0, 0);
	return putf(out, "%s was allowed", f->name);
}

/* What a policy with allow_network still forbids. */
static const struct forbidden net_forbidden[] = {
	{"bind", SYS_bind, 0, 0, 0},
	{"socket", SYS_socket, AF_PACKET, SOCK_RAW, 0},
	{"listen", SYS_listen, 0, 0, 0},
	{"accept", SYS_accept, 0, 0, 0},
};

/* A TCP listener on 127.0.0.1 made by the test: it answers each
 * connection's "ping" with "pong" until it is stopped. */
static void *pong_loop(void *arg)
{
	struct loopback *p = arg;
	char buf[8];
	int fd;

	while ((fd = accept(p->lfd, NULL, NULL)) >= 0) {
		if (recv(fd, buf, 4, MSG_WAITALL) == 4 && memcmp(buf, "ping", 4) == 0)
			send(fd, "pong", 4, MSG_NOSIGNAL);
		close(fd);
	}
	return NULL;  /* the listener was shut down */
}



static const char *open_result(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return strerrorname_np(errno);
	close(fd);
	return "ok";
}

/* Connect to the pong server on port *(int *)arg and report what came
 * back, then what else a network worker may do: an AF_UNIX socket (soft
 * refusal), a memfd, the resolver's files, OpenSSL's private keys. */
static int w_connect(void *arg, int out)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(*(int *)arg)};
	char reply[8] = "none";
	int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), u, m;
	const char *unix_errno;

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (s < 0 || connect(s, (struct sockaddr *)&a, sizeof(a)) < 0)
		return putf(out, "connect: %s", strerrorname_np(errno));
	if (send(s, "ping", 4, MSG_NOSIGNAL) != 4 || recv(s, reply, 4, MSG_WAITALL) != 4)
		snprintf(reply, sizeof(reply), "lost");
	reply[4] = '\0';
	close(s);
	u = socket(AF_UNIX, SOCK_STREAM, 0);
	unix_errno = u < 0 ? strerrorname_np(errno) : "opened";
	m = memfd_create("sbx-test", MFD_CLOEXEC);
	return putf(out, "reply=%s unix=%s memfd=%s hosts=%s private=%s", reply, unix_errno,
		    m >= 0 ? "ok" : strerrorname_np(errno), open_result("/etc/hosts"),
		    open_result("/etc/ssl/private"));
}

/* A memfd holding /bin/true, then fexecve() of it in a child: Landlock
 * does not cover executing a memfd, so seccomp must.  Reports the plain
 * memfd_create's outcome and the child's fexecve errno ("ran" if it ran). */
static int w_memfd_exec(void *arg, int out)
{
	int plain = memfd_create("sbx-plain", MFD_CLOEXEC), plain_errno = errno;
	int m = memfd_create("sbx-noexec", MFD_CLOEXEC | 0x0008 /* MFD_NOEXEC_SEAL */);
	int src = open("/bin/true", O_RDONLY | O_CLOEXEC), st = 0;
	char buf[65536], *argv[] = {"true", NULL};
	const char *how = "ran";
	ssize_t n;
	pid_t p;

	(void)arg;
	if (m < 0 && errno == EINVAL)  /* a kernel before 6.3: nothing to seal */
		return putf(out, "plain=%s fexecve=EACCES", plain >= 0 ? "ok" : strerrorname_np(plain_errno));
	if (m < 0 || src < 0)
		return putf(out, "setup: %s", strerrorname_np(errno));
	while ((n = read(src, buf, sizeof(buf))) > 0)
		if (write(m, buf, (size_t)n) != n)
			return putf(out, "write: %s", strerrorname_np(errno));
	p = fork();
	if (p == 0) {
		fexecve(m, argv, (char *[]){NULL});
		_exit(errno == EACCES ? 13 : 14);
	}
	if (p < 0 || waitpid(p, &st, 0) != p)
		return putf(out, "fork: %s", strerrorname_np(errno));
	if (WIFEXITED(st) && WEXITSTATUS(st) == 13)
		how = "EACCES";
	else if (WIFEXITED(st) && WEXITSTATUS(st) == 14)
		how = "other";
	return putf(out, "plain=%s fexecve=%s", plain >= 0 ? "ok" : strerrorname_np(plain_errno), how);
}

/* tgkill at the parent: the guard lets a worker signal only itself. */
static int w_signal_parent(void *arg, int out)
{
	(void)arg;
	syscall(SYS_tgkill, getppid(), getppid(), 0);
	return put(out, "signalled the parent");
}

/* Which of fds 0..63 are open, and whether 0 and 1 are /dev/null. */
static int w_fds(void *arg, int out)
{
	struct stat null_st, st;
	char list[256] = "";
	size_t n = 0;

	(void)arg;
	for (int fd = 0; fd < 64; fd++)
		if (fcntl(fd, F_GETFD) >= 0)
			n += (size_t)snprintf(list + n, sizeof(list) - n, "%d ", fd);
	stat("/dev/null", &null_st);  /* Landlock does not cover stat() */
	fstat(0, &st);
	n += (size_t)snprintf(list + n, sizeof(list) - n, "in=%s ",
			      st.st_rdev == null_st.st_rdev ? "null" : "other");
	fstat(1, &st);
	snprintf(list + n, sizeof(list) - n, "out=%s", st.st_rdev == null_st.st_rdev ? "null" : "other");
	return put(out, list);
}

/* Write `*(size_t *)arg` bytes of a known pattern. */
static int w_write_n(void *arg, int out)
{
	size_t want = *(size_t *)arg, done = 0;
	char buf[8192];

	for (size_t i = 0; i < sizeof(buf); i++)
		buf[i] = (char)('a' + i % 26);
	while (done < want) {
		size_t chunk = want - done < sizeof(buf) ? want - done : sizeof(buf);
		ssize_t w = write(out, buf, chunk);
		if (w <= 0)
			return 3;
		done += (size_t)w;
	}
	return 0;
}

static int w_flood(void *arg, int out)
{
	char buf[4096];

	(void)arg;
	memset(buf, 'x', sizeof(buf));
	for (;;)
		if (write(out, buf, sizeof(buf)) < 0)
			return 3;
}

/* 42 when a 2 GB malloc fails, 43 when a 100 MB one fails too, 0 when
 * the big one succeeds (the limit did not hold). */
static int w_big_malloc(void *arg, int out)
{
	char *small = malloc(100u << 20), *big;

	(void)arg;
	if (!small)
		return 43;
	memset(small, 1, 100u << 20);
	free(small);
	big = malloc(2048ul << 20);
	if (big) {
		free(big);
		return put(out, "2 GB malloc succeeded");
	}
	put(out, "2 GB malloc failed");
	return 42;
}

static int w_spin(void *arg, int out)
{
	volatile unsigned long x = 0;

	(void)arg;
	(void)out;
	while (x != ~0ul)
		x++;
	return 0;
}

/* Paths a Landlock test opens: [0] forbidden, [1] allowed. */
static int w_read_two(void *arg, int out)
{
	const char *const *paths = arg;
	char buf[128] = "";
	int fd1 = open(paths[0], O_RDONLY), e1 = errno;
	int fd2 = open(paths[1], O_RDONLY);
	ssize_t n = fd2 >= 0 ? read(fd2, buf, sizeof(buf) - 1) : -1;

	buf[n > 0 ? n : 0] = '\0';
	return putf(out, "forbidden=%s allowed=%s", fd1 >= 0 ? "opened" : strerrorname_np(e1),
		    fd2 >= 0 ? buf : strerrorname_np(errno));
}

/* Writes inside and outside the write root `arg`/out. */
static int w_writes(void *arg, int out)
{
	const char *dir = arg;
	char in[PATH_MAX], in2[PATH_MAX], sub[PATH_MAX], outside[PATH_MAX];
	int fd, r[5];

	snprintf(in, sizeof(in), "%s/out/a.txt", dir);
	snprintf(in2, sizeof(in2), "%s/out/b.txt", dir);
	snprintf(sub, sizeof(sub), "%s/out/d", dir);
	snprintf(outside, sizeof(outside), "%s/x.txt", dir);
	fd = open(in, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	r[0] = fd >= 0 && write(fd, "ok", 2) == 2 ? 0 : errno;
	if (fd >= 0)
		close(fd);
	r[1] = rename(in, in2) == 0 ? 0 : errno;
	r[2] = mkdir(sub, 0755) == 0 ? 0 : errno;
	r[3] = open(outside, O_WRONLY | O_CREAT, 0644) >= 0 ? 0 : errno;
	r[4] = open("/tmp/sbx-escape-test", O_WRONLY | O_CREAT, 0644) >= 0 ? 0 : errno;
	return putf(out, "in=%d rename=%d mkdir=%d outside=%s tmp=%s", r[0], r[1], r[2],
		    strerrorname_np(r[3]), strerrorname_np(r[4]));
}

/* Writes `arg` bytes to file f in /tmp (RLIMIT_FSIZE test). */
static int w_big_file(void *arg, int out)
{
	char buf[4096];
	int fd = open((const char *)arg, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	(void)out;
	memset(buf, 'f', sizeof(buf));
	for (int i = 0; i < 4 && fd >= 0; i++)
		if (write(fd, buf, sizeof(buf)) < 0)
			return 3;
	return fd >= 0 ? 0 : 4;
}

/* fork + exec of /bin/echo, whose stdout is out_fd. */
static int w_exec_echo(void *arg, int out)
{
	pid_t pid = fork();
	int st = 0;

	(void)arg;
	if (pid == 0) {
		char *argv[] = {"echo", "from", "echo", NULL};
		dup2(out, 1);
		execv("/bin/echo", argv);
		_exit(127);
	}
	if (pid < 0 || waitpid(pid, &st, 0) < 0)
		return 5;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 6;
}

/* posix_spawn (clone3 refused with ENOSYS, glibc falls back to clone). */
static int w_spawn_echo(void *arg, int out)
{
	char *argv[] = {"echo", "spawned", NULL};
	posix_spawn_file_actions_t fa;
	pid_t pid;
	int st = 0, rc;

	(void)arg;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, out, 1);
	rc = posix_spawn(&pid, "/bin/echo", &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	if (rc != 0 || waitpid(pid, &st, 0) < 0)
		return 5;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 6;
}

/* exec of a program other than exec_path. */
static int w_exec_other(void *arg, int out)
{
	char *argv[] = {"cat", NULL};

	(void)arg;
	execv("/bin/cat", argv);
	return putf(out, "execv=%s", strerrorname_np(errno));
}

/* Writes its pid and its child's ("W pid", "G pid"), then both sleep. */
static int w_family(void *arg, int out)
{
	pid_t g;
	bool exit_early = arg != NULL;

	putf(out, "W %d\n", (int)getpid());
	g = fork();
	if (g == 0) {
		sleep(100);
		_exit(0);
	}
	/* The worker names its child itself: a child left unscheduled for
	 * the 300 ms bound on a loaded machine (CI once) wrote nothing. */
	putf(out, "G %d\n", (int)g);
	if (exit_early)
		return 0;
	sleep(100);
	return 0;
}

/* setpgid() attempts to leave the worker's process group. */
static int w_leave_group(void *arg, int out)
{
	pid_t g;
	int st;

	(void)arg;
	putf(out, "self=%s ", setpgid(0, 0) == 0 ? "moved" : strerrorname_np(errno));
	g = fork();
	if (g == 0) {
		int r = setpgid(0, 0);
		_exit(r == 0 ? 0 : errno);
	}
	waitpid(g, &st, 0);
	return putf(out, "child=%s", WEXITSTATUS(st) ? strerrorname_np(WEXITSTATUS(st)) : "moved");
}

static int w_kill_parent(void *arg, int out)
{
	(void)arg;
	return putf(out, "kill=%s", kill(getppid(), 0) == 0 ? "allowed" : strerrorname_np(errno));
}

/* --------------------------------------------- the real-workload worker */

struct workload {
	char dir[64];          /* holds in.gz, in.zst; out/ is writable */
	const char *text;      /* what both files decompress to */
};

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;
	return (x > y) - (x < y);
}

static bool wl_gzip(const struct workload *wl)
{
	char path[PATH_MAX], buf[4096];
	gzFile gz;
	int n;

	snprintf(path, sizeof(path), "%s/in.gz", wl->dir);
	if (!(gz = gzopen(path, "rb")))
		return false;
	n = gzread(gz, buf, sizeof(buf) - 1);
	gzclose(gz);
	buf[n > 0 ? n : 0] = '\0';
	return n > 0 && strcmp(buf, wl->text) == 0;
}

static bool wl_zstd(const struct workload *wl)
{
	char path[PATH_MAX], src[4096], dst[4096];
	ZSTD_DCtx *dc = ZSTD_createDCtx();
	ZSTD_inBuffer in;
	ZSTD_outBuffer o = {dst, sizeof(dst) - 1, 0};
	int fd;
	ssize_t n;

	snprintf(path, sizeof(path), "%s/in.zst", wl->dir);
	fd = open(path, O_RDONLY);
	n = fd >= 0 ? read(fd, src, sizeof(src)) : -1;
	if (fd >= 0)
		close(fd);
	in = (ZSTD_inBuffer){src, n > 0 ? (size_t)n : 0, 0};
	while (in.pos < in.size && !ZSTD_isError(ZSTD_decompressStream(dc, &o, &in)))
		;
	ZSTD_freeDCtx(dc);
	dst[o.pos] = '\0';
	return n > 0 && strcmp(dst, wl->text) == 0;
}

static bool wl_memory_and_sort(void)
{
	size_t n = 1 << 20;
	int *v = malloc(n * sizeof(*v));
	char *big = malloc(100u << 20);
	unsigned seed = 1;
	bool ok = v && big;

	if (big)
		memset(big, 7, 100u << 20);
	for (size_t i = 0; ok && i < n; i++)
		v[i] = rand_r(&seed);
	if (ok)
		qsort(v, n, sizeof(*v), cmp_int);
	for (size_t i = 1; ok && i < n; i++)
		ok = v[i - 1] <= v[i];
	if (ok) {
		char *bigger = realloc(big, 200u << 20);  /* mremap */
		ok = bigger != NULL;
		big = bigger ? bigger : big;
	}
	free(big);
	free(v);
	return ok;
}

/* JSON out through a temporary file, fsync, fchmod, rename, readdir. */
static bool wl_artifact(const struct workload *wl)
{
	char tmp[PATH_MAX], final[PATH_MAX], real[PATH_MAX];
	json_t *doc = json_pack("{s:s,s:f,s:[i,i]}", "tool", "test", "x", 1.5, "v", 1, 2);
	char *text = json_dumps(doc, JSON_COMPACT);
	int fd, found = 0;
	DIR *d;
	struct dirent *e;

	snprintf(tmp, sizeof(tmp), "%s/out/.tmp-XXXXXX", wl->dir);
	snprintf(final, sizeof(final), "%s/out/result.json", wl->dir);
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0 || write(fd, text, strlen(text)) < 0 || fsync(fd) < 0 || fchmod(fd, 0644) < 0)
		return false;
	close(fd);
	free(text);
	json_decref(doc);
	if (rename(tmp, final) < 0 || !realpath(final, real))
		return false;
	d = opendir(real[0] ? wl->dir : "/");
	while (d && (e = readdir(d)))
		found += strcmp(e->d_name, "out") == 0;
	if (d)
		closedir(d);
	return found == 1 && unlink(final) == 0;
}

/* isatty() works, other ioctls fail, limits read but cannot be raised. */
static bool wl_probes(void)
{
	struct rlimit rl;
	int n;

	if (isatty(0) || ioctl(0, FIONREAD, &n) != -1 || errno != ENOTTY)
		return false;
	if (getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur != 64)
		return false;
	rl.rlim_cur = rl.rlim_max = 65;
	return setrlimit(RLIMIT_NOFILE, &rl) == -1 && errno == EPERM;
}

static int w_workload(void *arg, int out)
{
	const struct workload *wl = arg;
	time_t t = time(NULL);
	struct tm tm;
	char when[64];

	localtime_r(&t, &tm);  /* /etc/localtime is out of bounds: UTC */
	strftime(when, sizeof(when), "%Y-%m-%d", &tm);
	return putf(out, "gzip=%d zstd=%d memory=%d artifact=%d probes=%d date=%zu",
		    wl_gzip(wl), wl_zstd(wl), wl_memory_and_sort(), wl_artifact(wl),
		    wl_probes(), strlen(when));
}

static void make_workload(struct workload *wl)
{
	static const char text[] = "perf script text, compressed twice\n";
	char path[PATH_MAX], zbuf[512];
	gzFile gz;
	size_t zn;

	make_tmpdir(wl->dir, sizeof(wl->dir));
	wl->text = text;
	snprintf(path, sizeof(path), "%s/in.gz", wl->dir);
	gz = gzopen(path, "wb");
	ck_assert_ptr_nonnull(gz);
	ck_assert_int_eq(gzwrite(gz, text, sizeof(text) - 1), (int)sizeof(text) - 1);
	gzclose(gz);
	zn = ZSTD_compress(zbuf, sizeof(zbuf), text, sizeof(text) - 1, 3);
	ck_assert(!ZSTD_isError(zn));
	snprintf(path, sizeof(path), "%s/in.zst", wl->dir);
	write_file(path, zbuf, zn);
	snprintf(path, sizeof(path), "%s/out", wl->dir);
	ck_assert_int_eq(mkdir(path, 0755), 0);
}

/* -------------------------------------------- the real-tool worker */

struct tool_run {
	struct tool_ctx ctx;
	const char *path;
};

static int w_analyze(void *arg, int out)
{
	struct tool_run *tr = arg;
	struct pl_error err;
	json_t *args = json_pack("{s:s}", "path", tr->path), *result = NULL;
	char *text;
	int rc;

	pl_error_clear(&err);
	if (tool_call(tool_find("analyze_profile"), &tr->ctx, args, &result, &err))
	{
		putf(out, "error: %s", err.text);
		return 9;
	}
	text = json_dumps(result, JSON_COMPACT);
	rc = put(out, text);
	free(text);
	json_decref(result);
	json_decref(args);
	return rc;
}

/* ============================================================== tests */

START_TEST(ok_result_round_trips)
{
	struct sbx_policy pol;
	struct sbx_result res;

	base_policy(&pol);
	run_ok(&pol, w_hello, NULL, &res);
	ck_assert_str_eq(sbx_outcome_name(res.outcome), "ok");
	ck_assert_int_eq(res.exit_status, 0);
	ck_assert_uint_eq(res.len, strlen("hello from the sandbox"));
	ck_assert_str_eq(res.data, "hello from the sandbox");
	ck_assert_str_eq(res.detail, "the worker finished normally");
	ck_assert(res.elapsed_ms > 0 && res.elapsed_ms < 5000);
	ck_assert_int_eq(res.landlock_abi > 0, sbx_landlock_available());
	sbx_result_release(&res);
	sbx_result_release(&res);
}
END_TEST

START_TEST(nonzero_exit_keeps_status_and_output)
{
	struct sbx_policy pol;
	struct sbx_result res;

	base_policy(&pol);
	run_ok(&pol, w_exit7, NULL, &res);
	ck_assert_int_eq(res.outcome, SBX_EXIT_NONZERO);
	ck_assert_int_eq(res.exit_status, 7);
	ck_assert_str_eq(res.data, "partial");
	ck_assert_str_eq(res.detail, "the worker exited with status 7");
	sbx_result_release(&res);
}
END_TEST

START_TEST(segfault_is_reported_as_crash_with_sigsegv)
{
	struct sbx_policy pol;
	struct sbx_result res;

	base_policy(&pol);
	run_ok(&pol, w_segv, (void *)16, &res);
	ck_assert_int_eq(res.outcome, SBX_CRASHED);
	ck_assert_int_eq(res.signal, SIGSEGV);
	ck_assert_str_eq(res.detail, "the worker crashed with SIGSEGV (Segmentation fault)");
	sbx_result_release(&res);
}
END_TEST

START_TEST(abort_is_a_crash_not_a_seccomp_kill)
{
	struct sbx_policy pol;
	struct sbx_result res;

	base_policy(&pol);
	run_ok(&pol, w_abort, NULL, &res);
	ck_assert_int_eq(res.outcome, SBX_CRASHED);
	ck_assert_int_eq(res.signal, SIGABRT);
	ck_assert_str_eq(res.detail, "the worker crashed with SIGABRT (Aborted)");
	sbx_result_release(&res);
}
END_TEST

START_TEST(forbidden_calls_kill_the_worker)
{
	const struct forbidden *f = &forbidden[_i];
	struct sbx_policy pol;
	struct sbx_result res;
	char want[80];

	base_policy(&pol);
	run_ok(&pol, w_forbidden, (void *)f, &res);
	ck_assert_msg(res.outcome == SBX_SECCOMP_KILLED, "%s: %s (%s)", f->name,
		      sbx_outcome_name(res.outcome), res.data);
	ck_assert_int_eq(res.signal, SIGSYS);
	ck_assert_str_eq(res.data, "");
	ck_assert(strstr(res.detail, "the worker was killed by the sandbox for calling a "
				     "forbidden system call (") == res.detail);
	/* The name comes from the kernel's audit record when it is readable. */
	snprintf(want, sizeof(want), "(%s)", f->name);
	if (!strstr(res.detail, "unknown"))
		ck_assert_msg(strstr(res.detail, want), "%s", res.detail);
	else
		printf("note: %s\n", res.detail);
	sbx_result_release(&res);
}
END_TEST

START_TEST(network_needs_allow_network)
{
	struct loopback p;
	struct sbx_policy pol;
	struct sbx_result res;
	char want[200];

	loopback_start(&p, 16, pong_loop);
	base_policy(&pol);
	run_ok(&pol, w_connect, &p.port, &res);
	ck_assert_msg(res.outcome == SBX_SECCOMP_KILLED, "%s: %s", sbx_outcome_name(res.outcome),
		      res.data);
	ck_assert_str_eq(res.data, "");
	sbx_result_release(&res);
	pol.allow_network = true;
	run_ok(&pol, w_connect, &p.port, &res);
	ck_assert_msg(res.outcome == SBX_OK, "%s: %s (%s)", sbx_outcome_name(res.outcome), res.data,
		      res.detail);
	snprintf(want, sizeof(want), "reply=pong unix=EACCES memfd=ok hosts=%s private=%s",
		 access("/etc/hosts", F_OK) == 0 ? "ok" : "ENOENT",
		 access("/etc/ssl/private", F_OK) < 0 ? "ENOENT" :
		 sbx_landlock_available() ? "EACCES" : "ok");
	ck_assert_str_eq(res.data, want);
	sbx_result_release(&res);
	loopback_stop(&p);
}
END_TEST

START_TEST(network_policy_still_forbids_serving)
{
	const struct forbidden *f = &net_forbidden[_i];
	struct sbx_policy pol;
	struct sbx_result res;

	base_policy(&pol);
	pol.allow_network = true;
	run_ok(&pol, w_forbidden, (void *)f, &res);
	ck_assert_msg(res.outcome == SBX_SECCOMP_KILLED, "%s: %s (%s)", f->name,
		      sbx_outcome_name(res.outcome), res.data);
	sbx_result_release(&res);
}
END_TEST

START_TEST(landlock_keeps_files_closed_without_allow_network)
{
	struct sbx_policy pol;
	struct sbx_result res;

	if (!landlock_or_skip("landlock_keeps_files_closed_without_allow_network"))
		return;
	base_policy(&pol);
	pol.no_seccomp = true;  /* let socket() through: Landlock alone decides */
	{
		struct loopback p;
		loopback_start(&p, 16, pong_loop);
		run_ok(&pol, w_connect, &p.port, &res);
		loopback_stop(&p);
	}
	ck_assert_int_eq(res.outcome, SBX_OK);
	/* Landlock ABI 4 and later also refuse the TCP connect itself. */
	if (res.landlock_abi >= 4)
		ck_assert_str_eq(res.data, "connect: EACCES");
	else
		ck_assert_msg(strstr(res.data, "hosts=EACCES"), "%s", res.data);
	sbx_result_release(&res);
}
END_TEST

START_TEST(worker_cannot_signal_its_parent)
{
	struct sbx_policy pol;
	struct sbx_result res;

	base_policy(&pol);
	run_ok(&pol, w_signal_parent, NULL, &res);
	ck_assert_int_eq(res.outcome, SBX_SECCOMP_KILLED);
	sbx_result_release(&res);
}
END_TEST

START_TEST(worker_sees_only_stdio_and_out_fd)
{
	struct sbx_policy pol;
	struct sbx_result res;
	int extra = open("/dev/zero", O_RDONLY);  /* not close-on-exec */

	ck_assert_int_ge(extra, 0);
	base_policy(&pol);
	run_ok(&pol, w_fds, NULL, &res);
	ck_assert_int_eq(res.outcome, SBX_OK);
	ck_assert_str_eq(res.data, "0 1 2 3 4 in=null out=null");  /* 4: the status pipe */
	close(extra);
	sbx_result_release(&res);
}
END_TEST

START_TEST(no_seccomp_skips_only_the_filter)
{
	struct sbx_policy pol;
	struct sbx_result res;

	base_policy(&pol);
	pol.no_seccomp = true;
	run_ok(&pol, w_forbidden, (void *)&forbidden[0], &res);
	ck_assert_int_eq(res.outcome, SBX_OK);
	ck_assert_str_eq(res.data, "socket was allowed");
	sbx_result_release(&res);
}
END_TEST

START_TEST(exec_path_can_be_executed)
{
	struct sbx_policy pol;
	struct sbx_result res;
	const char *roots[4];

	base_policy(&pol);
	pol.read_roots = roots;
	pol.nread_roots = system_roots(roots, PL_ARRAY_LEN(roots));
	pol.exec_path = "/bin/echo";
	run_ok(&pol, w_exec_echo, NULL, &res);
	ck_assert_msg(res.outcome == SBX_OK, "%s: %s", sbx_outcome_name(res.outcome), res.detail);
	ck_assert_str_eq(res.data, "from echo\n");
	sbx_result_release(&res);
}
END_TEST

START_TEST(exec_path_can_be_spawned_with_posix_spawn)
{
	struct sbx_policy pol;
	struct sbx_result res;
	const char *roots[4];

	base_policy(&pol);
	pol.read_roots = roots;
	pol.nread_roots = system_roots(roots, PL_ARRAY_LEN(roots));
	pol.exec_path = "/bin/echo";
	run_ok(&pol, w_spawn_echo, NULL, &res);
	ck_assert_msg(res.outcome == SBX_OK, "%s: %s", sbx_outcome_name(res.outcome), res.detail);
	ck_assert_str_eq(res.data, "spawned\n");
	sbx_result_release(&res);
}
END_TEST

START_TEST(only_exec_path_can_be_executed)
{
	struct sbx_policy pol;
	struct sbx_result res;
	const char *roots[4];

	if (!landlock_or_skip("only_exec_path_can_be_executed"))
		return;
	base_policy(&pol);
	pol.read_roots = roots;
	pol.nread_roots = system_roots(roots, PL_ARRAY_LEN(roots));
	pol.exec_path = "/bin/echo";
	run_ok(&pol, w_exec_other, NULL, &res);
	ck_assert_int_eq(res.outcome, SBX_OK);
	ck_assert_str_eq(res.data, "execv=EACCES");
	sbx_result_release(&res);
}
END_TEST

START_TEST(exec_worker_cannot_run_a_memory_file)
{
	struct sbx_policy pol;
	struct sbx_result res;
	const char *roots[4];
	static const struct forbidden memfd = {"memfd_create", SYS_memfd_create, (long)"x",
					       MFD_CLOEXEC, 0};

	base_policy(&pol);
	pol.read_roots = roots;
	pol.nread_roots = system_roots(roots, PL_ARRAY_LEN(roots));
	pol.exec_path = "/bin/echo";  /* allows fork and execve */
	run_ok(&pol, w_memfd_exec, NULL, &res);
	ck_assert_int_eq(res.outcome, SBX_OK);
	ck_assert_str_eq(res.data, "plain=EPERM fexecve=EACCES");
	sbx_result_release(&res);
	/* Without exec_path any memfd is fine (nothing can execute it). */
	pol.exec_path = NULL;
	run_ok(&pol, w_forbidden, (void *)&memfd, &res);
	ck_assert_int_eq(res.outcome, SBX_OK);
	ck_assert_str_eq(res.data, "memfd_create was allowed");
	sbx_result_release(&res);
}
END_TEST

START_TEST(descendants_cannot_leave_the_process_group)
{
	struct sbx_policy pol;
	struct sbx_result res;

	base_policy(&pol);
	pol.exec_path = "/bin/true";
	run_ok(&pol, w_leave_group, NULL, &res);
	ck_assert_int_eq(res.outcome, SBX_OK);
	ck_assert_str_eq(res.data, "self=EPERM child=EPERM");
	sbx_result_release(&res);
}
END_TEST

START_TEST(exec_worker_cannot_signal_outside_the_sandbox)
{
	struct sbx_policy pol;
	struct sbx_result res;

	base_policy(&pol);
	pol.exec_path = "/bin/true";
	run_ok(&pol, w_kill_parent, NULL, &res);
	ck_assert_int_eq(res.outcome, SBX_OK);
	if (res.landlock_abi >= 6)
		ck_assert_str_eq(res.data, "kill=EPERM");
	else
		printf("skip signal scoping: Landlock ABI %d < 6 (%s)\n", res.landlock_abi, res.data);
	sbx_result_release(&res);
}
END_TEST

/* "W pid\nG pid\n" -> the two pids. */
static void family_pids(const struct sbx_result *res, int *w, int *g)
{
	ck_assert_msg(sscanf(res->data, "W %d\nG %d\n", w, g) == 2, "data: %s", res->data);
}

static void assert_gone(int wpid, int gpid)
{
	ck_assert_int_eq(kill(-wpid, 0), -1);
	ck_assert_int_eq(errno, ESRCH);
	ck_assert_int_eq(kill(gpid, 0), -1);
	ck_assert_int_eq(errno, ESRCH);
	ck_assert_int_eq(count_children(), 0);
}

START_TEST(timeout_kills_the_whole_group_in_time)
{
	struct sbx_policy pol;
	struct sbx_result res;
	long long t0 = ms_now(), took;
	int wpid, gpid;

	base_policy(&pol);
	pol.exec_path = "/bin/true";  /* allows fork() */
	pol.timeout_ms = 300;
	run_ok(&pol, w_family, NULL, &res);
	took = ms_now() - t0;
	ck_assert_int_eq(res.outcome, SBX_TIMEOUT);
	ck_assert_str_eq(res.detail, "the worker did not finish within its 300 ms wall-clock "
				     "limit and was killed");
	ck_assert_msg(took >= 300 && took < 300 + 250, "took %lld ms", took);
	family_pids(&res, &wpid, &gpid);
	assert_gone(wpid, gpid);
	sbx_result_release(&res);
}
END_TEST

START_TEST(descendants_are_killed_when_the_worker_exits)
{
	struct sbx_policy pol;
	struct sbx_result res;
	int wpid, gpid;

	base_policy(&pol);
	pol.exec_path = "/bin/true";
	run_ok(&pol, w_family, (void *)1, &res);
	ck_assert_int_eq(res.outcome, SBX_OK);
	ck_assert(res.elapsed_ms < 5000);
	family_pids(&res, &wpid, &gpid);
	assert_gone(wpid, gpid);
	sbx_result_release(&res);
}
END_TEST

START_TEST(oversize_result_kills_the_worker)
{
	struct sbx_policy pol;
	struct sbx_result res;

	base_policy(&pol);
	pol.max_result_bytes = 1000;
	run_ok(&pol, w_flood, NULL, &res);
	ck_assert_int_eq(res.outcome, SBX_OVERSIZE);
	ck_assert_uint_eq(res.len, 1000);
	ck_assert_uint_eq(strlen(res.data), 1000);
	ck_assert_str_eq(res.detail, "the worker wrote more than its 1000-byte result limit and "
				     "was killed");
	sbx_result_release(&res);
}
END_TEST

START_TEST(result_of_exactly_the_limit_is_ok)
{
	struct sbx_policy pol;
	struct sbx_result res;
	size_t n = 5u << 20;

	base_policy(&pol);
	pol.max_result_bytes = n;
	run_ok(&pol, w_write_n, &n, &res);
	ck_assert_int_eq(res.outcome, SBX_OK);
	ck_assert_uint_eq(res.len, n);
	for (size_t i = 0; i < n; i += 8191)
		ck_assert_int_eq(res.data[i], 'a' + (int)(i % 8192 % 26));
	sbx_result_release(&res);
}
END_TEST

START_TEST(address_space_limit_fails_a_2gb_malloc)
{
	struct sbx_policy pol;
	struct sbx_result res;

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
	printf("skip address_space_limit_fails_a_2gb_malloc: ASan and TSan need unlimited address space\n");
	return;
#endif
	base_policy(&pol);
	pol.max_address_space = 1ull << 30;
	run_ok(&pol, w_big_malloc, NULL, &res);
	ck_assert_int_eq(res.outcome, SBX_EXIT_NONZERO);
	ck_assert_int_eq(res.exit_status, 42);
	ck_assert_str_eq(res.data, "2 GB malloc failed");
	sbx_result_release(&res);
}
END_TEST

START_TEST(cpu_limit_stops_a_spinning_worker)
{
	struct sbx_policy pol;
	struct sbx_result res;

	base_policy(&pol);
	pol.max_cpu_seconds = 1;
	run_ok(&pol, w_spin, NULL, &res);
	ck_assert_int_eq(res.outcome, SBX_CRASHED);
	ck_assert_int_eq(res.signal, SIGXCPU);
	ck_assert_str_eq(res.detail, "the worker was stopped by SIGXCPU for using more than its "
				     "1 s of CPU time");
	sbx_result_release(&res);
}
END_TEST

START_TEST(file_size_limit_stops_a_large_write)
{
	struct sbx_policy pol;
	struct sbx_result res;
	char dir[64], path[128];

	make_tmpdir(dir, sizeof(dir));
	snprintf(path, sizeof(path), "%s/big", dir);
	base_policy(&pol);
	pol.write_root = dir;
	pol.max_file_size = 4096;
	run_ok(&pol, w_big_file, path, &res);
	ck_assert_int_eq(res.outcome, SBX_CRASHED);
	ck_assert_int_eq(res.signal, SIGXFSZ);
	ck_assert(strstr(res.detail, "4096-byte size limit"));
	remove_tree(dir);
	sbx_result_release(&res);
}
END_TEST

START_TEST(landlock_confines_reads_to_the_roots)
{
	struct sbx_policy pol;
	struct sbx_result res;
	char dir[64], file[128];
	const char *roots[1], *paths[2];

	if (!landlock_or_skip("landlock_confines_reads_to_the_roots"))
		return;
	make_tmpdir(dir, sizeof(dir));
	snprintf(file, sizeof(file), "%s/data.txt", dir);
	write_file(file, "inside", 6);
	roots[0] = dir;
	paths[0] = "/etc/passwd";
	paths[1] = file;
	base_policy(&pol);
	pol.read_roots = roots;
	pol.nread_roots = 1;
	run_ok(&pol, w_read_two, paths, &res);
	ck_assert_int_eq(res.outcome, SBX_OK);
	ck_assert_str_eq(res.data, "forbidden=EACCES allowed=inside");
	remove_tree(dir);
	sbx_result_release(&res);
}
END_TEST

START_TEST(landlock_confines_writes_to_the_write_root)
{
	struct sbx_policy pol;
	struct sbx_result res;
	char dir[64], out[128];
	const char *roots[1];

	if (!landlock_or_skip("landlock_confines_writes_to_the_write_root"))
		return;
	make_tmpdir(dir, sizeof(dir));
	snprintf(out, sizeof(out), "%s/out", dir);
	ck_assert_int_eq(mkdir(out, 0755), 0);
	roots[0] = dir;
	base_policy(&pol);
	pol.read_roots = roots;
	pol.nread_roots = 1;
	pol.write_root = out;
	run_ok(&pol, w_writes, dir, &res);
	ck_assert_int_eq(res.outcome, SBX_OK);
	ck_assert_str_eq(res.data, "in=0 rename=0 mkdir=0 outside=EACCES tmp=EACCES");
	ck_assert_int_eq(access("/tmp/sbx-escape-test", F_OK), -1);
	remove_tree(dir);
	sbx_result_release(&res);
}
END_TEST

START_TEST(missing_root_is_refused_at_spawn)
{
	struct sbx_policy pol;
	struct sbx_result res;
	struct pl_error err;
	const char *roots[] = {"/nonexistent/sbx-root"};

	if (!landlock_or_skip("missing_root_is_refused_at_spawn"))
		return;
	base_policy(&pol);
	pol.read_roots = roots;
	pol.nread_roots = 1;
	ck_assert_int_eq(sbx_run(&pol, w_hello, NULL, &res, &err), PL_ERR_PATH);
	ck_assert_str_eq(err.text, "cannot open read root '/nonexistent/sbx-root': "
				   "No such file or directory");
	ck_assert_ptr_null(res.data);
	ck_assert_int_eq(count_children(), 0);
}
END_TEST

/* In a helper process already nested 16 Landlock domains deep (the
 * kernel's maximum), a worker cannot add its own: run one there and send
 * back its outcome and detail. */
static void nested_helper(int fd)
{
	struct landlock_ruleset_attr attr = {LANDLOCK_ACCESS_FS_MAKE_CHAR};
	struct sbx_policy pol;
	struct sbx_result res;
	struct pl_error err;

	prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
	for (int i = 0; i < 16; i++) {
		int rs = (int)syscall(SYS_landlock_create_ruleset, &attr, sizeof(attr), 0);
		if (rs < 0 || syscall(SYS_landlock_restrict_self, rs, 0) < 0)
			_exit(90);
		close(rs);
	}
	base_policy(&pol);
	if (sbx_run(&pol, w_hello, NULL, &res, &err) != PL_OK)
		_exit(91);
	putf(fd, "%s|%s|%zu", sbx_outcome_name(res.outcome), res.detail, res.len);
	_exit(0);
}

START_TEST(setup_failure_is_reported_and_fn_never_runs)
{
	char buf[400];
	int p[2], st;
	ssize_t n;
	pid_t pid;

	if (!landlock_or_skip("setup_failure_is_reported_and_fn_never_runs"))
		return;
	ck_assert_int_eq(pipe(p), 0);
	pid = fork();
	if (pid == 0) {
		close(p[0]);
		nested_helper(p[1]);
	}
	close(p[1]);
	n = read(p[0], buf, sizeof(buf) - 1);
	close(p[0]);
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert_int_eq(WEXITSTATUS(st), 0);
	ck_assert_int_gt(n, 0);
	buf[n] = '\0';
	ck_assert_str_eq(buf, "setup_failed|the worker could not confine itself (cannot apply its "
			      "Landlock ruleset: Argument list too long)|0");
}
END_TEST

/* Drive a worker the way a server does, until it is reaped. */
static void drive(struct sbx_worker *w)
{
	while (!sbx_step(w)) {
		struct pollfd pfd = {sbx_fd(w), POLLIN, 0};
		ck_assert_int_ge(poll(&pfd, 1, sbx_timeout_left_ms(w)), 0);
	}
}

START_TEST(cancel_kills_a_running_worker)
{
	struct sbx_policy pol;
	struct sbx_result res;
	struct sbx_worker *w;
	struct pl_error err;
	struct pollfd pfd;

	base_policy(&pol);
	ck_assert_int_eq(sbx_spawn(&pol, w_sleep, NULL, &w, &err), PL_OK);
	pfd = (struct pollfd){sbx_fd(w), POLLIN, 0};
	ck_assert_int_eq(poll(&pfd, 1, 50), 0);  /* nothing happens on its own */
	ck_assert(!sbx_step(w));
	sbx_cancel(w);
	drive(w);
	sbx_finish(w, &res);
	ck_assert_int_eq(res.outcome, SBX_CANCELLED);
	ck_assert_str_eq(res.detail, "the worker was cancelled before it finished");
	ck_assert_int_eq(count_children(), 0);
	sbx_result_release(&res);
}
END_TEST

static void *cancel_later(void *w)
{
	usleep(50000);
	sbx_cancel(w);
	return NULL;
}

START_TEST(cancel_from_another_thread_stops_the_worker)
{
	struct sbx_policy pol;
	struct sbx_result res;
	struct sbx_worker *w;
	struct pl_error err;
	pthread_t t;
	long long t0 = ms_now();

	base_policy(&pol);
	ck_assert_int_eq(sbx_spawn(&pol, w_sleep, NULL, &w, &err), PL_OK);
	ck_assert_int_eq(pthread_create(&t, NULL, cancel_later, w), 0);
	drive(w);
	pthread_join(t, NULL);
	sbx_finish(w, &res);
	ck_assert_int_eq(res.outcome, SBX_CANCELLED);
	ck_assert(ms_now() - t0 < 2000);
	sbx_result_release(&res);
}
END_TEST

START_TEST(finish_without_waiting_kills_and_reaps)
{
	struct sbx_policy pol;
	struct sbx_result res;
	struct sbx_worker *w;
	struct pl_error err;

	base_policy(&pol);
	pol.exec_path = "/bin/true";
	ck_assert_int_eq(sbx_spawn(&pol, w_family, NULL, &w, &err), PL_OK);
	usleep(100000);
	sbx_finish(w, &res);
	ck_assert_int_eq(res.outcome, SBX_CANCELLED);
	ck_assert_int_eq(count_children(), 0);
	sbx_finish(NULL, &res);  /* harmless */
	sbx_result_release(&res);
}
END_TEST

START_TEST(many_runs_leave_no_zombie_and_no_fd)
{
	struct sbx_policy pol;
	struct sbx_result res;
	int fds;

	base_policy(&pol);
	run_ok(&pol, w_hello, NULL, &res);  /* warm up lazily built state */
	sbx_result_release(&res);
	fds = count_fds();
	for (int i = 0; i < 200; i++) {
		run_ok(&pol, i % 2 ? w_hello : w_exit7, NULL, &res);
		ck_assert_int_eq(res.outcome, i % 2 ? SBX_OK : SBX_EXIT_NONZERO);
		sbx_result_release(&res);
	}
	ck_assert_int_eq(count_children(), 0);
	ck_assert_int_eq(count_fds(), fds);
}
END_TEST

START_TEST(real_workload_runs_under_the_filter)
{
	struct sbx_policy pol;
	struct sbx_result res;
	struct workload wl;
	char out[PATH_MAX + 8];
	const char *roots[1];

	make_workload(&wl);
	snprintf(out, sizeof(out), "%s/out", wl.dir);
	roots[0] = wl.dir;
	base_policy(&pol);
	pol.read_roots = roots;
	pol.nread_roots = 1;
	pol.write_root = out;
	pol.max_address_space = 2ull << 30;
	pol.max_open_files = 64;
	run_ok(&pol, w_workload, &wl, &res);
	ck_assert_msg(res.outcome == SBX_OK, "%s: %s", sbx_outcome_name(res.outcome), res.detail);
	ck_assert_str_eq(res.data, "gzip=1 zstd=1 memory=1 artifact=1 probes=1 date=10");
	remove_tree(wl.dir);
	sbx_result_release(&res);
}
END_TEST

/* analyze_profile in-process and in a worker must agree. */
START_TEST(real_tool_gives_the_same_answer_sandboxed)
{
	struct sbx_policy pol;
	struct sbx_result res;
	struct tool_run tr;
	struct pl_error err;
	char root[PATH_MAX], art[64], path[PATH_MAX + 32];
	const char *allowed[1], *reads[2];
	json_t *args, *direct = NULL, *boxed;

	ck_assert_ptr_nonnull(realpath("fixtures/device-x86", root));
	make_tmpdir(art, sizeof(art));
	snprintf(path, sizeof(path), "%s/chunk_000.txt.gz", root);
	allowed[0] = reads[0] = root;
	reads[1] = art;
	memset(&tr, 0, sizeof(tr));
	tr.ctx.allowed_roots = allowed;
	tr.ctx.nroots = 1;
	tr.ctx.artifact_root = art;
	tr.ctx.allow_writes = true;
	pl_limits_default(&tr.ctx.limits);
	tr.path = path;
	base_policy(&pol);
	pol.read_roots = reads;
	pol.nread_roots = 2;
	pol.write_root = art;
	pol.max_result_bytes = 8 << 20;
	run_ok(&pol, w_analyze, &tr, &res);
	ck_assert_msg(res.outcome == SBX_OK, "%s: %s / %s", sbx_outcome_name(res.outcome),
		      res.detail, res.data);
	boxed = json_loads(res.data, 0, NULL);
	args = json_pack("{s:s}", "path", path);
	ck_assert_int_eq(tool_call(tool_find("analyze_profile"), &tr.ctx, args, &direct, &err), PL_OK);
	ck_assert_str_eq(json_string_value(json_object_get(boxed, "analysis_id")),
			 json_string_value(json_object_get(direct, "analysis_id")));
	json_decref(args);
	json_decref(direct);
	json_decref(boxed);
	remove_tree(art);
	sbx_result_release(&res);
}
END_TEST

/* ------------------------------------------------------------ zygote */

/* Set by the warm-up hook, which runs in each spare before its job. */
static int warmed_up;

static void t_warm_up(void)
{
	warmed_up = 1;
}

/* The one test job: its bytes name what to do. */
static int j_test(const void *buf, size_t len, int out)
{
	const char *cmd = buf;
	void *volatile unmapped = (void *)8;

	if (strlen(cmd) != len)
		return 9;
	if (strcmp(cmd, "segv") == 0)
		return w_segv(unmapped, out);
	if (strcmp(cmd, "socket") == 0)
		return w_forbidden((void *)&forbidden[0], out);
	if (strcmp(cmd, "family") == 0)
		return w_family(NULL, out);
	if (strcmp(cmd, "flood") == 0)
		return w_flood(NULL, out);
	if (strcmp(cmd, "sleep") == 0)
		return w_sleep(NULL, out);
	if (strcmp(cmd, "exit7") == 0)
		return w_exit7(NULL, out);
	if (strcmp(cmd, "warmed") == 0)
		return putf(out, "warmed=%d", warmed_up);
	if (strcmp(cmd, "nap") == 0) {
		usleep(300 * 1000);
		return putf(out, "napped");
	}
	if (strcmp(cmd, "fds") == 0)
		return w_fds(NULL, out);
	if (strncmp(cmd, "connect:", 8) == 0) {
		int port = atoi(cmd + 8);
		return w_connect(&port, out);
	}
	return putf(out, "ppid=%d job=%s", (int)getppid(), cmd);
}

/* Register the job and start a zygote for this test; its pid. */
static pid_t zstart(void)
{
	struct pl_error err;

	pl_error_clear(&err);
	ck_assert_int_eq(sbx_register("test", j_test, &err), PL_OK);
	ck_assert_int_eq(sbx_register("test", j_test, &err), PL_OK);  /* again: harmless */
	sbx_set_warm_up(t_warm_up);
	ck_assert_msg(sbx_zygote_start(&err) == PL_OK, "zygote: %s", err.text);
	ck_assert_int_gt(sbx_zygote_pid(), 0);
	ck_assert_int_eq(count_children(), 1);
	return sbx_zygote_pid();
}

static void zstop(void)
{
	sbx_zygote_stop();
	ck_assert_int_eq(sbx_zygote_pid(), -1);
	ck_assert_int_eq(count_children(), 0);
}

/* Spawn job `cmd`, drive it to the end, finish into `res`. */
static void zrun(const struct sbx_policy *pol, const char *cmd, struct sbx_result *res)
{
	struct sbx_worker *w;
	struct pl_error err;

	pl_error_clear(&err);
	ck_assert_msg(sbx_spawn_job(pol, "test", cmd, strlen(cmd), &w, &err) == PL_OK,
		      "spawn: %s", err.text);
	drive(w);
	sbx_finish(w, res);
}

START_TEST(zygote_runs_a_job_by_value)
{
	struct sbx_policy pol;
	struct sbx_result res;
	char want[64];
	pid_t z = zstart();

	base_policy(&pol);
	zrun(&pol, "hello", &res);
	ck_assert_int_eq(res.outcome, SBX_OK);
	snprintf(want, sizeof(want), "ppid=%d job=hello", (int)z);
	ck_assert_str_eq(res.data, want);  /* forked by the zygote */
	ck_assert_str_eq(res.detail, "the worker finished normally");
	ck_assert_int_eq(res.landlock_abi > 0, sbx_landlock_available());
	sbx_result_release(&res);
	zrun(&pol, "fds", &res);
	ck_assert_str_eq(res.data, "0 1 2 3 4 in=null out=null");  /* 4: the status pipe */
	sbx_result_release(&res);
	zrun(&pol, "exit7", &res);
	ck_assert_int_eq(res.outcome, SBX_EXIT_NONZERO);
	ck_assert_int_eq(res.exit_status, 7);
	ck_assert_str_eq(res.data, "partial");
	sbx_result_release(&res);
	zstop();
}
END_TEST

/* Calls one at a time with a pause between: the spare that takes a call
 * ran the warm-up hook before it came, no spare is forked while the job
 * runs (the worker is the zygote's only child), and one is once it ended. */
START_TEST(zygote_forks_the_next_spare_once_the_job_ended)
{
	struct sbx_policy pol;
	struct sbx_result res;
	struct sbx_worker *w;
	struct pl_error err;
	pid_t z = zstart();
	int during;

	base_policy(&pol);
	usleep(100 * 1000);  /* not back to back with the zygote's start */
	zrun(&pol, "first", &res);  /* the first spare has no policy to prime */
	sbx_result_release(&res);
	usleep(100 * 1000);
	zrun(&pol, "warmed", &res);
	ck_assert_str_eq(res.data, "warmed=1");
	sbx_result_release(&res);
	usleep(100 * 1000);
	pl_error_clear(&err);
	ck_assert_msg(sbx_spawn_job(&pol, "test", "nap", 3, &w, &err) == PL_OK, "spawn: %s", err.text);
	usleep(150 * 1000);
	during = children_of(z, false);
	drive(w);
	sbx_finish(w, &res);
	ck_assert_str_eq(res.data, "napped");
	sbx_result_release(&res);
	ck_assert_int_eq(during, 1);
	for (int i = 0; i < 100 && !(children_of(z, false) == 1 && children_of(z, true) == 0); i++)
		usleep(20 * 1000);
	ck_assert_int_eq(children_of(z, false), 1);  /* the next spare */
	ck_assert_int_eq(children_of(z, true), 0);
	zstop();
}
END_TEST

START_TEST(zygote_reports_crash_and_seccomp_kill)
{
	struct sbx_policy pol;
	struct sbx_result res;

	zstart();
	base_policy(&pol);
	zrun(&pol, "segv", &res);
	ck_assert_int_eq(res.outcome, SBX_CRASHED);
	ck_assert_int_eq(res.signal, SIGSEGV);
	ck_assert_str_eq(res.detail, "the worker crashed with SIGSEGV (Segmentation fault)");
	sbx_result_release(&res);
	zrun(&pol, "socket", &res);
	ck_assert_int_eq(res.outcome, SBX_SECCOMP_KILLED);
	ck_assert_int_eq(res.signal, SIGSYS);
	ck_assert_msg(strncmp(res.detail, "the worker was killed by the sandbox for calling a "
				  "forbidden system call (", 73) == 0, "%s", res.detail);
	ck_assert_str_eq(res.data, "");
	sbx_result_release(&res);
	zstop();
}
END_TEST

START_TEST(zygote_timeout_kills_the_whole_group)
{
	struct sbx_policy pol;
	struct sbx_result res;
	long long t0 = ms_now(), took;
	int wpid, gpid;
	pid_t z = zstart();

	base_policy(&pol);
	pol.exec_path = "/bin/true";  /* allows fork() */
	pol.timeout_ms = 300;
	zrun(&pol, "family", &res);
	took = ms_now() - t0;
	ck_assert_int_eq(res.outcome, SBX_TIMEOUT);
	ck_assert_str_eq(res.detail, "the worker did not finish within its 300 ms wall-clock "
				     "limit and was killed");
	ck_assert_msg(took >= 300 && took < 300 + 250, "took %lld ms", took);
	family_pids(&res, &wpid, &gpid);
	ck_assert_int_eq(kill(-wpid, 0), -1);
	ck_assert_int_eq(kill(gpid, 0), -1);
	ck_assert_int_eq(count_workers_of(z), 0);  /* grandchild reaped too */
	sbx_result_release(&res);
	zstop();
}
END_TEST

START_TEST(zygote_oversize_and_missing_root)
{
	struct sbx_policy pol;
	struct sbx_result res;
	struct sbx_worker *w;
	struct pl_error err;
	const char *roots[] = {"/nonexistent/sbx-root"};

	zstart();
	base_policy(&pol);
	pol.max_result_bytes = 1000;
	zrun(&pol, "flood", &res);
	ck_assert_int_eq(res.outcome, SBX_OVERSIZE);
	ck_assert_uint_eq(res.len, 1000);
	ck_assert_str_eq(res.detail, "the worker wrote more than its 1000-byte result limit and "
				     "was killed");
	sbx_result_release(&res);
	ck_assert_int_eq(sbx_spawn_job(&pol, "nope", "", 0, &w, &err), PL_ERR_USAGE);
	if (sbx_landlock_available()) {
		pol.read_roots = roots;
		pol.nread_roots = 1;
		ck_assert_int_eq(sbx_spawn_job(&pol, "test", "x", 1, &w, &err), PL_ERR_PATH);
		ck_assert_str_eq(err.text, "cannot open read root '/nonexistent/sbx-root': "
					   "No such file or directory");
		ck_assert_ptr_null(w);
	}
	zstop();
}
END_TEST

START_TEST(zygote_passes_allow_network_on)
{
	struct loopback p;
	struct sbx_policy pol;
	struct sbx_result res;
	char cmd[32];

	/* The zygote first: forking while the pong thread runs can leave the
	 * child holding a lock that thread had (the server, too, starts its
	 * zygote before any thread). */
	zstart();
	loopback_start(&p, 16, pong_loop);
	snprintf(cmd, sizeof(cmd), "connect:%d", p.port);
	base_policy(&pol);
	zrun(&pol, cmd, &res);
	ck_assert_int_eq(res.outcome, SBX_SECCOMP_KILLED);
	sbx_result_release(&res);
	pol.allow_network = true;
	zrun(&pol, cmd, &res);
	ck_assert_msg(res.outcome == SBX_OK && strncmp(res.data, "reply=pong ", 11) == 0, "%s: %s",
		      sbx_outcome_name(res.outcome), res.data);
	sbx_result_release(&res);
	zstop();
	loopback_stop(&p);
}
END_TEST

START_TEST(zygote_cancel_from_another_thread)
{
	struct sbx_policy pol;
	struct sbx_result res;
	struct sbx_worker *w;
	struct pl_error err;
	pthread_t t;
	long long t0 = ms_now();
	pid_t z = zstart();

	base_policy(&pol);
	ck_assert_int_eq(sbx_spawn_job(&pol, "test", "sleep", 5, &w, &err), PL_OK);
	ck_assert_int_eq(pthread_create(&t, NULL, cancel_later, w), 0);
	drive(w);
	pthread_join(t, NULL);
	sbx_finish(w, &res);
	ck_assert_int_eq(res.outcome, SBX_CANCELLED);
	ck_assert_str_eq(res.detail, "the worker was cancelled before it finished");
	ck_assert(ms_now() - t0 < 2000);
	ck_assert_int_eq(count_workers_of(z), 0);
	sbx_result_release(&res);
	/* finish without waiting: killed, reaped by the zygote, reported */
	ck_assert_int_eq(sbx_spawn_job(&pol, "test", "sleep", 5, &w, &err), PL_OK);
	sbx_finish(w, &res);
	ck_assert_int_eq(res.outcome, SBX_CANCELLED);
	ck_assert_int_eq(count_workers_of(z), 0);
	sbx_result_release(&res);
	zstop();
}
END_TEST

START_TEST(zygote_many_runs_leave_no_zombie_and_no_fd)
{
	struct sbx_policy pol;
	struct sbx_result res;
	pid_t z = zstart();
	int fds;

	base_policy(&pol);
	zrun(&pol, "hello", &res);
	sbx_result_release(&res);
	fds = count_fds();
	for (int i = 0; i < 200; i++) {
		zrun(&pol, i % 2 ? "hello" : "exit7", &res);
		ck_assert_int_eq(res.outcome, i % 2 ? SBX_OK : SBX_EXIT_NONZERO);
		sbx_result_release(&res);
	}
	ck_assert_int_eq(count_children(), 1);  /* the zygote only */
	ck_assert_int_eq(count_workers_of(z), 0);
	ck_assert_int_eq(count_fds(), fds);
	zstop();
}
END_TEST

struct zthread {
	int ok;
};

static void *spawn_many(void *arg)
{
	struct zthread *zt = arg;
	struct sbx_policy pol;
	struct sbx_result res;

	base_policy(&pol);
	for (int i = 0; i < 25; i++) {
		zrun(&pol, "hello", &res);
		zt->ok += res.outcome == SBX_OK && strncmp(res.data, "ppid=", 5) == 0;
		sbx_result_release(&res);
	}
	return NULL;
}

START_TEST(zygote_serves_threads_concurrently)
{
	pthread_t t[6];
	struct zthread zt[6] = {{0}};

	zstart();
	for (int i = 0; i < 6; i++)
		ck_assert_int_eq(pthread_create(&t[i], NULL, spawn_many, &zt[i]), 0);
	for (int i = 0; i < 6; i++) {
		pthread_join(t[i], NULL);
		ck_assert_int_eq(zt[i].ok, 25);
	}
	ck_assert_int_eq(count_workers_of(sbx_zygote_pid()), 0);
	zstop();
}
END_TEST

START_TEST(zygote_death_falls_back_to_direct_forks)
{
	struct sbx_policy pol;
	struct sbx_result res;
	struct sbx_worker *w;
	struct pl_error err;
	char want[64];
	pid_t z = zstart();

	base_policy(&pol);
	ck_assert_int_eq(sbx_spawn_job(&pol, "test", "sleep", 5, &w, &err), PL_OK);
	ck_assert_int_eq(kill(z, SIGKILL), 0);
	drive(w);  /* its done pipe ends without a status */
	sbx_finish(w, &res);
	ck_assert_int_eq(res.outcome, SBX_CRASHED);
	ck_assert_str_eq(res.detail, "the worker was lost when the sandbox's zygote process "
				     "exited; later workers are forked directly");
	sbx_result_release(&res);
	ck_assert_int_eq(sbx_zygote_pid(), -1);
	zrun(&pol, "hello", &res);
	ck_assert_int_eq(res.outcome, SBX_OK);
	snprintf(want, sizeof(want), "ppid=%d job=hello", (int)getpid());
	ck_assert_str_eq(res.data, want);  /* forked by us now */
	sbx_result_release(&res);
	reap_strays();
	ck_assert_int_eq(count_children(), 0);
	/* killed between calls: the next spawn notices and falls back */
	zstart();
	ck_assert_int_eq(kill(sbx_zygote_pid(), SIGKILL), 0);
	usleep(20000);
	zrun(&pol, "hello", &res);
	ck_assert_str_eq(res.data, want);
	sbx_result_release(&res);
	reap_strays();
	ck_assert_int_eq(count_children(), 0);
}
END_TEST

/* Without a zygote, jobs are forked directly and get the same bytes. */
START_TEST(jobs_without_a_zygote_fork_directly)
{
	struct sbx_policy pol;
	struct sbx_result res;
	struct pl_error err;
	char want[64];

	ck_assert_int_eq(sbx_register("test", j_test, &err), PL_OK);
	base_policy(&pol);
	zrun(&pol, "hello", &res);
	snprintf(want, sizeof(want), "ppid=%d job=hello", (int)getpid());
	ck_assert_str_eq(res.data, want);
	sbx_result_release(&res);
	zrun(&pol, "segv", &res);
	ck_assert_int_eq(res.outcome, SBX_CRASHED);
	sbx_result_release(&res);
	ck_assert_int_eq(count_children(), 0);
}
END_TEST

START_TEST(outcome_names_are_stable)
{
	ck_assert_str_eq(sbx_outcome_name(SBX_OK), "ok");
	ck_assert_str_eq(sbx_outcome_name(SBX_EXIT_NONZERO), "exit_nonzero");
	ck_assert_str_eq(sbx_outcome_name(SBX_CRASHED), "crashed");
	ck_assert_str_eq(sbx_outcome_name(SBX_SECCOMP_KILLED), "seccomp_killed");
	ck_assert_str_eq(sbx_outcome_name(SBX_TIMEOUT), "timeout");
	ck_assert_str_eq(sbx_outcome_name(SBX_OVERSIZE), "oversize");
	ck_assert_str_eq(sbx_outcome_name(SBX_CANCELLED), "cancelled");
	ck_assert_str_eq(sbx_outcome_name(SBX_SETUP_FAILED), "setup_failed");
	ck_assert_str_eq(sbx_outcome_name((enum sbx_outcome)99), "unknown");
}
END_TEST

Suite *suite_sandbox(void)
{
	Suite *s = suite_create("sandbox");
	TCase *out = tcase_create("outcomes");
	TCase *conf = tcase_create("confinement");
	TCase *life = tcase_create("lifecycle");
	TCase *zyg = tcase_create("zygote");

	tcase_add_test(out, ok_result_round_trips);
	tcase_add_test(out, nonzero_exit_keeps_status_and_output);
	tcase_add_test(out, segfault_is_reported_as_crash_with_sigsegv);
	tcase_add_test(out, abort_is_a_crash_not_a_seccomp_kill);
	tcase_add_test(out, oversize_result_kills_the_worker);
	tcase_add_test(out, result_of_exactly_the_limit_is_ok);
	tcase_add_test(out, address_space_limit_fails_a_2gb_malloc);
	tcase_add_test(out, cpu_limit_stops_a_spinning_worker);
	tcase_add_test(out, file_size_limit_stops_a_large_write);
	tcase_add_test(out, outcome_names_are_stable);
	tcase_set_timeout(out, 30);
	suite_add_tcase(s, out);

	tcase_add_loop_test(conf, forbidden_calls_kill_the_worker, 0, (int)PL_ARRAY_LEN(forbidden));
	tcase_add_test(conf, network_needs_allow_network);
	tcase_add_loop_test(conf, network_policy_still_forbids_serving, 0,
			    (int)PL_ARRAY_LEN(net_forbidden));
	tcase_add_test(conf, landlock_keeps_files_closed_without_allow_network);
	tcase_add_test(conf, worker_cannot_signal_its_parent);
	tcase_add_test(conf, worker_sees_only_stdio_and_out_fd);
	tcase_add_test(conf, no_seccomp_skips_only_the_filter);
	tcase_add_test(conf, exec_path_can_be_executed);
	tcase_add_test(conf, exec_path_can_be_spawned_with_posix_spawn);
	tcase_add_test(conf, only_exec_path_can_be_executed);
	tcase_add_test(conf, exec_worker_cannot_run_a_memory_file);
	tcase_add_test(conf, descendants_cannot_leave_the_process_group);
	tcase_add_test(conf, exec_worker_cannot_signal_outside_the_sandbox);
	tcase_add_test(conf, landlock_confines_reads_to_the_roots);
	tcase_add_test(conf, landlock_confines_writes_to_the_write_root);
	tcase_add_test(conf, missing_root_is_refused_at_spawn);
	tcase_add_test(conf, setup_failure_is_reported_and_fn_never_runs);
	tcase_add_test(conf, real_workload_runs_under_the_filter);
	tcase_add_test(conf, real_tool_gives_the_same_answer_sandboxed);
	tcase_set_timeout(conf, 60);
	suite_add_tcase(s, conf);

	tcase_add_test(life, timeout_kills_the_whole_group_in_time);
	tcase_add_test(life, descendants_are_killed_when_the_worker_exits);
	tcase_add_test(life, cancel_kills_a_running_worker);
	tcase_add_test(life, cancel_from_another_thread_stops_the_worker);
	tcase_add_test(life, finish_without_waiting_kills_and_reaps);
	tcase_add_test(life, many_runs_leave_no_zombie_and_no_fd);
	tcase_set_timeout(life, 60);
	suite_add_tcase(s, life);

	tcase_add_test(zyg, zygote_runs_a_job_by_value);
	tcase_add_test(zyg, zygote_forks_the_next_spare_once_the_job_ended);
	tcase_add_test(zyg, zygote_reports_crash_and_seccomp_kill);
	tcase_add_test(zyg, zygote_timeout_kills_the_whole_group);
	tcase_add_test(zyg, zygote_oversize_and_missing_root);
	tcase_add_test(zyg, zygote_cancel_from_another_thread);
	tcase_add_test(zyg, zygote_passes_allow_network_on);
	tcase_add_test(zyg, zygote_many_runs_leave_no_zombie_and_no_fd);
	tcase_add_test(zyg, zygote_serves_threads_concurrently);
	tcase_add_test(zyg, zygote_death_falls_back_to_direct_forks);
	tcase_add_test(zyg, jobs_without_a_zygote_fork_directly);
	tcase_set_timeout(zyg, 60);
	suite_add_tcase(s, zyg);
	return s;
}
