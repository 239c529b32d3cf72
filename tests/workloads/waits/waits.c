/* waits.c - threads that wait off-CPU for one planted reason each, for
 * test_waits.sh: every cause a mix names is planted, no other.
 *
 *   waits DIR disk idle    the main thread writes 4 KiB and fdatasyncs a
 *                          file in DIR (a real disk) for 1.2 s; two
 *                          consumers wait on a condition variable and one
 *                          in epoll_wait, all woken only at the end (idle,
 *                          not contention)
 *   waits DIR mutex disk   eight threads (main among them) each take one
 *                          mutex around a write and fdatasync: seven of
 *                          them wait for the lock while one waits for the
 *                          disk
 *   waits DIR cpu          4 runnable threads per CPU (main among them)
 *                          spin a little and write 256 KiB to a memory
 *                          file for 1.2 s: preempted, mostly inside write(),
 *                          never blocked
 *
 * The main thread always works itself and joins last, so no thread waits
 * long in pthread_join; no mix sleeps or reads a pipe.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define SECONDS 1.2      /* wall time of each mix */

static const char *dir;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t qlock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t work = PTHREAD_COND_INITIALIZER;
static int done;
static int fd = -1;
static volatile unsigned long sink;
static double end;       /* CLOCK_MONOTONIC seconds: every mix stops then */

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int open_file(void)
{
	char path[4096];
	int f;

	snprintf(path, sizeof(path), "%s/waits.%d.tmp", dir, (int)getpid());
	f = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (f >= 0)
		unlink(path);
	return f;
}

__attribute__((noinline)) static void write_and_sync(int f, int r)
{
	char buf[4096];

	memset(buf, r, sizeof(buf));
	if (pwrite(f, buf, sizeof(buf), (off_t)(r % 64) * 4096) != (ssize_t)sizeof(buf) || fdatasync(f))
		exit(2);
}

/* A consumer with no work: waits on the condition variable until done. */
static void *consumer(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&qlock);
	while (!done)
		pthread_cond_wait(&work, &qlock);
	pthread_mutex_unlock(&qlock);
	return NULL;
}

/* An event loop with no events: epoll_wait on an eventfd written at the
 * end (its kernel frames name the wait, whatever the unwinder does). */
static int efd = -1;

static void *poller(void *arg)
{
	int ep = epoll_create1(0);
	struct epoll_event ev = {.events = EPOLLIN};

	(void)arg;
	if (ep < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, efd, &ev) || epoll_wait(ep, &ev, 1, -1) != 1)
		exit(2);
	close(ep);
	return NULL;
}

/* Takes the mutex around a synced write: the others wait for the lock. */
static void *locker(void *arg)
{
	for (int r = 0; now() < end; r++) {
		pthread_mutex_lock(&lock);
		write_and_sync(fd, r + (int)(long)arg);
		pthread_mutex_unlock(&lock);
	}
	return NULL;
}

__attribute__((noinline)) static void spin(void)
{
	for (int i = 0; i < 2000; i++)
		sink = sink * 31 + (unsigned long)i;
}

/* Runnable all the time: spins a little and writes 256 KiB to a memory
 * file (shmem: no device, no writeback) from its start, so most of its
 * time, and most of its preemptions, are inside write(). */
static void *hog(void *arg)
{
	static char buf[256 * 1024];
	int mem = memfd_create("waits-hog", 0);

	(void)arg;
	if (mem < 0)
		exit(2);
	while (now() < end) {
		spin();
		if (write(mem, buf, sizeof(buf)) != (ssize_t)sizeof(buf) || lseek(mem, 0, SEEK_SET))
			exit(2);
	}
	close(mem);
	return NULL;
}

static int has(int argc, char **argv, const char *mix)
{
	for (int i = 2; i < argc; i++)
		if (strcmp(argv[i], mix) == 0)
			return 1;
	return 0;
}

int main(int argc, char **argv)
{
	pthread_t t[64];
	int n = 0;

	if (argc < 3)
		return 1;
	dir = argv[1];
	end = now() + SECONDS;
	if (has(argc, argv, "mutex")) {
		if ((fd = open_file()) < 0)
			return 1;
		for (long i = 1; i < 8; i++)
			if (pthread_create(&t[n++], NULL, locker, (void *)i))
				return 1;
		locker(NULL);
	} else if (has(argc, argv, "disk")) {
		if (has(argc, argv, "idle")) {
			if ((efd = eventfd(0, 0)) < 0 || pthread_create(&t[n++], NULL, poller, NULL))
				return 1;
			for (int i = 0; i < 2; i++)
				if (pthread_create(&t[n++], NULL, consumer, NULL))
					return 1;
		}
		if ((fd = open_file()) < 0)
			return 1;
		for (int r = 0; now() < end; r++)
			write_and_sync(fd, r);
		pthread_mutex_lock(&qlock);
		done = 1;
		pthread_cond_broadcast(&work);
		pthread_mutex_unlock(&qlock);
		if (efd >= 0 && write(efd, &(uint64_t){1}, 8) != 8)
			return 1;
	} else if (has(argc, argv, "cpu")) {
		long cpus = sysconf(_SC_NPROCESSORS_ONLN);
		for (long i = 1; i < 4 * (cpus > 0 && cpus < 16 ? cpus : 1); i++)
			if (pthread_create(&t[n++], NULL, hog, NULL))
				return 1;
		hog(NULL);
	}
	for (int i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	if (fd >= 0)
		close(fd);
	printf("%lu\n", sink & 1);
	return 0;
}
