/* test_pdkindex.c - the kallsyms index (perfdata/pdkindex.h) answers as
 * the parsed kallsyms table does, and refuses what it was not made as.
 *
 * The oracle is pdsyms.c's own parse of the same text (itself checked
 * against perf script by the perf.data integration tests): every lookup
 * at each symbol's start, middle and last byte, in the gaps, and past
 * the ends must give the same symbol (start, end, name) or none.  The
 * running kernel's /proc/kallsyms is the big case when its addresses are
 * readable.  Refusals: each byte of a small index flipped, every
 * truncation, another copy, another version; a table whose ranges
 * overlap is not indexed at all.
 */
#include <check.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "perfdata/pdkindex.h"

static const char SMALL[] =
	"ffffffff81000000 T _text\n"
	"ffffffff81000000 T startup_64\n"
	"ffffffff81000100 t secondary\n"
	"ffffffff81000100 W secondary_weak\n"
	"ffffffff81000200 r ro_data_skipped\n"
	"ffffffff81000300 T do_work\n"
	"ffffffff81000300 t __do_work\n"
	"ffffffff81002000 D some_data\n"
	"ffffffff81003000 b bss_thing\n"
	"ffffffff81004000 a absolute_skipped\n"
	"ffffffffc0000000 t mod_fn\t[mod]\n"
	"ffffffffc0000040 T mod_other\t[mod]\n";

static const struct pd_kindex_source SRC = {1, 2, 3, 4, 5};

static void same_answer(const struct pd_symtab *a, const struct pd_symtab *b, uint64_t ip)
{
	const struct pd_sym *x = pd_symtab_find(a, ip), *y = pd_symtab_find(b, ip);

	ck_assert_msg(!x == !y, "at %#llx: %s vs %s", (unsigned long long)ip, x ? pd_sym_name(a, x) : "none",
		      y ? pd_sym_name(b, y) : "none");
	if (!x)
		return;
	ck_assert_uint_eq(x->start, y->start);
	ck_assert_uint_eq(x->end, y->end);
	ck_assert_str_eq(pd_sym_name(a, x), pd_sym_name(b, y));
}

/* Every lookup of interest on `text`, parsed against indexed. */
static size_t compare_all(const char *text, size_t n, uint64_t delta)
{
	struct pd_symtab parsed, indexed;
	struct pd_kindex x;
	size_t len = 0, checked = 0;
	struct pl_error err;
	void *blob = pd_kindex_build(text, n, delta, &SRC, &len);

	ck_assert_ptr_nonnull(blob);
	ck_assert_msg(pd_kindex_check(blob, len, &SRC, &x, &err) == PL_OK, "refused: %s", err.text);
	pd_kindex_adopt(&x, &indexed);
	pd_symtab_load_kallsyms(&parsed, text, n, delta);
	ck_assert_ptr_nonnull(parsed.flat);
	for (size_t k = 0; k < parsed.nflat; k++) {
		const struct pd_sym *s = &parsed.v[parsed.flat[k]];
		uint64_t probes[] = {s->start, s->start + (s->end - s->start) / 2, s->end - 1, s->end, s->start - 1};
		for (size_t i = 0; i < sizeof(probes) / sizeof(probes[0]); i++, checked++)
			same_answer(&parsed, &indexed, probes[i]);
	}
	same_answer(&parsed, &indexed, 0);
	same_answer(&parsed, &indexed, UINT64_MAX);
	ck_assert_uint_eq(indexed.nflat, parsed.nflat);
	pd_symtab_release(&indexed);
	pd_symtab_release(&parsed);
	free(blob);
	return checked;
}

START_TEST(small_table_answers_as_parsed)
{
	ck_assert_uint_gt(compare_all(SMALL, strlen(SMALL), 0), 20);
	ck_assert_uint_gt(compare_all(SMALL, strlen(SMALL), 0x1000), 20);
}
END_TEST

START_TEST(running_kernel_answers_as_parsed)
{
	char *text = NULL;
	size_t n = 0, cap = 0;
	char buf[1 << 16];
	ssize_t k;
	int fd = open("/proc/kallsyms", O_RDONLY | O_CLOEXEC);

	if (fd < 0) {
		printf("# skip: /proc/kallsyms cannot be read\n");
		return;
	}
	while ((k = read(fd, buf, sizeof(buf))) > 0) {
		if (n + (size_t)k + 1 > cap) {
			cap = (n + (size_t)k + 1) * 2;
			text = realloc(text, cap);
		}
		memcpy(text + n, buf, (size_t)k);
		n += (size_t)k;
	}
	close(fd);
	if (!text || strncmp(text, "0000000000000000", 16) == 0) {
		printf("# skip: /proc/kallsyms hides its addresses (kptr_restrict)\n");
		free(text);
		return;
	}
	/* The test of the whole table: a non-flat kallsyms is not indexed. */
	struct pd_symtab t;
	pd_symtab_load_kallsyms(&t, text, n, 0);
	bool flat = t.flat != NULL;
	pd_symtab_release(&t);
	if (flat)
		ck_assert_uint_gt(compare_all(text, n, 0), 100000);
	else
		printf("# skip: this kernel's kallsyms overlaps, so it has no index\n");
	free(text);
}
END_TEST

START_TEST(damaged_or_foreign_index_is_refused)
{
	size_t len = 0;
	struct pd_kindex x;
	struct pl_error err;
	unsigned char *blob = pd_kindex_build(SMALL, strlen(SMALL), 0, &SRC, &len);
	struct pd_kindex_source other = SRC;

	ck_assert_ptr_nonnull(blob);
	for (size_t i = 0; i < len; i++) {
		blob[i] ^= 0x40;
		ck_assert_msg(pd_kindex_check(blob, len, &SRC, &x, &err) == PL_ERR_MALFORMED, "byte %zu flipped was taken", i);
		blob[i] ^= 0x40;
	}
	for (size_t cut = 0; cut < len; cut++)
		ck_assert_int_eq(pd_kindex_check(blob, cut, &SRC, &x, &err), PL_ERR_MALFORMED);
	other.ino++;
	ck_assert_int_eq(pd_kindex_check(blob, len, &other, &x, &err), PL_ERR_MALFORMED);
	ck_assert_str_eq(err.text, "made from another kallsyms copy");
	ck_assert_int_eq(pd_kindex_check(blob, len, &SRC, &x, &err), PL_OK);
	ck_assert_uint_eq(x.text_addr, 0xffffffff81000000ull);
	free(blob);
}
END_TEST

START_TEST(overlapping_table_is_not_indexed)
{
	/* A module's first symbol inside the page rounding of the kernel
	 * symbol before it: perf's tree decides, and that is not stored. */
	static const char overlap[] = "ffffffff81000000 T _text\n"
				      "ffffffff81001000 T last_kernel\n"
				      "ffffffff81001800 t mod_first\t[mod]\n";
	size_t len = 0;

	ck_assert_ptr_null(pd_kindex_build(overlap, strlen(overlap), 0, &SRC, &len));
}
END_TEST

START_TEST(index_path_is_beside_the_copy_only)
{
	char out[64];

	ck_assert(pd_kindex_path("/a/cache/kallsyms-x", out, sizeof(out)));
	ck_assert_str_eq(out, "/a/cache/kallsyms-x.index");
	ck_assert(!pd_kindex_path("/proc/kallsyms", out, sizeof(out)));
	ck_assert(!pd_kindex_path("/a/very/long/path/that/does/not/fit/in/the/buffer/given", out, 16));
}
END_TEST

Suite *suite_pdkindex(void)
{
	Suite *s = suite_create("pdkindex");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, small_table_answers_as_parsed);
	tcase_add_test(tc, running_kernel_answers_as_parsed);
	tcase_add_test(tc, damaged_or_foreign_index_is_refused);
	tcase_add_test(tc, overlapping_table_is_not_indexed);
	tcase_add_test(tc, index_path_is_beside_the_copy_only);
	suite_add_tcase(s, tc);
	return s;
}
