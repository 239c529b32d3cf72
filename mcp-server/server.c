/* server.c - JSON-RPC dispatch and the MCP methods (see server.h).
 *
 * One table maps method names to handlers.  Requests get exactly one
 * response with their id echoed as sent; notifications get none; unknown
 * methods get MCP_RPC_METHOD_NOT_FOUND.  Tool failures are results with isError true and a
 * message that names the fix; protocol misuse is a JSON-RPC error.  The
 * same JSON that goes in structuredContent goes, compact, in one text block
 * for clients that ignore structured content.
 */
#include "server.h"
#include "calls.h"
#include "catalog.h"
#include "base/version.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TOOLS_PAGE 20

static const char *const legacy_versions[] = {"2025-11-25", "2025-06-18", MCP_VERSION_2025_03_26};

bool mcp_version_supported(const char *v)
{
	if (!v)
		return false;
	if (strcmp(v, MCP_STATELESS_VERSION) == 0)
		return true;
	for (size_t i = 0; i < PL_ARRAY_LEN(legacy_versions); i++)
		if (strcmp(v, legacy_versions[i]) == 0)
			return true;
	return false;
}

void mcp_server_init(struct mcp_server *s, const struct mcp_config *cfg)
{
	memset(s, 0, sizeof(*s));
	s->cfg = *cfg;
	pthread_mutex_init(&s->lock, NULL);
}

void mcp_server_release(struct mcp_server *s)
{
	free(s->calls);
	pthread_mutex_destroy(&s->lock);
}

/* ------------------------------------------------------------ request */

struct request {
	struct mcp_server *s;
	struct mcp_session *sess;
	const struct mcp_sink *sink;
	json_t *id;          /* borrowed; NULL for notifications */
	json_t *params;      /* borrowed; an object (maybe empty) */
	bool stateless;      /* 2026-07-28 request: add resultType */
};

static void reply(struct request *r, json_t *result_new)
{
	mcp_send_result_new(r->sink, r->id, r->stateless, result_new);
}

static json_t *capabilities(void)
{
	return json_pack("{s:{s:b},s:{s:b,s:b},s:{s:b},s:{},s:{}}",
			 "tools", "listChanged", 0,
			 "resources", "subscribe", 0, "listChanged", 0,
			 "prompts", "listChanged", 0,
			 "logging", "completions");
}

static const char instructions[] =
	"PerfLens analyzes Linux profiles with evidence first. Start with analyze_profile(path), "
	"then list_hotspots, get_hotspot and get_call_paths; a hotspot is an observation, not a "
	"root cause. Events are never merged: name one when a profile holds several. Results are "
	"paged: pass next_cursor back unchanged. Errors say how to fix the call.";

/* 2025-03-26's Implementation has a name and a version, no title. */
static json_t *server_info(const char *version)
{
	if (mcp_version_before_structured(version))
		return json_pack("{s:s,s:s}", "name", "perflens-mcp", "version", PL_VERSION);
	return json_pack("{s:s,s:s,s:s}", "name", "perflens-mcp", "title", "PerfLens",
			 "version", PL_VERSION);
}

static void do_initialize(struct request *r)
{
	const char *asked = json_string_value(json_object_get(r->params, "protocolVersion"));
	const char *version = MCP_LATEST_LEGACY;

	for (size_t i = 0; asked && i < PL_ARRAY_LEN(legacy_versions); i++)
		if (strcmp(asked, legacy_versions[i]) == 0)
			version = legacy_versions[i];
	snprintf(r->sess->version, sizeof(r->sess->version), "%s", version);
	r->sess->initialized = true;
	mcp_send_result_new(r->sink, r->id, false, json_pack("{s:s,s:o,s:o,s:s}",
		"protocolVersion", version, "capabilities", capabilities(),
		"serverInfo", server_info(version), "instructions", instructions));
}

static void do_discover(struct request *r)
{
	json_t *versions = json_pack("[s]", MCP_STATELESS_VERSION);

	for (size_t i = 0; i < PL_ARRAY_LEN(legacy_versions); i++)
		json_array_append_new(versions, json_string(legacy_versions[i]));
	mcp_send_result_new(r->sink, r->id, false, json_pack("{s:s,s:o,s:o,s:o,s:s}",
		"resultType", "complete", "supportedVersions", versions,
		"capabilities", capabilities(), "serverInfo", server_info(NULL),
		"instructions", instructions));
}

static void do_ping(struct request *r)
{
	reply(r, json_object());
}

static void do_set_level(struct request *r)
{
	const char *level = json_string_value(json_object_get(r->params, "level"));

	for (int i = 0; level && mcp_log_level_name((enum mcp_log_level)i); i++)
		if (strcmp(level, mcp_log_level_name((enum mcp_log_level)i)) == 0) {
			r->sess->log_level = (enum mcp_log_level)i;
			r->sess->log_level_set = true;
			reply(r, json_object());
			return;
		}
	mcp_send_error(r->sink, r->id, MCP_RPC_INVALID_PARAMS, "invalid log level",
		   json_pack("{s:s}", "hint", "use debug, info, notice, warning, error, critical, alert or emergency"));
}

/* The rows tools/list shows: every one, less the device tools unless
 * the agent link runs and the fleet tools unless a fleet store is set
 * (they would only cost a model's reading). */
static size_t visible_tools(const struct mcp_config *cfg, size_t *rows)
{
	size_t n = 0;

	for (size_t i = 0; i < tool_count; i++)
		if ((!(tool_table[i].needs & TOOL_DEVICE) || cfg->ctx.device_link) &&
		    (!(tool_table[i].needs & TOOL_FLEET) || cfg->ctx.fleet.url))
			rows[n++] = i;
	return n;
}

/* tools/list: every registry row, its definition from schemas/. */
static void do_tools_list(struct request *r)
{
	const char *cursor = json_string_value(json_object_get(r->params, "cursor"));
	/* As many rows as the registry has: a fixed array would overflow
	 * silently once the table grows past it. */
	size_t *rows = pl_xcalloc(tool_count ? tool_count : 1, sizeof(*rows));
	size_t start = 0, end, nrows = visible_tools(&r->s->cfg, rows);
	json_t *tools = json_array();
	struct pl_error err;
	char next[64];

	if (json_object_get(r->params, "cursor") && (!cursor ||
	    tool_cursor_parse(cursor, "tools/list", &start, &err) || start >= nrows)) {
		json_decref(tools);
		free(rows);
		mcp_send_error(r->sink, r->id, MCP_RPC_INVALID_PARAMS, "invalid cursor",
			   json_pack("{s:s}", "hint", "pass nextCursor exactly as tools/list returned it, or omit it"));
		return;
	}
	end = start + TOOLS_PAGE < nrows ? start + TOOLS_PAGE : nrows;
	for (size_t k = start; k < end; k++) {
		size_t i = rows[k];
		json_t *d = tool_definition(&tool_table[i]);
		json_t *t = json_pack("{s:s,s:O,s:O,s:O,s:O,s:O}",
			"name", tool_table[i].name, "title", json_object_get(d, "title"),
			"description", json_object_get(d, "description"),
			"inputSchema", json_object_get(d, "inputSchema"),
			"outputSchema", json_object_get(d, "outputSchema"),
			"annotations", json_object_get(d, "annotations"));
		/* 2025-03-26 knows neither a tool's title nor its outputSchema
		 * (the annotations carry the title there). */
		if (!r->stateless && mcp_version_before_structured(r->sess->version)) {
			json_object_del(t, "title");
			json_object_del(t, "outputSchema");
		}
		json_array_append_new(tools, t);
	}
	free(rows);
	{
		json_t *res = json_pack("{s:o}", "tools", tools);
		if (end < nrows) {
			tool_cursor_make(next, sizeof(next), end, "tools/list");
			json_object_set_new(res, "nextCursor", json_string(next));
		}
		reply(r, res);
	}
}

/* A tool call that cannot start: an isError result (not a protocol
 * error), so the model reads the message and can fix its arguments. */
static void reply_tool_error(struct request *r, const struct pl_error *err)
{
	reply(r, mcp_tool_error_new(err));
}

static struct mcp_call *do_tools_call(struct request *r)
{
	const char *name = json_string_value(json_object_get(r->params, "name"));
	json_t *args = json_object_get(r->params, "arguments");
	const struct tool_def *t = name ? tool_find(name) : NULL;
	struct pl_error err;
	json_t *copy;
	struct mcp_call *c;

	if (!t) {
		struct pl_buf names = {0};
		for (size_t i = 0; i < tool_count; i++)
			pl_buf_addf(&names, "%s%s", i ? ", " : "", tool_table[i].name);
		mcp_send_error(r->sink, r->id, MCP_RPC_INVALID_PARAMS, "unknown tool",
			   json_pack("{s:s,s:s}", "tool", name ? name : "", "valid", names.data));
		pl_buf_release(&names);
		return NULL;
	}
	copy = args ? json_deep_copy(args) : json_object();
	if (tool_check_args(t, copy, &err)) {
		json_decref(copy);
		reply_tool_error(r, &err);
		return NULL;
	}
	c = mcp_call_start(r->s, r->sess, r->sink, r->id, t, copy, r->stateless,
			   json_object_get(json_object_get(r->params, "_meta"), "progressToken"));
	json_decref(copy);
	return c;
}

static void do_cancelled(struct request *r)
{
	json_t *id = json_object_get(r->params, "requestId");

	if (id)
		mcp_call_cancel(r->s, r->sess, id, r->stateless);
}

static void do_resources_list(struct request *r)
{
	json_t *res = NULL, *err_data = NULL;

	if (catalog_list(&r->s->cfg.ctx, json_string_value(json_object_get(r->params, "cursor")),
			 json_object_get(r->params, "cursor") != NULL, &res, &err_data))
		mcp_send_error(r->sink, r->id, MCP_RPC_INVALID_PARAMS, "invalid cursor", err_data);
	else
		reply(r, res);
}

static void do_resources_read(struct request *r)
{
	json_t *res = NULL, *err_data = NULL;
	int code = catalog_read(&r->s->cfg.ctx, json_string_value(json_object_get(r->params, "uri")),
				&res, &err_data);

	if (code)
		mcp_send_error(r->sink, r->id, code, code == MCP_RPC_RESOURCE_NOT_FOUND ? "resource not found" : "invalid resource request",
			   err_data);
	else
		reply(r, res);
}

static void do_templates_list(struct request *r)
{
	reply(r, catalog_templates());
}

static void do_prompts_list(struct request *r)
{
	reply(r, catalog_prompts());
}

static void do_prompts_get(struct request *r)
{
	json_t *res = NULL, *err_data = NULL;

	if (catalog_prompt_get(json_string_value(json_object_get(r->params, "name")),
			       json_object_get(r->params, "arguments"), &res, &err_data))
		mcp_send_error(r->sink, r->id, MCP_RPC_INVALID_PARAMS, "invalid prompt request", err_data);
	else
		reply(r, res);
}

static void do_complete(struct request *r)
{
	reply(r, catalog_complete(&r->s->cfg.ctx, json_object_get(r->params, "ref"),
				  json_object_get(r->params, "argument"),
				  json_object_get(r->params, "context")));
}

static void do_nothing(struct request *r)
{
	(void)r;
}

struct method {
	const char *name;
	void (*run)(struct request *r);
	struct mcp_call *(*run_async)(struct request *r);
	bool notification;    /* expects no response */
};

static const struct method methods[] = {
	{"initialize", do_initialize, NULL, false},
	{"server/discover", do_discover, NULL, false},
	{"ping", do_ping, NULL, false},
	{"logging/setLevel", do_set_level, NULL, false},
	{"tools/list", do_tools_list, NULL, false},
	{"tools/call", NULL, do_tools_call, false},
	{"resources/list", do_resources_list, NULL, false},
	{"resources/read", do_resources_read, NULL, false},
	{"resources/templates/list", do_templates_list, NULL, false},
	{"prompts/list", do_prompts_list, NULL, false},
	{"prompts/get", do_prompts_get, NULL, false},
	{"completion/complete", do_complete, NULL, false},
	{"notifications/initialized", do_nothing, NULL, true},
	{"notifications/cancelled", do_cancelled, NULL, true},
	{"notifications/roots/list_changed", do_nothing, NULL, true},
	{"notifications/progress", do_nothing, NULL, true},
};

/* A 2026-07-28 request carries its version in _meta; an unknown version
 * there is MCP_RPC_UNSUPPORTED_VERSION with the versions we support. */
static bool check_stateless(struct request *r, const char *method)
{
	json_t *meta = json_object_get(r->params, "_meta");
	const char *v = json_string_value(json_object_get(meta, "io.modelcontextprotocol/protocolVersion"));

	if (!v || strcmp(method, "initialize") == 0 || strcmp(method, "server/discover") == 0)
		return true;
	if (strcmp(v, MCP_STATELESS_VERSION) == 0) {
		r->stateless = true;
		return true;
	}
	if (r->id)
		mcp_send_error(r->sink, r->id, MCP_RPC_UNSUPPORTED_VERSION, "Unsupported protocol version",
			   json_pack("{s:[s,s,s,s],s:s}", "supported", MCP_STATELESS_VERSION,
				     legacy_versions[0], legacy_versions[1], legacy_versions[2], "requested", v));
	return false;
}

struct mcp_call *mcp_handle(struct mcp_server *s, struct mcp_session *sess,
			    json_t *msg, const struct mcp_sink *sink)
{
	json_t *id = json_object_get(msg, "id");
	json_t *jmethod = json_object_get(msg, "method");
	const char *method = json_string_value(jmethod);
	struct request r = {s, sess, sink, id, NULL, false};
	json_t *empty = json_object();
	struct mcp_call *call = NULL;

	if (!json_is_object(msg) || !json_is_string(json_object_get(msg, "jsonrpc")) ||
	    strcmp(json_string_value(json_object_get(msg, "jsonrpc")), "2.0") != 0 ||
	    (id && !json_is_string(id) && !json_is_integer(id) && !json_is_real(id))) {
		mcp_send_error(sink, json_is_string(id) || json_is_number(id) ? id : NULL, MCP_RPC_INVALID_REQUEST,
			   "invalid request: expected a JSON-RPC 2.0 object", NULL);
		goto out;
	}
	if (!jmethod) {
		/* A response from the client to something we never ask; ignore. */
		goto out;
	}
	if (!method) {
		mcp_send_error(sink, id, MCP_RPC_INVALID_REQUEST, "invalid request: method must be a string", NULL);
		goto out;
	}
	r.params = json_object_get(msg, "params");
	if (r.params && !json_is_object(r.params)) {
		if (id)
			mcp_send_error(sink, id, MCP_RPC_INVALID_PARAMS, "params must be an object", NULL);
		goto out;
	}
	if (!r.params)
		r.params = empty;
	if (!check_stateless(&r, method))
		goto out;
	for (size_t i = 0; i < PL_ARRAY_LEN(methods); i++) {
		if (strcmp(methods[i].name, method) != 0)
			continue;
		if (methods[i].notification || id) {
			if (methods[i].run_async)
				call = methods[i].run_async(&r);
			else
				methods[i].run(&r);
		}
		goto out;
	}
	if (id)
		mcp_send_error(sink, id, MCP_RPC_METHOD_NOT_FOUND, "method not found",
			   json_pack("{s:s}", "method", method));
out:
	json_decref(empty);
	return call;
}

static size_t depth_of(json_t *v)
{
	size_t max = 0, d, i;
	const char *k;
	json_t *c;

	if (json_is_array(v)) {
		json_array_foreach(v, i, c)
			if ((d = depth_of(c)) > max)
				max = d;
		return max + 1;
	}
	if (json_is_object(v)) {
		json_object_foreach(v, k, c)
			if ((d = depth_of(c)) > max)
				max = d;
		return max + 1;
	}
	return 0;
}

json_t *mcp_parse(const char *text, size_t len, const struct mcp_sink *sink)
{
	json_error_t je;
	json_t *msg = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);

	if (!msg) {
		/* jansson gives up on its own past depth 2048, before our
		 * check below can run; such a message is deeper than
		 * MCP_MAX_DEPTH too, so it gets the same answer (without its
		 * id, which was never read), not a syntax error. */
		if (strstr(je.text, "maximum parsing depth"))
			mcp_send_error(sink, NULL, MCP_RPC_INVALID_REQUEST, "message nested too deeply",
				   json_pack("{s:i}", "max_depth", MCP_MAX_DEPTH));
		else
			mcp_send_error(sink, NULL, MCP_RPC_PARSE_ERROR, "parse error",
				   json_pack("{s:s,s:i}", "detail", je.text, "position", je.position));
		return NULL;
	}
	if (json_is_array(msg)) {
		mcp_send_error(sink, NULL, MCP_RPC_INVALID_REQUEST, "batches are not supported: send one message at a time", NULL);
		json_decref(msg);
		return NULL;
	}
	if (depth_of(msg) > MCP_MAX_DEPTH) {
		json_t *id = json_object_get(msg, "id");
		mcp_send_error(sink, json_is_string(id) || json_is_integer(id) ? id : NULL, MCP_RPC_INVALID_REQUEST,
			   "message nested too deeply", json_pack("{s:i}", "max_depth", MCP_MAX_DEPTH));
		json_decref(msg);
		return NULL;
	}
	return msg;
}

struct mcp_call *mcp_handle_text(struct mcp_server *s, struct mcp_session *sess,
				 const char *text, size_t len,
				 const struct mcp_sink *sink)
{
	json_t *msg = mcp_parse(text, len, sink);
	struct mcp_call *call;

	if (!msg)
		return NULL;
	call = mcp_handle(s, sess, msg, sink);
	json_decref(msg);
	return call;
}
