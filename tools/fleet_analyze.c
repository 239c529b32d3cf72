/* fleet_analyze.c - the fleet_analyze tool: a fleet selection (labels,
 * devices, a time range, one event) as an analysis, so that every tool
 * that reads one (list_hotspots, get_call_paths, export_profile,
 * classify_hotspots, ...) works on the fleet.
 *
 * The selection's (stack, device) sums become a profile: one thread per
 * device (its comm the device's name), each stack's frames as the store
 * names them (function, DSO), its samples and summed period under the
 * event.  The profile is written as a pprof file under the artifact root
 * (fleet/selections/HASH.pb.gz, the hash of the selection and of what it
 * held) and analyze_profile reads it as any other input: its answer is
 * this tool's, with the selection said.
 */
#include "registry.h"
#include "tools/lib/fleet_agg.h"
#include "export/formats.h"
#include "base/fsatomic.h"
#include "base/sha256.h"
#include "base/version.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* fleet/selections/HASH.pb.gz: the hash of the selection and its rows. */
static void selection_path(const struct tool_ctx *ctx, json_t *sel, const struct fleet_agg *a, char *rel,
			   size_t relcap, char *abs, size_t abscap)
{
	char *text = json_dumps(sel, JSON_COMPACT | JSON_SORT_KEYS), hex[65];
	struct pl_sha256 h;
	unsigned char d[PL_SHA256_SIZE];

	pl_sha256_init(&h);
	pl_sha256_update(&h, text ? text : "", text ? strlen(text) : 0);
	for (size_t r = 0; r < a->nrows; r++) {
		char *row = json_dumps(a->rows[r], JSON_COMPACT | JSON_SORT_KEYS);
		pl_sha256_update(&h, row ? row : "", row ? strlen(row) : 0);
		free(row);
	}
	pl_sha256_final(&h, d);
	pl_hex(d, 12, hex);
	free(text);
	snprintf(rel, relcap, "fleet/selections/%s.pb.gz", hex);
	snprintf(abs, abscap, "%s/%s", ctx->artifact_root, rel);
}

static enum pl_err write_pprof(const char *path, const struct pl_profile *p, struct pl_error *err)
{
	struct pl_fold_opts fo = {.event = 0};
	struct pl_export_opts eo = {"fleet selection", "perflens " PL_VERSION, "a fleet store selection", 0};
	struct pl_export_stats st;
	struct pl_atomic_file af;
	char dir[4400];
	enum pl_err e;

	snprintf(dir, sizeof(dir), "%s", path);
	*strrchr(dir, '/') = '\0';
	if ((e = pl_make_dirs(dir, err)) || (e = pl_atomic_open(&af, path, err)))
		return e;
	if ((e = pl_write_pprof(af.fp, p, &fo, &eo, &st, err))) {
		pl_atomic_abort(&af);
		return e;
	}
	return pl_atomic_commit(&af, err);
}

enum pl_err tool_fleet_analyze(const struct tool_ctx *ctx, json_t *args, json_t **result, struct pl_error *err)
{
	json_t *sel = json_deep_copy(args), *events = NULL, *an_args;
	struct fleet_agg a = {0};
	struct pl_profile p;
	char rel[200], abs[4400], uri[300];
	enum pl_err e;

	pl_profile_init(&p, &ctx->limits);
	if ((e = tool_require_writes(ctx, err)) || (e = fleet_ready(ctx, err)) ||
	    (e = fleet_pick_event(ctx, args, sel, &events, err)))
		goto out;
	if ((e = fleet_agg_load(ctx, sel, &a, err)) ||
	    (e = fleet_agg_profile(&a, json_string_value(json_object_get(sel, "event")), &p, err)))
		goto out;
	selection_path(ctx, sel, &a, rel, sizeof(rel), abs, sizeof(abs));
	if ((e = write_pprof(abs, &p, err)))
		goto out;
	snprintf(uri, sizeof(uri), "perflens://artifacts/%s", rel);
	an_args = json_pack("{s:s}", "path", uri);
	if (!ctx->call)
		e = pl_fail(err, PL_ERR_INTERNAL, NULL, "this program cannot call analyze_profile from a tool");
	else
		e = ctx->call(ctx, "analyze_profile", an_args, result, err);
	json_decref(an_args);
	if (!e)
		json_object_set_new(*result, "fleet_selection", json_pack("{s:O,s:s,s:I,s:I}", "selection", sel,
			"file", uri, "devices", (json_int_t)a.devices, "samples", (json_int_t)a.total));
out:
	pl_profile_release(&p);
	fleet_agg_release(&a);
	json_decref(events);
	json_decref(sel);
	return e;
}
