/* fuzz_http.c - the Streamable HTTP request path: raw bytes on a TCP
 * connection to the real transport (mcp-server/http.c over libmicrohttpd,
 * a thread per connection), so request lines, methods, headers (Host,
 * Origin, Authorization, MCP-Protocol-Version, Mcp-Session-Id, Accept),
 * chunked and sized bodies, and the JSON-RPC messages in them all come
 * from the input.
 *
 * LLVMFuzzerInitialize starts mcp_run_http on 127.0.0.1 at a free port in
 * a thread of its own (bearer token "t", a 64 KiB body cap, 4 sessions;
 * tools run in-process, no_sandbox, under private roots).  Each input is
 * written to a new connection whose sending side is then shut, and the
 * answer is read until the server closes it (at most 5 s).  The server's
 * own threads are covered too: coverage is per process.  libmicrohttpd is
 * not instrumented.
 */
// fuzz-link: mcp-server
// fuzz-libs: -lpthread
// fuzz-flags: -timeout=20
#include "fuzz.h"
#include "mcp-server/transports.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static struct mcp_server server;
static struct mcp_http_opts opts;
static struct sockaddr_in addr;
static char root[512], in_dir[512];
static const char *roots[1];

static void *serve(void *arg)
{
	(void)arg;
	mcp_run_http(&server, &opts);
	return NULL;
}

static unsigned free_port(void)
{
	struct sockaddr_in a = {.sin_family = AF_INET};
	socklen_t len = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0 ||
	    getsockname(fd, (struct sockaddr *)&a, &len) < 0) {
		perror("fuzz: free port");
		abort();
	}
	close(fd);
	return ntohs(a.sin_port);
}

/* A connection to the server.  The harness makes thousands a second and
 * half-closes each one first, so each ends in TIME_WAIT on this side for
 * a minute, holding one of the ~28,000 ephemeral ports of its source
 * address: CI's run ran out of them after 35,257 inputs (a kernel that
 * does not reuse loopback TIME_WAIT ports answers connect() with
 * EADDRNOTAVAIL).  So each connection comes from the next of 65,024
 * loopback source addresses (127.1.0.1 up; the port is chosen at
 * connect, IP_BIND_ADDRESS_NO_PORT), and a connect that still finds no
 * port waits and tries again. */
static int dial(void)
{
	static unsigned next_source;

	for (int attempt = 0; attempt < 200; attempt++) {
		unsigned n = next_source++ % 65024;
		struct sockaddr_in from = {.sin_family = AF_INET};
		int one = 1;
		int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

		from.sin_addr.s_addr = htonl(0x7f010000u | ((n / 254) << 8) | (n % 254 + 1));
		if (fd >= 0 && setsockopt(fd, IPPROTO_IP, IP_BIND_ADDRESS_NO_PORT, &one, sizeof(one)) == 0 &&
		    bind(fd, (struct sockaddr *)&from, sizeof(from)) == 0 &&
		    connect(fd, (struct sockaddr *)&addr, sizeof(addr)) == 0)
			return fd;
		if (fd >= 0)
			close(fd);
		if (errno != EADDRNOTAVAIL && errno != EAGAIN && errno != EINTR)
			break;
		usleep(50000);
	}
	return -1;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	struct mcp_config cfg = {0};
	pthread_t t;
	int fd = -1;

	(void)argc; (void)argv;
	signal(SIGPIPE, SIG_IGN);
	snprintf(root, sizeof(root), "%s/root", fuzz_dir());
	snprintf(in_dir, sizeof(in_dir), "%s/in", fuzz_dir());
	fuzz_file("in/p.folded", "main;work 3\n", 12);
	roots[0] = in_dir;
	cfg.ctx.allowed_roots = roots;
	cfg.ctx.nroots = 1;
	cfg.ctx.artifact_root = root;
	cfg.ctx.allow_writes = true;
	pl_limits_default(&cfg.ctx.limits);
	cfg.tool_timeout_ms = 10000;
	cfg.no_sandbox = true;
	cfg.max_result_bytes = 1u << 20;
	mcp_server_init(&server, &cfg);
	opts.bind_addr = "127.0.0.1";
	opts.port = free_port();
	opts.token = "t";
	opts.max_body = 64u << 10;
	opts.max_sessions = 4;
	addr.sin_family = AF_INET;
	addr.sin_port = htons((uint16_t)opts.port);
	addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (pthread_create(&t, NULL, serve, NULL) != 0)
		abort();
	pthread_detach(t);
	for (int i = 0; i < 500 && (fd = dial()) < 0; i++)
		usleep(10000);
	if (fd < 0) {
		fprintf(stderr, "fuzz: the HTTP transport did not start on port %u\n", opts.port);
		abort();
	}
	close(fd);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct timespec start, now;
	char buf[4096];
	size_t sent = 0;
	int fd;

	if (!opts.port)
		LLVMFuzzerInitialize(NULL, NULL);
	if ((fd = dial()) < 0) {
		/* the server stopped accepting: a defect */
		fprintf(stderr, "fuzz: cannot connect to the HTTP transport: %s\n", strerror(errno));
		abort();
	}
	while (sent < size) {
		ssize_t n = send(fd, data + sent, size - sent, MSG_NOSIGNAL);

		if (n <= 0)
			break;   /* the server answered and closed early: fine */
		sent += (size_t)n;
	}
	shutdown(fd, SHUT_WR);
	clock_gettime(CLOCK_MONOTONIC, &start);
	for (;;) {
		struct pollfd p = {fd, POLLIN, 0};
		ssize_t n;

		clock_gettime(CLOCK_MONOTONIC, &now);
		if (now.tv_sec - start.tv_sec >= 5)
			break;
		if (poll(&p, 1, 1000) <= 0)
			continue;
		if ((n = recv(fd, buf, sizeof(buf), 0)) <= 0)
			break;
	}
	close(fd);
	return 0;
}
