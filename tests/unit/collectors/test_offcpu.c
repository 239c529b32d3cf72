/* test_offcpu.c - unit tests for the off-CPU collector's reading of
 * `perf script` text (collectors/offcpu.c), with a stand-in perf: a shell
 * script that prints a fixed recording's text.  A task perf printed as
 * ":TID" (its COMM and FORK records lost: seen in CI with DWARF stacks on
 * a loaded machine) is named by its sched_switch's prev_comm, and counted;
 * a task perf knows keeps perf's name. */
#include <check.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "collectors/coll_int.h"
#include "testlib.h"

/* perf script --ns -F comm,pid,tid,time,event,trace,ip,sym,dso
 * --show-task-events: thread 552 of process 500 has no COMM record, so
 * perf prints ":552"; the leader, "fidelity", is known. */
static const char RECORDING[] =
	"fidelity   500/500   100.000000000: PERF_RECORD_COMM exec: fidelity:500/500\n"
	":552   500/552   100.100000000: sched:sched_switch: prev_comm=fid-worker prev_pid=552 "
	"prev_prio=120 prev_state=S ==> next_comm=swapper/1 next_pid=0 next_prio=120\n"
	"\tffffffff81c8d5a1 __schedule ([kernel.kallsyms])\n"
	"\t    55555555a000 worker_wait (/bin/fidelity)\n"
	"\n"
	"fidelity   500/500   100.150000000: sched:sched_switch: prev_comm=renamed-late prev_pid=500 "
	"prev_prio=120 prev_state=S ==> next_comm=swapper/0 next_pid=0 next_prio=120\n"
	"\tffffffff81c8d5a1 __schedule ([kernel.kallsyms])\n"
	"\t    55555555b000 main_wait (/bin/fidelity)\n"
	"\n"
	"swapper     0/0     100.300000000: sched:sched_switch: prev_comm=swapper/1 prev_pid=0 "
	"prev_prio=120 prev_state=R ==> next_comm=fid-worker next_pid=552 next_prio=120\n"
	"\tffffffff81c8d5a1 __schedule ([kernel.kallsyms])\n"
	"\n"
	"swapper     0/0     100.400000000: sched:sched_switch: prev_comm=swapper/0 prev_pid=0 "
	"prev_prio=120 prev_state=R ==> next_comm=fidelity next_pid=500 next_prio=120\n"
	"\tffffffff81c8d5a1 __schedule ([kernel.kallsyms])\n"
	"\n";

static char *slurp_all(const char *path)
{
	FILE *fp = fopen(path, "r");
	char *buf = calloc(1, 65536);
	size_t n;

	ck_assert_ptr_nonnull(fp);
	n = fread(buf, 1, 65535, fp);
	buf[n] = '\0';
	fclose(fp);
	return buf;
}

START_TEST(a_task_perf_names_by_tid_takes_its_switch_prev_comm)
{
	char dir[] = "/tmp/pl-offcpu-XXXXXX", perf[128], text[128], script[256];
	struct pl_collect_env env = {.launcher_conn = -1};
	struct pl_collect_req req = {.pid = 500, .call_graph = "fp", .timeout_ms = 10000};
	json_t *meta = json_object();
	struct pl_error err;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(text, sizeof(text), "%s/script.txt", dir);
	write_file(text, RECORDING, sizeof(RECORDING) - 1);
	snprintf(perf, sizeof(perf), "%s/perf", dir);
	snprintf(script, sizeof(script), "#!/bin/sh\nexec cat '%s'\n", text);
	write_file(perf, script, strlen(script));
	ck_assert_int_eq(chmod(perf, 0755), 0);
	env.perf_path = perf;

	ck_assert_int_eq(coll_off_cpu(&env, &req, dir, "unused.data", meta, &err), PL_OK);
	snprintf(text, sizeof(text), "%s/offcpu.txt", dir);
	char *out = slurp_all(text);
	ck_assert_msg(strstr(out, "fid-worker 500/552 ") != NULL, "%s", out);
	ck_assert_msg(strstr(out, ":552") == NULL, "%s", out);
	/* perf knew the leader: its name stays perf's, not the switch's */
	ck_assert_msg(strstr(out, "fidelity 500/500 ") != NULL, "%s", out);
	ck_assert_msg(strstr(out, "renamed-late") == NULL, "%s", out);
	json_t *named = json_object_get(json_object_get(meta, "off_cpu"), "switches_named_by_prev_comm");
	ck_assert_int_eq(json_integer_value(named), 1);
	free(out);
	json_decref(meta);
	remove_tree(dir);
}
END_TEST

Suite *suite_offcpu(void)
{
	Suite *s = suite_create("offcpu");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, a_task_perf_names_by_tid_takes_its_switch_prev_comm);
	suite_add_tcase(s, tc);
	return s;
}
