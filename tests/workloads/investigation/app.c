/* app.c - the end-to-end investigation's target, with four planted causes.
 *
 * Built with -O1 -g -fno-omit-frame-pointer -pthread; each thread is
 * named, and each cause sits on known functions and lines:
 *   formatter   format_record() appends fields with append_field(), which
 *               calls strlen() on the whole record each time: quadratic.
 *               libc's strlen keeps no frame, so frame-pointer stacks show
 *               format_record > strlen and skip append_field.
 *   counter-1..3  counter() calls count_stat(), which takes one shared
 *               mutex and does its work inside it (the line marked LOCKED
 *               below): contention; frame-pointer stacks through the libc
 *               lock may skip count_stat.
 *   writer      sleeps 50 ms between writes to a pipe (nanosleep).
 *   reader      blocks reading that pipe (pipe_read).
 * Everything stops after RUN_SECONDS of wall time (argv[1] overrides);
 * the program prints its own metric, records per second, on stdout.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#ifndef RUN_SECONDS  /* -DRUN_SECONDS=0.5: a shorter run (test_crawl_steps runs it often) */
#define RUN_SECONDS 2.0
#endif
#define FIELDS 1000

static double run_seconds = RUN_SECONDS;
static volatile int stop;
static pthread_mutex_t stat_lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned long stat_table[64];
static volatile unsigned long records, sink;
static int pipe_fd[2];

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

__attribute__((noinline)) static void append_field(char *record, const char *field)
{
	size_t used = strlen(record);   /* the whole record, every time */

	memcpy(record + used, field, 8);
	record[used + 8] = '\0';
}

__attribute__((noinline)) static void format_record(char *record, unsigned long n)
{
	static const char hex[] = "0123456789abcdef";
	char field[8];

	record[0] = '\0';
	for (int i = 0; i < FIELDS; i++) {
		unsigned long v = n + (unsigned long)i;
		for (int d = 7; d >= 0; d--, v >>= 4)
			field[d] = hex[v & 15];
		append_field(record, field);
	}
}

static void *formatter(void *arg)
{
	char *record = malloc(FIELDS * 8 + 1);

	(void)arg;
	pthread_setname_np(pthread_self(), "formatter");
	for (unsigned long n = 0; !stop; n++) {
		format_record(record, n);
		records++;
	}
	free(record);
	return NULL;
}

__attribute__((noinline)) static void count_stat(unsigned long key)
{
	pthread_mutex_lock(&stat_lock);
	for (int i = 0; i < 500; i++)
		stat_table[(key + (unsigned long)i) & 63] += (unsigned long)i * key; /* LOCKED */
	pthread_mutex_unlock(&stat_lock);
}

static void *counter(void *arg)
{
	char name[16];

	snprintf(name, sizeof(name), "counter-%d", (int)(long)arg);
	pthread_setname_np(pthread_self(), name);
	for (unsigned long k = 0; !stop; k++)
		count_stat(k);
	return NULL;
}

static void *writer(void *arg)
{
	struct timespec nap = {0, 50 * 1000000L};

	(void)arg;
	pthread_setname_np(pthread_self(), "writer");
	while (!stop) {
		nanosleep(&nap, NULL);
		if (write(pipe_fd[1], "r", 1) != 1)
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
	pthread_t t[6];
	double start;

	if (argc > 1)
		run_seconds = atof(argv[1]);
	if (pipe(pipe_fd) < 0)
		return 1;
	start = now();
	if (pthread_create(&t[0], NULL, formatter, NULL) || pthread_create(&t[1], NULL, writer, NULL) ||
	    pthread_create(&t[2], NULL, reader, NULL))
		return 1;
	for (long i = 1; i <= 3; i++)
		if (pthread_create(&t[2 + i], NULL, counter, (void *)i))
			return 1;
	while (now() - start < run_seconds)
		usleep(10000);
	stop = 1;
	for (int i = 0; i < 6; i++)
		pthread_join(t[i], NULL);
	printf("records_per_second %.1f\n", (double)records / (now() - start));
	return 0;
}
