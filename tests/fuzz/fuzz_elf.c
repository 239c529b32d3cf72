/* fuzz_elf.c - ELF inspection and symbolization of an outside file: the
 * facts reader (elfinfo: headers, build-id note, debuglink, sections,
 * symbol counts) and, through the tools, inspect_elf and symbolize (libdw,
 * the symbol table, line table and inline scopes, and the symbol index
 * built from them under the artifact root).  The first input byte picks:
 * 0 facts only, 1 inspect_elf, 2 symbolize, 3 both tools; the rest is the
 * file.  libdw itself is not instrumented (a Debian library): what is
 * covered is PerfLens's side of it, and a crash inside libdw still shows. */
#include "fuzz.h"
#include "symbols/elfinfo.h"
#include "tools/registry.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *roots[1];
static char root[512], dir[512];

static void call(const char *tool, const char *path)
{
	const struct tool_def *t = tool_find(tool);
	struct tool_ctx ctx = {0};
	struct pl_error err;
	json_t *args, *result = NULL;

	roots[0] = dir;
	ctx.allowed_roots = roots;
	ctx.nroots = 1;
	ctx.artifact_root = root;
	ctx.allow_writes = true;
	pl_limits_default(&ctx.limits);
	if (strcmp(tool, "symbolize") == 0)
		args = json_pack("{s:s,s:s}", "binary", path, "offsets",
				 "0x0 0x40 0x1000 0x1040 0x1139 0x1180 0x2000 0x3fff");
	else
		args = json_pack("{s:s}", "path", path);
	if (tool_call(t, &ctx, args, &result, &err) != PL_OK && getenv("FUZZ_VERBOSE"))
		fprintf(stderr, "fuzz: %s: %s\n", tool, err.text);
	json_decref(result);
	json_decref(args);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	unsigned mode = fuzz_take_byte(&data, &size) % 4;
	const char *path;
	char file[600];
	struct pl_elf_facts f;
	struct pl_error err;

	snprintf(dir, sizeof(dir), "%s/in", fuzz_dir());
	snprintf(root, sizeof(root), "%s/root", fuzz_dir());
	fuzz_clean("root");
	path = fuzz_file("in/module.so", data, size);
	snprintf(file, sizeof(file), "%s", path);
	pl_elf_read_facts(file, &f, &err);
	if (mode & 1)
		call("inspect_elf", file);
	if (mode & 2)
		call("symbolize", file);
	return 0;
}
