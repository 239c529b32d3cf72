/* test_transform.c - unit tests for the stack transforms of a view
 * (profile/transform.h) on small profiles whose stacks are written out,
 * so each figure is known by construction.  Real recordings against go
 * tool pprof and perf script: tests/integration/test_views.sh.
 */
#include <check.h>
#include <string.h>

#include "profile/transform.h"

static struct pl_profile prof;
static struct pl_transform tf;
static struct pl_error err;

static void setup(void)
{
	pl_profile_init(&prof, NULL);
	pl_transform_init(&tf);
}

static void teardown(void)
{
	pl_transform_release(&tf);
	pl_profile_release(&prof);
}

/* One stack "a;b;c" (root first) with `samples` samples of period 10. */
static void feed(const char *frames, uint64_t samples)
{
	uint32_t ev = pl_intern_event(&prof, "cycles", 6), ids[16], depth = 0;
	uint32_t th = pl_intern_thread(&prof, 1, 1, PL_NOID);

	for (const char *f = frames; *f && depth < 16;) {
		size_t n = strcspn(f, ";");
		uint32_t sym = pl_intern_str(&prof, f, n);
		ids[depth++] = pl_intern_frame(&prof, pl_intern_func(&prof, sym, PL_NOID), false, 0, PL_NOID, &err);
		f += n + (f[n] == ';');
	}
	pl_add_weight(&prof, pl_intern_stack(&prof, th, ids, depth, &err), ev, samples, samples * 10, true);
}

static void feed_all(void)
{
	feed("main;parse;hash", 30);
	feed("main;parse;tok", 20);
	feed("main;render;hash", 10);
	feed("main;render;walk;walk;walk;fmt", 40);
}

static uint32_t func(const char *name)
{
	for (uint32_t f = 0; f < pl_nfuncs(&prof); f++)
		if (strcmp(pl_str(&prof, prof.funcs[f].symbol), name) == 0)
			return f;
	ck_abort_msg("no function %s", name);
	return PL_NOID;
}

/* The view of event 0 after the transform (samples: self, incl). */
static void check_func(const char *name, uint64_t self, uint64_t incl)
{
	struct pl_view v = {0};

	pl_view_build(&v, &prof, 0);
	ck_assert_msg(v.funcs[func(name)].self.samples == self && v.funcs[func(name)].incl.samples == incl,
		      "%s: self %llu incl %llu, wanted %llu %llu", name,
		      (unsigned long long)v.funcs[func(name)].self.samples,
		      (unsigned long long)v.funcs[func(name)].incl.samples,
		      (unsigned long long)self, (unsigned long long)incl);
	pl_view_release(&v);
}

static void apply(struct pl_transform_stats *st)
{
	ck_assert_int_eq(pl_transform_apply(&tf, &prof, 0, st, &err), PL_OK);
}

START_TEST(focus_and_ignore_read_the_stacks_as_recorded)
{
	struct pl_transform_stats st;

	feed_all();
	ck_assert_int_eq(pl_transform_set(&tf, PL_TF_FOCUS, "^hash$", &err), PL_OK);
	ck_assert_int_eq(pl_transform_set(&tf, PL_TF_IGNORE, "^render$", &err), PL_OK);
	/* hide removes the focused frame, yet the stack was chosen before */
	ck_assert_int_eq(pl_transform_set(&tf, PL_TF_HIDE, "^hash$", &err), PL_OK);
	apply(&st);
	ck_assert_uint_eq(st.before.samples, 100);
	ck_assert_uint_eq(st.kept.samples, 30);
	ck_assert_uint_eq(st.dropped[PL_TF_IGNORE].samples, 50);
	ck_assert_uint_eq(st.dropped[PL_TF_FOCUS].samples, 20);
	check_func("parse", 30, 30);
	check_func("hash", 0, 0);
	/* function ids are the whole profile's */
	ck_assert_uint_eq(func("main"), 0);
}
END_TEST

START_TEST(under_keeps_a_function_called_from_its_caller_only)
{
	struct pl_transform_stats st;

	feed_all();
	ck_assert_int_eq(pl_transform_set(&tf, PL_TF_FOCUS, "^hash$", &err), PL_OK);
	ck_assert_int_eq(pl_transform_set(&tf, PL_TF_UNDER, "^render$", &err), PL_OK);
	apply(&st);
	ck_assert_uint_eq(st.kept.samples, 10);
	check_func("hash", 10, 10);
	check_func("parse", 0, 0);
}
END_TEST

START_TEST(show_from_cuts_above_the_first_match_and_drops_the_rest)
{
	struct pl_transform_stats st;

	feed_all();
	ck_assert_int_eq(pl_transform_set(&tf, PL_TF_SHOW_FROM, "^(render|walk)$", &err), PL_OK);
	apply(&st);
	ck_assert_uint_eq(st.kept.samples, 50);
	ck_assert_uint_eq(st.dropped[PL_TF_SHOW_FROM].samples, 50);
	check_func("main", 0, 0);
	check_func("render", 0, 50);
	check_func("walk", 0, 40);
	ck_assert(st.stacks_rewritten == 2);
}
END_TEST

START_TEST(merge_gives_a_functions_weight_to_its_caller_and_collapse_folds_recursion)
{
	struct pl_transform_stats st;
	struct pl_callpaths cp = {0};

	feed_all();
	feed("fmt", 5);   /* a root frame stays: nothing to fold it into */
	ck_assert_int_eq(pl_transform_set(&tf, PL_TF_MERGE, "^fmt$", &err), PL_OK);
	tf.collapse_recursion = true;
	apply(&st);
	ck_assert_uint_eq(st.kept.samples, 105);
	check_func("walk", 40, 40);
	check_func("fmt", 5, 5);
	pl_callpaths_build(&cp, &prof, 0, PL_NOID);
	for (size_t i = 0; i < cp.n; i++)
		for (uint32_t d = 1; d < cp.paths[i].depth; d++)
			ck_assert_uint_ne(cp.paths[i].funcs[d], cp.paths[i].funcs[d - 1]);
	pl_callpaths_release(&cp);
}
END_TEST

START_TEST(hide_of_every_frame_drops_the_stack_and_rewritten_stacks_merge)
{
	struct pl_transform_stats st;

	feed_all();
	ck_assert_int_eq(pl_transform_set(&tf, PL_TF_HIDE, "^(main|parse|render|tok|walk|fmt)$", &err), PL_OK);
	apply(&st);
	/* "main;parse;hash" and "main;render;hash" both become "hash" */
	ck_assert_uint_eq(st.kept.samples, 40);
	ck_assert_uint_eq(st.dropped[PL_TF_HIDE].samples, 60);
	check_func("hash", 40, 40);
	ck_assert_uint_eq(prof.events[0].samples, 100);   /* the input's totals stay */
}
END_TEST

START_TEST(a_bad_pattern_names_its_field_and_position)
{
	ck_assert_int_eq(pl_transform_set(&tf, PL_TF_FOCUS, "ab[c", &err), PL_ERR_USAGE);
	ck_assert_ptr_nonnull(strstr(err.text, "view.focus"));
	ck_assert_ptr_nonnull(strstr(err.text, "byte 2"));
	ck_assert_ptr_nonnull(strstr(err.hint, "POSIX extended"));
	ck_assert_int_eq(pl_transform_set(&tf, PL_TF_HIDE, "(x)\\1", &err), PL_ERR_USAGE);
	ck_assert_ptr_nonnull(strstr(err.text, "back-reference at byte 3"));
	ck_assert_int_eq(pl_transform_set(&tf, PL_TF_HIDE, "a\\\\1", &err), PL_OK);   /* an escaped backslash */
	ck_assert_int_eq(pl_transform_set(&tf, PL_TF_MERGE, "", &err), PL_ERR_USAGE);
	ck_assert_ptr_nonnull(strstr(err.text, "view.merge is empty"));
}
END_TEST

/* glibc's regcomp copies the operand of + and {n}: nested or stacked
 * repetitions would take memory exponential in the pattern's length. */
START_TEST(repetitions_that_would_blow_up_regcomp_are_refused)
{
	ck_assert_int_eq(pl_transform_set(&tf, PL_TF_FOCUS, "a+++++++++++++++++++++++++++++++++++", &err), PL_ERR_USAGE);
	ck_assert_ptr_nonnull(strstr(err.text, "quantifier after a quantifier at byte 2"));
	ck_assert_int_eq(pl_transform_set(&tf, PL_TF_FOCUS, "((((((((((((((((a+)+)+)+)+)+)+)+)+)+)+)+)+)+)+)+)+", &err), PL_ERR_USAGE);
	ck_assert_ptr_nonnull(strstr(err.text, "repeats too much"));
	ck_assert_int_eq(pl_transform_set(&tf, PL_TF_FOCUS, "((a{100}){100}){3}", &err), PL_ERR_USAGE);
	/* ordinary patterns pass */
	ck_assert_int_eq(pl_transform_set(&tf, PL_TF_FOCUS, "^(std::)?vector<.*>::push_back$", &err), PL_OK);
	ck_assert_int_eq(pl_transform_set(&tf, PL_TF_FOCUS, "(a{100}){100}", &err), PL_OK);
	ck_assert_int_eq(pl_transform_set(&tf, PL_TF_FOCUS, "[]+*]+x{2,3}|[[:alpha:]]+", &err), PL_OK);
	ck_assert_int_eq(pl_transform_set(&tf, PL_TF_FOCUS, "a\\\\++", &err), PL_ERR_USAGE);   /* an escaped backslash, then + + */
	ck_assert_int_eq(pl_transform_set(&tf, PL_TF_FOCUS, "a\\++", &err), PL_OK);      /* a literal plus, repeated */
}
END_TEST

Suite *suite_transform(void)
{
	Suite *s = suite_create("transform");
	TCase *tc = tcase_create("transform");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, focus_and_ignore_read_the_stacks_as_recorded);
	tcase_add_test(tc, under_keeps_a_function_called_from_its_caller_only);
	tcase_add_test(tc, show_from_cuts_above_the_first_match_and_drops_the_rest);
	tcase_add_test(tc, merge_gives_a_functions_weight_to_its_caller_and_collapse_folds_recursion);
	tcase_add_test(tc, hide_of_every_frame_drops_the_stack_and_rewritten_stacks_merge);
	tcase_add_test(tc, a_bad_pattern_names_its_field_and_position);
	tcase_add_test(tc, repetitions_that_would_blow_up_regcomp_are_refused);
	suite_add_tcase(s, tc);
	return s;
}
