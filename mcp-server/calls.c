/* calls.c - tools/call in the server: start a sandboxed worker, follow
 * it, answer (see calls.h).
 *
 * The parent side of the worker pipe only: the job's bytes and what the
 * worker does with them are worker.c, the worker's confinement policy.c.
 * The worker is forked per call (sandbox/, by its zygote when main()
 * started one) and writes one document, {"ok": RESULT} or {"error":
 * {"code", "message", "hint", "exit_code"}}.  That, or the way the worker
 * died (crash, seccomp kill, timeout, oversize answer), becomes the
 * CallToolResult; the server itself never runs tool code and keeps
 * serving whatever happens to a worker.
 */
#include "calls.h"
#include "policy.h"
#include "worker.h"
#include "sandbox/sandbox.h"

#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <time.h>
#include <unistd.h>

/* Past this a result would cost a model too many tokens (about 12k). */
#define MAX_TEXT_BYTES (48 * 1024)

struct mcp_call {
	struct mcp_sink sink;
	struct mcp_session log_session; /* a copy: the log threshold at start */
	const struct mcp_session *sess; /* identity only, for cancellation */
	json_t *id;
	json_t *progress_token;
	bool stateless;
	atomic_bool cancelled;          /* set under s->lock by a cancel from another thread, read by the one stepping */
	const struct tool_def *tool;
	struct sbx_worker *w;
	struct timespec started;
	size_t scanned;                 /* worker output taken as progress records */
	struct mcp_server *server;
	json_t *args;                   /* checked arguments, for a follow-up */
	uint64_t done;                  /* the last progress sent from a record */
};

static double ms_since(const struct timespec *t0)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (double)(now.tv_sec - t0->tv_sec) * 1e3 + (double)(now.tv_nsec - t0->tv_nsec) / 1e6;
}

/* ----------------------------------------------------------- answers */

static void send_msg_new(const struct mcp_sink *sink, json_t *msg)
{
	sink->send(sink->opaque, msg);
	json_decref(msg);
}

static void send_progress(struct mcp_call *c, uint64_t done, uint64_t total, const char *message)
{
	json_t *params;

	if (!c->progress_token)
		return;
	params = json_pack("{s:O,s:I,s:s}", "progressToken", c->progress_token, "progress", (json_int_t)done,
			   "message", message);
	if (total)
		json_object_set_new(params, "total", json_integer((json_int_t)total));
	send_msg_new(&c->sink, json_pack("{s:s,s:s,s:o}", "jsonrpc", "2.0", "method",
					 "notifications/progress", "params", params));
}

/* The start (0 of 1) and the end (1 of 1) of a call that sent no
 * progress records; after records, their last value stands (a call that
 * stopped half-way did not read its total). */
static void progress(struct mcp_call *c, int done, const char *message)
{
	if (!c->done)
		send_progress(c, (uint64_t)done, 1, message);
}

/* One progress record of the worker, as a notification: values only
 * grow (the worker's counter does), and the first record follows the
 * start's 0.  The total is sent when the worker knew it. */
static void forward_record(void *opaque, json_t *rec)
{
	struct mcp_call *c = opaque;
	uint64_t done = (uint64_t)json_integer_value(json_object_get(rec, "done"));
	uint64_t total = (uint64_t)json_integer_value(json_object_get(rec, "total"));
	const char *unit = json_string_value(json_object_get(rec, "unit"));
	char msg[96];

	if (done <= c->done)
		return;
	c->done = done;
	if (unit && strcmp(unit, "ms") == 0)
		snprintf(msg, sizeof(msg), "%.1f s of %.1f s", done / 1e3, total / 1e3);
	else if (total)
		snprintf(msg, sizeof(msg), "read %.1f of %.1f MB", done / 1e6, total / 1e6);
	else
		snprintf(msg, sizeof(msg), "read %.1f MB", done / 1e6);
	send_progress(c, done, total >= done ? total : 0, msg);
}

/* The worker's progress records that came since the last look. */
static void forward_progress(struct mcp_call *c)
{
	const char *data;
	size_t len = sbx_output(c->w, &data);

	if (c->scanned < len && data[c->scanned] == MCP_PROGRESS_MARK)
		c->scanned += mcp_progress_records(data + c->scanned, len - c->scanned, forward_record, c);
}

static void send_result(struct mcp_call *c, json_t *result_new)
{
	mcp_send_result_new(&c->sink, c->id, c->stateless, result_new);
}

static void send_tool_error(struct mcp_call *c, const struct pl_error *err)
{
	/* Notifications go before the response: over HTTP the response
	 * ends the exchange. */
	mcp_log(&c->log_session, &c->sink, MCP_LOG_WARNING, "perflens", "%s failed: %s",
		c->tool->name, err->text);
	send_result(c, mcp_tool_error_new(err));
}

/* The error of code `code` made here, in the parent. */
static void send_new_error(struct mcp_call *c, enum pl_err code, const char *message,
			   const char *hint)
{
	struct pl_error err;

	pl_fail(&err, code, hint, "%s", message);
	send_tool_error(c, &err);
}

#define DUMP_FLAGS (JSON_COMPACT | JSON_REAL_PRECISION(10))

/* The plain answer's message written out from the result's text `text`
 * (`n` bytes) for a sink that takes text (stdio): the same bytes the
 * sink would write for the message send_tool_ok builds, without dumping
 * the result a second time.  Its text block is `text` as a JSON string
 * and its structuredContent is `text` itself, which is what jansson
 * writes for the result there with the same flags.  True when sent. */
static bool send_tool_ok_text(struct mcp_call *c, const char *text, size_t n)
{
	json_t *str = json_stringn(text, n);
	char *id = json_dumps(c->id, DUMP_FLAGS | JSON_ENCODE_ANY);
	char *quoted = str ? json_dumps(str, DUMP_FLAGS | JSON_ENCODE_ANY) : NULL;
	struct pl_buf line = {0};
	bool sent = id && quoted;

	if (sent) {
		pl_buf_addf(&line, "{\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{\"content\":[{\"type\":"
			    "\"text\",\"text\":%s}],\"structuredContent\":", id, quoted);
		pl_buf_add(&line, text, n);
		pl_buf_adds(&line, ",\"isError\":false}}");
		c->sink.send_text(c->sink.opaque, line.data, line.len);
	}
	pl_buf_release(&line);
	free(quoted);
	free(id);
	json_decref(str);
	return sent;
}

/* The result as text and structured content, then the tool's own content
 * blocks (a picture), which cost no text budget: a model sees an image
 * at its own price. */
static void send_tool_ok(struct mcp_call *c, json_t *result, json_t *blocks)
{
	char *text = json_dumps(result, DUMP_FLAGS);
	size_t n = strlen(text);
	json_t *answer, *block;
	size_t i;

	if (n > MAX_TEXT_BYTES) {
		free(text);
		send_new_error(c, PL_ERR_LIMIT, "the answer is too large for a model to read",
				"ask for a smaller page (limit) or use read_artifact_page");
		return;
	}
	/* The common answer (stdio, structured, no picture, not stateless):
	 * written from `text`, the result is not dumped a second time. */
	if (c->sink.send_text && !c->stateless && !json_array_size(blocks) &&
	    !mcp_version_before_structured(c->log_session.version) &&
	    send_tool_ok_text(c, text, n)) {
		free(text);
		return;
	}
	answer = json_pack("{s:[{s:s,s:s}],s:O,s:b}", "content", "type", "text", "text", text,
			   "structuredContent", result, "isError", 0);
	/* 2025-03-26 has no structuredContent: the same JSON is the text. */
	if (!c->stateless && mcp_version_before_structured(c->log_session.version))
		json_object_del(answer, "structuredContent");
	json_array_foreach(blocks, i, block)
		if (json_is_object(block))
			json_array_append(json_object_get(answer, "content"), block);
	send_result(c, answer);
	free(text);
}

/* ---------------------------------------------------------- follow-ups */

/* A call's follow-up (registry.h: symbolize's index build) runs in a
 * worker of its own, started once the answer went out, on a thread that
 * waits for it and drops its result.  One at a time: a call that asks
 * while one runs leaves the work to a later call. */
static atomic_bool followup_busy;

struct followup {
	struct mcp_server *s;
	const struct tool_def *t;
	json_t *args;
};

static void *followup_thread(void *arg)
{
	struct followup *f = arg;
	struct mcp_policy *p = pl_xmalloc(sizeof(*p));
	struct sbx_worker *w;
	struct sbx_result res;
	struct pl_error err;
	size_t len;
	char *job = mcp_job_new(f->t, f->args, true, &len);

	mcp_policy_for(&f->s->cfg, f->t, f->args, p);
	if (sbx_spawn_job(&p->pol, MCP_JOB_NAME, job, len, &w, &err) == PL_OK) {
		while (!sbx_step(w)) {
			struct pollfd pfd = {sbx_fd(w), POLLIN, 0};
			int t = sbx_timeout_left_ms(w);
			poll(&pfd, 1, t < 0 || t > 200 ? 200 : t);
		}
		sbx_finish(w, &res);
		sbx_result_release(&res);
	}
	free(job);
	free(p);
	json_decref(f->args);
	free(f);
	atomic_store(&followup_busy, false);
	return NULL;
}

static void start_followup(struct mcp_call *c)
{
	struct followup *f;
	pthread_attr_t attr;
	pthread_t th;

	if (!c->server || !c->args || atomic_exchange(&followup_busy, true))
		return;
	f = pl_xmalloc(sizeof(*f));
	*f = (struct followup){c->server, c->tool, json_deep_copy(c->args)};
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	if (pthread_create(&th, &attr, followup_thread, f) != 0) {
		json_decref(f->args);
		free(f);
		atomic_store(&followup_busy, false);
	}
	pthread_attr_destroy(&attr);
}

/* The worker's document, or how it died, into a CallToolResult. */
static void reply_from_worker(struct mcp_call *c, const struct sbx_result *res, unsigned timeout_ms)
{
	json_error_t je;
	json_t *doc, *err;
	char msg[400];
	size_t skip;

	progress(c, 1, "done");
	if (res->outcome == SBX_TIMEOUT) {
		snprintf(msg, sizeof(msg), "%s did not finish within %.1f s and was stopped",
			 c->tool->name, timeout_ms / 1000.0);
		send_new_error(c, PL_ERR_TIMEOUT, msg,
				"analyze a smaller input, or restart the server with a larger --tool-timeout");
		return;
	}
	if (res->outcome == SBX_OVERSIZE) {
		send_new_error(c, PL_ERR_LIMIT, res->detail, "ask for a smaller page (limit)");
		return;
	}
	if (res->outcome != SBX_OK) {
		snprintf(msg, sizeof(msg), "the %s worker failed: %s (%s)", c->tool->name,
			 res->detail, sbx_outcome_name(res->outcome));
		mcp_log(&c->log_session, &c->sink, MCP_LOG_ERROR, "perflens.sandbox", "%s", msg);
		send_new_error(c, PL_ERR_INTERNAL, msg,
			       "the server is still running; retry once, and report the call if it fails again");
		return;
	}
	skip = res->data ? mcp_progress_records(res->data, res->len, NULL, NULL) : 0;
	doc = json_loadb(res->data ? res->data + skip : "", res->len - skip, 0, &je);
	err = json_object_get(doc, "error");
	/* A perf the worker ran, killed by the filter it inherited: the
	 * audit record the server can read names the system call. */
	if (err && sbx_explain_child_sigsys(json_string_value(json_object_get(err, "message")),
					    (unsigned)res->elapsed_ms + 1000, msg, sizeof(msg)))
		json_object_set_new(err, "message", json_sprintf("%s%s",
				    json_string_value(json_object_get(err, "message")), msg));
	if (err) {
		struct pl_error e;
		tool_error_from_json(err, &e);
		send_tool_error(c, &e);
	} else if (json_object_get(doc, "ok")) {
		send_tool_ok(c, json_object_get(doc, "ok"), json_object_get(doc, "blocks"));
		if (json_is_true(json_object_get(doc, "followup")))
			start_followup(c);
	} else {
		send_new_error(c, PL_ERR_INTERNAL, "the worker's answer could not be read",
			       "retry once, and report the call if it fails again");
	}
	json_decref(doc);
}

/* --------------------------------------------------------- lifecycle */

static void call_free(struct mcp_call *c)
{
	json_decref(c->id);
	json_decref(c->progress_token);
	json_decref(c->args);
	free(c);
}

static void calls_add(struct mcp_server *s, struct mcp_call *c)
{
	pthread_mutex_lock(&s->lock);
	PL_GROW(s->calls, s->calls_cap, s->ncalls + 1);
	s->calls[s->ncalls++] = c;
	pthread_mutex_unlock(&s->lock);
}

static void calls_remove(struct mcp_server *s, struct mcp_call *c)
{
	pthread_mutex_lock(&s->lock);
	for (size_t i = 0; i < s->ncalls; i++)
		if (s->calls[i] == c) {
			s->calls[i] = s->calls[--s->ncalls];
			break;
		}
	pthread_mutex_unlock(&s->lock);
}

/* Test builds only (--no-sandbox): the same call in-process, to measure
 * what the sandbox costs. */
static void run_in_process(struct mcp_server *s, struct mcp_call *c, json_t *args)
{
	json_t *doc = mcp_worker_answer(c->tool, &s->cfg.ctx, args);
	char *text = doc ? json_dumps(doc, JSON_COMPACT) : NULL;
	struct sbx_result res = {.outcome = SBX_OK, .data = text, .len = text ? strlen(text) : 0};

	reply_from_worker(c, &res, s->cfg.tool_timeout_ms);
	free(text);
	json_decref(doc);
}

static struct mcp_call *call_new(struct mcp_session *sess, const struct mcp_sink *sink,
				 json_t *id, const struct tool_def *t, bool stateless,
				 json_t *progress_token)
{
	struct mcp_call *c = pl_xcalloc(1, sizeof(*c));

	c->sink = *sink;
	c->log_session = *sess;
	c->sess = sess;
	c->id = json_incref(id);
	c->progress_token = progress_token ? json_incref(progress_token) : NULL;
	c->stateless = stateless;
	c->tool = t;
	clock_gettime(CLOCK_MONOTONIC, &c->started);
	return c;
}

struct mcp_call *mcp_call_start(struct mcp_server *s, struct mcp_session *sess,
				const struct mcp_sink *sink, json_t *id,
				const struct tool_def *t, json_t *args, bool stateless,
				json_t *progress_token)
{
	struct mcp_call *c = call_new(sess, sink, id, t, stateless, progress_token);
	struct mcp_policy *p;
	struct pl_error err;
	size_t job_len;
	char *job;
	enum pl_err rc;

	progress(c, 0, "started");
	if (s->cfg.no_sandbox) {
		run_in_process(s, c, args);
		call_free(c);
		return NULL;
	}
	p = pl_xmalloc(sizeof(*p));
	mcp_policy_for(&s->cfg, t, args, p);
	c->server = s;
	c->args = json_incref(args);
	job = mcp_job_new(t, args, false, &job_len);
	rc = sbx_spawn_job(&p->pol, MCP_JOB_NAME, job, job_len, &c->w, &err);
	free(job);
	free(p);
	if (rc) {
		send_new_error(c, PL_ERR_INTERNAL, err.text,
			       "the server could not start a worker; check its resource limits");
		call_free(c);
		return NULL;
	}
	calls_add(s, c);
	return c;
}

int mcp_call_fd(const struct mcp_call *c)
{
	return sbx_fd(c->w);
}

int mcp_call_timeout_ms(const struct mcp_call *c)
{
	return sbx_timeout_left_ms(c->w);
}

bool mcp_call_step(struct mcp_server *s, struct mcp_call *c)
{
	struct sbx_result res;
	bool finished = sbx_step(c->w);

	if (!c->cancelled)
		forward_progress(c);
	if (!finished)
		return false;
	calls_remove(s, c);
	sbx_finish(c->w, &res);
	mcp_log(&c->log_session, &c->sink, MCP_LOG_DEBUG, "perflens", "%s: %s in %.1f ms",
		c->tool->name, sbx_outcome_name(res.outcome), ms_since(&c->started));
	/* A cancelled request gets no response, as the spec asks. */
	if (!c->cancelled && res.outcome != SBX_CANCELLED)
		reply_from_worker(c, &res, s->cfg.tool_timeout_ms);
	sbx_result_release(&res);
	call_free(c);
	return true;
}

void mcp_call_wait(struct mcp_server *s, struct mcp_call *c)
{
	for (;;) {
		struct pollfd pfd = {mcp_call_fd(c), POLLIN, 0};
		int timeout = mcp_call_timeout_ms(c);
		/* Wake up now and then even without a deadline, so a worker
		 * that dies without closing its pipe is still reaped. */
		poll(&pfd, 1, timeout < 0 || timeout > 200 ? 200 : timeout);
		if (mcp_call_step(s, c))
			return;
	}
}

void mcp_call_cancel(struct mcp_server *s, struct mcp_session *sess, json_t *id,
		     bool stateless)
{
	pthread_mutex_lock(&s->lock);
	for (size_t i = 0; i < s->ncalls; i++) {
		struct mcp_call *c = s->calls[i];
		/* A 2026-07-28 request has no session: its cancellation can
		 * only name the request id, among other stateless calls. */
		bool same = stateless ? c->stateless : c->sess == sess;
		if (same && json_equal(c->id, id)) {
			c->cancelled = true;
			sbx_cancel(c->w);
		}
	}
	pthread_mutex_unlock(&s->lock);
}

void mcp_call_abandon(struct mcp_server *s, struct mcp_call *c)
{
	pthread_mutex_lock(&s->lock);
	c->cancelled = true;
	sbx_cancel(c->w);
	pthread_mutex_unlock(&s->lock);
}
