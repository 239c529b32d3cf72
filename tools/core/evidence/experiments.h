/* experiments.h - what experiments said of classification candidates.
 *
 * A candidate of classify_hotspots is a hypothesis; only an experiment
 * (run_experiment with analysis_id and candidate_id) marks it confirmed
 * or refuted.  The record is ARTIFACT_ROOT/experiments/AN_ID.json:
 * {"schema": "perflens.experiments", "version": 1, "candidates":
 * {CANDIDATE_ID: {status, measure, figure, experiment_id, verdict}}},
 * the latest experiment of a candidate winning, written atomically.
 * classify_hotspots and build_report read it (pl_experiment_for).
 *
 * Status: the candidate's fix improved the measure (improvement):
 * "confirmed"; it made no difference or made it worse: "refuted"; too
 * noisy or too few runs: "inconclusive".
 */
#ifndef PL_EXPERIMENTS_H
#define PL_EXPERIMENTS_H

#include <jansson.h>

#include "base/error.h"

/* Record what the verdict `verdict` (borrowed: one entry of
 * run_experiment's verdicts) of experiment `experiment_id` says of
 * candidate `candidate_id` of analysis `analysis_id`; returns the
 * candidate's new status object {analysis_id, candidate_id, status,
 * measure, figure} (new), or NULL with *err. */
json_t *pl_experiment_record(const char *root, const char *analysis_id, const char *candidate_id,
			     const char *experiment_id, json_t *verdict, struct pl_error *err);

/* The status objects of analysis `analysis_id`'s candidates (an object
 * keyed by candidate id: {status, measure, figure, experiment_id}), or
 * NULL when no experiment recorded any (new reference). */
json_t *pl_experiments_of(const char *root, const char *analysis_id);

#endif
