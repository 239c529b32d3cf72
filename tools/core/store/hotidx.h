/* hotidx.h - the hotspot index: an analysis' hotspots, per event and in
 * both orders (self, inclusive), as a compact binary file that a page of
 * list_hotspots reads without parsing the whole summary.
 *
 * It is a cache, derived from the summary alone and rebuilt from it: it
 * lives under ARTIFACT_ROOT/cache/hotidx/ID.idx, is written atomically
 * when writes are allowed, and is used only when every check passes
 * (format, id, the summary's size, every offset read); otherwise the
 * caller parses the summary as before.  Values keep the summary's own
 * JSON text, so a page built from the index is byte for byte the page
 * built from the summary.
 */
#ifndef PL_HOTIDX_H
#define PL_HOTIDX_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "base/error.h"

struct pl_hotidx;

/* Sort `n` hotspots of a summary view (JSON objects) by inclusive weight,
 * ties by inclusive samples, self weight, symbol, function index: the
 * order list_hotspots pages by.  `funcs` is the summary's functions. */
void pl_hotidx_sort_inclusive(json_t *funcs, json_t **order, size_t n);

/* Build the index of `summary` (analysis `id`, as read from its file
 * under `root`) and write it there.  Errors are the caller's to ignore:
 * the index is only a cache. */
enum pl_err pl_hotidx_write(const char *root, const char *id, json_t *summary,
			    struct pl_error *err);

/* Open and check the index of analysis `id` under `root`; NULL when there
 * is none or it does not pass (then parse the summary). */
struct pl_hotidx *pl_hotidx_open(const char *root, const char *id);
void pl_hotidx_close(struct pl_hotidx *x);

/* The number of views (events) of the index, and view `view`'s event
 * name as the summary's events[view].name holds it (new string). */
size_t pl_hotidx_nviews(const struct pl_hotidx *x);
char *pl_hotidx_event_name(const struct pl_hotidx *x, size_t view);

/* View `view`'s "event" (a string), "unit" and "total" values (new);
 * false when the index turns out malformed (then parse the summary). */
bool pl_hotidx_view(const struct pl_hotidx *x, size_t view, json_t **event, json_t **unit,
		    json_t **total);

/* The hotspots of view `view` at or above min_pct, in the order asked
 * (self or inclusive): their number, and their positions in that order in
 * *pos (new, free() it).  The caller pages them. */
size_t pl_hotidx_select(const struct pl_hotidx *x, size_t view, bool by_inclusive, double min_pct,
			size_t **pos);

/* The list_hotspots entry of the hotspot at position `pos` of that order,
 * ranked `rank` (new), or NULL when the index turns out malformed (then
 * parse the summary). */
json_t *pl_hotidx_hotspot(const struct pl_hotidx *x, size_t view, bool by_inclusive, size_t pos,
			  size_t rank);

#endif
