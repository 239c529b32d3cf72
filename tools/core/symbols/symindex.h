/* symindex.h - a module's symbolization answers as a compact, persistent
 * index: function, source line and inline chain for every address, found
 * by binary search over sorted arrays, with no libdw call.
 *
 * The symbolizer (symbolize.c) builds an index the first time it needs a
 * module: it asks its own libdw path for the answer at every address where
 * an answer can change (symbol starts and ends, line-table rows, address
 * ranges of CUs and of DIEs), and hands the answers here in address order;
 * equal neighbours merge.  So an index answers exactly what the libdw path
 * answers, by construction (tests/unit/test_symindex.c and
 * tests/integration/test_symbolize.sh check it against eu-addr2line).
 *
 * The file is one blob, written atomically as DIR/<build-id>.idx:
 *   header   magic "PLSYMIDX", format version, byte order, total size, a
 *            64-bit checksum of everything, the build-id, and the identity
 *            of its sources (main file size and mtime; how the debug file
 *            was searched for and what was found: path, size, mtime)
 *   sections exec ranges, strings (NUL-terminated), function intervals,
 *            line intervals, scope intervals, inline entries; each an
 *            (offset, count) pair in the header, 8-byte aligned.
 * Loading maps the file and checks the header, every section's bounds and
 * the checksum (no per-entry parsing); every reference read at lookup
 * (string offsets, inline slices) is bounds-checked, since the file is
 * input from disk.  A file that fails any check is refused, never trusted:
 * the caller rebuilds it.  Same module -> byte-identical file.
 *
 * Usage (building):
 *   b = pl_symindex_builder_new();
 *   pl_symindex_add_exec / _add_func / _add_line / _add_scope, each kind
 *   in increasing address order;
 *   pl_symindex_finish(b, &src, &blob, &len, err);   (b freed)
 *   pl_symindex_from_blob(blob, len, build_id, &x, err)  (steals blob)
 *   or pl_symindex_save(blob, len, path, err) first.
 * Usage (loading): pl_symindex_open(path, build_id, &x, err); then
 *   pl_symindex_source(x) to compare its identity with the files now.
 * An index is read-only once made; lookups may run from several threads.
 */
#ifndef PL_SYMINDEX_H
#define PL_SYMINDEX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "elfinfo.h"
#include "base/error.h"

#define PL_SYMINDEX_VERSION 1
#define PL_SYMINDEX_MAX_BYTES ((uint64_t)512 << 20)  /* bigger: the direct libdw path */
#define PL_SYMINDEX_MAX_INLINES 64                   /* entries per chain (= answers') */
#define PL_SYMINDEX_PATH_MAX 4096                    /* debug path kept in the header */
#define PL_SYMINDEX_NAME_KEEP 4097                   /* bytes of a name kept: the
						      * symbolizer's PL_SYM_MAX_NAME + 1 */

struct pl_symindex;           /* a loaded index (mapped file or blob) */
struct pl_symindex_builder;   /* rows being gathered */

/* What an index was built from, and how: compared with the file system
 * before an index on disk is used. */
struct pl_symindex_source {
	char build_id[PL_BUILD_ID_HEX_MAX];   /* lowercase hex */
	uint64_t main_size;                   /* the module file */
	int64_t main_mtime_s, main_mtime_ns;
	bool has_dwarf;                       /* libdw found DWARF */
	bool debug_searched;                  /* the separate-debug search ran */
	uint32_t debug_source;                /* enum pl_debug_source it found */
	char debug_path[PL_SYMINDEX_PATH_MAX]; /* "" when none */
	uint64_t debug_size;                  /* of debug_path */
	int64_t debug_mtime_s, debug_mtime_ns;
	bool has_debuglink;                   /* the search's arguments */
	char debuglink[PL_DEBUGLINK_MAX];
	uint32_t debuglink_crc;
	uint64_t nsyms;                       /* symbols in the engine's table */
};

/* One inlined call of a chain, innermost first (names as libdw gave them;
 * call_file NULL when DWARF names none). */
struct pl_symindex_inline {
	const char *function, *call_file;
	uint32_t call_line, call_column;
};

/* The scope answer at an address (NULL/0 fields when none). */
struct pl_symindex_scope {
	const char *dwarf_function, *dwarf_subprogram;
	struct pl_symindex_inline inl[PL_SYMINDEX_MAX_INLINES];
	size_t ninl;
	bool truncated;                       /* the chain was cut */
	bool hidden_cut;                      /* a name left out by the cut was longer
					       * than PL_SYMINDEX_NAME_KEEP - 1 bytes */
};

/* ---------------------------------------------------------- building */

struct pl_symindex_builder *pl_symindex_builder_new(void);
/* NULL is a no-op. */
void pl_symindex_builder_free(struct pl_symindex_builder *b);

/* [start, end) executable; any order (sorted at finish). */
void pl_symindex_add_exec(struct pl_symindex_builder *b, uint64_t start, uint64_t end);
/* From `start` on (up to the next row) the answer is this; rows of a kind
 * come in increasing `start`; a row equal to the previous one merges.
 * Strings are copied; names longer than PL_SYMINDEX_NAME_KEEP bytes are
 * kept to that many bytes (all the symbolizer looks at). */
void pl_symindex_add_func(struct pl_symindex_builder *b, uint64_t start, const char *name,
			  uint64_t value);
void pl_symindex_add_line(struct pl_symindex_builder *b, uint64_t start, const char *file,
			  const char *comp_dir, uint32_t line, uint32_t column);
void pl_symindex_add_scope(struct pl_symindex_builder *b, uint64_t start,
			   const struct pl_symindex_scope *sc);
/* Bytes the blob would take now (for the size bound while building). */
uint64_t pl_symindex_builder_bytes(const struct pl_symindex_builder *b);

/* Serialize (frees `b` on every path).  On PL_OK *blob (malloc'ed, the
 * caller's) holds *len bytes.  PL_ERR_LIMIT over PL_SYMINDEX_MAX_BYTES. */
enum pl_err pl_symindex_finish(struct pl_symindex_builder *b, const struct pl_symindex_source *src,
			       void **blob, size_t *len, struct pl_error *err);

/* Write a blob to `path` atomically (temp file + rename; folders made). */
enum pl_err pl_symindex_save(const void *blob, size_t len, const char *path,
			     struct pl_error *err);

/* ----------------------------------------------------------- loading */

/* Map and check the file at `path` for `build_id`.  PL_ERR_INPUT when it
 * is absent; PL_ERR_UNSUPPORTED (with the reason) when it is truncated,
 * corrupt, of another format version or byte order, or for another
 * build-id. */
enum pl_err pl_symindex_open(const char *path, const char *build_id, struct pl_symindex **x,
			     struct pl_error *err);
/* The same checks on a blob in memory (stolen: freed with the index, or
 * at once on error). */
enum pl_err pl_symindex_from_blob(void *blob, size_t len, const char *build_id,
				  struct pl_symindex **x, struct pl_error *err);
/* For tests and fuzzing, which edit blobs on purpose: make the header's
 * file size and checksum agree with the `len` bytes, and copy its build-id
 * (cut to fit, NUL-terminated) into `build_id`.  False when `len` is
 * shorter than a header. */
bool pl_symindex_seal(void *blob, size_t len, char build_id[PL_BUILD_ID_HEX_MAX]);

/* NULL is a no-op. */
void pl_symindex_free(struct pl_symindex *x);

const struct pl_symindex_source *pl_symindex_source(const struct pl_symindex *x);
uint64_t pl_symindex_bytes(const struct pl_symindex *x);

/* Executable ranges: count, and the i-th one. */
size_t pl_symindex_exec_count(const struct pl_symindex *x);
void pl_symindex_exec_range(const struct pl_symindex *x, size_t i, uint64_t *start,
			    uint64_t *end);

/* The answers at `addr`.  Strings point into the index (valid while it
 * lives).  func: false when no symbol names it; line: false when no line
 * row covers it; scope: fills *sc (ninl 0 and NULL names when none). */
bool pl_symindex_func(const struct pl_symindex *x, uint64_t addr, const char **name,
		      uint64_t *value);
bool pl_symindex_line(const struct pl_symindex *x, uint64_t addr, const char **file,
		      const char **comp_dir, uint32_t *line, uint32_t *column);
void pl_symindex_scope(const struct pl_symindex *x, uint64_t addr, struct pl_symindex_scope *sc);

#endif
