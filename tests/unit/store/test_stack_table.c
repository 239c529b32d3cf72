/* test_stack_table.c - unit tests for the speed-minded parts of the engine:
 * the compact stack table (version 2) round-trips a profile exactly and
 * its reader refuses malformed entries; the record and line caches of the
 * parsers give what line-by-line parsing gives; the fold compares lines
 * byte by byte across name boundaries; the streamed summary is laid out
 * exactly as jansson dumps it; plain input hands out lines that run
 * across read blocks, and hashes exactly the file.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "testlib.h"

#include "store/artifact.h"
#include "export/fold.h"
#include "base/input.h"
#include "profile/parse.h"
#include "store/stack_table.h"

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
	struct pl_ps_parser *ps = pl_ps_new(p, "test");
	struct pl_error err;
	uint64_t line_no = 0;
	enum pl_err rc = PL_OK;

	while (*text && rc == PL_OK) {
		const char *nl = strchr(text, '\n');
		size_t n = nl ? (size_t)(nl - text) : strlen(text);
		rc = pl_ps_line(ps, text, n, ++line_no, &err);
		text += n + (nl ? 1 : 0);
	}
	if (rc) {
		pl_ps_finish(ps, &err);
		return rc;
	}
	return pl_ps_finish(ps, &err);
}

static int add_to_buf(const char *s, size_t n, void *data)
{
	pl_buf_add(data, s, n);
	return 0;
}

/* The stack table of `p` as text (caller releases). */
static struct pl_buf table_text(const struct pl_profile *p)
{
	struct pl_buf b = {0};
	ck_assert(pl_stack_table_write(p, add_to_buf, &b));
	return b;
}

static enum pl_err read_text(struct pl_profile *p, const char *text, struct pl_error *err)
{
	json_error_t je;
	json_t *doc = json_loads(text, 0, &je);
	enum pl_err rc;

	ck_assert_ptr_nonnull(doc);
	rc = pl_stack_table_read(p, doc, "an-00000000000000000000", err);
	json_decref(doc);
	return rc;
}

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

START_TEST(stack_table_round_trips_a_profile)
{
	struct pl_buf a, b;
	struct pl_error err;

	ck_assert_int_eq(feed(&prof, sample), PL_OK);
	a = table_text(&prof);
	ck_assert_int_eq(read_text(&back, a.data, &err), PL_OK);
	ck_assert_uint_eq(pl_nstacks(&back), pl_nstacks(&prof));
	ck_assert_uint_eq(pl_nframes(&back), pl_nframes(&prof));
	ck_assert_uint_eq(back.ntails, 1);
	for (uint32_t s = 0; s < pl_nstacks(&prof); s++) {
		ck_assert_uint_eq(back.stacks[s].depth, prof.stacks[s].depth);
		ck_assert_uint_eq(back.stacks[s].thread, prof.stacks[s].thread);
		ck_assert(memcmp(back.stacks[s].frames, prof.stacks[s].frames,
				 prof.stacks[s].depth * sizeof(uint32_t)) == 0);
	}
	for (uint32_t e = 0; e < prof.nevents; e++) {
		ck_assert_uint_eq(back.events[e].period, prof.events[e].period);
		ck_assert_uint_eq(back.events[e].records_without_period,
				  prof.events[e].records_without_period);
	}
	/* Written again, the table is byte-identical. */
	b = table_text(&back);
	ck_assert_str_eq(a.data, b.data);
	pl_buf_release(&a);
	pl_buf_release(&b);
}
END_TEST

START_TEST(stack_records_share_prefixes_with_earlier_stacks)
{
	struct pl_buf a;

	ck_assert_int_eq(feed(&prof, sample), PL_OK);
	a = table_text(&prof);
	/* Stack 1 is stack 0's frames in another thread; stack 2 shares
	 * main and mid with stack 0 (its leaf has a srcline: frame 4); stack
	 * 3 shares main. */
	ck_assert_ptr_nonnull(strstr(a.data, "\"stacks\":[\"0||2,1,0|0:2:109 1|0:3||0:1:200 0|0:2|4|0:1:50 0|0:1|5|1:1:7\"]"));
	pl_buf_release(&a);
}
END_TEST

/* Read the sample's table with `from` replaced by `to` in it. */
static enum pl_err read_edited(const char *from, const char *to, struct pl_error *err)
{
	struct pl_buf a = table_text(&prof), b = {0};
	const char *at = strstr(a.data, from);
	enum pl_err rc;

	ck_assert_ptr_nonnull(at);
	pl_buf_add(&b, a.data, (size_t)(at - a.data));
	pl_buf_adds(&b, to);
	pl_buf_adds(&b, at + strlen(from));
	rc = read_text(&back, b.data, err);
	pl_buf_release(&a);
	pl_buf_release(&b);
	return rc;
}

START_TEST(stack_table_reader_refuses_malformed_entries)
{
	static const struct {
		const char *from, *to, *message;
	} cases[] = {
		{"\"version\":2", "\"version\":1",
		 "stack table of 'an-00000000000000000000' is 'perflens.stacks' version 1; this perflens reads perflens.stacks version 2"},
		{"0||2,1,0|0:2:109", "0||2,1,9|0:2:109",
		 "stack table of 'an-00000000000000000000' has a bad stacks entry 0: frame is not a frame id"},
		{"1|0:3||", "1|1:3||",
		 "stack table of 'an-00000000000000000000' has a bad stacks entry 1: shared prefix is not BASE:DEPTH of an earlier stack"},
		{"1|0:3||", "1|0:4||",
		 "stack table of 'an-00000000000000000000' has a bad stacks entry 1: shared prefix is not BASE:DEPTH of an earlier stack"},
		{"1|0:3||0:1:200", "0|0:3||0:1:200",
		 "stack table of 'an-00000000000000000000' has a bad stacks entry 1: repeats an earlier stack"},
		{"0|0:2|4|0:1:50", "0|0:2|4|0:1:50;0:1:1",
		 "stack table of 'an-00000000000000000000' has a bad stacks entry 2: lists an event twice"},
		{"1:1:7\"", "1:1:7 \"",
		 "stack table of 'an-00000000000000000000' has a bad stacks entry 4: empty record"},
		{"0|0:2|4|0:1:50", "0|0:2|4|0:1:x",
		 "stack table of 'an-00000000000000000000' has a bad stacks entry 2: weight is not EVENT:SAMPLES:PERIOD"},
		{"\"functions\":[\"", "\"functions\":[\"99 ",
		 "stack table of 'an-00000000000000000000' has a bad functions entry 0: symbol is not a string id"},
		{"\"tails\":[", "\"extra\":1,\"tails\":[",
		 "stack table of 'an-00000000000000000000' is malformed: 1 object item(s) left unpacked: extra"},
	};
	struct pl_error err;

	ck_assert_int_eq(feed(&prof, sample), PL_OK);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		pl_profile_release(&back);
		pl_profile_init(&back, NULL);
		ck_assert_int_eq(read_edited(cases[i].from, cases[i].to, &err), PL_ERR_MALFORMED);
		ck_assert_str_eq(err.text, cases[i].message);
	}
}
END_TEST

START_TEST(record_cache_gives_what_line_by_line_parsing_gives)
{
	/* The same records again: the second time their frames come from
	 * the record cache; srclines and bad lines still count each time. */
	struct pl_profile once;
	char twice[sizeof(sample) * 2 + 2];

	snprintf(twice, sizeof(twice), "%s\n%s", sample, sample);
	pl_profile_init(&once, NULL);
	ck_assert_int_eq(feed(&once, sample), PL_OK);
	ck_assert_int_eq(feed(&prof, twice), PL_OK);
	ck_assert_uint_eq(pl_nstacks(&prof), pl_nstacks(&once));
	ck_assert_uint_eq(prof.srclines, 2 * once.srclines);
	ck_assert_uint_eq(prof.events[0].period, 2 * once.events[0].period);
	for (uint32_t s = 0; s < pl_nstacks(&once); s++)
		ck_assert(memcmp(prof.stacks[s].frames, once.stacks[s].frames,
				 once.stacks[s].depth * sizeof(uint32_t)) == 0);
	pl_profile_release(&once);
}
END_TEST

START_TEST(folded_line_cache_gives_what_line_by_line_parsing_gives)
{
	/* pl_parse_path caches whole lines; pl_folded_line does not. */
	static const char text[] = "a;b;c 5\nx;y 1\na;b;c 2\na;b 3\nx;y 4\n;; 1\n;; 2\n";
	char path[] = "/tmp/perflens-folded-XXXXXX";
	struct pl_parse_opts opts = {PL_FMT_FOLDED, NULL};
	struct pl_error err;
	uint32_t ev;
	int fd = mkstemp(path);
	const char *s = text;

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, text, strlen(text)), (int)strlen(text));
	close(fd);
	ck_assert_int_eq(pl_parse_path(&prof, path, &opts, &err), PL_OK);
	unlink(path);
	ev = pl_intern_event(&back, "unknown", 7);
	for (uint64_t line = 1; *s; line++) {
		const char *nl = strchr(s, '\n');
		ck_assert_int_eq(pl_folded_line(&back, ev, s, (size_t)(nl - s), line, &err), PL_OK);
		s = nl + 1;
	}
	ck_assert_uint_eq(pl_nstacks(&prof), pl_nstacks(&back));
	for (uint32_t st = 0; st < pl_nstacks(&back); st++) {
		ck_assert_uint_eq(prof.stacks[st].depth, back.stacks[st].depth);
		ck_assert_uint_eq(pl_stack_weight(&prof, st, 0)->period,
				  pl_stack_weight(&back, st, 0)->period);
	}
}
END_TEST

/* A profile with enough unique stacks for the stack table to be written
 * on its own thread beside the summary: the artifact loads back with
 * every stack as parsed, and writing it again gives the same id. */
START_TEST(artifacts_of_a_big_profile_load_back_the_same)
{
	enum { STACKS = 12000 };
	char path[] = "/tmp/perflens-big-XXXXXX", root1[] = "/tmp/perflens-art1-XXXXXX";
	char root2[] = "/tmp/perflens-art2-XXXXXX";
	struct pl_parse_opts opts = {PL_FMT_FOLDED, NULL};
	struct pl_artifact_ref ref1, ref2;
	struct pl_error err;
	FILE *f;
	int fd = mkstemp(path);

	ck_assert_int_ge(fd, 0);
	ck_assert_ptr_nonnull(f = fdopen(fd, "w"));
	for (int i = 0; i < STACKS; i++)
		fprintf(f, "main;run_%d;step_%d;leaf_%d %d\n", i % 97, i % 13, i, 1 + i % 7);
	fclose(f);
	ck_assert_int_eq(pl_parse_path(&prof, path, &opts, &err), PL_OK);
	unlink(path);
	ck_assert_uint_eq(pl_nstacks(&prof), STACKS);
	ck_assert_ptr_nonnull(mkdtemp(root1));
	ck_assert_ptr_nonnull(mkdtemp(root2));
	ck_assert_int_eq(pl_artifact_write(&prof, root1, &ref1, NULL, &err), PL_OK);
	ck_assert_int_eq(pl_artifact_write(&prof, root2, &ref2, NULL, &err), PL_OK);
	ck_assert_str_eq(ref1.id, ref2.id);
	ck_assert(pl_artifact_id_valid(ref1.id));
	ck_assert_int_eq(pl_artifact_load_profile(root1, ref1.id, &back, &err), PL_OK);
	ck_assert_uint_eq(pl_nstacks(&back), pl_nstacks(&prof));
	for (uint32_t s = 0; s < pl_nstacks(&prof); s++) {
		ck_assert_uint_eq(back.stacks[s].depth, prof.stacks[s].depth);
		ck_assert(memcmp(back.stacks[s].frames, prof.stacks[s].frames,
				 prof.stacks[s].depth * sizeof(uint32_t)) == 0);
		ck_assert_uint_eq(pl_stack_weight(&back, s, 0)->period,
				  pl_stack_weight(&prof, s, 0)->period);
	}
	remove_tree(root1);
	remove_tree(root2);
}
END_TEST

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

START_TEST(plain_lines_run_across_read_blocks)
{
	/* Lines of every length around the 256 KiB read block, CRLF too, in
	 * a file big enough to be read by the reader and hasher threads. */
	char path[] = "/tmp/perflens-blocks-XXXXXX";
	size_t lens[] = {1, 262142, 262143, 262144, 262145, 3, 524290, 0, 17,
			 1000000, 1000000, 1000000, 1000000, 5};
	struct pl_limits lim;
	struct pl_input in;
	struct pl_error err;
	const char *line;
	size_t n, k = 0;
	char want[128], got[65];
	FILE *f;
	int fd = mkstemp(path);

	ck_assert_int_ge(fd, 0);
	f = fdopen(fd, "wb");
	for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		for (size_t j = 0; j < lens[i]; j++)
			fputc('a' + (int)((i + j) % 26), f);
		fputs(i % 2 ? "\r\n" : "\n", f);
	}
	fclose(f);
	pl_limits_default(&lim);
	ck_assert_int_eq(pl_input_open(&in, path, &lim, &err), PL_OK);
	while (pl_input_line(&in, &line, &n, &err) > 0) {
		bool same = n == lens[k];
		for (size_t j = 0; j < n && same; j++)
			same = line[j] == 'a' + (int)((k + j) % 26);
		ck_assert_msg(same, "line %zu differs", k + 1);
		k++;
	}
	ck_assert_uint_eq(k, sizeof(lens) / sizeof(lens[0]));
	ck_assert_int_eq(pl_input_sha256(&in, got, &err), PL_OK);
	ck_assert_str_eq(got, sha256sum_of(path, want));
	pl_input_close(&in);
	/* A line longer than the limit (its CR counts) is an error however
	 * blocks cut it. */
	lim.max_line = 262144;
	ck_assert_int_eq(pl_input_open(&in, path, &lim, &err), PL_OK);
	while (pl_input_line(&in, &line, &n, &err) > 0)
		;
	ck_assert_int_eq(err.code, PL_ERR_LIMIT);
	snprintf(want, sizeof(want), "line 4 of '%s' is longer than 262144 bytes", path);
	ck_assert_str_eq(err.text, want);
	pl_input_close(&in);
	unlink(path);
}
END_TEST

Suite *suite_stack_table(void)
{
	Suite *s = suite_create("stack_table");
	TCase *tc = tcase_create("core");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, stack_table_round_trips_a_profile);
	tcase_add_test(tc, stack_records_share_prefixes_with_earlier_stacks);
	tcase_add_test(tc, stack_table_reader_refuses_malformed_entries);
	tcase_add_test(tc, record_cache_gives_what_line_by_line_parsing_gives);
	tcase_add_test(tc, folded_line_cache_gives_what_line_by_line_parsing_gives);
	tcase_add_test(tc, folded_export_sorts_by_bytes_across_name_boundaries);
	tcase_add_test(tc, artifacts_of_a_big_profile_load_back_the_same);
	tcase_add_test(tc, the_summary_is_laid_out_as_jansson_dumps_it);
	tcase_add_test(tc, plain_lines_run_across_read_blocks);
	suite_add_tcase(s, tc);
	return s;
}
