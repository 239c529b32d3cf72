/* fuzz_cli.c - the perflens command line: global options and a tool's
 * flags (looked up in its input schema, converted to the schema's types)
 * into the JSON arguments, then the registry's argument check.  Nothing
 * runs: the harness stops where perflens would call the tool.
 *
 * The input is the argument words separated by NUL bytes.  perflens.c is
 * compiled into the harness (its main renamed) so its static parsing
 * functions are the ones fuzzed; the rest of tools/cli/ links beside it
 * (perflens.c itself, holding main, is left out of the folder).  The option setters keep what they
 * allocate for the life of the process (a command line is parsed once),
 * so leak detection is off here; the harness frees what it can reach
 * (escaped words, maps, binaries) so memory stays bounded.
 */
// fuzz-link: tools/cli
// fuzz-flags: -close_fd_mask=3
#define main perflens_cli_main
#include "tools/cli/perflens.c"
#undef main

#include "fuzz.h"

#define MAX_WORDS 32

const char *__asan_default_options(void);
const char *__asan_default_options(void)
{
	return "detect_leaks=0";
}

/* What parsing allocated and left for the process's life. */
static void release(struct cli *c, char **argv, int argc, const char *copy, size_t size)
{
	struct pl_sym_cfg *sym = &c->ctx.sym;

	for (int k = 1; k < argc; k++)
		if (argv[k] < copy || argv[k] > copy + size)
			free(argv[k]);   /* escape_args' replacement */
	for (size_t k = 0; k < sym->nmodule_maps; k++) {
		free((char *)sym->module_maps[k].from);
		free((char *)sym->module_maps[k].to);
	}
	for (size_t k = 0; k < sym->npath_maps; k++) {
		free((char *)sym->path_maps[k].from);
		free((char *)sym->path_maps[k].to);
	}
	for (size_t k = 0; k < sym->nbinaries; k++)
		free((char *)sym->binaries[k]);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *copy = malloc(size + 1), *argv[MAX_WORDS + 2];
	const struct tool_def *t;
	struct pl_error err;
	struct cli c;
	json_t *args;
	int argc = 1, i;

	memcpy(copy, data, size);
	copy[size] = 0;
	argv[0] = "perflens";
	for (char *w = copy; argc < MAX_WORDS && w <= copy + size; w += strlen(w) + 1)
		argv[argc++] = w;
	argv[argc] = NULL;
	memset(&c, 0, sizeof(c));
	pl_limits_default(&c.ctx.limits);
	/* main's loop over the global options before the command */
	for (i = 1; i < argc && strncmp(argv[i], "--", 2) == 0 && !command_named(argv[i]); i++) {
		escape_args(i + 2 < argc ? i + 2 : argc, argv, i);
		if (global_option(&c, argc, argv, &i) != 1)
			goto out;
	}
	if (i == argc || command_named(argv[i]) || !(t = tool_find_cli(argv[i])))
		goto out;
	escape_args(argc - i, argv + i, 1);
	args = json_object();
	if (parse_args(&c, t, argc - i, argv + i, 1, args) == 0)
		tool_check_args(t, args, &err);
	json_decref(args);
out:
	release(&c, argv, argc, copy, size);
	free(copy);
	return 0;
}
