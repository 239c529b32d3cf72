/* perflens.c - the command-line surface over the tool registry.
 *
 *   perflens [options] COMMAND [--arg value ...]
 *   perflens call TOOL '{"json":"arguments"}'
 *
 * COMMAND is a tool's CLI name (analyze, hotspots, callpaths, stat,
 * export) or its tool name (list_hotspots...).  Flags are not declared
 * here: each `--some-arg` is looked up in the tool's input schema
 * (some_arg), converted to the schema's type and checked by the registry
 * exactly as an MCP call would be.  `--input PATH` on a tool that takes an
 * analysis_id analyzes PATH first.  The result is the tool's JSON (or a
 * table with --format table); an error is one JSON object on stderr and
 * the exit code from error.c's table.
 */
#include "tools/registry.h"
#include "agent_setup.h"
#include "tables.h"
#include "base/escape.h"
#include "store/artifact.h"

#include <errno.h>
#include <limits.h>
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
	struct pl_error err;        /* a symbol flag's error */
};

int cli_fail(const struct pl_error *e)
{
	json_t *o = json_pack("{s:o}", "error", tool_error_json_new(e));
	char *s = json_dumps(o, JSON_COMPACT);

	fprintf(stderr, "%s\n", s);
	free(s);
	json_decref(o);
	return pl_err_exit_code(e->code);
}

static int usage_error(const char *hint, const char *fmt, const char *what)
{
	struct pl_error e;
	pl_fail(&e, PL_ERR_USAGE, hint, fmt, what);
	return cli_fail(&e);
}

static void print_usage(FILE *out)
{
	fprintf(out,
		"usage: perflens [options] COMMAND [--ARG VALUE ...]\n"
		"       perflens call TOOL '{JSON arguments}'\n"
		"       perflens COMMAND --help | perflens --version\n"
		"       perflens codex-config --workspace DIR    print a Codex MCP config\n"
		"       perflens install-skill --project DIR     install the agent Skill\n\n"
		"commands:\n");
	for (size_t i = 0; i < tool_count; i++) {
		json_t *d = tool_definition(&tool_table[i]);
		fprintf(out, "  %-10s %-16s %s\n", json_string_value(json_object_get(d, "cli")),
			tool_table[i].name, json_string_value(json_object_get(d, "title")));
	}
	fprintf(out,
		"\noptions (anywhere on the line):\n"
		"  --input PATH          profile to analyze first, for commands that take an analysis_id\n"
		"  --input-format FMT    auto|folded|perf_script|agent_chunks|perf_stat for --input\n"
		"  --artifact-root DIR   where analyses and exports go (default ./" DEFAULT_ARTIFACT_ROOT ")\n"
		"  --allowed-root DIR    read only beneath DIR (repeatable; default: anywhere)\n"
		"  --output FILE         write the result there ('-' stdout); for export, the exported file\n"
		"  --format table|json   a human table instead of JSON (where the tool has no own format)\n"
		"  --authorize-target PHRASE   collect: I_EXPLICITLY_AUTHORIZE_TARGET_PROFILING if you may profile it\n"
		"  --allow-pid-attach    collect: allow --pid (also needs --pid-authorization PHRASE)\n"
		"  --max-input-bytes N --max-records N --max-line N --max-depth N\n"
		"  --max-frames N --max-stacks N   lower the resource limits\n"
		"%s"
		"\nexit codes: 0 ok, 2 usage or input, 3 unsupported or malformed profile,\n"
		"4 resource limit, 5 path or output safety, 6 external tool, 70 internal\n",
		pl_sym_cfg_help);
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

static bool parse_limit(const char *v, uint64_t max, uint64_t *out)
{
	uint64_t x;

	if (!pl_parse_u64(v, strlen(v), &x) || x == 0 || x > max)
		return false;
	*out = x;
	return true;
}

/* Arguments are bytes, and tools take paths in the escaped form of
 * docs/paths.md: bytes that are not UTF-8 (a Latin-1 name from the shell)
 * are escaped, backslashes stay as typed, so an escaped path copied from
 * a result works as well.  The new strings live as long as the process. */
static void escape_args(int argc, char **argv, int from)
{
	for (int k = from; k < argc; k++) {
		struct pl_buf b = {0};

		if (!pl_esc_needed(argv[k], strlen(argv[k])))
			continue;
		pl_esc_add_text(&b, argv[k], strlen(argv[k]));
		argv[k] = b.data;
	}
}

/* A path the CLI opens itself, back to its bytes (a new string that lives
 * as long as the process); `value` itself when it cannot be decoded. */
static const char *path_bytes(const char *value)
{
	size_t cap = strlen(value) + 1;
	char *bytes = pl_xmalloc(cap);

	if (pl_esc_decode(value, bytes, cap))
		return bytes;
	free(bytes);
	return value;
}

/* Global options; returns 1 when `name` was one (consuming *value), 0
 * when not, -1 on a bad value. */
static int global_option(struct cli *c, const char *name, const char *value)
{
	struct pl_limits def;
	uint64_t x;

	pl_limits_default(&def);
#define LIMIT(flag, field, max)                                  \
	if (strcmp(name, flag) == 0) {                           \
		if (!value || !parse_limit(value, max, &x))      \
			return -1;                               \
		c->ctx.limits.field = x;                         \
		return 1;                                        \
	}
	LIMIT("max-input-bytes", max_input_bytes, def.max_input_bytes)
	LIMIT("max-records", max_records, def.max_records)
	LIMIT("max-line", max_line, def.max_line)
	LIMIT("max-depth", max_depth, def.max_depth)
	LIMIT("max-frames", max_frames, def.max_frames)
	LIMIT("max-stacks", max_stacks, def.max_stacks)
#undef LIMIT
	if (!value)
		return 0;
	if (strcmp(name, "artifact-root") == 0)
		c->artifact_root = path_bytes(value);
	else if (strcmp(name, "allowed-root") == 0) {
		if (c->ctx.nroots >= PL_ARRAY_LEN(c->roots) ||
		    !realpath(path_bytes(value), c->root_bufs[c->ctx.nroots]))
			return -1;
		c->roots[c->ctx.nroots] = c->root_bufs[c->ctx.nroots];
		c->ctx.nroots++;
	} else if (strcmp(name, "output") == 0)
		c->output = path_bytes(value);
	else if (strcmp(name, "input") == 0)
		c->input = value;
	else if (strcmp(name, "input-format") == 0)
		c->input_format = value;
	else
		return 0;
	return 1;
}

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

/* Parse argv[i..] into tool args and global options. */
static int parse_args(struct cli *c, const struct tool_def *t, int argc,
		      char **argv, int i, json_t *args)
{
	json_t *props = json_object_get(json_object_get(tool_definition(t), "inputSchema"), "properties");

	for (; i < argc; i++) {
		char name[128];
		const char *arg = argv[i], *eq, *value = NULL;
		json_t *spec;
		int g;

		if (strncmp(arg, "--", 2) != 0)
			return usage_error("flags look like --name value; see --help",
					   "unexpected argument '%s'", arg);
		eq = strchr(arg, '=');
		snprintf(name, sizeof(name), "%.*s", (int)(eq ? eq - arg - 2 : (long)strlen(arg) - 2), arg + 2);
		if (eq)
			value = eq + 1;
		for (char *s = name; *s; s++)
			if (*s == '_')
				*s = '-';
		if (strcmp(name, "allow-pid-attach") == 0 && !value) {
			c->ctx.allow_pid_attach = true;
			continue;
		}
		if (strcmp(name, "authorize-target") == 0) {
			/* The CLI's form of collect_profile's authorization. */
			if (!value && i + 1 < argc)
				value = argv[++i];
			if (!value)
				return usage_error("give the phrase", "'--%s' needs the phrase", name);
			c->ctx.allow_collection = true;
			if (json_object_get(props, "authorization"))
				json_object_set_new(args, "authorization", json_string(value));
			continue;
		}
		spec = NULL;
		{
			char key[128];
			snprintf(key, sizeof(key), "%s", name);
			for (char *s = key; *s; s++)
				if (*s == '-')
					*s = '_';
			spec = json_object_get(props, key);
			if (spec && json_is_string(json_object_get(spec, "type")) &&
			    strcmp(json_string_value(json_object_get(spec, "type")), "boolean") == 0 && !value) {
				json_object_set_new(args, key, json_true());
				continue;
			}
			if (!value && i + 1 < argc)
				value = argv[++i];
			if (!value)
				return usage_error("give the flag a value", "'--%s' needs a value", name);
			if (strcmp(name, "format") == 0 && is_render_format(props, value)) {
				c->table = strcmp(value, "table") == 0;
				continue;
			}
			if (spec && json_is_string(json_object_get(spec, "type")) &&
			    strcmp(json_string_value(json_object_get(spec, "type")), "array") == 0) {
				/* Repeat the flag for more items: --events a --events b. */
				json_t *arr = json_object_get(args, key);
				if (!json_is_array(arr)) {
					arr = json_array();
					json_object_set_new(args, key, arr);
				}
				json_array_append_new(arr, typed_value(json_object_get(spec, "items"), value));
				continue;
			}
			if (spec) {
				json_object_set_new(args, key, typed_value(spec, value));
				continue;
			}
		}
		if (value && (g = pl_sym_cfg_option(&c->ctx.sym, name, value, &c->err)) != 0) {
			if (g < 0)
				return usage_error(c->err.hint, "%s", c->err.text);
			continue;
		}
		g = global_option(c, name, value);
		if (g < 0)
			return usage_error("limits must be whole numbers between 1 and the default; roots must exist",
					   "bad value for '--%s'", name);
		if (g == 0)
			return usage_error("see 'perflens COMMAND --help' for the arguments",
					   "unknown flag '--%s'", name);
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
	if (c->ctx.nroots == 0) {
		/* The CLI runs as its user, who may read what they can. */
		c->roots[0] = "/";
		c->ctx.nroots = 1;
	}
	c->ctx.allowed_roots = c->roots;
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
	return code;
}

int main(int argc, char **argv)
{
	struct cli c;
	const struct tool_def *t;
	json_t *args;
	int i = 1, rc;

	memset(&c, 0, sizeof(c));
	pl_limits_default(&c.ctx.limits);
	if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
		print_usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? 2 : 0;
	}
	if (strcmp(argv[1], "--version") == 0) {
		printf("perflens %s\n", PL_VERSION);
		return 0;
	}
	if (strcmp(argv[1], "codex-config") == 0)
		return cli_codex_config(argc - 1, argv + 1);
	if (strcmp(argv[1], "install-skill") == 0)
		return cli_install_skill(argc - 1, argv + 1);
	if (strcmp(argv[1], "call") == 0) {
		json_error_t je;
		if (argc < 4 || !(t = tool_find_cli(argv[2])))
			return usage_error("perflens call TOOL '{json}'; see perflens --help for tools",
					   "unknown tool '%s'", argc > 2 ? argv[2] : "");
		escape_args(argc, argv, 4);
		args = json_loads(argv[3], 0, &je);
		if (!args)
			return usage_error("pass the arguments as one JSON object", "bad JSON arguments: %s", je.text);
		if ((rc = parse_args(&c, t, argc, argv, 4, args)) == 0)
			rc = run_tool(&c, t, args);
		json_decref(args);
		return rc;
	}
	escape_args(argc, argv, 1);
	t = tool_find_cli(argv[1]);
	if (!t)
		return usage_error("run perflens --help for the commands", "unknown command '%s'", argv[i]);
	for (int k = 2; k < argc; k++)
		if (strcmp(argv[k], "--help") == 0 || strcmp(argv[k], "-h") == 0) {
			print_tool_help(t);
			return 0;
		}
	args = json_object();
	if ((rc = parse_args(&c, t, argc, argv, 2, args)) == 0)
		rc = run_tool(&c, t, args);
	json_decref(args);
	return rc;
}
