/* options.h - command-line options as tables, shared by both binaries.
 *
 * An option group is an array of struct pl_option ending with a row whose
 * name is NULL, and a target struct its rows set: the resource limits
 * (pl_limit_options, limits.h), the symbol flags (symbols/symcfg.h), the
 * perf flags (collectors/perfcfg.h), and each binary's own.  Parsing and
 * --help both read the same rows, so a flag is defined once.
 *
 * A row with a metavar takes a value (`--name VALUE` or `--name=VALUE`);
 * one without is a boolean: `--name`, `--name=true|false` or `--no-name`.
 */
#ifndef PL_OPTIONS_H
#define PL_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "error.h"

struct pl_option;

/* Set the option in `target` from `value` (for a boolean "true" or
 * "false"); PL_OK, or PL_ERR_USAGE with `err` naming the flag and what
 * it takes. */
typedef enum pl_err (*pl_option_fn)(void *target, const struct pl_option *o,
				    const char *value, struct pl_error *err);

struct pl_option {
	const char *name;     /* without dashes: "max-depth"; NULL ends a table */
	const char *metavar;  /* "N", "FILE"; NULL: a boolean */
	const char *help;     /* one line for --help */
	pl_option_fn set;
	size_t offset;        /* the field pl_option_u64/u32/bool set, in target */
	uint64_t max;         /* pl_option_u64/u32: the largest value (1 is the least) */
};

/* The row of `table` named `name` (no dashes), or NULL. */
const struct pl_option *pl_option_find(const struct pl_option *table, const char *name);

/* Setters for rows that only store a field at `offset` of the target:
 * a whole number 1..max (uint64_t or uint32_t), a boolean. */
enum pl_err pl_option_u64(void *target, const struct pl_option *o, const char *value,
			  struct pl_error *err);
enum pl_err pl_option_u32(void *target, const struct pl_option *o, const char *value,
			  struct pl_error *err);
enum pl_err pl_option_bool(void *target, const struct pl_option *o, const char *value,
			   struct pl_error *err);

/* "true"/"false" into *out; false when `value` is neither. */
bool pl_option_parse_bool(const char *value, bool *out);

/* A table and the struct its rows set. */
struct pl_option_group {
	const struct pl_option *table;
	void *target;
};

/* Take argv[*i] when it is a flag of one of the `n` groups: `--name
 * VALUE`, `--name=VALUE`, and for a boolean `--name`, `--name=true|false`
 * or `--no-name`; '_' in the name counts as '-'.  Returns 1 when taken (*i then indexes its last word),
 * 0 when it is no flag of theirs (nothing consumed), -1 with `err` set
 * when its value is missing or wrong. */
int pl_options_take(const struct pl_option_group *groups, size_t n, int argc, char **argv,
		    int *i, struct pl_error *err);

/* One "  --name METAVAR   help" line per row of `table`. */
void pl_option_help(FILE *out, const struct pl_option *table);

#endif
