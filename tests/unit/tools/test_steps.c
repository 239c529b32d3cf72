/* test_steps.c - unit tests for the one check of next steps
 * (tool_steps_check_with, tools/lib/steps.c): a phrase never stays in a step
 * and is named in needs; a step with a bad argument is caught; the
 * server's flags and the probe's answer mark what a person must do;
 * offcpu-time is never offered as runnable; unknown stays unconfirmed. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tools/registry.h"
#include "collectors/capabilities.h"
#include "collectors/collect.h"

static struct tool_ctx ctx;

/* A server with every collection flag, perf, and no device link. */
static void setup(void)
{
	memset(&ctx, 0, sizeof(ctx));
	ctx.artifact_root = "/nonexistent-artifacts";
	ctx.allow_writes = ctx.allow_process_execution = ctx.allow_collection = true;
	ctx.perf.path = "/usr/bin/perf";
}

/* A probe's answer: cycles does not count, cpu-clock records, tracefs
 * absent, dwarf yields chains (new). */
static json_t *caps_new(bool tracefs)
{
	return json_pack("{s:[{s:s,s:s,s:s},{s:s,s:s,s:s},{s:s,s:s,s:s}],s:[{s:s,s:b},{s:s,s:b}],"
			 "s:[{s:s,s:s},{s:s,s:s}]}",
			 "events", "event", "cpu-clock", "count", "counted", "record", "works",
			 "event", "cycles", "count", "not_supported", "record", "failed",
			 "event", "task-clock", "count", "counted", "record", "not_tried",
			 "tracepoints", "name", "sched:sched_switch", "available", tracefs,
			 "name", "lock:contention_begin", "available", tracefs,
			 "call_graphs", "mode", "dwarf", "status", "real_chains", "mode", "lbr", "status", "no_chains");
}

/* The step `tool(args_text)` after the check, inside a result (new). */
static json_t *checked(const char *tool, const char *args_text, json_t *caps)
{
	json_t *args = json_loads(args_text, 0, NULL);
	json_t *result = json_pack("{s:[{s:s,s:o,s:s}]}", "next_steps", "tool", tool, "arguments", args,
				   "why", "because");
	json_t *step;

	ck_assert_ptr_nonnull(args);
	tool_steps_check_with(&ctx, caps, result);
	step = json_incref(json_array_get(json_object_get(result, "next_steps"), 0));
	json_decref(result);
	return step;
}

static bool list_has(json_t *step, const char *key, const char *part)
{
	json_t *x;
	size_t i;

	json_array_foreach(json_object_get(step, key), i, x)
		if (strstr(json_string_value(x), part))
			return true;
	return false;
}

static bool phrase_anywhere(json_t *v)
{
	const char *k;
	json_t *x;
	size_t i;

	if (json_is_string(v))
		return strstr(json_string_value(v), PL_COLLECT_PHRASE) || strstr(json_string_value(v), PL_PID_ATTACH_PHRASE);
	json_object_foreach(v, k, x)
		if (phrase_anywhere(x) || strstr(k, PL_COLLECT_PHRASE))
			return true;
	json_array_foreach(v, i, x)
		if (phrase_anywhere(x))
			return true;
	return false;
}

START_TEST(a_readonly_step_that_validates_stays_runnable)
{
	json_t *s = checked("list_hotspots", "{\"analysis_id\": \"an-0123456789abcdef0123\", \"event\": \"cycles\"}", NULL);

	ck_assert_ptr_null(json_object_get(s, "needs"));
	ck_assert_ptr_null(json_object_get(s, "operator"));
	/* The step's own arguments are unchanged (defaults are not added). */
	ck_assert_int_eq(json_object_size(json_object_get(s, "arguments")), 2);
	json_decref(s);
}
END_TEST

START_TEST(a_step_with_a_bad_argument_is_caught)
{
	json_t *s = checked("list_hotspots", "{\"analysis_id\": \"an-0123456789abcdef0123\", \"bogus\": 1}", NULL);

	ck_assert(list_has(s, "operator", "not a valid list_hotspots call (unknown argument 'bogus'"));
	json_decref(s);
	s = checked("list_hotspots", "{\"analysis_id\": \"nope\"}", NULL);
	ck_assert(list_has(s, "operator", "'analysis_id' does not match"));
	json_decref(s);
	s = checked("get_hotspot", "{\"analysis_id\": \"an-0123456789abcdef0123\"}", NULL);
	ck_assert(list_has(s, "operator", "'get_hotspot' needs the argument 'hotspot_id'"));
	json_decref(s);
	s = checked("frobnicate", "{}", NULL);
	ck_assert(list_has(s, "operator", "'frobnicate' is no tool of this server"));
	json_decref(s);
}
END_TEST

START_TEST(a_phrase_never_stays_and_is_named_in_needs)
{
	json_t *s = checked("start_capture", "{\"device\": \"d_1\", \"pid\": 7, \"authorization\": \""
			    PL_COLLECT_PHRASE "\", \"pid_authorization\": \"" PL_PID_ATTACH_PHRASE "\"}", NULL);

	ck_assert(!phrase_anywhere(s));
	ck_assert_ptr_null(json_object_get(json_object_get(s, "arguments"), "authorization"));
	ck_assert(list_has(s, "needs", "authorization"));
	ck_assert(list_has(s, "needs", "pid_authorization"));
	ck_assert(list_has(s, "operator", "authorization: the user's consent to profile this device; only the user gives the phrase"));
	ck_assert(list_has(s, "operator", "pid_authorization: the user's consent"));
	/* No agent link here: the tool is not even listed. */
	ck_assert(list_has(s, "operator", "--agent-listen"));
	json_decref(s);
}
END_TEST

START_TEST(a_collection_needs_the_phrase_the_target_and_the_flags)
{
	json_t *caps = caps_new(true), *s;

	ctx.allow_collection = false;
	s = checked("collect_profile", "{\"mode\": \"record\", \"pid\": 12, \"duration_seconds\": 5}", caps);
	ck_assert(list_has(s, "needs", "authorization"));
	ck_assert(list_has(s, "needs", "pid_authorization"));
	ck_assert(!list_has(s, "needs", "executable or pid"));
	ck_assert(list_has(s, "operator", "--allow-collection"));
	ck_assert(list_has(s, "operator", "--allow-pid-attach"));
	json_decref(s);
	ctx.allow_collection = true;
	s = checked("collect_profile", "{\"mode\": \"record\"}", caps);
	ck_assert(list_has(s, "needs", "executable or pid"));
	ck_assert(!list_has(s, "operator", "--allow"));
	ck_assert(!list_has(s, "needs", "pid_authorization"));
	json_decref(s);
	json_decref(caps);
}
END_TEST

START_TEST(offcpu_time_is_not_offered_as_runnable)
{
	json_t *caps = caps_new(true), *s;

	s = checked("collect_profile", "{\"mode\": \"record\", \"events\": [\"offcpu-time\"], \"call_graph\": \"dwarf\"}", caps);
	ck_assert(list_has(s, "operator", "'offcpu-time' is PerfLens's name for off-CPU time, not an event perf knows"));
	ck_assert(list_has(s, "operator", "mode=\\\"off_cpu\\\"") || list_has(s, "operator", "mode=\"off_cpu\""));
	json_decref(s);
	/* Even with no probe at all: it is known without one. */
	s = checked("collect_profile", "{\"mode\": \"stat\", \"events\": [\"offcpu-time\"]}", NULL);
	ck_assert(list_has(s, "operator", "'offcpu-time' is PerfLens's name"));
	json_decref(s);
	json_decref(caps);
}
END_TEST

START_TEST(what_the_machine_cannot_do_needs_the_operator)
{
	json_t *caps = caps_new(false), *s;

	s = checked("collect_profile", "{\"mode\": \"off_cpu\"}", caps);
	ck_assert(list_has(s, "operator", "mode off_cpu needs tracepoint sched:sched_switch"));
	ck_assert(list_has(s, "operator", "mount -t tracefs"));
	json_decref(s);
	s = checked("collect_profile", "{\"mode\": \"stat\", \"events\": [\"raw_syscalls:sys_enter\", \"cycles:u\"]}", caps);
	ck_assert(list_has(s, "operator", "event raw_syscalls:sys_enter needs tracepoint raw_syscalls:sys_enter"));
	ck_assert(list_has(s, "operator", "perf cannot count cycles here (not_supported"));
	json_decref(s);
	s = checked("collect_profile", "{\"mode\": \"record\", \"call_graph\": \"lbr\"}", caps);
	ck_assert(list_has(s, "operator", "call_graph=\"lbr\" yields no real chains here (no_chains)"));
	json_decref(s);
	json_decref(caps);
	/* What the probe found to work adds nothing. */
	caps = caps_new(true);
	s = checked("collect_profile", "{\"mode\": \"off_cpu\", \"executable\": \"/bin/true\"}", caps);
	ck_assert_int_eq(json_array_size(json_object_get(s, "operator")), 1);  /* the phrase only */
	json_decref(s);
	s = checked("collect_profile", "{\"events\": [\"task-clock\"], \"call_graph\": \"dwarf\", \"executable\": \"/bin/true\"}", caps);
	ck_assert_int_eq(json_array_size(json_object_get(s, "operator")), 1);
	json_decref(s);
	json_decref(caps);
}
END_TEST

START_TEST(unknown_stays_unconfirmed_never_runnable)
{
	json_t *s = checked("collect_profile", "{\"mode\": \"record\", \"events\": [\"cycles\"], \"call_graph\": \"dwarf\"}", NULL);

	ck_assert(list_has(s, "operator", "unconfirmed here: perf can sample cycles; call_graph=\"dwarf\" yields chains"));
	ck_assert(list_has(s, "operator", "no capability probe cached: call inspect_collection_capabilities"));
	json_decref(s);
	s = checked("collect_profile", "{\"mode\": \"lock\"}", NULL);
	ck_assert(list_has(s, "operator", "unconfirmed here: tracepoint lock:contention_begin (mode lock)"));
	json_decref(s);
}
END_TEST

START_TEST(writes_and_device_control_are_server_flags)
{
	json_t *s;

	ctx.allow_writes = false;
	s = checked("export_profile", "{\"analysis_id\": \"an-0123456789abcdef0123\", \"format\": \"png\"}", NULL);
	ck_assert(list_has(s, "operator", "--allow-writes --artifact-root DIR"));
	json_decref(s);
	s = checked("compare_profiles", "{\"baseline_id\": \"an-0123456789abcdef0123\", \"candidate_id\": "
		    "\"an-0123456789abcdef0124\", \"exports\": false}", NULL);
	ck_assert_ptr_null(json_object_get(s, "operator"));
	json_decref(s);
	ctx.allow_writes = true;
	ctx.device_link = true;
	s = checked("stop_capture", "{\"device\": \"d_1\"}", NULL);
	ck_assert(list_has(s, "operator", "--allow-device-control"));
	json_decref(s);
	ctx.allow_device_control = true;
	s = checked("stop_capture", "{\"device\": \"d_1\"}", NULL);
	ck_assert_ptr_null(json_object_get(s, "operator"));
	json_decref(s);
}
END_TEST

START_TEST(a_step_checked_twice_is_unchanged)
{
	json_t *caps = caps_new(false);
	json_t *result = json_pack("{s:{s:[{s:s,s:{s:s},s:s}]}}", "deep", "next_steps", "tool", "collect_profile",
				   "arguments", "mode", "off_cpu", "why", "w");
	json_t *once;

	tool_steps_check_with(&ctx, caps, result);
	once = json_deep_copy(result);
	tool_steps_check_with(&ctx, caps, result);
	ck_assert(json_equal(once, result));
	ck_assert_ptr_nonnull(json_object_get(json_array_get(json_object_get(json_object_get(result, "deep"),
		"next_steps"), 0), "operator"));
	json_decref(once);
	json_decref(result);
	json_decref(caps);
}
END_TEST

/* The probe's cache counts only for the boot and the perf it was taken
 * with; anything else is no answer (unknown), never a stale one. */
START_TEST(the_cached_probe_counts_only_for_its_boot_and_perf)
{
	char root[] = "/tmp/test_steps.XXXXXX", dir[64], file[96];
	json_t *got, *doc;
	FILE *f;

	ck_assert_ptr_nonnull(mkdtemp(root));
	snprintf(dir, sizeof(dir), "%s/collections", root);
	snprintf(file, sizeof(file), "%s/capabilities.json", dir);
	ck_assert_int_eq(mkdir(dir, 0700), 0);
	doc = json_pack("{s:{s:s,s:{s:s}},s:{s:[]}}", "key", "boot_id", "b-1", "perf", "path", "/usr/bin/perf",
			"answer", "events");
	ck_assert_ptr_nonnull(f = fopen(file, "w"));
	json_dumpf(doc, f, 0);
	fclose(f);
	ck_assert_ptr_nonnull(got = coll_capabilities_cached("/usr/bin/perf", root, "b-1"));
	ck_assert(json_is_array(json_object_get(got, "events")));
	json_decref(got);
	ck_assert_ptr_null(coll_capabilities_cached("/usr/bin/perf", root, "b-2"));
	ck_assert_ptr_null(coll_capabilities_cached("/opt/perf", root, "b-1"));
	ck_assert_ptr_null(coll_capabilities_cached("/usr/bin/perf", root, NULL));
	ck_assert_ptr_null(coll_capabilities_cached("/usr/bin/perf", "/nonexistent", "b-1"));
	unlink(file);
	rmdir(dir);
	rmdir(root);
	json_decref(doc);
}
END_TEST

Suite *suite_steps(void)
{
	Suite *s = suite_create("steps");
	TCase *tc = tcase_create("check");

	tcase_add_checked_fixture(tc, setup, NULL);
	tcase_add_test(tc, a_readonly_step_that_validates_stays_runnable);
	tcase_add_test(tc, a_step_with_a_bad_argument_is_caught);
	tcase_add_test(tc, a_phrase_never_stays_and_is_named_in_needs);
	tcase_add_test(tc, a_collection_needs_the_phrase_the_target_and_the_flags);
	tcase_add_test(tc, offcpu_time_is_not_offered_as_runnable);
	tcase_add_test(tc, what_the_machine_cannot_do_needs_the_operator);
	tcase_add_test(tc, unknown_stays_unconfirmed_never_runnable);
	tcase_add_test(tc, writes_and_device_control_are_server_flags);
	tcase_add_test(tc, a_step_checked_twice_is_unchanged);
	tcase_add_test(tc, the_cached_probe_counts_only_for_its_boot_and_perf);
	suite_add_tcase(s, tc);
	return s;
}
