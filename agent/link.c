/* link.c - one connection to a server: the hello, pairing, the command
 * queue, and the two ways to get a connection (--listen, --server).
 *
 * A receiver thread reads frames (64 KB cap and 64 queued commands until
 * the peer proved the pairing code, then 80 MB and 256: frame.h's
 * limits) and queues flag-2 frames; the session loop pops them with a
 * 1 s monotonic timeout and answers each.  Until `auth` succeeds every other command is answered
 * "unauthenticated"; three failed attempts or 30 s without one end the
 * link.  Only an authenticated link becomes A.link, the one chunks and
 * metrics go to.  Sends are bounded by SO_SNDTIMEO and TCP_USER_TIMEOUT;
 * a failed send marks the link dead and shuts the socket down, which ends
 * the receiver and then the session. */
#include "agent.h"
#include "cmd.h"
#include "collectors/health.h"
#include "wire.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#define QUEUE_PREAUTH 64
#define QUEUE_MAX 256
#define AUTH_MAX_FAILURES 3
#define AUTH_TIMEOUT_S 30

struct link {
	int fd;
	char peer[64];
	pthread_mutex_t mu;       /* the queue and the flags below */
	pthread_cond_t cv;
	char *q[QUEUE_MAX];
	size_t qlen[QUEUE_MAX];
	int qhead, qn;
	int dead;
	int authed;
	int features;
	int failures;
	char nonce[33];           /* our hello's nonce (hex), empty without a code */
	pthread_t recv_thr, metrics_thr;
	int metrics_started;
	struct metrics_outlet metrics_out;  /* the ticker's way back to this link */
};

static int link_alive(struct link *l)
{
	pthread_mutex_lock(&l->mu);
	int alive = !l->dead;
	pthread_mutex_unlock(&l->mu);
	return alive && !agent_quit;
}

static void link_kill(struct link *l)
{
	pthread_mutex_lock(&l->mu);
	if (!l->dead) {
		l->dead = 1;
		shutdown(l->fd, SHUT_RDWR);
	}
	pthread_cond_broadcast(&l->cv);
	pthread_mutex_unlock(&l->mu);
}

static int link_send(struct link *l, uint8_t flag, const char *data, size_t len)
{
	int rc = -1;
	pthread_mutex_lock(&A.send_mu);
	if (link_alive(l)) {
		rc = wire_send(l->fd, flag, data, len);
		if (rc < 0) {
			agent_log("send to %s failed: %s", l->peer,
				  errno == ETIMEDOUT ? "the server stopped reading (send timeout)" : strerror(errno));
			link_kill(l);
		}
	}
	pthread_mutex_unlock(&A.send_mu);
	return rc;
}

/* A frame on A.link, the current authenticated link (the collector's
 * outlet): -2 when there is none. */
static int agent_emit(uint8_t flag, const char *data, size_t len)
{
	int rc = -2;
	pthread_mutex_lock(&A.send_mu);
	struct link *l = A.link;
	if (l && link_alive(l)) {
		rc = wire_send(l->fd, flag, data, len);
		if (rc < 0) {
			agent_log("send to %s failed: %s", l->peer,
				  errno == ETIMEDOUT ? "the server stopped reading (send timeout)" : strerror(errno));
			link_kill(l);
		}
	}
	pthread_mutex_unlock(&A.send_mu);
	return rc;
}

static uint32_t link_gen;

/* The features of the current authenticated link (0 when none) and its
 * generation, which changes with every new authenticated link. */
static int link_current_features(uint32_t *gen)
{
	int f = 0;
	pthread_mutex_lock(&A.send_mu);
	if (A.link)
		f = A.link->features;
	*gen = link_gen;
	pthread_mutex_unlock(&A.send_mu);
	return f;
}

static const struct agent_outlet collector_outlet = {agent_emit, link_current_features};

/* ------------------------------------------------------------------ */
/* receiving                                                            */

static void *recv_main(void *arg)
{
	struct link *l = arg;
	struct frame_reader fr;
	uint8_t buf[65536];
	int unexpected = 0;
	frame_reader_init(&fr, AGENT_FRAME_PREAUTH_MAX);
	for (;;) {
		ssize_t n = recv(l->fd, buf, sizeof buf, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == ETIMEDOUT)
			agent_log("link to %s timed out: the server stopped reading (TCP_USER_TIMEOUT)", l->peer);
		else if (n < 0 && !l->dead)
			agent_log("link to %s failed: %s", l->peer, strerror(errno));
		if (n <= 0)
			break;
		size_t off = 0;
		while (off < (size_t)n) {
			size_t used;
			pthread_mutex_lock(&l->mu);
			fr.max = l->authed ? AGENT_FRAME_MAX : AGENT_FRAME_PREAUTH_MAX;
			pthread_mutex_unlock(&l->mu);
			enum frame_status s = frame_reader_feed(&fr, buf + off, (size_t)n - off, &used);
			off += used;
			if (s == FRAME_TOO_BIG || s == FRAME_NOMEM) {
				agent_log("%s sent a frame of %u bytes (flag %u), over the cap of %zu: closing",
					  l->peer, fr.len, fr.flag, fr.max);
				goto out;
			}
			if (s != FRAME_DONE)
				break;
			if (fr.flag != AGENT_FRAME_CMD) {
				if (unexpected++ < 3)
					agent_log("%s sent a frame with flag %u: ignored", l->peer, fr.flag);
				continue;
			}
			pthread_mutex_lock(&l->mu);
			int cap = l->authed ? QUEUE_MAX : QUEUE_PREAUTH;
			if (l->qn >= cap) {
				pthread_mutex_unlock(&l->mu);
				agent_log("%s queued more than %d commands: closing", l->peer, cap);
				goto out;
			}
			int slot = (l->qhead + l->qn) % QUEUE_MAX;
			l->qlen[slot] = fr.len;
			l->q[slot] = frame_reader_take(&fr);
			l->qn++;
			pthread_cond_signal(&l->cv);
			pthread_mutex_unlock(&l->mu);
		}
	}
out:
	frame_reader_release(&fr);
	link_kill(l);
	return NULL;
}

/* 1 and the frame; 0 after timeout_ms with none; -1 when the link is dead. */
static int pop(struct link *l, char **frame, size_t *len, int timeout_ms)
{
	struct timespec ts;
	int rc = 0;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	ts.tv_sec += timeout_ms / 1000;
	ts.tv_nsec += (long)(timeout_ms % 1000) * 1000000;
	if (ts.tv_nsec >= 1000000000) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000;
	}
	pthread_mutex_lock(&l->mu);
	while (l->qn == 0 && !l->dead) {
		if (pthread_cond_timedwait(&l->cv, &l->mu, &ts) == ETIMEDOUT)
			break;
	}
	if (l->dead) {
		rc = -1;
	} else if (l->qn > 0) {
		*frame = l->q[l->qhead];
		*len = l->qlen[l->qhead];
		l->qhead = (l->qhead + 1) % QUEUE_MAX;
		l->qn--;
		rc = 1;
	}
	pthread_mutex_unlock(&l->mu);
	return rc;
}

/* ------------------------------------------------------------------ */
/* answers                                                              */

static void reply(struct link *l, struct jw *w)
{
	if (!w->overflow)
		link_send(l, AGENT_FRAME_RESP, w->buf, w->len);
}

static void fail(struct jw *w, const char *msg)
{
	jw_kbool(w, "ok", 0);
	jw_kstr(w, "error", msg);
}

static void write_platform(struct jw *w)
{
	jw_key(w, "platform");
	jw_obj(w);
	jw_kstr(w, "arch", A.arch);
	jw_kstr(w, "kernel", A.kernel);
	jw_kstr(w, "perf_version", A.perf_version);
	jw_kint(w, "perf_event_paranoid", A.paranoid);
	jw_obj_end(w);
}

static void write_hello(struct link *l, struct jw *w)
{
	jw_obj(w);
	jw_kstr(w, "type", "hello");
	jw_kint(w, "version", 1);
	jw_kstr(w, "agent", "perflens");
	jw_kstr(w, "agent_version", AGENT_VERSION);
	jw_kstr(w, "auth", "token");
	write_platform(w);
	if (l->nonce[0]) {
		jw_key(w, "ext");
		jw_obj(w);
		jw_kstr(w, "pairing", "hmac-sha256-v1");
		jw_kstr(w, "nonce", l->nonce);
		jw_key(w, "features");
		jw_arr(w);
		jw_cstr(w, "maps");
		jw_cstr(w, "counters");
		if (!A.text_chunks)
			jw_cstr(w, "perf_data");
		jw_arr_end(w);
		jw_obj_end(w);
	}
	jw_obj_end(w);
}

static void write_strings(struct jw *w, const char *key, char list[][EVENT_NAME], int n)
{
	jw_key(w, key);
	jw_arr(w);
	for (int i = 0; i < n; i++)
		jw_cstr(w, list[i]);
	jw_arr_end(w);
}

static void write_caps(struct jw *w, const struct agent_caps *c)
{
	write_strings(w, "record_events", (char (*)[EVENT_NAME])c->record, c->n_record);
	write_strings(w, "stat_only_events", (char (*)[EVENT_NAME])c->stat_only, c->n_stat_only);
	jw_kstr(w, "callgraph_method", c->callgraph);
	jw_kbool(w, "pipe_mode", c->pipe_mode);
	jw_kbool(w, "fallback", c->fallback);
}

static void write_tri(struct jw *w, const char *key, int v)
{
	if (v < 0) {
		jw_key(w, key);
		jw_null(w);
	} else {
		jw_kbool(w, key, v);
	}
}

static const char *const CG_METHODS[] = {"fp", "dwarf", "lbr", "none"};
#define N_CG_METHODS (sizeof CG_METHODS / sizeof CG_METHODS[0])

/* Can call_graph `m` (CG_METHODS) run here?  NULL, or why not.  lbr only
 * where the probe saw perf record with it (perf_caps_detect). */
static const char *cg_refusal(const char *m)
{
	if (!A.pcaps.sampling)
		return "this device cannot sample (perf_event_open of cpu-clock failed)";
	if (strcmp(m, "dwarf") == 0 && A.pcaps.dwarf == 0)
		return "this device's perf has no DWARF unwinder (built without libunwind and libdw)";
	if (strcmp(m, "lbr") == 0 && A.pcaps.lbr != 1)
		return "perf cannot record the CPU's last branch records here (perf record --call-graph lbr "
		       "-e cycles failed: no branch stack sampling)";
	return NULL;
}

/* The methods cg_refusal lets run, comma-separated (mu). */
static void cg_possible(char *out, size_t cap)
{
	size_t len = 0;
	out[0] = '\0';
	for (size_t i = 0; i < N_CG_METHODS; i++)
		if (!cg_refusal(CG_METHODS[i]) && len < cap)
			len += (size_t)snprintf(out + len, cap - len, "%s%s", len ? ", " : "", CG_METHODS[i]);
	if (!out[0])
		snprintf(out, cap, "counting only");
}

/* Our extension to status (seed servers ignore it): what perf can do
 * here, known at startup, so a capture that cannot work is not started. */
static void write_perf_caps(struct jw *w)
{
	jw_key(w, "perf_caps");
	jw_obj(w);
	jw_kbool(w, "perf", A.pcaps.perf_ok);
	write_tri(w, "pmu", A.pcaps.pmu);
	jw_kbool(w, "sampling", A.pcaps.sampling);
	if (!A.pcaps.sampling)
		jw_kstr(w, "sampling_error", strerror(A.pcaps.open_errno));
	write_tri(w, "privileged", A.pcaps.privileged);
	jw_kint(w, "perf_event_paranoid", A.paranoid);
	jw_key(w, "call_graphs");
	jw_arr(w);
	for (size_t i = 0; i < N_CG_METHODS; i++)
		if (!cg_refusal(CG_METHODS[i]))
			jw_cstr(w, CG_METHODS[i]);
	jw_arr_end(w);
	jw_kbool(w, "counting", A.pcaps.perf_ok);
	jw_obj_end(w);
}

static void write_counters(struct jw *w)
{
	jw_key(w, "counters");
	jw_obj(w);
	jw_kint(w, "chunks_sent", (int64_t)A.counters.chunks_sent);
	jw_kint(w, "samples_sent", (int64_t)A.counters.samples_sent);
	jw_kint(w, "raw_bytes", (int64_t)A.counters.raw_bytes);
	jw_kint(w, "wire_bytes", (int64_t)A.counters.wire_bytes);
	jw_kint(w, "chunks_refused", (int64_t)A.counters.chunks_refused);
	jw_kint(w, "chunks_lost", (int64_t)A.counters.chunks_lost);
	jw_kint(w, "tails_cut", (int64_t)A.counters.tails_cut);
	jw_obj_end(w);
}

/* Our extension to status and stop (a seed server ignores it): what went
 * wrong in the capture, each with its fix (capture.c's capture_problem). */
static void write_problems(struct jw *w)
{
	if (A.n_problems == 0)
		return;
	jw_key(w, "capture_problems");
	jw_arr(w);
	for (int i = 0; i < A.n_problems; i++)
		jw_cstr(w, A.problems[i]);
	jw_arr_end(w);
}

static const char *state_name(enum agent_state s)
{
	return s == ST_PROFILING ? "profiling" : s == ST_PAUSED ? "paused" : "idle";
}

/* ------------------------------------------------------------------ */
/* commands                                                             */

struct ctx {
	struct link *l;
	struct cmd *c;
	struct jw *w;
};

static int arg_int(struct ctx *x, const char *key, int64_t *v)
{
	return aj_get_int(&x->c->doc, x->c->args, key, v);
}

static void pairing_hint(void)
{
	if (A.token_generated)
		fprintf(stderr, "Pairing code: %.*s\n", (int)A.token_len, A.token);
}

static void auth_failed(struct ctx *x, const char *why)
{
	x->l->failures++;
	agent_log("auth from %s failed (%d of %d): %s", x->l->peer, x->l->failures,
		  AUTH_MAX_FAILURES, why);
	pairing_hint();
	fail(x->w, "auth failed");
}

static void auth_success(struct ctx *x)
{
	pthread_mutex_lock(&x->l->mu);
	x->l->authed = 1;
	pthread_mutex_unlock(&x->l->mu);
}

/* The extensions both sides speak: the server's `features` that this
 * agent has (perf_data unless --text-chunks). */
static int agreed_features(const struct json_doc *d, const struct json_node *f)
{
	int feats = 0;

	for (const struct json_node *e = f && f->type == AJ_ARRAY ? aj_first(d, f) : NULL; e; e = aj_next(d, e)) {
		if (e->type == AJ_STRING && strcmp(e->str, "maps") == 0)
			feats |= FEAT_MAPS;
		if (e->type == AJ_STRING && strcmp(e->str, "counters") == 0)
			feats |= FEAT_COUNTERS;
		if (e->type == AJ_STRING && strcmp(e->str, "perf_data") == 0 && !A.text_chunks)
			feats |= FEAT_PERF_DATA;
	}
	return feats;
}

/* hmac-sha256-v1 (extension 1): the server proves the code with our
 * nonce and its own, we answer with our proof and the features agreed. */
static void auth_hmac(struct ctx *x)
{
	const struct json_doc *d = &x->c->doc;
	const char *sn = NULL, *proof = NULL;
	char want[65], mine[65];
	int feats;

	if (aj_get_str(d, x->c->args, "server_nonce", &sn) != 1 || !is_hex(sn, 32) ||
	    aj_get_str(d, x->c->args, "proof", &proof) != 1 || !is_hex(proof, 64)) {
		auth_failed(x, "hmac-sha256-v1 auth without a 32-hex server_nonce and a 64-hex proof");
		return;
	}
	pair_proof(A.token, A.token_len, "server", x->l->nonce, sn, want);
	if (!ct_equal(want, 64, proof, strlen(proof))) {
		auth_failed(x, "the server's proof does not match the pairing code");
		return;
	}
	pair_proof(A.token, A.token_len, "agent", x->l->nonce, sn, mine);
	x->l->features = feats = agreed_features(d, aj_get(d, x->c->args, "features"));
	jw_kbool(x->w, "ok", 1);
	jw_kstr(x->w, "proof", mine);
	jw_key(x->w, "features");
	jw_arr(x->w);
	if (feats & FEAT_MAPS)
		jw_cstr(x->w, "maps");
	if (feats & FEAT_COUNTERS)
		jw_cstr(x->w, "counters");
	if (feats & FEAT_PERF_DATA)
		jw_cstr(x->w, "perf_data");
	jw_arr_end(x->w);
	auth_success(x);
}

/* The seed's plaintext token, unless --require-proof. */
static void auth_token(struct ctx *x, const char *token)
{
	if (A.require_proof) {
		auth_failed(x, "a plaintext token was offered but --require-proof is set");
		return;
	}
	if (!ct_equal(A.token, A.token_len, token, strlen(token))) {
		auth_failed(x, "wrong pairing code");
		return;
	}
	jw_kbool(x->w, "ok", 1);
	auth_success(x);
}

static void cmd_auth(struct ctx *x)
{
	const struct json_doc *d = &x->c->doc;
	const char *method = NULL, *token = NULL;

	if (!A.has_token) {
		fail(x->w, "agent has no pairing code configured");
		return;
	}
	if (x->l->authed) {
		jw_kbool(x->w, "ok", 1);
		jw_kbool(x->w, "already", 1);
		return;
	}
	aj_get_str(d, x->c->args, "method", &method);
	if (method && strcmp(method, "hmac-sha256-v1") == 0)
		auth_hmac(x);
	else if (aj_get_str(d, x->c->args, "token", &token) == 1)
		auth_token(x, token);
	else
		auth_failed(x, method ? "unknown auth method" : "auth without a token or a proof");
}

static void cmd_ping(struct ctx *x)
{
	jw_kbool(x->w, "ok", 1);
}

static void cmd_status(struct ctx *x)
{
	struct jw *w = x->w;
	jw_kbool(w, "ok", 1);
	pthread_mutex_lock(&A.mu);
	jw_kstr(w, "state", state_name(A.state));
	jw_kint(w, "pid", A.pid);
	jw_kint(w, "frequency", A.frequency);
	jw_kint(w, "duration", A.duration);
	jw_kstr(w, "agent_version", AGENT_VERSION);
	jw_kstr(w, "perf_path", A.perf);
	jw_kint(w, "max_sample_rate", max_sample_rate());
	write_platform(w);
	write_perf_caps(w);
	if (A.caps.probed) {
		jw_key(w, "capabilities");
		jw_obj(w);
		write_caps(w, &A.caps);
		jw_obj_end(w);
		write_strings(w, "events", A.events, A.n_events);
		jw_kstr(w, "mode", A.counting ? "counting" : A.continuous ? "continuous" : "rounds");
	}
	if (A.state == ST_IDLE && A.capture_end[0])
		jw_kstr(w, "capture_end", A.capture_end);
	write_problems(w);
	if (x->l->features & FEAT_COUNTERS)
		write_counters(w);
	pthread_mutex_unlock(&A.mu);
}

static void cmd_list_processes(struct ctx *x)
{
	jw_kbool(x->w, "ok", 1);
	write_processes(x->w);
}

static void cmd_verify_pid(struct ctx *x)
{
	int64_t pid;
	if (arg_int(x, "pid", &pid) != 1 || pid <= 0 || pid > 0x7fffffff) {
		fail(x->w, "pid required (a positive integer)");
		return;
	}
	jw_kbool(x->w, "ok", 1);
	write_pid_info(x->w, (int)pid);
}

static int collecting(void)
{
	pthread_mutex_lock(&A.mu);
	int c = A.state != ST_IDLE;
	pthread_mutex_unlock(&A.mu);
	return c;
}

/* Set A.perf to path: absolute or a bare name on PATH, printing "perf version". */
static const char *set_perf(const char *path, char *version, size_t cap)
{
	if (!path[0] || strlen(path) >= sizeof A.perf || (path[0] != '/' && strchr(path, '/')))
		return "perf must be an absolute path or a bare name on PATH";
	if (perf_version(path, version, cap) < 0)
		return "that perf does not print 'perf version'";
	pthread_mutex_lock(&A.mu);
	snprintf(A.perf, sizeof A.perf, "%s", path);
	A.caps.probed = 0;
	pthread_mutex_unlock(&A.mu);
	snprintf(A.perf_version, sizeof A.perf_version, "%s", version);
	struct perf_caps pc;
	perf_caps_detect(&pc);
	pthread_mutex_lock(&A.mu);
	A.pcaps = pc;
	pthread_mutex_unlock(&A.mu);
	return NULL;
}

static void cmd_verify_perf(struct ctx *x)
{
	char version[160];
	const char *path = NULL;
	if (aj_get_str(&x->c->doc, x->c->args, "perf", &path) == 1) {
		if (collecting()) {
			fail(x->w, "cannot change perf while collecting: stop first");
			return;
		}
		const char *why = set_perf(path, version, sizeof version);
		if (why) {
			fail(x->w, why);
			return;
		}
	}
	jw_kbool(x->w, "ok", 1);
	if (perf_version(A.perf, version, sizeof version) < 0) {
		jw_kbool(x->w, "available", 0);
		jw_kstr(x->w, "error", "perf not found or not working");
		jw_kstr(x->w, "perf_path", A.perf);
		return;
	}
	char *argv[] = {A.perf, "stat", "-x", ",", "-e", "cpu-clock", "--", "true", NULL}, *err = NULL;
	int rc = run_perf(argv, 10000, 16384, NULL, &err, 0);
	int functional = rc == 0 && err && !strstr(err, "<not supported>") && !strstr(err, "<not counted>");
	jw_kbool(x->w, "available", 1);
	jw_kstr(x->w, "version", version);
	jw_kbool(x->w, "functional", functional);
	jw_key(x->w, "error");
	if (functional || !err)
		jw_null(x->w);
	else
		jw_str(x->w, err, strlen(err) > 1024 ? 1024 : strlen(err));
	jw_kint(x->w, "perf_event_paranoid", A.paranoid);
	jw_kstr(x->w, "perf_path", A.perf);
	free(err);
}

/* Probe pid unless the capabilities are of this very process. */
static int ensure_probe(int pid, uint64_t start)
{
	struct agent_caps caps;
	pthread_mutex_lock(&A.mu);
	int fresh = A.caps.probed && A.caps.pid == pid && A.caps.start_time == start;
	pthread_mutex_unlock(&A.mu);
	if (fresh)
		return 0;
	probe_caps(pid, &caps);
	caps.start_time = start;
	pthread_mutex_lock(&A.mu);
	A.caps = caps;
	pthread_mutex_unlock(&A.mu);
	return 0;
}

static int target_from_args(struct ctx *x, int *pid, uint64_t *start)
{
	int64_t p;
	int has = arg_int(x, "pid", &p);
	if (has < 0 || (has == 1 && (p <= 0 || p > 0x7fffffff))) {
		fail(x->w, "pid must be a positive integer");
		return -1;
	}
	pthread_mutex_lock(&A.mu);
	*pid = has == 1 ? (int)p : A.pid;
	pthread_mutex_unlock(&A.mu);
	if (*pid <= 0) {
		fail(x->w, "pid required");
		return -1;
	}
	if (coll_proc_stat_identity(*pid, start, NULL, 0, NULL) < 0) {
		char msg[64];
		snprintf(msg, sizeof msg, "process %d not found", *pid);
		fail(x->w, msg);
		return -1;
	}
	return 0;
}

static void cmd_reprobe(struct ctx *x)
{
	int pid;
	uint64_t start;
	if (collecting()) {
		fail(x->w, "cannot reprobe while profiling \u2014 stop first");
		return;
	}
	if (target_from_args(x, &pid, &start) < 0)
		return;
	pthread_mutex_lock(&A.mu);
	A.caps.probed = 0;
	pthread_mutex_unlock(&A.mu);
	ensure_probe(pid, start);
	jw_kbool(x->w, "ok", 1);
	pthread_mutex_lock(&A.mu);
	write_caps(x->w, &A.caps);
	pthread_mutex_unlock(&A.mu);
}

static void join_collector(void)
{
	pthread_mutex_lock(&A.mu);
	int running = A.collector_running;
	A.collector_running = 0;
	pthread_mutex_unlock(&A.mu);
	if (running)
		pthread_join(A.collector, NULL);
}

/* The events of args.events that were probed, or the default set. */
static void pick_events(struct ctx *x)
{
	const struct json_doc *d = &x->c->doc;
	const struct json_node *ev = aj_get(d, x->c->args, "events");
	A.n_events = 0;
	for (const struct json_node *e = ev && ev->type == AJ_ARRAY ? aj_first(d, ev) : NULL;
	     e && A.n_events < MAX_EVENTS; e = aj_next(d, e)) {
		if (e->type != AJ_STRING)
			continue;
		for (int i = 0; i < A.caps.n_record; i++)
			if (strcmp(e->str, A.caps.record[i]) == 0) {
				int dup = 0;
				for (int j = 0; j < A.n_events; j++)
					dup |= strcmp(A.events[j], e->str) == 0;
				if (!dup)
					snprintf(A.events[A.n_events++], EVENT_NAME, "%s", e->str);
			}
	}
	if (A.n_events == 0)
		perf_default_events(&A.caps, A.events, &A.n_events);
}

static int range_arg(struct ctx *x, const char *key, int lo, int hi, int *out)
{
	int64_t v;
	int has = arg_int(x, key, &v);
	if (has == 0)
		return 0;
	if (has < 0 || v < lo || v > hi) {
		char msg[128];
		snprintf(msg, sizeof msg, "%s must be an integer in %d..%d", key, lo, hi);
		fail(x->w, msg);
		return -1;
	}
	*out = (int)v;
	return 1;
}

/* start's call_graph ("fp", "dwarf", "lbr", "none"; absent: the probed method)
 * and counting (perf stat only) - our extensions: a seed agent ignores
 * both, and its answer's callgraph and mode say what it did.  A method
 * this device cannot run is refused, naming those it can. */
static int capture_mode_args(struct ctx *x, char cg[8], int *counting)
{
	const char *m = NULL;
	int b = 0;
	int has = aj_get_str(&x->c->doc, x->c->args, "call_graph", &m);
	if (has == 1) {
		if (strcmp(m, "fp") && strcmp(m, "dwarf") && strcmp(m, "lbr") && strcmp(m, "none")) {
			fail(x->w, "call_graph must be fp, dwarf, lbr or none");
			return -1;
		}
		pthread_mutex_lock(&A.mu);
		const char *why = cg_refusal(m);
		char msg[320], can[64];
		if (why) {
			cg_possible(can, sizeof can);
			snprintf(msg, sizeof msg, "call_graph %s: %s; it can do: %s", m, why, can);
		}
		pthread_mutex_unlock(&A.mu);
		if (why) {
			fail(x->w, msg);
			return -1;
		}
		snprintf(cg, 8, "%s", m);
	} else if (has < 0) {
		fail(x->w, "call_graph must be a string: fp, dwarf, lbr or none");
		return -1;
	}
	if (aj_get_bool(&x->c->doc, x->c->args, "counting", &b) == 1)
		*counting = b;
	return 0;
}

/* A capture's settings, read from `start` before anything runs. */
struct start_req {
	int pid, freq, dur, counting;
	uint64_t start;
	char cg[8];
};

/* The start's arguments, checked (each refusal answered): 0, or -1. */
static int start_args(struct ctx *x, struct start_req *r)
{
	pthread_mutex_lock(&A.mu);
	enum agent_state st = A.state;
	r->freq = A.frequency;
	r->dur = A.duration;
	pthread_mutex_unlock(&A.mu);
	if (st == ST_PROFILING) {
		fail(x->w, "already profiling");
		return -1;
	}
	if (st == ST_PAUSED) {
		fail(x->w, "already profiling (paused \u2014 use resume or stop)");
		return -1;
	}
	join_collector();
	if (range_arg(x, "frequency", 1, max_sample_rate(), &r->freq) < 0 ||
	    range_arg(x, "duration", 1, 300, &r->dur) < 0)
		return -1;
	r->cg[0] = '\0';
	r->counting = 0;
	if (capture_mode_args(x, r->cg, &r->counting) < 0 || target_from_args(x, &r->pid, &r->start) < 0)
		return -1;
	return 0;
}

/* A's capture fields set for `r` (A.mu held), a fresh capture's state. */
static void capture_arm(struct ctx *x, const struct start_req *r)
{
	A.pid = r->pid;
	A.pid_start = r->start;
	A.frequency = r->freq;
	A.duration = r->dur;
	pick_events(x);
	snprintf(A.cg_req, sizeof A.cg_req, "%s", r->cg);
	A.counting = r->counting;
	A.continuous = A.caps.pipe_mode && !A.force_rounds;
	A.stop_req = A.pause_req = A.restart_req = 0;
	A.capture_end[0] = '\0';
	A.n_problems = 0;
	A.maps_seq = 0;
	A.state = ST_PROFILING;
}

static void cmd_start(struct ctx *x)
{
	struct start_req r;

	if (start_args(x, &r) < 0)
		return;
	ensure_probe(r.pid, r.start);
	pthread_mutex_lock(&A.mu);
	if (A.caps.n_record == 0 && !r.counting) {
		pthread_mutex_unlock(&A.mu);
		char msg[96];
		snprintf(msg, sizeof msg, "no perf record events available for PID %d", r.pid);
		fail(x->w, msg);
		return;
	}
	capture_arm(x, &r);
	if (agent_thread(&A.collector, collector_main, (void *)&collector_outlet) != 0) {
		A.state = ST_IDLE;
		pthread_mutex_unlock(&A.mu);
		fail(x->w, "thread creation failed");
		return;
	}
	A.collector_running = 1;
	jw_kbool(x->w, "ok", 1);
	jw_kint(x->w, "pid", r.pid);
	jw_kint(x->w, "frequency", r.freq);
	jw_kint(x->w, "duration", r.dur);
	write_strings(x->w, "events", A.events, A.n_events);
	const char *cg_used = r.counting ? "" : !r.cg[0] ? A.caps.callgraph : strcmp(r.cg, "none") == 0 ? "" : r.cg;
	jw_kstr(x->w, "callgraph", cg_used);
	const char *mode = r.counting ? "counting" : A.continuous ? "continuous" : "rounds";
	jw_kstr(x->w, "mode", mode);
	pthread_mutex_unlock(&A.mu);
	agent_log("profiling pid %d at %d Hz, %d s chunks, %s mode, call graph %s", r.pid, r.freq, r.dur,
		  mode, cg_used[0] ? cg_used : "none");
}

/* Stop the capture (the chunk in flight is cut and sent first). */
void capture_stop(void)
{
	pthread_mutex_lock(&A.mu);
	A.stop_req = 1;
	pthread_cond_broadcast(&A.cv);
	pthread_mutex_unlock(&A.mu);
	join_collector();
	pthread_mutex_lock(&A.mu);
	A.state = ST_IDLE;
	A.stop_req = 0;
	pthread_mutex_unlock(&A.mu);
}

static void cmd_stop(struct ctx *x)
{
	if (!collecting()) {
		join_collector();
		fail(x->w, "not profiling");
		return;
	}
	capture_stop();
	jw_kbool(x->w, "ok", 1);
	pthread_mutex_lock(&A.mu);
	if (x->l->features & FEAT_COUNTERS)
		write_counters(x->w);
	write_problems(x->w);
	pthread_mutex_unlock(&A.mu);
}

/* pause and resume: move the capture from state `from` to `to` (the
 * collector sees pause_req and tears its perf down, or is woken to start
 * again); otherwise answer `refusal`. */
static void switch_state(struct ctx *x, enum agent_state from, enum agent_state to, const char *refusal)
{
	pthread_mutex_lock(&A.mu);
	if (A.state != from) {
		pthread_mutex_unlock(&A.mu);
		fail(x->w, refusal);
		return;
	}
	A.state = to;
	A.pause_req = to == ST_PAUSED;
	pthread_cond_broadcast(&A.cv);
	pthread_mutex_unlock(&A.mu);
	jw_kbool(x->w, "ok", 1);
}

static void cmd_pause(struct ctx *x)
{
	switch_state(x, ST_PROFILING, ST_PAUSED, "not profiling");
}

static void cmd_resume(struct ctx *x)
{
	switch_state(x, ST_PAUSED, ST_PROFILING, "not paused");
}

static void cmd_configure(struct ctx *x)
{
	int freq = 0, dur = 0;
	int hf = range_arg(x, "frequency", 1, max_sample_rate(), &freq);
	if (hf < 0)
		return;
	int hd = range_arg(x, "duration", 1, 300, &dur);
	if (hd < 0)
		return;
	pthread_mutex_lock(&A.mu);
	if (hf == 1 && freq != A.frequency) {
		A.frequency = freq;
		A.restart_req = A.state == ST_PROFILING && A.continuous;
	}
	if (hd == 1)
		A.duration = dur;
	jw_kbool(x->w, "ok", 1);
	jw_kint(x->w, "frequency", A.frequency);
	jw_kint(x->w, "duration", A.duration);
	pthread_mutex_unlock(&A.mu);
}

static int bool_arg(struct ctx *x, const char *key, int *out)
{
	int v, has = aj_get_bool(&x->c->doc, x->c->args, key, &v);
	if (has < 0) {
		char msg[96];
		snprintf(msg, sizeof msg, "%s must be true or false", key);
		fail(x->w, msg);
		return -1;
	}
	if (has == 1)
		*out = v;
	return 0;
}

static void cmd_configure_metrics(struct ctx *x)
{
	int en, net, disk, thr, iv;
	pthread_mutex_lock(&A.mu);
	en = A.m_enabled; net = A.m_network; disk = A.m_disk; thr = A.m_threads; iv = A.m_interval;
	pthread_mutex_unlock(&A.mu);
	if (bool_arg(x, "enabled", &en) < 0 || bool_arg(x, "network", &net) < 0 ||
	    bool_arg(x, "disk", &disk) < 0 || bool_arg(x, "threads", &thr) < 0 ||
	    range_arg(x, "interval", 1, 3600, &iv) < 0)
		return;
	pthread_mutex_lock(&A.mu);
	A.m_enabled = en; A.m_network = net; A.m_disk = disk; A.m_threads = thr; A.m_interval = iv;
	pthread_mutex_unlock(&A.mu);
	jw_kbool(x->w, "ok", 1);
	jw_kbool(x->w, "metrics_enabled", en);
	jw_kint(x->w, "interval", iv);
	jw_kbool(x->w, "network", net);
	jw_kbool(x->w, "disk", disk);
	jw_kbool(x->w, "threads", thr);
}

static void cmd_update(struct ctx *x)
{
	fail(x->w, "update is not supported: this agent never updates itself from the network; "
		   "updates are the operator's (replace the binary and restart it)");
	jw_kstr(x->w, "running_version", AGENT_VERSION);
}

static const struct {
	const char *name;
	void (*fn)(struct ctx *);
} COMMANDS[] = {
	{"auth", cmd_auth}, {"ping", cmd_ping}, {"status", cmd_status},
	{"list_processes", cmd_list_processes}, {"verify_pid", cmd_verify_pid},
	{"verify_perf", cmd_verify_perf}, {"reprobe", cmd_reprobe}, {"start", cmd_start},
	{"stop", cmd_stop}, {"pause", cmd_pause}, {"resume", cmd_resume},
	{"configure", cmd_configure}, {"configure_metrics", cmd_configure_metrics},
	{"update", cmd_update},
};

static void dispatch(struct link *l, const char *frame, size_t len, struct jw *w)
{
	struct cmd c;
	enum cmd_result r = cmd_decode(&c, frame, len);
	struct ctx x = {l, &c, w};
	if (r == CMD_NOT_JSON) {
		agent_log("%s sent a command that is not a JSON object (%s): dropped", l->peer, c.doc.err);
		cmd_release(&c);
		return;
	}
	if (r == CMD_NO_NAME) {
		cmd_release(&c);
		return;
	}
	jw_reset(w);
	jw_obj(w);
	if (c.id_invalid) {
		fail(w, "invalid id");
	} else {
		jw_kstr(w, "id", c.id);
		if (r == CMD_BAD_ARGS) {
			fail(w, "args must be an object");
		} else if (!l->authed && strcmp(c.name, "auth") != 0) {
			fail(w, "unauthenticated");
		} else {
			size_t i;
			for (i = 0; i < sizeof COMMANDS / sizeof COMMANDS[0]; i++)
				if (strcmp(c.name, COMMANDS[i].name) == 0)
					break;
			if (i < sizeof COMMANDS / sizeof COMMANDS[0]) {
				COMMANDS[i].fn(&x);
			} else {
				char msg[128];
				snprintf(msg, sizeof msg, "unknown command: %.100s", c.name);
				fail(w, msg);
			}
		}
	}
	jw_obj_end(w);
	if (w->overflow) {
		jw_reset(w);
		jw_obj(w);
		if (c.id)
			jw_kstr(w, "id", c.id);
		fail(w, "the answer is too large");
		jw_obj_end(w);
	}
	cmd_release(&c);
	reply(l, w);
}

/* ------------------------------------------------------------------ */
/* a session                                                            */

static void became_authed(struct link *l)
{
	pthread_mutex_lock(&A.send_mu);
	A.link = l;
	link_gen++;
	pthread_mutex_unlock(&A.send_mu);
	l->metrics_out = (struct metrics_outlet){l, link_alive, link_send};
	if (agent_thread(&l->metrics_thr, metrics_main, &l->metrics_out) == 0)
		l->metrics_started = 1;
	agent_log("session with %s authenticated", l->peer);
}

/* A link for `fd`, its lock and its monotonic condition (new), or NULL. */
static struct link *link_new(int fd, const char *peer)
{
	struct link *l = calloc(1, sizeof *l);
	pthread_condattr_t ca;

	if (!l)
		return NULL;
	l->fd = fd;
	snprintf(l->peer, sizeof l->peer, "%s", peer);
	pthread_mutex_init(&l->mu, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&l->cv, &ca);
	pthread_condattr_destroy(&ca);
	return l;
}

/* Our nonce for the pairing proof (with a code), or, tokenless (--server
 * to a seed server), a link authenticated at once; then the hello.  0, or
 * -1 when the link cannot start. */
static int link_open(struct link *l, struct jw *w)
{
	if (A.has_token) {
		uint8_t nonce[16];
		if (random_bytes(nonce, sizeof nonce) < 0) {
			agent_log("cannot read /dev/urandom for the pairing nonce: closing");
			return -1;
		}
		hex_encode(nonce, sizeof nonce, l->nonce);
	} else {
		l->authed = 1;
	}
	write_hello(l, w);
	return link_send(l, AGENT_FRAME_RESP, w->buf, w->len) < 0 ? -1 : 0;
}

/* The session loop: pop commands and answer them until the link ends, the
 * agent quits, or pairing fails (no proof within AUTH_TIMEOUT_S, or
 * AUTH_MAX_FAILURES wrong ones). */
static void serve_commands(struct link *l, struct jw *w)
{
	double t0 = mono_now();

	for (;;) {
		char *frame = NULL;
		size_t len = 0;
		int got = pop(l, &frame, &len, 1000);
		if (got < 0 || agent_quit)
			break;
		if (got == 0) {
			if (!l->authed && mono_now() - t0 > AUTH_TIMEOUT_S) {
				agent_log("%s sent no valid pairing proof in %d s: closing (servers before "
					  "0.10 cannot authenticate)", l->peer, AUTH_TIMEOUT_S);
				break;
			}
			continue;
		}
		int was = l->authed;
		dispatch(l, frame, len, w);
		free(frame);
		if (!was && l->authed)
			became_authed(l);
		if (l->failures >= AUTH_MAX_FAILURES) {
			agent_log("%d failed pairing attempts from %s: closing", AUTH_MAX_FAILURES, l->peer);
			break;
		}
	}
}

/* The link is over: no longer A.link, its socket shut, its threads
 * joined and its queued commands freed. */
static void link_end(struct link *l)
{
	pthread_mutex_lock(&A.send_mu);
	if (A.link == l)
		A.link = NULL;
	pthread_mutex_unlock(&A.send_mu);
	link_kill(l);
	pthread_join(l->recv_thr, NULL);
	if (l->metrics_started)
		pthread_join(l->metrics_thr, NULL);
	for (int i = 0; i < l->qn; i++)
		free(l->q[(l->qhead + i) % QUEUE_MAX]);
}

/* Run one connection to its end; 1 when it authenticated. */
static int session(int fd, const char *peer)
{
	struct link *l = link_new(fd, peer);
	struct jw w;
	int authed = 0;

	if (!l) {
		close(fd);
		return 0;
	}
	jw_init(&w, 1u << 20);
	if (link_open(l, &w) < 0 || agent_thread(&l->recv_thr, recv_main, l) != 0) {
		link_kill(l);
	} else {
		if (l->authed)
			became_authed(l);
		serve_commands(l, &w);
		authed = l->authed;
		link_end(l);
	}
	close(fd);
	jw_free(&w);
	pthread_mutex_destroy(&l->mu);
	pthread_cond_destroy(&l->cv);
	free(l);
	agent_log("session with %s ended", peer);
	return authed;
}

/* ------------------------------------------------------------------ */
/* sockets                                                              */

static void socket_options(int fd)
{
	int one = 1, idle = 60, intvl = 10, cnt = 6;
	unsigned tmo = (unsigned)A.send_timeout_ms;
	struct timeval tv = {A.send_timeout_ms / 1000, (A.send_timeout_ms % 1000) * 1000};
	setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof one);
	setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof idle);
	setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &intvl, sizeof intvl);
	setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &cnt, sizeof cnt);
	setsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &tmo, sizeof tmo);
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

int serve_listen(const char *bind_addr, int port)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
	int one = 1;
	if (inet_pton(AF_INET, bind_addr, &a.sin_addr) != 1) {
		agent_log("--bind '%s' is not an IPv4 address", bind_addr);
		return 2;
	}
	int lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (lfd < 0)
		return 1;
	setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	if (bind(lfd, (struct sockaddr *)&a, sizeof a) < 0 || listen(lfd, 1) < 0) {
		agent_log("cannot listen on %s:%d: %s", bind_addr, port, strerror(errno));
		close(lfd);
		return 1;
	}
	socklen_t al = sizeof a;
	getsockname(lfd, (struct sockaddr *)&a, &al);
	agent_log("listening on %s:%d", bind_addr, ntohs(a.sin_port));
	pairing_hint();
	while (!agent_quit) {
		struct pollfd p = {lfd, POLLIN, 0};
		if (poll(&p, 1, 2000) <= 0)
			continue;
		struct sockaddr_in peer;
		socklen_t pl = sizeof peer;
		int fd = accept4(lfd, (struct sockaddr *)&peer, &pl, SOCK_CLOEXEC);
		if (fd < 0) {
			if (errno != EINTR && errno != EAGAIN)
				agent_log("accept failed: %s; retrying in 1 s", strerror(errno));
			if (errno != EINTR && errno != EAGAIN)
				sleep_ms(1000);
			continue;
		}
		char name[64], ip[INET_ADDRSTRLEN];
		inet_ntop(AF_INET, &peer.sin_addr, ip, sizeof ip);
		snprintf(name, sizeof name, "%s:%d", ip, ntohs(peer.sin_port));
		agent_log("Connect from server: %s", name);
		socket_options(fd);
		session(fd, name);
		/* A --listen capture belongs to the server that started it. */
		if (collecting()) {
			agent_log("the link ended: stopping the capture");
			capture_stop();
		}
		pairing_hint();
	}
	close(lfd);
	return 0;
}

/* host's IPv4 address from /etc/hosts, read by hand: a static glibc
 * (the aarch64 agent) cannot load the NSS module that would. */
static int hosts_lookup(const char *host, struct in_addr *out)
{
	char buf[65536], *save = NULL;
	if (coll_read_text("/etc/hosts", buf, sizeof buf) <= 0)
		return -1;
	for (char *line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *hash = strchr(line, '#'), *s2 = NULL, *addr;
		if (hash)
			*hash = '\0';
		addr = strtok_r(line, " \t", &s2);
		if (!addr || inet_pton(AF_INET, addr, out) != 1)
			continue;
		for (char *name = strtok_r(NULL, " \t", &s2); name; name = strtok_r(NULL, " \t", &s2))
			if (strcasecmp(name, host) == 0)
				return 0;
	}
	return -1;
}

/* Numeric, else /etc/hosts: no DNS and no NSS, so the static agents
 * (musl and static glibc alike) resolve the same way everywhere. */
static int resolve(const char *host, struct in_addr *out)
{
	return inet_pton(AF_INET, host, out) == 1 || hosts_lookup(host, out) == 0 ? 0 : -1;
}

/* A connect bounded by 30 s (non-blocking, then poll). */
static int dial(const char *host, int port)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
	if (resolve(host, &a.sin_addr) < 0) {
		agent_log("cannot resolve '%s': give an IPv4 address or a name in /etc/hosts (the agent does no DNS)", host);
		return -1;
	}
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -1;
	if (connect(fd, (struct sockaddr *)&a, sizeof a) < 0 && errno != EINPROGRESS) {
		close(fd);
		return -1;
	}
	struct pollfd p = {fd, POLLOUT, 0};
	int err = 0;
	socklen_t el = sizeof err;
	if (poll(&p, 1, 30000) != 1 || getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &el) < 0 || err) {
		close(fd);
		return -1;
	}
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	return fd;
}

int serve_dial(const char *host, int port)
{
	int backoff = 1;
	char name[300];
	snprintf(name, sizeof name, "%s:%d", host, port);
	while (!agent_quit) {
		int fd = dial(host, port);
		if (fd < 0) {
			agent_log("cannot connect to %s: retrying in %d s", name, backoff);
		} else {
			agent_log("Connected to %s", name);
			socket_options(fd);
			if (session(fd, name)) {
				backoff = 1;  /* only a session that authenticated resets it */
				sleep_ms(1000);
				continue;
			}
			agent_log("the session with %s never authenticated: retrying in %d s", name, backoff);
		}
		for (int i = 0; i < backoff * 10 && !agent_quit; i++)
			sleep_ms(100);
		backoff = backoff * 2 > 30 ? 30 : backoff * 2;
	}
	return 0;
}
