/* transports.h - the two ways perflens-mcp talks: stdio (one message per
 * line) and Streamable HTTP on one endpoint, /mcp.  Both hand messages to
 * server.h and know nothing of tools.
 */
#ifndef MCP_TRANSPORTS_H
#define MCP_TRANSPORTS_H

#include "server.h"

/* Serve stdin/stdout until end of input; returns an exit status. */
int mcp_run_stdio(struct mcp_server *s, size_t max_line);

struct mcp_http_opts {
	const char *bind_addr;   /* numeric IPv4 or IPv6 address */
	unsigned port;           /* 0: pick one (printed on stderr) */
	const char *token;       /* bearer token; NULL only with no_auth */
	bool no_auth;            /* loopback only */
	size_t max_body;         /* request body cap, bytes */
	unsigned max_sessions;
};

/* Serve HTTP until SIGINT or SIGTERM; returns an exit status. */
int mcp_run_http(struct mcp_server *s, const struct mcp_http_opts *o);

#endif
