/* bench_verdict.c - A/B statistics for two benchmark artifacts,
 * benchmark by benchmark, with a status that never claims more than the
 * evidence (see bench_verdict.h).
 *
 * Pairing (bench_verdict.h): by name, explicit (baseline_name and
 * candidate_name), or the one benchmark of each side when no name is
 * common; never a guess among several.
 *
 * Order of judgement for each pair: fewer than 3
 * repeats on a side is insufficient_data; a material environment
 * difference (or a different metric, unit or direction) is
 * not_comparable; otherwise a change is a candidate only when the
 * two-sided Mann-Whitney p is below ALPHA and the whole bootstrap
 * interval of median(candidate)/median(baseline) lies beyond the
 * practical threshold (bench_stats.h does the statistics).
 *
 * Work is bounded: each benchmark's bootstrap is capped in draws, and a
 * page stops early (with a cursor) once PAGE_DRAW_BUDGET draws were used.
 */
#include "bench_verdict.h"
#include "bench_stats.h"
#include "benchmark.h"
#include "base/util.h"

#include <assert.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ALPHA PL_BENCH_ALPHA
#define CI_LEVEL 0.95
#define MIN_REPEATS 3
#define FEW_REPEATS 9
#define PAGE_DRAW_BUDGET 400000000ull
#define UNMATCHED_NAMES 20

static const char *const statuses[] = {"insufficient_data", "not_comparable", "no_material_change",
				       "candidate_improvement", "candidate_regression"};

/* ------------------------------------------------------- comparability */

struct comparability {
	bool comparable;
	json_t *differences, *unknown, *notes;
	struct pl_buf fields;   /* "kernel, compiler" for reasons */
};

static void add_difference(struct comparability *c, const char *field, json_t *b, json_t *v,
			   const char *why)
{
	json_array_append_new(c->differences, json_pack("{s:s,s:O,s:O,s:s}", "field", field,
		"baseline", b ? b : json_null(), "candidate", v ? v : json_null(), "why", why));
	pl_buf_addf(&c->fields, "%s%s", c->fields.len ? ", " : "", field);
	c->comparable = false;
}

static void check_key(struct comparability *c, const struct pl_bench_env_key *k, json_t *b, json_t *v)
{
	bool known = !json_is_null(b) && !json_is_null(v) && b && v;

	if (strcmp(k->name, "git_dirty") == 0) {
		if (json_is_true(b) || json_is_true(v))
			add_difference(c, k->name, b, v,
				       "a side was built from a tree with uncommitted changes: the measured code is not identified by a commit");
		else if (!known)
			json_array_append_new(c->unknown, json_string(k->name));
		return;
	}
	if (!known) {
		if (k->material)
			json_array_append_new(c->unknown, json_string(k->name));
		return;
	}
	if (json_equal(b, v))
		return;
	if (k->material) {
		add_difference(c, k->name, b, v, "differs between the sides: timings are not comparable");
		return;
	}
	if (strcmp(k->name, "host_name") == 0)
		json_array_append_new(c->notes, json_sprintf(
			"host_name differs (%s vs %s): check that the machines are identical",
			json_string_value(b), json_string_value(v)));
}

static void comparability_check(struct comparability *c, json_t *base, json_t *cand,
				bool a_a)
{
	json_t *eb = json_object_get(base, "environment"), *ec = json_object_get(cand, "environment");
	json_t *lb = json_object_get(eb, "load_avg_1min"), *lc = json_object_get(ec, "load_avg_1min");

	c->comparable = true;
	c->differences = json_array();
	c->unknown = json_array();
	c->notes = json_array();
	for (const struct pl_bench_env_key *k = pl_bench_env_keys; k->name; k++)
		check_key(c, k, json_object_get(eb, k->name), json_object_get(ec, k->name));
	if (a_a)
		json_array_append_new(c->notes, json_string(
			"baseline and candidate are the same artifact: an A/A check, which can only show no change"));
	if (json_array_size(c->unknown))
		json_array_append_new(c->notes, json_sprintf(
			"%zu material field(s) were not recorded on one or both sides and could not be checked",
			json_array_size(c->unknown)));
	if (json_is_number(lb) && json_is_number(lc))
		json_array_append_new(c->notes, json_sprintf(
			"1-minute load average while measuring: baseline %.2f, candidate %.2f",
			json_number_value(lb), json_number_value(lc)));
}

static void comparability_release(struct comparability *c)
{
	json_decref(c->differences);
	json_decref(c->unknown);
	json_decref(c->notes);
	pl_buf_release(&c->fields);
}

/* ----------------------------------------------------------- one result */

struct side {
	double *v;
	size_t n;
};

static void side_load(struct side *s, json_t *bench)
{
	json_t *values = json_object_get(bench, "values"), *x;
	size_t i;

	s->n = 0;
	s->v = pl_xmalloc((json_array_size(values) + 1) * sizeof(double));
	json_array_foreach(values, i, x) {
		double d = json_number_value(x);
		if (json_is_number(x) && isfinite(d) && d > 0)
			s->v[s->n++] = d;
	}
}

static json_t *side_json(json_t *bench, const struct side *s)
{
	return json_pack("{s:I,s:O,s:O,s:O}", "repeats", (json_int_t)s->n,
		"median", json_object_get(bench, "median"), "min", json_object_get(bench, "min"),
		"max", json_object_get(bench, "max"));
}

static bool same_field(json_t *b, json_t *c, const char *key)
{
	return json_equal(json_object_get(b, key), json_object_get(c, key));
}

static json_t *mwu_json(const struct pl_mwu *m)
{
	return json_pack("{s:f,s:f,s:f,s:s,s:s,s:o,s:b,s:b,s:b,s:b}",
		"u_baseline", m->u_x, "u_candidate", m->u_y, "p_value", m->p,
		"alternative", "two-sided", "method", m->method == PL_MWU_EXACT ? "exact" : "normal",
		"z", isfinite(m->z) ? json_real(m->z) : json_null(), "ties", m->ties,
		"tie_correction", m->method == PL_MWU_NORMAL, "continuity_correction", m->method == PL_MWU_NORMAL,
		"exact_declined", m->exact_declined);
}

static json_t *ci_json(const struct pl_boot *b)
{
	char seed[32];

	snprintf(seed, sizeof(seed), "0x%016llx", (unsigned long long)b->seed);
	return json_pack("{s:f,s:f,s:f,s:f,s:f,s:s,s:I,s:s}", "level", b->level, "low", b->lo,
		"high", b->hi, "low_change_percent", (b->lo - 1) * 100, "high_change_percent", (b->hi - 1) * 100,
		"method", "percentile bootstrap of the ratio of medians, sides resampled independently",
		"resamples", (json_int_t)b->resamples, "seed", seed);
}

/* "p = 0.0123", or "p < 1e-300" where the normal tail underflowed. */
static void add_p(struct pl_buf *b, double p)
{
	if (p > 0)
		pl_buf_addf(b, "p = %.3g", p);
	else
		pl_buf_adds(b, "p < 1e-300");
}

/* The decision once both sides are comparable and large enough. */
static const char *decide(const struct pl_mwu *m, const struct pl_boot *b, bool higher_better,
			  double threshold_pct, struct pl_buf *reason)
{
	double up = 1 + threshold_pct / 100, down = 1 - threshold_pct / 100;
	bool grew = b->lo > up, shrank = b->hi < down;

	add_p(reason, m->p);
	if (m->p >= ALPHA) {
		pl_buf_addf(reason, " (two-sided Mann-Whitney U) is not below %.2g: these repeats do not show "
			    "a difference", ALPHA);
		return "no_material_change";
	}
	if (!grew && !shrank) {
		pl_buf_addf(reason, " is below %.2g, but the %.0f%% interval of the ratio [%.4g, %.4g] does "
			    "not lie wholly beyond the %g%% threshold: the change is too small or too uncertain to matter",
			    ALPHA, b->level * 100, b->lo, b->hi, threshold_pct);
		return "no_material_change";
	}
	pl_buf_addf(reason, " < %.2g and the whole %.0f%% interval of median(candidate)/median(baseline), "
		    "[%.4g, %.4g], lies %s the %g%% threshold", ALPHA, b->level * 100, b->lo, b->hi,
		    grew ? "above" : "below", threshold_pct);
	return grew != higher_better ? "candidate_regression" : "candidate_improvement";
}

static void size_warnings(json_t *w, size_t nb, size_t nc, const struct pl_mwu *m)
{
	double min_p = pl_mwu_min_p(nb, nc);

	if (nb < FEW_REPEATS || nc < FEW_REPEATS)
		json_array_append_new(w, json_sprintf(
			"only %zu baseline and %zu candidate repeats (fewer than %d on a side): the test has little "
			"power and the interval is rough; re-run with more repeats", nb, nc, FEW_REPEATS));
	if (m && m->method == PL_MWU_EXACT && min_p >= ALPHA)
		json_array_append_new(w, json_sprintf(
			"with %zu and %zu repeats the smallest possible p is %.3g: no difference can reach p < %.2g",
			nb, nc, min_p, ALPHA));
	if (m && m->exact_declined)
		json_array_append_new(w, json_string(
			"scipy would count the exact distribution here; the samples are too large for it, so the "
			"normal approximation was used"));
}

struct outcome {
	json_t *json;
	const char *status;
	uint64_t draws;
};

/* The status of one benchmark, in the order of judgement; `m` and
 * `boot` are read only when both sides have enough repeats. */
static const char *judge(json_t *bb, json_t *cb, size_t nb, size_t nc,
			 const struct comparability *env, const struct pl_mwu *m,
			 const struct pl_boot *boot, double threshold_pct, struct pl_buf *reason)
{
	bool higher = strcmp(json_string_value(json_object_get(bb, "direction")), "higher_is_better") == 0;

	if (nb < MIN_REPEATS || nc < MIN_REPEATS) {
		pl_buf_addf(reason, "needs at least %d repeats a side; baseline has %zu, candidate %zu",
			    MIN_REPEATS, nb, nc);
		return "insufficient_data";
	}
	if (!env->comparable) {
		pl_buf_addf(reason, "the environments differ in: %s (see comparability.differences); the statistics "
			    "are shown for information only", env->fields.data);
		return "not_comparable";
	}
	if (!same_field(bb, cb, "metric") || !same_field(bb, cb, "unit") || !same_field(bb, cb, "direction")) {
		pl_buf_addf(reason, "the sides measure different things: metric %s vs %s, unit %s vs %s, "
			    "direction %s vs %s",
			    json_string_value(json_object_get(bb, "metric")), json_string_value(json_object_get(cb, "metric")),
			    json_string_value(json_object_get(bb, "unit")), json_string_value(json_object_get(cb, "unit")),
			    json_string_value(json_object_get(bb, "direction")),
			    json_string_value(json_object_get(cb, "direction")));
		return "not_comparable";
	}
	return decide(m, boot, higher, threshold_pct, reason);
}

static void compare_one(json_t *bb, json_t *cb, const struct comparability *env,
			double threshold_pct, struct outcome *out)
{
	struct side b, c;
	struct pl_mwu m = {0};
	struct pl_boot boot = {0};
	struct pl_buf reason = {0};
	json_t *warnings = json_array(), *mj = json_null(), *cj = json_null(), *ratio = json_null();
	json_t *change = json_null();
	bool enough;

	side_load(&b, bb);
	side_load(&c, cb);
	enough = b.n >= MIN_REPEATS && c.n >= MIN_REPEATS;
	out->draws = 0;
	if (enough) {
		size_t r = pl_boot_resamples_for(b.n, c.n);
		pl_mwu_test(b.v, b.n, c.v, c.n, &m);
		pl_boot_median_ratio(b.v, b.n, c.v, c.n, r, PL_BOOT_SEED, CI_LEVEL, &boot);
		out->draws = (uint64_t)r * (b.n + c.n);
		mj = mwu_json(&m);
		cj = ci_json(&boot);
	}
	if (b.n > 0 && c.n > 0) {
		double q = pl_median(c.v, c.n) / pl_median(b.v, b.n);
		ratio = json_real(q);
		change = json_real((q - 1) * 100);
	}
	size_warnings(warnings, b.n, c.n, enough ? &m : NULL);
	out->status = judge(bb, cb, b.n, c.n, env, &m, &boot, threshold_pct, &reason);
	out->json = json_pack("{s:O,s:O,s:s,s:s,s:O,s:O,s:O,s:o,s:o,s:o,s:o,s:o,s:o,s:o}",
		"name", json_object_get(bb, "name"), "candidate_name", json_object_get(cb, "name"),
		"status", out->status, "reason", reason.data,
		"metric", json_object_get(bb, "metric"), "unit", json_object_get(bb, "unit"),
		"direction", json_object_get(bb, "direction"),
		"baseline", side_json(bb, &b), "candidate", side_json(cb, &c),
		"ratio_of_medians", ratio, "change_percent", change,
		"confidence_interval", cj, "mann_whitney", mj, "warnings", warnings);
	pl_buf_release(&reason);
	free(b.v);
	free(c.v);
}

/* -------------------------------------------------------------- pairing */

/* Indexes of baseline benchmarks that the candidate also has, in the
 * baseline's order, with the candidate's index beside each. */
struct pairs {
	size_t *base, *cand;
	size_t n;
	const char *how;        /* by_name, explicit or only_benchmark_each_side */
	bool same_artifact;     /* both sides are one artifact */
	size_t base_only, cand_only;
	json_t *base_only_names, *cand_only_names;
};

static void pair_up(struct pairs *p, json_t *bl, json_t *cl, const char *only)
{
	json_t *cand_index = json_object(), *b;
	size_t i, nb = json_array_size(bl), nc = json_array_size(cl);
	bool *matched = pl_xcalloc(nc + 1, sizeof(bool));

	memset(p, 0, sizeof(*p));
	p->how = "by_name";
	p->base = pl_xmalloc((nb + 1) * sizeof(size_t));
	p->cand = pl_xmalloc((nb + 1) * sizeof(size_t));
	p->base_only_names = json_array();
	p->cand_only_names = json_array();
	json_array_foreach(cl, i, b)
		json_object_set_new(cand_index, json_string_value(json_object_get(b, "name")), json_integer((json_int_t)i));
	json_array_foreach(bl, i, b) {
		const char *name = json_string_value(json_object_get(b, "name"));
		json_t *ci = json_object_get(cand_index, name);
		if (only && strcmp(only, name) != 0)
			continue;
		if (!ci) {
			if (p->base_only++ < UNMATCHED_NAMES)
				json_array_append_new(p->base_only_names, json_string(name));
			continue;
		}
		p->base[p->n] = i;
		p->cand[p->n++] = (size_t)json_integer_value(ci);
		matched[json_integer_value(ci)] = true;
	}
	json_array_foreach(cl, i, b) {
		const char *name = json_string_value(json_object_get(b, "name"));
		if (matched[i] || (only && strcmp(only, name) != 0))
			continue;
		if (p->cand_only++ < UNMATCHED_NAMES)
			json_array_append_new(p->cand_only_names, json_string(name));
	}
	free(matched);
	json_decref(cand_index);
}

/* The one pair (bi, ci): the others of each side were not asked for, as
 * with `name`, so nothing is unmatched. */
static void pair_one(struct pairs *p, size_t bi, size_t ci, const char *how)
{
	memset(p, 0, sizeof(*p));
	p->how = how;
	p->base = pl_xmalloc(sizeof(size_t));
	p->cand = pl_xmalloc(sizeof(size_t));
	p->base[0] = bi;
	p->cand[0] = ci;
	p->n = 1;
	p->base_only_names = json_array();
	p->cand_only_names = json_array();
}

static void pairs_release(struct pairs *p)
{
	free(p->base);
	free(p->cand);
	json_decref(p->base_only_names);
	json_decref(p->cand_only_names);
}

static json_t *names_of(json_t *list)
{
	struct pl_buf b = {0};
	json_t *x, *out;
	size_t i;

	json_array_foreach(list, i, x) {
		if (b.len > 1500) {
			pl_buf_addf(&b, " and more");
			break;
		}
		pl_buf_addf(&b, "%s'%.200s'", i ? ", " : "", json_string_value(json_object_get(x, "name")));
	}
	out = json_string(b.data ? b.data : "");
	pl_buf_release(&b);
	return out;
}

/* --------------------------------------------------------------- advice */

static const char interpretation[] =
	"Statuses describe these runs on these machines. candidate_regression and candidate_improvement are "
	"candidates, not confirmations: the two-sided Mann-Whitney U test gave p < 0.05 and the whole 95% "
	"bootstrap interval of median(candidate)/median(baseline) lies beyond the practical threshold. Before "
	"concluding, rebuild both sides, re-run them interleaved (A, B, A, B...) with more repeats (30 or more), "
	"the CPU governor set to performance and the process pinned to the same CPUs on both sides (taskset -c "
	"LIST, as many CPUs as the program runs threads: pinning a multi-threaded program to one CPU makes its "
	"threads contend for it and changes what is measured), then compare "
	"again; then look for the cause in profiles of both builds (analyze_profile on each, then "
	"compare_profiles). no_material_change is not proof of equality: it says no change beyond the "
	"threshold was shown with this many repeats.";

/* What to do about these statuses, added to `out` (the warnings): none of
 * it is a call PerfLens can make (re-running benchmarks is the user's), so
 * next_steps stays empty and interpretation says how to confirm. */
static void advise(json_t *out, const size_t counts[5], const struct comparability *env,
		   const struct pairs *pairs, size_t n_benchmarks)
{
	if (counts[0])
		json_array_append_new(out, json_string(
			"insufficient_data: re-run with at least 9 repeats a side (hyperfine --runs 10 or more; "
			"--benchmark_repetitions=10 or more; pyperf --processes), normalize both files again and compare"));
	if (counts[1])
		json_array_append_new(out, json_sprintf(
			"not_comparable: re-run both sides on the same machine with the same settings (differences: %s), "
			"or, if a recorded value was wrong, normalize again with the right environment",
			env->fields.len ? env->fields.data : "metric, unit or direction"));
	if (counts[3] || counts[4])
		json_array_append_new(out, json_string(
			"confirm the candidate: re-run baseline and candidate interleaved with 30 or more repeats, "
			"governor performance and both sides pinned to the same CPUs (taskset -c LIST, one per thread the "
			"program runs, never one CPU for a multi-threaded program), normalize and compare again; then profile both builds "
			"(analyze_profile each, compare_profiles) to find what changed"));
	if (counts[2] && !counts[3] && !counts[4])
		json_array_append_new(out, json_string(
			"no_material_change: if you expected a change, raise the repeats (the interval narrows with more) "
			"or lower practical_threshold_percent only if a smaller change matters"));
	if (json_array_size(env->unknown))
		json_array_append_new(out, json_sprintf(
			"pass environment={...} to normalize_benchmark for both files so more fields can be checked "
			"(%zu material fields unknown, e.g. %s)", json_array_size(env->unknown),
			json_string_value(json_array_get(env->unknown, 0))));
	if (pairs->same_artifact && pairs->base[0] == pairs->cand[0])
		json_array_append_new(out, json_string(n_benchmarks > 1
			? "baseline_id equals candidate_id: to compare two benchmarks of this artifact (two commands of "
			  "one hyperfine run), pass baseline_name and candidate_name"
			: "baseline_id equals candidate_id: pass the other side's benchmark_id as candidate_id"));
}

/* --------------------------------------------------------------- entry */

/* The index of the benchmark called `name` in `list` (*at), or a usage
 * error listing the names there, with `hint`. */
static enum pl_err find_name(json_t *list, const char *name, const char *side, const char *hint,
			     size_t *at, struct pl_error *err)
{
	json_t *b, *names;
	size_t i;

	json_array_foreach(list, i, b)
		if (strcmp(json_string_value(json_object_get(b, "name")), name) == 0) {
			*at = i;
			return PL_OK;
		}
	names = names_of(list);
	pl_fail(err, PL_ERR_USAGE, hint,
		"no benchmark called '%.200s' in the %s; names: %s", name, side, json_string_value(names));
	json_decref(names);
	return PL_ERR_USAGE;
}

/* The matched benchmarks from q->offset, at most q->limit of them, or
 * fewer once the page's bootstrap budget is spent; *end is where it
 * stopped. */
static json_t *compare_page(json_t *bl, json_t *cl, const struct pairs *pairs,
			    const struct comparability *env, const struct pl_bench_query *q,
			    size_t counts[5], size_t *end)
{
	json_t *results = json_array();
	uint64_t draws = 0;
	size_t i;

	assert(q->offset <= pairs->n);
	for (i = q->offset; i < pairs->n && i < q->offset + q->limit; i++) {
		struct outcome o;
		if (i > q->offset && draws > PAGE_DRAW_BUDGET)
			break;  /* the rest on the next page */
		compare_one(json_array_get(bl, pairs->base[i]), json_array_get(cl, pairs->cand[i]), env,
			    q->threshold_percent, &o);
		draws += o.draws;
		for (size_t k = 0; k < 5; k++)
			counts[k] += strcmp(o.status, statuses[k]) == 0;
		json_array_append_new(results, o.json);
	}
	*end = i;
	return results;
}

static json_t *result_json(const struct pl_bench_query *q, const struct comparability *env,
			   const struct pairs *pairs, json_t *bl, json_t *cl, json_t *results,
			   const size_t counts[5])
{
	json_t *warnings = json_array();

	if (strcmp(pairs->how, "only_benchmark_each_side") == 0)
		json_array_append_new(warnings, json_sprintf(
			"the names differ (baseline '%.200s', candidate '%.200s'): compared as the only benchmark of each "
			"side; pass baseline_name and candidate_name to say so explicitly",
			json_string_value(json_object_get(json_array_get(bl, 0), "name")),
			json_string_value(json_object_get(json_array_get(cl, 0), "name"))));
	if (pairs->base_only || pairs->cand_only)
		json_array_append_new(warnings, json_sprintf(
			"%zu baseline and %zu candidate benchmark(s) have no partner of the same name and were not compared",
			pairs->base_only, pairs->cand_only));
	advise(warnings, counts, env, pairs, json_array_size(bl));
	return json_pack("{s:s,s:s,s:s,s:f,s:f,s:{s:b,s:O,s:O,s:O},s:o,s:{s:I,s:I,s:I,s:I,s:I},"
			 "s:{s:I,s:I,s:O,s:O},s:s,s:o,s:[]}",
		"baseline_id", q->baseline_id, "candidate_id", q->candidate_id, "pairing", pairs->how,
		"practical_threshold_percent", q->threshold_percent, "alpha", ALPHA,
		"comparability", "comparable", env->comparable, "differences", env->differences,
		"unknown", env->unknown, "notes", env->notes,
		"results", results,
		"status_counts", statuses[0], (json_int_t)counts[0], statuses[1], (json_int_t)counts[1],
		statuses[2], (json_int_t)counts[2], statuses[3], (json_int_t)counts[3],
		statuses[4], (json_int_t)counts[4],
		"unmatched", "baseline_only", (json_int_t)pairs->base_only,
		"candidate_only", (json_int_t)pairs->cand_only,
		"baseline_only_names", pairs->base_only_names, "candidate_only_names", pairs->cand_only_names,
		"interpretation", interpretation, "warnings", warnings,
		"next_steps");
}

static enum pl_err no_common_name(json_t *bl, json_t *cl, struct pl_error *err)
{
	json_t *nb = names_of(bl), *nc = names_of(cl);

	pl_fail(err, PL_ERR_USAGE, "pass baseline_name and candidate_name to pair two benchmarks whose names differ",
		"no benchmark name is on both sides; baseline: %s; candidate: %s",
		json_string_value(nb), json_string_value(nc));
	json_decref(nb);
	json_decref(nc);
	return PL_ERR_USAGE;
}

/* The pairs to compare, by the order of bench_verdict.h. */
static enum pl_err choose_pairs(json_t *bl, json_t *cl, const struct pl_bench_query *q,
				struct pairs *pairs, struct pl_error *err)
{
	const char *explicit_hint = "pass names the sides hold (see names)";
	size_t bi = 0, ci = 0;
	enum pl_err rc;

	if (!q->baseline_name != !q->candidate_name)
		return pl_fail(err, PL_ERR_USAGE, "pass both, or neither to pair by name",
			       "baseline_name and candidate_name go together: %s was given alone",
			       q->baseline_name ? "baseline_name" : "candidate_name");
	if (q->baseline_name && q->name)
		return pl_fail(err, PL_ERR_USAGE, "drop name, or drop baseline_name and candidate_name",
			       "name and baseline_name/candidate_name both select benchmarks: pass one or the other");
	if (q->candidate_defaulted && !q->baseline_name) {
		json_t *names = names_of(bl);
		pl_fail(err, PL_ERR_USAGE, "pass candidate_id (another artifact), or baseline_name and candidate_name "
			"(two benchmarks of this one)", "no candidate_id and no benchmarks named to compare; the "
			"baseline holds: %s", json_string_value(names));
		json_decref(names);
		return PL_ERR_USAGE;
	}
	if (q->baseline_name) {
		if ((rc = find_name(bl, q->baseline_name, "baseline", explicit_hint, &bi, err)) ||
		    (rc = find_name(cl, q->candidate_name, "candidate", explicit_hint, &ci, err)))
			return rc;
		pair_one(pairs, bi, ci, "explicit");
		return PL_OK;
	}
	if (q->name && ((rc = find_name(bl, q->name, "baseline", "pass a name both sides hold, or omit name to "
					"compare all", &bi, err)) ||
			(rc = find_name(cl, q->name, "candidate", "pass a name both sides hold, or omit name to "
					"compare all", &ci, err))))
		return rc;
	pair_up(pairs, bl, cl, q->name);
	if (pairs->n > 0)
		return PL_OK;
	if (json_array_size(bl) == 1 && json_array_size(cl) == 1) {
		pairs_release(pairs);
		pair_one(pairs, 0, 0, "only_benchmark_each_side");
		return PL_OK;
	}
	return no_common_name(bl, cl, err);
}

enum pl_err pl_bench_compare(json_t *base, json_t *cand, const struct pl_bench_query *q,
			     json_t **result, size_t *end, size_t *total, struct pl_error *err)
{
	json_t *bl = json_object_get(base, "benchmarks"), *cl = json_object_get(cand, "benchmarks");
	struct comparability env = {0};
	struct pairs pairs = {0};
	struct pl_bench_query page = *q;
	size_t counts[5] = {0};
	enum pl_err rc;

	if ((rc = choose_pairs(bl, cl, q, &pairs, err)))
		goto out;
	pairs.same_artifact = strcmp(q->baseline_id, q->candidate_id) == 0;
	comparability_check(&env, base, cand, pairs.same_artifact && pairs.base[0] == pairs.cand[0]);
	if (page.offset > pairs.n)
		page.offset = pairs.n;
	*total = pairs.n;
	*result = result_json(q, &env, &pairs, bl, cl,
			      compare_page(bl, cl, &pairs, &env, &page, counts, end), counts);
	comparability_release(&env);
out:
	pairs_release(&pairs);
	return rc;
}
