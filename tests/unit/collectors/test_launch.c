/* test_launch.c - the collection launcher's check of a request
 * (collectors/launch.c): only the allowlisted perf with the options a
 * collection writes, outputs in a staging folder, a program and working
 * directory under an allowed root, -p only with pid attach, bounded
 * variables without LD_* and PERF_*; a real run through a launcher; and
 * what a collection's stderr says may distort the profile. */
#include <check.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "collectors/launch.h"
#include "collectors/coll_int.h"

static char root[PATH_MAX], art[PATH_MAX + 8], stage[PATH_MAX + 64], data[PATH_MAX + 96],
	out[PATH_MAX + 96], errp[PATH_MAX + 96], prog[PATH_MAX + 16];
static const char *roots[1];
static struct coll_launcher_cfg cfg;

static void setup(void)
{
	char tmpl[] = "/tmp/pl-launch-XXXXXX";

	ck_assert_ptr_nonnull(mkdtemp(tmpl));
	ck_assert_ptr_nonnull(realpath(tmpl, root));
	snprintf(art, sizeof(art), "%s/art", root);
	mkdir(art, 0755);
	snprintf(stage, sizeof(stage), "%s/collections", art);
	mkdir(stage, 0755);
	snprintf(stage, sizeof(stage), "%s/collections/.staging-abc", art);
	mkdir(stage, 0755);
	snprintf(data, sizeof(data), "%s/perf.data", stage);
	snprintf(out, sizeof(out), "%s/target.stdout", stage);
	snprintf(errp, sizeof(errp), "%s/target.stderr", stage);
	snprintf(prog, sizeof(prog), "%s/prog", root);
	fclose(fopen(prog, "w"));
	roots[0] = root;
	cfg = (struct coll_launcher_cfg){.perf_path = "/bin/echo", .artifact_root = art,
					 .allowed_roots = roots, .nroots = 1};
}

static const char *check_argv(const char *const *argv, const char *const *env)
{
	return coll_launch_check(&cfg, argv, env, root, out, errp);
}

START_TEST(launcher_takes_a_collection_command)
{
	const char *argv[] = {"/bin/echo", "record", "-e", "cpu-clock", "-F", "99", "-g", "-N", "-o", data,
			      "--", prog, "--any", "-x", NULL};
	const char *env[] = {"FOO=bar", NULL};

	setup();
	ck_assert_ptr_null(check_argv(argv, env));
}
END_TEST

START_TEST(launcher_refuses_what_a_collection_never_asks)
{
	const char *other_perf[] = {"/bin/sh", "record", "-o", data, "--", prog, NULL};
	const char *sub[] = {"/bin/echo", "script", "-i", data, NULL};
	const char *opt[] = {"/bin/echo", "record", "--control", "fifo:x", "-o", data, "--", prog, NULL};
	const char *out_elsewhere[] = {"/bin/echo", "record", "-o", "/tmp/x.data", "--", prog, NULL};
	const char *prog_elsewhere[] = {"/bin/echo", "record", "-o", data, "--", "/bin/sh", NULL};
	const char *pid[] = {"/bin/echo", "record", "-o", data, "-p", "1", NULL};
	/* off_cpu of a running pid: system-wide, -a last, no program */
	const char *wide[] = {"/bin/echo", "record", "-e", "sched:sched_switch", "-g", "-N", "-o", data, "-a", NULL};
	const char *ok[] = {"/bin/echo", "stat", "-x", ",", "-o", data, "--", prog, NULL};
	const char *ld[] = {"LD_PRELOAD=/tmp/x.so", NULL};
	const char *bpf[] = {"/bin/echo", "record", "-e", "/tmp/prog.c", "-o", data, "--", prog, NULL};
	const char *graph[] = {"/bin/echo", "record", "--call-graph", "dwarf,6x", "-o", data, "--", prog, NULL};
	const char *graph_size[] = {"/bin/echo", "record", "--call-graph", "dwarf,65528", "-o", data, "--", prog, NULL};

	setup();
	ck_assert_str_eq(check_argv(other_perf, NULL), "the program is not the allowlisted perf");
	ck_assert_str_eq(check_argv(sub, NULL), "the perf subcommand is not one a collection runs");
	ck_assert_str_eq(check_argv(opt, NULL), "a perf option that a collection does not use");
	ck_assert_str_eq(check_argv(out_elsewhere, NULL),
			 "perf's output file is not in a collection's staging folder");
	ck_assert_str_eq(check_argv(prog_elsewhere, NULL), "the program is not under an allowed root");
	ck_assert_str_eq(check_argv(bpf, NULL), "an event that names a file (a BPF program) is not run here");
	ck_assert_str_eq(check_argv(graph, NULL), "--call-graph takes fp, dwarf, dwarf,SIZE or lbr");
	ck_assert_ptr_null(check_argv(graph_size, NULL));  /* collect_profile's dwarf_stack_bytes */
	ck_assert_str_eq(check_argv(pid, NULL), "attaching to a running process needs --allow-pid-attach");
	cfg.allow_pid_attach = true;
	ck_assert_ptr_null(check_argv(pid, NULL));
	ck_assert_ptr_null(check_argv(wide, NULL));
	ck_assert_str_eq(check_argv(ok, ld),
			 "LD_* and PERF_* variables are refused: they would apply to perf as well as to the program");
	ck_assert_str_eq(coll_launch_check(&cfg, ok, NULL, "/", out, errp),
			 "the working directory is not under an allowed root");
	ck_assert_str_eq(coll_launch_check(&cfg, ok, NULL, root, "/tmp/out", errp),
			 "stdout and stderr must go to files in the staging folder, or to /dev/null");
	ck_assert_ptr_null(coll_launch_check(&cfg, ok, NULL, root, "/dev/null", errp));
}
END_TEST

START_TEST(launcher_runs_a_command_and_answers)
{
	const char *argv[] = {"/bin/echo", "record", "-o", data, "--", prog, NULL};
	const char *refused[] = {"/bin/echo", "record", "-o", "/tmp/x", "--", prog, NULL};
	const char *env[] = {"FOO=bar", NULL};
	struct pl_run_opts o = {.argv = argv, .env = env, .cwd = root, .stdout_path = out,
				.stderr_path = errp, .timeout_ms = 10000};
	struct pl_run_result res;
	struct pl_error err;
	char line[PATH_MAX * 2];
	FILE *fp;
	pid_t pid;
	int fd, conn[2];

	setup();
	ck_assert_int_eq(coll_launcher_start(&cfg, &fd, &pid, &err), PL_OK);
	/* A connection as a worker makes it (sandbox.c's connect_launcher). */
	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_SEQPACKET, 0, conn), 0);
	{
		char byte = 'C', cbuf[CMSG_SPACE(sizeof(int))];
		struct iovec iov = {&byte, 1};
		struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf,
				   .msg_controllen = sizeof(cbuf)};
		struct cmsghdr *c;
		memset(cbuf, 0, sizeof(cbuf));
		c = CMSG_FIRSTHDR(&m);
		c->cmsg_level = SOL_SOCKET, c->cmsg_type = SCM_RIGHTS, c->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(c), &conn[1], sizeof(int));
		ck_assert_int_eq(sendmsg(fd, &m, 0), 1);
		close(conn[1]);
	}
	ck_assert_int_eq(coll_launch_run(conn[0], &o, &res, &err), PL_OK);
	ck_assert_int_eq(res.exit_status, 0);
	ck_assert_int_gt(res.pid, 0);
	fp = fopen(out, "r");
	ck_assert_ptr_nonnull(fp);
	ck_assert_ptr_nonnull(fgets(line, sizeof(line), fp));
	fclose(fp);
	ck_assert_ptr_nonnull(strstr(line, "record -o "));
	o.argv = refused;
	ck_assert_int_eq(coll_launch_run(conn[0], &o, &res, &err), PL_ERR_PATH);
	ck_assert_str_eq(err.text, "the collection launcher refused the run: perf's output file is not in a "
			 "collection's staging folder");
	close(conn[0]);
	close(fd);
}
END_TEST

/* An experiment's request: the program itself, no perf; checked as
 * strictly (under an allowed root, outputs in the staging folder, no
 * LD_*), and a perf request can never pass as one, nor one as perf. */
START_TEST(launcher_runs_a_program_request_only_under_an_allowed_root)
{
	const char *argv[] = {prog, "a b", NULL};
	const char *outside[] = {"/bin/echo", "hi", NULL};
	const char *ld[] = {"LD_PRELOAD=/tmp/x.so", NULL};
	struct pl_run_opts o = {.argv = argv, .cwd = root, .stdout_path = out, .stderr_path = errp,
				.timeout_ms = 10000};
	struct pl_run_result res;
	struct pl_error err;
	char line[256] = "";
	FILE *fp;
	pid_t pid;
	int fd, conn[2];

	setup();
	fp = fopen(prog, "w");
	fputs("#!/bin/sh\necho \"ran $1\"\nexit 3\n", fp);
	fclose(fp);
	chmod(prog, 0755);
	ck_assert_ptr_null(coll_launch_check_program(&cfg, argv, NULL, root, out, errp));
	ck_assert_str_eq(coll_launch_check_program(&cfg, outside, NULL, root, out, errp),
			 "the program is not an executable under an allowed root");
	ck_assert_str_eq(coll_launch_check_program(&cfg, argv, ld, root, out, errp),
			 "LD_* and PERF_* variables are refused: they would apply to perf as well as to the program");
	ck_assert_str_eq(coll_launch_check_program(&cfg, argv, NULL, "/", out, errp),
			 "the working directory is not under an allowed root");
	ck_assert_str_eq(coll_launch_check_program(&cfg, argv, NULL, root, "/tmp/out", errp),
			 "stdout and stderr must go to files in the staging folder, or to /dev/null");
	ck_assert_int_eq(coll_launcher_start(&cfg, &fd, &pid, &err), PL_OK);
	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_SEQPACKET, 0, conn), 0);
	{
		char byte = 'C', cbuf[CMSG_SPACE(sizeof(int))];
		struct iovec iov = {&byte, 1};
		struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf,
				   .msg_controllen = sizeof(cbuf)};
		struct cmsghdr *c;
		memset(cbuf, 0, sizeof(cbuf));
		c = CMSG_FIRSTHDR(&m);
		c->cmsg_level = SOL_SOCKET, c->cmsg_type = SCM_RIGHTS, c->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(c), &conn[1], sizeof(int));
		ck_assert_int_eq(sendmsg(fd, &m, 0), 1);
		close(conn[1]);
	}
	ck_assert_int_eq(coll_launch_program(conn[0], &o, &res, &err), PL_OK);
	ck_assert_int_eq(res.exit_status, 3);
	ck_assert(res.seconds > 0);
	fp = fopen(out, "r");
	ck_assert_ptr_nonnull(fp);
	ck_assert_ptr_nonnull(fgets(line, sizeof(line), fp));
	fclose(fp);
	ck_assert_str_eq(line, "ran a b\n");
	/* The program kind is not a way to run perf's argv elsewhere, nor the
	 * perf kind a way to run the program. */
	o.argv = outside;
	ck_assert_int_eq(coll_launch_program(conn[0], &o, &res, &err), PL_ERR_PATH);
	ck_assert_str_eq(err.text, "the collection launcher refused the run: the program is not an executable "
			 "under an allowed root");
	o.argv = argv;
	ck_assert_int_eq(coll_launch_run(conn[0], &o, &res, &err), PL_ERR_PATH);
	ck_assert_str_eq(err.text, "the collection launcher refused the run: the program is not the allowlisted perf");
	close(conn[0]);
	close(fd);
}
END_TEST

START_TEST(stderr_findings_count_perf_losses_and_program_errors)
{
	const char *text =
		"[ perf record: Woken up 12 times to write data ]\n"
		"Warning:\n"
		"Processed 123456 events and lost 7 chunks!\n"
		"\n"
		"Check IO/CPU overload!\n"
		"\n"
		"loading...\n"
		"error: could not open config\n"
		"Segmentation fault in worker\n"
		"[ perf record: Captured and wrote 3.2 MB perf.data (45678 samples) ]\n";
	json_t *w = json_array(), *pw = coll_stderr_findings(text, false, w);

	ck_assert_int_eq(json_integer_value(json_object_get(pw, "lost_chunks")), 7);
	ck_assert_int_eq(json_array_size(json_object_get(pw, "perf_lines")), 3);
	ck_assert_int_eq(json_integer_value(json_object_get(pw, "target_error_lines")), 2);
	ck_assert_str_eq(json_string_value(json_array_get(json_object_get(pw, "target_error_examples"), 0)),
			 "error: could not open config");
	ck_assert_int_eq(json_array_size(w), 2);
	ck_assert_str_eq(json_string_value(json_array_get(w, 0)),
			 "perf lost 7 chunks of its ring buffer (processed 123456 events): samples are missing where "
			 "the machine was busiest; lower frequency_hz, collect fewer events or use a quieter machine");
	json_decref(pw);
	json_decref(w);
	w = json_array();
	pw = coll_stderr_findings("[ perf record: Woken up 1 times to write data ]\nall fine\n", false, w);
	ck_assert_int_eq(json_array_size(w), 0);
	ck_assert_int_eq(json_integer_value(json_object_get(pw, "target_error_lines")), 0);
	json_decref(pw);
	json_decref(w);
	/* Attached to a pid, the stderr is perf's alone: its warning about a
	 * thread that exited is perf's, not an error line of the program. */
	w = json_array();
	pw = coll_stderr_findings("WARNING: Ignored open failure for pid 30214\n"
				  "[ perf record: Woken up 1 times to write data ]\n", true, w);
	ck_assert_int_eq(json_integer_value(json_object_get(pw, "target_error_lines")), 0);
	ck_assert_int_eq(json_array_size(json_object_get(pw, "perf_lines")), 1);
	ck_assert_int_eq(json_array_size(w), 1);
	ck_assert_str_eq(json_string_value(json_array_get(w, 0)),
			 "perf warned: WARNING: Ignored open failure for pid 30214 (metadata.perf_warnings.perf_lines)");
	json_decref(pw);
	json_decref(w);
	/* The same line from a program perf started is perf's too. */
	w = json_array();
	pw = coll_stderr_findings("WARNING: Ignored open failure for pid 7\nprogram: fatal: no config\n", false, w);
	ck_assert_int_eq(json_integer_value(json_object_get(pw, "target_error_lines")), 1);
	ck_assert_int_eq(json_array_size(json_object_get(pw, "perf_lines")), 1);
	json_decref(pw);
	json_decref(w);
}
END_TEST

Suite *suite_launch(void)
{
	Suite *s = suite_create("launch");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, launcher_takes_a_collection_command);
	tcase_add_test(tc, launcher_refuses_what_a_collection_never_asks);
	tcase_add_test(tc, launcher_runs_a_command_and_answers);
	tcase_add_test(tc, launcher_runs_a_program_request_only_under_an_allowed_root);
	tcase_add_test(tc, stderr_findings_count_perf_losses_and_program_errors);
	suite_add_tcase(s, tc);
	return s;
}
