/* normalize_benchmark.c - the normalize_benchmark tool: read a benchmark
 * producer's JSON file into a benchmark artifact (core/benchmark.h) and
 * answer with its id, the environment and one page of per-benchmark
 * summaries; every value stays in the artifact.  Plain repeated values of
 * a program's own metric come inline (values=[...]) or from a file
 * (format="values"), with the name, unit and direction the caller gives.
 *
 * A page cursor is bound to the path, format, name and environment that
 * made it; asking for the next page reads the file again, which gives the
 * same artifact (same id, same bytes).
 */
#include "registry.h"
#include "evidence/benchmark.h"
#include "store/artifact.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

static json_t *summary_json(json_t *b)
{
	return json_pack("{s:O,s:O,s:O,s:O,s:O,s:O,s:O,s:O,s:O}",
		"name", json_object_get(b, "name"), "metric", json_object_get(b, "metric"),
		"unit", json_object_get(b, "unit"), "converted_from", json_object_get(b, "converted_from"),
		"direction", json_object_get(b, "direction"), "repeats", json_object_get(b, "repeats"),
		"median", json_object_get(b, "median"), "min", json_object_get(b, "min"),
		"max", json_object_get(b, "max"));
}

static json_t *unknown_keys(json_t *env)
{
	json_t *out = json_array();

	for (const struct pl_bench_env_key *k = pl_bench_env_keys; k->name; k++)
		if (json_is_null(json_object_get(env, k->name)))
			json_array_append_new(out, json_string(k->name));
	return out;
}

/* The artifact's warnings (borrowed) with what to fix before a
 * comparison: a new array. */
static json_t *warnings_json(json_t *recorded, const struct pl_bench_set *s, json_t *unknown)
{
	json_t *out = json_deep_copy(recorded);
	size_t few = 0;

	for (size_t i = 0; i < s->n; i++)
		few += s->items[i].nvalues < 9;
	if (few)
		json_array_append_new(out, json_sprintf(
			"%zu benchmark(s) have fewer than 9 repeats: re-run with more (hyperfine --runs 10 or more, "
			"--benchmark_repetitions=10 or more, pyperf --processes) before trusting a comparison", few));
	if (json_array_size(unknown) > 6)
		json_array_append_new(out, json_string(
			"the environment is mostly unknown: call again with environment={\"cpu_model\": ..., "
			"\"kernel\": ..., \"compiler\": ..., \"compiler_flags\": ..., \"governor\": ..., "
			"\"build_type\": ..., \"git_commit\": ..., \"git_dirty\": ...} so comparability can be checked"));
	return out;
}

/* The call to make next, filled in; comparing needs the other side's id. */
static json_t *next_steps(const char *id)
{
	return json_pack("[o]", tool_next_step("read_artifact_page",
		json_pack("{s:o}", "artifact", json_sprintf("benchmarks/%s.json", id)),
		"every value and the producer's metadata; then normalize the other side's file and call "
		"compare_benchmarks with this benchmark_id as baseline_id (or candidate_id) and its id as the other"));
}

/* Plain values, inline or from the file at `real` (NULL: inline). */
static enum pl_err parse_plain(const struct tool_ctx *ctx, json_t *args, const char *real,
			       struct pl_bench_set *s, struct pl_error *err)
{
	const char *name = json_string_value(json_object_get(args, "name"));
	const char *unit = json_string_value(json_object_get(args, "unit"));
	enum pl_bench_direction dir;

	if (!pl_bench_direction_from_name(json_string_value(json_object_get(args, "direction")), &dir))
		return pl_fail(err, PL_ERR_USAGE, "pass direction=\"higher_is_better\" (e.g. ops/s) or "
			       "\"lower_is_better\" (e.g. latency)", "plain values need a direction");
	if (!real)
		return pl_bench_parse_values(s, json_object_get(args, "values"), name, unit, dir, err);
	return pl_bench_parse_values_file(s, real, name, unit, dir, &ctx->limits, err);
}

static enum pl_err parse(const struct tool_ctx *ctx, json_t *args, struct pl_bench_set *s,
			 struct pl_error *err)
{
	const char *path = json_string_value(json_object_get(args, "path"));
	const char *fmt_name = json_string_value(json_object_get(args, "format"));
	const char *name = json_string_value(json_object_get(args, "name"));
	bool inline_values = json_object_get(args, "values") != NULL;
	enum pl_bench_format fmt = PL_BENCH_AUTO;
	char real[PATH_MAX];
	enum pl_err rc;

	if (!path == !inline_values)
		return pl_fail(err, PL_ERR_USAGE, "pass path=<a producer's JSON file> or values=[...] with name, "
			       "unit and direction", path ? "give path or values, not both" : "give path or values");
	pl_bench_format_from_name(fmt_name, &fmt);
	if ((rc = tool_require_writes(ctx, err)) ||
	    (path && (rc = tool_resolve_input(ctx, path, real, sizeof(real), err))))
		return rc;
	if (inline_values || fmt == PL_BENCH_VALUES)
		rc = parse_plain(ctx, args, path ? real : NULL, s, err);
	else if (!(rc = pl_bench_parse_file(s, real, fmt, &ctx->limits, err)) && name)
		rc = pl_bench_select(s, name, err);
	if (rc)
		return rc;
	return pl_bench_apply_environment(s, json_object_get(args, "environment"), err);
}

/* The query a cursor is bound to: every argument but limit and cursor. */
static void cursor_query(json_t *args, struct pl_buf *q)
{
	char *env = json_dumps(json_object_get(args, "environment"), JSON_ENCODE_ANY | JSON_SORT_KEYS | JSON_COMPACT);
	json_t *given = json_pack("{s:O?,s:O?,s:O?}", "values", json_object_get(args, "values"),
				  "unit", json_object_get(args, "unit"), "direction", json_object_get(args, "direction"));
	char *plain = json_dumps(given, JSON_SORT_KEYS | JSON_COMPACT);
	const char *name = json_string_value(json_object_get(args, "name"));
	const char *path = json_string_value(json_object_get(args, "path"));

	pl_buf_addf(q, "bench|%s|%s|%s|%s|%s", path ? path : "", json_string_value(json_object_get(args, "format")),
		    name ? name : "", env ? env : "", plain ? plain : "");
	free(env);
	free(plain);
	json_decref(given);
}

enum pl_err tool_normalize_benchmark(const struct tool_ctx *ctx, json_t *args,
				     json_t **result, struct pl_error *err)
{
	const char *cursor = json_string_value(json_object_get(args, "cursor"));
	size_t limit = (size_t)json_integer_value(json_object_get(args, "limit"));
	struct pl_bench_set s;
	struct pl_buf query = {0};
	struct tool_page pg;
	char id[32], path[4096], uri[128];
	json_t *doc = NULL, *benches, *page, *unknown;
	enum pl_err rc;

	cursor_query(args, &query);
	if ((rc = tool_page_open(&pg, query.data, cursor, 0, limit, err))) {
		pl_buf_release(&query);
		return rc;
	}
	pl_bench_set_init(&s);
	if ((rc = parse(ctx, args, &s, err)) ||
	    (rc = pl_bench_write(&s, ctx->artifact_root, id, path, sizeof(path), &doc, err)))
		goto out;
	benches = json_object_get(doc, "benchmarks");
	tool_page_bound(&pg, json_array_size(benches));
	page = json_array();
	for (size_t i = pg.start; i < pg.end; i++)
		json_array_append_new(page, summary_json(json_array_get(benches, i)));
	snprintf(uri, sizeof(uri), "perflens://artifacts/benchmarks/%s.json", id);
	unknown = unknown_keys(s.environment);
	*result = json_pack("{s:s,s:{s:o,s:s},s:s,s:{s:O,s:O,s:O,s:O,s:O},s:O,s:O,s:I,s:o,s:O,s:o,s:o,s:o}",
		"benchmark_id", id, "artifact", "path", pl_json_bytes(path), "uri", uri,
		"format", pl_bench_format_name(s.format),
		"source", "path", json_object_get(json_object_get(doc, "source"), "path"),
		"size", json_object_get(json_object_get(doc, "source"), "size"),
		"sha256", json_object_get(json_object_get(doc, "source"), "sha256"),
		"compression", json_object_get(json_object_get(doc, "source"), "compression"),
		"producer_version", s.producer_version,
		"environment", s.environment, "environment_unknown", unknown,
		"benchmarks_total", (json_int_t)pg.total, "benchmarks", page,
		"skipped", json_object_get(doc, "skipped"),
		"warnings", warnings_json(json_object_get(doc, "warnings"), &s, unknown),
		"next_steps", next_steps(id),
		"page", tool_page_json(&pg, tool_page_call(&pg, "normalize_benchmark", args, NULL)));
	json_decref(unknown);
out:
	json_decref(doc);
	pl_bench_set_release(&s);
	pl_buf_release(&query);
	return rc;
}
