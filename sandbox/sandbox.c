/* sandbox.c - forked, confined workers: spawn, watch, classify (see
 * sandbox.h for the API and what a worker gets).
 *
 * Parent: sbx_spawn() prepares everything that can fail in an ordinary
 * way (Landlock ruleset, seccomp program, pipes) and forks.  The worker's
 * result pipe is read without blocking into a buffer capped at
 * max_result_bytes; a pidfd tells when the worker exits; both sit in one
 * epoll set, which is the descriptor callers poll.  A worker that passes
 * its deadline, writes too much or is cancelled gets SIGKILL sent to its
 * whole process group.  When it exits, the group is killed again while
 * the unreaped worker still pins the group id (so the signal cannot hit
 * a recycled group), then the worker is reaped and we wait, reaping as
 * the subreaper, until nothing of the group is left.
 *
 * Zygote: sbx_spawn_job() asks the zygote (zygote.c) for the worker (its
 * spare, forked and usually confined before the request came); we get
 * its pid and three pipe ends: result, status, and a "done" pipe in place
 * of the pidfd, on which the zygote writes the wait status once it has
 * done the killing and reaping above.  The worker is in the same process
 * group scheme and uid, so timeouts, caps and cancels kill it from here
 * exactly as a worker of our own.  Such a worker also ends its job with
 * a done record on the status pipe (child_done), after closing its result
 * pipe: then its result and exit status are final, and the caller takes
 * them at once, leaving the teardown and the reaping to the zygote.
 *
 * Child: confine.c (how a worker confines itself, then runs fn), shared
 * with the zygote's spares.
 *
 * Threads: a worker is driven by one thread; sbx_cancel() may come from
 * another, so `stop` and `reaped` are guarded by the worker's mutex.
 */
#include "sbx_int.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/util.h"

#define READ_CHUNK (64 * 1024)
#define NO_PIDFD_POLL_MS 100      /* without a pidfd, exits are noticed this often */
#define GROUP_GONE_WAIT_MS 1000   /* bound on waiting for a killed group */

enum sbx_stop { STOP_NONE, STOP_TIMEOUT, STOP_OVERSIZE, STOP_CANCEL };

struct sbx_worker {
	pid_t pid;               /* the worker, also its process group id */
	int exit_fd;             /* readable once the worker exited (a pidfd,
				  * or the zygote's done pipe); -1: none */
	int out_fd;              /* result pipe, read end, non-blocking; -1 closed */
	int status_fd;           /* setup failure message or done record, read end */
	int ep;                  /* epoll set over out_fd and exit_fd: sbx_fd() */
	struct pl_buf data;      /* what the worker wrote, at most max_bytes */
	size_t max_bytes;
	struct sbx_policy pol;   /* copy of the limits, without the paths */
	struct timespec start;
	long long deadline_ns;   /* CLOCK_MONOTONIC; 0 = none */
	int landlock_abi;
	pthread_mutex_t lock;    /* guards stop and reaped */
	enum sbx_stop stop;      /* why we killed it; the first reason wins */
	bool reaped;
	bool status_lost;        /* someone else reaped it (SIGCHLD ignored) */
	bool zygote;             /* forked by the zygote, which reaps it */
	bool zygote_lost;        /* the zygote died before reporting the status */
	int wstatus;
	double elapsed_ms;
	char syscall_name[40];   /* of a seccomp kill, when the log says */
	char setup_msg[120];     /* why the child could not confine itself; or
				  * the done record, which starts with a NUL */
	size_t status_len;       /* bytes read into setup_msg */
};

static const char *const outcome_names[] = {
	[SBX_OK] = "ok",
	[SBX_EXIT_NONZERO] = "exit_nonzero",
	[SBX_CRASHED] = "crashed",
	[SBX_SECCOMP_KILLED] = "seccomp_killed",
	[SBX_TIMEOUT] = "timeout",
	[SBX_OVERSIZE] = "oversize",
	[SBX_CANCELLED] = "cancelled",
	[SBX_SETUP_FAILED] = "setup_failed",
};

const char *sbx_outcome_name(enum sbx_outcome o)
{
	if ((unsigned)o >= PL_ARRAY_LEN(outcome_names))
		return "unknown";
	return outcome_names[o];
}

static long long mono_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (long long)t.tv_sec * 1000000000LL + t.tv_nsec;
}

static long long ts_ns(const struct timespec *t)
{
	return (long long)t->tv_sec * 1000000000LL + t->tv_nsec;
}

/* =============================================================== parent */

/* Descendants of a worker that outlive it come to us, to be reaped. */
static void become_subreaper(void)
{
	/* Every time: fork() clears the attribute, and it costs a prctl. */
	prctl(PR_SET_CHILD_SUBREAPER, 1);
}

/* Kill the group and remember why (the first reason wins).  A cancel
 * after the reap changes nothing; the reap cannot interleave. */
static void stop_worker(struct sbx_worker *w, enum sbx_stop why)
{
	pthread_mutex_lock(&w->lock);
	if (!w->reaped) {
		if (w->stop == STOP_NONE)
			w->stop = why;
		kill(-w->pid, SIGKILL);
	} else if (why == STOP_OVERSIZE && w->stop == STOP_NONE) {
		w->stop = why;
	}
	pthread_mutex_unlock(&w->lock);
}

static void close_out(struct sbx_worker *w)
{
	if (w->out_fd < 0)
		return;
	epoll_ctl(w->ep, EPOLL_CTL_DEL, w->out_fd, NULL);
	close(w->out_fd);
	w->out_fd = -1;
}

/* Read all that is available now, up to the cap. */
static void read_available(struct sbx_worker *w)
{
	while (w->out_fd >= 0) {
		size_t room = w->max_bytes - w->data.len;
		size_t want = room < READ_CHUNK ? room + 1 : READ_CHUNK;
		ssize_t n;

		pl_grow((void **)&w->data.data, &w->data.cap, w->data.len + want + 1, 1);
		n = read(w->out_fd, w->data.data + w->data.len, want);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return;
		if (n <= 0) {
			close_out(w);  /* end of file: nobody writes any more */
			return;
		}
		w->data.len += (size_t)n;
		if (w->data.len > w->max_bytes) {
			w->data.len = w->max_bytes;
			stop_worker(w, STOP_OVERSIZE);
			close_out(w);
		}
	}
}

size_t sbx_output(const struct sbx_worker *w, const char **data)
{
	*data = w->data.data ? w->data.data : "";
	return w->data.len;
}

/* Wait (bounded) until no process of group `pgid` is left, reaping those
 * that were re-parented to us. */
static void reap_group(pid_t pgid)
{
	long long give_up = mono_ns() + GROUP_GONE_WAIT_MS * 1000000LL;
	struct timespec nap = {0, 200000};

	for (;;) {
		while (waitpid(-pgid, NULL, WNOHANG) > 0)
			;
		if ((kill(-pgid, 0) < 0 && errno == ESRCH) || mono_ns() > give_up)
			return;
		nanosleep(&nap, NULL);
	}
}

/* Read what the status pipe holds so far: the setup failure message, or
 * the done record (child_done).  True when it is the whole done record. */
static bool read_status(struct sbx_worker *w)
{
	size_t cap = sizeof(w->setup_msg) - 1;

	while (w->status_fd >= 0 && w->status_len < cap) {
		ssize_t n = read(w->status_fd, w->setup_msg + w->status_len, cap - w->status_len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n == 0 && w->ep >= 0)  /* the end: stop polling it (it would stay ready) */
			epoll_ctl(w->ep, EPOLL_CTL_DEL, w->status_fd, NULL);
		if (n <= 0)
			break;
		w->status_len += (size_t)n;
	}
	w->setup_msg[w->status_len] = '\0';
	return w->status_len == 2 && (unsigned char)w->setup_msg[0] == SBX_DONE_MARK;
}

/* A zygote's worker that sent its done record has written all of its
 * result: take it and its exit status now.  Tearing the process down
 * and reaping it is left to the zygote, off the caller's path (the done
 * pipe is closed unread with the worker). */
static bool take_done(struct sbx_worker *w)
{
	if (!w->zygote || !read_status(w))
		return false;
	read_available(w);  /* the worker closed the pipe first: all is there */
	pthread_mutex_lock(&w->lock);
	w->wstatus = W_EXITCODE((unsigned char)w->setup_msg[1], 0);
	w->reaped = true;
	pthread_mutex_unlock(&w->lock);
	w->setup_msg[0] = '\0';
	w->elapsed_ms = (double)(mono_ns() - ts_ns(&w->start)) / 1e6;
	return true;
}

/* Our own child: reap it if it has exited; true when it has. */
static bool reap_direct(struct sbx_worker *w)
{
	siginfo_t si;
	int rc;

	memset(&si, 0, sizeof(si));
	rc = waitid(P_PID, (id_t)w->pid, &si, WEXITED | WNOHANG | WNOWAIT);
	if ((rc == 0 && si.si_pid == 0) || (rc < 0 && errno != ECHILD))
		return false;  /* still running */
	pthread_mutex_lock(&w->lock);
	kill(-w->pid, SIGKILL);  /* stragglers; the zombie pins the group id */
	if (rc == 0)
		while (waitpid(w->pid, &w->wstatus, 0) < 0 && errno == EINTR)
			;
	else
		w->status_lost = true;
	w->reaped = true;
	pthread_mutex_unlock(&w->lock);
	w->elapsed_ms = (double)(mono_ns() - ts_ns(&w->start)) / 1e6;
	read_available(w);
	reap_group(w->pid);
	return true;
}

/* The zygote's child: true once its done pipe gave the wait status (the
 * zygote has killed and reaped the whole group by then) or ended
 * without one (the zygote died; PDEATHSIG killed the worker). */
static bool reap_zygote(struct sbx_worker *w)
{
	int st = 0;
	ssize_t n = read(w->exit_fd, &st, sizeof(st));

	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return false;
	pthread_mutex_lock(&w->lock);
	if (n == (ssize_t)sizeof(st)) {
		w->wstatus = st;
	} else {
		kill(-w->pid, SIGKILL);
		w->zygote_lost = true;
	}
	w->reaped = true;
	pthread_mutex_unlock(&w->lock);
	w->elapsed_ms = (double)(mono_ns() - ts_ns(&w->start)) / 1e6;
	if (w->zygote_lost)
		sbx_zygote_lost();
	read_available(w);
	return true;
}

/* Reap the worker if it has exited; true when it has. */
static bool try_reap(struct sbx_worker *w)
{
	if (!(w->zygote ? reap_zygote(w) : reap_direct(w)))
		return false;
	read_status(w);
	if ((unsigned char)w->setup_msg[0] == SBX_DONE_MARK)
		w->setup_msg[0] = '\0';
	if (!w->setup_msg[0] && WIFSIGNALED(w->wstatus) && WTERMSIG(w->wstatus) == SIGSYS &&
	    !sbx_audit_syscall(w->pid, ts_ns(&w->start) / 1000 - 1000000, w->syscall_name,
			       sizeof(w->syscall_name)))
		w->syscall_name[0] = '\0';
	return true;
}

bool sbx_step(struct sbx_worker *w)
{
	if (w->reaped)
		return true;
	read_available(w);
	if (take_done(w) || try_reap(w))
		return true;
	if (w->deadline_ns && mono_ns() >= w->deadline_ns) {
		stop_worker(w, STOP_TIMEOUT);
		w->deadline_ns = 0;  /* now wait for the exit, not the clock */
	}
	return false;
}

int sbx_fd(const struct sbx_worker *w)
{
	return w->ep;
}

int sbx_timeout_left_ms(const struct sbx_worker *w)
{
	long long left;

	if (w->reaped)
		return 0;
	if (!w->deadline_ns)
		return w->exit_fd < 0 ? NO_PIDFD_POLL_MS : -1;
	left = (w->deadline_ns - mono_ns() + 999999) / 1000000;
	if (left < 0)
		left = 0;
	if (w->exit_fd < 0 && left > NO_PIDFD_POLL_MS)
		left = NO_PIDFD_POLL_MS;
	return left > 0x7fffffff ? 0x7fffffff : (int)left;
}

void sbx_cancel(struct sbx_worker *w)
{
	if (w)
		stop_worker(w, STOP_CANCEL);
}

/* -------------------------------------------------------------- spawn */


static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

/* The epoll set over the result pipe (the exit_fd is added later). */
static enum pl_err watch(struct sbx_worker *w, struct pl_error *err)
{
	struct epoll_event ev = {.events = EPOLLIN};

	w->ep = epoll_create1(EPOLL_CLOEXEC);
	if (w->ep < 0)
		return pl_fail(err, PL_ERR_LIMIT, "close descriptors or raise RLIMIT_NOFILE",
			       "cannot create an epoll set: %s", strerror(errno));
	ev.data.fd = w->out_fd;
	if (epoll_ctl(w->ep, EPOLL_CTL_ADD, w->out_fd, &ev) < 0)
		return pl_fail(err, PL_ERR_LIMIT, NULL, "cannot watch the result pipe: %s",
			       strerror(errno));
	return PL_OK;
}

/* After fork(): a pidfd as exit_fd, when the kernel has them. */
static void watch_exit(struct sbx_worker *w)
{
	struct epoll_event ev = {.events = EPOLLIN};

	w->exit_fd = (int)syscall(SYS_pidfd_open, w->pid, 0);
	ev.data.fd = w->exit_fd;
	if (w->exit_fd >= 0 && epoll_ctl(w->ep, EPOLL_CTL_ADD, w->exit_fd, &ev) < 0)
		close_fd(&w->exit_fd);
}

static struct sbx_worker *worker_new(const struct sbx_policy *pol)
{
	struct sbx_worker *w = pl_xcalloc(1, sizeof(*w));

	w->pid = -1;
	w->exit_fd = w->out_fd = w->status_fd = w->ep = -1;
	w->pol = *pol;  /* for the numbers in details; its pointers are not kept */
	w->pol.read_roots = NULL;
	w->pol.write_root = w->pol.exec_path = NULL;
	w->max_bytes = pol->max_result_bytes ? pol->max_result_bytes : SBX_DEFAULT_MAX_RESULT;
	pthread_mutex_init(&w->lock, NULL);
	return w;
}

static void worker_free(struct sbx_worker *w)
{
	close_fd(&w->out_fd);
	close_fd(&w->status_fd);
	close_fd(&w->exit_fd);
	close_fd(&w->ep);
	pl_buf_release(&w->data);
	pthread_mutex_destroy(&w->lock);
	free(w);
}

/* Pipes, epoll, fork.  On failure nothing is left running. */
static enum pl_err start(struct sbx_worker *w, struct sbx_plan *p, struct pl_error *err)
{
	int out[2], st[2];
	enum pl_err rc;

	if (pipe2(out, O_CLOEXEC) < 0)
		return pl_fail(err, PL_ERR_LIMIT, "close descriptors or raise RLIMIT_NOFILE",
			       "cannot create the result pipe: %s", strerror(errno));
	if (pipe2(st, O_CLOEXEC) < 0) {
		close(out[0]);
		close(out[1]);
		return pl_fail(err, PL_ERR_LIMIT, "close descriptors or raise RLIMIT_NOFILE",
			       "cannot create the status pipe: %s", strerror(errno));
	}
	w->out_fd = out[0];
	w->status_fd = st[0];
	fcntl(w->out_fd, F_SETFL, O_NONBLOCK);
	fcntl(w->status_fd, F_SETFL, O_NONBLOCK);
	p->out_w = out[1];
	p->status_w = st[1];
	rc = watch(w, err);
	clock_gettime(CLOCK_MONOTONIC, &w->start);
	if (rc == PL_OK && (w->pid = fork()) == 0)
		sbx_child_main(p);
	close(out[1]);
	close(st[1]);
	if (rc)
		return rc;
	if (w->pid < 0)
		return pl_fail(err, PL_ERR_LIMIT, "wait for running workers to finish",
			       "cannot fork a worker: %s", strerror(errno));
	setpgid(w->pid, w->pid);  /* also here, so kill(-pid) works at once */
	watch_exit(w);
	return PL_OK;
}

enum pl_err sbx_spawn(const struct sbx_policy *pol, sbx_fn fn, void *arg,
		      struct sbx_worker **out, struct pl_error *err)
{
	struct sbx_plan p = {.pol = pol, .parent = getpid(), .fn = fn, .arg = arg};
	struct sbx_worker *w;
	enum pl_err rc;

	*out = NULL;
	become_subreaper();
	w = worker_new(pol);
	rc = sbx_prepare(pol, &p, &w->landlock_abi, err);
	if (rc == PL_OK)
		rc = start(w, &p, err);
	close_fd(&p.ruleset);
	if (rc) {
		worker_free(w);
		return rc;
	}
	if (pol->timeout_ms)
		w->deadline_ns = ts_ns(&w->start) + (long long)pol->timeout_ms * 1000000LL;
	*out = w;
	return PL_OK;
}

/* A job forked directly: its function and a NUL-terminated copy of the
 * bytes, as the zygote would give it. */
struct job_arg {
	sbx_job_fn fn;
	char *buf;
	size_t len;
};

static int run_job(void *arg, int out_fd)
{
	const struct job_arg *j = arg;

	return j->fn(j->buf, j->len, out_fd);
}

static enum pl_err spawn_job_directly(const struct sbx_policy *pol, sbx_job_fn fn,
				      const void *buf, size_t len, struct sbx_worker **out,
				      struct pl_error *err)
{
	struct job_arg j = {fn, pl_xmalloc(len + 1), len};
	enum pl_err rc;

	if (len)
		memcpy(j.buf, buf, len);
	j.buf[len] = '\0';
	rc = sbx_spawn(pol, run_job, &j, out, err);
	free(j.buf);
	return rc;
}

/* The descriptors of a worker the zygote forked into `w`. */
static enum pl_err adopt(struct sbx_worker *w, const struct sbx_zworker *zw,
			 struct pl_error *err)
{
	struct epoll_event ev = {.events = EPOLLIN};
	enum pl_err rc;

	w->zygote = true;
	w->pid = zw->pid;
	w->out_fd = zw->out_fd;
	w->status_fd = zw->status_fd;
	w->exit_fd = zw->done_fd;
	w->landlock_abi = zw->landlock_abi;
	rc = watch(w, err);
	ev.data.fd = w->exit_fd;
	if (rc == PL_OK && epoll_ctl(w->ep, EPOLL_CTL_ADD, w->exit_fd, &ev) < 0)
		rc = pl_fail(err, PL_ERR_LIMIT, NULL, "cannot watch the done pipe: %s",
			     strerror(errno));
	ev.data.fd = w->status_fd;
	if (rc == PL_OK && epoll_ctl(w->ep, EPOLL_CTL_ADD, w->status_fd, &ev) < 0)
		rc = pl_fail(err, PL_ERR_LIMIT, NULL, "cannot watch the status pipe: %s",
			     strerror(errno));
	if (rc)
		kill(-w->pid, SIGKILL);  /* the zygote reaps it */
	return rc;
}

enum pl_err sbx_spawn_job(const struct sbx_policy *pol, const char *name, const void *buf,
			  size_t len, struct sbx_worker **out, struct pl_error *err)
{
	sbx_job_fn fn = sbx_job_find(name);
	struct sbx_zworker zw;
	struct sbx_worker *w;
	int rc;

	*out = NULL;
	if (!fn)
		return pl_fail(err, PL_ERR_USAGE, "register it with sbx_register() at startup",
			       "no sandbox job is registered as '%s'", name);
	w = worker_new(pol);
	clock_gettime(CLOCK_MONOTONIC, &w->start);
	rc = sbx_zygote_spawn(pol, name, buf, len, &zw, err);
	if (rc == SBX_NO_ZYGOTE) {
		worker_free(w);
		return spawn_job_directly(pol, fn, buf, len, out, err);
	}
	if (rc == PL_OK)
		rc = adopt(w, &zw, err);
	if (rc) {
		worker_free(w);
		return (enum pl_err)rc;
	}
	if (pol->timeout_ms)
		w->deadline_ns = ts_ns(&w->start) + (long long)pol->timeout_ms * 1000000LL;
	*out = w;
	return PL_OK;
}

/* ------------------------------------------------------------- result */

/* "the worker crashed with SIGSEGV (Segmentation fault)" and kin. */
static void describe_signal(const struct sbx_worker *w, int sig, char *out, size_t cap)
{
	const char *abbrev = sigabbrev_np(sig), *descr = sigdescr_np(sig);

	if (sig == SIGXCPU)
		snprintf(out, cap, "the worker was stopped by SIGXCPU for using more than its "
			 "%llu s of CPU time", (unsigned long long)w->pol.max_cpu_seconds);
	else if (sig == SIGXFSZ)
		snprintf(out, cap, "the worker was stopped by SIGXFSZ for writing a file past its "
			 "%llu-byte size limit", (unsigned long long)w->pol.max_file_size);
	else if (sig == SIGKILL)
		snprintf(out, cap, "the worker was killed by SIGKILL from outside the sandbox "
			 "(the out-of-memory killer, or its CPU-time limit)");
	else
		snprintf(out, cap, "the worker crashed with SIG%s (%s)", abbrev ? abbrev : "?",
			 descr ? descr : "unknown signal");
}

static void describe(const struct sbx_worker *w, struct sbx_result *res)
{
	char *d = res->detail;
	size_t cap = sizeof(res->detail);

	switch (res->outcome) {
	case SBX_OK:
		snprintf(d, cap, "the worker finished normally");
		break;
	case SBX_EXIT_NONZERO:
		snprintf(d, cap, "the worker exited with status %d", res->exit_status);
		break;
	case SBX_CRASHED:
		if (w->zygote_lost)
			snprintf(d, cap, "the worker was lost when the sandbox's zygote process "
				 "exited; later workers are forked directly");
		else if (w->status_lost)
			snprintf(d, cap, "the worker's exit status was lost "
				 "(the server must not ignore SIGCHLD)");
		else
			describe_signal(w, res->signal, d, cap);
		break;
	case SBX_SECCOMP_KILLED:
		snprintf(d, cap, "the worker was killed by the sandbox for calling a forbidden "
			 "system call (%s)", w->syscall_name[0] ? w->syscall_name :
			 "which one is unknown: the kernel log has no record of it");
		break;
	case SBX_TIMEOUT:
		snprintf(d, cap, "the worker did not finish within its %u ms wall-clock limit "
			 "and was killed", w->pol.timeout_ms);
		break;
	case SBX_OVERSIZE:
		snprintf(d, cap, "the worker wrote more than its %zu-byte result limit and was "
			 "killed", w->max_bytes);
		break;
	case SBX_CANCELLED:
		snprintf(d, cap, "the worker was cancelled before it finished");
		break;
	case SBX_SETUP_FAILED:
		snprintf(d, cap, "the worker could not confine itself (%s)", w->setup_msg);
		break;
	}
}

static enum sbx_outcome classify(const struct sbx_worker *w)
{
	static const enum sbx_outcome by_stop[] = {
		[STOP_TIMEOUT] = SBX_TIMEOUT,
		[STOP_OVERSIZE] = SBX_OVERSIZE,
		[STOP_CANCEL] = SBX_CANCELLED,
	};

	if (w->setup_msg[0])
		return SBX_SETUP_FAILED;
	if (w->stop != STOP_NONE)
		return by_stop[w->stop];
	if (w->status_lost || w->zygote_lost)
		return SBX_CRASHED;
	if (WIFEXITED(w->wstatus))
		return WEXITSTATUS(w->wstatus) ? SBX_EXIT_NONZERO : SBX_OK;
	return WTERMSIG(w->wstatus) == SIGSYS ? SBX_SECCOMP_KILLED : SBX_CRASHED;
}

/* Block until the worker is reaped. */
static void wait_done(struct sbx_worker *w)
{
	while (!sbx_step(w)) {
		struct pollfd pfd = {w->ep, POLLIN, 0};
		poll(&pfd, 1, sbx_timeout_left_ms(w));
	}
}

void sbx_finish(struct sbx_worker *w, struct sbx_result *res)
{
	bool lost;

	if (!w)
		return;
	if (!w->reaped) {
		stop_worker(w, STOP_CANCEL);
		wait_done(w);
	}
	memset(res, 0, sizeof(*res));
	res->outcome = classify(w);
	lost = w->status_lost || w->zygote_lost;
	if (!lost && WIFEXITED(w->wstatus) &&
	    (res->outcome == SBX_OK || res->outcome == SBX_EXIT_NONZERO))
		res->exit_status = WEXITSTATUS(w->wstatus);
	if (!lost && WIFSIGNALED(w->wstatus))
		res->signal = WTERMSIG(w->wstatus);
	res->elapsed_ms = w->elapsed_ms;
	res->landlock_abi = w->landlock_abi;
	describe(w, res);
	pl_grow((void **)&w->data.data, &w->data.cap, w->data.len + 1, 1);
	w->data.data[w->data.len] = '\0';
	res->data = w->data.data;
	res->len = w->data.len;
	w->data.data = NULL;
	worker_free(w);
}

enum pl_err sbx_run(const struct sbx_policy *pol, sbx_fn fn, void *arg,
		    struct sbx_result *res, struct pl_error *err)
{
	struct sbx_worker *w;
	enum pl_err rc;

	memset(res, 0, sizeof(*res));
	rc = sbx_spawn(pol, fn, arg, &w, err);
	if (rc)
		return rc;
	wait_done(w);
	sbx_finish(w, res);
	return PL_OK;
}

void sbx_result_release(struct sbx_result *res)
{
	if (!res)
		return;
	free(res->data);
	res->data = NULL;
	res->len = 0;
}
