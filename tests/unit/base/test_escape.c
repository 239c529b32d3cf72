/* test_escape.c - unit tests for escape.c, the escaped form of outside
 * bytes (docs/paths.md): the expected texts are written out by hand from
 * the document, every one-, two- and three-byte string round-trips, the
 * result is always UTF-8 that jansson's own check accepts, messages are
 * cut on a sequence boundary, and arguments keep their backslashes.
 */
#include <check.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/escape.h"

static char *escaped(const char *s, size_t n)
{
	struct pl_buf b = {0};

	pl_esc_add(&b, s, n);
	return b.data ? b.data : pl_xstrdup("");
}

START_TEST(escape_keeps_utf8_and_escapes_other_bytes_and_backslash)
{
	static const struct {
		const char *in, *out;
	} cases[] = {
		{"plain.folded", "plain.folded"},
		{"caf\xc3\xa9.folded", "caf\xc3\xa9.folded"},       /* UTF-8 é kept */
		{"caf\xe9.folded", "caf\\xe9.folded"},              /* Latin-1 é */
		{"a\\b", "a\\\\b"},                                 /* the escape itself */
		{"\\xe9", "\\\\xe9"},                               /* looks escaped, is not */
		{"\xff\xfe", "\\xff\\xfe"},
		{"\xc3", "\\xc3"},                                  /* cut sequence */
		{"\xed\xa0\x80", "\\xed\\xa0\\x80"},                /* a surrogate */
		{"\xf0\x9f\x94\xa5 fire", "\xf0\x9f\x94\xa5 fire"},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *e = escaped(cases[i].in, strlen(cases[i].in));
		ck_assert_str_eq(e, cases[i].out);
		ck_assert(pl_esc_needed(cases[i].in, strlen(cases[i].in)) ==
			  (strcmp(cases[i].in, cases[i].out) != 0));
		free(e);
	}
	{
		char *e = escaped("a\0b", 3);
		ck_assert_str_eq(e, "a\\x00b");
		free(e);
	}
}
END_TEST

/* Every string of up to three bytes, over a set of bytes that covers
 * each kind: the escaped form is UTF-8 (jansson takes it) and decodes
 * back to the same bytes. */
START_TEST(escape_round_trips_every_short_string)
{
	static const unsigned char alphabet[] = {0, 'a', 'x', '0', 'f', '\\', 0x7f, 0x80, 0xbf,
						 0xc3, 0xa9, 0xe2, 0x82, 0xac, 0xed, 0xf0, 0xff};
	size_t k = sizeof(alphabet);

	for (size_t total = 0; total < k * k * k; total++) {
		char in[3] = {(char)alphabet[total % k], (char)alphabet[total / k % k],
			      (char)alphabet[total / k / k]};
		for (size_t n = 1; n <= 3; n++) {
			char *e = escaped(in, n);
			struct pl_buf back = {0};
			json_t *j = json_string(e);
			ck_assert_msg(j != NULL, "jansson refused the escaped form '%s'", e);
			json_decref(j);
			pl_esc_decode_add(&back, e, strlen(e));
			ck_assert_uint_eq(back.len, n);
			ck_assert(memcmp(back.data, in, n) == 0);
			pl_buf_release(&back);
			free(e);
		}
	}
}
END_TEST

START_TEST(decode_gives_back_paths_and_refuses_nul)
{
	char out[64];

	ck_assert(pl_esc_decode("caf\\xe9.folded", out, sizeof(out)));
	ck_assert_str_eq(out, "caf\xe9.folded");
	ck_assert(pl_esc_decode("caf\\xE9", out, sizeof(out)));
	ck_assert_str_eq(out, "caf\xe9");
	ck_assert(pl_esc_decode("a\\\\b", out, sizeof(out)));
	ck_assert_str_eq(out, "a\\b");
	/* A backslash that starts no escape stays, as typed. */
	ck_assert(pl_esc_decode("a\\b\\x4\\", out, sizeof(out)));
	ck_assert_str_eq(out, "a\\b\\x4\\");
	ck_assert(!pl_esc_decode("a\\x00b", out, sizeof(out)));
	ck_assert(!pl_esc_decode("abcdef", out, 6));
	ck_assert(pl_esc_decode("abcdef", out, 7));
}
END_TEST

START_TEST(message_form_is_cut_on_a_sequence_boundary)
{
	char out[8];

	ck_assert_str_eq(pl_esc_str(out, sizeof(out), "ab\xe9\xe9"), "ab\\xe9");
	ck_assert_str_eq(pl_esc_str(out, sizeof(out), "abcd\xc3\xa9\xc3\xa9"), "abcd\xc3\xa9");
	ck_assert_str_eq(pl_esc_str(out, sizeof(out), "\\\\\\\\"), "\\\\\\\\\\\\");
	ck_assert_str_eq(pl_esc_str(out, 1, "abc"), "");
}
END_TEST

START_TEST(text_form_keeps_backslashes_and_escapes_other_bytes)
{
	struct pl_buf b = {0};
	char out[64];

	pl_esc_add_text(&b, "caf\xe9\\x41\\\\z", strlen("caf\xe9\\x41\\\\z"));
	ck_assert_str_eq(b.data, "caf\\xe9\\x41\\\\z");
	ck_assert(pl_esc_decode(b.data, out, sizeof(out)));
	ck_assert_str_eq(out, "caf\xe9" "A\\z");
	pl_buf_release(&b);
	{
		/* What a result printed, passed back, names the same bytes. */
		char *e = escaped("d\xe9j\xe0\\vu", 7);
		pl_esc_add_text(&b, e, strlen(e));
		ck_assert(pl_esc_decode(b.data, out, sizeof(out)));
		ck_assert_str_eq(out, "d\xe9j\xe0\\vu");
		free(e);
		pl_buf_release(&b);
	}
}
END_TEST

START_TEST(message_forms_quote_bytes_and_keep_escaped_text)
{
	char out[16];
	char msg[300];

	/* The text form leaves a backslash, and so escaped text, as it is. */
	ck_assert_str_eq(pl_esc_text_str(out, sizeof(out), "a\\xe9\xff", 6), "a\\xe9\\xff");
	ck_assert_str_eq(pl_esc_text_str(out, 6, "ab\xff", 3), "ab");
	snprintf(msg, sizeof(msg), "cannot open '%s'", PL_ESC_MSG("/tmp/caf\xe9"));
	ck_assert_str_eq(msg, "cannot open '/tmp/caf\\xe9'");
}
END_TEST

Suite *suite_escape(void)
{
	Suite *s = suite_create("escape");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, escape_keeps_utf8_and_escapes_other_bytes_and_backslash);
	tcase_add_test(tc, escape_round_trips_every_short_string);
	tcase_add_test(tc, decode_gives_back_paths_and_refuses_nul);
	tcase_add_test(tc, message_form_is_cut_on_a_sequence_boundary);
	tcase_add_test(tc, text_form_keeps_backslashes_and_escapes_other_bytes);
	tcase_add_test(tc, message_forms_quote_bytes_and_keep_escaped_text);
	suite_add_tcase(s, tc);
	return s;
}
