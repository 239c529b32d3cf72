/* test_perf_stat.c - unit tests for perf_stat.c: number grouping, the
 * human and CSV layouts, per-line detection, derived IPC and limits.
 *
 * Most inputs are real perf 6.1 captures under fixtures/perf-stat/ (see its
 * README.md for the command behind each); synthetic-hybrid.txt and the
 * inline strings are hand-made and say so.  One test reads the real
 * `### PERF_STAT ###` section of a peer device session with zlib; it skips
 * with a printed reason when that file is absent.  Tests run from the repo
 * root, so paths are relative to it.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "base/error.h"
#include "profile/perf_stat.h"

#define FIX "fixtures/perf-stat/"
#define CHUNK "../shared/peers/device-sessions/session-x86-baseline/chunk_000.txt.gz"

/* ------------------------------------------------------------------ */
/* Helpers                                                            */
/* ------------------------------------------------------------------ */

static void feed(struct pl_stat_parser *sp, const char *line, size_t n)
{
	struct pl_error err;

	pl_error_clear(&err);
	ck_assert_int_eq(pl_stat_parser_line(sp, line, n, &err), PL_OK);
}

static void feeds(struct pl_stat_parser *sp, const char *line)
{
	feed(sp, line, strlen(line));
}

/* Parse a string of '\n'-separated lines (a fixture written inline). */
static struct pl_stat_block *parse_text(const char *text)
{
	struct pl_stat_parser *sp = pl_stat_parser_new("inline");
	const char *p = text;

	while (*p) {
		const char *nl = strchr(p, '\n');
		size_t n = nl ? (size_t)(nl - p) : strlen(p);

		feed(sp, p, n);
		p += n + (nl ? 1 : 0);
	}
	return pl_stat_parser_finish(sp);
}

static struct pl_stat_block *parse_file(const char *path)
{
	FILE *f = fopen(path, "r");
	struct pl_stat_parser *sp;
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;

	ck_assert_msg(f != NULL, "cannot open '%s'", path);
	sp = pl_stat_parser_new(path);
	while ((len = getline(&line, &cap, f)) >= 0) {
		if (len && line[len - 1] == '\n')
			len--;
		feed(sp, line, (size_t)len);
	}
	free(line);
	fclose(f);
	return pl_stat_parser_finish(sp);
}

static const struct pl_stat_counter *find(const struct pl_stat_block *b,
					  const char *event)
{
	for (size_t i = 0; i < b->ncounters; i++)
		if (strcmp(b->counters[i].event, event) == 0)
			return &b->counters[i];
	ck_abort_msg("no counter '%s'", event);
	return NULL;
}

static void expect_counted(const struct pl_stat_block *b, const char *event,
			   double value, const char *unit)
{
	const struct pl_stat_counter *c = find(b, event);

	ck_assert_msg(c->status == PL_STAT_COUNTED, "'%s' is %s", event,
		      pl_stat_status_name(c->status));
	ck_assert_double_eq_tol(c->value, value, 1e-9 * (value > 1 ? value : 1));
	ck_assert_str_eq(c->unit, unit);
}

static void expect_status(const struct pl_stat_block *b, const char *event,
			  enum pl_stat_status st)
{
	const struct pl_stat_counter *c = find(b, event);

	ck_assert_str_eq(pl_stat_status_name(c->status), pl_stat_status_name(st));
	ck_assert(c->value == 0);
	ck_assert(!c->is_integer);
}

static double num(const char *s)
{
	double v = -12345;
	bool is_int;

	ck_assert_msg(pl_stat_parse_number(s, strlen(s), &v, &is_int),
		      "'%s' should parse", s);
	return v;
}

static bool num_is_integer(const char *s)
{
	double v;
	bool is_int = false;

	ck_assert(pl_stat_parse_number(s, strlen(s), &v, &is_int));
	return is_int;
}

/* ------------------------------------------------------------------ */
/* Numbers                                                            */
/* ------------------------------------------------------------------ */

START_TEST(number_comma_groups_and_dot_is_decimal)
{
	ck_assert(num("24,673,883,923") == 24673883923.0);
	ck_assert(num("7,829.39") == 7829.39);
	ck_assert(num("1,234,567.5") == 1234567.5);
}
END_TEST

START_TEST(number_dot_groups_and_comma_is_decimal)
{
	ck_assert(num("7.829,39") == 7829.39);
	ck_assert(num("1.234.567") == 1234567.0);
	ck_assert(num("1.234.567,89") == 1234567.89);
	ck_assert(num("12,34,567.5") == 1234567.5);  /* lakh grouping */
}
END_TEST

START_TEST(number_spaces_and_apostrophes_always_group)
{
	ck_assert(num("7 829,39") == 7829.39);
	ck_assert(num("1 234") == 1234.0);
	ck_assert(num("1\xe2\x80\xaf" "234") == 1234.0);          /* U+202F */
	ck_assert(num("1\xc2\xa0" "234\xc2\xa0" "567") == 1234567.0); /* U+00A0 */
	ck_assert(num("1\xe2\x80\xaf" "582,73") == 1582.73);
	ck_assert(num("1'234'567") == 1234567.0);
	ck_assert(num("1'234.5") == 1234.5);
	ck_assert(num("1\xe2\x80\x99" "499.10") == 1499.10);      /* U+2019 */
	ck_assert(num("1\xe2\x80\x89" "234,5") == 1234.5);       /* U+2009 */
}
END_TEST

START_TEST(number_lone_mark_before_three_digits_groups)
{
	/* The documented ambiguity: a count like "1.234" is 1234. */
	ck_assert(num("1,234") == 1234.0);
	ck_assert(num("1.234") == 1234.0);
	ck_assert(num("82.813") == 82813.0);
	ck_assert(num_is_integer("1.234"));
	/* ...but not when it cannot be grouping. */
	ck_assert(num("0.105") == 0.105);
	ck_assert(num("1234.567") == 1234.567);
	ck_assert(num("1.23") == 1.23);
	ck_assert(num("604,38") == 604.38);
	ck_assert(num("1.2345") == 1.2345);
	ck_assert(num("8.001194529") == 8.001194529);
}
END_TEST

START_TEST(number_reports_integer_only_without_decimals)
{
	ck_assert(num_is_integer("42,754,609,242"));
	ck_assert(num_is_integer("0"));
	ck_assert(!num_is_integer("7,829.39"));
	ck_assert(!num_is_integer("2.00"));
	ck_assert(!num_is_integer("7 829,39"));
}
END_TEST

START_TEST(number_accepts_sign_blanks_and_long_digit_runs)
{
	ck_assert(num("-1,234.5") == -1234.5);
	ck_assert(num("+12") == 12.0);
	ck_assert(num("  88 ") == 88.0);
	ck_assert(num("18446744073709551615") == 18446744073709551615.0);
	ck_assert_double_eq_tol(num("123456789012345678901234567890"), 1.2345678901234568e29, 1e15);
	ck_assert(num("9007199254740993") >= 9007199254740992.0);
}
END_TEST

START_TEST(number_rejects_text_that_is_not_a_number)
{
	static const char *const bad[] = {
		"", " ", "abc", "12a", "1,", ",1", "1,,234", "1..2", "--1",
		"+", "1,2,3", "1.234,567.8", "1'234,567.8", "12,3456,789",
		"0,123,456", "1 2", "1\xe2\x80", "1\xc2" "234", "<not counted>",
		"1e5", "0x10", "1,234 567",
	};
	double v = 7;
	bool is_int = true;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		ck_assert_msg(!pl_stat_parse_number(bad[i], strlen(bad[i]), &v, &is_int),
			      "'%s' should not parse", bad[i]);
	ck_assert(!pl_stat_parse_number(NULL, 0, &v, &is_int));
	ck_assert(v == 7);
}
END_TEST

START_TEST(number_reads_only_n_bytes)
{
	double v;
	bool is_int;

	ck_assert(pl_stat_parse_number("1,234xyz", 5, &v, &is_int));
	ck_assert(v == 1234.0);
	ck_assert(pl_stat_parse_number("12", 1, &v, &is_int));
	ck_assert(v == 1.0);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Human layout                                                       */
/* ------------------------------------------------------------------ */

/* Feed the real `### PERF_STAT ###` section (until the next `### ` line). */
static struct pl_stat_block *parse_chunk_section(const char *path)
{
	gzFile gz = gzopen(path, "rb");
	struct pl_stat_parser *sp;
	static char line[1 << 16];
	bool in = false;

	if (!gz)
		return NULL;
	sp = pl_stat_parser_new("chunk_000");
	while (gzgets(gz, line, sizeof(line))) {
		size_t n = strlen(line);

		if (n && line[n - 1] == '\n')
			n--;
		if (strncmp(line, "### ", 4) == 0) {
			in = strncmp(line, "### PERF_STAT ###", 17) == 0;
			continue;
		}
		if (in)
			feed(sp, line, n);
	}
	gzclose(gz);
	return pl_stat_parser_finish(sp);
}

START_TEST(human_device_chunk_section_matches_recorded_counters)
{
	struct pl_stat_block *b;
	const struct pl_stat_counter *c;

	if (access(CHUNK, R_OK) != 0) {
		printf("SKIP human_device_chunk_section_matches_recorded_counters: "
		       "'%s' is absent\n", CHUNK);
		return;
	}
	b = parse_chunk_section(CHUNK);
	ck_assert_ptr_nonnull(b);
	ck_assert_uint_eq(b->ncounters, 10);
	ck_assert_uint_eq(b->lines_skipped, 0);
	ck_assert_str_eq(b->source, "chunk_000");
	ck_assert_str_eq(b->target, "process id '44774'");
	c = find(b, "cycles");
	ck_assert(c->status == PL_STAT_COUNTED);
	ck_assert(c->value == 24673883923.0);
	ck_assert(c->is_integer);
	ck_assert_double_eq_tol(c->run_percent, 84.16, 1e-9);
	ck_assert(c->variance_percent < 0);
	ck_assert_str_eq(c->comment, "3.151 GHz");
	ck_assert_str_eq(c->unit, "");
	c = find(b, "instructions");
	ck_assert(c->value == 42754609242.0);
	ck_assert(c->is_integer);
	ck_assert_str_eq(c->comment, "1.73  insn per cycle");
	c = find(b, "task-clock");
	ck_assert_double_eq_tol(c->value, 7829.39, 1e-9);
	ck_assert(!c->is_integer);
	ck_assert_str_eq(c->unit, "msec");
	ck_assert(c->run_percent < 0);
	ck_assert_str_eq(c->comment, "0.979 CPUs utilized");
	expect_counted(b, "page-faults", 0, "");
	expect_counted(b, "context-switches", 88, "");
	ck_assert_str_eq(find(b, "cache-misses")->comment, "3.26% of all cache refs");
	ck_assert_double_eq_tol(b->elapsed_seconds, 8.001194529, 1e-12);
	ck_assert(b->user_seconds < 0);
	ck_assert(b->sys_seconds < 0);
	ck_assert(b->has_ipc);
	ck_assert_double_eq_tol(b->ipc, 42754609242.0 / 24673883923.0, 1e-12);
	ck_assert_double_eq_tol(b->ipc, 1.7328, 1e-4);
	pl_stat_block_free(b);
}
END_TEST

START_TEST(human_software_events_and_unsupported_hardware)
{
	struct pl_stat_block *b = parse_file(FIX "human-sw.txt");

	ck_assert_uint_eq(b->ncounters, 5);
	ck_assert_uint_eq(b->lines_skipped, 0);
	ck_assert_str_eq(b->target, "'sleep 0.1'");
	expect_counted(b, "task-clock", 2.87, "msec");
	expect_counted(b, "context-switches", 2, "");
	expect_counted(b, "page-faults", 75, "");
	ck_assert_str_eq(find(b, "page-faults")->comment, "26.139 K/sec");
	expect_status(b, "cycles", PL_STAT_NOT_SUPPORTED);
	expect_status(b, "instructions", PL_STAT_NOT_SUPPORTED);
	ck_assert_str_eq(find(b, "cycles")->comment, "");
	ck_assert_double_eq_tol(b->elapsed_seconds, 0.105502008, 1e-12);
	ck_assert_double_eq_tol(b->user_seconds, 0.006082, 1e-12);
	ck_assert(b->sys_seconds == 0);
	ck_assert(!b->has_ipc);
	pl_stat_block_free(b);
}
END_TEST

START_TEST(human_default_event_list_parses_every_line)
{
	struct pl_stat_block *b = parse_file(FIX "human-default.txt");

	ck_assert_uint_eq(b->ncounters, 8);
	ck_assert_uint_eq(b->lines_skipped, 0);
	expect_counted(b, "cpu-migrations", 0, "");
	expect_status(b, "branch-misses", PL_STAT_NOT_SUPPORTED);
	pl_stat_block_free(b);
}
END_TEST

START_TEST(human_repeat_records_variance_and_drops_run_count)
{
	struct pl_stat_block *b = parse_file(FIX "human-repeat.txt");
	const struct pl_stat_counter *c;

	ck_assert_uint_eq(b->lines_skipped, 0);
	ck_assert_str_eq(b->target, "'sleep 0.1'");
	c = find(b, "task-clock");
	ck_assert_double_eq_tol(c->value, 3.89, 1e-12);
	ck_assert_double_eq_tol(c->variance_percent, 0.45, 1e-12);
	ck_assert(c->run_percent < 0);
	ck_assert_str_eq(c->comment, "0.037 CPUs utilized");
	ck_assert_double_eq_tol(find(b, "context-switches")->variance_percent, 33.33, 1e-12);
	ck_assert(find(b, "cycles")->variance_percent < 0);
	ck_assert_double_eq_tol(b->elapsed_seconds, 0.10511, 1e-12);
	pl_stat_block_free(b);
}
END_TEST

START_TEST(human_modifiers_keep_event_as_printed)
{
	struct pl_stat_block *b = parse_file(FIX "human-modifiers.txt");

	ck_assert_uint_eq(b->ncounters, 4);
	ck_assert_uint_eq(b->lines_skipped, 0);
	expect_counted(b, "task-clock:u", 2.28, "msec");
	expect_counted(b, "cpu-clock", 2.28, "msec");
	expect_counted(b, "page-faults:u", 71, "");
	expect_status(b, "instructions:u", PL_STAT_NOT_SUPPORTED);
	pl_stat_block_free(b);
}
END_TEST

START_TEST(human_not_counted_becomes_status_and_keeps_unit)
{
	struct pl_stat_block *b = parse_file(FIX "human-pid-not-counted.txt");

	ck_assert_str_eq(b->target, "process id '6115'");
	ck_assert_uint_eq(b->ncounters, 4);
	expect_status(b, "task-clock", PL_STAT_NOT_COUNTED);
	ck_assert_str_eq(find(b, "task-clock")->unit, "msec");
	expect_status(b, "page-faults", PL_STAT_NOT_COUNTED);
	ck_assert_double_eq_tol(b->elapsed_seconds, 0.504109607, 1e-12);
	pl_stat_block_free(b);

	b = parse_file(FIX "human-group-not-counted.txt");
	expect_status(b, "task-clock", PL_STAT_NOT_COUNTED);
	expect_status(b, "cycles", PL_STAT_NOT_SUPPORTED);
	expect_counted(b, "page-faults", 73, "");
	pl_stat_block_free(b);
}
END_TEST

START_TEST(human_pid_target_and_ungrouped_c_locale_value)
{
	struct pl_stat_block *b = parse_file(FIX "human-pid.txt");

	ck_assert_str_eq(b->target, "process id '6174'");
	expect_counted(b, "task-clock", 1006.44, "msec");
	expect_counted(b, "context-switches", 4, "");
	pl_stat_block_free(b);
}
END_TEST

/* Real captures under four locales of the same workload. */
static const struct {
	const char *file;
	double task_clock, page_faults, elapsed, user;
} locale_cases[] = {
	{FIX "human-locale-de_DE.txt", 1434.55, 82813, 1.444711725, 0.782803},
	{FIX "human-locale-fr_FR.txt", 1582.73, 82817, 1.597078325, 0.840373},
	{FIX "human-locale-de_CH.txt", 1499.10, 82865, 1.510549362, 0.865234},
	{FIX "human-locale-en_US.txt", 1519.44, 82772, 1.525084979, 0.918207},
};

START_TEST(human_locale_grouping_is_read_for_each_locale)
{
	struct pl_stat_block *b = parse_file(locale_cases[_i].file);
	const struct pl_stat_counter *c;

	ck_assert_uint_eq(b->ncounters, 5);
	ck_assert_uint_eq(b->lines_skipped, 0);
	expect_counted(b, "task-clock", locale_cases[_i].task_clock, "msec");
	c = find(b, "page-faults");
	ck_assert(c->value == locale_cases[_i].page_faults);
	ck_assert(c->is_integer);
	ck_assert_double_eq_tol(b->elapsed_seconds, locale_cases[_i].elapsed, 1e-12);
	ck_assert_double_eq_tol(b->user_seconds, locale_cases[_i].user, 1e-12);
	ck_assert_str_eq(b->target,
			 "'python3 -c x=bytearray(300_000_000);sum(range(25_000_000))'");
	pl_stat_block_free(b);
}
END_TEST

START_TEST(human_repeat_under_de_locale_uses_comma_decimals)
{
	struct pl_stat_block *b = parse_file(FIX "human-repeat-locale-de_DE.txt");
	const struct pl_stat_counter *c;

	ck_assert_uint_eq(b->lines_skipped, 0);
	ck_assert_str_eq(b->target, "'python3 -c x=bytearray(100_000_000)'");
	c = find(b, "task-clock");
	ck_assert_double_eq_tol(c->value, 604.38, 1e-12);
	ck_assert_double_eq_tol(c->variance_percent, 0.11, 1e-12);
	ck_assert_str_eq(c->comment, "0,984 CPUs utilized");
	c = find(b, "page-faults");
	ck_assert(c->value == 33993.0);
	ck_assert_double_eq_tol(c->variance_percent, 0.01, 1e-12);
	/* "0,61424 +- 0,00172 seconds time elapsed": seconds never group */
	ck_assert_double_eq_tol(b->elapsed_seconds, 0.61424, 1e-12);
	pl_stat_block_free(b);
}
END_TEST

START_TEST(human_seconds_with_three_decimals_are_not_grouped)
{
	/* synthetic: -r prints seconds with as many decimals as the noise */
	struct pl_stat_block *b = parse_text(
		"           1,444 +- 0,012 seconds time elapsed  ( +-  0,83% )\n"
		"       1.234 seconds user\n"
		"       0.500 seconds sys\n");

	ck_assert_double_eq_tol(b->elapsed_seconds, 1.444, 1e-12);
	ck_assert_double_eq_tol(b->user_seconds, 1.234, 1e-12);
	ck_assert_double_eq_tol(b->sys_seconds, 0.5, 1e-12);
	ck_assert_uint_eq(b->lines_skipped, 0);
	pl_stat_block_free(b);
}
END_TEST

START_TEST(human_space_grouped_value_keeps_unit_and_event)
{
	/* synthetic: ASCII spaces as grouping, and both groups at once */
	struct pl_stat_block *b = parse_text(
		"          7 829,39 msec task-clock        #    0,979 CPUs utilized\n"
		"    24 673 883 923      cycles            #    3,151 GHz    ( +-  0,52% )  (84,16%)\n");
	const struct pl_stat_counter *c;

	ck_assert_uint_eq(b->lines_skipped, 0);
	expect_counted(b, "task-clock", 7829.39, "msec");
	c = find(b, "cycles");
	ck_assert(c->value == 24673883923.0);
	ck_assert_double_eq_tol(c->variance_percent, 0.52, 1e-12);
	ck_assert_double_eq_tol(c->run_percent, 84.16, 1e-12);
	ck_assert_str_eq(c->comment, "3,151 GHz");
	pl_stat_block_free(b);
}
END_TEST

START_TEST(human_target_is_text_between_for_and_final_colon)
{
	/* synthetic headers */
	struct pl_stat_block *b = parse_text(" Performance counter stats for './app':");

	ck_assert_str_eq(b->target, "'./app'");
	pl_stat_block_free(b);
	b = parse_text("Performance counter stats for 'a:b' (10 runs):  ");
	ck_assert_str_eq(b->target, "'a:b'");
	pl_stat_block_free(b);
	b = parse_text(" Performance counter stats for 'system wide':");
	ck_assert_str_eq(b->target, "'system wide'");
	pl_stat_block_free(b);
	b = parse_text("1,234      cycles");
	ck_assert_str_eq(b->target, "");
	pl_stat_block_free(b);
}
END_TEST

START_TEST(human_metric_continuation_appends_to_comment)
{
	/* synthetic: perf's second metric line for one counter */
	struct pl_stat_block *b = parse_text(
		"     1,000,000      instructions      #    0.50  insn per cycle\n"
		"                                      #    0.25  stalled cycles per insn  (50.00%)\n"
		"\n"
		"                                      #    orphan metric\n");
	const struct pl_stat_counter *c = find(b, "instructions");

	ck_assert_str_eq(c->comment, "0.50  insn per cycle; 0.25  stalled cycles per insn");
	/* a blank line ends the counter, so the last metric has no owner */
	ck_assert_uint_eq(b->lines_skipped, 1);
	pl_stat_block_free(b);

	b = parse_text(" Performance counter stats for 'x':\n"
		       "                                      #    orphan metric\n");
	ck_assert_uint_eq(b->lines_skipped, 1);
	pl_stat_block_free(b);
}
END_TEST

START_TEST(human_old_perf_unit_in_parentheses)
{
	/* synthetic: perf 4.x printed "task-clock (msec)" and "[84.16%]" */
	struct pl_stat_block *b = parse_text(
		"       7829.391234      task-clock (msec)         #    0.979 CPUs utilized\n"
		"    24,673,883,923      cycles                    #    3.151 GHz                     [84.16%]\n");

	ck_assert_uint_eq(b->lines_skipped, 0);
	expect_counted(b, "task-clock", 7829.391234, "msec");
	ck_assert_double_eq_tol(find(b, "cycles")->run_percent, 84.16, 1e-12);
	pl_stat_block_free(b);
}
END_TEST

START_TEST(human_blank_and_crlf_lines_are_ignored)
{
	struct pl_stat_block *b = parse_text(
		"\n   \t  \n\r\n"
		"                88      context-switches                 #   11.240 /sec\r\n"
		"       8.001194529 seconds time elapsed\r\n");

	ck_assert_uint_eq(b->lines_skipped, 0);
	ck_assert_uint_eq(b->ncounters, 1);
	ck_assert_str_eq(find(b, "context-switches")->comment, "11.240 /sec");
	ck_assert_double_eq_tol(b->elapsed_seconds, 8.001194529, 1e-12);
	pl_stat_block_free(b);
}
END_TEST

START_TEST(human_unknown_lines_are_counted_not_fatal)
{
	/* synthetic malformed and foreign lines: each one is skipped */
	struct pl_stat_block *b = parse_text(
		"### PERF_STAT ###\n"
		"Some events weren't counted. Try disabling the NMI watchdog:\n"
		"\techo 0 > /proc/sys/kernel/nmi_watchdog\n"
		"     1.001234567              2.50 msec task-clock\n"       /* -I */
		"     1.001234567                 75      page-faults\n"      /* -I */
		"CPU0                 2.50 msec task-clock\n"                 /* -A */
		"        12,34,5      cycles\n"                               /* bad grouping */
		"        1,234\n"                                             /* no event */
		"        1,234      9cycles\n"                                /* not an event */
		"        1,234      cycles  extra  words\n"
		"        1,234msec cycles\n"
		"     <not supported>cycles\n"
		"        <not a status>      cycles\n"
		"        abc seconds time elapsed\n"
		"     <not counted> seconds user\n"
		"     12 ( +- x% )\n"
		"{\"counter-value\" : \"75.000000\", \"event\" : \"page-faults\"}\n"
		"      75      page-faults      # fine\n");

	ck_assert_uint_eq(b->ncounters, 1);
	ck_assert_uint_eq(b->lines_skipped, 17);
	expect_counted(b, "page-faults", 75, "");
	ck_assert(b->elapsed_seconds < 0);
	ck_assert(b->user_seconds < 0);
	pl_stat_block_free(b);
}
END_TEST

/* ------------------------------------------------------------------ */
/* CSV layout                                                         */
/* ------------------------------------------------------------------ */

START_TEST(csv_comma_fixture_reads_every_field)
{
	struct pl_stat_block *b = parse_file(FIX "csv-comma.txt");
	const struct pl_stat_counter *c;

	ck_assert_uint_eq(b->ncounters, 5);
	ck_assert_uint_eq(b->lines_skipped, 0);
	ck_assert_str_eq(b->target, "");
	c = find(b, "task-clock");
	ck_assert_double_eq_tol(c->value, 3.80, 1e-12);
	ck_assert(!c->is_integer);
	ck_assert_str_eq(c->unit, "msec");
	ck_assert_double_eq_tol(c->run_percent, 100.0, 1e-12);
	ck_assert(c->variance_percent < 0);
	ck_assert_str_eq(c->comment, "0.036 CPUs utilized");
	c = find(b, "page-faults");
	ck_assert(c->value == 74.0);
	ck_assert(c->is_integer);
	ck_assert_str_eq(c->unit, "");
	ck_assert_str_eq(c->comment, "19.489 K/sec");
	ck_assert(b->elapsed_seconds < 0);
	pl_stat_block_free(b);
}
END_TEST

START_TEST(csv_not_supported_becomes_status)
{
	struct pl_stat_block *b = parse_file(FIX "csv-comma.txt");

	expect_status(b, "cycles", PL_STAT_NOT_SUPPORTED);
	ck_assert_str_eq(find(b, "cycles")->comment, "");
	ck_assert(!b->has_ipc);
	pl_stat_block_free(b);

	b = parse_text("<not counted>,,cpu_atom/cycles/,0,0.00,,\n");
	expect_status(b, "cpu_atom/cycles/", PL_STAT_NOT_COUNTED);
	ck_assert(find(b, "cpu_atom/cycles/")->run_percent == 0);
	pl_stat_block_free(b);
}
END_TEST

/* perf stat -x prints no seconds lines; the tool events say the same. */
START_TEST(csv_tool_events_give_elapsed_user_and_sys)
{
	struct pl_stat_block *b = parse_text(
		"291.59,msec,task-clock,291593279,100.00,0.138,CPUs utilized\n"
		"2106580693,ns,duration_time,2106580693,100.00,7.224,G/sec\n"
		"288731000,ns,user_time,288731000,100.00,990.184,M/sec\n"
		"<not counted>,ns,system_time,0,100.00,,\n");

	ck_assert_double_eq_tol(b->elapsed_seconds, 2.106580693, 1e-12);
	ck_assert_double_eq_tol(b->user_seconds, 0.288731, 1e-12);
	/* Not counted stays unknown, never a zero. */
	ck_assert(b->sys_seconds < 0);
	pl_stat_block_free(b);
}
END_TEST

START_TEST(csv_semicolon_separator_is_detected)
{
	struct pl_stat_block *b = parse_file(FIX "csv-semicolon.txt");

	ck_assert_uint_eq(b->ncounters, 5);
	ck_assert_uint_eq(b->lines_skipped, 0);
	expect_counted(b, "task-clock", 2.64, "msec");
	expect_counted(b, "context-switches", 1, "");
	ck_assert_str_eq(find(b, "context-switches")->comment, "378.739 /sec");
	expect_status(b, "instructions", PL_STAT_NOT_SUPPORTED);
	pl_stat_block_free(b);
}
END_TEST

START_TEST(csv_repeat_reads_variance_field)
{
	struct pl_stat_block *b = parse_file(FIX "csv-repeat.txt");
	const struct pl_stat_counter *c = find(b, "task-clock");

	ck_assert_uint_eq(b->lines_skipped, 0);
	ck_assert_double_eq_tol(c->value, 3.25, 1e-12);
	ck_assert_double_eq_tol(c->variance_percent, 9.16, 1e-12);
	ck_assert_double_eq_tol(c->run_percent, 100.0, 1e-12);
	ck_assert_str_eq(c->comment, "0.031 CPUs utilized");
	ck_assert_double_eq_tol(find(b, "context-switches")->variance_percent, 16.67, 1e-12);
	pl_stat_block_free(b);

	b = parse_file(FIX "csv-semicolon-repeat.txt");
	ck_assert_uint_eq(b->lines_skipped, 0);
	ck_assert_double_eq_tol(find(b, "task-clock")->variance_percent, 2.33, 1e-12);
	expect_status(b, "instructions", PL_STAT_NOT_SUPPORTED);
	pl_stat_block_free(b);
}
END_TEST

START_TEST(csv_de_locale_comma_is_decimal_never_grouping)
{
	struct pl_stat_block *b = parse_file(FIX "csv-locale-de_DE-semicolon.txt");
	const struct pl_stat_counter *c;

	ck_assert_uint_eq(b->lines_skipped, 0);
	expect_counted(b, "task-clock", 1425.15, "msec");
	ck_assert_double_eq_tol(find(b, "task-clock")->run_percent, 100.0, 1e-12);
	c = find(b, "page-faults");
	ck_assert(c->value == 82832.0);
	ck_assert(c->is_integer);
	pl_stat_block_free(b);

	/* synthetic: CSV values are never grouped, so "1,234" is 1.234 */
	b = parse_text("1,234;;cycles;1000;100,00;;\n");
	expect_counted(b, "cycles", 1.234, "");
	pl_stat_block_free(b);
}
END_TEST

START_TEST(csv_pmu_terms_split_by_separator_are_rejoined)
{
	/* synthetic: perf does not escape the separator inside event names */
	struct pl_stat_block *b = parse_text(
		"123,,cpu/event=0x3c,umask=0x00/u,1000,100.00,,\n"
		"456,,cpu_core/cycles/,1000,50.00,4.5,GHz\n");

	ck_assert_uint_eq(b->lines_skipped, 0);
	expect_counted(b, "cpu/event=0x3c,umask=0x00/u", 123, "");
	ck_assert_double_eq_tol(find(b, "cpu/event=0x3c,umask=0x00/u")->run_percent, 100.0, 1e-12);
	ck_assert_str_eq(find(b, "cpu_core/cycles/")->comment, "4.5 GHz");
	ck_assert_double_eq_tol(find(b, "cpu_core/cycles/")->run_percent, 50.0, 1e-12);
	pl_stat_block_free(b);
}
END_TEST

START_TEST(csv_short_lines_without_optional_fields)
{
	/* synthetic: only value, unit, event */
	struct pl_stat_block *b = parse_text("42,,instructions\n7.5,msec,task-clock,\n");

	ck_assert_uint_eq(b->lines_skipped, 0);
	expect_counted(b, "instructions", 42, "");
	ck_assert(find(b, "instructions")->run_percent < 0);
	ck_assert_str_eq(find(b, "instructions")->comment, "");
	expect_counted(b, "task-clock", 7.5, "msec");
	pl_stat_block_free(b);
}
END_TEST

START_TEST(csv_interval_and_per_cpu_lines_are_skipped)
{
	/* synthetic: -I and -A prefix the CSV fields */
	struct pl_stat_block *b = parse_text(
		"1.001234567,1234,,cycles,1000,100.00,,\n"
		"1.001234567,3.25,msec,task-clock,1000,100.00,,\n"
		"CPU0,3.25,msec,task-clock,1000,100.00,,\n"
		",,,,,,0.50,stalled cycles per insn\n"
		"3,\n"
		"3,,\n"
		"3,,,\n"
		"<not counted>,,,\n"
		"3 ,,cycles\n");

	ck_assert_uint_eq(b->ncounters, 0);
	ck_assert_uint_eq(b->lines_skipped, 9);
	pl_stat_block_free(b);
}
END_TEST

START_TEST(csv_and_human_lines_mix_in_one_stream)
{
	struct pl_stat_block *b = parse_text(
		" Performance counter stats for 'mix':\n"
		"          1,234.50 msec task-clock                       #    0.979 CPUs utilized\n"
		"1234.5,msec,cpu-clock,3797047,100.00,0.036,CPUs utilized\n"
		"24,673,883,923,456,789      cycles\n"  /* human without padding */
		"2;;context-switches;2640344;100.00;378.739;/sec\n");

	ck_assert_uint_eq(b->lines_skipped, 0);
	ck_assert_uint_eq(b->ncounters, 4);
	expect_counted(b, "task-clock", 1234.5, "msec");
	expect_counted(b, "cpu-clock", 1234.5, "msec");
	expect_counted(b, "cycles", 24673883923456789.0, "");
	expect_counted(b, "context-switches", 2, "");
	ck_assert_str_eq(b->target, "'mix'");
	pl_stat_block_free(b);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Derived IPC                                                        */
/* ------------------------------------------------------------------ */

START_TEST(ipc_pairs_counters_of_the_same_pmu)
{
	/* synthetic-hybrid.txt is hand-made: this VM has no hybrid PMU */
	struct pl_stat_block *b = parse_file(FIX "synthetic-hybrid.txt");

	ck_assert_uint_eq(b->lines_skipped, 0);
	ck_assert_uint_eq(b->ncounters, 9);
	ck_assert_str_eq(b->target, "'./app'");
	expect_counted(b, "cpu_core/cycles/", 4924051013.0, "");
	expect_status(b, "cpu_atom/cycles/", PL_STAT_NOT_COUNTED);
	ck_assert(find(b, "cpu_atom/cycles/")->run_percent == 0);
	ck_assert(b->has_ipc);
	ck_assert_double_eq_tol(b->ipc, 16053498224.0 / 4924051013.0, 1e-12);
	ck_assert_double_eq_tol(b->user_seconds, 1.094089, 1e-12);
	pl_stat_block_free(b);
}
END_TEST

START_TEST(ipc_never_pairs_different_pmus_or_modifiers)
{
	/* synthetic */
	struct pl_stat_block *b = parse_text(
		"  2,000      cpu_core/instructions/\n"
		"  1,000      cpu_atom/cycles/\n"
		"  3,000      instructions:u\n"
		"  1,000      cycles:k\n"
		"  5,000      instructions\n"
		"  1,000      cpu_core/cycles/u\n");

	ck_assert_uint_eq(b->ncounters, 6);
	ck_assert(!b->has_ipc);
	pl_stat_block_free(b);
}
END_TEST

START_TEST(ipc_needs_both_sides_counted_and_nonzero_cycles)
{
	/* synthetic */
	struct pl_stat_block *b = parse_text(
		"  5,000      instructions\n"
		"  <not supported>      cycles\n");

	ck_assert(!b->has_ipc);
	ck_assert(b->ipc == 0);
	pl_stat_block_free(b);
	b = parse_text("  5,000      instructions\n  <not counted>      cycles\n");
	ck_assert(!b->has_ipc);
	pl_stat_block_free(b);
	b = parse_text("  5,000      instructions\n          0      cycles\n");
	ck_assert(!b->has_ipc);
	pl_stat_block_free(b);
	b = parse_text("  5,000      cycles\n");
	ck_assert(!b->has_ipc);
	pl_stat_block_free(b);
	b = parse_text("  0      instructions\n  5,000      cpu-cycles\n");
	ck_assert(b->has_ipc);
	ck_assert(b->ipc == 0);
	pl_stat_block_free(b);
}
END_TEST

START_TEST(ipc_prefers_plain_pair_then_first_complete_pair)
{
	/* synthetic: both PMUs counted, then a plain pair at the end */
	struct pl_stat_block *b = parse_text(
		"  4,000      cpu_atom/instructions/\n"
		"  1,000      cpu_atom/cycles/\n"
		"  6,000      cpu_core/instructions/\n"
		"  2,000      cpu_core/cycles/\n"
		"  9,000      instructions\n"
		"  3,000      cycles\n");

	ck_assert(b->has_ipc);
	ck_assert_double_eq_tol(b->ipc, 3.0, 1e-12);
	pl_stat_block_free(b);

	b = parse_text("4,000,,cpu_atom/instructions/,1,100.00,,\n"
		       "1,000,,cpu_atom/cycles/,1,100.00,,\n"
		       "6000,,cpu_core/instructions/,1,100.00,,\n"
		       "2000,,cpu_core/cycles/,1,100.00,,\n");
	/* "4,000" in CSV is not a plain number: that line is skipped */
	ck_assert_uint_eq(b->lines_skipped, 2);
	ck_assert(b->has_ipc);
	ck_assert_double_eq_tol(b->ipc, 3.0, 1e-12);
	pl_stat_block_free(b);

	b = parse_text("  4,000      cpu_atom/instructions/\n"
		       "  1,000      cpu_atom/cycles/\n"
		       "  6,000      instructions:u\n"
		       "  2,000      cycles:u\n");
	ck_assert(b->has_ipc);
	ck_assert_double_eq_tol(b->ipc, 3.0, 1e-12);
	pl_stat_block_free(b);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Limits, errors and robustness                                      */
/* ------------------------------------------------------------------ */

START_TEST(line_over_one_mib_fails_with_limit_and_parser_goes_on)
{
	struct pl_stat_parser *sp = pl_stat_parser_new("big.txt");
	struct pl_stat_block *b;
	struct pl_error err;
	size_t n = ((size_t)1 << 20) + 1;
	char *line = malloc(n);

	ck_assert_ptr_nonnull(line);
	memset(line, ' ', n);
	pl_error_clear(&err);
	ck_assert_int_eq(pl_stat_parser_line(sp, line, n, &err), PL_ERR_LIMIT);
	ck_assert_int_eq(err.code, PL_ERR_LIMIT);
	ck_assert_str_eq(err.text,
			 "line of 1048577 bytes in 'big.txt' is over the 1048576 byte limit");
	ck_assert_str_eq(pl_err_name(err.code), "limit_exceeded");
	/* exactly 1 MiB is still a line */
	memcpy(line + n - 1 - 20, "75      page-faults", 19);
	ck_assert_int_eq(pl_stat_parser_line(sp, line, n - 1, &err), PL_OK);
	free(line);
	feeds(sp, "  88      context-switches");
	b = pl_stat_parser_finish(sp);
	ck_assert_uint_eq(b->ncounters, 2);
	ck_assert_uint_eq(b->lines_skipped, 0);
	pl_stat_block_free(b);
}
END_TEST

START_TEST(null_arguments_are_refused_or_harmless)
{
	struct pl_stat_parser *sp = pl_stat_parser_new(NULL);
	struct pl_stat_block *b;
	struct pl_error err;

	ck_assert_int_eq(pl_stat_parser_line(NULL, "x", 1, &err), PL_ERR_USAGE);
	ck_assert_int_eq(pl_stat_parser_line(sp, NULL, 3, NULL), PL_ERR_USAGE);
	ck_assert_int_eq(pl_stat_parser_line(sp, NULL, 0, NULL), PL_OK);
	ck_assert_ptr_null(pl_stat_parser_finish(NULL));
	pl_stat_block_free(NULL);
	b = pl_stat_parser_finish(sp);
	ck_assert_str_eq(b->source, "");
	ck_assert_str_eq(b->target, "");
	ck_assert_uint_eq(b->ncounters, 0);
	ck_assert(b->elapsed_seconds < 0 && b->user_seconds < 0 && b->sys_seconds < 0);
	ck_assert(!b->has_ipc);
	pl_stat_block_free(b);
}
END_TEST

START_TEST(status_names_are_stable)
{
	ck_assert_str_eq(pl_stat_status_name(PL_STAT_COUNTED), "counted");
	ck_assert_str_eq(pl_stat_status_name(PL_STAT_NOT_SUPPORTED), "not_supported");
	ck_assert_str_eq(pl_stat_status_name(PL_STAT_NOT_COUNTED), "not_counted");
	ck_assert_str_eq(pl_stat_status_name((enum pl_stat_status)42), "unknown");
}
END_TEST

START_TEST(lines_are_read_only_up_to_n_bytes)
{
	struct pl_stat_parser *sp = pl_stat_parser_new("n");
	struct pl_stat_block *b;
	const char text[] = "  75      page-faults      # 1 K/secGARBAGE";

	feed(sp, text, sizeof(text) - 1 - 7);
	b = pl_stat_parser_finish(sp);
	ck_assert_str_eq(find(b, "page-faults")->comment, "1 K/sec");
	pl_stat_block_free(b);
}
END_TEST

START_TEST(long_comments_and_targets_are_cut_not_fatal)
{
	struct pl_stat_parser *sp = pl_stat_parser_new("long");
	struct pl_stat_block *b;
	size_t n = 100000;
	char *line = malloc(n);

	ck_assert_ptr_nonnull(line);
	memset(line, 'x', n);
	memcpy(line, "  75      page-faults  # ", 25);
	feed(sp, line, n);
	for (int i = 0; i < 3; i++)
		feeds(sp, "     # more text of a metric that keeps on going and going");
	memcpy(line, "Performance counter stats for ", 30);
	feed(sp, line, n);
	b = pl_stat_parser_finish(sp);
	ck_assert_uint_eq(strlen(find(b, "page-faults")->comment), 4096);
	ck_assert_uint_eq(strlen(b->target), 4096);
	ck_assert_uint_eq(b->lines_skipped, 3);
	pl_stat_block_free(b);
	free(line);
}
END_TEST

/* Every prefix of every line of every fixture, and random bytes drawn from
 * the characters perf prints: the parser must return PL_OK for all. */
static const char *const all_fixtures[] = {
	FIX "human-sw.txt", FIX "human-repeat.txt", FIX "human-modifiers.txt",
	FIX "human-default.txt", FIX "human-pid.txt",
	FIX "human-pid-not-counted.txt", FIX "human-group-not-counted.txt",
	FIX "human-locale-de_DE.txt", FIX "human-locale-fr_FR.txt",
	FIX "human-locale-de_CH.txt", FIX "human-locale-en_US.txt",
	FIX "human-repeat-locale-de_DE.txt", FIX "csv-comma.txt",
	FIX "csv-semicolon.txt", FIX "csv-repeat.txt",
	FIX "csv-semicolon-repeat.txt", FIX "csv-locale-de_DE-semicolon.txt",
	FIX "synthetic-hybrid.txt",
};

START_TEST(truncated_fixture_lines_never_fail)
{
	struct pl_stat_parser *sp = pl_stat_parser_new("prefixes");
	FILE *f = fopen(all_fixtures[_i], "r");
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;

	ck_assert_ptr_nonnull(f);
	while ((len = getline(&line, &cap, f)) >= 0) {
		for (ssize_t k = 0; k <= len; k++) {
			feed(sp, line, (size_t)k);
			feed(sp, line + k, (size_t)(len - k));
		}
	}
	free(line);
	fclose(f);
	pl_stat_block_free(pl_stat_parser_finish(sp));
}
END_TEST

START_TEST(random_lines_never_fail)
{
	static const char alphabet[] =
		"0123456789,.;' <>#()[]%+-/:_\t\rabcmsu\xe2\x80\xaf\xc2\xa0\x99";
	struct pl_stat_parser *sp = pl_stat_parser_new("random");
	struct pl_stat_block *b;
	uint64_t state = 0x9e3779b97f4a7c15u;
	char line[96];

	for (int i = 0; i < 50000; i++) {
		size_t n;

		state = state * 6364136223846793005u + 1442695040888963407u;
		n = (size_t)(state >> 58) + (size_t)(state >> 61);
		for (size_t k = 0; k < n; k++) {
			state = state * 6364136223846793005u + 1442695040888963407u;
			line[k] = alphabet[(state >> 33) % (sizeof(alphabet) - 1)];
		}
		feed(sp, line, n);
	}
	b = pl_stat_parser_finish(sp);
	for (size_t i = 0; i < b->ncounters; i++) {
		ck_assert_ptr_nonnull(b->counters[i].event);
		ck_assert_ptr_nonnull(b->counters[i].unit);
		ck_assert_ptr_nonnull(b->counters[i].comment);
	}
	pl_stat_block_free(b);
}
END_TEST

Suite *suite_perf_stat(void)
{
	Suite *s = suite_create("perf_stat");
	TCase *num_tc = tcase_create("number");
	TCase *human = tcase_create("human");
	TCase *csv = tcase_create("csv");
	TCase *ipc = tcase_create("ipc");
	TCase *limits = tcase_create("limits");

	tcase_add_test(num_tc, number_comma_groups_and_dot_is_decimal);
	tcase_add_test(num_tc, number_dot_groups_and_comma_is_decimal);
	tcase_add_test(num_tc, number_spaces_and_apostrophes_always_group);
	tcase_add_test(num_tc, number_lone_mark_before_three_digits_groups);
	tcase_add_test(num_tc, number_reports_integer_only_without_decimals);
	tcase_add_test(num_tc, number_accepts_sign_blanks_and_long_digit_runs);
	tcase_add_test(num_tc, number_rejects_text_that_is_not_a_number);
	tcase_add_test(num_tc, number_reads_only_n_bytes);
	suite_add_tcase(s, num_tc);

	tcase_add_test(human, human_device_chunk_section_matches_recorded_counters);
	tcase_add_test(human, human_software_events_and_unsupported_hardware);
	tcase_add_test(human, human_default_event_list_parses_every_line);
	tcase_add_test(human, human_repeat_records_variance_and_drops_run_count);
	tcase_add_test(human, human_modifiers_keep_event_as_printed);
	tcase_add_test(human, human_not_counted_becomes_status_and_keeps_unit);
	tcase_add_test(human, human_pid_target_and_ungrouped_c_locale_value);
	tcase_add_loop_test(human, human_locale_grouping_is_read_for_each_locale,
			    0, (int)(sizeof(locale_cases) / sizeof(locale_cases[0])));
	tcase_add_test(human, human_repeat_under_de_locale_uses_comma_decimals);
	tcase_add_test(human, human_seconds_with_three_decimals_are_not_grouped);
	tcase_add_test(human, human_space_grouped_value_keeps_unit_and_event);
	tcase_add_test(human, human_target_is_text_between_for_and_final_colon);
	tcase_add_test(human, human_metric_continuation_appends_to_comment);
	tcase_add_test(human, human_old_perf_unit_in_parentheses);
	tcase_add_test(human, human_blank_and_crlf_lines_are_ignored);
	tcase_add_test(human, human_unknown_lines_are_counted_not_fatal);
	suite_add_tcase(s, human);

	tcase_add_test(csv, csv_comma_fixture_reads_every_field);
	tcase_add_test(csv, csv_not_supported_becomes_status);
	tcase_add_test(csv, csv_tool_events_give_elapsed_user_and_sys);
	tcase_add_test(csv, csv_semicolon_separator_is_detected);
	tcase_add_test(csv, csv_repeat_reads_variance_field);
	tcase_add_test(csv, csv_de_locale_comma_is_decimal_never_grouping);
	tcase_add_test(csv, csv_pmu_terms_split_by_separator_are_rejoined);
	tcase_add_test(csv, csv_short_lines_without_optional_fields);
	tcase_add_test(csv, csv_interval_and_per_cpu_lines_are_skipped);
	tcase_add_test(csv, csv_and_human_lines_mix_in_one_stream);
	suite_add_tcase(s, csv);

	tcase_add_test(ipc, ipc_pairs_counters_of_the_same_pmu);
	tcase_add_test(ipc, ipc_never_pairs_different_pmus_or_modifiers);
	tcase_add_test(ipc, ipc_needs_both_sides_counted_and_nonzero_cycles);
	tcase_add_test(ipc, ipc_prefers_plain_pair_then_first_complete_pair);
	suite_add_tcase(s, ipc);

	tcase_set_timeout(limits, 60);
	tcase_add_test(limits, line_over_one_mib_fails_with_limit_and_parser_goes_on);
	tcase_add_test(limits, null_arguments_are_refused_or_harmless);
	tcase_add_test(limits, status_names_are_stable);
	tcase_add_test(limits, lines_are_read_only_up_to_n_bytes);
	tcase_add_test(limits, long_comments_and_targets_are_cut_not_fatal);
	tcase_add_loop_test(limits, truncated_fixture_lines_never_fail, 0,
			    (int)(sizeof(all_fixtures) / sizeof(all_fixtures[0])));
	tcase_add_test(limits, random_lines_never_fail);
	suite_add_tcase(s, limits);
	return s;
}
