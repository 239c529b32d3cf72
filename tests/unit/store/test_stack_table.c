/* test_stack_table.c - unit tests for the stack table: the compact table
 * (version 2) round-trips a profile exactly and its reader refuses
 * malformed entries; a big profile's artifacts (the table written on its
 * own thread) load back the same and give the same id.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "testlib.h"

#include "store/artifact.h"
#include "profile/parse.h"
#include "store/stack_table.h"

static struct pl_profile prof, back;

static void setup(void)
{
	pl_profile_init(&prof, NULL);
	pl_profile_init(&back, NULL);
	back.want_timed = true;   /* read back whole, times too */
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

static int by_event_time_stack_period(const void *a, const void *b)
{
	const struct pl_timed *x = a, *y = b;

	if (x->event != y->event)
		return x->event < y->event ? -1 : 1;
	if (x->time_ns != y->time_ns)
		return x->time_ns < y->time_ns ? -1 : 1;
	if (x->stack != y->stack)
		return x->stack < y->stack ? -1 : 1;
	return x->period < y->period ? -1 : x->period > y->period;
}

/* The table's timed samples are the same bytes whatever order the reader
 * added them in: sorted, interleaved by event with ties of one
 * microsecond in any stack order (two CPUs), nearly sorted, reversed. */
START_TEST(timed_samples_are_written_in_order_whatever_order_they_came)
{
	enum { N = 3000 };
	struct pl_timed *given, *sorted = malloc(N * sizeof(*sorted));
	struct pl_buf want, got;
	uint32_t nstacks;

	ck_assert_int_eq(feed(&prof, sample), PL_OK);
	nstacks = pl_nstacks(&prof);
	given = prof.timed.v = realloc(prof.timed.v, N * sizeof(*prof.timed.v));
	prof.timed.cap = prof.timed.n = N;
	for (uint32_t i = 0; i < N; i++)   /* events alternate; pairs share a time */
		given[i] = (struct pl_timed){1000000u + (i / 4) * 1000u, 1 + i % 3, (N - i) % nstacks, i % 2};
	memcpy(sorted, given, N * sizeof(*sorted));
	qsort(sorted, N, sizeof(*sorted), by_event_time_stack_period);
	got = table_text(&prof);                       /* interleaved, ties */
	memcpy(given, sorted, N * sizeof(*given));
	want = table_text(&prof);                      /* sorted */
	ck_assert_str_eq(got.data, want.data);
	pl_buf_release(&got);
	for (uint32_t i = 0; i + 1 < N; i += 7) {      /* nearly sorted */
		struct pl_timed x = given[i];
		given[i] = given[i + 1];
		given[i + 1] = x;
	}
	got = table_text(&prof);
	ck_assert_str_eq(got.data, want.data);
	pl_buf_release(&got);
	for (uint32_t i = 0; i < N; i++)               /* reversed */
		given[i] = sorted[N - 1 - i];
	got = table_text(&prof);
	ck_assert_str_eq(got.data, want.data);
	pl_buf_release(&got);
	pl_buf_release(&want);
	free(sorted);
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

Suite *suite_stack_table(void)
{
	Suite *s = suite_create("stack_table");
	TCase *tc = tcase_create("core");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, stack_table_round_trips_a_profile);
	tcase_add_test(tc, timed_samples_are_written_in_order_whatever_order_they_came);
	tcase_add_test(tc, stack_records_share_prefixes_with_earlier_stacks);
	tcase_add_test(tc, stack_table_reader_refuses_malformed_entries);
	tcase_add_test(tc, artifacts_of_a_big_profile_load_back_the_same);
	suite_add_tcase(s, tc);
	return s;
}
