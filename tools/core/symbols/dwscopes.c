/* dwscopes.c - per-CU scope indexes and the descent to the innermost
 * scope (see dwscopes.h).
 *
 * A CU's index is a list of (low, high, DIE order, DIE) for each address
 * range of each top-level DIE, sorted by low, with running maxima of high
 * so that the ranges holding a pc are found by a short backward scan; the
 * lowest DIE order among them is the DIE dwarf_getscopes would reach
 * first.  Indexes live in an open-addressing table keyed by the CU DIE's
 * offset and are built on a CU's first lookup.
 */
#include "dwscopes.h"

#include <dwarf.h>
#include <stdint.h>
#include <stdlib.h>

#include "base/util.h"

#define IMPORT_DEPTH_MAX 8          /* nested DW_TAG_imported_unit */
#define DIES_PER_CU_MAX (1u << 22)  /* top-level DIEs looked at per CU */
#define CHILDREN_MAX (1u << 20)     /* children looked at per level of a descent */
#define EMPTY ((Dwarf_Off)-1)
#define BOUNDS_DIES_MAX (1u << 26)  /* DIEs looked at by pl_dw_scopes_bounds */
#define BOUNDS_DEPTH_MAX 256        /* nesting followed by it */

struct scope_entry {
	uint64_t low, high;
	uint64_t maxend;               /* max(high) over entries[0..i] */
	uint32_t order;                /* DIE order in the CU: first match wins */
	Dwarf_Die die;
};

struct cu_index {
	Dwarf_Off off;                 /* the CU DIE's offset; EMPTY when unused */
	struct scope_entry *e;         /* sorted by low, then order */
	size_t n;
};

struct pl_dw_scopes {
	struct cu_index *cus;
	size_t ncus, nslots;           /* power of two; load <= 1/2 */
};

struct pl_dw_scopes *pl_dw_scopes_new(void)
{
	return pl_xcalloc(1, sizeof(struct pl_dw_scopes));
}

void pl_dw_scopes_free(struct pl_dw_scopes *x)
{
	if (!x)
		return;
	for (size_t i = 0; i < x->nslots; i++)
		free(x->cus[i].e);
	free(x->cus);
	free(x);
}

/* dwarf_getscopes descends only into these (libdw_visit_scopes.c). */
static bool may_have_scopes(int tag)
{
	switch (tag) {
	case DW_TAG_compile_unit: case DW_TAG_module: case DW_TAG_lexical_block:
	case DW_TAG_with_stmt: case DW_TAG_catch_block: case DW_TAG_try_block:
	case DW_TAG_entry_point: case DW_TAG_inlined_subroutine: case DW_TAG_subprogram:
	case DW_TAG_namespace: case DW_TAG_class_type: case DW_TAG_structure_type:
		return true;
	default:
		return false;
	}
}

/* ------------------------------------------------------------ indexing */

struct builder {
	struct cu_index *c;
	size_t cap;
	uint32_t order;
};

static void add_ranges(struct builder *b, Dwarf_Die *die)
{
	Dwarf_Addr base, start, end;
	ptrdiff_t off = 0;
	uint32_t order = b->order++;

	if (!dwarf_hasattr(die, DW_AT_low_pc) && !dwarf_hasattr(die, DW_AT_ranges))
		return;
	while ((off = dwarf_ranges(die, off, &base, &start, &end)) > 0) {
		if (end <= start)
			continue;
		PL_GROW(b->c->e, b->cap, b->c->n + 1);
		b->c->e[b->c->n++] = (struct scope_entry){.low = start, .high = end, .order = order,
							  .die = *die};
	}
}

/* The children of `parent`, an imported (partial) unit's children taken
 * in place of the DW_TAG_imported_unit, as libdw's scope walker does. */
static void index_children(struct builder *b, Dwarf_Die *parent, int import_depth)
{
	Dwarf_Die child, unit;
	Dwarf_Attribute attr;

	if (dwarf_child(parent, &child) != 0)
		return;
	do {
		if (b->order >= DIES_PER_CU_MAX)
			return;
		if (dwarf_tag(&child) != DW_TAG_imported_unit) {
			add_ranges(b, &child);
			continue;
		}
		if (import_depth < IMPORT_DEPTH_MAX &&
		    dwarf_formref_die(dwarf_attr(&child, DW_AT_import, &attr), &unit) &&
		    dwarf_tag(&unit) != DW_TAG_compile_unit)
			index_children(b, &unit, import_depth + 1);
	} while (dwarf_siblingof(&child, &child) == 0);
}

static int cmp_entry(const void *a, const void *b)
{
	const struct scope_entry *x = a, *y = b;

	if (x->low != y->low)
		return x->low < y->low ? -1 : 1;
	return (x->order > y->order) - (x->order < y->order);
}

static void build(struct cu_index *c, Dwarf_Die *cudie)
{
	struct builder b = {.c = c};

	index_children(&b, cudie, 0);
	if (c->n)
		qsort(c->e, c->n, sizeof(*c->e), cmp_entry);
	for (size_t i = 0; i < c->n; i++)
		c->e[i].maxend = i && c->e[i - 1].maxend > c->e[i].high ? c->e[i - 1].maxend
									 : c->e[i].high;
}

static size_t slot(Dwarf_Off off, size_t nslots)
{
	return (size_t)((off * 0x9e3779b97f4a7c15ull) >> 20) & (nslots - 1);
}

static void grow(struct pl_dw_scopes *x)
{
	struct cu_index *old = x->cus;
	size_t n = x->nslots;

	x->nslots = n ? 2 * n : 64;
	x->cus = pl_xmalloc(x->nslots * sizeof(*x->cus));
	for (size_t i = 0; i < x->nslots; i++)
		x->cus[i] = (struct cu_index){.off = EMPTY};
	for (size_t i = 0; i < n; i++) {
		size_t j;
		if (old[i].off == EMPTY)
			continue;
		for (j = slot(old[i].off, x->nslots); x->cus[j].off != EMPTY; j = (j + 1) & (x->nslots - 1))
			;
		x->cus[j] = old[i];
	}
	free(old);
}

/* The index of the CU, built on its first use. */
static const struct cu_index *index_of(struct pl_dw_scopes *x, Dwarf_Die *cudie)
{
	Dwarf_Off off = dwarf_dieoffset(cudie);
	size_t i;

	if (2 * (x->ncus + 1) > x->nslots)
		grow(x);
	for (i = slot(off, x->nslots); x->cus[i].off != EMPTY; i = (i + 1) & (x->nslots - 1))
		if (x->cus[i].off == off)
			return &x->cus[i];
	x->cus[i].off = off;
	x->ncus++;
	build(&x->cus[i], cudie);
	return &x->cus[i];
}

/* ------------------------------------------------------------- lookups */

/* The first top-level DIE (in DIE order) whose ranges hold `pc`. */
static const Dwarf_Die *top_scope(const struct cu_index *c, uint64_t pc)
{
	const struct scope_entry *best = NULL;
	size_t lo = 0, hi = c->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (c->e[mid].low <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t j = lo; j-- > 0 && c->e[j].maxend > pc;)
		if (pc < c->e[j].high && (!best || c->e[j].order < best->order))
			best = &c->e[j];
	return best ? &best->die : NULL;
}

/* The first child of `die` holding pc; false when none does. */
static bool child_holding(Dwarf_Die *die, Dwarf_Addr pc, Dwarf_Die *child)
{
	uint32_t seen = 0;

	if (dwarf_child(die, child) != 0)
		return false;
	do {
		if (dwarf_haspc(child, pc) > 0)
			return true;
	} while (++seen < CHILDREN_MAX && dwarf_siblingof(child, child) == 0);
	return false;
}

int pl_dw_scopes_find(struct pl_dw_scopes *x, Dwarf_Die *cudie, Dwarf_Addr pc, Dwarf_Die *path,
		      int max, bool *cut)
{
	const Dwarf_Die *top = max > 0 ? top_scope(index_of(x, cudie), pc) : NULL;
	Dwarf_Die child;
	int n = 0;

	if (!top)
		return 0;
	path[n++] = *top;
	while (may_have_scopes(dwarf_tag(&path[n - 1])) && child_holding(&path[n - 1], pc, &child)) {
		if (n == max) {
			*cut = true;
			break;
		}
		path[n++] = child;
	}
	return n;
}

/* -------------------------------------------------------------- bounds */

struct bounds_walk {
	void (*add)(void *ctx, uint64_t addr);
	void *ctx;
	size_t dies;
};

static void add_bounds(struct bounds_walk *w, Dwarf_Die *die)
{
	Dwarf_Addr base, start, end;
	ptrdiff_t off = 0;

	if (!dwarf_hasattr(die, DW_AT_low_pc) && !dwarf_hasattr(die, DW_AT_ranges))
		return;
	while ((off = dwarf_ranges(die, off, &base, &start, &end)) > 0) {
		w->add(w->ctx, start);
		w->add(w->ctx, end);
	}
}

/* The children of `parent` (every one a descent may test), and below
 * those that may hold scopes; imported units' children in place of the
 * DW_TAG_imported_unit, as the index and libdw's walker take them. */
static void walk_bounds(struct bounds_walk *w, Dwarf_Die *parent, int depth, int import_depth)
{
	Dwarf_Die child, unit;
	Dwarf_Attribute attr;

	if (depth > BOUNDS_DEPTH_MAX || dwarf_child(parent, &child) != 0)
		return;
	do {
		int tag = dwarf_tag(&child);
		if (++w->dies > BOUNDS_DIES_MAX)
			return;
		if (tag == DW_TAG_imported_unit) {
			if (import_depth < IMPORT_DEPTH_MAX &&
			    dwarf_formref_die(dwarf_attr(&child, DW_AT_import, &attr), &unit) &&
			    dwarf_tag(&unit) != DW_TAG_compile_unit)
				walk_bounds(w, &unit, depth + 1, import_depth + 1);
			continue;
		}
		add_bounds(w, &child);
		if (may_have_scopes(tag))
			walk_bounds(w, &child, depth + 1, import_depth);
	} while (dwarf_siblingof(&child, &child) == 0);
}

bool pl_dw_scopes_bounds(Dwarf *dw, void (*add)(void *ctx, uint64_t addr), void *ctx)
{
	struct bounds_walk w = {add, ctx, 0};
	Dwarf_CU *cu = NULL;
	Dwarf_Die cudie;
	uint8_t type;

	while (dwarf_get_units(dw, cu, &cu, NULL, &type, &cudie, NULL) == 0) {
		add_bounds(&w, &cudie);
		walk_bounds(&w, &cudie, 0, 0);
		if (w.dies > BOUNDS_DIES_MAX)
			return false;
	}
	return true;
}
