/* test_pager.c - unit tests for the handlers' shared helpers in
 * tools/lib/common.c: cursors bound to their query, the one pager's bounds,
 * next_call text (expected strings written by hand), and the one rule
 * set that picks an event. */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "tools/registry.h"

START_TEST(cursor_round_trips_and_is_bound_to_its_query)
{
	struct pl_error err = {0};
	char cursor[32], want[64];
	size_t offset = 0;

	tool_cursor_make(cursor, sizeof(cursor), 40, "threads|an-1|cycles");
	ck_assert_int_eq(tool_cursor_parse(cursor, "threads|an-1|cycles", &offset, &err), PL_OK);
	ck_assert_uint_eq(offset, 40);
	ck_assert_int_eq(tool_cursor_parse(cursor, "threads|an-1|instructions", &offset, &err), PL_ERR_USAGE);
	snprintf(want, sizeof(want), "invalid cursor '%s'", cursor);
	ck_assert_str_eq(err.text, want);
	ck_assert_ptr_nonnull(strstr(err.hint, "next_cursor exactly"));
	ck_assert_int_eq(tool_cursor_parse("40", "q", &offset, &err), PL_ERR_USAGE);
	ck_assert_int_eq(tool_cursor_parse("x.123456", "q", &offset, &err), PL_ERR_USAGE);
	ck_assert_int_eq(tool_cursor_parse("99999999999999999999999.123456", "q", &offset, &err), PL_ERR_USAGE);
}
END_TEST

START_TEST(page_bounds_clamp_to_the_list)
{
	struct pl_error err = {0};
	struct tool_page pg;

	ck_assert_int_eq(tool_page_open(&pg, "q", NULL, 5, 10, &err), PL_OK);
	tool_page_bound(&pg, 12);
	ck_assert_uint_eq(pg.start, 5);
	ck_assert_uint_eq(pg.end, 12);
	ck_assert_uint_eq(pg.total, 12);
	/* an offset past the end is an empty last page, not an error */
	ck_assert_int_eq(tool_page_open(&pg, "q", NULL, 50, 10, &err), PL_OK);
	tool_page_bound(&pg, 12);
	ck_assert_uint_eq(pg.start, 12);
	ck_assert_uint_eq(pg.end, 12);
	/* no overflow with the largest offset */
	ck_assert_int_eq(tool_page_open(&pg, "q", NULL, SIZE_MAX, 10, &err), PL_OK);
	tool_page_bound(&pg, 3);
	ck_assert_uint_eq(pg.start, 3);
	ck_assert_uint_eq(pg.end, 3);
}
END_TEST

START_TEST(page_cursor_starts_where_the_last_page_ended)
{
	struct pl_error err = {0};
	struct tool_page pg, next;
	char cursor[32];

	ck_assert_int_eq(tool_page_open(&pg, "q|a", NULL, 0, 4, &err), PL_OK);
	tool_page_bound(&pg, 10);
	tool_page_stop(&pg, 3);   /* a budget ended it early */
	ck_assert_uint_eq(pg.end, 3);
	memcpy(cursor, pg.next, sizeof(cursor));
	/* the cursor wins over an offset */
	ck_assert_int_eq(tool_page_open(&next, "q|a", cursor, 7, 4, &err), PL_OK);
	tool_page_bound(&next, 10);
	ck_assert_uint_eq(next.start, 3);
	ck_assert_uint_eq(next.end, 7);
	ck_assert_int_eq(tool_page_open(&next, "q|b", cursor, 0, 4, &err), PL_ERR_USAGE);
}
END_TEST

START_TEST(page_json_has_next_only_before_the_end)
{
	struct pl_error err = {0};
	struct tool_page pg;
	json_t *args = json_pack("{s:s}", "kind", "all"), *page;

	tool_page_open(&pg, "q", NULL, 0, 2, &err);
	tool_page_bound(&pg, 3);
	page = tool_page_json(&pg, tool_page_call(&pg, "list_artifacts", args, NULL));
	ck_assert_int_eq(json_integer_value(json_object_get(page, "returned")), 2);
	ck_assert_int_eq(json_integer_value(json_object_get(page, "total_items")), 3);
	ck_assert_str_eq(json_string_value(json_object_get(page, "next_cursor")), pg.next);
	ck_assert_ptr_nonnull(strstr(json_string_value(json_object_get(page, "next_call")), "cursor=\"2."));
	json_decref(page);
	tool_page_open(&pg, "q", NULL, 2, 2, &err);
	tool_page_bound(&pg, 3);
	ck_assert_ptr_null(tool_page_call(&pg, "list_artifacts", args, NULL));
	page = tool_page_json(&pg, NULL);
	ck_assert(json_is_null(json_object_get(page, "next_cursor")));
	ck_assert(json_is_null(json_object_get(page, "next_call")));
	json_decref(page);
	json_decref(args);
}
END_TEST

START_TEST(call_text_quotes_every_value_as_json)
{
	json_t *args = json_pack("{s:s,s:i,s:f,s:f,s:b,s:n,s:[s]}", "event", "ev\"q\\x", "limit", 5,
				 "min_percent", 0.1, "threshold", 5.0, "exports", 0, "name", "offsets", "0x1");
	json_t *t = tool_call_text("list_hotspots", args);

	ck_assert_str_eq(json_string_value(t),
		"list_hotspots(event=\"ev\\\"q\\\\x\", limit=5, min_percent=0.1, threshold=5.0, exports=false, "
		"name=null, offsets=[\"0x1\"])");
	json_decref(t);
	json_decref(args);
}
END_TEST

START_TEST(page_call_drops_offset_and_lays_keys_over)
{
	struct pl_error err = {0};
	struct tool_page pg;
	char want[200];
	json_t *args = json_pack("{s:s,s:i,s:s,s:s,s:b}", "baseline_id", "a", "offset", 3, "cursor", "old",
				 "path_cursor", "p", "exports", 1);
	json_t *t;

	tool_page_open(&pg, "q", NULL, 0, 1, &err);
	tool_page_bound(&pg, 5);
	t = tool_page_call(&pg, "compare_profiles", args,
			   json_pack("{s:s,s:b,s:n}", "event", "cycles", "exports", 0, "path_cursor"));
	snprintf(want, sizeof(want), "compare_profiles(baseline_id=\"a\", exports=false, event=\"cycles\", cursor=\"%s\")",
		 pg.next);
	ck_assert_str_eq(json_string_value(t), want);
	json_decref(t);
	/* the other list's pager names its own cursor */
	pg.cursor_key = "path_cursor";
	t = tool_page_call(&pg, "compare_profiles", args, json_pack("{s:n}", "cursor"));
	snprintf(want, sizeof(want), "compare_profiles(baseline_id=\"a\", exports=true, path_cursor=\"%s\")", pg.next);
	ck_assert_str_eq(json_string_value(t), want);
	json_decref(t);
	json_decref(args);
}
END_TEST

START_TEST(long_values_are_never_cut)
{
	char name[5001];
	json_t *args, *t;

	memset(name, 'x', sizeof(name) - 1);
	name[sizeof(name) - 1] = '\0';
	args = json_pack("{s:s}", "event", name);
	t = tool_call_text("list_threads", args);
	ck_assert_uint_eq(strlen(json_string_value(t)), strlen("list_threads(event=\"\")") + 5000);
	json_decref(t);
	json_decref(args);
}
END_TEST

START_TEST(one_rule_set_picks_an_event)
{
	const char *two[] = {"cycles", "instructions"}, *one[] = {"cpu-clock"}, *odd[] = {NULL, "b"};
	struct pl_error err = {0};
	size_t i = 99;

	ck_assert_int_eq(tool_pick_name(two, 2, "instructions", false, "profile", &i, &err), PL_OK);
	ck_assert_uint_eq(i, 1);
	ck_assert_int_eq(tool_pick_name(one, 1, NULL, false, "profile", &i, &err), PL_OK);
	ck_assert_uint_eq(i, 0);
	ck_assert_int_eq(tool_pick_name(two, 2, NULL, true, "profile", &i, &err), PL_OK);
	ck_assert_uint_eq(i, 0);
	ck_assert_int_eq(tool_pick_name(two, 2, NULL, false, "profile", &i, &err), PL_ERR_USAGE);
	ck_assert_str_eq(err.text, "this profile holds several events; choices: cycles, instructions");
	ck_assert_int_eq(tool_pick_name(two, 2, "cache-misses", false, "profile", &i, &err), PL_ERR_USAGE);
	ck_assert_str_eq(err.text, "event 'cache-misses' is not in this profile; choices: cycles, instructions");
	ck_assert_int_eq(tool_pick_name(odd, 2, "x", false, "analysis", &i, &err), PL_ERR_USAGE);
	ck_assert_str_eq(err.text, "event 'x' is not in this profile; choices: ?, b");
	ck_assert_int_eq(tool_pick_name(NULL, 0, NULL, true, "analysis", &i, &err), PL_ERR_MALFORMED);
	ck_assert_str_eq(err.text, "the analysis holds no samples");
}
END_TEST

START_TEST(summary_events_follow_the_same_rules)
{
	json_t *summary = json_pack("{s:[{s:s},{s:s}]}", "events", "name", "cycles", "name", "ev\"q");
	struct pl_error err = {0};
	size_t i = 99;

	ck_assert_int_eq(tool_pick_summary_event(summary, "ev\"q", &i, &err), PL_OK);
	ck_assert_uint_eq(i, 1);
	ck_assert_int_eq(tool_pick_summary_event(summary, NULL, &i, &err), PL_ERR_USAGE);
	ck_assert_str_eq(err.text, "this profile holds several events; choices: cycles, ev\"q");
	json_decref(summary);
}
END_TEST

Suite *suite_pager(void)
{
	Suite *s = suite_create("pager");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, cursor_round_trips_and_is_bound_to_its_query);
	tcase_add_test(tc, page_bounds_clamp_to_the_list);
	tcase_add_test(tc, page_cursor_starts_where_the_last_page_ended);
	tcase_add_test(tc, page_json_has_next_only_before_the_end);
	tcase_add_test(tc, call_text_quotes_every_value_as_json);
	tcase_add_test(tc, page_call_drops_offset_and_lays_keys_over);
	tcase_add_test(tc, long_values_are_never_cut);
	tcase_add_test(tc, one_rule_set_picks_an_event);
	tcase_add_test(tc, summary_events_follow_the_same_rules);
	suite_add_tcase(s, tc);
	return s;
}
