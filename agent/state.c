/* state.c - the agent's one global state (agent.h says which lock guards
 * which field), its defaults, logging and clocks: what every other file
 * of the agent uses, below all of them, so none of them needs main.c.
 *
 * Logging is one write(2) per line to stderr ("[perflens-agent] ..."), so
 * threads' lines never interleave mid-line.  Clocks: monotonic for every
 * interval and deadline (boards boot in 1970 and step the clock), real
 * time only for what is reported as a date. */
#include "agent.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

/* Zero-initialized (bss, not a 3 KB block of the file); the defaults are
 * set by agent_defaults() before the command line is read. */
struct agent A = {
	.mu = PTHREAD_MUTEX_INITIALIZER,
	.send_mu = PTHREAD_MUTEX_INITIALIZER,
};

void agent_defaults(void)
{
	snprintf(A.perf, sizeof A.perf, "perf");
	A.frequency = 99;
	A.duration = 8;
	A.pid = -1;
	A.m_enabled = 1;
	A.m_interval = 2;
	A.m_network = 1;
	A.send_timeout_ms = 60000;
	A.chunk_raw_max = CHUNK_RAW_MAX;
}

_Atomic int agent_quit;

void agent_log(const char *fmt, ...)
{
	char buf[1024];
	va_list ap;
	int n = snprintf(buf, sizeof buf, "[perflens-agent] ");
	va_start(ap, fmt);
	int k = vsnprintf(buf + n, sizeof buf - (size_t)n - 1, fmt, ap);
	va_end(ap);
	n = k < 0 ? n : (size_t)(n + k) >= sizeof buf - 1 ? (int)sizeof buf - 2 : n + k;
	buf[n++] = '\n';
	if (write(2, buf, (size_t)n) < 0) {
		/* nowhere left to say it */
	}
}

double mono_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

double real_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

void sleep_ms(int ms)
{
	struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000};
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR && !agent_quit) {
	}
}

/* musl's default thread stack is 128 KB; the collector's read buffers
 * alone take that, so every thread gets 1 MB (with a guard page). */
int agent_thread(pthread_t *t, void *(*fn)(void *), void *arg)
{
	pthread_attr_t a;
	pthread_attr_init(&a);
	pthread_attr_setstacksize(&a, 1u << 20);
	pthread_attr_setguardsize(&a, 4096);
	int rc = pthread_create(t, &a, fn, arg);
	pthread_attr_destroy(&a);
	return rc;
}
