/* symbolize.h - module offsets to function, source line and inline chain,
 * on libdw (elfutils).
 *
 * A symbolizer holds modules (one ELF file each, plus its separate debug
 * file when there is one), kept by build-id, and a cache of answers.
 * Offsets are module offsets: ELF virtual addresses as the file states
 * them (bias 0), what `nm` prints and what perf 6.1 prints for user
 * frames.  A runtime address must be turned into one by whoever knows a
 * verified load base; nothing here guesses a base.
 *
 * Usage:
 *   1. s = pl_symbolizer_new(&cfg, &dbg);   (both borrowed for s's life)
 *   2. pl_symbolizer_open(s, path, &m, err), or _open_build_id;
 *   3. pl_sym_lookup(s, m, offset, true, &ans, err) as often as needed:
 *      answers are owned by s and stay valid until pl_symbolizer_free;
 *   4. pl_symbolizer_free(s).
 * A symbolizer is not thread-safe: use one per thread.
 *
 * Function names follow `eu-addr2line -S` (dwfl_module_addrinfo's choice
 * among aliases, sized symbols first, globals before locals), answered
 * from a sorted per-module table instead of libdwfl's linear scan.  Source
 * lines, DWARF names and inline chains follow `eu-addr2line -f -i`.
 */
#ifndef PL_SYMBOLIZE_H
#define PL_SYMBOLIZE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "debuginfod.h"
#include "elfinfo.h"
#include "base/error.h"
#include "symcfg.h"

#define PL_SYM_MAX_MODULES 256          /* modules per symbolizer */
#define PL_SYM_MAX_INLINE_DEPTH 64      /* inline frames kept per answer */
#define PL_SYM_MAX_NAME 4096            /* bytes of a name or path kept */
#define PL_SYM_MAX_ANSWERS (1u << 20)   /* distinct answers cached */
#define PL_SYM_MAX_BATCH 10000          /* offsets per tool call */

#define PL_SYM_INDEX_MEMORY_AFTER 20000 /* direct lookups of a module before an
					 * in-memory index pays for itself */
#define PL_SYM_INDEX_BUILD_MAX_MS 60000 /* a longer index build is given up */

struct pl_symbolizer;              /* modules kept by build-id, an answer cache */
struct pl_sym_module;              /* one ELF file (+ its debug file when separate) */

/* One inlined call, innermost first in an answer: `function` was inlined
 * into its caller at call_file:call_line:call_column.  The caller is the
 * next entry's function, or the answer's dwarf_subprogram for the last. */
struct pl_sym_inline {
	const char *function;
	const char *call_file;              /* NULL when DWARF names none */
	uint32_t call_line, call_column;    /* 0 when unknown */
};

struct pl_sym_answer {
	uint64_t offset;           /* the module offset asked (ELF virtual address, bias 0) */
	bool resolved;             /* an ELF symbol or a DWARF function names it */
	const char *reason;        /* why not, when !resolved (else NULL) */
	const char *function;      /* ELF symbol (not demangled); NULL when none covers it */
	uint64_t function_offset;  /* offset - symbol value */
	const char *file;          /* innermost source file, line, column from the line
				    * table; NULL/0 when none */
	uint32_t line, column;
	const char *comp_dir;      /* DW_AT_comp_dir of that line's CU: where a relative
				    * `file` was compiled from (NULL when none) */
	const char *dwarf_function;   /* innermost DWARF subprogram/inlined name at the
				       * address (NULL if no DWARF) */
	const char *dwarf_subprogram; /* the concrete (outermost) DW_TAG_subprogram that
				       * holds the address (NULL if no DWARF) */
	const struct pl_sym_inline *inlines; /* inline chain innermost first */
	size_t ninlines;
	bool inlines_truncated;    /* deeper than PL_SYM_MAX_INLINE_DEPTH: the outer
				    * ones were left out */
	bool names_truncated;      /* a name or path was cut at PL_SYM_MAX_NAME bytes */
};

/* Counters, for benchmarks and reports. */
struct pl_sym_stats {
	uint64_t lookups;          /* pl_sym_lookup calls */
	uint64_t cache_hits;       /* answered from the cache */
	uint64_t table_hits;       /* symbol found in the sorted table */
	uint64_t linear_fallbacks; /* symbol left to dwfl_module_addrinfo (sizeless
				    * labels, odd tables) */
	uint64_t names_escaped;    /* names kept escaped (base/escape.h) */
	uint64_t index_hits;       /* answered from a module's symbol index */
	uint64_t indexes_loaded;   /* symbol indexes mapped from the cache folder */
	uint64_t indexes_built;    /* symbol indexes built from libdw */
	uint64_t indexes_refused;  /* index files refused (corrupt, stale, foreign) */
	size_t modules, answers;
};

/* `cfg` and `dbg` are borrowed and must outlive the symbolizer; `dbg` may
 * be NULL (no debuginfod). */
struct pl_symbolizer *pl_symbolizer_new(const struct pl_sym_cfg *cfg,
					const struct pl_debuginfod *dbg);
/* Frees every module and answer; NULL is a no-op. */
void pl_symbolizer_free(struct pl_symbolizer *s);

/* Symbol indexes (symindex.h): a module's answers for every address, so
 * that lookups need no libdw.  AUTO, the default: with `dir` set, a
 * module's index is loaded from DIR/<build-id>.idx when that file is
 * valid and was built from the same files, else built at the module's
 * first lookup and written there atomically; without `dir`, built in
 * memory once a module had PL_SYM_INDEX_MEMORY_AFTER direct lookups.
 * ALWAYS builds at the first lookup even without `dir`; OFF answers every
 * lookup with libdw (the reference an index is checked against).  DEFER
 * (with `dir`) loads a valid index like AUTO but never builds one on the
 * lookup's path: a module without one is answered by libdw and marked, and
 * pl_symbolizer_build_indexes builds and writes the marked ones later
 * (after the answer went out), so a first call is never slower than
 * libdw.  A module
 * whose index would pass PL_SYMINDEX_MAX_BYTES or take longer than
 * PL_SYM_INDEX_BUILD_MAX_MS stays on libdw (pl_sym_module_lookup_method
 * says why).  Cache trouble never fails a lookup.  `dir` is copied; call
 * before the first lookup. */
enum pl_sym_index_mode { PL_SYM_INDEX_AUTO, PL_SYM_INDEX_ALWAYS, PL_SYM_INDEX_OFF, PL_SYM_INDEX_DEFER };
void pl_symbolizer_set_index(struct pl_symbolizer *s, enum pl_sym_index_mode mode,
			     const char *dir);

/* AUTO with a `dir`: build an index at a module's first lookup only when
 * the module's file and its separate debug file take at most `max_bytes`
 * together (0, the default: any size); a larger module is answered by
 * libdw, and an index already in `dir` is used whatever its size.  For
 * callers that look up few offsets per run, where a big module's build
 * would cost more than the run. */
void pl_symbolizer_set_index_max_source(struct pl_symbolizer *s, uint64_t max_bytes);

/* DEFER: how many modules were answered by libdw for want of an index
 * that could be built into `dir`. */
size_t pl_symbolizer_indexes_wanted(const struct pl_symbolizer *s);

/* Build and write the index of every module DEFER marked; returns how
 * many were built.  Slow (the whole module): call it off the path of an
 * answer. */
size_t pl_symbolizer_build_indexes(struct pl_symbolizer *s);

/* Open a module by path (cached by build-id: a second path with the
 * same build-id gives the same module); finds separate debug info:
 * .gnu_debuglink next to the file, in .debug/ and /usr/lib/debug/<dir>/,
 * /usr/lib/debug/.build-id/xx/rest.debug (each also under cfg->sysroot),
 * then debuginfod via pl_debuginfod_fetch when dbg->urls is set.  Debug
 * information is looked for at the first lookup, not here.  Errors:
 * PL_ERR_INPUT (cannot open), PL_ERR_UNSUPPORTED (not ELF, or not a kind
 * libdwfl can report), PL_ERR_LIMIT (too many modules). */
enum pl_err pl_symbolizer_open(struct pl_symbolizer *s, const char *path,
			       struct pl_sym_module **m, struct pl_error *err);

/* By build-id (hex, either case): cfg->binaries (--binary files, matched
 * by their build-id), [sysroot]/usr/lib/debug/.build-id/xx/rest and
 * rest.debug, then debuginfod "executable", then "debuginfo".  A debug
 * file alone symbolizes too (its symbols and DWARF; the code bytes are not
 * needed).  PL_ERR_INPUT "not found" names every place tried. */
enum pl_err pl_symbolizer_open_build_id(struct pl_symbolizer *s, const char *build_id_hex,
					struct pl_sym_module **m, struct pl_error *err);

/* For a module a profile names by path (as the device saw it) and maybe
 * by build-id: the --module-map entry for `dso_path`, [sysroot]/dso_path,
 * then dso_path itself; when `build_id_hex` is given (NULL or "" when
 * not) each must have that build-id, a file that differs is refused and
 * named, never used, and the build-id search above follows (--binary
 * files, /usr/lib/debug/.build-id, debuginfod).  PL_ERR_INPUT names every
 * place tried. */
enum pl_err pl_symbolizer_open_dso(struct pl_symbolizer *s, const char *dso_path,
				   const char *build_id_hex, struct pl_sym_module **m,
				   struct pl_error *err);

const char *pl_sym_module_build_id(const struct pl_sym_module *m);   /* lowercase hex or NULL */
const char *pl_sym_module_path(const struct pl_sym_module *m);       /* the file opened */
/* Where DWARF and symbols come from (searches on first call). */
enum pl_debug_source pl_sym_module_debug_source(struct pl_sym_module *m);
const char *pl_sym_module_debug_file(struct pl_sym_module *m);       /* NULL when none */
size_t pl_sym_module_symbol_count(struct pl_sym_module *m);          /* table entries */
/* How the module's lookups are answered so far: "index" or "libdw";
 * *note (may be NULL) gets why libdw when it is (NULL otherwise). */
const char *pl_sym_module_lookup_method(const struct pl_sym_module *m, const char **note);

/* Answers are owned by the symbolizer (cached; valid until free).  An
 * offset that cannot be named is PL_OK with resolved=false and a reason;
 * errors are only PL_ERR_LIMIT (PL_SYM_MAX_ANSWERS) and PL_ERR_USAGE.
 * With `want_inlines` false the DWARF scopes are not read: dwarf_function,
 * dwarf_subprogram and inlines stay empty unless an earlier lookup of the
 * same offset asked for them.  Asking again with true fills the same
 * answer in place, so earlier pointers stay valid. */
enum pl_err pl_sym_lookup(struct pl_symbolizer *s, struct pl_sym_module *m, uint64_t offset,
			  bool want_inlines, const struct pl_sym_answer **ans,
			  struct pl_error *err);

void pl_symbolizer_stats(const struct pl_symbolizer *s, struct pl_sym_stats *st);

#endif
