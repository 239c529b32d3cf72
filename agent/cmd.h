/* cmd.h - decoding one command frame (flag 2): {"id", "cmd", "args"}.
 * Pure (no I/O), so the fuzz harness drives it as the link does. */
#ifndef AGENT_CMD_H
#define AGENT_CMD_H

#include <stddef.h>

#include "json.h"

#define CMD_MAX_NODES 4096

struct cmd {
	struct json_doc doc;
	const char *id;                /* NULL when absent or invalid */
	int id_invalid;                /* present (or absent) but not [A-Za-z0-9_.:-]{1,63} */
	const char *name;              /* the cmd */
	const struct json_node *args;  /* an object, or NULL when absent */
};

enum cmd_result {
	CMD_OK = 0,          /* name set; answer it (id_invalid: with "invalid id") */
	CMD_NOT_JSON = -1,   /* not a JSON object: drop the frame, keep the link */
	CMD_NO_NAME = -2,    /* no cmd string: dropped silently, as the seed does */
	CMD_BAD_ARGS = -3,   /* args present but not an object: answer the error */
};

enum cmd_result cmd_decode(struct cmd *c, const char *buf, size_t len);
void cmd_release(struct cmd *c);
int cmd_id_valid(const char *id);

#endif
