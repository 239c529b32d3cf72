/* test_run.c - unit tests for the bounded runner (collectors/run.c): it
 * leaves no descriptor open on any way out (a pipe2 that fails halfway,
 * a cancelled run with a partial line buffered), a cancelled run is
 * stopped within its poll interval and said so, and lines, exit status
 * and stderr come through from a real /bin/sh; a faithful run (the
 * collection launcher's) has the working directory, this process's
 * environment plus the added variables, and its streams in files, and
 * ends when its requester hangs up. */
#include <check.h>
#include <dirent.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/resource.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "collectors/run.h"

/* Open descriptors of this process, as /proc lists them. */
static int open_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int n = 0;

	ck_assert_ptr_nonnull(d);
	while ((e = readdir(d)))
		n += e->d_name[0] != '.';
	closedir(d);
	return n - 1;   /* the one opendir holds */
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static enum pl_err count_line(void *arg, const char *line, size_t len, struct pl_error *err)
{
	(void)line, (void)len, (void)err;
	(*(int *)arg)++;
	return PL_OK;
}

START_TEST(lines_status_and_stderr_come_through)
{
	const char *argv[] = {"/bin/sh", "-c", "printf 'a\\nb\\nlast'; echo oops >&2; exit 3", NULL};
	int lines = 0, before = open_fds();
	struct pl_run_opts o = {.argv = argv, .timeout_ms = 10000, .on_line = count_line, .arg = &lines};
	struct pl_run_result res;
	struct pl_error err;

	ck_assert_int_eq(pl_run(&o, &res, &err), PL_OK);
	ck_assert_int_eq(res.exit_status, 3);
	ck_assert_int_eq(lines, 3);
	ck_assert_str_eq(res.stderr_text, "oops\n");
	ck_assert_int_eq(open_fds(), before);
	pl_run_result_release(&res);
}
END_TEST

START_TEST(a_pipe_that_cannot_be_made_leaks_no_descriptor)
{
	const char *argv[] = {"/bin/true", NULL};
	struct pl_run_opts o = {.argv = argv, .timeout_ms = 10000};
	struct pl_run_result res;
	struct pl_error err;
	struct rlimit old, low;
	int before = open_fds();

	/* Room for one pipe and a half: the second pipe2 fails. */
	ck_assert_int_eq(getrlimit(RLIMIT_NOFILE, &old), 0);
	low = old;
	low.rlim_cur = (rlim_t)before + 3;
	ck_assert_int_eq(setrlimit(RLIMIT_NOFILE, &low), 0);
	ck_assert_int_eq(pl_run(&o, &res, &err), PL_ERR_EXTERNAL);
	ck_assert_int_eq(setrlimit(RLIMIT_NOFILE, &old), 0);
	ck_assert_str_eq(err.text, "pipe: Too many open files");
	ck_assert_int_eq(open_fds(), before);
	pl_run_result_release(&res);
}
END_TEST

static atomic_int cancel_flag;

static void *cancel_soon(void *arg)
{
	(void)arg;
	usleep(300 * 1000);
	atomic_store(&cancel_flag, 1);
	return NULL;
}

START_TEST(a_cancelled_run_stops_and_closes_everything)
{
	/* A partial line is buffered when the cancel comes. */
	const char *argv[] = {"/bin/sh", "-c", "printf partial; exec sleep 20", NULL};
	int lines = 0, before = open_fds();
	struct pl_run_opts o = {.argv = argv, .timeout_ms = 30000, .on_line = count_line, .arg = &lines,
				.cancel = &cancel_flag};
	struct pl_run_result res;
	struct pl_error err;
	pthread_t t;
	double t0 = now_s();

	atomic_store(&cancel_flag, 0);
	ck_assert_int_eq(pthread_create(&t, NULL, cancel_soon, NULL), 0);
	ck_assert_int_eq(pl_run(&o, &res, &err), PL_ERR_TIMEOUT);
	pthread_join(t, NULL);
	ck_assert_str_eq(err.text, "'/bin/sh' was cancelled");
	ck_assert_double_lt(now_s() - t0, 5.0);
	ck_assert_int_eq(lines, 0);
	ck_assert_int_eq(res.signal, SIGKILL);
	ck_assert_int_eq(open_fds(), before);
	pl_run_result_release(&res);
}
END_TEST


static char *slurp(const char *path)
{
	static char buf[4096];
	FILE *fp = fopen(path, "r");
	size_t n;

	ck_assert_ptr_nonnull(fp);
	n = fread(buf, 1, sizeof(buf) - 1, fp);
	buf[n] = '\0';
	fclose(fp);
	return buf;
}

START_TEST(a_faithful_run_has_its_folder_environment_and_files)
{
	char dir[] = "/tmp/pl-run-XXXXXX", out[64], errp[64];
	const char *argv[] = {"/bin/sh", "-c", "pwd; echo \"$PL_ADDED $PL_KEPT $LC_ALL\"; echo warn >&2; exit 4", NULL};
	const char *env[] = {"PL_ADDED=yes", NULL};
	int before = open_fds();
	struct pl_run_opts o = {.argv = argv, .env = env, .inherit_env = true, .timeout_ms = 10000,
				.stdout_path = out, .stderr_path = errp};
	struct pl_run_result res;
	struct pl_error err;
	char line[256];

	ck_assert_ptr_nonnull(mkdtemp(dir));
	o.cwd = dir;
	snprintf(out, sizeof(out), "%s/out", dir);
	snprintf(errp, sizeof(errp), "%s/err", dir);
	setenv("PL_KEPT", "kept", 1);
	unsetenv("LC_ALL");
	ck_assert_int_eq(pl_run(&o, &res, &err), PL_OK);
	ck_assert_int_eq(res.exit_status, 4);
	snprintf(line, sizeof(line), "%s\nyes kept \n", dir);
	ck_assert_str_eq(slurp(out), line);
	ck_assert_str_eq(slurp(errp), "warn\n");
	ck_assert_str_eq(res.stderr_text, "");
	ck_assert_int_eq(open_fds(), before);
	pl_run_result_release(&res);
	unlink(out), unlink(errp), rmdir(dir);
}
END_TEST

START_TEST(a_missing_working_directory_is_named)
{
	const char *argv[] = {"/bin/true", NULL};
	struct pl_run_opts o = {.argv = argv, .cwd = "/nonexistent/pl", .timeout_ms = 10000,
				.stdout_path = "/dev/null", .stderr_path = "/dev/null"};
	struct pl_run_result res;
	struct pl_error err;

	ck_assert_int_eq(pl_run(&o, &res, &err), PL_ERR_EXTERNAL);
	ck_assert_str_eq(err.text, "cannot enter the working directory '/nonexistent/pl': No such file or directory");
	pl_run_result_release(&res);
}
END_TEST

START_TEST(a_hangup_of_the_requester_stops_the_run)
{
	const char *argv[] = {"/bin/sleep", "20", NULL};
	int sv[2];
	struct pl_run_opts o = {.argv = argv, .timeout_ms = 30000, .stdout_path = "/dev/null",
				.stderr_path = "/dev/null"};
	struct pl_run_result res;
	struct pl_error err;
	double t0 = now_s();

	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv), 0);
	o.hangup_fd = sv[0];
	close(sv[1]);
	ck_assert_int_eq(pl_run(&o, &res, &err), PL_ERR_TIMEOUT);
	ck_assert_str_eq(err.text, "'/bin/sleep' was cancelled: its requester went away");
	ck_assert_double_lt(now_s() - t0, 5.0);
	ck_assert_int_eq(res.signal, SIGKILL);
	close(sv[0]);
	pl_run_result_release(&res);
}
END_TEST

START_TEST(a_run_with_files_waits_for_the_program)
{
	const char *argv[] = {"/bin/sh", "-c", "sleep 0.3; exit 2", NULL};
	struct pl_run_opts o = {.argv = argv, .timeout_ms = 10000, .stdout_path = "/dev/null",
				.stderr_path = "/dev/null"};
	struct pl_run_result res;
	struct pl_error err;

	ck_assert_int_eq(pl_run(&o, &res, &err), PL_OK);
	ck_assert_int_eq(res.exit_status, 2);
	ck_assert_double_ge(res.seconds, 0.25);
	pl_run_result_release(&res);
}
END_TEST

/* Output to files: no pipe closes at the exit, a pidfd wakes the wait, so
 * the wall time ends at the exit (it was on a 50 ms grid: run_experiment
 * measures it), and the pidfd is closed after.  A sanitizer's slower fork
 * widens the bound by CK_TIMEOUT_MULTIPLIER. */
START_TEST(a_run_with_files_ends_at_the_exit)
{
	const char *argv[] = {"/bin/true", NULL};
	struct pl_run_opts o = {.argv = argv, .timeout_ms = 10000, .stdout_path = "/dev/null",
				.stderr_path = "/dev/null"};
	struct pl_run_result res;
	struct pl_error err;
	const char *slow = getenv("CK_TIMEOUT_MULTIPLIER");
	double best = 1e9, bound = 0.03 * (slow && atof(slow) >= 1 ? atof(slow) : 1);
	int before = open_fds();

	for (int i = 0; i < 5; i++) {
		ck_assert_int_eq(pl_run(&o, &res, &err), PL_OK);
		if (res.seconds < best)
			best = res.seconds;
		pl_run_result_release(&res);
	}
	ck_assert_double_lt(best, bound);
	ck_assert_int_eq(open_fds(), before);
}
END_TEST

Suite *suite_run(void)
{
	Suite *s = suite_create("run");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, lines_status_and_stderr_come_through);
	tcase_add_test(tc, a_pipe_that_cannot_be_made_leaks_no_descriptor);
	tcase_add_test(tc, a_cancelled_run_stops_and_closes_everything);
	tcase_add_test(tc, a_faithful_run_has_its_folder_environment_and_files);
	tcase_add_test(tc, a_missing_working_directory_is_named);
	tcase_add_test(tc, a_hangup_of_the_requester_stops_the_run);
	tcase_add_test(tc, a_run_with_files_waits_for_the_program);
	tcase_add_test(tc, a_run_with_files_ends_at_the_exit);
	suite_add_tcase(s, tc);
	return s;
}
