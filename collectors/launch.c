/* launch.c - the collection launcher (see launch.h for why and the API).
 *
 * Three kinds of process: the launcher, forked by the server before
 * anything is confined, reads connections (SCM_RIGHTS, one byte each)
 * from its socket and forks a handler per connection; the handler reads
 * one request at a time, checks it (coll_launch_check) and runs it with
 * pl_run (the server's environment plus the added variables, the given
 * working directory, stdout and stderr into files, stdin /dev/null, own
 * process group, no nice), watching the connection: a hangup kills the
 * run.  It answers with one struct launch_reply.  The worker side
 * (coll_launch_run) writes the request and waits for the reply.
 * Single-threaded everywhere; the launcher dies with the server
 * (PR_SET_PDEATHSIG), a handler with the launcher, killing its run.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "launch.h"
#include "base/progress.h"
#include "base/util.h"

#define LAUNCH_MAGIC 0x504c4c31u      /* "PLL1" */
#define MAX_REQUEST COLL_LAUNCH_MAX_REQUEST

struct launch_head {
	uint32_t magic;
	uint32_t kind;              /* enum launch_kind */
	uint32_t nargv, nenv;
	uint32_t timeout_ms, interrupt_ms;
};

struct launch_reply {
	uint32_t magic;
	int32_t rc;                 /* enum pl_err */
	int32_t exit_status, signal, pid;
	uint8_t timed_out, interrupted;
	double seconds, user_seconds, system_seconds;
	int64_t max_rss_kb;
	char text[320], hint[320];
};

/* ------------------------------------------------------------ checking */

/* `path` (resolved) is `root` or beneath it. */
static bool beneath(const char *path, const char *root)
{
	size_t n = strlen(root);

	if (n == 1 && root[0] == '/')
		return path[0] == '/';
	return strncmp(path, root, n) == 0 && (path[n] == '/' || path[n] == '\0');
}

static bool under_allowed(const struct coll_launcher_cfg *cfg, const char *path)
{
	char real[PATH_MAX];

	if (!realpath(path, real))
		return false;
	for (size_t i = 0; i < cfg->nroots; i++)
		if (beneath(real, cfg->allowed_roots[i]))
			return true;
	return false;
}

/* A file directly in a staging folder ARTIFACT_ROOT/collections/.staging-*
 * (the folder resolved; the name plain), or /dev/null. */
static bool in_staging(const struct coll_launcher_cfg *cfg, const char *path)
{
	char dir[PATH_MAX], real[PATH_MAX];
	const char *slash = strrchr(path, '/'), *name;
	size_t n;

	if (strcmp(path, "/dev/null") == 0)
		return true;
	if (!slash || slash == path || (size_t)(slash - path) >= sizeof(dir))
		return false;
	name = slash + 1;
	if (!name[0] || strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
		return false;
	memcpy(dir, path, (size_t)(slash - path));
	dir[slash - path] = '\0';
	if (!realpath(dir, real))
		return false;
	n = strlen(cfg->artifact_root);
	return strncmp(real, cfg->artifact_root, n) == 0 &&
	       strncmp(real + n, "/collections/.staging-", 22) == 0 && !strchr(real + n + 22, '/');
}

static bool digits(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (*s < '0' || *s > '9')
			return false;
	return true;
}

/* The options collect.c writes, and whether each takes a value. */
static int option_kind(const char *sub, const char *o)
{
	static const char *const with_value[] = {"-e", "-F", "--call-graph", "-o", "-x", "-r", "-p"};
	static const char *const plain[] = {"-g", "-N", "-a"};

	(void)sub;
	for (size_t i = 0; i < PL_ARRAY_LEN(with_value); i++)
		if (strcmp(o, with_value[i]) == 0)
			return 2;
	for (size_t i = 0; i < PL_ARRAY_LEN(plain); i++)
		if (strcmp(o, plain[i]) == 0)
			return 1;
	return 0;
}

/* The values collect.c writes: numbers, the CSV separator, the three
 * call-graph modes, events that are not files (perf compiles and loads a
 * BPF program named as an event). */
static const char *check_value(const char *opt, const char *v)
{
	size_t n = strlen(v);

	if ((strcmp(opt, "-F") == 0 || strcmp(opt, "-r") == 0) && !digits(v))
		return "-F and -r take a number";
	if (strcmp(opt, "-x") == 0 && strcmp(v, ",") != 0)
		return "-x takes ','";
	if (strcmp(opt, "--call-graph") == 0 && strcmp(v, "fp") != 0 && strcmp(v, "dwarf") != 0 &&
	    strcmp(v, "lbr") != 0 && !(strncmp(v, "dwarf,", 6) == 0 && digits(v + 6) && n <= 11))
		return "--call-graph takes fp, dwarf, dwarf,SIZE or lbr";
	if (strcmp(opt, "-e") == 0 &&
	    ((n > 2 && (strcmp(v + n - 2, ".c") == 0 || strcmp(v + n - 2, ".o") == 0)) ||
	     (strchr(v, '/') && access(v, F_OK) == 0)))
		return "an event that names a file (a BPF program) is not run here";
	return NULL;
}

static const char *check_env(const char *const *env)
{
	size_t n = 0, bytes = 0;

	for (; env && env[n]; n++) {
		const char *e = env[n], *eq = strchr(e, '=');
		bytes += strlen(e) + 1;
		if (!eq || eq == e)
			return "an environment entry is not NAME=VALUE";
		for (const char *c = e; c < eq; c++)
			if (!(*c == '_' || (*c >= 'A' && *c <= 'Z') || (*c >= 'a' && *c <= 'z') ||
			      (c > e && *c >= '0' && *c <= '9')))
				return "an environment name is not letters, digits and '_'";
		if (strncmp(e, "LD_", 3) == 0 || strncmp(e, "PERF_", 5) == 0)
			return "LD_* and PERF_* variables are refused: they would apply to perf as well as to the program";
	}
	if (n > COLL_LAUNCH_MAX_ENV || bytes > COLL_LAUNCH_MAX_ENV_BYTES)
		return "too many environment variables, or too long";
	return NULL;
}

/* What both kinds of run are checked for: the working directory under an
 * allowed root, stdout and stderr in the staging folder (or /dev/null),
 * the added variables. */
static const char *check_context(const struct coll_launcher_cfg *cfg, const char *const *env,
				 const char *cwd, const char *stdout_path, const char *stderr_path)
{
	if (!cwd || !under_allowed(cfg, cwd))
		return "the working directory is not under an allowed root";
	if (!stdout_path || !stderr_path || !in_staging(cfg, stdout_path) || !in_staging(cfg, stderr_path))
		return "stdout and stderr must go to files in the staging folder, or to /dev/null";
	return check_env(env);
}

const char *coll_launch_check(const struct coll_launcher_cfg *cfg, const char *const *argv,
			      const char *const *env, const char *cwd, const char *stdout_path,
			      const char *stderr_path)
{
	const char *sub, *bad;
	bool has_pid = false, has_target = false, has_output = false;
	size_t i;

	if (!argv || !argv[0] || strcmp(argv[0], cfg->perf_path) != 0)
		return "the program is not the allowlisted perf";
	if (!(sub = argv[1]))
		return "no perf subcommand";
	i = 2;
	if (strcmp(sub, "sched") == 0 || strcmp(sub, "lock") == 0) {
		if (!argv[2] || strcmp(argv[2], "record") != 0)
			return "only perf sched record and perf lock record are run here";
		i = 3;
	} else if (strcmp(sub, "record") != 0 && strcmp(sub, "stat") != 0) {
		return "the perf subcommand is not one a collection runs";
	}
	for (; argv[i]; i++) {
		int kind;
		if (strcmp(argv[i], "--") == 0) {
			if (!argv[i + 1] || argv[i + 1][0] != '/' || !under_allowed(cfg, argv[i + 1]))
				return "the program is not under an allowed root";
			has_target = true;
			break;
		}
		if ((kind = option_kind(sub, argv[i])) == 0)
			return "a perf option that a collection does not use";
		if (kind == 2 && !argv[i + 1])
			return "a perf option without its value";
		if (strcmp(argv[i], "-o") == 0) {
			if (!in_staging(cfg, argv[i + 1]) || strcmp(argv[i + 1], "/dev/null") == 0)
				return "perf's output file is not in a collection's staging folder";
			has_output = true;
		}
		if (strcmp(argv[i], "-p") == 0) {
			if (!digits(argv[i + 1]))
				return "-p takes a process id";
			has_pid = true;
		}
		/* A plain option may end the command (perf record ... -a, an
		 * off-CPU or sched collection of a running pid): no value. */
		if (kind == 2 && (bad = check_value(argv[i], argv[i + 1])))
			return bad;
		i += (size_t)kind - 1;
	}
	if (!has_output)
		return "perf has no output file in a staging folder";
	if ((has_pid || !has_target) && !cfg->allow_pid_attach)
		return "attaching to a running process needs --allow-pid-attach";
	return check_context(cfg, env, cwd, stdout_path, stderr_path);
}

const char *coll_launch_check_program(const struct coll_launcher_cfg *cfg, const char *const *argv,
				      const char *const *env, const char *cwd, const char *stdout_path,
				      const char *stderr_path)
{
	if (!argv || !argv[0] || argv[0][0] != '/' || !under_allowed(cfg, argv[0]) ||
	    access(argv[0], X_OK) != 0)
		return "the program is not an executable under an allowed root";
	return check_context(cfg, env, cwd, stdout_path, stderr_path);
}

const char *coll_launch_check_request(const struct coll_launcher_cfg *cfg,
				      const struct coll_launch_request *q)
{
	if (q->kind == COLL_LAUNCH_PROGRAM)
		return coll_launch_check_program(cfg, q->argv, q->env, q->cwd, q->stdout_path, q->stderr_path);
	if (q->kind == COLL_LAUNCH_PERF)
		return coll_launch_check(cfg, q->argv, q->env, q->cwd, q->stdout_path, q->stderr_path);
	return "the request's kind is unknown";
}

/* ------------------------------------------------------------ handler */

/* The process group of the run in progress (pl_run's started_pid): when
 * the launcher dies (the server is gone) its handlers get SIGTERM and
 * take their runs with them. */
static volatile int running_group;

static void on_term(int sig)
{
	(void)sig;
	if (running_group > 0)
		kill(-running_group, SIGKILL);
	_exit(1);
}

static void reply_send(int conn, const struct pl_run_result *res, enum pl_err rc,
		       const struct pl_error *err)
{
	struct launch_reply r;

	memset(&r, 0, sizeof(r));
	r.magic = LAUNCH_MAGIC;
	r.rc = (int32_t)rc;
	if (res) {
		r.exit_status = res->exit_status;
		r.signal = res->signal;
		r.pid = res->pid;
		r.timed_out = res->timed_out;
		r.interrupted = res->interrupted;
		r.seconds = res->seconds;
		r.user_seconds = res->user_seconds;
		r.system_seconds = res->system_seconds;
		r.max_rss_kb = res->max_rss_kb;
	}
	if (rc && err) {
		snprintf(r.text, sizeof(r.text), "%s", err->text);
		snprintf(r.hint, sizeof(r.hint), "%s", err->hint);
	}
	(void)!write(conn, &r, sizeof(r));
}

/* The strings of a request: n of them from *p, NUL-terminated each. */
static bool take_strings(char **p, const char *end, const char **out, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++) {
		char *nul = memchr(*p, '\0', (size_t)(end - *p));
		if (!nul)
			return false;
		out[i] = *p;
		*p = nul + 1;
	}
	out[n] = NULL;
	return true;
}

bool coll_launch_decode(char *buf, size_t len, struct coll_launch_request *q)
{
	struct launch_head h;
	const char *paths[4];
	char *p = buf + sizeof(h), *end = buf + len;

	if (len < sizeof(h) || len > MAX_REQUEST)
		return false;
	memcpy(&h, buf, sizeof(h));
	if (h.magic != LAUNCH_MAGIC || h.nargv > COLL_LAUNCH_MAX_ARGV || h.nenv > COLL_LAUNCH_MAX_ENV ||
	    !take_strings(&p, end, q->argv, h.nargv) || !take_strings(&p, end, q->env, h.nenv) ||
	    !take_strings(&p, end, paths, 3))
		return false;
	q->kind = h.kind;
	q->timeout_ms = h.timeout_ms;
	q->interrupt_ms = h.interrupt_ms;
	q->cwd = paths[0];
	q->stdout_path = paths[1];
	q->stderr_path = paths[2];
	return true;
}

static void handle_one(const struct coll_launcher_cfg *cfg, int conn, char *buf, size_t len)
{
	struct coll_launch_request q;
	struct pl_run_result res;
	struct pl_error err;
	const char *bad;
	enum pl_err rc;

	pl_error_clear(&err);
	if (!coll_launch_decode(buf, len, &q)) {
		reply_send(conn, NULL, pl_fail(&err, PL_ERR_INTERNAL, NULL, "the launcher's request does not parse"), &err);
		return;
	}
	if ((bad = coll_launch_check_request(cfg, &q))) {
		reply_send(conn, NULL, pl_fail(&err, PL_ERR_PATH, NULL, "the collection launcher refused the run: %s", bad), &err);
		return;
	}
	struct pl_run_opts o = {
		.argv = q.argv, .env = q.env, .inherit_env = true, .cwd = q.cwd,
		.stdout_path = q.stdout_path, .stderr_path = q.stderr_path, .hangup_fd = conn,
		.timeout_ms = q.timeout_ms, .interrupt_ms = q.interrupt_ms,
		.started_pid = &running_group,
	};
	rc = pl_run(&o, &res, &err);
	reply_send(conn, &res, rc, &err);
	pl_run_result_release(&res);
}

static void __attribute__((noreturn)) handler_main(const struct coll_launcher_cfg *cfg, int conn)
{
	struct sigaction sa = {.sa_handler = on_term};
	char *buf = pl_xmalloc(MAX_REQUEST);
	sigset_t none;
	ssize_t n;

	prctl(PR_SET_NAME, "perflens-launch");
	/* SIGCHLD back to default (wait4); SIGINT stays ignored here (a
	 * terminal's ^C is the server's), and pl_run's child restores SIGINT
	 * and SIGPIPE for the program. */
	signal(SIGCHLD, SIG_DFL);
	signal(SIGPIPE, SIG_IGN);
	sigaction(SIGTERM, &sa, NULL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	if (prctl(PR_SET_PDEATHSIG, SIGTERM) < 0)
		_exit(1);
	while ((n = read(conn, buf, MAX_REQUEST)) > 0)
		handle_one(cfg, conn, buf, (size_t)n);
	_exit(0);
}

/* ----------------------------------------------------------- launcher */

static int recv_conn(int sock)
{
	char byte, cbuf[CMSG_SPACE(sizeof(int))];
	struct iovec iov = {&byte, 1};
	struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf,
			   .msg_controllen = sizeof(cbuf)};
	struct cmsghdr *c;
	ssize_t n;
	int fd = -1;

	do
		n = recvmsg(sock, &m, MSG_CMSG_CLOEXEC);
	while (n < 0 && errno == EINTR);
	if (n <= 0)
		return -2;  /* the server is gone */
	for (c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c))
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS)
			memcpy(&fd, CMSG_DATA(c), sizeof(int));
	return fd;
}

static void __attribute__((noreturn)) launcher_main(const struct coll_launcher_cfg *cfg, int sock,
						    pid_t server)
{
	int null = open("/dev/null", O_RDWR), fd;

	prctl(PR_SET_NAME, "perflens-launch");
	if (prctl(PR_SET_PDEATHSIG, SIGTERM) < 0 || getppid() != server)
		_exit(1);
	/* stdout belongs to the MCP stdio transport: nothing here writes it.
	 * The socket on 3, nothing else of the server's kept. */
	if (null < 0 || dup2(null, 0) < 0 || dup2(null, 1) < 0)
		_exit(1);
	if (sock != 3 && (dup2(sock, 3) < 0 || fcntl(3, F_SETFD, FD_CLOEXEC) < 0))
		_exit(1);
	sock = 3;
	if (syscall(SYS_close_range, 4, ~0U, 0) != 0)
		for (int i = 4; i < 4096; i++)
			close(i);
	signal(SIGTERM, SIG_DFL);
	signal(SIGPIPE, SIG_IGN);
	signal(SIGCHLD, SIG_IGN);   /* handlers are reaped by the kernel */
	signal(SIGINT, SIG_IGN);    /* a terminal's ^C is the server's to take */
	for (;;) {
		if ((fd = recv_conn(sock)) == -2)
			_exit(0);
		if (fd < 0)
			continue;
		if (fork() == 0) {
			close(sock);
			handler_main(cfg, fd);
		}
		close(fd);
	}
}

enum pl_err coll_launcher_start(const struct coll_launcher_cfg *cfg, int *fd, pid_t *pid,
				struct pl_error *err)
{
	int sv[2];
	pid_t server = getpid(), child;

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
		return pl_fail(err, PL_ERR_LIMIT, NULL, "cannot create the launcher's socket: %s", strerror(errno));
	child = fork();
	if (child < 0) {
		close(sv[0]), close(sv[1]);
		return pl_fail(err, PL_ERR_LIMIT, NULL, "cannot fork the collection launcher: %s", strerror(errno));
	}
	if (child == 0) {
		close(sv[0]);
		launcher_main(cfg, sv[1], server);
	}
	close(sv[1]);
	*fd = sv[0];
	*pid = child;
	return PL_OK;
}

/* ------------------------------------------------------------- worker */

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void add_str(struct pl_buf *b, const char *s)
{
	pl_buf_add(b, s ? s : "", strlen(s ? s : "") + 1);
}

static enum pl_err launch_request(int conn, uint32_t kind, const struct pl_run_opts *o,
				  struct pl_run_result *res, struct pl_error *err)
{
	struct launch_head h = {.magic = LAUNCH_MAGIC, .kind = kind, .timeout_ms = o->timeout_ms,
				.interrupt_ms = o->interrupt_ms};
	struct pl_buf b = {0};
	struct launch_reply r;
	struct pollfd pfd = {conn, POLLIN, 0};
	double start = now_s();
	ssize_t n;

	memset(res, 0, sizeof(*res));
	while (o->argv[h.nargv])
		h.nargv++;
	while (o->env && o->env[h.nenv])
		h.nenv++;
	pl_buf_add(&b, &h, sizeof(h));
	for (uint32_t i = 0; i < h.nargv; i++)
		add_str(&b, o->argv[i]);
	for (uint32_t i = 0; i < h.nenv; i++)
		add_str(&b, o->env[i]);
	add_str(&b, o->cwd);
	add_str(&b, o->stdout_path);
	add_str(&b, o->stderr_path);
	if (b.len > MAX_REQUEST) {
		pl_buf_release(&b);
		return pl_fail(err, PL_ERR_LIMIT, "pass fewer or shorter arguments and variables",
			       "the command line and environment pass %u bytes", MAX_REQUEST);
	}
	n = write(conn, b.data, b.len);
	pl_buf_release(&b);
	if (n < 0)
		return pl_fail(err, PL_ERR_EXTERNAL, "restart perflens-mcp", "the collection launcher is gone: %s",
			       strerror(errno));
	for (;;) {
		int ready = poll(&pfd, 1, 100);
		if (ready < 0 && errno != EINTR)
			return pl_fail(err, PL_ERR_INTERNAL, NULL, "poll: %s", strerror(errno));
		if (ready > 0)
			break;
		if (o->cancel && atomic_load(o->cancel))
			return pl_fail(err, PL_ERR_TIMEOUT, "the caller stopped it; run it again if still needed",
				       "'%s' was cancelled", o->argv[0]);
		if (o->progress_ms)
			pl_progress_time((uint64_t)((now_s() - start) * 1000), o->progress_ms);
	}
	if (o->progress_ms)  /* the last value is the time the run took */
		pl_progress_time_end((uint64_t)((now_s() - start) * 1000), o->progress_ms);
	n = read(conn, &r, sizeof(r));
	if (n != (ssize_t)sizeof(r) || r.magic != LAUNCH_MAGIC)
		return pl_fail(err, PL_ERR_EXTERNAL, "restart perflens-mcp",
			       "the collection launcher ended without an answer");
	res->exit_status = r.exit_status;
	res->signal = r.signal;
	res->pid = r.pid;
	res->timed_out = r.timed_out;
	res->interrupted = r.interrupted;
	res->seconds = r.seconds;
	res->user_seconds = r.user_seconds;
	res->system_seconds = r.system_seconds;
	res->max_rss_kb = (long)r.max_rss_kb;
	if (r.rc) {
		r.text[sizeof(r.text) - 1] = r.hint[sizeof(r.hint) - 1] = '\0';
		return pl_fail(err, (enum pl_err)r.rc, r.hint[0] ? r.hint : NULL, "%s", r.text);
	}
	return PL_OK;
}

enum pl_err coll_launch_run(int conn, const struct pl_run_opts *o, struct pl_run_result *res,
			    struct pl_error *err)
{
	return launch_request(conn, COLL_LAUNCH_PERF, o, res, err);
}

enum pl_err coll_launch_program(int conn, const struct pl_run_opts *o, struct pl_run_result *res,
				struct pl_error *err)
{
	return launch_request(conn, COLL_LAUNCH_PROGRAM, o, res, err);
}
