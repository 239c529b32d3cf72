/* collect.c - perf collection runs (see collect.h).
 *
 * Each mode is one perf command line plus, for some, a second perf run
 * over what the first wrote:
 *   record   perf record -e EV -F HZ [-g | --call-graph M] -N -o perf.data
 *   stat     perf stat -x, -e EV [-r N] -o stat.csv
 *   sched    perf sched record -o perf.data; perf sched timehist -s
 *   lock     perf lock record -o perf.data; perf lock report
 *   off_cpu  perf record -a -e sched:sched_switch -e sched:sched_waking/call-graph=no/
 *            -g|--call-graph dwarf -N
 *            -o perf.data;
 *            perf script, turned into blocked time per task and stack
 *            (offcpu.c: event "offcpu-time", unit ns, in offcpu.txt)
 * A command is either `-- EXECUTABLE ARGS` (perf starts it, so perf and
 * the target share the process group that a timeout kills) or `-p PID`,
 * stopped with SIGINT after the duration (perf stat then prints its
 * counts: that is its normal end).  The main command runs from the
 * collection launcher (launch.h) when there is one: outside the analysis
 * sandbox, as from the operator's shell; its output goes to files.  -N keeps perf from writing
 * its build-id cache outside the artifact root.
 */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>
#include <dirent.h>

#include "base/escape.h"
#include "base/fsatomic.h"
#include "coll_int.h"
#include "launch.h"
#include "capabilities.h"
#include "base/sha256.h"
#include "base/util.h"
#include "profile/profile.h"

#define MAX_ARGV (PL_COLLECT_MAX_ARGS + 2 * PL_COLLECT_MAX_EVENTS + 32)

static const char *const mode_names[] = {"record", "stat", "sched", "lock", "off_cpu"};
static const char *const output_names[] = {"file", "discard", "inline"};

bool pl_collect_output_from_name(const char *name, enum pl_collect_output *out)
{
	for (size_t i = 0; name && i < PL_ARRAY_LEN(output_names); i++)
		if (strcmp(name, output_names[i]) == 0) {
			*out = (enum pl_collect_output)i;
			return true;
		}
	return false;
}

bool pl_collect_mode_from_name(const char *name, enum pl_collect_mode *mode)
{
	for (size_t i = 0; i < PL_ARRAY_LEN(mode_names); i++)
		if (strcmp(name, mode_names[i]) == 0) {
			*mode = (enum pl_collect_mode)i;
			return true;
		}
	return false;
}

const char *pl_collect_mode_name(enum pl_collect_mode mode)
{
	return mode_names[mode];
}

/* --------------------------------------------------------- command lines */


struct argv_buf {
	const char *v[MAX_ARGV + 1];
	size_t n;
	char strs[8][64];   /* numbers printed for argv */
	size_t nstrs;
};

static void add(struct argv_buf *a, const char *s)
{
	if (a->n < MAX_ARGV)
		a->v[a->n++] = s;
	a->v[a->n] = NULL;
}

static const char *num(struct argv_buf *a, uint64_t x)
{
	char *s = a->strs[a->nstrs < 8 ? a->nstrs++ : 7];

	snprintf(s, 64, "%llu", (unsigned long long)x);
	return s;
}

/* --call-graph's value for dwarf: "dwarf", or "dwarf,N" with a stack
 * size asked. */
static const char *dwarf_value(struct argv_buf *a, const struct pl_collect_req *r)
{
	char *s;

	if (!r->dwarf_stack_bytes)
		return "dwarf";
	s = a->strs[a->nstrs < 8 ? a->nstrs++ : 7];
	snprintf(s, 64, "dwarf,%u", r->dwarf_stack_bytes);
	return s;
}

static void add_events(struct argv_buf *a, const struct pl_collect_req *r, const char *dflt)
{
	if (!r->nevents) {
		add(a, "-e");
		add(a, dflt);
	}
	for (size_t i = 0; i < r->nevents; i++) {
		add(a, "-e");
		add(a, r->events[i]);
	}
}

static void add_target(struct argv_buf *a, const struct pl_collect_req *r, bool system_wide)
{
	if (system_wide)
		add(a, "-a");
	if (r->pid > 0) {
		if (!system_wide) {
			add(a, "-p");
			add(a, num(a, (uint64_t)r->pid));
		}
		return;
	}
	add(a, "--");
	add(a, r->executable);
	for (size_t i = 0; i < r->nargs; i++)
		add(a, r->args[i]);
}

/* record: sampled stacks (cpu-clock unless events name others). */
static void record_args(struct argv_buf *a, const struct pl_collect_req *r, const char *out)
{
	add(a, "record");
	add_events(a, r, "cpu-clock");
	add(a, "-F");
	add(a, num(a, r->frequency_hz));
	if (strcmp(r->call_graph, "fp") == 0) {
		add(a, "-g");
	} else if (strcmp(r->call_graph, "none") != 0) {
		add(a, "--call-graph");
		add(a, strcmp(r->call_graph, "dwarf") == 0 ? dwarf_value(a, r) : r->call_graph);
	}
	add(a, "-N");
	add(a, "-o");
	add(a, out);
	add_target(a, r, false);
}

/* stat: counts as CSV. */
static void stat_args(struct argv_buf *a, const struct pl_collect_req *r, const char *out)
{
	add(a, "stat");
	add(a, "-x");
	add(a, ",");
	add_events(a, r, "task-clock,context-switches,cpu-migrations,page-faults,cycles,instructions");
	/* perf stat -x prints no elapsed, user and sys lines: its tool
	 * events give them (perf_stat.c reads them back). */
	add(a, "-e");
	add(a, "duration_time,user_time,system_time");
	if (r->repeat > 1) {
		add(a, "-r");
		add(a, num(a, r->repeat));
	}
	add(a, "-o");
	add(a, out);
	add_target(a, r, false);
}

/* off_cpu: every switch with its stack, and who woke each wait
 * (offcpu.c), without a stack of its own. */
static void off_cpu_args(struct argv_buf *a, const struct pl_collect_req *r, const char *out)
{
	add(a, "record");
	add(a, "-e");
	add(a, "sched:sched_switch");
	add(a, "-e");
	add(a, "sched:sched_waking/call-graph=no/");
	/* dwarf: perf copies the user stack at each switch, and perf
	 * script unwinds it (a frameless caller is then not skipped). */
	if (strcmp(r->call_graph, "dwarf") == 0) {
		add(a, "--call-graph");
		add(a, dwarf_value(a, r));
	} else {
		add(a, "-g");
	}
	add(a, "-N");
	add(a, "-o");
	add(a, out);
	add_target(a, r, true);
}

static void main_command(struct argv_buf *a, const struct pl_collect_env *env,
			 const struct pl_collect_req *r, const char *dir, char *out, size_t cap)
{
	add(a, env->perf_path);
	coll_join(out, cap, dir, r->mode == PL_COLLECT_STAT ? "stat.csv" : "perf.data");
	switch (r->mode) {
	case PL_COLLECT_RECORD:
		record_args(a, r, out);
		break;
	case PL_COLLECT_STAT:
		stat_args(a, r, out);
		break;
	case PL_COLLECT_SCHED:
	case PL_COLLECT_LOCK:
		add(a, r->mode == PL_COLLECT_SCHED ? "sched" : "lock");
		add(a, "record");
		add(a, "-o");
		add(a, out);
		add_target(a, r, r->mode == PL_COLLECT_SCHED && r->pid > 0);
		break;
	case PL_COLLECT_OFF_CPU:
		off_cpu_args(a, r, out);
		break;
	}
}


/* ------------------------------------------------------- running perf */

struct file_sink {
	FILE *fp;
	uint64_t bytes;
};

static enum pl_err to_file(void *arg, const char *line, size_t len, struct pl_error *err)
{
	struct file_sink *s = arg;

	(void)err;
	fwrite(line, 1, len, s->fp);
	fputc('\n', s->fp);
	s->bytes += len + 1;
	return PL_OK;
}



static enum pl_err post_to_file(const struct pl_collect_env *env, const char *const *argv,
				const char *path, uint32_t timeout_ms, struct pl_error *err)
{
	struct file_sink s = {fopen(path, "w"), 0};
	struct pl_run_result res;
	enum pl_err rc;

	if (!s.fp)
		return pl_fail(err, PL_ERR_OUTPUT, NULL, "cannot write '%s': %s", path, strerror(errno));
	rc = coll_run_perf(env, argv, timeout_ms, 0, false, to_file, &s, &res, err);
	pl_run_result_release(&res);
	if (fclose(s.fp) != 0 && rc == PL_OK)
		rc = pl_fail(err, PL_ERR_OUTPUT, "check free space", "cannot write '%s'", path);
	return rc;
}

/* ------------------------------------------------------------ metadata */

static char *perf_version(const struct pl_collect_env *env);

struct text_sink {
	struct pl_buf b;
	size_t cap;          /* bytes kept; 0 = 4096 */
};

static enum pl_err to_text(void *arg, const char *line, size_t len, struct pl_error *err)
{
	struct text_sink *t = arg;

	(void)err;
	if (t->b.len < (t->cap ? t->cap : 4096)) {
		pl_buf_add(&t->b, line, len);
		pl_buf_addc(&t->b, '\n');
	}
	return PL_OK;
}

int pl_perf_probe(const char *const *argv, uint32_t timeout_ms, char **out, char **err_text)
{
	struct pl_run_opts o = {.argv = argv, .timeout_ms = timeout_ms, .max_stdout = 64u << 20,
				.on_line = to_text, .max_stderr = 64u << 10};
	struct text_sink t = {{0}};
	struct pl_run_result res;
	struct pl_error ignored;
	int status = -1;

	o.arg = &t;
	t.cap = 1u << 20;
	if (pl_run(&o, &res, &ignored) == PL_OK && !res.signal)
		status = res.exit_status;
	pl_buf_addc(&t.b, '\0');
	*out = t.b.data;
	*err_text = res.stderr_text;
	res.stderr_text = NULL;
	return status;
}

char *pl_perf_version(const char *perf_path)
{
	struct pl_collect_env e = {.perf_path = perf_path};

	return perf_version(&e);
}

/* "perf version 6.1.187" (or NULL). */
static char *perf_version(const struct pl_collect_env *env)
{
	const char *argv[] = {env->perf_path, "version", NULL};
	struct pl_run_opts o = {.argv = argv, .timeout_ms = 10000, .max_stdout = 65536,
				.on_line = to_text};
	struct text_sink t = {{0}};
	struct pl_run_result res;
	struct pl_error ignored;
	char *v = NULL;

	o.arg = &t;
	if (pl_run(&o, &res, &ignored) == PL_OK && res.exit_status == 0 && t.b.len) {
		while (t.b.len && t.b.data[t.b.len - 1] == '\n')
			t.b.len--;
		v = pl_xstrndup(t.b.data, t.b.len);
	}
	pl_run_result_release(&res);
	pl_buf_release(&t.b);
	return v;
}

static json_t *kernel_json(void)
{
	struct utsname u;

	if (uname(&u) != 0)
		return json_null();
	return json_pack("{s:s,s:s,s:s,s:s}", "sysname", u.sysname, "release", u.release,
			 "version", u.version, "machine", u.machine);
}

static json_t *files_json(const char *dir)
{
	json_t *files = json_array();
	struct dirent **names;
	char path[PATH_MAX];
	struct stat st;
	int n = scandir(dir, &names, NULL, alphasort);

	for (int i = 0; i < n; i++) {
		if (names[i]->d_name[0] != '.') {
			coll_join(path, sizeof(path), dir, names[i]->d_name);
			if (stat(path, &st) == 0 && S_ISREG(st.st_mode))
				json_array_append_new(files, json_pack("{s:s,s:I}", "name", names[i]->d_name,
								       "bytes", (json_int_t)st.st_size));
		}
		free(names[i]);
	}
	if (n >= 0)
		free(names);
	return files;
}

/* "co-" + 20 hex of the metadata's SHA-256. */
static void make_id(const char *text, char id[32])
{
	char hex[65];

	pl_sha256_hex(text, strlen(text), hex);
	snprintf(id, 32, "co-%.20s", hex);
}

static void remove_tree(const char *dir)
{
	struct dirent **names;
	char path[PATH_MAX];
	int n = scandir(dir, &names, NULL, NULL);

	for (int i = 0; i < n; i++) {
		if (strcmp(names[i]->d_name, ".") && strcmp(names[i]->d_name, "..")) {
			coll_join(path, sizeof(path), dir, names[i]->d_name);
			unlink(path);
		}
		free(names[i]);
	}
	if (n >= 0)
		free(names);
	rmdir(dir);
}

/* ---------------------------------------------------------------- run */

/* The second perf run of sched, lock and off_cpu. */
static enum pl_err post_process(const struct pl_collect_env *env, const struct pl_collect_req *r,
				const char *dir, const char *data, json_t *meta, json_t *warnings,
				struct pl_error *err)
{
	char out[PATH_MAX];

	if (r->mode == PL_COLLECT_SCHED) {
		const char *argv[] = {env->perf_path, "sched", "timehist", "-i", data, "-s", NULL};
		coll_join(out, sizeof(out), dir, "timehist.txt");
		json_object_set_new(meta, "post_command", coll_argv_json(argv));
		return post_to_file(env, argv, out, r->timeout_ms, err);
	}
	if (r->mode == PL_COLLECT_LOCK)
		return coll_lock(env, r, dir, data, meta, warnings, err);
	if (r->mode == PL_COLLECT_OFF_CPU)
		return coll_off_cpu(env, r, dir, data, meta, err);
	return PL_OK;
}

/* One next step as a tool call, {"tool", "arguments" (stolen), "why"}:
 * the form every tool's next_steps take (tools/registry.h). */
static json_t *step(const char *tool, json_t *arguments, const char *why)
{
	return json_pack("{s:s,s:o,s:s}", "tool", tool, "arguments", arguments, "why", why);
}

/* When perf lock saw nothing: the off-CPU collection of the same target,
 * whose futex_wait stacks show user-space lock waits.  The authorization
 * is left to the caller: it is the user's to give for each collection. */
static json_t *lock_fallback_step(const struct pl_collect_req *r)
{
	json_t *args = json_pack("{s:s}", "mode", "off_cpu"), *list;

	if (r->pid > 0) {
		json_object_set_new(args, "pid", json_integer(r->pid));
		json_object_set_new(args, "duration_seconds", json_integer(r->duration_ms / 1000));
	} else {
		/* A path to pass back: the escaped form (docs/paths.md). */
		char *exe = pl_esc_dup(r->executable);
		json_object_set_new(args, "executable", json_string(exe));
		free(exe);
		list = json_array();
		for (size_t i = 0; i < r->nargs; i++)
			json_array_append_new(list, coll_text_json(r->args[i], strlen(r->args[i])));
		json_object_set_new(args, "arguments", list);
	}
	return step("collect_profile", args,
		    "perf lock sees kernel locks only: pthread mutex waits show in off-CPU stacks; add the "
		    "authorization, analyze its offcpu.txt and get_call_paths(event=offcpu-time, symbol=futex_wait)");
}

static json_t *next_steps(const struct pl_collect_req *r, const char *id, json_t *meta)
{
	json_t *n = json_array();
	json_t *lock_rows = json_object_get(json_object_get(meta, "lock"), "rows");

	switch (r->mode) {
	case PL_COLLECT_RECORD:
		/* Lines come from PerfLens's own symbolizer, as cheap as none:
		 * source_context needs them. */
		json_array_append_new(n, step("analyze_profile", json_pack("{s:o,s:b}", "path",
			json_sprintf("perflens://artifacts/collections/%s/perf.data", id), "srcline", 1),
			"analyze the samples, with source lines for source_context"));
		break;
	case PL_COLLECT_STAT:
		json_array_append_new(n, step("analyze_profile", json_pack("{s:o,s:s}", "path",
			json_sprintf("perflens://artifacts/collections/%s/stat.csv", id), "format", "perf_stat"),
			"read the counters, then get_perf_stat on the analysis"));
		break;
	case PL_COLLECT_OFF_CPU:
		json_array_append_new(n, step("analyze_profile", json_pack("{s:o}", "path",
			json_sprintf("perflens://artifacts/collections/%s/offcpu.txt", id)),
			"the event offcpu-time: blocked nanoseconds per task, state and stack"));
		break;
	case PL_COLLECT_SCHED:
		json_array_append_new(n, step("analyze_profile", json_pack("{s:o}", "path",
			json_sprintf("perflens://artifacts/collections/%s/perf.data", id)),
			"each sched tracepoint as its own event, and the whole per-task table"));
		json_array_append_new(n, step("read_artifact_page", json_pack("{s:o}", "artifact",
			json_sprintf("collections/%s/timehist.txt", id)), "perf sched timehist's own summary"));
		break;
	case PL_COLLECT_LOCK:
		if (json_integer_value(lock_rows) == 0)
			json_array_append_new(n, lock_fallback_step(r));
		json_array_append_new(n, step("read_artifact_page", json_pack("{s:o}", "artifact",
			json_sprintf("collections/%s/lock.txt", id)), "perf lock's report"));
		break;
	}
	return n;
}

/* Staging folders older than an hour belong to runs that died (a killed
 * worker cannot clean up after itself); no run lives that long. */
static void remove_stale_staging(const char *parent)
{
	struct dirent **names;
	char path[PATH_MAX];
	struct stat st;
	time_t now = time(NULL);
	int n = scandir(parent, &names, NULL, alphasort);

	for (int i = 0; i < n; i++) {
		if (strncmp(names[i]->d_name, ".staging-", 9) == 0) {
			coll_join(path, sizeof(path), parent, names[i]->d_name);
			if (stat(path, &st) == 0 && S_ISDIR(st.st_mode) && now - st.st_mtime > 3600)
				remove_tree(path);
		}
		free(names[i]);
	}
	if (n >= 0)
		free(names);
}

/* The main perf run, and the metadata of what it did. */
/* perf record says nothing when it cannot write perf.data (it exits 255):
 * a failure with the staging folder's file system (nearly) full is that,
 * and the error says so instead of blaming the event or the target.  Less
 * than 1 MiB free counts: perf writes its ring buffers in pieces of up to
 * about 512 KiB, so the write that failed may have left that much. */
static enum pl_err blame_full_disk(const char *staging, enum pl_err rc, struct pl_error *err)
{
	struct statvfs v;
	unsigned long long avail;
	char was[sizeof(err->text)];

	if (rc != PL_ERR_EXTERNAL || statvfs(staging, &v) != 0)
		return rc;
	avail = (unsigned long long)v.f_bavail * v.f_frsize;
	if (avail >= (1u << 20))
		return rc;
	snprintf(was, sizeof(was), "%s", err->text);
	return pl_fail(err, PL_ERR_OUTPUT, "free space on the artifact root's file system (df), then collect again",
		       "the artifact root's file system is full (%llu bytes free) so perf could not write its "
		       "output: %s", avail, was);
}

static enum pl_err run_program(const struct pl_collect_env *env, const struct pl_collect_req *r,
			       const char *const *argv, const char *staging, struct pl_run_result *res,
			       struct coll_tail *out, json_t *extra, struct pl_error *err);

static void distortions(const struct pl_collect_env *env, const char *text, bool pid_attached,
			const char *data, json_t *meta, json_t *warnings);

/* Where and how the program ran, for the metadata. */
static json_t *launch_json(const struct pl_collect_env *env, const struct pl_collect_req *r)
{
	json_t *names = json_array();
	char *cwd = r->cwd ? pl_esc_dup(r->cwd) : NULL;
	json_t *j;

	for (size_t i = 0; i < r->nenv; i++) {
		size_t k = strcspn(r->env[i], "=");
		json_array_append_new(names, coll_text_json(r->env[i], k));
	}
	j = json_pack("{s:s,s:s,s:s?,s:o}", "where", env->launcher_conn > 0 ? "launcher" : "this_process",
		      "why", env->launcher_conn > 0 ?
		      "perf and the program ran from the collection launcher, outside the analysis sandbox: with the server's user, capabilities, rlimits, environment, files and network" :
		      "perf and the program ran from this process (the CLI), unconfined",
		      "working_directory", cwd, "environment_added", names);
	free(cwd);
	return j;
}

static enum pl_err run_main(const struct pl_collect_env *env, const struct pl_collect_req *r,
			    const char *staging, char *data, size_t cap, json_t **meta,
			    json_t *warnings, struct pl_error *err)
{
	json_t *extra = json_object();
	struct argv_buf a = {0};
	struct pl_run_result res;
	struct coll_tail out = {{0}};
	char started[32], tail[512], *version;
	time_t now = time(NULL);
	bool target_failed;
	enum pl_err rc;

	main_command(&a, env, r, staging, data, cap);
	strftime(started, sizeof(started), "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
	rc = run_program(env, r, a.v, staging, &res, &out, extra, err);
	if (rc == PL_OK && access(data, F_OK) != 0)
		rc = pl_fail(err, PL_ERR_EXTERNAL, "check --perf-path: it should name perf",
			     "%s %s ended with status %d and wrote no %s", a.v[0], a.v[1], res.exit_status,
			     strrchr(data, '/') + 1);
	rc = blame_full_disk(staging, rc, err);
	pl_run_stderr_tail(&res, tail, sizeof(tail));
	version = perf_version(env);
	*meta = json_pack("{s:s,s:i,s:s,s:s?,s:o,s:s?,s:o,s:o,s:s,s:f,s:i,s:i,s:b,s:o,s:o}",
		"schema", "perflens.collection", "version", 1, "mode", pl_collect_mode_name(r->mode),
		"name", r->name, "command", coll_argv_json(a.v), "perf_version", version,
		"kernel", kernel_json(), "cpus", coll_cpus_json(), "started_at", started,
		"duration_seconds", res.seconds, "exit_status", res.exit_status, "signal", res.signal,
		"timed_out", res.timed_out, "stderr_tail", coll_text_json(tail, strlen(tail)),
		"target", coll_target_json(r, &res, &out, coll_counts_written(r, staging), &target_failed));
	json_object_update(json_object_get(*meta, "target"), extra);
	json_decref(extra);
	json_object_set_new(*meta, "launch", launch_json(env, r));
	json_object_set_new(*meta, "rusage", json_pack("{s:f,s:f,s:I,s:s}", "user_seconds", res.user_seconds,
		"system_seconds", res.system_seconds, "max_rss_kb", (json_int_t)res.max_rss_kb, "of",
		"perf and the children it waited for (the program it started)"));
	if (rc == PL_OK && target_failed) {
		json_t *t = json_object_get(*meta, "target");
		json_t *sig = json_object_get(t, "signal");
		json_array_append_new(warnings, json_sprintf(
			"the target ended with %s %d: the profile covers a run that failed; its output is in metadata.target",
			json_is_integer(sig) ? "signal" : "status",
			(int)json_integer_value(json_is_integer(sig) ? sig : json_object_get(t, "exit_status"))));
	}
	if (rc == PL_OK)
		distortions(env, res.stderr_text, r->pid > 0, r->mode == PL_COLLECT_STAT ? NULL : data, *meta,
			    warnings);
	free(version);
	pl_buf_release(&out.buf);
	pl_run_result_release(&res);
	return rc;
}

/* --------------------------------------------------- the program's run */

/* Up to `cap` bytes of a file, its last ones (or its first, with
 * `head`), NUL-terminated; *size gets its size.  NULL when unreadable. */
static char *read_part(const char *path, size_t cap, bool head, uint64_t *size)
{
	FILE *fp = fopen(path, "rb");
	struct stat st;
	char *buf;
	size_t n;

	*size = 0;
	if (!fp)
		return NULL;
	if (fstat(fileno(fp), &st) == 0)
		*size = (uint64_t)st.st_size;
	if (!head && *size > cap)
		fseeko(fp, (off_t)(*size - cap), SEEK_SET);
	buf = pl_xmalloc(cap + 1);
	n = fread(buf, 1, cap, fp);
	buf[n] = '\0';
	fclose(fp);
	return buf;
}

bool coll_counts_written(const struct pl_collect_req *r, const char *staging)
{
	char path[PATH_MAX];
	struct stat st;

	if (r->mode != PL_COLLECT_STAT)
		return false;
	coll_join(path, sizeof(path), staging, "stat.csv");
	return stat(path, &st) == 0 && st.st_size > 0;
}

/* Where the main run's streams go (collect.h's enum pl_collect_output). */
static json_t *stream_json(enum pl_collect_output to, const char *file)
{
	if (to == PL_OUT_FILE)
		return json_pack("{s:s,s:s}", "to", "file", "file", file);
	return json_pack("{s:s}", "to", to == PL_OUT_DISCARD ? "discard" : "inline");
}

/* The main perf command, the program it starts with it: through the
 * launcher when there is one, else from here; stdout and stderr into
 * files of the staging folder (never a pipe the program could wait on),
 * then read back: stderr (perf's lines and the program's) into
 * res->stderr_text, the tail of stdout into `out`, an inline stream into
 * meta["target_output"]. */
static enum pl_err run_program(const struct pl_collect_env *env, const struct pl_collect_req *r,
			       const char *const *argv, const char *staging, struct pl_run_result *res,
			       struct coll_tail *out, json_t *extra, struct pl_error *err)
{
	char out_path[PATH_MAX], err_path[PATH_MAX], *text;
	struct pl_run_opts o = {
		.argv = argv, .env = r->env, .inherit_env = true, .cwd = r->cwd,
		.stderr_path = err_path, .timeout_ms = r->timeout_ms,
		.interrupt_ms = r->pid > 0 ? r->duration_ms : 0, .cancel = env->cancel,
		.progress_ms = r->pid > 0 ? r->duration_ms : r->timeout_ms,
	};
	uint64_t size;
	enum pl_err rc;

	coll_join(out_path, sizeof(out_path), staging, "target.stdout");
	coll_join(err_path, sizeof(err_path), staging, "target.stderr");
	o.stdout_path = r->out_stdout == PL_OUT_DISCARD ? "/dev/null" : out_path;
	if (env->launcher_conn > 0)
		rc = coll_launch_run(env->launcher_conn, &o, res, err);
	else
		rc = pl_run(&o, res, err);
	free(res->stderr_text);
	res->stderr_text = read_part(err_path, 1u << 20, false, &size);
	res->stderr_truncated = size > (1u << 20);
	if (r->out_stdout != PL_OUT_DISCARD && (text = read_part(out_path, 8192, false, &size))) {
		pl_buf_add(&out->buf, text, strlen(text));
		out->bytes = size;
		free(text);
	}
	if (r->out_stdout == PL_OUT_INLINE || r->out_stderr == PL_OUT_INLINE) {
		json_t *inl = json_object();
		for (int i = 0; i < 2; i++) {
			enum pl_collect_output to = i ? r->out_stderr : r->out_stdout;
			if (to != PL_OUT_INLINE || !(text = read_part(i ? err_path : out_path,
								      PL_COLLECT_INLINE_BYTES, true, &size)))
				continue;
			json_object_set_new(inl, i ? "stderr" : "stdout", coll_text_json(text, strlen(text)));
			json_object_set_new(inl, i ? "stderr_bytes" : "stdout_bytes", json_integer((json_int_t)size));
			free(text);
		}
		json_object_set_new(extra, "target_output", inl);
	}
	if (r->out_stdout == PL_OUT_INLINE)
		unlink(out_path);
	if (r->out_stderr != PL_OUT_FILE)
		unlink(err_path);
	json_object_set_new(extra, "stdout", stream_json(r->out_stdout, "target.stdout"));
	json_object_set_new(extra, "stderr", stream_json(r->out_stderr, "target.stderr"));
	json_object_set_new(extra, "stdin", json_string("/dev/null"));
	if (rc)
		return rc;
	return coll_judge_perf(argv, res, r->pid <= 0, coll_counts_written(r, staging), err);
}

/* ------------------------------------------------------ what may distort */

#define MAX_EXAMPLES 5

/* Case-insensitive: does the line read like an error or a warning? */
static bool error_looking(const char *line, size_t n)
{
	static const char *const words[] = {"error", "fatal", "failed", "failure", "panic", "abort",
					    "exception", "segmentation fault", "killed", "cannot",
					    "can't", "denied", "not found", "warning"};
	char low[512];

	if (n >= sizeof(low))
		n = sizeof(low) - 1;
	for (size_t i = 0; i < n; i++)
		low[i] = (char)(line[i] >= 'A' && line[i] <= 'Z' ? line[i] + 32 : line[i]);
	low[n] = '\0';
	for (size_t i = 0; i < PL_ARRAY_LEN(words); i++)
		if (strstr(low, words[i]))
			return true;
	return false;
}

/* perf's own lines in the shared stderr: its progress ("[ perf record:
 * ...]"), and its warnings, which say the profile lost data. */
static bool perf_status_line(const char *line)
{
	return strncmp(line, "[ perf record:", 14) == 0;
}

static bool perf_warning_line(const char *line, bool after_warning)
{
	/* "WARNING: Ignored open failure for pid N": attached to a process,
	 * perf could not open one of its threads (it had exited). */
	return strncmp(line, "Warning:", 8) == 0 || strstr(line, "Check IO/CPU overload") ||
	       strstr(line, "Ignored open failure for pid") ||
	       (strstr(line, "lost ") && strstr(line, "chunks")) ||
	       (after_warning && strstr(line, "events and lost"));
}

json_t *coll_stderr_findings(const char *text, bool perf_only, json_t *warnings)
{
	json_t *pw = json_object(), *perf_lines = json_array(), *examples = json_array();
	unsigned long long chunks = 0, events = 0, nerr = 0, n1, n2;
	bool after_warning = false;

	for (const char *p = text ? text : ""; *p;) {
		const char *nl = strchr(p, '\n');
		size_t n = nl ? (size_t)(nl - p) : strlen(p);
		char line[512];

		snprintf(line, sizeof(line), "%.*s", (int)(n < sizeof(line) ? n : sizeof(line) - 1), p);
		p += n + (nl != NULL);
		if (!line[0] || perf_status_line(line))
			continue;
		if (perf_warning_line(line, after_warning) || (perf_only && error_looking(line, strlen(line)))) {
			const char *at = strstr(line, "Processed ");
			if (at && sscanf(at, "Processed %llu events and lost %llu chunks", &n1, &n2) == 2)
				events += n1, chunks += n2;
			if (json_array_size(perf_lines) < 10)
				json_array_append_new(perf_lines, coll_text_json(line, strlen(line)));
			after_warning = strncmp(line, "Warning:", 8) == 0;
			continue;
		}
		after_warning = false;
		if (!perf_only && error_looking(line, strlen(line))) {
			nerr++;
			if (json_array_size(examples) < MAX_EXAMPLES)
				json_array_append_new(examples, coll_text_json(line, strlen(line)));
		}
	}
	json_object_set_new(pw, "perf_lines", perf_lines);
	json_object_set_new(pw, "lost_chunks", json_integer((json_int_t)chunks));
	json_object_set_new(pw, "target_error_lines", json_integer((json_int_t)nerr));
	json_object_set_new(pw, "target_error_examples", examples);
	if (chunks)
		json_array_append_new(warnings, json_sprintf(
			"perf lost %llu chunks of its ring buffer (processed %llu events): samples are missing where "
			"the machine was busiest; lower frequency_hz, collect fewer events or use a quieter machine",
			chunks, events));
	else if (json_array_size(perf_lines))
		json_array_append_new(warnings, json_sprintf("perf warned: %s (metadata.perf_warnings.perf_lines)",
			json_string_value(json_array_get(perf_lines, 0))));
	if (nerr)
		json_array_append_new(warnings, json_sprintf(
			"the program wrote %llu error-looking line(s) to stderr, first: \"%s\"; read them "
			"(metadata.perf_warnings, target.stderr) before trusting the profile",
			nerr, json_string_value(json_array_get(examples, 0))));
	return pw;
}

/* perf's warnings and the program's error-looking lines from the run's
 * stderr into meta["perf_warnings"] (coll_stderr_findings), then what
 * perf.data says was lost (env->count_lost). */
static void distortions(const struct pl_collect_env *env, const char *text, bool pid_attached,
			const char *data, json_t *meta, json_t *warnings)
{
	json_t *pw = coll_stderr_findings(text, pid_attached, warnings);
	uint64_t recs = 0, lost = 0, lost_samples = 0;

	if (data && env->count_lost && env->count_lost(data, &recs, &lost, &lost_samples)) {
		json_object_set_new(pw, "lost_records", json_integer((json_int_t)recs));
		json_object_set_new(pw, "lost_events", json_integer((json_int_t)lost));
		json_object_set_new(pw, "lost_samples", json_integer((json_int_t)lost_samples));
		if (recs || lost_samples)
			json_array_append_new(warnings, json_sprintf(
				"perf.data holds %llu PERF_RECORD_LOST records (%llu events lost) and %llu lost samples "
				"(PERF_RECORD_LOST_SAMPLES): the profile misses them",
				(unsigned long long)recs, (unsigned long long)lost, (unsigned long long)lost_samples));
	}
	json_object_set_new(meta, "perf_warnings", pw);
}

/* metadata.json into the staging folder, which then becomes
 * collections/ID in one rename; *id is the metadata's hash. */
static enum pl_err commit(const char *parent, const char *staging, json_t *meta, char id[32],
			  char *final, size_t cap, struct pl_error *err)
{
	char path[PATH_MAX], *text;
	enum pl_err rc;

	json_object_set_new(meta, "files", files_json(staging));
	text = json_dumps(meta, JSON_SORT_KEYS | JSON_INDENT(1));
	make_id(text, id);
	coll_join(final, cap, parent, id);
	json_object_set_new(meta, "collection_id", json_string(id));
	free(text);
	text = json_dumps(meta, JSON_SORT_KEYS | JSON_INDENT(1));
	coll_join(path, sizeof(path), staging, "metadata.json");
	rc = pl_write_file_atomic(path, text, strlen(text), err);
	free(text);
	if (rc == PL_OK && rename(staging, final) != 0)
		rc = pl_fail(err, PL_ERR_OUTPUT, NULL, "cannot rename '%s': %s", staging, strerror(errno));
	return rc;
}

bool pl_collect_is_tracepoint(const char *ev)
{
	const char *colon = strchr(ev, ':');

	return colon && strspn(colon + 1, "ukhGHpPSDWe") != strlen(colon + 1);
}

/* The modes that record tracepoints, and tracepoint events, need tracefs
 * mounted.  perf mounts it itself when it is not (from the launcher it
 * could), but PerfLens does not change the machine's mounts behind the
 * operator: a machine where nothing mounted it yet is told how to, before
 * anything runs.  An event only PerfLens names (offcpu-time) is refused
 * with the mode that makes it: perf would exit 129. */
static enum pl_err require_tracefs(const struct pl_collect_req *r, struct pl_error *err)
{
	static const char *const roots[] = {"/sys/kernel/tracing/events", "/sys/kernel/debug/tracing/events"};
	bool events_used = r->mode == PL_COLLECT_RECORD || r->mode == PL_COLLECT_STAT;
	const char *tracepoint = NULL;

	for (size_t i = 0; events_used && i < r->nevents; i++) {
		if (pl_event_is_offcpu_time(r->events[i]))
			return pl_fail(err, PL_ERR_USAGE, "collect off-CPU time with mode=\"off_cpu\" (no events)",
				       "'%s' is PerfLens's name for off-CPU time, not an event perf knows", r->events[i]);
		if (!tracepoint && pl_collect_is_tracepoint(r->events[i]))
			tracepoint = r->events[i];
	}
	if (r->mode != PL_COLLECT_OFF_CPU && r->mode != PL_COLLECT_SCHED && r->mode != PL_COLLECT_LOCK && !tracepoint)
		return PL_OK;
	for (size_t i = 0; i < PL_ARRAY_LEN(roots); i++)
		if (access(roots[i], F_OK) == 0)
			return PL_OK;
	if (tracepoint)
		return pl_fail(err, PL_ERR_UNSUPPORTED,
			       "as root: " COLL_TRACEFS_MOUNT " (perf would mount it itself; PerfLens does not "
			       "mount file systems on the machine), then call again; or leave the tracepoint out",
			       "event '%s' is a tracepoint, and tracefs is not mounted (no /sys/kernel/tracing/events)",
			       tracepoint);
	return pl_fail(err, PL_ERR_UNSUPPORTED,
		       "as root: " COLL_TRACEFS_MOUNT " (perf would mount it itself; PerfLens does not "
		       "mount file systems on the machine), then call again; mode=record needs no tracepoints",
		       "mode=%s records tracepoints, and tracefs is not mounted (no /sys/kernel/tracing/events)",
		       pl_collect_mode_name(r->mode));
}

enum pl_err pl_collect(const struct pl_collect_env *env, const struct pl_collect_req *r,
		       json_t **result, struct pl_error *err)
{
	char parent[PATH_MAX], staging[PATH_MAX], final[PATH_MAX], data[PATH_MAX], id[32], *shown;
	json_t *meta = NULL, *warnings = json_array();
	enum pl_err rc;

	/* A program run inside the analysis sandbox does not run as it does
	 * without PerfLens (files, sockets, /proc refused): no profile of
	 * that, and nothing run. */
	if (env->confined && env->launcher_conn <= 0) {
		rc = pl_fail(err, PL_ERR_UNSUPPORTED,
			     "restart perflens-mcp (its stderr says why the launcher did not start); docs/collection.md",
			     "collection refused: the collection launcher is not running, and the program would run "
			     "inside the analysis sandbox, not as it runs without PerfLens");
		goto fail;
	}
	snprintf(parent, sizeof(parent), "%s/collections", env->artifact_root);
	if ((rc = require_tracefs(r, err)) || (rc = pl_make_dirs(parent, err)))
		goto fail;
	remove_stale_staging(parent);
	coll_join(staging, sizeof(staging), parent, ".staging-XXXXXX");
	if (!mkdtemp(staging)) {
		rc = pl_fail(err, PL_ERR_OUTPUT, "check that the artifact root is writable",
			     "cannot create a folder in '%s': %s", parent, strerror(errno));
		goto fail;
	}
	rc = run_main(env, r, staging, data, sizeof(data), &meta, warnings, err);
	if (rc == PL_OK)
		rc = post_process(env, r, staging, data, meta, warnings, err);
	if (rc == PL_OK) {
		/* Kept with the collection: analyze_profile repeats them in its
		 * data quality. */
		json_object_set(meta, "warnings", warnings);
		rc = commit(parent, staging, meta, id, final, sizeof(final), err);
	}
	if (rc) {
		/* Nothing half-made stays: a timeout or failure removes it all. */
		remove_tree(staging);
		goto fail;
	}
	shown = pl_esc_dup(final);  /* the artifact root's path is bytes */
	*result = json_pack("{s:s,s:s,s:O,s:o,s:o,s:o}", "collection_id", id, "folder", shown,
			    "files", json_object_get(meta, "files"), "metadata", meta,
			    "warnings", warnings, "next_steps", next_steps(r, id, meta));
	free(shown);
	return PL_OK;
fail:
	json_decref(meta);
	json_decref(warnings);
	return rc;
}
