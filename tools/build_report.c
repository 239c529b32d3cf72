/* build_report.c - the build_report tool: a Markdown evidence report of an
 * analysis, written atomically under the artifact root as
 * exports/ID.report.HASH.md (HASH of the problem, metric and event, so the
 * same request rewrites the same bytes and different requests never
 * overwrite each other).  The report itself is evidence/report.  Other
 * analyses of the same run (with_analysis_ids: off-CPU, perf stat...) are
 * reported with the first, each event under its own analysis.  A view
 * (view.h) applies to the first analysis' event; the report names it.
 */
#include "registry.h"
#include "tools/lib/view.h"
#include "base/fsatomic.h"
#include "store/artifact.h"
#include "evidence/classify.h"
#include "evidence/experiments.h"
#include "evidence/report.h"

#include <inttypes.h>
#include <string.h>

/* ARTIFACT_ROOT/exports/ID.report.HASH.md into `path`. */
static void report_path(struct pl_buf *path, const char *root, const struct pl_report_in *in,
			const char *event_name, const struct tool_view *view)
{
	struct pl_buf key = {0};

	pl_buf_add(&key, in->problem, strlen(in->problem) + 1);
	pl_buf_add(&key, in->metric, strlen(in->metric) + 1);
	pl_buf_adds(&key, event_name ? event_name : "");
	for (size_t i = 0; i < in->nmore; i++) {
		pl_buf_addc(&key, '\0');
		pl_buf_adds(&key, in->more[i].analysis_id);
	}
	if (view->active) {
		pl_buf_adds(&key, "\nview=");
		pl_buf_adds(&key, view->key);
	}
	pl_buf_addf(path, "%s/exports/%s.report.%016" PRIx64 ".md", root, in->analysis_id,
		    pl_hash(key.data, key.len, 0x5e9047));
	pl_buf_release(&key);
}

static json_t *result_json(const struct pl_report_in *in, const char *path, const char *root,
			   size_t bytes, json_t *summary_new)
{
	const char *rel = path + strlen(root) + 1;
	json_t *heads = json_array();

	for (size_t i = 0; i < PL_REPORT_NSECTIONS; i++)
		json_array_append_new(heads, json_string(pl_report_sections[i]));
	return json_pack("{s:s,s:o,s:o,s:I,s:i,s:o,s:o,s:[o]}",
		"analysis_id", in->analysis_id, "path", pl_json_bytes(path),
		"uri", json_sprintf("perflens://artifacts/%s", rel),
		"bytes", (json_int_t)bytes, "rules_version", pl_rules_version(in->rules),
		"sections", heads, "summary", summary_new,
		"next_steps", tool_next_step("read_artifact_page",
			json_pack("{s:o}", "artifact", json_sprintf("perflens://artifacts/%s", rel)),
			"read the report; then follow each candidate's next steps and run its A/B validation plan"));
}

/* The other analyses named in `ids` into parts[] over profs[] (each
 * profile initialised here; *n of them to release). */
static enum pl_err load_more(const struct tool_ctx *ctx, json_t *ids, const char *main_id,
			     struct pl_profile *profs, struct pl_report_part *parts, size_t *n,
			     struct pl_error *err)
{
	json_t *v;
	size_t i;
	enum pl_err rc;

	*n = 0;
	json_array_foreach(ids, i, v) {
		const char *id = json_string_value(v);
		for (size_t k = 0; k <= i; k++)
			if (strcmp(id, k < i ? parts[k].analysis_id : main_id) == 0)
				return pl_fail(err, PL_ERR_USAGE, "name each other analysis once, and not analysis_id itself",
					       "analysis '%s' is given twice", id);
		pl_profile_init(&profs[i], &ctx->limits);
		parts[i] = (struct pl_report_part){id, &profs[i], NULL, pl_experiments_of(ctx->artifact_root, id)};
		(*n)++;
		if ((rc = pl_artifact_load_summary(ctx->artifact_root, id, &parts[i].summary, err)) ||
		    (rc = pl_artifact_load_profile(ctx->artifact_root, id, &profs[i], err)))
			return rc;
	}
	return PL_OK;
}

/* The view on the first analysis' event, named for the report. */
static enum pl_err apply_view(struct tool_view *view, struct pl_profile *p, struct pl_report_in *in,
			      struct pl_error *err)
{
	json_t *kept;
	enum pl_err rc;

	if (!view->active)
		return PL_OK;
	if ((rc = tool_view_apply(view, p, in->only_event, err)))
		return rc;
	kept = tool_view_json(view);
	in->view_key = view->key;
	in->view_samples_percent = json_number_value(json_object_get(kept, "percent_of_samples"));
	in->view_period_percent = json_number_value(json_object_get(kept, "percent_of_period"));
	json_decref(kept);
	return PL_OK;
}

/* Everything the report reads: the rules, the other analyses, the
 * analysis' summary and profile (want_timed: the thread gates' share of
 * one CPU, classify.c), the event, and the view. */
static enum pl_err report_load(const struct tool_ctx *ctx, json_t *ids, const char *event_name,
			       struct tool_view *view, struct pl_profile *p, struct pl_profile *more_p,
			       struct pl_report_part *more, struct pl_report_in *in, struct pl_error *err)
{
	enum pl_err rc;

	if (json_array_size(ids) > PL_REPORT_MORE_MAX)
		return pl_fail(err, PL_ERR_USAGE, "report at most 7 other analyses with one",
			       "with_analysis_ids names %zu analyses", json_array_size(ids));
	if ((rc = tool_require_writes(ctx, err)) || (rc = pl_rules_builtin(&in->rules, err)) ||
	    (rc = load_more(ctx, ids, in->analysis_id, more_p, more, &in->nmore, err)) ||
	    (rc = pl_artifact_load_summary(ctx->artifact_root, in->analysis_id, &in->summary, err)))
		return rc;
	tool_view_prepare(view, p);
	p->want_timed = true;
	if ((rc = pl_artifact_load_profile(ctx->artifact_root, in->analysis_id, p, err)) ||
	    ((event_name || view->active) && (rc = tool_pick_event(p, event_name, false, &in->only_event, err))))
		return rc;
	return apply_view(view, p, in, err);
}

static void report_in_release(struct pl_report_in *in, struct pl_report_part *more, struct pl_profile *more_p)
{
	for (size_t i = 0; i < in->nmore; i++) {
		json_decref(more[i].summary);
		json_decref(more[i].experiments);
		pl_profile_release(&more_p[i]);
	}
	json_decref(in->summary);
	json_decref(in->experiments);
}

enum pl_err tool_build_report(const struct tool_ctx *ctx, json_t *args,
			      json_t **result, struct pl_error *err)
{
	const char *event_name = json_string_value(json_object_get(args, "event"));
	struct pl_report_in in = {
		.analysis_id = json_string_value(json_object_get(args, "analysis_id")),
		.problem = json_string_value(json_object_get(args, "problem")),
		.metric = json_string_value(json_object_get(args, "metric")),
		.only_event = PL_NOID,
	};
	struct pl_profile p, more_p[PL_REPORT_MORE_MAX];
	struct pl_report_part more[PL_REPORT_MORE_MAX];
	struct pl_buf path = {0}, md = {0};
	json_t *summary = NULL, *ids = json_object_get(args, "with_analysis_ids");
	struct tool_view view;
	enum pl_err rc;

	in.p = &p;
	in.more = more;
	in.experiments = pl_experiments_of(ctx->artifact_root, in.analysis_id);
	pl_profile_init(&p, &ctx->limits);
	if ((rc = tool_view_init(&view, args, false, err)))
		goto out;
	if ((rc = report_load(ctx, ids, event_name, &view, &p, more_p, more, &in, err)) ||
	    (rc = pl_report_build(&in, &md, &summary, err)))
		goto out;
	report_path(&path, ctx->artifact_root, &in, event_name, &view);
	if ((rc = pl_write_file_atomic(path.data, md.data, md.len, err)))
		goto out;
	*result = result_json(&in, path.data, ctx->artifact_root, md.len, summary);
	if (in.nmore)
		json_object_set(*result, "with_analysis_ids", ids);
	tool_view_describe(&view, *result);
	summary = NULL;
out:
	tool_view_release(&view);
	report_in_release(&in, more, more_p);
	json_decref(summary);
	pl_buf_release(&md);
	pl_buf_release(&path);
	pl_profile_release(&p);
	return rc;
}
