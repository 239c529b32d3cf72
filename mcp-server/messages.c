/* messages.c - what the server sends (see server.h): results, JSON-RPC
 * errors, log notifications and a tool's error as a CallToolResult, and
 * which protocol versions it speaks.  Below the method dispatch
 * (server.c) and the tool calls (calls.c), which both answer through it.
 */
#include "server.h"
#include "base/version.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool mcp_version_before_structured(const char *v)
{
	return v && strcmp(v, MCP_VERSION_2025_03_26) == 0;
}


/* ----------------------------------------------------------- messages */

static void send_result_new(const struct mcp_sink *sink, json_t *id, json_t *result)
{
	json_t *msg = json_pack("{s:s,s:O,s:o}", "jsonrpc", "2.0", "id", id, "result", result);
	sink->send(sink->opaque, msg);
	json_decref(msg);
}

void mcp_send_error(const struct mcp_sink *sink, json_t *id, int code,
		    const char *message, json_t *data_new)
{
	json_t *err = json_pack("{s:i,s:s}", "code", code, "message", message);
	json_t *msg;

	if (data_new)
		json_object_set_new(err, "data", data_new);
	msg = json_pack("{s:s,s:O,s:o}", "jsonrpc", "2.0", "id", id ? id : json_null(), "error", err);
	sink->send(sink->opaque, msg);
	json_decref(msg);
}

static const char *const level_names[] = {
	"debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"};

const char *mcp_log_level_name(enum mcp_log_level level)
{
	return (size_t)level < PL_ARRAY_LEN(level_names) ? level_names[level] : NULL;
}

void mcp_log(const struct mcp_session *sess, const struct mcp_sink *sink,
	     enum mcp_log_level level, const char *logger, const char *fmt, ...)
{
	char text[512];
	va_list ap;
	json_t *msg;

	if (!sess || !sess->log_level_set || level < sess->log_level)
		return;
	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	msg = json_pack("{s:s,s:s,s:{s:s,s:s,s:s}}", "jsonrpc", "2.0",
			"method", "notifications/message", "params",
			"level", level_names[level], "logger", logger, "data", text);
	sink->send(sink->opaque, msg);
	json_decref(msg);
}

void mcp_send_result_new(const struct mcp_sink *sink, json_t *id, bool stateless,
			 json_t *result_new)
{
	if (stateless)
		json_object_set_new(result_new, "resultType", json_string("complete"));
	send_result_new(sink, id, result_new);
}

json_t *mcp_tool_error_new(const struct pl_error *err)
{
	char *text = pl_error_text(err);
	json_t *result = json_pack("{s:[{s:s,s:s}],s:b,s:{s:o}}", "content", "type", "text",
				   "text", text, "isError", 1, "_meta", "perflens/error",
				   tool_error_json_new(err));

	free(text);
	return result;
}
