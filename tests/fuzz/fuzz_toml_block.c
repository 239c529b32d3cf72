/* fuzz_toml_block.c - libFuzzer harness for the Codex block finder of
 * `perflens init`/`detach` (setup_toml_block, tools/cli/project_setup.c):
 * over any bytes of a .codex/config.toml, a block found lies inside the
 * input, opens with the begin marker line and closes with the end marker
 * line.
 *
 *   clang -g -O1 -fsanitize=fuzzer,address,undefined -Itools/core -I. \
 *     tests/fuzz/fuzz_toml_block.c tools/cli/project_setup.c tools/cli/agent_setup.c \
 *     (libperflens's objects) -ljansson -lnettle ...
 */
// fuzz-link: tools/cli/project_setup.c tools/cli/agent_setup.c
#include "tools/cli/agent_setup_int.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* project_setup.c's error exit lives in perflens.c; not needed here. */
int cli_fail(const struct pl_error *e)
{
	(void)e;
	return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const size_t bl = strlen(SETUP_TOML_BEGIN), el = strlen(SETUP_TOML_END);
	char *copy = malloc(size ? size : 1);  /* exact size: a read past it is caught */
	struct setup_block b;

	memcpy(copy, data, size);
	if (setup_toml_block(copy, size, &b) == SETUP_BLOCK_FOUND) {
		const char *blk = copy + b.at;
		size_t n = b.len;

		if (b.at + n > size || n < bl + el + 1 || memcmp(blk, SETUP_TOML_BEGIN "\n", bl + 1) != 0)
			abort();
		if (blk[n - 1] == '\n')
			n--;
		if (memcmp(blk + n - el, SETUP_TOML_END, el) != 0 || (n > el && blk[n - el - 1] != '\n'))
			abort();
	}
	free(copy);
	return 0;
}
