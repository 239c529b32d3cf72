/* benchmark.c - the three benchmark readers and the benchmark artifact
 * (see benchmark.h).
 *
 * A producer's file is read whole (through input.c, so gzip and zstd work
 * and the size is bounded), parsed by jansson, recognized by its shape
 * (hyperfine: "results"[].times; Google Benchmark: "context" and
 * "benchmarks"[].time_unit or run_type; pyperf: "version" and
 * "benchmarks"[].runs) and turned into pl_bench entries.  Benchmark names
 * are interned in a string table whose dense ids are the entries' indexes,
 * so rows of one Google Benchmark benchmark gather in first-seen order.
 *
 * The artifact is one jansson document dumped once; its id hashes that
 * dump with a zero id, and the zeros are then overwritten in the text.
 */
#include "benchmark.h"
#include "store/artifact.h"
#include "bench_stats.h"
#include "base/input.h"
#include "base/sha256.h"
#include "base/util.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define ID_PLACEHOLDER "bm-00000000000000000000"
#define BENCH_DUMP_FLAGS (JSON_COMPACT | JSON_INDENT(1) | JSON_REAL_PRECISION(17))

const struct pl_bench_env_key pl_bench_env_keys[] = {
	{"host_name", "string", false},
	{"cpu_model", "string", true},
	{"num_cpus", "integer", true},
	{"mhz_per_cpu", "number", false},
	{"caches", "string", true},
	{"cpu_scaling_enabled", "boolean", true},
	{"governor", "string", true},
	{"kernel", "string", true},
	{"platform", "string", true},
	{"compiler", "string", true},
	{"compiler_flags", "string", true},
	{"build_type", "string", true},
	{"library_build_type", "string", true},
	{"runtime_version", "string", true},
	{"git_commit", "string", false},
	{"git_dirty", "boolean", true},
	{"date", "string", false},
	{"load_avg_1min", "number", false},
	{NULL, NULL, false},
};

/* ------------------------------------------------------------- the set */

/* The benchmark names of one parse, interned: a name's id is its entry's
 * index in s->items.  Lives only during pl_bench_parse_json. */
struct names {
	struct pl_strtab tab;
};

void pl_bench_set_init(struct pl_bench_set *s)
{
	memset(s, 0, sizeof(*s));
	s->environment = json_object();
	for (const struct pl_bench_env_key *k = pl_bench_env_keys; k->name; k++)
		json_object_set_new(s->environment, k->name, json_null());
	s->environment_source = json_object();
	s->producer_metadata = json_object();
	s->producer_version = json_null();
	s->warnings = json_array();
	s->compression = "none";
	s->sha256[0] = '\0';
}

void pl_bench_set_release(struct pl_bench_set *s)
{
	for (size_t i = 0; i < s->n; i++) {
		free(s->items[i].name);
		free(s->items[i].own_unit);
		free(s->items[i].values);
	}
	free(s->items);
	free(s->path);
	json_decref(s->environment);
	json_decref(s->environment_source);
	json_decref(s->producer_metadata);
	json_decref(s->producer_version);
	json_decref(s->warnings);
	json_decref(s->experiment);
	memset(s, 0, sizeof(*s));
}

const char *pl_bench_format_name(enum pl_bench_format f)
{
	switch (f) {
	case PL_BENCH_HYPERFINE: return "hyperfine";
	case PL_BENCH_GOOGLE: return "google_benchmark";
	case PL_BENCH_PYPERF: return "pyperf";
	case PL_BENCH_VALUES: return "values";
	case PL_BENCH_EXPERIMENT: return "experiment";
	default: return "auto";
	}
}

bool pl_bench_format_from_name(const char *name, enum pl_bench_format *f)
{
	static const enum pl_bench_format all[] = {PL_BENCH_AUTO, PL_BENCH_HYPERFINE,
						   PL_BENCH_GOOGLE, PL_BENCH_PYPERF, PL_BENCH_VALUES};

	for (size_t i = 0; i < PL_ARRAY_LEN(all); i++)
		if (name && strcmp(name, pl_bench_format_name(all[i])) == 0) {
			*f = all[i];
			return true;
		}
	return false;
}

const char *pl_bench_direction_name(enum pl_bench_direction d)
{
	return d == PL_HIGHER_IS_BETTER ? "higher_is_better" : "lower_is_better";
}

bool pl_bench_direction_from_name(const char *name, enum pl_bench_direction *d)
{
	if (name && strcmp(name, "higher_is_better") == 0)
		*d = PL_HIGHER_IS_BETTER;
	else if (name && strcmp(name, "lower_is_better") == 0)
		*d = PL_LOWER_IS_BETTER;
	else
		return false;
	return true;
}

static void warn(struct pl_bench_set *s, json_t *msg_new)
{
	json_array_append_new(s->warnings, msg_new);
}

/* A new benchmark entry, or the one already called `name` (id from the
 * name table); fails past the benchmark limit or a name too long. */
static enum pl_err bench_get(struct pl_bench_set *s, struct names *nm, const char *name,
			     struct pl_bench **out, struct pl_error *err)
{
	size_t len = strlen(name);
	uint32_t id;

	if (len > PL_BENCH_MAX_NAME)
		return pl_fail(err, PL_ERR_LIMIT, "shorten the benchmark names",
			       "a benchmark name is longer than %d bytes", PL_BENCH_MAX_NAME);
	id = pl_strtab_find(&nm->tab, name, len);
	if (id == PL_NOID) {
		if (s->n >= PL_BENCH_MAX_BENCHMARKS)
			return pl_fail(err, PL_ERR_LIMIT, "split the file, or pass name=... to keep one benchmark",
				       "the file holds more than %d benchmarks", PL_BENCH_MAX_BENCHMARKS);
		id = pl_strtab_intern(&nm->tab, name, len);
		PL_GROW(s->items, s->cap, s->n + 1);
		memset(&s->items[s->n], 0, sizeof(s->items[0]));
		s->items[s->n].name = pl_xstrndup(name, len);
		s->n++;
	}
	*out = &s->items[id];
	return PL_OK;
}

static void bench_describe(struct pl_bench *b, const char *metric, const char *unit,
			   const char *from, double scale)
{
	if (b->metric)
		return;
	b->metric = metric;
	b->unit = unit;
	b->converted_from = from;
	b->scale = scale;
	b->direction = PL_LOWER_IS_BETTER;
}

/* One repeat, in the producer's unit; skipped (and counted) unless the
 * result is a positive finite number. */
static enum pl_err value_add(struct pl_bench_set *s, struct pl_bench *b, json_t *raw,
			     double scale, struct pl_error *err)
{
	double v = json_is_number(raw) ? json_number_value(raw) * scale : NAN;

	if (!(isfinite(v) && v > 0)) {
		s->skipped.invalid_values++;
		return PL_OK;
	}
	if (b->nvalues >= PL_BENCH_MAX_VALUES)
		return pl_fail(err, PL_ERR_LIMIT, "pass fewer repeats, or name=... to keep one benchmark",
			       "benchmark '%s' has more than %d repeats", b->name, PL_BENCH_MAX_VALUES);
	PL_GROW(b->values, b->cap, b->nvalues + 1);
	b->values[b->nvalues++] = v;
	return PL_OK;
}

/* ------------------------------------------------------- environment */

static const struct pl_bench_env_key *env_key(const char *name)
{
	for (const struct pl_bench_env_key *k = pl_bench_env_keys; k->name; k++)
		if (strcmp(k->name, name) == 0)
			return k;
	return NULL;
}

static bool env_type_ok(const struct pl_bench_env_key *k, json_t *v)
{
	if (strcmp(k->type, "string") == 0)
		return json_is_string(v);
	if (strcmp(k->type, "integer") == 0)
		return json_is_integer(v);
	if (strcmp(k->type, "number") == 0)
		return json_is_number(v);
	return json_is_boolean(v);
}

/* Record a producer value (stolen) when it has the key's type. */
static void env_set_new(struct pl_bench_set *s, const char *key, json_t *v)
{
	const struct pl_bench_env_key *k = env_key(key);

	if (v && k && env_type_ok(k, v)) {
		json_object_set(s->environment, key, v);
		json_object_set_new(s->environment_source, key, json_string("producer"));
	}
	json_decref(v);
}

/* A producer value borrowed from `obj`. */
static void env_copy(struct pl_bench_set *s, const char *key, json_t *obj, const char *field)
{
	json_t *v = json_object_get(obj, field);

	if (v)
		env_set_new(s, key, json_incref(v));
}

/* Keep the producer's context or metadata as recorded, within bounds. */
static void keep_metadata(struct pl_bench_set *s, json_t *obj)
{
	const char *key;
	json_t *v;

	json_object_foreach(obj, key, v) {
		char *text = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);
		bool fits = text && strlen(text) <= PL_BENCH_MAX_METADATA_BYTES &&
			    strlen(key) <= 256 &&
			    json_object_size(s->producer_metadata) < PL_BENCH_MAX_METADATA;
		free(text);
		if (fits)
			json_object_set_new(s->producer_metadata, key, json_deep_copy(v));
		else
			s->skipped.metadata_entries++;
	}
}

enum pl_err pl_bench_apply_environment(struct pl_bench_set *s, json_t *given,
				       struct pl_error *err)
{
	const char *key;
	json_t *v;

	if (!given)
		return PL_OK;
	if (!json_is_object(given))
		return pl_fail(err, PL_ERR_USAGE, "pass environment as an object, e.g. {\"git_dirty\": false}",
			       "'environment' must be an object");
	json_object_foreach(given, key, v) {
		const struct pl_bench_env_key *k = env_key(key);
		if (!k) {
			struct pl_buf names = {0};
			for (k = pl_bench_env_keys; k->name; k++)
				pl_buf_addf(&names, "%s%s", names.len ? ", " : "", k->name);
			pl_fail(err, PL_ERR_USAGE, "use the listed keys only",
				"unknown environment key '%s' (known: %s)", key, names.data);
			pl_buf_release(&names);
			return PL_ERR_USAGE;
		}
		if (!json_is_null(v) && !env_type_ok(k, v))
			return pl_fail(err, PL_ERR_USAGE, "fix the value's type",
				       "environment key '%s' must be a %s", key, k->type);
	}
	json_object_foreach(given, key, v) {
		json_t *have = json_object_get(s->environment, key);
		if (json_is_null(v) || json_equal(have, v))
			continue;
		if (json_is_null(have)) {
			json_object_set(s->environment, key, v);
			json_object_set_new(s->environment_source, key, json_string("caller"));
			continue;
		}
		char *a = json_dumps(have, JSON_ENCODE_ANY), *b = json_dumps(v, JSON_ENCODE_ANY);
		warn(s, json_sprintf("environment.%s: the producer recorded %.200s; the value passed "
				     "(%.200s) was not used", key, a ? a : "?", b ? b : "?"));
		free(a);
		free(b);
	}
	return PL_OK;
}

/* ------------------------------------------------------------ hyperfine */

static enum pl_err malformed(const char *what, const char *fmt_name, const char *why,
			     struct pl_error *err)
{
	return pl_fail(err, PL_ERR_MALFORMED,
		       "pass the file exactly as the producer wrote it, or the right format=",
		       "'%s' is not %s JSON: %s", what, fmt_name, why);
}

/* Two hyperfine commands can be the same text: the second gets " #2". */
static enum pl_err unique_bench(struct pl_bench_set *s, struct names *nm, const char *name,
				struct pl_bench **out, struct pl_error *err)
{
	size_t before = s->n;
	char alt[PL_BENCH_MAX_NAME + 32];

	if (bench_get(s, nm, name, out, err))
		return err->code;
	for (unsigned k = 2; s->n == before; k++) {
		snprintf(alt, sizeof(alt), "%s #%u", name, k);
		if (bench_get(s, nm, alt, out, err))
			return err->code;
		if (s->n > before)
			warn(s, json_sprintf("two results are called '%.200s': the later one is '%.200s'",
					     name, alt));
	}
	return PL_OK;
}

static enum pl_err parse_hyperfine(struct pl_bench_set *s, struct names *nm, json_t *doc,
				   const char *what, struct pl_error *err)
{
	json_t *results = json_object_get(doc, "results"), *r;
	size_t i;

	if (!json_is_array(results))
		return malformed(what, "hyperfine --export-json", "no \"results\" array", err);
	json_array_foreach(results, i, r) {
		json_t *cmd = json_object_get(r, "command"), *times = json_object_get(r, "times");
		json_t *codes = json_object_get(r, "exit_codes"), *t;
		struct pl_bench *b;
		size_t j;

		if (!json_is_string(cmd) || !json_is_array(times))
			return malformed(what, "hyperfine --export-json",
					 "a result lacks \"command\" or \"times\"", err);
		if (unique_bench(s, nm, json_string_value(cmd), &b, err))
			return err->code;
		bench_describe(b, "wall_time", "seconds", "s", 1.0);
		json_array_foreach(times, j, t) {
			json_t *code = json_array_get(codes, j);
			if (json_is_array(codes) && !(json_is_integer(code) && json_integer_value(code) == 0)) {
				s->skipped.failed_runs++;
				continue;
			}
			if (value_add(s, b, t, 1.0, err))
				return err->code;
		}
	}
	warn(s, json_string("hyperfine records no environment (CPU, kernel, compiler, governor, build type): "
			    "pass environment={...} to normalize_benchmark, or comparability cannot be checked"));
	return PL_OK;
}

/* ------------------------------------------------------ Google Benchmark */

/* The scale of a Google Benchmark time_unit; *name gets the static
 * spelling (the document's strings do not outlive the parse). */
static bool time_unit_scale(const char *u, double *scale, const char **name)
{
	static const struct { const char *name; double scale; } units[] = {
		{"ns", 1e-9}, {"us", 1e-6}, {"ms", 1e-3}, {"s", 1.0},
	};

	for (size_t i = 0; i < PL_ARRAY_LEN(units); i++)
		if (strcmp(u, units[i].name) == 0) {
			*scale = units[i].scale;
			*name = units[i].name;
			return true;
		}
	return false;
}

static const char *const aggregate_suffixes[] = {"_mean", "_median", "_stddev", "_cv"};

/* Files from before run_type (library < 1.5) mark aggregates only by a
 * suffix on the name of a benchmark that also has plain rows. */
static bool old_style_aggregate(json_t *rows, const char *name)
{
	size_t n = strlen(name), i;
	json_t *r;

	for (size_t k = 0; k < PL_ARRAY_LEN(aggregate_suffixes); k++) {
		size_t sl = strlen(aggregate_suffixes[k]);
		if (n <= sl || strcmp(name + n - sl, aggregate_suffixes[k]) != 0)
			continue;
		json_array_foreach(rows, i, r) {
			const char *other = json_string_value(json_object_get(r, "name"));
			if (other && strlen(other) == n - sl && strncmp(other, name, n - sl) == 0)
				return true;
		}
	}
	return false;
}

static bool any_run_type(json_t *rows)
{
	json_t *r;
	size_t i;

	json_array_foreach(rows, i, r)
		if (json_object_get(r, "run_type"))
			return true;
	return false;
}

static bool is_aggregate(json_t *r, json_t *rows, bool typed)
{
	const char *type = json_string_value(json_object_get(r, "run_type"));

	if (type)
		return strcmp(type, "aggregate") == 0;
	if (json_object_get(r, "aggregate_name"))
		return true;
	return !typed && old_style_aggregate(rows, json_string_value(json_object_get(r, "name")));
}

/* "L1 Data 32768 B x1, L2 Unified ..." or NULL when none were recorded. */
static json_t *caches_text(json_t *caches)
{
	struct pl_buf b = {0};
	json_t *c, *out;
	size_t i;

	json_array_foreach(caches, i, c)
		pl_buf_addf(&b, "%sL%lld %s %lld B x%lld", i ? ", " : "",
			    (long long)json_integer_value(json_object_get(c, "level")),
			    json_string_value(json_object_get(c, "type")) ?
				    json_string_value(json_object_get(c, "type")) : "?",
			    (long long)json_integer_value(json_object_get(c, "size")),
			    (long long)json_integer_value(json_object_get(c, "num_sharing")));
	out = b.len ? json_string(b.data) : NULL;
	pl_buf_release(&b);
	return out;
}

static void google_environment(struct pl_bench_set *s, json_t *ctx)
{
	json_t *load = json_object_get(ctx, "load_avg");
	json_t *scaling = json_object_get(ctx, "cpu_scaling_enabled");
	const char *build = json_string_value(json_object_get(ctx, "library_build_type"));

	if (!json_is_object(ctx)) {
		warn(s, json_string("the file has no \"context\": the environment is unknown"));
		return;
	}
	keep_metadata(s, ctx);
	env_copy(s, "host_name", ctx, "host_name");
	env_copy(s, "num_cpus", ctx, "num_cpus");
	env_copy(s, "mhz_per_cpu", ctx, "mhz_per_cpu");
	env_copy(s, "cpu_scaling_enabled", ctx, "cpu_scaling_enabled");
	env_copy(s, "library_build_type", ctx, "library_build_type");
	env_copy(s, "date", ctx, "date");
	env_set_new(s, "caches", caches_text(json_object_get(ctx, "caches")));
	if (json_is_number(json_array_get(load, 0)))
		env_set_new(s, "load_avg_1min", json_incref(json_array_get(load, 0)));
	if (json_is_true(scaling))
		warn(s, json_string("CPU frequency scaling was enabled while measuring (Google Benchmark's context): "
				    "expect noise; set the governor to performance"));
	if (build && strcmp(build, "debug") == 0)
		warn(s, json_string("the Google Benchmark library reports library_build_type \"debug\" (built "
				    "without NDEBUG; the library itself warns that timings may be affected): compare "
				    "only with runs linked against the same library"));
	if (json_is_array(load) && json_is_number(json_array_get(load, 0)) &&
	    json_is_integer(json_object_get(ctx, "num_cpus")) &&
	    json_number_value(json_array_get(load, 0)) >
		    0.5 * (double)json_integer_value(json_object_get(ctx, "num_cpus")))
		warn(s, json_sprintf("the 1-minute load average was %.2f on %lld CPUs while measuring: "
				     "other work shared the machine", json_number_value(json_array_get(load, 0)),
				     (long long)json_integer_value(json_object_get(ctx, "num_cpus"))));
}

static enum pl_err parse_google(struct pl_bench_set *s, struct names *nm, json_t *doc,
				const char *what, struct pl_error *err)
{
	json_t *rows = json_object_get(doc, "benchmarks"), *r;
	json_t *version = json_object_get(json_object_get(doc, "context"), "library_version");
	bool typed;
	size_t i;

	if (!json_is_array(rows))
		return malformed(what, "Google Benchmark", "no \"benchmarks\" array", err);
	typed = any_run_type(rows);
	google_environment(s, json_object_get(doc, "context"));
	if (json_is_string(version)) {
		json_decref(s->producer_version);
		s->producer_version = json_incref(version);
	}
	json_array_foreach(rows, i, r) {
		const char *name = json_string_value(json_object_get(r, "name"));
		const char *unit = json_string_value(json_object_get(r, "time_unit"));
		struct pl_bench *b;
		double scale;

		if (!name)
			return malformed(what, "Google Benchmark", "a row has no \"name\"", err);
		if (is_aggregate(r, rows, typed)) {
			s->skipped.aggregate_rows++;
			continue;
		}
		if (json_is_true(json_object_get(r, "error_occurred"))) {
			s->skipped.error_rows++;
			continue;
		}
		if (!unit)
			unit = "ns";  /* the library's default when a row omits it */
		if (!time_unit_scale(unit, &scale, &unit))
			return pl_fail(err, PL_ERR_UNSUPPORTED, "use ns, us, ms or s",
				       "benchmark '%s' has an unknown time_unit '%s'", name, unit);
		if (bench_get(s, nm, name, &b, err))
			return err->code;
		bench_describe(b, "real_time", "seconds", unit, scale);
		if (strcmp(b->converted_from, unit) != 0 && strcmp(b->converted_from, "mixed") != 0) {
			b->converted_from = "mixed";
			warn(s, json_sprintf("benchmark '%.200s' rows use several time units; all are converted to seconds",
					     name));
		}
		if (value_add(s, b, json_object_get(r, "real_time"), scale, err))
			return err->code;
	}
	return PL_OK;
}

/* ---------------------------------------------------------------- pyperf */

/* "governor:performance" entries of pyperf's cpu_config, distinct, in
 * order; NULL when there are none. */
static json_t *governors(const char *cpu_config)
{
	struct pl_buf b = {0};
	const char *p = cpu_config;
	json_t *out;

	while (p && (p = strstr(p, "governor:"))) {
		char word[64];
		size_t n;

		p += 9;
		n = strcspn(p, ",; ");
		snprintf(word, sizeof(word), "%.*s", (int)(n < 63 ? n : 63), p);
		if (!b.data || !strstr(b.data, word))
			pl_buf_addf(&b, "%s%s", b.len ? ", " : "", word);
		p += n;
	}
	out = b.len ? json_string(b.data) : NULL;
	pl_buf_release(&b);
	return out;
}

/* A metadata value: the suite's, else the one every benchmark agrees on. */
static json_t *pyperf_meta(json_t *suite_meta, json_t *benches, const char *key)
{
	json_t *v = json_object_get(suite_meta, key), *b, *agreed = NULL;
	size_t i;

	if (v)
		return v;
	json_array_foreach(benches, i, b) {
		json_t *bv = json_object_get(json_object_get(b, "metadata"), key);
		if (!bv || (agreed && !json_equal(agreed, bv)))
			return NULL;
		agreed = bv;
	}
	return agreed;
}

static void pyperf_environment(struct pl_bench_set *s, json_t *meta, json_t *benches)
{
	static const struct { const char *env, *meta; } map[] = {
		{"host_name", "hostname"}, {"cpu_model", "cpu_model_name"}, {"num_cpus", "cpu_count"},
		{"platform", "platform"}, {"runtime_version", "python_version"},
		{"compiler", "python_compiler"}, {"compiler_flags", "python_cflags"},
		{"date", "date"},
	};
	json_t *cfg = pyperf_meta(meta, benches, "cpu_config");
	json_t *version = pyperf_meta(meta, benches, "perf_version");

	if (json_is_object(meta))
		keep_metadata(s, meta);
	for (size_t i = 0; i < PL_ARRAY_LEN(map); i++) {
		json_t *v = pyperf_meta(meta, benches, map[i].meta);
		if (v)
			env_set_new(s, map[i].env, json_incref(v));
	}
	if (json_is_string(cfg))
		env_set_new(s, "governor", governors(json_string_value(cfg)));
	if (json_is_string(version)) {
		json_decref(s->producer_version);
		s->producer_version = json_incref(version);
	}
}

/* pyperf's unit `u` as our base unit and as pyperf spells it (static
 * strings: the document's do not outlive the parse). */
static bool pyperf_unit(const char *u, const char **unit, const char **from)
{
	static const char *const names[][2] = {
		{"second", "seconds"}, {"byte", "bytes"}, {"integer", "count"},
	};

	for (size_t i = 0; i < PL_ARRAY_LEN(names); i++)
		if (strcmp(u, names[i][0]) == 0) {
			*from = names[i][0];
			*unit = names[i][1];
			return true;
		}
	return false;
}

static enum pl_err pyperf_runs(struct pl_bench_set *s, struct pl_bench *b, json_t *runs,
			       const char *what, struct pl_error *err)
{
	json_t *run, *v;
	size_t i, j;

	if (!json_is_array(runs))
		return malformed(what, "pyperf", "a benchmark has no \"runs\" array", err);
	json_array_foreach(runs, i, run) {
		json_t *values = json_object_get(run, "values");
		s->skipped.warmup_values += json_array_size(json_object_get(run, "warmups"));
		if (json_array_size(values) == 0) {
			s->skipped.calibration_runs++;
			continue;
		}
		json_array_foreach(values, j, v)
			if (value_add(s, b, v, 1.0, err))
				return err->code;
	}
	return PL_OK;
}

static enum pl_err parse_pyperf(struct pl_bench_set *s, struct names *nm, json_t *doc,
				const char *what, struct pl_error *err)
{
	json_t *version = json_object_get(doc, "version"), *benches = json_object_get(doc, "benchmarks");
	json_t *meta = json_object_get(doc, "metadata"), *bench;
	size_t i;

	if (!((json_is_string(version) && strcmp(json_string_value(version), "1.0") == 0) ||
	      (json_is_integer(version) && json_integer_value(version) == 6)))
		return pl_fail(err, PL_ERR_UNSUPPORTED, "convert it with a current pyperf (python3 -m pyperf convert)",
			       "'%s': pyperf JSON version other than \"1.0\" or 6 is not read", what);
	if (!json_is_array(benches))
		return malformed(what, "pyperf", "no \"benchmarks\" array", err);
	pyperf_environment(s, meta, benches);
	json_array_foreach(benches, i, bench) {
		json_t *bm = json_object_get(bench, "metadata");
		const char *name = json_string_value(json_object_get(bm, "name"));
		const char *unit = json_string_value(json_object_get(bm, "unit"));
		const char *base_unit, *from;
		char fallback[32];
		struct pl_bench *b;

		if (!name)
			name = json_string_value(json_object_get(meta, "name"));
		if (!unit)
			unit = json_string_value(json_object_get(meta, "unit"));
		if (!unit)
			unit = "second";  /* pyperf's DEFAULT_UNIT */
		if (!name) {
			snprintf(fallback, sizeof(fallback), "benchmark %zu", i + 1);
			name = fallback;
			warn(s, json_sprintf("benchmark %zu has no name in its metadata: called '%s'", i + 1, name));
		}
		if (!pyperf_unit(unit, &base_unit, &from))
			return pl_fail(err, PL_ERR_UNSUPPORTED, "pyperf units are second, byte and integer",
				       "benchmark '%s' has an unknown unit '%s'", name, unit);
		if (bench_get(s, nm, name, &b, err))
			return err->code;
		bench_describe(b, "value", base_unit, from, 1.0);
		if (pyperf_runs(s, b, json_object_get(bench, "runs"), what, err))
			return err->code;
	}
	return PL_OK;
}

/* ------------------------------------------------------------- parsing */

static enum pl_bench_format detect(json_t *doc)
{
	json_t *benches = json_object_get(doc, "benchmarks");
	json_t *first = json_array_get(benches, 0);

	if (json_is_array(json_object_get(doc, "results")))
		return PL_BENCH_HYPERFINE;
	if (json_is_array(benches) && json_object_get(doc, "version") &&
	    (!first || json_object_get(first, "runs")))
		return PL_BENCH_PYPERF;
	if (json_is_array(benches) && (json_is_object(json_object_get(doc, "context")) ||
				       json_object_get(first, "time_unit") || json_object_get(first, "run_type")))
		return PL_BENCH_GOOGLE;
	return PL_BENCH_AUTO;
}

/* Warnings on what was skipped, for any producer. */
static void common_warnings(struct pl_bench_set *s)
{
	const struct pl_bench_skipped *k = &s->skipped;

	if (k->failed_runs)
		warn(s, json_sprintf("%llu run(s) exited non-zero and were left out",
				     (unsigned long long)k->failed_runs));
	if (k->error_rows)
		warn(s, json_sprintf("%llu row(s) reported an error and were left out",
				     (unsigned long long)k->error_rows));
	if (k->invalid_values)
		warn(s, json_sprintf("%llu value(s) were not positive finite numbers and were left out",
				     (unsigned long long)k->invalid_values));
	if (k->metadata_entries)
		warn(s, json_sprintf("%llu producer metadata entries were too large or too many to keep",
				     (unsigned long long)k->metadata_entries));
}

enum pl_err pl_bench_parse_json(struct pl_bench_set *s, json_t *doc,
				enum pl_bench_format fmt, const char *what,
				struct pl_error *err)
{
	struct names nm;
	enum pl_err rc;

	if (fmt == PL_BENCH_AUTO)
		fmt = detect(doc);
	if (fmt == PL_BENCH_AUTO)
		return pl_fail(err, PL_ERR_UNSUPPORTED,
			       "pass hyperfine --export-json output, Google Benchmark --benchmark_format=json "
			       "(or --benchmark_out) output, or a pyperf JSON file",
			       "'%s' is not a benchmark format PerfLens reads", what);
	s->format = fmt;
	pl_strtab_init(&nm.tab);
	if (fmt == PL_BENCH_HYPERFINE)
		rc = parse_hyperfine(s, &nm, doc, what, err);
	else if (fmt == PL_BENCH_GOOGLE)
		rc = parse_google(s, &nm, doc, what, err);
	else
		rc = parse_pyperf(s, &nm, doc, what, err);
	pl_strtab_release(&nm.tab);
	if (rc == PL_OK && s->n == 0)
		rc = pl_fail(err, PL_ERR_MALFORMED, "check that the producer ran at least one benchmark",
			     "'%s' holds no benchmark", what);
	if (rc == PL_OK)
		common_warnings(s);
	return rc;
}

/* The file's text, whole (a new buffer), through input.c's limits. */
static enum pl_err read_text(struct pl_bench_set *s, const char *path, const struct pl_limits *lim,
			     struct pl_buf *text, struct pl_error *err)
{
	struct pl_limits l = *lim;
	struct pl_input in;
	const char *line;
	size_t len;
	int got;

	if (l.max_input_bytes > PL_BENCH_MAX_BYTES)
		l.max_input_bytes = PL_BENCH_MAX_BYTES;
	l.max_line = l.max_input_bytes;  /* pyperf writes its JSON on one line */
	if (pl_input_open(&in, path, &l, err))
		return err->code;
	while ((got = pl_input_line(&in, &line, &len, err)) == 1) {
		pl_buf_add(text, line, len);
		pl_buf_addc(text, '\n');
	}
	if (got == 0) {
		s->path = pl_xstrndup(path, strlen(path));
		s->size = in.file_size;
		s->compression = pl_codec_name(in.codec);
		if (pl_input_sha256(&in, s->sha256, err))
			got = -1;
	}
	pl_input_close(&in);
	return got == 0 ? PL_OK : err->code;
}

enum pl_err pl_bench_parse_file(struct pl_bench_set *s, const char *path,
				enum pl_bench_format fmt, const struct pl_limits *lim,
				struct pl_error *err)
{
	struct pl_buf text = {0};
	json_error_t je;
	json_t *doc;
	enum pl_err rc;

	if ((rc = read_text(s, path, lim, &text, err))) {
		pl_buf_release(&text);
		return rc;
	}
	doc = json_loadb(text.data ? text.data : "", text.len, JSON_REJECT_DUPLICATES, &je);
	pl_buf_release(&text);
	if (!doc)
		return pl_fail(err, PL_ERR_MALFORMED,
			       "pass the JSON file the producer wrote (hyperfine --export-json, "
			       "--benchmark_format=json, pyperf -o)",
			       "'%s' is not valid JSON: %s (line %d)", path, je.text, je.line);
	rc = pl_bench_parse_json(s, doc, fmt, path, err);
	json_decref(doc);
	return rc;
}

/* ------------------------------------------------------- plain values */

static enum pl_err values_add(struct pl_bench_set *s, json_t *values, const char *name,
			      const char *unit, enum pl_bench_direction dir, struct pl_error *err)
{
	struct names nm;
	struct pl_bench *b;
	json_t *v;
	size_t i;
	enum pl_err rc;

	if (json_array_size(values) == 0)
		return pl_fail(err, PL_ERR_MALFORMED, "pass at least 3 repeats (9 or more for a trustworthy comparison)",
			       "no values to normalize");
	if (!name || !*name || !unit || !*unit)
		return pl_fail(err, PL_ERR_USAGE, "pass name=\"ops_per_second\" (what the values measure), "
			       "unit=\"ops/s\" and direction=\"higher_is_better\" or \"lower_is_better\"",
			       "plain values need a name, a unit and a direction");
	s->format = PL_BENCH_VALUES;
	pl_strtab_init(&nm.tab);
	rc = bench_get(s, &nm, name, &b, err);
	pl_strtab_release(&nm.tab);
	if (rc)
		return rc;
	b->metric = "plain";
	b->own_unit = pl_xstrndup(unit, strlen(unit));
	b->unit = b->converted_from = b->own_unit;
	b->scale = 1.0;
	b->direction = dir;
	json_array_foreach(values, i, v)
		if ((rc = value_add(s, b, v, 1.0, err)))
			return rc;
	common_warnings(s);
	return PL_OK;
}

enum pl_err pl_bench_parse_values(struct pl_bench_set *s, json_t *values, const char *name,
				  const char *unit, enum pl_bench_direction dir, struct pl_error *err)
{
	char *text = json_dumps(values, JSON_COMPACT | JSON_REAL_PRECISION(17));

	if (!text)
		return pl_fail(err, PL_ERR_USAGE, "pass values as an array of numbers", "cannot read the values");
	s->size = strlen(text);
	pl_sha256_hex(text, strlen(text), s->sha256);
	free(text);
	return values_add(s, values, name, unit, dir, err);
}

/* Lines of numbers into a new array; NULL with the error on a bad line. */
static json_t *number_lines(const char *text, const char *path, struct pl_error *err)
{
	json_t *out = json_array();
	size_t line_no = 0;

	for (const char *l = text; *l;) {
		size_t n = strcspn(l, "\n"), k = 0;
		char buf[64], *end;
		line_no++;
		while (k < n && isspace((unsigned char)l[k]))
			k++;
		if (k < n && l[k] != '#') {
			size_t len = n - k < sizeof(buf) - 1 ? n - k : sizeof(buf) - 1;
			memcpy(buf, l + k, len);
			buf[len] = '\0';
			double v = strtod(buf, &end);
			while (*end && isspace((unsigned char)*end))
				end++;
			if (end == buf || *end || n - k >= sizeof(buf) - 1) {
				json_decref(out);
				pl_fail(err, PL_ERR_MALFORMED, "give one number per line (or a JSON array of numbers)",
					"'%s' line %zu is not a number: '%.40s'", path, line_no, buf);
				return NULL;
			}
			json_array_append_new(out, json_real(v));
		}
		l += n + (l[n] == '\n');
	}
	return out;
}

enum pl_err pl_bench_parse_values_file(struct pl_bench_set *s, const char *path, const char *name,
				       const char *unit, enum pl_bench_direction dir,
				       const struct pl_limits *lim, struct pl_error *err)
{
	struct pl_buf text = {0};
	json_t *values;
	enum pl_err rc;

	if ((rc = read_text(s, path, lim, &text, err))) {
		pl_buf_release(&text);
		return rc;
	}
	values = json_loadb(text.data ? text.data : "", text.len, 0, NULL);
	if (!json_is_array(values)) {
		json_decref(values);
		values = number_lines(text.data ? text.data : "", path, err);
	}
	pl_buf_release(&text);
	if (!values)
		return err->code;
	rc = values_add(s, values, name, unit, dir, err);
	json_decref(values);
	return rc;
}

enum pl_err pl_bench_select(struct pl_bench_set *s, const char *name, struct pl_error *err)
{
	struct pl_buf names = {0};

	for (size_t i = 0; i < s->n; i++) {
		if (strcmp(s->items[i].name, name) != 0)
			continue;
		for (size_t j = 0; j < s->n; j++)
			if (j != i) {
				free(s->items[j].name);
				free(s->items[j].values);
			}
		s->items[0] = s->items[i];
		s->n = 1;
		return PL_OK;
	}
	for (size_t i = 0; i < s->n && names.len < 1500; i++)
		pl_buf_addf(&names, "%s'%.200s'", i ? ", " : "", s->items[i].name);
	if (names.len >= 1500)
		pl_buf_addf(&names, " and more (%zu in all)", s->n);
	pl_fail(err, PL_ERR_USAGE, "pass one of the listed names, or omit name to keep all",
		"no benchmark called '%.200s'; names: %s", name, names.data);
	pl_buf_release(&names);
	return PL_ERR_USAGE;
}

/* ------------------------------------------------- a caller's own runs */

struct pl_bench *pl_bench_add(struct pl_bench_set *s, const char *name, const char *metric,
			      const char *unit, enum pl_bench_direction dir)
{
	struct pl_bench *b;

	if (s->n >= PL_BENCH_MAX_BENCHMARKS || strlen(name) > PL_BENCH_MAX_NAME)
		return NULL;
	PL_GROW(s->items, s->cap, s->n + 1);
	b = &s->items[s->n++];
	memset(b, 0, sizeof(*b));
	b->name = pl_xstrndup(name, strlen(name));
	b->metric = metric;
	b->unit = b->converted_from = unit;
	b->scale = 1.0;
	b->direction = dir;
	return b;
}

void pl_bench_add_value(struct pl_bench_set *s, struct pl_bench *b, double v)
{
	struct pl_error ignored;
	json_t *raw = json_real(v);

	if (!isfinite(v) || value_add(s, b, raw, 1.0, &ignored) != PL_OK)
		s->skipped.invalid_values++;
	json_decref(raw);
}

/* ------------------------------------------------------------ artifact */

bool pl_bench_id_valid(const char *id)
{
	if (!id || strlen(id) != 23 || strncmp(id, "bm-", 3) != 0)
		return false;
	for (size_t i = 3; i < 23; i++)
		if (!((id[i] >= '0' && id[i] <= '9') || (id[i] >= 'a' && id[i] <= 'f')))
			return false;
	return true;
}

static json_t *opt_real(bool known, double v)
{
	return known ? json_real(v) : json_null();
}

static json_t *bench_json(const struct pl_bench *b)
{
	json_t *values = json_array();
	double lo = 0, hi = 0, sum = 0;
	bool any = b->nvalues > 0;

	for (size_t i = 0; i < b->nvalues; i++) {
		double v = b->values[i];
		json_array_append_new(values, json_real(v));
		lo = i == 0 || v < lo ? v : lo;
		hi = i == 0 || v > hi ? v : hi;
		sum += v;
	}
	return json_pack("{s:s,s:s,s:s,s:s,s:f,s:s,s:I,s:o,s:o,s:o,s:o,s:o}",
		"name", b->name, "metric", b->metric, "unit", b->unit,
		"converted_from", b->converted_from, "scale", b->scale,
		"direction", pl_bench_direction_name(b->direction),
		"repeats", (json_int_t)b->nvalues,
		"median", opt_real(any, any ? pl_median(b->values, b->nvalues) : 0),
		"min", opt_real(any, lo), "max", opt_real(any, hi),
		"mean", opt_real(any, any ? sum / (double)b->nvalues : 0),
		"values", values);
}

static json_t *skipped_json(const struct pl_bench_skipped *k)
{
	return json_pack("{s:I,s:I,s:I,s:I,s:I,s:I,s:I}",
		"aggregate_rows", (json_int_t)k->aggregate_rows, "error_rows", (json_int_t)k->error_rows,
		"failed_runs", (json_int_t)k->failed_runs, "calibration_runs", (json_int_t)k->calibration_runs,
		"warmup_values", (json_int_t)k->warmup_values, "invalid_values", (json_int_t)k->invalid_values,
		"metadata_entries", (json_int_t)k->metadata_entries);
}

/* The set's warnings and, for the benchmarks kept, one on few repeats. */
static json_t *warnings_json(const struct pl_bench_set *s)
{
	json_t *out = json_copy(s->warnings);
	struct pl_buf few = {0};
	size_t nfew = 0;

	for (size_t i = 0; i < s->n; i++)
		if (s->items[i].nvalues < 9) {
			if (nfew < 5)
				pl_buf_addf(&few, "%s'%.100s' (%zu)", nfew ? ", " : "", s->items[i].name,
					    s->items[i].nvalues);
			nfew++;
		}
	if (nfew)
		json_array_append_new(out, json_sprintf(
			"%zu benchmark(s) have fewer than 9 repeats, e.g. %s: compare_benchmarks needs 3 a side "
			"and warns under 9; re-run with more repeats (hyperfine --runs, --benchmark_repetitions, "
			"pyperf --processes)", nfew, few.data));
	pl_buf_release(&few);
	return out;
}

static json_t *document_new(const struct pl_bench_set *s)
{
	json_t *benches = json_array();

	for (size_t i = 0; i < s->n; i++)
		json_array_append_new(benches, bench_json(&s->items[i]));
	json_t *doc;

	/* The input's path is bytes: escaped (docs/paths.md), never dropped. */
	doc = json_pack("{s:s,s:i,s:s,s:{s:o,s:I,s:s,s:s,s:s,s:O},s:O,s:O,s:O,s:o,s:o,s:o}",
		"schema", "perflens.benchmark", "version", PL_BENCH_SCHEMA_VERSION,
		"id", ID_PLACEHOLDER,
		"source", "path", pl_json_bytes(s->path ? s->path : ""), "size", (json_int_t)s->size,
		"sha256", s->sha256, "compression", s->compression,
		"format", pl_bench_format_name(s->format), "producer_version", s->producer_version,
		"environment", s->environment, "environment_source", s->environment_source,
		"producer_metadata", s->producer_metadata, "skipped", skipped_json(&s->skipped),
		"warnings", warnings_json(s), "benchmarks", benches);
	if (doc && s->experiment)
		json_object_set(doc, "experiment", s->experiment);
	return doc;
}

json_t *pl_bench_document(const struct pl_bench_set *s)
{
	return document_new(s);
}

enum pl_err pl_bench_write(const struct pl_bench_set *s, const char *root,
			   char id[32], char *path, size_t path_cap,
			   json_t **doc_out, struct pl_error *err)
{
	json_t *doc = document_new(s);
	char *text = json_dumps(doc, BENCH_DUMP_FLAGS), *at, hex[65];
	enum pl_err rc;

	if (!text || !(at = strstr(text, ID_PLACEHOLDER))) {
		free(text);
		json_decref(doc);
		return pl_fail(err, PL_ERR_INTERNAL, NULL, "cannot encode the benchmark artifact");
	}
	pl_sha256_hex(text, strlen(text), hex);
	snprintf(id, 32, "bm-%.20s", hex);
	memcpy(at, id, strlen(id));
	snprintf(path, path_cap, "%s/benchmarks/%s.json", root, id);
	rc = pl_write_file_atomic(path, text, strlen(text), err);
	free(text);
	json_object_set_new(doc, "id", json_string(id));
	if (rc == PL_OK && doc_out)
		*doc_out = doc;
	else
		json_decref(doc);
	return rc;
}

enum pl_err pl_bench_load(const char *root, const char *id, json_t **doc,
			  struct pl_error *err)
{
	char path[4096];
	json_error_t je;
	json_t *schema;

	*doc = NULL;
	if (!pl_bench_id_valid(id))
		return pl_fail(err, PL_ERR_USAGE, "pass the benchmark_id normalize_benchmark returned (bm- and 20 hex digits)",
			       "'%s' is not a benchmark id", id ? id : "");
	snprintf(path, sizeof(path), "%s/benchmarks/%s.json", root, id);
	if (access(path, F_OK) != 0)
		return pl_fail(err, PL_ERR_INPUT,
			       "call normalize_benchmark first, or list_artifacts(kind=\"benchmark\") to find a valid id",
			       "no benchmark artifact '%s'", id);
	*doc = json_load_file(path, JSON_REJECT_DUPLICATES, &je);
	if (!*doc)
		return pl_fail(err, PL_ERR_MALFORMED, "normalize the producer's file again to rebuild the artifact",
			       "benchmark artifact '%s' is not valid JSON: %s (line %d)", id, je.text, je.line);
	schema = json_object_get(*doc, "schema");
	if (!json_is_string(schema) || strcmp(json_string_value(schema), "perflens.benchmark") != 0 ||
	    json_integer_value(json_object_get(*doc, "version")) != PL_BENCH_SCHEMA_VERSION ||
	    !json_is_array(json_object_get(*doc, "benchmarks"))) {
		json_decref(*doc);
		*doc = NULL;
		return pl_fail(err, PL_ERR_MALFORMED, "normalize the producer's file again to rebuild the artifact",
			       "'%s' is not a version %d benchmark artifact", id, PL_BENCH_SCHEMA_VERSION);
	}
	return PL_OK;
}
