/* test_aggregate.c - unit tests for the aggregator (profile/aggregate.c):
 * self and inclusive weight per function, inclusive counted once per
 * stack so recursion never passes 100%, and the two sort orders.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "testlib.h"

#include "profile/aggregate.h"
#include "profile/parse.h"

static struct pl_profile prof;

static void setup(void)
{
	pl_profile_init(&prof, NULL);
}

static void teardown(void)
{
	pl_profile_release(&prof);
}

/* Feed a whole text through the perf script parser. */
static enum pl_err feed(const char *text)
{
	return feed_script(&prof, text);
}

START_TEST(inclusive_counts_recursion_once_per_stack)
{
	struct pl_view v;
	ck_assert_int_eq(feed("a 1 1.0: 10 cpu-clock:\n\t1 fib (/x)\n\t2 fib (/x)\n\t3 fib (/x)\n\t4 main (/x)\n\n"
			      "a 1 1.1: 30 cpu-clock:\n\t5 work (/x)\n\t4 main (/x)\n\n"), PL_OK);
	pl_view_build(&v, &prof, 0);
	ck_assert_uint_eq(v.total.period, 40);
	/* fib: self 10, inclusive 10 (not 30); main: inclusive 40 = 100%. */
	ck_assert_uint_eq(v.funcs[0].self.period, 10);
	ck_assert_uint_eq(v.funcs[0].incl.period, 10);
	ck_assert(pl_percent(&v, v.funcs[1].incl.period) == 100.0);
	/* Sorted by self: work (30) before fib (10). */
	ck_assert_str_eq(pl_str(&prof, prof.funcs[v.hot_order[0]].symbol), "work");
	pl_view_sort(&v, PL_SORT_INCLUSIVE);
	ck_assert_str_eq(pl_str(&prof, prof.funcs[v.hot_order[0]].symbol), "main");
	pl_view_release(&v);
}
END_TEST

Suite *suite_aggregate(void)
{
	Suite *s = suite_create("aggregate");
	TCase *tc = tcase_create("core");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, inclusive_counts_recursion_once_per_stack);
	suite_add_tcase(s, tc);
	return s;
}
