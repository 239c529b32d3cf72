/* test_report.c - unit tests for the Markdown evidence report over
 * several analyses of one run (evidence/report.h): every analysis is
 * named, each event labelled with its analysis, the candidates of another
 * analysis carry its id, and events are never merged.  The whole report
 * on real captures: tests/integration/test_classify.sh and
 * test_threads.sh.
 */
#include <check.h>
#include <string.h>

#include "evidence/classify.h"
#include "evidence/report.h"
#include "profile/parse.h"

#define MAIN_ID "an-00000000000000000001"
#define OFF_ID "an-00000000000000000002"

/* Folded lines "a;b;c N", one per line, into `p` under `event`. */
static void feed(struct pl_profile *p, const char *event, const char *text)
{
	struct pl_error err;
	uint32_t ev = pl_intern_event(p, event, strlen(event));
	uint64_t line_no = 0;

	while (*text) {
		const char *nl = strchr(text, '\n');
		size_t n = nl ? (size_t)(nl - text) : strlen(text);
		ck_assert_int_eq(pl_folded_line(p, ev, text, n, ++line_no, &err), PL_OK);
		text += n + (nl ? 1 : 0);
	}
}

START_TEST(a_report_over_two_analyses_keeps_each_event_with_its_analysis)
{
	struct pl_profile on, off;
	struct pl_report_part more;
	struct pl_report_in in = {.analysis_id = MAIN_ID, .problem = "slow", .metric = "ops/s",
				  .only_event = PL_NOID, .more = &more, .nmore = 1};
	struct pl_error err;
	struct pl_buf md;
	json_t *summary, *cands, *c;
	bool off_lock = false;
	size_t i;

	pl_profile_init(&on, NULL);
	pl_profile_init(&off, NULL);
	feed(&on, "cpu-clock", "main;malloc;_int_malloc 600\nmain;work 1400\n");
	feed(&off, "off-cpu-us", "reader;read;ksys_read;anon_pipe_read;schedule 700\n"
			       "counter;pthread_mutex_lock;futex_wait;schedule 300\n");
	in.p = &on;
	in.summary = json_object();
	more = (struct pl_report_part){OFF_ID, &off, json_object()};
	ck_assert_int_eq(pl_rules_builtin(&in.rules, &err), PL_OK);
	ck_assert_int_eq(pl_report_build(&in, &md, &summary, &err), PL_OK);
	ck_assert_ptr_nonnull(strstr(md.data, "- Analysis: `" MAIN_ID "`"));
	ck_assert_ptr_nonnull(strstr(md.data, "- With analysis: `" OFF_ID "`"));
	ck_assert_ptr_nonnull(strstr(md.data, "### Event `cpu-clock` of `" MAIN_ID "`"));
	ck_assert_ptr_nonnull(strstr(md.data, "### Event `off-cpu-us` of `" OFF_ID "`"));
	ck_assert_int_eq(json_integer_value(json_object_get(summary, "events")), 2);
	cands = json_object_get(summary, "candidates");
	json_array_foreach(cands, i, c) {
		off_lock |= strcmp(json_string_value(c), OFF_ID ":lock_wait@off-cpu-us") == 0;
		ck_assert_ptr_null(strstr(json_string_value(c), "memory_allocation@off-cpu-us"));
	}
	ck_assert(off_lock);
	json_decref(summary);
	json_decref(in.summary);
	json_decref(more.summary);
	pl_buf_release(&md);
	pl_profile_release(&on);
	pl_profile_release(&off);
}
END_TEST

Suite *suite_report(void)
{
	Suite *s = suite_create("report");
	TCase *tc = tcase_create("report");

	tcase_add_test(tc, a_report_over_two_analyses_keeps_each_event_with_its_analysis);
	suite_add_tcase(s, tc);
	return s;
}
