/* fail.c - the command line's error exit (agent_setup.h's cli_fail): one
 * JSON object on stderr, the exit code from error.c's table.  Apart from
 * perflens.c's main, so that the commands it dispatches to (doctor,
 * status, init, the agent setups) report errors without needing it. */
#include "agent_setup.h"
#include "tools/registry.h"

#include <stdio.h>
#include <stdlib.h>

int cli_fail(const struct pl_error *e)
{
	json_t *o = json_pack("{s:o}", "error", tool_error_json_new(e));
	char *s = json_dumps(o, JSON_COMPACT);

	fprintf(stderr, "%s\n", s);
	free(s);
	json_decref(o);
	return pl_err_exit_code(e->code);
}
