/* run_experiment.c - the run_experiment tool: an A/B measurement of two
 * commands, the only thing that confirms or refutes a candidate.
 *
 * The gates are collect_profile's (flags, perf, the phrase).  Each side
 * runs as the user runs it: from the collection launcher when there is
 * one (coll_launch_program: no perf, the program's own wait4), from this
 * process in the CLI; stdin /dev/null, stdout and stderr into files of a
 * staging folder that is removed at the end.  Runs go in complete blocks
 * (each side once per block, the order drawn from the recorded seed);
 * the first `warmup` blocks are discarded.  A run that failed, timed
 * out, lacked the metric or changed its output is reported in
 * excluded_runs and never enters a sample.  The samples become one
 * benchmark artifact (format experiment, benchmarks "baseline MEASURE"
 * and "candidate MEASURE", every raw run and the verdicts under
 * "experiment"), and each measure gets its verdict from
 * evidence/bench_verdict (Mann-Whitney,
 * bootstrap interval of the ratio of medians, the practical threshold),
 * with too_noisy for an undecided measure whose spread passes
 * max_cv_percent.  With candidate_id the verdict is recorded for the
 * candidate (evidence/experiments.h).  With profile, one more run of each
 * side goes through collect_profile (its gates, its launcher), then
 * analyze_profile and compare_profiles: what changed beside how much.
 */
#include "registry.h"
#include "collectors/collect.h"
#include "collectors/launch.h"
#include "evidence/bench_stats.h"
#include "evidence/bench_verdict.h"
#include "evidence/benchmark.h"
#include "evidence/experiments.h"
#include "base/progress.h"
#include "base/sha256.h"
#include "base/util.h"
#include "sandbox/sandbox.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define MAX_STDOUT_READ (4u << 20)   /* bytes of a run's stdout read for the metric and the hash */
#define RUNS_TO_RESOLVE_MAX 10000

enum measure { M_WALL, M_USER, M_SYS, M_RSS, M_TASK_CLOCK, M_CSW, M_FAULTS, M_METRIC, M_COUNT };

/* The measures; the three counters only with perf_counters (perf stat's
 * event names), the metric only with metric. */
static const struct {
	const char *name, *unit, *event;
} measures[M_COUNT] = {
	{"wall_time", "seconds", NULL}, {"user_time", "seconds", NULL}, {"system_time", "seconds", NULL},
	{"max_rss", "bytes", NULL}, {"task_clock", "ms", "task-clock"},
	{"context_switches", "count", "context-switches"}, {"page_faults", "count", "page-faults"},
	{NULL, NULL, NULL},
};
#define STAT_EVENTS "task-clock,context-switches,page-faults"

/* One side's command, resolved. */
struct side {
	const char *label;             /* "baseline", "candidate" */
	char exe[PATH_MAX], cwd[PATH_MAX];
	const char *argv[PL_COLLECT_MAX_ARGS + 2];
	struct pl_collect_req env;     /* only env/nenv used */
	char first_hash[65];           /* stdout hash of its first good run */
	size_t used;
	double *v[M_COUNT];
};

struct experiment {
	const struct tool_ctx *ctx;
	struct side sides[2];
	int conn;                      /* the launcher, or -1: this process */
	char staging[PATH_MAX + 32], out_path[PATH_MAX + 48], err_path[PATH_MAX + 48];
	bool has_metric, check_output, counters;
	char stat_path[PATH_MAX + 48];
	const char *perf_path;
	regex_t re;
	const char *metric_name, *metric_unit;
	enum pl_bench_direction metric_dir;
	uint32_t run_timeout_ms;
	json_t *runs, *excluded;
};

/* ------------------------------------------------------------ the sides */

static enum pl_err side_load(struct experiment *x, struct side *s, json_t *cmd, struct pl_error *err)
{
	const char *exe = NULL;
	json_t *args = NULL, *env = NULL, *one, *v;
	const char *wd = NULL;
	json_error_t je;
	size_t i, n = 1;
	enum pl_err rc;

	if (json_unpack_ex(cmd, &je, JSON_STRICT, "{s:s,s?o,s?s,s?o}", "executable", &exe,
			   "arguments", &args, "working_directory", &wd, "environment", &env) != 0)
		return pl_fail(err, PL_ERR_USAGE,
			       "pass {\"executable\": PATH, \"arguments\": [...], \"working_directory\": DIR, \"environment\": {...}}",
			       "'%s': %s", s->label, je.text);
	if ((args && (!json_is_array(args) || json_array_size(args) > PL_COLLECT_MAX_ARGS)) ||
	    (env && !json_is_object(env)))
		return pl_fail(err, PL_ERR_USAGE, "pass arguments as at most 64 strings and environment as an object",
			       "'%s': arguments or environment has the wrong shape", s->label);
	if ((rc = tool_resolve_input(x->ctx, exe, s->exe, sizeof(s->exe), err)))
		return rc;
	if (access(s->exe, X_OK) != 0)
		return pl_fail(err, PL_ERR_INPUT, "pass an executable file", "'%s' is not executable", exe);
	s->argv[0] = s->exe;
	json_array_foreach(args, i, v) {
		if (!json_is_string(v))
			return pl_fail(err, PL_ERR_USAGE, "pass arguments as strings", "'%s': argument %zu is not a string",
				       s->label, i + 1);
		s->argv[n++] = json_string_value(v);
	}
	s->argv[n] = NULL;
	one = json_pack("{s:s?}", "working_directory", wd);
	rc = tool_collection_cwd(x->ctx, one, s->cwd, sizeof(s->cwd), err);
	json_decref(one);
	if (rc)
		return rc;
	if (!s->cwd[0] && !getcwd(s->cwd, sizeof(s->cwd)))
		return pl_fail(err, PL_ERR_INPUT, "pass working_directory", "no working directory");
	if (env && (rc = tool_collection_env(env, &s->env, err)))
		return rc;
	s->env.env[s->env.nenv] = NULL;
	return PL_OK;
}

/* ------------------------------------------------------------ one run */

static json_t *num_or_null(double v)
{
	return isfinite(v) ? json_real(v) : json_null();
}

/* Up to MAX_STDOUT_READ bytes of `path`, NUL-terminated (new). */
static char *read_small(const char *path, size_t *len)
{
	struct pl_buf b = {0};
	char chunk[65536];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	*len = 0;
	if (fd >= 0) {
		while (b.len < MAX_STDOUT_READ && (n = read(fd, chunk, sizeof(chunk))) > 0)
			pl_buf_add(&b, chunk, (size_t)n);
		close(fd);
	}
	pl_buf_add(&b, "", 1);
	*len = b.len - 1;
	return b.data;
}

/* The metric (first line matching the pattern) and the hash of stdout
 * without the lines the pattern matches. */
static bool scan_stdout(struct experiment *x, const char *text, size_t len, double *metric,
			char hash[65])
{
	struct pl_buf kept = {0};
	bool found = false;

	for (const char *l = text; l < text + len;) {
		const char *nl = memchr(l, '\n', (size_t)(text + len - l));
		size_t n = nl ? (size_t)(nl - l) : (size_t)(text + len - l);
		char *line = pl_xstrndup(l, n);
		regmatch_t m[2];
		bool match = x->has_metric && regexec(&x->re, line, 2, m, 0) == 0;

		if (match && !found && m[1].rm_so >= 0) {
			char *end;
			line[m[1].rm_eo] = '\0';
			double v = strtod(line + m[1].rm_so, &end);
			if (end != line + m[1].rm_so && isfinite(v)) {
				*metric = v;
				found = true;
			}
		}
		if (!match)
			pl_buf_add(&kept, l, n + (nl != NULL));
		free(line);
		l += n + (nl != NULL);
	}
	pl_sha256_hex(kept.data ? kept.data : "", kept.len, hash);
	pl_buf_release(&kept);
	return found;
}

static void stderr_tail(const char *path, char *out, size_t cap)
{
	size_t len;
	char *text = read_small(path, &len);
	char *end = text + len;

	while (end > text && (end[-1] == '\n' || end[-1] == ' '))
		*--end = '\0';
	char *start = end;
	while (start > text && start[-1] != '\n')
		start--;
	snprintf(out, cap, "%s", start);
	for (char *c = out; *c; c++)
		if ((unsigned char)*c < 0x20 || (unsigned char)*c >= 0x7f)
			*c = '?';
	free(text);
}

static void exclude(struct experiment *x, const struct side *s, size_t block, size_t run,
		    const char *status, json_t *reason_new)
{
	json_array_append_new(x->excluded, json_pack("{s:s,s:I,s:I,s:s,s:o}", "side", s->label,
		"block", (json_int_t)block, "run", (json_int_t)run, "status", status, "reason", reason_new));
}

/* perf stat -x , output: VALUE,UNIT,EVENT,...; the three counters into
 * vals (NaN when not counted). */
static void read_counters(const char *path, double vals[M_COUNT])
{
	size_t len;
	char *text = read_small(path, &len), *next;

	for (char *l = text; l && *l; l = next) {
		if ((next = strchr(l, '\n')))
			*next++ = '\0';
		char *f1 = strchr(l, ','), *f2 = f1 ? strchr(f1 + 1, ',') : NULL, *end;
		if (l[0] == '#' || !f2)
			continue;
		char *f3 = strchr(f2 + 1, ',');
		if (f3)
			*f3 = '\0';
		double v = strtod(l, &end);
		if (end != f1)
			continue;
		for (int m = M_TASK_CLOCK; m <= M_FAULTS; m++)
			if (strncmp(f2 + 1, measures[m].event, strlen(measures[m].event)) == 0 &&
			    (f2[1 + strlen(measures[m].event)] == '\0' || f2[1 + strlen(measures[m].event)] == ':'))
				vals[m] = v;
	}
	free(text);
}

/* perf stat -x , -e EVENTS -o STAGING/stat.csv -- PROGRAM ARGS into
 * `pargv`: the launcher's perf request, checked as a collection's. */
static void counters_argv(const struct experiment *x, const struct side *s, const char **pargv)
{
	size_t n = 0;

	pargv[n++] = x->perf_path;
	pargv[n++] = "stat";
	pargv[n++] = "-x";
	pargv[n++] = ",";
	pargv[n++] = "-e";
	pargv[n++] = STAT_EVENTS;
	pargv[n++] = "-o";
	pargv[n++] = x->stat_path;
	pargv[n++] = "--";
	for (size_t i = 0; s->argv[i]; i++)
		pargv[n++] = s->argv[i];
	pargv[n] = NULL;
}

/* How a run ended: "ok", or its status with *reason (new) saying why. */
static const char *run_status(struct experiment *x, const struct side *s, const struct pl_run_result *res,
			      bool timed_out, uint32_t timeout_ms, bool has_metric, const char *hash, json_t **reason)
{
	char tail[200] = "";

	*reason = NULL;
	if (timed_out) {
		*reason = json_sprintf("killed after %.1f s (run_timeout_seconds)", timeout_ms / 1000.0);
		return "timed_out";
	}
	if (res->signal || res->exit_status) {
		stderr_tail(x->err_path, tail, sizeof(tail));
		*reason = res->signal ? json_sprintf("killed by signal %d; stderr: '%s'", res->signal, tail) :
			json_sprintf("exit status %d; stderr: '%s'", res->exit_status, tail);
		return "failed";
	}
	if (x->has_metric && !has_metric) {
		*reason = json_sprintf("no stdout line matched the metric's pattern with a number");
		return "no_metric";
	}
	if (x->check_output && s->first_hash[0] && strcmp(hash, s->first_hash) != 0) {
		*reason = json_sprintf("stdout (less the metric's lines) differs from this side's first run "
				       "(sha256 %.12s, first %.12s)", hash, s->first_hash);
		return "output_changed";
	}
	return "ok";
}

/* One run's entry in the artifact's runs (new). */
static json_t *run_json(const struct experiment *x, const struct side *s, size_t block, size_t run, bool warmup,
			const char *status, const struct pl_run_result *res, bool timed_out, double metric,
			const double *vals, const char *hash)
{
	return json_pack("{s:s,s:I,s:I,s:b,s:s,s:f,s:f,s:f,s:I,s:o,s:o,s:o,s:o,s:b,s:s}",
		"side", s->label, "block", (json_int_t)block, "run", (json_int_t)run, "warmup", warmup,
		"status", status, "wall_seconds", res->seconds, "user_seconds", res->user_seconds,
		"system_seconds", res->system_seconds, "max_rss_bytes", (json_int_t)res->max_rss_kb * 1024,
		"exit_status", res->signal ? json_null() : json_integer(res->exit_status),
		"signal", res->signal ? json_integer(res->signal) : json_null(),
		"metric", isfinite(metric) ? json_real(metric) : json_null(),
		"counters", x->counters ? json_pack("{s:o,s:o,s:o}", "task_clock_ms", num_or_null(vals[M_TASK_CLOCK]),
			"context_switches", num_or_null(vals[M_CSW]), "page_faults", num_or_null(vals[M_FAULTS])) : json_null(),
		"timed_out", timed_out, "stdout_sha256", hash);
}

/* Run side `s` once (block `block`, its run number `run`); its measures
 * enter the sample unless it is a warmup or is excluded. */
static enum pl_err run_once(struct experiment *x, struct side *s, size_t block, size_t run,
			    bool warmup, uint32_t timeout_ms, struct pl_error *err)
{
	const char *pargv[PL_COLLECT_MAX_ARGS + 12];
	struct pl_run_opts o = {
		.argv = s->argv, .env = s->env.env, .inherit_env = true, .cwd = s->cwd,
		.stdout_path = x->out_path, .stderr_path = x->err_path, .timeout_ms = timeout_ms,
	};
	struct pl_run_result res;
	const char *status;
	char hash[65] = "";
	double metric = NAN, vals[M_COUNT];
	json_t *reason;
	bool has_metric, timed_out;
	size_t len;
	char *out;
	enum pl_err rc;

	if (x->counters) {
		counters_argv(x, s, pargv);
		o.argv = pargv;
		unlink(x->stat_path);
	}
	if (x->conn > 0)
		rc = x->counters ? coll_launch_run(x->conn, &o, &res, err) : coll_launch_program(x->conn, &o, &res, err);
	else
		rc = pl_run(&o, &res, err);
	if (rc && rc != PL_ERR_TIMEOUT) {
		pl_run_result_release(&res);
		return rc;
	}
	out = read_small(x->out_path, &len);
	has_metric = scan_stdout(x, out, len, &metric, hash);
	free(out);
	timed_out = res.timed_out || rc == PL_ERR_TIMEOUT;
	status = run_status(x, s, &res, timed_out, timeout_ms, has_metric, hash, &reason);
	if (strcmp(status, "ok") == 0 && !s->first_hash[0])
		snprintf(s->first_hash, sizeof(s->first_hash), "%s", hash);
	vals[M_WALL] = res.seconds;
	vals[M_USER] = res.user_seconds;
	vals[M_SYS] = res.system_seconds;
	vals[M_RSS] = (double)res.max_rss_kb * 1024.0;
	vals[M_METRIC] = metric;
	vals[M_TASK_CLOCK] = vals[M_CSW] = vals[M_FAULTS] = NAN;
	if (x->counters)
		read_counters(x->stat_path, vals);
	json_array_append_new(x->runs, run_json(x, s, block, run, warmup, status, &res, timed_out, metric, vals, hash));
	pl_run_result_release(&res);
	if (reason) {
		exclude(x, s, block, run, status, reason);
		return PL_OK;
	}
	if (!warmup) {
		for (int m = 0; m < M_COUNT; m++)
			s->v[m][s->used] = vals[m];
		s->used++;
	}
	return PL_OK;
}

/* ------------------------------------------------------------ verdicts */

static uint64_t splitmix64(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static uint64_t fresh_seed(void)
{
	struct timespec ts;
	uint64_t s = 0;
	int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);

	if (fd >= 0) {
		if (read(fd, &s, sizeof(s)) != (ssize_t)sizeof(s))
			s = 0;
		close(fd);
	}
	clock_gettime(CLOCK_REALTIME, &ts);
	s ^= (uint64_t)ts.tv_nsec * 0x9e3779b97f4a7c15ull ^ (uint64_t)getpid();
	return s & ((1ull << 53) - 1);   /* a JSON integer every client reads exactly */
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Coefficient of variation (sample standard deviation over the mean), in
 * percent; NaN under 2 values. */
static double cv_percent(json_t *values)
{
	size_t n = json_array_size(values), i;
	double sum = 0, ss = 0, mean;
	json_t *v;

	if (n < 2)
		return NAN;
	json_array_foreach(values, i, v)
		sum += json_number_value(v);
	mean = sum / (double)n;
	json_array_foreach(values, i, v)
		ss += (json_number_value(v) - mean) * (json_number_value(v) - mean);
	return mean > 0 ? 100.0 * sqrt(ss / (double)(n - 1)) / mean : NAN;
}

static json_t *bench_named(json_t *doc, const char *name)
{
	json_t *b;
	size_t i;

	json_array_foreach(json_object_get(doc, "benchmarks"), i, b)
		if (strcmp(json_string_value(json_object_get(b, "name")), name) == 0)
			return b;
	return NULL;
}

/* A measure compare_benchmarks could not compare: insufficient data, with
 * its reason, and the spread each side has (new). */
static json_t *verdict_uncompared(const char *measure, json_t *bb, const char *why, double cvb, double cvc)
{
	const char *unit = json_string_value(json_object_get(bb, "unit"));
	const char *direction = json_string_value(json_object_get(bb, "direction"));

	return json_pack("{s:s,s:s,s:s,s:s,s:n,s:n,s:n,s:n,s:n,s:{s:o,s:o},s:n}", "measure", measure,
		"verdict", "insufficient_data", "reason", why, "unit", unit ? unit : "",
		"direction", direction ? direction : "lower_is_better",
		"baseline_median", "candidate_median", "ratio_of_medians", "confidence_interval", "p_value",
		"cv_percent", "baseline", num_or_null(cvb), "candidate", num_or_null(cvc), "runs_to_resolve");
}

/* compare_benchmarks' status as the experiment's verdict. */
static const char *verdict_name(const char *status)
{
	if (strcmp(status, "candidate_improvement") == 0)
		return "improvement";
	if (strcmp(status, "candidate_regression") == 0)
		return "regression";
	if (strcmp(status, "no_material_change") == 0)
		return "no_difference";
	return "insufficient_data";
}

/* No difference, but the worse side's spread passes max_cv: too noisy to
 * say.  The median's spread shrinks as 1/sqrt(runs): runs * (cv/bound)^2
 * a side would spread like the bound's cv does at `runs`.  Replaces
 * *reason and gives the runs a side would need (new). */
static json_t *too_noisy(double worst, double max_cv, size_t runs, json_t **reason)
{
	double need = ceil((double)runs * (worst / max_cv) * (worst / max_cv));
	json_t *runs_needed;

	if (need < (double)runs + 1)
		need = (double)runs + 1;
	runs_needed = json_integer(need > RUNS_TO_RESOLVE_MAX ? RUNS_TO_RESOLVE_MAX : (json_int_t)need);
	json_decref(*reason);
	*reason = json_sprintf("undecided, and the spread (coefficient of variation %.1f%%) passes max_cv_percent "
			       "%.1f%%: about %lld runs a side would bring it down to the bound's effect, or quiet the machine",
			       worst, max_cv, (long long)json_integer_value(runs_needed));
	return runs_needed;
}

/* One measure's verdict, from compare_benchmarks' statistics. */
static json_t *verdict_of(json_t *doc, const char *id, const char *measure, double threshold,
			  double max_cv, size_t runs)
{
	char bn[128], cn[128];
	struct pl_bench_query q = {.baseline_id = id, .candidate_id = id, .baseline_name = bn,
				   .candidate_name = cn, .threshold_percent = threshold, .limit = 1};
	json_t *res = NULL, *r, *bb, *ci, *mw, *out;
	struct pl_error err;
	size_t end, total;
	const char *verdict;
	double cvb, cvc, worst;
	json_t *runs_needed = json_null(), *reason;

	snprintf(bn, sizeof(bn), "baseline %s", measure);
	snprintf(cn, sizeof(cn), "candidate %s", measure);
	bb = bench_named(doc, bn);
	cvb = cv_percent(json_object_get(bb, "values"));
	cvc = cv_percent(json_object_get(bench_named(doc, cn), "values"));
	if (pl_bench_compare(doc, doc, &q, &res, &end, &total, &err) != PL_OK)
		return verdict_uncompared(measure, bb, err.text, cvb, cvc);
	r = json_array_get(json_object_get(res, "results"), 0);
	reason = json_copy(json_object_get(r, "reason"));
	verdict = verdict_name(json_string_value(json_object_get(r, "status")));
	worst = isfinite(cvb) && (!isfinite(cvc) || cvb >= cvc) ? cvb : cvc;
	if (strcmp(verdict, "no_difference") == 0 && isfinite(worst) && worst > max_cv) {
		verdict = "too_noisy";
		runs_needed = too_noisy(worst, max_cv, runs, &reason);
	}
	ci = json_object_get(r, "confidence_interval");
	mw = json_object_get(r, "mann_whitney");
	out = json_pack("{s:s,s:s,s:o,s:O,s:O,s:O,s:O,s:O,s:o,s:o,s:{s:o,s:o},s:o}", "measure", measure,
		"verdict", verdict, "reason", reason, "unit", json_object_get(r, "unit"),
		"direction", json_object_get(r, "direction"),
		"baseline_median", json_object_get(json_object_get(r, "baseline"), "median"),
		"candidate_median", json_object_get(json_object_get(r, "candidate"), "median"),
		"ratio_of_medians", json_object_get(r, "ratio_of_medians"),
		"confidence_interval", json_is_object(ci) ? json_pack("{s:O,s:O,s:O}", "level", json_object_get(ci, "level"),
			"low", json_object_get(ci, "low"), "high", json_object_get(ci, "high")) : json_null(),
		"p_value", json_is_object(mw) ? json_copy(json_object_get(mw, "p_value")) : json_null(),
		"cv_percent", "baseline", num_or_null(cvb), "candidate", num_or_null(cvc),
		"runs_to_resolve", runs_needed);
	json_decref(res);
	return out;
}

/* ------------------------------------------------------------ the tool */

static void experiment_release(struct experiment *x)
{
	for (int i = 0; i < 2; i++) {
		tool_collection_env_release(&x->sides[i].env);
		for (int m = 0; m < M_COUNT; m++)
			free(x->sides[i].v[m]);
	}
	if (x->has_metric)
		regfree(&x->re);
	if (x->staging[0]) {
		unlink(x->out_path);
		unlink(x->err_path);
		unlink(x->stat_path);
		rmdir(x->staging);
	}
	json_decref(x->runs);
	json_decref(x->excluded);
}

/* A side's arguments (new). */
static json_t *argv_json(const struct side *s)
{
	json_t *a = json_array();

	for (size_t i = 1; s->argv[i]; i++)
		json_array_append_new(a, json_string(s->argv[i]));
	return a;
}

static enum pl_err load_metric(struct experiment *x, json_t *metric, struct pl_error *err)
{
	const char *pattern, *dir;
	int rc;

	if (!metric)
		return PL_OK;
	pattern = json_string_value(json_object_get(metric, "pattern"));
	x->metric_name = json_string_value(json_object_get(metric, "name"));
	x->metric_unit = json_string_value(json_object_get(metric, "unit"));
	dir = json_string_value(json_object_get(metric, "direction"));
	if (!pattern || !x->metric_name || !x->metric_unit || !dir || json_object_size(metric) != 4 ||
	    !pl_bench_direction_from_name(dir, &x->metric_dir))
		return pl_fail(err, PL_ERR_USAGE, "pass metric={\"pattern\", \"name\", \"unit\", \"direction\"}",
			       "'metric' needs exactly pattern, name, unit and direction");
	for (int m = 0; m < M_METRIC; m++)
		if (strcmp(x->metric_name, measures[m].name) == 0)
			return pl_fail(err, PL_ERR_USAGE, "name it after what it counts",
				       "metric name '%s' is a measure's own name", x->metric_name);
	if ((rc = regcomp(&x->re, pattern, REG_EXTENDED)) != 0)
		return pl_fail(err, PL_ERR_USAGE, "pass a POSIX extended regular expression",
			       "metric pattern '%s' does not compile", pattern);
	x->has_metric = true;
	if (x->re.re_nsub != 1)
		return pl_fail(err, PL_ERR_USAGE, "put exactly one (...) around the number",
			       "metric pattern has %zu capture groups, not 1", x->re.re_nsub);
	return PL_OK;
}

static enum pl_err make_staging(struct experiment *x, struct pl_error *err)
{
	char parent[PATH_MAX];

	snprintf(parent, sizeof(parent), "%s/collections", x->ctx->artifact_root);
	if (mkdir(parent, 0755) != 0 && errno != EEXIST)
		return pl_fail(err, PL_ERR_OUTPUT, NULL, "cannot create '%s': %s", parent, strerror(errno));
	snprintf(x->staging, sizeof(x->staging), "%s/.staging-XXXXXX", parent);
	if (!mkdtemp(x->staging)) {
		x->staging[0] = '\0';
		return pl_fail(err, PL_ERR_OUTPUT, NULL, "cannot create a staging folder in '%s': %s", parent,
			       strerror(errno));
	}
	snprintf(x->out_path, sizeof(x->out_path), "%s/run.stdout", x->staging);
	snprintf(x->err_path, sizeof(x->err_path), "%s/run.stderr", x->staging);
	snprintf(x->stat_path, sizeof(x->stat_path), "%s/stat.csv", x->staging);
	return PL_OK;
}

static bool measure_on(const struct experiment *x, int m)
{
	return m == M_METRIC ? x->has_metric : measures[m].event ? x->counters : true;
}

/* The sides' samples as a benchmark set (format experiment); its source's
 * size and sha256 are the record's compact JSON. */
static void fill_set(struct experiment *x, json_t *record, struct pl_bench_set *s)
{
	char *text;

	s->format = PL_BENCH_EXPERIMENT;
	text = json_dumps(record, JSON_COMPACT | JSON_SORT_KEYS | JSON_REAL_PRECISION(17));
	s->size = text ? strlen(text) : 0;
	pl_sha256_hex(text ? text : "", s->size, s->sha256);
	free(text);
	for (int m = 0; m < M_COUNT; m++) {
		if (!measure_on(x, m))
			continue;
		for (int i = 0; i < 2; i++) {
			struct side *sd = &x->sides[i];
			char name[160];
			snprintf(name, sizeof(name), "%s %s", sd->label, m == M_METRIC ? x->metric_name : measures[m].name);
			struct pl_bench *b = pl_bench_add(s, name, m == M_METRIC ? "plain" : measures[m].name,
							  m == M_METRIC ? x->metric_unit : measures[m].unit,
							  m == M_METRIC ? x->metric_dir : PL_LOWER_IS_BETTER);
			if (!b)
				continue;
			if (m == M_METRIC) {
				b->own_unit = pl_xstrndup(x->metric_unit, strlen(x->metric_unit));
				b->unit = b->converted_from = b->own_unit;
			}
			for (size_t k = 0; k < sd->used; k++)
				pl_bench_add_value(s, b, sd->v[m][k]);
		}
	}
}

/* Judge every measure on the set's document, then write the artifact with
 * the verdicts in its record (the viewer shows them as they were given);
 * *verdicts a new reference. */
static enum pl_err write_artifact(struct experiment *x, json_t *record, double threshold, double max_cv,
				  char id[32], json_t **verdicts, struct pl_error *err)
{
	struct pl_bench_set s;
	char path[PATH_MAX + 64];
	size_t runs = x->sides[0].used > x->sides[1].used ? x->sides[0].used : x->sides[1].used;
	json_t *doc;
	enum pl_err rc;

	pl_bench_set_init(&s);
	fill_set(x, record, &s);
	doc = pl_bench_document(&s);
	*verdicts = json_array();
	for (int m = 0; m < M_COUNT; m++)
		if (measure_on(x, m))
			json_array_append_new(*verdicts, verdict_of(doc, "experiment",
				m == M_METRIC ? x->metric_name : measures[m].name, threshold, max_cv, runs));
	json_decref(doc);
	json_object_set(record, "verdicts", *verdicts);
	s.experiment = json_incref(record);
	rc = pl_bench_write(&s, x->ctx->artifact_root, id, path, sizeof(path), NULL, err);
	pl_bench_set_release(&s);
	return rc;
}

/* ------------------------------------------------------------ profile */

#define PROFILE_FUNCTIONS 5   /* compare_profiles rows in the result; the step pages on */
#define PROFILE_MIN_SECONDS 5 /* time left that a profile run still starts in */

/* Call tool `name` as an agent would (its schema's checks and defaults);
 * the result (new) or NULL with *err. */
static json_t *call_tool(const struct tool_ctx *ctx, const char *name, json_t *args_new, struct pl_error *err)
{
	json_t *r = NULL;

	if (!ctx->call)
		pl_fail(err, PL_ERR_INTERNAL, NULL, "this program cannot call %s from a tool", name);
	else if (ctx->call(ctx, name, args_new, &r, err) != PL_OK)
		r = NULL;
	json_decref(args_new);
	return r;
}

/* One side recorded by collect_profile and analyzed: {collection_id,
 * analysis_id} (new), or NULL with *err. */
static json_t *profile_side(const struct tool_ctx *ctx, json_t *args, const char *label, uint32_t timeout_s,
			    struct pl_error *err)
{
	json_t *cmd = json_deep_copy(json_object_get(args, label)), *col, *an, *out = NULL;
	char path[128];

	json_object_set(cmd, "authorization", json_object_get(args, "authorization"));
	json_object_set_new(cmd, "timeout_seconds", json_integer(timeout_s));
	if (!(col = call_tool(ctx, "collect_profile", cmd, err)))
		return NULL;
	snprintf(path, sizeof(path), "perflens://artifacts/collections/%s/perf.data",
		 json_string_value(json_object_get(col, "collection_id")));
	if ((an = call_tool(ctx, "analyze_profile", json_pack("{s:s}", "path", path), err)))
		out = json_pack("{s:O,s:O}", "collection_id", json_object_get(col, "collection_id"),
				"analysis_id", json_object_get(an, "analysis_id"));
	json_decref(col);
	json_decref(an);
	return out;
}

/* profile=true: both sides under perf once more, and their comparison's
 * first rows (new), or NULL with *err. */
static json_t *profile_both(const struct tool_ctx *ctx, json_t *args, uint32_t timeout_s, struct pl_error *err)
{
	json_t *b = profile_side(ctx, args, "baseline", timeout_s, err), *c = NULL, *cmp = NULL, *out = NULL;

	if (b && (c = profile_side(ctx, args, "candidate", timeout_s, err)))
		cmp = call_tool(ctx, "compare_profiles", json_pack("{s:O,s:O,s:i,s:i}",
			"baseline_id", json_object_get(b, "analysis_id"), "candidate_id", json_object_get(c, "analysis_id"),
			"limit", PROFILE_FUNCTIONS, "path_limit", 1), err);
	if (cmp)
		out = json_pack("{s:O,s:O,s:{s:O,s:O,s:O,s:O,s:O}}", "baseline", b, "candidate", c, "compare",
			"comparability", json_object_get(cmp, "comparability"),
			"status_counts", json_object_get(cmp, "status_counts"),
			"functions", json_object_get(cmp, "functions"), "page", json_object_get(cmp, "page"),
			"exports", json_object_get(cmp, "exports"));
	json_decref(b);
	json_decref(c);
	json_decref(cmp);
	return out;
}

static json_t *next_steps(const char *id, bool has_metric, const char *metric_name, json_t *profile)
{
	json_t *steps = json_array();
	char bn[160], cn[160];

	snprintf(bn, sizeof(bn), "baseline %s", has_metric ? metric_name : "wall_time");
	snprintf(cn, sizeof(cn), "candidate %s", has_metric ? metric_name : "wall_time");
	json_array_append_new(steps, tool_next_step("compare_benchmarks",
		json_pack("{s:s,s:s,s:s}", "baseline_id", id, "baseline_name", bn, "candidate_name", cn),
		"the full statistics of one measure of this experiment"));
	if (json_is_object(profile))
		json_array_append_new(steps, tool_next_step("compare_profiles", json_pack("{s:O,s:O}",
			"baseline_id", json_object_get(json_object_get(profile, "baseline"), "analysis_id"),
			"candidate_id", json_object_get(json_object_get(profile, "candidate"), "analysis_id")),
			"what changed between the sides' profiles, function by function and path by path"));
	return steps;
}

/* What the call asked of the schedule, read once from its arguments. */
struct plan {
	size_t runs, warmup;
	double bound, threshold, max_cv, start;
	uint64_t seed;
	const char *analysis_id, *candidate_id;
};

/* The call's schedule, in one json_unpack of its arguments (the input
 * schema has checked their types and filled the defaults; seed,
 * analysis_id and candidate_id may be absent). */
static enum pl_err plan_read(json_t *args, struct plan *pl, struct pl_error *err)
{
	json_int_t runs, warmup, bound, seed = -1;
	json_error_t je;

	memset(pl, 0, sizeof(*pl));
	if (json_unpack_ex(args, &je, 0, "{s:I,s:I,s:I,s:F,s:F,s?I,s?s,s?s}", "runs", &runs, "warmup", &warmup,
			   "timeout_seconds", &bound, "practical_threshold_percent", &pl->threshold,
			   "max_cv_percent", &pl->max_cv, "seed", &seed, "analysis_id", &pl->analysis_id,
			   "candidate_id", &pl->candidate_id) != 0)
		return pl_fail(err, PL_ERR_USAGE, "pass the arguments the input schema lists", "%s", je.text);
	pl->runs = (size_t)runs;
	pl->warmup = (size_t)warmup;
	pl->bound = (double)bound;
	pl->seed = json_object_get(args, "seed") ? (uint64_t)seed : fresh_seed();
	pl->start = now_s();
	return PL_OK;
}

/* The checks before anything runs: ids that go together, the operator's
 * gates, the analysis named, and the launcher that runs the programs as
 * the user would. */
static enum pl_err experiment_allowed(const struct tool_ctx *ctx, json_t *args, const struct plan *pl,
				      struct pl_error *err)
{
	enum pl_err rc;

	if (!!pl->analysis_id != !!pl->candidate_id)
		return pl_fail(err, PL_ERR_USAGE, "pass both analysis_id and candidate_id (from classify_hotspots), or neither",
			       "candidate_id needs the analysis_id it came from");
	if ((rc = tool_collection_gates(ctx, args, false, err)))
		return rc;
	if (pl->analysis_id) {
		char an[PATH_MAX];
		snprintf(an, sizeof(an), "%s/analyses/%s.json", ctx->artifact_root, pl->analysis_id);
		if (access(an, F_OK) != 0)
			return pl_fail(err, PL_ERR_INPUT, "pass the analysis_id classify_hotspots was called with",
				       "no analysis '%s'", pl->analysis_id);
	}
	if (sbx_confined() && sbx_launcher_conn() <= 0)
		return pl_fail(err, PL_ERR_UNSUPPORTED,
			       "restart perflens-mcp (its stderr says why the launcher did not start); docs/collection.md",
			       "experiment refused: the collection launcher is not running, and the programs would run "
			       "inside the analysis sandbox, not as the user runs them");
	return PL_OK;
}

/* The experiment's sides, metric, staging and per-run slots. */
static enum pl_err experiment_prepare(struct experiment *x, json_t *args, const struct plan *pl,
				      struct pl_error *err)
{
	json_t *baseline, *candidate, *metric = NULL;
	json_int_t run_timeout;
	int check_output, counters;
	json_error_t je;
	enum pl_err rc;

	x->runs = json_array();
	x->excluded = json_array();
	x->sides[0].label = "baseline";
	x->sides[1].label = "candidate";
	if (json_unpack_ex(args, &je, 0, "{s:o,s:o,s?o,s:b,s:b,s:I}", "baseline", &baseline, "candidate", &candidate,
			   "metric", &metric, "check_output", &check_output, "perf_counters", &counters,
			   "run_timeout_seconds", &run_timeout) != 0)
		return pl_fail(err, PL_ERR_USAGE, "pass the arguments the input schema lists", "%s", je.text);
	x->check_output = check_output;
	x->counters = counters;
	x->perf_path = x->ctx->perf.path;
	x->run_timeout_ms = (uint32_t)run_timeout * 1000;
	x->conn = sbx_launcher_conn();
	if ((rc = side_load(x, &x->sides[0], baseline, err)) || (rc = side_load(x, &x->sides[1], candidate, err)) ||
	    (rc = load_metric(x, metric, err)) || (rc = make_staging(x, err)))
		return rc;
	for (int i = 0; i < 2; i++)
		for (int m = 0; m < M_COUNT; m++)
			x->sides[i].v[m] = pl_xmalloc((pl->runs + 1) * sizeof(double));
	return PL_OK;
}

/* Each block's order of the two sides, drawn from the seed (new). */
static json_t *plan_blocks(const struct plan *pl)
{
	json_t *blocks = json_array();
	uint64_t state = pl->seed;

	for (size_t b = 0; b < pl->warmup + pl->runs; b++) {
		int first = (int)(splitmix64(&state) & 1);
		json_array_append_new(blocks, json_string(first ? "candidate,baseline" : "baseline,candidate"));
	}
	return blocks;
}

/* Run the blocks in their order within the overall bound; blocks not run
 * leave `blocks`, and *stopped says why (new, or left null). */
static enum pl_err run_blocks(struct experiment *x, const struct plan *pl, json_t *blocks, json_t **stopped,
			      struct pl_error *err)
{
	size_t total = pl->warmup + pl->runs;
	enum pl_err rc = PL_OK;

	for (size_t b = 0; b < total && !rc; b++) {
		int first = strcmp(json_string_value(json_array_get(blocks, b)), "candidate,baseline") == 0;
		double left = pl->bound - (now_s() - pl->start);
		if (left < 1.0) {
			json_decref(*stopped);
			*stopped = json_sprintf("the overall bound (timeout_seconds=%.0f) passed after %zu of %zu blocks",
						pl->bound, b, total);
			while (json_array_size(blocks) > b)
				json_array_remove(blocks, b);
			break;
		}
		for (int k = 0; k < 2 && !rc; k++) {
			struct side *s = &x->sides[k == 0 ? first : !first];
			uint32_t t = x->run_timeout_ms;
			left = pl->bound - (now_s() - pl->start);
			if (left * 1000 < t)
				t = left > 1 ? (uint32_t)(left * 1000) : 1000;
			rc = run_once(x, s, b, b + 1, b < pl->warmup, t, err);
		}
		pl_progress_time((uint64_t)((now_s() - pl->start) * 1000), (uint64_t)(pl->bound * 1000));
	}
	pl_progress_time_end((uint64_t)((now_s() - pl->start) * 1000), (uint64_t)(pl->bound * 1000));
	return rc;
}

/* The artifact's record of what ran (new), or NULL. */
static json_t *experiment_record_json(const struct experiment *x, json_t *args, const struct plan *pl, json_t *blocks)
{
	return json_pack("{s:I,s:I,s:I,s:O,s:s,s:{s:s,s:o,s:s},s:{s:s,s:o,s:s},s:O?,s:b,s:b,s:f,s:f,s:f,s:f,s:O}",
		"seed", (json_int_t)pl->seed, "runs_per_side", (json_int_t)pl->runs, "warmup", (json_int_t)pl->warmup,
		"blocks", blocks, "where", x->conn > 0 ? "launcher" : "this_process",
		"baseline", "executable", x->sides[0].exe, "arguments", argv_json(&x->sides[0]),
		"working_directory", x->sides[0].cwd,
		"candidate", "executable", x->sides[1].exe, "arguments", argv_json(&x->sides[1]),
		"working_directory", x->sides[1].cwd,
		"metric", json_object_get(args, "metric"), "check_output", x->check_output, "perf_counters", x->counters,
		"run_timeout_seconds", x->run_timeout_ms / 1000.0, "timeout_seconds", pl->bound,
		"practical_threshold_percent", pl->threshold, "max_cv_percent", pl->max_cv, "runs", x->runs);
}

/* The candidate's record with the verdict on its measure (new), or NULL
 * with err set. */
static json_t *record_candidate(const struct experiment *x, const struct plan *pl, const char *id, json_t *verdicts,
				struct pl_error *err)
{
	const char *measure = x->has_metric ? x->metric_name : "wall_time";
	json_t *v = NULL, *e;
	size_t i;

	json_array_foreach(verdicts, i, e)
		if (strcmp(json_string_value(json_object_get(e, "measure")), measure) == 0)
			v = e;
	return pl_experiment_record(x->ctx->artifact_root, pl->analysis_id, pl->candidate_id, id, v, err);
}

/* profile=true: both sides profiled after the measured blocks, so perf
 * never weighs on them; a profile that cannot be had is a warning and
 * leaves the verdicts standing.  The profile (new), or json null. */
static json_t *maybe_profile(const struct experiment *x, json_t *args, const struct plan *pl, json_t *warnings)
{
	double left = pl->bound - (now_s() - pl->start);
	struct pl_error perr = {0};
	json_t *p = NULL;

	if (!json_is_true(json_object_get(args, "profile")))
		return json_null();
	if (left < PROFILE_MIN_SECONDS)
		pl_fail(&perr, PL_ERR_TIMEOUT, "raise timeout_seconds",
			"the overall bound (timeout_seconds=%.0f) leaves no time", pl->bound);
	else
		p = profile_both(x->ctx, args, (uint32_t)fmax(1, fmin(fmin(left / 2, 600), x->run_timeout_ms / 500.0)),
				 &perr);
	if (p)
		return p;
	json_array_append_new(warnings, json_sprintf("profile: not recorded: %s%s%s%s", perr.text,
		perr.hint[0] ? " (" : "", perr.hint, perr.hint[0] ? ")" : ""));
	return json_null();
}

enum pl_err tool_run_experiment(const struct tool_ctx *ctx, json_t *args, json_t **result,
				struct pl_error *err)
{
	struct experiment x = {.ctx = ctx, .conn = -1};
	struct plan pl;
	json_t *blocks = NULL, *record = NULL, *verdicts = NULL, *warnings = json_array();
	json_t *stopped = json_null(), *cand = json_null(), *profile = NULL;
	char id[32], uri[128];
	enum pl_err rc;

	if ((rc = plan_read(args, &pl, err)) || (rc = experiment_allowed(ctx, args, &pl, err)) ||
	    (rc = experiment_prepare(&x, args, &pl, err)))
		goto out;
	blocks = plan_blocks(&pl);
	if ((rc = run_blocks(&x, &pl, blocks, &stopped, err)))
		goto out;
	if (!(record = experiment_record_json(&x, args, &pl, blocks))) {
		rc = pl_fail(err, PL_ERR_INTERNAL, NULL, "cannot encode the experiment");
		goto out;
	}
	if ((rc = write_artifact(&x, record, pl.threshold, pl.max_cv, id, &verdicts, err)))
		goto out;
	if (json_array_size(x.excluded))
		json_array_append_new(warnings, json_sprintf("%zu run(s) failed, timed out, lacked the metric or changed "
			"their output: reported in excluded_runs, not used", json_array_size(x.excluded)));
	if (pl.candidate_id) {
		json_decref(cand);
		if (!(cand = record_candidate(&x, &pl, id, verdicts, err))) {
			rc = err->code;
			goto out;
		}
	}
	profile = maybe_profile(&x, args, &pl, warnings);
	snprintf(uri, sizeof(uri), "perflens://artifacts/benchmarks/%s.json", id);
	*result = json_pack("{s:s,s:I,s:I,s:I,s:O,s:s,s:O,s:{s:I,s:I},s:O,s:O,s:O,s:O,s:s,s:O,s:o}",
		"experiment_id", id, "seed", (json_int_t)pl.seed, "runs_per_side", (json_int_t)pl.runs,
		"warmup", (json_int_t)pl.warmup, "blocks", blocks, "where", x.conn > 0 ? "launcher" : "this_process",
		"stopped_early", stopped, "used_runs", "baseline", (json_int_t)x.sides[0].used,
		"candidate", (json_int_t)x.sides[1].used, "verdicts", verdicts, "excluded_runs", x.excluded,
		"candidate", cand, "profile", profile, "artifact", uri, "warnings", warnings,
		"next_steps", next_steps(id, x.has_metric, x.metric_name, profile));
	if (!*result)
		rc = pl_fail(err, PL_ERR_INTERNAL, NULL, "cannot encode the result");
out:
	json_decref(blocks);
	json_decref(record);
	json_decref(verdicts);
	json_decref(warnings);
	json_decref(stopped);
	json_decref(cand);
	json_decref(profile);
	experiment_release(&x);
	return rc;
}
