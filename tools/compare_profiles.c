/* compare_profiles.c - the compare_profiles tool: a baseline analysis
 * against a candidate analysis of the same event.
 *
 * Comparability comes first: the event is picked on each side by the
 * usual rules, and different events or units are refused, never
 * compared.  Then, from diff.h: per (symbol, DSO) the change of self and
 * inclusive share, per folded call path the change of share (each list
 * filtered, sorted and paged with its own cursor), the change of the
 * [unknown] share, and, written atomically under the artifact root, the
 * folded diff (difffolded.pl's "stack count1 count2") and the
 * differential SVG flame graph (as flamegraph.pl draws that diff).
 *
 * The two analyses are loaded, and the two files written, two at a time
 * (pl_diff_run_pair); an analysis compared with itself is loaded once.
 * A view (view.h) applies to both sides alike, unless candidate_view
 * gives the candidate its own: then `view` is the baseline's alone, and
 * one analysis may be compared with itself under two views (two time
 * windows of one recording: its phases), loaded once per side.  Cursors
 * and export names carry both views' keys.
 */
#include "registry.h"
#include "tools/lib/view.h"
#include "store/artifact.h"
#include "evidence/diff.h"
#include "base/escape.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define SAMPLES_WARN 100          /* fewer samples: shares are coarse */
#define TOTALS_WARN_RATIO 1.1     /* raw totals this far apart: say so */
#define UNKNOWN_WARN_PERCENT 10.0

struct compare_args {
	const char *base_id, *cand_id, *event, *sort, *cursor, *path_cursor, *title;
	double min_delta;
	size_t limit, offset, path_limit;
	uint32_t max_frames;
	bool normalize, exports;
	json_t *cand_view_args;   /* {"view": candidate_view} when given (owned), else NULL */
};

/* The call's arguments, in one json_unpack (the input schema has checked
 * their types and filled the defaults; the others may be absent). */
static enum pl_err read_args(json_t *args, struct compare_args *a, struct pl_error *err)
{
	json_int_t limit, offset, path_limit, max_frames;
	json_t *cand_view = NULL;
	int normalize, exports;
	json_error_t je;

	memset(a, 0, sizeof(*a));
	if (json_unpack_ex(args, &je, 0, "{s:s,s:s,s?s,s:s,s?s,s?s,s?s,s:F,s:I,s:I,s:I,s:I,s:b,s:b,s?o}",
			   "baseline_id", &a->base_id, "candidate_id", &a->cand_id, "event", &a->event,
			   "sort", &a->sort, "cursor", &a->cursor, "path_cursor", &a->path_cursor, "title", &a->title,
			   "min_delta_percent", &a->min_delta, "limit", &limit, "offset", &offset,
			   "path_limit", &path_limit, "max_frames", &max_frames, "normalize", &normalize,
			   "exports", &exports, "candidate_view", &cand_view) != 0)
		return pl_fail(err, PL_ERR_USAGE, "pass the arguments the input schema lists", "%s", je.text);
	a->limit = (size_t)limit;
	a->offset = (size_t)offset;
	a->path_limit = (size_t)path_limit;
	a->max_frames = (uint32_t)max_frames;
	a->normalize = normalize;
	a->exports = exports;
	a->cand_view_args = cand_view ? json_pack("{s:O}", "view", cand_view) : NULL;
	return PL_OK;
}

static double round4(double x)
{
	double r = round(x * 1e4) / 1e4;
	return r == 0 ? 0.0 : r;  /* no "-0.0" */
}

/* ------------------------------------------------------- comparability */

/* tool_pick_event on one side, its message saying which side. */
static enum pl_err pick_side(const struct pl_profile *p, const char *name,
			     const char *side, const char *id, uint32_t *event,
			     struct pl_error *err)
{
	struct pl_buf text = {0};

	if (tool_pick_event(p, name, false, event, err) == PL_OK)
		return PL_OK;
	pl_buf_addf(&text, "%s %s: %s", side, id, err->text);
	snprintf(err->text, sizeof(err->text), "%s", text.data);
	pl_buf_release(&text);
	return err->code;
}

/* Events both profiles hold, ", "-separated (empty when none). */
static void common_events(const struct pl_profile *a, const struct pl_profile *b,
			  struct pl_buf *out)
{
	for (size_t i = 0; i < a->nevents; i++) {
		const char *n = pl_str(a, a->events[i].name);
		if (pl_find_event(b, n) != PL_NOID)
			pl_buf_addf(out, "%s%s", out->len ? ", " : "", n);
	}
}

static enum pl_err check_comparable(const struct pl_profile *b, uint32_t be,
				    const struct pl_profile *c, uint32_t ce,
				    struct pl_error *err)
{
	const char *bn = pl_str(b, b->events[be].name), *cn = pl_str(c, c->events[ce].name);
	const char *bu = pl_event_unit(b, be), *cu = pl_event_unit(c, ce);
	struct pl_buf common = {0}, hint = {0};
	enum pl_err rc = PL_OK;

	if (strcmp(bn, cn) != 0) {
		common_events(b, c, &common);
		if (common.len)
			pl_buf_addf(&hint, "pass event=NAME with an event both hold: %s", common.data);
		else
			pl_buf_addf(&hint, "record both runs with the same event (perf record -e %s) and analyze them again", bn);
		rc = pl_fail(err, PL_ERR_USAGE, hint.data,
			     "baseline event '%s' and candidate event '%s' differ: different events are never compared",
			     bn, cn);
	} else if (strcmp(bu, cu) != 0) {
		rc = pl_fail(err, PL_ERR_USAGE,
			     "record both runs the same way (both with periods, e.g. perf record -F, or both without) and analyze them again",
			     "event '%s' is weighted in %s in the baseline but in %s in the candidate: the weights cannot be compared",
			     bn, bu, cu);
	}
	pl_buf_release(&common);
	pl_buf_release(&hint);
	return rc;
}

static json_t *warnings_json(const struct compare_args *a, const struct pl_diff *d,
			     const char *event)
{
	json_t *w = json_array();
	const char *side[2] = {"baseline", "candidate"};
	double ratio;

	if (strcmp(a->base_id, a->cand_id) == 0 && !a->cand_view_args)
		json_array_append_new(w, json_string("baseline and candidate are the same analysis: every change is 0"));
	for (int s = 0; s < 2; s++)
		if (d->total[s].samples < SAMPLES_WARN)
			json_array_append_new(w, json_sprintf(
				"the %s has only %llu samples of '%s' (under %d): shares move by whole points from noise alone; collect more samples",
				side[s], (unsigned long long)d->total[s].samples, event, SAMPLES_WARN));
	ratio = d->fold_total[0] ? (double)d->fold_total[1] / (double)d->fold_total[0] : 0;
	if (!a->normalize && d->fold_total[0] && d->fold_total[1] &&
	    (ratio > TOTALS_WARN_RATIO || ratio < 1 / TOTALS_WARN_RATIO))
		json_array_append_new(w, json_sprintf(
			"the candidate's total weight is %.1f%% of the baseline's: the folded diff and the SVG compare raw counts (as difffolded.pl does without -n), so frames look grown or shrunk by that alone; normalize=true scales the baseline (shares in this result are already relative)",
			ratio * 100));
	if (d->npaths && d->fold_total[0] && d->fold_total[1] && d->common_paths == 0)
		json_array_append_new(w, json_string(
			"no call path is common to both sides (different programs, process names or symbols?): every path is added or removed"));
	if (d->main_dso[0] && d->main_dso[1] && strcmp(d->main_dso[0], d->main_dso[1]))
		json_array_append_new(w, json_sprintf(
			"the main executables differ (baseline %s, candidate %s): their functions are compared by name, as two builds of one program",
			PL_ESC_MSG(d->main_dso[0]), PL_ESC_MSG(d->main_dso[1])));
	if (d->main_comm[0] && d->main_comm[1])
		json_array_append_new(w, json_sprintf(
			"the main executables' commands differ (baseline %s, candidate %s): they are matched as one, so call paths from the candidate's %s are compared with the baseline's %s and named after it",
			PL_ESC_MSG(d->main_comm[0]), PL_ESC_MSG(d->main_comm[1]), PL_ESC_MSG(d->main_comm[1]),
			PL_ESC_MSG(d->main_comm[0])));
	if (d->dso_joined_apart)
		json_array_append_new(w, json_sprintf(
			"%zu functions are compared across modules of one file name in different folders (e.g. /lib and /usr/lib)",
			d->dso_joined_apart));
	for (int s = 0; s < 2; s++) {
		double u = d->total[s].period ? 100.0 * (double)d->unknown_self[s].period / (double)d->total[s].period : 0;
		if (u > UNKNOWN_WARN_PERCENT)
			json_array_append_new(w, json_sprintf(
				"%.1f%% of the %s's weight ends in [unknown] symbols: changes there show per DSO only, not per function",
				u, side[s]));
	}
	return w;
}

/* ---------------------------------------------------------------- items */

static json_t *amount_json(const struct pl_amount *a, uint64_t total)
{
	return json_pack("{s:I,s:I,s:f}", "samples", (json_int_t)a->samples,
			 "period", (json_int_t)a->period,
			 "percent", round4(total ? (double)a->period * 100.0 / (double)total : 0));
}

static json_t *func_side_json(const struct pl_diff *d, const struct pl_diff_func *f, int s)
{
	return json_pack("{s:o,s:o,s:o}",
		"hotspot_id", f->func[s] == PL_NOID ? json_null() : json_sprintf("fn%u", f->func[s]),
		"self", amount_json(&f->w[s].self, d->total[s].period),
		"inclusive", amount_json(&f->w[s].incl, d->total[s].period));
}

static json_t *func_json(const struct pl_diff *d, size_t i, size_t rank)
{
	const struct pl_diff_func *f = &d->funcs[i];

	return json_pack("{s:I,s:s,s:s,s:o,s:o,s:o,s:f,s:f}", "rank", (json_int_t)rank,
		"status", pl_diff_status_name(f->status), "symbol", f->symbol,
		"dso", f->dso ? json_string(f->dso) : json_null(),
		"baseline", func_side_json(d, f, 0), "candidate", func_side_json(d, f, 1),
		"self_delta_points", round4(f->self_delta),
		"inclusive_delta_points", round4(f->incl_delta));
}

/* A path's folded names, root (the process name) first; deeper than
 * max_frames keeps both ends and counts what was left out. */
static json_t *path_json(const struct pl_diff *d, uint32_t id, size_t rank,
			 uint32_t max_frames)
{
	const struct pl_diff_path *p = &d->paths[id];
	const struct pl_strtab *names = &d->folded.names;
	uint32_t depth = d->folded.lines.lens[id] / sizeof(uint32_t), head = depth, tail = 0;
	const uint32_t *seq = (const uint32_t *)d->folded.lines.strs[id];
	json_t *frames = json_array();

	if (depth > max_frames) {
		head = max_frames / 2;
		tail = max_frames - head;
	}
	/* Folded names are bytes (fold.h): escaped here, as in every result. */
	for (uint32_t k = 0; k < head; k++)
		json_array_append_new(frames, pl_json_bytesn(names->strs[seq[k]], names->lens[seq[k]]));
	for (uint32_t k = depth - tail; k < depth && tail; k++)
		json_array_append_new(frames, pl_json_bytesn(names->strs[seq[k]], names->lens[seq[k]]));
	return json_pack("{s:I,s:s,s:I,s:I,s:o,s:{s:I,s:f},s:{s:I,s:f},s:f}",
		"rank", (json_int_t)rank, "status", pl_diff_status_name(p->status),
		"depth", (json_int_t)depth, "elided_frames", (json_int_t)(depth - head - tail),
		"frames", frames,
		"baseline", "weight", (json_int_t)p->count[0], "percent", round4(p->pct[0]),
		"candidate", "weight", (json_int_t)p->count[1], "percent", round4(p->pct[1]),
		"delta_points", round4(p->delta));
}

static json_t *share_change_json(const struct pl_diff *d, const struct pl_amount *a)
{
	double b = d->total[0].period ? 100.0 * (double)a[0].period / (double)d->total[0].period : 0;
	double c = d->total[1].period ? 100.0 * (double)a[1].period / (double)d->total[1].period : 0;

	return json_pack("{s:f,s:f,s:f}", "baseline_percent", round4(b),
			 "candidate_percent", round4(c), "delta_points", round4(c - b));
}

static json_t *side_json(const struct pl_diff *d, int s, const char *id)
{
	const struct pl_profile *p = d->p[s];

	return json_pack("{s:s,s:s,s:s,s:I,s:I,s:I}", "analysis_id", id,
		"event", pl_str(p, p->events[d->event[s]].name),
		"unit", pl_event_unit(p, d->event[s]),
		"samples", (json_int_t)d->total[s].samples, "period", (json_int_t)d->total[s].period,
		"unique_stacks", (json_int_t)d->unique_stacks[s]);
}

static json_t *status_counts_json(const struct pl_diff *d)
{
	size_t n[4] = {0};

	for (size_t i = 0; i < d->nfuncs; i++)
		n[d->funcs[i].status]++;
	return json_pack("{s:I,s:I,s:I,s:I}", "added", (json_int_t)n[PL_DIFF_ADDED],
			 "removed", (json_int_t)n[PL_DIFF_REMOVED], "changed", (json_int_t)n[PL_DIFF_CHANGED],
			 "unchanged", (json_int_t)n[PL_DIFF_UNCHANGED]);
}

/* ----------------------------------------------------------- pages */

/* The two lists a comparison pages, each with its own cursor: functions
 * (cursor) and call paths (path_cursor). */
struct pages {
	struct pl_buf fquery, pquery;
	struct tool_page f, p;
	size_t *forder;
	uint32_t *porder;
};

static enum pl_err pages_open(struct pages *pg, const struct compare_args *a, const struct pl_diff *d,
			      const char *event, const struct tool_view *view, const struct tool_view *cview,
			      struct pl_error *err)
{
	size_t nf = pl_diff_func_order(d, strcmp(a->sort, "inclusive") == 0, a->min_delta, &pg->forder);
	size_t np = pl_diff_path_order(d, a->min_delta, &pg->porder);
	enum pl_err rc;

	pl_buf_addf(&pg->fquery, "f|%s|%s|%s|%s|%g", a->base_id, a->cand_id, event, a->sort, a->min_delta);
	pl_buf_addf(&pg->pquery, "p|%s|%s|%s|%g|%u", a->base_id, a->cand_id, event, a->min_delta,
		    a->max_frames);
	tool_view_query(view, &pg->fquery);
	tool_view_query(view, &pg->pquery);
	if (a->cand_view_args) {
		pl_buf_addf(&pg->fquery, "|candidate");
		pl_buf_addf(&pg->pquery, "|candidate");
		tool_view_query(cview, &pg->fquery);
		tool_view_query(cview, &pg->pquery);
	}
	if ((rc = tool_page_open(&pg->f, pg->fquery.data, a->cursor, a->offset, a->limit, err)) ||
	    (rc = tool_page_open(&pg->p, pg->pquery.data, a->path_cursor, 0, a->path_limit, err)))
		return rc;
	pg->p.cursor_key = "path_cursor";
	tool_page_bound(&pg->f, nf);
	tool_page_bound(&pg->p, np);
	return PL_OK;
}

static void pages_release(struct pages *pg)
{
	pl_buf_release(&pg->fquery);
	pl_buf_release(&pg->pquery);
	free(pg->forder);
	free(pg->porder);
}

/* The next call of one list: the same comparison, without exports, the
 * other list's cursor dropped. */
static json_t *page_json(const struct tool_page *pg, json_t *args, const char *event,
			 const char *other_cursor)
{
	return tool_page_json(pg, tool_page_call(pg, "compare_profiles", args,
		json_pack("{s:s,s:b,s:n}", "event", event, "exports", false, other_cursor)));
}

/* ------------------------------------------------------------ exports */

/* A file-name-safe copy of an event name ("cpu_core/cycles/" has '/'). */
static void safe_name(char *out, size_t cap, const char *s)
{
	size_t i = 0;

	for (; *s && i + 1 < cap; s++)
		out[i++] = (*s == '/' || *s == ' ' || *s == ':') ? '_' : *s;
	out[i] = '\0';
}

/* One export file, written atomically; run in its own thread. */
struct write_job {
	const struct pl_diff *d;
	struct pl_buf path;
	bool svg, normalize;
	struct pl_svg_opts so;
	long bytes;
	enum pl_err rc;
	struct pl_error err;
};

static void *write_main(void *arg)
{
	struct write_job *j = arg;
	struct pl_atomic_file af;

	if ((j->rc = pl_atomic_open(&af, j->path.data, &j->err)))
		return NULL;
	j->rc = j->svg ? pl_diff_write_flamegraph(af.fp, j->d, j->normalize, &j->so, &j->err)
		       : pl_diff_write_folded(af.fp, j->d, j->normalize, &j->err);
	if (j->rc) {
		pl_atomic_abort(&af);
		return NULL;
	}
	fflush(af.fp);
	j->bytes = ftell(af.fp);
	j->rc = pl_atomic_commit(&af, &j->err);
	return NULL;
}

static json_t *export_json(const char *root, const char *path, long bytes)
{
	return json_pack("{s:o,s:s+,s:I}", "path", pl_json_bytes(path),
			 "uri", "perflens://artifacts/", path + strlen(root) + 1,
			 "bytes", (json_int_t)bytes);
}

static enum pl_err write_exports(const struct tool_ctx *ctx, const struct compare_args *a,
				 const struct pl_diff *d, const char *event, const char *unit,
				 const struct tool_view *view, const struct tool_view *cview, json_t **out,
				 struct pl_error *err)
{
	struct write_job jobs[2];
	struct pl_buf subtitle = {0};
	char ev_safe[128];
	enum pl_err rc = PL_OK;

	memset(jobs, 0, sizeof(jobs));
	safe_name(ev_safe, sizeof(ev_safe), event);
	pl_buf_addf(&subtitle, "event %s (%s): widths from the candidate; red grew, blue shrank%s",
		    event, unit, a->normalize ? " (baseline normalized)" : "");
	for (int i = 0; i < 2; i++) {
		jobs[i].d = d;
		jobs[i].svg = i == 1;
		jobs[i].normalize = a->normalize;
		pl_buf_addf(&jobs[i].path, "%s/exports/%s_vs_%s.%s%s", ctx->artifact_root,
			    a->base_id, a->cand_id, ev_safe, a->normalize ? ".n" : "");
		tool_view_file_suffix(view, &jobs[i].path);
		if (a->cand_view_args) {
			pl_buf_addf(&jobs[i].path, ".candidate");
			tool_view_file_suffix(cview, &jobs[i].path);
		}
		pl_buf_addf(&jobs[i].path, ".diff.%s", jobs[i].svg ? "svg" : "folded");
	}
	jobs[1].so.title = a->title ? a->title : "Differential Flame Graph";
	jobs[1].so.subtitle = subtitle.data;
	jobs[1].so.unit = unit;
	pl_diff_run_pair(write_main, &jobs[0], &jobs[1]);
	for (int i = 0; i < 2 && !rc; i++)
		if ((rc = jobs[i].rc))
			*err = jobs[i].err;
	if (!rc) {
		json_t *folded = export_json(ctx->artifact_root, jobs[0].path.data, jobs[0].bytes);
		json_object_set_new(folded, "lines", json_integer((json_int_t)d->npaths));
		*out = json_pack("{s:o,s:o,s:b}", "folded_diff", folded,
				 "svg", export_json(ctx->artifact_root, jobs[1].path.data, jobs[1].bytes),
				 "normalized", a->normalize);
	}
	pl_buf_release(&jobs[0].path);
	pl_buf_release(&jobs[1].path);
	pl_buf_release(&subtitle);
	return rc;
}

/* The function that moved most, on the side that has it, seen through
 * that side's view (one analysis under two views: which side matters). */
static json_t *next_steps_json(const struct compare_args *a, const struct pl_diff *d,
			       const size_t *forder, size_t nf, const struct tool_view *views[2])
{
	json_t *steps = json_array();

	if (nf) {
		const struct pl_diff_func *f = &d->funcs[forder[0]];
		int s = f->func[1] != PL_NOID ? 1 : 0;
		const char *aid = s ? a->cand_id : a->base_id;
		const char *event = pl_str(d->p[s], d->p[s]->events[d->event[s]].name);
		json_array_append_new(steps, tool_next_step("get_hotspot",
			json_pack("{s:s,s:o,s:s}", "analysis_id", aid, "hotspot_id", json_sprintf("fn%u", f->func[s]),
				  "event", event),
			"who calls the function that moved most and what it calls; a share that grew may cost the "
			"same time while others shrank: confirm a speed change with timed runs "
			"(normalize_benchmark, compare_benchmarks), not with a profile delta"));
		json_array_append_new(steps, tool_next_step("get_call_paths",
			json_pack("{s:s,s:s,s:s}", "analysis_id", aid, "event", event, "symbol", f->symbol),
			"its whole call paths"));
		tool_view_steps(views[s], steps, aid);
	}
	return steps;
}

/* ---------------------------------------------------------------- tool */

struct load_job {
	const char *root, *id;
	struct pl_profile *p;
	enum pl_err rc;
	struct pl_error err;
};

static void *load_main(void *arg)
{
	struct load_job *j = arg;

	j->rc = pl_artifact_load_profile(j->root, j->id, j->p, &j->err);
	return NULL;
}

/* Load both analyses (one when they are the same and seen through one
 * view); *cand is &cp or bp. */
static enum pl_err load_both(const struct tool_ctx *ctx, const struct compare_args *a,
			     struct pl_profile *bp, struct pl_profile *cp,
			     const struct pl_profile **cand, struct pl_error *err)
{
	struct load_job jobs[2] = {{ctx->artifact_root, a->base_id, bp, PL_OK, {0}},
				   {ctx->artifact_root, a->cand_id, cp, PL_OK, {0}}};

	if (strcmp(a->base_id, a->cand_id) == 0 && !a->cand_view_args) {
		load_main(&jobs[0]);
		*cand = bp;
	} else {
		pl_diff_run_pair(load_main, &jobs[0], &jobs[1]);
		*cand = cp;
	}
	for (int i = 0; i < 2; i++)
		if (jobs[i].rc) {
			*err = jobs[i].err;
			return jobs[i].rc;
		}
	return PL_OK;
}

static json_t *result_json(json_t *args, const struct compare_args *a, const struct pl_diff *d,
			   const struct pages *pg, const char *event, const char *unit, json_t *exports,
			   const struct tool_view *views[2])
{
	json_t *funcs = json_array(), *paths = json_array();

	for (size_t i = pg->f.start; i < pg->f.end; i++)
		json_array_append_new(funcs, func_json(d, pg->forder[i], i + 1));
	for (size_t i = pg->p.start; i < pg->p.end; i++)
		json_array_append_new(paths, path_json(d, pg->porder[i], i + 1, a->max_frames));
	return json_pack("{s:o,s:o,s:{s:b,s:s,s:s,s:o},s:{s:o,s:o},s:s,s:f,s:I,s:o,s:o,s:o,s:I,s:o,s:o,s:O,s:o}",
		"baseline", side_json(d, 0, a->base_id), "candidate", side_json(d, 1, a->cand_id),
		"comparability", "comparable", 1, "event", event, "unit", unit,
		"warnings", warnings_json(a, d, event),
		"unknown_share", "leaf", share_change_json(d, d->unknown_self),
		"any_frame", share_change_json(d, d->unknown_any),
		"sort", a->sort, "min_delta_percent", a->min_delta,
		"functions_compared", (json_int_t)d->nfuncs, "status_counts", status_counts_json(d),
		"functions", funcs, "page", page_json(&pg->f, args, event, "path_cursor"),
		"call_paths_compared", (json_int_t)d->npaths, "call_paths", paths,
		"call_paths_page", page_json(&pg->p, args, event, "cursor"),
		"exports", exports, "next_steps", next_steps_json(a, d, pg->forder, pg->f.total, views));
}

/* The view on each side, the candidate's own copy only when it is another
 * analysis (cp NULL: the same profile, viewed once). */
static enum pl_err view_sides(struct tool_view *bv, struct pl_profile *bp, uint32_t be, struct tool_view *cv,
			      struct pl_profile *cp, uint32_t ce, struct pl_error *err)
{
	enum pl_err rc;

	if ((rc = tool_view_apply(bv, bp, be, err)))
		return rc;
	if (cp && (rc = tool_view_apply(cv, cp, ce, err)))
		snprintf(err->text + strlen(err->text), sizeof(err->text) - strlen(err->text), " (candidate)");
	return rc;
}

/* candidate_view read as a view; its errors say so. */
static enum pl_err candidate_view_init(struct tool_view *cv, json_t *cargs, struct pl_error *err)
{
	enum pl_err rc;

	tool_view_release(cv);
	if ((rc = tool_view_init(cv, cargs, false, err)))
		snprintf(err->text + strlen(err->text), sizeof(err->text) - strlen(err->text), " (candidate_view)");
	return rc;
}

enum pl_err tool_compare_profiles(const struct tool_ctx *ctx, json_t *args,
				  json_t **result, struct pl_error *err)
{
	struct compare_args a;
	struct pl_profile bp, cp;
	const struct pl_profile *cand = &cp;
	struct pl_diff d = {0};
	struct pl_fold_opts fo = {0};
	struct pages pg = {0};
	uint32_t be = 0, ce = 0;
	const char *event, *unit;
	json_t *exports = json_null();
	struct tool_view bv, cv;
	enum pl_err rc;

	if ((rc = read_args(args, &a, err)))
		return rc;
	if (a.exports && (rc = tool_require_writes(ctx, err))) {
		snprintf(err->hint, sizeof(err->hint), "%s",
			 "restart the server with --allow-writes and --artifact-root DIR, or pass exports=false for the comparison alone");
		json_decref(a.cand_view_args);
		return rc;
	}
	pl_profile_init(&bp, &ctx->limits);
	pl_profile_init(&cp, &ctx->limits);
	tool_view_init(&cv, a.cand_view_args ? a.cand_view_args : args, false, err);
	if ((rc = tool_view_init(&bv, args, false, err)) ||
	    (a.cand_view_args && (rc = candidate_view_init(&cv, a.cand_view_args, err))) ||
	    (tool_view_prepare(&bv, &bp), tool_view_prepare(&cv, &cp), false) ||
	    (rc = load_both(ctx, &a, &bp, &cp, &cand, err)) ||
	    (rc = pick_side(&bp, a.event, "baseline", a.base_id, &be, err)) ||
	    (rc = pick_side(cand, a.event, "candidate", a.cand_id, &ce, err)) ||
	    (rc = view_sides(&bv, &bp, be, &cv, cand == &bp ? NULL : &cp, ce, err)) ||
	    (rc = check_comparable(&bp, be, cand, ce, err)) ||
	    (rc = pl_diff_build(&d, &bp, be, cand, ce, &fo, err)))
		goto out;
	event = pl_str(&bp, bp.events[be].name);
	unit = pl_event_unit(&bp, be);
	if ((rc = pages_open(&pg, &a, &d, event, &bv, &cv, err)) ||
	    (a.exports && (rc = write_exports(ctx, &a, &d, event, unit, &bv, &cv, &exports, err))))
		goto out;
	*result = result_json(args, &a, &d, &pg, event, unit, exports,
			      (const struct tool_view *[2]){&bv, a.cand_view_args ? &cv : &bv});
	tool_view_describe(&bv, *result);
	if (cv.active)
		json_object_set_new(*result, "candidate_view", tool_view_json(cand == &bp ? &bv : &cv));
out:
	json_decref(a.cand_view_args);
	tool_view_release(&bv);
	tool_view_release(&cv);
	json_decref(exports);
	pages_release(&pg);
	pl_diff_release(&d);
	pl_profile_release(&bp);
	pl_profile_release(&cp);
	return rc;
}
