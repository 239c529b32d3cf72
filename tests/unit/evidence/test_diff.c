/* test_diff.c - unit tests for the profile comparison (diff.h) and the
 * differential mode of the flame graph writer.
 *
 * The profiles are small folded inputs whose shares are easy to work out
 * by hand: each expected figure below is written from the input lines,
 * not from an earlier run.  Colours follow flamegraph.pl's color_scale:
 * a change d out of the largest change m shades to
 * int(210 * (m - |d|) / m).
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "evidence/diff.h"
#include "export/flamegraph.h"
#include "profile/parse.h"

static struct pl_profile base, cand;

static void setup(void)
{
	pl_profile_init(&base, NULL);
	pl_profile_init(&cand, NULL);
}

static void teardown(void)
{
	pl_profile_release(&base);
	pl_profile_release(&cand);
}

static void load_folded(struct pl_profile *p, const char *const *lines)
{
	uint32_t ev = pl_intern_event(p, "unknown", 7);
	struct pl_error err;

	for (size_t i = 0; lines[i]; i++)
		ck_assert_int_eq(pl_folded_line(p, ev, lines[i], strlen(lines[i]), i + 1, &err), PL_OK);
}

/* Baseline total 100, candidate total 200. */
static const char *const base_lines[] = {
	"main;work;memcpy 50", "main;work;compute 30", "main;gone 10", "main;idle 10", NULL};
static const char *const cand_lines[] = {
	"main;work;memcpy 20", "main;work;compute 60", "main;work;hash 20", "main;idle 100", NULL};

static void build(struct pl_diff *d)
{
	struct pl_fold_opts fo = {0};
	struct pl_error err;

	load_folded(&base, base_lines);
	load_folded(&cand, cand_lines);
	ck_assert_int_eq(pl_diff_build(d, &base, 0, &cand, 0, &fo, &err), PL_OK);
}

static const struct pl_diff_func *find_func(const struct pl_diff *d, const char *symbol)
{
	for (size_t i = 0; i < d->nfuncs; i++)
		if (strcmp(d->funcs[i].symbol, symbol) == 0)
			return &d->funcs[i];
	ck_abort_msg("no function %s", symbol);
	return NULL;
}

START_TEST(diff_classifies_by_presence_and_shown_change)
{
	double tiny = 0.00004, small = 0.0001, zero = 0;

	ck_assert_int_eq(pl_diff_classify(0, 5, &small, 1), PL_DIFF_ADDED);
	ck_assert_int_eq(pl_diff_classify(5, 0, &small, 1), PL_DIFF_REMOVED);
	ck_assert_int_eq(pl_diff_classify(5, 7, &tiny, 1), PL_DIFF_UNCHANGED);
	ck_assert_int_eq(pl_diff_classify(5, 7, &small, 1), PL_DIFF_CHANGED);
	ck_assert_int_eq(pl_diff_classify(5, 5, &zero, 1), PL_DIFF_UNCHANGED);
	ck_assert_str_eq(pl_diff_status_name(PL_DIFF_REMOVED), "removed");
}
END_TEST

START_TEST(diff_computes_share_deltas_per_function)
{
	struct pl_diff d;
	const struct pl_diff_func *f;

	build(&d);
	ck_assert_uint_eq(d.total[0].period, 100);
	ck_assert_uint_eq(d.total[1].period, 200);
	/* memcpy: 50% of 100 -> 10% of 200 */
	f = find_func(&d, "memcpy");
	ck_assert_double_eq_tol(f->self_pct[0], 50, 1e-9);
	ck_assert_double_eq_tol(f->self_pct[1], 10, 1e-9);
	ck_assert_double_eq_tol(f->self_delta, -40, 1e-9);
	ck_assert_double_eq_tol(f->incl_delta, -40, 1e-9);
	ck_assert_int_eq(f->status, PL_DIFF_CHANGED);
	/* compute: 30% -> 30%, the same share of a longer run */
	f = find_func(&d, "compute");
	ck_assert_double_eq_tol(f->self_delta, 0, 1e-9);
	ck_assert_int_eq(f->status, PL_DIFF_UNCHANGED);
	f = find_func(&d, "hash");
	ck_assert_int_eq(f->status, PL_DIFF_ADDED);
	ck_assert_uint_eq(f->func[0], PL_NOID);
	ck_assert_double_eq_tol(f->self_delta, 10, 1e-9);
	f = find_func(&d, "gone");
	ck_assert_int_eq(f->status, PL_DIFF_REMOVED);
	ck_assert_double_eq_tol(f->incl_delta, -10, 1e-9);
	/* work: no self weight; inclusive 80% -> 50% */
	f = find_func(&d, "work");
	ck_assert_double_eq_tol(f->self_delta, 0, 1e-9);
	ck_assert_double_eq_tol(f->incl_delta, -30, 1e-9);
	ck_assert_int_eq(f->status, PL_DIFF_CHANGED);
	f = find_func(&d, "main");
	ck_assert_int_eq(f->status, PL_DIFF_UNCHANGED);
	ck_assert_uint_eq(d.nfuncs, 7);
	pl_diff_release(&d);
}
END_TEST

START_TEST(diff_orders_functions_by_change_then_name)
{
	static const char *const want_self[] = {"idle", "memcpy", "gone", "hash", "work"};
	static const char *const want_incl[] = {"idle", "memcpy", "work", "gone", "hash"};
	struct pl_diff d;
	size_t *order, n;

	build(&d);
	n = pl_diff_func_order(&d, false, 0.1, &order);
	ck_assert_uint_eq(n, 5);
	for (size_t i = 0; i < n; i++)
		ck_assert_str_eq(d.funcs[order[i]].symbol, want_self[i]);
	free(order);
	n = pl_diff_func_order(&d, true, 0.1, &order);
	ck_assert_uint_eq(n, 5);
	for (size_t i = 0; i < n; i++)
		ck_assert_str_eq(d.funcs[order[i]].symbol, want_incl[i]);
	free(order);
	/* a threshold of 0 keeps the unchanged ones too */
	n = pl_diff_func_order(&d, false, 0, &order);
	ck_assert_uint_eq(n, 7);
	free(order);
	pl_diff_release(&d);
}
END_TEST

static char *folded_text(const struct pl_diff *d, bool normalize)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	struct pl_error err;

	ck_assert_int_eq(pl_diff_write_folded(f, d, normalize, &err), PL_OK);
	fclose(f);
	return text;
}

START_TEST(diff_writes_difffolded_lines_in_text_order)
{
	struct pl_diff d;
	uint32_t *order;
	size_t n;
	char *text;

	build(&d);
	text = folded_text(&d, false);
	ck_assert_str_eq(text,
		"main;gone 10 0\n"
		"main;idle 10 100\n"
		"main;work;compute 30 60\n"
		"main;work;hash 0 20\n"
		"main;work;memcpy 50 20\n");
	free(text);
	/* -n: count1 * 200 / 100 */
	text = folded_text(&d, true);
	ck_assert_str_eq(text,
		"main;gone 20 0\n"
		"main;idle 20 100\n"
		"main;work;compute 60 60\n"
		"main;work;hash 0 20\n"
		"main;work;memcpy 100 20\n");
	free(text);
	/* paths by |change|: idle 10% -> 50%, memcpy 50% -> 10%, then
	 * gone -10 and hash +10 (candidate weight first), compute 0 */
	ck_assert_uint_eq(d.common_paths, 3);
	n = pl_diff_path_order(&d, 0, &order);
	ck_assert_uint_eq(n, 5);
	ck_assert_uint_eq(d.paths[order[0]].count[1], 100);
	ck_assert_uint_eq(d.paths[order[1]].count[0], 50);
	ck_assert_uint_eq(d.paths[order[2]].count[1], 20);
	ck_assert_int_eq(d.paths[order[2]].status, PL_DIFF_ADDED);
	ck_assert_int_eq(d.paths[order[3]].status, PL_DIFF_REMOVED);
	ck_assert_int_eq(d.paths[order[4]].status, PL_DIFF_UNCHANGED);
	free(order);
	pl_diff_release(&d);
}
END_TEST

static void load_script(struct pl_profile *p, const char *text)
{
	struct pl_ps_parser *ps = pl_ps_new(p, "test");
	struct pl_error err;
	uint64_t no = 1;

	for (const char *l = text; *l; no++) {
		size_t n = strcspn(l, "\n");
		ck_assert_int_eq(pl_ps_line(ps, l, n, no, &err), PL_OK);
		l += n + (l[n] == '\n');
	}
	ck_assert_int_eq(pl_ps_finish(ps, &err), PL_OK);
}

#define REC(comm, period, dso, leaf) comm " 100/100 1.000000: " period " cpu-clock:\n" \
	"\t1000 " leaf "+0x10 (" dso ")\n\t2000 main+0x20 (" dso ")\n\n"

START_TEST(diff_matches_two_builds_of_one_program_under_two_names)
{
	struct pl_diff d;
	struct pl_fold_opts fo = {0};
	struct pl_error err;
	char *text;

	/* An agent's A/B copy: ./prog and ./prog-fixed-build (its command
	 * cut to 15 bytes, as the kernel keeps it); a shell beside both. */
	load_script(&base, REC("prog", "60", "/tmp/a/prog", "work") REC("prog", "30", "/tmp/a/prog", "idle")
			   REC("sh", "10", "/usr/bin/dash", "parse"));
	load_script(&cand, REC("prog-fixed-buil", "20", "/tmp/b/prog-fixed-build", "work")
			   REC("prog-fixed-buil", "70", "/tmp/b/prog-fixed-build", "idle")
			   REC("sh", "10", "/usr/bin/dash", "parse"));
	ck_assert_int_eq(pl_diff_build(&d, &base, 0, &cand, 0, &fo, &err), PL_OK);
	ck_assert_str_eq(d.main_comm[0], "prog");
	ck_assert_str_eq(d.main_comm[1], "prog-fixed-buil");
	ck_assert_uint_eq(d.common_paths, 3);
	text = folded_text(&d, false);
	ck_assert_str_eq(text,
		"prog;main;idle 30 70\n"
		"prog;main;work 60 20\n"
		"sh;main;parse 10 10\n");
	free(text);
	pl_diff_release(&d);

	/* The same command on both sides: nothing to say. */
	pl_profile_release(&cand);
	pl_profile_init(&cand, NULL);
	load_script(&cand, REC("prog", "50", "/tmp/b/prog", "work") REC("prog", "50", "/tmp/b/prog", "idle"));
	ck_assert_int_eq(pl_diff_build(&d, &base, 0, &cand, 0, &fo, &err), PL_OK);
	ck_assert_ptr_null(d.main_comm[0]);
	ck_assert_uint_eq(d.common_paths, 2);
	pl_diff_release(&d);
}
END_TEST

START_TEST(diff_against_itself_changes_nothing)
{
	struct pl_diff d;
	struct pl_fold_opts fo = {0};
	struct pl_error err;
	size_t *order;

	load_folded(&base, base_lines);
	ck_assert_int_eq(pl_diff_build(&d, &base, 0, &base, 0, &fo, &err), PL_OK);
	for (size_t i = 0; i < d.nfuncs; i++) {
		ck_assert_int_eq(d.funcs[i].status, PL_DIFF_UNCHANGED);
		ck_assert(d.funcs[i].self_delta == 0 && d.funcs[i].incl_delta == 0);
	}
	for (size_t i = 0; i < d.npaths; i++)
		ck_assert_int_eq(d.paths[i].status, PL_DIFF_UNCHANGED);
	ck_assert_uint_eq(d.common_paths, d.npaths);
	ck_assert_uint_eq(pl_diff_func_order(&d, false, 1e-9, &order), 0);
	free(order);
	pl_diff_release(&d);
}
END_TEST

/* The fill of the frame whose title starts with `title`. */
static void fill_of(const char *svg, const char *title, char *out, size_t cap)
{
	char key[128];
	const char *p, *f;

	snprintf(key, sizeof(key), "<title>%s", title);
	p = strstr(svg, key);
	ck_assert_msg(p != NULL, "no frame %s", title);
	f = strstr(p, "fill=\"");
	ck_assert_ptr_nonnull(f);
	f += 6;
	snprintf(out, cap, "%.*s", (int)(strchr(f, '"') - f), f);
}

START_TEST(flamegraph_differential_colours_by_change)
{
	static const char *const names[] = {"a", "b", "c", "d", "e"};
	static const uint32_t ab[] = {0, 1}, ac[] = {0, 2}, ad[] = {0, 3}, ae[] = {0, 4}, a[] = {0};
	/* weight is the candidate, before the baseline; the largest change
	 * is 20; "a" itself lost 4 and "e" is in the baseline only */
	struct pl_flame_stack s[] = {
		{ab, 2, 30, 10}, {ac, 2, 10, 30}, {ad, 2, 5, 5}, {ae, 2, 0, 8}, {a, 1, 0, 4}};
	struct pl_flame_opts o = {.differential = 1};
	struct pl_error e;
	char *svg = NULL, fill[64];
	size_t len = 0;
	FILE *f = open_memstream(&svg, &len);

	ck_assert_int_eq(pl_flamegraph_write(f, s, 5, names, 5, &o, &e), PL_OK);
	fclose(f);
	ck_assert_ptr_nonnull(strstr(svg, "<title>all (45 samples, 100.00%)</title>"));
	ck_assert_ptr_nonnull(strstr(svg, "<title>b (30 samples, 66.67%; +44.44%)</title>"));
	ck_assert_ptr_nonnull(strstr(svg, "<title>c (10 samples, 22.22%; -44.44%)</title>"));
	ck_assert_ptr_nonnull(strstr(svg, "<title>d (5 samples, 11.11%; 0.00%)</title>"));
	ck_assert_ptr_nonnull(strstr(svg, "<title>a (45 samples, 100.00%; -8.89%)</title>"));
	ck_assert_ptr_null(strstr(svg, "<title>e ("));
	fill_of(svg, "b (", fill, sizeof(fill));
	ck_assert_str_eq(fill, "rgb(255,0,0)");
	fill_of(svg, "c (", fill, sizeof(fill));
	ck_assert_str_eq(fill, "rgb(0,0,255)");
	fill_of(svg, "d (", fill, sizeof(fill));
	ck_assert_str_eq(fill, "rgb(255,255,255)");
	fill_of(svg, "a (", fill, sizeof(fill));
	ck_assert_str_eq(fill, "rgb(168,168,255)");  /* 210 * 16 / 20 */
	fill_of(svg, "all (", fill, sizeof(fill));
	ck_assert_str_eq(fill, "rgb(255,255,255)");
	free(svg);
}
END_TEST

START_TEST(flamegraph_differential_with_no_candidate_weight_says_no_samples)
{
	static const char *const names[] = {"a"};
	static const uint32_t a[] = {0};
	struct pl_flame_stack s[] = {{a, 1, 0, 7}};
	struct pl_flame_opts o = {.differential = 1};
	struct pl_error e;
	char *svg = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&svg, &len);

	ck_assert_int_eq(pl_flamegraph_write(f, s, 1, names, 1, &o, &e), PL_OK);
	fclose(f);
	ck_assert_ptr_nonnull(strstr(svg, ">no samples</text>"));
	ck_assert_ptr_null(strstr(svg, "<title>"));
	/* and a zero weight is still refused outside differential mode */
	free(svg);
	svg = NULL;
	f = open_memstream(&svg, &len);
	ck_assert_int_eq(pl_flamegraph_write(f, s, 1, names, 1, NULL, &e), PL_ERR_INPUT);
	fclose(f);
	free(svg);
}
END_TEST

Suite *suite_diff(void)
{
	Suite *s = suite_create("diff");
	TCase *tc = tcase_create("core");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, diff_classifies_by_presence_and_shown_change);
	tcase_add_test(tc, diff_computes_share_deltas_per_function);
	tcase_add_test(tc, diff_orders_functions_by_change_then_name);
	tcase_add_test(tc, diff_writes_difffolded_lines_in_text_order);
	tcase_add_test(tc, diff_against_itself_changes_nothing);
	tcase_add_test(tc, diff_matches_two_builds_of_one_program_under_two_names);
	tcase_add_test(tc, flamegraph_differential_colours_by_change);
	tcase_add_test(tc, flamegraph_differential_with_no_candidate_weight_says_no_samples);
	suite_add_tcase(s, tc);
	return s;
}
