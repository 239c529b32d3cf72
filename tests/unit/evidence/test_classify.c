/* test_classify.c - unit tests for the classification engine: the embedded
 * rules compile, broken rule documents are refused with the rule named,
 * and rules fire or stay quiet on small folded profiles whose shares are
 * known by construction.  Real captures are checked in
 * tests/integration/test_classify.sh.
 */
#include <check.h>
#include <string.h>

#include "profile/aggregate.h"
#include "evidence/classify.h"
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

/* Folded lines "a;b;c N", one per line, under `event`. */
static void feed_folded(const char *event, const char *text)
{
	struct pl_error err;
	uint32_t ev = pl_intern_event(&prof, event, strlen(event));
	uint64_t line_no = 0;

	while (*text) {
		const char *nl = strchr(text, '\n');
		size_t n = nl ? (size_t)(nl - text) : strlen(text);
		ck_assert_int_eq(pl_folded_line(&prof, ev, text, n, ++line_no, &err), PL_OK);
		text += n + (nl ? 1 : 0);
	}
}

/* One stack "sym@dso;sym@dso" (root first; "@" omitted: no DSO) with
 * `samples` samples of period 1 under `event`, in a thread of its own. */
static void feed_stack(const char *event, int64_t tid, const char *frames, uint64_t samples)
{
	struct pl_error err;
	uint32_t ev = pl_intern_event(&prof, event, strlen(event)), ids[16], depth = 0;

	for (const char *f = frames; *f && depth < 16;) {
		size_t n = strcspn(f, ";"), at = strcspn(f, "@");
		uint32_t sym = pl_intern_str(&prof, f, at < n ? at : n);
		uint32_t dso = at < n ? pl_intern_str(&prof, f + at + 1, n - at - 1) : PL_NOID;
		ids[depth++] = pl_intern_frame(&prof, pl_intern_func(&prof, sym, dso), false, 0, PL_NOID, &err);
		f += n + (f[n] == ';');
	}
	pl_add_weight(&prof, pl_intern_stack(&prof, pl_intern_thread(&prof, 1, tid, PL_NOID), ids, depth, &err),
		      ev, samples, samples, false);
}

/* `n` samples of one stack (as feed_stack) in thread `tid`, one every
 * `step_ns` from `start_ns`, each of `period` (CPU-time ns): timed. */
static void feed_timed(const char *event, int64_t tid, const char *frames, uint64_t n, uint64_t start_ns,
		       uint64_t step_ns, uint64_t period)
{
	struct pl_error err;
	uint32_t ev = pl_intern_event(&prof, event, strlen(event)), ids[16], depth = 0, st;

	for (const char *f = frames; *f && depth < 16;) {
		size_t len = strcspn(f, ";"), at = strcspn(f, "@");
		uint32_t sym = pl_intern_str(&prof, f, at < len ? at : len);
		uint32_t dso = at < len ? pl_intern_str(&prof, f + at + 1, len - at - 1) : PL_NOID;
		ids[depth++] = pl_intern_frame(&prof, pl_intern_func(&prof, sym, dso), false, 0, PL_NOID, &err);
		f += len + (f[len] == ';');
	}
	st = pl_intern_stack(&prof, pl_intern_thread(&prof, 1, tid, PL_NOID), ids, depth, &err);
	for (uint64_t i = 0; i < n; i++) {
		pl_add_weight(&prof, st, ev, 1, period, true);
		pl_add_timed(&prof, st, ev, start_ns + i * step_ns, period);
	}
}

/* Classify event 0 with the embedded rules; new reference. */
static json_t *classify_first(void)
{
	const struct pl_rules *rules;
	struct pl_classifier c;
	struct pl_error err;
	struct pl_view v;
	json_t *out;

	ck_assert_int_eq(pl_rules_builtin(&rules, &err), PL_OK);
	pl_classifier_init(&c, rules, &prof, "an-00000000000000000000");
	pl_view_build(&v, &prof, 0);
	out = pl_classify_event(&c, &v);
	pl_view_release(&v);
	pl_classifier_release(&c);
	return out;
}

static json_t *candidate(json_t *res, const char *rule)
{
	json_t *c;
	size_t i;

	json_array_foreach(json_object_get(res, "candidates"), i, c)
		if (strcmp(json_string_value(json_object_get(json_object_get(c, "rule"), "id")), rule) == 0)
			return c;
	return NULL;
}

static double figure(json_t *c)
{
	return json_number_value(json_object_get(json_object_get(c, "figure"), "value"));
}

START_TEST(embedded_rules_compile_once_and_are_versioned)
{
	const struct pl_rules *a, *b;
	struct pl_error err;

	ck_assert_int_eq(pl_rules_builtin(&a, &err), PL_OK);
	ck_assert_int_eq(pl_rules_builtin(&b, &err), PL_OK);
	ck_assert_ptr_eq(a, b);
	ck_assert_int_ge(pl_rules_version(a), 1);
	ck_assert_uint_ge(pl_rules_count(a), 11);
	ck_assert_uint_gt(json_array_size(pl_rules_forbidden(a)), 0);
}
END_TEST

/* list_hotspots asks the event sets alone: the same answers as the
 * whole compiled rules give. */
START_TEST(builtin_event_sets_alone_answer_as_the_whole_rules)
{
	static const char *const events[] = {"cpu-clock", "cycles:u", "offcpu-time", "sched:sched_switch",
					     "page-faults", "instructions", "", "sched:sched_stat_iowait"};
	static const char *const sets[] = {"cpu_time", "off_cpu", "io_wait", "page_faults", "user_only",
					   "no_such_set"};
	const struct pl_rules *r;
	struct pl_error err;

	pl_rules_builtin_sets_prepare();
	ck_assert_int_eq(pl_rules_builtin(&r, &err), PL_OK);
	for (size_t i = 0; i < PL_ARRAY_LEN(sets); i++)
		for (size_t k = 0; k < PL_ARRAY_LEN(events); k++)
			ck_assert_msg(pl_rules_builtin_event_in_set(sets[i], events[k]) ==
				      pl_rules_event_in_set(r, sets[i], events[k]), "%s %s", sets[i], events[k]);
	ck_assert(pl_rules_builtin_event_in_set("off_cpu", "offcpu-time"));
	ck_assert(!pl_rules_builtin_event_in_set("off_cpu", "cpu-clock"));
	ck_assert(!pl_rules_builtin_event_in_set("off_cpu", NULL));
}
END_TEST

static enum pl_err compile_text(const char *text, struct pl_error *err)
{
	json_error_t je;
	json_t *doc = json_loads(text, 0, &je);
	struct pl_rules *r = NULL;
	enum pl_err rc;

	ck_assert_ptr_nonnull(doc);
	rc = pl_rules_compile(doc, &r, err);
	pl_rules_free(r);
	json_decref(doc);
	return rc;
}

#define DOC_HEAD "{\"version\": 1, \"evidence_texts\": {\"call_graph\": \"x\", \"source_lines\": \"y\"}," \
	"\"event_sets\": {\"cpu\": {\"pattern\": \"^cpu-clock$\", \"not_matched\": \"z\"}}, \"rules\": ["
#define RULE(id, match) "{\"id\": \"" id "\", \"label\": \"L\", \"group\": \"hotspot\", \"match\": " match "}"

START_TEST(broken_rule_documents_are_refused_naming_the_rule)
{
	struct pl_error err;

	ck_assert_int_eq(compile_text(DOC_HEAD RULE("ok", "{\"functions\": [{\"symbol\": \"^a$\"}], \"weight\": \"self\", \"min_percent\": 5}") "]}", &err), PL_OK);
	ck_assert_int_eq(compile_text(DOC_HEAD RULE("badre", "{\"functions\": [{\"symbol\": \"(a\"}], \"weight\": \"self\", \"min_percent\": 5}") "]}", &err), PL_ERR_INTERNAL);
	ck_assert_ptr_nonnull(strstr(err.text, "badre"));
	ck_assert_int_eq(compile_text(DOC_HEAD RULE("noset", "{\"events\": [\"gpu\"], \"functions\": [{\"symbol\": \"a\"}], \"weight\": \"self\", \"min_percent\": 5}") "]}", &err), PL_ERR_INTERNAL);
	ck_assert_ptr_nonnull(strstr(err.text, "noset"));
	ck_assert_int_eq(compile_text(DOC_HEAD RULE("twice", "{\"metric\": \"samples\", \"below\": 5}") ","
				  RULE("twice", "{\"metric\": \"samples\", \"below\": 5}") "]}", &err), PL_ERR_INTERNAL);
	ck_assert_int_eq(compile_text(DOC_HEAD RULE("both", "{\"metric\": \"samples\", \"below\": 5, \"at_least\": 1}") "]}", &err), PL_ERR_INTERNAL);
	ck_assert_int_eq(compile_text(DOC_HEAD RULE("noroots", "{\"metric\": \"truncated_stack_percent\", \"at_least\": 1}") "]}", &err), PL_ERR_INTERNAL);
}
END_TEST

START_TEST(allocation_is_counted_once_per_stack_and_compute_is_not_allocation)
{
	json_t *res, *c;

	/* 80 compute, 20 in malloc -> _int_malloc (nested matches: 20%, not 40%). */
	feed_folded("cpu-clock", "_start;main;work 1600\n_start;main;malloc;_int_malloc 300\n_start;main;malloc 100\n");
	res = classify_first();
	c = candidate(res, "memory_allocation");
	ck_assert_ptr_nonnull(c);
	ck_assert_double_eq_tol(figure(c), 20.0, 1e-9);
	ck_assert_str_eq(json_string_value(json_object_get(c, "status")), "candidate");
	ck_assert_str_eq(json_string_value(json_object_get(json_array_get(json_object_get(c, "hotspots"), 0), "symbol")), "malloc");
	ck_assert_ptr_null(candidate(res, "too_few_samples"));
	ck_assert_ptr_null(candidate(res, "frame_pointer_loss"));
	json_decref(res);
}
END_TEST

START_TEST(pure_compute_gets_no_hotspot_candidate)
{
	json_t *res, *c;
	size_t i;

	feed_folded("cpu-clock", "_start;main;mix 2000\n_start;main;mix;checkpoint 50\n");
	res = classify_first();
	json_array_foreach(json_object_get(res, "candidates"), i, c)
		ck_abort_msg("unexpected candidate %s", json_string_value(json_object_get(c, "candidate_id")));
	/* I/O wait cannot be asked of an on-CPU event: said so, not "no". */
	json_array_foreach(json_object_get(res, "quiet"), i, c)
		if (strcmp(json_string_value(json_object_get(c, "rule")), "io_wait") == 0)
			ck_assert_str_eq(json_string_value(json_object_get(c, "outcome")), "not_applicable");
	json_decref(res);
}
END_TEST

START_TEST(folded_kernel_marks_count_as_kernel_frames)
{
	json_t *res, *c;

	feed_folded("unknown", "main;write;entry_SYSCALL_64_[k];do_syscall_64_[k];vfs_write_[k] 600\nmain;work 1400\n");
	res = classify_first();
	c = candidate(res, "system_calls");
	ck_assert_ptr_nonnull(c);
	ck_assert_double_eq_tol(figure(c), 30.0, 1e-9);
	c = candidate(res, "kernel_time");
	ck_assert_ptr_nonnull(c);
	ck_assert_double_eq_tol(figure(c), 30.0, 1e-9);
	json_decref(res);
}
END_TEST

START_TEST(truncated_stacks_and_few_samples_are_data_quality_flags)
{
	json_t *res, *c, *steps, *s;
	size_t i;
	bool command_seen = false;

	/* 30 of 100 samples stop in a leaf that is not an entry point. */
	feed_folded("cpu-clock", "_int_free 30\n_start;main;work 60\nmain 10\n");
	res = classify_first();
	c = candidate(res, "frame_pointer_loss");
	ck_assert_ptr_nonnull(c);
	ck_assert_double_eq_tol(figure(c), 30.0, 1e-9);
	ck_assert_str_eq(json_string_value(json_object_get(json_array_get(json_object_get(c, "hotspots"), 0), "symbol")), "_int_free");
	c = candidate(res, "too_few_samples");
	ck_assert_ptr_nonnull(c);
	/* Data-quality candidates come first. */
	ck_assert_str_eq(json_string_value(json_object_get(json_object_get(
		json_array_get(json_object_get(res, "candidates"), 0), "rule"), "group")), "data_quality");
	/* No hotspot for "too few samples": steps needing one are dropped,
	 * the collect_profile call (which needs only the event) is kept,
	 * filled in, inside its events array too. */
	steps = json_object_get(c, "next_steps");
	json_array_foreach(steps, i, s) {
		ck_assert_str_eq(json_string_value(json_object_get(s, "kind")), "tool");
		ck_assert_str_eq(json_string_value(json_object_get(s, "tool")), "collect_profile");
		ck_assert_str_eq(json_string_value(json_array_get(json_object_get(json_object_get(s, "arguments"),
			"events"), 0)), "cpu-clock");
		ck_assert_ptr_nonnull(strstr(json_string_value(json_object_get(s, "call")), "events=[\"cpu-clock\"]"));
		command_seen = true;
	}
	ck_assert(command_seen);
	json_decref(res);
}
END_TEST

/* The outcome of `rule` among the quiet ones ("not_applicable",
 * "below_threshold"), NULL when it fired. */
static const char *quiet_outcome(json_t *res, const char *rule)
{
	json_t *q;
	size_t i;

	json_array_foreach(json_object_get(res, "quiet"), i, q)
		if (strcmp(json_string_value(json_object_get(q, "rule")), rule) == 0)
			return json_string_value(json_object_get(q, "outcome"));
	return NULL;
}

/* The collect_profile step of a candidate, or NULL. */
static json_t *collect_step(json_t *c)
{
	json_t *s;
	size_t i;

	json_array_foreach(json_object_get(c, "next_steps"), i, s)
		if (strcmp(json_string_value(json_object_get(s, "tool")) ?: "", "collect_profile") == 0)
			return s;
	return NULL;
}

/* DWARF stacks that reach no entry point were cut where the stack copy
 * ended: their own rule, with the outermost user frame reached as the
 * hotspot and a larger copy as the remedy (none past perf's largest);
 * frame_pointer_loss does not judge them, and on a recording that is not
 * DWARF the DWARF rule does not apply. */
START_TEST(dwarf_stacks_cut_short_are_not_frame_pointer_loss)
{
	static const uint32_t sizes[] = {8192, 65528, 0};
	json_t *res, *c;

	for (size_t k = 0; k < PL_ARRAY_LEN(sizes); k++) {
		pl_profile_release(&prof);
		setup();
		feed_stack("cpu-clock", 1, "_start@/bin/p;main@/bin/p;work@/bin/p", 60);
		feed_stack("cpu-clock", 2, "deep@/bin/p;work@/bin/p", 30);
		feed_stack("cpu-clock", 3, "worker_thread@[kernel.kallsyms];__schedule@[kernel.kallsyms]", 10);
		if (sizes[k])
			pl_set_event_dwarf_stack(&prof, prof.events[0].name, sizes[k]);
		res = classify_first();
		if (!sizes[k]) {
			ck_assert_str_eq(quiet_outcome(res, "dwarf_stack_truncated"), "not_applicable");
			ck_assert_ptr_nonnull(quiet_outcome(res, "frame_pointer_loss"));
			ck_assert_str_ne(quiet_outcome(res, "frame_pointer_loss"), "not_applicable");
			json_decref(res);
			continue;
		}
		ck_assert_str_eq(quiet_outcome(res, "frame_pointer_loss"), "not_applicable");
		ck_assert_ptr_nonnull(c = candidate(res, "dwarf_stack_truncated"));
		ck_assert_double_eq_tol(figure(c), 30.0, 1e-9);
		ck_assert_str_eq(json_string_value(json_object_get(json_array_get(json_object_get(c, "hotspots"), 0),
								   "symbol")), "deep");
		if (sizes[k] < 65528)
			ck_assert_int_eq(json_integer_value(json_object_get(json_object_get(collect_step(c), "arguments"),
									    "dwarf_stack_bytes")), 65528);
		else
			ck_assert_ptr_null(collect_step(c));
		json_decref(res);
	}
}
END_TEST

/* A library candidate names the program's own function nearest above
 * its matched frames (a library called from the library still counts
 * the first own frame), with its share of the candidate's stacks; the
 * program's own code names none. */
START_TEST(library_candidates_name_their_own_callers)
{
	json_t *res, *c, *own;

	feed_stack("cpu-clock", 1, "main@/bin/p;process@/bin/p;strlen@/usr/lib/x86_64-linux-gnu/libc.so.6", 30);
	feed_stack("cpu-clock", 1, "main@/bin/p;emit@/bin/p;snprintf@/usr/lib/x86_64-linux-gnu/libc.so.6;"
		   "vfprintf@/usr/lib/x86_64-linux-gnu/libc.so.6", 10);
	feed_stack("cpu-clock", 1, "main@/bin/p;count@/bin/p", 60);
	res = classify_first();
	ck_assert_ptr_nonnull(c = candidate(res, "runtime_and_libc"));
	ck_assert_ptr_nonnull(own = json_object_get(c, "own_callers"));
	ck_assert_str_eq(json_string_value(json_object_get(json_array_get(own, 0), "symbol")), "process");
	ck_assert_double_eq_tol(json_number_value(json_object_get(json_array_get(own, 0), "of_candidate_percent")),
				75.0, 1e-9);
	ck_assert_str_eq(json_string_value(json_object_get(json_array_get(own, 1), "symbol")), "emit");
	ck_assert_ptr_nonnull(c = candidate(res, "program_code"));
	ck_assert_ptr_null(json_object_get(c, "own_callers"));
	json_decref(res);
}
END_TEST

/* offcpu-time is PerfLens's event, not perf's (perf record -e offcpu-time
 * exits 129): no remedy of an off-CPU profile asks perf for it; the
 * DWARF one is the off_cpu mode's own collection with DWARF stacks.  Its records are
 * aggregated waits traced whole, not samples: too_few_samples is not
 * applicable there (three records here), and says why. */
START_TEST(off_cpu_remedies_collect_with_mode_off_cpu_never_the_event)
{
	json_t *res, *c, *s, *q;
	size_t i, collects = 0;
	bool quiet_seen = false;

	feed_folded("offcpu-time", "_int_free 30\n_start;main;work 60\nmain 10\n");
	res = classify_first();
	ck_assert_ptr_null(candidate(res, "too_few_samples"));
	json_array_foreach(json_object_get(res, "quiet"), i, q)
		if (strcmp(json_string_value(json_object_get(q, "rule")), "too_few_samples") == 0) {
			ck_assert_str_eq(json_string_value(json_object_get(q, "outcome")), "not_applicable");
			quiet_seen = true;
		}
	ck_assert(quiet_seen);
	ck_assert_ptr_nonnull(c = candidate(res, "frame_pointer_loss"));
	json_array_foreach(json_object_get(c, "next_steps"), i, s) {
		json_t *args = json_object_get(s, "arguments");
		if (strcmp(json_string_value(json_object_get(s, "tool")) ?: "", "collect_profile") != 0)
			continue;
		collects++;
		ck_assert_str_eq(json_string_value(json_object_get(args, "mode")), "off_cpu");
		ck_assert_str_eq(json_string_value(json_object_get(args, "call_graph")), "dwarf");
		ck_assert_ptr_null(json_object_get(args, "events"));
		ck_assert_ptr_null(strstr(json_string_value(json_object_get(s, "call")), "offcpu-time"));
	}
	ck_assert_uint_eq(collects, 1);  /* the DWARF remedy, in mode off_cpu */
	json_decref(res);
}
END_TEST

/* glibc's 64-bit-time entry points, as perf script names them with
 * inline frames (___pthread_cond_timedwait64 above the shared futex
 * wait): a consumer waiting for work, not a futex wait of unknown kind. */
START_TEST(time64_condition_waits_are_idle_waits)
{
	json_t *res;

	feed_folded("offcpu-time", "start_thread;worker;___pthread_cond_timedwait64;"
		    "__futex_abstimed_wait_common;[state S] 90\nmain;[state S] 10\n");
	res = classify_first();
	ck_assert_ptr_nonnull(candidate(res, "idle_wait"));
	ck_assert_ptr_null(candidate(res, "futex_wait_unknown"));
	ck_assert_ptr_null(candidate(res, "lock_wait"));
	json_decref(res);
}
END_TEST

START_TEST(events_outside_a_rules_sets_are_not_applicable)
{
	json_t *res, *q;
	size_t i;
	int na = 0;

	feed_folded("cache-misses", "main;malloc;_int_malloc 5000\n");
	res = classify_first();
	ck_assert_ptr_null(candidate(res, "memory_allocation"));
	json_array_foreach(json_object_get(res, "quiet"), i, q)
		if (strcmp(json_string_value(json_object_get(q, "rule")), "memory_allocation") == 0) {
			ck_assert_str_eq(json_string_value(json_object_get(q, "outcome")), "not_applicable");
			ck_assert(json_is_null(json_object_get(q, "value")));
			na++;
		}
	ck_assert_int_eq(na, 1);
	json_decref(res);
}
END_TEST

START_TEST(classification_is_deterministic)
{
	json_t *a, *b;
	char *sa, *sb;

	feed_folded("cpu-clock", "main;memcpy 500\nmain;malloc 500\nmain;pthread_mutex_lock;__lll_lock_wait 500\nmain;x 500\n");
	a = classify_first();
	b = classify_first();
	sa = json_dumps(a, JSON_COMPACT);
	sb = json_dumps(b, JSON_COMPACT);
	ck_assert_str_eq(sa, sb);
	/* Ties on the figure (25% each) keep the rules' order. */
	ck_assert_str_eq(json_string_value(json_object_get(json_array_get(json_object_get(a, "candidates"), 0), "candidate_id")),
			 "memory_allocation@cpu-clock");
	free(sa);
	free(sb);
	json_decref(a);
	json_decref(b);
}
END_TEST

START_TEST(program_code_is_the_heaviest_own_function_apart_from_libraries)
{
	json_t *res, *c, *steps, *s;
	size_t i;
	bool source_step = false;

	/* The program's parse holds 30% self, its sum with emit 45%; libc's
	 * strlen (40%) and an [unknown] frame never count here. */
	feed_stack("cpu-clock", 1, "main@/opt/app/bin/app;parse@/opt/app/bin/app", 300);
	feed_stack("cpu-clock", 1, "main@/opt/app/bin/app;emit@/opt/app/bin/app", 150);
	feed_stack("cpu-clock", 1, "main@/opt/app/bin/app;strlen@/usr/lib/x86_64-linux-gnu/libc.so.6", 400);
	feed_stack("cpu-clock", 1, "main@/opt/app/bin/app;[unknown]@/opt/app/bin/app", 100);
	feed_stack("cpu-clock", 1, "main@/opt/app/bin/app;x@[vdso]", 50);
	res = classify_first();
	c = candidate(res, "program_code");
	ck_assert_ptr_nonnull(c);
	ck_assert_str_eq(json_string_value(json_object_get(json_object_get(c, "figure"), "name")), "function_self_percent");
	ck_assert_double_eq_tol(figure(c), 30.0, 1e-9);
	ck_assert_str_eq(json_string_value(json_object_get(json_array_get(json_object_get(c, "hotspots"), 0), "symbol")), "parse");
	ck_assert_int_eq(json_integer_value(json_object_get(c, "hotspots_total")), 2);  /* parse, emit */
	steps = json_object_get(c, "next_steps");
	json_array_foreach(steps, i, s)
		if (strcmp(json_string_value(json_object_get(s, "tool")), "source_context") == 0) {
			ck_assert_str_eq(json_string_value(json_object_get(json_object_get(s, "arguments"), "hotspot_id")), "fn1");
			source_step = true;
		}
	ck_assert(source_step);
	ck_assert_ptr_nonnull(candidate(res, "runtime_and_libc"));
	json_decref(res);
}
END_TEST

START_TEST(off_cpu_blocked_microseconds_name_pipe_reads_sleeps_and_futexes)
{
	json_t *res, *c;

	/* collect_profile's folded blocked time: 20% in a pipe read, 30% in
	 * clock_nanosleep, 50% on a futex; the unit is microseconds. */
	feed_stack("off-cpu-us", 1, "reader;[state S];read;ksys_read;vfs_read;anon_pipe_read;schedule;__schedule", 200);
	feed_stack("off-cpu-us", 2, "writer;[state S];clock_nanosleep;__x64_sys_clock_nanosleep;do_nanosleep;schedule;__schedule", 300);
	feed_stack("off-cpu-us", 3, "counter;[state S];pthread_mutex_lock;__x64_sys_futex;futex_wait;schedule;__schedule", 500);
	res = classify_first();
	ck_assert_str_eq(json_string_value(json_object_get(res, "unit")), "us");
	ck_assert_ptr_nonnull(c = candidate(res, "io_wait"));
	ck_assert_double_eq_tol(figure(c), 20.0, 1e-9);
	ck_assert_ptr_nonnull(c = candidate(res, "sleep"));
	ck_assert_double_eq_tol(figure(c), 30.0, 1e-9);
	ck_assert_ptr_nonnull(c = candidate(res, "lock_wait"));
	ck_assert_double_eq_tol(figure(c), 50.0, 1e-9);
	ck_assert_ptr_null(candidate(res, "program_code"));
	json_decref(res);
}
END_TEST

/* The figure of `rule` on `res`, 0 when it did not fire. */
static double fired_figure(json_t *res, const char *rule)
{
	json_t *c = candidate(res, rule);

	return c ? figure(c) : 0.0;
}

START_TEST(waits_are_told_apart_by_state_and_frames)
{
	json_t *res;

	/* Six kinds of wait, 100 us each (16.67%): each stack counts for one
	 * rule, whatever else its frames match. */
	feed_stack("off-cpu-us", 1, "writer;write;ksys_write;vfs_write;pipe_write;__schedule;[state R]", 100);
	feed_stack("off-cpu-us", 2, "syncer;fdatasync;__x64_sys_fdatasync;do_fsync;ext4_sync_file;jbd2_log_wait_commit;__schedule;[state D]", 100);
	feed_stack("off-cpu-us", 3, "consumer;pthread_cond_wait;__futex_abstimed_wait_common;__x64_sys_futex;futex_wait;__schedule;[state S]", 100);
	feed_stack("off-cpu-us", 4, "counter;pthread_mutex_lock;__lll_lock_wait;__x64_sys_futex;futex_wait;__schedule;[state S]", 100);
	feed_stack("off-cpu-us", 5, "[unknown];__futex_abstimed_wait_common;__x64_sys_futex;futex_wait;__schedule;[state S]", 100);
	feed_stack("off-cpu-us", 6, "main;pthread_join;__futex_abstimed_wait_common;__x64_sys_futex;futex_wait;__schedule;[state S]", 100);
	/* A kernel lock on the way to the disk is the disk's; on the way to
	 * a pipe, the lock's (0.1 us each: below every threshold). */
	feed_stack("off-cpu-us", 7, "syncer;fsync;do_fsync;ext4_sync_file;__mutex_lock;__schedule;[state D]", 1);
	feed_stack("off-cpu-us", 8, "writer;write;ksys_write;pipe_write;__mutex_lock;__schedule;[state D]", 1);
	res = classify_first();
	ck_assert_double_eq_tol(fired_figure(res, "cpu_wait"), 100.0 / 6.02, 1e-3);
	ck_assert_double_eq_tol(fired_figure(res, "disk_io"), 101.0 / 6.02, 1e-3);
	ck_assert_double_eq_tol(fired_figure(res, "lock_wait"), 101.0 / 6.02, 1e-3);
	ck_assert_double_eq_tol(fired_figure(res, "idle_wait"), 200.0 / 6.02, 1e-3);
	ck_assert_double_eq_tol(fired_figure(res, "futex_wait_unknown"), 100.0 / 6.02, 1e-3);
	ck_assert_ptr_null(candidate(res, "io_wait"));
	ck_assert_ptr_null(candidate(res, "sleep"));
	/* The preempted writer's hotspots are write's frames, with its weight. */
	ck_assert_int_eq(json_integer_value(json_object_get(candidate(res, "cpu_wait"), "hotspots_total")), 1);
	json_decref(res);
}
END_TEST

START_TEST(preemption_frames_without_a_state_are_cpu_wait)
{
	json_t *res;

	/* A plain sched_switch capture: no [state] frame, the kernel's
	 * preemption path says the thread was still runnable. */
	feed_stack("sched:sched_switch", 1, "main;write;ksys_write;vfs_write;irqentry_exit;preempt_schedule_irq;__schedule", 300);
	feed_stack("sched:sched_switch", 1, "main;read;ksys_read;vfs_read;pipe_read;schedule;__schedule", 700);
	res = classify_first();
	ck_assert_double_eq_tol(fired_figure(res, "cpu_wait"), 30.0, 1e-6);
	ck_assert_double_eq_tol(fired_figure(res, "io_wait"), 70.0, 1e-6);
	json_decref(res);
}
END_TEST

START_TEST(unless_names_only_other_function_rules)
{
	struct pl_error err;

	ck_assert_int_eq(compile_text(DOC_HEAD RULE("a", "{\"functions\": [{\"symbol\": \"x\"}], \"weight\": \"self\", \"min_percent\": 5, \"unless\": [\"b\"]}") ","
				      RULE("b", "{\"functions\": [{\"symbol\": \"y\"}], \"weight\": \"self\", \"min_percent\": 5}") "]}", &err), PL_OK);
	ck_assert_int_eq(compile_text(DOC_HEAD RULE("a", "{\"functions\": [{\"symbol\": \"x\"}], \"weight\": \"self\", \"min_percent\": 5, \"unless\": [\"nope\"]}") "]}", &err), PL_ERR_INTERNAL);
	ck_assert_str_eq(err.text, "classification rules: a: unless names a rule that is not another function rule");
}
END_TEST

START_TEST(excluding_patterns_leave_a_function_out)
{
	struct pl_error err;

	ck_assert_int_eq(compile_text(DOC_HEAD RULE("ex", "{\"functions\": [{\"kinds\": [\"user\"], \"not_symbol\": \"^\\\\[\", \"not_dso\": \"\\\\.so\"}], \"weight\": \"self\", \"per_function\": true, \"min_percent\": 5}") "]}", &err), PL_OK);
	ck_assert_int_eq(compile_text(DOC_HEAD RULE("badex", "{\"functions\": [{\"not_dso\": \"(\"}], \"weight\": \"self\", \"min_percent\": 5}") "]}", &err), PL_ERR_INTERNAL);
	ck_assert_ptr_nonnull(strstr(err.text, "badex"));
}
END_TEST

#define POLL_STACK "start_thread@/usr/lib/libc.so.6;wait_loop@/opt/app;__poll@/usr/lib/libc.so.6;" \
	"entry_SYSCALL_64@[kernel.kallsyms];do_syscall_64@[kernel.kallsyms];__x64_sys_poll@[kernel.kallsyms]"

START_TEST(busy_wait_needs_a_thread_mostly_waiting_near_a_full_core)
{
	json_t *res, *c, *th;

	/* tid 2 polls back to back: 900 samples of 1 ms CPU, 1 ms apart
	 * (a full core); tid 3 computes; tid 4 polls too, but 100 samples
	 * over 10 s (1% of a CPU): a server that sleeps in poll. */
	feed_timed("cpu-clock", 2, POLL_STACK, 900, 1000000000, 1000000, 1000000);
	feed_timed("cpu-clock", 3, "start_thread@/usr/lib/libc.so.6;work@/opt/app", 900, 1000000000, 1000000, 1000000);
	feed_timed("cpu-clock", 4, POLL_STACK, 100, 1000000000, 100000000, 1000000);
	res = classify_first();
	c = candidate(res, "busy_wait");
	ck_assert_ptr_nonnull(c);
	ck_assert_double_eq_tol(figure(c), 900.0 * 100 / 1900, 1e-3);
	th = json_object_get(c, "threads");
	ck_assert_int_eq(json_integer_value(json_object_get(th, "passed_total")), 1);
	ck_assert_int_eq(json_integer_value(json_object_get(json_array_get(json_object_get(th, "passed"), 0), "tid")), 2);
	ck_assert_double_eq_tol(json_number_value(json_object_get(json_array_get(json_object_get(th, "passed"), 0),
								 "core_percent")), 100.0, 1e-9);
	ck_assert_int_eq(json_integer_value(json_object_get(json_object_get(th, "left_out"), "threads")), 1);
	/* the sleeper's poll stays a system call (the gate comes before unless) */
	c = candidate(res, "system_calls");
	ck_assert_ptr_nonnull(c);
	ck_assert_double_eq_tol(figure(c), 100.0 * 100 / 1900, 1e-3);
	json_decref(res);
}
END_TEST

START_TEST(without_times_the_share_decides_and_says_so)
{
	json_t *res, *c;

	/* Folded lines carry no thread: one thread, judged by its share. */
	feed_folded("cpu-clock", "start_thread;wait_loop;sched_yield 900\nstart_thread;work 1100\n");
	res = classify_first();
	ck_assert_ptr_null(candidate(res, "busy_wait"));
	json_decref(res);
	/* 500 more yields: 1,400 of 2,500, over half of the one thread */
	feed_folded("cpu-clock", "start_thread;wait_loop;sched_yield 500\n");
	res = classify_first();
	c = candidate(res, "busy_wait");
	ck_assert_ptr_nonnull(c);
	ck_assert(json_is_null(json_object_get(json_array_get(json_object_get(json_object_get(c, "threads"), "passed"), 0),
					       "core_percent")));
	json_decref(res);
}
END_TEST

START_TEST(thread_gates_and_callers_are_checked_when_compiled)
{
	struct pl_error err;

	ck_assert_int_eq(compile_text(DOC_HEAD RULE("g", "{\"functions\": [{\"symbol\": \"x\"}], \"weight\": \"inclusive\", \"min_percent\": 5, \"thread\": {\"min_share_percent\": 50, \"min_core_percent\": 50}}") "]}", &err), PL_OK);
	ck_assert_int_eq(compile_text(DOC_HEAD RULE("g", "{\"functions\": [{\"symbol\": \"x\"}], \"weight\": \"inclusive\", \"min_percent\": 5, \"thread\": {\"min_share_percent\": 50}}") "]}", &err), PL_ERR_INTERNAL);
	ck_assert_ptr_nonnull(strstr(err.text, "min_core_percent"));
	ck_assert_int_eq(compile_text(DOC_HEAD RULE("pf", "{\"functions\": [{\"symbol\": \"x\"}], \"weight\": \"self\", \"per_function\": true, \"min_percent\": 5, \"thread\": {\"min_share_percent\": 50, \"min_core_percent\": 50}}") "]}", &err), PL_ERR_INTERNAL);
	ck_assert_int_eq(compile_text(DOC_HEAD RULE("c", "{\"functions\": [{\"symbol\": \"x\"}], \"weight\": \"inclusive\", \"min_percent\": 5, \"callers\": true}") "]}", &err), PL_ERR_INTERNAL);
	ck_assert_ptr_nonnull(strstr(err.text, "self-weight"));
}
END_TEST

Suite *suite_classify(void)
{
	Suite *s = suite_create("classify");
	TCase *tc = tcase_create("classify");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, embedded_rules_compile_once_and_are_versioned);
	tcase_add_test(tc, builtin_event_sets_alone_answer_as_the_whole_rules);
	tcase_add_test(tc, broken_rule_documents_are_refused_naming_the_rule);
	tcase_add_test(tc, allocation_is_counted_once_per_stack_and_compute_is_not_allocation);
	tcase_add_test(tc, pure_compute_gets_no_hotspot_candidate);
	tcase_add_test(tc, folded_kernel_marks_count_as_kernel_frames);
	tcase_add_test(tc, truncated_stacks_and_few_samples_are_data_quality_flags);
	tcase_add_test(tc, off_cpu_remedies_collect_with_mode_off_cpu_never_the_event);
	tcase_add_test(tc, time64_condition_waits_are_idle_waits);
	tcase_add_test(tc, events_outside_a_rules_sets_are_not_applicable);
	tcase_add_test(tc, classification_is_deterministic);
	tcase_add_test(tc, program_code_is_the_heaviest_own_function_apart_from_libraries);
	tcase_add_test(tc, off_cpu_blocked_microseconds_name_pipe_reads_sleeps_and_futexes);
	tcase_add_test(tc, excluding_patterns_leave_a_function_out);
	tcase_add_test(tc, waits_are_told_apart_by_state_and_frames);
	tcase_add_test(tc, preemption_frames_without_a_state_are_cpu_wait);
	tcase_add_test(tc, unless_names_only_other_function_rules);
	tcase_add_test(tc, dwarf_stacks_cut_short_are_not_frame_pointer_loss);
	tcase_add_test(tc, library_candidates_name_their_own_callers);
	tcase_add_test(tc, busy_wait_needs_a_thread_mostly_waiting_near_a_full_core);
	tcase_add_test(tc, without_times_the_share_decides_and_says_so);
	tcase_add_test(tc, thread_gates_and_callers_are_checked_when_compiled);
	suite_add_tcase(s, tc);
	return s;
}
