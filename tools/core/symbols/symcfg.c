/* symcfg.c - the symbol and perf flags shared by perflens and perflens-mcp.
 *
 * Flags are checked when given (files must exist, maps need '='), and
 * paths are resolved once so that workers and Landlock rules see the same
 * absolute names.  Resolved strings are kept for the process lifetime.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "symcfg.h"
#include "base/escape.h"
#include "base/util.h"

const char *const pl_perf_default_paths[] = {
	"/usr/bin/perf", "/usr/local/bin/perf", "/usr/sbin/perf", NULL,
};

const char pl_sym_cfg_help[] =
	"  --perf-path FILE             the perf that tools may run (default: first of /usr/bin/perf,\n"
	"                               /usr/local/bin/perf, /usr/sbin/perf)\n"
	"  --binary FILE                local copy of a profiled binary, matched by build-id (repeatable)\n"
	"  --sysroot DIR                a device's root file system copied here\n"
	"  --module-map DEVICE=LOCAL    use LOCAL for the module the profile calls DEVICE (repeatable)\n"
	"  --path-map FROM=TO           source paths recorded under FROM are under TO here (repeatable)\n"
	"  --debuginfod URLS            debuginfod servers (default $DEBUGINFOD_URLS; \"\" = off)\n"
	"  --debuginfod-timeout S       seconds per debuginfod fetch (default 10)\n"
	"  --perf-timeout S             seconds one perf run may take (default 50)\n";

/* Strings of the configuration live as long as the process; they are
 * kept here so that leak checkers see them as reachable. */
static char *kept[4 * PL_SYM_MAX_PATHS + 8];
static size_t nkept;

static char *keep(char *s)
{
	if (s && nkept < PL_ARRAY_LEN(kept))
		kept[nkept++] = s;
	return s;
}

/* `path` is in the escaped form of docs/paths.md, as a result prints it. */
static char *resolved(const char *path)
{
	char bytes[PATH_MAX], buf[PATH_MAX];

	if (!pl_esc_decode(path, bytes, sizeof(bytes)))
		return NULL;
	return realpath(bytes, buf) ? keep(pl_xstrdup(buf)) : NULL;
}

static bool is_executable_file(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, X_OK) == 0;
}

static int bad(struct pl_error *err, const char *flag, const char *value, const char *why)
{
	pl_fail(err, PL_ERR_USAGE, "fix the flag's value (see --help)", "--%s '%s': %s", flag,
		value, why);
	return -1;
}

/* DEV=LOCAL or FROM=TO; `resolve_to` resolves TO to an existing path. */
static int add_map(struct pl_path_map *maps, size_t *n, const char *flag, const char *value,
		   bool resolve_to, struct pl_error *err)
{
	const char *eq = strchr(value, '=');
	char *from, *to;

	if (!eq || eq == value || !eq[1])
		return bad(err, flag, value, "expected FROM=TO with both sides non-empty");
	if (*n == PL_SYM_MAX_PATHS)
		return bad(err, flag, value, "too many (at most 32)");
	to = resolve_to ? resolved(eq + 1) : keep(pl_xstrdup(eq + 1));
	if (!to)
		return bad(err, flag, value, "the local side does not exist");
	from = keep(pl_xstrndup(value, (size_t)(eq - value)));
	/* A trailing '/' on FROM would stop "FROM/x" from matching. */
	while (strlen(from) > 1 && from[strlen(from) - 1] == '/')
		from[strlen(from) - 1] = '\0';
	maps[*n].from = from;
	maps[(*n)++].to = to;
	return 1;
}

int pl_sym_cfg_option(struct pl_sym_cfg *c, const char *flag, const char *value,
		      struct pl_error *err)
{
	char *path;

	if (strcmp(flag, "perf-path") == 0) {
		if (value[0] != '/' || !(path = resolved(value)) || !is_executable_file(path))
			return bad(err, flag, value, "needs the absolute path of an executable file");
		c->perf_path = path;
	} else if (strcmp(flag, "binary") == 0) {
		if (c->nbinaries == PL_SYM_MAX_PATHS)
			return bad(err, flag, value, "too many (at most 32)");
		if (!(path = resolved(value)))
			return bad(err, flag, value, "no such file");
		c->binaries[c->nbinaries++] = path;
	} else if (strcmp(flag, "sysroot") == 0) {
		if (!(path = resolved(value)))
			return bad(err, flag, value, "no such folder");
		c->sysroot = path;
	} else if (strcmp(flag, "module-map") == 0) {
		return add_map(c->module_maps, &c->nmodule_maps, flag, value, true, err);
	} else if (strcmp(flag, "path-map") == 0) {
		return add_map(c->path_maps, &c->npath_maps, flag, value, false, err);
	} else if (strcmp(flag, "debuginfod") == 0) {
		c->debuginfod_urls = value;
		c->debuginfod_set = true;
	} else if (strcmp(flag, "debuginfod-timeout") == 0 || strcmp(flag, "perf-timeout") == 0) {
		char *end;
		unsigned long s = strtoul(value, &end, 10);
		if (!*value || *end || s < 1 || s > 3600)
			return bad(err, flag, value, "takes 1 to 3600 seconds");
		if (flag[0] == 'd')
			c->debuginfod_timeout_ms = (uint32_t)s * 1000;
		else
			c->perf_timeout_ms = (uint32_t)s * 1000;
	} else {
		return 0;
	}
	return 1;
}

void pl_sym_cfg_finish(struct pl_sym_cfg *c)
{
	for (size_t i = 0; !c->perf_path && pl_perf_default_paths[i]; i++)
		if (is_executable_file(pl_perf_default_paths[i]))
			c->perf_path = resolved(pl_perf_default_paths[i]);
	if (!c->debuginfod_set)
		c->debuginfod_urls = getenv("DEBUGINFOD_URLS");
	if (c->debuginfod_urls && !*c->debuginfod_urls)
		c->debuginfod_urls = NULL;
	if (!c->debuginfod_timeout_ms)
		c->debuginfod_timeout_ms = 10000;
	if (!c->perf_timeout_ms)
		c->perf_timeout_ms = 50000;
}

bool pl_sym_cfg_snapshot_kallsyms(struct pl_sym_cfg *c)
{
	char dir[] = "/tmp/perflens-kallsyms.XXXXXX", path[64], buf[65536];
	FILE *in = fopen("/proc/kallsyms", "r"), *out;
	size_t n;
	bool ok;

	if (!in)
		return false;
	if (!mkdtemp(dir)) {
		fclose(in);
		return false;
	}
	snprintf(path, sizeof(path), "%s/kallsyms", dir);
	if (!(out = fopen(path, "w"))) {
		fclose(in);
		rmdir(dir);
		return false;
	}
	while ((n = fread(buf, 1, sizeof(buf), in)) > 0)
		fwrite(buf, 1, n, out);
	ok = !ferror(in);
	fclose(in);
	if (fclose(out) != 0 || !ok) {
		unlink(path);
		rmdir(dir);
		return false;
	}
	c->kallsyms_path = keep(pl_xstrdup(path));
	return true;
}

void pl_sym_cfg_remove_kallsyms(const struct pl_sym_cfg *c)
{
	char dir[64];
	const char *slash;

	if (!c->kallsyms_path || !(slash = strrchr(c->kallsyms_path, '/')))
		return;
	snprintf(dir, sizeof(dir), "%.*s", (int)(slash - c->kallsyms_path), c->kallsyms_path);
	unlink(c->kallsyms_path);
	rmdir(dir);
}

bool pl_path_map_apply(const struct pl_path_map *maps, size_t n, const char *path,
		       char *out, size_t cap)
{
	for (size_t i = 0; i < n; i++) {
		size_t len = strlen(maps[i].from);
		int w;
		if (strncmp(path, maps[i].from, len) != 0 || (path[len] && path[len] != '/'))
			continue;
		w = snprintf(out, cap, "%s%s", maps[i].to, path + len);
		return w >= 0 && (size_t)w < cap;
	}
	return false;
}
