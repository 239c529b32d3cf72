/* main.c - perflens-agent: the command line (getopt_long), the
 * environment, the signals, then one of the three modes.
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
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

/* What the command line chose besides the fields of A. */
struct cli {
	const char *bind_addr, *server, *output;
	int listen_mode, port, rounds;
};

enum {
	OPT_VERSION = 256, OPT_LISTEN, OPT_REQUIRE_PROOF, OPT_TEXT_CHUNKS, OPT_BIND, OPT_PORT, OPT_SERVER,
	OPT_OUTPUT, OPT_PERF, OPT_PID, OPT_FREQUENCY, OPT_DURATION, OPT_ROUNDS, OPT_TOKEN,
};

static const struct option long_options[] = {
	{"help", no_argument, NULL, 'h'},
	{"version", no_argument, NULL, OPT_VERSION},
	{"listen", no_argument, NULL, OPT_LISTEN},
	{"require-proof", no_argument, NULL, OPT_REQUIRE_PROOF},
	{"text-chunks", no_argument, NULL, OPT_TEXT_CHUNKS},
	{"bind", required_argument, NULL, OPT_BIND},
	{"port", required_argument, NULL, OPT_PORT},
	{"server", required_argument, NULL, OPT_SERVER},
	{"output", required_argument, NULL, OPT_OUTPUT},
	{"perf", required_argument, NULL, OPT_PERF},
	{"pid", required_argument, NULL, OPT_PID},
	{"frequency", required_argument, NULL, OPT_FREQUENCY},
	{"duration", required_argument, NULL, OPT_DURATION},
	{"rounds", required_argument, NULL, OPT_ROUNDS},
	{"token", required_argument, NULL, OPT_TOKEN},
	{NULL, 0, NULL, 0},
};

static void set_token(const char *code)
{
	snprintf(A.token, sizeof A.token, "%s", code);
	A.token_len = strlen(A.token);
	A.has_token = A.token_len > 0;
}

/* One option with its value `v` (NULL for a flag): 0, or the exit code
 * (-1: --help or --version printed, exit 0). */
static int apply_option(int opt, char *v, struct cli *c)
{
	switch (opt) {
	case 'h':
		fputs(USAGE, stdout);
		return -1;
	case OPT_VERSION:
		printf("perflens-agent %s\n", AGENT_VERSION);
		return -1;
	case OPT_LISTEN: c->listen_mode = 1; return 0;
	case OPT_REQUIRE_PROOF: A.require_proof = 1; return 0;
	case OPT_TEXT_CHUNKS: A.text_chunks = 1; return 0;
	case OPT_BIND: c->bind_addr = v; return 0;
	case OPT_SERVER: c->server = v; return 0;
	case OPT_OUTPUT: c->output = v; return 0;
	case OPT_PERF: snprintf(A.perf, sizeof A.perf, "%s", v); return 0;
	case OPT_PORT:
		return parse_int(v, 0, 65535, &c->port) < 0 ? usage_error("--port '%s' is not a port (0..65535)", v) : 0;
	case OPT_PID:
		return parse_int(v, 1, 0x7fffffff, &A.pid) < 0 ? usage_error("--pid '%s' is not a pid", v) : 0;
	case OPT_FREQUENCY:
		return parse_int(v, 1, 1000000, &A.frequency) < 0 ?
			usage_error("--frequency '%s' is not a frequency in Hz", v) : 0;
	case OPT_DURATION:
		return parse_int(v, 1, 300, &A.duration) < 0 ? usage_error("--duration '%s' is not 1..300 seconds", v) : 0;
	case OPT_ROUNDS:
		return parse_int(v, 1, 1000000, &c->rounds) < 0 ? usage_error("--rounds '%s' is not a positive count", v) : 0;
	case OPT_TOKEN:
		set_token(v);
		memset(v, 'x', strlen(v));  /* out of ps */
		return 0;
	}
	return usage_error("%s", "unknown option");
}

/* The command line into A and `c`: 0, or the exit code (-1: exit 0).
 * getopt_long takes --name VALUE and --name=VALUE; it prints nothing
 * itself (opterr 0): the errors are ours, naming the option. */
static int parse_command_line(int argc, char **argv, struct cli *c)
{
	int opt, rc;

	opterr = 0;
	while ((opt = getopt_long(argc, argv, "+h", long_options, NULL)) != -1) {
		if (opt == '?') {
			if (optopt >= OPT_VERSION && optopt <= OPT_TOKEN)
				return usage_error("%s needs a value", argv[optind - 1]);
			if (optopt)
				return usage_error("unknown option '-%c'", optopt);
			return usage_error("unknown option '%s'", argv[optind - 1]);
		}
		if ((rc = apply_option(opt, optarg, c)))
			return rc;
	}
	if (optind < argc)
		return usage_error("unknown argument '%s'", argv[optind]);
	return 0;
}

/* The environment's settings, after the command line: 0 or exit code 2. */
static int read_environment(void)
{
	const char *env;
	int test_bytes;

	if ((env = getenv("PERFLENS_PERF")) && *env && !strcmp(A.perf, "perf"))
		snprintf(A.perf, sizeof A.perf, "%s", env);
	if (!A.has_token && (env = getenv("PERFLENS_TOKEN")) && *env)
		set_token(env);
	if ((env = getenv("PERFLENS_SEND_TIMEOUT_MS")) && *env &&
	    parse_int(env, 100, 3600000, &A.send_timeout_ms) < 0)
		return usage_error("PERFLENS_SEND_TIMEOUT_MS '%s' is not 100..3600000", env);
	/* Test knobs (tests/integration/test_agent.sh): a smaller chunk cut,
	 * rounds mode although the pipeline works.  Not in --help. */
	if ((env = getenv("PERFLENS_TEST_CHUNK_BYTES")) && parse_int(env, 4096, (int)CHUNK_RAW_MAX, &test_bytes) == 0)
		A.chunk_raw_max = (size_t)test_bytes;
	A.force_rounds = (env = getenv("PERFLENS_TEST_ROUNDS")) && !strcmp(env, "1");
	return 0;
}

/* SIGPIPE ignored (a dead link is an error return), SIGINT and SIGTERM
 * end the agent; A.cv waits on the monotonic clock. */
static void install_signals_and_clock(void)
{
	struct sigaction sa = {.sa_handler = SIG_IGN};
	pthread_condattr_t ca;

	sigaction(SIGPIPE, &sa, NULL);
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);  /* boards boot in 1970 and step the clock */
	pthread_cond_init(&A.cv, &ca);
}

/* --server HOST[:PORT]: dial and redial until told to stop. */
static int run_dial(const char *server, int port)
{
	char host[256], *colon;
	int rc;

	snprintf(host, sizeof host, "%s", server);
	if ((colon = strrchr(host, ':'))) {
		*colon = '\0';
		if (parse_int(colon + 1, 1, 65535, &port) < 0)
			return usage_error("--server port '%s' is not 1..65535", colon + 1);
	}
	if (!A.has_token)
		agent_log("no pairing code (--token or PERFLENS_TOKEN): only a seed server without "
			  "one will take this agent; a PerfLens server needs one");
	rc = serve_dial(host, port);
	capture_stop();  /* perf runs in its own process groups: end it before exiting */
	return rc;
}

/* --listen: wait for servers on ADDR:PORT until told to stop. */
static int run_listen(const char *bind_addr, int port)
{
	int rc;

	if (!A.has_token && generate_code() < 0)
		return 1;
	rc = serve_listen(bind_addr, port);
	capture_stop();
	return rc;
}

int main(int argc, char **argv)
{
	struct cli c = {.bind_addr = "0.0.0.0", .port = DEFAULT_PORT, .rounds = 1};
	int rc;

	agent_defaults();
	if ((rc = parse_command_line(argc, argv, &c)))
		return rc < 0 ? 0 : rc;
	if ((rc = read_environment()))
		return rc;
	if (!!c.listen_mode + !!c.server + !!c.output != 1)
		return usage_error("%s", "give exactly one of --listen, --server HOST or --output FILE");
	if (A.perf[0] != '/' && strchr(A.perf, '/'))
		return usage_error("--perf '%s' must be absolute or a bare name on PATH", A.perf);
	install_signals_and_clock();
	platform_detect();
	if (c.output)
		return headless(c.output, c.rounds);
	A.listen_mode = c.listen_mode;
	perf_caps_detect(&A.pcaps);  /* reported by status at pairing, before any capture */
	return c.listen_mode ? run_listen(c.bind_addr, c.port) : run_dial(c.server, c.port);
}
