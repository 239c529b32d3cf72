/* test_check_args.c - unit tests for tool_check_args (tools/registry.c)
 * against the embedded list_hotspots schema: defaults filled in, and each
 * kind of refusal (not an object, unknown key, type, enum, range,
 * pattern, missing required) with its exact message naming the fix. */
#include <check.h>
#include <string.h>

#include "tools/registry.h"

static const struct tool_def *hot;
static struct pl_error err;

static void setup(void)
{
	hot = tool_find("list_hotspots");
	ck_assert_ptr_nonnull(hot);
	pl_error_clear(&err);
}

/* tool_check_args on `text`; the arguments are freed. */
static enum pl_err check_text(const char *text)
{
	json_t *args = json_loads(text, JSON_DECODE_ANY, NULL);
	enum pl_err rc;

	ck_assert_ptr_nonnull(args);
	rc = tool_check_args(hot, args, &err);
	json_decref(args);
	return rc;
}

START_TEST(defaults_are_filled_and_whole_reals_become_integers)
{
	json_t *args = json_pack("{s:s,s:f}", "analysis_id", "an-0123456789abcdef0123", "limit", 5.0);

	ck_assert_int_eq(tool_check_args(hot, args, &err), PL_OK);
	ck_assert_str_eq(json_string_value(json_object_get(args, "sort")), "self");
	ck_assert(json_is_integer(json_object_get(args, "limit")));
	ck_assert_int_eq(json_integer_value(json_object_get(args, "limit")), 5);
	ck_assert_int_eq(json_integer_value(json_object_get(args, "offset")), 0);
	ck_assert(json_is_number(json_object_get(args, "min_percent")));
	ck_assert_ptr_null(json_object_get(args, "cursor"));
	json_decref(args);
}
END_TEST

START_TEST(arguments_must_be_an_object)
{
	ck_assert_int_eq(check_text("[1]"), PL_ERR_USAGE);
	ck_assert_str_eq(err.text, "arguments of 'list_hotspots' must be an object");
}
END_TEST

START_TEST(an_unknown_key_is_refused_naming_the_known_ones)
{
	ck_assert_int_eq(check_text("{\"analysis_id\":\"an-0123456789abcdef0123\",\"bogus\":1}"), PL_ERR_USAGE);
	ck_assert_ptr_nonnull(strstr(err.text, "unknown argument 'bogus' for 'list_hotspots' (known: analysis_id, "));
	ck_assert_str_eq(err.hint, "remove it; see the tool's inputSchema");
}
END_TEST

START_TEST(a_wrong_type_is_refused)
{
	ck_assert_int_eq(check_text("{\"analysis_id\":\"an-0123456789abcdef0123\",\"limit\":\"5\"}"), PL_ERR_USAGE);
	ck_assert_str_eq(err.text, "'limit' must be an integer");
	ck_assert_int_eq(check_text("{\"analysis_id\":\"an-0123456789abcdef0123\",\"limit\":2.5}"), PL_ERR_USAGE);
	ck_assert_str_eq(err.text, "'limit' must be an integer");
	ck_assert_int_eq(check_text("{\"analysis_id\":7}"), PL_ERR_USAGE);
	ck_assert_str_eq(err.text, "'analysis_id' must be a string");
}
END_TEST

START_TEST(enum_range_and_pattern_name_what_is_valid)
{
	ck_assert_int_eq(check_text("{\"analysis_id\":\"an-0123456789abcdef0123\",\"sort\":\"total\"}"), PL_ERR_USAGE);
	ck_assert_str_eq(err.text, "'sort' must be one of: self, inclusive");
	ck_assert_int_eq(check_text("{\"analysis_id\":\"an-0123456789abcdef0123\",\"limit\":0}"), PL_ERR_USAGE);
	ck_assert_str_eq(err.text, "'limit' must be between 1 and 100");
	ck_assert_int_eq(check_text("{\"analysis_id\":\"an-0123456789abcdef0123\",\"limit\":101}"), PL_ERR_USAGE);
	ck_assert_int_eq(check_text("{\"analysis_id\":\"an-0123\"}"), PL_ERR_USAGE);
	ck_assert_str_eq(err.text, "'analysis_id' does not match ^an-[0-9a-f]{20}$");
	ck_assert_int_eq(check_text("{\"analysis_id\":\"an-0123456789abcdef0123\",\"event\":\"\"}"), PL_ERR_USAGE);
	ck_assert_str_eq(err.text, "'event' is too short");
}
END_TEST

START_TEST(a_missing_required_argument_is_named)
{
	ck_assert_int_eq(check_text("{\"sort\":\"self\"}"), PL_ERR_USAGE);
	ck_assert_str_eq(err.text, "'list_hotspots' needs the argument 'analysis_id'");
	ck_assert_str_eq(err.hint, "add it and call again");
}
END_TEST

Suite *suite_check_args(void)
{
	Suite *s = suite_create("check_args");
	TCase *tc = tcase_create("core");

	tcase_add_checked_fixture(tc, setup, NULL);
	tcase_add_test(tc, defaults_are_filled_and_whole_reals_become_integers);
	tcase_add_test(tc, arguments_must_be_an_object);
	tcase_add_test(tc, an_unknown_key_is_refused_naming_the_known_ones);
	tcase_add_test(tc, a_wrong_type_is_refused);
	tcase_add_test(tc, enum_range_and_pattern_name_what_is_valid);
	tcase_add_test(tc, a_missing_required_argument_is_named);
	suite_add_tcase(s, tc);
	return s;
}
