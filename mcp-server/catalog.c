/* catalog.c - resources, prompts and completions (see catalog.h).
 *
 * Resources are the files under the artifact root, named
 * perflens://artifacts/analyses/ID.json and so on; names are checked
 * against a strict pattern and opened without following symlinks, and a
 * file too large for one read points the client at read_artifact_page.
 * Prompts are fixed texts with arguments filled in; they walk a model
 * through the evidence-first workflow the Skill teaches.
 */
#include "catalog.h"
#include "server.h"
#include "store/artifact.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define RESOURCES_PAGE 50
#define MAX_RESOURCE_READ (256 * 1024)

int catalog_list(const struct tool_ctx *ctx, const char *cursor, bool has_cursor,
		 json_t **result, json_t **err_data)
{
	json_t *all = pl_artifact_list(ctx->artifact_root ? ctx->artifact_root : "/nonexistent");
	json_t *page = json_array();
	size_t offset = 0, n = json_array_size(all), end;
	struct pl_error err;
	char next[64];

	if (has_cursor && (!cursor || tool_cursor_parse(cursor, "resources/list", &offset, &err) ||
			   offset > n)) {
		*err_data = json_pack("{s:s}", "hint", "pass nextCursor exactly as resources/list returned it, or omit it");
		json_decref(all);
		json_decref(page);
		return MCP_RPC_INVALID_PARAMS;
	}
	end = offset + RESOURCES_PAGE < n ? offset + RESOURCES_PAGE : n;
	for (size_t i = offset; i < end; i++) {
		json_t *a = json_array_get(all, i);
		const char *path = json_string_value(json_object_get(a, "path"));
		json_array_append_new(page, json_pack("{s:O,s:s,s:s,s:O,s:O}",
			"uri", json_object_get(a, "uri"), "name", strchr(path, '/') + 1,
			"title", path, "mimeType", json_object_get(a, "mime_type"),
			"size", json_object_get(a, "bytes")));
	}
	*result = json_pack("{s:o}", "resources", page);
	if (end < n) {
		tool_cursor_make(next, sizeof(next), end, "resources/list");
		json_object_set_new(*result, "nextCursor", json_string(next));
	}
	json_decref(all);
	return 0;
}

int catalog_read(const struct tool_ctx *ctx, const char *uri, json_t **result,
		 json_t **err_data)
{
	char rel[600];
	struct pl_error err;
	uint64_t size;
	char *buf;
	ssize_t got;
	int fd;
	json_t *text;

	if (!uri || !ctx->artifact_root || !pl_artifact_rel_path(uri, rel, sizeof(rel)) ||
	    strncmp(uri, "perflens://artifacts/", 21) != 0) {
		*err_data = json_pack("{s:s,s:s}", "uri", uri ? uri : "",
				      "hint", "use a uri from resources/list (perflens://artifacts/...)");
		return MCP_RPC_INVALID_PARAMS;
	}
	if ((fd = pl_artifact_open(ctx->artifact_root, rel, &size, &err)) < 0) {
		*err_data = json_pack("{s:s,s:s}", "uri", uri, "hint", err.hint);
		return MCP_RPC_RESOURCE_NOT_FOUND;
	}
	if (size > MAX_RESOURCE_READ) {
		close(fd);
		*err_data = json_pack("{s:s,s:I,s:s}", "uri", uri, "size", (json_int_t)size,
				      "hint", "too large to read at once: call the read_artifact_page tool with this path and an offset");
		return MCP_RPC_INVALID_PARAMS;
	}
	buf = pl_xmalloc(size + 1);
	got = pread(fd, buf, size, 0);
	close(fd);
	text = got >= 0 ? json_stringn(buf, (size_t)got) : NULL;
	free(buf);
	if (!text) {
		*err_data = json_pack("{s:s,s:s}", "uri", uri, "hint", "the artifact is not UTF-8 text; use read_artifact_page");
		return MCP_RPC_INVALID_PARAMS;
	}
	{
		const char *name = strrchr(rel, '.');
		const char *mime = name && strcmp(name, ".json") == 0 ? "application/json" :
				   name && strcmp(name, ".svg") == 0 ? "image/svg+xml" : "text/plain";
		*result = json_pack("{s:[{s:s,s:s,s:o}]}", "contents", "uri", uri, "mimeType", mime,
				    "text", text);
	}
	return 0;
}

json_t *catalog_templates(void)
{
	return json_pack("{s:[{s:s,s:s,s:s,s:s}]}", "resourceTemplates",
		"uriTemplate", "perflens://artifacts/analyses/{analysis_id}.json",
		"name", "analysis", "description", "The summary of an analysis made by analyze_profile",
		"mimeType", "application/json");
}

/* ------------------------------------------------------------- prompts */

struct prompt_arg {
	const char *name;
	const char *description;
	bool required;
};

struct prompt {
	const char *name;
	const char *title;
	const char *description;
	struct prompt_arg args[3];
	const char *text;   /* {name} is replaced by that argument */
};

static const struct prompt prompts[] = {
	{"investigate_profile", "Investigate a profile",
	 "Find where time goes in a profile, with evidence, without guessing causes.",
	 {{"path", "Profile file (perf script text, folded stacks, agent session folder)", true}},
	 "Investigate the profile at {path} with PerfLens, evidence first.\n"
	 "1. analyze_profile(path=\"{path}\"). Note the events, sample counts and every warning; "
	 "if several events are present, work on one at a time and never add them up.\n"
	 "2. list_hotspots(analysis_id, sort=\"self\") and then sort=\"inclusive\". Self is time in the "
	 "function itself; inclusive adds what it calls.\n"
	 "3. For the top few, get_hotspot(analysis_id, hotspot_id) and get_call_paths(analysis_id, symbol=...) "
	 "to see who calls them and through which paths.\n"
	 "4. Report observations (numbers with their event and unit), candidate explanations, and the "
	 "evidence that is missing for each. A hotspot is an observation, not a root cause; unknown "
	 "frames stay unknown. Propose an A/B measurement that would confirm or refute each candidate."},
	{"explain_hotspot", "Explain one hotspot",
	 "Look at one function's callers, callees and paths before proposing why it is hot.",
	 {{"analysis_id", "Id returned by analyze_profile", true},
	  {"symbol", "Symbol as list_hotspots shows it", true}},
	 "In analysis {analysis_id}, examine {symbol}.\n"
	 "1. list_hotspots(analysis_id=\"{analysis_id}\") to find its hotspot_id, then "
	 "get_hotspot(analysis_id=\"{analysis_id}\", hotspot_id=...).\n"
	 "2. get_call_paths(analysis_id=\"{analysis_id}\", symbol=\"{symbol}\").\n"
	 "3. Say what the profile shows (self vs inclusive share, main callers and callees) and "
	 "what it cannot show (why the code is slow, wall-clock or off-CPU time when the event is "
	 "on-CPU). List the next evidence to gather."},
	{"compare_profiles", "Compare two profiles",
	 "Compare a baseline and a candidate profile of the same workload and event.",
	 {{"baseline_path", "Profile before the change", true},
	  {"candidate_path", "Profile after the change", true}},
	 "Compare {baseline_path} (baseline) with {candidate_path} (candidate).\n"
	 "1. analyze_profile on each; check that both have the same event and unit and enough "
	 "samples (warn under 100) before comparing anything.\n"
	 "2. list_hotspots on each with the same event and sort; compare self and inclusive shares of "
	 "the same symbols.\n"
	 "3. A share that moved is a candidate, not a proven effect: confirm with repeated benchmark "
	 "runs of both builds before concluding."},
};

json_t *catalog_prompts(void)
{
	json_t *list = json_array();

	for (size_t i = 0; i < PL_ARRAY_LEN(prompts); i++) {
		json_t *args = json_array();
		for (size_t a = 0; a < PL_ARRAY_LEN(prompts[i].args) && prompts[i].args[a].name; a++)
			json_array_append_new(args, json_pack("{s:s,s:s,s:b}", "name", prompts[i].args[a].name,
				"description", prompts[i].args[a].description, "required", prompts[i].args[a].required));
		json_array_append_new(list, json_pack("{s:s,s:s,s:s,s:o}", "name", prompts[i].name,
			"title", prompts[i].title, "description", prompts[i].description, "arguments", args));
	}
	return json_pack("{s:o}", "prompts", list);
}

/* Replace each {name} with its argument's value. */
static char *fill(const struct prompt *p, json_t *args)
{
	struct pl_buf b = {0};

	for (const char *s = p->text; *s;) {
		const char *close = *s == '{' ? strchr(s, '}') : NULL;
		bool done = false;
		for (size_t a = 0; close && a < PL_ARRAY_LEN(p->args) && p->args[a].name; a++) {
			size_t n = strlen(p->args[a].name);
			if ((size_t)(close - s - 1) == n && strncmp(s + 1, p->args[a].name, n) == 0) {
				pl_buf_adds(&b, json_string_value(json_object_get(args, p->args[a].name)));
				s = close + 1;
				done = true;
				break;
			}
		}
		if (!done)
			pl_buf_addc(&b, *s++);
	}
	return b.data;
}

int catalog_prompt_get(const char *name, json_t *args, json_t **result,
		       json_t **err_data)
{
	for (size_t i = 0; name && i < PL_ARRAY_LEN(prompts); i++) {
		const struct prompt *p = &prompts[i];
		char *text;
		if (strcmp(p->name, name) != 0)
			continue;
		for (size_t a = 0; a < PL_ARRAY_LEN(p->args) && p->args[a].name; a++)
			if (p->args[a].required && !json_is_string(json_object_get(args, p->args[a].name))) {
				*err_data = json_pack("{s:s,s:s}", "missing", p->args[a].name,
						      "hint", "pass every required argument as a string");
				return MCP_RPC_INVALID_PARAMS;
			}
		text = fill(p, args);
		*result = json_pack("{s:s,s:[{s:s,s:{s:s,s:s}}]}", "description", p->description,
				    "messages", "role", "user", "content", "type", "text", "text", text);
		free(text);
		return 0;
	}
	*err_data = json_pack("{s:s,s:s}", "prompt", name ? name : "",
			      "hint", "call prompts/list for the valid names");
	return MCP_RPC_INVALID_PARAMS;
}

/* The events of the analysis named in the completion context. */
static void complete_events(const struct tool_ctx *ctx, json_t *context, const char *prefix,
			    json_t *values, size_t *total)
{
	const char *id = json_string_value(json_object_get(json_object_get(context, "arguments"),
							   "analysis_id"));
	struct pl_error err;
	json_t *summary, *e;
	size_t i;

	if (!id || !ctx->artifact_root || pl_artifact_load_summary(ctx->artifact_root, id, &summary, &err))
		return;
	json_array_foreach(json_object_get(summary, "events"), i, e) {
		const char *name = json_string_value(json_object_get(e, "name"));
		if (prefix && strncmp(name, prefix, strlen(prefix)) != 0)
			continue;
		if ((*total)++ < 100)
			json_array_append_new(values, json_string(name));
	}
	json_decref(summary);
}

/* Completion of analysis_id arguments from the analyses that exist, and
 * of event arguments from the analysis named beside them. */
json_t *catalog_complete(const struct tool_ctx *ctx, json_t *ref, json_t *argument,
			 json_t *context)
{
	const char *arg = json_string_value(json_object_get(argument, "name"));
	const char *prefix = json_string_value(json_object_get(argument, "value"));
	json_t *values = json_array(), *a;
	size_t i, total = 0;

	(void)ref;
	if (arg && strcmp(arg, "event") == 0)
		complete_events(ctx, context, prefix, values, &total);
	if (arg && strcmp(arg, "analysis_id") == 0 && ctx->artifact_root) {
		json_t *all = pl_artifact_list(ctx->artifact_root);
		json_array_foreach(all, i, a) {
			const char *path = json_string_value(json_object_get(a, "path"));
			char id[32];
			if (strcmp(json_string_value(json_object_get(a, "kind")), "analysis") != 0)
				continue;
			snprintf(id, sizeof(id), "%.23s", path + 9);
			if (prefix && strncmp(id, prefix, strlen(prefix)) != 0)
				continue;
			if (total++ < 100)
				json_array_append_new(values, json_string(id));
		}
		json_decref(all);
	}
	return json_pack("{s:{s:o,s:I,s:b}}", "completion", "values", values,
			 "total", (json_int_t)total, "hasMore", total > 100);
}
