/* coll_int.h - what the collection modes share inside collectors/ (not
 * for other folders): running perf with collect.c's policy, and paths.
 */
#ifndef PL_COLL_INT_H
#define PL_COLL_INT_H

#include <jansson.h>

#include "collect.h"
#include "run.h"
#include "base/util.h"

/* Run perf; PL_OK only when it exited 0, ended by the SIGINT asked for
 * (interrupt_ms), or, with `target_status`, wrote its recording and then
 * ended as the target it started did (see target.c).  `res` is filled in
 * every case: release it. */
enum pl_err coll_run_perf(const struct pl_collect_env *env, const char *const *argv,
			  uint32_t timeout_ms, uint32_t interrupt_ms, bool target_status,
			  pl_run_line_fn on_line, void *arg, struct pl_run_result *res,
			  struct pl_error *err);
/* How a run of perf ended, judged as coll_run_perf does; perf stat ends
 * as its program exited (status), once it wrote its counts:
 * `counts_written` says it did. */
enum pl_err coll_judge_perf(const char *const *argv, const struct pl_run_result *res,
			    bool target_status, bool counts_written, struct pl_error *err);

/* The last few KiB of the target's stdout (target.c): feed it to pl_run
 * as on_line; release buf. */
struct coll_tail {
	struct pl_buf buf;
	uint64_t bytes;
};
enum pl_err coll_tail_line(void *arg, const char *line, size_t len, struct pl_error *err);

/* How the target ended (exit status or signal, or why that is unknown)
 * and the tails of its stdout and stderr; *failed when it ended with a
 * non-zero status or a signal.  New reference. */
json_t *coll_target_json(const struct pl_collect_req *r, const struct pl_run_result *res,
			 const struct coll_tail *out, bool counts_written, bool *failed);

/* Mode stat: perf stat wrote its counts (STAGING/stat.csv, not empty). */
bool coll_counts_written(const struct pl_collect_req *r, const char *staging);

/* A JSON string of n bytes of text (a program's output), bytes that are
 * not UTF-8 as \xHH (base/escape.h's text form: nothing is lost, and
 * backslashes read as printed).  New reference. */
json_t *coll_text_json(const char *s, size_t n);

/* The lock mode's second step: perf lock contention (or report) over
 * `data` into DIR/lock.txt, its rows into meta["lock"], and a warning
 * when it saw nothing (see lock.c). */
enum pl_err coll_lock(const struct pl_collect_env *env, const struct pl_collect_req *r,
		      const char *dir, const char *data, json_t *meta, json_t *warnings,
		      struct pl_error *err);

/* What a collection's stderr (perf's lines and the program's) says may
 * distort the profile: {perf_lines, lost_chunks, target_error_lines,
 * target_error_examples}, and a warning per kind found appended to
 * `warnings`.  `perf_only`: the stderr is perf's alone (an attached pid's
 * own stderr is where it always was), so no line is the program's.
 * New reference. */
json_t *coll_stderr_findings(const char *text, bool perf_only, json_t *warnings);

/* argv as a JSON array of strings.  New reference. */
json_t *coll_argv_json(const char *const *v);

/* DIR/NAME into out (cut to fit; paths here are far below PATH_MAX). */
void coll_join(char *out, size_t cap, const char *dir, const char *name);

/* The off-CPU mode's second step: perf script over the sched_switch
 * records of `data`, written to DIR/offcpu.txt as perf script text of the
 * event "offcpu-time" (see offcpu.c); what it counted goes into
 * meta["off_cpu"]. */
enum pl_err coll_off_cpu(const struct pl_collect_env *env, const struct pl_collect_req *r,
			 const char *dir, const char *data, json_t *meta, struct pl_error *err);

#endif
