/* summary.c - the analysis summary document (see summary.h).
 *
 * The summary is written as jansson dumps a whole document with
 * PL_DUMP_FLAGS | JSON_INDENT(1), but piece by piece (struct sw), so the
 * lists that grow with the profile (functions, and each view's hotspots)
 * are never held as a tree, which would cost about 1.2 KB per function
 * and most of the writing time.  jansson makes and encodes every value;
 * what is laid out here are the brackets, keys, commas and indentation of
 * the document, of the views, of those two lists and of their entries,
 * exactly as jansson lays them out: an opening bracket, each member on a
 * new line one space deeper than its container, ',' between members, the
 * closing bracket on a line of its own (or right after the opening one
 * when empty).  A unit test holds the result to jansson's own dump of it,
 * byte for byte.  Values that repeat (a view's amounts, DSO names, kinds)
 * are encoded once and their text reused.
 *
 * The provenance comes last: it holds the inputs' SHA-256, which a thread
 * of input.c may still be computing for a big file, so the rest of the
 * document is written while it finishes.
 */
#include "sched_json.h"
#include "summary.h"
#include "profile/aggregate.h"
#include "profile/demangle.h"
#include "profile/parse.h"
#include "profile/perf_stat.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------- values */

static json_t *opt_i64(int64_t v)
{
	return v < 0 ? json_null() : json_integer(v);
}

static json_t *opt_str(const struct pl_profile *p, uint32_t id)
{
	return id == PL_NOID ? json_null() : json_string(pl_str(p, id));
}

static json_t *stat_block_json(const struct pl_stat_block *b)
{
	json_t *counters = json_array();

	for (size_t i = 0; i < b->ncounters; i++) {
		const struct pl_stat_counter *c = &b->counters[i];
		json_t *o = json_pack("{s:o,s:s}", "event", pl_json_bytes(c->event),
				      "status", pl_stat_status_name(c->status));
		if (c->status == PL_STAT_COUNTED)
			/* Counts beyond json_int_t's range stay reals. */
			json_object_set_new(o, "value", c->is_integer && c->value < 9.2e18 && c->value > -9.2e18 ?
					    json_integer((json_int_t)c->value) : json_real(c->value));
		else
			json_object_set_new(o, "value", json_null());
		json_object_set_new(o, "unit", pl_json_bytes(c->unit ? c->unit : ""));
		json_object_set_new(o, "run_percent", c->run_percent >= 0 ? json_real(c->run_percent) : json_null());
		json_object_set_new(o, "variance_percent", c->variance_percent >= 0 ? json_real(c->variance_percent) : json_null());
		json_object_set_new(o, "comment", pl_json_bytes(c->comment ? c->comment : ""));
		json_array_append_new(counters, o);
	}
	return json_pack("{s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:I}",
		"source", pl_json_bytes(b->source ? b->source : ""),
		"target", pl_json_bytes(b->target ? b->target : ""),
		"counters", counters,
		"elapsed_seconds", b->elapsed_seconds >= 0 ? json_real(b->elapsed_seconds) : json_null(),
		"user_seconds", b->user_seconds >= 0 ? json_real(b->user_seconds) : json_null(),
		"sys_seconds", b->sys_seconds >= 0 ? json_real(b->sys_seconds) : json_null(),
		"ipc", b->has_ipc ? json_real(b->ipc) : json_null(),
		"lines_skipped", (json_int_t)b->lines_skipped);
}

/* What the native perf.data reader saw; strings from the file are
 * outside bytes (pl_json_bytes). */
static json_t *perf_data_json(const struct pl_perf_data_info *i)
{
	json_t *o = json_pack("{s:b,s:b,s:b,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I}",
		"pipe", i->pipe, "byte_swapped", i->swapped, "compressed", i->compressed,
		"records", (json_int_t)i->records, "samples", (json_int_t)i->samples,
		"samples_skipped", (json_int_t)i->samples_skipped,
		"unknown_records", (json_int_t)i->unknown_records,
		"lost_records", (json_int_t)i->lost_records, "lost", (json_int_t)i->lost,
		"lost_samples", (json_int_t)i->lost_samples, "out_of_order", (json_int_t)i->out_of_order,
		"compressed_bytes", (json_int_t)i->compressed_bytes,
		"decompressed_bytes", (json_int_t)i->decompressed_bytes,
		"nrcpus_online", (json_int_t)i->nrcpus_online,
		"nrcpus_available", (json_int_t)i->nrcpus_avail);
	const struct { const char *key, *val; } strs[] = {
		{"hostname", i->hostname}, {"osrelease", i->osrelease}, {"arch", i->arch},
		{"cpudesc", i->cpudesc}, {"cmdline", i->cmdline}, {"perf_version", i->perf_version},
		{"kernel_symbols", i->kernel_symbols}, {"events", i->events}, {"jit_maps", i->jit_maps},
	};
	for (size_t k = 0; k < sizeof(strs) / sizeof(strs[0]); k++)
		if (strs[k].val)
			json_object_set_new(o, strs[k].key, pl_json_bytes(strs[k].val));
	if (i->dwarf_samples || i->dwarf_no_stack) {
		json_t *stops = json_object();
		for (size_t k = 0; k < 8 && i->dwarf_stop_names[k]; k++)
			json_object_set_new(stops, i->dwarf_stop_names[k], json_integer((json_int_t)i->dwarf_stops[k]));
		json_object_set_new(o, "dwarf_unwind", json_pack("{s:I,s:I,s:I,s:o,s:I,s:I}",
			"samples", (json_int_t)i->dwarf_samples, "user_frames", (json_int_t)i->dwarf_frames,
			"without_stack", (json_int_t)i->dwarf_no_stack, "stopped", stops,
			"through_file_at_two_bases", (json_int_t)i->dwarf_two_bases,
			"through_file_found_elsewhere", (json_int_t)i->dwarf_elsewhere));
	}
	return o;
}

/* Paths, commands and lines of the input are outside bytes: each goes
 * in the escaped form (pl_json_bytes), so an input whose name is not
 * UTF-8 is listed, never left out. */
static json_t *provenance_json(const struct pl_profile *p)
{
	json_t *inputs = json_array(), *preview = json_array();

	for (size_t i = 0; i < p->nsources; i++) {
		const struct pl_source *s = &p->sources[i];
		json_t *in = json_pack("{s:o,s:I,s:I,s:s,s:s,s:s,s:I,s:I}",
			"path", pl_json_bytes(s->path), "size", (json_int_t)s->size,
			"text_bytes", (json_int_t)s->text_bytes, "sha256", s->sha256,
			"format", pl_format_name(s->format), "compression", s->codec,
			"lines", (json_int_t)s->lines, "records", (json_int_t)s->records);
		if (s->converted_by)
			json_object_set_new(in, "converted_by", pl_json_bytes(s->converted_by));
		if (s->reader)
			json_object_set_new(in, "reader", json_string(s->reader));
		if (s->reader_reason)
			json_object_set_new(in, "reader_reason", pl_json_bytes(s->reader_reason));
		if (s->perf_data)
			json_object_set_new(in, "perf_data", perf_data_json(s->perf_data));
		json_array_append_new(inputs, in);
	}
	for (size_t i = 0; i < p->npreviews; i++)
		json_array_append_new(preview, json_pack("{s:I,s:s,s:o}",
			"line", (json_int_t)p->previews[i].line_no,
			"reason", p->previews[i].reason, "text", pl_json_bytes(p->previews[i].text)));
	return json_pack("{s:s,s:s,s:o,s:{s:I,s:I,s:I,s:I,s:I,s:I,s:I},s:o,s:{s:I,s:I,s:I,s:I,s:I,s:I}}",
		"tool", "perflens", "tool_version", PL_VERSION, "inputs", inputs,
		"counts", "lines", (json_int_t)p->lines, "records_parsed", (json_int_t)p->records_parsed,
		"records_skipped", (json_int_t)p->records_skipped,
		"records_malformed", (json_int_t)p->records_malformed, "srclines", (json_int_t)p->srclines,
		"sideband_records", (json_int_t)p->sideband_records,
		"mappings", (json_int_t)p->nmappings,
		"malformed_preview", preview,
		"limits", "max_input_bytes", (json_int_t)p->limits.max_input_bytes,
		"max_records", (json_int_t)p->limits.max_records, "max_line", (json_int_t)p->limits.max_line,
		"max_depth", (json_int_t)p->limits.max_depth, "max_frames", (json_int_t)p->limits.max_frames,
		"max_stacks", (json_int_t)p->limits.max_stacks);
}

/* What naming [unknown] user frames from local binaries achieved. */
static json_t *recovery_json(const struct pl_profile *p)
{
	const struct pl_recovery *r = &p->recovery;
	json_t *why = json_object();

	for (int i = 0; i < PL_RR_COUNT; i++)
		if (r->not_recovered[i])
			json_object_set_new(why, pl_recover_reason_names[i],
					    json_integer((json_int_t)r->not_recovered[i]));
	return json_pack("{s:b,s:I,s:I,s:o}", "attempted", r->attempted,
			 "user_frames_unknown", (json_int_t)r->user_frames_unknown,
			 "recovered", (json_int_t)r->recovered, "not_recovered", why);
}

/* Modules and build-ids as the recording gave them (perf.data only). */
static json_t *build_ids_json(const struct pl_profile *p)
{
	json_t *out = json_array();

	for (size_t i = 0; i < p->nbuild_ids; i++)
		json_array_append_new(out, json_pack("{s:s,s:s}", "dso",
			pl_str(p, p->build_ids[i].dso), "build_id", p->build_ids[i].hex));
	return out;
}

/* Per event, the weight of the samples with an edge that may skip a
 * caller, and of those whose only doubt is an unknown edge. */
static void caller_check_amounts(const struct pl_profile *p, uint32_t event, uint64_t may[2],
				 uint64_t unknown[2])
{
	may[0] = may[1] = unknown[0] = unknown[1] = 0;
	for (size_t i = 0; i < p->nmarked; i++) {
		const struct pl_marked *m = &p->marked[i];
		size_t n;
		const uint32_t *w;
		bool skip = false;
		if (m->event != event)
			continue;
		w = pl_mark_words(p, m->mark, &n);
		for (size_t k = 0; k < n && !skip; k++)
			skip = PL_MARK_EDGE(w[k]) == PL_EDGE_MAY_SKIP;
		(skip ? may : unknown)[0] += m->samples;
		(skip ? may : unknown)[1] += m->period;
	}
}

static double period_percent(uint64_t part, uint64_t whole)
{
	return whole ? round((double)part * 100.0 / (double)whole * 1e4) / 1e4 : 0.0;
}

/* Frame-pointer edges that may skip a caller (profile.h, symbols/cfi.h);
 * a warning per event that has some. */
static json_t *caller_check_json(const struct pl_profile *p, json_t *warnings)
{
	const struct pl_caller_check *c = &p->caller_check;
	json_t *events = json_array(), *unknown = json_array();

	for (uint32_t e = 0; e < p->nevents; e++) {
		const struct pl_event *ev = &p->events[e];
		uint64_t may[2], unk[2];
		caller_check_amounts(p, e, may, unk);
		json_array_append_new(events, json_pack("{s:s,s:b,s:I,s:f,s:I,s:f}",
			"event", pl_str(p, ev->name), "checked", pl_caller_checked(p, e),
			"samples_caller_may_be_missing", (json_int_t)may[0],
			"percent_caller_may_be_missing", period_percent(may[1], ev->period),
			"samples_unknown", (json_int_t)unk[0],
			"percent_unknown", period_percent(unk[1], ev->period)));
		if (may[0])
			json_array_append_new(warnings, json_sprintf(
				"event '%s': %.4g%% of the weight has a frame-pointer edge that may skip a caller "
				"(a frameless function, prologue or epilogue at the sampled pc; quality.caller_check): "
				"call paths and callers mark it caller_may_be_missing; "
				"collect_profile(call_graph=\"dwarf\") records the real callers",
				pl_str(p, ev->name), period_percent(may[1], ev->period)));
	}
	if (c->records_unchecked)
		json_array_append_new(warnings, json_sprintf(
			"%llu records were not caller-checked: their distinct addresses passed what the check keeps",
			(unsigned long long)c->records_unchecked));
	for (size_t i = 0; i < c->nunknown; i++)
		json_array_append_new(unknown, json_pack("{s:o,s:s}", "dso", opt_str(p, c->unknown[i].dso),
							 "reason", pl_unknown_why_text[c->unknown[i].why]));
	return json_pack("{s:s,s:o,s:I,s:o,s:I,s:s}",
		"method", "the CFA rule (libdw CFI of .eh_frame/.debug_frame) at each user frame's pc, "
		"return address minus one for callers: not rbp-based means the frame printed above may not be its caller",
		"events", events, "records_unchecked", (json_int_t)c->records_unchecked,
		"unknown_modules", unknown, "unknown_modules_more", (json_int_t)c->unknown_modules_more,
		"remedy", "collect_profile(call_graph=\"dwarf\")");
}

/* An interpreter's frame: what a JIT's map names so (V8's "JS:~f" of
 * Ignition's bytecode under --interpreted-frames-native-stack,
 * "InterpretedFunction:f" or "Interpreted:" in older maps; the JVM's
 * "Interpreter"), and the interpreter's own function where the language's
 * frames go unnamed: V8's Builtins_InterpreterEntryTrampoline, CPython's
 * evaluation loop when no Python perf map (3.12's -X perf, "py::" names)
 * names the Python functions. */
static bool interpreter_func(const struct pl_profile *p, const struct pl_func *f, bool python_map)
{
	const char *s = pl_str(p, f->symbol);

	if (!s)
		return false;
	if (f->kind == PL_KIND_JIT)
		return strncmp(s, "Interpreted", 11) == 0 || strcmp(s, "Interpreter") == 0 ||
		       strncmp(s, "JS:~", 4) == 0;
	if (strcmp(s, "Builtins_InterpreterEntryTrampoline") == 0)
		return true;
	return !python_map && (strcmp(s, "_PyEval_EvalFrameDefault") == 0 || strcmp(s, "PyEval_EvalFrameEx") == 0);
}

enum { NAMES_JIT, NAMES_INTERPRETED, NAMES_UNDEMANGLED, NAMES_CLASSES };

/* The share of sampled frames (each stack's frames, once per sample of
 * every event) in each class of `cls` (a bit per NAMES_* per function). */
static json_t *frame_shares(const struct pl_profile *p, const uint8_t *cls)
{
	static const char *const keys[NAMES_CLASSES] = {"jit", "interpreted", "undemangled"};
	uint64_t in[NAMES_CLASSES] = {0}, all = 0;
	json_t *o = json_object();

	for (size_t i = 0; i < pl_nstacks(p); i++) {
		const struct pl_stack *st = &p->stacks[i];
		uint64_t samples = 0;
		for (uint32_t w = st->first_weight; w != PL_NOID; w = p->weights[w].next)
			samples += p->weights[w].samples;
		all += samples * st->depth;
		for (uint32_t d = 0; d < st->depth; d++)
			for (int c = 0; c < NAMES_CLASSES; c++)
				in[c] += cls[p->frames[st->frames[d]].func] >> c & 1 ? samples : 0;
	}
	for (int c = 0; c < NAMES_CLASSES; c++)
		json_object_set_new(o, keys[c], json_real(period_percent(in[c], all)));
	return o;
}

/* quality.names: how the functions' names came to be (unique functions):
 * demangled from C++/Rust/D linker names, mangled-looking names libiberty
 * could not read (shown as given), JIT code (a perf map or perf inject
 * --jit's files name it) and interpreter frames; and the share of sampled
 * frames of the last three.  Absent when there are none of them, as in a
 * C program's profile. */
static void names_quality(const struct pl_profile *p, json_t *q, json_t *warnings)
{
	uint64_t named = 0, demangled = 0, undemangled = 0, jit = 0, interpreted = 0;
	bool python_map = false;
	uint8_t *cls = pl_xcalloc(pl_nfuncs(p) + 1, 1);

	for (size_t i = 0; i < pl_nfuncs(p); i++) {
		const char *s = pl_str(p, p->funcs[i].symbol);
		python_map |= p->funcs[i].kind == PL_KIND_JIT && s && strncmp(s, "py::", 4) == 0;
	}
	for (size_t i = 0; i < pl_nfuncs(p); i++) {
		const struct pl_func *f = &p->funcs[i];
		if (f->unknown)
			continue;
		named++;
		demangled += f->linkage != PL_NOID;
		undemangled += f->undemangled;
		jit += f->kind == PL_KIND_JIT;
		bool interp = interpreter_func(p, f, python_map);
		interpreted += interp;
		cls[i] = (uint8_t)((f->kind == PL_KIND_JIT) << NAMES_JIT | interp << NAMES_INTERPRETED |
				   (f->undemangled != 0) << NAMES_UNDEMANGLED);
	}
	if (!demangled && !undemangled && !jit && !interpreted) {
		free(cls);
		return;
	}
	json_t *names = json_pack("{s:I,s:I,s:I,s:I,s:I}", "functions", (json_int_t)named,
		"demangled", (json_int_t)demangled, "undemangled", (json_int_t)undemangled,
		"jit", (json_int_t)jit, "interpreted", (json_int_t)interpreted);
	json_object_set_new(names, "frames_percent", frame_shares(p, cls));
	free(cls);
	json_object_set_new(q, "names", names);
	if (undemangled)
		json_array_append_new(warnings, json_sprintf(
			"%llu function names look mangled but could not be demangled: they read as the linker "
			"wrote them", (unsigned long long)undemangled));
}

/* quality.time: how many samples carry their time (the timeline of
 * get_timeline and view.time), and a warning for those that do not. */
static json_t *time_quality(const struct pl_profile *p, json_t *warnings)
{
	const struct pl_timed_table *t = &p->timed;
	uint64_t first = UINT64_MAX, last = 0;

	for (size_t i = 0; i < t->n; i++) {
		if (t->v[i].time_ns < first)
			first = t->v[i].time_ns;
		if (t->v[i].time_ns > last)
			last = t->v[i].time_ns;
	}
	if (t->past_cap)
		json_array_append_new(warnings, json_sprintf(
			"%llu samples past the timeline's %u keep no time: get_timeline and view.time see "
			"only the first %zu read", (unsigned long long)t->past_cap, PL_MAX_TIMED, t->n));
	if (t->untimed && t->n)
		json_array_append_new(warnings, json_sprintf(
			"%llu samples have no time: get_timeline and view.time leave them out",
			(unsigned long long)t->untimed));
	return json_pack("{s:I,s:I,s:I,s:f}", "samples", (json_int_t)t->n,
			 "past_cap", (json_int_t)t->past_cap, "untimed", (json_int_t)t->untimed,
			 "span_seconds", t->n ? (double)(last - first) / 1e9 : 0.0);
}

/* Each event's warnings: too few samples, samples that are waits or
 * records that are not samples, records without a period. */
static void event_warnings(const struct pl_profile *p, json_t *warnings)
{
	for (size_t e = 0; e < p->nevents; e++) {
		const struct pl_event *ev = &p->events[e];
		/* Off-CPU blocked time is traced whole and aggregated per
		 * stack: a few records can hold thousands of waits. */
		if (ev->samples && ev->samples < 100 && !pl_event_is_offcpu_time(pl_str(p, ev->name)))
			json_array_append_new(warnings, json_sprintf(
				"event '%s' has only %llu samples: percentages are coarse",
				pl_str(p, ev->name), (unsigned long long)ev->samples));
		else if (ev->samples && pl_event_counts_waits(p, (uint32_t)e))
			json_array_append_new(warnings, json_sprintf(
				"event '%s': its %llu samples are waits (one per switch out of a tracked task, as "
				"perf counts sched_switch samples), summed per thread, task state and stack into "
				"records (one can hold thousands): shares are of blocked time; list_threads gives "
				"each thread's waits and the stacks they were summed into",
				pl_str(p, ev->name), (unsigned long long)ev->samples));
		else if (ev->samples && pl_event_is_offcpu_time(pl_str(p, ev->name)))
			json_array_append_new(warnings, json_sprintf(
				"event '%s': its %llu records are not samples: each sums the blocked time of "
				"one thread, task state and stack over all its waits (one record can hold "
				"thousands), so shares are of blocked time and a record count is no count of "
				"waits (collect_profile(mode=\"off_cpu\")'s metadata off_cpu.blocked_intervals "
				"counts them)", pl_str(p, ev->name), (unsigned long long)ev->samples));
		if (ev->records_without_period && ev->records_without_period < ev->samples)
			json_array_append_new(warnings, json_sprintf(
				"event '%s': %llu of %llu records carried no period and count as 1",
				pl_str(p, ev->name), (unsigned long long)ev->records_without_period,
				(unsigned long long)ev->samples));
	}
}

/* What perf itself recorded as lost (ring buffer overflows). */
static void lost_warnings(const struct pl_profile *p, json_t *warnings)
{
	for (size_t i = 0; i < p->nsources; i++) {
		const struct pl_source *pd = &p->sources[i];
		if (pd->lost_records || pd->lost_samples)
			json_array_append_new(warnings, json_sprintf(
				"perf lost data while recording: %llu PERF_RECORD_LOST records (%llu events) and %llu "
				"lost samples (PERF_RECORD_LOST_SAMPLES) in input %zu: the busiest moments are under-counted",
				(unsigned long long)pd->lost_records, (unsigned long long)pd->lost_events,
				(unsigned long long)pd->lost_samples, i));
	}
}

static json_t *quality_json(const struct pl_profile *p)
{
	json_t *warnings = json_array();
	uint64_t total = 0;

	for (size_t e = 0; e < p->nevents; e++)
		total += p->events[e].samples;
	event_warnings(p, warnings);
	if (p->nevents > 1)
		json_array_append_new(warnings, json_sprintf(
			"%zu events in one capture: each is analyzed on its own, never summed", p->nevents));
	if (p->records_malformed)
		json_array_append_new(warnings, json_sprintf(
			"%llu malformed lines were skipped (see provenance.malformed_preview)",
			(unsigned long long)p->records_malformed));
	if (p->names_escaped)
		json_array_append_new(warnings, json_sprintf(
			"%llu names held bytes that are not UTF-8 (or a backslash): they read in the escaped "
			"form of docs/paths.md (\\xHH for such a byte, \\\\ for a backslash)",
			(unsigned long long)p->names_escaped));
	if (p->ntails)
		json_array_append_new(warnings, json_sprintf(
			"%zu last record(s) had no closing blank line: kept here, though stackcollapse-perf.pl drops them",
			p->ntails));
	if (total == 0 && p->nstats == 0)
		json_array_append_new(warnings, json_string("no samples were found in the input"));
	for (size_t i = 0; i < p->nnotes; i++)
		json_array_append_new(warnings, json_string(p->notes[i]));
	lost_warnings(p, warnings);
	if (p->recovery.user_frames_unknown > p->recovery.recovered)
		json_array_append_new(warnings, json_sprintf(
			"%llu unique user frames stay [unknown] (quality.frame_recovery says why); "
			"do not read their share as any function's",
			(unsigned long long)(p->recovery.user_frames_unknown - p->recovery.recovered)));
	json_t *caller_check = p->caller_check.attempted ? caller_check_json(p, warnings) : NULL;
	json_t *q = json_pack("{s:I,s:o,s:o,s:o}", "unterminated_records", (json_int_t)p->ntails,
			      "warnings", warnings, "frame_recovery", recovery_json(p),
			      "build_ids", build_ids_json(p));

	if (caller_check)
		json_object_set_new(q, "caller_check", caller_check);
	json_object_set_new(q, "time", time_quality(p, warnings));
	names_quality(p, q, warnings);
	return q;
}

static json_t *events_json(const struct pl_profile *p)
{
	json_t *events = json_array();

	for (uint32_t e = 0; e < p->nevents; e++) {
		const struct pl_event *ev = &p->events[e];
		json_array_append_new(events, json_pack("{s:s,s:s,s:I,s:I,s:I}",
			"name", pl_str(p, ev->name), "unit", pl_event_unit(p, e),
			"samples", (json_int_t)ev->samples, "period", (json_int_t)ev->period,
			"records_without_period", (json_int_t)ev->records_without_period));
	}
	return events;
}

static json_t *threads_json(const struct pl_profile *p)
{
	json_t *threads = json_array();

	for (size_t i = 0; i < pl_nthreads(p); i++) {
		const struct pl_thread *t = &p->threads[i];
		json_array_append_new(threads, json_pack("{s:o,s:o,s:o}",
			"pid", opt_i64(t->pid), "tid", opt_i64(t->tid), "comm", opt_str(p, t->comm)));
	}
	return threads;
}

static json_t *stats_json(const struct pl_profile *p)
{
	json_t *stats = json_array();

	for (size_t i = 0; i < p->nstats; i++)
		json_array_append_new(stats, stat_block_json(p->stats[i]));
	return stats;
}

/* ------------------------------------------------------------ writing */

struct sw {
	json_dump_callback_t emit;
	void *data;
	struct pl_buf *capture;   /* when set, bytes go here instead */
	int depth;                /* containers open */
	bool first;               /* the innermost holds nothing yet */
	bool failed;              /* jansson could not encode a value */
	char **shorts;            /* the functions' short names (demangle.h) */
};

static void sw_raw(struct sw *w, const char *s, size_t n)
{
	if (w->capture)
		pl_buf_add(w->capture, s, n);
	else
		w->emit(s, n, w->data);
}

static void sw_newline(struct sw *w, int depth)
{
	static const char spaces[] = "\n                                ";

	sw_raw(w, spaces, 1);
	for (int left = depth; left > 0; left -= 32)
		sw_raw(w, spaces + 1, left < 32 ? (size_t)left : 32);
}

/* A value dumped `depth` deep: each line jansson starts gets that much
 * more indentation (JSON strings hold no raw newline). */
struct sw_nested {
	struct sw *w;
	int depth;
};

static int sw_nested_write(const char *s, size_t n, void *data)
{
	struct sw_nested *d = data;
	const char *nl;

	/* Most tokens are a byte or two; those skip memchr's call. */
	if (n == 1) {
		if (*s == '\n')
			sw_newline(d->w, d->depth);
		else
			sw_raw(d->w, s, 1);
		return 0;
	}
	while ((nl = memchr(s, '\n', n))) {
		sw_raw(d->w, s, (size_t)(nl - s));
		sw_newline(d->w, d->depth);
		n -= (size_t)(nl + 1 - s);
		s = nl + 1;
	}
	sw_raw(d->w, s, n);
	return 0;
}

static void sw_dump(struct sw *w, json_t *v)
{
	struct sw_nested d = {w, w->depth};

	if (!v || json_dump_callback(v, sw_nested_write, &d,
				     PL_DUMP_FLAGS | JSON_INDENT(1) | JSON_ENCODE_ANY) != 0)
		w->failed = true;
}

/* `v` as it would be written at the current depth, into `text`. */
static void sw_encode(struct sw *w, json_t *v, struct pl_buf *text)
{
	struct pl_buf *was = w->capture;

	w->capture = text;
	sw_dump(w, v);
	w->capture = was;
}

/* Start the next member of the innermost container: its key (a plain
 * identifier) in an object, nothing more in an array. */
static void sw_member(struct sw *w, const char *key)
{
	if (!w->first)
		sw_raw(w, ",", 1);
	w->first = false;
	sw_newline(w, w->depth);
	if (key) {
		sw_raw(w, "\"", 1);
		sw_raw(w, key, strlen(key));
		sw_raw(w, "\":", 2);
	}
}

/* A member whose value jansson dumps; `v` is borrowed, and NULL (a value
 * jansson could not make) leaves the member out. */
static void sw_value(struct sw *w, const char *key, json_t *v)
{
	if (!v)
		return;
	sw_member(w, key);
	sw_dump(w, v);
}

static void sw_value_new(struct sw *w, const char *key, json_t *v)
{
	sw_value(w, key, v);
	json_decref(v);
}

/* A member whose value was encoded before (sw_encode, same depth). */
static void sw_text(struct sw *w, const char *key, const struct pl_buf *text)
{
	sw_member(w, key);
	sw_raw(w, text->data, text->len);
}

/* Open a container ('{' or '[') as a member of the innermost one (`key`
 * as in sw_member), or as the document when nothing is open. */
static void sw_open(struct sw *w, const char *key, char bracket)
{
	if (w->depth > 0)
		sw_member(w, key);
	sw_raw(w, &bracket, 1);
	w->depth++;
	w->first = true;
}

static void sw_close(struct sw *w, char bracket)
{
	w->depth--;
	if (!w->first)
		sw_newline(w, w->depth);
	sw_raw(w, &bracket, 1);
	w->first = false;
}

/* ---------------------------------------------------------- functions */

/* The encoded texts function entries repeat: DSO names (by string id,
 * each made the first time it is met; one jansson refused, not being
 * UTF-8, stays empty), kinds and the inlined flag. */
struct fn_texts {
	struct pl_buf *dso;       /* [0] for no DSO, [id + 1] for string id */
	bool *dso_made;
	struct pl_buf kind[PL_KIND_UNKNOWN + 1];
	struct pl_buf inlined[2];
};

static void fn_texts_init(struct fn_texts *t, struct sw *w, const struct pl_profile *p)
{
	size_t n = p->strs.count + 1;
	json_t *v;

	memset(t, 0, sizeof(*t));
	t->dso = pl_xcalloc(n, sizeof(*t->dso));
	t->dso_made = pl_xcalloc(n, sizeof(*t->dso_made));
	for (int k = 0; k <= PL_KIND_UNKNOWN; k++) {
		sw_encode(w, v = json_string_nocheck(pl_kind_name((enum pl_kind)k)), &t->kind[k]);
		json_decref(v);
	}
	sw_encode(w, json_false(), &t->inlined[0]);
	sw_encode(w, json_true(), &t->inlined[1]);
}

static void fn_texts_release(struct fn_texts *t, const struct pl_profile *p)
{
	for (size_t i = 0; i < p->strs.count + 1; i++)
		pl_buf_release(&t->dso[i]);
	for (int k = 0; k <= PL_KIND_UNKNOWN; k++)
		pl_buf_release(&t->kind[k]);
	pl_buf_release(&t->inlined[0]);
	pl_buf_release(&t->inlined[1]);
	free(t->dso);
	free(t->dso_made);
}

static const struct pl_buf *dso_text(struct sw *w, const struct pl_profile *p,
				     struct fn_texts *t, uint32_t dso)
{
	size_t i = dso == PL_NOID ? 0 : (size_t)dso + 1;
	json_t *v;

	if (!t->dso_made[i]) {
		t->dso_made[i] = true;
		if ((v = opt_str(p, dso)))
			sw_encode(w, v, &t->dso[i]);
		json_decref(v);
	}
	return t->dso[i].len ? &t->dso[i] : NULL;
}

/* One entry of the function list; a symbol or DSO that is not UTF-8
 * leaves it out, as json_pack always did. */
static void sw_function(struct sw *w, const struct pl_profile *p, const struct pl_func *f,
			struct fn_texts *t, const char *short_name)
{
	json_t *sym = json_string(pl_str(p, f->symbol));
	const struct pl_buf *dso = sym ? dso_text(w, p, t, f->dso) : NULL;

	if (dso) {
		sw_open(w, NULL, '{');
		sw_value(w, "symbol", sym);
		/* a demangled name: its short form and the linker's name */
		if (short_name)
			sw_value_new(w, "short_name", json_string(short_name));
		if (f->linkage != PL_NOID)
			sw_value_new(w, "linkage_name", json_string(pl_str(p, f->linkage)));
		sw_text(w, "dso", dso);
		sw_text(w, "kind", &t->kind[f->kind]);
		sw_text(w, "inlined", &t->inlined[f->inlined]);
		sw_close(w, '}');
	}
	json_decref(sym);
}

static void sw_functions(struct sw *w, const struct pl_profile *p)
{
	struct fn_texts t;

	fn_texts_init(&t, w, p);
	sw_open(w, "functions", '[');
	for (size_t i = 0; i < pl_nfuncs(p); i++)
		sw_function(w, p, &p->funcs[i], &t, w->shorts[i]);
	sw_close(w, ']');
	fn_texts_release(&t, p);
}

/* -------------------------------------------------------------- views */

/* Amounts repeat a lot (every function seen once has the same ones), so
 * a view keeps each distinct one: (samples, period) -> its object, and
 * the text of that object as a hotspot holds it, encoded the first time.
 * Open addressing. */
struct amounts {
	const struct pl_view *v;
	struct amount_slot {
		uint64_t samples, period;
		json_t *obj;
		struct pl_buf text;
	} *slots;
	size_t mask, count;
};

static json_t *amount_json(const struct pl_view *v, const struct pl_amount *a)
{
	return json_pack("{s:I,s:I,s:f}", "samples", (json_int_t)a->samples,
			 "period", (json_int_t)a->period, "percent", pl_percent(v, a->period));
}

static size_t amount_index(const struct amounts *t, uint64_t samples, uint64_t period)
{
	uint64_t key[2] = {samples, period};
	size_t j = pl_strtab_hash(key, sizeof(key)) & t->mask;

	while (t->slots[j].obj &&
	       (t->slots[j].samples != samples || t->slots[j].period != period))
		j = (j + 1) & t->mask;
	return j;
}

static void amounts_grow(struct amounts *t)
{
	struct amount_slot *old = t->slots;
	size_t old_mask = t->mask;

	t->mask = old_mask * 2 + 1;
	t->slots = pl_xcalloc(t->mask + 1, sizeof(*t->slots));
	for (size_t i = 0; i <= old_mask; i++)
		if (old[i].obj)
			t->slots[amount_index(t, old[i].samples, old[i].period)] = old[i];
	free(old);
}

static struct amount_slot *amount_of(struct amounts *t, const struct pl_amount *a)
{
	size_t j = amount_index(t, a->samples, a->period);

	if (!t->slots[j].obj) {
		t->slots[j] = (struct amount_slot){a->samples, a->period, amount_json(t->v, a), {0}};
		if (++t->count * 2 > t->mask) {
			amounts_grow(t);
			j = amount_index(t, a->samples, a->period);
		}
	}
	return &t->slots[j];
}

/* A new reference to the shared amount object of `a`. */
static json_t *amount_shared(struct amounts *t, const struct pl_amount *a)
{
	return json_incref(amount_of(t, a)->obj);
}

static void amounts_release(struct amounts *t)
{
	for (size_t i = 0; i <= t->mask; i++) {
		json_decref(t->slots[i].obj);
		pl_buf_release(&t->slots[i].text);
	}
	free(t->slots);
}

static void sw_amount(struct sw *w, const char *key, struct amounts *t, const struct pl_amount *a)
{
	struct amount_slot *s = amount_of(t, a);

	if (!s->text.len)
		sw_encode(w, s->obj, &s->text);
	sw_text(w, key, &s->text);
}

/* The brief's entry for hotspot `f`: as written, with its function's
 * symbol and DSO. */
static json_t *brief_hotspot(const struct pl_profile *p, struct amounts *t, uint32_t f,
			     char **shorts)
{
	const struct pl_func *fn = &p->funcs[f];

	return json_pack("{s:I,s:o,s:o,s:o,s:s*,s:s*,s:o}", "function", (json_int_t)f,
			 "self", amount_shared(t, &t->v->funcs[f].self),
			 "inclusive", amount_shared(t, &t->v->funcs[f].incl),
			 "symbol", json_string(pl_str(p, fn->symbol)), "short_name", shorts[f],
			 "linkage_name", fn->linkage != PL_NOID ? pl_str(p, fn->linkage) : NULL,
			 "dso", opt_str(p, fn->dso));
}

static void sw_hotspots(struct sw *w, const struct pl_profile *p, struct amounts *t,
			json_t *top)
{
	const struct pl_view *v = t->v;

	sw_open(w, "hotspots", '[');
	for (size_t i = 0; i < v->nhot; i++) {
		uint32_t f = v->hot_order[i];
		sw_open(w, NULL, '{');
		sw_value_new(w, "function", json_integer((json_int_t)f));
		sw_amount(w, "self", t, &v->funcs[f].self);
		sw_amount(w, "inclusive", t, &v->funcs[f].incl);
		sw_close(w, '}');
		if (i < PL_ARTIFACT_TOP)
			json_array_append_new(top, brief_hotspot(p, t, f, w->shorts));
	}
	sw_close(w, ']');
}

static void sw_view(struct sw *w, const struct pl_profile *p, uint32_t event, json_t *top)
{
	struct pl_view v;
	struct amounts t = {&v, pl_xcalloc(256, sizeof(struct amount_slot)), 255, 0};
	json_t *threads = json_array(), *dsos = json_array();

	pl_view_build(&v, p, event);
	sw_open(w, NULL, '{');
	sw_value_new(w, "event", json_string(pl_str(p, p->events[event].name)));
	sw_value_new(w, "unit", json_string(pl_event_unit(p, event)));
	sw_value_new(w, "total", json_pack("{s:I,s:I}", "samples", (json_int_t)v.total.samples,
					   "period", (json_int_t)v.total.period));
	sw_value_new(w, "unique_stacks", json_integer((json_int_t)v.stacks));
	sw_value_new(w, "unknown_self_percent", json_real(pl_percent(&v, v.unknown_leaf.period)));
	sw_hotspots(w, p, &t, top);
	for (size_t i = 0; i < v.nthread_order; i++) {
		uint32_t th = v.thread_order[i];
		json_array_append_new(threads, json_pack("{s:I,s:o}", "thread", (json_int_t)th,
			"weight", amount_shared(&t, &v.threads[th])));
	}
	for (size_t i = 0; i < v.ndsos; i++)
		json_array_append_new(dsos, json_pack("{s:o,s:o,s:o}",
			"dso", opt_str(p, v.dso_ids[i]),
			"self", amount_shared(&t, &v.dsos[i].self),
			"inclusive", amount_shared(&t, &v.dsos[i].incl)));
	sw_value_new(w, "threads", threads);
	sw_value_new(w, "dsos", dsos);
	sw_close(w, '}');
	amounts_release(&t);
	pl_view_release(&v);
}

/* ----------------------------------------------------------- document */

enum pl_err pl_summary_write(struct pl_profile *p, json_dump_callback_t emit, void *data,
			     void (*before_hashes)(void *data), json_t *brief,
			     struct pl_error *err)
{
	struct sw w = {emit, data, NULL, 0, true, false};
	json_t *top = json_array();
	enum pl_err rc;

	json_object_set_new(brief, "events", events_json(p));
	json_object_set_new(brief, "quality", quality_json(p));
	json_object_set_new(brief, "top_hotspots", top);
	sw_open(&w, NULL, '{');
	sw_value_new(&w, "schema", json_string("perflens.analysis"));
	sw_value_new(&w, "version", json_integer(PL_ANALYSIS_SCHEMA_VERSION));
	sw_value_new(&w, "id", json_string(PL_SUMMARY_ID_PLACEHOLDER));
	sw_value(&w, "quality", json_object_get(brief, "quality"));
	sw_value(&w, "events", json_object_get(brief, "events"));
	w.shorts = pl_profile_short_names(p);
	sw_functions(&w, p);
	sw_value_new(&w, "threads", threads_json(p));
	sw_open(&w, "views", '[');
	for (uint32_t e = 0; e < p->nevents; e++) {
		json_t *view_top = json_array();
		sw_view(&w, p, e, view_top);
		json_array_append_new(top, view_top);
	}
	sw_close(&w, ']');
	sw_value_new(&w, "perf_stat", stats_json(p));
	if (p->sched)
		sw_value_new(&w, "sched", pl_sched_json(p, 0, NULL));
	if (before_hashes && pl_parse_hashes_busy(p))
		before_hashes(data);
	pl_short_names_free(w.shorts, pl_nfuncs(p));
	if ((rc = pl_parse_finish_hashes(p, err)))
		return rc;
	sw_value_new(&w, "provenance", provenance_json(p));
	sw_close(&w, '}');
	if (w.failed)
		return pl_fail(err, PL_ERR_INTERNAL, NULL, "a value of the summary could not be encoded");
	return PL_OK;
}
