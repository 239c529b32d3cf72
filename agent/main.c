/* main.c - perflens-agent: the command line, logging and clocks.
 *
 * Three modes: --listen (a server connects in with the pairing code),
 * --server HOST[:PORT] (the agent dials out and reconnects with backoff)
 * and --output FILE|- (headless rounds to a file, no network).  A
 * pairing code comes from --token or PERFLENS_TOKEN, or in --listen mode
 * is generated from /dev/urandom and printed once per session on stderr
 * ("Pairing code: ..."); it is never logged otherwise.  A --token value
 * is wiped from argv after it is read, so `ps` does not show it. */
#include "agent.h"
#include "collectors/health.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* Zero-initialized (bss, not a 3 KB block of the file); the defaults are
 * set at the top of main(). */
struct agent A = {
	.mu = PTHREAD_MUTEX_INITIALIZER,
	.send_mu = PTHREAD_MUTEX_INITIALIZER,
};

static void defaults(void)
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

static void on_signal(int sig)
{
	(void)sig;
	agent_quit = 1;
}

static const char USAGE[] =
	"usage: perflens-agent --listen [--bind ADDR] [--port PORT] [options]\n"
	"       perflens-agent --server HOST[:PORT] [options]\n"
	"       perflens-agent --output FILE|- --pid PID [options]\n"
	"\n"
	"The PerfLens device agent: runs perf on this machine and streams zstd-compressed\n"
	"perf script text and health metrics to a PerfLens server (the seed's protocol,\n"
	"with the extensions of docs/agent-protocol.md).\n"
	"\n"
	"Modes:\n"
	"  --listen            wait for a server to connect (default port 9999); a pairing\n"
	"                      code is generated and printed on stderr unless --token or\n"
	"                      PERFLENS_TOKEN gives one\n"
	"  --bind ADDR         IPv4 address to listen on (default 0.0.0.0)\n"
	"  --port PORT         port to listen on or dial (default 9999)\n"
	"  --server HOST[:PORT] dial a server and reconnect with backoff (1 s to 30 s,\n"
	"                      reset only after an authenticated session)\n"
	"  --output FILE|-     headless: --rounds rounds of perf script text to FILE\n"
	"Options:\n"
	"  --token CODE        the pairing code (prefer PERFLENS_TOKEN: argv is public)\n"
	"  --require-proof     refuse a server that sends the code in clear (seed servers)\n"
	"  --text-chunks       send perf script text even to a server that reads perf.data\n"
	"                      instead of proving it (hmac-sha256-v1)\n"
	"  --perf PATH         perf to run (absolute or a name on PATH; PERFLENS_PERF)\n"
	"  --pid PID           the process to profile\n"
	"  --frequency HZ      sampling frequency (default 99)\n"
	"  --duration S        chunk interval / round length in seconds (default 8)\n"
	"  --rounds N          headless rounds (default 1)\n"
	"  --version, --help\n"
	"Environment: PERFLENS_TOKEN, PERFLENS_PERF, PERFLENS_SEND_TIMEOUT_MS (send bound,\n"
	"default 60000).\n"
	"\n"
	"Static binary: no NSS is needed and no DNS is done. Give the server as a numeric\n"
	"IPv4 address, or a name in /etc/hosts. This agent never updates itself from the\n"
	"network: updates are the operator's (replace the binary and restart it).\n";

static int parse_int(const char *s, int lo, int hi, int *out)
{
	char *end;
	errno = 0;
	long v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < lo || v > hi)
		return -1;
	*out = (int)v;
	return 0;
}

static int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int usage_error(const char *fmt, ...)
{
	va_list ap;
	fprintf(stderr, "perflens-agent: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n(see perflens-agent --help)\n");
	return 2;
}

static int generate_code(void)
{
	uint8_t b[16];
	if (random_bytes(b, sizeof b) < 0) {
		agent_log("cannot read /dev/urandom to generate a pairing code: refusing to run");
		return -1;
	}
	hex_encode(b, sizeof b, A.token);
	A.token_len = 32;
	A.has_token = 1;
	A.token_generated = 1;
	return 0;
}

/* --output: probe, then N rounds of raw text with their PERF_STAT sections. */
static int headless(const char *output, int rounds)
{
	uint64_t start;
	if (A.pid <= 0) {
		agent_log("--output needs --pid");
		return 2;
	}
	if (coll_proc_stat_identity(A.pid, &start, NULL, 0, NULL) < 0) {
		agent_log("process %d not found", A.pid);
		return 1;
	}
	A.pid_start = start;
	if (probe_caps(A.pid, &A.caps) < 0) {
		agent_log("no perf record events available for PID %d", A.pid);
		return 1;
	}
	A.caps.start_time = start;
	perf_default_events(&A.caps, A.events, &A.n_events);
	A.continuous = 0;
	return headless_run(output, rounds);
}

int main(int argc, char **argv)
{
	const char *bind_addr = "0.0.0.0", *server = NULL, *output = NULL;
	int listen_mode = 0, port = DEFAULT_PORT, rounds = 1;
	const char *env;
	defaults();
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;
#define NEED_VALUE()                                                       \
	do {                                                               \
		if (!v)                                                    \
			return usage_error("%s needs a value", a);         \
		i++;                                                       \
	} while (0)
		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			fputs(USAGE, stdout);
			return 0;
		} else if (!strcmp(a, "--version")) {
			printf("perflens-agent %s\n", AGENT_VERSION);
			return 0;
		} else if (!strcmp(a, "--listen")) {
			listen_mode = 1;
		} else if (!strcmp(a, "--require-proof")) {
			A.require_proof = 1;
		} else if (!strcmp(a, "--text-chunks")) {
			A.text_chunks = 1;
		} else if (!strcmp(a, "--bind")) {
			NEED_VALUE();
			bind_addr = v;
		} else if (!strcmp(a, "--port")) {
			NEED_VALUE();
			if (parse_int(v, 0, 65535, &port) < 0)
				return usage_error("--port '%s' is not a port (0..65535)", v);
		} else if (!strcmp(a, "--server")) {
			NEED_VALUE();
			server = v;
		} else if (!strcmp(a, "--output")) {
			NEED_VALUE();
			output = v;
		} else if (!strcmp(a, "--perf")) {
			NEED_VALUE();
			snprintf(A.perf, sizeof A.perf, "%s", v);
		} else if (!strcmp(a, "--pid")) {
			NEED_VALUE();
			if (parse_int(v, 1, 0x7fffffff, &A.pid) < 0)
				return usage_error("--pid '%s' is not a pid", v);
		} else if (!strcmp(a, "--frequency")) {
			NEED_VALUE();
			if (parse_int(v, 1, 1000000, &A.frequency) < 0)
				return usage_error("--frequency '%s' is not a frequency in Hz", v);
		} else if (!strcmp(a, "--duration")) {
			NEED_VALUE();
			if (parse_int(v, 1, 300, &A.duration) < 0)
				return usage_error("--duration '%s' is not 1..300 seconds", v);
		} else if (!strcmp(a, "--rounds")) {
			NEED_VALUE();
			if (parse_int(v, 1, 1000000, &rounds) < 0)
				return usage_error("--rounds '%s' is not a positive count", v);
		} else if (!strcmp(a, "--token")) {
			NEED_VALUE();
			snprintf(A.token, sizeof A.token, "%s", v);
			A.token_len = strlen(A.token);
			A.has_token = A.token_len > 0;
			memset(argv[i], 'x', strlen(argv[i]));  /* out of ps */
		} else {
			return usage_error("unknown option '%s'", a);
		}
	}
	if ((env = getenv("PERFLENS_PERF")) && *env && !strcmp(A.perf, "perf"))
		snprintf(A.perf, sizeof A.perf, "%s", env);
	if (!A.has_token && (env = getenv("PERFLENS_TOKEN")) && *env) {
		snprintf(A.token, sizeof A.token, "%s", env);
		A.token_len = strlen(A.token);
		A.has_token = 1;
	}
	if ((env = getenv("PERFLENS_SEND_TIMEOUT_MS")) && *env &&
	    parse_int(env, 100, 3600000, &A.send_timeout_ms) < 0)
		return usage_error("PERFLENS_SEND_TIMEOUT_MS '%s' is not 100..3600000", env);
	/* Test knobs (tests/integration/test_agent.sh): a smaller chunk cut,
	 * rounds mode although the pipeline works.  Not in --help. */
	int test_bytes;
	if ((env = getenv("PERFLENS_TEST_CHUNK_BYTES")) && parse_int(env, 4096, (int)CHUNK_RAW_MAX, &test_bytes) == 0)
		A.chunk_raw_max = (size_t)test_bytes;
	A.force_rounds = (env = getenv("PERFLENS_TEST_ROUNDS")) && !strcmp(env, "1");
	if (!!listen_mode + !!server + !!output != 1)
		return usage_error("%s", "give exactly one of --listen, --server HOST or --output FILE");
	if (A.perf[0] != '/' && strchr(A.perf, '/'))
		return usage_error("--perf '%s' must be absolute or a bare name on PATH", A.perf);

	struct sigaction sa = {.sa_handler = SIG_IGN};
	sigaction(SIGPIPE, &sa, NULL);
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);  /* boards boot in 1970 and step the clock */
	pthread_cond_init(&A.cv, &ca);

	platform_detect();
	if (output)
		return headless(output, rounds);
	A.listen_mode = listen_mode;
	perf_caps_detect(&A.pcaps);  /* reported by status at pairing, before any capture */
	if (listen_mode) {
		if (!A.has_token && generate_code() < 0)
			return 1;
		int rc = serve_listen(bind_addr, port);
		capture_stop();  /* perf runs in its own process groups: end it before exiting */
		return rc;
	}
	char host[256];
	snprintf(host, sizeof host, "%s", server);
	char *colon = strrchr(host, ':');
	if (colon) {
		*colon = '\0';
		if (parse_int(colon + 1, 1, 65535, &port) < 0)
			return usage_error("--server port '%s' is not 1..65535", colon + 1);
	}
	if (!A.has_token)
		agent_log("no pairing code (--token or PERFLENS_TOKEN): only a seed server without "
			  "one will take this agent; a PerfLens server needs one");
	int rc = serve_dial(host, port);
	capture_stop();
	return rc;
}
