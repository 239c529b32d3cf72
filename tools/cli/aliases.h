/* aliases.h - the commands of the PerfLens Python toolkit, accepted as
 * aliases of this CLI's (analyze-folded, inspect-elf, compare-profiles,
 * ...), with their flags where the meaning is the same.
 */
#ifndef CLI_ALIASES_H
#define CLI_ALIASES_H

#include <stdio.h>

/* When argv[0] is a Python-toolkit command, a new argv (a NULL-terminated
 * copy: free it with cli_alias_free) in this CLI's words, with its count
 * in *argc_out; NULL when argv[0] is none.  A flag the toolkit had whose
 * meaning has no equivalent here is an error: *err gets its message (a
 * static string) and NULL is returned with *argc_out -1. */
char **cli_alias_rewrite(int argc, char **argv, int *argc_out, char *err, size_t errcap);
void cli_alias_free(char **argv);

/* The alias lines of --help. */
void cli_alias_help(FILE *out);

#endif
