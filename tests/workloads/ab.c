/* ab.c - the A/B investigation's target: a baseline and a candidate build
 * of one program, the candidate with a planted regression.
 *
 * Each record is parsed (parse_record: fixed work) and its key hashed
 * (hash_key: HASH_ROUNDS passes, 1 in the baseline build and 4 in the
 * candidate's, -DHASH_ROUNDS=4), so the candidate spends a larger share
 * in hash_key and a smaller one in parse_record, and takes longer per
 * record.  Built with -O1 -g -fno-omit-frame-pointer.
 *   ab SECONDS      run for SECONDS of wall time (for perf record)
 *   ab -n RECORDS   run RECORDS records (for hyperfine: fixed work)
 * Prints records per second on stdout.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifndef HASH_ROUNDS
#define HASH_ROUNDS 1
#endif

static volatile unsigned long sink;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

__attribute__((noinline)) static unsigned long parse_record(char *rec, unsigned long n)
{
	unsigned long sum = 0;

	for (int i = 0; i < 256; i++) {
		rec[i] = (char)('a' + (n + (unsigned long)i * 7) % 26);
		sum += (unsigned long)rec[i] * (unsigned long)(i + 1);
	}
	return sum;
}

__attribute__((noinline)) static unsigned long hash_key(const char *rec)
{
	unsigned long h = 1469598103934665603UL;

	for (int round = 0; round < HASH_ROUNDS; round++)
		for (int i = 0; i < 256; i++)
			h = (h ^ (unsigned char)rec[i]) * 1099511628211UL;
	return h;
}

__attribute__((noinline)) static void run(double seconds, unsigned long records)
{
	char rec[256];
	unsigned long n = 0;
	double start = now(), end = start + seconds;

	while (records ? n < records : ((n & 1023) || now() < end)) {
		sink += parse_record(rec, n);
		sink ^= hash_key(rec);
		n++;
	}
	printf("%.0f records/s\n", (double)n / (now() - start));
}

int main(int argc, char **argv)
{
	if (argc > 2 && strcmp(argv[1], "-n") == 0)
		run(0, strtoul(argv[2], NULL, 10));
	else
		run(argc > 1 ? atof(argv[1]) : 2.0, 0);
	return 0;
}
