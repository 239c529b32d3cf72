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

/* A site's packed key (profile.c) gives back its stack, event and every
 * pc: deltas up and down the whole 64-bit range, a repeated address, a
 * stack deeper than the on-stack key buffer. */
START_TEST(site_keys_read_back_exactly)
{
	struct pl_buf text = {0};
	uint64_t pcs[70], back[70];
	uint32_t stack, event, site;

	pl_buf_addf(&text, "a 1 1.0: 10 cpu-clock:\n");
	for (int i = 0; i < 70; i++)
		pl_buf_addf(&text, "\t%x f%d (/x)\n", 0x1000 + i, i);
	pl_buf_addf(&text, "\n");
	ck_assert_int_eq(feed(text.data), PL_OK);
	pl_buf_release(&text);
	ck_assert_uint_eq(pl_nstacks(&prof), 1);
	for (int i = 0; i < 70; i++)
		pcs[i] = i % 5 == 0 ? UINT64_MAX - (uint64_t)i : i % 5 == 1 ? (uint64_t)i
			: i % 5 == 2 ? 0xffffffff81234567ull : i % 5 == 3 ? 0xffffffff81234567ull : 0;
	site = pl_add_site(&prof, 0, 0, pcs, 70, 7);
	ck_assert_uint_ne(site, PL_NOID);
	ck_assert_uint_eq(pl_add_site(&prof, 0, 0, pcs, 70, 3), site);
	ck_assert_uint_eq(prof.site_samples[site], 2);
	ck_assert_uint_eq(prof.site_period[site], 10);
	ck_assert(pl_site_read(&prof, site, &stack, &event, back, 70));
	ck_assert_uint_eq(stack, 0);
	ck_assert_uint_eq(event, 0);
	ck_assert(memcmp(pcs, back, sizeof(pcs)) == 0);
	/* too small a buffer is refused, not overrun */
	ck_assert(!pl_site_read(&prof, site, &stack, &event, back, 69));
}
END_TEST

Suite *suite_aggregate(void)
{
	Suite *s = suite_create("aggregate");
	TCase *tc = tcase_create("core");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, inclusive_counts_recursion_once_per_stack);
	tcase_add_test(tc, site_keys_read_back_exactly);
	suite_add_tcase(s, tc);
	return s;
}
