/* test_symindex.c - unit tests for the symbol index (symindex.h) and its
 * use by the symbolizer.
 *
 * The format: rows round-trip through a blob and merge when equal, the
 * same rows give the same bytes, and a blob that is truncated, corrupt,
 * of another version or for another build-id is refused.  The symbolizer:
 * the test binary (built with -g) indexed twice gives byte-identical
 * files; its answers from the index equal the direct libdw answers at
 * thousands of addresses spread over its code (the reference the index is
 * built from; tests/integration/test_symbolize.sh checks both against
 * eu-addr2line); a corrupt index file is refused and rebuilt, and one built
 * from a file that changed since (mtime) is refused as stale.
 */
#include <check.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "symbols/symbolize.h"
#include "symbols/symindex.h"
#include "testlib.h"

static struct pl_sym_cfg idx_cfg;

/* ------------------------------------------------------------ helpers */

static const char *exe_path(char *buf, size_t cap)
{
	ssize_t n = readlink("/proc/self/exe", buf, cap - 1);

	ck_assert(n > 0);
	buf[n] = '\0';
	return buf;
}

static void tmp_dir(char *buf, size_t cap, const char *what)
{
	snprintf(buf, cap, "/tmp/pl-symidx-%s-%d-XXXXXX", what, (int)getpid());
	ck_assert_ptr_nonnull(mkdtemp(buf));
}

static void rm_rf(const char *dir)
{
	char cmd[600];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	ck_assert_int_eq(system(cmd), 0);
}

static void *read_all(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	void *p;
	long n;

	ck_assert_ptr_nonnull(f);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	p = malloc((size_t)n + 1);
	ck_assert_uint_eq(fread(p, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	*len = (size_t)n;
	return p;
}

/* A small index: two functions, lines, a two-deep chain used twice. */
static void sample_blob(const char *build_id, void **blob, size_t *len)
{
	struct pl_symindex_builder *b = pl_symindex_builder_new();
	struct pl_symindex_source src = {.has_dwarf = true, .nsyms = 2};
	struct pl_symindex_scope sc = {.dwarf_function = "inner", .dwarf_subprogram = "outer",
				       .ninl = 2};
	struct pl_error err;

	snprintf(src.build_id, sizeof(src.build_id), "%s", build_id);
	sc.inl[0] = (struct pl_symindex_inline){"inner", "a.c", 10, 3};
	sc.inl[1] = (struct pl_symindex_inline){"middle", NULL, 20, 0};
	pl_symindex_add_exec(b, 0x2000, 0x3000);
	pl_symindex_add_exec(b, 0x1000, 0x1800);
	pl_symindex_add_func(b, 0x1000, "f", 0x1000);
	pl_symindex_add_func(b, 0x1010, "f", 0x1000);       /* equal: merges */
	pl_symindex_add_func(b, 0x1100, NULL, 0);
	pl_symindex_add_func(b, 0x2000, "g", 0x1ff0);
	pl_symindex_add_line(b, 0x1000, "a.c", "/src", 5, 1);
	pl_symindex_add_line(b, 0x1004, "a.c", "/src", 6, 2);
	pl_symindex_add_line(b, 0x1100, NULL, NULL, 0, 0);
	pl_symindex_add_scope(b, 0x1000, &sc);
	pl_symindex_add_scope(b, 0x1008, &sc);               /* equal: merges */
	sc.truncated = true;
	pl_symindex_add_scope(b, 0x1010, &sc);               /* same chain, stored once */
	ck_assert_int_eq(pl_symindex_finish(b, &src, blob, len, &err), PL_OK);
}

/* ------------------------------------------------------------- format */

START_TEST(rows_round_trip_and_equal_rows_merge)
{
	struct pl_symindex *x;
	struct pl_symindex_scope sc;
	struct pl_error err;
	const char *name, *file, *dir;
	uint64_t value, a, e;
	uint32_t line, col;
	void *blob;
	size_t len;

	sample_blob("abcd", &blob, &len);
	ck_assert_int_eq(pl_symindex_from_blob(blob, len, "abcd", &x, &err), PL_OK);
	ck_assert(pl_symindex_source(x)->has_dwarf);
	ck_assert_uint_eq(pl_symindex_source(x)->nsyms, 2);
	ck_assert_uint_eq(pl_symindex_exec_count(x), 2);
	pl_symindex_exec_range(x, 0, &a, &e);           /* sorted */
	ck_assert_uint_eq(a, 0x1000);
	ck_assert_uint_eq(e, 0x1800);
	ck_assert(!pl_symindex_func(x, 0xfff, &name, &value));
	ck_assert(pl_symindex_func(x, 0x1050, &name, &value));
	ck_assert_str_eq(name, "f");
	ck_assert_uint_eq(value, 0x1000);
	ck_assert(!pl_symindex_func(x, 0x1200, &name, &value));
	ck_assert(pl_symindex_func(x, 0x2345, &name, &value));
	ck_assert_str_eq(name, "g");
	ck_assert(pl_symindex_line(x, 0x1005, &file, &dir, &line, &col));
	ck_assert_str_eq(file, "a.c");
	ck_assert_str_eq(dir, "/src");
	ck_assert_uint_eq(line, 6);
	ck_assert_uint_eq(col, 2);
	ck_assert(!pl_symindex_line(x, 0x1100, &file, &dir, &line, &col));
	pl_symindex_scope(x, 0x100c, &sc);
	ck_assert_str_eq(sc.dwarf_function, "inner");
	ck_assert_str_eq(sc.dwarf_subprogram, "outer");
	ck_assert_uint_eq(sc.ninl, 2);
	ck_assert_str_eq(sc.inl[0].call_file, "a.c");
	ck_assert_ptr_null(sc.inl[1].call_file);
	ck_assert_uint_eq(sc.inl[1].call_line, 20);
	ck_assert(!sc.truncated);
	pl_symindex_scope(x, 0x1010, &sc);
	ck_assert(sc.truncated);
	ck_assert_str_eq(sc.inl[1].function, "middle");
	pl_symindex_scope(x, 0x10, &sc);
	ck_assert_uint_eq(sc.ninl, 0);
	ck_assert_ptr_null(sc.dwarf_function);
	pl_symindex_free(x);
}
END_TEST

START_TEST(the_same_rows_give_the_same_bytes)
{
	void *a, *b;
	size_t la, lb;

	sample_blob("abcd", &a, &la);
	sample_blob("abcd", &b, &lb);
	ck_assert_uint_eq(la, lb);
	ck_assert_int_eq(memcmp(a, b, la), 0);
	free(a);
	free(b);
}
END_TEST

/* from_blob on a modified copy of `blob`: refused, with `why` named. */
static void expect_refused(const void *blob, size_t len, size_t cut, long flip_at,
			   const char *build_id, const char *why)
{
	unsigned char *copy = malloc(len);
	struct pl_symindex *x = NULL;
	struct pl_error err;

	memcpy(copy, blob, len);
	if (flip_at >= 0)
		copy[flip_at] ^= 0x40;
	ck_assert_int_eq(pl_symindex_from_blob(copy, len - cut, build_id, &x, &err),
			 PL_ERR_UNSUPPORTED);
	ck_assert_ptr_null(x);
	ck_assert_msg(strstr(err.text, why) != NULL, "'%s' lacks '%s'", err.text, why);
}

START_TEST(truncated_corrupt_and_foreign_blobs_are_refused)
{
	void *blob;
	size_t len;

	sample_blob("abcd", &blob, &len);
	expect_refused(blob, len, 1, -1, "abcd", "truncated");
	expect_refused(blob, len, len - 16, -1, "abcd", "truncated");
	expect_refused(blob, len, 0, (long)len - 20, "abcd", "checksum");  /* a row byte */
	expect_refused(blob, len, 0, (long)len / 2, "abcd", "checksum");
	expect_refused(blob, len, 0, 0, "abcd", "not a symbol index");      /* magic */
	expect_refused(blob, len, 0, 8, "abcd", "version");
	expect_refused(blob, len, 0, -1, "abce", "another build-id");
	free(blob);
}
END_TEST

START_TEST(files_are_checked_when_opened)
{
	char dir[256], path[400];
	struct pl_symindex *x;
	struct pl_error err;
	void *blob;
	size_t len;

	tmp_dir(dir, sizeof(dir), "file");
	snprintf(path, sizeof(path), "%s/sub/abcd.idx", dir);
	ck_assert_int_eq(pl_symindex_open(path, "abcd", &x, &err), PL_ERR_INPUT);
	sample_blob("abcd", &blob, &len);
	ck_assert_int_eq(pl_symindex_save(blob, len, path, &err), PL_OK);
	ck_assert_int_eq(pl_symindex_open(path, "abcd", &x, &err), PL_OK);
	ck_assert_uint_eq(pl_symindex_bytes(x), len);
	pl_symindex_free(x);
	ck_assert_int_eq(pl_symindex_open(path, "beef", &x, &err), PL_ERR_UNSUPPORTED);
	write_file(path, blob, len / 2);
	ck_assert_int_eq(pl_symindex_open(path, "abcd", &x, &err), PL_ERR_UNSUPPORTED);
	write_file(path, blob, 10);
	ck_assert_int_eq(pl_symindex_open(path, "abcd", &x, &err), PL_ERR_UNSUPPORTED);
	free(blob);
	rm_rf(dir);
}
END_TEST

/* --------------------------------------------------------- symbolizer */

/* Module offsets spread over the executable sections of `path`: every
 * `step`-th byte, and a few past the ends. */
static uint64_t *code_offsets(const char *path, size_t step, size_t *n)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	Elf *e;
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	uint64_t *v = NULL;
	size_t cap = 0;

	*n = 0;
	ck_assert_int_ge(fd, 0);
	elf_version(EV_CURRENT);
	e = elf_begin(fd, ELF_C_READ, NULL);
	ck_assert_ptr_nonnull(e);
	while ((scn = elf_nextscn(e, scn)) != NULL) {
		if (!gelf_getshdr(scn, &sh) || !(sh.sh_flags & SHF_EXECINSTR))
			continue;
		for (uint64_t a = sh.sh_addr; a < sh.sh_addr + sh.sh_size + 3; a += step) {
			if (*n == cap) {
				cap = cap ? 2 * cap : 4096;
				v = realloc(v, cap * sizeof(*v));
			}
			v[(*n)++] = a;
		}
	}
	elf_end(e);
	close(fd);
	ck_assert_uint_gt(*n, 100);
	return v;
}

static bool same_str(const char *a, const char *b)
{
	return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

static void assert_same_answer(const struct pl_sym_answer *a, const struct pl_sym_answer *b)
{
	ck_assert_msg(a->resolved == b->resolved && same_str(a->reason, b->reason) &&
			      same_str(a->function, b->function) &&
			      a->function_offset == b->function_offset && same_str(a->file, b->file) &&
			      a->line == b->line && a->column == b->column &&
			      same_str(a->comp_dir, b->comp_dir) &&
			      same_str(a->dwarf_function, b->dwarf_function) &&
			      same_str(a->dwarf_subprogram, b->dwarf_subprogram) &&
			      a->ninlines == b->ninlines &&
			      a->inlines_truncated == b->inlines_truncated &&
			      a->names_truncated == b->names_truncated,
		      "offset 0x%llx: libdw %s+%llu %s:%u vs index %s+%llu %s:%u",
		      (unsigned long long)a->offset, a->function, (unsigned long long)a->function_offset,
		      a->file, a->line, b->function, (unsigned long long)b->function_offset, b->file,
		      b->line);
	for (size_t i = 0; i < a->ninlines; i++) {
		ck_assert(same_str(a->inlines[i].function, b->inlines[i].function));
		ck_assert(same_str(a->inlines[i].call_file, b->inlines[i].call_file));
		ck_assert_uint_eq(a->inlines[i].call_line, b->inlines[i].call_line);
		ck_assert_uint_eq(a->inlines[i].call_column, b->inlines[i].call_column);
	}
}

/* Every offset looked up with libdw (index off) and through `x` (whose
 * index comes from `dir`, or memory): the same answers, with and without
 * inline chains. */
static void compare_with_libdw(const char *path, struct pl_symbolizer *x, const uint64_t *offs,
			       size_t n)
{
	struct pl_symbolizer *d = pl_symbolizer_new(&idx_cfg, NULL);
	struct pl_sym_module *md, *mx;
	const struct pl_sym_answer *a, *b;
	struct pl_error err;

	pl_symbolizer_set_index(d, PL_SYM_INDEX_OFF, NULL);
	ck_assert_int_eq(pl_symbolizer_open(d, path, &md, &err), PL_OK);
	ck_assert_int_eq(pl_symbolizer_open(x, path, &mx, &err), PL_OK);
	for (size_t i = 0; i < n; i++) {
		for (int inl = 0; inl < 2; inl++) {
			ck_assert_int_eq(pl_sym_lookup(d, md, offs[i], inl, &a, &err), PL_OK);
			ck_assert_int_eq(pl_sym_lookup(x, mx, offs[i], inl, &b, &err), PL_OK);
			assert_same_answer(a, b);
		}
	}
	ck_assert_str_eq(pl_sym_module_lookup_method(md, NULL), "libdw");
	ck_assert_str_eq(pl_sym_module_lookup_method(mx, NULL), "index");
	ck_assert_uint_eq(pl_sym_module_symbol_count(md), pl_sym_module_symbol_count(mx));
	pl_symbolizer_free(d);
}

/* A symbolizer keeping indexes in `dir`, its module for `path` prepared;
 * its stats in *st. */
static struct pl_symbolizer *indexed(const char *path, const char *dir, struct pl_sym_stats *st)
{
	struct pl_symbolizer *s = pl_symbolizer_new(&idx_cfg, NULL);
	struct pl_sym_module *m;
	struct pl_error err;

	pl_symbolizer_set_index(s, dir ? PL_SYM_INDEX_AUTO : PL_SYM_INDEX_ALWAYS, dir);
	ck_assert_int_eq(pl_symbolizer_open(s, path, &m, &err), PL_OK);
	pl_sym_module_symbol_count(m);
	pl_symbolizer_stats(s, st);
	return s;
}

/* A fresh symbolizer refuses the index in `dir`, builds it again, and
 * answers the `n` offsets as libdw does. */
static void refused_and_rebuilt(const char *path, const char *dir, const uint64_t *offs,
				size_t n)
{
	struct pl_sym_stats st;
	struct pl_symbolizer *s = indexed(path, dir, &st);

	ck_assert_uint_eq(st.indexes_refused, 1);
	ck_assert_uint_eq(st.indexes_built, 1);
	if (offs)
		compare_with_libdw(path, s, offs, n);
	pl_symbolizer_free(s);
}

START_TEST(index_answers_equal_libdw_answers)
{
	char path[4096];
	size_t n;
	uint64_t *offs = code_offsets(exe_path(path, sizeof(path)), 97, &n);
	struct pl_sym_stats st;
	struct pl_symbolizer *x = indexed(path, NULL, &st);   /* in memory */

	ck_assert_uint_eq(st.indexes_built, 1);
	compare_with_libdw(path, x, offs, n);
	pl_symbolizer_stats(x, &st);
	ck_assert_uint_eq(st.index_hits, st.lookups - st.cache_hits);
	pl_symbolizer_free(x);
	free(offs);
}
END_TEST

/* The index file of `path` in `dir` (after a symbolizer wrote it). */
static void index_file(const char *path, const char *dir, char *out, size_t cap)
{
	struct pl_symbolizer *t = pl_symbolizer_new(&idx_cfg, NULL);
	struct pl_sym_module *m;
	struct pl_error err;

	ck_assert_int_eq(pl_symbolizer_open(t, path, &m, &err), PL_OK);
	ck_assert_ptr_nonnull(pl_sym_module_build_id(m));
	snprintf(out, cap, "%s/%s.idx", dir, pl_sym_module_build_id(m));
	pl_symbolizer_free(t);
}

START_TEST(a_module_indexes_to_the_same_bytes_twice)
{
	char path[4096], d1[256], d2[256], f1[600], f2[600];
	struct pl_sym_stats st;
	void *a, *b;
	size_t la, lb;

	exe_path(path, sizeof(path));
	tmp_dir(d1, sizeof(d1), "det1");
	tmp_dir(d2, sizeof(d2), "det2");
	pl_symbolizer_free(indexed(path, d1, &st));
	ck_assert_uint_eq(st.indexes_built, 1);
	pl_symbolizer_free(indexed(path, d2, &st));
	ck_assert_uint_eq(st.indexes_built, 1);
	index_file(path, d1, f1, sizeof(f1));
	index_file(path, d2, f2, sizeof(f2));
	a = read_all(f1, &la);
	b = read_all(f2, &lb);
	ck_assert_uint_eq(la, lb);
	ck_assert_int_eq(memcmp(a, b, la), 0);
	free(a);
	free(b);
	rm_rf(d1);
	rm_rf(d2);
}
END_TEST

START_TEST(a_corrupt_or_stale_index_file_is_refused_and_rebuilt)
{
	char self[4096], dir[256], copy[600], idx[800], cmd[5000];
	struct pl_symbolizer *s;
	struct pl_sym_stats st;
	struct timespec times[2] = {{0, UTIME_OMIT}, {1000000000, 0}};
	unsigned char *blob;
	size_t len, n;
	uint64_t *offs;

	/* A copy of the test binary, so its mtime can change. */
	tmp_dir(dir, sizeof(dir), "stale");
	snprintf(copy, sizeof(copy), "%s/self", dir);
	snprintf(cmd, sizeof(cmd), "cp '%s' '%s'", exe_path(self, sizeof(self)), copy);
	ck_assert_int_eq(system(cmd), 0);
	offs = code_offsets(copy, 997, &n);
	s = indexed(copy, dir, &st);
	ck_assert_uint_eq(st.indexes_built, 1);
	pl_symbolizer_free(s);
	index_file(copy, dir, idx, sizeof(idx));

	/* Warm: loaded, not rebuilt, same answers as libdw. */
	s = indexed(copy, dir, &st);
	ck_assert_uint_eq(st.indexes_loaded, 1);
	ck_assert_uint_eq(st.indexes_built, 0);
	compare_with_libdw(copy, s, offs, n);
	pl_symbolizer_free(s);

	/* A flipped byte in the rows: refused, rebuilt, right answers. */
	blob = read_all(idx, &len);
	blob[len - 100] ^= 0x5a;
	write_file(idx, blob, len);
	refused_and_rebuilt(copy, dir, offs, n);
	free(blob);
	blob = read_all(idx, &len);   /* rewritten whole */
	s = indexed(copy, dir, &st);
	ck_assert_uint_eq(st.indexes_loaded, 1);
	pl_symbolizer_free(s);

	/* Truncated: the same. */
	write_file(idx, blob, len / 3);
	refused_and_rebuilt(copy, dir, NULL, 0);

	/* The module file changed (mtime): the index is stale. */
	ck_assert_int_eq(utimensat(AT_FDCWD, copy, times, 0), 0);
	refused_and_rebuilt(copy, dir, offs, n);
	free(blob);
	free(offs);
	rm_rf(dir);
}
END_TEST

/* DEFER answers a module without an index from libdw and builds nothing
 * on the lookup's path; pl_symbolizer_build_indexes builds and writes it
 * afterwards, and a fresh symbolizer then loads it. */
START_TEST(defer_answers_from_libdw_then_builds_off_the_path)
{
	struct pl_symbolizer *s = pl_symbolizer_new(&idx_cfg, NULL), *t;
	struct pl_sym_module *m;
	const struct pl_sym_answer *a;
	struct pl_sym_stats st;
	struct pl_error err;
	const char *note;
	char path[4096], dir[4096];

	tmp_dir(dir, sizeof(dir), "defer");
	pl_symbolizer_set_index(s, PL_SYM_INDEX_DEFER, dir);
	ck_assert_int_eq(pl_symbolizer_open(s, exe_path(path, sizeof(path)), &m, &err), PL_OK);
	ck_assert_int_eq(pl_sym_lookup(s, m, 0x1000, true, &a, &err), PL_OK);
	ck_assert_str_eq(pl_sym_module_lookup_method(m, &note), "libdw");
	ck_assert_ptr_nonnull(strstr(note, "built after this answer"));
	pl_symbolizer_stats(s, &st);
	ck_assert_uint_eq(st.indexes_built, 0);
	ck_assert_uint_eq(pl_symbolizer_indexes_wanted(s), 1);
	ck_assert_uint_eq(pl_symbolizer_build_indexes(s), 1);
	ck_assert_uint_eq(pl_symbolizer_indexes_wanted(s), 0);
	pl_symbolizer_free(s);
	t = pl_symbolizer_new(&idx_cfg, NULL);
	pl_symbolizer_set_index(t, PL_SYM_INDEX_DEFER, dir);
	ck_assert_int_eq(pl_symbolizer_open(t, path, &m, &err), PL_OK);
	ck_assert_int_eq(pl_sym_lookup(t, m, 0x1000, true, &a, &err), PL_OK);
	ck_assert_str_eq(pl_sym_module_lookup_method(m, NULL), "index");
	ck_assert_uint_eq(pl_symbolizer_indexes_wanted(t), 0);
	pl_symbolizer_free(t);
	rm_rf(dir);
}
END_TEST

START_TEST(without_a_folder_small_batches_stay_on_libdw)
{
	struct pl_symbolizer *s = pl_symbolizer_new(&idx_cfg, NULL);
	struct pl_sym_module *m;
	const struct pl_sym_answer *a;
	struct pl_sym_stats st;
	struct pl_error err;
	const char *note;
	char path[4096];

	ck_assert_int_eq(pl_symbolizer_open(s, exe_path(path, sizeof(path)), &m, &err), PL_OK);
	ck_assert_int_eq(pl_sym_lookup(s, m, 0x1000, true, &a, &err), PL_OK);
	ck_assert_str_eq(pl_sym_module_lookup_method(m, &note), "libdw");
	ck_assert_ptr_nonnull(strstr(note, "no writable cache folder"));
	pl_symbolizer_stats(s, &st);
	ck_assert_uint_eq(st.indexes_built + st.indexes_loaded, 0);
	pl_symbolizer_free(s);
}
END_TEST

Suite *suite_symindex(void)
{
	Suite *s = suite_create("symindex");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, rows_round_trip_and_equal_rows_merge);
	tcase_add_test(tc, the_same_rows_give_the_same_bytes);
	tcase_add_test(tc, truncated_corrupt_and_foreign_blobs_are_refused);
	tcase_add_test(tc, files_are_checked_when_opened);
	tcase_add_test(tc, index_answers_equal_libdw_answers);
	tcase_add_test(tc, a_module_indexes_to_the_same_bytes_twice);
	tcase_add_test(tc, a_corrupt_or_stale_index_file_is_refused_and_rebuilt);
	tcase_add_test(tc, without_a_folder_small_batches_stay_on_libdw);
	tcase_add_test(tc, defer_answers_from_libdw_then_builds_off_the_path);
	suite_add_tcase(s, tc);
	return s;
}
