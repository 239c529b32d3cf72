/* test_symbolize.c - unit tests for the libdw symbolizer: the answer
 * cache, module reuse by build-id, bad inputs, and one real answer
 * checked against this file's own source position.
 *
 * The test binary is built with -g, so it symbolizes itself: the module
 * offset of a function is its address minus the load bias that the
 * dynamic linker reports (dl_iterate_phdr), which is the verified base the engine
 * insists on being given.
 */
#include <check.h>
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "symbols/symbolize.h"

__attribute__((noinline, used)) int symbolize_test_target(int x);
enum { TARGET_FIRST = __LINE__ + 1 };  /* the lines the function spans */
__attribute__((noinline, used)) int symbolize_test_target(int x)
{
	return x * 3 + 1;
}
enum { TARGET_LAST = __LINE__ - 1 };

static struct pl_sym_cfg no_cfg;

/* The running test binary and the module offset of `fn` in it. */
static const char *self_path(char *buf, size_t cap)
{
	ssize_t n = readlink("/proc/self/exe", buf, cap - 1);

	ck_assert(n > 0);
	buf[n] = '\0';
	return buf;
}

static int first_object(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	*(uintptr_t *)data = (uintptr_t)info->dlpi_addr;
	return 1;  /* the first object is the program itself */
}

/* The program's load bias (0 for ET_EXEC) taken from the dynamic linker. */
static uint64_t module_offset(const void *fn)
{
	uintptr_t bias = 0;

	dl_iterate_phdr(first_object, &bias);
	return (uint64_t)((uintptr_t)fn - bias);
}

START_TEST(symbolize_names_a_function_of_this_file)
{
	struct pl_symbolizer *s = pl_symbolizer_new(&no_cfg, NULL);
	struct pl_sym_module *m;
	const struct pl_sym_answer *a;
	struct pl_error err;
	char path[4096];

	ck_assert_int_eq(pl_symbolizer_open(s, self_path(path, sizeof(path)), &m, &err), PL_OK);
	ck_assert_int_eq(pl_sym_lookup(s, m, module_offset((const void *)symbolize_test_target), true,
				       &a, &err), PL_OK);
	ck_assert(a->resolved);
	ck_assert_str_eq(a->function, "symbolize_test_target");
	ck_assert_uint_eq(a->function_offset, 0);
	ck_assert_ptr_nonnull(a->file);
	ck_assert_ptr_nonnull(strstr(a->file, "test_symbolize.c"));
	ck_assert_uint_ge(a->line, TARGET_FIRST);
	ck_assert_uint_le(a->line, TARGET_LAST);
	ck_assert_str_eq(a->dwarf_subprogram, "symbolize_test_target");
	ck_assert_uint_eq(a->ninlines, 0);
	pl_symbolizer_free(s);
}
END_TEST

START_TEST(repeated_lookups_come_from_the_cache)
{
	struct pl_symbolizer *s = pl_symbolizer_new(&no_cfg, NULL);
	struct pl_sym_module *m;
	const struct pl_sym_answer *a, *b;
	struct pl_sym_stats st;
	struct pl_error err;
	char path[4096];
	uint64_t off = module_offset((const void *)symbolize_test_target) + 1;

	ck_assert_int_eq(pl_symbolizer_open(s, self_path(path, sizeof(path)), &m, &err), PL_OK);
	ck_assert_int_eq(pl_sym_lookup(s, m, off, true, &a, &err), PL_OK);
	for (int i = 0; i < 1000; i++) {
		ck_assert_int_eq(pl_sym_lookup(s, m, off, true, &b, &err), PL_OK);
		ck_assert_ptr_eq(a, b);
	}
	pl_symbolizer_stats(s, &st);
	ck_assert_uint_eq(st.lookups, 1001);
	ck_assert_uint_eq(st.cache_hits, 1000);
	ck_assert_uint_eq(st.answers, 1);
	ck_assert_uint_eq(a->function_offset, 1);
	pl_symbolizer_free(s);
}
END_TEST

START_TEST(a_chain_is_added_to_an_answer_cached_without_it)
{
	struct pl_symbolizer *s = pl_symbolizer_new(&no_cfg, NULL);
	struct pl_sym_module *m;
	const struct pl_sym_answer *a, *b;
	struct pl_error err;
	char path[4096];
	uint64_t off = module_offset((const void *)symbolize_test_target);

	ck_assert_int_eq(pl_symbolizer_open(s, self_path(path, sizeof(path)), &m, &err), PL_OK);
	ck_assert_int_eq(pl_sym_lookup(s, m, off, false, &a, &err), PL_OK);
	ck_assert_ptr_null(a->dwarf_subprogram);
	ck_assert_int_eq(pl_sym_lookup(s, m, off, true, &b, &err), PL_OK);
	ck_assert_ptr_eq(a, b);  /* filled in place: earlier pointers stay valid */
	ck_assert_str_eq(b->dwarf_subprogram, "symbolize_test_target");
	pl_symbolizer_free(s);
}
END_TEST

START_TEST(the_same_file_twice_is_one_module)
{
	struct pl_symbolizer *s = pl_symbolizer_new(&no_cfg, NULL);
	struct pl_sym_module *m1, *m2, *m3;
	struct pl_sym_stats st;
	struct pl_error err;
	char path[4096], link[64];

	self_path(path, sizeof(path));
	ck_assert_int_eq(pl_symbolizer_open(s, path, &m1, &err), PL_OK);
	ck_assert_int_eq(pl_symbolizer_open(s, "/proc/self/exe", &m2, &err), PL_OK);
	ck_assert_ptr_eq(m1, m2);
	snprintf(link, sizeof(link), "/tmp/pl-sym-unit-%d", (int)getpid());
	ck_assert_int_eq(symlink(path, link), 0);
	ck_assert_int_eq(pl_symbolizer_open(s, link, &m3, &err), PL_OK);
	unlink(link);
	ck_assert_ptr_eq(m1, m3);
	if (pl_sym_module_build_id(m1)) {
		ck_assert_int_eq(pl_symbolizer_open_build_id(s, pl_sym_module_build_id(m1), &m2, &err),
				 PL_OK);
		ck_assert_ptr_eq(m1, m2);
	}
	pl_symbolizer_stats(s, &st);
	ck_assert_uint_eq(st.modules, 1);
	pl_symbolizer_free(s);
}
END_TEST

START_TEST(bad_inputs_are_errors_with_reasons)
{
	struct pl_symbolizer *s = pl_symbolizer_new(&no_cfg, NULL);
	struct pl_sym_module *m;
	const struct pl_sym_answer *a;
	struct pl_error err;
	char path[4096], junk[64];
	FILE *f;

	ck_assert_int_eq(pl_symbolizer_open(s, "/nonexistent/x", &m, &err), PL_ERR_INPUT);
	snprintf(junk, sizeof(junk), "/tmp/pl-sym-junk-%d", (int)getpid());
	f = fopen(junk, "w");
	fputs("this is not an ELF file\n", f);
	fclose(f);
	ck_assert_int_eq(pl_symbolizer_open(s, junk, &m, &err), PL_ERR_UNSUPPORTED);
	ck_assert_ptr_nonnull(strstr(err.text, "not an ELF"));
	unlink(junk);
	ck_assert_int_eq(pl_symbolizer_open_build_id(s, "xyz", &m, &err), PL_ERR_USAGE);
	ck_assert_int_eq(pl_symbolizer_open_build_id(s, "abc", &m, &err), PL_ERR_USAGE);
	/* A well-formed build-id nobody has: "not found", naming where. */
	ck_assert_int_eq(pl_symbolizer_open_build_id(s, "00112233445566778899aabbccddeeff00112233",
						     &m, &err), PL_ERR_INPUT);
	ck_assert_ptr_nonnull(strstr(err.text, "/usr/lib/debug/.build-id/00/"));
	ck_assert_int_eq(pl_symbolizer_open(s, self_path(path, sizeof(path)), &m, &err), PL_OK);
	ck_assert_int_eq(pl_sym_lookup(s, m, UINT64_MAX - 7, true, &a, &err), PL_OK);
	ck_assert(!a->resolved);
	ck_assert_ptr_nonnull(strstr(a->reason, "outside the executable sections"));
	ck_assert_int_eq(pl_sym_lookup(s, m, 0, true, &a, &err), PL_OK);
	ck_assert(!a->resolved);
	pl_symbolizer_free(s);
}
END_TEST

START_TEST(open_dso_checks_the_build_id)
{
	struct pl_sym_cfg cfg = {0};
	struct pl_symbolizer *s;
	struct pl_sym_module *m, *m2;
	struct pl_error err;
	char path[4096], id[PL_BUILD_ID_HEX_MAX];

	self_path(path, sizeof(path));
	cfg.module_maps[0] = (struct pl_path_map){"/device/bin/app", path};
	cfg.nmodule_maps = 1;
	s = pl_symbolizer_new(&cfg, NULL);
	ck_assert_int_eq(pl_symbolizer_open_dso(s, "/device/bin/app", NULL, &m, &err), PL_OK);
	ck_assert_str_eq(pl_sym_module_path(m), path);
	if (pl_sym_module_build_id(m)) {
		snprintf(id, sizeof(id), "%s", pl_sym_module_build_id(m));
		ck_assert_int_eq(pl_symbolizer_open_dso(s, "/device/bin/app", id, &m2, &err), PL_OK);
		ck_assert_ptr_eq(m, m2);
		/* Another build-id: the mapped file is refused, never used. */
		id[0] = id[0] == '0' ? '1' : '0';
		ck_assert_int_eq(pl_symbolizer_open_dso(s, "/device/bin/app", id, &m2, &err),
				 PL_ERR_INPUT);
		ck_assert_ptr_nonnull(strstr(err.text, path));
	}
	ck_assert_int_eq(pl_symbolizer_open_dso(s, "/device/lib/other.so", NULL, &m2, &err),
			 PL_ERR_INPUT);
	ck_assert_ptr_nonnull(strstr(err.hint, "--module-map"));
	pl_symbolizer_free(s);
}
END_TEST

START_TEST(free_accepts_null)
{
	pl_symbolizer_free(NULL);
}
END_TEST

Suite *suite_symbolize(void)
{
	Suite *s = suite_create("symbolize");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, symbolize_names_a_function_of_this_file);
	tcase_add_test(tc, repeated_lookups_come_from_the_cache);
	tcase_add_test(tc, a_chain_is_added_to_an_answer_cached_without_it);
	tcase_add_test(tc, the_same_file_twice_is_one_module);
	tcase_add_test(tc, bad_inputs_are_errors_with_reasons);
	tcase_add_test(tc, open_dso_checks_the_build_id);
	tcase_add_test(tc, free_accepts_null);
	suite_add_tcase(s, tc);
	return s;
}
