/* test_hotidx.c - the hotspot index: list_hotspots answers the same bytes
 * from the index as from the summary, for every order, filter and page;
 * an index that is absent, truncated, foreign, stale or corrupt is not
 * used; the same summary gives the same index file. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "store/hotidx.h"
#include "tools/registry.h"

#define ID "an-0123456789abcdef0123"

static char root[64];

static json_t *cost(int samples, int period, double pct)
{
	return json_pack("{s:i,s:i,s:f}", "samples", samples, "period", period, "percent", pct);
}

static json_t *hot(int fn, int ss, int sp, double spct, int is, int ip, double ipct)
{
	return json_pack("{s:i,s:o,s:o}", "function", fn, "self", cost(ss, sp, spct),
			 "inclusive", cost(is, ip, ipct));
}

/* Two events; ties in inclusive weight broken by samples, self weight,
 * symbol and index; names with quotes, non-ASCII and a null DSO. */
static json_t *summary(void)
{
	json_t *funcs = json_pack("[{s:s,s:s,s:s},{s:s,s:n,s:s},{s:s,s:s,s:s},{s:s,s:s,s:s},{s:s,s:s,s:s}]",
		"symbol", "main", "dso", "/bin/a b", "kind", "user",
		"symbol", "f\"quoted\" \xc3\xa9", "dso", "kind", "user",
		"symbol", "g", "dso", "/lib/x.so", "kind", "user",
		"symbol", "g", "dso", "/lib/y.so", "kind", "user",
		"symbol", "schedule", "dso", "[kernel.kallsyms]", "kind", "kernel");
	json_t *v0 = json_pack("[o,o,o,o,o]",
		hot(2, 40, 40, 40.0, 40, 40, 40.0), hot(3, 30, 30, 30.0, 40, 40, 40.0),
		hot(1, 20, 20, 20.0, 60, 60, 60.0), hot(4, 10, 10, 10.0, 10, 10, 10.0),
		hot(0, 0, 0, 0.0, 100, 100, 100.0));
	json_t *v1 = json_pack("[o,o]", hot(4, 7, 7000, 70.0, 7, 7000, 70.0),
			       hot(0, 3, 3000, 30.0, 10, 10000, 100.0));

	return json_pack("{s:[{s:s},{s:s}],s:o,s:[{s:s,s:s,s:{s:i,s:i},s:o},{s:s,s:s,s:{s:i,s:i},s:o}]}",
		"events", "name", "cpu-clock", "name", "cycles", "functions", funcs,
		"views", "event", "cpu-clock", "unit", "samples", "total", "samples", 100, "period", 100,
		"hotspots", v0, "event", "cycles", "unit", "events", "total", "samples", 10, "period", 10000,
		"hotspots", v1);
}

static void setup(void)
{
	char path[128];
	json_t *s = summary();

	snprintf(root, sizeof(root), "/tmp/pl-hotidx-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(root));
	snprintf(path, sizeof(path), "%s/analyses", root);
	ck_assert_int_eq(mkdir(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/analyses/%s.json", root, ID);
	ck_assert_int_eq(json_dump_file(s, path, JSON_COMPACT | JSON_REAL_PRECISION(10)), 0);
	json_decref(s);
}

static void teardown(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	ck_assert_int_eq(system(cmd), 0);
}

static void index_path(char *out, size_t cap)
{
	snprintf(out, cap, "%s/cache/hotidx/%s.idx", root, ID);
}

/* list_hotspots' answer (or error text) as one string (new). */
static char *ask(bool writes, const char *event, const char *sort, double min_pct, int limit,
		 int offset, const char *cursor)
{
	struct tool_ctx ctx = {.artifact_root = root, .allow_writes = writes};
	json_t *args = json_pack("{s:s,s:s,s:i,s:i,s:f}", "analysis_id", ID, "sort", sort,
				 "limit", limit, "offset", offset, "min_percent", min_pct);
	json_t *res = NULL;
	struct pl_error err;
	char *out;

	if (event)
		json_object_set_new(args, "event", json_string(event));
	if (cursor)
		json_object_set_new(args, "cursor", json_string(cursor));
	pl_error_clear(&err);
	if (tool_list_hotspots(&ctx, args, &res, &err) == PL_OK) {
		out = json_dumps(res, JSON_COMPACT | JSON_REAL_PRECISION(10));
	} else {
		out = malloc(strlen(err.text) + strlen(err.hint) + 8);
		sprintf(out, "E:%s|%s", err.text, err.hint);
	}
	json_decref(res);
	json_decref(args);
	return out;
}

static void remove_index(void)
{
	char path[160];

	index_path(path, sizeof(path));
	unlink(path);
}

/* The same call from the summary (no index, none written) and from the
 * index (written by a first call with writes allowed). */
static int pages_with_hotspots;  /* answers that hold at least one hotspot */

static void same_both_ways(const char *event, const char *sort, double min_pct, int limit,
			   int offset, const char *cursor)
{
	char *from_summary, *from_index, path[160];
	struct stat st;

	remove_index();
	from_summary = ask(false, event, sort, min_pct, limit, offset, cursor);
	index_path(path, sizeof(path));
	ck_assert_int_ne(stat(path, &st), 0);  /* no writes: no index */
	free(ask(true, event, sort, min_pct, limit, offset, cursor));
	ck_assert_int_eq(stat(path, &st), 0);
	from_index = ask(false, event, sort, min_pct, limit, offset, cursor);
	ck_assert_str_eq(from_index, from_summary);
	if (strstr(from_summary, "\"hotspot_id\""))
		pages_with_hotspots++;
	free(from_summary);
	free(from_index);
}

START_TEST(index_pages_equal_summary_pages)
{
	static const char *const events[] = {NULL, "cpu-clock", "cycles", "nope"};
	static const char *const sorts[] = {"self", "inclusive"};
	static const double mins[] = {0, 10, 35, 101};
	static const int limits[] = {1, 2, 100};
	static const int offsets[] = {0, 1, 4, 9};

	pages_with_hotspots = 0;
	for (size_t e = 0; e < 4; e++)
		for (size_t s = 0; s < 2; s++)
			for (size_t m = 0; m < 4; m++)
				for (size_t l = 0; l < 3; l++)
					for (size_t o = 0; o < 4; o++)
						same_both_ways(events[e], sorts[s], mins[m], limits[l],
							       offsets[o], NULL);
	/* Not only errors and empty pages compared: every page at offset 0
	 * of 2 events x 2 orders x 3 filters below 101% x 3 limits holds one. */
	ck_assert_int_ge(pages_with_hotspots, 2 * 2 * 3 * 3);
}
END_TEST

START_TEST(index_follows_cursors_and_refuses_bad_ones)
{
	char *first = ask(true, "cpu-clock", "inclusive", 0, 2, 0, NULL);
	json_t *page = json_loads(first, 0, NULL);
	const char *next = json_string_value(json_object_get(json_object_get(page, "page"),
							      "next_cursor"));

	ck_assert_ptr_nonnull(next);
	same_both_ways("cpu-clock", "inclusive", 0, 2, 0, next);
	same_both_ways("cpu-clock", "self", 0, 2, 0, next);  /* another query's cursor */
	same_both_ways("cpu-clock", "inclusive", 0, 2, 0, "not-a-cursor");
	json_decref(page);
	free(first);
}
END_TEST

/* Overwrite `n` bytes at `off` of the index file. */
static void poke(long off, const void *bytes, size_t n)
{
	char path[160];
	FILE *f;

	index_path(path, sizeof(path));
	f = fopen(path, "r+b");
	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(fseek(f, off, SEEK_SET), 0);
	ck_assert_uint_eq(fwrite(bytes, 1, n, f), n);
	fclose(f);
}

static long index_size(void)
{
	char path[160];
	struct stat st;

	index_path(path, sizeof(path));
	ck_assert_int_eq(stat(path, &st), 0);
	return (long)st.st_size;
}

START_TEST(bad_indexes_are_not_used)
{
	char *want = ask(false, "cycles", "inclusive", 0, 5, 0, NULL), *got, path[160];
	static const unsigned char junk[4] = {0xff, 0xff, 0xff, 0x7f};
	struct pl_hotidx *x;
	long size;

	free(ask(true, "cycles", "self", 0, 5, 0, NULL));
	x = pl_hotidx_open(root, ID);
	ck_assert_ptr_nonnull(x);
	pl_hotidx_close(x);
	size = index_size();
	index_path(path, sizeof(path));
	ck_assert_int_eq(truncate(path, size - 1), 0);  /* truncated */
	ck_assert_ptr_null(pl_hotidx_open(root, ID));
	remove_index();
	free(ask(true, "cycles", "self", 0, 5, 0, NULL));
	poke(0, "PLHOTIX9", 8);  /* another format */
	ck_assert_ptr_null(pl_hotidx_open(root, ID));
	remove_index();
	free(ask(true, "cycles", "self", 0, 5, 0, NULL));
	poke(24, junk, 4);  /* the entry count: sizes no longer add up */
	ck_assert_ptr_null(pl_hotidx_open(root, ID));
	/* Strings past the pool: the view is refused, or the page is. */
	remove_index();
	free(ask(true, "cycles", "self", 0, 5, 0, NULL));
	for (long off = index_size() - 4 * 1024; off < index_size() - 64; off += 4) {
		if (off < 96)
			continue;
		poke(off, junk, 4);
	}
	got = ask(false, "cycles", "inclusive", 0, 5, 0, NULL);
	ck_assert_str_eq(got, want);
	free(got);
	free(want);
}
END_TEST

START_TEST(stale_or_foreign_indexes_are_not_used)
{
	char src[160], dst[160], cmd[800];
	struct pl_hotidx *x;

	free(ask(true, NULL, "self", 0, 5, 0, NULL));
	/* The summary changed size since: stale. */
	snprintf(src, sizeof(src), "%s/analyses/%s.json", root, ID);
	snprintf(cmd, sizeof(cmd), "printf ' ' >> '%s'", src);
	ck_assert_int_eq(system(cmd), 0);
	ck_assert_ptr_null(pl_hotidx_open(root, ID));
	/* Another analysis' index under this name: foreign. */
	index_path(src, sizeof(src));
	snprintf(dst, sizeof(dst), "%s/analyses/an-ffffffffffffffffffff.json", root);
	snprintf(cmd, sizeof(cmd), "cp '%s/analyses/%s.json' '%s' && cp '%s' '%s/cache/hotidx/an-ffffffffffffffffffff.idx'",
		 root, ID, dst, src, root);
	ck_assert_int_eq(system(cmd), 0);
	x = pl_hotidx_open(root, "an-ffffffffffffffffffff");
	ck_assert_ptr_null(x);
}
END_TEST

START_TEST(same_summary_same_index)
{
	char path[160], cmd[800];

	free(ask(true, NULL, "self", 0, 5, 0, NULL));
	index_path(path, sizeof(path));
	snprintf(cmd, sizeof(cmd), "cp '%s' '%s.first'", path, path);
	ck_assert_int_eq(system(cmd), 0);
	remove_index();
	free(ask(true, "cycles", "inclusive", 0, 1, 0, NULL));
	snprintf(cmd, sizeof(cmd), "cmp -s '%s' '%s.first'", path, path);
	ck_assert_int_eq(system(cmd), 0);
}
END_TEST

Suite *suite_hotidx(void)
{
	Suite *s = suite_create("hotidx");
	TCase *tc = tcase_create("core");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, index_pages_equal_summary_pages);
	tcase_add_test(tc, index_follows_cursors_and_refuses_bad_ones);
	tcase_add_test(tc, bad_indexes_are_not_used);
	tcase_add_test(tc, stale_or_foreign_indexes_are_not_used);
	tcase_add_test(tc, same_summary_same_index);
	suite_add_tcase(s, tc);
	return s;
}
