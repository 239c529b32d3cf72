/* tables.c - human tables for the CLI's --format table.
 *
 * Each renderer reads a tool's structured result (never the engine), so
 * what a person sees is exactly what an agent gets, laid out in columns.
 */
#include "tables.h"

#include <stdlib.h>
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

/* ------------------------------------------------------------ helpers */

static long long int_of(json_t *o, const char *key)
{
	return (long long)json_integer_value(json_object_get(o, key));
}

static const char *str_of(json_t *o, const char *key, const char *fallback)
{
	return str_or(json_object_get(o, key), fallback);
}

/* The last path component, for module columns. */
static const char *base_name(const char *path)
{
	const char *slash = path ? strrchr(path, '/') : NULL;

	return slash ? slash + 1 : path ? path : "";
}

static void print_strings(const char *label, json_t *list, FILE *out)
{
	json_t *w;
	size_t i;

	json_array_foreach(list, i, w)
		if (json_is_string(w))
			fprintf(out, "%s: %s\n", label, json_string_value(w));
}

/* next_steps as "next: TOOL  (why)", the call itself in JSON on one line,
 * then what it needs added and what a person must do first (registry.h:
 * tool_steps_check), one line each. */
static void print_next_steps(json_t *r, FILE *out)
{
	json_t *n, *x;
	size_t i, j;

	json_array_foreach(json_object_get(r, "next_steps"), i, n) {
		char *a = json_dumps(json_object_get(n, "arguments"), JSON_COMPACT | JSON_SORT_KEYS);
		fprintf(out, "next: %s %s\n      %s\n", str_of(n, "tool", "?"), a ? a : "{}", str_of(n, "why", ""));
		free(a);
		json_array_foreach(json_object_get(n, "needs"), j, x)
			fprintf(out, "      needs: %s\n", json_string_value(x) ?: "?");
		json_array_foreach(json_object_get(n, "operator"), j, x)
			fprintf(out, "      first: %s\n", json_string_value(x) ?: "?");
	}
}

static void print_page(json_t *page, FILE *out)
{
	if (!json_is_object(page))
		return;
	fprintf(out, "page: %lld from %lld of %lld", int_of(page, "returned"), int_of(page, "offset"),
		int_of(page, "total_items"));
	if (json_is_string(json_object_get(page, "next_cursor")))
		fprintf(out, "; more: --cursor %s", str_of(page, "next_cursor", ""));
	fputc('\n', out);
}

/* ------------------------------------------------------ profile tools */

static void table_hotspot(json_t *r, FILE *out)
{
	static const char *const sides[] = {"callers", "callees"};

	fprintf(out, "%s %s (%s), event %s\n  self %.2f%% (%lld samples), inclusive %.2f%% (%lld samples)\n",
		str_of(r, "hotspot_id", "?"), str_of(r, "symbol", "?"), str_of(r, "dso", "unknown dso"),
		str_of(r, "event", "?"), pct(json_object_get(r, "self")),
		int_of(json_object_get(r, "self"), "samples"), pct(json_object_get(r, "inclusive")),
		int_of(json_object_get(r, "inclusive"), "samples"));
	for (size_t s = 0; s < 2; s++) {
		json_t *x;
		size_t i;
		char total[32];
		snprintf(total, sizeof(total), "%s_total", sides[s]);
		fprintf(out, "%s (%lld):\n  %9s %10s  %-10s %s\n", sides[s], int_of(r, total), "%hotspot", "samples",
			"id", "symbol");
		json_array_foreach(json_object_get(r, sides[s]), i, x)
			fprintf(out, "  %9.2f %10lld  %-10s %s (%s)%s\n",
				json_number_value(json_object_get(x, "percent_of_hotspot")), int_of(x, "samples"),
				str_of(x, "hotspot_id", "-"), str_of(x, "symbol", "?"),
				base_name(str_of(x, "dso", "unknown dso")),
				int_of(x, "caller_may_be_missing") ? "  [a caller may be missing]" : "");
	}
	print_next_steps(r, out);
}

static void table_threads(json_t *r, FILE *out)
{
	json_t *t, *f;
	size_t i, j;

	fprintf(out, "event %s (%s)\n%5s %8s %8s %10s  %-20s %s\n", str_of(r, "event", "?"), str_of(r, "unit", "?"),
		"rank", "pid", "tid", "samples", "comm", "share, top functions");
	json_array_foreach(json_object_get(r, "threads"), i, t) {
		fprintf(out, "%5lld %8lld %8lld %10lld  %-20s %.2f%%%s", int_of(t, "rank"), int_of(t, "pid"),
			int_of(t, "tid"), int_of(t, "samples"), str_of(t, "comm", "?"),
			json_number_value(json_object_get(t, "percent")),
			json_is_true(json_object_get(t, "probably_blocked")) ? " (probably blocked)" : "");
		json_array_foreach(json_object_get(t, "top_functions"), j, f)
			fprintf(out, "%s %s %.1f%%", j ? "," : ":", str_of(f, "symbol", "?"),
				json_number_value(json_object_get(f, "inclusive_percent")));
		fputc('\n', out);
	}
	print_page(json_object_get(r, "page"), out);
}

/* A timeline: one line a bucket, its start, samples and a bar of up to
 * 40 '#' scaled to the busiest bucket (with a function, its share). */
static void table_timeline(json_t *r, FILE *out)
{
	json_t *samples = json_object_get(r, "samples"), *fn = json_object_get(r, "function");
	json_t *shares = json_object_get(fn, "percent_per_bucket");
	double w = json_number_value(json_object_get(r, "bucket_seconds"));
	double start = json_number_value(json_object_get(r, "start_seconds"));
	long long max = 1;
	size_t i;
	json_t *v;

	json_array_foreach(samples, i, v)
		if (json_integer_value(v) > max)
			max = json_integer_value(v);
	fprintf(out, "event %s (%s), from %s, %g s a bucket%s%s\n%10s %8s\n", str_of(r, "event", "?"),
		str_of(r, "unit", "?"), str_of(r, "first_time", "?"), w, fn ? ", share of " : "",
		fn ? str_of(fn, "symbol", "?") : "", "seconds", "samples");
	json_array_foreach(samples, i, v) {
		int bar = (int)(json_integer_value(v) * 40 / max);
		fprintf(out, "%10.3f %8lld %-40.*s", start + (double)i * w, (long long)json_integer_value(v), bar,
			"########################################");
		if (shares)
			fprintf(out, " %.1f%%", json_number_value(json_array_get(shares, i)));
		fputc('\n', out);
	}
}

static void table_source(json_t *r, FILE *out)
{
	json_t *f, *l;
	size_t i, j;

	if (json_is_string(json_object_get(r, "hotspot_id")))
		fprintf(out, "%s %s, ", str_of(r, "hotspot_id", ""), str_of(r, "symbol", "?"));
	fprintf(out, "event %s: %lld samples with lines, %lld without\n", str_of(r, "event", "?"),
		int_of(r, "samples_with_lines"), int_of(r, "samples_without_lines"));
	json_array_foreach(json_object_get(r, "files"), i, f) {
		fprintf(out, "%s (%lld self, %lld total)%s%s\n", str_of(f, "recorded_path", "?"),
			int_of(f, "self_samples"), int_of(f, "total_samples"),
			json_is_string(json_object_get(f, "not_read_reason")) ? ": " : "",
			str_of(f, "not_read_reason", ""));
		if (json_array_size(json_object_get(f, "lines"))) {
			fprintf(out, "  %6s %6s %6s  %s\n", "line", "self", "total", "source");
			json_array_foreach(json_object_get(f, "lines"), j, l)
				fprintf(out, "  %6lld %6lld %6lld  %s\n", int_of(l, "line"), int_of(l, "self_samples"),
					int_of(l, "total_samples"), str_of(l, "text", ""));
		} else {
			fprintf(out, "  hot lines:");
			json_array_foreach(json_object_get(f, "hot_lines"), j, l)
				fprintf(out, " %lld (%lld)", int_of(l, "line"), int_of(l, "total_samples"));
			fputc('\n', out);
		}
	}
	if (json_is_string(json_object_get(r, "source_text_fix")))
		fprintf(out, "fix: %s\n", str_of(r, "source_text_fix", ""));
	print_next_steps(r, out);
}

static void table_export(json_t *r, FILE *out)
{
	fprintf(out, "%s of event %s: %s (%lld bytes, %lld stacks)\n  uri: %s\n", str_of(r, "format", "?"),
		str_of(r, "event", "?"), str_of(r, "path", "?"), int_of(r, "bytes"), int_of(r, "stacks"),
		str_of(r, "uri", "?"));
}

/* ---------------------------------------------------------- artifacts */

static void table_artifacts(json_t *r, FILE *out)
{
	json_t *a;
	size_t i;

	fprintf(out, "%-10s %10s  %s\n", "kind", "bytes", "path");
	json_array_foreach(json_object_get(r, "artifacts"), i, a)
		fprintf(out, "%-10s %10lld  %s\n", str_of(a, "kind", "?"), int_of(a, "bytes"), str_of(a, "path", "?"));
	print_page(json_object_get(r, "page"), out);
}

/* The page's text as it is: that is what a person wants to read. */
static void table_read_artifact(json_t *r, FILE *out)
{
	fprintf(out, "%s, bytes %lld-%lld of %lld:\n", str_of(r, "artifact", "?"), int_of(r, "offset"),
		int_of(r, "offset") + int_of(r, "returned_bytes"), int_of(r, "total_bytes"));
	fputs(str_of(r, "text", ""), out);
	if (json_is_integer(json_object_get(r, "next_offset")))
		fprintf(out, "\n[%lld of %lld bytes; more: --offset %lld]\n",
			int_of(r, "offset") + int_of(r, "returned_bytes"), int_of(r, "total_bytes"),
			int_of(r, "next_offset"));
}

/* ----------------------------------------------------------- evidence */

static void table_classify(json_t *r, FILE *out)
{
	json_t *c, *k, *texts = json_object_get(r, "texts");
	size_t i, j;

	fprintf(out, "%s\n", str_of(r, "note", ""));
	fprintf(out, "%-40s %-12s %-20s %s\n", "candidate", "status", "figure", "missing evidence");
	json_array_foreach(json_object_get(r, "candidates"), i, c) {
		json_t *fig = json_object_get(c, "figure");
		char figure[64];
		snprintf(figure, sizeof(figure), "%s %.4g %s %.4g", str_of(fig, "name", "?"),
			 json_number_value(json_object_get(fig, "value")), str_of(fig, "op", "?"),
			 json_number_value(json_object_get(fig, "threshold")));
		fprintf(out, "%-40s %-12s %-20s", str_of(c, "candidate_id", "?"), str_of(c, "status", "?"), figure);
		json_array_foreach(json_object_get(c, "missing_evidence"), j, k)
			fprintf(out, "%s%s", j ? "; " : " ",
				str_or(json_object_get(texts, json_string_value(k)), json_string_value(k)));
		fputc('\n', out);
	}
	print_page(json_object_get(r, "page"), out);
	json_array_foreach(json_object_get(r, "forbidden_conclusions"), i, k)
		fprintf(out, "do not conclude %s\n", json_string_value(k));
}

static void table_report(json_t *r, FILE *out)
{
	json_t *sum = json_object_get(r, "summary");

	fprintf(out, "report: %s (%lld bytes)\n  uri: %s\n  events %lld, candidates %zu, data-quality flags %zu, "
		"missing evidence %lld\n", str_of(r, "path", "?"), int_of(r, "bytes"), str_of(r, "uri", "?"),
		int_of(sum, "events"), json_array_size(json_object_get(sum, "candidates")),
		json_array_size(json_object_get(sum, "data_quality_flags")), int_of(sum, "missing_evidence"));
	print_next_steps(r, out);
}

static void table_compare_profiles(json_t *r, FILE *out)
{
	json_t *f, *b = json_object_get(r, "baseline"), *c = json_object_get(r, "candidate");
	size_t i;

	fprintf(out, "event %s: baseline %s (%lld samples), candidate %s (%lld samples)\n",
		str_of(json_object_get(r, "comparability"), "event", "?"), str_of(b, "analysis_id", "?"),
		int_of(b, "samples"), str_of(c, "analysis_id", "?"), int_of(c, "samples"));
	print_strings("warning", json_object_get(json_object_get(r, "comparability"), "warnings"), out);
	fprintf(out, "%5s %-9s %8s %8s %8s  %s\n", "rank", "status", "self.b%", "self.c%", "delta", "symbol");
	json_array_foreach(json_object_get(r, "functions"), i, f)
		fprintf(out, "%5lld %-9s %8.2f %8.2f %+8.2f  %s (%s)\n", int_of(f, "rank"), str_of(f, "status", "?"),
			pct(json_object_get(json_object_get(f, "baseline"), "self")),
			pct(json_object_get(json_object_get(f, "candidate"), "self")),
			json_number_value(json_object_get(f, "self_delta_points")), str_of(f, "symbol", "?"),
			base_name(str_of(f, "dso", "unknown dso")));
	print_page(json_object_get(r, "page"), out);
	print_next_steps(r, out);
}

static void table_normalize(json_t *r, FILE *out)
{
	json_t *b;
	size_t i;

	fprintf(out, "benchmark %s (%s, from %s)\n%-40s %8s %12s %12s %12s  %s\n", str_of(r, "benchmark_id", "?"),
		str_of(r, "format", "?"), str_of(json_object_get(r, "source"), "path", "values"), "name", "repeats",
		"median", "min", "max", "unit, direction");
	json_array_foreach(json_object_get(r, "benchmarks"), i, b)
		fprintf(out, "%-40s %8lld %12.6g %12.6g %12.6g  %s, %s\n", str_of(b, "name", "?"), int_of(b, "repeats"),
			json_number_value(json_object_get(b, "median")), json_number_value(json_object_get(b, "min")),
			json_number_value(json_object_get(b, "max")), str_of(b, "unit", "?"), str_of(b, "direction", "?"));
	print_page(json_object_get(r, "page"), out);
	print_strings("warning", json_object_get(r, "warnings"), out);
	print_next_steps(r, out);
}

static void table_compare_benchmarks(json_t *r, FILE *out)
{
	json_t *x;
	size_t i;

	fprintf(out, "baseline %s, candidate %s, paired %s; environments %s\n", str_of(r, "baseline_id", "?"),
		str_of(r, "candidate_id", "?"), str_of(r, "pairing", "?"),
		json_is_true(json_object_get(json_object_get(r, "comparability"), "comparable")) ? "comparable"
												   : "NOT comparable");
	fprintf(out, "%-22s %9s %12s %12s %9s  %s\n", "status", "change%", "median.b", "median.c", "p", "benchmark");
	json_array_foreach(json_object_get(r, "results"), i, x) {
		json_t *mw = json_object_get(x, "mann_whitney");
		const char *name = str_of(x, "name", "?"), *cname = str_of(x, "candidate_name", name);
		fprintf(out, "%-22s %+9.2f %12.6g %12.6g %9.3g  %s", str_of(x, "status", "?"),
			json_number_value(json_object_get(x, "change_percent")),
			json_number_value(json_object_get(json_object_get(x, "baseline"), "median")),
			json_number_value(json_object_get(json_object_get(x, "candidate"), "median")),
			json_is_object(mw) ? json_number_value(json_object_get(mw, "p_value")) : 1.0, name);
		if (strcmp(name, cname) != 0)
			fprintf(out, " -> %s", cname);
		fputc('\n', out);
	}
	print_page(json_object_get(r, "page"), out);
	print_strings("warning", json_object_get(r, "warnings"), out);
}

/* ------------------------------------------------------------ symbols */

static void table_elf(json_t *r, FILE *out)
{
	json_t *sym = json_object_get(r, "symbols"), *dbg = json_object_get(r, "debug");

	fprintf(out, "%s\n  %s %s %s, build-id %s\n  symbols: %lld symtab, %lld dynsym%s\n"
		"  debug info: %s, line table: %s\n  symbolization: %s\n", str_of(r, "path", "?"),
		str_of(r, "class", "?"), str_of(r, "machine", "?"), str_of(r, "type", "?"), str_of(r, "build_id", "none"),
		int_of(sym, "symtab"), int_of(sym, "dynsym"), json_is_true(json_object_get(r, "stripped")) ? " (stripped)" : "",
		json_is_true(json_object_get(dbg, "debug_info")) ? "yes" : "no",
		json_is_true(json_object_get(dbg, "debug_line")) ? "yes" : "no", str_of(r, "symbolization", "?"));
	print_strings("advice", json_object_get(r, "advice"), out);
	print_next_steps(r, out);
}

static void table_symbolize(json_t *r, FILE *out)
{
	json_t *m = json_object_get(r, "module"), *a, *in;
	size_t i, j;

	fprintf(out, "%s (build-id %s, debug from %s)\n%-12s %-40s %s\n", str_of(m, "path", "?"),
		str_of(m, "build_id", "none"), str_of(m, "debug_source", "?"), "offset", "function", "file:line");
	json_array_foreach(json_object_get(r, "answers"), i, a) {
		if (!json_is_true(json_object_get(a, "resolved"))) {
			fprintf(out, "%-12s ?? %s\n", str_of(a, "offset", "?"), str_of(a, "reason", ""));
			continue;
		}
		fprintf(out, "%-12s %-40s %s:%lld\n", str_of(a, "offset", "?"), str_of(a, "function", "?"),
			str_of(a, "file", "??"), int_of(a, "line"));
		json_array_foreach(json_object_get(a, "inlines"), j, in)
			fprintf(out, "%-12s  inlined into %s at %s:%lld\n", "", str_of(in, "function", "?"),
				str_of(in, "call_file", "??"), int_of(in, "call_line"));
	}
	print_page(json_object_get(r, "page"), out);
}

/* --------------------------------------------------------- collection */

static void table_capabilities(json_t *r, FILE *out)
{
	json_t *e;
	size_t i;

	fprintf(out, "perf %s (%s), perf_event_paranoid %lld, %lld CPUs online\n", str_of(r, "perf_version", "?"),
		str_of(r, "perf_path", "?"), int_of(r, "perf_event_paranoid"),
		int_of(json_object_get(r, "cpus"), "online"));
	fprintf(out, "%-28s %-12s %-12s %s\n", "event", "count", "record", "detail");
	json_array_foreach(json_object_get(r, "events"), i, e)
		fprintf(out, "%-28s %-12s %-12s %s\n", str_of(e, "event", "?"), str_of(e, "count", "?"),
			str_of(e, "record", "?"), str_of(e, "detail", ""));
	fprintf(out, "%-28s %-12s %s\n", "call graph", "status", "detail");
	json_array_foreach(json_object_get(r, "call_graphs"), i, e)
		fprintf(out, "%-28s %-12s %s\n", str_of(e, "mode", "?"), str_of(e, "status", "?"), str_of(e, "detail", ""));
	print_strings("advice", json_object_get(r, "advice"), out);
}

static void table_collect(json_t *r, FILE *out)
{
	json_t *f, *m = json_object_get(r, "metadata");
	size_t i;

	fprintf(out, "collection %s (%s, %.1f s, exit %lld) in %s\n", str_of(r, "collection_id", "?"),
		str_of(m, "mode", "?"), json_number_value(json_object_get(m, "duration_seconds")),
		int_of(m, "exit_status"), str_of(r, "folder", "?"));
	json_array_foreach(json_object_get(r, "files"), i, f)
		fprintf(out, "  %12lld  %s\n", int_of(f, "bytes"), str_of(f, "name", "?"));
	print_strings("warning", json_object_get(r, "warnings"), out);
	print_next_steps(r, out);
}

static const struct {
	const char *tool;
	cli_table_fn render;
} tables[] = {
	{"analyze_profile", table_analyze},
	{"list_hotspots", table_hotspots},
	{"get_call_paths", table_call_paths},
	{"get_perf_stat", table_perf_stat},
	{"get_hotspot", table_hotspot},
	{"list_threads", table_threads},
	{"get_timeline", table_timeline},
	{"source_context", table_source},
	{"export_profile", table_export},
	{"list_artifacts", table_artifacts},
	{"read_artifact_page", table_read_artifact},
	{"classify_hotspots", table_classify},
	{"build_report", table_report},
	{"compare_profiles", table_compare_profiles},
	{"normalize_benchmark", table_normalize},
	{"compare_benchmarks", table_compare_benchmarks},
	{"inspect_elf", table_elf},
	{"symbolize", table_symbolize},
	{"inspect_collection_capabilities", table_capabilities},
	{"collect_profile", table_collect},
};

cli_table_fn cli_table_for(const char *tool)
{
	for (size_t i = 0; i < sizeof(tables) / sizeof(tables[0]); i++)
		if (strcmp(tables[i].tool, tool) == 0)
			return tables[i].render;
	return NULL;
}
