/* server.h - the MCP protocol layer of perflens-mcp, independent of the
 * transport.
 *
 * A transport hands each decoded JSON-RPC message to mcp_handle() with the
 * session it belongs to and a sink for what goes back (responses and
 * notifications).  Everything except tools/call is answered at once;
 * tools/call starts a sandboxed worker and returns a pending call that the
 * transport drives with mcp_call_fd()/mcp_call_step() until it completes,
 * so requests (pings, cancellations) keep flowing while a tool runs.  The
 * protocol layer holds no tool logic: it looks tools up in the registry.
 *
 * Protocol versions: 2025-03-26, 2025-06-18 and 2025-11-25 (initialize,
 * then notifications/initialized) and 2026-07-28 (stateless: version and
 * client capabilities in each request's _meta, server/discover).  A
 * 2025-03-26 session gets what that version defines: no structuredContent
 * in tool results, no tool title or outputSchema, no serverInfo title
 * (JSON-RPC batches, which it also allowed, are still refused).
 */
#ifndef MCP_SERVER_H
#define MCP_SERVER_H

#include <pthread.h>
#include <stdbool.h>

#include <jansson.h>

#include "tools/registry.h"

#define MCP_LATEST_LEGACY "2025-11-25"
#define MCP_STATELESS_VERSION "2026-07-28"
#define MCP_VERSION_2025_03_26 "2025-03-26"

/* The deepest nesting of arrays and objects a message may have. */
#define MCP_MAX_DEPTH 64

/* JSON-RPC error codes: the protocol's own (-32700...-32600) and the
 * server-defined ones MCP uses (-32000...-32099). */
enum mcp_rpc_code {
	MCP_RPC_PARSE_ERROR = -32700,
	MCP_RPC_INVALID_REQUEST = -32600,
	MCP_RPC_METHOD_NOT_FOUND = -32601,
	MCP_RPC_INVALID_PARAMS = -32602,
	MCP_RPC_INTERNAL_ERROR = -32603,
	MCP_RPC_SESSION_NOT_FOUND = -32001,  /* HTTP: unknown or expired Mcp-Session-Id */
	MCP_RPC_RESOURCE_NOT_FOUND = -32002,
	MCP_RPC_UNSUPPORTED_VERSION = -32004,
};

enum mcp_log_level {
	MCP_LOG_DEBUG = 0, MCP_LOG_INFO, MCP_LOG_NOTICE, MCP_LOG_WARNING,
	MCP_LOG_ERROR, MCP_LOG_CRITICAL, MCP_LOG_ALERT, MCP_LOG_EMERGENCY
};

struct mcp_config {
	struct tool_ctx ctx;          /* roots, writes, limits */
	unsigned tool_timeout_ms;     /* wall clock per tool call */
	bool no_sandbox;              /* test builds only: run tools in-process */
	size_t max_result_bytes;      /* cap on a worker's answer */
	uint64_t worker_memory;       /* RLIMIT_AS of a worker, 0 = none */
	unsigned live_analysis_ms;    /* analyze live sessions this often, 0 = never (live_pump.h) */
};

/* Where answers go: a transport's callback, called with a message it must
 * send (borrowed).  For stdio it writes one line; for HTTP it queues the
 * message into the response being built. */
struct mcp_sink {
	void (*send)(void *opaque, json_t *msg);
	void *opaque;
	/* Optional: send one message already written as compact JSON text
	 * (`len` bytes, no newline), as send() would have written it; a
	 * sink without it gets the json_t. */
	void (*send_text)(void *opaque, const char *text, size_t len);
};

struct mcp_session {
	char id[40];                 /* Mcp-Session-Id (HTTP), "" on stdio */
	bool initialized;            /* initialize answered */
	char version[16];            /* negotiated legacy version */
	enum mcp_log_level log_level;
	bool log_level_set;
};

struct mcp_call;  /* a running tools/call */

struct mcp_server {
	struct mcp_config cfg;
	pthread_mutex_t lock;        /* guards calls (HTTP threads cancel) */
	struct mcp_call **calls;
	size_t ncalls, calls_cap;
};

void mcp_server_init(struct mcp_server *s, const struct mcp_config *cfg);
void mcp_server_release(struct mcp_server *s);

/* Handle one message (borrowed).  Returns a pending call for tools/call
 * (driven by the transport), else NULL after everything owed was sent to
 * `sink`.  Never fails: malformed input gets a JSON-RPC error. */
struct mcp_call *mcp_handle(struct mcp_server *s, struct mcp_session *sess,
			    json_t *msg, const struct mcp_sink *sink);

/* Parse a message: on a parse error, a batch or nesting deeper than
 * MCP_MAX_DEPTH levels, send the JSON-RPC error to `sink` and return NULL;
 * else a new reference. */
json_t *mcp_parse(const char *text, size_t len, const struct mcp_sink *sink);

/* Send a JSON-RPC error (data_new may be NULL; stolen). */
void mcp_send_error(const struct mcp_sink *sink, json_t *id, int code,
		    const char *message, json_t *data_new);

/* Send the response of request `id` (borrowed) with `result_new`
 * (stolen); a stateless (2026-07-28) request's result says
 * resultType "complete". */
void mcp_send_result_new(const struct mcp_sink *sink, json_t *id, bool stateless,
			 json_t *result_new);

/* The CallToolResult of a tool that failed (new): isError true, one text
 * block (pl_error_text) and, in _meta "perflens/error", the error object
 * the CLI prints (tool_error_json_new).  Not in structuredContent: clients
 * (the TypeScript SDK) check that against the tool's outputSchema even
 * for an error. */
json_t *mcp_tool_error_new(const struct pl_error *err);

/* Handle a raw message text: mcp_parse, then mcp_handle. */
struct mcp_call *mcp_handle_text(struct mcp_server *s, struct mcp_session *sess,
				 const char *text, size_t len,
				 const struct mcp_sink *sink);

/* Driving a pending call: poll mcp_call_fd() for POLLIN with
 * mcp_call_timeout_ms(); call mcp_call_step() when it is readable or the
 * timeout passed; when it returns true the response has been sent to the
 * call's sink and the call is freed. */
int mcp_call_fd(const struct mcp_call *c);
int mcp_call_timeout_ms(const struct mcp_call *c);
bool mcp_call_step(struct mcp_server *s, struct mcp_call *c);

/* Stop a call whose client is gone: no response will be sent. */
void mcp_call_abandon(struct mcp_server *s, struct mcp_call *c);

/* Block until the call completes (HTTP threads). */
void mcp_call_wait(struct mcp_server *s, struct mcp_call *c);

/* The protocol's name of a log level ("debug"...); NULL past the last. */
const char *mcp_log_level_name(enum mcp_log_level level);
/* Send notifications/message to a session when `level` passes its
 * threshold. */
void mcp_log(const struct mcp_session *sess, const struct mcp_sink *sink,
	     enum mcp_log_level level, const char *logger, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

/* Is this a protocol version we speak? */
bool mcp_version_supported(const char *v);

/* Is `v` a version from before structured tool output (2025-03-26)? */
bool mcp_version_before_structured(const char *v);

#endif
