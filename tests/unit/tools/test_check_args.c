/* test_check_args.c - unit tests for tool_check_args (tools/registry.c)
 * against the embedded list_hotspots schema: defaults filled in, and each
 * kind of refusal (not an object, unknown key, type, enum, range,
 * pattern, missing required) with its exact message naming the fix;
 * and tool_pattern_match (tools/schema_pattern.c) against glibc's regexec,
 * the oracle, on every pattern of the embedded schemas and a few others,
 * over strings made of each pattern's own characters and beyond. */
#include <check.h>
#include <regex.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "base/schemas.h"
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

/* ------------------------------------------------ patterns vs regexec */

/* tool_pattern_match against regexec on `value`; the pattern compiled. */
static void agrees(const char *pattern, const regex_t *re, const char *value)
{
	int mine = tool_pattern_match(pattern, value);
	int theirs = regexec(re, value, 0, NULL, 0) == 0;

	if (mine != theirs)
		ck_abort_msg("pattern %s on \"%s\": %d here, regexec %d", pattern, value, mine, theirs);
}

/* Strings near what `pattern` accepts: runs of the characters it names
 * (and a few it does not) at lengths around its counts. */
static void compare_on_strings(const char *pattern)
{
	static const char *fixed[] = {
		"", "an-0123456789abcdef0123", "an-0123456789abcdef012", "an-0123456789abcdef01234",
		"an-0123456789ABCDEF0123", "fn98", "fn", "fn9x", "0x1f", "0X1F", "0x", "0xdeadbeef",
		"0xdeadbee", "bm-0123456789abcdef0123", "co-0123456789abcdef0123", "a=b", "a=", "=b",
		"key=value with spaces", "cpu-clock", "sched:sched_switch", "a/b@c,d=e:f", "a b",
		"a\n", "\xc3\xa9t\xc3\xa9", "perflens://artifacts/exports/x.svg", "perflens://artifacts/",
		"x-y_z.1", "-", ".", "~",
	};
	uint32_t seed = 2166136261u;
	char chars[128], buf[300];
	size_t nchars = 0;
	regex_t re;

	ck_assert_int_eq(regcomp(&re, pattern, REG_EXTENDED | REG_NOSUB), 0);
	for (size_t i = 0; i < sizeof(fixed) / sizeof(*fixed); i++)
		agrees(pattern, &re, fixed[i]);
	/* Every printable character the pattern names, then a few others. */
	for (const char *p = pattern; *p && nchars < sizeof(chars) - 8; p++)
		if (!memchr(chars, *p, nchars))
			chars[nchars++] = *p;
	memcpy(chars + nchars, "gZ 9%\x01\xff", 7);
	nchars += 7;
	for (int round = 0; round < 3000; round++) {
		size_t len = round % 150;
		for (size_t i = 0; i < len; i++) {
			seed = seed * 1664525u + 1013904223u;
			/* Mostly characters of one class run, as ids are. */
			buf[i] = (seed >> 24) % 8 ? chars[(seed >> 8) % (nchars - 7)] : chars[(seed >> 8) % nchars];
		}
		buf[len] = '\0';
		/* Also the pattern's own text without ^ and $: its literals. */
		if (round % 50 == 0)
			snprintf(buf, sizeof(buf), "%.*s", (int)strcspn(pattern + 1, "[$"), pattern + 1);
		agrees(pattern, &re, buf);
	}
	regfree(&re);
}

START_TEST(schema_patterns_match_as_regexec_does_without_regcomp)
{
	size_t seen = 0;

	for (const struct pl_schema_file *f = pl_schema_files; f->path; f++) {
		json_t *doc = json_loads(f->text, 0, NULL), *spec;
		json_t *props = json_object_get(json_object_get(doc, "inputSchema"), "properties");
		const char *key;

		json_object_foreach(props, key, spec) {
			const char *pat = json_string_value(json_object_get(spec, "pattern"));
			if (!pat)
				continue;
			/* Every schema pattern is matched here: no worker compiles one. */
			if (tool_pattern_match(pat, "") < 0)
				ck_abort_msg("%s: '%s' pattern %s goes to regcomp", f->path, key, pat);
			compare_on_strings(pat);
			seen++;
		}
		json_decref(doc);
	}
	ck_assert_uint_ge(seen, 30);
}
END_TEST

START_TEST(other_patterns_match_as_regexec_does_or_are_left_to_it)
{
	static const char *plain[] = {
		"^x{2,3}y?$", "^[a-]+b*$", "^[-a]{0,}c$", "^ab", "^[ -~]{0,4}=[0-9]{1}$", "^a{0}b$",
		"^[A-Za-z0-9_.-]{1,64}=[ -~]{0,128}$", "^[a-c][b-d]+[c-e]*$", "^[a-]-$",
	};
	static const char *not_plain[] = {
		"abc", "^a|b$", "^(ab)+$", "^[^a]$", "^a.c$", "^[[:alpha:]]$", "^a\\.b$", "^a{2,1}$",
		"^a{x}$", "^[]a]$", "^a$b", "^a{1001}$",
	};

	for (size_t i = 0; i < sizeof(plain) / sizeof(*plain); i++) {
		ck_assert_int_ge(tool_pattern_match(plain[i], ""), 0);
		compare_on_strings(plain[i]);
	}
	for (size_t i = 0; i < sizeof(not_plain) / sizeof(*not_plain); i++)
		if (tool_pattern_match(not_plain[i], "a") >= 0)
			ck_abort_msg("%s was matched here; regcomp should", not_plain[i]);
	/* A match past the step budget is left to regexec too. */
	{
		char s[2100];
		memset(s, 'a', sizeof(s) - 2);
		s[sizeof(s) - 2] = 'b';
		s[sizeof(s) - 1] = '\0';
		ck_assert_int_eq(tool_pattern_match("^a*a*a*a*c$", s), -1);
	}
}
END_TEST

/* A worker parses only the inputSchema of a step's tool: the check is the
 * same as with the whole definition. */
START_TEST(another_tools_arguments_are_checked_from_its_input_schema)
{
	const struct tool_def *get = tool_find("get_hotspot");
	json_t *args = json_pack("{s:s,s:s}", "analysis_id", "an-0123456789abcdef0123", "hotspot_id", "fn7");

	ck_assert_ptr_nonnull(get);
	ck_assert_int_eq(tool_check_args(get, args, &err), PL_OK);
	json_object_set_new(args, "hotspot_id", json_string("7"));
	ck_assert_int_eq(tool_check_args(get, args, &err), PL_ERR_USAGE);
	ck_assert_str_eq(err.text, "'hotspot_id' does not match ^fn[0-9]+$");
	json_decref(args);
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
	tcase_add_test(tc, schema_patterns_match_as_regexec_does_without_regcomp);
	tcase_add_test(tc, other_patterns_match_as_regexec_does_or_are_left_to_it);
	tcase_add_test(tc, another_tools_arguments_are_checked_from_its_input_schema);
	suite_add_tcase(s, tc);
	return s;
}
