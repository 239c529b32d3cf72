/* agent_setup_int.h - what the agent setup commands share inside
 * tools/cli/ (agent_setup.c, project_setup.c, setup_status.c, doctor.c);
 * not for other folders.
 *
 * Flags: a small table of valued and boolean flags (setup_parse_flags);
 * every command also takes --format table|json and --help.  Paths: the
 * project resolved with realpath, files inside it named relative to it.
 * The server registration: one list of arguments (setup_server_args)
 * written as Codex TOML, as a Claude Code .mcp.json entry, or printed.
 */
#ifndef PL_AGENT_SETUP_INT_H
#define PL_AGENT_SETUP_INT_H

#include <limits.h>
#include <stdbool.h>
#include <stdio.h>

#include <jansson.h>

#include "agent_setup.h"
#include "base/error.h"
#include "base/util.h"

#define SETUP_MCP_BINARY "perflens-mcp"
#define SETUP_RESULTS_DIR "perflens-results"
#define SETUP_SERVER_NAME "perflens"
/* The Codex block's first and last lines (the block is what lies
 * between them, both included). */
#define SETUP_TOML_BEGIN "# >>> perflens: managed by `perflens init`; `perflens detach` removes it >>>"
#define SETUP_TOML_END "# <<< perflens <<<"

/* ------------------------------------------------------------ flags */

/* One flag: a valued one sets *value (borrowed from argv), a boolean one
 * (value NULL) sets *on. */
struct setup_flag {
	const char *name;
	const char **value;
	bool *on;
};

/* Parse argv[1..] against `flags` (NULL-name ended) plus --format
 * table|json (into *table) and --help/-h (into *help, stopping there).
 * Booleans take --flag, --flag=true|false and --no-flag; a repeated,
 * unknown or valueless flag is PL_ERR_USAGE with `usage` as the hint. */
enum pl_err setup_parse_flags(int argc, char **argv, const char *usage,
			      const struct setup_flag *flags, bool *table, bool *help,
			      struct pl_error *err);

/* ------------------------------------------------------------ paths */

/* realpath of an existing folder `dir`, for flag `--flag`. */
enum pl_err setup_resolve_dir(const char *flag, const char *dir, const char *usage,
			      char out[PATH_MAX], struct pl_error *err);
/* Join `a` and `b` with one slash; false when it does not fit. */
bool setup_join(char *out, size_t size, const char *a, const char *b);
/* True when jansson (and so TOML and .mcp.json) can hold `s`. */
bool setup_valid_utf8(const char *s);
/* The server binary: `given` made absolute, or perflens-mcp beside
 * /proc/self/exe.  It need not exist. */
enum pl_err setup_server_path(const char *given, char out[PATH_MAX], struct pl_error *err);

/* ----------------------------------------------------- registration */

/* What the server may do, chosen at init. */
struct setup_choices {
	bool read_only;          /* no --allow-writes */
	bool allow_collection;   /* --allow-process-execution --allow-collection */
};

/* The server's arguments for workspace `ws`: --allowed-root WS
 * --artifact-root WS/perflens-results, then --allow-writes unless
 * read-only, then the collection flags when chosen.  New reference. */
json_t *setup_server_args(const char *ws, const struct setup_choices *c);

/* The Claude Code .mcp.json server object {type, command, args, env}.
 * `args` is borrowed.  New reference. */
json_t *setup_claude_entry(const char *server, json_t *args);

/* The Codex [mcp_servers.perflens] table (no markers), appended to `b`. */
void setup_codex_table(struct pl_buf *b, const char *server, json_t *args);

/* Where the Codex block lies in a .codex/config.toml of `len` bytes (any
 * bytes, NUL included): from its SETUP_TOML_BEGIN line to the end of its
 * SETUP_TOML_END line; foreign_table when the user's own
 * [mcp_servers.perflens] table lies outside it. */
struct setup_block {
	size_t at, len;
	bool foreign_table;
};
enum setup_block_state { SETUP_BLOCK_NONE, SETUP_BLOCK_FOUND, SETUP_BLOCK_TWO, SETUP_BLOCK_UNENDED };
enum setup_block_state setup_toml_block(const char *s, size_t len, struct setup_block *b);

/* ------------------------------------------------------------ Skill */

/* Where each client reads project Skills, relative to the project. */
const char *setup_skills_dir(const char *client);

/* The embedded Skill's files: for i = 0, 1, ... until it returns false,
 * the relative name inside the Skill folder and the text (borrowed). */
bool setup_skill_file(size_t i, const char **rel, const char **text);

/* ----------------------------------------------------------- record */

#define SETUP_RECORD_REL ".perflens/setup.json"

/* The project's setup record (project_setup.c): a new reference, with an
 * empty "clients" object when there is none (*exists false); NULL with
 * `err` set when it cannot be read or is not a record. */
json_t *setup_load_record(const char *proj, bool *exists, struct pl_error *err);

/* PROJ/REL into out, refusing (PL_ERR_OUTPUT, naming the path) a REL
 * that is absolute or has an empty, "." or ".." component, and a
 * symbolic link (or a non-folder) at any component under PROJ: so that
 * nothing outside the project is touched (project_setup.c). */
enum pl_err setup_inside(const char *proj, const char *rel, char out[PATH_MAX], struct pl_error *err);

/* What a recorded row (borrowed) is on disk now: "as_written",
 * "changed", "missing" (the file, block or entry is gone), or
 * "unreadable" (a link, not a regular file...). */
const char *setup_row_state(const char *proj, json_t *row);

/* ----------------------------------------------------------- output */

/* Print `result` as indented JSON, or through `table` when asked;
 * steals `result`; returns 0, or cli_fail's code when stdout fails. */
int setup_emit(json_t *result, bool table, void (*print_table)(json_t *r, FILE *out));

#endif
