/* perfcfg.c - the perf flags, the perf found by default and the kallsyms
 * snapshot (see perfcfg.h).  --perf-path is resolved once, so that
 * workers and Landlock rules see the same absolute name. */
#include "perfcfg.h"
#include "base/escape.h"
#include "base/util.h"

#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

const char *const pl_perf_default_paths[] = {
	"/usr/bin/perf", "/usr/local/bin/perf", "/usr/sbin/perf", NULL,
};

const char *const pl_perf_reads[] = {
	"/usr", "/lib", "/lib64", "/etc/ld.so.cache", "/proc/kallsyms", "/proc/sys/kernel",
	"/sys/kernel/notes", "/sys/bus/event_source", "/sys/devices", NULL,
};

const char *const pl_perf_data_reads[] = {
	"/usr", "/lib", "/lib64", "/sys/kernel/notes", NULL,
};

const char *const pl_perf_collection_reads[] = {
	"/proc", "/sys/kernel/tracing", "/sys/kernel/debug", NULL,
};

/* The strings made here live as long as the process; kept so that leak
 * checkers see them as reachable. */
static char *kept[8];
static size_t nkept;

static char *keep(char *s)
{
	if (s && nkept < PL_ARRAY_LEN(kept))
		kept[nkept++] = s;
	return s;
}

static bool is_executable_file(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, X_OK) == 0;
}

/* The real path of an executable file (kept), or NULL; `path` is in the
 * escaped form of docs/paths.md, as a result prints it. */
static const char *resolved_executable(const char *path)
{
	char bytes[PATH_MAX], buf[PATH_MAX];

	if (!pl_esc_decode(path, bytes, sizeof(bytes)) || !realpath(bytes, buf) ||
	    !is_executable_file(buf))
		return NULL;
	return keep(pl_xstrdup(buf));
}

/* Where perf's own build-id cache is for the server's user, as perf
 * finds it ($PERF_BUILDID_DIR, else $HOME/.debug), resolved (kept), or
 * NULL when it is not a folder. */
static const char *resolved_buildid_dir(void)
{
	const char *env = getenv("PERF_BUILDID_DIR"), *home = getenv("HOME");
	char want[PATH_MAX], buf[PATH_MAX];
	struct stat st;

	if (env && env[0])
		snprintf(want, sizeof(want), "%s", env);
	else if (home && home[0] == '/')
		snprintf(want, sizeof(want), "%s/.debug", home);
	else
		return NULL;
	if (!realpath(want, buf) || stat(buf, &st) < 0 || !S_ISDIR(st.st_mode))
		return NULL;
	return keep(pl_xstrdup(buf));
}

static enum pl_err set_perf_path(void *target, const struct pl_option *o, const char *value,
				 struct pl_error *err)
{
	struct pl_perf_cfg *c = target;

	if (value[0] != '/' || !(c->path = resolved_executable(value)))
		return pl_fail(err, PL_ERR_USAGE, "fix the flag's value (see --help)",
			       "--%s '%s': needs the absolute path of an executable file", o->name, value);
	return PL_OK;
}

static enum pl_err set_seconds(void *target, const struct pl_option *o, const char *value,
			       struct pl_error *err)
{
	uint64_t s;

	if (!pl_parse_u64(value, strlen(value), &s) || s < 1 || s > o->max)
		return pl_fail(err, PL_ERR_USAGE, "fix the flag's value (see --help)",
			       "--%s '%s': takes 1 to %llu seconds", o->name, value,
			       (unsigned long long)o->max);
	*(uint32_t *)((char *)target + o->offset) = (uint32_t)s * 1000;
	return PL_OK;
}

const struct pl_option pl_perf_options[] = {
	{"perf-path", "FILE", "the perf that tools may run (default: first of /usr/bin/perf, "
	 "/usr/local/bin/perf, /usr/sbin/perf)", set_perf_path},
	{"perf-timeout", "S", "seconds one perf run may take (default 50)", set_seconds,
	 offsetof(struct pl_perf_cfg, timeout_ms), 3600},
	{NULL},
};

void pl_perf_cfg_finish(struct pl_perf_cfg *c)
{
	for (size_t i = 0; !c->path && pl_perf_default_paths[i]; i++)
		c->path = resolved_executable(pl_perf_default_paths[i]);
	if (!c->timeout_ms)
		c->timeout_ms = 50000;
	if (!c->probe_workload)
		c->probe_workload = resolved_executable("/proc/self/exe");
	if (!c->buildid_dir)
		c->buildid_dir = resolved_buildid_dir();
}

/* Copy `in` to the new file `path`; false on any failure. */
static bool copy_stream(FILE *in, const char *path)
{
	FILE *out = fopen(path, "w");
	char buf[65536];
	size_t n;
	bool ok;

	if (!out)
		return false;
	while ((n = fread(buf, 1, sizeof(buf), in)) > 0)
		if (fwrite(buf, 1, n, out) != n)
			break;
	/* A short write (a full /tmp) must not leave a cut kallsyms that
	 * perf would then trust. */
	ok = !ferror(in) && !ferror(out);
	return fclose(out) == 0 && ok;
}

bool pl_perf_cfg_snapshot_kallsyms(struct pl_perf_cfg *c)
{
	char dir[] = "/tmp/perflens-kallsyms.XXXXXX", path[64];
	FILE *in = fopen("/proc/kallsyms", "r");
	bool ok;

	if (!in)
		return false;
	if (!mkdtemp(dir)) {
		fclose(in);
		return false;
	}
	snprintf(path, sizeof(path), "%s/kallsyms", dir);
	ok = copy_stream(in, path);
	fclose(in);
	if (!ok) {
		unlink(path);
		rmdir(dir);
		return false;
	}
	c->kallsyms_path = keep(pl_xstrdup(path));
	return true;
}

void pl_perf_cfg_remove_kallsyms(const struct pl_perf_cfg *c)
{
	char dir[64];
	const char *slash;

	if (!c->kallsyms_path || !(slash = strrchr(c->kallsyms_path, '/')))
		return;
	snprintf(dir, sizeof(dir), "%.*s", (int)(slash - c->kallsyms_path), c->kallsyms_path);
	unlink(c->kallsyms_path);
	/* and the index the server made beside it (tools/lib/perf_data_read.h) */
	char index[80];
	if (snprintf(index, sizeof(index), "%s.index", c->kallsyms_path) < (int)sizeof(index))
		unlink(index);
	rmdir(dir);
}
