/* test_time_window.c - sample times: the perf script parser keeps each
 * record's time, the stack table keeps them, a time window rebuilds the
 * weights from only its samples (ids unchanged), timelines bucket them,
 * and folded input has none to cut.
 */
#include <check.h>
#include <string.h>

#include "testlib.h"

#include "profile/parse.h"
#include "profile/time_window.h"
#include "profile/timeline.h"
#include "store/stack_table.h"

static struct pl_profile prof, back;

static void setup(void)
{
	pl_profile_init(&prof, NULL);
	pl_profile_init(&back, NULL);
}

static void teardown(void)
{
	pl_profile_release(&prof);
	pl_profile_release(&back);
}

/* Records at 1.0, 1.1, 1.2 (another stack), 1.3 (another event), 1.4 s. */
static const char sample[] =
	"app 10/11 [000] 1.0: 100 cycles:\n"
	"\t    1 leaf+0x1 (/bin/a)\n\t    2 mid (/bin/a)\n\t    3 main (/bin/a)\n\n"
	"app 10/12 [000] 1.1: 200 cycles:\n"
	"\t    1 leaf+0x1 (/bin/a)\n\t    2 mid (/bin/a)\n\t    3 main (/bin/a)\n\n"
	"app 10/11 [000] 1.2: 50 cycles:\n"
	"\t    4 other (/bin/a)\n\t    2 mid (/bin/a)\n\t    3 main (/bin/a)\n\n"
	"app 10/11 [000] 1.3: 7 instructions:\n"
	"\t    3 main (/bin/a)\n\n"
	"app 10/11 [000] 1.4: 9 cycles:\n"
	"\t    1 leaf+0x1 (/bin/a)\n\t    2 mid (/bin/a)\n\t    3 main (/bin/a)\n\n";

static int add_to_buf(const char *s, size_t n, void *data)
{
	pl_buf_add(data, s, n);
	return 0;
}

START_TEST(time_window_keeps_only_its_samples)
{
	struct pl_window_stats st;
	struct pl_error err;
	uint32_t cycles;

	ck_assert_int_eq(feed_script(&prof, sample), PL_OK);
	ck_assert_uint_eq(prof.timed.n, 5);
	ck_assert_uint_eq(prof.timed.v[0].time_ns, 1000000000ull);
	cycles = pl_find_event(&prof, "cycles");
	/* [0.05, 0.25) s after the first sample: the records at 1.1 and 1.2 */
	ck_assert_int_eq(pl_profile_time_window(&prof, 0.05, 0.25, &st, &err), PL_OK);
	ck_assert_uint_eq(st.kept, 2);
	ck_assert_uint_eq(prof.events[cycles].period, 250);
	ck_assert_ptr_null(pl_stack_weight(&prof, 0, cycles));   /* 1.0 and 1.4: outside */
	ck_assert_uint_eq(pl_stack_weight(&prof, 1, cycles)->period, 200);
	ck_assert_uint_eq(pl_stack_weight(&prof, 2, cycles)->period, 50);
	ck_assert_uint_eq(pl_nfuncs(&prof), 4);                   /* ids unchanged */
	ck_assert_int_eq(pl_profile_time_window(&prof, 0.3, 0.2, NULL, &err), PL_ERR_USAGE);
}
END_TEST

START_TEST(times_survive_the_stack_table)
{
	struct pl_buf a = {0}, b = {0};
	struct pl_error err;
	json_error_t je;
	json_t *doc;

	ck_assert_int_eq(feed_script(&prof, sample), PL_OK);
	ck_assert(pl_stack_table_write(&prof, add_to_buf, &a));
	/* cycles: 0 (stack 0), +0.1 s (stack 1, period 200), +0.1 s (stack 2, 50), +0.2 s (stack 0, 9) */
	ck_assert_ptr_nonnull(strstr(a.data, "\"timed\":{\"first_ns\":1000000000,\"past_cap\":0,\"untimed\":0,"
					    "\"events\":[{\"event\":0,\"samples\":[\"0:0:100 100000000:1:200 "
					    "100000000:2:50 200000000:0:9\"]},{\"event\":1,\"samples\":[\"300000000:3:7\"]}]}"));
	doc = json_loads(a.data, 0, &je);
	back.want_timed = true;
	ck_assert_int_eq(pl_stack_table_read(&back, doc, "an-00000000000000000000", &err), PL_OK);
	json_decref(doc);
	ck_assert_uint_eq(back.timed.n, 5);
	ck_assert(pl_stack_table_write(&back, add_to_buf, &b));
	ck_assert_str_eq(a.data, b.data);
	pl_buf_release(&a);
	pl_buf_release(&b);
}
END_TEST

START_TEST(timeline_buckets_an_event_and_a_function)
{
	struct pl_timeline t;
	struct pl_error err;
	uint32_t cycles, other = PL_NOID;

	ck_assert_int_eq(feed_script(&prof, sample), PL_OK);
	cycles = pl_find_event(&prof, "cycles");
	for (uint32_t f = 0; f < pl_nfuncs(&prof); f++)
		if (strcmp(pl_str(&prof, prof.funcs[f].symbol), "other") == 0)
			other = f;
	/* a 0.4 s span in at most 5 buckets: 0.1 s each, 5 of them */
	ck_assert_int_eq(pl_timeline_build(&t, &prof, cycles, 5, other, 0, 0, &err), PL_OK);
	ck_assert_uint_eq(t.width_ns, 100000000ull);
	ck_assert_uint_eq(t.n, 5);
	ck_assert_uint_eq(t.all[0].period, 100);
	ck_assert_uint_eq(t.all[3].samples, 0);   /* the instructions record */
	ck_assert_uint_eq(t.all[4].period, 9);
	ck_assert_uint_eq(t.func[2].period, 50);
	ck_assert_uint_eq(t.func_total.samples, 1);
	pl_timeline_release(&t);
	ck_assert_uint_eq(pl_timeline_width(0, 50), 1);
	ck_assert_uint_eq(pl_timeline_width(1200000000ull, 50), 50000000ull);
}
END_TEST

START_TEST(folded_input_has_no_time_to_cut)
{
	struct pl_error err;
	uint32_t ev = pl_intern_event(&prof, "unknown", 7);

	ck_assert_int_eq(pl_folded_line(&prof, ev, "main;a 3", 8, 1, &err), PL_OK);
	ck_assert_int_eq(pl_folded_line(&prof, ev, "main;b 2", 8, 2, &err), PL_OK);
	ck_assert_uint_eq(prof.timed.n, 0);
	ck_assert_int_eq(pl_profile_time_window(&prof, 0, 1, NULL, &err), PL_ERR_UNSUPPORTED);
	ck_assert_ptr_nonnull(strstr(err.text, "folded"));
	ck_assert_ptr_nonnull(strstr(err.hint, "perf script"));
}
END_TEST

START_TEST(samples_past_the_cap_are_counted)
{
	struct pl_buf a = {0};
	uint32_t cycles;

	ck_assert_int_eq(feed_script(&prof, sample), PL_OK);
	cycles = pl_find_event(&prof, "cycles");
	while (prof.timed.n < PL_MAX_TIMED)
		pl_add_timed(&prof, 0, cycles, 2000000000ull + prof.timed.n, 1);
	pl_add_timed(&prof, 0, cycles, 3000000000ull, 1);
	pl_add_timed(&prof, 0, cycles, (uint64_t)INT64_MAX + 1, 1);   /* no clock reads so */
	ck_assert_uint_eq(prof.timed.n, PL_MAX_TIMED);
	ck_assert_uint_eq(prof.timed.past_cap, 1);
	ck_assert_uint_eq(prof.timed.untimed, 1);
	ck_assert(pl_stack_table_write(&prof, add_to_buf, &a));
	ck_assert_ptr_nonnull(strstr(a.data, "\"timed\":{\"first_ns\":1000000000,\"past_cap\":1,\"untimed\":1,"));
	pl_buf_release(&a);
}
END_TEST

Suite *suite_time_window(void)
{
	Suite *s = suite_create("time_window");
	TCase *tc = tcase_create("core");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, time_window_keeps_only_its_samples);
	tcase_add_test(tc, times_survive_the_stack_table);
	tcase_add_test(tc, timeline_buckets_an_event_and_a_function);
	tcase_add_test(tc, folded_input_has_no_time_to_cut);
	tcase_add_test(tc, samples_past_the_cap_are_counted);
	suite_add_tcase(s, tc);
	return s;
}
