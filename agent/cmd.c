/* cmd.c - the command decoder of cmd.h: a strict parse, then the three
 * members looked up in the top-level object only. */
#include "cmd.h"

#include <string.h>

int cmd_id_valid(const char *id)
{
	size_t n = 0;
	for (; id[n]; n++) {
		char c = id[n];
		if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
		      c == '_' || c == '.' || c == ':' || c == '-'))
			return 0;
	}
	return n >= 1 && n <= 63;
}

enum cmd_result cmd_decode(struct cmd *c, const char *buf, size_t len)
{
	memset(c, 0, sizeof *c);
	if (json_parse(&c->doc, buf, len, CMD_MAX_NODES, 0) < 0)
		return CMD_NOT_JSON;
	const struct json_node *root = json_root(&c->doc);
	const struct json_node *id = json_get(&c->doc, root, "id");
	const struct json_node *name = json_get(&c->doc, root, "cmd");
	const struct json_node *args = json_get(&c->doc, root, "args");
	if (id && id->type == JSON_STRING && cmd_id_valid(id->str))
		c->id = id->str;
	else
		c->id_invalid = 1;
	if (!name || name->type != JSON_STRING)
		return CMD_NO_NAME;
	c->name = name->str;
	if (args && args->type != JSON_OBJECT && args->type != JSON_NULL)
		return CMD_BAD_ARGS;
	c->args = args && args->type == JSON_OBJECT ? args : NULL;
	return CMD_OK;
}

void cmd_release(struct cmd *c)
{
	json_free(&c->doc);
}
