/* viewer.h - the read-only web viewer that perflens-mcp --http serves
 * beside /mcp, independent of the HTTP library: the transport (http.c)
 * hands it a request (method, path, a lookup for headers, query
 * arguments and cookies, the body) and sends back what it fills in.
 *
 * Paths: /viewer/ (the page), /viewer/NAME.js|css (assets embedded from
 * mcp-server/viewer/), /viewer/login?n&x&m (a one-time login link,
 * base/login_link.h), /viewer/api/call (POST {"tool", "arguments"}: a
 * read-only tool through the same registry and sandboxed worker as MCP),
 * /viewer/api/file/analyses/NAME and /viewer/api/file/exports/NAME (an
 * artifact's bytes: stack tables for the flame graph, export downloads),
 * /viewer/api/wait[?session=ID&timeout=S] (long polling: answers when the
 * device link's files, the sessions or the analyses change).
 * The transport has already checked Host and Origin; the viewer checks
 * the token (bearer header or its session cookie) itself.
 */
#ifndef MCP_VIEWER_H
#define MCP_VIEWER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "server.h"

enum viewer_value_kind { VIEWER_HEADER, VIEWER_QUERY, VIEWER_COOKIE };

struct viewer_request {
	const char *method;
	const char *path;            /* decoded, without the query */
	/* A header, query argument or cookie by name (borrowed), or NULL. */
	const char *(*get)(void *opaque, enum viewer_value_kind kind, const char *name);
	void *opaque;
	const char *body;
	size_t body_len;
};

struct viewer_response {
	unsigned status;
	const char *type;            /* Content-Type (static) */
	char *body;                  /* malloc'd; viewer_response_release frees */
	size_t len;
	int fd;                      /* >= 0: send fd_size bytes of this file instead (the transport closes it) */
	uint64_t fd_size;
	char set_cookie[192];
	char location[64];
	char disposition[160];       /* Content-Disposition, when a download */
};

/* The headers every viewer answer carries: a strict CSP (no inline
 * script or style, no eval, nothing from elsewhere, no framing), no
 * sniffing, no referrer, no caching.  {name, value} pairs, NULL-ended. */
extern const char *const viewer_security_headers[][2];

struct viewer;

/* A viewer over server `s` (borrowed) with the HTTP token (borrowed; NULL
 * only with no_auth).  New; viewer_free releases it. */
struct viewer *viewer_new(struct mcp_server *s, const char *token, bool no_auth);
void viewer_free(struct viewer *v);

/* Is `path` the viewer's ("/" or under "/viewer")? */
bool viewer_owns(const char *path);

/* The login URL to print at start for http://HOST (e.g.
 * "127.0.0.1:8765"), into out; false when none could be made. */
bool viewer_login_url(const struct viewer *v, const char *host, char *out, size_t cap);

/* Answer one request into *out (zeroed by the call; fd -1 when unused). */
void viewer_serve(struct viewer *v, const struct viewer_request *rq, struct viewer_response *out);

void viewer_response_release(struct viewer_response *out);

#endif
