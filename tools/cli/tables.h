/* tables.h - the CLI's human tables (--format table), by tool name.
 *
 * Only the CLI renders tables, so they live here and not in the library
 * that perflens-mcp links too.
 */
#ifndef CLI_TABLES_H
#define CLI_TABLES_H

#include <stdio.h>

#include <jansson.h>

/* Print a tool's structured result (borrowed) as a table. */
typedef void (*cli_table_fn)(json_t *result, FILE *out);

/* The renderer of `tool`, or NULL when it has none (JSON is printed). */
cli_table_fn cli_table_for(const char *tool);

#endif
