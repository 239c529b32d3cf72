/* background.c - a tool call the server makes by itself (background.h).
 *
 * It goes the way a client's call goes: the arguments are checked
 * against the tool's input schema and its defaults filled in
 * (tool_check_args; a handler relies on both), the job is the one a
 * client's call becomes (mcp_job_new), its policy the tool's own
 * (mcp_policy_for).  The worker is stepped until it ends, polling at
 * most every 200 ms, within the tool timeout the worker enforces.
 * Progress records before the answer are skipped.
 */
#include "background.h"
#include "policy.h"
#include "worker.h"
#include "sandbox/sandbox.h"

#include <poll.h>
#include <stdio.h>
#include <stdlib.h>

/* The worker's answer document ({"ok": ...} or {"error": ...}), new. */
static json_t *run_job(const struct mcp_config *cfg, const struct tool_def *t, json_t *args)
{
	struct mcp_policy *p = pl_xmalloc(sizeof(*p));
	json_t *answer = NULL;
	struct sbx_worker *w;
	struct sbx_result res;
	struct pl_error err;
	size_t len, skip;
	char *job = mcp_job_new(t, args, false, &len);

	mcp_policy_for(cfg, t, args, p);
	if (sbx_spawn_job(&p->pol, MCP_JOB_NAME, job, len, &w, &err) == PL_OK) {
		while (!sbx_step(w)) {
			struct pollfd pfd = {sbx_fd(w), POLLIN, 0};
			int left = sbx_timeout_left_ms(w);
			poll(&pfd, 1, left < 0 || left > 200 ? 200 : left);
		}
		sbx_finish(w, &res);
		skip = mcp_progress_records(res.data, res.len, NULL, NULL);
		answer = json_loadb(res.data + skip, res.len - skip, 0, NULL);
		if (!answer)
			answer = json_pack("{s:{s:s}}", "error", "message", res.detail);
		sbx_result_release(&res);
	} else {
		answer = json_pack("{s:{s:s}}", "error", "message", err.text);
	}
	free(job);
	free(p);
	return answer;
}

json_t *mcp_background_call(const struct mcp_config *cfg, const char *name, json_t *args)
{
	const struct tool_def *t = tool_find(name);
	json_t *checked, *answer;
	struct pl_error err;

	if (!t)
		return NULL;
	checked = args ? json_deep_copy(args) : json_object();
	if (tool_check_args(t, checked, &err))
		answer = json_pack("{s:{s:s}}", "error", "message", err.text);
	else
		answer = run_job(cfg, t, checked);
	json_decref(checked);
	return answer;
}
