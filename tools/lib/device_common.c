/* device_common.c - the device tools' shared parts (device_common.h). */
#include "device_common.h"
#include "collectors/agentlink/channel.h"
#include "collectors/collect.h"

#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define STATE_MAX (1u << 20)

enum pl_err dev_require_control(const struct tool_ctx *ctx, struct pl_error *err)
{
	if (!ctx->allow_device_control)
		return pl_fail(err, PL_ERR_PATH,
			       "restart perflens-mcp with --allow-device-control --artifact-root DIR --allow-writes "
			       "(and --agent-listen IPV4:PORT for agents that dial in)",
			       "device control refused: the server was not started with --allow-device-control");
	if (!ctx->artifact_root || !ctx->allow_writes)
		return pl_fail(err, PL_ERR_PATH, "restart perflens-mcp with --artifact-root DIR --allow-writes",
			       "device control refused: the server has no writable artifact root");
	return PL_OK;
}

enum pl_err dev_require_phrases(json_t *args, bool pid, struct pl_error *err)
{
	const char *auth = json_string_value(json_object_get(args, "authorization"));
	const char *pid_auth = json_string_value(json_object_get(args, "pid_authorization"));

	if (!auth || strcmp(auth, PL_COLLECT_PHRASE) != 0)
		return pl_fail(err, PL_ERR_PATH,
			       "ask the user whether you may profile this device; only the user gives the phrase "
			       "(authorization), never fill it in yourself",
			       "capture refused: the call lacks the authorization phrase (argument authorization)");
	if (pid && (!pid_auth || strcmp(pid_auth, PL_PID_ATTACH_PHRASE) != 0))
		return pl_fail(err, PL_ERR_PATH,
			       "ask the user whether you may attach to this process; only the user gives the phrase "
			       "(pid_authorization), never fill it in yourself",
			       "capture refused: the call lacks the pid attach phrase (argument pid_authorization)");
	return PL_OK;
}

enum pl_err dev_request(const struct tool_ctx *ctx, const char *op, const char *device,
			json_t *args_new, unsigned timeout_ms, json_t **answer, struct pl_error *err)
{
	json_t *req = json_pack("{s:s,s:o}", "op", op, "args", args_new ? args_new : json_object());
	json_t *a = NULL;
	enum pl_err rc;

	*answer = NULL;
	if (device)
		json_object_set_new(req, "device", json_string(device));
	if (!ctx->artifact_root) {
		json_decref(req);
		return pl_fail(err, PL_ERR_USAGE, "pass --artifact-root DIR (the one the server with the agent link uses)",
			       "no artifact root: the agent link's files live there");
	}
	rc = coll_channel_call(ctx->artifact_root, req, timeout_ms, &a, err);
	json_decref(req);
	if (rc)
		return rc;
	if (!json_is_true(json_object_get(a, "ok"))) {
		const char *e = json_string_value(json_object_get(a, "error"));
		const char *hint = json_string_value(json_object_get(a, "hint"));
		const char *code = json_string_value(json_object_get(a, "code"));
		enum pl_err c = code ? pl_err_from_name(code) : PL_ERR_EXTERNAL;
		/* The link names a code where the failure is not the device's. */
		if (c == PL_OK)
			c = PL_ERR_EXTERNAL;
		pl_fail(err, c, hint && *hint ? hint : "call list_devices to see the device's state",
			"%s: %s", op, e ? e : "the device refused");
		json_decref(a);
		return c;
	}
	*answer = a;
	return PL_OK;
}

/* Whether the link holds the device now (any state but rejected,
 * disconnected or unknown). */
static bool device_linked(json_t *d)
{
	const char *state = json_string_value(json_object_get(d, "state"));

	return state && (strcmp(state, "connected") == 0 || strcmp(state, "profiling") == 0 ||
			 strcmp(state, "paused") == 0 || strcmp(state, "handshake") == 0);
}

/* Linked devices first, then the ones the link held, each group by id:
 * a server that has seen many devices keeps the ones an agent can act on
 * on the first page (and on the viewer's Live page). */
static int cmp_device(const void *a, const void *b)
{
	json_t *x = *(json_t *const *)a, *y = *(json_t *const *)b;
	bool lx = device_linked(x), ly = device_linked(y);

	if (lx != ly)
		return lx ? -1 : 1;
	return strcmp(json_string_value(json_object_get(x, "device")),
		      json_string_value(json_object_get(y, "device")));
}

json_t *dev_list_devices(const struct tool_ctx *ctx)
{
	json_t *out = json_array(), **items = NULL;
	char dir[4200], rel[300];
	size_t n = 0, cap = 0;
	struct dirent *de;
	DIR *d;

	if (!ctx->artifact_root)
		return out;
	snprintf(dir, sizeof(dir), "%s/%s", ctx->artifact_root, COLL_DEVICES_DIR);
	if (!(d = opendir(dir)))
		return out;
	while ((de = readdir(d))) {
		size_t len = strlen(de->d_name);
		json_t *j;
		if (len < 6 || strcmp(de->d_name + len - 5, ".json") != 0 || strcmp(de->d_name, "link.json") == 0 ||
		    de->d_name[0] == '.')
			continue;
		snprintf(rel, sizeof(rel), "%s/%s", COLL_DEVICES_DIR, de->d_name);
		j = coll_read_json(ctx->artifact_root, rel, STATE_MAX);
		if (!json_is_string(json_object_get(j, "device"))) {
			json_decref(j);
			continue;
		}
		PL_GROW(items, cap, n + 1);
		items[n++] = j;
	}
	closedir(d);
	if (n)
		qsort(items, n, sizeof(*items), cmp_device);
	for (size_t i = 0; i < n; i++)
		json_array_append_new(out, items[i]);
	free(items);
	return out;
}

enum pl_err dev_load_device(const struct tool_ctx *ctx, const char *device, json_t **out,
			    struct pl_error *err)
{
	char rel[300];

	*out = NULL;
	if (ctx->artifact_root && coll_id_ok(device)) {
		snprintf(rel, sizeof(rel), "%s/%s.json", COLL_DEVICES_DIR, device);
		*out = coll_read_json(ctx->artifact_root, rel, STATE_MAX);
	}
	if (!*out)
		return pl_fail(err, PL_ERR_USAGE, "call list_devices for the devices linked now",
			       "no device '%s'", device ? device : "");
	return PL_OK;
}

json_t *dev_load_session(const struct tool_ctx *ctx, const char *session)
{
	char rel[300];

	if (!ctx->artifact_root || !coll_id_ok(session))
		return NULL;
	snprintf(rel, sizeof(rel), "%s/%s/metadata.json", COLL_SESSIONS_DIR, session);
	return coll_read_json(ctx->artifact_root, rel, 16u << 20);
}

void dev_session_uri(const char *session, char *out, size_t cap)
{
	snprintf(out, cap, "perflens://artifacts/%s/%s", COLL_SESSIONS_DIR, session);
}

/* Does the session's folder hold a chunk (chunk_*) yet? */
static bool session_has_chunks(const struct tool_ctx *ctx, const char *session)
{
	char dir[PATH_MAX];
	struct dirent *e;
	DIR *d;
	bool found = false;

	if (!ctx->artifact_root || !coll_id_ok(session))
		return false;
	snprintf(dir, sizeof(dir), "%s/%s/%s", ctx->artifact_root, COLL_SESSIONS_DIR, session);
	if (!(d = opendir(dir)))
		return false;
	while (!found && (e = readdir(d)))
		found = strncmp(e->d_name, "chunk_", 6) == 0;
	closedir(d);
	return found;
}

json_t *dev_analyze_step(const struct tool_ctx *ctx, const char *session, const char *why)
{
	char uri[300];

	if (!session_has_chunks(ctx, session))
		return NULL;
	dev_session_uri(session, uri, sizeof(uri));
	return tool_next_step("analyze_profile", json_pack("{s:s}", "path", uri), why);
}

json_t *dev_page_slice(json_t *all, struct tool_page *pg)
{
	json_t *page = json_array();

	tool_page_bound(pg, json_array_size(all));
	for (size_t i = pg->start; i < pg->end; i++)
		json_array_append(page, json_array_get(all, i));
	return page;
}

json_t *dev_typed(json_t *obj, const char *key, enum dev_kind kind)
{
	json_t *v = json_object_get(obj, key), *x;
	size_t i;

	switch (kind) {
	case DEV_STRING:
		return json_is_string(v) ? v : NULL;
	case DEV_INT:
		return json_is_integer(v) ? v : NULL;
	case DEV_NUMBER:
		return json_is_number(v) ? v : NULL;
	case DEV_BOOL:
		return json_is_boolean(v) ? v : NULL;
	case DEV_OBJECT:
		return json_is_object(v) ? v : NULL;
	case DEV_ARRAY:
		return json_is_array(v) ? v : NULL;
	case DEV_STRINGS:
		if (!json_is_array(v))
			return NULL;
		json_array_foreach(v, i, x)
			if (!json_is_string(x))
				return NULL;
		return v;
	}
	return NULL;
}

json_t *dev_typed_or_null(json_t *obj, const char *key, enum dev_kind kind)
{
	json_t *v = dev_typed(obj, key, kind);

	return v ? json_incref(v) : json_null();
}

/* The link's states (collectors/agentlink/link.c), the schema's enum. */
static bool dev_state_known(const char *state)
{
	static const char *const known[] = {
		"handshake", "connected", "rejected", "profiling", "paused", "disconnected",
	};

	for (size_t i = 0; state && i < PL_ARRAY_LEN(known); i++)
		if (strcmp(state, known[i]) == 0)
			return true;
	return false;
}

json_t *dev_brief(json_t *state)
{
	static const struct {
		const char *key;
		enum dev_kind kind;
	} keep[] = {
		{"device", DEV_STRING}, {"address", DEV_STRING}, {"port", DEV_INT},
		{"direction", DEV_STRING}, {"state", DEV_STRING}, {"reason", DEV_STRING},
		{"session", DEV_STRING}, {"chunks", DEV_INT}, {"samples", DEV_INT},
		{"text_bytes", DEV_INT}, {"wire_bytes", DEV_INT}, {"frames_dropped", DEV_INT},
		{"metrics_frames", DEV_INT}, {"last_chunk_time", DEV_STRING}, {"connected_at", DEV_STRING},
		{"legacy", DEV_BOOL}, {"features", DEV_STRINGS}, {"platform", DEV_OBJECT},
		{"capabilities", DEV_OBJECT}, {"capture", DEV_OBJECT}, {"last_drop", DEV_STRING},
		{"write_errors", DEV_OBJECT}, {"last_session", DEV_STRING}, {"session_chunks", DEV_INT},
	};
	json_t *b = json_object();

	for (size_t i = 0; i < PL_ARRAY_LEN(keep); i++)
		json_object_set_new(b, keep[i].key, dev_typed_or_null(state, keep[i].key, keep[i].kind));
	json_object_set_new(b, "agent_version",
			    dev_typed_or_null(json_object_get(state, "hello"), "agent_version", DEV_STRING));
	json_object_set_new(b, "state", dev_state(state));
	/* Between captures the open session holds metrics only (they wait in
	 * the next capture's session): no result names it as the device's
	 * session, so nothing points a next step at an empty one (the finished
	 * capture's is last_session). */
	const char *st = json_string_value(json_object_get(b, "state"));
	if (json_integer_value(json_object_get(b, "session_chunks")) == 0 &&
	    !(st && (strcmp(st, "profiling") == 0 || strcmp(st, "paused") == 0)))
		json_object_set_new(b, "session", json_null());
	return b;
}

json_t *dev_state(json_t *state)
{
	json_t *v = dev_typed(state, "state", DEV_STRING);

	return v && dev_state_known(json_string_value(v)) ? json_incref(v) : json_null();
}
