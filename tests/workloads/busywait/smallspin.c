/* smallspin.c - not a busy wait: one thread computes and, between work
 * items, polls a pipe with a zero timeout a few times (a non-blocking
 * check for new input).  The polls are a fair share of the event (above
 * busy_wait's 10% of samples) but a minority of the thread's own time,
 * which is its work: busy_wait must not fire (its thread gate: most of
 * the thread in the wait path).
 */
#include <poll.h>
#include <stdio.h>
#include <unistd.h>

#include "common.h"

static int fds[2];

__attribute__((noinline)) static void check_input(void)
{
	struct pollfd p = {.fd = 0, .events = POLLIN};

	p.fd = fds[0];
	for (int i = 0; i < 40; i++)
		poll(&p, 1, 0);
}

int main(void)
{
	unsigned long x = 1;

	if (pipe(fds) != 0)
		return 1;
	while (thread_cpu_seconds() < BUDGET_S) {
		x = mix(20000, x);
		check_input();
	}
	sink = x;
	printf("%lu\n", sink & 1);
	return 0;
}
