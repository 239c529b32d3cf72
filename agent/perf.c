/* perf.c - running perf: children and the capability probe.
 *
 * Every child runs with LC_ALL=C (plain digits in perf stat), in its own
 * process group (so the kill reaches the `sleep` perf spawned), with every
 * signal blocked across fork() and reset to the default in the child, and
 * with only fds 0-2 open (everything else is close-on-exec).  Ending a
 * child is SIGTERM to its group, a 3 s grace, then SIGKILL.  Deadlines use
 * CLOCK_MONOTONIC.
 *
 * The probe is 0.12's: one batched `perf stat -x,` over every candidate,
 * one `perf record` over the survivors (each alone only when that fails),
 * `perf evlist` to see what perf really recorded (a PMU-less kernel turns
 * cycles into cpu-clock), the cpu-clock/task-clock fallback when no
 * hardware event records, a call-graph recording whose `perf script`
 * output must hold indented frame lines (it also checks our -F list), and
 * the exact continuous pipeline, which must keep those frames. */
#include "agent.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

/* environ with LC_ALL=C, built before fork (the child may not allocate). */
static char **child_env(void)
{
	size_t n = 0, k = 0;
	while (environ && environ[n])
		n++;
	char **env = calloc(n + 2, sizeof *env);
	if (!env)
		return NULL;
	for (size_t i = 0; i < n; i++)
		if (strncmp(environ[i], "LC_ALL=", 7) != 0 && strncmp(environ[i], "LANG=", 5) != 0)
			env[k++] = environ[i];
	env[k++] = "LC_ALL=C";
	env[k] = NULL;
	return env;
}

int spawn_child(char *const argv[], const struct spawn_opts *o, struct child *c)
{
	int outp[2] = {-1, -1}, errp[2] = {-1, -1};
	sigset_t all, old;
	char **env = child_env();
	c->pid = -1;
	c->out_fd = c->err_fd = -1;
	if (!env)
		return -1;
	if ((o->want_out && pipe2(outp, O_CLOEXEC) < 0) || (o->want_err && pipe2(errp, O_CLOEXEC) < 0)) {
		free(env);
		if (outp[0] >= 0) {
			close(outp[0]);
			close(outp[1]);
		}
		return -1;
	}
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	pid_t pid = fork();
	if (pid == 0) {
		int devnull = open("/dev/null", O_RDWR);
		for (int s = 1; s < NSIG; s++)
			signal(s, SIG_DFL);
		setpgid(0, 0);
		if (o->nice)
			setpriority(PRIO_PROCESS, 0, o->nice);
		dup2(o->stdin_fd >= 0 ? o->stdin_fd : devnull, 0);
		dup2(o->stdout_fd >= 0 ? o->stdout_fd : o->want_out ? outp[1] : devnull, 1);
		dup2(o->want_err ? errp[1] : devnull, 2);
		sigset_t none;
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		execvpe(argv[0], argv, env);
		_exit(127);
	}
	int saved = errno;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	free(env);
	if (o->want_out)
		close(outp[1]);
	if (o->want_err)
		close(errp[1]);
	if (pid < 0) {
		if (o->want_out)
			close(outp[0]);
		if (o->want_err)
			close(errp[0]);
		errno = saved;
		return -1;
	}
	setpgid(pid, pid); /* also here, so a kill right after fork finds the group */
	c->pid = pid;
	c->out_fd = o->want_out ? outp[0] : -1;
	c->err_fd = o->want_err ? errp[0] : -1;
	return 0;
}

static int decode_status(int st)
{
	if (WIFEXITED(st))
		return WEXITSTATUS(st);
	if (WIFSIGNALED(st))
		return 128 + WTERMSIG(st);
	return 255;
}

int child_wait(struct child *c, int timeout_ms)
{
	double end = mono_now() + timeout_ms / 1000.0;
	int st;
	if (c->pid <= 0)
		return -1;
	for (;;) {
		pid_t r = waitpid(c->pid, &st, WNOHANG);
		if (r == c->pid) {
			c->pid = -1;
			return decode_status(st);
		}
		if (r < 0 && errno != EINTR) {
			c->pid = -1;
			return 255;
		}
		if (mono_now() >= end)
			return -1;
		sleep_ms(20);
	}
}

static void close_fds(struct child *c)
{
	if (c->out_fd >= 0)
		close(c->out_fd);
	if (c->err_fd >= 0)
		close(c->err_fd);
	c->out_fd = c->err_fd = -1;
}

int child_end(struct child *c)
{
	int rc;
	if (c->pid <= 0) {
		close_fds(c);
		return -1;
	}
	pid_t pg = c->pid;
	killpg(pg, SIGTERM);
	rc = child_wait(c, PERF_GRACE_MS);
	if (rc < 0) {
		killpg(pg, SIGKILL);
		rc = child_wait(c, 5000);
	}
	killpg(pg, SIGKILL); /* the group's stragglers (perf's sleep) */
	close_fds(c);
	return rc;
}

struct sink {
	char *buf;
	size_t len, cap;
};

static void sink_add(struct sink *s, const char *p, size_t n, size_t cap)
{
	if (!s->buf) {
		s->buf = malloc(cap + 1);
		if (!s->buf)
			return;
		s->cap = cap;
	}
	if (n > s->cap - s->len)
		n = s->cap - s->len;  /* keep draining, drop the excess */
	memcpy(s->buf + s->len, p, n);
	s->len += n;
	s->buf[s->len] = '\0';
}

static char *sink_take(struct sink *s)
{
	if (!s->buf)
		s->buf = calloc(1, 1);
	return s->buf;
}

int run_perf(char *const argv[], int timeout_ms, size_t cap, char **out, char **err, int nice_val)
{
	struct spawn_opts o = {.stdin_fd = -1, .stdout_fd = -1, .want_out = out != NULL,
			       .want_err = err != NULL, .nice = nice_val};
	struct child c;
	struct sink so = {0}, se = {0};
	char buf[65536];
	double end = mono_now() + timeout_ms / 1000.0;
	if (out)
		*out = NULL;
	if (err)
		*err = NULL;
	if (spawn_child(argv, &o, &c) < 0)
		return -1;
	int rc = 0;
	while (c.out_fd >= 0 || c.err_fd >= 0) {
		struct pollfd p[2] = {{c.out_fd, POLLIN, 0}, {c.err_fd, POLLIN, 0}};
		int left = (int)((end - mono_now()) * 1000);
		if (left <= 0) {
			rc = -2;
			break;
		}
		if (poll(p, 2, left > 200 ? 200 : left) < 0 && errno != EINTR)
			break;
		for (int i = 0; i < 2; i++) {
			int *fd = i == 0 ? &c.out_fd : &c.err_fd;
			if (*fd < 0 || !(p[i].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
			ssize_t k = read(*fd, buf, sizeof buf);
			if (k > 0) {
				sink_add(i == 0 ? &so : &se, buf, (size_t)k, cap);
			} else if (k == 0 || errno != EINTR) {
				close(*fd);
				*fd = -1;
			}
		}
	}
	if (rc == 0) {
		int left = (int)((end - mono_now()) * 1000);
		rc = child_wait(&c, left > 0 ? left : 1);
		if (rc == -1)
			rc = -2;
	}
	if (rc == -2)
		child_end(&c);
	close_fds(&c);
	if (out)
		*out = sink_take(&so);
	else
		free(so.buf);
	if (err)
		*err = sink_take(&se);
	else
		free(se.buf);
	return rc;
}

int perf_version(const char *perf, char *out, size_t cap)
{
	char *argv[] = {(char *)perf, "--version", NULL}, *o = NULL;
	int rc = run_perf(argv, 5000, 4096, &o, NULL, 0);
	int ok = rc == 0 && o && strncmp(o, "perf version", 12) == 0;
	if (ok) {
		o[strcspn(o, "\n")] = '\0';
		snprintf(out, cap, "%s", o);
	}
	free(o);
	return ok ? 0 : -1;
}

/* ------------------------------------------------------------------ */
/* probe                                                                */

static const char *const HW_EVENTS[] = {"cycles", "instructions", "cache-misses",
					"cache-references", "branch-misses", "branch-instructions"};
static const char *const STAT_ONLY[] = {"page-faults", "context-switches", "cpu-migrations"};
static const char *const FALLBACK[] = {"cpu-clock", "task-clock"};
#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

const char *const SCRIPT_FIELDS = "comm,tid,pid,time,period,event,ip,sym,symoff,dso";

static void join_events(char *out, size_t cap, const char *const *ev, int n)
{
	size_t len = 0;
	out[0] = '\0';
	for (int i = 0; i < n; i++) {
		int k = snprintf(out + len, cap - len, "%s%s", i ? "," : "", ev[i]);
		if (k < 0 || (size_t)k >= cap - len)
			break;
		len += (size_t)k;
	}
}

/* Is `name` counted in perf stat -x, output (a line "value,unit,name,...")
 * with a real value? */
static int stat_counted(const char *csv, const char *name)
{
	size_t nl = strlen(name);
	for (const char *p = csv; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		const char *c1 = strchr(p, ','), *eol = strchr(p, '\n');
		if (!c1 || (eol && c1 > eol))
			continue;
		const char *c2 = strchr(c1 + 1, ',');
		if (!c2 || (eol && c2 > eol))
			continue;
		const char *ev = c2 + 1;
		if (strncmp(ev, name, nl) == 0 && (ev[nl] == ',' || ev[nl] == ':' || ev[nl] == '\n'))
			return p[0] != '<';
	}
	return 0;
}

static int stat_probe(int pid, const char *const *ev, int n, int ok[])
{
	char events[1024], pidbuf[16], *err = NULL;
	join_events(events, sizeof events, ev, n);
	snprintf(pidbuf, sizeof pidbuf, "%d", pid);
	char *argv[] = {A.perf, "stat", "-x", ",", "-e", events, "-p", pidbuf, "--", "sleep", "1", NULL};
	int rc = run_perf(argv, 10000, 65536, NULL, &err, 0);
	for (int i = 0; i < n; i++)
		ok[i] = rc == 0 && stat_counted(err, ev[i]);
	free(err);
	return rc;
}

static int make_tmp(char *path, size_t cap)
{
	snprintf(path, cap, "/tmp/perflens-probe-XXXXXX");
	int fd = mkostemp(path, O_CLOEXEC);
	if (fd < 0)
		return -1;
	close(fd);
	return 0;
}

/* perf record EVENTS for 1 s into a temp file; 0 and the file's path in
 * tmp when perf exited 0 (the caller unlinks it). */
static int record_probe(int pid, const char *events, const char *callgraph, char *tmp, size_t cap)
{
	char pidbuf[16];
	snprintf(pidbuf, sizeof pidbuf, "%d", pid);
	if (make_tmp(tmp, cap) < 0)
		return -1;
	char *argv[20];
	int k = 0;
	argv[k++] = A.perf; argv[k++] = "record"; argv[k++] = "-e"; argv[k++] = (char *)events;
	argv[k++] = "-p"; argv[k++] = pidbuf; argv[k++] = "-F"; argv[k++] = "99";
	argv[k++] = "-o"; argv[k++] = tmp;
	if (callgraph && callgraph[0]) {
		argv[k++] = "--call-graph";
		argv[k++] = (char *)callgraph;
	}
	argv[k++] = "--"; argv[k++] = "sleep"; argv[k++] = "1"; argv[k] = NULL;
	int rc = run_perf(argv, 15000, 65536, NULL, NULL, 0);
	if (rc != 0) {
		unlink(tmp);
		return -1;
	}
	return 0;
}

/* The events perf really recorded into file (perf evlist). */
static char *evlist(const char *file)
{
	char *argv[] = {A.perf, "evlist", "-i", (char *)file, NULL}, *out = NULL;
	if (run_perf(argv, 10000, 65536, &out, NULL, 0) != 0) {
		free(out);
		return NULL;
	}
	return out;
}

static int in_evlist(const char *list, const char *name)
{
	size_t nl = strlen(name);
	for (const char *p = list; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		if (strncmp(p, name, nl) == 0 && (p[nl] == '\n' || p[nl] == ':' || p[nl] == '\0'))
			return 1;
	return 0;
}

/* Which of ev[0..n) record: one perf record over all, each alone on failure. */
static void record_confirm(int pid, const char *const *ev, int n, int ok[])
{
	char events[1024], tmp[64];
	join_events(events, sizeof events, ev, n);
	if (record_probe(pid, events, NULL, tmp, sizeof tmp) == 0) {
		char *list = evlist(tmp);
		unlink(tmp);
		for (int i = 0; i < n; i++)
			ok[i] = list && in_evlist(list, ev[i]);
		free(list);
		return;
	}
	for (int i = 0; i < n; i++) {
		ok[i] = 0;
		if (record_probe(pid, ev[i], NULL, tmp, sizeof tmp) == 0) {
			char *list = evlist(tmp);
			unlink(tmp);
			ok[i] = list && in_evlist(list, ev[i]);
			free(list);
		}
	}
}

/* Does perf script text hold call-chain frame lines (tab, spaces, hex)? */
static int has_frames(const char *text)
{
	for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		if (*p != '\t')
			continue;
		const char *q = p;
		while (*q == '\t' || *q == ' ')
			q++;
		if ((*q >= '0' && *q <= '9') || (*q >= 'a' && *q <= 'f')) {
			const char *h = q;
			while ((*h >= '0' && *h <= '9') || (*h >= 'a' && *h <= 'f'))
				h++;
			if (*h == ' ' && h > q)
				return 1;
		}
	}
	return 0;
}

static char *script_file(const char *file, int fields, int *rc)
{
	char *argv[8], *out = NULL;
	int k = 0;
	argv[k++] = A.perf; argv[k++] = "script";
	if (fields) {
		argv[k++] = "-F";
		argv[k++] = (char *)SCRIPT_FIELDS;
	}
	argv[k++] = "-i"; argv[k++] = (char *)file; argv[k] = NULL;
	*rc = run_perf(argv, 15000, 4u << 20, &out, NULL, 5);
	return out;
}

/* Try fp then dwarf: the first whose samples hold frames; also decides
 * whether perf script takes our field list. */
static void callgraph_probe(int pid, struct agent_caps *caps)
{
	static const char *const methods[] = {"fp", "dwarf"};
	char tmp[64];
	caps->callgraph[0] = '\0';
	caps->fields_ok = 1;
	for (size_t m = 0; m < NELEM(methods); m++) {
		int rc;
		if (record_probe(pid, caps->record[0], methods[m], tmp, sizeof tmp) < 0)
			continue;
		char *out = script_file(tmp, 1, &rc);
		if (rc != 0 || !out || !out[0]) {
			free(out);
			out = script_file(tmp, 0, &rc);
			caps->fields_ok = !(rc == 0 && out && out[0]);
			if (!caps->fields_ok)
				agent_log("perf script does not take -F %s: using its default format", SCRIPT_FIELDS);
		}
		unlink(tmp);
		int frames = out && has_frames(out), samples = out && out[0];
		free(out);
		if (frames || (!samples && m == 0 && rc == 0)) {
			/* No sample at all (an idle target) cannot disprove fp. */
			snprintf(caps->callgraph, sizeof caps->callgraph, "%s", methods[m]);
			return;
		}
	}
}

/* The continuous pipeline for 1 s: both stages exit 0, and samples keep
 * their frames when there is a call graph. */
static int pipe_probe(int pid, const struct agent_caps *caps)
{
	char pidbuf[16], *argv[20], *sargv[8];
	int k = 0, s = 0;
	snprintf(pidbuf, sizeof pidbuf, "%d", pid);
	argv[k++] = A.perf; argv[k++] = "record"; argv[k++] = "-e"; argv[k++] = (char *)caps->record[0];
	argv[k++] = "-p"; argv[k++] = pidbuf; argv[k++] = "-F"; argv[k++] = "99";
	argv[k++] = "-o"; argv[k++] = "-";
	argv[k++] = "--no-buffering";  /* as the pipeline runs at low rates (capture.c) */
	if (caps->callgraph[0]) {
		argv[k++] = "--call-graph";
		argv[k++] = (char *)caps->callgraph;
	}
	argv[k++] = "--"; argv[k++] = "sleep"; argv[k++] = "1"; argv[k] = NULL;
	sargv[s++] = A.perf; sargv[s++] = "script";
	if (caps->fields_ok) {
		sargv[s++] = "-F";
		sargv[s++] = (char *)SCRIPT_FIELDS;
	}
	sargv[s++] = "-i"; sargv[s++] = "-"; sargv[s] = NULL;
	struct spawn_opts ro = {.stdin_fd = -1, .stdout_fd = -1, .want_out = 1};
	struct child rec, scr;
	if (spawn_child(argv, &ro, &rec) < 0)
		return 0;
	struct spawn_opts so = {.stdin_fd = rec.out_fd, .stdout_fd = -1, .want_out = 1, .nice = 5};
	if (spawn_child(sargv, &so, &scr) < 0) {
		child_end(&rec);
		return 0;
	}
	close(rec.out_fd);
	rec.out_fd = -1;
	struct sink out = {0};
	char buf[65536];
	double end = mono_now() + 20;
	while (scr.out_fd >= 0 && mono_now() < end) {
		struct pollfd p = {scr.out_fd, POLLIN, 0};
		if (poll(&p, 1, 200) <= 0)
			continue;
		ssize_t n = read(scr.out_fd, buf, sizeof buf);
		if (n <= 0)
			break;
		sink_add(&out, buf, (size_t)n, 4u << 20);
	}
	int rrc = child_wait(&rec, 5000), src = child_wait(&scr, 5000);
	if (rrc < 0)
		rrc = child_end(&rec);
	if (src < 0)
		src = child_end(&scr);
	close_fds(&rec);
	close_fds(&scr);
	char *text = sink_take(&out);
	int ok = rrc == 0 && src == 0 && text && (!text[0] || !caps->callgraph[0] || has_frames(text));
	free(text);
	return ok;
}

int probe_caps(int pid, struct agent_caps *caps)
{
	const char *stat_ev[NELEM(HW_EVENTS) + NELEM(STAT_ONLY)];
	int ok[NELEM(HW_EVENTS) + NELEM(STAT_ONLY)], n = 0;
	double t0 = mono_now();
	memset(caps, 0, sizeof *caps);
	caps->pid = pid;
	for (size_t i = 0; i < NELEM(HW_EVENTS); i++)
		stat_ev[n++] = HW_EVENTS[i];
	for (size_t i = 0; i < NELEM(STAT_ONLY); i++)
		stat_ev[n++] = STAT_ONLY[i];
	if (stat_probe(pid, stat_ev, n, ok) != 0) {
		/* One unknown name fails the whole batch on some perf versions. */
		for (int i = 0; i < n; i++) {
			int one;
			stat_probe(pid, &stat_ev[i], 1, &one);
			ok[i] = one;
		}
	}
	const char *surv[NELEM(HW_EVENTS)];
	int ns = 0, rok[NELEM(HW_EVENTS)];
	for (size_t i = 0; i < NELEM(HW_EVENTS); i++)
		if (ok[i])
			surv[ns++] = HW_EVENTS[i];
	for (size_t i = 0; i < NELEM(STAT_ONLY); i++)
		if (ok[NELEM(HW_EVENTS) + i] && caps->n_stat_only < MAX_EVENTS)
			snprintf(caps->stat_only[caps->n_stat_only++], EVENT_NAME, "%s", STAT_ONLY[i]);
	if (ns > 0) {
		record_confirm(pid, surv, ns, rok);
		for (int i = 0; i < ns; i++)
			if (rok[i])
				snprintf(caps->record[caps->n_record++], EVENT_NAME, "%s", surv[i]);
	}
	if (caps->n_record == 0) {
		int fok[NELEM(FALLBACK)];
		record_confirm(pid, FALLBACK, (int)NELEM(FALLBACK), fok);
		for (size_t i = 0; i < NELEM(FALLBACK); i++)
			if (fok[i])
				snprintf(caps->record[caps->n_record++], EVENT_NAME, "%s", FALLBACK[i]);
		caps->fallback = caps->n_record > 0;
		if (caps->fallback)
			agent_log("no hardware event records here (no PMU?): falling back to cpu-clock/task-clock");
	}
	if (caps->n_record > 0) {
		callgraph_probe(pid, caps);
		caps->pipe_mode = pipe_probe(pid, caps);
	}
	caps->probed = 1;
	agent_log("probe of pid %d: %d record events, call graph %s, %s mode, %.1f s", pid,
		  caps->n_record, caps->callgraph[0] ? caps->callgraph : "none",
		  caps->pipe_mode ? "continuous" : "rounds", mono_now() - t0);
	return caps->n_record > 0 ? 0 : -1;
}

/* The record set when start names none: every probed record event, but
 * only cpu-clock in the fallback (task-clock would sample the same ticks
 * twice). */
void perf_default_events(const struct agent_caps *caps, char ev[MAX_EVENTS][EVENT_NAME], int *n)
{
	*n = 0;
	for (int i = 0; i < caps->n_record; i++) {
		if (caps->fallback && *n == 1)
			break;
		snprintf(ev[(*n)++], EVENT_NAME, "%s", caps->record[i]);
	}
}

/* ------------------------------------------------------------------ */
/* what perf can do here, before any capture                           */

/* The first 64 bytes of struct perf_event_attr (PERF_ATTR_SIZE_VER0),
 * which every kernel takes: musl's static toolchain has no linux/
 * headers, and the ABI of these fields never changes. */
struct attr_v0 {
	uint32_t type, size;
	uint64_t config, sample_freq, sample_type, read_format, flags;
	uint32_t wakeup_events, bp_type;
	uint64_t bp_addr;
};
enum { ATTR_DISABLED = 1 << 0, ATTR_EXCLUDE_KERNEL = 1 << 5, ATTR_EXCLUDE_HV = 1 << 6,
       ATTR_FREQ = 1 << 10 };
enum { TYPE_HARDWARE = 0, TYPE_SOFTWARE = 1, HW_CPU_CYCLES = 0, SW_CPU_CLOCK = 0 };

/* Open one event on ourselves (user space only, so paranoid 2 allows it
 * to anyone); 0 or the errno. */
static int try_open(uint32_t type, uint64_t config, int sample)
{
	struct attr_v0 a;
	memset(&a, 0, sizeof a);
	a.size = sizeof a;
	a.type = type;
	a.config = config;
	a.flags = ATTR_DISABLED | ATTR_EXCLUDE_KERNEL | ATTR_EXCLUDE_HV;
	if (sample) {
		a.flags |= ATTR_FREQ;
		a.sample_freq = 99;
	}
	long fd = syscall(SYS_perf_event_open, &a, 0, -1, -1, 0);
	if (fd < 0)
		return errno ? errno : EIO;
	close((int)fd);
	return 0;
}

/* CAP_PERFMON (38) or CAP_SYS_ADMIN (21) in CapEff, or euid 0. */
static int privileged(void)
{
	char buf[4096];
	if (geteuid() == 0)
		return 1;
	if (coll_read_text("/proc/self/status", buf, sizeof buf) <= 0)
		return -1;
	const char *p = strstr(buf, "CapEff:");
	if (!p)
		return -1;
	unsigned long long eff = strtoull(p + 7, NULL, 16);
	return (eff >> 38 & 1) || (eff >> 21 & 1);
}

/* perf version --build-options: "libunwind: [ on  ]" or
 * "libdw-dwarf-unwind: [ on  ]" means --call-graph dwarf can unwind. */
static int perf_has_dwarf_unwind(void)
{
	char *argv[] = {A.perf, "version", "--build-options", NULL}, *out = NULL;
	int rc = run_perf(argv, 5000, 16384, &out, NULL, 0), yes = -1;
	if (rc == 0 && out) {
		yes = 0;
		for (const char *p = out; (p = strstr(p, "unwind:")) != NULL; p++) {
			const char *b = strchr(p, '[');
			if (b && strncmp(b + 1, " on", 3) == 0 && (size_t)(b - p) < 16)
				yes = 1;
		}
	}
	free(out);
	return yes;
}

/* Does perf record the CPU's last branch records as call chains here?
 * Nothing in perf's build says it (the PMU must have them and the kernel
 * drive them), so perf is asked, the way a person would: record cycles
 * with --call-graph lbr over `true`.  Without branch stack sampling perf
 * refuses ("PMU Hardware or event type doesn't support branch stack
 * sampling"); 1 when it records, 0 when not, -1 when it could not be
 * tried. */
static int perf_takes_lbr(void)
{
	char tmp[64];
	if (make_tmp(tmp, sizeof tmp) < 0)
		return -1;
	char *argv[] = {A.perf, "record", "--call-graph", "lbr", "-e", "cycles", "-o", tmp, "--", "true", NULL};
	int rc = run_perf(argv, 10000, 16384, NULL, NULL, 0);
	unlink(tmp);
	return rc == 0 ? 1 : rc == -1 ? -1 : 0;
}

/* perf record of cpu-clock over `true` exits 0: perf itself samples. */
static int perf_samples(void)
{
	char tmp[64];
	if (make_tmp(tmp, sizeof tmp) < 0)
		return 0;
	char *argv[] = {A.perf, "record", "-e", "cpu-clock", "-o", tmp, "--", "true", NULL};
	int rc = run_perf(argv, 10000, 16384, NULL, NULL, 0);
	unlink(tmp);
	return rc == 0;
}

void perf_caps_detect(struct perf_caps *pc)
{
	char v[160];
	pc->perf_ok = perf_version(A.perf, v, sizeof v) == 0;
	int hw = try_open(TYPE_HARDWARE, HW_CPU_CYCLES, 0);
	pc->open_errno = try_open(TYPE_SOFTWARE, SW_CPU_CLOCK, 1);
	/* ENOSYS is the agent's own syscall not being there (qemu-user runs
	 * the agent while perf, a native binary, opens events), not the
	 * kernel's answer: then perf is asked instead */
	if (pc->open_errno == ENOSYS && pc->perf_ok && perf_samples())
		pc->open_errno = 0;
	pc->sampling = pc->open_errno == 0;
	/* ENOENT/EOPNOTSUPP/ENODEV: no such counter; EACCES/EPERM/ENOSYS say nothing */
	pc->pmu = hw == 0 ? 1 : (hw == EACCES || hw == EPERM || hw == ENOSYS) ? -1 : 0;
	pc->privileged = privileged();
	pc->dwarf = pc->perf_ok ? perf_has_dwarf_unwind() : 0;
	/* asked of perf even when no cycles counter opened here (pmu 0): perf
	 * is the one that must take it, and a run over `true` is cheap */
	pc->lbr = pc->perf_ok && pc->sampling ? perf_takes_lbr() : 0;
	agent_log("perf here: %s, pmu %s, sampling %s, dwarf unwinding %s, lbr %s", pc->perf_ok ? "runs" : "missing",
		  pc->pmu > 0 ? "yes" : pc->pmu == 0 ? "no" : "unknown", pc->sampling ? "yes" : strerror(pc->open_errno),
		  pc->dwarf > 0 ? "yes" : pc->dwarf == 0 ? "no" : "unknown",
		  pc->lbr > 0 ? "yes" : pc->lbr == 0 ? "no" : "unknown");
}
