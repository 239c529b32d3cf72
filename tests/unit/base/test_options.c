/* test_options.c - unit tests for options.c and the limits' table: every
 * spelling of a flag the parser takes, and what it refuses. */
#include <check.h>
#include <stddef.h>
#include <string.h>

#include "base/limits.h"
#include "base/options.h"

struct target {
	bool on;
	uint64_t big;
};

static const struct pl_option table[] = {
	{"switch", NULL, "a boolean", pl_option_bool, offsetof(struct target, on)},
	{"big", "N", "a number", pl_option_u64, offsetof(struct target, big), 100},
	{NULL},
};

/* Take argv (NULL-ended) from its first word; the taker's answer. */
static int take(struct target *t, char **argv, int *i, struct pl_error *err)
{
	struct pl_option_group g = {table, t};
	int argc = 0;

	while (argv[argc])
		argc++;
	*i = 0;
	return pl_options_take(&g, 1, argc, argv, i, err);
}

START_TEST(booleans_take_flag_true_false_and_no)
{
	struct target t = {0};
	struct pl_error err;
	int i;
	char *on[] = {"--switch", NULL}, *yes[] = {"--switch=true", NULL};
	char *no[] = {"--no-switch", NULL}, *off[] = {"--switch=false", NULL};

	ck_assert_int_eq(take(&t, on, &i, &err), 1);
	ck_assert(t.on);
	ck_assert_int_eq(take(&t, no, &i, &err), 1);
	ck_assert(!t.on);
	ck_assert_int_eq(take(&t, yes, &i, &err), 1);
	ck_assert(t.on);
	ck_assert_int_eq(take(&t, off, &i, &err), 1);
	ck_assert(!t.on);
	ck_assert_int_eq(i, 0);  /* a boolean never takes the next word */
}
END_TEST

START_TEST(booleans_refuse_other_words_and_no_with_a_value)
{
	struct target t = {0};
	struct pl_error err;
	int i;
	char *maybe[] = {"--switch=maybe", NULL}, *no_value[] = {"--no-switch=true", NULL};

	ck_assert_int_eq(take(&t, maybe, &i, &err), -1);
	ck_assert_int_eq(err.code, PL_ERR_USAGE);
	ck_assert_str_eq(err.text, "'--switch' is true or false; got 'maybe'");
	ck_assert_int_eq(take(&t, no_value, &i, &err), -1);
	ck_assert_str_eq(err.text, "'--no-switch' takes no value");
}
END_TEST

START_TEST(values_come_after_a_space_or_an_equals_sign)
{
	struct target t = {0};
	struct pl_error err;
	int i;
	char *spaced[] = {"--big", "7", NULL}, *joined[] = {"--big=9", NULL};
	char *missing[] = {"--big", NULL};
	char *other[] = {"--small", "1", NULL}, *plain[] = {"big", NULL}, *nobig[] = {"--no-big", NULL};

	ck_assert_int_eq(take(&t, spaced, &i, &err), 1);
	ck_assert_uint_eq(t.big, 7);
	ck_assert_int_eq(i, 1);
	ck_assert_int_eq(take(&t, joined, &i, &err), 1);
	ck_assert_uint_eq(t.big, 9);
	ck_assert_int_eq(take(&t, missing, &i, &err), -1);
	ck_assert_str_eq(err.text, "'--big' needs a value (N)");
	ck_assert_int_eq(take(&t, other, &i, &err), 0);
	ck_assert_int_eq(take(&t, plain, &i, &err), 0);
	ck_assert_int_eq(take(&t, nobig, &i, &err), 0);  /* --no- only for booleans */
}
END_TEST

START_TEST(limits_can_only_be_lowered)
{
	struct pl_limits lim;
	struct pl_option_group g = {pl_limit_options, &lim};
	struct pl_error err;
	char *low[] = {"--max_depth", "5", NULL}, *high[] = {"--max-depth", "4097", NULL};
	char *zero[] = {"--max-records=0", NULL}, *bytes[] = {"--max-input-bytes", "1073741824", NULL};
	int i = 0;

	pl_limits_default(&lim);
	ck_assert_int_eq(pl_options_take(&g, 1, 2, low, &i, &err), 1);
	ck_assert_uint_eq(lim.max_depth, 5);
	i = 0;
	ck_assert_int_eq(pl_options_take(&g, 1, 2, high, &i, &err), -1);
	ck_assert_str_eq(err.text, "'--max-depth' takes 1 to 4096; got '4097'");
	i = 0;
	ck_assert_int_eq(pl_options_take(&g, 1, 1, zero, &i, &err), -1);
	i = 0;
	ck_assert_int_eq(pl_options_take(&g, 1, 2, bytes, &i, &err), 1);
	ck_assert_uint_eq(lim.max_input_bytes, 1ULL << 30);
}
END_TEST

Suite *suite_options(void)
{
	Suite *s = suite_create("options");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, booleans_take_flag_true_false_and_no);
	tcase_add_test(tc, booleans_refuse_other_words_and_no_with_a_value);
	tcase_add_test(tc, values_come_after_a_space_or_an_equals_sign);
	tcase_add_test(tc, limits_can_only_be_lowered);
	suite_add_tcase(s, tc);
	return s;
}
