/* fork_answer.c - the floor under a small MCP call over stdio: a bare
 * server that answers each request line from a forked child.
 *
 * It reads one JSON-RPC request per line on stdin, as perflens-mcp does;
 * for each it forks a child that writes a fixed, small result with the
 * request's id to a pipe and exits; the parent reads that answer, reaps
 * the child and writes the answer line on stdout.  The parent holds
 * HEAP_MB of written heap (about a perflens zygote's), so the fork copies
 * page tables of that size.  No JSON parsing, no sandbox, no tool, no
 * spare child forked ahead: what is left of a forked-worker call when
 * everything the call does is taken away.  bench/mcp_small.py times it
 * in the same rounds as the servers it compares.
 *
 *   fork_answer [HEAP_MB]        (default 8)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* The request's "id" value (a number or a string without quotes inside),
 * copied into `out`; "null" when it has none. */
static void request_id(const char *line, char *out, size_t cap)
{
	const char *p = strstr(line, "\"id\":");
	size_t n = 0;

	if (!p) {
		snprintf(out, cap, "null");
		return;
	}
	p += 5;
	while (*p == ' ')
		p++;
	while (p[n] && p[n] != ',' && p[n] != '}' && p[n] != '\n' && n + 1 < cap)
		n++;
	memcpy(out, p, n);
	out[n] = '\0';
}

/* One answer from a forked child; 0 on success. */
static int answer(const char *id)
{
	char buf[512];
	int fds[2], len;
	ssize_t got = 0, r;
	pid_t pid;

	if (pipe(fds) < 0)
		return -1;
	pid = fork();
	if (pid == 0) {
		close(fds[0]);
		len = snprintf(buf, sizeof(buf),
			       "{\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{\"content\":[],"
			       "\"structuredContent\":{},\"isError\":false}}\n", id);
		_exit(write(fds[1], buf, (size_t)len) == len ? 0 : 1);
	}
	close(fds[1]);
	if (pid < 0) {
		close(fds[0]);
		return -1;
	}
	while ((r = read(fds[0], buf + got, sizeof(buf) - 1 - (size_t)got)) > 0)
		got += r;
	close(fds[0]);
	if (waitpid(pid, NULL, 0) != pid || got <= 0)
		return -1;
	return fwrite(buf, 1, (size_t)got, stdout) == (size_t)got && fflush(stdout) == 0 ? 0 : -1;
}

int main(int argc, char **argv)
{
	size_t heap_mb = argc > 1 ? strtoul(argv[1], NULL, 10) : 8;
	char *heap = malloc((heap_mb ? heap_mb : 1) << 20);
	char *line = NULL, id[128];
	size_t cap = 0;

	if (!heap)
		return 2;
	memset(heap, 1, (heap_mb ? heap_mb : 1) << 20);
	while (getline(&line, &cap, stdin) > 0) {
		if (!strstr(line, "\"id\":"))
			continue;  /* a notification: no answer */
		request_id(line, id, sizeof(id));
		if (answer(id) < 0)
			return 1;
	}
	free(line);
	free(heap);
	return 0;
}
