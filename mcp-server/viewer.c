/* viewer.c - the web viewer's routes (see viewer.h).
 *
 * The viewer computes nothing a tool answers: /viewer/api/call turns a
 * request into a stateless MCP tools/call and hands it to mcp_handle(), so
 * it meets the same argument checks, the same sandboxed worker, the same
 * time and size limits as any agent's call, and answers the tool's
 * structuredContent as it is.  Only the tools of viewer_tools[] are
 * reachable, each read-only, and arguments that would name a path are
 * refused or checked to be ids: an analysis id is "an-" + hex
 * (pl_artifact_id_valid), an artifact is "analyses/NAME" or
 * "exports/NAME" of safe characters (pl_artifact_rel_path), so nothing
 * outside the artifact root is reachable; anything else is 404.
 *
 * Login: a link signed with the token (base/login_link.h) is good once,
 * until its expiry; the nonces taken are remembered in a ring (a link
 * whose nonce left the ring is still refused once expired).  It answers a
 * session cookie (HttpOnly, SameSite=Strict) and a page that moves on to
 * /viewer/ by a meta refresh: a navigation the page itself makes is
 * same-site, so the Strict cookie goes with it (after a 303 from a link
 * clicked elsewhere, the browser would hold it back), and the URL left in
 * the address bar holds no secret.
 */
#include "viewer.h"
#include "base/login_link.h"
#include "base/schemas.h"
#include "store/artifact.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <sys/inotify.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define COOKIE_NAME "perflens_viewer"
#define ASSET_PREFIX "mcp-server/viewer/"
#define USED_NONCES 4096
#define MAX_API_BODY (64u << 10)
/* The largest artifact served whole (a stack table of a million stacks
 * is well under it). */
#define MAX_FILE_BYTES (1ULL << 30)

const char *const viewer_security_headers[][2] = {
	{"Content-Security-Policy",
	 "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
	 "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"},
	{"X-Content-Type-Options", "nosniff"},
	{"X-Frame-Options", "DENY"},
	{"Referrer-Policy", "no-referrer"},
	{"Cache-Control", "no-store"},
	{"Cross-Origin-Opener-Policy", "same-origin"},
	{"Cross-Origin-Resource-Policy", "same-origin"},
	{NULL, NULL},
};

struct viewer {
	struct mcp_server *s;
	const char *token;
	bool no_auth;
	pthread_mutex_t lock;          /* guards used[] and next_id */
	char (*used)[PL_LOGIN_NONCE_HEX + 1];
	size_t nused;                  /* nonces taken so far (ring index) */
	uint64_t next_id;
};

/* A tool the viewer may call, and how its arguments are held to ids. */
struct viewer_tool {
	const char *name;
	const char *id_args[3];        /* each must be an analysis id */
	const char *artifact_arg;      /* must be analyses/NAME or exports/NAME */
	const char *denied_arg;        /* a path argument the viewer never passes */
	const char *false_arg;         /* a boolean forced false (a write it would do) */
};

static const struct viewer_tool viewer_tools[] = {
	{"list_artifacts", {NULL}, NULL, NULL, NULL},
	{"read_artifact_page", {NULL}, "artifact", NULL, NULL},
	{"list_hotspots", {"analysis_id"}, NULL, NULL, NULL},
	{"get_hotspot", {"analysis_id"}, NULL, NULL, NULL},
	{"get_call_paths", {"analysis_id"}, NULL, NULL, NULL},
	{"list_threads", {"analysis_id"}, NULL, NULL, NULL},
	{"get_perf_stat", {"analysis_id"}, NULL, NULL, NULL},
	{"classify_hotspots", {"analysis_id"}, NULL, NULL, NULL},
	{"source_context", {"analysis_id"}, NULL, "file", NULL},
	/* The device agent link's: devices, sessions on disk, health metrics
	 * (their device and session arguments are ids by their schemas). */
	{"list_devices", {NULL}, NULL, NULL, NULL},
	{"list_sessions", {NULL}, NULL, NULL, NULL},
	{"get_device_metrics", {NULL}, NULL, NULL, NULL},
	/* The fleet store's (perflens-mcp --fleet-store): read-only queries. */
	{"fleet_devices", {NULL}, NULL, NULL, NULL},
	{"fleet_hotspots", {NULL}, NULL, NULL, NULL},
	{"fleet_compare", {NULL}, NULL, NULL, NULL},
	/* Not read-only only for its exports, which the viewer turns off. */
	{"compare_profiles", {"baseline_id", "candidate_id"}, NULL, NULL, "exports"},
	/* Not read-only only for its picture, which the viewer turns off. */
	{"get_timeline", {"analysis_id"}, NULL, NULL, "picture"},
};

struct viewer *viewer_new(struct mcp_server *s, const char *token, bool no_auth)
{
	struct viewer *v = pl_xcalloc(1, sizeof(*v));

	v->s = s;
	v->token = token;
	v->no_auth = no_auth;
	pthread_mutex_init(&v->lock, NULL);
	v->used = pl_xcalloc(USED_NONCES, sizeof(*v->used));
	return v;
}

void viewer_free(struct viewer *v)
{
	if (!v)
		return;
	pthread_mutex_destroy(&v->lock);
	free(v->used);
	free(v);
}

bool viewer_owns(const char *path)
{
	return strcmp(path, "/") == 0 || strcmp(path, "/viewer") == 0 ||
	       strncmp(path, "/viewer/", 8) == 0;
}

bool viewer_login_url(const struct viewer *v, const char *host, char *out, size_t cap)
{
	char q[200];

	if (v->no_auth)
		return (size_t)snprintf(out, cap, "http://%s/viewer/", host) < cap;
	if (!pl_login_link_query(v->token, (uint64_t)time(NULL) + PL_LOGIN_TTL_SECONDS, q, sizeof(q)))
		return false;
	return (size_t)snprintf(out, cap, "http://%s/viewer/login?%s", host, q) < cap;
}

void viewer_response_release(struct viewer_response *out)
{
	free(out->body);
	out->body = NULL;
	if (out->fd >= 0)
		close(out->fd);
	out->fd = -1;
}

/* ------------------------------------------------------------ answers */

static void set_body(struct viewer_response *out, unsigned status, const char *type,
		     const char *text)
{
	out->status = status;
	out->type = type;
	free(out->body);
	out->len = strlen(text);
	out->body = pl_xmalloc(out->len + 1);
	memcpy(out->body, text, out->len + 1);
}

static void set_json_new(struct viewer_response *out, unsigned status, json_t *obj)
{
	char *text = json_dumps(obj, JSON_COMPACT | JSON_REAL_PRECISION(10));

	set_body(out, status, "application/json", text ? text : "{}");
	free(text);
	json_decref(obj);
}

/* {"error": {"code", "message", "hint"}} with an HTTP status. */
static void api_error(struct viewer_response *out, unsigned status, const char *code,
		      const char *message, const char *hint)
{
	set_json_new(out, status, json_pack("{s:{s:s,s:s,s:s}}", "error", "code", code,
					    "message", message, "hint", hint));
}

static void page_text(struct viewer_response *out, unsigned status, const char *title,
		      const char *message)
{
	struct pl_buf b = {0};

	/* Fixed texts only: nothing from the request is echoed. */
	pl_buf_addf(&b, "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\">"
		    "<title>PerfLens: %s</title><link rel=\"stylesheet\" href=\"/viewer/viewer.css\">"
		    "</head><body><main class=\"notice\"><h1>%s</h1><p>%s</p></main></body></html>",
		    title, title, message);
	set_body(out, status, "text/html; charset=utf-8", b.data);
	pl_buf_release(&b);
}

/* -------------------------------------------------------------- login */

static bool bearer_ok(const struct viewer *v, const struct viewer_request *rq)
{
	const char *auth = rq->get(rq->opaque, VIEWER_HEADER, "Authorization");

	return auth && v->token && strncasecmp(auth, "Bearer ", 7) == 0 &&
	       pl_const_time_eq(auth + 7, v->token);
}

static bool authorized(const struct viewer *v, const struct viewer_request *rq)
{
	return v->no_auth || bearer_ok(v, rq) ||
	       pl_login_cookie_valid(v->token, rq->get(rq->opaque, VIEWER_COOKIE, COOKIE_NAME));
}

/* Take nonce `n` unless it was taken before; true when it is fresh. */
static bool take_nonce(struct viewer *v, const char *n)
{
	bool fresh = true;

	pthread_mutex_lock(&v->lock);
	for (size_t i = 0; i < USED_NONCES && i < v->nused; i++)
		if (strcmp(v->used[i], n) == 0)
			fresh = false;
	if (fresh)
		snprintf(v->used[v->nused++ % USED_NONCES], PL_LOGIN_NONCE_HEX + 1, "%s", n);
	pthread_mutex_unlock(&v->lock);
	return fresh;
}

static void serve_login(struct viewer *v, const struct viewer_request *rq, struct viewer_response *out)
{
	const char *n = rq->get(rq->opaque, VIEWER_QUERY, "n");
	const char *x = rq->get(rq->opaque, VIEWER_QUERY, "x");
	const char *m = rq->get(rq->opaque, VIEWER_QUERY, "m");
	char cookie[PL_LOGIN_COOKIE_LEN + 1];

	if (!v->no_auth) {
		if (!pl_login_link_valid(v->token, n, x, m) ||
		    strtoull(x, NULL, 10) < (unsigned long long)time(NULL) || !take_nonce(v, n)) {
			page_text(out, 401, "login link refused",
				  "This login link is wrong, expired or was used already. "
				  "Run <code>perflens viewer-url</code> for a new one.");
			return;
		}
		if (!pl_login_cookie_make(v->token, cookie)) {
			page_text(out, 500, "no login", "The server could not draw a random session.");
			return;
		}
		snprintf(out->set_cookie, sizeof(out->set_cookie),
			 COOKIE_NAME "=%s; Path=/viewer; HttpOnly; SameSite=Strict", cookie);
	}
	set_body(out, 200, "text/html; charset=utf-8",
		 "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\">"
		 "<meta http-equiv=\"refresh\" content=\"0;url=/viewer/\"><title>PerfLens</title>"
		 "</head><body><p><a href=\"/viewer/\">Open the viewer</a></p></body></html>");
}

/* ------------------------------------------------------------- assets */

static const char *asset_type(const char *name)
{
	size_t n = strlen(name);

	if (n > 3 && strcmp(name + n - 3, ".js") == 0)
		return "text/javascript; charset=utf-8";
	if (n > 4 && strcmp(name + n - 4, ".css") == 0)
		return "text/css; charset=utf-8";
	if (n > 4 && strcmp(name + n - 4, ".svg") == 0)
		return "image/svg+xml";
	return "text/html; charset=utf-8";
}

static void serve_asset(const char *name, struct viewer_response *out)
{
	char key[128];
	const char *text;

	if (strchr(name, '/') || strlen(name) > 64 ||
	    (size_t)snprintf(key, sizeof(key), ASSET_PREFIX "%s", name) >= sizeof(key) ||
	    !(text = pl_schema_text(key))) {
		page_text(out, 404, "not found", "The viewer has no such page.");
		return;
	}
	set_body(out, 200, asset_type(name), text);
}

/* -------------------------------------------------------------- files */

static void serve_file(struct viewer *v, const char *rel_in, struct viewer_response *out)
{
	const char *root = v->s->cfg.ctx.artifact_root;
	char rel[600];
	struct pl_error err;
	uint64_t size;
	int fd;

	/* Only analyses/NAME and exports/NAME, NAME of [A-Za-z0-9._-]. */
	if (!root || !pl_artifact_rel_path(rel_in, rel, sizeof(rel)) ||
	    !(strncmp(rel, "analyses/", 9) == 0 || strncmp(rel, "exports/", 8) == 0) ||
	    strcmp(rel, rel_in) != 0) {
		api_error(out, 404, "not_found", "no such artifact",
			  "name one from list_artifacts: analyses/NAME or exports/NAME");
		return;
	}
	if ((fd = pl_artifact_open(root, rel, &size, &err)) < 0) {
		api_error(out, 404, "not_found", err.text, err.hint);
		return;
	}
	if (size > MAX_FILE_BYTES) {
		close(fd);
		api_error(out, 413, "limit_exceeded", "artifact larger than the viewer serves (1 GiB)",
			  "read it with read_artifact_page");
		return;
	}
	out->status = 200;
	out->fd = fd;
	out->fd_size = size;
	if (strncmp(rel, "exports/", 8) == 0) {
		const char *name = rel + 8;
		size_t n = strlen(name);
		out->type = n > 4 && strcmp(name + n - 4, ".svg") == 0 ? "image/svg+xml" :
			    n > 5 && strcmp(name + n - 5, ".json") == 0 ? "application/json" :
			    n > 3 && strcmp(name + n - 3, ".gz") == 0 ? "application/gzip" :
			    "text/plain; charset=utf-8";
		/* Always a download: an SVG opened in the page's origin could
		 * run script. */
		snprintf(out->disposition, sizeof(out->disposition), "attachment; filename=\"%.120s\"", name);
	} else {
		out->type = "application/json";
	}
}

/* --------------------------------------------------------------- wait */

/* What /viewer/api/wait watches under the artifact root, by the name it
 * answers: the device agent link's state files, its sessions, the
 * analyses; and the root itself, where those folders appear. */
static const char *const watched_dirs[] = {"devices", "sessions", "analyses", "."};

static bool safe_session(const char *s)
{
	size_t n = s ? strlen(s) : 0;

	if (n == 0 || n > 128 || s[0] == '.')
		return false;
	return strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-") == n;
}

/* Long polling for the live page: block (in this connection's own
 * thread) until something under the watched folders changes, or up to
 * `timeout` seconds (1-55, default 25), then answer {"changed": [NAMES]}
 * (empty on timeout); `session=ID` watches that session's folder too
 * ("session": a chunk or a metrics line arrived).  inotify, so nothing
 * polls: the page asks again only after an answer. */
#define WATCHES (PL_ARRAY_LEN(watched_dirs) + 1)   /* the folders, then the session's */

/* Watch the artifact root's folders and, with `session`, that session's
 * folder, on inotify instance `fd`; wd[i] is -1 where a watch failed. */
static void add_watches(int fd, const char *root, const char *session, int wd[WATCHES])
{
	const uint32_t mask = IN_CREATE | IN_MOVED_TO | IN_CLOSE_WRITE | IN_DELETE | IN_MOVED_FROM;
	char path[4200];

	for (size_t i = 0; i < PL_ARRAY_LEN(watched_dirs); i++) {
		snprintf(path, sizeof(path), "%s/%s", root, watched_dirs[i]);
		wd[i] = inotify_add_watch(fd, path, mask | IN_ONLYDIR | IN_DONT_FOLLOW);
	}
	wd[WATCHES - 1] = -1;
	if (session) {
		snprintf(path, sizeof(path), "%s/sessions/%s", root, session);
		wd[WATCHES - 1] = inotify_add_watch(fd, path, mask | IN_MODIFY | IN_ONLYDIR | IN_DONT_FOLLOW);
	}
}

/* Wait until the first event, then 150 ms more so that a burst (a chunk
 * renamed, metadata.json rewritten) is one answer; changed[i] marks the
 * watches that saw one. */
static void await_changes(int fd, const int wd[WATCHES], int wait_ms, bool changed[WATCHES])
{
	for (;;) {
		struct pollfd pfd = {fd, POLLIN, 0};
		char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
		ssize_t n;
		bool any = false;

		if (poll(&pfd, 1, wait_ms) <= 0)
			break;
		while ((n = read(fd, buf, sizeof(buf))) > 0)
			for (char *p = buf; p < buf + n;) {
				const struct inotify_event *e = (const struct inotify_event *)p;
				/* An event of the folder itself (IN_IGNORED: it was
				 * removed) has no name: e->name[0] would be the next
				 * event's bytes, or past the buffer. */
				bool hidden = e->len && e->name[0] == '.';
				for (size_t i = 0; i < WATCHES; i++)
					if (wd[i] >= 0 && e->wd == wd[i] && !hidden)
						changed[i] = any = true;
				p += sizeof(*e) + e->len;
			}
		if (any)
			wait_ms = 150;
	}
}

static void serve_wait(struct viewer *v, const struct viewer_request *rq, struct viewer_response *out)
{
	const char *root = v->s->cfg.ctx.artifact_root;
	const char *session = rq->get(rq->opaque, VIEWER_QUERY, "session");
	const char *ts = rq->get(rq->opaque, VIEWER_QUERY, "timeout");
	int wd[WATCHES], fd;
	unsigned long timeout = ts ? strtoul(ts, NULL, 10) : 25;
	bool changed[WATCHES] = {false};
	json_t *names;

	if (session && !safe_session(session)) {
		api_error(out, 404, "not_found", "no such session", "a session id comes from list_sessions");
		return;
	}
	if (!root) {
		api_error(out, 503, "unsupported", "nothing to watch", "start perflens-mcp with --artifact-root");
		return;
	}
	/* Each wait has its own inotify instance; they are few per user
	 * (fs.inotify.max_user_instances, 128 by default). */
	if ((fd = inotify_init1(IN_CLOEXEC | IN_NONBLOCK)) < 0) {
		api_error(out, 503, "limit_exceeded", "cannot watch the artifact root now (inotify instances used up)",
			  "close other viewer tabs, or raise fs.inotify.max_user_instances, then reload the page");
		return;
	}
	if (timeout < 1 || timeout > 55)
		timeout = 25;
	add_watches(fd, root, session, wd);
	await_changes(fd, wd, (int)timeout * 1000, changed);
	close(fd);
	names = json_array();
	for (size_t i = 0; i < WATCHES; i++)
		if (changed[i])
			json_array_append_new(names, json_string(i == WATCHES - 1 ? "session" :
				strcmp(watched_dirs[i], ".") == 0 ? "root" : watched_dirs[i]));
	set_json_new(out, 200, json_pack("{s:o}", "changed", names));
}

/* --------------------------------------------------------------- API */

static const struct viewer_tool *viewer_tool(const char *name)
{
	for (size_t i = 0; name && i < PL_ARRAY_LEN(viewer_tools); i++)
		if (strcmp(viewer_tools[i].name, name) == 0)
			return &viewer_tools[i];
	return NULL;
}

static bool is_read_only(const struct tool_def *t)
{
	json_t *ann = json_object_get(tool_definition(t), "annotations");
	return json_is_true(json_object_get(ann, "readOnlyHint"));
}

/* Hold the arguments to what the viewer may ask; false with the answer
 * (404 for anything that is not an id) in *out. */
static bool check_viewer_args(const struct viewer_tool *vt, json_t *args, struct viewer_response *out)
{
	for (size_t i = 0; i < PL_ARRAY_LEN(vt->id_args) && vt->id_args[i]; i++) {
		json_t *id = json_object_get(args, vt->id_args[i]);
		if (id && (!json_is_string(id) || !pl_artifact_id_valid(json_string_value(id)))) {
			api_error(out, 404, "not_found", "no such analysis",
				  "an analysis id is an-HEX, from list_artifacts");
			return false;
		}
	}
	if (vt->artifact_arg) {
		json_t *a = json_object_get(args, vt->artifact_arg);
		char rel[600];
		const char *s = json_string_value(a);
		if (a && (!s || !pl_artifact_rel_path(s, rel, sizeof(rel)) || strcmp(rel, s) != 0 ||
			  strncmp(rel, "collections/", 12) == 0)) {
			api_error(out, 404, "not_found", "no such artifact",
				  "name one from list_artifacts: analyses/NAME or exports/NAME");
			return false;
		}
	}
	if (vt->denied_arg && json_object_get(args, vt->denied_arg)) {
		api_error(out, 400, "usage", "the viewer does not pass paths",
			  "name a hotspot_id instead");
		return false;
	}
	if (vt->false_arg)
		json_object_set_new(args, vt->false_arg, json_false());
	return true;
}

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

/* Run `tool` with `args` (borrowed) as a stateless MCP tools/call and
 * answer its structured result or its error. */
static void run_tool(struct viewer *v, const char *tool, json_t *args, struct viewer_response *out)
{
	struct collector col = {json_array(), PTHREAD_MUTEX_INITIALIZER};
	struct mcp_sink sink = {collect, &col};
	struct mcp_session sess = {0};
	struct mcp_call *call;
	json_t *msg, *resp = NULL, *m, *result;
	char id[48];
	size_t i;

	/* A stateless call is cancelled by its id alone, among every
	 * stateless call (calls.c): an id of the viewer's own kind, so that
	 * an agent's notifications/cancelled for its request 3 does not stop
	 * the viewer's call 3. */
	pthread_mutex_lock(&v->lock);
	snprintf(id, sizeof(id), "perflens-viewer-%" PRIu64, ++v->next_id);
	pthread_mutex_unlock(&v->lock);
	msg = json_pack("{s:s,s:s,s:s,s:{s:s,s:O,s:{s:s}}}", "jsonrpc", "2.0", "id", id,
			"method", "tools/call", "params", "name", tool, "arguments", args,
			"_meta", "io.modelcontextprotocol/protocolVersion", MCP_STATELESS_VERSION);
	if ((call = mcp_handle(v->s, &sess, msg, &sink)))
		mcp_call_wait(v->s, call);
	json_array_foreach(col.msgs, i, m)
		if (json_object_get(m, "id") && !json_object_get(m, "method"))
			resp = m;
	result = json_object_get(resp, "result");
	if (!result) {
		json_t *e = json_object_get(resp, "error");
		api_error(out, 400, "usage", e ? json_string_value(json_object_get(e, "message")) : "no answer",
			  "check the tool's arguments");
	} else if (json_is_true(json_object_get(result, "isError"))) {
		json_t *e = json_object_get(json_object_get(result, "_meta"), "perflens/error");
		const char *code = json_string_value(json_object_get(e, "code"));
		unsigned status = code && strcmp(code, "usage") == 0 ? 400 :
				  code && strcmp(code, "internal") == 0 ? 500 : 422;
		set_json_new(out, status, json_pack("{s:O}", "error", e ? e : json_null()));
	} else {
		set_json_new(out, 200, json_pack("{s:O}", "result",
			json_object_get(result, "structuredContent")));
	}
	json_decref(msg);
	json_decref(col.msgs);
}

static void serve_call(struct viewer *v, const struct viewer_request *rq, struct viewer_response *out)
{
	const char *type = rq->get(rq->opaque, VIEWER_HEADER, "Content-Type");
	const struct viewer_tool *vt;
	const struct tool_def *t;
	json_error_t je;
	json_t *req, *args;
	const char *name;

	if (strcmp(rq->method, "POST") != 0) {
		api_error(out, 405, "usage", "POST {\"tool\", \"arguments\"}", "use POST");
		return;
	}
	/* A form or a no-cors fetch cannot send application/json. */
	if (!type || strncasecmp(type, "application/json", 16) != 0) {
		api_error(out, 415, "usage", "the body must be application/json", "send Content-Type: application/json");
		return;
	}
	if (rq->body_len > MAX_API_BODY) {
		api_error(out, 413, "limit_exceeded", "request body too large", "send less than 64 KiB");
		return;
	}
	req = json_loadb(rq->body ? rq->body : "", rq->body_len, JSON_REJECT_DUPLICATES, &je);
	name = json_string_value(json_object_get(req, "tool"));
	args = json_object_get(req, "arguments");
	if (!json_is_object(req) || !name || (args && !json_is_object(args))) {
		json_decref(req);
		api_error(out, 400, "usage", "expected {\"tool\": NAME, \"arguments\": {...}}", "see viewer.js");
		return;
	}
	vt = viewer_tool(name);
	t = tool_find(name);
	if (!vt || !t || (!vt->false_arg && !is_read_only(t))) {
		json_decref(req);
		api_error(out, 404, "not_found", "not a tool the viewer may call",
			  "the viewer reads: list_artifacts, read_artifact_page, list_hotspots, get_hotspot, "
			  "get_call_paths, list_threads, get_perf_stat, classify_hotspots, source_context, "
			  "compare_profiles, get_timeline");
		return;
	}
	args = args ? json_deep_copy(args) : json_object();
	if (check_viewer_args(vt, args, out))
		run_tool(v, name, args, out);
	json_decref(args);
	json_decref(req);
}

/* ------------------------------------------------------------- routes */

void viewer_serve(struct viewer *v, const struct viewer_request *rq, struct viewer_response *out)
{
	const char *p = rq->path;
	bool api = strncmp(p, "/viewer/api/", 12) == 0;

	memset(out, 0, sizeof(*out));
	out->fd = -1;
	if (strcmp(p, "/") == 0 || strcmp(p, "/viewer") == 0) {
		out->status = 303;
		snprintf(out->location, sizeof(out->location), "/viewer/");
		set_body(out, 303, "text/plain; charset=utf-8", "see /viewer/\n");
		return;
	}
	if (strcmp(p, "/viewer/login") == 0) {
		serve_login(v, rq, out);
		return;
	}
	/* The style and scripts hold no data: the login pages use the style. */
	if (!api && strncmp(p, "/viewer/", 8) == 0 && strcmp(p, "/viewer/") != 0 &&
	    (strcmp(rq->method, "GET") == 0 || strcmp(rq->method, "HEAD") == 0)) {
		size_t n = strlen(p);
		if ((n > 3 && strcmp(p + n - 3, ".js") == 0) || (n > 4 && strcmp(p + n - 4, ".css") == 0)) {
			serve_asset(p + 8, out);
			return;
		}
	}
	if (!authorized(v, rq)) {
		if (api)
			api_error(out, 401, "unauthorized", "no viewer session",
				  "open the login URL perflens-mcp printed, or run perflens viewer-url");
		else
			page_text(out, 401, "login needed",
				  "Open the login URL that perflens-mcp printed at start, or run "
				  "<code>perflens viewer-url</code> for a new one.");
		return;
	}
	if (!api && strcmp(rq->method, "GET") != 0 && strcmp(rq->method, "HEAD") != 0)
		api_error(out, 405, "usage", "the viewer's pages are read with GET", "use GET");
	else if (strcmp(p, "/viewer/api/call") == 0)
		serve_call(v, rq, out);
	else if (strncmp(p, "/viewer/api/file/", 17) == 0)
		serve_file(v, p + 17, out);
	else if (strcmp(p, "/viewer/api/wait") == 0)
		serve_wait(v, rq, out);
	else if (api)
		api_error(out, 404, "not_found", "no such API path", "POST /viewer/api/call or GET /viewer/api/file/...");
	else if (strcmp(p, "/viewer/") == 0)
		serve_asset("index.html", out);
	else
		serve_asset(p + 8, out);
}
