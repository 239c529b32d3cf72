/* test_util.c - unit tests for util.c: interning, hashing, number parsing. */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "base/error.h"
#include "base/util.h"

START_TEST(strtab_gives_dense_ids_in_first_seen_order)
{
	struct pl_strtab t;
	pl_strtab_init(&t);
	ck_assert_uint_eq(pl_strtab_intern(&t, "b", 1), 0);
	ck_assert_uint_eq(pl_strtab_intern(&t, "a", 1), 1);
	ck_assert_uint_eq(pl_strtab_intern(&t, "b", 1), 0);
	ck_assert_str_eq(pl_strtab_get(&t, 1), "a");
	ck_assert_uint_eq(pl_strtab_find(&t, "zz", 2), PL_NOID);
	pl_strtab_release(&t);
}
END_TEST

START_TEST(strtab_survives_rehash_and_keeps_pointers)
{
	struct pl_strtab t;
	char key[32];
	const char *first;
	pl_strtab_init(&t);
	first = pl_strtab_get(&t, pl_strtab_intern(&t, "first", 5));
	for (int i = 0; i < 100000; i++) {
		int n = snprintf(key, sizeof(key), "k%d", i);
		ck_assert_uint_eq(pl_strtab_intern(&t, key, (size_t)n), (uint32_t)i + 1);
	}
	ck_assert_str_eq(first, "first");
	ck_assert_uint_eq(pl_strtab_find(&t, "k99999", 6), 100000);
	pl_strtab_release(&t);
}
END_TEST

START_TEST(parse_u64_rejects_overflow_and_junk)
{
	uint64_t v;
	ck_assert(pl_parse_u64("18446744073709551615", 20, &v));
	ck_assert(v == UINT64_MAX);
	ck_assert(!pl_parse_u64("18446744073709551616", 20, &v));
	ck_assert(!pl_parse_u64("12a", 3, &v));
	ck_assert(!pl_parse_u64("", 0, &v));
}
END_TEST

START_TEST(error_codes_map_to_documented_exit_codes)
{
	struct pl_error e;
	ck_assert_int_eq(pl_err_exit_code(PL_OK), 0);
	ck_assert_int_eq(pl_err_exit_code(PL_ERR_USAGE), 2);
	ck_assert_int_eq(pl_err_exit_code(PL_ERR_MALFORMED), 3);
	ck_assert_int_eq(pl_err_exit_code(PL_ERR_LIMIT), 4);
	ck_assert_int_eq(pl_err_exit_code(PL_ERR_PATH), 5);
	ck_assert_int_eq(pl_err_exit_code(PL_ERR_TIMEOUT), 6);
	ck_assert_int_eq(pl_err_exit_code(PL_ERR_INTERNAL), 70);
	ck_assert_int_eq(pl_fail(&e, PL_ERR_LIMIT, "raise it", "too many %s", "x"), PL_ERR_LIMIT);
	ck_assert_str_eq(e.text, "too many x");
	ck_assert_str_eq(e.hint, "raise it");
	ck_assert_str_eq(pl_err_name(PL_ERR_LIMIT), "limit_exceeded");
}
END_TEST

Suite *suite_util(void)
{
	Suite *s = suite_create("util");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, strtab_gives_dense_ids_in_first_seen_order);
	tcase_add_test(tc, strtab_survives_rehash_and_keeps_pointers);
	tcase_add_test(tc, parse_u64_rejects_overflow_and_junk);
	tcase_add_test(tc, error_codes_map_to_documented_exit_codes);
	suite_add_tcase(s, tc);
	return s;
}
