/* test_experiments.c - what an experiment's verdict makes of a candidate
 * (evidence/experiments.c): an improvement confirms it, no difference or
 * a regression refutes it, anything else leaves it inconclusive; the
 * latest experiment of a candidate wins; other candidates and analyses
 * are untouched. */
#include <check.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "evidence/experiments.h"

#define AN "an-0123456789abcdef0123"

static json_t *verdict(const char *v)
{
	return json_pack("{s:s,s:s,s:f,s:{s:f,s:f,s:f},s:f}", "measure", "wall_time", "verdict", v,
			 "ratio_of_medians", 0.5, "confidence_interval", "level", 0.95, "low", 0.45, "high", 0.55,
			 "p_value", 0.0002);
}

static const char *status_after(const char *root, const char *cand, const char *v)
{
	static char out[32];
	struct pl_error err;
	json_t *vd = verdict(v), *r = pl_experiment_record(root, AN, cand, "bm-00000000000000000001", vd, &err);

	ck_assert_ptr_nonnull(r);
	snprintf(out, sizeof(out), "%s", json_string_value(json_object_get(r, "status")));
	json_decref(r);
	json_decref(vd);
	return out;
}

START_TEST(experiment_verdict_confirms_or_refutes_a_candidate)
{
	char tmpl[] = "/tmp/pl-exp-XXXXXX";
	json_t *all;

	ck_assert_ptr_nonnull(mkdtemp(tmpl));
	ck_assert_ptr_null(pl_experiments_of(tmpl, AN));
	ck_assert_str_eq(status_after(tmpl, "program_code@cycles", "improvement"), "confirmed");
	ck_assert_str_eq(status_after(tmpl, "memory_copy@cycles", "no_difference"), "refuted");
	ck_assert_str_eq(status_after(tmpl, "sleep@cycles", "too_noisy"), "inconclusive");
	ck_assert_str_eq(status_after(tmpl, "memory_copy@cycles", "regression"), "refuted");
	ck_assert_str_eq(status_after(tmpl, "sleep@cycles", "improvement"), "confirmed");
	all = pl_experiments_of(tmpl, AN);
	ck_assert_int_eq(json_object_size(all), 3);
	ck_assert_str_eq(json_string_value(json_object_get(json_object_get(all, "sleep@cycles"), "status")),
			 "confirmed");
	ck_assert_ptr_nonnull(strstr(json_string_value(json_object_get(json_object_get(all, "program_code@cycles"),
									 "figure")),
				     "wall_time: improvement, candidate/baseline median 0.500x (95% CI 0.450 to 0.550"));
	ck_assert_ptr_null(pl_experiments_of(tmpl, "an-ffffffffffffffffffff"));
	json_decref(all);
}
END_TEST

Suite *suite_experiments(void)
{
	Suite *s = suite_create("experiments");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, experiment_verdict_confirms_or_refutes_a_candidate);
	suite_add_tcase(s, tc);
	return s;
}
