/* capture.c - the collector: perf runs, cut into chunks, handed to a sink.
 *
 * Continuous mode (the probe's pipe test passed) runs one
 * `perf record -o - | perf script -i -` pipeline and cuts a chunk at a
 * sample boundary when the interval has passed or 16 MB of text built up;
 * `perf stat -- sleep INTERVAL` runs back to back beside it and each
 * completed round rides the next chunk.  Rounds mode records INTERVAL
 * seconds to a temp file with a perf stat beside it, then runs perf script
 * on it.  Either way only complete samples enter a chunk (a carry buffer
 * holds the partial tail), and stop/pause cut and send the chunk in
 * flight (in rounds mode the partial round) before the answer.  The sink is the link (zstd, flag 1) or, in
 * headless --output mode, a file (raw text, rounds only).  Counting mode
 * (start's counting) runs perf stat alone: chunks of PERF_STAT only.
 * perf.data mode (extension 4, when the link negotiated perf_data) runs
 * `perf record -o -` alone, no perf script: perfdata.h cuts its stream
 * into whole perf.data chunks (flag 5), and the perf stat rounds go
 * before each as a chunk of PERF_STAT text; a perf record that gives no
 * header (stuck 5 s, or gone) is said (capture_problem: status and stop
 * answers) and the capture goes on as text. */
#include "agent.h"
#include "chunk.h"
#include "perfdata.h"
#include "wire.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define CARRY_MAX (1u << 20)   /* flush a carry with no boundary at 1 MB */
#define STAT_CAP (64u * 1024)
#define PENDING_CAP (256u * 1024)
#define NO_BUFFERING_MAX_HZ 250  /* see build_argv */

struct capture {
	int pid;
	uint64_t start_time;
	int frequency, interval;
	char events[MAX_EVENTS * EVENT_NAME];      /* comma-joined record set */
	char stat_events[2 * MAX_EVENTS * EVENT_NAME + 16];
	struct agent_caps caps;
	int headless;
	int out_fd;                                /* headless output */
	struct chunk ch;
	char *carry;
	size_t carry_len;
	char *pending;                             /* completed perf stat rounds */
	size_t pending_len;
	uint64_t maps_hash;
	uint32_t maps_gen;
	int maps_sent;
	int sent_any;
	int counting;                              /* perf stat only (start's counting) */
	int perf_data;                             /* the chunk is perf.data (flag 5), not text */
	int perf_data_broken;                      /* perf's stream could not be cut: text from now on */
};

enum run_end { RUN_STOPPED, RUN_PAUSED, RUN_RESTART, RUN_ENDED, RUN_FAILED };

/* Where chunks and maps go: the link's outlet (collector_main's), or, for
 * headless rounds, none (they are written to a file and ask no link). */
static int no_link_emit(uint8_t flag, const char *data, size_t len)
{
	(void)flag, (void)data, (void)len;
	return -2;
}

static int no_link_features(uint32_t *gen)
{
	*gen = 0;
	return 0;
}

static const struct agent_outlet no_link = {no_link_emit, no_link_features};
static const struct agent_outlet *outlet = &no_link;

/* ------------------------------------------------------------------ */
/* sinks                                                                */

static void send_maps_if_changed(struct capture *cap)
{
	uint32_t gen;
	if (cap->headless || !(outlet->features(&gen) & FEAT_MAPS))
		return;
	uint64_t h = maps_hash(cap->pid);
	if (cap->maps_sent && h == cap->maps_hash && gen == cap->maps_gen)
		return;
	struct jw w;
	jw_init(&w, AGENT_MAPS_MAX);
	pthread_mutex_lock(&A.mu);
	uint32_t seq = A.maps_seq++;
	pthread_mutex_unlock(&A.mu);
	if (write_maps_frame(&w, cap->pid, cap->start_time, seq) == 0 && !w.overflow &&
	    outlet->emit(3, w.buf, w.len) == 0) {
		cap->maps_hash = h;
		cap->maps_gen = gen;
		cap->maps_sent = 1;
	}
	jw_free(&w);
}

static void emit_chunk(struct capture *cap)
{
	struct chunk *c = &cap->ch;
	if (cap->pending_len > 0) {
		chunk_add_stat(c, cap->pending, cap->pending_len);
		cap->pending_len = 0;
	}
	if (c->raw == 0)
		return;
	int bad = chunk_finish(c) < 0;
	pthread_mutex_lock(&A.mu);
	if (bad) {
		A.counters.chunks_refused++;
		pthread_mutex_unlock(&A.mu);
		agent_log("a chunk of %zu bytes could not be built (out of memory or zstd): dropped",
			  c->raw);
		chunk_begin(c);
		return;
	}
	pthread_mutex_unlock(&A.mu);
	int rc;
	if (cap->headless) {
		size_t off = 0;
		rc = 0;
		while (off < c->out_len) {
			ssize_t k = write(cap->out_fd, c->out + off, c->out_len - off);
			if (k < 0 && errno == EINTR)
				continue;
			if (k <= 0) {
				rc = -1;
				break;
			}
			off += (size_t)k;
		}
	} else {
		rc = outlet->emit(cap->perf_data ? AGENT_FRAME_PERF_DATA : c->compress ? 1 : 0, c->out, c->out_len);
	}
	pthread_mutex_lock(&A.mu);
	if (rc == 0) {
		A.counters.chunks_sent++;
		A.counters.samples_sent += c->samples;
		A.counters.raw_bytes += c->raw;
		A.counters.wire_bytes += c->out_len + 5;
		cap->sent_any = 1;
	} else {
		A.counters.chunks_lost++;
	}
	pthread_mutex_unlock(&A.mu);
	if (rc != 0 && !cap->headless)
		agent_log("a chunk of %llu samples was lost (no authenticated link, or the send failed)",
			  (unsigned long long)c->samples);
	chunk_begin(c);
	send_maps_if_changed(cap);
}

/* Complete samples from the carry into the chunk; all of it when 1 MB
 * built up with no boundary.  When final (perf script ended, or its
 * drain deadline passed) a tail that is not a whole sample is dropped
 * and logged: perf script ends every sample with its boundary, so only
 * output cut by the deadline has one, and sending it would count a
 * sample in samples_sent that no reader of the chunk can parse. */
static void feed_carry(struct capture *cap, int final)
{
	size_t b = sample_boundary(cap->carry, cap->carry_len, cap->caps.callgraph[0] != '\0');
	if (b == 0 && cap->carry_len >= CARRY_MAX)
		b = cap->carry_len;
	if (b > 0) {
		chunk_add(&cap->ch, cap->carry, b, 1);
		memmove(cap->carry, cap->carry + b, cap->carry_len - b);
		cap->carry_len -= b;
	}
	if (final && cap->carry_len > 0) {
		agent_log("perf script was cut mid-sample at the stop: its last %zu bytes were not sent",
			  cap->carry_len);
		cap->carry_len = 0;
	}
}

static void carry_add(struct capture *cap, const char *buf, size_t n)
{
	while (n > 0) {
		size_t room = CARRY_MAX + 65536 - cap->carry_len, take = n < room ? n : room;
		memcpy(cap->carry + cap->carry_len, buf, take);
		cap->carry_len += take;
		buf += take;
		n -= take;
		feed_carry(cap, 0);
		if (cap->ch.raw >= A.chunk_raw_max)
			emit_chunk(cap);
	}
}

static void pending_add(struct capture *cap, const char *text, size_t len)
{
	if (cap->pending_len + len + 20 > PENDING_CAP)
		return;  /* a chunk that is not sent for long keeps the first rounds */
	if (cap->pending_len > 0) {
		static const char marker[] = "\n### PERF_STAT ###\n";
		memcpy(cap->pending + cap->pending_len, marker, sizeof marker - 1);
		cap->pending_len += sizeof marker - 1;
	}
	memcpy(cap->pending + cap->pending_len, text, len);
	cap->pending_len += len;
}

/* ------------------------------------------------------------------ */
/* control                                                              */

static enum run_end control(void)
{
	enum run_end r = RUN_ENDED;
	pthread_mutex_lock(&A.mu);
	if (A.stop_req || agent_quit)
		r = RUN_STOPPED;
	else if (A.pause_req)
		r = RUN_PAUSED;
	else if (A.restart_req)
		r = RUN_RESTART;
	pthread_mutex_unlock(&A.mu);
	return r;
}

static char *const *stat_argv(struct capture *cap, char **argv, char *pidbuf, char *dur)
{
	int k = 0;
	argv[k++] = A.perf; argv[k++] = "stat"; argv[k++] = "-e"; argv[k++] = cap->stat_events;
	argv[k++] = "-p"; argv[k++] = pidbuf; argv[k++] = "--"; argv[k++] = "sleep";
	argv[k++] = dur; argv[k] = NULL;
	return argv;
}

struct stat_run {
	struct child c;
	char *buf;
	size_t len;
	int running;
	int interrupted;      /* stopped early on purpose: its counts still count */
};

static void stat_start(struct capture *cap, struct stat_run *s)
{
	char *argv[12], pidbuf[16], dur[16];
	struct spawn_opts o = {.stdin_fd = -1, .stdout_fd = -1, .want_err = 1};
	snprintf(pidbuf, sizeof pidbuf, "%d", cap->pid);
	snprintf(dur, sizeof dur, "%d", cap->interval);
	s->len = 0;
	s->running = spawn_child((char **)stat_argv(cap, argv, pidbuf, dur), &o, &s->c) == 0;
}

/* Read what the stat child wrote; at its end keep a successful round. */
static void stat_read(struct capture *cap, struct stat_run *s)
{
	char buf[8192];
	ssize_t k = read(s->c.err_fd, buf, sizeof buf);
	if (k > 0) {
		size_t take = (size_t)k < STAT_CAP - s->len ? (size_t)k : STAT_CAP - s->len;
		memcpy(s->buf + s->len, buf, take);
		s->len += take;
		return;
	}
	if (k < 0 && errno == EINTR)
		return;
	int rc = child_wait(&s->c, 2000);
	if (rc < 0)
		rc = child_end(&s->c);
	close(s->c.err_fd);
	s->c.err_fd = -1;
	s->running = 0;
	if ((rc == 0 || s->interrupted) && s->len > 0)
		pending_add(cap, s->buf, s->len);
}

static void stat_kill(struct stat_run *s)
{
	if (s->running)
		child_end(&s->c);
	s->running = 0;
}

/* A stop or pause mid-round: SIGINT to perf stat's group ends its sleep
 * early, and perf stat prints what it counted so far, the partial round's
 * PERF_STAT section (read for at most 2 s; past that it is killed). */
static void stat_interrupt(struct capture *cap, struct stat_run *s)
{
	double until = mono_now() + 2;

	if (!s->running)
		return;
	s->interrupted = 1;
	killpg(s->c.pid, SIGINT);
	while (s->running && mono_now() < until) {
		struct pollfd p = {s->c.err_fd, POLLIN, 0};
		if (poll(&p, 1, 200) > 0)
			stat_read(cap, s);
	}
	stat_kill(s);
}

static void build_argv(struct capture *cap, char **argv, char *pidbuf, char *freq, const char *out)
{
	int k = 0;
	argv[k++] = A.perf; argv[k++] = "record"; argv[k++] = "-e"; argv[k++] = cap->events;
	argv[k++] = "-p"; argv[k++] = pidbuf; argv[k++] = "-F"; argv[k++] = freq;
	argv[k++] = "-o"; argv[k++] = (char *)out;
	/* Into the pipe, perf record writes only when a ring buffer passes
	 * its watermark (half of it): for one busy thread that took longer
	 * than 5 s at 99, 250 and 999 Hz, and chunks went out empty while the
	 * samples waited for the stop (0, 0, then all 470 of a 7 s capture
	 * at 99 Hz).  Up to 250 Hz every sample wakes it (--no-buffering:
	 * +0.04 s of CPU in 5 s here); above, 16-page buffers wake it about
	 * twice a second at 999 Hz for no more CPU than the default (at 999
	 * Hz --no-buffering cost 0.23 s more in 5 s). */
	if (strcmp(out, "-") == 0 && cap->frequency <= NO_BUFFERING_MAX_HZ) {
		argv[k++] = "--no-buffering";
	} else if (strcmp(out, "-") == 0) {
		argv[k++] = "-m";
		argv[k++] = "16";
	}
	if (cap->caps.callgraph[0]) {
		argv[k++] = "--call-graph";
		argv[k++] = cap->caps.callgraph;
	}
	argv[k] = NULL;
}

static void script_argv(struct capture *cap, char **argv, const char *in)
{
	int k = 0;
	argv[k++] = A.perf; argv[k++] = "script";
	if (cap->caps.fields_ok) {
		argv[k++] = "-F";
		argv[k++] = (char *)SCRIPT_FIELDS;
	}
	argv[k++] = "-i"; argv[k++] = (char *)in; argv[k] = NULL;
}

/* Read the script stage until EOF or the deadline (after perf record was
 * told to stop), feeding the carry.  0 when the deadline came first:
 * what perf script had not printed yet is lost, and the tails_cut
 * counter says so to the server (a gap in the session), never silently. */
static int drain_script(struct capture *cap, struct child *scr, double deadline)
{
	char buf[65536];
	int ended = scr->out_fd < 0;
	while (!ended && mono_now() < deadline) {
		struct pollfd p = {scr->out_fd, POLLIN, 0};
		if (poll(&p, 1, 100) <= 0)
			continue;
		ssize_t k = read(scr->out_fd, buf, sizeof buf);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			ended = 1;
		else
			carry_add(cap, buf, (size_t)k);
	}
	feed_carry(cap, 1);
	if (!ended) {
		pthread_mutex_lock(&A.mu);
		A.counters.tails_cut++;
		pthread_mutex_unlock(&A.mu);
		agent_log("perf script had not ended %.1f s after the stop: the samples it had not printed are lost",
			  PERF_GRACE_MS / 1000.0);
	}
	return ended;
}

/* ------------------------------------------------------------------ */
/* continuous                                                           */

/* perf record -o - piped into perf script (nice 5): 0, or -1 with
 * neither running. */
static int pipeline_start(struct capture *cap, struct child *rec, struct child *scr)
{
	char *argv[16], *sargv[8], pidbuf[16], freq[16];
	struct spawn_opts ro = {.stdin_fd = -1, .stdout_fd = -1, .want_out = 1};

	snprintf(pidbuf, sizeof pidbuf, "%d", cap->pid);
	snprintf(freq, sizeof freq, "%d", cap->frequency);
	build_argv(cap, argv, pidbuf, freq, "-");
	script_argv(cap, sargv, "-");
	if (spawn_child(argv, &ro, rec) < 0)
		return -1;
	struct spawn_opts so = {.stdin_fd = rec->out_fd, .stdout_fd = -1, .want_out = 1, .nice = 5};
	if (spawn_child(sargv, &so, scr) < 0) {
		child_end(rec);
		return -1;
	}
	close(rec->out_fd);
	rec->out_fd = -1;
	return 0;
}

/* The interval passed: cut the chunk; a new duration applies from the
 * next one. */
static void chunk_at_interval(struct capture *cap, double *chunk_t0)
{
	if (mono_now() - *chunk_t0 < cap->interval)
		return;
	emit_chunk(cap);
	*chunk_t0 = mono_now();
	pthread_mutex_lock(&A.mu);
	cap->interval = A.duration;
	pthread_mutex_unlock(&A.mu);
}

static enum run_end run_pipeline(struct capture *cap)
{
	char buf[65536];
	struct child rec, scr;
	struct stat_run st = {.buf = malloc(STAT_CAP)};
	enum run_end why = RUN_ENDED;
	double chunk_t0;

	if (!st.buf || pipeline_start(cap, &rec, &scr) < 0) {
		free(st.buf);
		return RUN_FAILED;
	}
	if (cap->stat_events[0])
		stat_start(cap, &st);
	chunk_t0 = mono_now();
	for (;;) {
		struct pollfd p[2] = {{scr.out_fd, POLLIN, 0}, {st.running ? st.c.err_fd : -1, POLLIN, 0}};
		if (poll(p, 2, 200) < 0 && errno != EINTR)
			break;
		if (p[0].revents) {
			ssize_t k = read(scr.out_fd, buf, sizeof buf);
			if (k == 0 || (k < 0 && errno != EINTR)) {
				why = RUN_ENDED;
				break;
			}
			if (k > 0)
				carry_add(cap, buf, (size_t)k);
		}
		if (st.running && p[1].revents) {
			stat_read(cap, &st);
			if (!st.running && control() == RUN_ENDED && target_alive(cap->pid, cap->start_time))
				stat_start(cap, &st);
		}
		chunk_at_interval(cap, &chunk_t0);
		if ((why = control()) != RUN_ENDED) {
			/* perf record flushes on SIGTERM; perf script then sees EOF. */
			killpg(rec.pid, SIGTERM);
			break;
		}
	}
	drain_script(cap, &scr, mono_now() + PERF_GRACE_MS / 1000.0);
	stat_kill(&st);
	child_end(&rec);
	child_end(&scr);
	emit_chunk(cap);
	free(st.buf);
	return why;
}

/* ------------------------------------------------------------------ */
/* what went wrong, said                                                */

void capture_problem(const char *fmt, ...)
{
	char msg[PROBLEM_LEN];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	agent_log("%s", msg);
	pthread_mutex_lock(&A.mu);
	if (A.n_problems < MAX_PROBLEMS)
		snprintf(A.problems[A.n_problems++], PROBLEM_LEN, "%s", msg);
	pthread_mutex_unlock(&A.mu);
}

/* The start of a child's stderr, kept for a message (the rest is read
 * and dropped, so the child never blocks on a full pipe). */
#define ERR_KEEP 200
struct err_keep {
	char buf[ERR_KEEP + 1];
	size_t len;
};

/* Read what is there; 0 at EOF (the fd is closed and set to -1). */
static int err_read(int *fd, struct err_keep *e)
{
	char buf[4096];
	ssize_t k = read(*fd, buf, sizeof buf);
	if (k < 0 && errno == EINTR)
		return 1;
	if (k <= 0) {
		close(*fd);
		*fd = -1;
		return 0;
	}
	/* one line of printable ASCII: it goes into a JSON message */
	for (ssize_t i = 0; i < k && e->len < ERR_KEEP; i++) {
		char c = buf[i] >= 0x20 && buf[i] < 0x7f ? buf[i] : ' ';
		if (c == ' ' && (e->len == 0 || e->buf[e->len - 1] == ' '))
			continue;
		e->buf[e->len++] = c;
	}
	e->buf[e->len] = '\0';
	return 1;
}

/* What is left of it, for at most ms (perf prints its error as it exits). */
static void err_drain(int *fd, struct err_keep *e, int ms)
{
	double until = mono_now() + ms / 1000.0;
	while (*fd >= 0 && mono_now() < until) {
		struct pollfd p = {*fd, POLLIN, 0};
		if (poll(&p, 1, 100) > 0)
			err_read(fd, e);
	}
	while (e->len > 0 && e->buf[e->len - 1] == ' ')
		e->buf[--e->len] = '\0';
}

/* ------------------------------------------------------------------ */
/* perf.data chunks (extension 4)                                       */

/* The link still speaks perf_data (a new link may be a seed server). */
static int link_takes_perf_data(void)
{
	uint32_t gen;
	return (outlet->features(&gen) & FEAT_PERF_DATA) != 0;
}

/* Cut the splitter's chunk: the perf stat rounds done so far go first, as
 * a chunk of PERF_STAT text (perf.data has no place for them), then the
 * perf.data.  A body without a sample is kept for the next cut. */
static void emit_perf_data(struct capture *cap, struct pdsplit *sp)
{
	const uint8_t *part[3];
	size_t len[3];

	if (cap->pending_len > 0)
		emit_chunk(cap);
	if (sp->samples == 0) {
		/* bounded all the same: records of a target that is never
		 * sampled (their mmap/comm state is kept for the next chunk) */
		if (sp->body_len >= A.chunk_raw_max) {
			agent_log("perf.data chunks: %zu bytes of records without a sample dropped", sp->body_len);
			pdsplit_next(sp);
		}
		return;
	}
	pdsplit_parts(sp, part, len);
	for (int i = 0; i < 3; i++)
		chunk_add(&cap->ch, (const char *)part[i], len[i], 0);
	cap->ch.samples = sp->samples;
	cap->perf_data = 1;
	emit_chunk(cap);
	cap->perf_data = 0;
	pdsplit_next(sp);
}

/* Drain perf record's stdout after it was told to stop (until EOF or the
 * deadline). */
static void drain_record(struct child *rec, struct pdsplit *sp, double deadline)
{
	uint8_t buf[65536];
	while (rec->out_fd >= 0 && mono_now() < deadline) {
		struct pollfd p = {rec->out_fd, POLLIN, 0};
		if (poll(&p, 1, 100) <= 0)
			continue;
		ssize_t k = read(rec->out_fd, buf, sizeof buf);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0 || pdsplit_feed(sp, buf, (size_t)k) < 0)
			break;
	}
}

/* perf record -o - writes its pipe header as it starts (well under a
 * second here, loaded): past this, it is stuck, and waiting longer would
 * only lose more of the capture. */
#define HEADER_WAIT_S 5.0

/* perf record gave no perf.data header: say so, with the start of its
 * stderr, the seconds without samples and the fix (a capture without
 * one would otherwise send nothing and tell nobody). */
static void no_header(const char *what, const struct err_keep *e, double secs, int fallback)
{
	char err[ERR_KEEP + 32];
	if (e->len)
		snprintf(err, sizeof err, "its stderr: '%s'", e->buf);
	else
		snprintf(err, sizeof err, "nothing on its stderr");
	capture_problem("perf.data chunks: perf record -o - %s (%s): %.1f s of the capture have no samples%s. "
			"Fix: check perf on the device (`perf record -o - -p PID | head -c 8` prints PERFILE2 at "
			"once), or keep text chunks (the agent's --text-chunks, the server's --agent-text-chunks)",
			what, err, secs, fallback ? "; the capture goes on with text chunks (perf script on the "
			"device)" : "");
}

/* One run of perf record -o - (run_pipeline_data): the child, its
 * output's splitter and stderr, perf stat beside it, and the clocks. */
struct data_run {
	struct child rec;
	struct pdsplit sp;
	struct err_keep perr;
	struct stat_run st;
	double t_spawn, chunk_t0;
	int stuck;             /* no header within HEADER_WAIT_S: ended */
};

/* Spawn perf record -o - (and perf stat beside it): 0, or -1 with
 * nothing left to release. */
static int data_run_start(struct capture *cap, struct data_run *r)
{
	char *argv[20], pidbuf[16], freq[16];
	struct spawn_opts ro = {.stdin_fd = -1, .stdout_fd = -1, .want_out = 1, .want_err = 1};
	int k = 0;

	snprintf(pidbuf, sizeof pidbuf, "%d", cap->pid);
	snprintf(freq, sizeof freq, "%d", cap->frequency);
	build_argv(cap, argv, pidbuf, freq, "-");
	while (argv[k])
		k++;
	k += perfdata_record_opts(A.perf_version, argv + k);
	argv[k] = NULL;
	r->st.buf = malloc(STAT_CAP);
	if (!r->st.buf || pdsplit_init(&r->sp) < 0 || spawn_child(argv, &ro, &r->rec) < 0) {
		free(r->st.buf);
		pdsplit_release(&r->sp);
		return -1;
	}
	r->t_spawn = mono_now();
	if (cap->stat_events[0])
		stat_start(cap, &r->st);
	r->chunk_t0 = mono_now();
	return 0;
}

/* perf record's output is readable: split it, cutting a chunk at 16 MB.
 * 0 to go on, or -1 with *why when the run ends (its output ended, or is
 * not a stream the chunks can carry). */
static int data_read_record(struct capture *cap, struct data_run *r, enum run_end *why)
{
	uint8_t buf[65536];
	ssize_t n = read(r->rec.out_fd, buf, sizeof buf);

	if (n == 0 || (n < 0 && errno != EINTR))
		return -1;
	if (n > 0 && pdsplit_feed(&r->sp, buf, (size_t)n) < 0) {
		agent_log("perf record's output is not a pipe-mode perf.data stream the chunks can "
			  "carry (tracing or AUX data?): text chunks from now on");
		cap->perf_data_broken = 1;
		*why = RUN_FAILED;
		killpg(r->rec.pid, SIGTERM);
		return -1;
	}
	if (r->sp.state_full == 1) {
		agent_log("perf.data chunks: over %u MB of mmap/comm/fork records; later ones "
			  "ride only their own chunk", PDS_STATE_MAX >> 20);
		r->sp.state_full = 2;   /* logged */
	}
	if (r->sp.body_len >= A.chunk_raw_max)
		emit_perf_data(cap, &r->sp);
	return 0;
}

/* The clock's checks each pass: the interval's chunk (unless the link was
 * replaced by one without the extension: restart), and the header's
 * deadline.  0 to go on, or -1 with *why. */
static int data_tick(struct capture *cap, struct data_run *r, enum run_end *why)
{
	if (mono_now() - r->chunk_t0 >= cap->interval) {
		if (!link_takes_perf_data()) {
			killpg(r->rec.pid, SIGTERM);
			*why = RUN_RESTART;
			return -1;
		}
		emit_perf_data(cap, &r->sp);
		r->chunk_t0 = mono_now();
		pthread_mutex_lock(&A.mu);
		cap->interval = A.duration;
		pthread_mutex_unlock(&A.mu);
	}
	if (!r->sp.have_header && mono_now() - r->t_spawn >= HEADER_WAIT_S) {
		r->stuck = 1;
		*why = RUN_FAILED;
		killpg(r->rec.pid, SIGTERM);
		return -1;
	}
	return 0;
}

/* The run ended without a perf.data header: stuck, or gone (an option this
 * perf refuses?), and the next run is the text pipeline, not this one
 * again; a stop or pause before the header only says so. */
static void data_no_header(struct capture *cap, const struct data_run *r, enum run_end why, int status,
			   double ran)
{
	char what[96];

	if (r->stuck) {
		snprintf(what, sizeof what, "wrote no perf.data header in %.1f s (stuck?) and was ended", ran);
		no_header(what, &r->perr, ran, 1);
		cap->perf_data_broken = 1;
	} else if (why == RUN_ENDED && target_alive(cap->pid, cap->start_time)) {
		snprintf(what, sizeof what, "exited (status %d) %s", status,
			 r->sp.pend_len ? "before its perf.data header was whole" : "without writing anything");
		no_header(what, &r->perr, ran, 1);
		cap->perf_data_broken = 1;
	} else if ((why == RUN_STOPPED || why == RUN_PAUSED) && ran >= 1.0) {
		snprintf(what, sizeof what, "had written no perf.data header when the capture was %s, "
			 "%.1f s after perf started", why == RUN_STOPPED ? "stopped" : "paused", ran);
		no_header(what, &r->perr, ran, 0);
	}
}

/* `perf record -o -` alone: no perf script on the device (the server
 * reads the samples with its own perf.data reader).  The stream is cut at
 * record boundaries when the interval has passed or 16 MB built up.  A
 * perf that gives no header (stuck HEADER_WAIT_S, or gone) is said
 * (data_no_header) and the capture goes on as text. */
static enum run_end run_pipeline_data(struct capture *cap)
{
	struct data_run r = {.perr = {.len = 0}};
	enum run_end why = RUN_ENDED;
	double ran;
	int status;

	if (data_run_start(cap, &r) < 0)
		return RUN_FAILED;
	for (;;) {
		struct pollfd p[3] = {{r.rec.out_fd, POLLIN, 0}, {r.st.running ? r.st.c.err_fd : -1, POLLIN, 0},
				      {r.rec.err_fd, POLLIN, 0}};
		if (poll(p, 3, 200) < 0 && errno != EINTR)
			break;
		if (p[2].revents)
			err_read(&r.rec.err_fd, &r.perr);
		if (p[0].revents && data_read_record(cap, &r, &why) < 0)
			break;
		if (r.st.running && p[1].revents) {
			stat_read(cap, &r.st);
			if (!r.st.running && control() == RUN_ENDED && target_alive(cap->pid, cap->start_time))
				stat_start(cap, &r.st);
		}
		if (data_tick(cap, &r, &why) < 0)
			break;
		if ((why = control()) != RUN_ENDED) {
			/* a stop or pause: perf record flushes on SIGTERM, and
			 * perf stat gives its partial round on SIGINT */
			stat_interrupt(cap, &r.st);
			killpg(r.rec.pid, SIGTERM);
			break;
		}
	}
	if (!cap->perf_data_broken && !r.stuck)
		drain_record(&r.rec, &r.sp, mono_now() + PERF_GRACE_MS / 1000.0);
	ran = mono_now() - r.t_spawn;
	stat_kill(&r.st);
	if (!r.sp.have_header)
		err_drain(&r.rec.err_fd, &r.perr, 1000);
	status = child_end(&r.rec);
	if (!cap->perf_data_broken && link_takes_perf_data())
		emit_perf_data(cap, &r.sp);
	if (!r.sp.have_header && !r.sp.bad)
		data_no_header(cap, &r, why, status, ran);
	emit_chunk(cap);   /* perf stat's rounds not sent yet */
	free(r.st.buf);
	pdsplit_release(&r.sp);
	return why;
}

/* ------------------------------------------------------------------ */
/* rounds                                                               */

/* Wait for a round's perf record (and perf stat beside it) to end, or
 * for a stop or pause, within the interval and 10 s.  *recorded says
 * whether `tmp` holds a recording to read (whole, or cut short by a stop
 * or pause: perf record ends its file on SIGTERM, and the partial round
 * is sent as the last chunk, where the seed discarded it and lost up to
 * an interval).  The capture's next step. */
static enum run_end round_wait(struct capture *cap, struct child *rec, struct stat_run *st, const char *tmp,
			       int *recorded)
{
	double deadline = mono_now() + cap->interval + 10;
	enum run_end why = RUN_ENDED;
	int rrc = -1;

	*recorded = 0;
	for (;;) {
		if (st->running) {
			struct pollfd p = {st->c.err_fd, POLLIN, 0};
			if (poll(&p, 1, 200) > 0)
				stat_read(cap, st);
		} else {
			sleep_ms(200);
		}
		if (rrc < 0) {
			rrc = child_wait(rec, 0);
			if (rrc >= 0 && !st->running)
				break;
		} else if (!st->running) {
			break;
		}
		why = control();
		if (why != RUN_ENDED && rrc < 0) {
			/* with the counts perf stat gives on SIGINT */
			struct stat sb;
			stat_interrupt(cap, st);
			child_end(rec);
			rrc = stat(tmp, &sb) == 0 && sb.st_size > 0 ? 0 : -1;
			break;
		}
		if (why != RUN_ENDED || mono_now() > deadline) {
			stat_kill(st);
			if (rrc < 0)
				child_end(rec);
			return why != RUN_ENDED ? why : RUN_FAILED;
		}
	}
	*recorded = rrc == 0;
	return rrc == 0 ? why : RUN_FAILED;
}

/* perf script on a round's recording, nice 5, into chunks (the last one
 * cut at once), within 60 s and the interval: 0, or -1 when it cannot run. */
static int round_script(struct capture *cap, const char *tmp)
{
	char *sargv[8], buf[65536];
	struct spawn_opts so = {.stdin_fd = -1, .stdout_fd = -1, .want_out = 1, .nice = 5};
	struct child scr;
	double sdeadline;

	script_argv(cap, sargv, tmp);
	if (spawn_child(sargv, &so, &scr) < 0)
		return -1;
	sdeadline = mono_now() + 60 + cap->interval;
	while (scr.out_fd >= 0 && mono_now() < sdeadline) {
		struct pollfd p = {scr.out_fd, POLLIN, 0};
		if (poll(&p, 1, 200) <= 0)
			continue;
		ssize_t n = read(scr.out_fd, buf, sizeof buf);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		carry_add(cap, buf, (size_t)n);
	}
	feed_carry(cap, 1);
	child_end(&scr);
	return 0;
}

/* Rounds (where perf cannot pipe): perf record -o TMP -- sleep INTERVAL,
 * then perf script on TMP, one chunk a round. */
static enum run_end run_round(struct capture *cap)
{
	char *argv[20], pidbuf[16], freq[16], dur[16], tmp[64];
	struct spawn_opts ro = {.stdin_fd = -1, .stdout_fd = -1};
	struct stat_run st = {.buf = malloc(STAT_CAP)};
	struct child rec;
	enum run_end why;
	int fd, k = 0, recorded;

	snprintf(pidbuf, sizeof pidbuf, "%d", cap->pid);
	snprintf(freq, sizeof freq, "%d", cap->frequency);
	snprintf(dur, sizeof dur, "%d", cap->interval);
	snprintf(tmp, sizeof tmp, "/tmp/perflens-data-XXXXXX");
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0 || !st.buf) {
		if (fd >= 0)
			close(fd);
		free(st.buf);
		return RUN_FAILED;
	}
	close(fd);
	build_argv(cap, argv, pidbuf, freq, tmp);
	while (argv[k])
		k++;
	argv[k++] = "--"; argv[k++] = "sleep"; argv[k++] = dur; argv[k] = NULL;
	if (spawn_child(argv, &ro, &rec) < 0) {
		unlink(tmp);
		free(st.buf);
		return RUN_FAILED;
	}
	if (cap->stat_events[0])
		stat_start(cap, &st);
	why = round_wait(cap, &rec, &st, tmp, &recorded);
	free(st.buf);
	if (!recorded || round_script(cap, tmp) < 0) {
		unlink(tmp);
		if (!recorded)
			cap->pending_len = 0;
		return recorded ? RUN_FAILED : why;
	}
	unlink(tmp);
	emit_chunk(cap);
	return why;
}

/* ------------------------------------------------------------------ */
/* counting                                                             */

/* perf stat alone, rounds of the interval back to back, each sent as a
 * chunk holding only its PERF_STAT section (no samples: the cheapest
 * capture, for user/sys time and counters).  A stop or pause mid-round
 * sends what perf stat counted so far. */
static enum run_end run_count(struct capture *cap)
{
	struct stat_run st = {.buf = malloc(STAT_CAP)};
	enum run_end why = RUN_ENDED;
	if (!st.buf)
		return RUN_FAILED;
	stat_start(cap, &st);
	if (!st.running) {
		free(st.buf);
		return RUN_FAILED;
	}
	while (st.running) {
		struct pollfd p = {st.c.err_fd, POLLIN, 0};
		if (poll(&p, 1, 200) > 0)
			stat_read(cap, &st);
		why = control();
		if (why != RUN_ENDED) {
			stat_interrupt(cap, &st);
			break;
		}
	}
	free(st.buf);
	emit_chunk(cap);
	return why;
}

/* ------------------------------------------------------------------ */
/* setup and the thread                                                 */

static void add_event(char *list, size_t cap, const char *ev)
{
	size_t n = strlen(ev), len = strlen(list);
	for (const char *p = list; (p = strstr(p, ev)) != NULL; p += n)
		if ((p == list || p[-1] == ',') && (p[n] == ',' || p[n] == '\0'))
			return;
	snprintf(list + len, cap - len, "%s%s", len ? "," : "", ev);
}

static int capture_init(struct capture *cap, int headless)
{
	memset(cap, 0, sizeof *cap);
	pthread_mutex_lock(&A.mu);
	cap->pid = A.pid;
	cap->start_time = A.pid_start;
	cap->frequency = A.frequency;
	cap->interval = A.duration;
	cap->caps = A.caps;
	cap->counting = A.counting && !headless;
	/* start's call_graph overrides the probed method ("none": flat) */
	if (A.cg_req[0])
		snprintf(cap->caps.callgraph, sizeof cap->caps.callgraph, "%s",
			 strcmp(A.cg_req, "none") == 0 ? "" : A.cg_req);
	for (int i = 0; i < A.n_events; i++)
		add_event(cap->events, sizeof cap->events, A.events[i]);
	pthread_mutex_unlock(&A.mu);
	for (int i = 0; i < cap->caps.n_record; i++)
		add_event(cap->stat_events, sizeof cap->stat_events, cap->caps.record[i]);
	for (int i = 0; i < cap->caps.n_stat_only; i++)
		add_event(cap->stat_events, sizeof cap->stat_events, cap->caps.stat_only[i]);
	add_event(cap->stat_events, sizeof cap->stat_events, "task-clock");
	cap->headless = headless;
	cap->carry = malloc(CARRY_MAX + 65536);
	cap->pending = malloc(PENDING_CAP);
	if (!cap->carry || !cap->pending)
		return -1;
	return chunk_init(&cap->ch, !headless);
}

static void capture_release(struct capture *cap)
{
	chunk_release(&cap->ch);
	free(cap->carry);
	free(cap->pending);
}

/* perf.data chunks: the link negotiated them, chunks are compressed
 * (the flag-5 payload is a zstd frame), and perf's stream could be cut. */
static int perf_data_ok(const struct capture *cap)
{
	return !cap->headless && cap->ch.compress && !cap->perf_data_broken && link_takes_perf_data();
}

/* The profiled process is gone: the capture ends by itself, and status
 * says why (the server learns it there; the seed told nobody). */
static void target_gone(int pid)
{
	agent_log("pid %d exited: capture ends", pid);
	pthread_mutex_lock(&A.mu);
	snprintf(A.capture_end, sizeof A.capture_end, "the target process (pid %d) exited", pid);
	pthread_mutex_unlock(&A.mu);
}

/* Wait out a pause, then take the capture's current settings: 1 when a
 * stop was asked (the collector ends), else 0. */
static int wait_unpaused(struct capture *cap)
{
	int stop;

	pthread_mutex_lock(&A.mu);
	while (A.state == ST_PAUSED && !A.stop_req) {
		A.pause_req = 0;
		struct timespec ts;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		ts.tv_sec += 1;
		pthread_cond_timedwait(&A.cv, &A.mu, &ts);
	}
	stop = A.stop_req;
	A.restart_req = 0;
	cap->frequency = A.frequency;
	cap->interval = A.duration;
	pthread_mutex_unlock(&A.mu);
	return stop;
}

/* One run of perf in the capture's mode; a run that ended within a second
 * is a failure (perf gave up at once: do not respawn it in a loop). */
static enum run_end run_once(struct capture *cap, int continuous)
{
	double t_run = mono_now();
	enum run_end r = cap->counting ? run_count(cap)
			 : continuous && perf_data_ok(cap) ? run_pipeline_data(cap)
			 : continuous ? run_pipeline(cap) : run_round(cap);

	return r == RUN_ENDED && mono_now() - t_run < 1.0 ? RUN_FAILED : r;
}

void *collector_main(void *arg)
{
	struct capture *cap = malloc(sizeof *cap);
	int continuous;

	outlet = arg;
	if (!cap || capture_init(cap, 0) < 0) {
		agent_log("collector: out of memory");
		goto out;
	}
	pthread_mutex_lock(&A.mu);
	continuous = A.continuous;
	pthread_mutex_unlock(&A.mu);
	send_maps_if_changed(cap);
	while (!wait_unpaused(cap)) {
		if (!target_alive(cap->pid, cap->start_time)) {
			target_gone(cap->pid);
			break;
		}
		int was_broken = cap->perf_data_broken;
		enum run_end r = run_once(cap, continuous);
		if (r == RUN_STOPPED)
			break;
		if (r != RUN_FAILED && r != RUN_ENDED)
			continue;
		if (!target_alive(cap->pid, cap->start_time)) {
			target_gone(cap->pid);
			break;
		}
		/* perf.data mode that just failed (said) goes on as text at once */
		if (r == RUN_FAILED && !(cap->perf_data_broken && !was_broken)) {
			agent_log("perf failed; retrying in 1 s");
			sleep_ms(1000);
		}
	}
out:
	pthread_mutex_lock(&A.mu);
	A.state = ST_IDLE;
	pthread_mutex_unlock(&A.mu);
	if (cap)
		capture_release(cap);
	free(cap);
	return NULL;
}

/* ------------------------------------------------------------------ */
/* headless                                                             */

int headless_run(const char *output, int rounds)
{
	struct capture *cap = malloc(sizeof *cap);
	int fd = strcmp(output, "-") == 0 ? 1 : open(output, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	int rc = 1;
	if (fd < 0) {
		agent_log("cannot write '%s': %s", output, strerror(errno));
		free(cap);
		return 1;
	}
	if (!cap || capture_init(cap, 1) < 0) {
		agent_log("out of memory");
		goto out;
	}
	cap->out_fd = fd;
	for (int r = 0; r < rounds; r++) {
		if (!target_alive(cap->pid, cap->start_time)) {
			agent_log("pid %d exited after %d rounds", cap->pid, r);
			break;
		}
		enum run_end e = run_round(cap);
		if (e == RUN_STOPPED)
			break;
		if (e == RUN_FAILED)
			agent_log("round %d: perf failed", r + 1);
	}
	rc = cap->sent_any ? 0 : 1;
	if (rc)
		agent_log("no data was collected");
	capture_release(cap);
out:
	free(cap);
	if (fd != 1)
		close(fd);
	return rc;
}
