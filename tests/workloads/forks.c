/* forks.c - a parent that forks three children, each spinning in its own
 * function under a helper, then spins itself while they run, and waits.
 * Several processes of one recording (FORK records copying the parent's
 * maps), for the DWARF unwinding test (test_perf_data_dwarf.sh).
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile unsigned long sink;

__attribute__((noinline)) static void child_spin(unsigned long n)
{
	for (unsigned long i = 0; i < n; i++)
		sink += i * 7 + (i >> 3);
}

__attribute__((noinline)) static void child_main(int k)
{
	child_spin(40000000ul + 10000000ul * (unsigned long)k);
	sink++;
}

__attribute__((noinline)) static void parent_spin(unsigned long n)
{
	for (unsigned long i = 0; i < n; i++)
		sink ^= i * 13;
}

int main(void)
{
	for (int k = 0; k < 3; k++) {
		pid_t pid = fork();
		if (pid < 0) {
			perror("fork");
			return 1;
		}
		if (pid == 0) {
			child_main(k);
			_exit(0);
		}
	}
	parent_spin(60000000ul);
	while (wait(NULL) > 0)
		;
	printf("%lu\n", sink);
	return 0;
}
