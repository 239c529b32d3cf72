/* agent_setup.c - `perflens codex-config`, `claude-config` and
 * `install-skill` (see agent_setup.h), and the helpers every agent setup
 * command shares (agent_setup_int.h).
 *
 * codex-config and claude-config resolve the workspace with realpath,
 * find the MCP server beside the running binary through /proc/self/exe
 * unless --server names it, and print the registration: a TOML block
 * whose strings are escaped as TOML basic strings (backslash, double
 * quote and control characters), or the .mcp.json document built with
 * jansson.  Paths must be valid UTF-8, which TOML and JSON require.
 *
 * install-skill takes the Skill's files from pl_schema_files[] (embedded
 * at build time, never read from the repository at run time), writes
 * them into a hidden staging folder beside the destination, then renames
 * that folder into place with RENAME_NOREPLACE, so the Skill appears
 * whole or not at all and an existing folder is never overwritten.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "agent_setup_int.h"
#include "base/login_link.h"
#include "store/artifact.h"
#include "base/error.h"
#include "base/schemas.h"
#include "base/util.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define CODEX_USAGE "perflens codex-config --workspace DIR [--server PATH] [--read-only] [--allow-collection]"
#define CLAUDE_USAGE "perflens claude-config --workspace DIR [--server PATH] [--read-only] [--allow-collection]"
#define SKILL_USAGE "perflens install-skill --project DIR [--client codex|claude-code]"

/* ------------------------------------------------------------- flags */

/* Match argv[*i] against `--name`, `--name=V` or `--name V` (valued) or
 * `--name`, `--name=BOOL`, `--no-name` (boolean).  1 taken, 0 not this
 * flag, -1 a valued flag without its value or a bad boolean. */
static int take_flag(int argc, char **argv, int *i, const struct setup_flag *f)
{
	const char *arg = argv[*i];
	size_t n = strlen(f->name);

	if (strncmp(arg, "--", 2) != 0)
		return 0;
	if (!f->value && strncmp(arg + 2, "no-", 3) == 0 && strcmp(arg + 5, f->name) == 0) {
		*f->on = false;
		return 1;
	}
	if (strncmp(arg + 2, f->name, n) != 0 || (arg[2 + n] != '\0' && arg[2 + n] != '='))
		return 0;
	if (!f->value) {
		if (arg[2 + n] == '\0')
			*f->on = true;
		else if (strcmp(arg + 3 + n, "true") == 0 || strcmp(arg + 3 + n, "false") == 0)
			*f->on = arg[3 + n] == 't';
		else
			return -1;
		return 1;
	}
	if (arg[2 + n] == '=') {
		*f->value = arg + 3 + n;
		return **f->value ? 1 : -1;
	}
	if (*i + 1 >= argc || argv[*i + 1][0] == '\0')
		return -1;
	*f->value = argv[++*i];
	return 1;
}

/* --format table|json at argv[*i]: 1 taken, 0 not it, -1 bad value. */
static int take_format(int argc, char **argv, int *i, bool *table)
{
	const char *saved = NULL;
	struct setup_flag f = {"format", &saved, NULL};
	int got = take_flag(argc, argv, i, &f);

	if (got <= 0)
		return got;
	if (strcmp(saved, "table") != 0 && strcmp(saved, "json") != 0)
		return -1;
	*table = strcmp(saved, "table") == 0;
	return 1;
}

enum pl_err setup_parse_flags(int argc, char **argv, const char *usage,
			      const struct setup_flag *flags, bool *table, bool *help,
			      struct pl_error *err)
{
	*help = false;
	for (int i = 1; i < argc; i++) {
		int got = 0;

		if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
			*help = true;
			return PL_OK;
		}
		if (table && (got = take_format(argc, argv, &i, table)) < 0)
			return pl_fail(err, PL_ERR_USAGE, usage, "'--format' is table or json");
		for (const struct setup_flag *f = flags; !got && f->name; f++) {
			const char *before = f->value ? *f->value : NULL;

			got = take_flag(argc, argv, &i, f);
			if (got < 0)
				return pl_fail(err, PL_ERR_USAGE, usage, f->value ? "'--%s' needs a value" :
					       "'--%s' is true or false", f->name);
			if (got > 0 && before)
				return pl_fail(err, PL_ERR_USAGE, usage, "'--%s' is given twice", f->name);
		}
		if (!got)
			return pl_fail(err, PL_ERR_USAGE, usage, "unexpected argument '%s'", argv[i]);
	}
	return PL_OK;
}

/* ------------------------------------------------------------- paths */

enum pl_err setup_resolve_dir(const char *flag, const char *dir, const char *usage,
			      char out[PATH_MAX], struct pl_error *err)
{
	struct stat st;

	if (!realpath(dir, out))
		return pl_fail(err, PL_ERR_USAGE, usage, "cannot use --%s '%s': %s", flag, dir, strerror(errno));
	if (stat(out, &st) < 0 || !S_ISDIR(st.st_mode))
		return pl_fail(err, PL_ERR_USAGE, usage, "--%s '%s' is not a folder", flag, dir);
	return PL_OK;
}

bool setup_join(char *out, size_t size, const char *a, const char *b)
{
	size_t n = strlen(a);
	int len = snprintf(out, size, "%s%s%s", a, n && a[n - 1] == '/' ? "" : "/", b);

	return len >= 0 && (size_t)len < size;
}

/* jansson refuses strings that are not valid UTF-8: reuse its check. */
bool setup_valid_utf8(const char *s)
{
	json_t *j = json_string(s);

	json_decref(j);
	return j != NULL;
}

enum pl_err setup_server_path(const char *given, char out[PATH_MAX], struct pl_error *err)
{
	char exe[PATH_MAX], dir[PATH_MAX], real[PATH_MAX];
	const char *base;
	char *slash;
	ssize_t n;

	if (given) {
		if (realpath(given, out))
			return PL_OK;
		slash = strrchr(given, '/');
		base = slash ? slash + 1 : given;
		if (slash && (size_t)(slash - given) >= sizeof(dir))
			return pl_fail(err, PL_ERR_USAGE, "pass a shorter --server path", "--server '%s' is too long", given);
		snprintf(dir, sizeof(dir), "%.*s", slash ? (int)(slash - given) : 1, slash ? given : ".");
		if (!*base || !realpath(*dir ? dir : "/", real) || !setup_join(out, PATH_MAX, real, base))
			return pl_fail(err, PL_ERR_USAGE, "pass --server /abs/path/to/" SETUP_MCP_BINARY " in an existing folder",
				       "cannot resolve --server '%s'", given);
		return PL_OK;
	}
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0 || (size_t)n >= sizeof(exe) - 1)
		return pl_fail(err, PL_ERR_USAGE, "pass --server /abs/path/to/" SETUP_MCP_BINARY,
			       "cannot find the running binary through '/proc/self/exe': %s",
			       n < 0 ? strerror(errno) : "path too long");
	exe[n] = '\0';
	slash = strrchr(exe, '/');
	if (!slash)
		return pl_fail(err, PL_ERR_USAGE, "pass --server /abs/path/to/" SETUP_MCP_BINARY,
			       "'/proc/self/exe' is not an absolute path: '%s'", exe);
	slash[1] = '\0';
	if (!setup_join(out, PATH_MAX, exe, SETUP_MCP_BINARY))
		return pl_fail(err, PL_ERR_USAGE, "pass --server /abs/path/to/" SETUP_MCP_BINARY,
			       "server path beside '%s' is too long", exe);
	return PL_OK;
}

/* ------------------------------------------------------- registration */

json_t *setup_server_args(const char *ws, const struct setup_choices *c)
{
	char results[PATH_MAX];
	json_t *a = json_array();

	setup_join(results, sizeof(results), ws, SETUP_RESULTS_DIR);
	json_array_append_new(a, json_string("--allowed-root"));
	json_array_append_new(a, json_string(ws));
	json_array_append_new(a, json_string("--artifact-root"));
	json_array_append_new(a, json_string(results));
	if (!c->read_only)
		json_array_append_new(a, json_string("--allow-writes"));
	if (c->allow_collection) {
		json_array_append_new(a, json_string("--allow-process-execution"));
		json_array_append_new(a, json_string("--allow-collection"));
	}
	return a;
}

json_t *setup_claude_entry(const char *server, json_t *args)
{
	return json_pack("{s:s,s:s,s:O,s:{}}", "type", "stdio", "command", server, "args", args, "env");
}

/* Append `s` as a TOML basic string, quotes included. */
static void toml_string(struct pl_buf *b, const char *s)
{
	pl_buf_addc(b, '"');
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		switch (*p) {
		case '"': pl_buf_adds(b, "\\\""); break;
		case '\\': pl_buf_adds(b, "\\\\"); break;
		case '\b': pl_buf_adds(b, "\\b"); break;
		case '\t': pl_buf_adds(b, "\\t"); break;
		case '\n': pl_buf_adds(b, "\\n"); break;
		case '\f': pl_buf_adds(b, "\\f"); break;
		case '\r': pl_buf_adds(b, "\\r"); break;
		default:
			if (*p < 0x20 || *p == 0x7f)
				pl_buf_addf(b, "\\u%04X", *p);
			else
				pl_buf_addc(b, (char)*p);
		}
	}
	pl_buf_addc(b, '"');
}

void setup_codex_table(struct pl_buf *b, const char *server, json_t *args)
{
	size_t i;
	json_t *a;

	pl_buf_adds(b, "[mcp_servers." SETUP_SERVER_NAME "]\ncommand = ");
	toml_string(b, server);
	pl_buf_adds(b, "\nargs = [");
	json_array_foreach(args, i, a) {
		pl_buf_adds(b, i ? ", " : "");
		toml_string(b, json_string_value(a));
	}
	pl_buf_adds(b, "]\n"
		    "startup_timeout_sec = 10\n"
		    "# Keep above the server's own per-call limit (--tool-timeout, 55 s).\n"
		    "tool_timeout_sec = 120\n");
}

/* -------------------------------------------------------------- Skill */

const char *setup_skills_dir(const char *client)
{
	return strcmp(client, "claude-code") == 0 ? ".claude/skills" : ".agents/skills";
}

bool setup_skill_file(size_t i, const char **rel, const char **text)
{
	const size_t plen = strlen(PL_SKILL_PREFIX);

	for (const struct pl_schema_file *f = pl_schema_files; f->path; f++) {
		if (strncmp(f->path, PL_SKILL_PREFIX, plen) != 0)
			continue;
		if (i-- == 0) {
			*rel = f->path + plen;
			*text = f->text;
			return true;
		}
	}
	return false;
}

/* ------------------------------------------------------------- output */

int setup_emit(json_t *result, bool table, void (*print_table)(json_t *r, FILE *out))
{
	struct pl_error err;
	char *text;

	if (table && print_table) {
		print_table(result, stdout);
	} else {
		text = json_dumps(result, JSON_INDENT(2));
		printf("%s\n", text ? text : "null");
		free(text);
	}
	json_decref(result);
	if (fflush(stdout) != 0) {
		pl_fail(&err, PL_ERR_OUTPUT, "check where stdout goes", "cannot write the result: %s",
			strerror(errno));
		return cli_fail(&err);
	}
	return 0;
}

/* ------------------------------------------- codex-config, claude-config */

/* The workspace and the server, resolved and checked (they must be
 * UTF-8: TOML and JSON cannot hold other bytes). */
static enum pl_err config_paths(const char *given_ws, const char *given_server, const char *usage,
				char ws[PATH_MAX], char server[PATH_MAX], struct pl_error *err)
{
	char probe[PATH_MAX];

	if (!given_ws)
		return pl_fail(err, PL_ERR_USAGE, usage, "'--workspace' is required");
	if (setup_resolve_dir("workspace", given_ws, usage, ws, err) ||
	    setup_server_path(given_server, server, err))
		return err->code;
	if (!setup_join(probe, sizeof(probe), ws, SETUP_RESULTS_DIR))
		return pl_fail(err, PL_ERR_USAGE, "use a shorter workspace path",
			       "workspace '%s' is too long", ws);
	if (!setup_valid_utf8(ws) || !setup_valid_utf8(server))
		return pl_fail(err, PL_ERR_USAGE, "use paths that are valid UTF-8 (TOML and JSON cannot hold others)",
			       "'%s' is not valid UTF-8", setup_valid_utf8(ws) ? server : ws);
	return PL_OK;
}

static void codex_usage(FILE *out)
{
	fprintf(out,
		"usage: " CODEX_USAGE "\n\n"
		"Print a Codex [mcp_servers.perflens] block for ~/.codex/config.toml or a trusted\n"
		"project's .codex/config.toml (`perflens init` writes it there for you).  The server\n"
		"may read beneath DIR and writes its analyses and exports to DIR/" SETUP_RESULTS_DIR ".\n\n"
		"  --workspace DIR     the folder the agent works in (must exist)\n"
		"  --server PATH       the MCP server binary (default: " SETUP_MCP_BINARY " beside this perflens)\n"
		"  --read-only         no --allow-writes (the server reads existing analyses only)\n"
		"  --allow-collection  add --allow-process-execution --allow-collection\n");
}

/* The block codex-config prints: comments, then the table. */
static void codex_block(struct pl_buf *b, const char *server, json_t *args)
{
	struct stat st;

	pl_buf_adds(b,
		    "# PerfLens MCP server for Codex (generated by `perflens codex-config`).\n"
		    "# Paste into ~/.codex/config.toml, or .codex/config.toml in a trusted project.\n"
		    "# It reads profiles only beneath --allowed-root and writes analyses and\n"
		    "# exports only beneath --artifact-root (--allow-writes).\n");
	if (stat(server, &st) < 0) {
		/* The escaped form keeps the comment on one line. */
		pl_buf_adds(b, "# note: ");
		toml_string(b, server);
		pl_buf_adds(b, " does not exist yet: build it (make) or pass --server PATH\n");
	}
	setup_codex_table(b, server, args);
}

/* Shared by codex-config and claude-config: parse, resolve, build args
 * (`table` NULL: no --format). */
static int config_command(int argc, char **argv, const char *usage, void (*help_fn)(FILE *),
			  bool *table, char ws[PATH_MAX], char server[PATH_MAX], json_t **args)
{
	const char *given_ws = NULL, *given_server = NULL;
	struct setup_choices c = {0};
	const struct setup_flag flags[] = {
		{"workspace", &given_ws, NULL}, {"server", &given_server, NULL},
		{"read-only", NULL, &c.read_only}, {"allow-collection", NULL, &c.allow_collection},
		{NULL, NULL, NULL},
	};
	struct pl_error err;
	bool help;

	pl_error_clear(&err);
	if (setup_parse_flags(argc, argv, usage, flags, table, &help, &err))
		return cli_fail(&err);
	if (help) {
		help_fn(stdout);
		return -1;
	}
	if (config_paths(given_ws, given_server, usage, ws, server, &err))
		return cli_fail(&err);
	*args = setup_server_args(ws, &c);
	return 0;
}

int cli_codex_config(int argc, char **argv)
{
	char ws[PATH_MAX], server[PATH_MAX];
	struct pl_error err;
	struct pl_buf b = {0};
	json_t *args = NULL;
	int rc = config_command(argc, argv, "usage: " CODEX_USAGE, codex_usage, NULL, ws, server, &args);

	if (rc)
		return rc < 0 ? 0 : rc;
	codex_block(&b, server, args);
	json_decref(args);
	fwrite(b.data, 1, b.len, stdout);
	pl_buf_release(&b);
	if (fflush(stdout) != 0) {
		pl_fail(&err, PL_ERR_OUTPUT, "check where stdout goes", "cannot write the configuration: %s",
			strerror(errno));
		return cli_fail(&err);
	}
	return 0;
}

static void claude_table(json_t *doc, FILE *out)
{
	json_t *e = json_object_get(json_object_get(doc, "mcpServers"), SETUP_SERVER_NAME), *a;
	size_t i;

	fprintf(out, "server   %s (%s)\ncommand  %s\nargs    ", SETUP_SERVER_NAME,
		json_string_value(json_object_get(e, "type")), json_string_value(json_object_get(e, "command")));
	json_array_foreach(json_object_get(e, "args"), i, a)
		fprintf(out, " %s", json_string_value(a));
	fprintf(out, "\n");
}

static void claude_usage(FILE *out)
{
	fprintf(out,
		"usage: " CLAUDE_USAGE "\n\n"
		"Print a Claude Code .mcp.json document registering the PerfLens MCP server\n"
		"(`perflens init --client claude-code` merges it into the project's .mcp.json for\n"
		"you); --format table shows it as a table.  Flags as for codex-config:\n\n"
		"  --workspace DIR     the folder the agent works in (must exist)\n"
		"  --server PATH       the MCP server binary (default: " SETUP_MCP_BINARY " beside this perflens)\n"
		"  --read-only         no --allow-writes\n"
		"  --allow-collection  add --allow-process-execution --allow-collection\n"
		"  --format table|json the document (default) or a table\n");
}

int cli_claude_config(int argc, char **argv)
{
	char ws[PATH_MAX], server[PATH_MAX];
	json_t *args = NULL, *doc;
	bool table = false;
	int rc = config_command(argc, argv, "usage: " CLAUDE_USAGE, claude_usage, &table, ws, server, &args);

	if (rc)
		return rc < 0 ? 0 : rc;
	doc = json_pack("{s:{s:o}}", "mcpServers", SETUP_SERVER_NAME, setup_claude_entry(server, args));
	json_decref(args);
	return setup_emit(doc, table, claude_table);
}

/* --------------------------------------------------------- viewer-url */

#define VIEWER_USAGE "perflens viewer-url --http ADDR:PORT [--token TOKEN]"

/* A fresh one-time login link for the viewer of a running
 * `perflens-mcp --http ADDR:PORT`, signed with its token (--token or
 * $PERFLENS_TOKEN; base/login_link.h): the token never appears in it. */
int cli_viewer_url(int argc, char **argv)
{
	const char *http = NULL, *token = NULL;
	const struct setup_flag flags[] = {{"http", &http, NULL}, {"token", &token, NULL}, {NULL, NULL, NULL}};
	struct pl_error err;
	char query[200];
	bool help;

	pl_error_clear(&err);
	if (setup_parse_flags(argc, argv, "usage: " VIEWER_USAGE, flags, NULL, &help, &err))
		return cli_fail(&err);
	if (help) {
		printf("usage: %s\n  prints a one-time login URL for the web viewer of perflens-mcp --http\n",
		       VIEWER_USAGE);
		return 0;
	}
	if (!token)
		token = getenv("PERFLENS_TOKEN");
	if (!http || !strchr(http, ':'))
		pl_fail(&err, PL_ERR_USAGE, "e.g. perflens viewer-url --http 127.0.0.1:8765",
			"viewer-url needs the server's --http ADDR:PORT");
	else if (!token || !*token)
		pl_fail(&err, PL_ERR_USAGE, "set PERFLENS_TOKEN or pass --token, as for the server",
			"viewer-url needs the server's bearer token");
	else if (!pl_login_link_query(token, (uint64_t)time(NULL) + PL_LOGIN_TTL_SECONDS, query,
				      sizeof(query)))
		pl_fail(&err, PL_ERR_INTERNAL, "retry", "no randomness for the login link");
	if (err.code)
		return cli_fail(&err);
	printf("http://%s/viewer/login?%s\n", http, query);
	return 0;
}

/* ------------------------------------------------------- install-skill */

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	remove(path);
	return 0;
}

/* A relative path inside the Skill folder: not empty, not absolute, no
 * "." or ".." component, no empty component. */
static bool safe_relative(const char *rel)
{
	const char *p = rel;

	if (!*rel || *rel == '/')
		return false;
	while (*p) {
		size_t n = strcspn(p, "/");

		if (n == 0 || (n == 1 && p[0] == '.') || (n == 2 && p[0] == '.' && p[1] == '.'))
			return false;
		p += n;
		if (*p == '/' && !*++p)
			return false;
	}
	return true;
}

/* The error for an installed Skill: its hint names the folder to remove. */
static enum pl_err refuse_existing(const char *path, struct pl_error *err)
{
	char hint[sizeof(err->hint)];
	int n = snprintf(hint, sizeof(hint), "remove '%s' first to reinstall; install-skill never overwrites", path);

	return pl_fail(err, PL_ERR_OUTPUT,
		       n >= 0 && (size_t)n < sizeof(hint) ? hint :
		       "remove that folder first to reinstall; install-skill never overwrites",
		       "'%s' already exists", path);
}

/* Move `from` to `to` unless `to` exists. */
static enum pl_err rename_noreplace(const char *from, const char *to, struct pl_error *err)
{
	struct stat st;

	if (renameat2(AT_FDCWD, from, AT_FDCWD, to, RENAME_NOREPLACE) == 0)
		return PL_OK;
	if (errno == EINVAL || errno == ENOSYS) {
		/* The filesystem lacks RENAME_NOREPLACE: check, then rename.
		 * rename(2) refuses a non-empty target, and the window in
		 * which an empty one could appear is this one line. */
		if (lstat(to, &st) == 0)
			errno = EEXIST;
		else if (rename(from, to) == 0)
			return PL_OK;
	}
	if (errno == EEXIST || errno == ENOTEMPTY)
		return refuse_existing(to, err);
	return pl_fail(err, PL_ERR_OUTPUT, "check that the project folder is writable",
		       "cannot move the Skill into '%s': %s", to, strerror(errno));
}

/* Write every embedded Skill row into `stage`; counts them in *nfiles. */
static enum pl_err write_skill_files(const char *stage, size_t *nfiles, struct pl_error *err)
{
	char path[PATH_MAX];
	const char *rel, *text;

	*nfiles = 0;
	for (size_t i = 0; setup_skill_file(i, &rel, &text); i++) {
		if (!safe_relative(rel))
			return pl_fail(err, PL_ERR_INTERNAL, "fix the Skill's file names and rebuild",
				       "embedded Skill file '%s' has an unsafe name", rel);
		if (!setup_join(path, sizeof(path), stage, rel))
			return pl_fail(err, PL_ERR_OUTPUT, "use a shorter project path",
				       "path too long: '%s/%s'", stage, rel);
		if (pl_write_file_atomic(path, text, strlen(text), err))
			return err->code;
		(*nfiles)++;
	}
	if (*nfiles == 0)
		return pl_fail(err, PL_ERR_INTERNAL, "rebuild perflens with the skill/ folder in the tree",
			       "this perflens carries no Skill files (no '%s' rows embedded)", PL_SKILL_PREFIX);
	return PL_OK;
}

static void skill_usage(FILE *out)
{
	fprintf(out,
		"usage: " SKILL_USAGE "\n\n"
		"Install the PerfLens Agent Skill (embedded in this binary) into\n"
		"DIR/.agents/skills/" PL_SKILL_NAME "/, where Codex finds it, or with\n"
		"--client claude-code into DIR/.claude/skills/" PL_SKILL_NAME "/.  An existing\n"
		"folder is never overwritten: remove it first to reinstall.\n\n"
		"  --project DIR        the project root (must exist)\n"
		"  --client CLIENT      codex (default) or claude-code\n");
}

/* The project, its skills folder, the Skill's destination and a staging
 * folder name beside it, resolved and checked. */
static enum pl_err skill_paths(const char *given, const char *client, char proj[PATH_MAX],
			       char skills[PATH_MAX], char dest[PATH_MAX], char stage[PATH_MAX],
			       struct pl_error *err)
{
	struct stat st;

	if (!given)
		return pl_fail(err, PL_ERR_USAGE, "name the project root: " SKILL_USAGE,
			       "'--project' is required");
	if (strcmp(client, "codex") != 0 && strcmp(client, "claude-code") != 0)
		return pl_fail(err, PL_ERR_USAGE, "use --client codex or --client claude-code",
			       "unknown client '%s'", client);
	if (setup_resolve_dir("project", given, "pass an existing folder: " SKILL_USAGE, proj, err))
		return err->code;
	if (!setup_valid_utf8(proj))
		return pl_fail(err, PL_ERR_USAGE, "use a project path that is valid UTF-8",
			       "'%s' is not valid UTF-8", proj);
	/* .claude or .agents may be a link to the user's global folder:
	 * install-skill writes inside the project only, as init does. */
	if (setup_inside(proj, setup_skills_dir(client), skills, err))
		return err->code;
	if (!setup_join(dest, PATH_MAX, skills, PL_SKILL_NAME) ||
	    !setup_join(stage, PATH_MAX, skills, "." PL_SKILL_NAME ".tmp-XXXXXX"))
		return pl_fail(err, PL_ERR_OUTPUT, "use a shorter project path",
			       "project path '%s' is too long", proj);
	if (lstat(dest, &st) == 0)
		return refuse_existing(dest, err);
	return PL_OK;
}

/* Write the Skill into a staging folder and rename it to `dest` (never
 * over anything); *nfiles gets the number of files. */
static enum pl_err install_staged(const char *skills, const char *dest, char *stage,
				  size_t *nfiles, struct pl_error *err)
{
	int fd;

	if (pl_make_dirs(skills, err))
		return err->code;
	if (!mkdtemp(stage))
		return pl_fail(err, PL_ERR_OUTPUT, "check that the project folder is writable",
			       "cannot create a staging folder in '%s': %s", skills, strerror(errno));
	if (write_skill_files(stage, nfiles, err) == PL_OK && chmod(stage, 0755) < 0)
		pl_fail(err, PL_ERR_OUTPUT, "check that the project folder is writable",
			"cannot set the mode of '%s': %s", stage, strerror(errno));
	if (err->code == PL_OK)
		rename_noreplace(stage, dest, err);
	if (err->code != PL_OK) {
		nftw(stage, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
		return err->code;
	}
	/* Make the rename durable, as the files inside already are. */
	fd = open(skills, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0) {
		fsync(fd);
		close(fd);
	}
	return PL_OK;
}

int cli_install_skill(int argc, char **argv)
{
	const char *project = NULL, *client = NULL;
	const struct setup_flag flags[] = {
		{"project", &project, NULL}, {"client", &client, NULL}, {NULL, NULL, NULL},
	};
	char proj[PATH_MAX], skills[PATH_MAX], dest[PATH_MAX], stage[PATH_MAX];
	struct pl_error err;
	size_t nfiles = 0;
	json_t *out;
	char *text;
	bool help;

	pl_error_clear(&err);
	if (setup_parse_flags(argc, argv, "usage: " SKILL_USAGE, flags, NULL, &help, &err))
		return cli_fail(&err);
	if (help) {
		skill_usage(stdout);
		return 0;
	}
	if (skill_paths(project, client ? client : "codex", proj, skills, dest, stage, &err) ||
	    install_staged(skills, dest, stage, &nfiles, &err))
		return cli_fail(&err);
	out = json_pack("{s:s,s:I}", "installed", dest, "files", (json_int_t)nfiles);
	text = out ? json_dumps(out, JSON_COMPACT) : NULL;
	json_decref(out);
	if (!text) {
		pl_fail(&err, PL_ERR_INTERNAL, NULL, "cannot encode the installed path '%s'", dest);
		return cli_fail(&err);
	}
	printf("%s\n", text);
	free(text);
	return 0;
}

static bool plain_rel(const char *rel)
{
	if (!rel || !*rel || *rel == '/')
		return false;
	for (const char *p = rel; *p;) {
		size_t n = strcspn(p, "/");
		if (n == 0 || (n == 1 && p[0] == '.') || (n == 2 && p[0] == '.' && p[1] == '.'))
			return false;
		p += n;
		if (*p == '/' && !*++p)
			return false;
	}
	return true;
}

/* PROJ/REL, refusing a REL that climbs out (plain_rel), a symbolic link
 * (or anything but a folder) in any folder component that exists, and a
 * link at the end.  The project itself is resolved already. */
enum pl_err setup_inside(const char *proj, const char *rel, char out[PATH_MAX], struct pl_error *err)
{
	struct stat st;

	if (!plain_rel(rel))
		return pl_fail(err, PL_ERR_OUTPUT, "fix or move away " SETUP_RECORD_REL "; init and detach touch only paths inside the project",
			       "'%s' is not a plain path inside the project", rel);
	if (!setup_join(out, PATH_MAX, proj, rel))
		return pl_fail(err, PL_ERR_OUTPUT, "use a shorter project path", "path too long: '%s/%s'", proj, rel);
	for (char *p = out + strlen(proj) + 1; ; p++) {
		char keep = *p;

		if (keep != '/' && keep != '\0')
			continue;
		*p = '\0';
		if (lstat(out, &st) == 0 && (S_ISLNK(st.st_mode) || (keep == '/' && !S_ISDIR(st.st_mode)))) {
			pl_fail(err, PL_ERR_OUTPUT, "remove the link or move the file away; init writes only inside the project",
				"'%s' is %s", out, S_ISLNK(st.st_mode) ? "a symbolic link" : "not a folder");
			*p = keep;
			return err->code;
		}
		*p = keep;
		if (!keep)
			return PL_OK;
	}
}
