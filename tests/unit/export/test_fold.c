/* test_fold.c - unit tests for the fold (export/fold.c): folded lines
 * sort byte by byte across name boundaries, as sort(1) in the C locale
 * orders stackcollapse-perf.pl's output.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "export/fold.h"
#include "profile/parse.h"

static struct pl_profile prof;

static void setup(void)
{
	pl_profile_init(&prof, NULL);
}

static void teardown(void)
{
	pl_profile_release(&prof);
}

START_TEST(folded_export_sorts_by_bytes_across_name_boundaries)
{
	/* '.' sorts before ';', and a line that ends sorts first. */
	static const char *lines[] = {"a;x 1", "a.b;y 1", "a 1"};
	struct pl_fold_opts o = {0};
	struct pl_folded f;
	struct pl_error err;
	char *out = NULL;
	size_t n = 0;
	FILE *mem;
	uint32_t ev = pl_intern_event(&prof, "unknown", 7);

	for (size_t i = 0; i < 3; i++)
		ck_assert_int_eq(pl_folded_line(&prof, ev, lines[i], strlen(lines[i]), i + 1, &err), PL_OK);
	ck_assert_int_eq(pl_fold(&f, &prof, &o, &err), PL_OK);
	mem = open_memstream(&out, &n);
	ck_assert_int_eq(pl_write_folded(mem, &f, &err), PL_OK);
	fclose(mem);
	ck_assert_str_eq(out, "a 1\na.b;y 1\na;x 1\n");
	free(out);
	pl_folded_release(&f);
}
END_TEST

Suite *suite_fold(void)
{
	Suite *s = suite_create("fold");
	TCase *tc = tcase_create("core");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, folded_export_sorts_by_bytes_across_name_boundaries);
	suite_add_tcase(s, tc);
	return s;
}
