/* run.c - fork, exec and watch one external program (see run.h).
 *
 * The parent polls the child's stdout and stderr with the remaining time
 * as the poll timeout, splits stdout into lines for the callback and keeps
 * a capped copy of stderr.  A failed execve is reported through a third,
 * close-on-exec pipe, so "could not start" is told apart from "exited
 * 127".  The child asks for its own process group; inside the sandbox the
 * seccomp guard refuses that (workers keep their descendants in the
 * worker's group, which the server kills as a whole), and the child then
 * stays in the worker's group: only the child itself is killed here.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "run.h"
#include "base/progress.h"
#include "base/escape.h"
#include "base/util.h"

#define DEFAULT_MAX_LINE (1u << 20)
#define DEFAULT_MAX_STDERR (16u << 10)
#define MAX_ENV 32

struct line_buf {
	char *data;
	size_t len, cap, max_line;
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* ------------------------------------------------------------- child */

/* Everything above 3 (the exec-error pipe) goes. */
static void close_other_fds(void)
{
	if (syscall(SYS_close_range, 4, ~0U, 0) == 0)
		return;
	for (int fd = 4; fd < 4096; fd++)
		close(fd);
}

/* A failed chdir is told from a failed execve by this bit on errno. */
#define CHDIR_FAILED (1 << 30)

static void child(const struct pl_run_opts *o, char *const *envp, int in_fd, int out_fd,
		  int err_fd, int exec_fd)
{
	int e;

	(void)setpgid(0, 0);
	if (o->nice)
		(void)setpriority(PRIO_PROCESS, 0, o->nice);
	if (dup2(in_fd, 0) < 0 || dup2(out_fd, 1) < 0 || dup2(err_fd, 2) < 0)
		_exit(127);
	/* exec_fd is close-on-exec: keep it above the three. */
	if (exec_fd < 3 || dup2(exec_fd, 3) < 0 || fcntl(3, F_SETFD, FD_CLOEXEC) < 0)
		_exit(127);
	close_other_fds();
	/* Ignored signals survive execve: the program gets the defaults. */
	signal(SIGPIPE, SIG_DFL);
	signal(SIGINT, SIG_DFL);
	if (o->cwd && chdir(o->cwd) < 0) {
		e = errno | CHDIR_FAILED;
		(void)!write(3, &e, sizeof(e));
		_exit(127);
	}
	execve(o->argv[0], (char *const *)o->argv, envp);
	e = errno;
	(void)!write(3, &e, sizeof(e));
	_exit(127);
}

/* The child's environment, built before fork (malloc is not safe after
 * fork in a threaded caller): LC_ALL=C and `env`, or with inherit_env
 * environ with `env` replacing or adding names.  Free the array only. */
static char **make_env(const struct pl_run_opts *o)
{
	extern char **environ;
	size_t n = 0, extra = 0, k = 0;
	char **envp;

	while (o->env && o->env[extra])
		extra++;
	if (extra > MAX_ENV)
		extra = MAX_ENV;
	if (o->inherit_env)
		while (environ && environ[n])
			n++;
	envp = pl_xcalloc(n + extra + 2, sizeof(*envp));
	if (!o->inherit_env)
		envp[k++] = (char *)"LC_ALL=C";
	for (size_t i = 0; i < n; i++) {
		size_t klen = strcspn(environ[i], "=");
		bool replaced = false;
		for (size_t j = 0; j < extra && !replaced; j++)
			replaced = strncmp(o->env[j], environ[i], klen) == 0 && o->env[j][klen] == '=';
		if (!replaced)
			envp[k++] = environ[i];
	}
	for (size_t j = 0; j < extra; j++)
		envp[k++] = (char *)o->env[j];
	envp[k] = NULL;
	return envp;
}

/* ------------------------------------------------------------ parent */

static enum pl_err feed(const struct pl_run_opts *o, struct line_buf *lb, const char *p,
			size_t n, struct pl_run_result *res, struct pl_error *err)
{
	enum pl_err rc;

	for (size_t i = 0; i < n; i++) {
		if (p[i] != '\n') {
			if (lb->len == lb->max_line)
				return pl_fail(err, PL_ERR_LIMIT, "lower what the program prints, or raise --max-line",
					       "'%s' printed a line longer than %zu bytes", o->argv[0], lb->max_line);
			/* one byte more for the NUL that callers may rely on */
			if (lb->len + 1 >= lb->cap)
				PL_GROW(lb->data, lb->cap, lb->len + 2);
			lb->data[lb->len++] = p[i];
			continue;
		}
		if (lb->data)
			lb->data[lb->len] = '\0';
		res->stdout_lines++;
		if (o->on_line && (rc = o->on_line(o->arg, lb->data ? lb->data : "", lb->len, err)))
			return rc;
		lb->len = 0;
	}
	return PL_OK;
}

static void keep_stderr(struct pl_run_result *res, size_t cap, size_t *kept, const char *p,
			size_t n)
{
	size_t room = cap - *kept;

	if (n > room) {
		res->stderr_truncated = true;
		n = room;
	}
	memcpy(res->stderr_text + *kept, p, n);
	*kept += n;
	res->stderr_text[*kept] = '\0';
}

static void kill_child(pid_t pid, bool own_group)
{
	if (own_group)
		kill(-pid, SIGKILL);
	kill(pid, SIGKILL);
}

/* What pump_output keeps between polls. */
struct pump {
	const struct pl_run_opts *o;
	pid_t pid;
	struct pollfd fds[4];      /* stdout, stderr (fd -1 once closed or
				    * going to a file), the hangup fd, the
				    * child's pidfd (watch_exit) */
	struct line_buf lb;
	struct pl_run_result *res;
	double deadline, interrupt_at;
	double started;            /* for progress_ms */
	uint64_t max_out;
	size_t err_cap, kept;
	bool watch_exit;           /* no pipe tells the end: look at the child */
};

/* The child has exited (it is left to reap); for runs whose output goes
 * to files, where no pipe closes at its end. */
static bool child_exited(pid_t pid)
{
	siginfo_t si;

	memset(&si, 0, sizeof(si));
	if (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) < 0)
		return errno == ECHILD;
	return si.si_pid == pid;
}

/* The poll timeout (ms, -1: none) until the deadline, the interrupt or
 * the next cancel check; an error once the deadline passed or the run
 * was cancelled.  Sends the interrupt when its time has come. */
static enum pl_err next_timeout(struct pump *p, int *timeout, struct pl_error *err)
{
	const struct pl_run_opts *o = p->o;

	*timeout = -1;
	if (p->deadline > 0) {
		double left = p->deadline - now_s();
		if (left <= 0) {
			p->res->timed_out = true;
			return pl_fail(err, PL_ERR_TIMEOUT, "raise the timeout or give a smaller input",
				       "'%s' did not finish within %.1f s", o->argv[0], o->timeout_ms / 1000.0);
		}
		*timeout = (int)(left * 1000) + 1;
	}
	if (o->cancel && atomic_load(o->cancel))
		return pl_fail(err, PL_ERR_TIMEOUT, "the caller stopped it; run it again if still needed",
			       "'%s' was cancelled", o->argv[0]);
	if (p->interrupt_at > 0 && now_s() >= p->interrupt_at) {
		kill(p->pid, SIGINT);
		p->res->interrupted = true;
		p->interrupt_at = 0;
	}
	if (p->interrupt_at > 0) {
		int until = (int)((p->interrupt_at - now_s()) * 1000) + 1;
		if (*timeout < 0 || until < *timeout)
			*timeout = until;
	}
	/* Without a pidfd nothing wakes the poll at the child's exit: a look
	 * every 50 ms (its wall time then ends on that grid). */
	if ((o->cancel || (p->watch_exit && p->fds[3].fd < 0)) && (*timeout < 0 || *timeout > 50))
		*timeout = 50;
	if (o->progress_ms) {
		pl_progress_time((uint64_t)((now_s() - p->started) * 1000), o->progress_ms);
		if (*timeout < 0 || *timeout > 250)
			*timeout = 250;  /* a look at the clock a few times a second */
	}
	return PL_OK;
}

/* Read what pipe i has: stderr is kept up to its cap, stdout counted,
 * capped and split into lines. */
static enum pl_err read_pipe(struct pump *p, int i, struct pl_error *err)
{
	char buf[65536];
	ssize_t n = read(p->fds[i].fd, buf, sizeof(buf));

	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return PL_OK;
	if (n <= 0) {
		close(p->fds[i].fd);
		p->fds[i].fd = -1;
		return PL_OK;
	}
	if (i == 1) {
		keep_stderr(p->res, p->err_cap, &p->kept, buf, (size_t)n);
		return PL_OK;
	}
	p->res->stdout_bytes += (uint64_t)n;
	if (p->o->progress_stdout)
		pl_progress_input(p->res->stdout_bytes);
	if (p->res->stdout_bytes > p->max_out)
		return pl_fail(err, PL_ERR_LIMIT, "raise --max-input-bytes or give a smaller input",
			       "'%s' printed more than %llu bytes", p->o->argv[0],
			       (unsigned long long)p->max_out);
	return feed(p->o, &p->lb, buf, (size_t)n, p->res, err);
}

/* Read both pipes until they close, the deadline passes, the run is
 * cancelled, or a limit or the callback stops us; both pipes are closed
 * and the line buffer freed on every way out. */
static enum pl_err pump_output(const struct pl_run_opts *o, pid_t pid, int out_fd, int err_fd,
			       struct pl_run_result *res, double deadline, struct pl_error *err)
{
	struct pump p = {
		.o = o, .pid = pid, .res = res, .deadline = deadline,
		.fds = {{out_fd, POLLIN, 0}, {err_fd, POLLIN, 0}, {o->hangup_fd > 0 ? o->hangup_fd : -1, POLLIN, 0},
			{-1, POLLIN, 0}},
		.lb = {.max_line = o->max_line ? o->max_line : DEFAULT_MAX_LINE},
		.interrupt_at = o->interrupt_ms ? now_s() + o->interrupt_ms / 1000.0 : 0,
		.started = now_s(),
		.max_out = o->max_stdout ? o->max_stdout : (4ULL << 30),
		.err_cap = o->max_stderr ? o->max_stderr : DEFAULT_MAX_STDERR,
		.watch_exit = out_fd < 0 || err_fd < 0,
	};
	enum pl_err rc = PL_OK;
	int timeout;

	res->stderr_text = pl_xcalloc(1, p.err_cap + 1);
	/* A pidfd turns readable when the child exits, so the wall time of a
	 * run whose output goes to files ends at its exit (run_experiment's
	 * measure), not on the 50 ms grid of looking. */
	if (p.watch_exit)
		p.fds[3].fd = (int)syscall(SYS_pidfd_open, pid, 0);
	while (rc == PL_OK && (p.fds[0].fd >= 0 || p.fds[1].fd >= 0 ||
			       (p.watch_exit && !child_exited(pid)))) {
		if ((rc = next_timeout(&p, &timeout, err)))
			break;
		if (poll(p.fds, 4, timeout) < 0 && errno != EINTR) {
			rc = pl_fail(err, PL_ERR_INTERNAL, NULL, "poll: %s", strerror(errno));
			break;
		}
		for (int i = 0; i < 2 && rc == PL_OK; i++)
			if (p.fds[i].fd >= 0 && p.fds[i].revents)
				rc = read_pipe(&p, i, err);
		if (p.fds[3].fd >= 0 && p.fds[3].revents) {
			close(p.fds[3].fd);  /* it stays readable: the loop's test now says exited */
			p.fds[3].fd = -1;
		}
		if (rc == PL_OK && p.fds[2].fd >= 0 && p.fds[2].revents)
			rc = pl_fail(err, PL_ERR_TIMEOUT, "the caller stopped it; run it again if still needed",
				     "'%s' was cancelled: its requester went away", o->argv[0]);
	}
	if (rc == PL_OK && o->progress_ms)
		pl_progress_time_end((uint64_t)((now_s() - p.started) * 1000), o->progress_ms);
	/* A last line without its newline still counts. */
	if (rc == PL_OK && p.lb.len) {
		p.lb.data[p.lb.len] = '\0';
		res->stdout_lines++;
		if (o->on_line)
			rc = o->on_line(o->arg, p.lb.data, p.lb.len, err);
	}
	for (int i = 0; i < 4; i++)
		if (i != 2 && p.fds[i].fd >= 0)
			close(p.fds[i].fd);
	free(p.lb.data);
	return rc;
}

static int exec_errno(int fd)
{
	int e = 0;
	ssize_t n;

	do
		n = read(fd, &e, sizeof(e));
	while (n < 0 && errno == EINTR);
	return n == (ssize_t)sizeof(e) ? e : 0;
}

/* The four pipes pl_run needs (stdin, stdout, stderr, exec errors), all
 * close-on-exec; on a failure the ones already opened are closed. */
static enum pl_err open_pipes(int *pipes[4], struct pl_error *err)
{
	for (int i = 0; i < 4; i++) {
		if (pipe2(pipes[i], O_CLOEXEC) == 0)
			continue;
		int e = errno;
		while (i-- > 0)
			close(pipes[i][0]), close(pipes[i][1]);
		return pl_fail(err, PL_ERR_EXTERNAL, NULL, "pipe: %s", strerror(e));
	}
	return PL_OK;
}

/* The file a stream goes to (created or truncated), or -1 with `err`. */
static int open_sink(const char *path, struct pl_error *err)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOCTTY, 0644);

	if (fd < 0)
		pl_fail(err, PL_ERR_OUTPUT, "check the folder", "cannot create '%s': %s", path,
			strerror(errno));
	return fd;
}

/* The child's four pipes (stdin, stdout, stderr, exec errno); a stream
 * going to a file has no pipe: its ends are closed at once and the file
 * stands in for the write end.  Stdin's write end is closed: the child
 * reads end-of-file at once. */
static enum pl_err open_streams(const struct pl_run_opts *o, int *pipes[4], struct pl_error *err)
{
	int *out = pipes[1], *errp = pipes[2], out_file = -1, err_file = -1;

	if (o->stdout_path && (out_file = open_sink(o->stdout_path, err)) < 0)
		return err->code;
	if (o->stderr_path && (err_file = open_sink(o->stderr_path, err)) < 0) {
		close(out_file);
		return err->code;
	}
	if (open_pipes(pipes, err)) {
		if (out_file >= 0)
			close(out_file);
		if (err_file >= 0)
			close(err_file);
		return err->code;
	}
	if (out_file >= 0) {
		close(out[0]), close(out[1]);
		out[0] = -1, out[1] = out_file;
	}
	if (err_file >= 0) {
		close(errp[0]), close(errp[1]);
		errp[0] = -1, errp[1] = err_file;
	}
	close(pipes[0][1]);
	return PL_OK;
}

static enum pl_err fork_failed(int *pipes[4], int e, struct pl_error *err)
{
	close(pipes[0][0]), close(pipes[1][1]), close(pipes[2][1]), close(pipes[3][0]), close(pipes[3][1]);
	if (pipes[1][0] >= 0)
		close(pipes[1][0]);
	if (pipes[2][0] >= 0)
		close(pipes[2][0]);
	return pl_fail(err, PL_ERR_EXTERNAL, "the system is out of processes", "fork: %s", strerror(e));
}

/* Wait for the child, end anything it started in its own group, and fill
 * `res` with its times, peak RSS and how it ended. */
static void reap(const struct pl_run_opts *o, pid_t pid, bool own_group, double start,
		 struct pl_run_result *res)
{
	struct rusage ru;
	int status = 0;

	memset(&ru, 0, sizeof(ru));
	while (wait4(pid, &status, 0, &ru) < 0 && errno == EINTR)
		;
	if (own_group)
		kill(-pid, SIGKILL);
	if (o->started_pid)
		*o->started_pid = 0;
	res->seconds = now_s() - start;
	res->user_seconds = (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6;
	res->system_seconds = (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
	res->max_rss_kb = ru.ru_maxrss;
	if (WIFSIGNALED(status))
		res->signal = WTERMSIG(status);
	else
		res->exit_status = WEXITSTATUS(status);
}

/* What the child's exec pipe says: PL_OK, or why it never ran. */
static enum pl_err exec_failure(const struct pl_run_opts *o, int ex_read, struct pl_error *err)
{
	int e = exec_errno(ex_read);

	if (e == 0)
		return PL_OK;
	if (e & CHDIR_FAILED)
		return pl_fail(err, PL_ERR_EXTERNAL, "pass an existing folder as working_directory",
			       "cannot enter the working directory '%s': %s", o->cwd, strerror(e & ~CHDIR_FAILED));
	return pl_fail(err, PL_ERR_EXTERNAL, "check --perf-path and that the file is executable",
		       "cannot run '%s': %s", o->argv[0], strerror(e));
}

enum pl_err pl_run(const struct pl_run_opts *o, struct pl_run_result *res,
		   struct pl_error *err)
{
	int in[2], out[2], errp[2], ex[2];
	int *pipes[] = {in, out, errp, ex};
	double start = now_s(), deadline = o->timeout_ms ? start + o->timeout_ms / 1000.0 : 0;
	enum pl_err rc, exec_rc;
	bool own_group;
	char **envp;
	pid_t pid;

	memset(res, 0, sizeof(*res));
	if (!o->argv || !o->argv[0] || o->argv[0][0] != '/')
		return pl_fail(err, PL_ERR_INTERNAL, NULL, "pl_run needs an absolute program path");
	if ((rc = open_streams(o, pipes, err)))
		return rc;
	envp = make_env(o);
	pid = fork();
	if (pid < 0) {
		int e = errno;
		free(envp);
		return fork_failed(pipes, e, err);
	}
	if (pid == 0)
		child(o, envp, in[0], out[1], errp[1], ex[1]);
	free(envp);
	close(in[0]), close(out[1]), close(errp[1]), close(ex[1]);
	/* Also from here, so the group exists before we may have to kill it
	 * (whichever call runs first wins; both fail in the sandbox). */
	(void)setpgid(pid, pid);
	own_group = getpgid(pid) == pid;
	res->pid = (int)pid;
	if (o->started_pid && own_group)
		*o->started_pid = (int)pid;
	rc = pump_output(o, pid, out[0], errp[0], res, deadline, err);
	if (rc)
		kill_child(pid, own_group);
	reap(o, pid, own_group, start, res);
	/* A pump error stands; else an exec that failed is the error. */
	if (rc == PL_OK && (exec_rc = exec_failure(o, ex[0], err)))
		rc = exec_rc;
	close(ex[0]);
	return rc;
}

void pl_run_result_release(struct pl_run_result *res)
{
	free(res->stderr_text);
	res->stderr_text = NULL;
}

void pl_run_stderr_tail(const struct pl_run_result *res, char *out, size_t cap)
{
	const char *s = res->stderr_text ? res->stderr_text : "", *end = s + strlen(s), *start;

	while (end > s && (end[-1] == '\n' || end[-1] == ' ' || end[-1] == '\r'))
		end--;
	start = end;
	while (start > s && start[-1] != '\n')
		start--;
	/* perf's words are bytes (a path, a comm): messages are UTF-8. */
	pl_esc_text_str(out, cap, start, (size_t)(end - start));
}
