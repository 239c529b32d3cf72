/* test_callgraph_probe.c - unit tests for the call-graph probe's reader of
 * perf script text (callgraph_probe.c): what counts as a sample at the
 * chain's bottom, where a walk stops, and the depth half the samples
 * reach, on texts written out by hand in perf script -F ip,sym's form. */
#include <check.h>
#include <string.h>

#include "collectors/callgraph_probe.h"

/* depth_found / full_chains / samples of one chain of the reader's answer. */
static json_int_t field(json_t *r, const char *chain, const char *key)
{
	return json_integer_value(json_object_get(json_object_get(r, chain), key));
}

static json_t *read_text(const char *t)
{
	return coll_chains_from_script(t, strlen(t));
}

#define FULL_FP "\t 1 coll_chain_fp_8\n\t 2 coll_chain_fp_7\n\t 3 coll_chain_fp_6\n\t 4 coll_chain_fp_5\n" \
	"\t 5 coll_chain_fp_4\n\t 6 coll_chain_fp_3\n\t 7 coll_chain_fp_2\n\t 8 coll_chain_fp_1\n\t 9 main\n\n"

START_TEST(whole_chain_counts_as_full_depth)
{
	json_t *r = read_text(FULL_FP FULL_FP "\t 1 coll_chain_nofp_8\n\t 2 [unknown]\n\n");

	ck_assert_int_eq(json_integer_value(json_object_get(r, "samples")), 3);
	ck_assert_int_eq(field(r, "with_frame_pointers", "samples"), 2);
	ck_assert_int_eq(field(r, "with_frame_pointers", "full_chains"), 2);
	ck_assert_int_eq(field(r, "with_frame_pointers", "depth_found"), 8);
	ck_assert_int_eq(field(r, "without_frame_pointers", "depth_found"), 1);
	json_decref(r);
}
END_TEST

START_TEST(skipped_caller_ends_the_walk)
{
	/* fp_7 is missing: the chain is 1 deep, although fp_6.. follow. */
	json_t *r = read_text("\t 1 coll_chain_fp_8\n\t 3 coll_chain_fp_6\n\t 4 coll_chain_fp_5\n\n");

	ck_assert_int_eq(field(r, "with_frame_pointers", "depth_found"), 1);
	ck_assert_int_eq(field(r, "with_frame_pointers", "full_chains"), 0);
	json_decref(r);
}
END_TEST

START_TEST(frames_above_the_bottom_are_skipped_and_others_ignored)
{
	/* Kernel and clock_gettime frames above the bottom do not count
	 * against it; a sample whose first chain frame is not the bottom
	 * (caught in a link) says nothing and is left out. */
	json_t *r = read_text("\tffffffff81000130 entry_SYSCALL_64\n\t 7f clock_gettime\n" FULL_FP
			      "\t 2 coll_chain_fp_7\n\t 3 coll_chain_fp_6\n\n");

	ck_assert_int_eq(json_integer_value(json_object_get(r, "samples")), 2);
	ck_assert_int_eq(field(r, "with_frame_pointers", "samples"), 1);
	ck_assert_int_eq(field(r, "with_frame_pointers", "depth_found"), 8);
	json_decref(r);
}
END_TEST

START_TEST(depth_found_is_what_half_the_samples_reach)
{
	json_t *r = read_text(FULL_FP "\t 1 coll_chain_fp_8\n\t 2 coll_chain_fp_7\n\t 3 x\n\n"
			      "\t 1 coll_chain_fp_8\n\n");

	/* depths 8, 2, 1: half (2 of 3) reach 2. */
	ck_assert_int_eq(field(r, "with_frame_pointers", "depth_found"), 2);
	ck_assert_int_eq(field(r, "without_frame_pointers", "depth_found"), 0);
	json_decref(r);
}
END_TEST

Suite *suite_callgraph_probe(void)
{
	Suite *s = suite_create("callgraph_probe");
	TCase *tc = tcase_create("reader");

	tcase_add_test(tc, whole_chain_counts_as_full_depth);
	tcase_add_test(tc, skipped_caller_ends_the_walk);
	tcase_add_test(tc, frames_above_the_bottom_are_skipped_and_others_ignored);
	tcase_add_test(tc, depth_found_is_what_half_the_samples_reach);
	suite_add_tcase(s, tc);
	return s;
}
