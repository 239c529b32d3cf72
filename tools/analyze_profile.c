/* analyze_profile.c - the analyze_profile tool: parse a profile, write its
 * artifact, and answer with a summary small enough for a model to read.
 *
 * The full analysis lives in the artifact; the answer carries only the
 * events, the top 5 self hotspots of each (at most 8 events), the record
 * counts, the data-quality warnings, the modules whose frames stayed
 * unnamed or without lines (with the --binary that would name them) and
 * the calls that come next.  With srcline, a perf.data's lines and inline
 * frames come from PerfLens's libdw symbolizer (symbols/srclines.h).
 */
#include "registry.h"
#include "base/escape.h"
#include "tools/lib/perf_data_read.h"
#include "tools/lib/session_quality.h"
#include "profile/parse.h"
#include "store/artifact.h"
#include "symbols/cfi.h"
#include "store/sched_json.h"
#include "symbols/recover.h"
#include "symbols/srclines.h"

#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define TOP_HOTSPOTS PL_ARTIFACT_TOP
#define MAX_EVENTS_SHOWN 8
#define SCHED_TASKS_SHOWN 10

/* The first hotspots of view `view_index`, from the writer's brief. */
static json_t *top_hotspots(json_t *brief, size_t view_index)
{
	json_t *top = json_array_get(json_object_get(brief, "top_hotspots"), view_index);
	json_t *out = json_array(), *h;
	size_t i;

	json_array_foreach(top, i, h) {
		json_int_t f = json_integer_value(json_object_get(h, "function"));
		char id[32];
		if (i >= TOP_HOTSPOTS)
			break;
		snprintf(id, sizeof(id), "fn%lld", (long long)f);
		json_array_append_new(out, json_pack("{s:s,s:O,s:O*,s:O*,s:O,s:O,s:O}",
			"hotspot_id", id, "symbol", json_object_get(h, "symbol"),
			"short_name", json_object_get(h, "short_name"),
			"linkage_name", json_object_get(h, "linkage_name"),
			"dso", json_object_get(h, "dso"),
			"self_percent", json_object_get(json_object_get(h, "self"), "percent"),
			"inclusive_percent", json_object_get(json_object_get(h, "inclusive"), "percent")));
	}
	return out;
}

static json_t *events_json(json_t *summary, const char *only)
{
	json_t *out = json_array(), *e;
	size_t i;

	json_array_foreach(json_object_get(summary, "events"), i, e) {
		const char *name = json_string_value(json_object_get(e, "name"));
		if (only && strcmp(only, name) != 0)
			continue;
		if (json_array_size(out) >= MAX_EVENTS_SHOWN)
			break;
		json_array_append_new(out, json_pack("{s:O,s:O,s:O,s:O,s:o}",
			"name", json_object_get(e, "name"), "unit", json_object_get(e, "unit"),
			"samples", json_object_get(e, "samples"), "period", json_object_get(e, "period"),
			"top_hotspots", top_hotspots(summary, i)));
	}
	return out;
}

/* Where the digest cache is, under the artifact root. */
#define DIGESTS "cache/digests"

/* An input's sha256 taken from the digest cache: the entry and the
 * identity the file had, and still has (base/digest_cache.h).  Only the
 * call's result says so: the artifact, and so the analysis id, is the
 * same whichever way the digest was obtained. */
static json_t *sha256_from(const struct pl_source *s)
{
	const struct pl_file_identity *id = &s->identity;

	return json_pack("{s:s+,s:{s:I,s:I,s:I,s:I,s:I}}", "cache", DIGESTS "/", s->sha256_cache_entry,
		"identity", "dev", (json_int_t)id->dev, "ino", (json_int_t)id->ino,
		"size", (json_int_t)id->size, "mtime_ns", (json_int_t)id->mtime_ns,
		"ctime_ns", (json_int_t)id->ctime_ns);
}

static json_t *inputs_json(const struct pl_profile *p)
{
	json_t *out = json_array();

	for (size_t i = 0; i < p->nsources; i++) {
		json_t *in = json_pack("{s:o,s:s,s:I,s:s}",
			"path", pl_json_bytes(p->sources[i].path), "format", pl_format_name(p->sources[i].format),
			"size", (json_int_t)p->sources[i].size, "sha256", p->sources[i].sha256);
		if (p->sources[i].sha256_cache_entry)
			json_object_set_new(in, "sha256_from", sha256_from(&p->sources[i]));
		json_array_append_new(out, in);
	}
	return out;
}

/* The first event with a frame-pointer edge that may skip a caller (the
 * caller check), or PL_NOID. */
static uint32_t event_missing_callers(const struct pl_profile *p)
{
	for (size_t i = 0; i < p->nmarked; i++) {
		size_t n;
		const uint32_t *w = pl_mark_words(p, p->marked[i].mark, &n);
		for (size_t k = 0; k < n; k++)
			if (PL_MARK_EDGE(w[k]) == PL_EDGE_MAY_SKIP)
				return p->marked[i].event;
	}
	return PL_NOID;
}

/* Tool calls to make next, with this analysis' values filled in. */
static json_t *next_steps(const char *id, const struct pl_profile *p)
{
	json_t *out = json_array();
	const char *ev = p->nevents ? pl_str(p, p->events[0].name) : NULL;
	bool several = p->nevents > 1;

	if (ev) {
		json_array_append_new(out, tool_next_step("classify_hotspots", json_pack("{s:s}", "analysis_id", id),
			"candidate causes per event, each with its evidence and what is missing"));
		json_array_append_new(out, tool_next_step("list_hotspots",
			several ? json_pack("{s:s,s:s}", "analysis_id", id, "event", ev)
				: json_pack("{s:s}", "analysis_id", id),
			several ? "the heaviest functions of one event (this profile holds several: name one per call)"
				: "the heaviest functions, by self weight"));
	}
	if (event_missing_callers(p) != PL_NOID)
		json_array_append_new(out, tool_next_step("collect_profile",
			json_pack("{s:s,s:[s],s:s}", "mode", "record",
				  "events", pl_str(p, p->events[event_missing_callers(p)].name), "call_graph", "dwarf"),
			"frame-pointer stacks may skip callers (quality.caller_check): DWARF unwinding records them"));
	if (p->nstats)
		json_array_append_new(out, tool_next_step("get_perf_stat", json_pack("{s:s}", "analysis_id", id),
			"the perf stat counters, block by block"));
	if (ev)
		json_array_append_new(out, tool_next_step("export_profile",
			several ? json_pack("{s:s,s:s,s:s}", "analysis_id", id, "format", "svg", "event", ev)
				: json_pack("{s:s,s:s}", "analysis_id", id, "format", "svg"),
			"a flame graph for a person to look at"));
	return out;
}

/* Modules none of whose local candidates had the recorded build-id, and
 * the flag that would name their frames. */
static json_t *missing_binaries(const struct pl_profile *p)
{
	const struct pl_recovery *r = &p->recovery;
	json_t *out = json_array();

	for (size_t i = 0; i < r->nmissing; i++) {
		const struct pl_missing_module *m = &r->missing[i];
		json_t *o = json_pack("{s:s,s:I,s:I}", "dso", pl_str(p, m->dso),
			"unknown_frames", (json_int_t)m->unknown_frames,
			"frames_without_lines", (json_int_t)m->frames_without_lines);
		if (m->build_id[0]) {
			json_object_set_new(o, "build_id", json_string(m->build_id));
			json_object_set_new(o, "fix", json_sprintf(
				"start the server (or the CLI) with --binary FILE, FILE a copy of '%s' "
				"with build-id %s", pl_str(p, m->dso), m->build_id));
		} else {
			json_object_set_new(o, "fix", json_string(
				"the recording names no build-id for it (perf records those of sampled "
				"modules only) and the local file is not the one mapped: record with "
				"perf record --buildid-all"));
		}
		json_array_append_new(out, o);
	}
	return out;
}

/* Name the user frames perf left [unknown] where a local binary is
 * verifiably the profiled one (recover.h), then mark the frame-pointer
 * edges that may skip a caller (cfi.h) and, with srcline, give the frames
 * their lines and inline frames (srclines.h); debuginfod when configured. */
static enum pl_err recover_frames(const struct tool_ctx *ctx, struct pl_profile *p,
				  struct pl_error *err)
{
	char cache[PATH_MAX], index_dir[PATH_MAX];
	struct pl_debuginfod dbg = {ctx->sym.debuginfod_urls, ctx->sym.debuginfod_timeout_ms, NULL, 0};
	bool indexed = false;
	enum pl_err rc;

	if (ctx->allow_writes && ctx->artifact_root &&
	    snprintf(cache, sizeof(cache), "%s/debuginfod-cache", ctx->artifact_root) < (int)sizeof(cache))
		dbg.cache_dir = cache;
	/* The symbol indexes symbolize keeps: the same answers, without
	 * inflating a module's DWARF on every analysis. */
	if (ctx->allow_writes && ctx->artifact_root &&
	    snprintf(index_dir, sizeof(index_dir), "%s/cache/symindex", ctx->artifact_root) < (int)sizeof(index_dir))
		indexed = true;
	rc = pl_recover_frames(p, &ctx->sym, dbg.urls ? &dbg : NULL, indexed ? index_dir : NULL, err);
	if (rc == PL_OK)
		rc = pl_cfi_check_callers(p, &ctx->sym, dbg.urls ? &dbg : NULL, err);
	/* After the check: the restack carries its marks to the new stacks. */
	if (rc == PL_OK && p->keep_addrs)
		rc = pl_srclines_apply(p, &ctx->sym, dbg.urls ? &dbg : NULL, err);
	return rc;
}

/* ------------------------------------------------ device session folders */

static int cmp_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* One maps_NNNNN.json (the agent's /proc/PID/maps, extension 2 of
 * docs/agent-protocol.md) as mappings and build-ids of the profile, so
 * that [unknown] frames of absolute addresses get verified load bases
 * (symbols/recover.h); the count of mappings taken. */
static size_t take_maps(struct pl_profile *p, json_t *doc)
{
	json_t *maps = json_object_get(doc, "maps"), *m;
	json_int_t pid = json_integer_value(json_object_get(doc, "pid"));
	size_t i, n = 0;

	json_array_foreach(maps, i, m) {
		const char *start = json_string_value(json_object_get(m, "start"));
		const char *end = json_string_value(json_object_get(m, "end"));
		const char *off = json_string_value(json_object_get(m, "offset"));
		const char *path = json_string_value(json_object_get(m, "path"));
		const char *bid = json_string_value(json_object_get(m, "build_id"));
		const char *dev = json_string_value(json_object_get(m, "dev"));
		struct pl_mapping map = {.pid = pid};
		char raw[4096];
		unsigned maj, min;
		if (!start || !end || !off || !path || p->nmappings >= PL_MAX_MAPPINGS ||
		    !pl_esc_decode(path, raw, sizeof(raw)))
			continue;
		map.start = strtoull(start, NULL, 16);
		map.len = strtoull(end, NULL, 16) - map.start;
		map.pgoff = strtoull(off, NULL, 16);
		if (map.len == 0 || map.len > (1ull << 46))
			continue;
		map.path = pl_intern_str(p, raw, strlen(raw));
		if (dev && sscanf(dev, "%x:%x", &maj, &min) == 2 && json_integer_value(json_object_get(m, "inode")) > 0) {
			map.has_file_id = true;
			map.dev_major = maj;
			map.dev_minor = min;
			map.ino = (uint64_t)json_integer_value(json_object_get(m, "inode"));
		}
		PL_GROW(p->mappings, p->mappings_cap, p->nmappings + 1);
		p->mappings[p->nmappings++] = map;
		n++;
		if (bid && strlen(bid) < sizeof(p->build_ids[0].hex) && p->nbuild_ids < PL_MAX_BUILD_IDS) {
			bool have = false;
			for (size_t k = 0; k < p->nbuild_ids && !have; k++)
				have = p->build_ids[k].dso == map.path;
			if (!have) {
				PL_GROW(p->build_ids, p->build_ids_cap, p->nbuild_ids + 1);
				p->build_ids[p->nbuild_ids].dso = map.path;
				snprintf(p->build_ids[p->nbuild_ids].hex, sizeof(p->build_ids[0].hex), "%s", bid);
				p->nbuild_ids++;
			}
		}
	}
	return n;
}

/* A session folder's maps files into the profile, and what the answer says
 * of the session (new): live (its metadata.json says so), chunks read
 * now, the chunks and gaps the link recorded, the samples of each chunk
 * (session_quality.h: what does not add up becomes notes). */
static json_t *session_of(const char *dir, struct pl_profile *p)
{
	char path[PATH_MAX + 64];
	json_t *meta, *out;
	struct dirent *de;
	char **names = NULL;
	size_t n = 0, cap = 0, mappings = 0;
	DIR *d;

	snprintf(path, sizeof(path), "%s/metadata.json", dir);
	meta = json_load_file(path, 0, NULL);
	if ((d = opendir(dir))) {
		while ((de = readdir(d)))
			if (strncmp(de->d_name, "maps_", 5) == 0 && strstr(de->d_name, ".json") &&
			    !strstr(de->d_name, ".tmp-")) {
				PL_GROW(names, cap, n + 1);
				names[n++] = pl_xstrdup(de->d_name);
			}
		closedir(d);
	}
	if (n)
		qsort(names, n, sizeof(*names), cmp_name);
	for (size_t i = 0; i < n; i++) {
		struct stat sb;
		json_t *doc;
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		if (stat(path, &sb) == 0 && sb.st_size <= (1 << 20) && (doc = json_load_file(path, 0, NULL))) {
			mappings += take_maps(p, doc);
			json_decref(doc);
		}
		free(names[i]);
	}
	free(names);
	out = json_pack("{s:b,s:I,s:O,s:I,s:b,s:I,s:I}", "live", json_is_true(json_object_get(meta, "live")),
			"chunks_read", (json_int_t)p->nsources,
			"chunks", json_object_get(meta, "chunks") ? json_object_get(meta, "chunks") : json_null(),
			"gaps", (json_int_t)json_array_size(json_object_get(meta, "gaps")),
			"recovered", json_is_true(json_object_get(meta, "recovered")),
			"maps_files", (json_int_t)n, "mappings", (json_int_t)mappings);
	/* How it ended (stopped, by its duration, on the device), and what of
	 * its numbers does not add up (notes of the data quality). */
	json_object_set(out, "ended", json_is_string(json_object_get(meta, "ended"))
			? json_object_get(meta, "ended") : json_null());
	tool_session_quality(p, meta, out);
	json_decref(meta);
	return out;
}

/* How the input is read: its format, the folded event name, and perf.data
 * through collectors/ when perf may run (else why it may not). */
static void parse_opts_of(const struct tool_ctx *ctx, json_t *args, struct pl_parse_opts *opts,
			  char *dbg_cache, char *digests, size_t cap)
{
	pl_format_from_name(json_string_value(json_object_get(args, "format")), &opts->format);
	opts->perf_data.read = tool_perf_data_read;
	if (ctx->allow_process_execution) {
		opts->perf_data.perf_path = ctx->perf.path;
	} else {
		opts->perf_data.refusal = "start the server with --allow-process-execution (perf script "
			"reads it), or convert it yourself with perf script -F "
			"comm,pid,tid,time,event,period,ip,sym,symoff,dso -i FILE > FILE.txt and analyze FILE.txt";
	}
	opts->perf_data.timeout_ms = ctx->perf.timeout_ms;
	opts->perf_data.allowed_roots = ctx->allowed_roots;
	opts->perf_data.nallowed_roots = ctx->nroots;
	/* The server's copy stands for /proc/kallsyms, as does the CLI's copy
	 * per boot: both record the same command, so the same perf.data gives
	 * the same analysis on either surface.  The CLI's copy is made by the
	 * perf.data reader, when there is a perf.data to read: reading and
	 * writing the kernel's table cost a text input 30 ms. */
	if (ctx->perf.kallsyms_path)
		opts->perf_data.kallsyms = ctx->perf.kallsyms_path;
	else if (ctx->allow_writes && ctx->artifact_root)
		opts->perf_data.kallsyms_copy_root = ctx->artifact_root;
	else
		opts->perf_data.kallsyms = "/proc/kallsyms";
	opts->perf_data.kallsyms_shown = "/proc/kallsyms";
	opts->perf_data.buildid_dir = ctx->perf.buildid_dir;
	/* DWARF unwinding finds a moved or rebuilt binary where symbolize
	 * does, debuginfod answers kept where recover_frames keeps them. */
	opts->perf_data.sym = &ctx->sym;
	if (ctx->allow_writes && ctx->artifact_root &&
	    snprintf(dbg_cache, cap, "%s/debuginfod-cache", ctx->artifact_root) < (int)cap)
		opts->perf_data.debuginfod_cache = dbg_cache;
	/* A file analyzed again is not hashed again while it keeps its
	 * identity (base/digest_cache.h); the result says so per input. */
	if (ctx->allow_writes && ctx->artifact_root &&
	    snprintf(digests, cap, "%s/" DIGESTS, ctx->artifact_root) < (int)cap)
		opts->perf_data.digest_cache = opts->digest_cache = digests;
	opts->perf_data.srcline = json_is_true(json_object_get(args, "srcline"));
	opts->folded_event = json_string_value(json_object_get(args, "folded_event"));
	/* The artifact writer waits for the input's hash only where the
	 * provenance needs it. */
	opts->defer_hash = true;
}

/* An input collect_profile made (its folder holds the metadata.json of a
 * collection): the collection's warnings become notes of the data
 * quality, so that a lost chunk or a failed run is not forgotten once
 * the profile is analyzed. */
static void collection_notes(const char *real, struct pl_profile *p)
{
	char meta_path[PATH_MAX + 16], note[1200];
	const char *slash = strrchr(real, '/');
	json_t *meta, *w;
	size_t i;

	if (!slash)
		return;
	snprintf(meta_path, sizeof(meta_path), "%.*s/metadata.json", (int)(slash - real), real);
	if (access(meta_path, R_OK) != 0 || !(meta = json_load_file(meta_path, 0, NULL)))
		return;
	if (json_is_string(json_object_get(meta, "schema")) &&
	    strcmp(json_string_value(json_object_get(meta, "schema")), "perflens.collection") == 0)
		json_array_foreach(json_object_get(meta, "warnings"), i, w)
			if (json_is_string(w)) {
				snprintf(note, sizeof(note), "the collection that made this input warned: %s",
					 json_string_value(w));
				pl_profile_add_note(p, note);
			}
	json_decref(meta);
}

/* The answer for the analysis `ref` of `p` (new). */
static json_t *analysis_json(const struct pl_profile *p, const struct pl_artifact_ref *ref, json_t *summary,
			     const char *event, json_t *session)
{
	char uri[128];
	json_t *r;

	snprintf(uri, sizeof(uri), "perflens://artifacts/analyses/%s.json", ref->id);
	r = json_pack("{s:s,s:{s:o,s:o,s:s},s:o,s:{s:I,s:I,s:I},s:o,s:I,s:O,s:o,s:o}",
		"analysis_id", ref->id,
		"artifact", "summary_path", pl_json_bytes(ref->summary_path),
		"stacks_path", pl_json_bytes(ref->stacks_path), "uri", uri,
		"inputs", inputs_json(p),
		"records", "parsed", (json_int_t)p->records_parsed,
		"skipped", (json_int_t)p->records_skipped, "malformed", (json_int_t)p->records_malformed,
		"events", events_json(summary, event),
		"perf_stat_blocks", (json_int_t)p->nstats,
		"warnings", json_object_get(json_object_get(summary, "quality"), "warnings"),
		"missing_binaries", missing_binaries(p),
		"next_steps", next_steps(ref->id, p));
	if (p->sched)
		json_object_set_new(r, "sched", pl_sched_json(p, SCHED_TASKS_SHOWN, NULL));
	if (session)
		json_object_set(r, "session", session);
	return r;
}

enum pl_err tool_analyze_profile(const struct tool_ctx *ctx, json_t *args,
				 json_t **result, struct pl_error *err)
{
	const char *path = json_string_value(json_object_get(args, "path"));
	const char *event = json_string_value(json_object_get(args, "event"));
	struct pl_parse_opts opts = {0};
	struct pl_artifact_ref ref;
	struct pl_profile p;
	char real[PATH_MAX], dbg_cache[PATH_MAX], digests[PATH_MAX];
	json_t *summary = NULL, *session = NULL;
	struct stat sb;
	bool is_session;
	enum pl_err rc;

	if ((rc = tool_require_writes(ctx, err)) ||
	    (rc = tool_resolve_input(ctx, path, real, sizeof(real), err)))
		return rc;
	parse_opts_of(ctx, args, &opts, dbg_cache, digests, sizeof(dbg_cache));
	pl_profile_init(&p, &ctx->limits);
	is_session = stat(real, &sb) == 0 && S_ISDIR(sb.st_mode);
	/* srcline of a device session (perf script text in chunks): frames
	 * keep their addresses, which the session's maps (build-ids, load
	 * bases) turn into lines from the binary the server finds for that
	 * build-id (--binary, --sysroot, debuginfod), as for perf.data.  Text
	 * without maps proves no binary: srcline stays perf.data's and
	 * sessions' only. */
	p.keep_addrs = opts.perf_data.srcline && is_session;
	rc = pl_parse_path(&p, real, &opts, err);
	if (rc == PL_OK && event && pl_find_event(&p, event) == PL_NOID) {
		uint32_t ignored;
		rc = tool_pick_event(&p, event, false, &ignored, err);
	}
	if (rc == PL_OK && is_session)
		session = session_of(real, &p);
	else if (rc == PL_OK)
		collection_notes(real, &p);
	if (rc == PL_OK && (rc = recover_frames(ctx, &p, err)) == PL_OK &&
	    (rc = pl_artifact_write(&p, ctx->artifact_root, &ref, &summary, err)) == PL_OK)
		*result = analysis_json(&p, &ref, summary, event, session);
	json_decref(session);
	json_decref(summary);
	pl_profile_release(&p);
	return rc;
}
