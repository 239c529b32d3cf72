/* steps.c - the one check every next step passes before a result leaves
 * a tool (tool_steps_check, registry.h).
 *
 * A step is any object of a result with a string "tool" and an object
 * "arguments", at any depth.  Each is checked against what this server
 * and this machine can do, and says what it lacks instead of failing
 * when sent:
 *   - no authorization phrase ever stays in a step: the phrase is the
 *     caller's act, so a step that needs one names it in `needs` (by the
 *     argument's name) and says in `operator` that only the user gives it;
 *   - its arguments validate against the tool's inputSchema (the same
 *     tool_check_args every call goes through; a step that does not is a
 *     bug, marked so);
 *   - the server flags the tool needs (writes, collection, pid attach,
 *     the agent link, device control) were given;
 *   - what collect_profile asks of the machine (tracefs for its
 *     tracepoints, events perf knows, a call-graph mode that yields chains)
 *     is confirmed by the capability probe's cached answer.  Without one,
 *     or where the probe did not look, the need is unconfirmed, never
 *     assumed.
 * What the caller adds goes to `needs`; what only a person can do (a
 * flag, tracefs, the user's consent) or what is unconfirmed goes to
 * `operator`, each entry saying what to do.  A step with `operator` is not
 * to be sent; one with only `needs` is, once they are added.  The check
 * recomputes both, so a step checked twice is unchanged.
 */
#include "tools/registry.h"
#include "base/escape.h"
#include "collectors/capabilities.h"
#include "collectors/collect.h"

#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* What one step is being checked for; needs and operator are built up. */
/* The probe's cached answer, read once per result and only when a step
 * asks the machine for something. */
struct machine {
	json_t *caps;        /* NULL: none cached (or not read yet) */
	bool read;           /* caps was looked for */
	bool given;          /* caps was given (tests): never read */
};

struct step_check {
	const struct tool_ctx *ctx;
	json_t *caps;        /* borrowed: the probe's answer, NULL when none */
	json_t *step;        /* borrowed */
	json_t *args;        /* new: the arguments with the schema's defaults */
	json_t *needs;       /* new: argument names the caller adds */
	json_t *operator;    /* new: what a person must do first */
	struct pl_buf unconfirmed;  /* what the probe could not confirm */
};

static bool has_string(json_t *list, const char *s)
{
	json_t *x;
	size_t i;

	json_array_foreach(list, i, x)
		if (strcmp(json_string_value(x) ?: "", s) == 0)
			return true;
	return false;
}

static void add_need(struct step_check *sc, const char *what)
{
	if (!has_string(sc->needs, what))
		json_array_append_new(sc->needs, json_string(what));
}

static void add_operator(struct step_check *sc, const char *fmt, ...)
{
	va_list ap;
	json_t *s;

	va_start(ap, fmt);
	s = json_vsprintf(fmt, ap);
	va_end(ap);
	if (s && !has_string(sc->operator, json_string_value(s)))
		json_array_append(sc->operator, s);
	json_decref(s);
}

static void add_unconfirmed(struct step_check *sc, const char *fmt, ...)
{
	va_list ap;
	json_t *s;

	va_start(ap, fmt);
	s = json_vsprintf(fmt, ap);
	va_end(ap);
	pl_buf_addf(&sc->unconfirmed, "%s%s", sc->unconfirmed.len ? "; " : "", json_string_value(s) ?: "");
	json_decref(s);
}

static const char *arg_str(struct step_check *sc, const char *key)
{
	return json_string_value(json_object_get(sc->args, key));
}

/* ------------------------------------------------------------- phrases */

/* The tools whose calls carry a phrase, and when. */
static const struct {
	const char *tool, *arg;
	bool only_with_pid;   /* needed only when the step names a pid */
	const char *consent;  /* what the user consents to */
} phrase_args[] = {
	{"collect_profile", "authorization", false, "profile this target"},
	{"collect_profile", "pid_authorization", true, "attach to this process"},
	{"run_experiment", "authorization", false, "run these two commands for an experiment"},
	{"start_capture", "authorization", false, "profile this device"},
	{"start_capture", "pid_authorization", false, "attach to this process on the device"},
	{"resume_capture", "authorization", false, "profile this device again"},
};

/* Does `v` hold a phrase anywhere (a string, or one in an array)? */
static bool is_phrase(json_t *v)
{
	char *text = json_dumps(v, JSON_ENCODE_ANY);
	bool found = text && (strstr(text, PL_COLLECT_PHRASE) || strstr(text, PL_PID_ATTACH_PHRASE));

	free(text);
	return found;
}

/* No phrase stays in a step (whoever put it there), and a step of a tool
 * that takes one names it. */
static void check_phrases(struct step_check *sc, const char *tool)
{
	json_t *args = json_object_get(sc->step, "arguments"), *v, *tmp;
	const char *key;

	json_object_foreach_safe(args, tmp, key, v) {
		if (!is_phrase(v))
			continue;
		add_need(sc, key);
		json_object_del(sc->args, key);
		json_object_del(args, key);
	}
	for (size_t i = 0; i < PL_ARRAY_LEN(phrase_args); i++) {
		if (strcmp(tool, phrase_args[i].tool) != 0 ||
		    (phrase_args[i].only_with_pid && !json_object_get(sc->args, "pid")))
			continue;
		add_need(sc, phrase_args[i].arg);
		add_operator(sc, "%s: the user's consent to %s; only the user gives the phrase", phrase_args[i].arg,
			     phrase_args[i].consent);
	}
	if (strcmp(tool, "collect_profile") == 0 && !json_object_get(sc->args, "executable") &&
	    !json_object_get(sc->args, "pid"))
		add_need(sc, "executable or pid");
	/* A proposed experiment: the two commands are the agent's to give
	 * (the program without and with the fix); checked as if given. */
	if (strcmp(tool, "run_experiment") == 0 &&
	    (!json_object_get(sc->args, "baseline") || !json_object_get(sc->args, "candidate"))) {
		add_need(sc, "baseline and candidate");
		if (!json_object_get(sc->args, "baseline"))
			json_object_set_new(sc->args, "baseline", json_pack("{s:s}", "executable", "/"));
		if (!json_object_get(sc->args, "candidate"))
			json_object_set_new(sc->args, "candidate", json_pack("{s:s}", "executable", "/"));
	}
}

/* --------------------------------------------------------------- flags */

enum gate {
	GATE_WRITES = 1 << 0,    /* writes the artifact root */
	GATE_EXPORTS = 1 << 1,   /* writes unless exports=false */
	GATE_COLLECT = 1 << 2,   /* runs perf on a target */
	GATE_PID = 1 << 3,       /* with a pid: attaches to it */
	GATE_CONTROL = 1 << 4,   /* acts on a device */
};

static const struct {
	const char *tool;
	unsigned gates;
} tool_gates[] = {
	{"analyze_profile", GATE_WRITES},
	{"build_report", GATE_WRITES},
	{"export_profile", GATE_WRITES},
	{"normalize_benchmark", GATE_WRITES},
	{"compare_profiles", GATE_EXPORTS},
	{"collect_profile", GATE_COLLECT | GATE_PID},
	{"inspect_collection_capabilities", GATE_COLLECT},
	{"run_experiment", GATE_COLLECT},
	{"connect_device", GATE_CONTROL},
	{"start_capture", GATE_CONTROL},
	{"stop_capture", GATE_CONTROL},
	{"pause_capture", GATE_CONTROL},
	{"resume_capture", GATE_CONTROL},
	{"configure_device_metrics", GATE_CONTROL},
	{"disconnect_device", GATE_CONTROL},
};

static void check_flags(struct step_check *sc, const struct tool_def *t)
{
	const struct tool_ctx *ctx = sc->ctx;
	unsigned g = 0;

	for (size_t i = 0; i < PL_ARRAY_LEN(tool_gates); i++)
		if (strcmp(tool_gates[i].tool, t->name) == 0)
			g = tool_gates[i].gates;
	if ((t->needs & TOOL_DEVICE) && !ctx->device_link)
		add_operator(sc, "restart perflens-mcp with --agent-listen IPV4:PORT or "
			     "--allow-device-control (%s is listed only with the agent link)", t->name);
	if ((t->needs & TOOL_FLEET) && !ctx->fleet.url)
		add_operator(sc, "restart perflens-mcp with --fleet-store http://HOST:PORT/DATABASE "
			     "(%s is listed only with a fleet store)", t->name);
	if ((g & GATE_CONTROL) && (!ctx->allow_device_control || !ctx->allow_writes || !ctx->artifact_root))
		add_operator(sc, "restart perflens-mcp with --allow-device-control --artifact-root DIR "
			     "--allow-writes");
	if ((g & GATE_COLLECT) && (!ctx->allow_collection || !ctx->allow_writes || !ctx->artifact_root ||
				   !ctx->allow_process_execution))
		add_operator(sc, "restart perflens-mcp with --allow-collection --allow-writes "
			     "--allow-process-execution --artifact-root DIR");
	else if ((g & GATE_COLLECT) && !ctx->perf.path)
		add_operator(sc, "install linux-perf, or start the server with --perf-path FILE");
	if ((g & GATE_PID) && json_object_get(sc->args, "pid") && !ctx->allow_pid_attach)
		add_operator(sc, "restart perflens-mcp with --allow-pid-attach to attach to a pid");
	if (((g & GATE_WRITES) || ((g & GATE_EXPORTS) && !json_is_false(json_object_get(sc->args, "exports")))) &&
	    (!ctx->allow_writes || !ctx->artifact_root))
		add_operator(sc, "restart perflens-mcp with --allow-writes --artifact-root DIR");
}

/* ------------------------------------------------------------- machine */

static json_t *probe_entry(json_t *caps, const char *list, const char *key, const char *name, size_t n)
{
	json_t *e;
	size_t i;

	json_array_foreach(json_object_get(caps, list), i, e) {
		const char *v = json_string_value(json_object_get(e, key));
		if (v && strlen(v) == n && strncmp(v, name, n) == 0)
			return e;
	}
	return NULL;
}

static bool some_tracepoint_available(json_t *caps)
{
	json_t *t;
	size_t i;

	json_array_foreach(json_object_get(caps, "tracepoints"), i, t)
		if (json_is_true(json_object_get(t, "available")))
			return true;
	return false;
}

#define MOUNT_TRACEFS "as root: mount -t tracefs nodev /sys/kernel/tracing (perf cannot mount it inside " \
	"the sandbox), then inspect_collection_capabilities(refresh=true)"

/* A tracepoint `name` (sys:event) the step records or counts. */
static void check_tracepoint(struct step_check *sc, const char *name, const char *for_what)
{
	json_t *t;

	if (!sc->caps) {
		add_unconfirmed(sc, "tracepoint %s (%s)", name, for_what);
		return;
	}
	t = probe_entry(sc->caps, "tracepoints", "name", name, strlen(name));
	if (t && json_is_true(json_object_get(t, "available")))
		return;
	if (t || !some_tracepoint_available(sc->caps))
		add_operator(sc, "%s needs tracepoint %s, which the probe did not find (tracefs not "
			     "mounted, or the kernel lacks it): %s", for_what, name, MOUNT_TRACEFS);
	else
		add_unconfirmed(sc, "tracepoint %s (not probed; `perf list '%s'` says)", name, name);
}

/* One event of a record or stat step. */
static void check_event(struct step_check *sc, const char *ev, bool record)
{
	const char *colon = strchr(ev, ':');
	size_t n = colon ? (size_t)(colon - ev) : strlen(ev);
	json_t *e;
	const char *count, *rec;
	char what[200];

	if (pl_event_is_offcpu_time(ev)) {
		add_operator(sc, "'%s' is PerfLens's name for off-CPU time, not an event perf knows (perf exits "
			     "129): collect it with collect_profile(mode=\"off_cpu\") instead", ev);
		return;
	}
	if (strchr(ev, '/')) {
		add_unconfirmed(sc, "PMU event %s (`perf list` says)", ev);
		return;
	}
	/* "cycles:u" is cycles with a modifier; "sched:sched_switch" a tracepoint. */
	e = sc->caps ? probe_entry(sc->caps, "events", "event", ev, n) : NULL;
	if (colon && !e) {
		snprintf(what, sizeof(what), "event %s", ev);
		if (pl_collect_is_tracepoint(ev))
			check_tracepoint(sc, ev, what);
		else
			add_unconfirmed(sc, "perf can %s %.*s", record ? "sample" : "count", (int)n, ev);
		return;
	}
	if (!e) {
		add_unconfirmed(sc, "perf can %s %s", record ? "sample" : "count", ev);
		return;
	}
	count = json_string_value(json_object_get(e, "count")) ?: "";
	rec = json_string_value(json_object_get(e, "record")) ?: "";
	if (strcmp(count, "counted") != 0)
		add_operator(sc, "perf cannot count %.*s here (%s; VMs often lack hardware events): "
			     "use cpu-clock or task-clock", (int)n, ev, count);
	else if (record && strcmp(rec, "failed") == 0)
		add_operator(sc, "perf cannot sample %.*s here: sample cpu-clock", (int)n, ev);
}

/* What collect_profile asks of the machine, against the probe. */
static void check_machine(struct step_check *sc)
{
	static const struct {
		const char *mode, *tracepoint;
	} mode_tracepoints[] = {
		{"off_cpu", "sched:sched_switch"},
		{"sched", "sched:sched_switch"},
		{"sched", "sched:sched_wakeup"},
		{"lock", "lock:contention_begin"},
	};
	const char *mode = arg_str(sc, "mode") ?: "record", *graph = arg_str(sc, "call_graph");
	json_t *ev, *g;
	size_t i;
	char what[64];

	for (i = 0; i < PL_ARRAY_LEN(mode_tracepoints); i++) {
		if (strcmp(mode, mode_tracepoints[i].mode) != 0)
			continue;
		snprintf(what, sizeof(what), "mode %s", mode);
		check_tracepoint(sc, mode_tracepoints[i].tracepoint, what);
	}
	if (strcmp(mode, "record") == 0 || strcmp(mode, "stat") == 0)
		json_array_foreach(json_object_get(sc->args, "events"), i, ev)
			if (json_is_string(ev))
				check_event(sc, json_string_value(ev), strcmp(mode, "record") == 0);
	if (strcmp(mode, "record") != 0 || !graph || strcmp(graph, "fp") == 0 || strcmp(graph, "none") == 0)
		return;
	if (!sc->caps) {
		add_unconfirmed(sc, "call_graph=\"%s\" yields chains", graph);
		return;
	}
	g = probe_entry(sc->caps, "call_graphs", "mode", graph, strlen(graph));
	if (!g)
		add_unconfirmed(sc, "call_graph=\"%s\" yields chains", graph);
	else if (strcmp(json_string_value(json_object_get(g, "status")) ?: "", "real_chains") != 0)
		add_operator(sc, "call_graph=\"%s\" yields no real chains here (%s): use what "
			     "inspect_collection_capabilities says works", graph,
			     json_string_value(json_object_get(g, "status")) ?: "unknown");
}

/* --------------------------------------------------------------- files */

/* The tools whose step arguments name a file the worker opens. */
static const struct {
	const char *tool, *arg;
} step_file_args[] = {
	{"inspect_elf", "path"},
	{"symbolize", "binary"},
	{"analyze_profile", "path"},
};

static void check_paths(struct step_check *sc, const char *tool)
{
	char resolved[PATH_MAX], need[200];
	struct pl_error err = {0};

	for (size_t i = 0; i < PL_ARRAY_LEN(step_file_args); i++) {
		const char *path = arg_str(sc, step_file_args[i].arg);
		if (strcmp(tool, step_file_args[i].tool) || !path ||
		    !tool_resolve_input(sc->ctx, path, resolved, sizeof(resolved), &err))
			continue;
		snprintf(need, sizeof(need), "%s: a copy under an allowed root (%s)", step_file_args[i].arg,
			 err.code == PL_ERR_PATH ? "this one is outside them" : "this one is not here");
		add_need(sc, need);
	}
}

/* ---------------------------------------------------------- the check */

static void check_step(const struct tool_ctx *ctx, struct machine *m, json_t *step)
{
	const char *tool = json_string_value(json_object_get(step, "tool"));
	const struct tool_def *t = tool_find(tool);
	struct step_check sc = {.ctx = ctx, .step = step, .needs = json_array(),
				.operator = json_array()};
	struct pl_error err = {0};

	sc.args = json_deep_copy(json_object_get(step, "arguments"));
	check_phrases(&sc, tool);
	if (!t) {
		add_operator(&sc, "'%s' is no tool of this server: a bug, report it", tool);
	} else if (tool_check_args(t, sc.args, &err)) {
		add_operator(&sc, "not a valid %s call (%s): a bug, report it", tool, err.text);
	} else {
		check_flags(&sc, t);
		if (strcmp(tool, "collect_profile") == 0) {
			if (!m->read && !m->given)
				m->caps = tool_machine_caps(ctx);
			m->read = true;
			sc.caps = m->caps;
			check_machine(&sc);
		}
		check_paths(&sc, tool);
	}
	if (sc.unconfirmed.len)
		add_operator(&sc, "unconfirmed here: %s%s", sc.unconfirmed.data,
			     sc.caps ? "" : " (no capability probe cached: call inspect_collection_capabilities)");
	json_object_del(step, "needs");
	json_object_del(step, "operator");
	if (json_array_size(sc.needs))
		json_object_set(step, "needs", sc.needs);
	if (json_array_size(sc.operator))
		json_object_set(step, "operator", sc.operator);
	json_decref(sc.args);
	json_decref(sc.needs);
	json_decref(sc.operator);
	pl_buf_release(&sc.unconfirmed);
}

static void walk(const struct tool_ctx *ctx, struct machine *m, json_t *v)
{
	const char *key;
	json_t *x;
	size_t i;

	if (json_is_object(v)) {
		if (json_is_string(json_object_get(v, "tool")) && json_is_object(json_object_get(v, "arguments")))
			check_step(ctx, m, v);
		json_object_foreach(v, key, x)
			walk(ctx, m, x);
	} else if (json_is_array(v)) {
		json_array_foreach(v, i, x)
			walk(ctx, m, x);
	}
}

json_t *tool_machine_caps(const struct tool_ctx *ctx)
{
	return coll_capabilities_cached(ctx->perf.path, ctx->artifact_root, coll_boot_id());
}

void tool_steps_check_with(const struct tool_ctx *ctx, json_t *caps, json_t *result)
{
	struct machine m = {.caps = caps, .read = true, .given = true};

	walk(ctx, &m, result);
}

void tool_steps_check(const struct tool_ctx *ctx, json_t *result)
{
	struct machine m = {0};

	walk(ctx, &m, result);
	json_decref(m.caps);
}
