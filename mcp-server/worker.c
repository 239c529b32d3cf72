/* worker.c - the tools/call job inside the sandboxed worker (worker.h).
 *
 * The worker was forked (by the zygote, or by the server) from a process
 * whose tool context was already final, so it decodes only the tool's
 * name and arguments, runs the tool through the registry's entry point
 * (tool_run) and writes one JSON document to its pipe, then exits; while
 * it runs, base/progress.h's reports go to the same pipe as progress
 * records ahead of the document.  The
 * parent side, which turns that document or the way the worker died into
 * the CallToolResult, is calls.c.
 */
#include "worker.h"
#include "base/progress.h"
#include "sandbox/sandbox.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The context every worker runs with; set once by mcp_worker_setup(). */
static const struct tool_ctx *worker_ctx;

json_t *mcp_worker_answer(const struct tool_def *t, const struct tool_ctx *ctx, json_t *args)
{
	struct pl_error err;
	json_t *result = NULL, *blocks = NULL, *doc;

	if (tool_run_blocks(t, ctx, args, &result, &blocks, &err) == PL_OK &&
	    (doc = json_pack("{s:o}", "ok", result))) {
		if (blocks)
			json_object_set_new(doc, "blocks", blocks);
		return doc;
	}
	if (!err.code)
		pl_fail(&err, PL_ERR_INTERNAL, "report the call: this is a bug",
			"'%s' succeeded without a result", t->name);
	return json_pack("{s:o}", "error", tool_error_json_new(&err));
}

/* The whole document on `out_fd`; the job's exit status (0 when sent). */
static int write_doc(json_t *doc, int out_fd)
{
	char *text = doc ? json_dumps(doc, JSON_COMPACT | JSON_REAL_PRECISION(10)) : NULL;
	size_t n, off = 0;

	if (!text)
		return 5;  /* nothing jansson could encode: the parent says so */
	n = strlen(text);
	while (off < n) {
		ssize_t w = write(out_fd, text + off, n - off);
		if (w <= 0)
			return 3;
		off += (size_t)w;
	}
	return 0;  /* `text` dies with the worker: see worker_job */
}

/* A progress record on the worker's pipe (see worker.h).  A failed write
 * is left to the answer's own write to notice. */
static void worker_progress(void *opaque, uint64_t done, uint64_t total, const char *unit)
{
	char line[128];
	int fd = *(int *)opaque, n;

	n = snprintf(line, sizeof(line), "%c{\"done\":%llu,\"total\":%llu,\"unit\":\"%s\"}\n",
		     MCP_PROGRESS_MARK, (unsigned long long)done, (unsigned long long)total, unit);
	if (n > 0 && (size_t)n < sizeof(line) && write(fd, line, (size_t)n) < 0)
		return;
}

size_t mcp_progress_records(const char *data, size_t len, void (*each)(void *opaque, json_t *rec),
			    void *opaque)
{
	size_t at = 0;

	while (at < len && data[at] == MCP_PROGRESS_MARK) {
		const char *nl = memchr(data + at, '\n', len - at);
		if (!nl)
			break;  /* not complete yet */
		if (each) {
			json_t *rec = json_loadb(data + at + 1, (size_t)(nl - data - at - 1), 0, NULL);
			if (rec)
				each(opaque, rec);
			json_decref(rec);
		}
		at = (size_t)(nl - data) + 1;
	}
	return at;
}

/* The job, in the worker: decode, run, write the answer. */
static int worker_job(const void *buf, size_t len, int out_fd)
{
	static int progress_fd;

	json_t *job = json_loadb(buf, len, 0, NULL);
	const struct tool_def *t = tool_find(json_string_value(json_object_get(job, "tool")));
	json_t *args = json_object_get(job, "args");

	if (!t || !json_is_object(args) || !worker_ctx)
		return 4;  /* cannot happen: the server built the job */
	tool_followup_set_running(json_is_true(json_object_get(job, "followup")));
	progress_fd = out_fd;
	pl_progress_set(worker_progress, &progress_fd, MCP_PROGRESS_INTERVAL_MS);
	/* Nothing is freed: the worker exits now, and freeing would only
	 * walk (and fault in) memory between the answer and the exit. */
	json_t *doc = mcp_worker_answer(t, worker_ctx, args);
	if (tool_followup_requested() && !tool_followup_running())
		json_object_set_new(doc, "followup", json_true());
	pl_progress_flush();
	pl_progress_set(NULL, NULL, 0);
	return write_doc(doc, out_fd);
}

/* In a spare worker before its job comes: decode a made-up job and
 * encode an answer, as worker_job does around every tool, so that the
 * pages of that code (jansson's, number formatting) are touched while
 * nobody waits.  Measured: a list_hotspots job then takes about half the
 * time in the worker (1.0 to 0.5 ms on the project's VMs). */
static void worker_warm_up(void)
{
	json_t *job = json_pack("{s:s,s:{s:s,s:i,s:f,s:b}}", "tool", "list_hotspots", "args",
				"analysis_id", "an-00000000000000000000", "limit", 5,
				"min_percent", 0.5, "warm", 1);
	json_t *answer = json_pack("{s:{s:f,s:s,s:[I,n]}}", "ok", "percent", 12.5, "warm", "up", "list",
				   (json_int_t)1);
	char *text = job ? json_dumps(job, JSON_COMPACT) : NULL;
	json_t *back = text ? json_loads(text, 0, NULL) : NULL;

	if (back)
		(void)tool_find(json_string_value(json_object_get(back, "tool")));
	free(answer ? json_dumps(answer, JSON_COMPACT | JSON_REAL_PRECISION(10)) : NULL);
	json_decref(back);
	free(text);
	json_decref(answer);
	json_decref(job);
}

enum pl_err mcp_worker_setup(const struct tool_ctx *ctx, struct pl_error *err)
{
	worker_ctx = ctx;
	sbx_set_warm_up(worker_warm_up);
	return sbx_register(MCP_JOB_NAME, worker_job, err);
}

char *mcp_job_new(const struct tool_def *t, json_t *args, bool followup, size_t *len)
{
	json_t *job = json_pack("{s:s,s:O,s:b}", "tool", t->name, "args", args, "followup", followup);
	char *text = json_dumps(job, JSON_COMPACT);

	json_decref(job);
	*len = strlen(text);
	return text;
}
