/* perflens.c - the command-line surface over the tool registry.
 *
 *   perflens [options] COMMAND [--arg value ...]
 *   perflens call TOOL '{"json":"arguments"}'
 *
 * COMMAND is one of the CLI's own (the `commands` table: call, init,
 * detach, status, doctor, codex-config, claude-config, install-skill,
 * --version, --help) or a tool's CLI name
 * (analyze, hotspots...) or tool name (list_hotspots...).  A tool's flags
 * are not declared here: each `--some-arg` is looked up in its input
 * schema (some_arg), converted to the schema's type (a boolean is
 * `--flag`, `--flag=true|false` or `--no-flag`) and checked by the
 * registry exactly as an MCP call would be.  Global options (cli_options
 * and the limit, symbol and perf groups both binaries share) go anywhere
 * on the line, before the command too; --help prints them from the same
 * tables.  `--input PATH` on a tool that takes an analysis_id analyzes
 * PATH first.  The result is the tool's JSON (or a table with --format
 * table); an error is one JSON object on stderr (cli_fail) and the exit
 * code from error.c's table.
 */
#include "tools/registry.h"
#include "agent_setup.h"
#include "tables.h"
#include "aliases.h"
#include "base/escape.h"
#include "store/artifact.h"
#include "collectors/perfcfg.h"
#include "collectors/known_chain.h"
#include "collectors/fleet/fleetcfg.h"

#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define DEFAULT_ARTIFACT_ROOT "perflens-results"

struct cli {
	struct tool_ctx ctx;
	const char *roots[16];
	char root_bufs[16][PATH_MAX];
	char artifact_buf[PATH_MAX];
	const char *artifact_root;
	const char *output;         /* --output FILE or "-" */
	bool table;                 /* --format table */
	const char *input;          /* --input PATH */
	const char *input_format;   /* --input-format FMT */
	const char *authorization;  /* --authorize-target PHRASE */
};

static int usage_error(const char *hint, const char *fmt, const char *what)
{
	struct pl_error e;
	pl_fail(&e, PL_ERR_USAGE, hint, fmt, what);
	return cli_fail(&e);
}

/* ------------------------------------------------------------ options */

/* Arguments are bytes, and tools take paths in the escaped form of
 * docs/paths.md: bytes that are not UTF-8 (a Latin-1 name from the shell)
 * are escaped, backslashes stay as typed, so an escaped path copied from
 * a result works as well.  The new strings live as long as the process. */
static void escape_args(int argc, char **argv, int from)
{
	for (int k = from > 0 ? from : 1; k < argc; k++) {
		struct pl_buf b = {0};

		if (!pl_esc_needed(argv[k], strlen(argv[k])))
			continue;
		pl_esc_add_text(&b, argv[k], strlen(argv[k]));
		argv[k] = b.data;
	}
}

/* A path the CLI opens itself, back to its bytes: `value` itself when it
 * holds no escape (or cannot be decoded), else a string that lives as long
 * as the process (kept here, so leak checkers see it reachable). */
static const char *path_bytes(const char *value)
{
	static char *kept[64];
	static size_t nkept;
	size_t cap = strlen(value) + 1;
	char *bytes;

	if (!strchr(value, '\\'))
		return value;
	bytes = pl_xmalloc(cap);
	if (!pl_esc_decode(value, bytes, cap)) {
		free(bytes);
		return value;
	}
	if (nkept < PL_ARRAY_LEN(kept))  /* a command line names a few paths */
		kept[nkept++] = bytes;
	return bytes;
}

static enum pl_err set_string(void *target, const struct pl_option *o, const char *value,
			      struct pl_error *err)
{
	(void)err;
	*(const char **)((char *)target + o->offset) = value;
	return PL_OK;
}

/* A path the CLI opens itself (--artifact-root, --output). */
static enum pl_err set_path(void *target, const struct pl_option *o, const char *value,
			    struct pl_error *err)
{
	(void)err;
	*(const char **)((char *)target + o->offset) = path_bytes(value);
	return PL_OK;
}

static enum pl_err set_root(void *target, const struct pl_option *o, const char *value,
			    struct pl_error *err)
{
	struct cli *c = target;

	if (c->ctx.nroots >= PL_ARRAY_LEN(c->roots) ||
	    !realpath(path_bytes(value), c->root_bufs[c->ctx.nroots]))
		return pl_fail(err, PL_ERR_USAGE, "pass an existing folder (at most 16)",
			       "--%s '%s' does not exist", o->name, value);
	c->roots[c->ctx.nroots] = c->root_bufs[c->ctx.nroots];
	c->ctx.nroots++;
	return PL_OK;
}

#define STRING(name, metavar, field, help) \
	{name, metavar, help, set_string, offsetof(struct cli, field)}

/* The CLI's own options; the limits, symbol and perf flags are the
 * groups both binaries share (group_tables). */
static const struct pl_option cli_options[] = {
	STRING("input", "PATH", input, "profile to analyze first, for commands that take an analysis_id"),
	STRING("input-format", "FMT", input_format,
	       "auto|folded|perf_script|agent_chunks|perf_stat for --input"),
	{"artifact-root", "DIR", "where analyses and exports go (default ./" DEFAULT_ARTIFACT_ROOT ")",
	 set_path, offsetof(struct cli, artifact_root)},
	{"allowed-root", "DIR", "read only beneath DIR (repeatable; default: anywhere)", set_root},
	{"output", "FILE", "write the result there ('-' stdout); for export, the exported file",
	 set_path, offsetof(struct cli, output)},
	STRING("authorize-target", "PHRASE", authorization,
	       "collect: I_EXPLICITLY_AUTHORIZE_TARGET_PROFILING if you may profile it"),
	{"allow-pid-attach", NULL, "collect: allow --pid (also needs --pid-authorization PHRASE)",
	 pl_option_bool, offsetof(struct cli, ctx.allow_pid_attach)},
	{"allow-device-control", NULL, "connect, capture: let them act, through the agent link of the "
	 "perflens-mcp that serves --artifact-root (which needs the flag too)", pl_option_bool,
	 offsetof(struct cli, ctx.allow_device_control)},
	{NULL},
};

#define NGROUPS 5

static const struct pl_option *const group_tables[NGROUPS] = {
	cli_options, pl_limit_options, pl_sym_options, pl_perf_options, fleet_options,
};

static void option_groups(struct cli *c, struct pl_option_group *g)
{
	void *targets[NGROUPS] = {c, &c->ctx.limits, &c->ctx.sym, &c->ctx.perf, &c->ctx.fleet};

	for (size_t i = 0; i < NGROUPS; i++)
		g[i] = (struct pl_option_group){group_tables[i], targets[i]};
}

/* A global option at argv[*i]: 1 taken, 0 not one, else the exit code of
 * its error (printed). */
static int global_option(struct cli *c, int argc, char **argv, int *i)
{
	struct pl_option_group groups[NGROUPS];
	struct pl_error err;
	int rc;

	option_groups(c, groups);
	rc = pl_options_take(groups, NGROUPS, argc, argv, i, &err);
	return rc < 0 ? cli_fail(&err) : rc;
}

static void print_commands(FILE *out);

static void print_usage(FILE *out)
{
	fprintf(out,
		"usage: perflens [options] COMMAND [--ARG VALUE ...] [options]\n"
		"       perflens COMMAND --help\n");
	print_commands(out);
	fprintf(out, "\n"
		"commands:\n");
	for (size_t i = 0; i < tool_count; i++) {
		json_t *d = tool_definition(&tool_table[i]);
		fprintf(out, "  %-10s %-16s %s\n", json_string_value(json_object_get(d, "cli")),
			tool_table[i].name, json_string_value(json_object_get(d, "title")));
	}
	fprintf(out,
		"\noptions (anywhere on the line):\n");
	for (size_t i = 0; i < NGROUPS; i++)
		pl_option_help(out, group_tables[i]);
	fprintf(out, "  %-28s %s\n", "--format table|json",
		"a human table instead of JSON (every command; one without a table says so)");
	cli_alias_help(out);
	fprintf(out, "\nexit codes: 0 ok, 2 usage or input, 3 unsupported or malformed profile,\n"
		"4 resource limit, 5 path or output safety, 6 external tool, 70 internal\n");
}

static void print_tool_help(const struct tool_def *t)
{
	json_t *d = tool_definition(t), *props, *spec, *req;
	const char *key;

	printf("perflens %s (%s): %s\n\n%s\n\narguments:\n",
	       json_string_value(json_object_get(d, "cli")), t->name,
	       json_string_value(json_object_get(d, "title")),
	       json_string_value(json_object_get(d, "description")));
	props = json_object_get(json_object_get(d, "inputSchema"), "properties");
	req = json_object_get(json_object_get(d, "inputSchema"), "required");
	json_object_foreach(props, key, spec) {
		char flag[128];
		bool required = false;
		size_t i;
		json_t *r;
		char *def = json_object_get(spec, "default") ?
			json_dumps(json_object_get(spec, "default"), JSON_ENCODE_ANY) : NULL;
		json_array_foreach(req, i, r)
			required |= strcmp(json_string_value(r), key) == 0;
		snprintf(flag, sizeof(flag), "--%s", key);
		for (char *c = flag; *c; c++)
			if (*c == '_')
				*c = '-';
		printf("  %-16s %-8s %s%s%s%s\n", flag,
		       json_string_value(json_object_get(spec, "type")),
		       json_string_value(json_object_get(spec, "description")),
		       required ? " (required)" : "", def ? " default: " : "", def ? def : "");
		free(def);
	}
	if (json_object_get(props, "analysis_id"))
		printf("  %-16s %-8s %s\n", "--input", "string",
		       "analyze this profile first and use its analysis_id");
}

/* ---------------------------------------------------------- arguments */

/* Convert a flag's text to the schema type of `spec`. */
static json_t *typed_value(json_t *spec, const char *v)
{
	const char *type = json_string_value(json_object_get(spec, "type"));
	char *end;

	if (!type || strcmp(type, "string") == 0)
		return json_string(v);
	if (strcmp(type, "integer") == 0) {
		long long x = strtoll(v, &end, 10);
		return *v && !*end ? json_integer(x) : json_string(v);
	}
	if (strcmp(type, "number") == 0) {
		double x = strtod(v, &end);
		return *v && !*end ? json_real(x) : json_string(v);
	}
	if (strcmp(type, "boolean") == 0) {
		if (strcmp(v, "true") == 0)
			return json_true();
		if (strcmp(v, "false") == 0)
			return json_false();
	}
	return json_string(v);
}

static bool is_render_format(json_t *props, const char *value)
{
	json_t *spec = json_object_get(props, "format"), *choice;
	size_t i;

	if (strcmp(value, "table") != 0 && strcmp(value, "json") != 0)
		return false;
	json_array_foreach(json_object_get(spec, "enum"), i, choice)
		if (strcmp(json_string_value(choice), value) == 0)
			return false;
	return true;
}

/* The type a property's schema names ("string" when it names none). */
static const char *type_of(json_t *spec)
{
	const char *type = json_string_value(json_object_get(spec, "type"));

	return type ? type : "string";
}

/* Set property `key` of `args` from the flag's text. */
static int set_arg(json_t *args, const char *key, json_t *spec, const char *value)
{
	json_t *arr;

	if (strcmp(type_of(spec), "object") == 0) {
		/* Repeat the flag for more entries: --environment A=1
		 * --environment B=2, or give the object as JSON. */
		json_t *obj = json_object_get(args, key), *parsed;
		const char *eqv = strchr(value, '=');
		if (!json_is_object(obj)) {
			obj = json_object();
			json_object_set_new(args, key, obj);
		}
		if (value[0] == '{' && (parsed = json_loads(value, 0, NULL))) {
			if (json_is_object(parsed))
				json_object_update(obj, parsed);
			json_decref(parsed);
		} else if (eqv && eqv > value) {
			char name[256];
			snprintf(name, sizeof(name), "%.*s", (int)(eqv - value), value);
			json_object_set_new(obj, name, json_string(eqv + 1));
		} else {
			json_object_set_new(args, key, json_string(value));  /* the type check names it */
		}
		return 0;
	}
	if (strcmp(type_of(spec), "array") != 0) {
		json_object_set_new(args, key, typed_value(spec, value));
		return 0;
	}
	/* Repeat the flag for more items: --events a --events b. */
	arr = json_object_get(args, key);
	if (!json_is_array(arr)) {
		arr = json_array();
		json_object_set_new(args, key, arr);
	}
	json_array_append_new(arr, typed_value(json_object_get(spec, "items"), value));
	return 0;
}

/* A boolean property: --flag, --flag=true|false, --no-flag. */
static int set_bool_arg(json_t *args, const char *key, const char *name, const char *value,
			bool negated)
{
	bool on = !negated;

	if (value && (negated || !pl_option_parse_bool(value, &on)))
		return usage_error("use --NAME, --NAME=true|false or --no-NAME",
				   "'--%s' is true or false", name);
	json_object_set_new(args, key, json_boolean(on));
	return 0;
}

/* The tool's own flag at argv[*i] (a property of its input schema, or
 * --format table|json): 1 taken, 0 not one, else an exit code. */
static int tool_flag(struct cli *c, json_t *props, json_t *args, int argc, char **argv, int *i)
{
	const char *arg = argv[*i], *eq = strchr(arg, '='), *value = eq ? eq + 1 : NULL;
	char name[128], key[128];
	bool negated = false;
	json_t *spec;

	snprintf(name, sizeof(name), "%.*s", (int)(eq ? eq - arg - 2 : (long)strlen(arg) - 2), arg + 2);
	for (char *k = name; *k; k++)
		*k = *k == '_' ? '-' : *k;
	snprintf(key, sizeof(key), "%s", name);
	for (char *k = key; *k; k++)
		*k = *k == '-' ? '_' : *k;
	spec = json_object_get(props, key);
	if (!spec && strncmp(key, "no_", 3) == 0 &&
	    strcmp(type_of(json_object_get(props, key + 3)), "boolean") == 0) {
		spec = json_object_get(props, key + 3);
		memmove(key, key + 3, strlen(key + 3) + 1);
		negated = true;
	}
	if (spec && strcmp(type_of(spec), "boolean") == 0)
		return set_bool_arg(args, key, name, value, negated) ? 2 : 1;
	if (!spec && strcmp(name, "format") != 0)
		return 0;
	if (!value && *i + 1 < argc)
		value = argv[++*i];
	if (!value)
		return usage_error("give the flag a value", "'--%s' needs a value", name);
	if (strcmp(name, "format") == 0 && is_render_format(props, value)) {
		c->table = strcmp(value, "table") == 0;
		return 1;
	}
	if (!spec)
		return usage_error("see 'perflens COMMAND --help' for the arguments",
				   "unknown flag '--%s'", name);
	return set_arg(args, key, spec, value) ? 2 : 1;
}

/* Parse argv[i..] into tool args and global options. */
static int parse_args(struct cli *c, const struct tool_def *t, int argc, char **argv, int i,
		      json_t *args)
{
	json_t *props = json_object_get(json_object_get(tool_definition(t), "inputSchema"), "properties");
	int rc;

	for (; i < argc; i++) {
		if (strncmp(argv[i], "--", 2) != 0)
			return usage_error("flags look like --name value; see --help",
					   "unexpected argument '%s'", argv[i]);
		if ((rc = tool_flag(c, props, args, argc, argv, &i)) == 0)
			rc = global_option(c, argc, argv, &i);
		if (rc == 0)
			return usage_error("see 'perflens COMMAND --help' for the arguments",
					   "unknown flag '%s'", argv[i]);
		if (rc != 1)
			return rc;
	}
	if (c->authorization) {
		/* The CLI's form of collect_profile's authorization. */
		c->ctx.allow_collection = true;
		if (json_object_get(props, "authorization"))
			json_object_set_new(args, "authorization", json_string(c->authorization));
	}
	return 0;
}

/* ------------------------------------------------------------- running */

static enum pl_err setup_ctx(struct cli *c, struct pl_error *err)
{
	const char *root = c->artifact_root ? c->artifact_root : DEFAULT_ARTIFACT_ROOT;

	if (mkdir(root, 0755) < 0 && errno != EEXIST)
		return pl_fail(err, PL_ERR_OUTPUT, "pass --artifact-root DIR that you can write",
			       "cannot create artifact root '%s': %s", root, strerror(errno));
	if (!realpath(root, c->artifact_buf))
		return pl_fail(err, PL_ERR_OUTPUT, "pass --artifact-root DIR that you can write",
			       "cannot resolve artifact root '%s': %s", root, strerror(errno));
	c->ctx.artifact_root = c->artifact_buf;
	c->ctx.allow_writes = true;
	/* The CLI's user is the operator: running perf on their perf.data
	 * is what `perflens analyze --input perf.data` asks for. */
	c->ctx.allow_process_execution = true;
	pl_sym_cfg_finish(&c->ctx.sym);
	pl_perf_cfg_finish(&c->ctx.perf);
	if (fleet_cfg_finish(&c->ctx.fleet, err))
		return err->code;
	if (c->ctx.nroots == 0) {
		/* The CLI runs as its user, who may read what they can. */
		c->roots[0] = "/";
		c->ctx.nroots = 1;
	}
	c->ctx.allowed_roots = c->roots;
	c->ctx.call = tool_call_name;
	return PL_OK;
}

/* `--input PATH` for a tool that takes an analysis_id. */
static enum pl_err analyze_first(struct cli *c, json_t *args, struct pl_error *err)
{
	const struct tool_def *an = tool_find("analyze_profile");
	json_t *a = json_pack("{s:s}", "path", c->input), *r = NULL;
	enum pl_err rc;

	if (c->input_format)
		json_object_set_new(a, "format", json_string(c->input_format));
	rc = tool_call(an, &c->ctx, a, &r, err);
	if (rc == PL_OK)
		json_object_set(args, "analysis_id", json_object_get(r, "analysis_id"));
	json_decref(a);
	json_decref(r);
	return rc;
}

static enum pl_err copy_file(const char *from, const char *to, struct pl_error *err)
{
	FILE *in = fopen(from, "rb"), *out;
	char buf[65536];
	size_t n;

	if (!in)
		return pl_fail(err, PL_ERR_OUTPUT, NULL, "cannot read '%s'", from);
	out = strcmp(to, "-") == 0 ? stdout : fopen(to, "wb");
	if (!out) {
		fclose(in);
		return pl_fail(err, PL_ERR_OUTPUT, "check the output path", "cannot write '%s': %s", to, strerror(errno));
	}
	while ((n = fread(buf, 1, sizeof(buf), in)) > 0)
		fwrite(buf, 1, n, out);
	fclose(in);
	if (out != stdout && fclose(out) != 0)
		return pl_fail(err, PL_ERR_OUTPUT, "check free space", "cannot write '%s'", to);
	return PL_OK;
}

static int emit(struct cli *c, const struct tool_def *t, json_t *result)
{
	struct pl_error err;
	FILE *out = stdout;
	char *text;

	if (strcmp(t->name, "export_profile") == 0 && c->output) {
		if (copy_file(path_bytes(json_string_value(json_object_get(result, "path"))), c->output, &err))
			return cli_fail(&err);
		return 0;
	}
	if (c->output && strcmp(c->output, "-") != 0 && !(out = fopen(c->output, "w"))) {
		pl_fail(&err, PL_ERR_OUTPUT, "check the output path", "cannot write '%s'", c->output);
		return cli_fail(&err);
	}
	cli_table_fn table = c->table ? cli_table_for(t->name) : NULL;
	if (table) {
		table(result, out);
	} else {
		text = json_dumps(result, JSON_INDENT(2) | JSON_REAL_PRECISION(10));
		fprintf(out, "%s\n", text);
		free(text);
	}
	if (out != stdout)
		fclose(out);
	return 0;
}

static int run_tool(struct cli *c, const struct tool_def *t, json_t *args)
{
	struct pl_error err;
	json_t *props = json_object_get(json_object_get(tool_definition(t), "inputSchema"), "properties");
	json_t *result = NULL;
	int code;

	pl_error_clear(&err);
	if (c->table && !cli_table_for(t->name))
		return usage_error("drop --format table: its result is JSON",
				   "'%s' has no table", json_string_value(json_object_get(tool_definition(t), "cli")));
	if (setup_ctx(c, &err))
		return cli_fail(&err);
	if (c->input) {
		if (json_object_get(props, "path") && !json_object_get(args, "path"))
			json_object_set_new(args, "path", json_string(c->input));
		else if (json_object_get(props, "analysis_id") && analyze_first(c, args, &err))
			return cli_fail(&err);
	}
	if (c->input_format && json_object_get(props, "path") && !json_object_get(args, "format"))
		json_object_set_new(args, "format", json_string(c->input_format));
	if (tool_call(t, &c->ctx, args, &result, &err))
		return cli_fail(&err);
	code = emit(c, t, result);
	json_decref(result);
	/* Work the call left for after its answer (registry.h): the answer
	 * is out, so it costs the reader nothing. */
	if (code == 0 && tool_followup_requested()) {
		fflush(stdout);
		tool_followup_set_running(true);
		result = NULL;
		if (tool_call(t, &c->ctx, args, &result, &err) == PL_OK)
			json_decref(result);
		tool_followup_set_running(false);
	}
	return code;
}

/* ---------------------------------------------------------- commands */

/* A command of the CLI's own; argv[0] is its name. */
typedef int (*cli_command_fn)(struct cli *c, int argc, char **argv);

static int cmd_help(struct cli *c, int argc, char **argv)
{
	(void)c, (void)argc, (void)argv;
	print_usage(stdout);
	return 0;
}

static int cmd_version(struct cli *c, int argc, char **argv)
{
	(void)c, (void)argc, (void)argv;
	printf("perflens %s\n", PL_VERSION);
	return 0;
}

static int cmd_codex_config(struct cli *c, int argc, char **argv)
{
	(void)c;
	return cli_codex_config(argc, argv);
}

static int cmd_viewer_url(struct cli *c, int argc, char **argv)
{
	(void)c;
	return cli_viewer_url(argc, argv);
}

static int cmd_install_skill(struct cli *c, int argc, char **argv)
{
	(void)c;
	return cli_install_skill(argc, argv);
}

static int cmd_claude_config(struct cli *c, int argc, char **argv)
{
	(void)c;
	return cli_claude_config(argc, argv);
}

static int cmd_init(struct cli *c, int argc, char **argv)
{
	(void)c;
	return cli_init(argc, argv);
}

static int cmd_detach(struct cli *c, int argc, char **argv)
{
	(void)c;
	return cli_detach(argc, argv);
}

static int cmd_status(struct cli *c, int argc, char **argv)
{
	(void)c;
	return cli_status(argc, argv);
}

static int cmd_doctor(struct cli *c, int argc, char **argv)
{
	(void)c;
	return cli_doctor(argc, argv);
}

/* perflens call TOOL '{json}' [flags] */
static int cmd_call(struct cli *c, int argc, char **argv)
{
	const struct tool_def *t = argc > 1 ? tool_find_cli(argv[1]) : NULL;
	json_error_t je;
	json_t *args;
	int rc;

	if (argc < 3 || !t)
		return usage_error("perflens call TOOL '{json}'; see perflens --help for tools",
				   "unknown tool '%s'", argc > 1 ? argv[1] : "");
	if (!(args = json_loads(argv[2], 0, &je)))
		return usage_error("pass the arguments as one JSON object", "bad JSON arguments: %s", je.text);
	escape_args(argc, argv, 3);
	if ((rc = parse_args(c, t, argc, argv, 3, args)) == 0)
		rc = run_tool(c, t, args);
	json_decref(args);
	return rc;
}

/* perflens COMMAND [flags]: a tool by its CLI (or tool) name. */
static int cmd_tool(struct cli *c, const struct tool_def *t, int argc, char **argv)
{
	json_t *args;
	int rc;

	for (int k = 1; k < argc; k++)
		if (strcmp(argv[k], "--help") == 0 || strcmp(argv[k], "-h") == 0) {
			print_tool_help(t);
			return 0;
		}
	escape_args(argc, argv, 1);
	args = json_object();
	if ((rc = parse_args(c, t, argc, argv, 1, args)) == 0)
		rc = run_tool(c, t, args);
	json_decref(args);
	return rc;
}

static const struct cli_command {
	const char *name;
	cli_command_fn fn;
	const char *help;    /* NULL: an alias, not listed */
} commands[] = {
	{"call", cmd_call, "TOOL '{JSON arguments}'   run a tool with JSON arguments"},
	{"init", cmd_init, "--project DIR             register PerfLens with Codex and Claude Code"},
	{"detach", cmd_detach, "--project DIR           remove what init wrote"},
	{"status", cmd_status, "--project DIR           what init set up, and whether it works"},
	{"doctor", cmd_doctor, "                        what this machine offers for profiling"},
	{"codex-config", cmd_codex_config, "--workspace DIR   print a Codex MCP config"},
	{"claude-config", cmd_claude_config, "--workspace DIR  print a Claude Code .mcp.json"},
	{"install-skill", cmd_install_skill, "--project DIR    install the agent Skill"},
	{"viewer-url", cmd_viewer_url, "--http ADDR:PORT    a one-time login URL for the web viewer"},
	{"--version", cmd_version, "                     print the version"},
	{"--help", cmd_help, "                        this help (COMMAND --help: its arguments)"},
	{"-h", cmd_help, NULL},
};

static const struct cli_command *command_named(const char *name)
{
	for (size_t i = 0; i < PL_ARRAY_LEN(commands); i++)
		if (strcmp(commands[i].name, name) == 0)
			return &commands[i];
	return NULL;
}

static void print_commands(FILE *out)
{
	for (size_t i = 0; i < PL_ARRAY_LEN(commands); i++)
		if (commands[i].help)
			fprintf(out, "       perflens %s %s\n", commands[i].name, commands[i].help);
}

int main(int argc, char **argv)
{
	const struct cli_command *cmd = NULL;
	const struct tool_def *t;
	struct cli c;
	char **alias_argv, alias_err[320];
	int i, rc, alias_argc;

	/* The call-graph probe's workload: this binary, re-run by perf. */
	if ((rc = coll_known_chain_main(argc, argv)) >= 0)
		return rc;
	memset(&c, 0, sizeof(c));
	pl_limits_default(&c.ctx.limits);
	/* Global options may come before the command too. */
	for (i = 1; i < argc && strncmp(argv[i], "--", 2) == 0 && !(cmd = command_named(argv[i])); i++) {
		escape_args(i + 2 < argc ? i + 2 : argc, argv, i);  /* the flag and its value */
		if ((rc = global_option(&c, argc, argv, &i)) != 1)
			return rc ? rc : usage_error("run perflens --help for the options",
						     "unknown option '%s'", argv[i]);
	}
	if (i == argc) {
		print_usage(stderr);
		return 2;
	}
	if (cmd || (cmd = command_named(argv[i])))
		return cmd->fn(&c, argc - i, argv + i);
	/* "capture start|stop|pause|resume": the tools capture-start, ... */
	if (strcmp(argv[i], "capture") == 0 && i + 1 < argc && strncmp(argv[i + 1], "--", 2) != 0) {
		static char joined[64];
		snprintf(joined, sizeof(joined), "capture-%s", argv[i + 1]);
		if ((t = tool_find_cli(joined))) {
			argv[i + 1] = joined;
			return cmd_tool(&c, t, argc - i - 1, argv + i + 1);
		}
	}
	/* The Python toolkit's names (analyze-folded, inspect-elf, ...). */
	alias_argv = cli_alias_rewrite(argc - i, argv + i, &alias_argc, alias_err, sizeof(alias_err));
	if (alias_argc < 0)
		return usage_error("see perflens --help for the aliases and perflens COMMAND --help for the flags",
				   "%s", alias_err);
	if (alias_argv) {
		t = tool_find_cli(alias_argv[0]);
		rc = t ? cmd_tool(&c, t, alias_argc, alias_argv) : 70;
		cli_alias_free(alias_argv);
		return rc;
	}
	if (!(t = tool_find_cli(argv[i])))
		return usage_error("run perflens --help for the commands", "unknown command '%s'", argv[i]);
	return cmd_tool(&c, t, argc - i, argv + i);
}
