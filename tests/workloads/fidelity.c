/* fidelity.c - a program that does what a real program does and that a
 * sandbox would refuse, and prints what it saw: the fidelity test runs it
 * directly and under collect_profile and compares the two outputs.
 *
 * It opens a file in its working directory and one in /var/tmp, writes
 * /dev/null, reads /etc/hostname and /proc/self/status, opens a loopback
 * TCP connection to itself and a UNIX socketpair, forks and execs
 * /bin/true, blocks on a pipe until its child writes to it, names a thread with pthread_setname_np ("fid-worker") and
 * spins a little so that samples land in both threads, commits a small
 * journal in its working directory (write and fsync, 20 times: a wait on
 * the disk that the off-CPU test finds under journal_commit), reads one
 * variable of its environment (FIDELITY_VAR), and prints one line per
 * step: "name ok" or "name FAILED errno".  Exit status 0 when every step
 * worked, 3 otherwise.  The output does not depend on the machine.
 * `fidelity fail` also writes "error: asked to fail" to stderr and exits
 * 5; `fidelity crash` then dies of SIGSEGV; `fidelity spin S` only spins S seconds in both threads (a process
 * to attach to).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int failures;

static void report(const char *what, int ok)
{
	if (ok)
		printf("%s ok\n", what);
	else {
		printf("%s FAILED %s\n", what, strerror(errno));
		failures++;
	}
}

static volatile unsigned long sink;

static void __attribute__((noinline)) spin(double seconds)
{
	struct timespec a, b;

	clock_gettime(CLOCK_MONOTONIC, &a);
	do {
		for (int i = 0; i < 100000; i++)
			sink += (unsigned long)i * 2654435761u;
		clock_gettime(CLOCK_MONOTONIC, &b);
	} while ((b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) / 1e9 < seconds);
}

static double spin_seconds = 0.15;

static void *worker(void *arg)
{
	(void)arg;
	spin(spin_seconds);
	return NULL;
}

static int open_close(const char *path, int flags)
{
	int fd = open(path, flags, 0644);

	if (fd < 0)
		return 0;
	close(fd);
	return 1;
}

static int read_file(const char *path)
{
	char buf[4096];
	int fd = open(path, O_RDONLY);
	ssize_t n;

	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf));
	close(fd);
	return n > 0;
}

static int tcp_loopback(void)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t len = sizeof(a);
	int l = socket(AF_INET, SOCK_STREAM, 0), c, s;
	int ok = 0;

	if (l < 0)
		return 0;
	if (bind(l, (struct sockaddr *)&a, sizeof(a)) == 0 && listen(l, 1) == 0 &&
	    getsockname(l, (struct sockaddr *)&a, &len) == 0) {
		c = socket(AF_INET, SOCK_STREAM, 0);
		if (c >= 0 && connect(c, (struct sockaddr *)&a, sizeof(a)) == 0 &&
		    (s = accept(l, NULL, NULL)) >= 0) {
			ok = write(c, "x", 1) == 1;
			close(s);
		}
		if (c >= 0)
			close(c);
	}
	close(l);
	return ok;
}

static int unix_pair(void)
{
	int sv[2];
	char c = 0;

	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) < 0)
		return 0;
	int ok = write(sv[0], "y", 1) == 1 && read(sv[1], &c, 1) == 1 && c == 'y';
	close(sv[0]);
	close(sv[1]);
	return ok;
}

/* Block reading a pipe until a child, 50 ms later, writes one byte to it
 * (a wait on a peer, as a consumer of a pipeline waits). */
static int pipe_block(void)
{
	int fd[2], status;
	char c = 0;
	pid_t pid;

	if (pipe(fd) < 0)
		return 0;
	if ((pid = fork()) == 0) {
		struct timespec t = {0, 50 * 1000 * 1000};
		close(fd[0]);
		nanosleep(&t, NULL);
		_exit(write(fd[1], "p", 1) == 1 ? 0 : 1);
	}
	close(fd[1]);
	int ok = pid > 0 && read(fd[0], &c, 1) == 1 && c == 'p';
	close(fd[0]);
	return ok && waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

/* Write a 4 KB record and fsync it, `n` times, to fidelity.journal in the
 * working directory; 1 when all of it worked.  noinline: the off-CPU
 * test looks for this frame above the kernel's fsync path. */
static int __attribute__((noinline)) journal_commit(int n)
{
	char rec[4096];
	int fd = open("fidelity.journal", O_WRONLY | O_CREAT | O_TRUNC, 0644), ok = fd >= 0;

	memset(rec, 'j', sizeof(rec));
	for (int i = 0; ok && i < n; i++)
		ok = write(fd, rec, sizeof(rec)) == (ssize_t)sizeof(rec) && fsync(fd) == 0;
	if (fd >= 0)
		close(fd);
	unlink("fidelity.journal");
	return ok;
}

static int fork_exec(void)
{
	int status;
	pid_t pid = fork();

	if (pid < 0)
		return 0;
	if (pid == 0) {
		execl("/bin/true", "true", (char *)NULL);
		_exit(127);
	}
	return waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

int main(int argc, char **argv)
{
	pthread_t t;
	char name[16] = "";
	const char *var = getenv("FIDELITY_VAR");
	char path[64];

	if (argc > 2 && strcmp(argv[1], "spin") == 0) {
		spin_seconds = atof(argv[2]);
		if (pthread_create(&t, NULL, worker, NULL) != 0)
			return 1;
		pthread_setname_np(t, "fid-worker");
		spin(spin_seconds);
		pthread_join(t, NULL);
		return 0;
	}

	report("open_cwd", open_close("fidelity.out", O_WRONLY | O_CREAT | O_TRUNC));
	unlink("fidelity.out");  /* the check is that it could; leave nothing behind */
	snprintf(path, sizeof(path), "/var/tmp/fidelity.%d", (int)getpid());
	report("open_var_tmp", open_close(path, O_WRONLY | O_CREAT | O_TRUNC));
	unlink(path);
	report("open_dev_null", open_close("/dev/null", O_WRONLY));
	report("read_etc_hostname", read_file("/etc/hostname"));
	report("read_proc_status", read_file("/proc/self/status"));
	report("tcp_loopback", tcp_loopback());
	report("unix_socketpair", unix_pair());
	report("fork_exec", fork_exec());
	report("pipe_block", pipe_block());
	report("fsync_journal", journal_commit(20));
	errno = 0;
	int ok = pthread_create(&t, NULL, worker, NULL) == 0;
	if (ok) {
		errno = pthread_setname_np(t, "fid-worker");
		ok = errno == 0 && pthread_getname_np(t, name, sizeof(name)) == 0 &&
		     strcmp(name, "fid-worker") == 0;
	}
	report("thread_name", ok);
	spin(0.15);
	pthread_join(t, NULL);
	printf("environment %s\n", var ? var : "(unset)");
	printf("failures %d\n", failures);
	if (argc > 1 && strcmp(argv[1], "crash") == 0) {
		fflush(stdout);
		raise(SIGSEGV);
	}
	if (argc > 1 && strcmp(argv[1], "fail") == 0) {
		fflush(stdout);
		fprintf(stderr, "error: asked to fail\n");
		return 5;
	}
	return failures ? 3 : 0;
}
