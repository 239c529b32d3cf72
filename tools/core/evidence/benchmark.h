/* benchmark.h - repeated benchmark measurements in one model, and their
 * versioned, content-addressed artifacts.
 *
 * Three producers are read: `hyperfine --export-json`, Google Benchmark
 * `--benchmark_format=json` (best with --benchmark_repetitions) and pyperf
 * JSON (format "1.0", or 6); and plain repeated values of a program's own
 * metric (format "values": a caller's array or a file of numbers, with the
 * name, unit and direction the caller gives, metric "plain").  Each benchmark keeps every repeat as one
 * value in one base unit (seconds, bytes or count; the producer's unit and
 * the factor are recorded), its metric and its direction.  Rows that are
 * not repeats (Google Benchmark aggregates such as mean/median/stddev,
 * rows with an error, hyperfine runs with a non-zero exit code, pyperf
 * calibration runs and warmups, values that are not positive finite
 * numbers) are skipped and counted, never silently dropped.
 *
 * The environment holds what the producer recorded, mapped to fixed keys
 * (PL_BENCH_ENV_KEYS); a key nobody recorded is null, never guessed.  The
 * caller may fill keys the producer left null (recorded as "caller").
 *
 * An artifact is ARTIFACT_ROOT/benchmarks/ID.json
 * (schemas/benchmark.schema.json); ID is "bm-" and the first 20 hex digits
 * of the SHA-256 of the document with its id set to zeros, written
 * atomically; reals keep 17 significant digits so values round-trip.
 */
#ifndef PL_BENCHMARK_H
#define PL_BENCHMARK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "base/error.h"
#include "profile/profile.h"

#define PL_BENCH_SCHEMA_VERSION 1
#define PL_BENCH_MAX_BYTES (32u << 20)     /* a producer's JSON file */
#define PL_BENCH_MAX_BENCHMARKS 10000
#define PL_BENCH_MAX_VALUES 100000         /* repeats of one benchmark */
#define PL_BENCH_MAX_NAME 1024
#define PL_BENCH_MAX_METADATA 200          /* producer metadata entries */
#define PL_BENCH_MAX_METADATA_BYTES 4096   /* one entry, as JSON */

enum pl_bench_format {
	PL_BENCH_AUTO = 0,
	PL_BENCH_HYPERFINE,
	PL_BENCH_GOOGLE,
	PL_BENCH_PYPERF,
	PL_BENCH_VALUES,   /* plain repeated values (pl_bench_parse_values) */
	PL_BENCH_EXPERIMENT /* run_experiment's own runs (pl_bench_add) */
};

enum pl_bench_direction { PL_LOWER_IS_BETTER = 0, PL_HIGHER_IS_BETTER };

/* One benchmark: every repeat in `unit`.  metric, unit and converted_from
 * point to static strings. */
struct pl_bench {
	char *name;
	const char *metric;          /* "wall_time", "real_time", "value" */
	const char *unit;            /* "seconds", "bytes", "count"; plain: own_unit */
	char *own_unit;              /* the caller's unit of plain values, or NULL */
	const char *converted_from;  /* the producer's unit: "ns", "s", "second"... */
	double scale;                /* producer value * scale = value in `unit` */
	enum pl_bench_direction direction;
	double *values;
	size_t nvalues, cap;
};

/* What was skipped, by reason. */
struct pl_bench_skipped {
	uint64_t aggregate_rows;    /* Google Benchmark mean/median/stddev/cv... */
	uint64_t error_rows;        /* Google Benchmark rows with error_occurred */
	uint64_t failed_runs;       /* hyperfine runs with a non-zero exit code */
	uint64_t calibration_runs;  /* pyperf runs without values */
	uint64_t warmup_values;     /* pyperf warmups */
	uint64_t invalid_values;    /* not a positive finite number */
	uint64_t metadata_entries;  /* producer metadata over the bounds */
};

struct pl_bench_set {
	enum pl_bench_format format;
	struct pl_bench *items;
	size_t n, cap;
	json_t *environment;        /* every PL_BENCH_ENV_KEYS key, null if unknown */
	json_t *environment_source; /* key -> "producer" | "caller", known keys only */
	json_t *producer_metadata;  /* context/metadata as recorded (bounded) */
	json_t *producer_version;   /* string or null */
	json_t *warnings;           /* strings */
	struct pl_bench_skipped skipped;
	/* provenance, set by pl_bench_parse_file */
	char *path;
	uint64_t size;
	char sha256[65];
	const char *compression;
	/* run_experiment's record (settings, seed, order, every raw run):
	 * written as the artifact's "experiment" when not NULL; owned. */
	json_t *experiment;
};

/* Environment keys, their JSON types ("string", "integer", "number",
 * "boolean") and whether a difference makes two sides not comparable;
 * NULL-terminated. */
struct pl_bench_env_key {
	const char *name;
	const char *type;
	bool material;
};
extern const struct pl_bench_env_key pl_bench_env_keys[];

void pl_bench_set_init(struct pl_bench_set *s);
void pl_bench_set_release(struct pl_bench_set *s);

const char *pl_bench_format_name(enum pl_bench_format f);
bool pl_bench_format_from_name(const char *name, enum pl_bench_format *f);
const char *pl_bench_direction_name(enum pl_bench_direction d);
bool pl_bench_direction_from_name(const char *name, enum pl_bench_direction *d);

/* Read `path` (gzip and zstd too, at most PL_BENCH_MAX_BYTES and the
 * limits' max_input_bytes) as `fmt` (PL_BENCH_AUTO detects it). */
enum pl_err pl_bench_parse_file(struct pl_bench_set *s, const char *path,
				enum pl_bench_format fmt, const struct pl_limits *lim,
				struct pl_error *err);

/* The same on a parsed document (borrowed); `what` names it in errors. */
enum pl_err pl_bench_parse_json(struct pl_bench_set *s, json_t *doc,
				enum pl_bench_format fmt, const char *what,
				struct pl_error *err);

/* One benchmark of plain repeated values, e.g. a fixed-duration program's
 * own ops_per_second: `values` (borrowed array; entries that are not
 * positive finite numbers are skipped and counted) named `name`, in
 * `unit` (free text, e.g. "ops/s"), better in `dir`.  Without a file the
 * provenance is the values themselves: source path "", size and SHA-256
 * of their compact JSON text. */
enum pl_err pl_bench_parse_values(struct pl_bench_set *s, json_t *values, const char *name,
				  const char *unit, enum pl_bench_direction dir, struct pl_error *err);

/* The same from a file of numbers: a JSON array, or one number per line
 * (blank lines and lines starting with '#' skipped); a line that is not a
 * number is PL_ERR_MALFORMED naming it. */
enum pl_err pl_bench_parse_values_file(struct pl_bench_set *s, const char *path, const char *name,
				       const char *unit, enum pl_bench_direction dir,
				       const struct pl_limits *lim, struct pl_error *err);

/* A new benchmark of values a caller measured itself (run_experiment):
 * `metric` and `unit` must outlive the set (static strings); NULL past
 * the limits.  Then pl_bench_add_value for each repeat: a value that is
 * not a positive finite number is skipped and counted (invalid_values). */
struct pl_bench *pl_bench_add(struct pl_bench_set *s, const char *name, const char *metric,
			      const char *unit, enum pl_bench_direction dir);
void pl_bench_add_value(struct pl_bench_set *s, struct pl_bench *b, double v);

/* Keep only the benchmark called `name`; the error lists the names. */
enum pl_err pl_bench_select(struct pl_bench_set *s, const char *name,
			    struct pl_error *err);

/* Fill environment keys the producer left null from `given` (borrowed;
 * an object of PL_BENCH_ENV_KEYS, checked here); a value that disagrees
 * with the producer's is kept out and reported in the warnings. */
enum pl_err pl_bench_apply_environment(struct pl_bench_set *s, json_t *given,
				       struct pl_error *err);

/* The artifact's document as pl_bench_write would write it, before it has
 * an id (new): run_experiment judges its samples before it writes them
 * with the verdicts. */
json_t *pl_bench_document(const struct pl_bench_set *s);

/* Write the artifact; `id` gets "bm-...", `path` its path, and *doc_out
 * (when not NULL) a new reference to the document. */
enum pl_err pl_bench_write(const struct pl_bench_set *s, const char *root,
			   char id[32], char *path, size_t path_cap,
			   json_t **doc_out, struct pl_error *err);

/* Is `id` well formed ("bm-" + 20 lower-case hex)? */
bool pl_bench_id_valid(const char *id);

/* Read an artifact (new reference in *doc). */
enum pl_err pl_bench_load(const char *root, const char *id, json_t **doc,
			  struct pl_error *err);

#endif
