/* fork_floor.c - what one forked process per call costs on this machine,
 * before it does any work: the floor under "a sandboxed worker per call".
 *
 * A parent with HEAP_MB of written heap (about a perflens zygote's, and so
 * its page tables) forks a child that writes one byte to a pipe and exits;
 * the parent reads the byte and reaps the child.  That is repeated N times;
 * printed are the wall time per round and the cpu time (user+sys) of the
 * parent and of the children per round, and from their sum how many such
 * rounds the machine's CPUs could do in a second at best.  No sandbox, no
 * exec, no job: a real worker costs more.
 *
 *   fork_floor [ROUNDS [HEAP_MB]]     (default 2000 rounds, 8 MB)
 *
 * One line of key=value facts on stdout, read by mcp.sh.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static double cpu_s(int who)
{
	struct rusage ru;

	getrusage(who, &ru);
	return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
	       (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

/* One round: fork, the child says it runs and exits, reap it; 0 on success. */
static int round_trip(void)
{
	int fds[2];
	char byte;
	pid_t pid;

	if (pipe(fds) < 0)
		return -1;
	pid = fork();
	if (pid == 0) {
		if (write(fds[1], "x", 1) != 1)
			_exit(1);
		_exit(0);
	}
	close(fds[1]);
	if (pid < 0 || read(fds[0], &byte, 1) != 1) {
		close(fds[0]);
		return -1;
	}
	close(fds[0]);
	return waitpid(pid, NULL, 0) == pid ? 0 : -1;
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 2000;
	size_t heap_mb = argc > 2 ? (size_t)atoi(argv[2]) : 8;
	char *heap = malloc(heap_mb << 20);
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	double t0, wall, self, kids, c0, k0;

	if (!heap || rounds < 1) {
		fprintf(stderr, "usage: fork_floor [ROUNDS [HEAP_MB]]\n");
		return 2;
	}
	memset(heap, 1, heap_mb << 20);
	if (round_trip() < 0) {  /* one untimed */
		perror("fork_floor");
		return 1;
	}
	c0 = cpu_s(RUSAGE_SELF);
	k0 = cpu_s(RUSAGE_CHILDREN);
	t0 = now_s();
	for (int i = 0; i < rounds; i++)
		if (round_trip() < 0) {
			perror("fork_floor");
			return 1;
		}
	wall = (now_s() - t0) / rounds;
	self = (cpu_s(RUSAGE_SELF) - c0) / rounds;
	kids = (cpu_s(RUSAGE_CHILDREN) - k0) / rounds;
	printf("rounds=%d heap_mb=%zu wall_ms=%.3f parent_cpu_ms=%.3f child_cpu_ms=%.3f "
	       "cpu_ms=%.3f cpus=%ld max_per_s=%.0f\n", rounds, heap_mb, wall * 1e3, self * 1e3,
	       kids * 1e3, (self + kids) * 1e3, cpus,
	       self + kids > 0 ? (double)cpus / (self + kids) : 0.0);
	free(heap);
	return 0;
}
