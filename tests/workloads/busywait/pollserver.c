/* pollserver.c - not a busy wait: an ordinary event-loop server.  One
 * thread blocks in epoll_wait (or poll, argv[1]) on a pipe with an
 * infinite timeout and reads what arrives; another writes a byte every
 * millisecond for 2 s.  Both sleep most of the time (a few percent of a
 * CPU), so most of the server's few samples are its wait path, yet
 * busy_wait must not fire.
 */
#define _GNU_SOURCE
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

static int fds[2], ep;
static const char *how = "epoll";

__attribute__((noinline)) static void *serve(void *arg)
{
	struct pollfd p = {.fd = 0, .events = POLLIN};
	struct epoll_event ev;
	char buf[64];

	(void)arg;
	p.fd = fds[0];
	for (;;) {
		int n = strcmp(how, "poll") == 0 ? poll(&p, 1, -1) : epoll_wait(ep, &ev, 1, -1);
		if (n > 0 && read(fds[0], buf, sizeof(buf)) <= 0)
			return NULL;
	}
}

int main(int argc, char **argv)
{
	struct epoll_event ev = {.events = EPOLLIN};
	struct timespec ms = {0, 1000000};
	pthread_t server;

	if (argc > 1)
		how = argv[1];
	if (pipe(fds) != 0 || (ep = epoll_create1(0)) < 0)
		return 1;
	ev.data.fd = fds[0];
	epoll_ctl(ep, EPOLL_CTL_ADD, fds[0], &ev);
	pthread_create(&server, NULL, serve, NULL);
	for (int i = 0; i < 2000; i++) {
		if (write(fds[1], "x", 1) != 1)
			return 1;
		nanosleep(&ms, NULL);
	}
	close(fds[1]);
	pthread_join(server, NULL);
	puts("0");
	return 0;
}
