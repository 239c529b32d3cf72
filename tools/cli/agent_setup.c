/* agent_setup.c - `perflens codex-config` and `perflens install-skill`
 * (see agent_setup.h).
 *
 * codex-config resolves the workspace with realpath, finds the MCP server
 * beside the running binary through /proc/self/exe unless --server names
 * it, and prints a TOML block whose strings are escaped as TOML basic
 * strings (backslash, double quote and control characters).  Paths must
 * be valid UTF-8, which TOML requires.
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
#include "agent_setup.h"
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

#define CODEX_USAGE "perflens codex-config --workspace DIR [--server PATH]"
#define SKILL_USAGE "perflens install-skill --project DIR"
#define MCP_BINARY "perflens-mcp"
#define RESULTS_DIR "perflens-results"

/* ------------------------------------------------------------- helpers */

/* Match argv[*i] against `--name VALUE` or `--name=VALUE`.  Returns 1 and
 * sets *value (borrowed from argv) on a match, 0 when argv[*i] is another
 * flag, -1 when the flag has no value. */
static int take_flag(int argc, char **argv, int *i, const char *name, const char **value)
{
	const char *arg = argv[*i];
	size_t n = strlen(name);

	if (strncmp(arg, "--", 2) != 0 || strncmp(arg + 2, name, n) != 0)
		return 0;
	if (arg[2 + n] == '=') {
		*value = arg + 3 + n;
		return **value ? 1 : -1;
	}
	if (arg[2 + n] != '\0')
		return 0;
	if (*i + 1 >= argc || argv[*i + 1][0] == '\0')
		return -1;
	*value = argv[++*i];
	return 1;
}

/* Parse flags: `--names[k] V` sets values[k] (borrowed from argv); --help
 * or -h sets *help and stops.  A missing value, a repeated or unknown flag
 * is a usage error naming `usage`. */
static enum pl_err parse_flags(int argc, char **argv, const char *usage, const char *const *names,
			       const char **values, size_t nnames, bool *help, struct pl_error *err)
{
	*help = false;
	for (int i = 1; i < argc; i++) {
		size_t k;
		int got = 0;

		if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
			*help = true;
			return PL_OK;
		}
		for (k = 0; k < nnames; k++) {
			const char *v = NULL;

			got = take_flag(argc, argv, &i, names[k], &v);
			if (got < 0)
				return pl_fail(err, PL_ERR_USAGE, usage, "'--%s' needs a value", names[k]);
			if (got > 0) {
				if (values[k])
					return pl_fail(err, PL_ERR_USAGE, usage, "'--%s' is given twice", names[k]);
				values[k] = v;
				break;
			}
		}
		if (!got)
			return pl_fail(err, PL_ERR_USAGE, usage, "unexpected argument '%s'", argv[i]);
	}
	return PL_OK;
}

/* realpath of an existing folder `dir`, for flag `--flag`. */
static enum pl_err resolve_dir(const char *flag, const char *dir, const char *usage,
			       char out[PATH_MAX], struct pl_error *err)
{
	struct stat st;

	if (!realpath(dir, out))
		return pl_fail(err, PL_ERR_USAGE, usage, "cannot use --%s '%s': %s", flag, dir, strerror(errno));
	if (stat(out, &st) < 0 || !S_ISDIR(st.st_mode))
		return pl_fail(err, PL_ERR_USAGE, usage, "--%s '%s' is not a folder", flag, dir);
	return PL_OK;
}

/* Join `a` and `b` with one slash into `out`; false when it does not fit. */
static bool join_path(char *out, size_t size, const char *a, const char *b)
{
	size_t n = strlen(a);
	int len = snprintf(out, size, "%s%s%s", a, n && a[n - 1] == '/' ? "" : "/", b);

	return len >= 0 && (size_t)len < size;
}

/* ------------------------------------------------------- codex-config */

/* jansson refuses strings that are not valid UTF-8: reuse its check. */
static bool valid_utf8(const char *s)
{
	json_t *j = json_string(s);

	json_decref(j);
	return j != NULL;
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

/* The server binary: --server made absolute (its folder resolved when
 * that exists), or perflens-mcp beside /proc/self/exe.  It need not
 * exist yet. */
static enum pl_err server_path(const char *given, char out[PATH_MAX], struct pl_error *err)
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
		if (!*base || !realpath(*dir ? dir : "/", real) || !join_path(out, PATH_MAX, real, base))
			return pl_fail(err, PL_ERR_USAGE, "pass --server /abs/path/to/" MCP_BINARY " in an existing folder",
				       "cannot resolve --server '%s'", given);
		return PL_OK;
	}
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0 || (size_t)n >= sizeof(exe) - 1)
		return pl_fail(err, PL_ERR_USAGE, "pass --server /abs/path/to/" MCP_BINARY,
			       "cannot find the running binary through '/proc/self/exe': %s",
			       n < 0 ? strerror(errno) : "path too long");
	exe[n] = '\0';
	slash = strrchr(exe, '/');
	if (!slash)
		return pl_fail(err, PL_ERR_USAGE, "pass --server /abs/path/to/" MCP_BINARY,
			       "'/proc/self/exe' is not an absolute path: '%s'", exe);
	slash[1] = '\0';
	if (!join_path(out, PATH_MAX, exe, MCP_BINARY))
		return pl_fail(err, PL_ERR_USAGE, "pass --server /abs/path/to/" MCP_BINARY,
			       "server path beside '%s' is too long", exe);
	return PL_OK;
}

static void codex_usage(FILE *out)
{
	fprintf(out,
		"usage: " CODEX_USAGE "\n\n"
		"Print a Codex [mcp_servers.perflens] block for ~/.codex/config.toml or a trusted\n"
		"project's .codex/config.toml.  The server may read beneath DIR and writes its\n"
		"analyses and exports to DIR/" RESULTS_DIR ".\n\n"
		"  --workspace DIR   the folder the agent works in (must exist)\n"
		"  --server PATH     the MCP server binary (default: " MCP_BINARY " beside this perflens)\n");
}

/* The workspace, its results folder and the server, resolved and checked
 * (they must be UTF-8: TOML cannot hold other bytes). */
static enum pl_err codex_paths(const char *const values[2], char ws[PATH_MAX],
			       char results[PATH_MAX], char server[PATH_MAX], struct pl_error *err)
{
	if (!values[0])
		return pl_fail(err, PL_ERR_USAGE, "name the folder the agent works in: " CODEX_USAGE,
			       "'--workspace' is required");
	if (resolve_dir("workspace", values[0], "pass an existing folder: " CODEX_USAGE, ws, err) ||
	    server_path(values[1], server, err))
		return err->code;
	if (!join_path(results, PATH_MAX, ws, RESULTS_DIR))
		return pl_fail(err, PL_ERR_USAGE, "use a shorter workspace path",
			       "workspace '%s' is too long", ws);
	if (!valid_utf8(ws) || !valid_utf8(server))
		return pl_fail(err, PL_ERR_USAGE, "use paths that are valid UTF-8 (TOML cannot hold others)",
			       "'%s' is not valid UTF-8", valid_utf8(ws) ? server : ws);
	return PL_OK;
}

/* The [mcp_servers.perflens] block for these paths, appended to `b`. */
static void codex_block(struct pl_buf *b, const char *ws, const char *results, const char *server)
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
	pl_buf_adds(b, "[mcp_servers.perflens]\ncommand = ");
	toml_string(b, server);
	pl_buf_adds(b, "\nargs = [\"--allowed-root\", ");
	toml_string(b, ws);
	pl_buf_adds(b, ", \"--artifact-root\", ");
	toml_string(b, results);
	pl_buf_adds(b, ", \"--allow-writes\"]\n"
		    "startup_timeout_sec = 10\n"
		    "# Keep above the server's own per-call limit (--tool-timeout, 55 s).\n"
		    "tool_timeout_sec = 120\n");
}

int cli_codex_config(int argc, char **argv)
{
	static const char *const names[] = {"workspace", "server"};
	const char *values[2] = {NULL, NULL};
	char ws[PATH_MAX], results[PATH_MAX], server[PATH_MAX];
	struct pl_error err;
	struct pl_buf b = {0};
	bool help;

	pl_error_clear(&err);
	if (parse_flags(argc, argv, "usage: " CODEX_USAGE, names, values, 2, &help, &err))
		return cli_fail(&err);
	if (help) {
		codex_usage(stdout);
		return 0;
	}
	if (codex_paths(values, ws, results, server, &err))
		return cli_fail(&err);
	codex_block(&b, ws, results, server);
	fwrite(b.data, 1, b.len, stdout);
	pl_buf_release(&b);
	if (fflush(stdout) != 0) {
		pl_fail(&err, PL_ERR_OUTPUT, "check where stdout goes", "cannot write the configuration: %s",
			strerror(errno));
		return cli_fail(&err);
	}
	return 0;
}

/* --------------------------------------------------------- viewer-url */

#define VIEWER_USAGE "perflens viewer-url --http ADDR:PORT [--token TOKEN]"

/* A fresh one-time login link for the viewer of a running
 * `perflens-mcp --http ADDR:PORT`, signed with its token (--token or
 * $PERFLENS_TOKEN; base/login_link.h): the token never appears in it. */
int cli_viewer_url(int argc, char **argv)
{
	static const char *const names[] = {"http", "token"};
	const char *values[2] = {NULL, NULL};
	struct pl_error err;
	char query[200];
	bool help;

	pl_error_clear(&err);
	if (parse_flags(argc, argv, "usage: " VIEWER_USAGE, names, values, 2, &help, &err))
		return cli_fail(&err);
	if (help) {
		printf("usage: %s\n  prints a one-time login URL for the web viewer of perflens-mcp --http\n",
		       VIEWER_USAGE);
		return 0;
	}
	if (!values[1])
		values[1] = getenv("PERFLENS_TOKEN");
	if (!values[0] || !strchr(values[0], ':'))
		pl_fail(&err, PL_ERR_USAGE, "e.g. perflens viewer-url --http 127.0.0.1:8765",
			"viewer-url needs the server's --http ADDR:PORT");
	else if (!values[1] || !*values[1])
		pl_fail(&err, PL_ERR_USAGE, "set PERFLENS_TOKEN or pass --token, as for the server",
			"viewer-url needs the server's bearer token");
	else if (!pl_login_link_query(values[1], (uint64_t)time(NULL) + PL_LOGIN_TTL_SECONDS, query,
				      sizeof(query)))
		pl_fail(&err, PL_ERR_INTERNAL, "retry", "no randomness for the login link");
	if (err.code)
		return cli_fail(&err);
	printf("http://%s/viewer/login?%s\n", values[0], query);
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
	const size_t plen = strlen(PL_SKILL_PREFIX);
	char path[PATH_MAX];

	*nfiles = 0;
	for (const struct pl_schema_file *f = pl_schema_files; f->path; f++) {
		const char *rel = f->path + plen;

		if (strncmp(f->path, PL_SKILL_PREFIX, plen) != 0)
			continue;
		if (!safe_relative(rel))
			return pl_fail(err, PL_ERR_INTERNAL, "fix the Skill's file names and rebuild",
				       "embedded Skill file '%s' has an unsafe name", f->path);
		if (!join_path(path, sizeof(path), stage, rel))
			return pl_fail(err, PL_ERR_OUTPUT, "use a shorter project path",
				       "path too long: '%s/%s'", stage, rel);
		if (pl_write_file_atomic(path, f->text, strlen(f->text), err))
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
		"DIR/.agents/skills/" PL_SKILL_NAME "/, where Codex finds it.  An existing\n"
		"folder is never overwritten: remove it first to reinstall.\n\n"
		"  --project DIR   the project root (must exist)\n");
}

/* The project, its skills folder, the Skill's destination and a staging
 * folder name beside it, resolved and checked. */
static enum pl_err skill_paths(const char *given, char proj[PATH_MAX], char skills[PATH_MAX],
			       char dest[PATH_MAX], char stage[PATH_MAX], struct pl_error *err)
{
	struct stat st;

	if (!given)
		return pl_fail(err, PL_ERR_USAGE, "name the project root: " SKILL_USAGE,
			       "'--project' is required");
	if (resolve_dir("project", given, "pass an existing folder: " SKILL_USAGE, proj, err))
		return err->code;
	if (!valid_utf8(proj))
		return pl_fail(err, PL_ERR_USAGE, "use a project path that is valid UTF-8",
			       "'%s' is not valid UTF-8", proj);
	if (!join_path(skills, PATH_MAX, proj, ".agents/skills") ||
	    !join_path(dest, PATH_MAX, skills, PL_SKILL_NAME) ||
	    !join_path(stage, PATH_MAX, skills, "." PL_SKILL_NAME ".tmp-XXXXXX"))
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
	static const char *const names[] = {"project"};
	const char *values[1] = {NULL};
	char proj[PATH_MAX], skills[PATH_MAX], dest[PATH_MAX], stage[PATH_MAX];
	struct pl_error err;
	size_t nfiles = 0;
	json_t *out;
	char *text;
	bool help;

	pl_error_clear(&err);
	if (parse_flags(argc, argv, "usage: " SKILL_USAGE, names, values, 1, &help, &err))
		return cli_fail(&err);
	if (help) {
		skill_usage(stdout);
		return 0;
	}
	if (skill_paths(values[0], proj, skills, dest, stage, &err) ||
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
