/* test_tracepoints.c - unit tests for what collection hands the parser:
 * the off-CPU records collect_profile writes (event offcpu-time, period in
 * ns, the task state as the leaf frame) and perf's tracepoint samples.
 *
 * Inputs are the text forms collectors/offcpu.c writes and perf script
 * prints for `perf sched record` files, as seen on this machine's perf.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "profile/parse.h"

static struct pl_profile prof;

static void setup(void)
{
	pl_profile_init(&prof, NULL);
}

static void teardown(void)
{
	pl_profile_release(&prof);
}

static enum pl_err feed(const char *text)
{
	struct pl_ps_parser *ps = pl_ps_new(&prof, "test");
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

static const char *frame_symbol(uint32_t s, uint32_t d)
{
	const struct pl_stack *st = &prof.stacks[s];
	return pl_str(&prof, prof.funcs[prof.frames[st->frames[d]].func].symbol);
}

START_TEST(offcpu_records_keep_task_state_and_nanoseconds)
{
	ck_assert_int_eq(feed("my worker 41/42 107207502 offcpu-time:\n"
			      "\t0 [state S]\n"
			      "\tffffffff82265908 __schedule ([kernel.kallsyms])\n"
			      "\tffffffff816e6623 anon_pipe_read ([kernel.kallsyms])\n"
			      "\tf82ad read (/usr/lib/x86_64-linux-gnu/libc.so.6)\n\n"
			      "my worker 41/42 50000 offcpu-time:\n"
			      "\t0 [state D]\n"
			      "\tffffffff82265908 __schedule ([kernel.kallsyms])\n\n"), PL_OK);
	uint32_t ev = pl_find_event(&prof, "offcpu-time");
	ck_assert_uint_ne(ev, PL_NOID);
	ck_assert_str_eq(pl_event_unit(&prof, ev), "ns");
	ck_assert_uint_eq(prof.events[ev].period, 107257502);
	ck_assert_uint_eq(pl_nstacks(&prof), 2);
	ck_assert_int_eq(prof.threads[prof.stacks[0].thread].pid, 41);
	ck_assert_int_eq(prof.threads[prof.stacks[0].thread].tid, 42);
	ck_assert_str_eq(pl_str(&prof, prof.threads[prof.stacks[0].thread].comm), "my worker");
	/* Root first: read, anon_pipe_read, __schedule, then the state. */
	ck_assert_uint_eq(prof.stacks[0].depth, 4);
	ck_assert_str_eq(frame_symbol(0, 3), "[state S]");
	ck_assert_str_eq(frame_symbol(0, 0), "read");
	ck_assert_str_eq(frame_symbol(1, 1), "[state D]");
}
END_TEST

Suite *suite_tracepoints(void)
{
	Suite *s = suite_create("tracepoints");
	TCase *tc = tcase_create("core");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, offcpu_records_keep_task_state_and_nanoseconds);
	suite_add_tcase(s, tc);
	return s;
}
