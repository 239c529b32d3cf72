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

/* quality.names of `text`, from the brief the artifact writer hands back. */
static json_t *names_of(struct pl_profile *p, const char *text)
{
	char root[] = "/tmp/perflens-sum-XXXXXX";
	struct pl_artifact_ref ref;
	struct pl_error err;
	json_t *brief = NULL, *names;

	ck_assert_int_eq(feed(p, text), PL_OK);
	ck_assert_ptr_nonnull(mkdtemp(root));
	ck_assert_int_eq(pl_artifact_write(p, root, &ref, &brief, &err), PL_OK);
	names = json_incref(json_object_get(json_object_get(brief, "quality"), "names"));
	json_decref(brief);
	remove_tree(root);
	return names;
}

static double share(json_t *names, const char *key)
{
	return json_real_value(json_object_get(json_object_get(names, "frames_percent"), key));
}

/* Interpreter frames (CPython's loop, V8's trampoline and JS:~ code), JIT
 * code (a perf map, perf inject --jit's files) and a name libiberty
 * cannot read, counted in functions and as shares of the 7 sampled frames
 * (the second sample twice); with a Python perf map ("py::" names) the
 * CPython loop is not an unnamed interpreter frame. */
START_TEST(quality_names_count_jit_and_interpreter_frames)
{
	json_t *n = names_of(&prof,
		"py 7/7 [000] 1.0: 1 cpu-clock:\n"
		"\t    1 _PyEval_EvalFrameDefault+0x1 (/usr/lib/libpython3.11.so)\n\t    2 main (/usr/bin/python3)\n\n"
		"node 8/8 [000] 1.1: 1 cpu-clock:\n"
		"\t    3 JS:~f (/tmp/perf-8.map)\n\t    4 Builtins_InterpreterEntryTrampoline (/usr/bin/node)\n\n"
		"node 8/8 [000] 1.2: 1 cpu-clock:\n"
		"\t    3 JS:~f (/tmp/perf-8.map)\n\t    4 Builtins_InterpreterEntryTrampoline (/usr/bin/node)\n\n"
		"node 8/8 [000] 1.3: 1 cpu-clock:\n"
		"\t    5 hot (/w/jitted-8-1.so)\n\n"
		"a 9/9 [000] 1.4: 1 cpu-clock:\n"
		"\t    6 _Z3fooi (/bin/a)\n\t    7 _ZZZbroken (/bin/a)\n\n");
	json_t *py;

	ck_assert_ptr_nonnull(n);
	ck_assert_int_eq(json_integer_value(json_object_get(n, "jit")), 2);
	ck_assert_int_eq(json_integer_value(json_object_get(n, "interpreted")), 3);
	ck_assert_int_eq(json_integer_value(json_object_get(n, "demangled")), 1);
	ck_assert_int_eq(json_integer_value(json_object_get(n, "undemangled")), 1);
	ck_assert(share(n, "jit") == 33.3333);          /* 3 of 9 */
	ck_assert(share(n, "interpreted") == 55.5556);  /* 5 of 9 */
	ck_assert(share(n, "undemangled") == 11.1111);  /* 1 of 9 */
	py = names_of(&back,
		"py 7/7 [000] 1.0: 1 cpu-clock:\n"
		"\t    1 py::spin:/w/loop.py (/tmp/perf-7.map)\n"
		"\t    2 _PyEval_EvalFrameDefault+0x1 (/usr/lib/libpython3.11.so)\n\n");
	ck_assert_int_eq(json_integer_value(json_object_get(py, "interpreted")), 0);
	ck_assert(share(py, "jit") == 50.0);
	json_decref(n);
	json_decref(py);
}
END_TEST

Suite *suite_summary(void)
{
	Suite *s = suite_create("summary");
	TCase *tc = tcase_create("core");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, the_summary_is_laid_out_as_jansson_dumps_it);
	tcase_add_test(tc, quality_names_count_jit_and_interpreter_frames);
	suite_add_tcase(s, tc);
	return s;
}
