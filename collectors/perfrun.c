/* perfrun.c - running perf for the collection modes (coll_int.h): the
 * command's words as JSON, paths in the staging folder, one run of perf
 * under collect.c's policy (nice, bounded output, cancellation) and the
 * judgement of how it ended.  Below collect.c and the modes' files
 * (lock.c, offcpu.c), which all run perf through it.
 */
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "coll_int.h"
#include "base/escape.h"

/* What perf script or report may print after a recording, streamed (to
 * the off-CPU folding or a file), never held: a few seconds of a system-
 * wide sched_switch recording of contended threads passed 64 MiB here, so
 * the bound is the input limit's default. */
#define MAX_POST_OUTPUT (1ULL << 30)

void coll_join(char *out, size_t cap, const char *dir, const char *name)
{
	size_t nd = strlen(dir), nn = strlen(name);

	if (nd + 1 + nn + 1 > cap)
		nd = nn + 2 < cap ? cap - nn - 2 : 0;
	memcpy(out, dir, nd);
	out[nd] = '/';
	memcpy(out + nd + 1, name, nn + 1 <= cap - nd - 1 ? nn + 1 : cap - nd - 1);
	out[cap - 1] = '\0';
}

/* The command as run; its words are bytes (the target's path may not be
 * UTF-8), so each is in the escaped form of docs/paths.md. */
json_t *coll_argv_json(const char *const *v)
{
	json_t *a = json_array();

	for (size_t i = 0; v[i]; i++) {
		char *word = pl_esc_dup(v[i]);
		json_array_append_new(a, json_string(word));
		free(word);
	}
	return a;
}

enum pl_err coll_run_perf(const struct pl_collect_env *env, const char *const *argv,
			  uint32_t timeout_ms, uint32_t interrupt_ms, bool target_status,
			  pl_run_line_fn on_line, void *arg, struct pl_run_result *res,
			  struct pl_error *err)
{
	/* The main run keeps 1 MiB of stderr, the target's included, for the
	 * tail in the metadata. */
	struct pl_run_opts o = {
		.argv = argv, .timeout_ms = timeout_ms, .interrupt_ms = interrupt_ms,
		.max_stdout = MAX_POST_OUTPUT, .max_line = 1u << 20,
		.max_stderr = target_status ? 1u << 20 : 16u << 10,
		.nice = 5, .on_line = on_line, .arg = arg, .cancel = env->cancel,
		/* the collection's own length: the pid duration, else its limit */
		.progress_ms = interrupt_ms ? interrupt_ms : timeout_ms,
	};
	enum pl_err rc = pl_run(&o, res, err);

	if (rc)
		return rc;
	return coll_judge_perf(argv, res, target_status, false, err);
}

/* perf stat ends as its program exited (status), once it wrote its
 * counts: `counts_written` says it did. */
enum pl_err coll_judge_perf(const char *const *argv, const struct pl_run_result *res,
			    bool target_status, bool counts_written, struct pl_error *err)
{
	char tail[512];

	/* perf record exits 0 after our SIGINT, or, having written its file
	 * and said so, raises that SIGINT again to end by it: both are the
	 * end we asked for.  Any other signal or status is a failure. */
	bool wrote = counts_written || (res->stderr_text && strstr(res->stderr_text, "Captured and wrote"));
	bool asked_end = res->signal == SIGINT && res->interrupted && wrote;
	bool targets_end = target_status && wrote && !res->interrupted;

	/* The filter the worker handed down stopped perf: the text names the
	 * pid as sbx_explain_child_sigsys reads it, so the server (which can
	 * read the audit log) adds the system call. */
	if (res->signal == SIGSYS)
		return pl_fail(err, PL_ERR_EXTERNAL,
			       "this perf makes a system call the sandbox does not allow: report it with perf's "
			       "version and the call named here",
			       "%s %s was killed by SIGSYS, the sandbox's answer to a forbidden system call (pid %d)",
			       argv[0], argv[1], res->pid);
	if (!targets_end && ((res->signal && !asked_end) || (!res->signal && res->exit_status != 0))) {
		pl_run_stderr_tail(res, tail, sizeof(tail));
		return pl_fail(err, PL_ERR_EXTERNAL,
			       "read the message: a missing event, permission (perf_event_paranoid) or a target that failed",
			       "%s %s %s %d: %s", argv[0], argv[1],
			       res->signal ? "was killed by signal" : "exited with status",
			       res->signal ? res->signal : res->exit_status, tail);
	}
	return PL_OK;
}
