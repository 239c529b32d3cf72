/* registry.c - the tool table and what every call goes through.
 *
 * tool_call checks the arguments against the tool's input schema (the
 * subset our schemas use: type, enum, minimum/maximum, minLength/
 * maxLength, pattern, required, additionalProperties false), fills the
 * schema's defaults, then runs the handler.  So a handler never sees a
 * missing required key, a wrong type or an unknown key, and the error a
 * caller gets names the property and what would be valid.  Running a
 * tool, and the one check of its result's next steps (steps.c), are in
 * dispatch.c.
 */
#include "registry.h"
#include "base/schemas.h"

#include <pthread.h>
#include <regex.h>
#include <stdlib.h>
#include <string.h>

const struct tool_def tool_table[] = {
	{"analyze_profile", "schemas/tools/analyze_profile.json", tool_analyze_profile,
	 TOOL_RUNS_PERF | TOOL_USES_NETWORK},
	{"list_hotspots", "schemas/tools/list_hotspots.json", tool_list_hotspots},
	{"get_call_paths", "schemas/tools/get_call_paths.json", tool_get_call_paths},
	{"get_perf_stat", "schemas/tools/get_perf_stat.json", tool_get_perf_stat},
	{"export_profile", "schemas/tools/export_profile.json", tool_export_profile},
	{"get_hotspot", "schemas/tools/get_hotspot.json", tool_get_hotspot},
	{"list_threads", "schemas/tools/list_threads.json", tool_list_threads},
	{"get_timeline", "schemas/tools/get_timeline.json", tool_get_timeline},
	{"list_artifacts", "schemas/tools/list_artifacts.json", tool_list_artifacts},
	{"read_artifact_page", "schemas/tools/read_artifact_page.json", tool_read_artifact_page},
	{"source_context", "schemas/tools/source_context.json", tool_source_context},
	{"collect_profile", "schemas/tools/collect_profile.json", tool_collect_profile,
	 TOOL_RUNS_PERF | TOOL_COLLECTS, "timeout_seconds"},
	{"inspect_collection_capabilities", "schemas/tools/inspect_collection_capabilities.json",
	 tool_inspect_collection_capabilities, TOOL_RUNS_PERF | TOOL_COLLECTS | TOOL_PROBES_CHAINS},
	{"run_experiment", "schemas/tools/run_experiment.json", tool_run_experiment,
	 TOOL_RUNS_PERF | TOOL_COLLECTS, "timeout_seconds"},
	{"classify_hotspots", "schemas/tools/classify_hotspots.json", tool_classify_hotspots},
	{"build_report", "schemas/tools/build_report.json", tool_build_report},
	{"normalize_benchmark", "schemas/tools/normalize_benchmark.json", tool_normalize_benchmark},
	{"compare_benchmarks", "schemas/tools/compare_benchmarks.json", tool_compare_benchmarks},
	{"compare_profiles", "schemas/tools/compare_profiles.json", tool_compare_profiles},
	{"inspect_elf", "schemas/tools/inspect_elf.json", tool_inspect_elf, TOOL_USES_NETWORK},
	{"symbolize", "schemas/tools/symbolize.json", tool_symbolize, TOOL_USES_NETWORK},
	/* The device tools: listed only when the agent link runs. */
	{"list_devices", "schemas/tools/list_devices.json", tool_list_devices, TOOL_DEVICE},
	{"list_sessions", "schemas/tools/list_sessions.json", tool_list_sessions, TOOL_DEVICE},
	{"get_device_metrics", "schemas/tools/get_device_metrics.json", tool_get_device_metrics, TOOL_DEVICE},
	{"list_device_processes", "schemas/tools/list_device_processes.json", tool_list_device_processes,
	 TOOL_DEVICE},
	{"connect_device", "schemas/tools/connect_device.json", tool_connect_device, TOOL_DEVICE},
	{"start_capture", "schemas/tools/start_capture.json", tool_start_capture, TOOL_DEVICE},
	{"stop_capture", "schemas/tools/stop_capture.json", tool_stop_capture, TOOL_DEVICE},
	{"pause_capture", "schemas/tools/pause_capture.json", tool_pause_capture, TOOL_DEVICE},
	{"resume_capture", "schemas/tools/resume_capture.json", tool_resume_capture, TOOL_DEVICE},
	{"configure_device_metrics", "schemas/tools/configure_device_metrics.json", tool_configure_device_metrics,
	 TOOL_DEVICE},
	{"disconnect_device", "schemas/tools/disconnect_device.json", tool_disconnect_device, TOOL_DEVICE},
	{"fleet_init", "schemas/tools/fleet_init.json", tool_fleet_init, TOOL_FLEET},
	{"fleet_publish", "schemas/tools/fleet_publish.json", tool_fleet_publish, TOOL_FLEET},
	{"fleet_devices", "schemas/tools/fleet_devices.json", tool_fleet_devices, TOOL_FLEET},
	{"fleet_hotspots", "schemas/tools/fleet_hotspots.json", tool_fleet_hotspots, TOOL_FLEET},
	{"fleet_compare", "schemas/tools/fleet_compare.json", tool_fleet_compare, TOOL_FLEET},
	{"fleet_analyze", "schemas/tools/fleet_analyze.json", tool_fleet_analyze, TOOL_FLEET},
#ifdef PL_TEST_HOOKS
	{"test_fault", "schemas/test/test_fault.json", tool_test_fault},
#endif
};
const size_t tool_count = PL_ARRAY_LEN(tool_table);

static json_t *definitions[PL_ARRAY_LEN(tool_table)];

static pthread_mutex_t definitions_lock = PTHREAD_MUTEX_INITIALIZER;

json_t *tool_definition(const struct tool_def *t)
{
	size_t i = (size_t)(t - tool_table);
	json_error_t je;

	pthread_mutex_lock(&definitions_lock);
	if (!definitions[i]) {
		const char *text = pl_schema_text(t->schema_path);
		definitions[i] = text ? json_loads(text, 0, &je) : NULL;
		if (!definitions[i]) {
			fprintf(stderr, "perflens: schema '%s' is missing or invalid\n", t->schema_path);
			abort();
		}
	}
	pthread_mutex_unlock(&definitions_lock);
	return definitions[i];
}

/* ------------------------------------------------------ input schemas
 *
 * A worker checks the arguments of the next steps its result proposes
 * (steps.c), mostly steps of other tools.  Their whole definitions, with
 * descriptions and output schemas, are ten times the text of their input
 * schemas and were most of that check's time (about 0.3 ms for the two a
 * list_hotspots answer names), so a process that has not parsed a
 * definition parses only its "inputSchema" member: the top-level members
 * before it are read one value at a time (JSON_DISABLE_EOF_CHECK stops
 * after each and says where), those after it not at all. */

static json_t *input_schemas[PL_ARRAY_LEN(tool_table)];

/* The value of member `key` of the object in `text` (new), or NULL. */
static json_t *member_alone(const char *text, const char *key)
{
	const size_t flags = JSON_DISABLE_EOF_CHECK | JSON_DECODE_ANY;
	const char *p = text + strspn(text, " \t\r\n");
	json_error_t je;

	if (*p++ != '{')
		return NULL;
	for (;;) {
		json_t *name = json_loadb(p, strlen(p), flags, &je), *value;
		bool wanted = json_is_string(name) && strcmp(json_string_value(name), key) == 0;

		json_decref(name);
		if (!name)
			return NULL;
		p += je.position;
		p += strspn(p, " \t\r\n");
		if (*p++ != ':' || !(value = json_loadb(p, strlen(p), flags, &je)))
			return NULL;
		if (wanted)
			return value;
		json_decref(value);
		p += je.position;
		p += strspn(p, " \t\r\n");
		if (*p++ != ',')
			return NULL;
	}
}

/* The tool's inputSchema (borrowed, cached): the whole definition's when
 * it is parsed already, else only that member's. */
static json_t *tool_input_schema(const struct tool_def *t)
{
	size_t i = (size_t)(t - tool_table);
	json_t *schema;

	pthread_mutex_lock(&definitions_lock);
	schema = definitions[i] ? json_object_get(definitions[i], "inputSchema") : input_schemas[i];
	pthread_mutex_unlock(&definitions_lock);
	if (schema)
		return schema;
	schema = member_alone(pl_schema_text(t->schema_path) ?: "", "inputSchema");
	if (!json_is_object(schema)) {
		json_decref(schema);
		return json_object_get(tool_definition(t), "inputSchema");
	}
	pthread_mutex_lock(&definitions_lock);
	if (input_schemas[i])
		json_decref(schema);  /* another thread was first */
	else
		input_schemas[i] = schema;
	schema = input_schemas[i];
	pthread_mutex_unlock(&definitions_lock);
	return schema;
}

const struct tool_def *tool_find(const char *name)
{
	for (size_t i = 0; name && i < tool_count; i++)
		if (strcmp(tool_table[i].name, name) == 0)
			return &tool_table[i];
	return NULL;
}

const struct tool_def *tool_find_cli(const char *name)
{
	const struct tool_def *t = tool_find(name);

	for (size_t i = 0; !t && name && i < tool_count; i++) {
		const char *cli = json_string_value(json_object_get(tool_definition(&tool_table[i]), "cli"));
		if (cli && strcmp(cli, name) == 0)
			t = &tool_table[i];
	}
	return t;
}

/* ------------------------------------------------------ argument checks */

static bool type_matches(const char *type, json_t *v)
{
	if (strcmp(type, "string") == 0)
		return json_is_string(v);
	if (strcmp(type, "integer") == 0)
		return json_is_integer(v);
	if (strcmp(type, "number") == 0)
		return json_is_number(v);
	if (strcmp(type, "boolean") == 0)
		return json_is_boolean(v);
	if (strcmp(type, "array") == 0)
		return json_is_array(v);
	if (strcmp(type, "object") == 0)
		return json_is_object(v);
	if (strcmp(type, "null") == 0)
		return json_is_null(v);
	return false;
}

static enum pl_err check_enum(const char *key, json_t *spec, json_t *v,
			      struct pl_error *err)
{
	json_t *choices = json_object_get(spec, "enum"), *c;
	struct pl_buf list = {0};
	size_t i;

	if (!choices)
		return PL_OK;
	json_array_foreach(choices, i, c) {
		if (json_equal(c, v)) {
			pl_buf_release(&list);
			return PL_OK;
		}
		pl_buf_addf(&list, "%s%s", i ? ", " : "", json_string_value(c));
	}
	pl_fail(err, PL_ERR_USAGE, "use one of the listed values",
		"'%s' must be one of: %s", key, list.data ? list.data : "");
	pl_buf_release(&list);
	return PL_ERR_USAGE;
}

static enum pl_err check_range(const char *key, json_t *spec, json_t *v,
			       struct pl_error *err)
{
	json_t *min = json_object_get(spec, "minimum"), *max = json_object_get(spec, "maximum");
	double x;

	if (!json_is_number(v))
		return PL_OK;
	x = json_number_value(v);
	if ((min && x < json_number_value(min)) || (max && x > json_number_value(max)))
		return pl_fail(err, PL_ERR_USAGE, "pass a value inside the range",
			       "'%s' must be between %g and %g", key,
			       min ? json_number_value(min) : -1e308,
			       max ? json_number_value(max) : 1e308);
	return PL_OK;
}

/* Schema patterns that tool_pattern_match (schema_pattern.c) cannot
 * match itself, compiled once per process (they are few and fixed); the
 * schemas have none today.  The server compiles them at startup, after
 * the zygote's fork (tool_schemas_prepare), so that the zygote's heap,
 * which every spare worker copies, stays without them. */
struct compiled {
	const char *pattern;
	regex_t re;
};
static struct compiled patterns[32];
static size_t npatterns;
static pthread_mutex_t patterns_lock = PTHREAD_MUTEX_INITIALIZER;

static const regex_t *compiled_pattern(const char *pattern)
{
	const regex_t *found = NULL;

	pthread_mutex_lock(&patterns_lock);
	for (size_t i = 0; i < npatterns && !found; i++)
		if (strcmp(patterns[i].pattern, pattern) == 0)
			found = &patterns[i].re;
	if (!found && npatterns < PL_ARRAY_LEN(patterns) &&
	    regcomp(&patterns[npatterns].re, pattern, REG_EXTENDED | REG_NOSUB) == 0) {
		patterns[npatterns].pattern = pattern;  /* lives in the cached definition */
		found = &patterns[npatterns++].re;
	}
	pthread_mutex_unlock(&patterns_lock);
	return found;
}

void tool_schemas_prepare(void)
{
	for (size_t i = 0; i < tool_count; i++) {
		json_t *props = json_object_get(json_object_get(tool_definition(&tool_table[i]),
								"inputSchema"), "properties");
		const char *key;
		json_t *spec;

		json_object_foreach(props, key, spec) {
			const char *pat = json_string_value(json_object_get(spec, "pattern"));
			if (pat && tool_pattern_match(pat, "") < 0)
				(void)compiled_pattern(pat);
		}
	}
}

static enum pl_err check_string(const char *key, json_t *spec, json_t *v,
				struct pl_error *err)
{
	json_t *minl = json_object_get(spec, "minLength"), *maxl = json_object_get(spec, "maxLength");
	json_t *pat = json_object_get(spec, "pattern");
	size_t n;

	if (!json_is_string(v))
		return PL_OK;
	n = json_string_length(v);
	if (minl && n < (size_t)json_integer_value(minl))
		return pl_fail(err, PL_ERR_USAGE, "pass a non-empty value", "'%s' is too short", key);
	if (maxl && n > (size_t)json_integer_value(maxl))
		return pl_fail(err, PL_ERR_USAGE, "pass a shorter value",
			       "'%s' is longer than %lld characters", key,
			       (long long)json_integer_value(maxl));
	if (pat) {
		int match = tool_pattern_match(json_string_value(pat), json_string_value(v));
		const regex_t *re = match < 0 ? compiled_pattern(json_string_value(pat)) : NULL;
		if (match < 0 && !re)
			return pl_fail(err, PL_ERR_INTERNAL, NULL, "bad pattern for '%s'", key);
		if (match < 0)
			match = regexec(re, json_string_value(v), 0, NULL, 0) == 0;
		if (!match)
			return pl_fail(err, PL_ERR_USAGE, "pass the id exactly as a previous call returned it",
				       "'%s' does not match %s", key, json_string_value(pat));
	}
	return PL_OK;
}

static enum pl_err check_value(const char *key, json_t *spec, json_t *v,
			       struct pl_error *err)
{
	json_t *type = json_object_get(spec, "type");
	const char *t = json_string_value(type);

	/* JSON has one number type: accept 3.0 for an integer. */
	if (t && strcmp(t, "integer") == 0 && json_is_real(v) &&
	    json_real_value(v) == (double)(json_int_t)json_real_value(v))
		return PL_OK;
	if (t && !type_matches(t, v))
		return pl_fail(err, PL_ERR_USAGE, "fix the argument's type",
			       "'%s' must be %s %s", key, strchr("aeiou", t[0]) ? "an" : "a", t);
	if (check_enum(key, spec, v, err) || check_range(key, spec, v, err) ||
	    check_string(key, spec, v, err))
		return err->code;
	return PL_OK;
}

static void normalize_integers(json_t *args, json_t *props)
{
	const char *key;
	json_t *v;

	json_object_foreach(args, key, v) {
		json_t *spec = json_object_get(props, key);
		const char *t = json_string_value(json_object_get(spec, "type"));
		if (t && strcmp(t, "integer") == 0 && json_is_real(v))
			json_object_set_new(args, key, json_integer((json_int_t)json_real_value(v)));
	}
}

enum pl_err tool_check_args(const struct tool_def *t, json_t *args,
			    struct pl_error *err)
{
	json_t *schema = tool_input_schema(t);
	json_t *props = json_object_get(schema, "properties");
	json_t *required = json_object_get(schema, "required"), *v;
	const char *key;
	size_t i;

	if (!json_is_object(args))
		return pl_fail(err, PL_ERR_USAGE, "pass the arguments as a JSON object",
			       "arguments of '%s' must be an object", t->name);
	json_object_foreach(args, key, v) {
		json_t *spec = json_object_get(props, key);
		if (!spec) {
			struct pl_buf known = {0};
			const char *k;
			json_t *s;
			json_object_foreach(props, k, s)
				pl_buf_addf(&known, "%s%s", known.len ? ", " : "", k);
			pl_fail(err, PL_ERR_USAGE, "remove it; see the tool's inputSchema",
				"unknown argument '%s' for '%s' (known: %s)", key, t->name,
				known.data ? known.data : "none");
			pl_buf_release(&known);
			return PL_ERR_USAGE;
		}
		if (check_value(key, spec, v, err))
			return err->code;
	}
	json_array_foreach(required, i, v) {
		if (!json_object_get(args, json_string_value(v)))
			return pl_fail(err, PL_ERR_USAGE, "add it and call again",
				       "'%s' needs the argument '%s'", t->name, json_string_value(v));
	}
	normalize_integers(args, props);
	json_object_foreach(props, key, v) {
		json_t *def = json_object_get(v, "default");
		if (def && !json_object_get(args, key))
			json_object_set(args, key, def);
	}
	return PL_OK;
}

/* ------------------------------------------------------- the error exit */

/* A JSON string of `s`, escaped when it is not valid UTF-8 (new). */
static json_t *safe_string(const char *s)
{
	char *text = pl_err_text_safe(s);
	json_t *j = json_string(text);

	free(text);
	return j;
}

json_t *tool_error_json_new(const struct pl_error *e)
{
	return json_pack("{s:s,s:o,s:o,s:i}", "code", pl_err_name(e->code),
			 "message", safe_string(e->text), "hint", safe_string(e->hint),
			 "exit_code", pl_err_exit_code(e->code));
}

enum pl_err tool_error_from_json(json_t *obj, struct pl_error *e)
{
	const char *message = json_string_value(json_object_get(obj, "message"));
	const char *hint = json_string_value(json_object_get(obj, "hint"));

	enum pl_err code = pl_err_from_name(json_string_value(json_object_get(obj, "code")));

	/* An error object that says "ok" is no error we can name. */
	return pl_fail(e, code == PL_OK ? PL_ERR_INTERNAL : code, hint, "%s",
		       message ? message : "the error could not be read");
}
