/* stdio.c - the stdio transport: one JSON-RPC message per line on stdin
 * and stdout, logs only on stderr.
 *
 * A single-threaded poll() loop watches stdin and every running tool
 * worker, so pings, cancellations and other requests are answered while a
 * tool runs.  A line longer than the cap is discarded up to its newline
 * and answered with an error; the server keeps serving.  At end of input
 * the running calls are still answered for EOF_GRACE_MS (printf '...' |
 * perflens-mcp gets its results); those still running then are cancelled,
 * so a client that closes stdin to stop the server is not kept waiting
 * by a long call; then the loop ends.
 */
#include "transports.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define READ_CHUNK 65536
#define EOF_GRACE_MS 10000
#define MAX_CALLS 64

struct stdio_state {
	struct mcp_server *s;
	struct mcp_session sess;
	struct mcp_sink sink;
	struct mcp_call *calls[MAX_CALLS];
	size_t ncalls;
	char *buf;
	size_t len, cap;
	bool discarding;       /* inside an over-long line */
	size_t max_line;
};

/* Write one message, `n` bytes of compact JSON, as one line; stdout
 * belongs to the protocol. */
static void stdio_send_text(void *opaque, const char *text, size_t n)
{
	size_t off = 0;

	(void)opaque;
	while (off < n) {
		ssize_t w = write(STDOUT_FILENO, text + off, n - off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			break;
		off += (size_t)w;
	}
	while (write(STDOUT_FILENO, "\n", 1) < 0 && errno == EINTR)
		;
}

static void stdio_send(void *opaque, json_t *msg)
{
	char *text = json_dumps(msg, JSON_COMPACT | JSON_REAL_PRECISION(10));

	stdio_send_text(opaque, text, strlen(text));
	free(text);
}

static void handle_line(struct stdio_state *st, const char *line, size_t n)
{
	struct mcp_call *c;

	while (n > 0 && (line[n - 1] == '\r' || line[n - 1] == ' '))
		n--;
	if (n == 0)
		return;
	c = mcp_handle_text(st->s, &st->sess, line, n, &st->sink);
	if (!c)
		return;
	if (st->ncalls == MAX_CALLS) {
		/* Too many at once: finish this one before reading on. */
		mcp_call_wait(st->s, c);
		return;
	}
	st->calls[st->ncalls++] = c;
}

static void too_long(struct stdio_state *st)
{
	char msg[96];

	snprintf(msg, sizeof(msg), "message longer than %zu bytes was discarded", st->max_line);
	mcp_send_error(&st->sink, NULL, MCP_RPC_INVALID_REQUEST, msg,
		       json_pack("{s:s}", "hint", "send smaller messages; arguments are paths and ids, not data"));
}

/* Split what was read into lines; keep the partial last one. */
static void consume(struct stdio_state *st)
{
	size_t start = 0;

	for (;;) {
		char *nl = memchr(st->buf + start, '\n', st->len - start);
		if (!nl)
			break;
		if (st->discarding)
			st->discarding = false;
		else
			handle_line(st, st->buf + start, (size_t)(nl - st->buf) - start);
		start = (size_t)(nl - st->buf) + 1;
	}
	memmove(st->buf, st->buf + start, st->len - start);
	st->len -= start;
	if (st->len > st->max_line) {
		if (!st->discarding)
			too_long(st);
		st->discarding = true;
		st->len = 0;
	}
}

static void step_calls(struct stdio_state *st)
{
	for (size_t i = 0; i < st->ncalls;) {
		if (mcp_call_step(st->s, st->calls[i])) {
			st->calls[i] = st->calls[--st->ncalls];
			continue;
		}
		i++;
	}
}

static int poll_timeout(const struct stdio_state *st)
{
	int t = -1;

	for (size_t i = 0; i < st->ncalls; i++) {
		int c = mcp_call_timeout_ms(st->calls[i]);
		if (c >= 0 && (t < 0 || c < t))
			t = c;
	}
	/* Wake now and then while workers run, to reap any that died. */
	if (st->ncalls && (t < 0 || t > 200))
		t = 200;
	return t;
}

static long long mono_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (long long)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

int mcp_run_stdio(struct mcp_server *s, size_t max_line)
{
	struct stdio_state st;
	bool eof = false, abandoned = false;
	long long eof_at = 0;

	memset(&st, 0, sizeof(st));
	st.s = s;
	st.sink.send = stdio_send;
	st.sink.send_text = stdio_send_text;
	st.sink.opaque = &st;
	st.max_line = max_line;
	st.cap = READ_CHUNK * 2;
	st.buf = pl_xmalloc(st.cap);
	while (!eof || st.ncalls) {
		struct pollfd pfds[MAX_CALLS + 1];
		size_t n = 0;
		if (!eof)
			pfds[n++] = (struct pollfd){STDIN_FILENO, POLLIN, 0};
		for (size_t i = 0; i < st.ncalls; i++)
			pfds[n++] = (struct pollfd){mcp_call_fd(st.calls[i]), POLLIN, 0};
		if (poll(pfds, (nfds_t)n, poll_timeout(&st)) < 0 && errno != EINTR)
			break;
		if (!eof && pfds[0].revents) {
			ssize_t r;
			PL_GROW(st.buf, st.cap, st.len + READ_CHUNK);
			r = read(STDIN_FILENO, st.buf + st.len, READ_CHUNK);
			/* End of input: the calls already asked for are still
			 * answered (printf '...' | perflens-mcp gets its
			 * results), each within its own deadline; then the
			 * loop ends. */
			if (r <= 0 && !(r < 0 && errno == EINTR)) {
				eof = true;
				eof_at = mono_ms();
			} else if (r > 0) {
				st.len += (size_t)r;
				consume(&st);
			}
		}
		if (eof && !abandoned && st.ncalls && mono_ms() - eof_at > EOF_GRACE_MS) {
			abandoned = true;
			for (size_t i = 0; i < st.ncalls; i++)
				mcp_call_abandon(s, st.calls[i]);
		}
		step_calls(&st);
	}
	free(st.buf);
	return 0;
}
