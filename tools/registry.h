/* registry.h - the one table of PerfLens tools, shared by the MCP server
 * and the CLI.
 *
 * A tool is a row: its name, the path of its definition in schemas/tools/
 * (title, description, annotations, inputSchema, outputSchema: the source
 * of truth, embedded at build time) and a handler.  Handlers take their
 * arguments as a JSON object already shaped by the input schema and return
 * a new JSON object that must validate against the output schema; they
 * know nothing of JSON-RPC or of argv.
 *
 * There are 4 things to do to add a tool:
 *  1. write schemas/tools/NAME.json (name, cli, title, description,
 *     annotations, inputSchema, outputSchema);
 *  2. write tools/NAME.c with `enum pl_err tool_NAME(...)`;
 *  3. declare it below and add its row to tool_table[] in registry.c
 *     (with its needs and, for a collection tool, timeout_arg:
 *     the MCP server confines the worker from the row alone);
 *  4. add tests: a unit test of its logic and a CLI or MCP call checked
 *     against an independent oracle.
 * A tool that needs a server flag or an authorization phrase also gets
 * its row in steps.c's tool_gates[] or phrase_args[], so that a step
 * proposing it says what it needs (tool_steps_check).
 */
#ifndef PL_REGISTRY_H
#define PL_REGISTRY_H

#include <stdbool.h>
#include <stdio.h>

#include <jansson.h>

#include "base/error.h"
#include "profile/profile.h"
#include "symbols/symcfg.h"
#include "collectors/perfcfg.h"
#include "collectors/fleet/store.h"

/* What a call may do, fixed by whoever started the process. */
struct tool_ctx {
	const char **allowed_roots;  /* resolved absolute folders */
	size_t nroots;
	const char *artifact_root;   /* resolved absolute folder */
	bool allow_writes;
	bool allow_process_execution;
	bool allow_collection;
	bool allow_pid_attach;       /* collect_profile may attach to a pid */
	bool device_link;            /* an agent link runs on this artifact root
				      * (--agent-listen or --allow-device-control):
				      * the device tools are listed */
	bool allow_device_control;   /* --allow-device-control: connect_device,
				      * start_capture and the rest may act */
	struct pl_limits limits;
	struct pl_sym_cfg sym;       /* binaries, maps, debuginfod */
	struct pl_perf_cfg perf;     /* the perf to run, its timeout, kallsyms */
	struct fleet_cfg fleet;      /* --fleet-store: the fleet tools are listed */
	/* Call another tool by name as an agent would (schema checks and
	 * defaults, the check of its steps): set by the program that made the
	 * context (dispatch.c's tool_call_name), so that a tool running others
	 * (run_experiment's profile) needs no link to the table listing it.
	 * NULL: it cannot. */
	enum pl_err (*call)(const struct tool_ctx *ctx, const char *name, json_t *args,
			    json_t **result, struct pl_error *err);
};

/* A handler: `args` is borrowed; on PL_OK *result is a new reference. */
typedef enum pl_err (*tool_fn)(const struct tool_ctx *ctx, json_t *args,
			       json_t **result, struct pl_error *err);

/* What a tool's sandboxed worker needs beyond reading the allowed roots
 * and writing the artifact root; granted only when the operator's flags
 * allow it too (--allow-process-execution, a debuginfod URL). */
enum tool_needs {
	TOOL_RUNS_PERF = 1 << 0,     /* may execve the allowlisted perf */
	TOOL_USES_NETWORK = 1 << 1,  /* may fetch from debuginfod servers */
	TOOL_COLLECTS = 1 << 2,      /* runs perf on targets through the collection
				      * launcher (collectors/launch.h) */
	TOOL_PROBES_CHAINS = 1 << 3, /* perf runs this binary as the known-depth
				      * workload (collectors/known_chain.h) */
	TOOL_DEVICE = 1 << 4,        /* a device tool: listed only with the agent link
				      * (its worker talks to the link through files,
				      * collectors/agentlink/channel.h) */
	TOOL_FLEET = 1 << 5,         /* a fleet tool: listed only with --fleet-store,
				      * its worker may connect to the store
				      * (collectors/fleet/store.h) */
};

struct tool_def {
	const char *name;        /* "list_hotspots" */
	const char *schema_path; /* "schemas/tools/list_hotspots.json" */
	tool_fn run;
	unsigned needs;          /* enum tool_needs bits */
	/* TOOL_COLLECTS tools: the argument holding the call's own timeout
	 * in seconds (its worker gets time beyond it); NULL when there is
	 * none. */
	const char *timeout_arg;
};

extern const struct tool_def tool_table[];
extern const size_t tool_count;

/* The row of tool `name` ("list_hotspots"), exactly; NULL when unknown
 * (or NULL).  Reads only the table, so a fresh worker parses nothing. */
const struct tool_def *tool_find(const char *name);

/* The row a command line names: a CLI name ("hotspots", from the
 * definition's "cli") or a tool name; NULL when neither. */
const struct tool_def *tool_find_cli(const char *name);

/* The parsed definition (borrowed, cached for the process lifetime). */
json_t *tool_definition(const struct tool_def *t);

/* Fill defaults from the input schema and check `args` against it
 * (types, enums, ranges, patterns, required and unknown keys); the error
 * names the property and the valid choices. */
enum pl_err tool_check_args(const struct tool_def *t, json_t *args,
			    struct pl_error *err);

/* Does `s` match schema pattern `pattern` (a POSIX extended regular
 * expression)?  1 or 0 when the pattern is a plain anchored run of
 * characters and bracket classes with counts, as the schemas' are; -1
 * when it is not (or the match took too many steps): use regcomp. */
int tool_pattern_match(const char *pattern, const char *s);

/* Run the handler on `args` that tool_check_args() accepted (and
 * filled); *result is NULL unless PL_OK (then a new reference). */
enum pl_err tool_run(const struct tool_def *t, const struct tool_ctx *ctx, json_t *args,
		     json_t **result, struct pl_error *err);

/* A result may carry content blocks beside its structured part (a PNG
 * picture an agent looks at): a handler puts an array of MCP content
 * blocks ({"type": "image", "mimeType", "data"}) under this key of its
 * result.  tool_run_blocks() takes them out into *blocks (NULL when
 * none); tool_run() drops them (the CLI has the files they came from). */
#define TOOL_BLOCKS_KEY "_blocks"
/* Add a PNG picture to `result`'s blocks, as an image content block;
 * false, adding nothing, past TOOL_MAX_PICTURE bytes (a model reads
 * pictures up to about that). */
#define TOOL_MAX_PICTURE (200u * 1024)
bool tool_add_picture(json_t *result, const void *png, size_t n);
enum pl_err tool_run_blocks(const struct tool_def *t, const struct tool_ctx *ctx, json_t *args,
			    json_t **result, json_t **blocks, struct pl_error *err);

/* tool_check_args() then tool_run().  Every surface goes through these
 * two: the CLI calls tool_call(); the MCP server calls tool_check_args()
 * in the server (a bad argument never costs a worker) and tool_run() in
 * the sandboxed worker. */
enum pl_err tool_call(const struct tool_def *t, const struct tool_ctx *ctx,
		      json_t *args, json_t **result, struct pl_error *err);
/* tool_call of the tool named `name` (tool_ctx's call): an unknown name is
 * PL_ERR_USAGE. */
enum pl_err tool_call_name(const struct tool_ctx *ctx, const char *name, json_t *args,
			   json_t **result, struct pl_error *err);

/* ------------------------------------------------------- follow-ups */

/* Work a call leaves for after its answer (symbolize: the symbol index
 * of a module it answered from libdw).  A handler asks with
 * tool_followup_request(); whoever ran it (the CLI once it printed the
 * result, the MCP server in a background worker once the answer is out)
 * runs the same call again with tool_followup_running() true, and the
 * handler then does that work; the result of that run is not shown.
 * Process-wide: one call runs per process (the CLI, a sandboxed worker). */
void tool_followup_request(void);
bool tool_followup_requested(void);
void tool_followup_set_running(bool running);   /* also clears the request */
bool tool_followup_running(void);

/* ------------------------------------------------------- the error exit */

/* `e` as the JSON object every surface gives (the CLI on stderr inside
 * {"error": ...}, MCP tool errors, a worker's answer): {"code": NAME,
 * "message", "hint", "exit_code"}; a text that is not valid UTF-8 is
 * escaped (base/escape.h).  New reference. */
json_t *tool_error_json_new(const struct pl_error *e);

/* The error such an object holds, back into `e` (the code by its name,
 * pl_err_from_name); returns e->code.  Borrows `obj`. */
enum pl_err tool_error_from_json(json_t *obj, struct pl_error *e);

/* ------------------------------------------------ helpers for handlers */

/* Resolve `path` and refuse it unless it lies under an allowed root (no
 * escape through ".." or symlinks).  `path` is in the escaped form of
 * docs/paths.md (decoded first); `resolved` gets the real path, bytes.  A
 * perflens://artifacts/collections/... name goes to
 * tool_resolve_collection instead. */
enum pl_err tool_resolve_input(const struct tool_ctx *ctx, const char *path,
			       char *resolved, size_t cap, struct pl_error *err);

/* A file collect_profile wrote, named perflens://artifacts/collections/ID/FILE:
 * PerfLens' own output under the artifact root, readable by that name
 * (and only by it) even when the artifact root is not an allowed root. */
enum pl_err tool_resolve_collection(const struct tool_ctx *ctx, const char *uri, char *resolved,
				    size_t cap, struct pl_error *err);

/* Refuse unless writes are allowed. */
enum pl_err tool_require_writes(const struct tool_ctx *ctx, struct pl_error *err);

/* The one rule for choosing an event among `n` names (NULL names never
 * match): `name` when given (an error listing the choices when absent),
 * else the only one, else the first with `first_ok`, else an error that
 * lists the choices; no names is "the HOLDER holds no samples". */
enum pl_err tool_pick_name(const char *const *names, size_t n, const char *name, bool first_ok,
			   const char *holder, size_t *index, struct pl_error *err);

/* That rule over a profile's events, and over an analysis summary's
 * "events" array. */
enum pl_err tool_pick_event(const struct pl_profile *p, const char *name,
			    bool first_ok, uint32_t *event, struct pl_error *err);
enum pl_err tool_pick_summary_event(json_t *summary, const char *name,
				    size_t *index, struct pl_error *err);

/* "fn12" (a hotspot_id from list_hotspots) to its function id. */
enum pl_err tool_parse_hotspot_id(const struct pl_profile *p, const char *id, uint32_t *func,
				  struct pl_error *err);

/* The function named `symbol` as list_hotspots shows it: its symbol,
 * linkage_name or short_name (the first function with it); PL_ERR_USAGE
 * when none. */
enum pl_err tool_find_symbol(const struct pl_profile *p, const char *symbol, uint32_t *func,
			     struct pl_error *err);

/* Opaque page cursors ("OFFSET.CHECK") bound to the query that made them. */
void tool_cursor_make(char *out, size_t cap, size_t offset, const char *query);
enum pl_err tool_cursor_parse(const char *cursor, const char *query,
			      size_t *offset, struct pl_error *err);

/* The one pager of every paged tool: items [start, end) of `total`.
 *   1. tool_page_open: the cursor (checked against `query`) or `offset`;
 *   2. tool_page_bound once the list is known: start clamped to total,
 *      end = min(start + limit, total); tool_page_stop may end it sooner
 *      (a work budget spent);
 *   3. tool_page_json for the result's "page" object, with
 *      tool_page_call as its next_call. */
struct tool_page {
	const char *query;        /* borrowed: what the cursors are bound to */
	const char *cursor_key;   /* the argument the next call passes: "cursor" */
	size_t start, end, total;
	size_t limit;
	char next[32];            /* the next page's cursor, once bound */
};
enum pl_err tool_page_open(struct tool_page *pg, const char *query, const char *cursor,
			  size_t offset, size_t limit, struct pl_error *err);
void tool_page_bound(struct tool_page *pg, size_t total);
void tool_page_stop(struct tool_page *pg, size_t end);

/* {offset, returned, total_items, next_cursor, next_call} (new);
 * next_cursor and next_call (stolen; may be NULL) are null on the last page. */
json_t *tool_page_json(const struct tool_page *pg, json_t *next_call_new);

/* The next page's call as text (new), or NULL on the last page: `tool`
 * with `args` (borrowed) less "offset", the keys of `set_new` (stolen;
 * may be NULL; a null value removes the key) laid over them, and
 * cursor_key set to the next cursor. */
json_t *tool_page_call(const struct tool_page *pg, const char *tool, json_t *args, json_t *set_new);

/* The same next page as a next_steps entry (new): `tool` with `args`
 * (borrowed) less "offset", "event" set to `event`, cursor_key to the
 * next cursor; NULL on the last page. */
json_t *tool_page_step(const struct tool_page *pg, const char *tool, json_t *args, const char *event,
		       const char *why);

/* "tool(key=VALUE, ...)" with every value as JSON text (strings quoted
 * and escaped, reals as the shortest text that reads back the same), in
 * the order of `args` (borrowed); a new string. */
json_t *tool_call_text(const char *tool, json_t *args);

/* One entry of a result's next_steps: {"tool", "arguments" (stolen),
 * "why"}, a new reference.  A step that needs a value only the agent has
 * is advice, not a next step.  Never put an authorization phrase in one:
 * tool_steps_check names it in `needs` instead. */
json_t *tool_next_step(const char *tool, json_t *arguments_new, const char *why);

/* The one check of next steps (steps.c), run on every result before it
 * leaves tool_run: each step, at any depth of `result` (an object with a
 * string "tool" and an object "arguments"), loses any authorization
 * phrase and gains
 *   "needs": the arguments the caller must add first ("authorization",
 *     "pid_authorization", "executable or pid", "path: a copy under an
 *     allowed root (...)"), and
 *   "operator": what a person must do before it can work, each saying
 *     what to do: the user's consent (a phrase), a server flag, tracefs,
 *     an event perf cannot count or does not know, a step whose
 *     arguments fail the tool's inputSchema (a bug), or what the
 *     capability probe could not confirm ("unconfirmed: ...").
 * A step without "operator" is one to send, once its needs are added.
 * What the machine can do is the probe's cached answer for this boot
 * (tool_machine_caps); without one, it is unconfirmed, never assumed.
 * tool_steps_check_with takes that answer from the caller (borrowed; NULL:
 * none), for tests. */
void tool_steps_check(const struct tool_ctx *ctx, json_t *result);
void tool_steps_check_with(const struct tool_ctx *ctx, json_t *caps, json_t *result);
/* The capability probe's cached answer for this boot and perf, or NULL
 * (new reference). */
json_t *tool_machine_caps(const struct tool_ctx *ctx);

/* The collection gates (collect_profile.c), shared by the tools that run
 * a program (collect_profile, run_experiment): the three server flags,
 * perf, the authorization phrase, and with `pid_mode` the pid flag and
 * phrase; the first one closed is the error, naming how to open it. */
enum pl_err tool_collection_gates(const struct tool_ctx *ctx, json_t *args, bool pid_mode,
				  struct pl_error *err);
/* An "environment" object (borrowed) as NAME=VALUE strings into r->env
 * (new; tool_collection_env_release frees them), checked as the launcher
 * checks them. */
struct pl_collect_req;
enum pl_err tool_collection_env(json_t *env, struct pl_collect_req *r, struct pl_error *err);
void tool_collection_env_release(struct pl_collect_req *r);
/* args' working_directory resolved under an allowed root (a folder), or
 * the first allowed root; cwd stays "" when there is none. */
enum pl_err tool_collection_cwd(const struct tool_ctx *ctx, json_t *args, char *cwd, size_t cap,
				struct pl_error *err);

/* Handlers. */
enum pl_err tool_analyze_profile(const struct tool_ctx *, json_t *, json_t **, struct pl_error *);
enum pl_err tool_list_hotspots(const struct tool_ctx *, json_t *, json_t **, struct pl_error *);
enum pl_err tool_get_call_paths(const struct tool_ctx *, json_t *, json_t **, struct pl_error *);
enum pl_err tool_get_perf_stat(const struct tool_ctx *, json_t *, json_t **, struct pl_error *);
enum pl_err tool_export_profile(const struct tool_ctx *, json_t *, json_t **, struct pl_error *);
enum pl_err tool_list_threads(const struct tool_ctx *, json_t *, json_t **, struct pl_error *);
enum pl_err tool_get_timeline(const struct tool_ctx *, json_t *, json_t **, struct pl_error *);
enum pl_err tool_get_hotspot(const struct tool_ctx *, json_t *, json_t **, struct pl_error *);
enum pl_err tool_list_artifacts(const struct tool_ctx *, json_t *, json_t **, struct pl_error *);
enum pl_err tool_read_artifact_page(const struct tool_ctx *, json_t *, json_t **, struct pl_error *);
enum pl_err tool_source_context(const struct tool_ctx *, json_t *, json_t **, struct pl_error *);
enum pl_err tool_collect_profile(const struct tool_ctx *, json_t *, json_t **, struct pl_error *);
enum pl_err tool_inspect_collection_capabilities(const struct tool_ctx *, json_t *, json_t **, struct pl_error *);
enum pl_err tool_classify_hotspots(const struct tool_ctx *, json_t *, json_t **, struct pl_error *);
enum pl_err tool_build_report(const struct tool_ctx *, json_t *, json_t **, struct pl_error *);
enum pl_err tool_normalize_benchmark(const struct tool_ctx *, json_t *, json_t **, struct pl_error *);
enum pl_err tool_compare_benchmarks(const struct tool_ctx *, json_t *, json_t **, struct pl_error *);
enum pl_err tool_compare_profiles(const struct tool_ctx *, json_t *, json_t **, struct pl_error *);
enum pl_err tool_inspect_elf(const struct tool_ctx *, json_t *, json_t **, struct pl_error *);
enum pl_err tool_symbolize(const struct tool_ctx *, json_t *, json_t **, struct pl_error *);
enum pl_err tool_list_devices(const struct tool_ctx *, json_t *, json_t **, struct pl_error *);
enum pl_err tool_list_sessions(const struct tool_ctx *, json_t *, json_t **, struct pl_error *);
enum pl_err tool_get_device_metrics(const struct tool_ctx *, json_t *, json_t **, struct pl_error *);
enum pl_err tool_list_device_processes(const struct tool_ctx *, json_t *, json_t **, struct pl_error *);
enum pl_err tool_connect_device(const struct tool_ctx *, json_t *, json_t **, struct pl_error *);
enum pl_err tool_start_capture(const struct tool_ctx *, json_t *, json_t **, struct pl_error *);
enum pl_err tool_stop_capture(const struct tool_ctx *, json_t *, json_t **, struct pl_error *);
enum pl_err tool_pause_capture(const struct tool_ctx *, json_t *, json_t **, struct pl_error *);
enum pl_err tool_resume_capture(const struct tool_ctx *, json_t *, json_t **, struct pl_error *);
enum pl_err tool_configure_device_metrics(const struct tool_ctx *, json_t *, json_t **, struct pl_error *);
enum pl_err tool_disconnect_device(const struct tool_ctx *, json_t *, json_t **, struct pl_error *);
enum pl_err tool_fleet_init(const struct tool_ctx *, json_t *, json_t **, struct pl_error *);
enum pl_err tool_fleet_publish(const struct tool_ctx *, json_t *, json_t **, struct pl_error *);
enum pl_err tool_fleet_devices(const struct tool_ctx *, json_t *, json_t **, struct pl_error *);
enum pl_err tool_fleet_hotspots(const struct tool_ctx *, json_t *, json_t **, struct pl_error *);
enum pl_err tool_fleet_compare(const struct tool_ctx *, json_t *, json_t **, struct pl_error *);
enum pl_err tool_fleet_analyze(const struct tool_ctx *, json_t *, json_t **, struct pl_error *);
enum pl_err tool_run_experiment(const struct tool_ctx *, json_t *, json_t **, struct pl_error *);

/* Build, once in the parent before workers fork, the little every worker
 * would otherwise build again on each call (the classification rules'
 * event sets, the boot id).  Whatever it leaves on the heap, each spare
 * worker copies (sandbox/zygote.c, warm_heap): keep it small.  libcairo
 * is not loaded here: see tool_call_draws. */
void tool_preload_for_workers(void);

/* Does this call draw a picture (export_profile as png, get_hotspot and
 * get_timeline with picture=true)?  Then its worker needs libcairo,
 * which tool_load_picture_library() loads (dlopen, once a process): the
 * MCP server's workers load it before their confinement, only for such
 * calls (sandbox.h, load_libraries). */
bool tool_call_draws(const struct tool_def *t, json_t *args);
void tool_load_picture_library(void);

/* Parse every tool's definition and compile the schema patterns
 * tool_pattern_match cannot match now (the server does, after the
 * zygote's fork: whole definitions take about 1.7 MB of heap; a worker
 * checking its next steps parses only their inputSchema). */
void tool_schemas_prepare(void);

#ifdef PL_TEST_HOOKS
enum pl_err tool_test_fault(const struct tool_ctx *, json_t *, json_t **, struct pl_error *);
#endif

#endif
