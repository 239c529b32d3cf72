/* srcfile.c - source file names from a module's DWARF (see srcfile.h).
 *
 * dwfl reports the file at bias 0 with the standard debuginfo finder, so
 * separate debug files are used when the binary is stripped; each CU's
 * file table (dwarf_getsrcfiles, dwarf_filesrc) gives full names.  The
 * walk stops at the first `cap` distinct matches and after a fixed number
 * of CUs, so a huge library costs a bounded time.
 */
#include <elfutils/libdwfl.h>
#include <stdlib.h>
#include <string.h>

#include "srcfile.h"
#include "base/escape.h"
#include "base/util.h"

#define MAX_CUS 200000

static const Dwfl_Callbacks callbacks = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
};

static bool ends_with_name(const char *path, const char *name)
{
	size_t lp = strlen(path), ln = strlen(name);

	if (lp == ln)
		return strcmp(path, name) == 0;
	return lp > ln && path[lp - ln - 1] == '/' && strcmp(path + lp - ln, name) == 0;
}

static bool seen(char **out, size_t n, const char *path)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(out[i], path) == 0)
			return true;
	return false;
}

/* Matches of one CU's file table. */
static size_t cu_matches(Dwarf_Die *cu, const char *name, char **out, size_t n, size_t cap)
{
	Dwarf_Files *files;
	size_t nfiles;

	if (dwarf_getsrcfiles(cu, &files, &nfiles) != 0)
		return n;
	for (size_t i = 0; i < nfiles && n < cap; i++) {
		const char *raw = dwarf_filesrc(files, i, NULL, NULL);
		/* DWARF paths are bytes; names and answers are escaped text. */
		char *path = raw && raw[0] == '/' ? pl_esc_dup(raw) : NULL;
		if (path && ends_with_name(path, name) && !seen(out, n, path))
			out[n++] = path;
		else
			free(path);
	}
	return n;
}

size_t pl_srcfile_candidates(const char *elf_path, const char *name, char **out, size_t cap)
{
	Dwfl *dwfl = dwfl_begin(&callbacks);
	Dwfl_Module *mod;
	Dwarf_Die *cu = NULL;
	Dwarf_Addr bias;
	size_t n = 0, ncus = 0;

	if (!dwfl)
		return 0;
	mod = dwfl_report_elf(dwfl, "src", elf_path, -1, 0, false);
	dwfl_report_end(dwfl, NULL, NULL);
	while (mod && n < cap && ncus++ < MAX_CUS && (cu = dwfl_module_nextcu(mod, cu, &bias)))
		n = cu_matches(cu, name, out, n, cap);
	dwfl_end(dwfl);
	return n;
}
