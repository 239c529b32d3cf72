/* test_bench_stats.c - unit tests for bench_stats.c (Mann-Whitney U and
 * the bootstrap of a ratio of medians) and for the benchmark readers of
 * benchmark.c on small inline documents.
 *
 * Oracles, all independent of this code:
 *  - published critical values of U for a two-sided test at alpha 0.05
 *    (the standard table of the Mann-Whitney U test printed in statistics
 *    textbooks): the critical value u is the largest U whose two-sided
 *    exact p is at most 0.05;
 *  - the worked example of R. Shier, "Statistics: 2.3 The Mann-Whitney U
 *    Test" (Mathematics Learning Support Centre, 2004): U_M = 17, U_F = 3,
 *    p = 0.11;
 *  - the exact distribution for 2 + 2 values, counted by hand (the 6
 *    arrangements give U = 0, 1, 2, 2, 3, 4);
 *  - scipy 1.10.1 scipy.stats.mannwhitneyu(x, y) outputs for two samples
 *    that take the normal approximation (printed by scipy, pasted here).
 * The integration test test_benchmarks.sh checks real producers' data
 * against scipy run live.
 */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "evidence/bench_stats.h"
#include "evidence/benchmark.h"

/* ------------------------------------------------------------------ */
/* Mann-Whitney U                                                     */
/* ------------------------------------------------------------------ */

static double two_sided_exact(uint64_t u, size_t m, size_t n)
{
	double p = 2 * pl_mwu_exact_cdf(u, m, n);
	return p > 1 ? 1 : p;
}

START_TEST(mwu_exact_matches_published_critical_values)
{
	/* n1, n2, critical U (two-sided, alpha = 0.05) */
	static const unsigned table[][3] = {
		{5, 5, 2}, {7, 9, 12}, {8, 8, 13}, {10, 10, 23}, {20, 20, 127},
	};

	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
		size_t m = table[i][0], n = table[i][1];
		uint64_t u = table[i][2];
		ck_assert_msg(two_sided_exact(u, m, n) <= 0.05, "%zu,%zu: p(U<=%llu) = %g", m, n,
			      (unsigned long long)u, two_sided_exact(u, m, n));
		ck_assert_msg(two_sided_exact(u + 1, m, n) > 0.05, "%zu,%zu: U=%llu is not the largest", m, n,
			      (unsigned long long)u + 1);
	}
}
END_TEST

START_TEST(mwu_exact_distribution_of_two_and_two)
{
	/* U over the 6 orderings of 2 + 2 values: 0, 1, 2, 2, 3, 4. */
	ck_assert_double_eq_tol(pl_mwu_exact_cdf(0, 2, 2), 1.0 / 6, 1e-15);
	ck_assert_double_eq_tol(pl_mwu_exact_cdf(1, 2, 2), 2.0 / 6, 1e-15);
	ck_assert_double_eq_tol(pl_mwu_exact_cdf(2, 2, 2), 4.0 / 6, 1e-15);
	ck_assert_double_eq_tol(pl_mwu_exact_cdf(3, 2, 2), 5.0 / 6, 1e-15);
	ck_assert_double_eq_tol(pl_mwu_exact_cdf(4, 2, 2), 1.0, 1e-15);
	ck_assert_double_eq_tol(pl_mwu_min_p(3, 3), 0.1, 1e-12);
}
END_TEST

START_TEST(mwu_matches_shier_worked_example)
{
	static const double males[] = {19, 22, 16, 29, 24}, females[] = {20, 11, 17, 12};
	struct pl_mwu m;

	pl_mwu_test(males, 5, females, 4, &m);
	ck_assert_int_eq(m.method, PL_MWU_EXACT);
	ck_assert(!m.ties);
	ck_assert_double_eq(m.u_x, 17);
	ck_assert_double_eq(m.u_y, 3);
	ck_assert_double_eq_tol(m.p, 0.11, 0.0015);          /* as published */
	ck_assert_double_eq_tol(m.p, 0.1111111111111111, 1e-12);  /* scipy, exact */
}
END_TEST

START_TEST(mwu_normal_with_ties_matches_scipy)
{
	static const double x[] = {1, 2, 2, 3, 4, 4, 5, 6, 7, 8, 9};
	static const double y[] = {2, 3, 3, 4, 5, 6, 6, 7, 8, 9, 10, 10};
	static const double a[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
	static const double b[] = {3.5, 4.5, 5.5, 6.5, 7.5, 8.5, 9.5, 10.5, 11.5, 12.5};
	struct pl_mwu m;

	pl_mwu_test(x, 11, y, 12, &m);
	ck_assert_int_eq(m.method, PL_MWU_NORMAL);
	ck_assert(m.ties);
	ck_assert_double_eq(m.u_x, 46);
	ck_assert_double_eq_tol(m.p, 0.22765676690724468, 1e-12);
	/* No ties, both sides over 8: scipy also takes the normal path. */
	pl_mwu_test(a, 10, b, 10, &m);
	ck_assert_int_eq(m.method, PL_MWU_NORMAL);
	ck_assert(!m.ties);
	ck_assert_double_eq(m.u_x, 28);
	ck_assert_double_eq_tol(m.p, 0.10410988966022681, 1e-12);
}
END_TEST

START_TEST(mwu_all_tied_gives_p_one)
{
	static const double x[] = {1, 1, 1};
	struct pl_mwu m;

	pl_mwu_test(x, 3, x, 3, &m);
	ck_assert_int_eq(m.method, PL_MWU_NORMAL);
	ck_assert_double_eq(m.u_x, 4.5);
	ck_assert_double_eq(m.p, 1.0);
	ck_assert(isnan(m.z));
}
END_TEST

START_TEST(mwu_exact_declined_when_too_large)
{
	/* 8 values against 20000: scipy would count exactly; 160000 cells is
	 * over the bound, so the normal approximation is used and said so. */
	size_t n = 20000;
	double *y = malloc(n * sizeof(double)), x[8];

	for (size_t i = 0; i < n; i++)
		y[i] = (double)i + 0.25;
	for (size_t i = 0; i < 8; i++)
		x[i] = (double)i * 1000 + 0.5;
	struct pl_mwu m;
	pl_mwu_test(x, 8, y, n, &m);
	ck_assert_int_eq(m.method, PL_MWU_NORMAL);
	ck_assert(m.exact_declined);
	ck_assert(!pl_mwu_exact_feasible(8, n));
	ck_assert(pl_mwu_exact_feasible(8, 12500));
	free(y);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Bootstrap                                                          */
/* ------------------------------------------------------------------ */

START_TEST(boot_constant_samples_give_exact_ratio)
{
	static const double b[] = {2, 2, 2, 2, 2}, c[] = {3, 3, 3, 3};
	struct pl_boot r;

	pl_boot_median_ratio(b, 5, c, 4, 1000, PL_BOOT_SEED, 0.95, &r);
	ck_assert_double_eq(r.ratio, 1.5);
	ck_assert_double_eq(r.lo, 1.5);
	ck_assert_double_eq(r.hi, 1.5);
}
END_TEST

START_TEST(boot_is_deterministic_and_covers_the_ratio)
{
	double b[30], c[30];
	struct pl_boot r1, r2;

	/* Candidate is baseline times 1.2, both with a spread. */
	for (int i = 0; i < 30; i++) {
		b[i] = 100 + (i * 37 % 30);
		c[i] = 1.2 * (100 + (i * 11 % 30));
	}
	pl_boot_median_ratio(b, 30, c, 30, PL_BOOT_RESAMPLES, PL_BOOT_SEED, 0.95, &r1);
	pl_boot_median_ratio(b, 30, c, 30, PL_BOOT_RESAMPLES, PL_BOOT_SEED, 0.95, &r2);
	ck_assert(memcmp(&r1, &r2, sizeof(r1)) == 0);
	ck_assert_double_eq_tol(r1.ratio, 1.2, 1e-12);
	ck_assert(r1.lo <= 1.2 && r1.hi >= 1.2);
	ck_assert(r1.lo > 1.0 && r1.hi < 1.45);
	ck_assert_uint_eq(r1.resamples, PL_BOOT_RESAMPLES);
}
END_TEST

START_TEST(boot_resamples_are_bounded)
{
	ck_assert_uint_eq(pl_boot_resamples_for(10, 10), PL_BOOT_RESAMPLES);
	ck_assert_uint_eq(pl_boot_resamples_for(100000, 100000), PL_BOOT_MIN_RESAMPLES);
	ck_assert(pl_boot_resamples_for(30000, 30000) * 60000 <= PL_BOOT_MAX_DRAWS);
}
END_TEST

START_TEST(median_of_even_and_odd)
{
	static const double odd[] = {5, 1, 3}, even[] = {4, 1, 3, 2};

	ck_assert_double_eq(pl_median(odd, 3), 3);
	ck_assert_double_eq(pl_median(even, 4), 2.5);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Readers on inline documents (real producers: test_benchmarks.sh)    */
/* ------------------------------------------------------------------ */

static json_t *doc(const char *text)
{
	json_error_t je;
	json_t *d = json_loads(text, 0, &je);

	ck_assert_msg(d != NULL, "bad inline JSON: %s", je.text);
	return d;
}

START_TEST(google_skips_aggregates_and_errors_and_converts_units)
{
	json_t *d = doc("{\"context\": {\"num_cpus\": 4, \"cpu_scaling_enabled\": true,"
			" \"caches\": [{\"type\": \"Data\", \"level\": 1, \"size\": 32768, \"num_sharing\": 1}]},"
			" \"benchmarks\": ["
			"{\"name\": \"BM_a\", \"run_type\": \"iteration\", \"real_time\": 1500, \"time_unit\": \"ns\"},"
			"{\"name\": \"BM_a\", \"run_type\": \"iteration\", \"real_time\": 2, \"time_unit\": \"us\"},"
			"{\"name\": \"BM_a_mean\", \"run_type\": \"aggregate\", \"aggregate_name\": \"mean\", \"real_time\": 1750, \"time_unit\": \"ns\"},"
			"{\"name\": \"BM_b\", \"run_type\": \"iteration\", \"error_occurred\": true, \"real_time\": 0, \"time_unit\": \"ns\"}]}");
	struct pl_bench_set s;
	struct pl_error err;

	pl_bench_set_init(&s);
	ck_assert_int_eq(pl_bench_parse_json(&s, d, PL_BENCH_AUTO, "inline", &err), PL_OK);
	ck_assert_int_eq(s.format, PL_BENCH_GOOGLE);
	ck_assert_uint_eq(s.n, 1);
	ck_assert_str_eq(s.items[0].name, "BM_a");
	ck_assert_uint_eq(s.items[0].nvalues, 2);
	ck_assert_double_eq_tol(s.items[0].values[0], 1.5e-6, 1e-20);
	ck_assert_double_eq_tol(s.items[0].values[1], 2e-6, 1e-20);
	ck_assert_str_eq(s.items[0].converted_from, "mixed");
	ck_assert_uint_eq(s.skipped.aggregate_rows, 1);
	ck_assert_uint_eq(s.skipped.error_rows, 1);
	ck_assert_int_eq(json_integer_value(json_object_get(s.environment, "num_cpus")), 4);
	ck_assert_str_eq(json_string_value(json_object_get(s.environment, "caches")), "L1 Data 32768 B x1");
	ck_assert(json_is_null(json_object_get(s.environment, "cpu_model")));
	pl_bench_set_release(&s);
	json_decref(d);
}
END_TEST

START_TEST(hyperfine_leaves_out_failed_runs_and_renames_duplicates)
{
	json_t *d = doc("{\"results\": ["
			"{\"command\": \"x\", \"times\": [0.1, 0.2, 0.3], \"exit_codes\": [0, 1, 0]},"
			"{\"command\": \"x\", \"times\": [0.4, -1], \"exit_codes\": [0, 0]}]}");
	struct pl_bench_set s;
	struct pl_error err;

	pl_bench_set_init(&s);
	ck_assert_int_eq(pl_bench_parse_json(&s, d, PL_BENCH_AUTO, "inline", &err), PL_OK);
	ck_assert_uint_eq(s.n, 2);
	ck_assert_str_eq(s.items[1].name, "x #2");
	ck_assert_uint_eq(s.items[0].nvalues, 2);
	ck_assert_uint_eq(s.items[1].nvalues, 1);
	ck_assert_uint_eq(s.skipped.failed_runs, 1);
	ck_assert_uint_eq(s.skipped.invalid_values, 1);
	ck_assert_int_eq(pl_bench_select(&s, "nope", &err), PL_ERR_USAGE);
	ck_assert_msg(strstr(err.text, "'x #2'") != NULL, "%s", err.text);
	ck_assert_int_eq(pl_bench_select(&s, "x #2", &err), PL_OK);
	ck_assert_uint_eq(s.n, 1);
	ck_assert_str_eq(s.items[0].name, "x #2");
	pl_bench_set_release(&s);
	json_decref(d);
}
END_TEST

START_TEST(pyperf_merges_metadata_and_skips_calibration)
{
	json_t *d = doc("{\"version\": \"1.0\", \"metadata\": {\"cpu_model_name\": \"CPU X\", \"cpu_count\": 8,"
			" \"cpu_config\": \"0-7=driver:acpi-cpufreq, governor:performance\"},"
			" \"benchmarks\": [{\"metadata\": {\"name\": \"a\", \"unit\": \"second\"}, \"runs\": ["
			"{\"warmups\": [[1, 0.5]]}, {\"warmups\": [[1, 0.4]], \"values\": [0.1, 0.2]}]}]}");
	struct pl_bench_set s;
	struct pl_error err;
	json_t *given = doc("{\"kernel\": \"6.1.0\", \"cpu_model\": \"other\"}");

	pl_bench_set_init(&s);
	ck_assert_int_eq(pl_bench_parse_json(&s, d, PL_BENCH_AUTO, "inline", &err), PL_OK);
	ck_assert_int_eq(s.format, PL_BENCH_PYPERF);
	ck_assert_uint_eq(s.items[0].nvalues, 2);
	ck_assert_uint_eq(s.skipped.calibration_runs, 1);
	ck_assert_uint_eq(s.skipped.warmup_values, 2);
	ck_assert_str_eq(json_string_value(json_object_get(s.environment, "governor")), "performance");
	ck_assert_int_eq(pl_bench_apply_environment(&s, given, &err), PL_OK);
	ck_assert_str_eq(json_string_value(json_object_get(s.environment, "kernel")), "6.1.0");
	ck_assert_str_eq(json_string_value(json_object_get(s.environment, "cpu_model")), "CPU X");
	ck_assert_str_eq(json_string_value(json_object_get(s.environment_source, "kernel")), "caller");
	pl_bench_set_release(&s);
	json_decref(given);
	json_decref(d);
}
END_TEST

START_TEST(unknown_shape_is_refused_with_the_formats)
{
	json_t *d = doc("{\"something\": []}");
	struct pl_bench_set s;
	struct pl_error err;

	pl_bench_set_init(&s);
	ck_assert_int_eq(pl_bench_parse_json(&s, d, PL_BENCH_AUTO, "inline", &err), PL_ERR_UNSUPPORTED);
	ck_assert_msg(strstr(err.hint, "hyperfine") && strstr(err.hint, "pyperf"), "%s", err.hint);
	pl_bench_set_release(&s);
	json_decref(d);
}
END_TEST

START_TEST(plain_values_keep_the_callers_unit_and_direction)
{
	json_t *d = doc("[1200, 1180.5, 0, -3, 1210, \"x\"]");
	struct pl_bench_set s;
	struct pl_error err;

	pl_bench_set_init(&s);
	ck_assert_int_eq(pl_bench_parse_values(&s, d, "ops_per_second", "ops/s", PL_HIGHER_IS_BETTER, &err), PL_OK);
	ck_assert_int_eq(s.format, PL_BENCH_VALUES);
	ck_assert_uint_eq(s.n, 1);
	ck_assert_str_eq(s.items[0].metric, "plain");
	ck_assert_str_eq(s.items[0].unit, "ops/s");
	ck_assert_int_eq(s.items[0].direction, PL_HIGHER_IS_BETTER);
	ck_assert_uint_eq(s.items[0].nvalues, 3);
	ck_assert_double_eq(s.items[0].values[1], 1180.5);
	/* 0, -3 and "x" are not positive finite numbers: counted, said */
	ck_assert_uint_eq(s.skipped.invalid_values, 3);
	ck_assert_uint_eq(json_array_size(s.warnings), 1);
	ck_assert_uint_eq(strlen(s.sha256), 64);
	pl_bench_set_release(&s);

	pl_bench_set_init(&s);
	ck_assert_int_eq(pl_bench_parse_values(&s, d, "ops_per_second", NULL, PL_HIGHER_IS_BETTER, &err), PL_ERR_USAGE);
	ck_assert_ptr_nonnull(strstr(err.hint, "unit="));
	pl_bench_set_release(&s);
	json_decref(d);
}
END_TEST

Suite *suite_bench_stats(void)
{
	Suite *s = suite_create("bench_stats");
	TCase *t = tcase_create("core");

	tcase_add_test(t, mwu_exact_matches_published_critical_values);
	tcase_add_test(t, mwu_exact_distribution_of_two_and_two);
	tcase_add_test(t, mwu_matches_shier_worked_example);
	tcase_add_test(t, mwu_normal_with_ties_matches_scipy);
	tcase_add_test(t, mwu_all_tied_gives_p_one);
	tcase_add_test(t, mwu_exact_declined_when_too_large);
	tcase_add_test(t, boot_constant_samples_give_exact_ratio);
	tcase_add_test(t, boot_is_deterministic_and_covers_the_ratio);
	tcase_add_test(t, boot_resamples_are_bounded);
	tcase_add_test(t, median_of_even_and_odd);
	tcase_add_test(t, google_skips_aggregates_and_errors_and_converts_units);
	tcase_add_test(t, hyperfine_leaves_out_failed_runs_and_renames_duplicates);
	tcase_add_test(t, pyperf_merges_metadata_and_skips_calibration);
	tcase_add_test(t, unknown_shape_is_refused_with_the_formats);
	tcase_add_test(t, plain_values_keep_the_callers_unit_and_direction);
	suite_add_tcase(s, t);
	return s;
}
