/* collect_profile.c - the collect_profile tool: the gates, then collect.c.
 *
 * Gates are checked in a fixed order before anything runs, and the first
 * one closed is the error: its message names the gate and its hint says
 * how to open it (which startup flag, which argument and its exact
 * phrase).  Nothing is run and nothing is written while one is closed.
 * A sched collection answers with its per-task table, read from the
 * perf.data as analyze_profile reads it.
 */
#include "registry.h"
#include "tools/lib/collect_chains.h"
#include "collectors/collect.h"
#include "collectors/perf_data.h"
#include "tools/lib/perf_data_read.h"
#include "store/sched_json.h"
#include "sandbox/sandbox.h"

#include "perfdata/pdformat.h"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include <limits.h>
#include <string.h>
#include <unistd.h>

static enum pl_err gate(struct pl_error *err, const char *what, const char *how)
{
	return pl_fail(err, PL_ERR_PATH, how, "collection refused: %s", what);
}

enum pl_err tool_collection_gates(const struct tool_ctx *ctx, json_t *args, bool pid_mode,
			       struct pl_error *err)
{
	const char *auth = json_string_value(json_object_get(args, "authorization"));
	const char *pid_auth = json_string_value(json_object_get(args, "pid_authorization"));

	if (!ctx->allow_collection)
		return gate(err, "collection is not enabled (the server was not started with --allow-collection)",
			    "restart perflens-mcp with --allow-collection --allow-writes --allow-process-execution --artifact-root DIR; the CLI needs --authorize-target PHRASE");
	if (!ctx->allow_writes || !ctx->artifact_root)
		return gate(err, "the server was not started with --allow-writes",
			    "restart perflens-mcp with --allow-writes --artifact-root DIR");
	if (!ctx->allow_process_execution)
		return gate(err, "the server was not started with --allow-process-execution",
			    "restart perflens-mcp with --allow-process-execution");
	if (!ctx->perf.path)
		return pl_fail(err, PL_ERR_UNSUPPORTED, "install linux-perf or pass --perf-path FILE",
			       "collection refused: no perf was found");
	if (!auth || strcmp(auth, PL_COLLECT_PHRASE) != 0)
		return gate(err, "the call lacks the authorization phrase (argument authorization)",
			    "ask the user whether you may profile this target; only the user gives the phrase "
			    "(authorization; CLI: --authorize-target), never fill it in yourself");
	if (!pid_mode)
		return PL_OK;
	if (!ctx->allow_pid_attach)
		return gate(err, "attaching to a pid needs --allow-pid-attach at server start",
			    "restart perflens-mcp with --allow-pid-attach, or start the program with executable=");
	if (!pid_auth || strcmp(pid_auth, PL_PID_ATTACH_PHRASE) != 0)
		return gate(err, "the call lacks the pid attach phrase (argument pid_authorization)",
			    "ask the user whether you may attach to this process; only the user gives the phrase "
			    "(pid_authorization), never fill it in yourself");
	if (!json_object_get(args, "duration_seconds"))
		return pl_fail(err, PL_ERR_USAGE, "pass duration_seconds (1 to 300)",
			       "attaching to a pid needs a bounded duration_seconds");
	return PL_OK;
}

/* The added variables as NAME=VALUE (new strings in r->env, freed by
 * tool_collection_env_release): bounded in count and size; LD_* and PERF_* refused (perf
 * gets the environment too, and they would change perf). */
enum pl_err tool_collection_env(json_t *env, struct pl_collect_req *r, struct pl_error *err)
{
	const char *key;
	json_t *v;
	size_t bytes = 0;

	json_object_foreach(env, key, v) {
		const char *val = json_string_value(v);
		if (r->nenv == PL_COLLECT_MAX_ENV)
			return pl_fail(err, PL_ERR_USAGE, "pass at most 64 variables",
				       "environment has more than %d variables", PL_COLLECT_MAX_ENV);
		if (!val)
			return pl_fail(err, PL_ERR_USAGE, "pass {\"NAME\": \"value\"}", "environment '%s' is not a string", key);
		for (const char *c = key; *c || c == key; c++)
			if (!(*c == '_' || (*c >= 'A' && *c <= 'Z') || (*c >= 'a' && *c <= 'z') ||
			      (c > key && *c >= '0' && *c <= '9')))
				return pl_fail(err, PL_ERR_USAGE, "name variables with letters, digits and '_'",
					       "environment name '%s' is not a variable name", key);
		if (strncmp(key, "LD_", 3) == 0 || strncmp(key, "PERF_", 5) == 0)
			return pl_fail(err, PL_ERR_USAGE, "leave out LD_* and PERF_* variables, or set them where the server starts",
				       "environment '%s' is refused: it would apply to perf as well as to the program", key);
		bytes += strlen(key) + strlen(val) + 2;
		if (bytes > (32u << 10))
			return pl_fail(err, PL_ERR_USAGE, "pass shorter values", "environment passes 32 KiB");
		size_t n = strlen(key) + strlen(val) + 2;
		char *kv = pl_xmalloc(n);
		snprintf(kv, n, "%s=%s", key, val);
		r->env[r->nenv++] = kv;
	}
	r->env[r->nenv] = NULL;
	return PL_OK;
}

void tool_collection_env_release(struct pl_collect_req *r)
{
	for (size_t i = 0; i < r->nenv; i++)
		free((char *)r->env[i]);
	r->nenv = 0;
}

/* The working directory: given (a folder under an allowed root) or the
 * first allowed root. */
enum pl_err tool_collection_cwd(const struct tool_ctx *ctx, json_t *args, char *cwd, size_t cap,
			    struct pl_error *err)
{
	const char *dir = json_string_value(json_object_get(args, "working_directory"));
	struct stat st;
	enum pl_err rc;

	if (!dir) {
		if (!ctx->nroots)
			return PL_OK;
		snprintf(cwd, cap, "%s", ctx->allowed_roots[0]);
		return PL_OK;
	}
	if ((rc = tool_resolve_input(ctx, dir, cwd, cap, err)))
		return rc;
	if (stat(cwd, &st) != 0 || !S_ISDIR(st.st_mode))
		return pl_fail(err, PL_ERR_INPUT, "pass a folder under an allowed root",
			       "working_directory '%s' is not a folder", dir);
	return PL_OK;
}

/* The request from the arguments; the executable must be a regular
 * executable file under an allowed root. */
static enum pl_err make_request(const struct tool_ctx *ctx, json_t *args, struct pl_collect_req *r,
				char *exe, size_t cap, char *cwd, size_t cwd_cap, struct pl_error *err)
{
	const char *path = NULL, *mode;
	json_int_t pid = 0, duration = 0, frequency, stack_bytes = 0, repeat, timeout;
	json_error_t je;
	json_t *v;
	size_t i;
	enum pl_err rc;

	memset(r, 0, sizeof(*r));
	/* The scalars in one unpack: the input schema has checked their types
	 * and filled the defaults; the others may be absent. */
	if (json_unpack_ex(args, &je, 0, "{s:s,s?s,s?I,s?I,s:I,s:s,s?I,s:I,s:I,s?s}", "mode", &mode,
			   "executable", &path, "pid", &pid, "duration_seconds", &duration, "frequency_hz", &frequency,
			   "call_graph", &r->call_graph, "dwarf_stack_bytes", &stack_bytes, "repeat", &repeat,
			   "timeout_seconds", &timeout, "name", &r->name) != 0)
		return pl_fail(err, PL_ERR_USAGE, "pass the arguments the input schema lists", "%s", je.text);
	pl_collect_mode_from_name(mode, &r->mode);
	if (path) {
		if ((rc = tool_resolve_input(ctx, path, exe, cap, err)))
			return rc;
		if (access(exe, X_OK) != 0)
			return pl_fail(err, PL_ERR_INPUT, "pass an executable file", "'%s' is not executable", path);
		r->executable = exe;
	}
	json_array_foreach(json_object_get(args, "arguments"), i, v)
		r->args[r->nargs++] = json_string_value(v);
	json_array_foreach(json_object_get(args, "events"), i, v)
		r->events[r->nevents++] = json_string_value(v);
	r->pid = pid;
	r->duration_ms = (uint32_t)duration * 1000;
	r->frequency_hz = (uint32_t)frequency;
	r->dwarf_stack_bytes = (uint32_t)stack_bytes;
	r->repeat = (uint32_t)repeat;
	r->timeout_ms = (uint32_t)timeout * 1000;
	if (r->dwarf_stack_bytes && (strcmp(r->call_graph ? r->call_graph : "", "dwarf") != 0 ||
				     (r->mode != PL_COLLECT_RECORD && r->mode != PL_COLLECT_OFF_CPU)))
		return pl_fail(err, PL_ERR_USAGE, "pass call_graph=\"dwarf\" with mode record or off_cpu, or leave dwarf_stack_bytes out",
			       "dwarf_stack_bytes sizes the stack copy of DWARF unwinding only");
	if (r->dwarf_stack_bytes % 8)
		return pl_fail(err, PL_ERR_USAGE, "pass a multiple of 8 (perf copies whole words), e.g. 65528",
			       "dwarf_stack_bytes %u is not a multiple of 8", r->dwarf_stack_bytes);
	pl_collect_output_from_name(json_string_value(json_object_get(args, "stdout")), &r->out_stdout);
	pl_collect_output_from_name(json_string_value(json_object_get(args, "stderr")), &r->out_stderr);
	cwd[0] = '\0';
	if ((rc = tool_collection_cwd(ctx, args, cwd, cwd_cap, err)))
		return rc;
	r->cwd = cwd[0] ? cwd : NULL;
	if ((rc = tool_collection_env(json_object_get(args, "environment"), r, err)))
		return rc;
	if (r->pid > 0 && r->duration_ms >= r->timeout_ms)
		return pl_fail(err, PL_ERR_USAGE, "make timeout_seconds larger than duration_seconds",
			       "duration_seconds must be below timeout_seconds");
	return PL_OK;
}

#define SCHED_TASKS_SHOWN 20

/* The per-task run, wait and delay of a sched collection, into
 * result["sched"]; a failure to read it is a warning, not an error (the
 * collection itself is kept). */
static void add_sched_table(const struct tool_ctx *ctx, const struct pl_collect_req *r,
			    json_t *result)
{
	const char *folder = json_string_value(json_object_get(result, "folder"));
	const char *base = r->executable ? strrchr(r->executable, '/') : NULL;
	char comm[16] = "";
	struct pl_perf_data_opts o = {
		.read = coll_perf_data_read, .perf_path = ctx->perf.path,
		.timeout_ms = ctx->perf.timeout_ms,
		.kallsyms = ctx->perf.kallsyms_path ? ctx->perf.kallsyms_path : "/proc/kallsyms",
		.kallsyms_shown = "/proc/kallsyms", .buildid_dir = ctx->perf.buildid_dir,
	};
	char data[PATH_MAX];
	struct pl_profile p;
	struct pl_error err;

	/* The target's tasks first: its comm is the executable's name, cut
	 * to 15 bytes as the kernel keeps it. */
	if (base)
		snprintf(comm, sizeof(comm), "%s", base + 1);
	snprintf(data, sizeof(data), "%s/perf.data", folder);
	pl_profile_init(&p, &ctx->limits);
	if (coll_perf_data_read(&p, data, &o, &err) == PL_OK && p.sched)
		json_object_set_new(result, "sched", pl_sched_json(&p, SCHED_TASKS_SHOWN, comm[0] ? comm : NULL));
	else
		json_array_append_new(json_object_get(result, "warnings"), json_sprintf(
			"the per-task table could not be read from perf.data: %s",
			p.sched ? err.text : "it holds no sched tracepoint sample"));
	pl_profile_release(&p);
}

enum pl_err tool_collect_profile(const struct tool_ctx *ctx, json_t *args, json_t **result,
				 struct pl_error *err)
{
	bool has_exe = json_object_get(args, "executable") != NULL;
	bool has_pid = json_object_get(args, "pid") != NULL;
	struct pl_collect_env env = {ctx->perf.path, ctx->artifact_root, ctx->perf.kallsyms_path, NULL,
				     sbx_launcher_conn(), sbx_confined(), tool_perf_data_count_lost,
				     tool_user_chains_open, tool_user_chain, tool_user_chains_close};
	struct pl_collect_req r;
	char exe[PATH_MAX], cwd[PATH_MAX];
	enum pl_err rc;

	if (has_exe == has_pid)
		return pl_fail(err, PL_ERR_USAGE, "pass executable (and arguments) or pid with duration_seconds",
			       "collect_profile takes exactly one of executable and pid");
	if ((rc = tool_collection_gates(ctx, args, has_pid, err)))
		return rc;
	if ((rc = make_request(ctx, args, &r, exe, sizeof(exe), cwd, sizeof(cwd), err))) {
		tool_collection_env_release(&r);
		return rc;
	}
	rc = pl_collect(&env, &r, result, err);
	tool_collection_env_release(&r);
	if (rc)
		return rc;
	if (r.mode == PL_COLLECT_SCHED)
		add_sched_table(ctx, &r, *result);
	return PL_OK;
}
