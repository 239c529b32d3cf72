/* callgraph_probe.c - call-graph modes measured on the known chain (see
 * callgraph_probe.h).
 *
 * perf script -F ip,sym --no-inline prints each sample as its frames,
 * leaf first, one per line, then a blank line; the lines are read as
 * they come (pl_run's callback), nothing is kept but counts.  A sample
 * counts for a chain when its first frame of that chain is the chain's
 * bottom (frame DEPTH): samples caught in the kernel or in clock_gettime
 * above it, or during start-up, say nothing of the unwinder.  From there
 * the frames must be DEPTH-1, DEPTH-2, ... 1 in a row; the first frame out
 * of order ends the walk.  depth_found is the depth at least half of the
 * samples reached, so a few odd samples move nothing.
 */
#include "callgraph_probe.h"
#include "coll_int.h"
#include "known_chain.h"
#include "run.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PROBE_FREQ "1000"

enum chain_kind { CHAIN_FP, CHAIN_NOFP, NCHAINS };

static const char *const chain_prefix[NCHAINS] = {COLL_CHAIN_FP_PREFIX, COLL_CHAIN_NOFP_PREFIX};

/* What one chain's samples showed. */
struct chain_tally {
	uint64_t samples;                      /* samples at the chain's bottom */
	uint64_t reached[COLL_CHAIN_DEPTH + 1]; /* samples by depth found */
};

/* The perf script reader's state. */
struct script_walk {
	uint64_t samples;          /* every sample read back */
	bool in_sample;
	int kind;                  /* the chain of this sample, -1 none yet */
	bool counted;              /* it started at the bottom */
	bool ended;                /* a frame out of order was seen */
	int depth, expect;
	struct chain_tally chain[NCHAINS];
};

/* Level 1..DEPTH of a frame's symbol in chain `kind`, else 0. */
static int chain_level(const char *sym, size_t n, int kind)
{
	size_t plen = strlen(chain_prefix[kind]);
	int level = 0;

	if (n <= plen || memcmp(sym, chain_prefix[kind], plen) != 0)
		return 0;
	for (size_t i = plen; i < n; i++) {
		if (sym[i] < '0' || sym[i] > '9' || level > COLL_CHAIN_DEPTH)
			return 0;
		level = level * 10 + (sym[i] - '0');
	}
	return level <= COLL_CHAIN_DEPTH ? level : 0;
}

static void end_sample(struct script_walk *w)
{
	if (w->in_sample && w->kind >= 0 && w->counted) {
		w->chain[w->kind].samples++;
		w->chain[w->kind].reached[w->depth]++;
	}
	w->in_sample = false;
	w->kind = -1;
	w->counted = w->ended = false;
	w->depth = 0;
}

/* One frame's symbol (the line's text after the address). */
static void frame(struct script_walk *w, const char *sym, size_t n)
{
	int level = 0, kind;

	for (kind = 0; kind < NCHAINS && !level; kind++)
		level = chain_level(sym, n, kind);
	kind--;
	if (w->ended)
		return;
	if (w->kind < 0) {
		if (!level)
			return;  /* above the chain: kernel, clock_gettime */
		w->kind = kind;
		w->counted = level == COLL_CHAIN_DEPTH;
		w->depth = 1;
		w->expect = COLL_CHAIN_DEPTH - 1;
		return;
	}
	if (level && kind == w->kind && level == w->expect && w->expect > 0) {
		w->depth++;
		w->expect--;
	} else {
		w->ended = true;
	}
}

static enum pl_err script_line(void *arg, const char *line, size_t len, struct pl_error *err)
{
	struct script_walk *w = arg;
	size_t i = 0, start;

	(void)err;
	while (i < len && (line[i] == ' ' || line[i] == '\t'))
		i++;
	if (i == len) {
		end_sample(w);
		return PL_OK;
	}
	if (!w->in_sample) {
		w->in_sample = true;
		w->samples++;
	}
	while (i < len && line[i] != ' ' && line[i] != '\t')  /* the address */
		i++;
	while (i < len && (line[i] == ' ' || line[i] == '\t'))
		i++;
	start = i;
	while (i < len && line[i] != ' ' && line[i] != '\t' && line[i] != '+')
		i++;
	frame(w, line + start, i - start);
	return PL_OK;
}

/* The depth at least half of the chain's samples reached. */
static int depth_found(const struct chain_tally *t)
{
	uint64_t at_least = 0;

	for (int d = COLL_CHAIN_DEPTH; d > 0; d--) {
		at_least += t->reached[d];
		if (t->samples && at_least * 2 >= t->samples)
			return d;
	}
	return 0;
}

static json_t *chain_json(const struct chain_tally *t)
{
	return json_pack("{s:I,s:I,s:i}", "samples", (json_int_t)t->samples, "full_chains",
			 (json_int_t)t->reached[COLL_CHAIN_DEPTH], "depth_found", depth_found(t));
}

/* perf script over `data` into `w`; false when perf script failed. */
static bool read_back(const char *perf, const char *data, uint32_t timeout_ms,
		      struct script_walk *w, char *why, size_t cap)
{
	const char *argv[] = {perf, "script", "-i", data, "-F", "ip,sym", "--no-inline", NULL};
	struct pl_run_opts o = {.argv = argv, .timeout_ms = timeout_ms, .max_stdout = 256u << 20,
				.on_line = script_line, .arg = w, .max_stderr = 16u << 10, .nice = 5};
	struct pl_run_result res;
	struct pl_error err;
	bool ok;

	memset(w, 0, sizeof(*w));
	w->kind = -1;
	ok = pl_run(&o, &res, &err) == PL_OK && !res.signal && res.exit_status == 0;
	end_sample(w);
	if (!ok)
		snprintf(why, cap, "perf script could not read the samples back (%s)",
			 res.signal ? "killed by a signal" : err.code ? err.text : "non-zero exit");
	pl_run_result_release(&res);
	return ok;
}

/* The mode's verdict and its sentence, from the two chains. */
static const char *verdict(const struct script_walk *w, const char *mode, char *detail, size_t cap,
			   json_t **needs_fp)
{
	int fp = depth_found(&w->chain[CHAIN_FP]), nofp = depth_found(&w->chain[CHAIN_NOFP]);
	const uint64_t fps = w->chain[CHAIN_FP].samples, nofps = w->chain[CHAIN_NOFP].samples;

	*needs_fp = nofps ? json_boolean(nofp < COLL_CHAIN_DEPTH) : json_null();
	if (!fps) {
		snprintf(detail, cap, "%s: no sample landed at the bottom of the known chain (%llu samples read back): the chains are unknown, not shallow",
			 mode, (unsigned long long)w->samples);
		return "no_samples";
	}
	if (fp < COLL_CHAIN_DEPTH) {
		snprintf(detail, cap, "%s found %d of the known chain's %d frames (%llu samples): stacks come out cut short",
			 mode, fp, COLL_CHAIN_DEPTH, (unsigned long long)fps);
		return "shallow_chains";
	}
	if (nofps && nofp < COLL_CHAIN_DEPTH)
		snprintf(detail, cap, "%s found all %d frames of the known chain built with frame pointers, but only %d of %d built without: use it for code built with -fno-omit-frame-pointer, else dwarf",
			 mode, COLL_CHAIN_DEPTH, nofp, COLL_CHAIN_DEPTH);
	else
		snprintf(detail, cap, "%s found all %d frames of the known chain, with and without frame pointers",
			 mode, COLL_CHAIN_DEPTH);
	return "real_chains";
}

static json_t *mode_json(const char *mode, const char *status, const struct script_walk *w,
			 json_t *needs_fp, const char *detail, const char *const *argv)
{
	static const struct script_walk none;

	if (!w)
		w = &none;
	return json_pack("{s:s,s:s,s:i,s:i,s:I,s:o,s:o,s:o,s:o,s:o}", "mode", mode, "status", status,
			 "expected_depth", COLL_CHAIN_DEPTH, "depth_found", depth_found(&w->chain[CHAIN_FP]),
			 "samples", (json_int_t)w->samples,
			 "with_frame_pointers", chain_json(&w->chain[CHAIN_FP]),
			 "without_frame_pointers", chain_json(&w->chain[CHAIN_NOFP]),
			 "needs_frame_pointers", needs_fp ? needs_fp : json_null(),
			 "detail", coll_text_json(detail, strlen(detail)),
			 "command", argv ? coll_argv_json(argv) : json_array());
}

/* The workload is this binary.  Built with ASan, its runtime would set
 * RLIMIT_CORE and start LeakSanitizer's tracer at exit, both of which a
 * sandboxed worker refuses; the workload leaks nothing worth a report. */
#ifdef __SANITIZE_ADDRESS__
static const char *const workload_env[] = {"ASAN_OPTIONS=disable_coredump=0:detect_leaks=0", NULL};
#else
static const char *const *const workload_env = NULL;
#endif

static json_t *probe_mode(const char *perf, const char *workload, const char *scratch,
			  const char *mode, uint32_t timeout_ms)
{
	/* LBR is a hardware feature of cycles; cpu-clock never has it.  User
	 * space only: that is what is unwound, and paranoid 2 allows it. */
	const char *event = strcmp(mode, "lbr") == 0 ? "cycles:u" : "cpu-clock:u";
	char data[4200], detail[600], tail[240];
	const char *argv[] = {perf, "record", "-q", "-N", "-e", event, "-F", PROBE_FREQ, "--call-graph", mode,
			      "-o", data, "--", workload, COLL_CHAIN_FLAG, NULL};
	struct pl_run_opts o = {.argv = argv, .env = workload_env, .timeout_ms = timeout_ms,
				.max_stdout = 1u << 20, .max_stderr = 16u << 10, .nice = 5};
	struct pl_run_result res;
	struct pl_error err;
	struct script_walk *w;
	const char *status;
	json_t *needs_fp = NULL, *j;

	if (!workload)
		return mode_json(mode, "no_samples", NULL, NULL,
				 "the known-depth workload (this PerfLens binary) could not be found: run perflens from its installed path",
				 NULL);
	snprintf(data, sizeof(data), "%.4000s/graph-%s.data", scratch, mode);
	if (pl_run(&o, &res, &err) != PL_OK || res.signal || res.exit_status != 0) {
		pl_run_stderr_tail(&res, tail, sizeof(tail));
		snprintf(detail, sizeof(detail), "perf record --call-graph %s failed here: %s%s", mode,
			 *tail ? tail : err.code ? err.text : "no message",
			 strcmp(mode, "lbr") == 0 ? " (LBR needs an Intel CPU's branch records: bare metal or a VM that passes them through; use fp or dwarf)" : "");
		pl_run_result_release(&res);
		unlink(data);
		return mode_json(mode, "failed", NULL, NULL, detail, argv);
	}
	pl_run_result_release(&res);
	w = pl_xcalloc(1, sizeof(*w));
	if (!read_back(perf, data, timeout_ms, w, detail, sizeof(detail)))
		status = "no_samples";
	else
		status = verdict(w, mode, detail, sizeof(detail), &needs_fp);
	unlink(data);
	j = mode_json(mode, status, w, needs_fp, detail, argv);
	free(w);
	return j;
}

json_t *coll_chains_from_script(const char *text, size_t len)
{
	struct script_walk *w = pl_xcalloc(1, sizeof(*w));
	struct pl_error ignored;
	json_t *j;

	w->kind = -1;
	for (size_t at = 0; at < len;) {
		const char *nl = memchr(text + at, '\n', len - at);
		size_t n = nl ? (size_t)(nl - text - at) : len - at;

		script_line(w, text + at, n, &ignored);
		at += n + 1;
	}
	end_sample(w);
	j = json_pack("{s:I,s:o,s:o}", "samples", (json_int_t)w->samples,
		      "with_frame_pointers", chain_json(&w->chain[CHAIN_FP]),
		      "without_frame_pointers", chain_json(&w->chain[CHAIN_NOFP]));
	free(w);
	return j;
}

json_t *coll_probe_call_graphs(const char *perf, const char *workload, const char *scratch,
			       uint32_t timeout_ms)
{
	static const char *const modes[] = {"fp", "dwarf", "lbr"};
	json_t *out = json_array();

	for (size_t i = 0; i < PL_ARRAY_LEN(modes); i++)
		json_array_append_new(out, probe_mode(perf, workload, scratch, modes[i], timeout_ms));
	return out;
}
