/* test_error.c - unit tests for error.c: names that map back to their
 * codes, and the text form, checked against texts written out by hand. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"

START_TEST(text_safe_escapes_only_text_that_is_not_utf8)
{
	char *a = pl_err_text_safe("cannot open 'a\\b'"), *b = pl_err_text_safe("cannot open 'caf\xe9'");

	ck_assert_str_eq(a, "cannot open 'a\\b'");     /* valid UTF-8: as it is */
	ck_assert_str_eq(b, "cannot open 'caf\\xe9'");  /* Latin-1: escape.h's form */
	free(a);
	free(b);
}
END_TEST

START_TEST(error_text_names_code_message_and_hint)
{
	struct pl_error e;
	char *t;

	pl_fail(&e, PL_ERR_PATH, "pass a path under an allowed root", "'%s' is outside", "caf\xe9");
	t = pl_error_text(&e);
	ck_assert_str_eq(t, "error (path_refused): 'caf\\xe9' is outside\nhint: pass a path under an allowed root");
	free(t);
	pl_fail(&e, PL_ERR_INTERNAL, NULL, "no hint here");
	t = pl_error_text(&e);
	ck_assert_str_eq(t, "error (internal): no hint here");
	free(t);
}
END_TEST

START_TEST(error_names_map_back_to_their_codes)
{
	for (int c = 0; c < PL_ERR_LAST; c++)
		ck_assert_int_eq(pl_err_from_name(pl_err_name((enum pl_err)c)), c);
	ck_assert_int_eq(pl_err_from_name("no_such_code"), PL_ERR_INTERNAL);
	ck_assert_int_eq(pl_err_from_name(NULL), PL_ERR_INTERNAL);
	ck_assert_int_eq(pl_err_from_name("timeout"), PL_ERR_TIMEOUT);
}
END_TEST

Suite *suite_error(void)
{
	Suite *s = suite_create("error");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, text_safe_escapes_only_text_that_is_not_utf8);
	tcase_add_test(tc, error_text_names_code_message_and_hint);
	tcase_add_test(tc, error_names_map_back_to_their_codes);
	suite_add_tcase(s, tc);
	return s;
}
