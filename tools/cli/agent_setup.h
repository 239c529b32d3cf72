/* agent_setup.h - CLI subcommands that connect PerfLens to coding agents.
 *
 *   perflens init --project DIR [--client codex|claude-code|all] ...
 *       register the server and install the Skill for the clients, in
 *       project-scoped files only, recorded in DIR/.perflens/setup.json
 *   perflens detach --project DIR [--dry-run] [--keep-skills] [--client C]
 *       remove exactly what init wrote and the user did not change
 *   perflens status --project DIR
 *       what is set up, whether the server runs and answers, the Skill
 *   perflens doctor
 *       what this machine offers for profiling, with what to do
 *   perflens codex-config --workspace DIR [--server PATH]
 *       print a ready-to-paste Codex [mcp_servers.perflens] TOML block
 *   perflens claude-config --workspace DIR [--server PATH]
 *       print the Claude Code .mcp.json document
 *   perflens install-skill --project DIR [--client codex|claude-code]
 *       install the embedded Agent Skill into
 *       DIR/.agents/skills/perflens-performance-analysis/ (Codex) or
 *       DIR/.claude/skills/... (Claude Code); never overwrites
 *
 * Both take the command line from the subcommand on: argv[0] is the
 * subcommand's name ("codex-config"), flags start at argv[1].  They return
 * the process exit code; on failure they print one JSON error object on
 * stderr ({"error":{"code","message","hint","exit_code"}}) with the exit
 * code from error.c's table, like every other perflens command.
 */
#ifndef PL_AGENT_SETUP_H
#define PL_AGENT_SETUP_H

/* The folder name of the Skill, and the prefix of its rows in
 * pl_schema_files[] (see schemas.h). */
#define PL_SKILL_NAME "perflens-performance-analysis"
#define PL_SKILL_PREFIX "skill/" PL_SKILL_NAME "/"

#include "base/error.h"

int cli_codex_config(int argc, char **argv);
int cli_claude_config(int argc, char **argv);
int cli_install_skill(int argc, char **argv);
/* perflens viewer-url --http ADDR:PORT [--token TOKEN]: a one-time login
 * link for the web viewer of that server. */
int cli_viewer_url(int argc, char **argv);
int cli_init(int argc, char **argv);
int cli_detach(int argc, char **argv);
int cli_status(int argc, char **argv);
int cli_doctor(int argc, char **argv);

/* Print `e` as {"error": tool_error_json_new(e)} on stderr, the one error
 * exit of every perflens command (perflens.c); returns its exit code. */
int cli_fail(const struct pl_error *e);

#endif
