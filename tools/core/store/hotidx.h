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

/* {"events": [{"name": ...}, ...]} of the indexed analysis, for
 * tool_pick_summary_event (new reference). */
json_t *pl_hotidx_events(const struct pl_hotidx *x);

/* View `view`'s "event" (a string), "unit" and "total" values (new);
 * false when the index turns out malformed (then parse the summary). */
bool pl_hotidx_view(const struct pl_hotidx *x, size_t view, json_t **event, json_t **unit,
		    json_t **total);

/* One page of view `view`, as list_hotspots gives it: of the hotspots at
 * or above min_pct in the order asked (*total_n gets their number), those
 * from `offset` on, at most `limit`, ranked from offset + 1 (*page, new).
 * False when the index turns out malformed (then parse the summary). */
bool pl_hotidx_page(const struct pl_hotidx *x, size_t view, bool by_inclusive, double min_pct,
		    size_t offset, size_t limit, size_t *total_n, json_t **page);

#endif
