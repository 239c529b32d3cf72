/* pdsyms.h - symbol tables as perf 6.1 builds them, so that a frame gets
 * the very name `perf script` prints for it.
 *
 * A user module's table comes from the first file perf itself would take
 * (util/symbol.c dso__load): the .gnu_debuglink targets, then
 * /usr/lib/debug/PATH.debug, /usr/lib/debug/PATH,
 * /usr/lib/debug/.build-id/xx/rest.debug, then the file itself; a file
 * whose build-id is not the recorded one is never used.  The first with
 * a .symtab gives the symbols, the first with a .dynsym the runtime side
 * (PLT entries, program headers).  Symbols are perf's: functions, objects
 * and labels of allocated sections, moved to file-offset space through
 * the PT_LOAD that holds them, zero sizes running to the next symbol,
 * duplicates resolved by perf's choose_best_symbol, then "name@plt"
 * entries.  Lookups take a file offset (perf's map_ip).
 *
 * The kernel's come from a kallsyms file (types T, W, D, B, as perf keeps
 * them), shifted by the difference between the recorded and the current
 * address of the reference symbol (_text).  [vdso] comes from this
 * process's own vDSO, as perf does, when its build-id is the recorded
 * one.  Missing build-id cache (~/.debug) copies are not consulted.
 */
#ifndef PD_SYMS_H
#define PD_SYMS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct pd_sym {
	uint64_t start, end;
	uint32_t name;       /* offset into the table's names */
	uint8_t binding, type;
	uint8_t erased, pad;
};
/* Symbol i's place in perf's red-black tree (nodes[i]); PD_NIL ends.
 * Apart from the symbols: a flat table (the kernel's, most often) has no
 * tree, and its symbols stay 24 bytes. */
struct pd_node {
	uint32_t left, right, parent;
	uint8_t black;
};
#define PD_NIL UINT32_MAX

struct pd_symtab {
	struct pd_sym *v;
	size_t n, cap;
	struct pd_node *nodes;  /* the tree's links, for v[0..nodes_cap) */
	size_t nodes_cap;
	uint32_t root;       /* PD_NIL when empty */
	/* When the fixed-up symbols hold disjoint ranges, the tree's shape
	 * cannot change an answer: lookups binary-search these indices of v
	 * (sorted by start) and no tree is built.  NULL: use the tree, unless
	 * flat_all (every symbol of v, in order: a kallsyms index). */
	uint32_t *flat;
	size_t nflat;
	bool flat_all;
	char *names;
	size_t names_len, names_cap;
	/* v and names point into a kallsyms index (pdkindex.h), not into
	 * memory of their own: `map` (map_len bytes) is unmapped on release
	 * when set, and nothing is freed when it is not. */
	bool external;
	void *map;
	size_t map_len;
	bool loaded;         /* a file was found and read */
	char source[4096];   /* the file the symbols came from, "" when none */
	const char *why;     /* why there are none (static text), or NULL */
};

/* Load a user module's table ("" build_id: none recorded; then the file's
 * own is used, as perf does). */
void pd_symtab_load_elf(struct pd_symtab *t, const char *path, const char *build_id);
/* A JIT's perf map (/tmp/perf-PID.map: Node --perf-basic-prof, the JVM's
 * perf-map-agent) as perf 6.1's dso__load_perf_map reads it: each line
 * "START SIZE name" (hex, strtoull's syntax), its last byte dropped, lines
 * too short skipped, symbols in file order into the tree with no fixups.
 * Bounded: a file over PD_PERFMAP_MAX bytes or lines over
 * PD_PERFMAP_LINE_MAX are not read (t->why says so).  Returns false when
 * the file could not be opened (absent or outside what this process may
 * read). */
#define PD_PERFMAP_MAX (256u << 20)
#define PD_PERFMAP_LINE_MAX (1u << 20)
bool pd_symtab_load_perfmap(struct pd_symtab *t, const char *path);
/* The same from a buffer (text[n], any bytes): for tests and fuzzing. */
void pd_symtab_parse_perfmap(struct pd_symtab *t, const char *text, size_t n);
/* [vdso] from this process's own vDSO, when its build-id matches. */
void pd_symtab_load_vdso(struct pd_symtab *t, const char *build_id);
/* The kernel from a kallsyms text: `delta` is subtracted from every
 * address (current minus recorded reference address). */
void pd_symtab_load_kallsyms(struct pd_symtab *t, const char *text, size_t n, uint64_t delta);
/* The same, taking `text` (n bytes, text[n] == 0, from malloc) as the
 * table's own: the names stay in it, ended in place. */
void pd_symtab_adopt_kallsyms(struct pd_symtab *t, char *text, size_t n, uint64_t delta);
void pd_symtab_release(struct pd_symtab *t);

/* perf's symbols__find at `addr`; NULL when none holds it. */
const struct pd_sym *pd_symtab_find(const struct pd_symtab *t, uint64_t addr);
static inline const char *pd_sym_name(const struct pd_symtab *t, const struct pd_sym *s)
{
	return t->names + s->name;
}

/* The address of `name` in a kallsyms text; false when absent. */
bool pd_kallsyms_addr(const char *text, size_t n, const char *name, uint64_t *addr);

/* The running kernel's build-id from a /sys/kernel/notes image; false
 * when it holds none.  `hex` gets at least 41 bytes. */
bool pd_kernel_notes_build_id(const unsigned char *notes, size_t n, char *hex);

/* pdtree.c: perf's red-black tree over t->v (internal to pdsyms.c). */
void pd_tree_insert(struct pd_symtab *t, uint32_t i);
void pd_tree_erase(struct pd_symtab *t, uint32_t i);
uint32_t pd_tree_first(const struct pd_symtab *t);
uint32_t pd_tree_next(const struct pd_symtab *t, uint32_t i);

#endif
