/* test_perfmap.c - JIT perf maps read as perf 6.1 reads them
 * (pdsyms.h pd_symtab_parse_perfmap).
 *
 * Cases from dso__load_perf_map: hex fields in strtoull's syntax (a 0x
 * prefix included), the last byte of each line dropped (the newline, or a
 * name's last character on a last line without one), lines whose fields
 * leave fewer than two bytes skipped, equal starts found in perf's tree
 * order, no end fixup (a size of 0 holds its start only); and the bound:
 * a line over 1 MB is not read.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "perfdata/pdsyms.h"

static const char *name_at(const struct pd_symtab *t, uint64_t ip)
{
	const struct pd_sym *s = pd_symtab_find(t, ip);

	return s ? pd_sym_name(t, s) : NULL;
}

START_TEST(perf_map_lines_read_as_perf_reads_them)
{
	static const char text[] =
		"1000 20 LazyCompile:*hot /srv/app.js:10\n"
		"0x2000 0x10 Interpreted:x\n"
		"3000 0 zero\n"
		"4000 1\n"
		"zz\n"
		"\n"
		"5000 10 lastline";
	struct pd_symtab t = {0};

	pd_symtab_parse_perfmap(&t, text, sizeof(text) - 1);
	ck_assert_uint_eq(t.n, 4);
	ck_assert_str_eq(name_at(&t, 0x1000), "LazyCompile:*hot /srv/app.js:10");
	ck_assert_str_eq(name_at(&t, 0x101f), "LazyCompile:*hot /srv/app.js:10");
	ck_assert_ptr_null(name_at(&t, 0x1021));
	ck_assert_str_eq(name_at(&t, 0x2008), "Interpreted:x");
	ck_assert_str_eq(name_at(&t, 0x3000), "zero");
	ck_assert_ptr_null(name_at(&t, 0x3001));
	ck_assert_str_eq(name_at(&t, 0x5000), "lastlin");   /* its last byte dropped, as perf does */
	pd_symtab_release(&t);
}
END_TEST

START_TEST(perf_map_equal_starts_follow_perfs_tree)
{
	static const char text[] = "2000 40 first\n2000 14 second\n";
	struct pd_symtab t = {0};

	pd_symtab_parse_perfmap(&t, text, sizeof(text) - 1);
	/* the second goes right of the first: a walk from the root finds the
	 * first, which holds the address */
	ck_assert_str_eq(name_at(&t, 0x2004), "first");
	ck_assert_str_eq(name_at(&t, 0x2030), "first");
	pd_symtab_release(&t);
}
END_TEST

START_TEST(perf_map_line_over_a_megabyte_is_not_read)
{
	size_t n = (1u << 20) + 64;
	char *text = malloc(n + 32);
	struct pd_symtab t = {0};

	memcpy(text, "1000 10 ", 8);
	memset(text + 8, 'x', n - 9);
	text[n - 1] = '\n';
	memcpy(text + n, "2000 10 okay\n", 13);
	pd_symtab_parse_perfmap(&t, text, n + 13);
	ck_assert_uint_eq(t.n, 1);
	ck_assert_str_eq(name_at(&t, 0x2000), "okay");
	ck_assert_ptr_nonnull(t.why);
	pd_symtab_release(&t);
	free(text);
}
END_TEST

Suite *suite_perfmap(void)
{
	Suite *s = suite_create("perfmap");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, perf_map_lines_read_as_perf_reads_them);
	tcase_add_test(tc, perf_map_equal_starts_follow_perfs_tree);
	tcase_add_test(tc, perf_map_line_over_a_megabyte_is_not_read);
	suite_add_tcase(s, tc);
	return s;
}
