/* test_agent_json.c - the device agent's own JSON reader and writer
 * (agent/json.c) against jansson, the server's library, as the oracle:
 * on a fixed list of valid and invalid texts and on thousands of random
 * mutations of them, both must agree on accept/reject and, when both
 * accept, on every value (types, integers, doubles bit for bit, string
 * bytes, members).  The one documented difference: the agent refuses
 * nesting deeper than AJ_MAX_DEPTH (jansson allows 2048), so generated
 * texts stay shallower.  The writer's output must parse in jansson to the
 * escaped form of docs/paths.md (tools/core/base/escape.c, an
 * implementation that shares no code with the agent's). */
#include <check.h>
#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "agent/json.h"
#include "base/escape.h"

static const char *const CASES[] = {
	"{}", "[]", "{\"a\":1}", "[1,2,3]", "{\"a\":{\"b\":[true,false,null]}}",
	"\"str\"", "0", "-0", "1", "-1", "1.5", "-1.5e3", "1E+2", "1e-2", "0.0",
	"9223372036854775807", "-9223372036854775808", "9223372036854775808",
	"-9223372036854775809", "1e400", "-1e400", "1e-400", "123456789012345678901234567890.5",
	"01", "-", "1.", ".5", "+1", "1e", "1e+", "0x10", "NaN", "Infinity", "tru", "nul", "falsey",
	"[1,]", "[,1]", "{\"a\":1,}", "{\"a\"}", "{\"a\" 1}", "{a:1}", "{\"a\":1 \"b\":2}", "[1 2]",
	"{\"a\":1,\"a\":2}", "{\"a\":1,\"b\":{\"a\":2}}", "\"\\u0000\"", "\"a\\u0041b\"",
	"\"\\ud83d\\ude00\"", "\"\\ud83d\"", "\"\\ude00\"", "\"\\ud83dx\"", "\"\\ud83d\\u0041\"",
	"\"\\x41\"", "\"\\'\"", "\"\\/\\b\\f\\n\\r\\t\\\"\\\\\"", "\"tab\there\"", "\"nl\nhere\"",
	"\"caf\xc3\xa9\"", "\"\xe9\"", "\"\xc0\xaf\"", "\"\xed\xa0\x80\"", "\"\xf4\x90\x80\x80\"",
	"\"\xf0\x9f\x98\x80\"", "\"\xe2\x82\"", " \t\r\n{} \n", "{} x", "{}{}", "[[[[[]]]]]",
	"{\"id\":\"a1\",\"cmd\":\"start\",\"args\":{\"pid\":12,\"events\":[\"cpu-clock\"]}}",
	"{\"\":0}", "{\"k\\u00e9\":1}", "[\"\\uDBFF\\uDFFF\"]", "[1.7976931348623157e308]",
	"[4.9e-324]", "[-0.0]", "[1e5, 2E-5, 3.25e+10]", "", " ", "[", "]", "{", "\"abc",
	"\"\\u12\"", "\"\\u12G4\"", "[true false]", "[nulll]", "[\"a\"\"b\"]",
};

/* Do jansson's value and ours match?  Returns NULL or what differs. */
static const char *same(const struct json_doc *d, const struct json_node *n, const json_t *j)
{
	switch (n->type) {
	case AJ_NULL: return json_is_null(j) ? NULL : "null";
	case AJ_TRUE: return json_is_true(j) ? NULL : "true";
	case AJ_FALSE: return json_is_false(j) ? NULL : "false";
	case AJ_INT:
		return json_is_integer(j) && json_integer_value(j) == n->i ? NULL : "integer";
	case AJ_REAL:
		return json_is_real(j) && memcmp(&(double){json_real_value(j)}, &n->d, sizeof n->d) == 0
			       ? NULL : "real";
	case AJ_STRING:
		return json_is_string(j) && json_string_length(j) == n->len &&
				       memcmp(json_string_value(j), n->str, n->len) == 0 ? NULL : "string";
	case AJ_ARRAY: {
		if (!json_is_array(j) || json_array_size(j) != n->count)
			return "array size";
		size_t i = 0;
		for (const struct json_node *c = aj_first(d, n); c; c = aj_next(d, c), i++) {
			const char *why = same(d, c, json_array_get(j, i));
			if (why)
				return why;
		}
		return NULL;
	}
	case AJ_OBJECT: {
		if (!json_is_object(j) || json_object_size(j) != n->count)
			return "object size";
		for (const struct json_node *c = aj_first(d, n); c; c = aj_next(d, c)) {
			const json_t *v = json_object_getn(j, c->key, c->key_len);
			if (!v)
				return "missing key";
			const char *why = same(d, c, v);
			if (why)
				return why;
		}
		return NULL;
	}
	}
	return "type";
}

/* One text through both: NULL when they agree. */
static const char *agree(const char *text, size_t len)
{
	static char msg[512];
	json_error_t err;
	struct json_doc d;
	json_t *j = json_loadb(text, len, JSON_DECODE_ANY | JSON_REJECT_DUPLICATES, &err);
	int ours = aj_parse(&d, text, len, 100000, AJ_ANY_VALUE);
	const char *why = NULL;
	if ((j != NULL) != (ours == 0)) {
		snprintf(msg, sizeof msg, "jansson %s (%s), agent %s (%s)", j ? "accepts" : "rejects",
			 j ? "" : err.text, ours == 0 ? "accepts" : "rejects", ours == 0 ? "" : d.err);
		why = msg;
	} else if (j) {
		why = same(&d, aj_root(&d), j);
	}
	json_decref(j);
	aj_free(&d);
	return why;
}

START_TEST(reader_agrees_with_jansson_on_the_cases)
{
	for (size_t i = 0; i < sizeof CASES / sizeof CASES[0]; i++) {
		const char *why = agree(CASES[i], strlen(CASES[i]));
		ck_assert_msg(why == NULL, "case %zu '%s': %s", i, CASES[i], why);
	}
}
END_TEST

START_TEST(reader_agrees_with_jansson_on_mutations)
{
	static const char alphabet[] = "{}[],:\"\\ 0123456789.eE+-truefalsnu\xc3\xa9\xed\xa0\xff\x01\n";
	unsigned seed = 12345;
	int accepted = 0;
	for (int round = 0; round < 20000; round++) {
		const char *base = CASES[(size_t)rand_r(&seed) % (sizeof CASES / sizeof CASES[0])];
		char buf[512];
		size_t n = strlen(base);
		memcpy(buf, base, n);
		int edits = 1 + rand_r(&seed) % 4;
		for (int e = 0; e < edits; e++) {
			int op = rand_r(&seed) % 3;
			size_t at = n ? (size_t)rand_r(&seed) % (n + 1) : 0;
			char c = alphabet[(size_t)rand_r(&seed) % (sizeof alphabet - 1)];
			if (op == 0 && n + 1 < sizeof buf) {           /* insert */
				memmove(buf + at + 1, buf + at, n - at);
				buf[at] = c;
				n++;
			} else if (op == 1 && at < n) {                /* replace */
				buf[at] = c;
			} else if (op == 2 && at < n) {                /* delete */
				memmove(buf + at, buf + at + 1, n - at - 1);
				n--;
			}
		}
		const char *why = agree(buf, n);
		ck_assert_msg(why == NULL, "mutation %d '%.*s': %s", round, (int)n, buf, why);
		struct json_doc d;
		accepted += aj_parse(&d, buf, n, 100000, AJ_ANY_VALUE) == 0;
		aj_free(&d);
	}
	ck_assert_int_gt(accepted, 1000);  /* the mutations reach valid texts too */
}
END_TEST

START_TEST(reader_refuses_deep_nesting_and_too_many_values)
{
	char deep[200];
	struct json_doc d;
	memset(deep, '[', 100);
	memset(deep + 100, ']', 100);
	ck_assert_int_eq(aj_parse(&d, deep, sizeof deep, 100000, AJ_ANY_VALUE), -1);
	ck_assert_str_eq(d.err, "nested too deeply");
	aj_free(&d);
	ck_assert_int_eq(aj_parse(&d, "[1,2,3,4]", 9, 3, AJ_ANY_VALUE), -1);
	ck_assert_str_eq(d.err, "too many values");
	aj_free(&d);
	ck_assert_int_eq(aj_parse(&d, "[1]", 3, 100, 0), -1);  /* commands must be objects */
	aj_free(&d);
}
END_TEST

START_TEST(lookups_are_scoped_to_one_object)
{
	struct json_doc d;
	const char *t = "{\"args\":{\"x\":\"\\\"pid\\\": 5\"},\"pid\":7}";
	ck_assert_int_eq(aj_parse(&d, t, strlen(t), 100, 0), 0);
	const struct json_node *args = aj_get(&d, aj_root(&d), "args");
	int64_t v = 0;
	ck_assert_int_eq(aj_get_int(&d, args, "pid", &v), 0);       /* not found inside args */
	ck_assert_int_eq(aj_get_int(&d, aj_root(&d), "pid", &v), 1);
	ck_assert_int_eq(v, 7);
	const char *s;
	ck_assert_int_eq(aj_get_int(&d, args, "x", &v), -1);        /* a string, not an int */
	ck_assert_int_eq(aj_get_str(&d, args, "x", &s), 1);
	ck_assert_str_eq(s, "\"pid\": 5");
	aj_free(&d);
}
END_TEST

/* The writer: every byte string comes back from jansson as its escaped form. */
START_TEST(writer_strings_parse_in_jansson_to_the_escaped_form)
{
	unsigned seed = 99;
	for (int round = 0; round < 3000; round++) {
		char s[64];
		size_t n = (size_t)rand_r(&seed) % sizeof s;
		for (size_t i = 0; i < n; i++) {
			int k = rand_r(&seed) % 6;
			s[i] = k == 0 ? (char)(rand_r(&seed) % 256) : k == 1 ? '\\' : k == 2 ? '"' :
			       k == 3 ? (char)(rand_r(&seed) % 32) : k == 4 ? "\xc3\xa9"[i % 2] : 'a';
		}
		struct jw w;
		jw_init(&w, 4096);
		jw_obj(&w);
		jw_key(&w, "path");
		jw_path(&w, s, n);
		jw_kint(&w, "n", (int64_t)n);
		jw_obj_end(&w);
		ck_assert(!w.overflow);
		json_error_t err;
		json_t *j = json_loadb(w.buf, w.len, 0, &err);
		ck_assert_msg(j != NULL, "jansson rejects the writer's '%s': %s", w.buf, err.text);
		struct pl_buf want = {0};
		pl_esc_add(&want, s, n);
		const json_t *p = json_object_get(j, "path");
		ck_assert_msg(json_string_length(p) == want.len &&
				      memcmp(json_string_value(p), want.data ? want.data : "", want.len) == 0,
			      "round %d: '%s' is not the escaped form '%.*s'", round, w.buf, (int)want.len,
			      want.data ? want.data : "");
		ck_assert_int_eq(json_integer_value(json_object_get(j, "n")), (json_int_t)n);
		pl_buf_release(&want);
		json_decref(j);
		jw_free(&w);
	}
}
END_TEST

START_TEST(writer_numbers_and_structure)
{
	struct jw w;
	jw_init(&w, 4096);
	jw_obj(&w);
	jw_kint(&w, "min", INT64_MIN);
	jw_kint(&w, "max", INT64_MAX);
	jw_kreal(&w, "pct", 12.345, 1);
	jw_kreal(&w, "whole", 3.0, 0);
	jw_kreal(&w, "nan", 0.0 / 0.0, 2);
	jw_key(&w, "list");
	jw_arr(&w);
	jw_bool(&w, 1);
	jw_null(&w);
	jw_obj(&w);
	jw_obj_end(&w);
	jw_arr(&w);
	jw_arr_end(&w);
	jw_arr_end(&w);
	jw_obj_end(&w);
	json_error_t err;
	json_t *j = json_loadb(w.buf, w.len, JSON_REJECT_DUPLICATES, &err);
	ck_assert_msg(j != NULL, "%s: %s", w.buf, err.text);
	ck_assert(json_integer_value(json_object_get(j, "min")) == INT64_MIN);
	ck_assert(json_integer_value(json_object_get(j, "max")) == INT64_MAX);
	ck_assert(json_real_value(json_object_get(j, "pct")) == 12.3);
	ck_assert(json_is_real(json_object_get(j, "whole")));
	ck_assert(json_is_null(json_object_get(j, "nan")));
	ck_assert_int_eq(json_array_size(json_object_get(j, "list")), 4);
	json_decref(j);
	/* A writer that runs out of room says so instead of writing half. */
	jw_reset(&w);
	w.max = 16;
	jw_obj(&w);
	jw_kstr(&w, "key", "a value that does not fit");
	jw_obj_end(&w);
	ck_assert(w.overflow);
	jw_free(&w);
}
END_TEST

Suite *suite_agent_json(void)
{
	Suite *s = suite_create("agent_json");
	TCase *tc = tcase_create("core");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, reader_agrees_with_jansson_on_the_cases);
	tcase_add_test(tc, reader_agrees_with_jansson_on_mutations);
	tcase_add_test(tc, reader_refuses_deep_nesting_and_too_many_values);
	tcase_add_test(tc, lookups_are_scoped_to_one_object);
	tcase_add_test(tc, writer_strings_parse_in_jansson_to_the_escaped_form);
	tcase_add_test(tc, writer_numbers_and_structure);
	suite_add_tcase(s, tc);
	return s;
}
