/* compare_benchmarks.c - the compare_benchmarks tool: A/B statistics for
 * two benchmark artifacts (or two benchmarks of one: candidate_id
 * defaults to baseline_id), pair by pair, with a status that never claims
 * more than the evidence.
 *
 * The arguments, the two artifacts and the page are handled here; the
 * statistics and the verdict rules are evidence/bench_verdict.
 */
#include "registry.h"
#include "evidence/bench_verdict.h"
#include "evidence/benchmark.h"

#include <stdlib.h>
#include <string.h>

enum pl_err tool_compare_benchmarks(const struct tool_ctx *ctx, json_t *args,
				    json_t **result, struct pl_error *err)
{
	struct pl_bench_query q = {
		.baseline_id = json_string_value(json_object_get(args, "baseline_id")),
		.candidate_id = json_string_value(json_object_get(args, "candidate_id")),
		.name = json_string_value(json_object_get(args, "name")),
		.baseline_name = json_string_value(json_object_get(args, "baseline_name")),
		.candidate_name = json_string_value(json_object_get(args, "candidate_name")),
		.threshold_percent = json_number_value(json_object_get(args, "practical_threshold_percent")),
		.limit = (size_t)json_integer_value(json_object_get(args, "limit")),
	};
	const char *cursor = json_string_value(json_object_get(args, "cursor"));
	json_t *base = NULL, *cand = NULL;
	struct pl_buf query = {0};
	struct tool_page pg;
	size_t end = 0, total = 0;
	enum pl_err rc;

	if (!q.candidate_id) {
		q.candidate_id = q.baseline_id;
		q.candidate_defaulted = true;
	}
	pl_buf_addf(&query, "cmpbench|%s|%s|%g|%s|%zu:%s|%s", q.baseline_id, q.candidate_id, q.threshold_percent,
		    q.name ? q.name : "", q.baseline_name ? strlen(q.baseline_name) : 0,
		    q.baseline_name ? q.baseline_name : "", q.candidate_name ? q.candidate_name : "");
	if ((rc = tool_page_open(&pg, query.data, cursor, 0, q.limit, err)))
		goto out;
	q.offset = pg.start;
	if ((rc = pl_bench_load(ctx->artifact_root, q.baseline_id, &base, err)) ||
	    (rc = pl_bench_load(ctx->artifact_root, q.candidate_id, &cand, err)) ||
	    (rc = pl_bench_compare(base, cand, &q, result, &end, &total, err)))
		goto out;
	tool_page_bound(&pg, total);
	tool_page_stop(&pg, end);
	json_object_set_new(*result, "page", tool_page_json(&pg, tool_page_call(&pg, "compare_benchmarks",
										args, NULL)));
out:
	json_decref(base);
	json_decref(cand);
	pl_buf_release(&query);
	return rc;
}
