/* symbolize_bench.c - drive the symbolizer engine directly, for
 * bench/symbolize.sh: no JSON, no paging, so the figures are the engine's.
 *
 *   symbolize_bench [--repeat N] [--no-inline] [--quiet] [--index-dir DIR | --no-index]
 *                   BINARY < OFFSETS
 *
 * OFFSETS holds one hex offset a line (0x optional).  With --index-dir the
 * module's symbol index is loaded from DIR, or built there when absent
 * (symindex.h); with --defer too, a module without one is answered by
 * libdw and nothing is built (what a first symbolize call costs: its
 * index is built after the answer, by the call's follow-up); with --no-index, or neither (a batch this small stays on
 * libdw without a folder), every lookup reads libdw.  The module is opened
 * and its debug information and symbol table, or its index, loaded
 * (open_s), then each
 * offset is looked up once (cold_s: CU line tables and DIEs are read as
 * the lookups reach them) and the answers are
 * printed, one line each, tab-separated:
 *   OFFSET  FUNCTION+0xOFF  FILE:LINE:COL  DWARF_FUNCTION  INLINES  SUBPROGRAM
 * (INLINES: "name@file:line:col" innermost first, joined by '|'; "-"
 * for an empty field).  With --repeat N the whole batch is looked up N
 * more times from the cache.  Timings go to stderr as "key=value" lines.
 * Built by bench/symbolize.sh against $BUILD/libperflens.a.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "symbols/symbolize.h"

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void print_answer(const struct pl_sym_answer *a)
{
	printf("0x%llx\t", (unsigned long long)a->offset);
	if (a->function)
		printf("%s+0x%llx\t", a->function, (unsigned long long)a->function_offset);
	else
		printf("-\t");
	if (a->file)
		printf("%s:%u:%u\t", a->file, a->line, a->column);
	else
		printf("-\t");
	printf("%s\t", a->dwarf_function ? a->dwarf_function : "-");
	for (size_t i = 0; i < a->ninlines; i++)
		printf("%s%s@%s:%u:%u", i ? "|" : "", a->inlines[i].function,
		       a->inlines[i].call_file ? a->inlines[i].call_file : "??",
		       a->inlines[i].call_line, a->inlines[i].call_column);
	printf("%s\t%s\n", a->ninlines ? "" : "-", a->dwarf_subprogram ? a->dwarf_subprogram : "-");
}

int main(int argc, char **argv)
{
	struct pl_sym_cfg cfg = {0};
	struct pl_symbolizer *s;
	struct pl_sym_module *m;
	const struct pl_sym_answer *a;
	struct pl_sym_stats st;
	struct pl_error err;
	uint64_t *offs = NULL, sink = 0;
	size_t n = 0, cap = 0;
	long repeat = 0;
	bool inl = true, quiet = false;
	char line[256];
	const char *bin = NULL, *index_dir = NULL;
	enum pl_sym_index_mode mode = PL_SYM_INDEX_AUTO;
	double t0, t1, t2, t3;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--repeat") == 0 && i + 1 < argc)
			repeat = strtol(argv[++i], NULL, 10);
		else if (strcmp(argv[i], "--no-inline") == 0)
			inl = false;
		else if (strcmp(argv[i], "--quiet") == 0)
			quiet = true;
		else if (strcmp(argv[i], "--index-dir") == 0 && i + 1 < argc)
			index_dir = argv[++i];
		else if (strcmp(argv[i], "--no-index") == 0)
			mode = PL_SYM_INDEX_OFF;
		else if (strcmp(argv[i], "--defer") == 0)
			mode = PL_SYM_INDEX_DEFER;
		else
			bin = argv[i];
	}
	if (!bin) {
		fprintf(stderr, "usage: symbolize_bench [--repeat N] [--no-inline] [--quiet] "
			"[--index-dir DIR [--defer] | --no-index] BINARY < OFFSETS\n");
		return 2;
	}
	while (fgets(line, sizeof(line), stdin)) {
		PL_GROW(offs, cap, n + 1);
		offs[n++] = strtoull(line, NULL, 16);
	}
	t0 = now();
	s = pl_symbolizer_new(&cfg, NULL);
	pl_symbolizer_set_index(s, mode, index_dir);
	if (pl_symbolizer_open(s, bin, &m, &err)) {
		fprintf(stderr, "symbolize_bench: %s\n", err.text);
		return 1;
	}
	pl_sym_module_symbol_count(m);  /* loads the debug file and the tables */
	t1 = now();
	for (size_t i = 0; i < n; i++) {
		if (pl_sym_lookup(s, m, offs[i], inl, &a, &err)) {
			fprintf(stderr, "symbolize_bench: %s\n", err.text);
			return 1;
		}
		if (!quiet)
			print_answer(a);
	}
	t2 = now();
	for (long r = 0; r < repeat; r++)
		for (size_t i = 0; i < n; i++) {
			pl_sym_lookup(s, m, offs[i], inl, &a, &err);
			sink += a->function_offset;
		}
	t3 = now();
	pl_symbolizer_stats(s, &st);
	fprintf(stderr, "offsets=%zu\nopen_s=%.6f\ncold_s=%.6f\n", n, t1 - t0, t2 - t1);
	if (repeat)
		fprintf(stderr, "cached_lookups=%zu\ncached_s=%.6f\ncached_per_s=%.0f\n",
			n * (size_t)repeat, t3 - t2, (double)n * (double)repeat / (t3 - t2));
	fprintf(stderr, "table_hits=%llu\nlinear_fallbacks=%llu\ncache_hits=%llu\nsink=%llu\n",
		(unsigned long long)st.table_hits, (unsigned long long)st.linear_fallbacks,
		(unsigned long long)st.cache_hits, (unsigned long long)sink);
	fprintf(stderr, "method=%s\nindex_hits=%llu\nindexes_loaded=%llu\nindexes_built=%llu\n",
		pl_sym_module_lookup_method(m, NULL), (unsigned long long)st.index_hits,
		(unsigned long long)st.indexes_loaded, (unsigned long long)st.indexes_built);
	pl_symbolizer_free(s);
	free(offs);
	return 0;
}
