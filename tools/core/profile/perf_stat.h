/* perf_stat.h - typed counters from `perf stat` output.
 *
 * A streaming, line-at-a-time parser for both the human layout and the
 * `-x,` CSV layout (any single-character separator), so it can read a
 * stand-alone stat file or the `### PERF_STAT ###` section of a device
 * agent chunk.  Values keep the digit grouping of any locale out (`,` `.`
 * `'` space, U+202F narrow no-break space); `<not supported>` and
 * `<not counted>` become statuses, never zeros; PMU-qualified names
 * (`cpu_core/cycles/`) are kept as printed.  Derived IPC is computed only
 * when both cycles and instructions were counted for the same PMU.
 *
 * Ownership: a block returned by pl_stat_parser_finish is new and owned by
 * the caller (free with pl_stat_block_free, which accepts NULL).
 */
#ifndef PL_PERF_STAT_H
#define PL_PERF_STAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/error.h"

enum pl_stat_status {
	PL_STAT_COUNTED = 0,
	PL_STAT_NOT_SUPPORTED,  /* "<not supported>" */
	PL_STAT_NOT_COUNTED     /* "<not counted>" */
};
const char *pl_stat_status_name(enum pl_stat_status s);

/* True when one line (no newline) reads as a counter of `perf stat -x`
 * output, with any separator: how format detection knows a CSV stat file,
 * which has no "Performance counter stats" header. */
bool pl_stat_line_is_csv(const char *line, size_t n);

struct pl_stat_counter {
	char *event;           /* as printed: "cycles", "cpu_core/cycles/" */
	enum pl_stat_status status;
	double value;          /* valid when status == PL_STAT_COUNTED */
	bool is_integer;       /* the printed value had no decimals */
	char *unit;            /* "msec", "" when none */
	double run_percent;    /* multiplexing "(84.16%)"; < 0 when absent */
	double variance_percent; /* "( +-  0.52% )" with -r; < 0 when absent */
	char *comment;         /* text after '#' (human) or metric (CSV); may be "" */
};

struct pl_stat_block {
	char *source;          /* where it came from: a path or "chunk_000" */
	char *target;          /* "process id '44774'", "'./app'"... or "" */
	struct pl_stat_counter *counters;
	size_t ncounters;
	/* From the "seconds time elapsed / user / sys" lines, or else from the
	 * tool events duration_time, user_time, system_time (-x prints no such
	 * lines); < 0 when neither says. */
	double elapsed_seconds;
	double user_seconds;     /* < 0 when absent */
	double sys_seconds;      /* < 0 when absent */
	bool has_ipc;
	double ipc;              /* instructions / cycles, when has_ipc */
	uint64_t lines_skipped;  /* lines that were neither counters nor known */
};

struct pl_stat_parser;

/* Start a parser; `source` is copied. */
struct pl_stat_parser *pl_stat_parser_new(const char *source);

/* Feed one line (without its newline; `n` bytes, not NUL-terminated). */
enum pl_err pl_stat_parser_line(struct pl_stat_parser *sp, const char *line,
				size_t n, struct pl_error *err);

/* End the parse: returns a new block (possibly with zero counters) and
 * frees the parser. */
struct pl_stat_block *pl_stat_parser_finish(struct pl_stat_parser *sp);

void pl_stat_block_free(struct pl_stat_block *b);

/* Parse a number printed with any digit grouping, e.g. "24,673,883,923",
 * "7.829,39", "1'234", "1 234", "1\u202f234".  Sets *is_integer when the
 * value had no decimal part.  False when the text is not a number. */
bool pl_stat_parse_number(const char *s, size_t n, double *out,
			  bool *is_integer);

#endif
