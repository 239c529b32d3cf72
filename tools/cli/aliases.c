/* aliases.c - Python-toolkit command names as aliases (see aliases.h).
 *
 * A table maps each toolkit command to one of ours, with preset flags
 * (analyze-folded is analyze --format folded) and the toolkit's flags
 * that differ only in name (--module-offset is --offsets).  Flags that
 * named an analysis or a benchmark by the path of its artifact
 * (--analysis build/analysis.json) take our ids: a path whose file name
 * is an id (.../analyses/an-....json) gives that id; anything else is an
 * error saying what to pass.  Flags with no equivalent (--top-n,
 * --data-output) are refused, naming what to do instead, never ignored.
 * The rewritten argv goes through the ordinary parser, so everything
 * else (other flags, --help, --format table) works as for our names.
 */
#include "aliases.h"
#include "base/util.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum flag_kind {
	RENAME,       /* --from V  ->  --to V */
	TO_ID,        /* --from PATH_OR_ID  ->  --to ID (prefix in `to_prefix`) */
	BARE_DROP,    /* --from without a value: nothing here */
	AUTHORIZE,    /* --authorization T  ->  --authorization T --authorize-target T */
	REFUSED,      /* no equivalent: `to` is the message */
};

struct alias_flag {
	const char *from;
	enum flag_kind kind;
	const char *to;
	const char *id_prefix;   /* TO_ID: "an-" or "bm-" */
};

#define MAX_FLAGS 12

struct alias {
	const char *name;                 /* the toolkit's command */
	const char *command;              /* ours */
	const char *preset[4];            /* flags put first */
	const char *says;                 /* for --help */
	struct alias_flag flags[MAX_FLAGS];
};

/* The toolkit's analysis limits, by our names. */
#define LIMIT_FLAGS \
	{"--max-line-chars", RENAME, "--max-line", NULL}, \
	{"--max-stack-depth", RENAME, "--max-depth", NULL}, \
	{"--max-unique-frames", RENAME, "--max-frames", NULL}, \
	{"--max-unique-call-paths", RENAME, "--max-stacks", NULL}, \
	{"--top-n", REFUSED, "'--top-n' has no equivalent: every hotspot is kept; list them with hotspots --limit N", NULL}, \
	{"--call-path-limit", REFUSED, "'--call-path-limit' has no equivalent: every call path is kept; list them with callpaths --limit N", NULL}, \
	{"--max-warnings", REFUSED, "'--max-warnings' has no equivalent: warnings are few and all kept", NULL}, \
	{"--max-output-bytes", REFUSED, "'--max-output-bytes' has no equivalent: results are paged (--limit, --cursor)", NULL}

static const struct alias aliases[] = {
	{"analyze-folded", "analyze", {"--format", "folded"}, "analyze --format folded",
	 {LIMIT_FLAGS}},
	{"analyze-perf-script", "analyze", {"--format", "perf_script"}, "analyze --format perf_script",
	 {LIMIT_FLAGS}},
	{"analyze-perf-data", "analyze", {"--format", "perf_data"}, "analyze --format perf_data",
	 {LIMIT_FLAGS, {"--timeout-seconds", RENAME, "--perf-timeout", NULL}}},
	{"inspect-elf", "elf", {NULL}, "elf (--input is --path)", {{NULL}}},
	{"resolve-source", "symbolize", {NULL}, "symbolize (--module-offset is --offsets)",
	 {{"--module-offset", RENAME, "--offsets", NULL},
	  {"--runtime-address", REFUSED, "'--runtime-address' has no equivalent: pass the module offset (--module-offset); a runtime address is never taken for one", NULL},
	  {"--addr2line-path", REFUSED, "'--addr2line-path' has no equivalent: symbolize reads DWARF itself (libdw)", NULL}}},
	{"classify", "classify", {NULL}, "classify (--analysis FILE names the analysis)",
	 {{"--analysis", TO_ID, "--analysis-id", "an-"}}},
	{"report", "report", {NULL}, "report (--analysis FILE names the analysis)",
	 {{"--analysis", TO_ID, "--analysis-id", "an-"}}},
	{"compare-profiles", "compare", {NULL}, "compare (--baseline/--candidate FILE name the analyses)",
	 {{"--baseline", TO_ID, "--baseline-id", "an-"}, {"--candidate", TO_ID, "--candidate-id", "an-"},
	  {"--minimum-delta-percent", RENAME, "--min-delta-percent", NULL},
	  {"--markdown-output", REFUSED, "'--markdown-output' has no equivalent for compare: build_report (report) writes the Markdown", NULL}}},
	{"normalize-benchmark", "normalize-bench", {NULL}, "normalize-bench (--input is --path, --benchmark-name is --name)",
	 {{"--benchmark-name", RENAME, "--name", NULL}}},
	{"compare-benchmarks", "compare-bench", {NULL}, "compare-bench (--baseline/--candidate FILE name normalized benchmarks)",
	 {{"--baseline", TO_ID, "--baseline-id", "bm-"}, {"--candidate", TO_ID, "--candidate-id", "bm-"},
	  {"--benchmark-name", RENAME, "--name", NULL},
	  {"--minimum-practical-impact-percent", RENAME, "--practical-threshold-percent", NULL},
	  {"--format", REFUSED, "'--format' of compare-benchmarks has no equivalent: normalize each file first (normalize-benchmark --input FILE), then pass the benchmark ids", NULL},
	  {"--markdown-output", REFUSED, "'--markdown-output' has no equivalent: the verdict is the JSON (or --format table)", NULL}}},
	{"collect-profile", "collect", {NULL}, "collect (--target-arg is --arguments, --event is --events)",
	 {{"--target-arg", RENAME, "--arguments", NULL}, {"--event", RENAME, "--events", NULL},
	  {"--authorize-target", BARE_DROP, NULL, NULL}, {"--authorize-pid-attach", BARE_DROP, NULL, NULL},
	  {"--authorization", AUTHORIZE, NULL, NULL},
	  {"--data-output", REFUSED, "'--data-output' has no equivalent: collections go under --artifact-root (collections/ID/)", NULL},
	  {"--metadata-output", REFUSED, "'--metadata-output' has no equivalent: the metadata is collections/ID/metadata.json under --artifact-root", NULL},
	  {"--max-data-bytes", REFUSED, "'--max-data-bytes' has no equivalent: output is bounded by --max-input-bytes", NULL},
	  {"--max-metadata-bytes", REFUSED, "'--max-metadata-bytes' has no equivalent: the metadata is small and bounded", NULL}}},
};

static const struct alias *alias_named(const char *name)
{
	for (size_t i = 0; i < PL_ARRAY_LEN(aliases); i++)
		if (strcmp(aliases[i].name, name) == 0)
			return &aliases[i];
	return NULL;
}

/* The flag of `a` that `arg` (--name or --name=value) is, or NULL. */
static const struct alias_flag *flag_of(const struct alias *a, const char *arg)
{
	size_t n = strcspn(arg, "=");

	for (size_t i = 0; i < MAX_FLAGS && a->flags[i].from; i++)
		if (strlen(a->flags[i].from) == n && strncmp(a->flags[i].from, arg, n) == 0)
			return &a->flags[i];
	return NULL;
}

/* An id from an id or from an artifact path ending in ID.json. */
static bool id_from(const char *v, const char *prefix, char *out, size_t cap)
{
	const char *base = strrchr(v, '/') ? strrchr(v, '/') + 1 : v;
	size_t n = strlen(base);

	if (n > 5 && strcmp(base + n - 5, ".json") == 0)
		n -= 5;
	if (n != 23 || strncmp(base, prefix, 3) != 0 || strspn(base + 3, "0123456789abcdef") < 20)
		return false;
	snprintf(out, cap, "%.*s", (int)n, base);
	return true;
}

static void push(char ***v, size_t *n, size_t *cap, const char *s)
{
	PL_GROW(*v, *cap, *n + 2);
	(*v)[(*n)++] = pl_xstrndup(s, strlen(s));
	(*v)[*n] = NULL;
}

void cli_alias_free(char **argv)
{
	for (size_t i = 0; argv && argv[i]; i++)
		free(argv[i]);
	free(argv);
}

/* One toolkit flag at argv[*i] into `out`; false with `err` on refusal. */
static bool rewrite_flag(const struct alias_flag *f, int argc, char **argv, int *i,
			 char ***out, size_t *n, size_t *cap, char *err, size_t errcap)
{
	const char *eq = strchr(argv[*i], '='), *value = eq ? eq + 1 : NULL;
	char id[32];

	if (f->kind == REFUSED) {
		snprintf(err, errcap, "%s", f->to);
		return false;
	}
	if (f->kind == BARE_DROP)
		return true;
	if (!value && *i + 1 < argc)
		value = argv[++*i];
	if (!value) {
		snprintf(err, errcap, "'%s' needs a value", f->from);
		return false;
	}
	if (f->kind == AUTHORIZE) {
		push(out, n, cap, "--authorization");
		push(out, n, cap, value);
		push(out, n, cap, "--authorize-target");
		push(out, n, cap, value);
		return true;
	}
	if (f->kind == TO_ID) {
		if (!id_from(value, f->id_prefix, id, sizeof(id))) {
			snprintf(err, errcap, "'%s %.200s': pass the %s id (%s...) or its artifact's path "
				 "(ARTIFACT_ROOT/%s/%sID.json)", f->from, value,
				 f->id_prefix[0] == 'a' ? "analysis" : "benchmark", f->id_prefix,
				 f->id_prefix[0] == 'a' ? "analyses" : "benchmarks", f->id_prefix);
			return false;
		}
		value = id;
	}
	push(out, n, cap, f->to);
	push(out, n, cap, value);
	return true;
}

char **cli_alias_rewrite(int argc, char **argv, int *argc_out, char *err, size_t errcap)
{
	const struct alias *a = argc > 0 ? alias_named(argv[0]) : NULL;
	char **out = NULL;
	size_t n = 0, cap = 0;

	*argc_out = 0;
	if (!a)
		return NULL;
	push(&out, &n, &cap, a->command);
	for (size_t k = 0; k < PL_ARRAY_LEN(a->preset) && a->preset[k]; k++)
		push(&out, &n, &cap, a->preset[k]);
	for (int i = 1; i < argc; i++) {
		const struct alias_flag *f = strncmp(argv[i], "--", 2) == 0 ? flag_of(a, argv[i]) : NULL;
		if (!f) {
			push(&out, &n, &cap, argv[i]);
			continue;
		}
		if (!rewrite_flag(f, argc, argv, &i, &out, &n, &cap, err, errcap)) {
			cli_alias_free(out);
			*argc_out = -1;
			return NULL;
		}
	}
	*argc_out = (int)n;
	return out;
}

void cli_alias_help(FILE *out)
{
	fprintf(out, "\nPerfLens Python toolkit commands, accepted as aliases (their flags where the meaning is the same):\n");
	for (size_t i = 0; i < PL_ARRAY_LEN(aliases); i++)
		if (strcmp(aliases[i].name, aliases[i].command) != 0 || aliases[i].flags[0].from)
			fprintf(out, "  %-20s = %s\n", aliases[i].name, aliases[i].says);
}
