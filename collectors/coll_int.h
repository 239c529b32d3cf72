/* coll_int.h - what the collection modes share inside collectors/ (not
 * for other folders): running perf with collect.c's policy, and paths.
 */
#ifndef PL_COLL_INT_H
#define PL_COLL_INT_H

#include <jansson.h>

#include "collect.h"
#include "run.h"

/* Run perf; PL_OK only when it exited 0 or ended by the SIGINT asked for
 * (interrupt_ms).  `res` is filled in every case: release it. */
enum pl_err coll_run_perf(const struct pl_collect_env *env, const char *const *argv,
			  uint32_t timeout_ms, uint32_t interrupt_ms, pl_run_line_fn on_line,
			  void *arg, struct pl_run_result *res, struct pl_error *err);

/* DIR/NAME into out (cut to fit; paths here are far below PATH_MAX). */
void coll_join(char *out, size_t cap, const char *dir, const char *name);

/* The off-CPU mode's second step: perf script over the sched_switch
 * records of `data`, written to DIR/offcpu.txt as perf script text of the
 * event "offcpu-time" (see offcpu.c); what it counted goes into
 * meta["off_cpu"]. */
enum pl_err coll_off_cpu(const struct pl_collect_env *env, const struct pl_collect_req *r,
			 const char *dir, const char *data, json_t *meta, struct pl_error *err);

#endif
