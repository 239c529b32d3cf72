/* srcfile.h - where a source file named in a profile lives, per DWARF.
 *
 * perf prints srclines with the file's base name only ("fib.c:12").  The
 * binary's DWARF line tables know the full names (directory + file), so
 * a base name is looked up there: every source file of the module whose
 * path ends with "/NAME" is a candidate.  libdw does the reading; a
 * separate debug file is found the standard way (build-id, debuglink).
 */
#ifndef PL_SRCFILE_H
#define PL_SRCFILE_H

#include <stddef.h>

#define PL_SRCFILE_MAX_MATCHES 8

/* Fill `out` (each a new string; free them) with up to `cap` full paths
 * from `elf_path`'s DWARF that end in "/name" (or equal it); returns how
 * many, 0 when none or when the file has no DWARF.  `name` and the paths
 * are in the escaped form of base/escape.h (DWARF paths are bytes). */
size_t pl_srcfile_candidates(const char *elf_path, const char *name, char **out, size_t cap);

#endif
