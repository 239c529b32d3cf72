/* classify_hotspots.c - the classify_hotspots tool: one page of the
 * candidates the versioned rules (schemas/rules/classify-rules.json, see
 * evidence/classify.h) find in an analysis, each event on its own.
 *
 * The whole profile is rebuilt from the stack table (the rules need every
 * stack), every event (or the one asked for) is classified, and the
 * candidates are paged in a fixed order: event order, then data-quality
 * rules, then the largest figure first.  Rules that stayed quiet are listed
 * with their reason on the first page, so "not found" and "could not be
 * looked for" differ.
 *
 * A page is sized for an agent's context (a few KB for a typical
 * profile): the engine's candidates are reshaped here so that nothing is
 * said twice.  Sentences the page repeats (missing evidence, quiet
 * reasons) go once in texts, which candidates and quiet rules name by
 * key; a candidate lists its PAGE_HOTSPOTS heaviest matched hotspots as
 * percentages and its evidence level (events[] holds the facts behind
 * it).  The rest is one call away: candidate_id=... gives one candidate
 * with every matched hotspot (up to PL_CLASSIFY_TOP) and its rule's
 * description, experiment and forbidden conclusions (rule_texts).  A
 * view (view.h) classifies what it keeps of one event, and tid or comm
 * (at the top, as list_hotspots takes them, or in the view) one thread's
 * stacks alone: figures are shares of those threads' weight, and the next
 * steps on this analysis keep the view, so a writer thread's fsync waits
 * are not averaged with its workers' CPU.
 */
#include "registry.h"
#include "tools/lib/view.h"
#include "evidence/experiments.h"
#include "profile/aggregate.h"
#include "store/artifact.h"
#include "evidence/classify.h"

#include <string.h>

#define QUIET_MAX 256
#define PAGE_HOTSPOTS 2          /* matched hotspots per candidate on a page */

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

/* ------------------------------------------------------- shared texts */

/* The key of `text` (borrowed) in `texts`, added as "tN" when new: a new
 * string. */
static json_t *text_ref(json_t *texts, json_t *text)
{
	const char *key;
	json_t *v;
	char name[24];

	json_object_foreach(texts, key, v)
		if (json_equal(v, text))
			return json_string(key);
	snprintf(name, sizeof(name), "t%zu", json_object_size(texts) + 1);
	json_object_set(texts, name, text);
	return json_string(name);
}

/* The keys of an array of texts (borrowed): a new array. */
static json_t *text_refs(json_t *texts, json_t *list)
{
	json_t *out = json_array(), *t;
	size_t i;

	json_array_foreach(list, i, t)
		json_array_append_new(out, text_ref(texts, t));
	return out;
}

/* A rule's own texts, once per page under its id. */
static void note_rule(json_t *rule_texts, json_t *cand)
{
	json_t *rule = json_object_get(cand, "rule");
	const char *id = json_string_value(json_object_get(rule, "id"));

	if (json_object_get(rule_texts, id))
		return;
	json_object_set_new(rule_texts, id, json_pack("{s:O,s:O,s:O,s:O}",
		"label", json_object_get(rule, "label"),
		"description", json_object_get(rule, "description"),
		"experiment", json_object_get(cand, "experiment"),
		"forbidden_conclusions", json_object_get(cand, "forbidden_conclusions")));
}

/* ----------------------------------------------------- candidate shape */

static json_t *percent_of(json_t *hotspot, const char *amount)
{
	return json_object_get(json_object_get(hotspot, amount), "percent");
}

/* A matched hotspot as shares of the event, with the matched samples. */
static json_t *hotspot_brief(json_t *h)
{
	return json_pack("{s:O,s:O,s:O,s:O,s:O,s:O,s:O,s:O}",
		"hotspot_id", json_object_get(h, "hotspot_id"), "symbol", json_object_get(h, "symbol"),
		"dso", json_object_get(h, "dso"), "kind", json_object_get(h, "kind"),
		"self_percent", percent_of(h, "self"), "inclusive_percent", percent_of(h, "inclusive"),
		"matched_percent", percent_of(h, "matched"),
		"matched_samples", json_object_get(json_object_get(h, "matched"), "samples"));
}

/* A next step as a tool call: {"tool", "arguments", "why"}; a step the
 * rules give as a command keeps {"command", "why"}. */
static json_t *step_brief(json_t *s)
{
	json_t *tool = json_object_get(s, "tool");

	if (!tool)
		return json_pack("{s:O,s:O}", "command", json_object_get(s, "command"),
				 "why", json_object_get(s, "why"));
	return json_pack("{s:O,s:O,s:O}", "tool", tool, "arguments", json_object_get(s, "arguments"),
			 "why", json_object_get(s, "why"));
}

static json_t *map_array(json_t *list, size_t max, json_t *(*fn)(json_t *))
{
	json_t *out = json_array(), *x;
	size_t i;

	json_array_foreach(list, i, x) {
		if (i >= max)
			break;
		json_array_append_new(out, fn(x));
	}
	return out;
}

/* The program's own function nearest above a library or kernel
 * candidate's frames: what to change (shares of the event and of the
 * candidate's stacks). */
static json_t *own_brief(json_t *o)
{
	return json_pack("{s:O,s:O,s:O,s:O}", "hotspot_id", json_object_get(o, "hotspot_id"),
			 "symbol", json_object_get(o, "symbol"), "percent", json_object_get(o, "percent"),
			 "of_candidate_percent", json_object_get(o, "of_candidate_percent"));
}

/* The engine's candidate (borrowed) as a page shows it: the evidence
 * level only (events[] has the event's call-graph and source-line facts
 * it derives from), the rule's own texts in rule_texts when `detail`. */
static json_t *candidate_brief(json_t *c, bool detail, json_t *rule_texts, json_t *texts)
{
	json_t *rule = json_object_get(c, "rule");

	json_t *out;

	if (detail)
		note_rule(rule_texts, c);
	out = json_pack("{s:O,s:O,s:{s:O,s:O,s:O},s:O,s:O,s:O,s:o,s:O,s:O,s:o,s:o}",
		"candidate_id", json_object_get(c, "candidate_id"), "status", json_object_get(c, "status"),
		"rule", "id", json_object_get(rule, "id"), "label", json_object_get(rule, "label"),
		"group", json_object_get(rule, "group"),
		"event", json_object_get(c, "event"), "unit", json_object_get(c, "unit"),
		"figure", json_object_get(c, "figure"),
		"hotspots", map_array(json_object_get(c, "hotspots"), detail ? PL_CLASSIFY_TOP : PAGE_HOTSPOTS,
				      hotspot_brief),
		"hotspots_total", json_object_get(c, "hotspots_total"),
		"evidence", json_object_get(json_object_get(c, "evidence"), "level"),
		"missing_evidence", text_refs(texts, json_object_get(c, "missing_evidence")),
		"next_steps", map_array(json_object_get(c, "next_steps"), SIZE_MAX, step_brief));
	json_t *own = json_object_get(c, "own_callers");

	if (own)
		json_object_set_new(out, "own_callers", map_array(own, detail ? SIZE_MAX : 1, own_brief));
	/* busy_wait's threads that passed its gate; vm_irq_enable's
	 * interrupted paths: small, and the evidence the flag stands on */
	if (json_object_get(c, "threads"))
		json_object_set(out, "threads", json_object_get(c, "threads"));
	if (json_object_get(c, "interrupted"))
		json_object_set(out, "interrupted", json_object_get(c, "interrupted"));
	return out;
}

/* An event's quiet rules (borrowed) with their reasons named by key. */
static json_t *quiet_brief(json_t *group, json_t *texts)
{
	json_t *out = json_deep_copy(group), *na = json_object_get(out, "not_applicable"), *reason;
	const char *rule;

	json_object_foreach(na, rule, reason)
		json_object_set_new(na, rule, text_ref(texts, reason));
	return out;
}

/* What experiments said of the page's candidates (experiments.h): a
 * confirmed or refuted candidate says so, with the experiment and its
 * figure; an inconclusive one stays a candidate with the experiment
 * named.  A hotspot candidate without a decisive experiment proposes
 * one (run_experiment: the commands and the phrase are the agent's and
 * the user's to add, steps.c names them under needs). */
static void mark_experiments(const struct tool_ctx *ctx, const char *analysis_id, json_t *cands)
{
	json_t *done = pl_experiments_of(ctx->artifact_root, analysis_id), *c;
	size_t i;

	json_array_foreach(cands, i, c) {
		const char *cid = json_string_value(json_object_get(c, "candidate_id"));
		json_t *e = json_object_get(done, cid);
		const char *status = json_string_value(json_object_get(e, "status"));
		const char *group = json_string_value(json_object_get(json_object_get(c, "rule"), "group"));
		if (e) {
			json_object_set_new(c, "experiment", json_pack("{s:O,s:O,s:O,s:O}", "experiment_id",
				json_object_get(e, "experiment_id"), "status", json_object_get(e, "status"),
				"measure", json_object_get(e, "measure"), "figure", json_object_get(e, "figure")));
			if (status && strcmp(status, "inconclusive") != 0)
				json_object_set_new(c, "status", json_string(status));
		}
		if ((!status || strcmp(status, "inconclusive") == 0) && group && strcmp(group, "hotspot") == 0)
			json_array_append_new(json_object_get(c, "next_steps"), tool_next_step("run_experiment",
				json_pack("{s:s,s:s}", "analysis_id", analysis_id, "candidate_id", cid),
				"only an experiment confirms or refutes it: the program without the fix "
				"(baseline) against with it (candidate)"));
	}
	json_decref(done);
}

/* ------------------------------------------------------------ the page */

struct classified {
	json_t *all;         /* every candidate, in page order */
	json_t *quiet;       /* per event, the rules that did not fire (up to QUIET_MAX) */
	json_t *quality;     /* per event: samples, call graph, unknown shares */
	size_t quiet_total;
};

/* An event's quiet rules as {"event", "below_threshold": {rule: value},
 * "not_applicable": {rule: reason}}: a rule's operator and threshold
 * are in the rules document; counted in *total, kept up to QUIET_MAX. */
static json_t *quiet_group(json_t *ev, size_t *total)
{
	json_t *below = json_object(), *na = json_object(), *q;
	size_t k;

	json_array_foreach(json_object_get(ev, "quiet"), k, q) {
		const char *rule = json_string_value(json_object_get(q, "rule"));
		if ((*total)++ >= QUIET_MAX)
			continue;
		if (json_is_null(json_object_get(q, "value")))
			json_object_set(na, rule, json_object_get(q, "reason"));
		else
			json_object_set(below, rule, json_object_get(q, "value"));
	}
	return json_pack("{s:O,s:o,s:o}", "event", json_object_get(ev, "event"),
			 "below_threshold", below, "not_applicable", na);
}

static void collect_events(json_t *events, struct classified *cl)
{
	json_t *ev;
	size_t i;

	json_array_foreach(events, i, ev) {
		json_array_extend(cl->all, json_object_get(ev, "candidates"));
		json_array_append_new(cl->quiet, quiet_group(ev, &cl->quiet_total));
		json_array_append_new(cl->quality, json_pack("{s:O,s:O}", "event", json_object_get(ev, "event"),
							     "unit", json_object_get(ev, "unit")));
		json_object_update(json_array_get(cl->quality, i), json_object_get(ev, "quality"));
	}
}

/* The index of candidate `want` in `all`, or an error listing them. */
static enum pl_err find_candidate(json_t *all, const char *want, size_t *at, struct pl_error *err)
{
	struct pl_buf ids = {0};
	json_t *c;
	size_t i;

	json_array_foreach(all, i, c) {
		const char *id = json_string_value(json_object_get(c, "candidate_id"));
		if (strcmp(id, want) == 0) {
			pl_buf_release(&ids);
			*at = i;
			return PL_OK;
		}
		pl_buf_addf(&ids, "%s'%s'", i ? ", " : "", id);
	}
	pl_fail(err, PL_ERR_USAGE, "pass a candidate_id from a page of classify_hotspots",
		"no candidate '%s' in this analysis (candidates: %s)", want, ids.data ? ids.data : "none");
	pl_buf_release(&ids);
	return PL_ERR_USAGE;
}

/* Candidates [offset, end) of `cl`, reshaped, with their shared texts;
 * quiet rules only on the first page of the list.  Returns new values. */
static json_t *page_body(const struct classified *cl, size_t offset, size_t end, bool detail,
			 bool with_quiet)
{
	json_t *rule_texts = json_object(), *texts = json_object(), *cands = json_array();
	json_t *quiet = json_array(), *q;
	size_t i;

	for (i = offset; i < end; i++)
		json_array_append_new(cands, candidate_brief(json_array_get(cl->all, i), detail,
							     rule_texts, texts));
	if (with_quiet)
		json_array_foreach(cl->quiet, i, q)
			json_array_append_new(quiet, quiet_brief(q, texts));
	return json_pack("{s:o,s:o,s:o,s:o}", "candidates", cands, "rule_texts", rule_texts,
			 "texts", texts, "quiet", quiet);
}

/* Load, classify and gather every candidate of the analysis (what the
 * view keeps of it). */
static enum pl_err classify_analysis(const struct tool_ctx *ctx, const char *id, const char *event_name,
				     struct tool_view *view, const struct pl_rules *rules,
				     struct classified *cl, struct pl_error *err)
{
	struct pl_profile p;
	uint32_t event = PL_NOID;
	json_t *events;
	enum pl_err rc;

	pl_profile_init(&p, &ctx->limits);
	tool_view_prepare(view, &p);
	p.want_timed = true;  /* the thread gates' share of one CPU (classify.c) */
	if ((rc = pl_artifact_load_profile(ctx->artifact_root, id, &p, err)) ||
	    ((event_name || view->active) && (rc = tool_pick_event(&p, event_name, false, &event, err))) ||
	    (rc = tool_view_apply(view, &p, event, err)))
		goto out;
	if (p.nevents == 0) {
		rc = pl_fail(err, PL_ERR_MALFORMED, "check that the input holds samples",
			     "the analysis holds no samples");
		goto out;
	}
	events = classify_all(rules, &p, id, event);
	collect_events(events, cl);
	json_decref(events);
out:
	pl_profile_release(&p);
	return rc;
}

/* Which candidates this call shows: those of the page `pg`, or the one
 * named by candidate_id at *at (then the page is 0..1 of 1). */
static enum pl_err choose_page(json_t *args, const char *query, const struct classified *cl,
			       struct tool_page *pg, size_t *at, struct pl_error *err)
{
	const char *cursor = json_string_value(json_object_get(args, "cursor"));
	const char *want = json_string_value(json_object_get(args, "candidate_id"));
	size_t limit = (size_t)json_integer_value(json_object_get(args, "limit"));
	enum pl_err rc;

	if (want) {
		tool_page_open(pg, query, NULL, 0, 1, err);
		tool_page_bound(pg, 1);
		return find_candidate(cl->all, want, at, err);
	}
	if ((rc = tool_page_open(pg, query, cursor, 0, limit, err)))
		return rc;
	tool_page_bound(pg, json_array_size(cl->all));
	*at = pg->start;
	return PL_OK;
}

enum pl_err tool_classify_hotspots(const struct tool_ctx *ctx, json_t *args,
				   json_t **result, struct pl_error *err)
{
	const char *id = json_string_value(json_object_get(args, "analysis_id"));
	const char *event_name = json_string_value(json_object_get(args, "event"));
	bool one = json_object_get(args, "candidate_id") != NULL;
	struct classified cl = {json_array(), json_array(), json_array(), 0};
	const struct pl_rules *rules;
	struct pl_buf query = {0};
	struct tool_page pg;
	struct tool_view view;
	size_t at = 0;
	json_t *body;
	enum pl_err rc;

	if ((rc = tool_view_init(&view, args, true, err)) ||
	    (rc = pl_rules_builtin(&rules, err)) ||
	    (rc = classify_analysis(ctx, id, event_name, &view, rules, &cl, err)))
		goto out;
	pl_buf_addf(&query, "%s|%s|%d", id, event_name ? event_name : "", pl_rules_version(rules));
	tool_view_query(&view, &query);
	if ((rc = choose_page(args, query.data, &cl, &pg, &at, err)))
		goto out;
	body = page_body(&cl, at, at + (pg.end - pg.start), one, !one && at == 0);
	*result = json_pack("{s:s,s:{s:i,s:s,s:I},s:s,s:O,s:O,s:O,s:O,s:O,s:I,s:O,s:o}",
		"analysis_id", id,
		"rules", "version", pl_rules_version(rules), "source", PL_RULES_PATH,
		"count", (json_int_t)pl_rules_count(rules),
		"note", "Every item is a candidate to test, not a finding, until an experiment (run_experiment) confirms or refutes it: status and experiment say so.",
		"events", cl.quality, "candidates", json_object_get(body, "candidates"),
		"rule_texts", json_object_get(body, "rule_texts"), "texts", json_object_get(body, "texts"),
		"quiet", json_object_get(body, "quiet"), "quiet_total", (json_int_t)cl.quiet_total,
		"forbidden_conclusions", pl_rules_forbidden(rules),
		"page", tool_page_json(&pg, one ? NULL : tool_page_call(&pg, "classify_hotspots", args, NULL)));
	json_decref(body);
	mark_experiments(ctx, id, json_object_get(*result, "candidates"));
	tool_view_describe(&view, *result);
	tool_view_steps(&view, *result, id);
out:
	tool_view_release(&view);
	json_decref(cl.all);
	json_decref(cl.quiet);
	json_decref(cl.quality);
	pl_buf_release(&query);
	return rc;
}
