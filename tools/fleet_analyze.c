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
#include "fleet_agg.h"
#include "export/formats.h"
#include "base/fsatomic.h"
#include "base/sha256.h"
#include "base/version.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The frames of a stack row as the profile's frame ids (root first). */
static uint32_t stack_of(struct pl_profile *p, const struct fleet_agg *a, json_t *row, uint32_t thread,
			 uint32_t *fids, struct pl_error *err)
{
	json_t *frames = NULL;
	uint64_t sid = fleet_u64(json_object_get(row, "stack_id"));
	uint32_t depth = 0;

	for (size_t lo = 0, hi = a->nstacks; lo < hi;) {
		size_t mid = lo + (hi - lo) / 2;
		if (a->stack_ids[mid] == sid) {
			frames = a->stack_frames[mid];
			break;
		}
		if (a->stack_ids[mid] < sid)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = 0; i < json_array_size(frames) && depth < 1024; i++) {
		uint64_t id = fleet_u64(json_array_get(frames, i));
		size_t lo = 0, hi = a->nframes;
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;
			if (a->frame_ids[mid] < id)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo == a->nframes || a->frame_ids[lo] != id)
			continue;
		const char *name = fleet_agg_name(a, a->frame_fn[lo]);
		const char *dso = name + strlen(name) + 1;
		uint32_t fn = pl_intern_func(p, pl_intern_text(p, name, strlen(name)),
					     *dso ? pl_intern_text(p, dso, strlen(dso)) : PL_NOID);
		fids[depth++] = pl_intern_frame(p, fn, false, 0, PL_NOID, err);
	}
	return depth ? pl_intern_stack(p, thread, fids, depth, err) : PL_NOID;
}

/* The selection's rows as a profile of one event. */
static enum pl_err build_profile(struct pl_profile *p, const struct fleet_agg *a, const char *event,
				 struct pl_error *err)
{
	uint32_t ev = pl_intern_event(p, event, strlen(event));
	uint32_t *fids = pl_xcalloc(1024, sizeof(uint32_t));

	for (size_t r = 0; r < a->nrows; r++) {
		const char *dev = json_string_value(json_object_get(a->rows[r], "device"));
		uint32_t thread = pl_intern_thread(p, -1, -1, pl_intern_text(p, dev ? dev : "", dev ? strlen(dev) : 0));
		uint32_t s = stack_of(p, a, a->rows[r], thread, fids, err);
		if (s == PL_NOID)
			continue;
		pl_add_weight(p, s, ev, fleet_u64(json_object_get(a->rows[r], "samples")),
			      fleet_u64(json_object_get(a->rows[r], "period")), true);
	}
	free(fids);
	return PL_OK;
}

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
	    (e = fleet_events(ctx, args, &events, err)))
		goto out;
	if (!json_array_size(events)) {
		e = pl_fail(err, PL_ERR_INPUT, "see fleet_devices for the devices and labels the store holds",
			    "the fleet store holds no samples in this selection");
		goto out;
	}
	if (!json_object_get(sel, "event"))
		json_object_set(sel, "event", json_object_get(json_array_get(events, 0), "event"));
	if ((e = fleet_agg_load(ctx, sel, &a, err)) ||
	    (e = build_profile(&p, &a, json_string_value(json_object_get(sel, "event")), err)))
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
