/* test_summary.c - unit tests for the summary writer (store/summary.c):
 * the summary, streamed piece by piece, is laid out exactly as jansson
 * dumps it, for a parsed text and for a device session whose input hash
 * is left to the writer (checked against coreutils' sha256sum).
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testlib.h"

#include "store/artifact.h"
#include "profile/parse.h"

static struct pl_profile prof, back;

static void setup(void)
{
	pl_profile_init(&prof, NULL);
	pl_profile_init(&back, NULL);
}

static void teardown(void)
{
	pl_profile_release(&prof);
	pl_profile_release(&back);
}

static enum pl_err feed(struct pl_profile *p, const char *text)
{
	return feed_script(p, text);
}

/* Two events, srclines and an unknown frame. */
static const char sample[] =
	"app 10/11 [000] 1.0: 100 cycles:\n"
	"\t    1 leaf+0x1 (/bin/a)\n\t    2 mid (/bin/a)\n\t    3 main (/bin/a)\n\n"
	"app 10/12 [000] 1.1: 200 cycles:\n"
	"\t    1 leaf+0x1 (/bin/a)\n\t    2 mid (/bin/a)\n\t    3 main (/bin/a)\n\n"
	"app 10/11 [000] 1.2: 50 cycles:\n"
	"\t    4 other (/bin/a)\n  src.c:7\n\t    2 mid (/bin/a)\n\t    3 main (/bin/a)\n\n"
	"app 10/11 [000] 1.3: 7 instructions:\n"
	"\t    dead [unknown] ([unknown])\n\t    3 main (/bin/a)\n\n"
	"app 10/11 [000] 1.4: 9 cycles:\n"
	"\t    1 leaf+0x1 (/bin/a)\n\t    2 mid (/bin/a)\n\t    3 main (/bin/a)\n";

/* The summary, streamed piece by piece, is laid out byte for byte as
 * jansson dumps the same document whole; the brief handed back holds
 * each view's first hotspots as written, named by their functions. */
static void check_summary_layout(struct pl_profile *p)
{
	char root[] = "/tmp/perflens-sum-XXXXXX";
	struct pl_artifact_ref ref;
	struct pl_error err;
	json_t *brief = NULL, *doc, *views, *funcs;
	char *text, *again;
	size_t len, i;
	FILE *f;

	ck_assert_ptr_nonnull(mkdtemp(root));
	ck_assert_int_eq(pl_artifact_write(p, root, &ref, &brief, &err), PL_OK);
	ck_assert_ptr_nonnull(f = fopen(ref.summary_path, "rb"));
	fseek(f, 0, SEEK_END);
	len = (size_t)ftell(f);
	rewind(f);
	text = malloc(len + 1);
	ck_assert_uint_eq(fread(text, 1, len, f), len);
	text[len] = '\0';
	fclose(f);
	ck_assert_ptr_nonnull(doc = json_loadb(text, len, 0, NULL));
	again = json_dumps(doc, PL_DUMP_FLAGS | JSON_INDENT(1));
	ck_assert_str_eq(again, text);
	views = json_object_get(doc, "views");
	funcs = json_object_get(doc, "functions");
	ck_assert_uint_eq(json_array_size(json_object_get(brief, "top_hotspots")), json_array_size(views));
	ck_assert(json_equal(json_object_get(brief, "events"), json_object_get(doc, "events")));
	ck_assert(json_equal(json_object_get(brief, "quality"), json_object_get(doc, "quality")));
	for (i = 0; i < json_array_size(views); i++) {
		json_t *hot = json_object_get(json_array_get(views, i), "hotspots"), *h;
		json_t *top = json_array_get(json_object_get(brief, "top_hotspots"), i);
		size_t j;
		ck_assert_uint_eq(json_array_size(top), json_array_size(hot) < PL_ARTIFACT_TOP ?
				  json_array_size(hot) : PL_ARTIFACT_TOP);
		json_array_foreach(top, j, h) {
			json_t *fn = json_array_get(funcs, (size_t)json_integer_value(json_object_get(h, "function")));
			ck_assert(json_equal(json_object_get(h, "symbol"), json_object_get(fn, "symbol")));
			ck_assert(json_equal(json_object_get(h, "dso"), json_object_get(fn, "dso")));
			json_object_del(h, "symbol");
			json_object_del(h, "dso");
			ck_assert(json_equal(h, json_array_get(hot, j)));
		}
	}
	free(again);
	free(text);
	json_decref(doc);
	json_decref(brief);
	remove_tree(root);
}

START_TEST(the_summary_is_laid_out_as_jansson_dumps_it)
{
	struct pl_parse_opts opts = {PL_FMT_AUTO, NULL};
	char root[] = "/tmp/perflens-sum-XXXXXX", want[65], *got;
	struct pl_artifact_ref ref;
	struct pl_error err;
	json_t *doc;

	/* Two events, srclines and an unknown frame, no input file. */
	ck_assert_int_eq(feed(&prof, sample), PL_OK);
	check_summary_layout(&prof);
	/* A device session (perf script and perf stat, a gzip chunk) whose
	 * hash is left to the writer. */
	opts.defer_hash = true;
	ck_assert_int_eq(pl_parse_path(&back, "fixtures/device-x86", &opts, &err), PL_OK);
	ck_assert_ptr_nonnull(back.sources[0].pending_hash);
	check_summary_layout(&back);
	ck_assert_ptr_null(back.sources[0].pending_hash);
	ck_assert_str_eq(back.sources[0].sha256, sha256sum_of("fixtures/device-x86/chunk_000.txt.gz", want));
	/* The provenance written says so too. */
	ck_assert_ptr_nonnull(mkdtemp(root));
	ck_assert_int_eq(pl_artifact_write(&back, root, &ref, NULL, &err), PL_OK);
	ck_assert_ptr_nonnull(doc = json_load_file(ref.summary_path, 0, NULL));
	got = (char *)json_string_value(json_object_get(json_array_get(json_object_get(
		json_object_get(doc, "provenance"), "inputs"), 0), "sha256"));
	ck_assert_str_eq(got, want);
	json_decref(doc);
	remove_tree(root);
}
END_TEST

Suite *suite_summary(void)
{
	Suite *s = suite_create("summary");
	TCase *tc = tcase_create("core");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, the_summary_is_laid_out_as_jansson_dumps_it);
	suite_add_tcase(s, tc);
	return s;
}
