/* classify_hotspots.c - the classify_hotspots tool: one page of the
 * candidates the versioned rules (schemas/rules/classify-rules.json, see
 * tools/core/classify.h) find in an analysis, each event on its own.
 *
 * The whole profile is rebuilt from the stack table (the rules need every
 * stack), every event (or the one asked for) is classified, and the
 * candidates are paged in a fixed order: event order, then data-quality
 * rules, then the largest figure first.  Rules that stayed quiet are listed
 * with their reason, so "not found" and "could not be looked for" differ.
 */
#include "registry.h"
#include "profile/aggregate.h"
#include "store/artifact.h"
#include "evidence/classify.h"

#include <string.h>

#define QUIET_MAX 256

/* Classify the events of `p` (only `event` when it is not PL_NOID);
 * returns a new array of pl_classify_event objects. */
static json_t *classify_all(const struct pl_rules *r, const struct pl_profile *p,
			    const char *id, uint32_t event)
{
	struct pl_classifier c;
	json_t *events = json_array();

	pl_classifier_init(&c, r, p, id);
	for (uint32_t e = 0; e < p->nevents; e++) {
		struct pl_view v;
		if (event != PL_NOID && e != event)
			continue;
		pl_view_build(&v, p, e);
		json_array_append_new(events, pl_classify_event(&c, &v));
		pl_view_release(&v);
	}
	pl_classifier_release(&c);
	return events;
}

enum pl_err tool_classify_hotspots(const struct tool_ctx *ctx, json_t *args,
				   json_t **result, struct pl_error *err)
{
	const char *id = json_string_value(json_object_get(args, "analysis_id"));
	const char *event_name = json_string_value(json_object_get(args, "event"));
	const char *cursor = json_string_value(json_object_get(args, "cursor"));
	size_t limit = (size_t)json_integer_value(json_object_get(args, "limit"));
	size_t offset = 0, end, i, k;
	const struct pl_rules *rules;
	struct pl_profile p;
	struct pl_buf query = {0};
	uint32_t event = PL_NOID;
	json_t *events, *ev, *all = json_array(), *quiet = json_array(), *quality = json_array(), *page;
	size_t quiet_total = 0;
	char next[64], call[512];
	enum pl_err rc;

	pl_profile_init(&p, &ctx->limits);
	if ((rc = pl_rules_builtin(&rules, err)) ||
	    (rc = pl_artifact_load_profile(ctx->artifact_root, id, &p, err)) ||
	    (event_name && (rc = tool_pick_event(&p, event_name, false, &event, err))))
		goto out;
	if (p.nevents == 0) {
		rc = pl_fail(err, PL_ERR_MALFORMED, "check that the input holds samples",
			     "the analysis holds no samples");
		goto out;
	}
	events = classify_all(rules, &p, id, event);
	json_array_foreach(events, i, ev) {
		json_t *x;
		json_array_extend(all, json_object_get(ev, "candidates"));
		json_array_foreach(json_object_get(ev, "quiet"), k, x) {
			if (quiet_total++ < QUIET_MAX) {
				json_object_set(x, "event", json_object_get(ev, "event"));
				json_array_append(quiet, x);
			}
		}
		json_array_append_new(quality, json_pack("{s:O,s:O}", "event", json_object_get(ev, "event"),
							 "unit", json_object_get(ev, "unit")));
		json_object_update(json_array_get(quality, i), json_object_get(ev, "quality"));
	}
	json_decref(events);
	pl_buf_addf(&query, "%s|%s|%d", id, event_name ? event_name : "", pl_rules_version(rules));
	if (cursor && (rc = tool_cursor_parse(cursor, query.data, &offset, err)))
		goto out;
	if (offset > json_array_size(all))
		offset = json_array_size(all);
	end = offset + limit < json_array_size(all) ? offset + limit : json_array_size(all);
	page = json_array();
	for (i = offset; i < end; i++)
		json_array_append(page, json_array_get(all, i));
	tool_cursor_make(next, sizeof(next), end, query.data);
	snprintf(call, sizeof(call), "classify_hotspots(analysis_id=\"%s\"%s%s%s, cursor=\"%s\")", id,
		 event_name ? ", event=\"" : "", event_name ? event_name : "", event_name ? "\"" : "", next);
	*result = json_pack("{s:s,s:{s:i,s:s,s:I},s:s,s:o,s:o,s:o,s:I,s:O,s:o}",
		"analysis_id", id,
		"rules", "version", pl_rules_version(rules), "source", PL_RULES_PATH,
		"count", (json_int_t)pl_rules_count(rules),
		"note", "Every item is a candidate to test, not a finding: confirm one only with an A/B measurement of the metric that matters.",
		"events", quality, "candidates", page, "quiet", quiet, "quiet_total", (json_int_t)quiet_total,
		"forbidden_conclusions", pl_rules_forbidden(rules),
		"page", tool_page_new(offset, end, json_array_size(all), next, json_string(call)));
	quality = quiet = NULL;
out:
	json_decref(all);
	json_decref(quiet);
	json_decref(quality);
	pl_buf_release(&query);
	pl_profile_release(&p);
	return rc;
}
