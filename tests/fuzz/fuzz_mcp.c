/* fuzz_mcp.c - the MCP message handler: JSON-RPC text through mcp_parse
 * and the dispatcher (initialize, tools/list, tools/call, resources,
 * prompts, completion, notifications, the stateless 2026-07-28 form), as
 * the stdio and HTTP transports hand it over.
 *
 * Each input is up to 8 messages, one a line, sent in order through one
 * fresh session (so initialize, then calls, is reachable).  tools/call
 * runs the tool in-process (the test builds' no_sandbox: no worker is
 * forked), reading under an allowed root that holds a small folded profile
 * ($TMPDIR/perflens-fuzz-mcp-in/p.folded, the same path in every process
 * so that its analysis id is too; "@IN@" in a message stands for that
 * folder) and writing under a private artifact root, emptied for each
 * input; collection and process execution stay off.  The kallsyms file is
 * named, so analyze_profile does not copy /proc/kallsyms (5 MB) into the
 * emptied root on every call (it is read only for perf.data, which no
 * allowed input is): that copy was 80% of this harness's time.
 */
// fuzz-link: mcp-server
// fuzz-libs: -lpthread
#include "fuzz.h"
#include "mcp-server/server.h"
#include "base/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_MESSAGES 8

static struct mcp_server server;
static char in_dir[512], root[512];
static const char *roots[1];

static void drop(void *opaque, json_t *msg)
{
	char *text = json_dumps(msg, JSON_COMPACT);

	/* Every answer must be encodable: a transport sends it as text. */
	if (!text) {
		fprintf(stderr, "fuzz: an answer cannot be encoded\n");
		abort();
	}
	(*(size_t *)opaque)++;
	if (getenv("FUZZ_VERBOSE"))
		fprintf(stderr, "%.300s\n", text);
	free(text);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	static const char profile[] = "main;work;leaf 5\nmain;idle 2\nmain;work 1\n";
	struct mcp_config cfg = {0};

	const char *tmp = getenv("TMPDIR");
	char path[600], part[640];
	FILE *f;

	(void)argc; (void)argv;
	snprintf(in_dir, sizeof(in_dir), "%s/perflens-fuzz-mcp-in", tmp && *tmp ? tmp : "/tmp");
	mkdir(in_dir, 0755);
	snprintf(path, sizeof(path), "%s/p.folded", in_dir);
	snprintf(part, sizeof(part), "%s.%d", path, (int)getpid());
	/* Several fuzzers may start at once: write aside, then rename. */
	if (!(f = fopen(part, "w")) || fwrite(profile, 1, sizeof(profile) - 1, f) != sizeof(profile) - 1 ||
	    fclose(f) != 0 || rename(part, path) != 0) {
		perror(path);
		abort();
	}
	snprintf(root, sizeof(root), "%s/root", fuzz_dir());
	roots[0] = in_dir;
	cfg.ctx.allowed_roots = roots;
	cfg.ctx.nroots = 1;
	cfg.ctx.artifact_root = root;
	cfg.ctx.allow_writes = true;
	cfg.ctx.perf.kallsyms_path = "/proc/kallsyms";
	pl_limits_default(&cfg.ctx.limits);
	cfg.ctx.limits.max_input_bytes = 1u << 20;
	cfg.tool_timeout_ms = 10000;
	cfg.no_sandbox = true;
	cfg.max_result_bytes = 1u << 20;
	mcp_server_init(&server, &cfg);
	return 0;
}

/* The message at `s` with every "@IN@" replaced by the input folder. */
static void expand(struct pl_buf *b, const char *s, size_t n)
{
	const char *at;

	pl_buf_reset(b);
	while ((at = memmem(s, n, "@IN@", 4))) {
		pl_buf_add(b, s, (size_t)(at - s));
		pl_buf_adds(b, in_dir);
		n -= (size_t)(at - s) + 4;
		s = at + 4;
	}
	pl_buf_add(b, s, n);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *s = (const char *)data, *end = s + size;
	struct mcp_session sess;
	size_t answers = 0;
	struct mcp_sink sink = {drop, &answers};
	struct pl_buf msg = {0};

	if (!server.cfg.ctx.artifact_root)
		LLVMFuzzerInitialize(NULL, NULL);
	fuzz_clean("root");
	memset(&sess, 0, sizeof(sess));
	for (int i = 0; i < MAX_MESSAGES && s < end; i++) {
		const char *nl = memchr(s, '\n', (size_t)(end - s));
		size_t n = nl ? (size_t)(nl - s) : (size_t)(end - s);
		struct mcp_call *c;

		expand(&msg, s, n);
		c = mcp_handle_text(&server, &sess, msg.data, msg.len, &sink);
		if (c)  /* not with no_sandbox; stop it if it ever happens */
			mcp_call_abandon(&server, c);
		s += n + 1;
	}
	pl_buf_release(&msg);
	return 0;
}
