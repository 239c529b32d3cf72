/* tables.c - human tables for the CLI's --format table.
 *
 * Each renderer reads a tool's structured result (never the engine), so
 * what a person sees is exactly what an agent gets, laid out in columns.
 */
#include "tables.h"

#include <string.h>

static const char *str_or(json_t *v, const char *fallback)
{
	return json_is_string(v) ? json_string_value(v) : fallback;
}

static double pct(json_t *amount)
{
	return json_number_value(json_object_get(amount, "percent"));
}

static void table_hotspots(json_t *r, FILE *out)
{
	json_t *h;
	size_t i;

	fprintf(out, "event %s (%s), sorted by %s, %lld of %lld hotspots\n",
		str_or(json_object_get(r, "event"), "?"), str_or(json_object_get(r, "unit"), "?"),
		str_or(json_object_get(r, "sort"), "?"),
		(long long)json_integer_value(json_object_get(json_object_get(r, "page"), "returned")),
		(long long)json_integer_value(json_object_get(json_object_get(r, "page"), "total_items")));
	fprintf(out, "%5s %8s %8s %10s  %-40s %s\n", "rank", "self%", "incl%", "samples", "symbol", "dso");
	json_array_foreach(json_object_get(r, "hotspots"), i, h)
		fprintf(out, "%5lld %8.2f %8.2f %10lld  %-40s %s\n",
			(long long)json_integer_value(json_object_get(h, "rank")),
			pct(json_object_get(h, "self")), pct(json_object_get(h, "inclusive")),
			(long long)json_integer_value(json_object_get(json_object_get(h, "self"), "samples")),
			str_or(json_object_get(h, "symbol"), "?"), str_or(json_object_get(h, "dso"), "[unknown dso]"));
	if (json_is_string(json_object_get(json_object_get(r, "page"), "next_cursor")))
		fprintf(out, "more: --cursor %s\n",
			json_string_value(json_object_get(json_object_get(r, "page"), "next_cursor")));
}

static void table_call_paths(json_t *r, FILE *out)
{
	json_t *path, *f;
	size_t i, j;

	json_array_foreach(json_object_get(r, "paths"), i, path) {
		fprintf(out, "#%lld %.2f%% (%lld samples):",
			(long long)json_integer_value(json_object_get(path, "rank")),
			json_number_value(json_object_get(path, "percent")),
			(long long)json_integer_value(json_object_get(path, "samples")));
		json_array_foreach(json_object_get(path, "frames"), j, f) {
			const char *sym = str_or(json_object_get(f, "symbol"), "?");
			const char *dso = str_or(json_object_get(f, "dso"), NULL);
			fprintf(out, "%s%s", j ? " > " : " ", sym);
			/* Unknown symbols differ only by where they live. */
			if (strcmp(sym, "[unknown]") == 0 && dso)
				fprintf(out, "(%s)", strrchr(dso, '/') ? strrchr(dso, '/') + 1 : dso);
		}
		if (json_integer_value(json_object_get(path, "elided_frames")))
			fprintf(out, " (%lld frames elided)",
				(long long)json_integer_value(json_object_get(path, "elided_frames")));
		fputc('\n', out);
	}
}

static void table_perf_stat(json_t *r, FILE *out)
{
	json_t *b, *c;
	size_t i, j;

	json_array_foreach(json_object_get(r, "blocks"), i, b) {
		fprintf(out, "%s %s\n", str_or(json_object_get(b, "source"), ""),
			str_or(json_object_get(b, "target"), ""));
		json_array_foreach(json_object_get(b, "counters"), j, c) {
			json_t *v = json_object_get(c, "value");
			if (json_is_integer(v))
				fprintf(out, "  %20lld %-6s %s\n", (long long)json_integer_value(v),
					str_or(json_object_get(c, "unit"), ""), str_or(json_object_get(c, "event"), "?"));
			else if (json_is_number(v))
				fprintf(out, "  %20.10g %-6s %s\n", json_number_value(v),
					str_or(json_object_get(c, "unit"), ""), str_or(json_object_get(c, "event"), "?"));
			else
				fprintf(out, "  %20s %-6s %s\n", str_or(json_object_get(c, "status"), "?"), "",
					str_or(json_object_get(c, "event"), "?"));
		}
		if (json_is_number(json_object_get(b, "ipc")))
			fprintf(out, "  IPC %.3f\n", json_number_value(json_object_get(b, "ipc")));
	}
}

static void table_analyze(json_t *r, FILE *out)
{
	json_t *e, *h, *w;
	size_t i, j;

	fprintf(out, "analysis %s\n  summary: %s\n", str_or(json_object_get(r, "analysis_id"), "?"),
		str_or(json_object_get(json_object_get(r, "artifact"), "summary_path"), "?"));
	json_array_foreach(json_object_get(r, "events"), i, e) {
		fprintf(out, "event %s: %lld samples, %lld %s\n", str_or(json_object_get(e, "name"), "?"),
			(long long)json_integer_value(json_object_get(e, "samples")),
			(long long)json_integer_value(json_object_get(e, "period")),
			str_or(json_object_get(e, "unit"), ""));
		json_array_foreach(json_object_get(e, "top_hotspots"), j, h)
			fprintf(out, "  %7.2f%% self %7.2f%% incl  %s (%s)\n",
				json_number_value(json_object_get(h, "self_percent")),
				json_number_value(json_object_get(h, "inclusive_percent")),
				str_or(json_object_get(h, "symbol"), "?"), str_or(json_object_get(h, "dso"), "unknown dso"));
	}
	json_array_foreach(json_object_get(r, "warnings"), i, w)
		fprintf(out, "warning: %s\n", json_string_value(w));
}

static const struct {
	const char *tool;
	cli_table_fn render;
} tables[] = {
	{"analyze_profile", table_analyze},
	{"list_hotspots", table_hotspots},
	{"get_call_paths", table_call_paths},
	{"get_perf_stat", table_perf_stat},
};

cli_table_fn cli_table_for(const char *tool)
{
	for (size_t i = 0; i < sizeof(tables) / sizeof(tables[0]); i++)
		if (strcmp(tables[i].tool, tool) == 0)
			return tables[i].render;
	return NULL;
}
