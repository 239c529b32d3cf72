/* test_tracepoints.c - unit tests for what collection hands the parser:
 * the off-CPU records collect_profile writes (event offcpu-time, period in
 * ns, the task state as the leaf frame) and perf's tracepoint samples.
 *
 * Inputs are the text forms collectors/offcpu.c writes and perf script
 * prints for `perf sched record` files, as seen on this machine's perf.
 */
#include <check.h>

#include "testlib.h"
#include <stdlib.h>
#include <string.h>

#include "profile/parse.h"
#include "profile/sched.h"

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
	return feed_script(&prof, text);
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

/* A record that sums N waits says so ("waits=N" where a tracepoint's
 * fields go): it counts as N samples, and the event as one whose samples
 * count waits; a record without it (perf's own --off-cpu output), or with
 * a malformed count, is one sample and marks nothing. */
START_TEST(offcpu_records_count_their_waits_as_samples)
{
	ck_assert_int_eq(feed("w 41/42 900 offcpu-time: waits=7\n"
			      "\t0 [state S]\n"
			      "\tffffffff82265908 __schedule ([kernel.kallsyms])\n\n"
			      "w 41/43 100 offcpu-time: waits=3\n"
			      "\t0 [state D]\n"
			      "\tffffffff82265908 __schedule ([kernel.kallsyms])\n\n"), PL_OK);
	uint32_t ev = pl_find_event(&prof, "offcpu-time");
	ck_assert_uint_eq(prof.events[ev].samples, 10);
	ck_assert_uint_eq(prof.events[ev].period, 1000);
	ck_assert(pl_event_counts_waits(&prof, ev));
	ck_assert_uint_eq(pl_stack_weight(&prof, 0, ev)->samples, 7);
	pl_profile_release(&prof);
	setup();
	ck_assert_int_eq(feed("w 41/42 900 offcpu-time:\n\t0 [state S]\n\n"
			      "w 41/42 900 offcpu-time: waits=x\n\t0 [state D]\n\n"
			      "w 41/42 900 offcpu-time: waits=0\n\t0 [state R]\n\n"), PL_OK);
	ev = pl_find_event(&prof, "offcpu-time");
	ck_assert_uint_eq(prof.events[ev].samples, 3);
	ck_assert(!pl_event_counts_waits(&prof, ev));
}
END_TEST

/* perf sched record's samples have no call chain: perf right-aligns the
 * comm and prints the frame after the tracepoint's text. */
static const char *const sched_text =
	"            perf  7375/7375    723.849818:      68101 sched:sched_stat_runtime: comm=perf pid=7375 runtime=68101 [ns] ffffffff813b9957 update_se+0x1a7 ([kernel.kallsyms])\n"
	"             blk  7377/7377    723.851000:          1       sched:sched_switch: prev_comm=blk prev_pid=7377 prev_prio=120 prev_state=S ==> next_comm=be quiet next_pid=7378 next_prio=120 ffffffff82265908 __schedule+0x628 ([kernel.kallsyms])\n"
	"        be quiet  7378/7378    723.852000:          1       sched:sched_waking: comm=blk pid=7377 prio=120 target_cpu=000 ffffffff813b4b46 try_to_wake_up+0x3b6 ([kernel.kallsyms])\n"
	"             :-1    -1/-1      723.853000:          1       sched:sched_switch: prev_comm=be quiet prev_pid=7378 prev_prio=120 prev_state=R+ ==> next_comm=blk next_pid=7377 next_prio=120 ffffffff82265908 __schedule+0x628 ([kernel.kallsyms])\n"
	"             blk  7377/7377    723.857000:          1       sched:sched_switch: prev_comm=blk prev_pid=7377 prev_prio=120 prev_state=S ==> next_comm=be quiet next_pid=7378 next_prio=120 ffffffff82265908 __schedule+0x628 ([kernel.kallsyms])\n";

static const struct pl_sched_task *sched_task(int64_t tid)
{
	for (size_t i = 0; prof.sched && i < prof.sched->ntasks; i++)
		if (prof.sched->tasks[i].tid == tid)
			return &prof.sched->tasks[i];
	return NULL;
}

START_TEST(sched_samples_without_call_chains_are_each_their_own_event)
{
	ck_assert_int_eq(feed(sched_text), PL_OK);
	ck_assert_uint_eq(prof.records_malformed, 0);
	ck_assert_uint_eq(prof.srclines, 0);
	ck_assert_uint_eq(prof.nevents, 3);
	ck_assert_uint_eq(prof.events[pl_find_event(&prof, "sched:sched_switch")].samples, 3);
	ck_assert_uint_eq(prof.events[pl_find_event(&prof, "sched:sched_waking")].samples, 1);
	/* The frame after the text, not a word of the comm "be quiet". */
	ck_assert_str_eq(frame_symbol(1, 0), "__schedule");
	ck_assert_str_eq(pl_str(&prof, prof.threads[prof.stacks[0].thread].comm), "perf");
}
END_TEST

START_TEST(sched_table_splits_run_wait_and_delay_as_timehist)
{
	const struct pl_sched_task *blk, *quiet;

	ck_assert_int_eq(feed(sched_text), PL_OK);
	blk = sched_task(7377);
	quiet = sched_task(7378);
	ck_assert_ptr_nonnull(blk);
	ck_assert_ptr_nonnull(quiet);
	/* blk: asleep 851.000-853.000 (woken at 852.000), runs to 857.000. */
	ck_assert_uint_eq(blk->wait_ns, 2000000);
	ck_assert_uint_eq(blk->delay_ns, 1000000);
	ck_assert_uint_eq(blk->run_ns, 4000000);
	ck_assert_int_eq(blk->pid, 7377);
	ck_assert_str_eq(pl_str(&prof, blk->comm), "blk");
	/* "be quiet": runs 851.000-853.000, preempted (R+) until 857.000. */
	ck_assert_uint_eq(quiet->run_ns, 2000000);
	ck_assert_uint_eq(quiet->wait_ns, 4000000);
	ck_assert_uint_eq(quiet->delay_ns, 4000000);
	/* Every task is mid-interval when the recording ends: left out. */
	ck_assert_uint_eq(pl_sched_open_intervals(prof.sched), prof.sched->ntasks);
	ck_assert_ptr_null(sched_task(-1));
}
END_TEST

/* A record without a call chain and without a frame perf could print
 * (no ip field): the next, indented header is still a header. */
START_TEST(indented_header_after_a_frameless_record_is_a_header)
{
	ck_assert_int_eq(feed("             blk  7377/7377    723.851000:          1       sched:sched_switch: prev_comm=blk prev_pid=7377 prev_prio=120 prev_state=S ==> next_comm=dead beef next_pid=7378 next_prio=120\n"
			      "       dead beef  7378/7378    723.852000:          1       sched:sched_switch: prev_comm=dead beef prev_pid=7378 prev_prio=120 prev_state=S ==> next_comm=blk next_pid=7377 next_prio=120\n"), PL_OK);
	ck_assert_uint_eq(prof.records_malformed, 0);
	ck_assert_uint_eq(prof.srclines, 0);
	ck_assert_uint_eq(prof.events[pl_find_event(&prof, "sched:sched_switch")].samples, 2);
	ck_assert_uint_eq(sched_task(7378)->run_ns, 1000000);
}
END_TEST

Suite *suite_tracepoints(void)
{
	Suite *s = suite_create("tracepoints");
	TCase *tc = tcase_create("core");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, offcpu_records_keep_task_state_and_nanoseconds);
	tcase_add_test(tc, offcpu_records_count_their_waits_as_samples);
	tcase_add_test(tc, sched_samples_without_call_chains_are_each_their_own_event);
	tcase_add_test(tc, sched_table_splits_run_wait_and_delay_as_timehist);
	tcase_add_test(tc, indented_header_after_a_frameless_record_is_a_header);
	suite_add_tcase(s, tc);
	return s;
}
