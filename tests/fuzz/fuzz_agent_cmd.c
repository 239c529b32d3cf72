/* fuzz_agent_cmd.c - libFuzzer harness for the device agent's command
 * decoder (agent/cmd.c): a flag-2 payload as a server would send it; the
 * decoded id, when there is one, must be a valid id. */
// fuzz-link: agent/cmd.c agent/json.c
#include <stddef.h>
#include <stdint.h>

#include "agent/cmd.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cmd c;
	enum cmd_result r = cmd_decode(&c, (const char *)data, size);
	if (r == CMD_OK && c.id && !cmd_id_valid(c.id))
		__builtin_trap();
	if (r == CMD_OK && !c.name)
		__builtin_trap();
	cmd_release(&c);
	return 0;
}
