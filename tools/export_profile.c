/* export_profile.c - the export_profile tool: folded stacks, an SVG flame
 * graph, a speedscope file, a pprof profile or a PNG flame graph (also
 * returned as an image content block) of one event, written atomically
 * under the artifact root as
 * exports/ID.EVENT[.OPTIONS][.view-HASH].folded|svg|speedscope.json|pb.gz|png.
 * A view (view.h) exports only what it keeps, as it transforms it.
 * Every format weighs a stack by its summed event period (the sample
 * count when the input gave none), so their totals agree.
 */
#include "registry.h"
#include "tools/lib/view.h"
#include "profile/demangle.h"
#include "store/artifact.h"
#include "export/fold.h"
#include "export/flamepng.h"
#include "export/formats.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

static bool flag(json_t *args, const char *key)
{
	return json_is_true(json_object_get(args, key));
}

/* A file-name-safe copy of an event name ("cpu_core/cycles/" has '/'). */
static void safe_name(char *out, size_t cap, const char *s)
{
	size_t i = 0;

	for (; *s && i + 1 < cap; s++)
		out[i++] = (*s == '/' || *s == ' ' || *s == ':') ? '_' : *s;
	out[i] = '\0';
}

static void options_suffix(struct pl_buf *b, const struct pl_fold_opts *o)
{
	if (o->peer_compat)
		pl_buf_adds(b, ".compat");
	if (o->tid)
		pl_buf_adds(b, ".tid");
	else if (o->pid)
		pl_buf_adds(b, ".pid");
	if (o->kernel)
		pl_buf_adds(b, ".k");
	if (o->jit)
		pl_buf_adds(b, ".j");
	if (o->addrs)
		pl_buf_adds(b, ".addrs");
}

enum export_format { EXPORT_FOLDED, EXPORT_SVG, EXPORT_SPEEDSCOPE, EXPORT_PPROF, EXPORT_PNG };

static const struct {
	const char *name;
	const char *suffix;
} formats[] = {
	[EXPORT_FOLDED] = {"folded", ".folded"},
	[EXPORT_SVG] = {"svg", ".svg"},
	[EXPORT_SPEEDSCOPE] = {"speedscope", ".speedscope.json"},
	[EXPORT_PPROF] = {"pprof", ".pb.gz"},
	[EXPORT_PNG] = {"png", ".png"},
};

static enum export_format format_of(const char *name)
{
	for (size_t i = 0; i < PL_ARRAY_LEN(formats); i++)
		if (strcmp(name, formats[i].name) == 0)
			return (enum export_format)i;
	return EXPORT_FOLDED;  /* the schema allows no other name */
}

/* Everything one export needs to write its file. */
struct export_job {
	enum export_format format;
	const struct pl_profile *p;
	const struct pl_fold_opts *fo;
	const struct pl_folded *folded;        /* folded and svg */
	const struct pl_svg_opts *so;          /* svg */
	const struct pl_export_opts *eo;       /* speedscope and pprof */
	struct pl_export_stats *stats;         /* speedscope and pprof */
};

static enum pl_err write_format(FILE *fp, const struct export_job *j, struct pl_error *err)
{
	switch (j->format) {
	case EXPORT_SVG:
		return pl_write_flamegraph(fp, j->folded, j->so, err);
	case EXPORT_SPEEDSCOPE:
		return pl_write_speedscope(fp, j->p, j->fo, j->eo, j->stats, err);
	case EXPORT_PPROF:
		return pl_write_pprof(fp, j->p, j->fo, j->eo, j->stats, err);
	case EXPORT_FOLDED:
	case EXPORT_PNG:
		break;
	}
	return pl_write_folded(fp, j->folded, err);
}

static enum pl_err write_export(const char *path, const struct export_job *j, long *bytes,
				struct pl_error *err)
{
	struct pl_atomic_file af;
	enum pl_err rc;

	if ((rc = pl_atomic_open(&af, path, err)))
		return rc;
	rc = write_format(af.fp, j, err);
	if (rc) {
		pl_atomic_abort(&af);
		return rc;
	}
	fflush(af.fp);
	*bytes = ftell(af.fp);
	return pl_atomic_commit(&af, err);
}

/* Records in the export (pl_fold_weight's, stack by stack). */
static uint64_t exported_samples(const struct pl_profile *p, const struct pl_fold_opts *fo)
{
	uint64_t all = 0, samples, period;

	for (uint32_t s = 0; s < pl_nstacks(p); s++)
		if (pl_fold_weight(p, s, fo, &samples, &period))
			all += samples;
	return all;
}

/* Folded and SVG: fold, then write the lines or the flame graph. */
static enum pl_err export_folded(struct export_job *j, const char *path, const char *title,
				 json_t *result, struct pl_error *err)
{
	const struct pl_profile *p = j->p;
	const char *event = pl_str(p, p->events[j->fo->event].name);
	struct pl_folded folded = {0};
	struct pl_svg_opts so = {0};
	struct pl_buf subtitle = {0};
	uint64_t total = 0;
	long bytes = 0;
	enum pl_err rc;

	if ((rc = pl_fold(&folded, p, j->fo, err)))
		goto out;
	for (size_t i = 0; i < folded.n; i++)
		total += folded.weights[i];
	pl_buf_addf(&subtitle, "event %s, %llu samples, weight in %s", event,
		    (unsigned long long)p->events[j->fo->event].samples, pl_event_unit(p, j->fo->event));
	so.title = title ? title : "Flame Graph";
	so.subtitle = subtitle.data;
	so.unit = pl_event_unit(p, j->fo->event);
	j->folded = &folded;
	j->so = &so;
	if ((rc = write_export(path, j, &bytes, err)))
		goto out;
	json_object_set_new(result, "bytes", json_integer(bytes));
	json_object_set_new(result, "stacks", json_integer((json_int_t)folded.n));
	json_object_set_new(result, "total_weight", json_integer((json_int_t)total));
	json_object_set_new(result, "samples", json_integer((json_int_t)exported_samples(p, j->fo)));
	json_object_set_new(result, "file_unit", json_string(so.unit));
out:
	j->folded = NULL;
	j->so = NULL;
	pl_buf_release(&subtitle);
	pl_folded_release(&folded);
	return rc;
}

/* PNG: the SVG's flame graph drawn as a picture (export/flamepng.h), the
 * file written atomically, and the picture also returned as an image
 * content block when it is small enough for a model to look at. */
static enum pl_err export_png(struct export_job *j, const char *id, const char *path,
			      const char *title, json_t *result, struct pl_error *err)
{
	const struct pl_profile *p = j->p;
	const char *event = pl_str(p, p->events[j->fo->event].name);
	const char *unit = pl_event_unit(p, j->fo->event);
	struct pl_folded folded = {0};
	struct pl_png_opts po = {0};
	struct pl_png_stats st;
	struct pl_buf png = {0}, head = {0}, sub = {0};
	struct pl_atomic_file af;
	uint64_t total = 0;
	enum pl_err rc;

	if ((rc = pl_fold(&folded, p, j->fo, err)))
		goto out;
	for (size_t i = 0; i < folded.n; i++)
		total += folded.weights[i];
	pl_buf_addf(&head, "%s: %s, weight in %s", title ? title : "Flame graph", event, unit);
	pl_buf_addf(&sub, "%s: %llu samples, %llu %s", id,
		    (unsigned long long)p->events[j->fo->event].samples, (unsigned long long)total, unit);
	po.title = head.data;
	po.subtitle = sub.data;
	po.unit = unit;
	if ((rc = pl_write_flamegraph_png(&png, &folded, &po, &st, err)) ||
	    (rc = pl_atomic_open(&af, path, err)))
		goto out;
	if (fwrite(png.data, 1, png.len, af.fp) != png.len) {
		pl_atomic_abort(&af);
		rc = pl_fail(err, PL_ERR_OUTPUT, "check the disk space", "cannot write '%s'", path);
		goto out;
	}
	if ((rc = pl_atomic_commit(&af, err)))
		goto out;
	json_object_set_new(result, "bytes", json_integer((json_int_t)png.len));
	json_object_set_new(result, "stacks", json_integer((json_int_t)folded.n));
	json_object_set_new(result, "total_weight", json_integer((json_int_t)total));
	json_object_set_new(result, "samples", json_integer((json_int_t)exported_samples(p, j->fo)));
	json_object_set_new(result, "file_unit", json_string(unit));
	json_object_set_new(result, "picture", json_pack("{s:i,s:i,s:i,s:i,s:I,s:b}",
		"width", st.width, "height", st.height, "levels", st.levels, "levels_cut", st.levels_cut,
		"frames", (json_int_t)st.frames, "inline", tool_add_picture(result, png.data, png.len)));
out:
	pl_buf_release(&png);
	pl_buf_release(&head);
	pl_buf_release(&sub);
	pl_folded_release(&folded);
	return rc;
}

/* speedscope and pprof: every stack one sample, written straight from the
 * profile. */
static enum pl_err export_samples(struct export_job *j, const char *id, const char *path,
				  const char *title, json_t *result, struct pl_error *err)
{
	const struct pl_profile *p = j->p;
	const char *event = pl_str(p, p->events[j->fo->event].name);
	struct pl_export_opts eo = {0};
	struct pl_export_stats st = {0};
	struct pl_buf name = {0}, comment = {0};
	long bytes = 0;
	enum pl_err rc;

	pl_buf_addf(&name, "%s %s", id, event);
	pl_buf_addf(&comment, "perflens %s: analysis %s, event %s, weight in %s", PL_VERSION, id,
		    event, pl_event_unit(p, j->fo->event));
	eo.name = title ? title : name.data;
	eo.exporter = "perflens " PL_VERSION;
	eo.comment = comment.data;
	j->eo = &eo;
	j->stats = &st;
	if (!(rc = write_export(path, j, &bytes, err))) {
		json_object_set_new(result, "bytes", json_integer(bytes));
		json_object_set_new(result, "stacks", json_integer((json_int_t)st.stacks));
		json_object_set_new(result, "total_weight", json_integer((json_int_t)st.weight));
		json_object_set_new(result, "samples", json_integer((json_int_t)st.samples));
		json_object_set_new(result, "file_unit", json_string(st.file_unit));
		json_object_set_new(result, "contents", j->format == EXPORT_PPROF ?
			json_pack("{s:I,s:I,s:I,s:I}", "locations", (json_int_t)st.frames,
				  "functions", (json_int_t)st.functions,
				  "mappings", (json_int_t)st.mappings, "mappings_with_build_id", (json_int_t)st.mappings_with_build_id) :
			json_pack("{s:I}", "frames", (json_int_t)st.frames));
	}
	j->eo = NULL;
	j->stats = NULL;
	pl_buf_release(&name);
	pl_buf_release(&comment);
	return rc;
}

/* The recording's build-ids (perf.data analyses keep them in the summary's
 * quality.build_ids) for pprof's mappings; none when the summary has none. */
static void load_build_ids(const struct tool_ctx *ctx, const char *id, struct pl_profile *p)
{
	json_t *summary = NULL, *b;
	struct pl_error ignored;
	size_t i;

	if (pl_artifact_load_summary(ctx->artifact_root, id, &summary, &ignored))
		return;
	json_array_foreach(json_object_get(json_object_get(summary, "quality"), "build_ids"), i, b) {
		const char *dso = json_string_value(json_object_get(b, "dso"));
		const char *hex = json_string_value(json_object_get(b, "build_id"));
		if (!dso || !hex || strlen(hex) >= sizeof(p->build_ids[0].hex) ||
		    p->nbuild_ids == PL_MAX_BUILD_IDS)
			continue;
		PL_GROW(p->build_ids, p->build_ids_cap, p->nbuild_ids + 1);
		p->build_ids[p->nbuild_ids].dso = pl_intern_text(p, dso, strlen(dso));
		snprintf(p->build_ids[p->nbuild_ids++].hex, sizeof(p->build_ids[0].hex), "%s", hex);
	}
	json_decref(summary);
}

/* Whether every input of analysis `id` was a perf.data (whose names
 * perf script would print demangled). */
static bool from_perf_data(const struct tool_ctx *ctx, const char *id)
{
	json_t *summary = NULL, *in;
	struct pl_error ignored;
	bool all = true;
	size_t i;

	if (pl_artifact_load_summary(ctx->artifact_root, id, &summary, &ignored))
		return false;
	json_array_foreach(json_object_get(json_object_get(summary, "provenance"), "inputs"), i, in) {
		const char *f = json_string_value(json_object_get(in, "format"));
		all &= f && strcmp(f, "perf_data") == 0;
	}
	all &= json_array_size(json_object_get(json_object_get(summary, "provenance"), "inputs")) > 0;
	json_decref(summary);
	return all;
}

/* The same flame graph as a picture (unless this was one), and the file
 * itself page by page when it is text. */
static json_t *next_steps(json_t *args, const char *event, enum export_format f, json_t *uri)
{
	json_t *steps = json_array(), *png;

	if (f != EXPORT_PNG) {
		/* the same options (pid, tid, kernel frames, ...) */
		png = json_copy(args);
		json_object_set_new(png, "event", json_string(event));
		json_object_set_new(png, "format", json_string("png"));
		json_array_append_new(steps, tool_next_step("export_profile", png,
			"the same flame graph as a picture, returned inline for you to look at"));
	}
	if (f == EXPORT_FOLDED || f == EXPORT_SPEEDSCOPE)
		json_array_append_new(steps, tool_next_step("read_artifact_page", json_pack("{s:O}", "artifact", uri),
			"the exported file itself, page by page"));
	return steps;
}

/* The fold's options from the call's flags, and the names frames show:
 * stackcollapse-perf.pl reads perf script's names (perf's own form for a
 * perf.data, the text's own names for a text). */
static void fold_options(const struct tool_ctx *ctx, json_t *args, const char *id, struct pl_profile *p,
			 struct pl_fold_opts *fo)
{
	const char *names = json_string_value(json_object_get(args, "names"));

	pl_profile_show_names(p, fo->peer_compat ? (from_perf_data(ctx, id) ? PL_NAMES_PERF : PL_NAMES_INPUT)
				 : names && strcmp(names, "short") == 0 ? PL_NAMES_SHORT : PL_NAMES_FULL);
	fo->pid = flag(args, "pid");
	fo->tid = flag(args, "tid");
	fo->kernel = flag(args, "kernel") || flag(args, "all");
	fo->jit = flag(args, "jit") || flag(args, "all");
	fo->addrs = flag(args, "addrs");
}

/* exports/ID.EVENT[.options][.short][.view].EXT under the artifact root:
 * one file per distinct export, so asking again rewrites the same one. */
static void export_path(const struct tool_ctx *ctx, json_t *args, const char *id, const char *event,
			const struct pl_fold_opts *fo, const struct tool_view *view, enum export_format format,
			struct pl_buf *path)
{
	const char *names = json_string_value(json_object_get(args, "names"));
	char ev_safe[128];

	safe_name(ev_safe, sizeof(ev_safe), event);
	pl_buf_addf(path, "%s/exports/%s.%s", ctx->artifact_root, id, ev_safe);
	options_suffix(path, fo);
	if (!fo->peer_compat && names && strcmp(names, "short") == 0)
		pl_buf_adds(path, ".short");
	tool_view_file_suffix(view, path);
	pl_buf_adds(path, formats[format].suffix);
}

/* Write the export `job` describes to `path`, filling `res`. */
static enum pl_err export_write(struct export_job *job, const char *id, const char *path, const char *title,
				json_t *res, struct pl_error *err)
{
	if (job->format == EXPORT_PNG)
		return export_png(job, id, path, title, res, err);
	if (job->format == EXPORT_FOLDED || job->format == EXPORT_SVG)
		return export_folded(job, path, title, res, err);
	return export_samples(job, id, path, title, res, err);
}

enum pl_err tool_export_profile(const struct tool_ctx *ctx, json_t *args,
				json_t **result, struct pl_error *err)
{
	const char *id = json_string_value(json_object_get(args, "analysis_id"));
	const char *format = json_string_value(json_object_get(args, "format"));
	const char *event_name = json_string_value(json_object_get(args, "event"));
	const char *compat = json_string_value(json_object_get(args, "compat"));
	const char *title = json_string_value(json_object_get(args, "title"));
	struct pl_fold_opts fo = {0};
	struct export_job job = {0};
	struct tool_view view;
	struct pl_profile p;
	struct pl_buf path = {0};
	json_t *res = NULL;
	const char *event;
	enum pl_err rc;

	pl_profile_init(&p, &ctx->limits);
	if ((rc = tool_view_init(&view, args, false, err)) || (rc = tool_require_writes(ctx, err)))
		goto out;
	assert(id && format && compat);   /* required, or defaulted by the input schema */
	fo.peer_compat = strcmp(compat, "stackcollapse") == 0;
	tool_view_prepare(&view, &p);
	if ((rc = pl_artifact_load_profile(ctx->artifact_root, id, &p, err)) ||
	    (rc = tool_pick_event(&p, event_name, fo.peer_compat, &fo.event, err)) ||
	    (rc = tool_view_apply(&view, &p, fo.event, err)))
		goto out;
	fold_options(ctx, args, id, &p, &fo);
	job.format = format_of(format);
	if (job.format == EXPORT_PPROF)
		load_build_ids(ctx, id, &p);
	job.p = &p;
	job.fo = &fo;
	event = pl_str(&p, p.events[fo.event].name);
	export_path(ctx, args, id, event, &fo, &view, job.format, &path);
	/* The uri names the same file for read_artifact_page and resources/read. */
	res = json_pack("{s:s,s:s,s:s,s:o,s:o,s:s,s:s}", "analysis_id", id, "format", format,
		"event", event, "path", pl_json_bytes(path.data),
		"uri", json_sprintf("perflens://artifacts/%s", path.data + strlen(ctx->artifact_root) + 1),
		"unit", pl_event_unit(&p, fo.event),
		"weight", strcmp(pl_event_unit(&p, fo.event), "samples") == 0 ? "samples" : "period");
	if (!(rc = export_write(&job, id, path.data, title, res, err))) {
		tool_view_describe(&view, res);
		json_object_set_new(res, "next_steps", next_steps(args, event, job.format, json_object_get(res, "uri")));
		*result = res;
		res = NULL;
	}
out:
	tool_view_release(&view);
	json_decref(res);
	pl_buf_release(&path);
	pl_profile_release(&p);
	return rc;
}
