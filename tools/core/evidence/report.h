/* report.h - the Markdown evidence report of one analysis, or of several
 * analyses (on-CPU and off-CPU, perf stat...; the header says which share
 * a collection).
 *
 * Nine sections (pl_report_sections): the problem as the caller put it,
 * data quality, observations, top hotspots, what each thread does (events
 * of several threads: the heaviest ones, their leading rules and
 * functions), the classification rules'
 * candidates, missing evidence, an A/B validation plan and a conclusion
 * that confirms nothing.  With several analyses every section covers all
 * of them, each event labelled with its analysis (events of different
 * analyses are never merged either).  The same inputs give the same bytes.
 */
#ifndef PL_REPORT_H
#define PL_REPORT_H

#include <stdint.h>

#include <jansson.h>

#include "base/error.h"
#include "base/util.h"
#include "profile/profile.h"

struct pl_rules;

#define PL_REPORT_NSECTIONS 9
extern const char *const pl_report_sections[PL_REPORT_NSECTIONS];

#define PL_REPORT_MORE_MAX 7       /* other analyses in one report */

/* Another analysis of the same run, reported with the first (borrowed). */
struct pl_report_part {
	const char *analysis_id;
	const struct pl_profile *p;
	json_t *summary;                  /* its summary artifact */
	json_t *experiments;              /* what experiments said of its candidates
					   * (experiments.h's pl_experiments_of; borrowed,
					   * may be NULL) */
};

struct pl_report_in {
	const char *analysis_id;
	const char *problem, *metric;     /* the caller's words, escaped */
	const struct pl_profile *p;       /* the analysis' profile */
	json_t *summary;                  /* its summary artifact (borrowed) */
	json_t *experiments;              /* as pl_report_part's, for this analysis */
	const struct pl_rules *rules;     /* the classification rules */
	uint32_t only_event;              /* one event of the first analysis, or PL_NOID: all */
	const struct pl_report_part *more;/* nmore other analyses, every event of each */
	size_t nmore;
	/* The view only_event was read under (its normalized key, named in the
	 * Problem section with the shares it kept), or NULL. */
	const char *view_key;
	double view_samples_percent, view_period_percent;
};

/* Write the report into *md (initialised here; the caller releases it)
 * and its summary (events, candidates, data-quality flags, missing
 * evidence; a new reference) into *summary.  A profile without events is
 * an error. */
enum pl_err pl_report_build(const struct pl_report_in *in, struct pl_buf *md, json_t **summary,
			    struct pl_error *err);

#endif
