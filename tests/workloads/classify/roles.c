/* roles.c - six threads with one known job each, for the per-thread
 * answers and the off-CPU rules (test_threads.sh):
 *   "formatter"  builds records with a quadratic strlen in append_field
 *                (on CPU, in libc's strlen under format_record);
 *   "counter" x3 take one mutex and run count_stat inside it (on CPU in
 *                the program's own count_stat; blocked on the futex while
 *                another counter holds the lock);
 *   "writer"     sleeps 0.5 ms (clock_nanosleep), then writes a byte to a pipe
 *                (often enough that its sleeps stay a clear share of all
 *                switches however often a loaded machine preempts the rest);
 *   "reader"     blocks in read() on that pipe.
 * Every thread stops after argv[1] seconds of wall time (default 1.5), so
 * the writer and the reader stay nearly idle on CPU however busy the
 * machine is.  Built with frame pointers by the test.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define COUNTERS 3

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static volatile unsigned long stats[4096], sink;
static volatile int stop;
static int pipe_fd[2];

/* The quadratic part: strlen of the whole record for every field. */
__attribute__((noinline)) static void append_field(char *buf, size_t cap, int v)
{
	size_t n = strlen(buf);

	if (n + 12 < cap)
		snprintf(buf + n, cap - n, "%d,", v);
}

__attribute__((noinline)) static void format_record(int r)
{
	char buf[8192];

	buf[0] = '\0';
	for (int f = 0; f < 600; f++)
		append_field(buf, sizeof(buf), r + f);
	sink += strlen(buf);
}

static void *formatter(void *arg)
{
	(void)arg;
	pthread_setname_np(pthread_self(), "formatter");
	for (int r = 0; !stop; r++)
		format_record(r);
	return NULL;
}

/* The program's own hot function, run inside the lock.  Long enough
 * (about half a millisecond) that the lock changes hands about as often as
 * the writer sleeps: with a tenth of it the counters' futex waits were 44%
 * of all switches and the writer's sleeps 5.7%, next to the sleep rule's
 * 5% floor, and a loaded run fell below it; now lock, sleep and read are
 * each 13-24% of the switches, idle or with every core busy. */
__attribute__((noinline)) static void count_stat(unsigned long seed)
{
	for (int i = 0; i < 400000; i++)
		stats[i & 4095] += seed * (unsigned long)i ^ stats[(i * 7) & 4095];
}

static void *counter(void *arg)
{
	unsigned long seed = (unsigned long)(size_t)arg;

	pthread_setname_np(pthread_self(), "counter");
	while (!stop) {
		pthread_mutex_lock(&lock);
		count_stat(seed);
		pthread_mutex_unlock(&lock);
	}
	return NULL;
}

static void *writer(void *arg)
{
	struct timespec pause = {0, 500000};

	(void)arg;
	pthread_setname_np(pthread_self(), "writer");
	while (!stop) {
		clock_nanosleep(CLOCK_MONOTONIC, 0, &pause, NULL);
		if (write(pipe_fd[1], "x", 1) != 1)
			break;
	}
	close(pipe_fd[1]);
	return NULL;
}

static void *reader(void *arg)
{
	char c;

	(void)arg;
	pthread_setname_np(pthread_self(), "reader");
	while (read(pipe_fd[0], &c, 1) == 1)
		sink += (unsigned long)c;
	return NULL;
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 1.5;
	pthread_t t[COUNTERS + 3];
	int n = 0;

	if (pipe(pipe_fd))
		return 1;
	if (pthread_create(&t[n++], NULL, formatter, NULL) || pthread_create(&t[n++], NULL, writer, NULL) ||
	    pthread_create(&t[n++], NULL, reader, NULL))
		return 1;
	for (size_t i = 0; i < COUNTERS; i++)
		if (pthread_create(&t[n++], NULL, counter, (void *)(i + 1)))
			return 1;
	usleep((useconds_t)(seconds * 1e6));
	stop = 1;
	for (int i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	printf("%lu\n", sink & 1);
	return 0;
}
