/* dwscopes.h - the concrete DWARF scopes that hold an address, for inline
 * chains, with an index per compile unit so that repeated lookups stay
 * cheap.
 *
 * It answers what `eu-addr2line -i` computes with dwarf_getscopes and
 * dwarf_getscopes_die (which walk the whole CU on every call), using only
 * libdw's DIE calls: once per CU the top-level DIEs that have address
 * ranges are indexed; a lookup finds the first of them holding the pc by
 * binary search and descends, at each level into the first child holding
 * the pc, as dwarf_getscopes' pruned walk does.  DW_TAG_imported_unit
 * children count as the importer's, as in libdw's walker.  Counts and
 * depths are bounded, so corrupt DWARF cannot make a walk run away.
 */
#ifndef PL_DWSCOPES_H
#define PL_DWSCOPES_H

#include <stdbool.h>
#include <stdint.h>

#include <elfutils/libdw.h>

struct pl_dw_scopes;   /* the per-CU indexes of one Dwarf (one module) */

struct pl_dw_scopes *pl_dw_scopes_new(void);
/* NULL is a no-op. */
void pl_dw_scopes_free(struct pl_dw_scopes *x);

/* The DIEs holding `pc` below `cudie`, outermost first: path[0] is the
 * top-level DIE (usually the DW_TAG_subprogram), the last is the
 * innermost scope.  Returns how many were stored (0 when no DIE holds
 * it); *cut is set when the nesting went deeper than `max`.  The DIEs stay
 * valid while the Dwarf lives. */
int pl_dw_scopes_find(struct pl_dw_scopes *x, Dwarf_Die *cudie, Dwarf_Addr pc, Dwarf_Die *path,
		      int max, bool *cut);

/* Every address where the answer of pl_dw_scopes_find may change: the
 * low and high bounds of every range of every DIE a descent can look at
 * (the children of scope-holding DIEs, below every unit of `dw`,
 * imported units followed), each passed to add(ctx, address), in no
 * particular order.  False when the walk passed its DIE bound. */
bool pl_dw_scopes_bounds(Dwarf *dw, void (*add)(void *ctx, uint64_t addr), void *ctx);

#endif
