/* symcfg.c - the symbol flags shared by perflens and perflens-mcp.
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

static enum pl_err bad(struct pl_error *err, const char *flag, const char *value,
		       const char *why)
{
	return pl_fail(err, PL_ERR_USAGE, "fix the flag's value (see --help)", "--%s '%s': %s",
		       flag, value, why);
}

/* DEV=LOCAL or FROM=TO; `resolve_to` resolves TO to an existing path. */
static enum pl_err add_map(struct pl_path_map *maps, size_t *n, const char *flag,
			   const char *value, bool resolve_to, struct pl_error *err)
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
	return PL_OK;
}

static enum pl_err set_binary(void *target, const struct pl_option *o, const char *value,
			      struct pl_error *err)
{
	struct pl_sym_cfg *c = target;
	char *path;

	if (c->nbinaries == PL_SYM_MAX_PATHS)
		return bad(err, o->name, value, "too many (at most 32)");
	if (!(path = resolved(value)))
		return bad(err, o->name, value, "no such file");
	c->binaries[c->nbinaries++] = path;
	return PL_OK;
}

static enum pl_err set_sysroot(void *target, const struct pl_option *o, const char *value,
			       struct pl_error *err)
{
	struct pl_sym_cfg *c = target;

	if (!(c->sysroot = resolved(value)))
		return bad(err, o->name, value, "no such folder");
	return PL_OK;
}

static enum pl_err set_module_map(void *target, const struct pl_option *o, const char *value,
				  struct pl_error *err)
{
	struct pl_sym_cfg *c = target;

	return add_map(c->module_maps, &c->nmodule_maps, o->name, value, true, err);
}

static enum pl_err set_path_map(void *target, const struct pl_option *o, const char *value,
				struct pl_error *err)
{
	struct pl_sym_cfg *c = target;

	return add_map(c->path_maps, &c->npath_maps, o->name, value, false, err);
}

static enum pl_err set_debuginfod(void *target, const struct pl_option *o, const char *value,
				  struct pl_error *err)
{
	struct pl_sym_cfg *c = target;

	(void)o;
	(void)err;
	c->debuginfod_urls = value;
	c->debuginfod_set = true;
	return PL_OK;
}

static enum pl_err set_debuginfod_timeout(void *target, const struct pl_option *o,
					  const char *value, struct pl_error *err)
{
	char *end;
	unsigned long s = strtoul(value, &end, 10);

	if (!*value || *end || s < 1 || s > 3600)
		return bad(err, o->name, value, "takes 1 to 3600 seconds");
	((struct pl_sym_cfg *)target)->debuginfod_timeout_ms = (uint32_t)s * 1000;
	return PL_OK;
}

const struct pl_option pl_sym_options[] = {
	{"binary", "FILE", "local copy of a profiled binary, matched by build-id (repeatable)",
	 set_binary},
	{"sysroot", "DIR", "a device's root file system copied here", set_sysroot},
	{"module-map", "DEVICE=LOCAL", "use LOCAL for the module the profile calls DEVICE (repeatable)",
	 set_module_map},
	{"path-map", "FROM=TO", "source paths recorded under FROM are under TO here (repeatable)",
	 set_path_map},
	{"debuginfod", "URLS", "debuginfod servers (default $DEBUGINFOD_URLS; \"\" = off)",
	 set_debuginfod},
	{"debuginfod-timeout", "S", "seconds per debuginfod fetch (default 10)",
	 set_debuginfod_timeout},
	{NULL},
};

void pl_sym_cfg_finish(struct pl_sym_cfg *c)
{
	if (!c->debuginfod_set)
		c->debuginfod_urls = getenv("DEBUGINFOD_URLS");
	if (c->debuginfod_urls && !*c->debuginfod_urls)
		c->debuginfod_urls = NULL;
	if (!c->debuginfod_timeout_ms)
		c->debuginfod_timeout_ms = 10000;
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
