/* test_parse.c - unit tests for the perf script and folded parsers,
 * driven line by line through the public parser API, and their record
 * and line caches against line-by-line parsing.
 *
 * Inputs are perf script forms listed in shared/guides/profiles.md: comms
 * with spaces and digits, pid/tid, [cpu], no time, PMU-qualified events,
 * DSOs with spaces, [unknown], kernel frames, srcline and inlined frames.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "testlib.h"

#include "profile/aggregate.h"
#include "profile/parse.h"
#include "profile/perf_stat.h"
#include "store/stack_table.h"

static struct pl_profile prof;

static void setup(void)
{
	pl_profile_init(&prof, NULL);
}

static void teardown(void)
{
	pl_profile_release(&prof);
}

/* Feed a whole text through the perf script parser. */
static enum pl_err feed(const char *text)
{
	return feed_script(&prof, text);
}

static const struct pl_thread *thread_of_stack(uint32_t s)
{
	return &prof.threads[prof.stacks[s].thread];
}

static const char *leaf_symbol(uint32_t s)
{
	const struct pl_stack *st = &prof.stacks[s];
	return pl_str(&prof, prof.funcs[prof.frames[st->frames[st->depth - 1]].func].symbol);
}

static const char *frame_dso(uint32_t s, uint32_t d)
{
	const struct pl_stack *st = &prof.stacks[s];
	return pl_str(&prof, prof.funcs[prof.frames[st->frames[d]].func].dso);
}

START_TEST(header_comm_with_spaces_and_digits_keeps_whole_comm)
{
	ck_assert_int_eq(feed("pool 2  7824 [001] 123.456789:    1001001 cpu-clock: \n"
			      "\t 4005d0 main+0x10 (/usr/bin/app)\n\n"), PL_OK);
	ck_assert_uint_eq(pl_nstacks(&prof), 1);
	ck_assert_str_eq(pl_str(&prof, thread_of_stack(0)->comm), "pool 2");
	ck_assert_int_eq(thread_of_stack(0)->tid, 7824);
	ck_assert_int_eq(thread_of_stack(0)->pid, -1);
	ck_assert_uint_eq(prof.events[0].period, 1001001);
	ck_assert_str_eq(leaf_symbol(0), "main");
}
END_TEST

START_TEST(header_pid_tid_and_no_time_forms)
{
	ck_assert_int_eq(feed("java 24636/25607 [000] 94564.109216: 100 cycles:\n"
			      "\tffffffff8103ce3b native_safe_halt ([kernel.kallsyms])\n\n"
			      "func_ab 15294 cpu-clock: \n"
			      "\t 400570 func_b (/root/func_ab)\n\n"
			      "V8 WorkerThread 1/2 7 cpu-clock:\n"
			      "\t 400570 f (/x)\n\n"), PL_OK);
	ck_assert_uint_eq(pl_nstacks(&prof), 3);
	ck_assert_int_eq(thread_of_stack(0)->pid, 24636);
	ck_assert_int_eq(thread_of_stack(0)->tid, 25607);
	ck_assert_uint_eq(prof.funcs[prof.frames[prof.stacks[0].frames[0]].func].kind, PL_KIND_KERNEL);
	ck_assert_int_eq(thread_of_stack(1)->tid, 15294);
	/* No period given: counted as 1 and noted. */
	ck_assert_uint_eq(prof.events[pl_find_event(&prof, "cpu-clock")].records_without_period, 1);
	ck_assert_str_eq(pl_str(&prof, thread_of_stack(2)->comm), "V8 WorkerThread");
	ck_assert_uint_eq(pl_stack_weight(&prof, 2, pl_find_event(&prof, "cpu-clock"))->period, 7);
}
END_TEST

START_TEST(events_stay_apart_and_pmu_names_are_kept)
{
	ck_assert_int_eq(feed("app 10 1.0: 5 cpu_core/cycles/:\n\t1 a (/x)\n\n"
			      "app 10 1.1: 7 cpu_atom/cycles/:\n\t1 a (/x)\n\n"
			      "app 10 1.2: 9 cycles:u:\n\t1 a (/x)\n\n"), PL_OK);
	ck_assert_uint_eq(prof.nevents, 3);
	ck_assert_str_eq(pl_str(&prof, prof.events[0].name), "cpu_core/cycles/");
	ck_assert_str_eq(pl_str(&prof, prof.events[2].name), "cycles:u");
	/* One unique stack, three separate weights. */
	ck_assert_uint_eq(pl_nstacks(&prof), 1);
	ck_assert_uint_eq(pl_stack_weight(&prof, 0, 1)->period, 7);
}
END_TEST

START_TEST(frames_with_spaces_parens_unknown_and_offsets)
{
	ck_assert_int_eq(feed("a 1 1.0: 1 cpu-clock:\n"
			      "\t7f1 foo(int, char) (/tmp/my dir/lib x.so)\n"
			      "\t7f2 (anonymous namespace)::bar+0x1f ([JIT app cache])\n"
			      "\t7f3 [unknown] ([unknown])\n"
			      "\t7f4 [unknown] (/usr/lib/libm.so.6)\n\n"), PL_OK);
	ck_assert_str_eq(frame_dso(0, 3), "/tmp/my dir/lib x.so");
	ck_assert_str_eq(leaf_symbol(0), "foo(int, char)");
	ck_assert_str_eq(pl_str(&prof, prof.funcs[prof.frames[prof.stacks[0].frames[2]].func].symbol),
			 "(anonymous namespace)::bar");
	ck_assert_uint_eq(prof.funcs[prof.frames[prof.stacks[0].frames[2]].func].kind, PL_KIND_JIT);
	/* perf inject --jit's files are JIT code; names like them are not */
	ck_assert_uint_eq(pl_classify_dso("/w/jitted-3507-2336.so", 22), PL_KIND_JIT);
	ck_assert_uint_eq(pl_classify_dso("jitted-1-2.so", 13), PL_KIND_JIT);
	ck_assert_uint_eq(pl_classify_dso("/w/jitted-3507.so", 17), PL_KIND_USER);
	ck_assert_uint_eq(pl_classify_dso("/w/jitted-35-07-1.so", 20), PL_KIND_USER);
	ck_assert_uint_eq(pl_classify_dso("/w/jitted-x-1.so", 16), PL_KIND_USER);
	/* Unknown symbols keep their address for later symbolization. */
	ck_assert(prof.frames[prof.stacks[0].frames[0]].has_addr);
	ck_assert_uint_eq(prof.frames[prof.stacks[0].frames[0]].addr, 0x7f4);
	ck_assert(!prof.frames[prof.stacks[0].frames[3]].has_addr);
}
END_TEST

START_TEST(srcline_and_inlined_frames_are_attached)
{
	ck_assert_int_eq(feed("a 1 1.0: 1 cpu-clock:\n"
			      "\t 408ebb some_method+0x8b (/a.out)\n"
			      "  uniform_int_dist.h:300\n"
			      "\t 27304 __libc_start_main_impl+0x84 (inlined)\n"
			      "\t 4069f5 main+0x935 (/a.out)\n"
			      "  file.cpp:137\n\n"), PL_OK);
	ck_assert_uint_eq(prof.stacks[0].depth, 3);
	ck_assert_uint_eq(prof.srclines, 2);
	ck_assert_str_eq(pl_str(&prof, prof.frames[prof.stacks[0].frames[2]].srcline), "uniform_int_dist.h:300");
	ck_assert(prof.funcs[prof.frames[prof.stacks[0].frames[1]].func].inlined);
	ck_assert_uint_eq(prof.records_malformed, 0);
}
END_TEST

/* One function printed twice at one address (perf repeats an inline
 * line; glibc's hidden alias __GI_X beside X) is one frame: no false
 * recursion, no function counted twice.  Different addresses, or other
 * names, stay apart. */
START_TEST(alias_and_repeated_inline_frames_are_one_frame)
{
	static const char *const leaf_first[] = {"_IO_default_xsputn", "outstring_func", "__vfprintf_internal",
						 "__libc_write", "caller"};
	ck_assert_int_eq(feed("f 1 1.0: 1 cpu-clock:\n"
			      "\t 83281 __GI__IO_default_xsputn+0x101 (inlined)\n"
			      "\t 83281 __GI__IO_default_xsputn+0x101 (inlined)\n"
			      "\t 5c9dc outstring_func+0x5dc (inlined)\n"
			      "\t 5c9dc __vfprintf_internal+0x5dc (/usr/lib/x86_64-linux-gnu/libc.so.6)\n"
			      "\t 11a2b __GI___libc_write+0x1b (inlined)\n"
			      "\t 11a2b __libc_write+0x1b (/usr/lib/x86_64-linux-gnu/libc.so.6)\n"
			      "\t 13ea caller+0x3d (/a.out)\n\n"), PL_OK);
	ck_assert_uint_eq(prof.stacks[0].depth, 5);
	for (uint32_t d = 0; d < 5; d++) {
		const char *sym = pl_str(&prof, prof.funcs[prof.frames[prof.stacks[0].frames[4 - d]].func].symbol);
		if (strncmp(sym, "__GI_", 5) == 0)
			sym += 5;
		ck_assert_str_eq(sym, leaf_first[d]);
	}
}
END_TEST

START_TEST(malformed_lines_are_counted_previewed_and_skipped)
{
	ck_assert_int_eq(feed("this is not a header\n"
			      "\t1 orphan (/x)\n\n"
			      "a 1 1.0: 1 cpu-clock:\n\t1 ok (/x)\n\n"), PL_OK);
	ck_assert_uint_eq(prof.records_malformed, 1);
	ck_assert_uint_eq(prof.npreviews, 1);
	ck_assert_uint_eq(prof.previews[0].line_no, 1);
	ck_assert_str_eq(prof.previews[0].text, "this is not a header");
	ck_assert_uint_eq(prof.records_parsed, 1);
}
END_TEST

START_TEST(unterminated_last_record_is_kept_and_marked)
{
	ck_assert_int_eq(feed("a 1 1.0: 5 cpu-clock:\n\t1 x (/x)\n\na 1 1.1: 5 cpu-clock:\n\t1 y (/x)"), PL_OK);
	ck_assert_uint_eq(prof.records_parsed, 2);
	ck_assert_uint_eq(prof.ntails, 1);
	ck_assert_uint_eq(prof.tails[0].period, 5);
}
END_TEST

START_TEST(depth_limit_is_an_error_not_a_truncation)
{
	struct pl_limits lim;
	pl_profile_release(&prof);
	pl_limits_default(&lim);
	lim.max_depth = 2;
	pl_profile_init(&prof, &lim);
	ck_assert_int_eq(feed("a 1 1.0: 1 cpu-clock:\n\t1 x (/x)\n\t2 y (/x)\n\t3 z (/x)\n\n"), PL_ERR_LIMIT);
}
END_TEST

START_TEST(agent_chunk_switches_to_perf_stat)
{
	ck_assert_int_eq(feed("a 1 1.0: 1 cycles:\n\t1 x (/x)\n\n"
			      "### PERF_STAT ###\n\n"
			      " Performance counter stats for process id '44774':\n\n"
			      "    24,673,883,923      cycles\n"), PL_OK);
	ck_assert_uint_eq(prof.records_parsed, 1);
	ck_assert_uint_eq(prof.nstats, 1);
}
END_TEST

START_TEST(folded_lines_and_bad_counts)
{
	struct pl_error err;
	uint32_t ev = pl_intern_event(&prof, "unknown", 7);
	ck_assert_int_eq(pl_folded_line(&prof, ev, "main;a;b 12", 11, 1, &err), PL_OK);
	ck_assert_int_eq(pl_folded_line(&prof, ev, "main;a;b 3", 10, 2, &err), PL_OK);
	ck_assert_int_eq(pl_folded_line(&prof, ev, "main;a;c x12", 12, 3, &err), PL_OK);
	ck_assert_int_eq(pl_folded_line(&prof, ev, "nocount", 7, 4, &err), PL_OK);
	ck_assert_int_eq(pl_folded_line(&prof, ev, "main;a 1.5", 10, 5, &err), PL_OK);
	ck_assert_uint_eq(pl_nstacks(&prof), 1);
	ck_assert_uint_eq(pl_stack_weight(&prof, 0, ev)->samples, 15);
	ck_assert_uint_eq(prof.records_malformed, 3);
	ck_assert_str_eq(prof.previews[0].reason, "count is not a whole number");
	ck_assert_str_eq(prof.previews[1].reason, "no count after the stack");
}
END_TEST

START_TEST(names_that_are_not_utf8_are_escaped_and_counted)
{
	/* docs/paths.md: other bytes read \xHH, a backslash \\, UTF-8 stays. */
	ck_assert_int_eq(feed("a\xe9 1 1.0: 1 cpu-clock:\n\t1 bad\xff\xfe (/x)\n\t2 caf\xc3\xa9 (/x)\n"
			      "\t3 a\\b (/lib\xe9/x.so)\n\n"), PL_OK);
	ck_assert_str_eq(leaf_symbol(0), "bad\\xff\\xfe");
	ck_assert_str_eq(pl_str(&prof, prof.funcs[prof.frames[prof.stacks[0].frames[1]].func].symbol), "caf\xc3\xa9");
	ck_assert_str_eq(pl_str(&prof, prof.funcs[prof.frames[prof.stacks[0].frames[0]].func].symbol), "a\\\\b");
	ck_assert_str_eq(pl_str(&prof, prof.funcs[prof.frames[prof.stacks[0].frames[0]].func].dso), "/lib\\xe9/x.so");
	ck_assert_str_eq(pl_str(&prof, prof.threads[prof.stacks[0].thread].comm), "a\\xe9");
	ck_assert_uint_eq(prof.names_escaped, 4);
}
END_TEST

START_TEST(detect_format_from_first_lines)
{
	ck_assert_int_eq(pl_detect_format("# comment\na;b 3\n", 16), PL_FMT_FOLDED);
	ck_assert_int_eq(pl_detect_format("app 1 1.0: 1 cpu-clock:\n", 24), PL_FMT_PERF_SCRIPT);
	ck_assert_int_eq(pl_detect_format("\n Performance counter stats for 'ls':\n", 38), PL_FMT_PERF_STAT);
	/* perf stat -x has no header: its first counter line tells */
#define DETECT(t) pl_detect_format(t, strlen(t))
	ck_assert_int_eq(DETECT("3.25,msec,task-clock,9.16%,3250264,100.00,0.031,CPUs utilized\n"), PL_FMT_PERF_STAT);
	ck_assert_int_eq(DETECT("<not supported>,,cycles,0,100.00,,\n"), PL_FMT_PERF_STAT);
	ck_assert_int_eq(DETECT("1425,15;msec;task-clock;1425150000;100,00;0,998;CPUs utilized\n"), PL_FMT_PERF_STAT);
	ck_assert_int_eq(DETECT("main;work;leaf 12\n"), PL_FMT_FOLDED);
	ck_assert_int_eq(DETECT("a,b,c\n"), PL_FMT_PERF_SCRIPT);
	ck_assert_int_eq(DETECT("perf 123 [000] 1.0: 1 cpu-clock:\n"), PL_FMT_PERF_SCRIPT);
#undef DETECT
}
END_TEST

/* A record without frames (found by mutating a FlameGraph capture) is
 * a sample of the empty stack: the interner gets no frames (NULL) and
 * must not hand NULL to memcpy (UBSan aborts the sanitizer build). */
START_TEST(a_record_without_frames_is_an_empty_stack)
{
	struct pl_error err;
	uint32_t s;

	ck_assert_int_eq(feed("app 1 [000] 1.0: 10 cycles:\n\n"
			      "app 1 [000] 1.1: 5 cycles:\n\tabc main (/x)\n\n"), PL_OK);
	ck_assert_uint_eq(prof.records_parsed, 2);
	ck_assert_uint_eq(pl_nstacks(&prof), 2);
	ck_assert_uint_eq(prof.stacks[0].depth, 0);
	ck_assert_uint_eq(pl_stack_weight(&prof, 0, 0)->period, 10);
	s = pl_intern_stack(&prof, prof.stacks[0].thread, NULL, 0, &err);
	ck_assert_uint_eq(s, 0);
}
END_TEST

/* Feed a text as parse.c does for a file (input.c drops a line's '\r'):
 * with `bodies`, after each line, the frame lines that follow are offered
 * to pl_ps_body, which takes them at once. */
static enum pl_err feed_file(struct pl_profile *p, const char *text, bool bodies)
{
	struct pl_ps_parser *ps = pl_ps_new(p, "test");
	struct pl_error err;
	uint64_t line_no = 0, nlines;
	enum pl_err rc = PL_OK;

	while (*text && rc == PL_OK) {
		const char *nl = strchr(text, '\n');
		size_t n = nl ? (size_t)(nl - text) : strlen(text), used;
		if (n && text[n - 1] == '\r')
			n--;   /* as input.c hands lines out */
		rc = pl_ps_line(ps, text, n, ++line_no, &err);
		text = nl ? nl + 1 : text + n;
		if (rc == PL_OK && *text && bodies &&
		    (used = pl_ps_body(ps, text, strlen(text), line_no + 1, 40, &nlines, &rc, &err))) {
			text += used;
			line_no += nlines;
		}
	}
	if (rc) {
		pl_ps_finish(ps, &err);
		return rc;
	}
	return pl_ps_finish(ps, &err);
}

static int add_text(const char *s, size_t n, void *data)
{
	pl_buf_add(data, s, n);
	return 0;
}

/* Two profiles are the same: stack tables byte for byte, and the counts. */
static void assert_same_profile(const struct pl_profile *a, const struct pl_profile *b)
{
	struct pl_buf ta = {0}, tb = {0};

	ck_assert(pl_stack_table_write(a, add_text, &ta));
	ck_assert(pl_stack_table_write(b, add_text, &tb));
	ck_assert_str_eq(ta.data, tb.data);
	ck_assert_uint_eq(a->lines, b->lines);
	ck_assert_uint_eq(a->records_parsed, b->records_parsed);
	ck_assert_uint_eq(a->records_skipped, b->records_skipped);
	ck_assert_uint_eq(a->records_malformed, b->records_malformed);
	ck_assert_uint_eq(a->srclines, b->srclines);
	ck_assert_uint_eq(a->npreviews, b->npreviews);
	for (size_t i = 0; i < a->npreviews; i++)
		ck_assert_uint_eq(a->previews[i].line_no, b->previews[i].line_no);
	pl_buf_release(&ta);
	pl_buf_release(&tb);
}

/* Frame lines taken a record at a time give what line by line gives: with
 * srclines, a malformed frame line, CRLF lines, blank lines of spaces, a
 * frame line longer than the limit given to pl_ps_body (40), records that
 * repeat (in the same order, which pl_ps_body guesses), and an
 * unterminated last record. */
START_TEST(frame_lines_taken_at_once_match_line_by_line)
{
	static const char text[] =
		"# header\n"
		"a 1 1.0: 10 cpu-clock:\n\t1 fib (/x)\n\t4 main (/x)\n\n"
		"a 1 1.1: 10 cpu-clock:\n\t1 fib (/x)\n\t4 main (/x)\n   \n"
		"b 2 1.2: 5 cpu-clock:\n\t1 fib (/x)\n  fib.c:12\n\t4 main (/x)\n\n"
		"b 2 1.3: 5 cpu-clock:\n\t1 fib (/x)\r\n\t4 main (/x)\r\n\r\n"
		"c 3 1.4: 7 cpu-clock:\n\tzz not a frame\n\t4 main (/x)\n\n"
		"c 3 1.5: 7 cpu-clock:\n\t5 a_symbol_name_long_enough_to_pass_the_limit (/x)\n\t4 main (/x)\n\n"
		"a 1 1.6: 10 cpu-clock:\n\t1 fib (/x)\n\t4 main (/x)\n\n"
		/* A sequence that repeats: the second round is guessed; the
		 * last one starts like a guess but has one frame more. */
		"a 1 1.8: 1 cpu-clock:\n\t7 zed (/x)\n\t4 main (/x)\n\n"
		"a 1 1.9: 1 cpu-clock:\n\t1 fib (/x)\n\t4 main (/x)\n\n"
		"d 4 2.0: 1 cpu-clock:\n\t7 zed (/x)\n\t4 main (/x)\n\n"
		"d 4 2.1: 1 cpu-clock:\n\t1 fib (/x)\n\t4 main (/x)\n\n"
		"d 4 2.2: 1 cpu-clock:\n\t7 zed (/x)\n\t4 main (/x)\n\t8 start (/x)\n\n"
		"a 1 2.3: 3 cpu-clock:\n\t6 tail (/x)\n\t4 main (/x)\n";
	struct pl_profile other;

	pl_profile_init(&other, NULL);
	ck_assert_int_eq(feed_file(&prof, text, false), PL_OK);
	ck_assert_int_eq(feed_file(&other, text, true), PL_OK);
	assert_same_profile(&prof, &other);
	ck_assert_uint_eq(prof.srclines, 1);
	ck_assert_uint_eq(prof.records_malformed, 1);
	ck_assert_uint_eq(prof.ntails, 1);
	pl_profile_release(&other);
}
END_TEST

/* Folded lines read from a file (through the caches: whole lines, the
 * line after the last, and a known stack but for its leaf) give what the
 * one-line entry point, which has no caches, gives. */
START_TEST(folded_caches_match_line_by_line)
{
	static const char text[] =
		"a;b;c 1\na;b;d 2\na;b 3\na;b;c 4\nx;b;d 1\na;b;d;e 5\n"
		"a;b;c 1\na;b;d 2\na;;d 1\na;b;e 2\nc 1\na;b;c;d;f 1\na;b;c;d;g 1\n";
	char path[] = "/tmp/perflens-folded-XXXXXX";
	struct pl_parse_opts opts = {PL_FMT_FOLDED, "cycles", {0}};
	struct pl_profile other;
	struct pl_error err;
	uint32_t ev;
	uint64_t line_no = 0;
	const char *t = text;
	int fd = mkstemp(path);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, text, sizeof(text) - 1), (ssize_t)sizeof(text) - 1);
	close(fd);
	pl_profile_init(&other, NULL);
	ck_assert_int_eq(pl_parse_path(&prof, path, &opts, &err), PL_OK);
	ev = pl_intern_event(&other, "cycles", 6);
	while (*t) {
		const char *nl = strchr(t, '\n');
		ck_assert_int_eq(pl_folded_line(&other, ev, t, (size_t)(nl - t), ++line_no, &err), PL_OK);
		t = nl + 1;
	}
	assert_same_profile(&prof, &other);
	ck_assert_uint_eq(pl_nstacks(&prof), 10);
	pl_profile_release(&other);
	unlink(path);
}
END_TEST

/* Records for the record cache: repeats, a srcline, an unknown frame. */
static const char cache_sample[] =
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

START_TEST(record_cache_gives_what_line_by_line_parsing_gives)
{
	/* The same records again: the second time their frames come from
	 * the record cache; srclines and bad lines still count each time. */
	struct pl_profile once;
	char twice[sizeof(cache_sample) * 2 + 2];

	snprintf(twice, sizeof(twice), "%s\n%s", cache_sample, cache_sample);
	pl_profile_init(&once, NULL);
	ck_assert_int_eq(feed_file(&once, cache_sample, false), PL_OK);
	ck_assert_int_eq(feed_file(&prof, twice, false), PL_OK);
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
	struct pl_profile back;
	struct pl_error err;
	uint32_t ev;
	int fd = mkstemp(path);
	const char *s = text;

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, text, strlen(text)), (int)strlen(text));
	close(fd);
	ck_assert_int_eq(pl_parse_path(&prof, path, &opts, &err), PL_OK);
	unlink(path);
	pl_profile_init(&back, NULL);
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
	pl_profile_release(&back);
}
END_TEST

Suite *suite_parse(void)
{
	Suite *s = suite_create("parse");
	TCase *tc = tcase_create("perf_script");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, header_comm_with_spaces_and_digits_keeps_whole_comm);
	tcase_add_test(tc, header_pid_tid_and_no_time_forms);
	tcase_add_test(tc, events_stay_apart_and_pmu_names_are_kept);
	tcase_add_test(tc, frames_with_spaces_parens_unknown_and_offsets);
	tcase_add_test(tc, srcline_and_inlined_frames_are_attached);
	tcase_add_test(tc, alias_and_repeated_inline_frames_are_one_frame);
	tcase_add_test(tc, malformed_lines_are_counted_previewed_and_skipped);
	tcase_add_test(tc, unterminated_last_record_is_kept_and_marked);
	tcase_add_test(tc, depth_limit_is_an_error_not_a_truncation);
	tcase_add_test(tc, agent_chunk_switches_to_perf_stat);
	tcase_add_test(tc, folded_lines_and_bad_counts);
	tcase_add_test(tc, names_that_are_not_utf8_are_escaped_and_counted);
	tcase_add_test(tc, detect_format_from_first_lines);
	tcase_add_test(tc, a_record_without_frames_is_an_empty_stack);
	tcase_add_test(tc, frame_lines_taken_at_once_match_line_by_line);
	tcase_add_test(tc, folded_caches_match_line_by_line);
	tcase_add_test(tc, record_cache_gives_what_line_by_line_parsing_gives);
	tcase_add_test(tc, folded_line_cache_gives_what_line_by_line_parsing_gives);
	suite_add_tcase(s, tc);
	return s;
}
