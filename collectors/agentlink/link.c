/* link.c - the agent link's threads and devices (see link.h).
 *
 * Threads:
 *   - the listener (with --agent-listen) accepts agents that dial in; an
 *     accept() error (EMFILE, ECONNABORTED) is logged, waits 1 s and the
 *     listener keeps going;
 *   - one reader per agent connection: the handshake, then every frame
 *     (chunks and metrics to the device's spool, answers to the command
 *     waiting for them, maps to the spool), a ping every ping interval,
 *     and the end of the link (its session finalized);
 *   - the servicer takes control requests (channel.h) and runs each in a
 *     short thread of its own, since a start can wait for the agent's
 *     capability probe.
 *
 * Devices: each connection is its own struct device with its own spool,
 * so a replaced agent never shares a session with its successor (the old
 * reader is shut down and joined, bounded, before the new one starts).
 * The device table holds the current connection per device id; a device
 * is freed when its reader ended and nobody holds a reference.  Every
 * change of state is published to devices/ID.json (atomic rename), which
 * the read-only tools read.  Nothing here logs or stores a pairing code
 * or a proof.
 *
 * Waits: a thread that waits for a device (an answer, the end of the
 * handshake, a session finalized, the reader's end) sleeps on the
 * device's condition variable, broadcast under its lock wherever that
 * state changes; coll_link_stop waits on the link's for the readers.
 * Each wait keeps its bound (CLOCK_MONOTONIC deadlines).  Only the
 * servicer still looks every 15 ms: its requests are files that other
 * processes write.
 *
 * Sessions: one is opened at a device's first chunk or metrics frame; a
 * start that finds chunks in it opens a new one; a stop finalizes it
 * STOP_GRACE_MS after the agent's answer (a chunk flushed around the stop
 * still belongs to the capture), as does the end of the link.  Nothing
 * of a capture goes missing unsaid: an agent with counters (extension 3)
 * says how many chunks it sent, and the finalizing waits for them up to
 * STOP_WAIT_MS, then records those that never came as a gap; a seed
 * agent discards the chunk in flight at a stop (docs/agent-protocol.md,
 * "How data chunks are cut"), so its sessions record that tail as a gap
 * of its seconds (the analysis sizes it in samples).
 */
#include "link_int.h"
#include "channel.h"
#include "collectors/collect.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/fsatomic.h"
#include "base/version.h"

#define MAX_DEVICES 64
#define MAX_PENDING 8
#define HANDSHAKE_MS 10000
#define STOP_GRACE_MS 2000
#define STOP_WAIT_MS 10000     /* longest wait for chunks the agent's counters say it sent */
#define PREAUTH_FRAMES 64      /* frames skipped while waiting for the hello or auth */
#define CONNECT_MS 10000

/* perf_data (extension 4) is offered unless --agent-text-chunks said not
 * to: the agent then sends perf.data chunks (flag 5), never perf script. */
static const char *const our_features[] = {"maps", "counters", "perf_data"};

struct pending {
	char id[24];
	char cmd[24];
	json_t *answer;          /* new, once it came */
	bool used, done;
	bool async;              /* nobody waits: the slot is freed on the answer */
};

struct device {
	char id[128];
	char address[64];
	unsigned port;
	bool outbound;
	int fd;
	pthread_t reader;
	bool reader_started, reader_done;  /* reader_done: stored atomically, loaded so where unlocked */
	int refs;                /* under link.lock */
	char code[256];          /* outbound: the code the call gave; wiped after use */
	/* Under dev->lock: */
	pthread_mutex_t lock, send_lock;
	pthread_cond_t cond;     /* broadcast on every change a thread may wait for:
				  * an answer, the state, the session closed, the reader's end */
	char state[24];          /* handshake connected profiling paused rejected disconnected */
	char reason[320];        /* as long as a struct pl_error's text */
	bool authed, legacy, maps, counters, perf_data;
	json_t *hello, *capabilities, *capture, *status_counters;
	json_t *perf_caps;       /* our agent's status.perf_caps (known at pairing), or NULL */
	json_t *write_errors;    /* devices/ID.json writes that failed (coll_note_write_error) */
	struct spool spool;
	bool have_spool;
	long long stop_at_ms;    /* a stop was answered: finalize after the grace */
	long long auto_stop_ms;  /* start_capture's duration_seconds: stop then */
	json_int_t auto_stop_s;  /* that duration, while its stop is on the way (0: none) */
	json_int_t max_rate;     /* the agent's perf_event_max_sample_rate, 0 unknown */
	bool status_seen;        /* a status answer came (max_rate is known if it said) */
	unsigned long long chunks, text_bytes, wire_bytes, frames_dropped, metrics;
	char last_drop[320], connected_at[40], last_chunk[40];
	char last_session[128];  /* the session finalized last (stopped, auto-stopped, ended), or "" */
	struct pending pend[MAX_PENDING];
	unsigned next_cmd;
	char send_failure[320];  /* why a send failed (the link is shut down then), or "" */
	long long ping_sent_ms;  /* 0: none outstanding */
	char ping_id[24];
};

static struct {
	pthread_mutex_t lock;
	struct coll_link_cfg cfg;
	bool running, stopping;  /* stopping: set by coll_link_stop, read by every thread (atomic) */
	int listen_fd;
	unsigned port;
	pthread_t listener, servicer;
	bool have_listener, have_servicer;
	struct device *devices[MAX_DEVICES];   /* current and draining connections */
	size_t ndevices;
	unsigned active_requests;
	pthread_cond_t cond;     /* with lock: a reader ended, or stopping was set */
	bool cond_made;
} link_ = {.lock = PTHREAD_MUTEX_INITIALIZER, .listen_fd = -1};

static long long mono_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (long long)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/* Every condition variable here runs on CLOCK_MONOTONIC, the clock of
 * mono_ms(): a deadline is a mono_ms() value, whatever the wall clock does. */
static void cond_init_mono(pthread_cond_t *cond)
{
	pthread_condattr_t attr;

	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_cond_init(cond, &attr);
	pthread_condattr_destroy(&attr);
}

/* Wait on `cond` (holding `mu`) until it is signalled or `deadline_ms`
 * (mono_ms) passes; the caller checks its condition again either way. */
static void cond_wait_until(pthread_cond_t *cond, pthread_mutex_t *mu, long long deadline_ms)
{
	struct timespec ts = {.tv_sec = deadline_ms / 1000, .tv_nsec = (deadline_ms % 1000) * 1000000};

	pthread_cond_timedwait(cond, mu, &ts);
}

/* ----------------------------------------------------------- the config */

void coll_link_cfg_init(struct coll_link_cfg *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->send_timeout_ms = 30000;
	cfg->ping_interval_ms = 10000;
}

enum pl_err coll_link_parse_legacy(struct coll_link_cfg *cfg, const char *spec,
				   struct pl_error *err)
{
	char buf[1024], *save = NULL;

	snprintf(buf, sizeof(buf), "%s", spec);
	for (char *w = strtok_r(buf, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
		struct in_addr a;
		if (strcmp(w, "loopback") == 0) {
			cfg->legacy_loopback = true;
			continue;
		}
		if (inet_pton(AF_INET, w, &a) != 1 || cfg->nlegacy == COLL_LINK_MAX_LEGACY)
			return pl_fail(err, PL_ERR_USAGE, "e.g. --agent-allow-legacy loopback,192.168.1.20",
				       "--agent-allow-legacy takes 'loopback' or IPv4 addresses (at most 16); got '%s'", w);
		snprintf(cfg->legacy_addrs[cfg->nlegacy++], sizeof(cfg->legacy_addrs[0]), "%s", w);
	}
	return PL_OK;
}

enum pl_err coll_link_load_code(struct coll_link_cfg *cfg, const char *file, struct pl_error *err)
{
	char buf[300] = {0};
	size_t n;

	if (file) {
		FILE *f = fopen(file, "re");
		if (!f)
			return pl_fail(err, PL_ERR_INPUT, "pass a readable file holding the agent's pairing code",
				       "cannot read --agent-pairing-code-file '%s': %s", file, strerror(errno));
		n = fread(buf, 1, sizeof(buf) - 1, f);
		fclose(f);
		buf[n] = '\0';
	} else {
		const char *env = getenv("PERFLENS_AGENT_CODE");
		snprintf(buf, sizeof(buf), "%s", env ? env : "");
		unsetenv("PERFLENS_AGENT_CODE");
	}
	buf[strcspn(buf, "\r\n")] = '\0';
	n = strlen(buf);
	if (n >= sizeof(cfg->pairing_code))
		return pl_fail(err, PL_ERR_USAGE, "use a pairing code of at most 255 bytes",
			       "the agent pairing code is too long");
	memcpy(cfg->pairing_code, buf, n + 1);
	memset(buf, 0, sizeof(buf));
	return PL_OK;
}

/* ------------------------------------------------------ device state */

static void dev_free(struct device *d)
{
	json_decref(d->hello);
	json_decref(d->capabilities);
	json_decref(d->perf_caps);
	json_decref(d->capture);
	json_decref(d->status_counters);
	json_decref(d->write_errors);
	for (int i = 0; i < MAX_PENDING; i++)
		json_decref(d->pend[i].answer);
	pthread_mutex_destroy(&d->lock);
	pthread_mutex_destroy(&d->send_lock);
	pthread_cond_destroy(&d->cond);
	memset(d->code, 0, sizeof(d->code));
	free(d);
}

static void dev_unref(struct device *d)
{
	bool last;

	pthread_mutex_lock(&link_.lock);
	last = --d->refs == 0;
	if (last)
		for (size_t i = 0; i < link_.ndevices; i++)
			if (link_.devices[i] == d) {
				link_.devices[i] = link_.devices[--link_.ndevices];
				break;
			}
	pthread_mutex_unlock(&link_.lock);
	if (last)
		dev_free(d);  /* readers are detached: the last reference frees */
}

/* The current connection of device `id` (a new reference), or NULL. */
static struct device *dev_find(const char *id)
{
	struct device *found = NULL;

	pthread_mutex_lock(&link_.lock);
	for (size_t i = 0; i < link_.ndevices && !found; i++)
		if (strcmp(link_.devices[i]->id, id) == 0 && !__atomic_load_n(&link_.devices[i]->reader_done, __ATOMIC_ACQUIRE)) {
			found = link_.devices[i];
			found->refs++;
		}
	pthread_mutex_unlock(&link_.lock);
	return found;
}

/* What the link could not write for this device: its state file's
 * failures and its session's, by path under the artifact root (new). */
static json_t *write_errors_json(struct device *d)
{
	json_t *all = json_object(), *v;
	const char *what;
	char key[300];

	json_object_foreach(d->write_errors, what, v) {
		json_object_set(all, what, v);
	}
	if (d->have_spool)
		json_object_foreach(d->spool.write_errors, what, v) {
			snprintf(key, sizeof(key), "%s/%s/%s", COLL_SESSIONS_DIR, d->spool.id, what);
			json_object_set(all, key, v);
		}
	return all;
}

/* What perf can do on the device, before any capture (new): our agent
 * says it in its status at pairing (perf_caps); of a seed agent only its
 * hello's paranoid level is known until its probe (the first start or
 * reprobe) names the events and the call graph it picked, and its
 * protocol has neither a call_graph choice nor a counting mode. */
static json_t *perf_caps_json(struct device *d)
{
	json_t *probe = d->capabilities, *rec = json_object_get(probe, "record_events"), *v, *j;
	const char *cg = json_string_value(json_object_get(probe, "callgraph_method"));
	size_t i;

	if (d->perf_caps) {
		j = json_deep_copy(d->perf_caps);
		json_object_set_new(j, "source", json_string("the agent, at pairing"));
		return j;
	}
	j = json_pack("{s:O,s:b,s:s}", "perf_event_paranoid",
		      json_object_get(json_object_get(d->hello, "platform"), "perf_event_paranoid")
		      ? json_object_get(json_object_get(d->hello, "platform"), "perf_event_paranoid") : json_null(),
		      "counting", 0, "source",
		      probe ? "a seed agent's probe: it picks the call graph itself and has no counting mode"
			    : "a seed agent's hello: the rest is known after its probe (the first start_capture)");
	if (!json_is_array(rec)) {
		json_object_set_new(j, "pmu", json_null());
		json_object_set_new(j, "call_graphs", json_null());
		return j;
	}
	bool pmu = false;
	json_array_foreach(rec, i, v) {
		const char *e = json_string_value(v);
		pmu |= e && strcmp(e, "cpu-clock") && strcmp(e, "task-clock");
	}
	json_object_set_new(j, "pmu", json_boolean(pmu));
	json_object_set_new(j, "call_graphs", json_pack("[s]", cg && cg[0] ? cg : "none"));
	return j;
}

/* The device's state as list_devices shows it (under dev->lock). */
static json_t *dev_json(struct device *d)
{
	json_t *j = json_pack("{s:s,s:s,s:i,s:s,s:s,s:s,s:O,s:b,s:I,s:I,s:I,s:I,s:I}",
		"device", d->id, "address", d->address, "port", (int)d->port,
		"direction", d->outbound ? "connected_out" : "dialed_in", "state", d->state,
		"connected_at", d->connected_at, "hello", d->hello ? d->hello : json_null(),
		"legacy", d->legacy, "chunks", (json_int_t)d->chunks,
		"text_bytes", (json_int_t)d->text_bytes, "wire_bytes", (json_int_t)d->wire_bytes,
		"frames_dropped", (json_int_t)d->frames_dropped, "metrics_frames", (json_int_t)d->metrics);
	json_t *feats = json_array();
	json_t *samples = json_object_get(d->status_counters, "samples_sent");

	if (d->maps)
		json_array_append_new(feats, json_string("maps"));
	if (d->counters)
		json_array_append_new(feats, json_string("counters"));
	if (d->perf_data)
		json_array_append_new(feats, json_string("perf_data"));
	json_object_set_new(j, "features", feats);
	json_object_set_new(j, "reason", d->reason[0] ? json_string(d->reason) : json_null());
	json_object_set_new(j, "last_drop", d->last_drop[0] ? json_string(d->last_drop) : json_null());
	json_object_set_new(j, "last_chunk_time", d->last_chunk[0] ? json_string(d->last_chunk) : json_null());
	json_object_set_new(j, "session", d->have_spool ? json_string(d->spool.id) : json_null());
	/* An open session may hold metrics only (those that arrive between
	 * captures wait in the next capture's session): say how many chunks. */
	json_object_set_new(j, "session_chunks", d->have_spool ? json_integer(d->spool.chunks) : json_null());
	json_object_set_new(j, "last_session", d->last_session[0] ? json_string(d->last_session) : json_null());
	json_object_set_new(j, "samples", samples ? json_incref(samples) : json_null());
	json_object_set(j, "platform", d->hello && json_object_get(d->hello, "platform")
			? json_object_get(d->hello, "platform") : json_null());
	json_t *caps = d->capabilities ? json_deep_copy(d->capabilities) : json_object();
	json_object_set_new(caps, "perf", perf_caps_json(d));
	json_object_set_new(j, "capabilities", caps);
	json_object_set(j, "capture", d->capture ? d->capture : json_null());
	json_object_set(j, "agent_counters", d->status_counters ? d->status_counters : json_null());
	json_object_set_new(j, "server_pid", json_integer(getpid()));
	json_object_set_new(j, "max_sample_rate", d->max_rate > 0 ? json_integer(d->max_rate) : json_null());
	json_object_set_new(j, "write_errors", write_errors_json(d));
	/* A copy: the answer is dumped after the lock is let go, while the
	 * reader thread may change the hello, capabilities, capture and
	 * counters objects in place (TSan saw the dump read freed keys). */
	json_t *copy = json_deep_copy(j);
	json_decref(j);
	return copy;
}

/* devices/ID.json from the state now (under dev->lock). */
static void dev_publish_locked(struct device *d)
{
	char rel[200];
	json_t *j = dev_json(d);
	bool landed;
	int e;

	snprintf(rel, sizeof(rel), "%s/%s.json", COLL_DEVICES_DIR, d->id);
	json_object_set_new(j, "updated", json_integer((json_int_t)time(NULL)));
	/* On a full disk the state is rewritten in its own pages; what cannot
	 * land at all is counted, and shows once it can be written again. */
	if ((e = coll_write_state(link_.cfg.artifact_root, rel, j, &landed)) && !landed)
		coll_note_write_error(d->write_errors, d->id, rel, e);
	json_decref(j);
}

static void dev_set_state(struct device *d, const char *state, const char *reason)
{
	pthread_mutex_lock(&d->lock);
	snprintf(d->state, sizeof(d->state), "%s", state);
	snprintf(d->reason, sizeof(d->reason), "%s", reason ? reason : "");
	dev_publish_locked(d);
	pthread_cond_broadcast(&d->cond);
	pthread_mutex_unlock(&d->lock);
}

/* Open the device's session if none is open (under dev->lock). */
static void ensure_spool_locked(struct device *d)
{
	if (d->have_spool)
		return;
	spool_open(&d->spool, link_.cfg.artifact_root, d->id,
		   d->hello ? json_object_get(d->hello, "platform") : NULL,
		   d->hello ? json_object_get(d->hello, "labels") : NULL);
	d->have_spool = true;
}

static void record_capture_loss_locked(struct device *d);
static void record_cut_capture_locked(struct device *d, const char *reason, bool always);

/* Finalize the open session: what its capture lost is recorded first (a
 * capture that ended, or one the link's end cut). */
static void close_spool_locked(struct device *d)
{
	if (!d->have_spool)
		return;
	if (d->stop_at_ms)
		record_capture_loss_locked(d);
	else if (strcmp(d->state, "profiling") == 0 || strcmp(d->state, "paused") == 0)
		record_cut_capture_locked(d, "the link ended during the capture: what the agent had not sent "
					  "since its last chunk never came", false);
	if (d->status_counters && !d->spool.counters)
		d->spool.counters = json_incref(d->status_counters);
	if (spool_close(&d->spool))
		snprintf(d->last_session, sizeof(d->last_session), "%s", d->spool.id);
	d->have_spool = false;
	d->stop_at_ms = 0;
	pthread_cond_broadcast(&d->cond);  /* a stop waits for its session's end */
}

/* ------------------------------------------------------------ commands */

/* Send one command frame, bounded by the socket's SO_SNDTIMEO and
 * TCP_USER_TIMEOUT; a send that fails (the agent stopped reading for the
 * send bound, or the link broke) ends the link: the reason is kept for
 * the reader, which finalizes the session. */
static enum pl_err dev_send(struct device *d, const char *text, struct pl_error *err)
{
	enum pl_err rc;

	pthread_mutex_lock(&d->send_lock);
	rc = coll_wire_send(d->fd, AGENT_FRAME_CMD, text, strlen(text), err);
	pthread_mutex_unlock(&d->send_lock);
	if (rc) {
		pthread_mutex_lock(&d->lock);
		if (!d->send_failure[0])
			snprintf(d->send_failure, sizeof(d->send_failure), "%s", err->text);
		pthread_mutex_unlock(&d->lock);
		shutdown(d->fd, SHUT_RDWR);
	}
	return rc;
}

/* Send {id, cmd, args} (args borrowed, may be NULL); *slot gets the
 * pending slot's index. */
static enum pl_err send_command(struct device *d, const char *cmd, json_t *args, bool async, int *slot,
				struct pl_error *err)
{
	char id[24];
	json_t *msg;
	char *text;
	enum pl_err rc;

	*slot = -1;
	pthread_mutex_lock(&d->lock);
	for (int i = 0; i < MAX_PENDING && *slot < 0; i++)
		if (!d->pend[i].used)
			*slot = i;
	if (*slot < 0) {
		pthread_mutex_unlock(&d->lock);
		return pl_fail(err, PL_ERR_LIMIT, "wait for the commands in flight to be answered",
			       "too many commands in flight to this device");
	}
	snprintf(id, sizeof(id), "pl%06u", ++d->next_cmd);
	d->pend[*slot] = (struct pending){.used = true, .async = async};
	snprintf(d->pend[*slot].id, sizeof(d->pend[*slot].id), "%s", id);
	snprintf(d->pend[*slot].cmd, sizeof(d->pend[*slot].cmd), "%s", cmd);
	pthread_mutex_unlock(&d->lock);
	/* "O" takes a reference to the caller's args; "o" steals the new {}. */
	msg = args ? json_pack("{s:s,s:s,s:O}", "id", id, "cmd", cmd, "args", args)
		   : json_pack("{s:s,s:s,s:o}", "id", id, "cmd", cmd, "args", json_object());
	text = json_dumps(msg, JSON_COMPACT);
	json_decref(msg);
	rc = dev_send(d, text, err);
	free(text);
	if (rc) {
		pthread_mutex_lock(&d->lock);
		d->pend[*slot].used = false;
		pthread_mutex_unlock(&d->lock);
	}
	return rc;
}

/* Run `cmd` on the device and wait for its answer (*answer, new) up to
 * `timeout_ms`: PL_ERR_TIMEOUT when none came, PL_ERR_EXTERNAL when the
 * link ended. */
static enum pl_err device_command(struct device *d, const char *cmd, json_t *args, unsigned timeout_ms,
				  json_t **answer, struct pl_error *err)
{
	long long deadline = mono_ms() + timeout_ms;
	enum pl_err rc;
	int slot;

	*answer = NULL;
	if ((rc = send_command(d, cmd, args, false, &slot, err)))
		return rc;
	pthread_mutex_lock(&d->lock);
	while (!d->pend[slot].done && !d->reader_done && mono_ms() < deadline)
		cond_wait_until(&d->cond, &d->lock, deadline);
	if (d->pend[slot].done) {
		*answer = d->pend[slot].answer;
		d->pend[slot].answer = NULL;
	} else if (d->reader_done)
		rc = pl_fail(err, PL_ERR_EXTERNAL, "call list_devices to see the device's state",
			     "the agent disconnected: %.200s", d->reason[0] ? d->reason : "link closed");
	else
		rc = pl_fail(err, PL_ERR_TIMEOUT, "call list_devices to see the device's state",
			     "the agent did not answer '%s' within %u s", cmd, timeout_ms / 1000);
	d->pend[slot].used = false;
	d->pend[slot].done = false;
	pthread_mutex_unlock(&d->lock);
	return rc;
}

/* A start or reprobe is waiting for its answer: the agent runs its
 * capability probe and answers nothing else meanwhile (under dev->lock). */
static bool probe_in_flight_locked(struct device *d)
{
	for (int i = 0; i < MAX_PENDING; i++)
		if (d->pend[i].used && !d->pend[i].done &&
		    (strcmp(d->pend[i].cmd, "start") == 0 || strcmp(d->pend[i].cmd, "reprobe") == 0))
			return true;
	return false;
}

/* The counter `key` of `now` less that of `before` (0 when either lacks it). */
static json_int_t counter_delta(json_t *now, json_t *before, const char *key)
{
	json_t *a = json_object_get(now, key), *b = json_object_get(before, key);

	if (!json_is_integer(a) || !json_is_integer(b))
		return 0;
	return json_integer_value(a) - json_integer_value(b);
}

/* The capture of the open session ended (a stop answered, or the device
 * said it ended): its length, and what the agent says it sent for it
 * when it counts (under dev->lock). */
static void capture_ended_locked(struct device *d, json_t *counters)
{
	static const char *const keys[] = {"chunks_sent", "samples_sent", "chunks_lost", "chunks_refused",
					   "tails_cut"};
	struct spool *s = &d->spool;

	s->capture_stop_ms = mono_ms();
	if (s->paused_at_ms) {  /* stopped while paused */
		s->paused_total_ms += s->capture_stop_ms - s->paused_at_ms;
		s->paused_at_ms = 0;
		s->capture_stop_ms = 0;  /* its tail was recorded at the pause */
	}
	if (s->capture_t0_ms)
		s->capture_seconds = (double)(mono_ms() - s->capture_t0_ms - s->paused_total_ms) / 1000.0;
	if (!json_is_object(counters) || !s->counters_at_start)
		return;
	json_decref(s->capture_counters);
	s->capture_counters = json_object();
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		json_object_set_new(s->capture_counters, keys[i],
				    json_integer(counter_delta(counters, s->counters_at_start, keys[i])));
}

/* Chunks the agent says it sent for this capture that have not landed
 * (written or recorded as a gap) yet (under dev->lock). */
static json_int_t chunks_owed_locked(struct device *d)
{
	json_int_t sent = json_integer_value(json_object_get(d->spool.capture_counters, "chunks_sent"));
	json_int_t landed = (json_int_t)d->spool.chunks + (json_int_t)json_array_size(d->spool.gaps);

	return sent > landed ? sent - landed : 0;
}

/* A seed agent discards the chunk in flight at a stop or a pause: the
 * capture's time after its last chunk (or its start, or the resume) up to
 * `at` never comes (an agent with counters sends it before it answers):
 * a gap of those seconds, with the seconds its chunks cover so far, which
 * the analysis turns into samples (under dev->lock). */
static void record_seed_tail_locked(struct device *d, long long at, const char *what)
{
	struct spool *s = &d->spool;
	long long from = s->last_chunk_ms > s->capture_t0_ms ? s->last_chunk_ms : s->capture_t0_ms;
	char why[200];

	if (s->resumed_ms > from)
		from = s->resumed_ms;
	if (d->counters || !s->capture_t0_ms || at - from < 50)
		return;
	snprintf(why, sizeof(why), "a seed agent discards the chunk in flight at a %s: the capture's seconds "
		 "after its last chunk were not sent", what);
	spool_gap_sized(s, why, json_pack("{s:f,s:f}", "seconds", (double)(at - from) / 1000,
					  "covered_seconds", (double)(from - s->capture_t0_ms - s->paused_total_ms) / 1000));
}

/* The link ended (or cut a chunk) while a capture ran: what the agent
 * had not sent since its last chunk (or the capture's start, or the
 * resume) never comes, by any agent; a gap of those seconds, `reason`
 * (under dev->lock), or, under 50 ms, none unless `always` (a cut chunk
 * is a gap whatever its size).  The time is then accounted for: a second
 * call at once records no more. */
static void record_cut_capture_locked(struct device *d, const char *reason, bool always)
{
	struct spool *s = &d->spool;
	long long at = s->paused_at_ms ? s->paused_at_ms : mono_ms(), from = s->capture_t0_ms;

	if (!s->capture_t0_ms)
		return;
	if (s->last_chunk_ms > from)
		from = s->last_chunk_ms;
	if (s->resumed_ms > from)
		from = s->resumed_ms;
	s->capture_seconds = (double)(at - s->capture_t0_ms - s->paused_total_ms) / 1000.0;
	if (at - from >= 50)
		spool_gap_sized(s, reason, json_pack("{s:f,s:f}", "seconds", (double)(at - from) / 1000,
			"covered_seconds", (double)(from - s->capture_t0_ms - s->paused_total_ms) / 1000));
	else if (always)
		spool_gap(s, reason);
	s->last_chunk_ms = at;
}

/* At the finalizing of a session whose capture ended: what the capture
 * produced and the session does not hold becomes gaps with their size
 * (under dev->lock). */
static void record_capture_loss_locked(struct device *d)
{
	struct spool *s = &d->spool;
	json_t *cc = s->capture_counters;
	json_int_t owed = chunks_owed_locked(d);
	json_int_t lost = json_integer_value(json_object_get(cc, "chunks_lost")) +
			  json_integer_value(json_object_get(cc, "chunks_refused"));
	char why[300];

	if (owed > 0) {
		snprintf(why, sizeof(why), "%lld chunk(s) the agent counted as sent did not arrive within %d s "
			 "of the capture's end", (long long)owed, STOP_WAIT_MS / 1000);
		spool_gap_sized(s, why, json_pack("{s:I}", "chunks_missing", owed));
	}
	if (lost > 0) {
		snprintf(why, sizeof(why), "the agent could not build or send %lld chunk(s) of this capture "
			 "(its chunks_lost and chunks_refused counters)", (long long)lost);
		spool_gap_sized(s, why, json_pack("{s:I}", "chunks_missing", lost));
	}
	/* Our agent counts a perf script its drain deadline cut at the stop
	 * (a seed agent has no such counter: unknown stays unknown). */
	if (json_integer_value(json_object_get(cc, "tails_cut")) > 0)
		spool_gap(s, "the device's perf script had not ended when the agent's drain after the stop "
			  "ran out (its tails_cut counter): samples of the capture's last moments it had not "
			  "printed are missing");
	if (strncmp(s->ended, "on the device", 13) != 0 && s->capture_stop_ms)
		record_seed_tail_locked(d, s->capture_stop_ms, "stop");
}

/* A status answer says idle while a capture runs here: it ended on the
 * device by itself (the target exited; the agent says why in
 * capture_end).  The session records that and is finalized after the
 * grace, as after a stop (under dev->lock). */
static void note_capture_end_locked(struct device *d, json_t *a)
{
	const char *st = json_string_value(json_object_get(a, "state"));
	const char *why = json_string_value(json_object_get(a, "capture_end"));

	if (!st || strcmp(st, "idle") != 0 || probe_in_flight_locked(d) ||
	    (strcmp(d->state, "profiling") != 0 && strcmp(d->state, "paused") != 0))
		return;
	snprintf(d->state, sizeof(d->state), "connected");
	coll_link_log("%s: the capture ended on the device: %s", d->id,
		      why ? why : "its status says idle (no reason given)");
	if (d->have_spool && !d->stop_at_ms) {
		snprintf(d->spool.ended, sizeof(d->spool.ended), "on the device: %s",
			 why ? why : "its status says idle (no reason given)");
		capture_ended_locked(d, json_object_get(a, "counters"));
		d->stop_at_ms = mono_ms();
	}
}

/* A start the agent took (under dev->lock). */
static void started_locked(struct device *d, json_t *a)
{
	json_decref(d->capture);
	d->capture = json_incref(a);
	json_object_del(d->capture, "id");
	if (d->have_spool) {
		json_decref(d->spool.capture);
		d->spool.capture = json_incref(d->capture);
		d->spool.capture_t0_ms = mono_ms();
		json_decref(d->spool.counters_at_start);
		d->spool.counters_at_start = d->counters && d->status_counters
			? json_deep_copy(d->status_counters) : NULL;
		spool_write_metadata(&d->spool);
	}
	snprintf(d->state, sizeof(d->state), "profiling");
}

/* A stop the agent took, with its counters (or NULL): the session is
 * finalized after the grace (under dev->lock). */
static void stopped_locked(struct device *d, json_t *counters)
{
	snprintf(d->state, sizeof(d->state), "connected");
	if (d->have_spool) {
		if (json_is_object(counters)) {
			json_decref(d->spool.counters);
			d->spool.counters = json_incref(counters);
		}
		if (d->auto_stop_s > 0)
			snprintf(d->spool.ended, sizeof(d->spool.ended),
				 "by its duration_seconds (%lld s): the server stopped it", (long long)d->auto_stop_s);
		capture_ended_locked(d, counters);
		d->stop_at_ms = mono_ms();
	}
	d->auto_stop_s = 0;
}

/* A pause (`paused`) or a resume the agent took (under dev->lock). */
static void paused_locked(struct device *d, bool paused)
{
	struct spool *s = &d->spool;

	snprintf(d->state, sizeof(d->state), "%s", paused ? "paused" : "profiling");
	if (!d->have_spool)
		return;
	if (paused && s->capture_t0_ms && !s->paused_at_ms) {
		s->paused_at_ms = mono_ms();
		record_seed_tail_locked(d, s->paused_at_ms, "pause");
	} else if (!paused && s->paused_at_ms) {
		s->resumed_ms = mono_ms();
		s->paused_total_ms += s->resumed_ms - s->paused_at_ms;
		s->paused_at_ms = 0;
	}
}

/* A status or reprobe answer: the max sample rate, what perf can do, and
 * (a status) whether a capture ended on the device (under dev->lock). */
static void status_locked(struct device *d, const char *cmd, json_t *a)
{
	bool status = strcmp(cmd, "status") == 0;
	json_t *rate = json_object_get(a, "max_sample_rate");
	json_t *caps = status ? json_object_get(a, "capabilities") : a, *pc = json_object_get(a, "perf_caps");

	if (!rate)
		rate = json_object_get(a, "perf_event_max_sample_rate");
	if (!rate)
		rate = json_object_get(json_object_get(a, "platform"), "perf_event_max_sample_rate");
	if (json_integer_value(rate) > 0)
		d->max_rate = json_integer_value(rate);
	d->status_seen = true;
	if (status)
		note_capture_end_locked(d, a);
	if (status && json_is_object(pc)) {
		json_decref(d->perf_caps);
		d->perf_caps = json_deep_copy(pc);
	}
	if (json_is_object(caps)) {
		json_decref(d->capabilities);
		d->capabilities = json_deep_copy(caps);
		json_object_del(d->capabilities, "id");
		json_object_del(d->capabilities, "ok");
	}
}

/* What an answer to `cmd` changes in the device (under dev->lock). */
static void apply_answer_locked(struct device *d, const char *cmd, json_t *a)
{
	json_t *counters = json_object_get(a, "counters");

	if (json_is_object(counters)) {
		json_decref(d->status_counters);
		d->status_counters = json_incref(counters);
	}
	/* the session holds the same capture record (start, below) */
	if (strcmp(cmd, "start") != 0 && coll_capture_problems(d->capture, a) && d->have_spool &&
	    d->spool.capture == d->capture)
		spool_write_metadata(&d->spool);
	if (!json_is_true(json_object_get(a, "ok")))
		return;
	if (strcmp(cmd, "start") == 0)
		started_locked(d, a);
	else if (strcmp(cmd, "stop") == 0)
		stopped_locked(d, counters);
	else if (strcmp(cmd, "pause") == 0 || strcmp(cmd, "resume") == 0)
		paused_locked(d, strcmp(cmd, "pause") == 0);
	else if (strcmp(cmd, "status") == 0 || strcmp(cmd, "reprobe") == 0)
		status_locked(d, cmd, a);
	dev_publish_locked(d);
}

/* ------------------------------------------------------------ frames */

/* A flag-3 frame after the handshake. */
static void on_response(struct device *d, struct wire_frame *f)
{
	json_t *j = json_loadb((const char *)f->data, f->len, JSON_REJECT_DUPLICATES, NULL);
	const char *id = json_string_value(json_object_get(j, "id"));

	pthread_mutex_lock(&d->lock);
	if (!json_is_object(j)) {
		d->frames_dropped++;
		snprintf(d->last_drop, sizeof(d->last_drop), "a response that is not a JSON object");
	} else if (!id) {
		const char *type = json_string_value(json_object_get(j, "type"));
		json_t *maps = json_object_get(j, "maps");
		if (d->maps && type && strcmp(type, "maps") == 0 && json_is_array(maps) &&
		    json_array_size(maps) <= AGENT_MAPS_ENTRIES && f->len <= AGENT_MAPS_MAX) {
			ensure_spool_locked(d);
			spool_maps(&d->spool, j);
		} else {
			d->frames_dropped++;
			snprintf(d->last_drop, sizeof(d->last_drop), "a response without an id");
		}
	} else if (strcmp(id, d->ping_id) == 0) {
		/* The keepalive is a status: its counters keep samples live. */
		d->ping_sent_ms = 0;
		d->ping_id[0] = '\0';
		apply_answer_locked(d, "status", j);
	} else {
		bool matched = false;
		for (int i = 0; i < MAX_PENDING; i++)
			if (d->pend[i].used && !d->pend[i].done && strcmp(d->pend[i].id, id) == 0) {
				apply_answer_locked(d, d->pend[i].cmd, j);
				if (d->pend[i].async)
					d->pend[i].used = false;
				else {
					/* a copy: the tool's thread dumps it unlocked while
					 * this thread keeps parts of j (capture, counters) */
					d->pend[i].answer = json_deep_copy(j);
					d->pend[i].done = true;
				}
				matched = true;
			}
		if (!matched) {
			d->frames_dropped++;
			snprintf(d->last_drop, sizeof(d->last_drop), "an answer to no pending command");
		}
		pthread_cond_broadcast(&d->cond);
	}
	pthread_mutex_unlock(&d->lock);
	json_decref(j);
}

static void on_metrics(struct device *d, struct wire_frame *f)
{
	json_t *j = json_loadb((const char *)f->data, f->len, JSON_REJECT_DUPLICATES, NULL);

	pthread_mutex_lock(&d->lock);
	if (!json_is_object(j) || !json_is_string(json_object_get(j, "type"))) {
		d->frames_dropped++;
		snprintf(d->last_drop, sizeof(d->last_drop), "a metrics frame that is not an object with a type");
	} else {
		/* A frame that opens the session (after a stop closed the last)
		 * republishes at once: get_device_metrics(device) reads the
		 * session from devices/ID.json, which must not name the old one. */
		bool opened = !d->have_spool;
		ensure_spool_locked(d);
		json_object_set_new(j, "recv_ts", json_real((double)time(NULL)));
		if (spool_metrics(&d->spool, j) || opened)
			dev_publish_locked(d);
		d->metrics++;
	}
	pthread_mutex_unlock(&d->lock);
	json_decref(j);
}

/* The chunk's decompressed size, checked (a flag-0 chunk is its text). */
static enum pl_err chunk_check(struct wire_frame *f, unsigned long long *text, uint64_t *samples,
			       struct pl_error *err)
{
	*samples = 0;
	if (f->flag == AGENT_FRAME_ZSTD)
		return coll_wire_zstd_text_size(f->data, f->len, text, err);
	if (f->flag == AGENT_FRAME_PERF_DATA)
		return coll_wire_perf_chunk_check(f->data, f->len, text, samples, err);
	*text = f->len;
	return PL_OK;
}

static void on_chunk(struct device *d, struct wire_frame *f)
{
	struct pl_error err = {0};
	unsigned long long text;
	uint64_t samples;   /* counted by the check; the analysis counts again */
	enum pl_err rc = chunk_check(f, &text, &samples, &err);
	const char *suffix = f->flag == AGENT_FRAME_ZSTD ? "zst" : f->flag == AGENT_FRAME_PERF_DATA ? "perf.zst" : "txt";

	pthread_mutex_lock(&d->lock);
	if (rc) {
		d->frames_dropped++;
		snprintf(d->last_drop, sizeof(d->last_drop), "%s", err.text);
	} else {
		ensure_spool_locked(d);
		if (!spool_chunk(&d->spool, f->data, f->len, suffix, text, &err)) {
			d->chunks++;
			d->text_bytes += text;
			d->wire_bytes += f->len;
			spool_now_iso(d->last_chunk, sizeof(d->last_chunk));
			d->spool.last_chunk_ms = mono_ms();
		} else {
			snprintf(d->last_drop, sizeof(d->last_drop), "%s", err.text);
			coll_link_log("%s: a gap in session %s: %s", d->id, d->spool.id, err.text);
		}
	}
	dev_publish_locked(d);
	pthread_mutex_unlock(&d->lock);
}

/* ---------------------------------------------------------- handshake */

static bool peer_is_legacy_ok(const struct device *d)
{
	struct in_addr a;

	if (link_.cfg.legacy_loopback && inet_pton(AF_INET, d->address, &a) == 1 &&
	    (ntohl(a.s_addr) >> 24) == 127)
		return true;
	for (size_t i = 0; i < link_.cfg.nlegacy; i++)
		if (strcmp(link_.cfg.legacy_addrs[i], d->address) == 0)
			return true;
	return false;
}

/* The next flag-3 frame of the handshake (metrics skipped, as the seed
 * does for agents that stream them at once): *out gets a new JSON
 * object. */
static enum pl_err handshake_read(struct device *d, json_t **out, struct pl_error *err)
{
	enum pl_err rc;

	*out = NULL;
	for (int i = 0; i < PREAUTH_FRAMES; i++) {
		struct wire_frame f;
		json_t *j;
		if ((rc = coll_wire_read(d->fd, AGENT_FRAME_PREAUTH_MAX, &f, err)))
			return rc;
		if (f.flag == AGENT_FRAME_METRICS || f.len == 0) {
			free(f.data);
			continue;
		}
		if (f.flag != AGENT_FRAME_RESP) {
			free(f.data);
			return pl_fail(err, PL_ERR_INPUT, NULL,
				       "garbage before the handshake ended (a frame of flag %u)", f.flag);
		}
		j = json_loadb((const char *)f.data, f.len, JSON_REJECT_DUPLICATES, NULL);
		free(f.data);
		if (!json_is_object(j)) {
			json_decref(j);
			return pl_fail(err, PL_ERR_INPUT, NULL, "garbage before the handshake ended (not a JSON object)");
		}
		*out = j;
		return PL_OK;
	}
	return pl_fail(err, PL_ERR_INPUT, NULL, "more than %d frames before the handshake ended", PREAUTH_FRAMES);
}

static bool is_hex(const char *s, size_t n)
{
	if (!s || strlen(s) != n)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	return true;
}

/* Send `msg` (stolen). */
static enum pl_err send_json_new(struct device *d, json_t *msg, struct pl_error *err)
{
	char *text = json_dumps(msg, JSON_COMPACT);
	enum pl_err rc = dev_send(d, text, err);

	free(text);
	json_decref(msg);
	return rc;
}

/* The auth answer to our request `id` (*out, new), skipping what the
 * seed skips; PL_ERR_EXTERNAL when the agent refused the code. */
static enum pl_err auth_answer(struct device *d, const char *id, json_t **out, struct pl_error *err)
{
	enum pl_err rc;

	for (int i = 0; i < PREAUTH_FRAMES; i++) {
		json_t *j;
		const char *got, *e;
		if ((rc = handshake_read(d, &j, err)))
			return rc;
		got = json_string_value(json_object_get(j, "id"));
		if (!got || strcmp(got, id) != 0) {
			json_decref(j);
			continue;
		}
		if (json_is_true(json_object_get(j, "ok"))) {
			*out = j;
			return PL_OK;
		}
		e = json_string_value(json_object_get(j, "error"));
		rc = pl_fail(err, PL_ERR_EXTERNAL, NULL, "the agent refused the pairing code (%s)",
			     e ? e : "no reason given");
		json_decref(j);
		return rc;
	}
	return pl_fail(err, PL_ERR_INPUT, NULL, "no answer to auth");
}

/* The features of ours the agent offers in its hello (new array). */
static json_t *features_offered(json_t *ext)
{
	json_t *offered = json_object_get(ext, "features"), *taken = json_array(), *v;
	size_t k;

	for (size_t i = 0; i < PL_ARRAY_LEN(our_features); i++) {
		if (link_.cfg.text_chunks && strcmp(our_features[i], "perf_data") == 0)
			continue;
		json_array_foreach(offered, k, v)
			if (json_is_string(v) && strcmp(json_string_value(v), our_features[i]) == 0) {
				json_array_append_new(taken, json_string(our_features[i]));
				break;
			}
	}
	return taken;
}

/* The features the agent's auth answer took, of those we offered. */
static void take_features(struct device *d, json_t *answer, json_t *offered)
{
	size_t k, t;
	json_t *v, *w;

	json_array_foreach(json_object_get(answer, "features"), k, v) {
		const char *s = json_string_value(v);
		bool ours = false;
		json_array_foreach(offered, t, w)
			ours |= s && strcmp(s, json_string_value(w)) == 0;
		if (ours && strcmp(s, "maps") == 0)
			d->maps = true;
		if (ours && strcmp(s, "counters") == 0)
			d->counters = true;
		if (ours && strcmp(s, "perf_data") == 0)
			d->perf_data = true;
	}
}

/* Extension 1: both proofs.  The features taken go into the device. */
static enum pl_err pair_hmac(struct device *d, const char *code, json_t *ext, struct pl_error *err)
{
	const char *agent_nonce = json_string_value(json_object_get(ext, "nonce"));
	char server_nonce[33], proof[65], want[65];
	json_t *taken, *a;
	enum pl_err rc;
	bool ok;

	if (!is_hex(agent_nonce, 32))
		return pl_fail(err, PL_ERR_INPUT, NULL, "the hello's ext.nonce is not 32 lower-case hex characters");
	if (!coll_wire_nonce(server_nonce))
		return pl_fail(err, PL_ERR_INTERNAL, NULL, "cannot read /dev/urandom for a nonce");
	taken = features_offered(ext);
	coll_wire_pair_proof(code, "server", agent_nonce, server_nonce, proof);
	rc = send_json_new(d, json_pack("{s:s,s:s,s:{s:s,s:s,s:s,s:O}}", "id", "auth1", "cmd", "auth", "args",
					"method", "hmac-sha256-v1", "server_nonce", server_nonce, "proof", proof,
					"features", taken), err);
	memset(proof, 0, sizeof(proof));
	if (rc || (rc = auth_answer(d, "auth1", &a, err))) {
		json_decref(taken);
		return rc;
	}
	coll_wire_pair_proof(code, "agent", agent_nonce, server_nonce, want);
	const char *got = json_string_value(json_object_get(a, "proof"));
	ok = got && is_hex(got, 64) && coll_wire_equal_ct(got, want);
	memset(want, 0, sizeof(want));
	if (ok)
		take_features(d, a, taken);
	else
		rc = pl_fail(err, PL_ERR_INPUT, NULL,
			     "the agent's pairing proof is wrong: it does not know the pairing code");
	json_decref(a);
	json_decref(taken);
	return rc;
}

/* A seed agent: auth {token}, only where the operator allowed it. */
static enum pl_err pair_legacy(struct device *d, const char *code, struct pl_error *err)
{
	json_t *a;
	enum pl_err rc;

	if (!peer_is_legacy_ok(d))
		return pl_fail(err, PL_ERR_USAGE, NULL,
			       "a seed agent cannot prove the pairing code (allow it with --agent-allow-legacy)");
	if ((rc = send_json_new(d, json_pack("{s:s,s:s,s:{s:s}}", "id", "auth1", "cmd", "auth", "args",
					     "token", code), err)) ||
	    (rc = auth_answer(d, "auth1", &a, err)))
		return rc;
	json_decref(a);
	d->legacy = true;
	return PL_OK;
}

/* What a hello must be before pairing starts (hello borrowed). */
static enum pl_err hello_check(json_t *hello, const char *code, struct pl_error *err)
{
	const char *type = json_string_value(json_object_get(hello, "type"));

	if (!type || strcmp(type, "hello") != 0)
		return pl_fail(err, PL_ERR_INPUT, NULL, "garbage before the hello (the first answer is not a hello)");
	if (json_object_get(hello, "token"))
		return pl_fail(err, PL_ERR_UNSUPPORTED, NULL, "an agent before 0.10 sends its pairing code in "
			       "clear in its hello: refused (upgrade the agent)");
	if (!code[0])
		return pl_fail(err, PL_ERR_USAGE, NULL, "no pairing code: the server has none for agents that dial in "
			       "(start it with --agent-pairing-code-file FILE or PERFLENS_AGENT_CODE)");
	return PL_OK;
}

static enum pl_err handshake(struct device *d, struct pl_error *err)
{
	struct timeval tv = {HANDSHAKE_MS / 1000, 0};
	const char *code = d->outbound ? d->code : link_.cfg.pairing_code;
	json_t *hello, *ext;
	const char *pairing;
	enum pl_err rc;

	setsockopt(d->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if ((rc = handshake_read(d, &hello, err)))
		return rc;
	if ((rc = hello_check(hello, code, err))) {
		json_decref(hello);
		return rc;
	}
	ext = json_object_get(hello, "ext");
	pairing = json_string_value(json_object_get(ext, "pairing"));
	if (pairing && strcmp(pairing, "hmac-sha256-v1") == 0)
		rc = pair_hmac(d, code, ext, err);
	else
		rc = pair_legacy(d, code, err);
	memset(d->code, 0, sizeof(d->code));
	pthread_mutex_lock(&d->lock);
	json_object_del(hello, "ext");
	d->hello = hello;
	d->authed = rc == PL_OK;
	pthread_mutex_unlock(&d->lock);
	return rc;
}

/* --------------------------------------------------------- the reader */

/* Every ping interval the link asks the agent's status (a ping that also
 * brings its counters, so list_devices shows the samples sent so far); no
 * answer within the send bound ends the link, unless a start or reprobe
 * is in flight (the agent runs its capability probe then, and answers
 * nothing meanwhile). */
static enum pl_err ping_due(struct device *d, struct pl_error *err)
{
	long long now = mono_ms();
	enum pl_err rc;
	int slot;

	pthread_mutex_lock(&d->lock);
	if (d->ping_sent_ms && !probe_in_flight_locked(d) &&
	    now - d->ping_sent_ms > (long long)link_.cfg.send_timeout_ms) {
		pthread_mutex_unlock(&d->lock);
		return pl_fail(err, PL_ERR_TIMEOUT, NULL, "the agent stopped answering (no reply to a ping within %u ms)",
			       link_.cfg.send_timeout_ms);
	}
	if (d->auto_stop_ms && now >= d->auto_stop_ms) {
		d->auto_stop_ms = 0;
		/* auto_stop_s stays for the stop's answer: the session says so. */
		pthread_mutex_unlock(&d->lock);
		coll_link_log("%s: the capture's duration passed: stopping it", d->id);
		if ((rc = send_command(d, "stop", NULL, true, &slot, err)))
			return rc;
		pthread_mutex_lock(&d->lock);
	}
	/* The grace, longer while chunks the agent counted are owed. */
	if (d->stop_at_ms && now - d->stop_at_ms >= STOP_GRACE_MS &&
	    (!d->have_spool || chunks_owed_locked(d) == 0 || now - d->stop_at_ms >= STOP_WAIT_MS)) {
		close_spool_locked(d);
		dev_publish_locked(d);
	}
	pthread_mutex_unlock(&d->lock);
	return PL_OK;
}

static enum pl_err maybe_ping(struct device *d, long long *last_ping, struct pl_error *err)
{
	long long now = mono_ms();
	char id[24], text[64];

	if (now - *last_ping < (long long)link_.cfg.ping_interval_ms)
		return PL_OK;
	*last_ping = now;
	pthread_mutex_lock(&d->lock);
	if (d->ping_sent_ms) {
		pthread_mutex_unlock(&d->lock);
		return PL_OK;
	}
	snprintf(id, sizeof(id), "ping%06u", ++d->next_cmd);
	snprintf(d->ping_id, sizeof(d->ping_id), "%s", id);
	d->ping_sent_ms = now;
	pthread_mutex_unlock(&d->lock);
	snprintf(text, sizeof(text), "{\"id\":\"%s\",\"cmd\":\"status\",\"args\":{}}", id);
	return dev_send(d, text, err);
}

/* A frame that was dropped, and why (counted in the device's state). */
static void drop_frame(struct device *d, const char *why)
{
	pthread_mutex_lock(&d->lock);
	d->frames_dropped++;
	snprintf(d->last_drop, sizeof(d->last_drop), "%s", why);
	pthread_mutex_unlock(&d->lock);
}

/* One whole frame after the handshake, to where it goes (an empty one
 * carries nothing). */
static void on_frame(struct device *d, struct wire_frame *f)
{
	char why[64];

	switch (f->flag) {
	case AGENT_FRAME_RAW:
	case AGENT_FRAME_ZSTD:
		if (f->len)
			on_chunk(d, f);
		break;
	case AGENT_FRAME_PERF_DATA:
		/* only where extension 4 was negotiated: else an unknown flag */
		if (f->len && d->perf_data)
			on_chunk(d, f);
		else
			drop_frame(d, "a perf.data chunk on a link that did not negotiate perf_data");
		break;
	case AGENT_FRAME_RESP:
		if (f->len)
			on_response(d, f);
		break;
	case AGENT_FRAME_METRICS:
		if (f->len)
			on_metrics(d, f);
		break;
	default:
		snprintf(why, sizeof(why), "a frame of unknown flag %u", f->flag);
		drop_frame(d, why);
	}
}

/* The link ended inside a frame: a chunk cut mid-way is lost, and said
 * so (`why` the read's error). */
static void on_cut_frame(struct device *d, const struct wire_frame *f, const char *why)
{
	if (f->flag != AGENT_FRAME_RAW && f->flag != AGENT_FRAME_ZSTD && !(f->flag == AGENT_FRAME_PERF_DATA && d->perf_data))
		return;
	pthread_mutex_lock(&d->lock);
	ensure_spool_locked(d);
	if (d->spool.capture_t0_ms && (strcmp(d->state, "profiling") == 0 || strcmp(d->state, "paused") == 0))
		record_cut_capture_locked(d, why, true);  /* sized */
	else
		spool_gap(&d->spool, why);
	pthread_mutex_unlock(&d->lock);
}

/* Every frame until the link ends; `err` says why it ended. */
static void serve_frames(struct device *d, struct pl_error *err)
{
	struct timeval tv = {link_.cfg.send_timeout_ms / 1000, (link_.cfg.send_timeout_ms % 1000) * 1000};
	long long last_ping = mono_ms();

	/* A frame that stalls for the send bound mid-way ends the link. */
	setsockopt(d->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	for (;;) {
		struct pollfd p = {d->fd, POLLIN, 0};
		struct wire_frame f;
		int r = poll(&p, 1, 250);

		if (__atomic_load_n(&link_.stopping, __ATOMIC_ACQUIRE)) {
			pl_fail(err, PL_ERR_EXTERNAL, NULL, "the server is stopping");
			return;
		}
		if (ping_due(d, err) || maybe_ping(d, &last_ping, err))
			return;
		if (r <= 0)
			continue;
		if (coll_wire_read(d->fd, AGENT_FRAME_MAX, &f, err)) {
			on_cut_frame(d, &f, err->text);
			return;
		}
		on_frame(d, &f);
		free(f.data);
	}
}

/* The reader's end: the device is disconnected (`why`), its session
 * finalized. */
static void reader_ended(struct device *d, const char *why)
{
	pthread_mutex_lock(&d->lock);
	__atomic_store_n(&d->reader_done, true, __ATOMIC_RELEASE);
	close_spool_locked(d);
	snprintf(d->state, sizeof(d->state), "disconnected");
	snprintf(d->reason, sizeof(d->reason), "%s", why);
	dev_publish_locked(d);
	pthread_cond_broadcast(&d->cond);
	pthread_mutex_unlock(&d->lock);
}

static void *reader_main(void *arg)
{
	struct device *d = arg;
	struct pl_error err = {0};
	int slot;

	if (handshake(d, &err)) {
		coll_link_log("%s: rejected: %s", d->id, err.text);
		pthread_mutex_lock(&d->lock);
		__atomic_store_n(&d->reader_done, true, __ATOMIC_RELEASE);
		pthread_mutex_unlock(&d->lock);
		dev_set_state(d, "rejected", err.text);
	} else {
		coll_link_log("%s: paired (%s)%s%s", d->id, d->legacy ? "seed agent, code in clear" : "mutual proof",
			      d->maps ? ", maps" : "", d->perf_data ? ", perf_data" : "");
		dev_set_state(d, "connected", NULL);
		/* What the agent is doing now, its counters and max rate. */
		if (send_command(d, "status", NULL, true, &slot, &err))
			coll_link_log("%s: status failed: %s", d->id, err.text);
		serve_frames(d, &err);
		pthread_mutex_lock(&d->lock);
		if (d->send_failure[0])  /* the read failed because a send did */
			snprintf(err.text, sizeof(err.text), "%s", d->send_failure);
		pthread_mutex_unlock(&d->lock);
		coll_link_log("%s: link ended: %s", d->id, err.text);
		reader_ended(d, err.text);
	}
	/* Others shut the link down from their threads (disconnect, stop):
	 * they load fd atomically, and see -1 once it is closed. */
	pthread_mutex_lock(&d->lock);
	int fd = d->fd;
	__atomic_store_n(&d->fd, -1, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&d->lock);
	shutdown(fd, SHUT_RDWR);
	close(fd);
	pthread_mutex_lock(&link_.lock);
	pthread_cond_broadcast(&link_.cond);  /* coll_link_stop waits for every reader */
	pthread_mutex_unlock(&link_.lock);
	dev_unref(d);  /* the reader's own reference */
	return NULL;
}

/* A new connection's device; the table holds it (one reference for the
 * reader, one returned).  NULL when the table is full. */
static struct device *dev_new(int fd, const char *address, unsigned port, bool outbound)
{
	struct device *d;

	pthread_mutex_lock(&link_.lock);
	if (link_.ndevices == MAX_DEVICES) {
		pthread_mutex_unlock(&link_.lock);
		return NULL;
	}
	d = pl_xcalloc(1, sizeof(*d));
	d->fd = fd;
	snprintf(d->address, sizeof(d->address), "%s", address);
	d->port = port;
	d->outbound = outbound;
	snprintf(d->id, sizeof(d->id), "%s_%u", address, port);
	snprintf(d->state, sizeof(d->state), "handshake");
	d->write_errors = json_object();
	spool_now_iso(d->connected_at, sizeof(d->connected_at));
	pthread_mutex_init(&d->lock, NULL);
	pthread_mutex_init(&d->send_lock, NULL);
	cond_init_mono(&d->cond);
	d->refs = 2;
	link_.devices[link_.ndevices++] = d;
	pthread_mutex_unlock(&link_.lock);
	return d;
}

static bool start_reader(struct device *d)
{
	pthread_attr_t attr;
	sigset_t all, old;
	int rc;

	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 256 << 10);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);  /* signals stay with the main thread */
	rc = pthread_create(&d->reader, &attr, reader_main, d);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&attr);
	d->reader_started = rc == 0;
	return rc == 0;
}

/* ------------------------------------------------------- the listener */

static void *listener_main(void *arg)
{
	(void)arg;
	while (!__atomic_load_n(&link_.stopping, __ATOMIC_ACQUIRE)) {
		struct pollfd p = {link_.listen_fd, POLLIN, 0};
		struct sockaddr_in peer;
		socklen_t len = sizeof(peer);
		char addr[64];
		struct device *d, *old;
		int fd;

		if (poll(&p, 1, 250) <= 0)
			continue;
		fd = accept4(link_.listen_fd, (struct sockaddr *)&peer, &len, SOCK_CLOEXEC);
		if (fd < 0) {
			if (errno != EINTR && errno != EAGAIN) {
				coll_link_log("accept failed: %s; retrying in 1 s", strerror(errno));
				sleep(1);
			}
			continue;
		}
		inet_ntop(AF_INET, &peer.sin_addr, addr, sizeof(addr));
		coll_wire_socket_opts(fd, link_.cfg.send_timeout_ms);
		/* A reconnect from the same address and port replaces the old
		 * link (it is shut down; its reader finalizes its session). */
		{
			char id[128];
			snprintf(id, sizeof(id), "%s_%u", addr, (unsigned)ntohs(peer.sin_port));
			if ((old = dev_find(id))) {
				shutdown(old->fd, SHUT_RDWR);
				dev_unref(old);
			}
		}
		if (!(d = dev_new(fd, addr, ntohs(peer.sin_port), false))) {
			coll_link_log("refused %s: %d agents are linked already", addr, MAX_DEVICES);
			close(fd);
			continue;
		}
		if (!start_reader(d)) {
			d->refs = 1;
			close(fd);
		}
		dev_unref(d);
	}
	return NULL;
}

static enum pl_err open_listener(struct pl_error *err)
{
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)link_.cfg.listen_port)};
	socklen_t len = sizeof(sa);
	int one = 1, fd;

	if (inet_pton(AF_INET, link_.cfg.listen_addr, &sa.sin_addr) != 1)
		return pl_fail(err, PL_ERR_USAGE, "e.g. --agent-listen 0.0.0.0:9999",
			       "--agent-listen needs an IPv4 address; got '%s'", link_.cfg.listen_addr);
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return pl_fail(err, PL_ERR_EXTERNAL, NULL, "cannot make a socket: %s", strerror(errno));
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(fd, 16) < 0) {
		int e = errno;
		close(fd);
		return pl_fail(err, PL_ERR_USAGE, "pick a free port, or stop what listens there",
			       "cannot listen on %s:%u: %s", link_.cfg.listen_addr, link_.cfg.listen_port,
			       strerror(e));
	}
	getsockname(fd, (struct sockaddr *)&sa, &len);
	link_.port = ntohs(sa.sin_port);
	link_.listen_fd = fd;
	return PL_OK;
}

/* ----------------------------------------------------- control requests */

/* A failed request's answer, {ok: false, error, hint, code}, from `e`:
 * the tool reports that code as its own (new). */
static json_t *error_answer(const struct pl_error *e)
{
	return json_pack("{s:b,s:s,s:s,s:s}", "ok", 0, "error", e->text, "hint", e->hint,
			 "code", pl_err_name(e->code));
}

/* The same for a fixed sentence (new). */
static json_t *fail_answer(enum pl_err code, const char *hint, const char *text)
{
	struct pl_error e;

	pl_fail(&e, code, hint, "%s", text);
	return error_answer(&e);
}

/* Replace: the current link of device `id` ends (its session finalized)
 * before a new one starts, bounded at 10 s. */
static void end_old_link(const char *id)
{
	struct device *old = dev_find(id);
	long long deadline = mono_ms() + 10000;

	if (!old)
		return;
	shutdown(old->fd, SHUT_RDWR);
	pthread_mutex_lock(&old->lock);
	while (!old->reader_done && mono_ms() < deadline)
		cond_wait_until(&old->cond, &old->lock, deadline);  /* the reader broadcasts its end */
	pthread_mutex_unlock(&old->lock);
	dev_unref(old);
}

/* A TCP connection to `ai` (`addr`:`port`) within CONNECT_MS, made
 * blocking again: *fd. */
static enum pl_err connect_out(const struct addrinfo *ai, const char *addr, json_int_t port, int *fd,
			       struct pl_error *err)
{
	const char *hint = "check that the agent runs with --listen on that address and port";
	struct pollfd p;
	int e = 0;
	socklen_t elen = sizeof(e);

	*fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (*fd < 0 || (connect(*fd, ai->ai_addr, ai->ai_addrlen) < 0 && errno != EINPROGRESS)) {
		pl_fail(err, PL_ERR_EXTERNAL, hint, "cannot connect to %s:%lld: %s", addr, (long long)port,
			strerror(errno));
		if (*fd >= 0)
			close(*fd);
		return err->code;
	}
	p = (struct pollfd){*fd, POLLOUT, 0};
	if (poll(&p, 1, CONNECT_MS) <= 0 || getsockopt(*fd, SOL_SOCKET, SO_ERROR, &e, &elen) < 0 || e) {
		close(*fd);
		return pl_fail(err, PL_ERR_EXTERNAL, hint, "cannot connect to %s:%lld: %s", addr, (long long)port,
			       e ? strerror(e) : "timed out");
	}
	fcntl(*fd, F_SETFL, fcntl(*fd, F_GETFL) & ~O_NONBLOCK);
	coll_wire_socket_opts(*fd, link_.cfg.send_timeout_ms);
	return PL_OK;
}

/* The answer to a connect, once the new link's handshake ended or its
 * bound passed (new). */
static json_t *await_handshake(struct device *d)
{
	long long deadline = mono_ms() + HANDSHAKE_MS + 2000;
	json_t *answer;

	pthread_mutex_lock(&d->lock);
	while (strcmp(d->state, "handshake") == 0 && mono_ms() < deadline)
		cond_wait_until(&d->cond, &d->lock, deadline);  /* dev_set_state broadcasts */
	if (strcmp(d->state, "connected") == 0)
		answer = json_pack("{s:b,s:o}", "ok", 1, "device", dev_json(d));
	else
		answer = json_pack("{s:b,s:s,s:s,s:s,s:o}", "ok", 0, "error",
				   d->reason[0] ? d->reason : "the handshake did not finish",
				   "hint", "check the pairing code the agent printed at start",
				   "code", pl_err_name(PL_ERR_EXTERNAL), "device", dev_json(d));
	pthread_mutex_unlock(&d->lock);
	return answer;
}

/* Connect out to a --listen agent. */
static json_t *op_connect(json_t *req)
{
	json_t *args = json_object_get(req, "args");
	const char *host = json_string_value(json_object_get(args, "host"));
	json_int_t port = json_integer_value(json_object_get(args, "port"));
	const char *code = json_string_value(json_object_get(args, "pairing_code"));
	struct addrinfo hints = {.ai_family = AF_INET, .ai_socktype = SOCK_STREAM}, *ai = NULL;
	struct pl_error err;
	char addr[64], id[128];
	struct device *d;
	json_t *answer;
	int fd;

	if (!host || port < 1 || port > 65535 || !code || !code[0] || strlen(code) > 255)
		return fail_answer(PL_ERR_USAGE, "fix the arguments", "connect needs host, port (1..65535) and pairing_code");
	if (getaddrinfo(host, NULL, &hints, &ai) != 0 || !ai)
		return fail_answer(PL_ERR_USAGE, "pass the device's IPv4 address", "cannot resolve the host (IPv4 only)");
	inet_ntop(AF_INET, &((struct sockaddr_in *)ai->ai_addr)->sin_addr, addr, sizeof(addr));
	((struct sockaddr_in *)ai->ai_addr)->sin_port = htons((uint16_t)port);
	snprintf(id, sizeof(id), "%s_%u", addr, (unsigned)port);
	end_old_link(id);
	enum pl_err rc = connect_out(ai, addr, port, &fd, &err);
	freeaddrinfo(ai);
	if (rc)
		return error_answer(&err);
	if (!(d = dev_new(fd, addr, (unsigned)port, true))) {
		close(fd);
		return fail_answer(PL_ERR_LIMIT, "disconnect_device one first", "too many agents are linked already");
	}
	snprintf(d->code, sizeof(d->code), "%s", code);
	if (!start_reader(d)) {
		d->refs = 1;
		close(fd);
		dev_unref(d);
		return fail_answer(PL_ERR_INTERNAL, "retry", "cannot start the link's reader thread");
	}
	answer = await_handshake(d);
	dev_unref(d);
	return answer;
}

/* A stop the agent refused (not profiling): when a capture stopped by
 * itself, its finished session is what the caller wants (new string). */
static json_t *stop_refused_hint(struct device *d)
{
	char hint[400];

	pthread_mutex_lock(&d->lock);
	if (d->last_session[0])
		snprintf(hint, sizeof(hint), "the capture already ended (by its duration, or its target exited): "
			 "analyze_profile path=perflens://artifacts/%s/%s", COLL_SESSIONS_DIR, d->last_session);
	else
		snprintf(hint, sizeof(hint), "call list_devices to see the device's state");
	pthread_mutex_unlock(&d->lock);
	return json_string(hint);
}

/* A call_graph the agent did not use (a seed agent ignores the argument
 * and takes its probe's method): said in the answer, not hidden. */
static void note_call_graph(json_t *args, json_t *answer)
{
	const char *want = json_string_value(json_object_get(args, "call_graph"));
	const char *got = json_string_value(json_object_get(answer, "callgraph"));
	char note[200];

	if (!want || !got)
		return;
	if (strcmp(want, got) == 0 || (strcmp(want, "none") == 0 && !got[0]))
		return;
	snprintf(note, sizeof(note), "call_graph %s was asked; the agent records with %s (a seed agent "
		 "takes its probe's method: its protocol has no call_graph)", want, got[0] ? got : "none");
	json_object_set_new(answer, "call_graph_note", json_string(note));
}

/* Before a start: the device's max sample rate known and kept, and a
 * session folder for it to land in (nothing is sent to the device when
 * either fails). */
static enum pl_err start_ready(struct device *d, json_t *args, struct pl_error *err)
{
	struct pl_error ignored;
	json_t *status = NULL;
	enum pl_err rc;

	/* The reader thread sets both under the lock as answers come. */
	pthread_mutex_lock(&d->lock);
	bool status_seen = d->status_seen;
	pthread_mutex_unlock(&d->lock);
	if (!status_seen) {
		/* The status sent at pairing has not come back: ask now, so the
		 * device's max sample rate bounds this start. */
		device_command(d, "status", NULL, 5000, &status, &ignored);
		json_decref(status);
	}
	pthread_mutex_lock(&d->lock);
	json_int_t max_rate = d->max_rate;
	pthread_mutex_unlock(&d->lock);
	if (max_rate > 0 && json_integer_value(json_object_get(args, "frequency")) > max_rate)
		return pl_fail(err, PL_ERR_USAGE, "pass a lower frequency_hz",
			       "the frequency is over the device's max sample rate of %lld Hz", (long long)max_rate);
	/* A new capture starts a new session if the old one has chunks. */
	pthread_mutex_lock(&d->lock);
	if (d->have_spool && (d->spool.chunks || json_array_size(d->spool.gaps)))
		close_spool_locked(d);
	d->stop_at_ms = 0;
	ensure_spool_locked(d);
	rc = spool_make_dir_now(&d->spool, err);
	pthread_mutex_unlock(&d->lock);
	if (rc)
		snprintf(err->hint, sizeof(err->hint), "make the artifact root's sessions folder writable (or free "
			 "space there), then call start_capture again; nothing was sent to the device");
	return rc;
}

/* A start the device took: its duration_seconds (`auto_stop`, 0 none) in
 * the answer, the device's capture and the session, and the stop the
 * reader sends when it passes. */
static void note_duration(struct device *d, json_t *a, json_int_t auto_stop)
{
	json_t *ds = auto_stop > 0 ? json_integer(auto_stop) : json_null();

	pthread_mutex_lock(&d->lock);
	d->auto_stop_ms = auto_stop > 0 ? mono_ms() + auto_stop * 1000 : 0;
	d->auto_stop_s = auto_stop > 0 ? auto_stop : 0;
	json_object_set(a, "duration_seconds", ds);
	if (d->capture)
		json_object_set(d->capture, "duration_seconds", ds);
	if (d->have_spool && d->spool.capture) {
		json_object_set(d->spool.capture, "duration_seconds", ds);
		spool_write_metadata(&d->spool);
	}
	pthread_mutex_unlock(&d->lock);
	json_decref(ds);
}

/* A stop the device took: wait out the grace, so that the answer names a
 * finalized session. */
static void await_stopped_session(struct device *d, json_t *a)
{
	long long until = mono_ms() + STOP_WAIT_MS + 1000;
	char sid[128] = "";

	pthread_mutex_lock(&d->lock);
	if (d->have_spool)
		snprintf(sid, sizeof(sid), "%s", d->spool.id);
	while (d->have_spool && strcmp(d->spool.id, sid) == 0 && !d->reader_done && mono_ms() < until)
		cond_wait_until(&d->cond, &d->lock, until);  /* close_spool_locked broadcasts */
	pthread_mutex_unlock(&d->lock);
	json_object_set_new(a, "session", sid[0] ? json_string(sid) : json_null());
}

/* The device's answer `a` (stolen) as the tool's: {ok, answer, device},
 * and the agent's error when it refused (no code: the device's failure). */
static json_t *command_answer(struct device *d, const char *cmd, json_t *a)
{
	bool ok = json_is_true(json_object_get(a, "ok"));
	json_t *e = json_object_get(a, "error"), *out;

	json_object_del(a, "id");
	pthread_mutex_lock(&d->lock);
	out = json_pack("{s:b,s:O,s:o}", "ok", ok, "answer", a, "device", dev_json(d));
	pthread_mutex_unlock(&d->lock);
	if (!ok) {
		json_object_set_new(out, "error", e ? json_incref(e) : json_string("the agent refused"));
		if (strcmp(cmd, "stop") == 0)
			json_object_set_new(out, "hint", stop_refused_hint(d));
	}
	json_decref(a);
	return out;
}

static json_t *op_command(json_t *req, const char *cmd, unsigned timeout_ms)
{
	json_t *args = json_object_get(req, "args");
	const char *id = json_string_value(json_object_get(req, "device"));
	struct device *d = id ? dev_find(id) : NULL;
	struct pl_error err;
	json_t *a, *out;
	enum pl_err rc;

	if (!d)
		return fail_answer(PL_ERR_INPUT, "call list_devices for the devices linked now", "no such connected device");
	if (strcmp(cmd, "start") == 0 && start_ready(d, args, &err)) {
		dev_unref(d);
		return error_answer(&err);
	}
	json_int_t auto_stop = json_integer_value(json_object_get(args, "auto_stop_seconds"));
	json_object_del(args, "auto_stop_seconds");
	if ((rc = device_command(d, cmd, args, timeout_ms, &a, &err))) {
		if (!err.hint[0])
			snprintf(err.hint, sizeof(err.hint), "call list_devices to see the device's state");
		dev_unref(d);
		return error_answer(&err);
	}
	if (strcmp(cmd, "start") == 0 && json_is_true(json_object_get(a, "ok"))) {
		note_call_graph(args, a);
		note_duration(d, a, auto_stop);
	}
	if (strcmp(cmd, "stop") == 0 && json_is_true(json_object_get(a, "ok")))
		await_stopped_session(d, a);
	out = command_answer(d, cmd, a);
	dev_unref(d);
	return out;
}

static json_t *op_disconnect(json_t *req)
{
	const char *id = json_string_value(json_object_get(req, "device"));
	struct device *d = id ? dev_find(id) : NULL;
	struct pl_error ignored;
	json_t *out, *a = NULL;
	long long deadline;

	if (!d)
		return fail_answer(PL_ERR_INPUT, "call list_devices for the devices linked now", "no such connected device");
	pthread_mutex_lock(&d->lock);
	bool profiling = strcmp(d->state, "profiling") == 0 || strcmp(d->state, "paused") == 0;
	pthread_mutex_unlock(&d->lock);
	if (profiling)
		device_command(d, "stop", NULL, 5000, &a, &ignored);
	json_decref(a);
	shutdown(__atomic_load_n(&d->fd, __ATOMIC_ACQUIRE), SHUT_RDWR);
	deadline = mono_ms() + 10000;
	pthread_mutex_lock(&d->lock);
	/* reader_done is the reader thread's, set under the lock and broadcast */
	while (!d->reader_done && mono_ms() < deadline)
		cond_wait_until(&d->cond, &d->lock, deadline);
	snprintf(d->reason, sizeof(d->reason), "disconnected by disconnect_device");
	snprintf(d->state, sizeof(d->state), "disconnected");
	dev_publish_locked(d);
	out = json_pack("{s:b,s:o}", "ok", 1, "device", dev_json(d));
	pthread_mutex_unlock(&d->lock);
	dev_unref(d);
	return out;
}

/* The link checks again what the tool checked: its own flags and the
 * phrases, so a request file from anywhere cannot widen the gates. */
static json_t *gate(json_t *req, const char *op)
{
	json_t *args = json_object_get(req, "args");
	const char *auth = json_string_value(json_object_get(args, "authorization"));
	const char *pid_auth = json_string_value(json_object_get(args, "pid_authorization"));

	if (strcmp(op, "list_processes") == 0 || strcmp(op, "status") == 0)
		return NULL;
	if (!link_.cfg.allow_control)
		return fail_answer(PL_ERR_USAGE, "restart perflens-mcp with --allow-device-control",
				   "device control is not enabled on this server");
	if (strcmp(op, "start") == 0) {
		json_int_t f = json_integer_value(json_object_get(args, "frequency"));
		json_int_t du = json_integer_value(json_object_get(args, "duration"));
		if (f < 1 || f > 100000 || du < 1 || du > 300)
			return fail_answer(PL_ERR_USAGE, "pass frequency_hz and interval_seconds within range",
					   "frequency must be 1..100000 Hz and the interval 1..300 s");
	}
	if (strcmp(op, "configure_metrics") == 0 && json_object_get(args, "interval") &&
	    (json_integer_value(json_object_get(args, "interval")) < 1 ||
	     json_integer_value(json_object_get(args, "interval")) > 3600))
		return fail_answer(PL_ERR_USAGE, "pass interval_seconds within range",
				   "the metrics interval must be 1..3600 s");
	if (strcmp(op, "start") == 0 || strcmp(op, "resume") == 0) {
		if (!auth || strcmp(auth, PL_COLLECT_PHRASE) != 0)
			return fail_answer(PL_ERR_PATH, "only the user gives the phrase: ask whether you may profile this device",
					   "the request lacks the collection authorization phrase (authorization)");
		if (strcmp(op, "start") == 0 && (!pid_auth || strcmp(pid_auth, PL_PID_ATTACH_PHRASE) != 0))
			return fail_answer(PL_ERR_PATH, "only the user gives the phrase: ask whether you may attach to this process",
					   "the request lacks the pid attach phrase (pid_authorization)");
	}
	return NULL;
}

/* The device's arguments of a request: what the agent's command takes. */
static json_t *agent_args(json_t *req)
{
	json_t *args = json_deep_copy(json_object_get(req, "args"));

	if (!json_is_object(args)) {
		json_decref(args);
		return json_object();
	}
	json_object_del(args, "authorization");
	json_object_del(args, "pid_authorization");
	return args;
}

static void *request_main(void *arg)
{
	json_t *req = arg, *answer, *args;
	const char *op = json_string_value(json_object_get(req, "op"));
	char id[64];
	static const struct {
		const char *op, *cmd;
		unsigned timeout_ms;
	} commands[] = {
		{"start", "start", 120000}, {"stop", "stop", 30000}, {"pause", "pause", 30000},
		{"resume", "resume", 30000}, {"status", "status", 30000},
		{"list_processes", "list_processes", 60000}, {"configure_metrics", "configure_metrics", 30000},
	};

	snprintf(id, sizeof(id), "%s", json_string_value(json_object_get(req, "request_id")));
	if (!op)
		answer = fail_answer(PL_ERR_USAGE, "call the tool again", "the request names no op");
	else if (strcmp(op, "connect") == 0)
		answer = link_.cfg.allow_control ? op_connect(req)
			 : fail_answer(PL_ERR_USAGE, "restart perflens-mcp with --allow-device-control",
				       "device control is not enabled on this server");
	else if (strcmp(op, "disconnect") == 0)
		answer = (answer = gate(req, op)) ? answer : op_disconnect(req);
	else {
		answer = NULL;
		for (size_t i = 0; i < PL_ARRAY_LEN(commands) && !answer; i++)
			if (strcmp(op, commands[i].op) == 0) {
				if (!(answer = gate(req, op))) {
					json_t *clean = json_deep_copy(req);
					args = agent_args(req);
					json_object_set_new(clean, "args", args);
					answer = op_command(clean, commands[i].cmd, commands[i].timeout_ms);
					json_decref(clean);
				}
			}
		if (!answer)
			answer = fail_answer(PL_ERR_USAGE, "call the tool again", "unknown op");
	}
	coll_channel_answer(link_.cfg.artifact_root, id, answer);
	json_decref(answer);
	/* The request may hold a pairing code: wipe it before freeing. */
	json_t *code = json_object_get(json_object_get(req, "args"), "pairing_code");
	if (json_is_string(code))
		json_string_set(code, "");
	json_decref(req);
	pthread_mutex_lock(&link_.lock);
	link_.active_requests--;
	pthread_mutex_unlock(&link_.lock);
	return NULL;
}

static void *servicer_main(void *arg)
{
	(void)arg;
	while (!__atomic_load_n(&link_.stopping, __ATOMIC_ACQUIRE)) {
		char id[64];
		json_t *req = coll_channel_take(link_.cfg.artifact_root, id, sizeof(id));
		pthread_t t;
		pthread_attr_t attr;

		if (!req) {
			/* The requests come as files from other processes: nothing
			 * here can signal them, so the folder is looked at every
			 * 15 ms; only a stop cuts the wait short. */
			long long until = mono_ms() + 15;
			pthread_mutex_lock(&link_.lock);
			while (!__atomic_load_n(&link_.stopping, __ATOMIC_ACQUIRE) && mono_ms() < until)
				cond_wait_until(&link_.cond, &link_.lock, until);
			pthread_mutex_unlock(&link_.lock);
			continue;
		}
		pthread_mutex_lock(&link_.lock);
		link_.active_requests++;
		pthread_mutex_unlock(&link_.lock);
		pthread_attr_init(&attr);
		pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
		if (pthread_create(&t, &attr, request_main, req) != 0) {
			json_t *a = fail_answer(PL_ERR_INTERNAL, "retry", "the link could not start a thread");
			coll_channel_answer(link_.cfg.artifact_root, id, a);
			json_decref(a);
			json_decref(req);
			pthread_mutex_lock(&link_.lock);
			link_.active_requests--;
			pthread_mutex_unlock(&link_.lock);
		}
		pthread_attr_destroy(&attr);
	}
	return NULL;
}

/* ---------------------------------------------------------- lifecycle */

/* devices/ of an earlier server describes links that are gone. */
static void clear_old_devices(const char *root)
{
	char dir[4200], path[4500];
	struct dirent *de;
	DIR *d;

	snprintf(dir, sizeof(dir), "%s/%s", root, COLL_DEVICES_DIR);
	if (!(d = opendir(dir)))
		return;
	while ((de = readdir(d))) {
		size_t n = strlen(de->d_name);
		if (n > 5 && strcmp(de->d_name + n - 5, ".json") == 0) {
			snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
			unlink(path);
		}
	}
	closedir(d);
	snprintf(dir, sizeof(dir), "%s/%s", root, COLL_REQUESTS_DIR);
	if ((d = opendir(dir))) {
		while ((de = readdir(d)))
			if (de->d_name[0] != '.') {
				snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
				unlink(path);
			}
		closedir(d);
	}
}

static bool spawn(pthread_t *t, void *(*fn)(void *))
{
	sigset_t all, old;
	int rc;

	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	rc = pthread_create(t, NULL, fn, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return rc == 0;
}

enum pl_err coll_link_start(const struct coll_link_cfg *cfg, struct pl_error *err)
{
	struct pl_error e2;
	char dir[4200];
	json_t *state;
	int e;

	if (link_.running)
		return PL_OK;
	if (!link_.cond_made) {
		cond_init_mono(&link_.cond);
		link_.cond_made = true;
	}
	link_.cfg = *cfg;
	__atomic_store_n(&link_.stopping, false, __ATOMIC_RELEASE);
	if (!cfg->artifact_root)
		return pl_fail(err, PL_ERR_USAGE, "add --artifact-root DIR",
			       "the agent link needs --artifact-root DIR for its sessions");
	snprintf(dir, sizeof(dir), "%s/%s", cfg->artifact_root, COLL_REQUESTS_DIR);
	if (pl_make_dirs(dir, &e2))
		return pl_fail(err, PL_ERR_OUTPUT, "pass an --artifact-root you can write",
			       "cannot create '%s'", dir);
	snprintf(dir, sizeof(dir), "%s/%s", cfg->artifact_root, COLL_RESPONSES_DIR);
	pl_make_dirs(dir, &e2);
	snprintf(dir, sizeof(dir), "%s/%s", cfg->artifact_root, COLL_SESSIONS_DIR);
	pl_make_dirs(dir, &e2);
	spool_sweep(cfg->artifact_root);
	clear_old_devices(cfg->artifact_root);
	if (cfg->listen_addr && open_listener(err))
		return err->code;
	state = json_pack("{s:i,s:b,s:o,s:i,s:b}", "server_pid", (int)getpid(), "control", cfg->allow_control,
			  "listen", cfg->listen_addr ? json_string(cfg->listen_addr) : json_null(),
			  "port", (int)link_.port, "pairing_code_set", cfg->pairing_code[0] != '\0');
	if ((e = coll_write_json(cfg->artifact_root, COLL_LINK_STATE, state)))
		coll_link_log("cannot write %s: %s (list_devices will not show the link's own state)",
			      COLL_LINK_STATE, strerror(e));
	json_decref(state);
	if (cfg->listen_addr && !(link_.have_listener = spawn(&link_.listener, listener_main)))
		return pl_fail(err, PL_ERR_INTERNAL, NULL, "cannot start the agent listener thread");
	if (!(link_.have_servicer = spawn(&link_.servicer, servicer_main)))
		return pl_fail(err, PL_ERR_INTERNAL, NULL, "cannot start the agent link's servicer thread");
	link_.running = true;
	if (cfg->listen_addr)
		coll_link_log("listening on %s:%u%s", cfg->listen_addr, link_.port,
			      cfg->allow_control ? "; device control enabled" : "");
	return PL_OK;
}

/* Readers that have not ended yet (under link_.lock). */
static size_t readers_live_locked(void)
{
	size_t live = 0;

	for (size_t i = 0; i < link_.ndevices; i++)
		live += !__atomic_load_n(&link_.devices[i]->reader_done, __ATOMIC_ACQUIRE);
	return live;
}

unsigned coll_link_port(void)
{
	return link_.port;
}

void coll_link_stop(void)
{
	long long deadline = mono_ms() + 10000;

	if (!link_.running)
		return;
	pthread_mutex_lock(&link_.lock);
	__atomic_store_n(&link_.stopping, true, __ATOMIC_RELEASE);
	pthread_cond_broadcast(&link_.cond);  /* the servicer's wait */
	pthread_mutex_unlock(&link_.lock);
	if (link_.have_listener)
		pthread_join(link_.listener, NULL);
	if (link_.have_servicer)
		pthread_join(link_.servicer, NULL);
	pthread_mutex_lock(&link_.lock);
	for (size_t i = 0; i < link_.ndevices; i++)
		shutdown(__atomic_load_n(&link_.devices[i]->fd, __ATOMIC_ACQUIRE), SHUT_RDWR);
	/* Readers finalize their sessions and leave (each broadcasts). */
	while (readers_live_locked() && mono_ms() < deadline)
		cond_wait_until(&link_.cond, &link_.lock, deadline);
	pthread_mutex_unlock(&link_.lock);
	if (link_.listen_fd >= 0)
		close(link_.listen_fd);
	link_.listen_fd = -1;
	link_.running = false;
}
