/* test_threads.c - unit tests for per-thread answers: the descriptions of
 * evidence/threads.h (heaviest functions with the program's own first,
 * rule shares, blocked time by task state) and the tid/comm filter of
 * tools/lib/thread_filter.h, on small profiles whose figures are known by
 * construction.  Real captures: tests/integration/test_threads.sh.
 */
#include <check.h>
#include <string.h>

#include "profile/aggregate.h"
#include "evidence/classify.h"
#include "evidence/threads.h"
#include "tools/lib/thread_filter.h"

static struct pl_profile prof;

static void setup(void)
{
	pl_profile_init(&prof, NULL);
}

static void teardown(void)
{
	pl_profile_release(&prof);
}

/* One stack "sym@dso;..." (root first) with `samples` samples of period 1
 * under `event`, in thread (pid 1, tid, comm). */
static void feed(const char *event, int64_t tid, const char *comm, const char *frames, uint64_t samples)
{
	struct pl_error err;
	uint32_t ev = pl_intern_event(&prof, event, strlen(event)), ids[16], depth = 0;
	uint32_t th = pl_intern_thread(&prof, 1, tid, pl_intern_str(&prof, comm, strlen(comm)));

	for (const char *f = frames; *f && depth < 16;) {
		size_t n = strcspn(f, ";"), at = strcspn(f, "@");
		uint32_t sym = pl_intern_str(&prof, f, at < n ? at : n);
		uint32_t dso = at < n ? pl_intern_str(&prof, f + at + 1, n - at - 1) : PL_NOID;
		ids[depth++] = pl_intern_frame(&prof, pl_intern_func(&prof, sym, dso), false, 0, PL_NOID, &err);
		f += n + (f[n] == ';');
	}
	pl_add_weight(&prof, pl_intern_stack(&prof, th, ids, depth, &err), ev, samples, samples, false);
}

#define K "@[kernel.kallsyms]"
#define LIBC "@/usr/lib/x86_64-linux-gnu/libc.so.6"
#define APP "@/opt/app"

static void feed_off_cpu(void)
{
	feed("off-cpu-us", 10, "reader", "start_thread" LIBC ";reader" APP ";[state S];read" LIBC ";ksys_read" K ";anon_pipe_read" K ";__schedule" K, 700);
	feed("off-cpu-us", 10, "reader", "start_thread" LIBC ";reader" APP ";[state D];read" LIBC ";ksys_read" K ";folio_wait_bit" K ";__schedule" K, 300);
	feed("off-cpu-us", 11, "writer", "start_thread" LIBC ";writer" APP ";[state S];clock_nanosleep" LIBC ";do_nanosleep" K ";__schedule" K, 500);
}

static json_t *describe(const char *const *comms, size_t n)
{
	const struct pl_rules *rules;
	struct pl_classifier c;
	struct pl_error err;
	struct pl_view v;
	uint32_t ids[8];
	json_t *out;

	ck_assert_int_eq(pl_rules_builtin(&rules, &err), PL_OK);
	for (size_t i = 0; i < n; i++) {
		uint32_t sid = pl_strtab_find(&prof.strs, comms[i], strlen(comms[i]));
		ids[i] = PL_NOID;
		for (uint32_t t = 0; t < pl_nthreads(&prof); t++)
			if (prof.threads[t].comm == sid)
				ids[i] = t;
		ck_assert_uint_ne(ids[i], PL_NOID);
	}
	pl_classifier_init(&c, rules, &prof, "an-00000000000000000000");
	pl_view_build(&v, &prof, 0);
	out = pl_threads_describe(&c, &v, ids, n);
	pl_view_release(&v);
	pl_classifier_release(&c);
	return out;
}

static const char *str_at(json_t *arr, size_t i, const char *key)
{
	return json_string_value(json_object_get(json_array_get(arr, i), key));
}

START_TEST(a_blocked_thread_reads_as_what_it_waits_for)
{
	const char *comms[] = {"reader", "writer"};
	json_t *out, *reader, *writer, *states;

	feed_off_cpu();
	out = describe(comms, 2);
	reader = json_array_get(out, 0);
	writer = json_array_get(out, 1);
	/* The program's own frames first (start_thread is an entry point),
	 * then the kernel's (ties broken by self: __schedule); never the
	 * [state] pseudo-frame. */
	ck_assert_str_eq(str_at(json_object_get(reader, "top_functions"), 0, "symbol"), "reader");
	ck_assert_str_eq(str_at(json_object_get(reader, "top_functions"), 1, "symbol"), "read");
	ck_assert_uint_eq(json_array_size(json_object_get(reader, "top_functions")), 3);
	/* The pipe read is I/O on a peer; the page-cache wait in state D is
	 * the disk's (one kind per stack). */
	ck_assert_str_eq(str_at(json_object_get(reader, "rule_shares"), 0, "rule"), "io_wait");
	ck_assert_double_eq_tol(json_number_value(json_object_get(json_array_get(json_object_get(reader, "rule_shares"), 0), "percent")), 70.0, 1e-9);
	ck_assert_str_eq(str_at(json_object_get(reader, "rule_shares"), 1, "rule"), "disk_io");
	ck_assert_double_eq_tol(json_number_value(json_object_get(json_array_get(json_object_get(reader, "rule_shares"), 1), "percent")), 30.0, 1e-9);
	states = json_object_get(reader, "blocked_by_state");
	ck_assert_uint_eq(json_array_size(states), 2);
	ck_assert_str_eq(str_at(states, 0, "state"), "S");
	ck_assert_double_eq_tol(json_number_value(json_object_get(json_array_get(states, 0), "percent")), 70.0, 1e-9);
	ck_assert_str_eq(str_at(states, 1, "state"), "D");
	ck_assert_str_eq(str_at(json_object_get(writer, "rule_shares"), 0, "rule"), "sleep");
	ck_assert_uint_eq(json_array_size(json_object_get(writer, "rule_shares")), 1);
	json_decref(out);
}
END_TEST

START_TEST(on_cpu_threads_have_no_state_and_their_own_rules)
{
	const char *comms[] = {"counter"};
	json_t *out, *counter;

	feed("cpu-clock", 20, "counter", "start_thread" LIBC ";counter" APP ";count_stat" APP, 90);
	feed("cpu-clock", 20, "counter", "start_thread" LIBC ";counter" APP ";pthread_mutex_lock" LIBC, 10);
	out = describe(comms, 1);
	counter = json_array_get(out, 0);
	ck_assert(json_is_null(json_object_get(counter, "blocked_by_state")));
	ck_assert_str_eq(str_at(json_object_get(counter, "top_functions"), 0, "symbol"), "counter");
	ck_assert_str_eq(str_at(json_object_get(counter, "top_functions"), 1, "symbol"), "count_stat");
	/* program_code (90% leaf in the program); synchronization at 10% */
	ck_assert_str_eq(str_at(json_object_get(counter, "rule_shares"), 0, "rule"), "program_code");
	ck_assert_str_eq(str_at(json_object_get(counter, "rule_shares"), 1, "rule"), "synchronization");
	json_decref(out);
}
END_TEST

START_TEST(a_thread_filter_keeps_only_its_threads_and_names_the_others)
{
	struct tool_thread_filter f;
	struct pl_error err;
	struct pl_view v;
	json_t *args, *kept;

	feed_off_cpu();
	args = json_pack("{s:s}", "comm", "writer");
	tool_thread_filter_init(&f, args);
	ck_assert_int_eq(tool_thread_filter_apply(&f, &prof, 0, &err), PL_OK);
	pl_view_build(&v, &prof, 0);
	ck_assert_uint_eq(v.total.samples, 500);
	pl_view_release(&v);
	kept = tool_thread_filter_json(&f);
	ck_assert_int_eq(json_integer_value(json_object_get(kept, "threads")), 1);
	ck_assert_double_eq_tol(json_number_value(json_object_get(kept, "percent_of_event")), 33.3333, 1e-4);
	json_decref(kept);
	json_decref(args);

	args = json_pack("{s:I}", "tid", (json_int_t)99);
	tool_thread_filter_init(&f, args);
	ck_assert_int_eq(tool_thread_filter_apply(&f, &prof, 0, &err), PL_ERR_USAGE);
	/* only the writer still has weight in this copy */
	ck_assert_ptr_nonnull(strstr(err.text, "no thread with tid 99"));
	ck_assert_ptr_nonnull(strstr(err.text, "11 'writer'"));
	json_decref(args);
}
END_TEST

Suite *suite_threads(void)
{
	Suite *s = suite_create("threads");
	TCase *tc = tcase_create("threads");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, a_blocked_thread_reads_as_what_it_waits_for);
	tcase_add_test(tc, on_cpu_threads_have_no_state_and_their_own_rules);
	tcase_add_test(tc, a_thread_filter_keeps_only_its_threads_and_names_the_others);
	suite_add_tcase(s, tc);
	return s;
}
