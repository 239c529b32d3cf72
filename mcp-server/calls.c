/* calls.c - running tools/call in sandboxed workers (see calls.h).
 *
 * The worker is forked per call (sandbox/, by its zygote when main()
 * started one), confined to the allowed roots (read) and the artifact
 * root (write), runs the registry handler and writes one JSON document
 * to its pipe: {"ok": RESULT} or {"error": {"code","message","hint"}}.
 * What it runs travels by value, as the bytes of the sandbox job
 * "tools/call" (registered before main, so the zygote knows it too):
 * {"tool": NAME, "args": ARGS, "ctx": {"roots", "artifact_root",
 * "writes", "exec", "collect", "limits": {...}}}.  The parent turns that, or the way the
 * worker died (crash, seccomp kill, timeout, oversize answer), into the
 * CallToolResult; the server itself never runs tool code and keeps
 * serving whatever happens to a worker.
 */
#include "calls.h"
#include "store/artifact.h"
#include "sandbox/sandbox.h"

#include <limits.h>
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
	bool cancelled;
	const struct tool_def *tool;
	struct sbx_worker *w;
	struct timespec started;
};

struct worker_arg {
	const struct tool_def *tool;
	const struct tool_ctx *ctx;
	json_t *args;
};

#define JOB_NAME "tools/call"
#define MAX_JOB_ROOTS 32

static double ms_since(const struct timespec *t0)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (double)(now.tv_sec - t0->tv_sec) * 1e3 + (double)(now.tv_nsec - t0->tv_nsec) / 1e6;
}

/* ------------------------------------------------------ in the worker */

static json_t *run_tool(const struct worker_arg *a)
{
	struct pl_error err;
	json_t *result = NULL;

	json_t *doc;

	/* The server checked the arguments and filled their defaults. */
	if (tool_run(a->tool, a->ctx, a->args, &result, &err) == PL_OK &&
	    (doc = json_pack("{s:o}", "ok", result)))
		return doc;
	if (!err.code)
		pl_fail(&err, PL_ERR_INTERNAL, "report the call: this is a bug",
			"'%s' succeeded without a result", a->tool->name);
	return json_pack("{s:o}", "error", tool_error_json_new(&err));
}

static int write_doc(json_t *doc, int out_fd)
{
	char *text = doc ? json_dumps(doc, JSON_COMPACT | JSON_REAL_PRECISION(10)) : NULL;
	size_t n, off = 0;

	if (!text)
		return 5;  /* a result jansson cannot encode: the parent says so */
	n = strlen(text);

	while (off < n) {
		ssize_t w = write(out_fd, text + off, n - off);
		if (w <= 0)
			return 3;
		off += (size_t)w;
	}
	return 0;  /* `text` dies with the worker: see worker_job */
}

static uint64_t u64_of(json_t *obj, const char *key)
{
	return (uint64_t)json_integer_value(json_object_get(obj, key));
}

/* The job's "ctx" into `ctx` (strings borrowed from `j`). */
static bool ctx_from_json(json_t *j, struct tool_ctx *ctx, const char **roots)
{
	json_t *r = json_object_get(j, "roots"), *lim = json_object_get(j, "limits"), *v;
	size_t i;

	if (!json_is_array(r) || json_array_size(r) > MAX_JOB_ROOTS || !json_is_object(lim))
		return false;
	json_array_foreach(r, i, v)
		if (!(roots[i] = json_string_value(v)))
			return false;
	memset(ctx, 0, sizeof(*ctx));
	ctx->allowed_roots = roots;
	ctx->nroots = json_array_size(r);
	ctx->artifact_root = json_string_value(json_object_get(j, "artifact_root"));
	ctx->allow_writes = json_is_true(json_object_get(j, "writes"));
	ctx->allow_process_execution = json_is_true(json_object_get(j, "exec"));
	ctx->allow_collection = json_is_true(json_object_get(j, "collect"));
	ctx->allow_pid_attach = json_is_true(json_object_get(j, "pid_attach"));
	ctx->limits.max_input_bytes = u64_of(lim, "input_bytes");
	ctx->limits.max_records = u64_of(lim, "records");
	ctx->limits.max_line = u64_of(lim, "line");
	ctx->limits.max_depth = (uint32_t)u64_of(lim, "depth");
	ctx->limits.max_frames = (uint32_t)u64_of(lim, "frames");
	ctx->limits.max_stacks = (uint32_t)u64_of(lim, "stacks");
	return pl_sym_cfg_from_json(json_object_get(j, "sym"), &ctx->sym);
}

static json_t *ctx_to_json(const struct tool_ctx *ctx)
{
	json_t *roots = json_array();
	const struct pl_limits *l = &ctx->limits;

	for (size_t i = 0; i < ctx->nroots; i++)
		json_array_append_new(roots, json_string(ctx->allowed_roots[i]));
	return json_pack("{s:o,s:s?,s:b,s:b,s:b,s:b,s:o,s:{s:I,s:I,s:I,s:I,s:I,s:I}}", "roots", roots,
		"artifact_root", ctx->artifact_root, "writes", ctx->allow_writes,
		"exec", ctx->allow_process_execution, "collect", ctx->allow_collection,
		"pid_attach", ctx->allow_pid_attach, "sym", pl_sym_cfg_to_json(&ctx->sym), "limits", "input_bytes", (json_int_t)l->max_input_bytes,
		"records", (json_int_t)l->max_records, "line", (json_int_t)l->max_line,
		"depth", (json_int_t)l->max_depth, "frames", (json_int_t)l->max_frames,
		"stacks", (json_int_t)l->max_stacks);
}

/* By exact name only: tool_find() would parse every tool's definition
 * in the worker, which starts with an empty cache. */
static const struct tool_def *tool_named(const char *name)
{
	for (size_t i = 0; name && i < tool_count; i++)
		if (strcmp(tool_table[i].name, name) == 0)
			return &tool_table[i];
	return NULL;
}

/* The job "tools/call", in the worker: decode, run, write the answer. */
static int worker_job(const void *buf, size_t len, int out_fd)
{
	json_t *job = json_loadb(buf, len, 0, NULL);
	const char *roots[MAX_JOB_ROOTS];
	struct tool_ctx ctx;
	struct worker_arg a = {tool_named(json_string_value(json_object_get(job, "tool"))), &ctx,
			       json_object_get(job, "args")};
	json_t *doc;
	int rc;

	if (!job || !a.tool || !a.args || !ctx_from_json(json_object_get(job, "ctx"), &ctx, roots))
		return 4;  /* cannot happen: the server built the job */
	doc = run_tool(&a);
	rc = write_doc(doc, out_fd);
	/* Nothing is freed: the worker exits now, and freeing would only
	 * walk (and fault in) memory between the answer and the exit. */
	return rc;
}

/* In a spare worker before its job comes: decode a made-up job and
 * encode an answer, as worker_job does around every tool, so that the
 * pages of that code (jansson's, number formatting) are touched while
 * nobody waits.  Measured: a list_hotspots job then takes about half the
 * time in the worker (1.0 to 0.5 ms on the project's VMs). */
static void worker_warm_up(void)
{
	const char *roots[MAX_JOB_ROOTS];
	struct tool_ctx ctx = {0};
	json_t *job = json_pack("{s:s,s:{s:s,s:i,s:f,s:b},s:o}", "tool", "list_hotspots", "args",
				"analysis_id", "an-00000000000000000000", "limit", 5,
				"min_percent", 0.5, "warm", 1, "ctx", ctx_to_json(&ctx));
	json_t *answer = json_pack("{s:{s:f,s:s,s:[I,n]}}", "ok", "percent", 12.5, "warm", "up", "list",
				   (json_int_t)1);
	char *text = job ? json_dumps(job, JSON_COMPACT) : NULL;
	json_t *back = text ? json_loads(text, 0, NULL) : NULL;

	if (back)
		(void)ctx_from_json(json_object_get(back, "ctx"), &ctx, roots);
	free(answer ? json_dumps(answer, JSON_COMPACT | JSON_REAL_PRECISION(10)) : NULL);
	json_decref(back);
	free(text);
	json_decref(answer);
	json_decref(job);
}

__attribute__((constructor)) static void register_job(void)
{
	/* Before main(), so that the zygote is forked knowing it. */
	if (sbx_register(JOB_NAME, worker_job, NULL))
		abort();
	sbx_set_warm_up(worker_warm_up);
}

/* The job's bytes for `a` (new). */
static char *job_new(const struct worker_arg *a, size_t *len)
{
	json_t *job = json_pack("{s:s,s:O,s:o}", "tool", a->tool->name, "args", a->args,
				"ctx", ctx_to_json(a->ctx));
	char *text = json_dumps(job, JSON_COMPACT);

	json_decref(job);
	*len = strlen(text);
	return text;
}

/* ----------------------------------------------------------- answers */

static void send_msg_new(const struct mcp_sink *sink, json_t *msg)
{
	sink->send(sink->opaque, msg);
	json_decref(msg);
}

static void progress(struct mcp_call *c, int done, const char *message)
{
	if (!c->progress_token)
		return;
	send_msg_new(&c->sink, json_pack("{s:s,s:s,s:{s:O,s:i,s:i,s:s}}", "jsonrpc", "2.0",
		"method", "notifications/progress", "params", "progressToken", c->progress_token,
		"progress", done, "total", 1, "message", message));
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

static void send_tool_ok(struct mcp_call *c, json_t *result)
{
	char *text = json_dumps(result, JSON_COMPACT | JSON_REAL_PRECISION(10));

	if (strlen(text) > MAX_TEXT_BYTES) {
		free(text);
		send_new_error(c, PL_ERR_LIMIT, "the answer is too large for a model to read",
				"ask for a smaller page (limit) or use read_artifact_page");
		return;
	}
	send_result(c, json_pack("{s:[{s:s,s:s}],s:O,s:b}", "content", "type", "text", "text", text,
				 "structuredContent", result, "isError", 0));
	free(text);
}

/* The worker's document, or how it died, into a CallToolResult. */
static void answer(struct mcp_call *c, const struct sbx_result *res, unsigned timeout_ms)
{
	json_error_t je;
	json_t *doc, *err;
	char msg[400];

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
	doc = json_loadb(res->data ? res->data : "", res->len, 0, &je);
	err = json_object_get(doc, "error");
	if (err) {
		struct pl_error e;
		tool_error_from_json(err, &e);
		send_tool_error(c, &e);
	} else if (json_object_get(doc, "ok")) {
		send_tool_ok(c, json_object_get(doc, "ok"));
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
	free(c);
}

static void track(struct mcp_server *s, struct mcp_call *c, bool add)
{
	pthread_mutex_lock(&s->lock);
	if (add) {
		PL_GROW(s->calls, s->calls_cap, s->ncalls + 1);
		s->calls[s->ncalls++] = c;
	} else {
		for (size_t i = 0; i < s->ncalls; i++)
			if (s->calls[i] == c) {
				s->calls[i] = s->calls[--s->ncalls];
				break;
			}
	}
	pthread_mutex_unlock(&s->lock);
}

/* What perf needs to read besides the profile: its libraries, the kernel's
 * symbols and PMU names, and the build-id cache perf record fills. */
static const char *const perf_reads[] = {
	"/usr", "/lib", "/lib64", "/etc/ld.so.cache", "/proc/kallsyms", "/proc/sys/kernel",
	"/sys/kernel/notes", "/sys/bus/event_source", "/sys/devices", "/root/.debug",
};

/* What perf record -a, perf sched and tracepoints read. */
static const char *const collection_reads[] = {"/proc", "/sys/kernel/tracing", "/sys/kernel/debug"};

/* A collection worker: perf events, the program perf starts (resolved
 * under the allowed roots, as the tool itself will check), /proc and the
 * tracing folders, and a deadline that covers the call's own timeout. */
static size_t collection_policy(const struct mcp_server *s, json_t *args, struct sbx_policy *pol,
				const char **reads, size_t n, size_t cap, char *target,
				size_t target_cap)
{
	const char *exe = json_string_value(json_object_get(args, "executable"));
	json_int_t timeout = json_integer_value(json_object_get(args, "timeout_seconds"));
	struct pl_error ignored;
	uint64_t ms;

	pol->allow_perf_events = true;
	if (exe && tool_resolve_input(&s->cfg.ctx, exe, target, target_cap, &ignored) == PL_OK)
		pol->exec_target = target;
	for (size_t i = 0; i < PL_ARRAY_LEN(collection_reads) && n < cap; i++)
		if (access(collection_reads[i], F_OK) == 0)
			reads[n++] = collection_reads[i];
	/* perf stops at the call's timeout (default 60 s); the worker gets
	 * time beyond it to write and answer. */
	ms = (uint64_t)(timeout > 0 ? timeout : 60) * 1000 + 30000;
	if (ms > pol->timeout_ms) {
		pol->timeout_ms = (uint32_t)ms;
		pol->max_cpu_seconds = ms / 1000 + 2;
	}
	return n;
}

/* Files the operator named for symbols, and the system's debug folder. */
static size_t symbol_reads(const struct pl_sym_cfg *sym, const char **reads, size_t n, size_t cap)
{
	for (size_t i = 0; i < sym->nbinaries && n < cap; i++)
		reads[n++] = sym->binaries[i];
	for (size_t i = 0; i < sym->nmodule_maps && n < cap; i++)
		reads[n++] = sym->module_maps[i].to;
	if (sym->sysroot && n < cap)
		reads[n++] = sym->sysroot;
	if (n < cap)
		reads[n++] = "/usr/lib/debug";
	return n;
}

/* The worker's confinement for tool `t`: the allowed roots and artifacts
 * to read, the artifact root to write (with --allow-writes), perf to run
 * for tools that need it (with --allow-process-execution), the network for
 * tools that may ask debuginfod (when a server is configured). */
static void policy_for(const struct mcp_server *s, const struct tool_def *t, json_t *args,
		       struct sbx_policy *pol, const char **reads, size_t cap, char *target,
		       size_t target_cap)
{
	const struct tool_ctx *ctx = &s->cfg.ctx;
	size_t n = 0;

	for (size_t i = 0; i < ctx->nroots && n < cap; i++)
		reads[n++] = ctx->allowed_roots[i];
	if (ctx->artifact_root && n < cap)
		reads[n++] = ctx->artifact_root;
	n = symbol_reads(&ctx->sym, reads, n, cap);
	memset(pol, 0, sizeof(*pol));
	if ((t->needs & TOOL_RUNS_PERF) && ctx->allow_process_execution && ctx->sym.perf_path) {
		pol->exec_path = ctx->sym.perf_path;
		for (size_t i = 0; i < PL_ARRAY_LEN(perf_reads) && n < cap; i++)
			if (access(perf_reads[i], F_OK) == 0)
				reads[n++] = perf_reads[i];
		if (ctx->sym.kallsyms_path && n < cap)
			reads[n++] = ctx->sym.kallsyms_path;
	}
	pol->allow_network = (t->needs & TOOL_USES_NETWORK) && ctx->sym.debuginfod_urls;
	pol->read_roots = reads;
	pol->nread_roots = n;
	pol->write_root = ctx->allow_writes ? ctx->artifact_root : NULL;
	pol->max_address_space = s->cfg.worker_memory;
	pol->max_cpu_seconds = s->cfg.tool_timeout_ms / 1000 + 2;
	pol->max_open_files = 256;
	pol->max_file_size = 8ULL << 30;
	pol->timeout_ms = s->cfg.tool_timeout_ms;
	pol->max_result_bytes = s->cfg.max_result_bytes;
	if ((t->needs & TOOL_COLLECTS) && pol->exec_path && ctx->allow_collection)
		pol->nread_roots = collection_policy(s, args, pol, reads, n, cap, target, target_cap);
}

struct mcp_call *mcp_call_start(struct mcp_server *s, struct mcp_session *sess,
				const struct mcp_sink *sink, json_t *id,
				const struct tool_def *t, json_t *args, bool stateless,
				json_t *progress_token)
{
	struct mcp_call *c = pl_xcalloc(1, sizeof(*c));
	struct worker_arg arg = {t, &s->cfg.ctx, args};
	const char *reads[128];
	char target[PATH_MAX];
	struct sbx_policy pol;
	struct pl_error err;
	char *job;
	size_t job_len;
	enum pl_err rc;

	c->sink = *sink;
	c->log_session = *sess;
	c->sess = sess;
	c->id = json_incref(id);
	c->progress_token = progress_token ? json_incref(progress_token) : NULL;
	c->stateless = stateless;
	c->tool = t;
	clock_gettime(CLOCK_MONOTONIC, &c->started);
	progress(c, 0, "started");
	if (s->cfg.no_sandbox) {
		/* Test builds only (--no-sandbox): the same call in-process,
		 * to measure what the sandbox costs. */
		json_t *doc = run_tool(&arg);
		char *text = doc ? json_dumps(doc, JSON_COMPACT) : NULL;
		struct sbx_result res = {.outcome = SBX_OK, .data = text, .len = text ? strlen(text) : 0};
		answer(c, &res, s->cfg.tool_timeout_ms);
		free(text);
		json_decref(doc);
		call_free(c);
		return NULL;
	}
	policy_for(s, t, args, &pol, reads, PL_ARRAY_LEN(reads), target, sizeof(target));
	job = job_new(&arg, &job_len);
	rc = sbx_spawn_job(&pol, JOB_NAME, job, job_len, &c->w, &err);
	free(job);
	if (rc) {
		send_new_error(c, PL_ERR_INTERNAL, err.text,
			       "the server could not start a worker; check its resource limits");
		call_free(c);
		return NULL;
	}
	track(s, c, true);
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

	if (!sbx_step(c->w))
		return false;
	track(s, c, false);
	sbx_finish(c->w, &res);
	mcp_log(&c->log_session, &c->sink, MCP_LOG_DEBUG, "perflens", "%s: %s in %.1f ms",
		c->tool->name, sbx_outcome_name(res.outcome), ms_since(&c->started));
	/* A cancelled request gets no response, as the spec asks. */
	if (!c->cancelled && res.outcome != SBX_CANCELLED)
		answer(c, &res, s->cfg.tool_timeout_ms);
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
