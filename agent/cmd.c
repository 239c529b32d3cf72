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
	if (aj_parse(&c->doc, buf, len, CMD_MAX_NODES, 0) < 0)
		return CMD_NOT_JSON;
	const struct json_node *root = aj_root(&c->doc);
	const struct json_node *id = aj_get(&c->doc, root, "id");
	const struct json_node *name = aj_get(&c->doc, root, "cmd");
	const struct json_node *args = aj_get(&c->doc, root, "args");
	if (id && id->type == AJ_STRING && cmd_id_valid(id->str))
		c->id = id->str;
	else
		c->id_invalid = 1;
	if (!name || name->type != AJ_STRING)
		return CMD_NO_NAME;
	c->name = name->str;
	if (args && args->type != AJ_OBJECT && args->type != AJ_NULL)
		return CMD_BAD_ARGS;
	c->args = args && args->type == AJ_OBJECT ? args : NULL;
	return CMD_OK;
}

void cmd_release(struct cmd *c)
{
	aj_free(&c->doc);
}
