/* pollspin.c - a busy wait on a polling system call: the waiter calls
 * poll, ppoll, select or epoll_wait (argv[1]) with a zero timeout on a
 * pipe nobody writes, again as soon as it returns, until the worker is
 * done.  classify_hotspots must give it busy_wait (one thread near a
 * full core, most of it in the polling call), not system_calls.
 * argv[1] "block" is the fix busy_wait's experiment proposes: the waiter
 * blocks in poll without a timeout until the worker writes the pipe (the
 * same work, one thread's CPU less).
 */
#define _GNU_SOURCE
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <unistd.h>

#include "common.h"

static const char *how = "poll";
static int fds[2], ep;

__attribute__((noinline)) static int poll_once(void)
{
	struct pollfd p = {.fd = fds[0], .events = POLLIN};
	struct timespec zero = {0, 0};
	struct timeval tv = {0, 0};
	struct epoll_event ev;
	fd_set set;

	if (strcmp(how, "ppoll") == 0)
		return ppoll(&p, 1, &zero, NULL);
	if (strcmp(how, "select") == 0) {
		FD_ZERO(&set);
		FD_SET(fds[0], &set);
		return select(fds[0] + 1, &set, NULL, NULL, &tv);
	}
	if (strcmp(how, "epoll") == 0)
		return epoll_wait(ep, &ev, 1, 0);
	return poll(&p, 1, strcmp(how, "block") == 0 ? -1 : 0);
}

__attribute__((noinline)) static void *wait_for_worker(void *arg)
{
	(void)arg;
	while (!atomic_load(&done))
		poll_once();
	return NULL;
}

int main(int argc, char **argv)
{
	struct epoll_event ev = {.events = EPOLLIN};
	pthread_t waiter;

	if (argc > 1)
		how = argv[1];
	if (pipe(fds) != 0 || (ep = epoll_create1(0)) < 0)
		return 1;
	ev.data.fd = fds[0];
	epoll_ctl(ep, EPOLL_CTL_ADD, fds[0], &ev);
	pthread_create(&waiter, NULL, wait_for_worker, NULL);
	work();
	if (write(fds[1], "x", 1) != 1)
		return 1;
	pthread_join(waiter, NULL);
	printf("%lu\n", sink & 1);
	return 0;
}
