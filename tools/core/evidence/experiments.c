/* experiments.c - the record of what experiments said of candidates
 * (see experiments.h): one small JSON file per analysis, read whole,
 * updated and written back atomically.
 */
#include "experiments.h"
#include "base/fsatomic.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void record_path(char *out, size_t cap, const char *root, const char *analysis_id)
{
	snprintf(out, cap, "%s/experiments/%s.json", root, analysis_id);
}

json_t *pl_experiments_of(const char *root, const char *analysis_id)
{
	char path[4096];
	json_t *doc, *c;

	if (!root || !analysis_id)
		return NULL;
	record_path(path, sizeof(path), root, analysis_id);
	doc = json_load_file(path, JSON_REJECT_DUPLICATES, NULL);
	c = json_object_get(doc, "candidates");
	if (!json_is_object(c) || json_object_size(c) == 0) {
		json_decref(doc);
		return NULL;
	}
	json_incref(c);
	json_decref(doc);
	return c;
}

static const char *status_of(const char *verdict)
{
	if (strcmp(verdict, "improvement") == 0)
		return "confirmed";
	if (strcmp(verdict, "regression") == 0 || strcmp(verdict, "no_difference") == 0)
		return "refuted";
	return "inconclusive";
}

json_t *pl_experiment_record(const char *root, const char *analysis_id, const char *candidate_id,
			     const char *experiment_id, json_t *verdict, struct pl_error *err)
{
	const char *v = json_string_value(json_object_get(verdict, "verdict"));
	const char *measure = json_string_value(json_object_get(verdict, "measure"));
	json_t *ci = json_object_get(verdict, "confidence_interval"), *doc, *cands, *entry;
	double ratio = json_number_value(json_object_get(verdict, "ratio_of_medians"));
	json_t *p = json_object_get(verdict, "p_value");
	char path[4096], dir[4096], figure[400];
	char *text;
	enum pl_err rc;

	if (!v || !measure) {
		pl_fail(err, PL_ERR_INTERNAL, NULL, "the experiment has no verdict to record");
		return NULL;
	}
	if (json_is_number(json_object_get(verdict, "ratio_of_medians")) && json_is_object(ci))
		snprintf(figure, sizeof(figure), "%s: %s, candidate/baseline median %.3fx (95%% CI %.3f to %.3f%s%.2g), experiment %s",
			 measure, v, ratio, json_number_value(json_object_get(ci, "low")),
			 json_number_value(json_object_get(ci, "high")), json_is_number(p) ? ", p=" : "",
			 json_is_number(p) ? json_number_value(p) : 0.0, experiment_id);
	else
		snprintf(figure, sizeof(figure), "%s: %s, experiment %s", measure, v, experiment_id);
	snprintf(dir, sizeof(dir), "%s/experiments", root);
	if ((rc = pl_make_dirs(dir, err)))
		return NULL;
	record_path(path, sizeof(path), root, analysis_id);
	doc = json_load_file(path, JSON_REJECT_DUPLICATES, NULL);
	if (!json_is_object(doc) || !json_is_object(json_object_get(doc, "candidates"))) {
		json_decref(doc);
		doc = json_pack("{s:s,s:i,s:s,s:{}}", "schema", "perflens.experiments", "version", 1,
				"analysis_id", analysis_id, "candidates");
	}
	cands = json_object_get(doc, "candidates");
	entry = json_pack("{s:s,s:s,s:s,s:s,s:O}", "status", status_of(v), "measure", measure,
			  "figure", figure, "experiment_id", experiment_id, "verdict", verdict);
	json_object_set_new(cands, candidate_id, entry);
	text = json_dumps(doc, JSON_INDENT(1) | JSON_SORT_KEYS | JSON_REAL_PRECISION(17));
	json_decref(doc);
	if (!text) {
		pl_fail(err, PL_ERR_INTERNAL, NULL, "cannot encode the experiment record");
		return NULL;
	}
	rc = pl_write_file_atomic(path, text, strlen(text), err);
	free(text);
	if (rc)
		return NULL;
	return json_pack("{s:s,s:s,s:s,s:s,s:s}", "analysis_id", analysis_id, "candidate_id", candidate_id,
			 "status", status_of(v), "measure", measure, "figure", figure);
}
