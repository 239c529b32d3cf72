/* http.c - the Streamable HTTP transport on libmicrohttpd, one endpoint:
 * /mcp (and the web viewer beside it).
 *
 * Every request is checked before anything is parsed: Host and Origin
 * must name this machine's loopback (DNS-rebinding defence: 403), the
 * bearer token must match in constant time (401 with WWW-Authenticate),
 * and the body is capped (413).  POST carries one JSON-RPC message:
 * requests are answered with application/json, or with a short
 * text/event-stream when progress or log notifications come with the
 * answer and the client accepts it; notifications and responses get 202.
 * initialize creates a session (Mcp-Session-Id); later legacy requests
 * must carry it (400 without, 404 when unknown); 2026-07-28 requests are
 * stateless and need none.  GET answers 405 (no server-initiated stream);
 * DELETE ends a session.  Paths under /viewer/ (and /) go to the web
 * viewer (viewer.h) after the same Host and Origin checks; it checks the
 * token itself, from the header or its login cookie, since a browser's
 * navigation cannot send a bearer header.  Each connection has its own thread, which waits
 * on its tool worker; cancellation from another request reaches the
 * worker through the server's call list.
 *
 * libmicrohttpd is not linked: mcp_run_http() dlopen()s it, after main()
 * has forked the sandbox's zygote, and calls its few functions through a
 * table of pointers.  Linked, it and its dependencies (GnuTLS, p11-kit,
 * hogweed, gmp, ...: about a third of the zygote's mappings) would be
 * copied at every worker fork, and GnuTLS's and p11-kit's atfork handlers
 * would run in each one; stdio mode needs none of it.  <microhttpd.h>
 * still gives the types and constants.
 */
#include "transports.h"
#include "viewer.h"

#include <arpa/inet.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <microhttpd.h>

#define LIBMICROHTTPD_SONAME "libmicrohttpd.so.12"

/* The libmicrohttpd functions used here, resolved by name; __typeof__
 * keeps each pointer's type the header's own. */
static struct {
	__typeof__(MHD_start_daemon) *start_daemon;
	__typeof__(MHD_stop_daemon) *stop_daemon;
	__typeof__(MHD_get_daemon_info) *get_daemon_info;
	__typeof__(MHD_lookup_connection_value) *lookup_connection_value;
	__typeof__(MHD_create_response_from_buffer) *create_response_from_buffer;
	__typeof__(MHD_create_response_from_fd) *create_response_from_fd;
	__typeof__(MHD_add_response_header) *add_response_header;
	__typeof__(MHD_queue_response) *queue_response;
	__typeof__(MHD_destroy_response) *destroy_response;
} mhd;

static pthread_once_t mhd_once = PTHREAD_ONCE_INIT;
static bool mhd_loaded;
static char mhd_error[400];  /* why not, when !mhd_loaded */

/* Once: map libmicrohttpd (and its dependencies) and fill `mhd`.  RTLD_NOW
 * binds everything before the daemon's threads start; RTLD_LOCAL keeps
 * its symbols (and GnuTLS's) out of the global namespace. */
static void load_mhd(void)
{
	const struct pl_dl_sym syms[] = {
		{"MHD_start_daemon", &mhd.start_daemon},
		{"MHD_stop_daemon", &mhd.stop_daemon},
		{"MHD_get_daemon_info", &mhd.get_daemon_info},
		{"MHD_lookup_connection_value", &mhd.lookup_connection_value},
		{"MHD_create_response_from_buffer", &mhd.create_response_from_buffer},
		{"MHD_create_response_from_fd", &mhd.create_response_from_fd},
		{"MHD_add_response_header", &mhd.add_response_header},
		{"MHD_queue_response", &mhd.queue_response},
		{"MHD_destroy_response", &mhd.destroy_response},
	};

	/* never unloaded */
	mhd_loaded = pl_dl_load(LIBMICROHTTPD_SONAME, syms, PL_ARRAY_LEN(syms), mhd_error,
				sizeof(mhd_error)) != NULL;
}

struct session_slot {
	struct mcp_session sess;
	time_t last_used;
	unsigned busy;            /* requests in flight */
	bool used;
};

struct http_state {
	struct mcp_server *s;
	const struct mcp_http_opts *o;
	pthread_mutex_t lock;
	struct session_slot *slots;
	char bind_host[64];
	struct viewer *viewer;
};

struct upload {
	struct pl_buf body;
	bool too_big;
	bool viewer;   /* a viewer path: viewer.c answers (and checks the token) */
};

/* Messages for one HTTP answer. */
struct collector {
	json_t *msgs;
	pthread_mutex_t lock;
};

static void collect(void *opaque, json_t *msg)
{
	struct collector *c = opaque;

	pthread_mutex_lock(&c->lock);
	json_array_append(c->msgs, msg);
	pthread_mutex_unlock(&c->lock);
}

/* ------------------------------------------------------------ answers */

static enum MHD_Result respond(struct MHD_Connection *conn, unsigned status,
			       const char *type, const char *body, const char *session)
{
	struct MHD_Response *r = mhd.create_response_from_buffer(strlen(body), (void *)body,
								  MHD_RESPMEM_MUST_COPY);
	enum MHD_Result ret;

	if (type)
		mhd.add_response_header(r, "Content-Type", type);
	if (session && *session)
		mhd.add_response_header(r, "Mcp-Session-Id", session);
	if (status == MHD_HTTP_UNAUTHORIZED)
		mhd.add_response_header(r, "WWW-Authenticate", "Bearer realm=\"perflens\"");
	if (status == MHD_HTTP_METHOD_NOT_ALLOWED)
		mhd.add_response_header(r, "Allow", "POST, DELETE");
	ret = mhd.queue_response(conn, status, r);
	mhd.destroy_response(r);
	return ret;
}

/* A JSON-RPC error as the body of an HTTP error status. */
static enum MHD_Result respond_error(struct MHD_Connection *conn, unsigned status,
				     int code, const char *message)
{
	json_t *msg = json_pack("{s:s,s:n,s:{s:i,s:s}}", "jsonrpc", "2.0", "id", "error",
				"code", code, "message", message);
	char *text = json_dumps(msg, JSON_COMPACT);
	enum MHD_Result r = respond(conn, status, "application/json", text, NULL);

	free(text);
	json_decref(msg);
	return r;
}

static bool accepts_sse(struct MHD_Connection *conn)
{
	const char *a = mhd.lookup_connection_value(conn, MHD_HEADER_KIND, "Accept");
	return a && strstr(a, "text/event-stream");
}

/* The response among the messages (it has an id); else the last one. */
static json_t *response_of(json_t *msgs)
{
	json_t *m;
	size_t i;

	json_array_foreach(msgs, i, m)
		if (json_object_get(m, "id") && !json_object_get(m, "method"))
			return m;
	return json_array_get(msgs, json_array_size(msgs) - 1);
}

static enum MHD_Result respond_messages(struct MHD_Connection *conn, json_t *msgs,
					const char *session)
{
	struct pl_buf b = {0};
	enum MHD_Result r;
	json_t *m;
	size_t i;

	if (json_array_size(msgs) == 0)
		return respond(conn, MHD_HTTP_ACCEPTED, NULL, "", session);
	if (json_array_size(msgs) == 1 || !accepts_sse(conn)) {
		/* One JSON body: the response (notifications that came with
		 * it are dropped only when the client cannot take SSE). */
		char *text = json_dumps(response_of(msgs), JSON_COMPACT | JSON_REAL_PRECISION(10));
		r = respond(conn, MHD_HTTP_OK, "application/json", text, session);
		free(text);
		return r;
	}
	json_array_foreach(msgs, i, m) {
		char *text = json_dumps(m, JSON_COMPACT | JSON_REAL_PRECISION(10));
		pl_buf_addf(&b, "event: message\ndata: %s\n\n", text);
		free(text);
	}
	r = respond(conn, MHD_HTTP_OK, "text/event-stream", b.data, session);
	pl_buf_release(&b);
	return r;
}

/* ------------------------------------------------------------- checks */

static bool host_is_local(const struct http_state *st, const char *host, size_t n)
{
	static const char *const names[] = {"localhost", "127.0.0.1", "[::1]"};

	for (size_t i = 0; i < PL_ARRAY_LEN(names); i++)
		if (strlen(names[i]) == n && strncmp(host, names[i], n) == 0)
			return true;
	return strlen(st->bind_host) == n && strncmp(host, st->bind_host, n) == 0;
}

/* "host[:port]" -> length of the host part. */
static size_t host_part(const char *h)
{
	const char *colon;

	if (h[0] == '[') {
		const char *close = strchr(h, ']');
		return close ? (size_t)(close - h) + 1 : strlen(h);
	}
	colon = strrchr(h, ':');
	return colon ? (size_t)(colon - h) : strlen(h);
}

static bool origin_ok(const struct http_state *st, const char *origin)
{
	const char *p;

	if (!origin)
		return true;  /* non-browser clients send none */
	if (strncmp(origin, "http://", 7) == 0)
		p = origin + 7;
	else if (strncmp(origin, "https://", 8) == 0)
		p = origin + 8;
	else
		return false;
	return !strchr(p, '/') && host_is_local(st, p, host_part(p));
}

static bool token_ok(const struct http_state *st, struct MHD_Connection *conn)
{
	const char *auth = mhd.lookup_connection_value(conn, MHD_HEADER_KIND, "Authorization");
	const char *want = st->o->token;
	size_t n, m;
	unsigned char diff;

	if (st->o->no_auth)
		return true;
	if (!auth || strncasecmp(auth, "Bearer ", 7) != 0 || !want)
		return false;
	auth += 7;
	n = strlen(auth);
	m = strlen(want);
	/* Constant time in the token's content. */
	diff = (unsigned char)(n != m);
	for (size_t i = 0; i < m; i++)
		diff |= (unsigned char)(want[i] ^ (i < n ? auth[i] : 0));
	return diff == 0;
}

/* --------------------------------------------------------- sessions */

static struct session_slot *session_new(struct http_state *st)
{
	unsigned char raw[16];
	struct session_slot *oldest = NULL;

	if (getrandom(raw, sizeof(raw), 0) != (ssize_t)sizeof(raw))
		return NULL;
	pthread_mutex_lock(&st->lock);
	for (unsigned i = 0; i < st->o->max_sessions; i++) {
		struct session_slot *sl = &st->slots[i];
		if (!sl->used) {
			oldest = sl;
			break;
		}
		if (!sl->busy && (!oldest || sl->last_used < oldest->last_used))
			oldest = sl;
	}
	if (oldest) {
		memset(oldest, 0, sizeof(*oldest));
		oldest->used = true;
		oldest->busy = 1;
		oldest->last_used = time(NULL);
		pl_hex(raw, sizeof(raw), oldest->sess.id);
	}
	pthread_mutex_unlock(&st->lock);
	return oldest;
}

static struct session_slot *session_get(struct http_state *st, const char *id)
{
	struct session_slot *found = NULL;

	pthread_mutex_lock(&st->lock);
	for (unsigned i = 0; id && i < st->o->max_sessions; i++)
		if (st->slots[i].used && strcmp(st->slots[i].sess.id, id) == 0) {
			found = &st->slots[i];
			found->busy++;
			found->last_used = time(NULL);
			break;
		}
	pthread_mutex_unlock(&st->lock);
	return found;
}

static void session_put(struct http_state *st, struct session_slot *sl, bool drop)
{
	pthread_mutex_lock(&st->lock);
	sl->busy--;
	if (drop)
		sl->used = false;
	pthread_mutex_unlock(&st->lock);
}

/* ------------------------------------------------------------- POST */

static bool is_stateless(json_t *msg)
{
	json_t *meta = json_object_get(json_object_get(msg, "params"), "_meta");
	const char *m = json_string_value(json_object_get(msg, "method"));

	return json_object_get(meta, "io.modelcontextprotocol/protocolVersion") ||
	       (m && strcmp(m, "server/discover") == 0);
}

static enum MHD_Result handle_post(struct http_state *st, struct MHD_Connection *conn,
				   struct upload *up)
{
	struct collector col = {json_array(), PTHREAD_MUTEX_INITIALIZER};
	struct mcp_sink sink = {collect, &col};
	const char *sid = mhd.lookup_connection_value(conn, MHD_HEADER_KIND, "Mcp-Session-Id");
	struct session_slot *slot = NULL;
	struct mcp_session stateless = {0};
	struct mcp_session *sess = &stateless;
	const char *method;
	enum MHD_Result r;
	json_t *msg = mcp_parse(up->body.data ? up->body.data : "", up->body.len, &sink);
	bool created = false;

	if (!msg) {
		char *text = json_dumps(json_array_get(col.msgs, 0), JSON_COMPACT);
		r = respond(conn, MHD_HTTP_BAD_REQUEST, "application/json", text, NULL);
		free(text);
		json_decref(col.msgs);
		return r;
	}
	method = json_string_value(json_object_get(msg, "method"));
	if (method && strcmp(method, "initialize") == 0) {
		if (!(slot = session_new(st))) {
			json_decref(msg);
			json_decref(col.msgs);
			return respond_error(conn, MHD_HTTP_SERVICE_UNAVAILABLE, MCP_RPC_INTERNAL_ERROR, "no session slot free");
		}
		sess = &slot->sess;
		created = true;
	} else if (sid) {
		if (!(slot = session_get(st, sid))) {
			json_decref(msg);
			json_decref(col.msgs);
			return respond_error(conn, MHD_HTTP_NOT_FOUND, MCP_RPC_SESSION_NOT_FOUND,
					     "unknown or expired session: initialize again");
		}
		sess = &slot->sess;
	} else if (!is_stateless(msg)) {
		json_decref(msg);
		json_decref(col.msgs);
		return respond_error(conn, MHD_HTTP_BAD_REQUEST, MCP_RPC_INVALID_REQUEST,
				     "missing Mcp-Session-Id header: send initialize first, or use protocol 2026-07-28 with _meta");
	}
	{
		struct mcp_call *call = mcp_handle(st->s, sess, msg, &sink);
		if (call)
			mcp_call_wait(st->s, call);
	}
	r = respond_messages(conn, col.msgs, created ? slot->sess.id : NULL);
	if (slot)
		session_put(st, slot, created && !slot->sess.initialized);
	json_decref(msg);
	json_decref(col.msgs);
	return r;
}

static enum MHD_Result handle_delete(struct http_state *st, struct MHD_Connection *conn)
{
	const char *sid = mhd.lookup_connection_value(conn, MHD_HEADER_KIND, "Mcp-Session-Id");
	struct session_slot *slot = sid ? session_get(st, sid) : NULL;

	if (!sid)
		return respond_error(conn, MHD_HTTP_BAD_REQUEST, MCP_RPC_INVALID_REQUEST, "missing Mcp-Session-Id header");
	if (!slot)
		return respond_error(conn, MHD_HTTP_NOT_FOUND, MCP_RPC_SESSION_NOT_FOUND, "unknown or expired session");
	session_put(st, slot, true);
	return respond(conn, MHD_HTTP_NO_CONTENT, NULL, "", NULL);
}

/* The checks every request passes, in this order. */
static enum MHD_Result gatekeep(struct http_state *st, struct MHD_Connection *conn,
				const char *url, bool *passed, bool *viewer)
{
	const char *host = mhd.lookup_connection_value(conn, MHD_HEADER_KIND, "Host");
	const char *origin = mhd.lookup_connection_value(conn, MHD_HEADER_KIND, "Origin");
	const char *version = mhd.lookup_connection_value(conn, MHD_HEADER_KIND, "MCP-Protocol-Version");

	*passed = false;
	if (!host || !host_is_local(st, host, host_part(host)) || !origin_ok(st, origin))
		return respond_error(conn, MHD_HTTP_FORBIDDEN, MCP_RPC_INVALID_REQUEST,
				     "forbidden Host or Origin: only this machine's loopback is served");
	if ((*viewer = viewer_owns(url))) {
		*passed = true;  /* its token (header or cookie) is checked by viewer.c */
		return MHD_YES;
	}
	if (!token_ok(st, conn))
		return respond_error(conn, MHD_HTTP_UNAUTHORIZED, MCP_RPC_INVALID_REQUEST,
				     "missing or wrong bearer token: send Authorization: Bearer $PERFLENS_TOKEN");
	if (strcmp(url, "/mcp") != 0)
		return respond_error(conn, MHD_HTTP_NOT_FOUND, MCP_RPC_INVALID_REQUEST, "the MCP endpoint is /mcp");
	if (version && !mcp_version_supported(version))
		return respond_error(conn, MHD_HTTP_BAD_REQUEST, MCP_RPC_UNSUPPORTED_VERSION,
				     "unsupported MCP-Protocol-Version: use 2026-07-28, 2025-11-25, 2025-06-18 or 2025-03-26");
	*passed = true;
	return MHD_YES;
}

/* ------------------------------------------------------------ viewer */

static const char *viewer_get(void *opaque, enum viewer_value_kind kind, const char *name)
{
	static const enum MHD_ValueKind kinds[] = {
		[VIEWER_HEADER] = MHD_HEADER_KIND,
		[VIEWER_QUERY] = MHD_GET_ARGUMENT_KIND,
		[VIEWER_COOKIE] = MHD_COOKIE_KIND,
	};
	return mhd.lookup_connection_value(opaque, kinds[kind], name);
}

static enum MHD_Result handle_viewer(struct http_state *st, struct MHD_Connection *conn,
				     const char *url, const char *method, struct upload *up)
{
	struct viewer_request rq = {method, url, viewer_get, conn, up->body.data, up->body.len};
	struct viewer_response out;
	struct MHD_Response *r;
	enum MHD_Result ret;

	if (up->too_big)
		rq.body_len = SIZE_MAX;  /* viewer.c answers 413 */
	viewer_serve(st->viewer, &rq, &out);
	if (out.fd >= 0) {
		r = mhd.create_response_from_fd(out.fd_size, out.fd);
		out.fd = -1;  /* libmicrohttpd closes it */
	} else {
		r = mhd.create_response_from_buffer(out.len, out.body, MHD_RESPMEM_MUST_COPY);
	}
	if (!r) {
		viewer_response_release(&out);
		return MHD_NO;
	}
	for (size_t i = 0; viewer_security_headers[i][0]; i++)
		mhd.add_response_header(r, viewer_security_headers[i][0], viewer_security_headers[i][1]);
	if (out.type)
		mhd.add_response_header(r, "Content-Type", out.type);
	if (out.set_cookie[0])
		mhd.add_response_header(r, "Set-Cookie", out.set_cookie);
	if (out.location[0])
		mhd.add_response_header(r, "Location", out.location);
	if (out.disposition[0])
		mhd.add_response_header(r, "Content-Disposition", out.disposition);
	ret = mhd.queue_response(conn, out.status, r);
	mhd.destroy_response(r);
	viewer_response_release(&out);
	return ret;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
				  const char *method, const char *version,
				  const char *data, size_t *data_size, void **con_cls)
{
	struct http_state *st = cls;
	struct upload *up = *con_cls;
	bool passed, viewer = false;
	enum MHD_Result r;

	(void)version;
	if (!up) {
		/* First call: headers only.  Check them before any body. */
		r = gatekeep(st, conn, url, &passed, &viewer);
		if (!passed)
			return r;
		up = pl_xcalloc(1, sizeof(*up));
		up->viewer = viewer;
		*con_cls = up;
		return MHD_YES;
	}
	if (*data_size) {
		if (up->body.len + *data_size > st->o->max_body)
			up->too_big = true;
		else
			pl_buf_add(&up->body, data, *data_size);
		*data_size = 0;
		return MHD_YES;
	}
	if (up->viewer)
		return handle_viewer(st, conn, url, method, up);
	if (strcmp(method, "POST") == 0) {
		if (up->too_big)
			return respond_error(conn, MHD_HTTP_CONTENT_TOO_LARGE, MCP_RPC_INVALID_REQUEST, "request body too large");
		return handle_post(st, conn, up);
	}
	if (strcmp(method, "DELETE") == 0)
		return handle_delete(st, conn);
	return respond(conn, MHD_HTTP_METHOD_NOT_ALLOWED, "application/json",
		       "{\"error\":\"use POST to send messages; this server opens no GET stream\"}", NULL);
}

static void on_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
			 enum MHD_RequestTerminationCode code)
{
	struct upload *up = *con_cls;

	(void)cls;
	(void)conn;
	(void)code;
	if (up) {
		pl_buf_release(&up->body);
		free(up);
		*con_cls = NULL;
	}
}

/* -------------------------------------------------------------- run */

static volatile sig_atomic_t stop_requested;

static void on_signal(int sig)
{
	(void)sig;
	stop_requested = 1;
}

static bool is_loopback(const struct sockaddr_storage *sa)
{
	if (sa->ss_family == AF_INET)
		return (ntohl(((const struct sockaddr_in *)sa)->sin_addr.s_addr) >> 24) == 127;
	if (sa->ss_family == AF_INET6)
		return IN6_IS_ADDR_LOOPBACK(&((const struct sockaddr_in6 *)sa)->sin6_addr);
	return false;
}

/* Connections served at once (a thread each), and how long one may sit
 * idle (headers or body stalled; a tool call in progress is not idle).
 * A client that opens connections and never finishes them (tests/
 * integration/test_faults_http.sh) then holds at most the limit, for at
 * most the timeout; the descriptors they need are made available. */
#define HTTP_MAX_CONNECTIONS 1024u
#define HTTP_IDLE_SECONDS 30u

static void raise_nofile(void)
{
	struct rlimit rl;
	rlim_t want = HTTP_MAX_CONNECTIONS + 64;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < want) {
		rl.rlim_cur = rl.rlim_max < want ? rl.rlim_max : want;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

/* --bind and --port as a socket address; false when the address is not
 * a numeric IPv4 or IPv6 one. */
static bool bind_address(const struct mcp_http_opts *o, struct sockaddr_storage *sa)
{
	if (inet_pton(AF_INET, o->bind_addr, &((struct sockaddr_in *)sa)->sin_addr) == 1) {
		sa->ss_family = AF_INET;
		((struct sockaddr_in *)sa)->sin_port = htons((uint16_t)o->port);
		return true;
	}
	if (inet_pton(AF_INET6, o->bind_addr, &((struct sockaddr_in6 *)sa)->sin6_addr) == 1) {
		sa->ss_family = AF_INET6;
		((struct sockaddr_in6 *)sa)->sin6_port = htons((uint16_t)o->port);
		return true;
	}
	return false;
}

/* Where the server listens, and the viewer's one-time login URL, on
 * stderr (the port is the one bound: --port 0 picks one). */
static void announce(const struct http_state *st, unsigned port)
{
	char host[96], login[400];

	fprintf(stderr, "perflens-mcp: listening on http://%s:%u/mcp\n", st->bind_host, port);
	snprintf(host, sizeof(host), "%s:%u", st->bind_host, port);
	if (viewer_login_url(st->viewer, host, login, sizeof(login)))
		fprintf(stderr, "perflens-mcp: viewer (one-time login): %s\n", login);
}

int mcp_run_http(struct mcp_server *s, const struct mcp_http_opts *o)
{
	struct http_state st = {s, o, PTHREAD_MUTEX_INITIALIZER, NULL, ""};
	struct sockaddr_storage sa = {0};
	struct MHD_Daemon *d;
	unsigned flags = MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD;
	const union MHD_DaemonInfo *info;

	pthread_once(&mhd_once, load_mhd);
	if (!mhd_loaded) {
		fprintf(stderr, "perflens-mcp: --http needs libmicrohttpd, which cannot be loaded "
			"(Debian: apt-get install libmicrohttpd12): %s\n", mhd_error);
		return 2;
	}
	if (!bind_address(o, &sa)) {
		fprintf(stderr, "perflens-mcp: '%s' is not a numeric IP address\n", o->bind_addr);
		return 2;
	}
	if (sa.ss_family == AF_INET6)
		flags |= MHD_USE_IPv6;
	if (o->no_auth && !is_loopback(&sa)) {
		fprintf(stderr, "perflens-mcp: --no-auth is only allowed on a loopback address\n");
		return 2;
	}
	snprintf(st.bind_host, sizeof(st.bind_host), sa.ss_family == AF_INET6 ? "[%s]" : "%s", o->bind_addr);
	st.slots = pl_xcalloc(o->max_sessions, sizeof(*st.slots));
	st.viewer = viewer_new(s, o->token, o->no_auth);
	raise_nofile();
	d = mhd.start_daemon(flags, (uint16_t)o->port, NULL, NULL, on_request, &st,
			     MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&sa,
			     MHD_OPTION_NOTIFY_COMPLETED, on_completed, &st,
			     MHD_OPTION_CONNECTION_LIMIT, HTTP_MAX_CONNECTIONS,
			     MHD_OPTION_CONNECTION_TIMEOUT, HTTP_IDLE_SECONDS,
			     MHD_OPTION_END);
	if (!d) {
		fprintf(stderr, "perflens-mcp: cannot listen on %s:%u: %s\n", o->bind_addr, o->port,
			strerror(errno));
		free(st.slots);
		viewer_free(st.viewer);
		return 6;
	}
	info = mhd.get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
	announce(&st, info ? info->port : o->port);
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	while (!stop_requested)
		pause();
	mhd.stop_daemon(d);
	free(st.slots);
	viewer_free(st.viewer);
	return 0;
}
