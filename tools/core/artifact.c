/* artifact.c - writing and reading analysis artifacts (see artifact.h).
 *
 * The stack table can be large, so it is streamed: jansson encodes each
 * element and we write only the container punctuation between them; the
 * bytes are hashed as they go.  The summary is built as one jansson
 * document (it is bounded by the number of functions).  Every list is in
 * id order or a total order, and reals are printed with 10 significant
 * digits, which makes the output byte-identical for the same input.
 */
#include "artifact.h"
#include "aggregate.h"
#include "perf_stat.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <nettle/sha2.h>

/* ---------------------------------------------------------- atomic files */

static enum pl_err make_dirs(const char *path, struct pl_error *err)
{
	char buf[4096];
	size_t n = strlen(path);

	if (n >= sizeof(buf))
		return pl_fail(err, PL_ERR_OUTPUT, "use a shorter artifact root", "path too long: '%s'", path);
	memcpy(buf, path, n + 1);
	for (size_t i = 1; i <= n; i++) {
		if (buf[i] != '/' && buf[i] != '\0')
			continue;
		buf[i] = '\0';
		if (mkdir(buf, 0755) < 0 && errno != EEXIST)
			return pl_fail(err, PL_ERR_OUTPUT, "check that the artifact root is writable",
				       "cannot create folder '%s': %s", buf, strerror(errno));
		buf[i] = i < n ? '/' : '\0';
	}
	return PL_OK;
}

enum pl_err pl_atomic_open(struct pl_atomic_file *af, const char *path,
			   struct pl_error *err)
{
	char dir[4096];
	const char *slash = strrchr(path, '/');
	int fd;

	memset(af, 0, sizeof(*af));
	if (strlen(path) + 16 >= sizeof(af->tmp))
		return pl_fail(err, PL_ERR_OUTPUT, "use a shorter path", "path too long: '%s'", path);
	snprintf(af->path, sizeof(af->path), "%s", path);
	if (slash && slash != path) {
		snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path), path);
		if (make_dirs(dir, err))
			return err->code;
	}
	snprintf(af->tmp, sizeof(af->tmp), "%s.tmp-XXXXXX", path);
	fd = mkostemp(af->tmp, O_CLOEXEC);
	if (fd < 0)
		return pl_fail(err, PL_ERR_OUTPUT, "check that the artifact root is writable",
			       "cannot create '%s': %s", af->tmp, strerror(errno));
	fchmod(fd, 0644);
	af->fp = fdopen(fd, "w");
	if (!af->fp) {
		close(fd);
		unlink(af->tmp);
		return pl_fail(err, PL_ERR_INTERNAL, NULL, "fdopen failed");
	}
	return PL_OK;
}

void pl_atomic_abort(struct pl_atomic_file *af)
{
	if (af->fp)
		fclose(af->fp);
	if (af->tmp[0])
		unlink(af->tmp);
	af->fp = NULL;
	af->tmp[0] = '\0';
}

enum pl_err pl_atomic_commit(struct pl_atomic_file *af, struct pl_error *err)
{
	bool bad = fflush(af->fp) != 0 || ferror(af->fp) || fsync(fileno(af->fp)) != 0;

	if (fclose(af->fp) != 0)
		bad = true;
	af->fp = NULL;
	if (bad || rename(af->tmp, af->path) != 0) {
		int e = errno;
		unlink(af->tmp);
		return pl_fail(err, PL_ERR_OUTPUT, "check free space and permissions at the artifact root",
			       "cannot write '%s': %s", af->path, strerror(e));
	}
	return PL_OK;
}

enum pl_err pl_write_file_atomic(const char *path, const void *data,
				 size_t len, struct pl_error *err)
{
	struct pl_atomic_file af;

	if (pl_atomic_open(&af, path, err))
		return err->code;
	if (fwrite(data, 1, len, af.fp) != len) {
		pl_atomic_abort(&af);
		return pl_fail(err, PL_ERR_OUTPUT, "check free space", "cannot write '%s'", path);
	}
	return pl_atomic_commit(&af, err);
}

/* ------------------------------------------------------- stack table out */

struct hashed_out {
	FILE *fp;
	struct sha256_ctx sha;
	bool failed;
};

static void out_raw(struct hashed_out *o, const char *s, size_t n)
{
	sha256_update(&o->sha, n, (const uint8_t *)s);
	if (fwrite(s, 1, n, o->fp) != n)
		o->failed = true;
}

static void out_str(struct hashed_out *o, const char *s)
{
	out_raw(o, s, strlen(s));
}

/* Encode one value with jansson and write it; steals `v`. */
static void out_value_new(struct hashed_out *o, json_t *v)
{
	char buf[4096];
	size_t n = json_dumpb(v, buf, sizeof(buf), PL_DUMP_FLAGS | JSON_ENCODE_ANY);

	if (n > sizeof(buf)) {
		char *big = json_dumps(v, PL_DUMP_FLAGS | JSON_ENCODE_ANY);
		out_str(o, big);
		free(big);
	} else {
		out_raw(o, buf, n);
	}
	json_decref(v);
}

static json_t *opt_id(uint32_t id)
{
	return id == PL_NOID ? json_null() : json_integer(id);
}

static json_t *opt_i64(int64_t v)
{
	return v < 0 ? json_null() : json_integer(v);
}

static void write_stacks_doc(struct hashed_out *o, const struct pl_profile *p)
{
	out_str(o, "{\"schema\":\"perflens.stacks\",\"version\":1,\"strings\":[");
	for (size_t i = 0; i < p->strs.count; i++) {
		if (i)
			out_str(o, ",");
		out_value_new(o, json_stringn_nocheck(p->strs.strs[i], p->strs.lens[i]));
	}
	out_str(o, "],\"events\":[");
	for (size_t i = 0; i < p->nevents; i++) {
		if (i)
			out_str(o, ",");
		out_value_new(o, json_pack("[I,I]", (json_int_t)p->events[i].name,
					   (json_int_t)p->events[i].records_without_period));
	}
	out_str(o, "],\"functions\":[");
	for (size_t i = 0; i < pl_nfuncs(p); i++) {
		if (i)
			out_str(o, ",");
		out_value_new(o, json_pack("[I,o]", (json_int_t)p->funcs[i].symbol, opt_id(p->funcs[i].dso)));
	}
	out_str(o, "],\"threads\":[");
	for (size_t i = 0; i < pl_nthreads(p); i++) {
		const struct pl_thread *t = &p->threads[i];
		if (i)
			out_str(o, ",");
		out_value_new(o, json_pack("[o,o,o]", opt_i64(t->pid), opt_i64(t->tid), opt_id(t->comm)));
	}
	out_str(o, "],\"frames\":[");
	for (size_t i = 0; i < pl_nframes(p); i++) {
		const struct pl_frame *f = &p->frames[i];
		char addr[24];
		if (i)
			out_str(o, ",");
		snprintf(addr, sizeof(addr), "%llx", (unsigned long long)f->addr);
		out_value_new(o, json_pack("[I,o,o]", (json_int_t)f->func,
					   f->has_addr ? json_string(addr) : json_null(),
					   opt_id(f->srcline)));
	}
	out_str(o, "],\"stacks\":[");
	for (size_t i = 0; i < pl_nstacks(p); i++) {
		const struct pl_stack *s = &p->stacks[i];
		json_t *frames = json_array(), *weights = json_array();
		if (i)
			out_str(o, ",");
		for (uint32_t d = 0; d < s->depth; d++)
			json_array_append_new(frames, json_integer(s->frames[d]));
		for (uint32_t w = s->first_weight; w != PL_NOID; w = p->weights[w].next)
			json_array_append_new(weights, json_pack("[I,I,I]",
				(json_int_t)p->weights[w].event, (json_int_t)p->weights[w].samples,
				(json_int_t)p->weights[w].period));
		out_value_new(o, json_pack("[I,o,o]", (json_int_t)s->thread, frames, weights));
	}
	out_str(o, "],\"tails\":[");
	for (size_t i = 0; i < p->ntails; i++) {
		if (i)
			out_str(o, ",");
		out_value_new(o, json_pack("[I,I,I]", (json_int_t)p->tails[i].stack,
					   (json_int_t)p->tails[i].event, (json_int_t)p->tails[i].period));
	}
	out_str(o, "]}\n");
}

/* ----------------------------------------------------------- summary */

static json_t *amount_json(const struct pl_view *v, const struct pl_amount *a)
{
	return json_pack("{s:I,s:I,s:f}", "samples", (json_int_t)a->samples,
			 "period", (json_int_t)a->period, "percent", pl_percent(v, a->period));
}

static json_t *opt_str(const struct pl_profile *p, uint32_t id)
{
	return id == PL_NOID ? json_null() : json_string(pl_str(p, id));
}

static json_t *view_json(const struct pl_profile *p, uint32_t event)
{
	struct pl_view v;
	json_t *hot = json_array(), *threads = json_array(), *dsos = json_array();
	json_t *out;

	pl_view_build(&v, p, event);
	for (size_t i = 0; i < v.nhot; i++) {
		uint32_t f = v.hot_order[i];
		json_array_append_new(hot, json_pack("{s:I,s:o,s:o}", "function", (json_int_t)f,
			"self", amount_json(&v, &v.funcs[f].self),
			"inclusive", amount_json(&v, &v.funcs[f].incl)));
	}
	for (size_t i = 0; i < v.nthread_order; i++) {
		uint32_t t = v.thread_order[i];
		json_array_append_new(threads, json_pack("{s:I,s:o}", "thread", (json_int_t)t,
			"weight", amount_json(&v, &v.threads[t])));
	}
	for (size_t i = 0; i < v.ndsos; i++)
		json_array_append_new(dsos, json_pack("{s:o,s:o,s:o}",
			"dso", opt_str(p, v.dso_ids[i]),
			"self", amount_json(&v, &v.dsos[i].self),
			"inclusive", amount_json(&v, &v.dsos[i].incl)));
	out = json_pack("{s:s,s:s,s:{s:I,s:I},s:I,s:f,s:o,s:o,s:o}",
		"event", pl_str(p, p->events[event].name),
		"unit", pl_event_unit(p, event),
		"total", "samples", (json_int_t)v.total.samples, "period", (json_int_t)v.total.period,
		"unique_stacks", (json_int_t)v.stacks,
		"unknown_self_percent", pl_percent(&v, v.unknown_leaf.period),
		"hotspots", hot, "threads", threads, "dsos", dsos);
	pl_view_release(&v);
	return out;
}

static json_t *stat_block_json(const struct pl_stat_block *b)
{
	json_t *counters = json_array();

	for (size_t i = 0; i < b->ncounters; i++) {
		const struct pl_stat_counter *c = &b->counters[i];
		json_t *o = json_pack("{s:s,s:s}", "event", c->event, "status", pl_stat_status_name(c->status));
		if (c->status == PL_STAT_COUNTED)
			/* Counts beyond json_int_t's range stay reals. */
			json_object_set_new(o, "value", c->is_integer && c->value < 9.2e18 && c->value > -9.2e18 ?
					    json_integer((json_int_t)c->value) : json_real(c->value));
		else
			json_object_set_new(o, "value", json_null());
		json_object_set_new(o, "unit", json_string(c->unit ? c->unit : ""));
		json_object_set_new(o, "run_percent", c->run_percent >= 0 ? json_real(c->run_percent) : json_null());
		json_object_set_new(o, "variance_percent", c->variance_percent >= 0 ? json_real(c->variance_percent) : json_null());
		json_object_set_new(o, "comment", json_string(c->comment ? c->comment : ""));
		json_array_append_new(counters, o);
	}
	return json_pack("{s:s,s:s,s:o,s:o,s:o,s:o,s:o,s:I}",
		"source", b->source ? b->source : "", "target", b->target ? b->target : "",
		"counters", counters,
		"elapsed_seconds", b->elapsed_seconds >= 0 ? json_real(b->elapsed_seconds) : json_null(),
		"user_seconds", b->user_seconds >= 0 ? json_real(b->user_seconds) : json_null(),
		"sys_seconds", b->sys_seconds >= 0 ? json_real(b->sys_seconds) : json_null(),
		"ipc", b->has_ipc ? json_real(b->ipc) : json_null(),
		"lines_skipped", (json_int_t)b->lines_skipped);
}

static json_t *provenance_json(const struct pl_profile *p)
{
	json_t *inputs = json_array(), *preview = json_array();

	for (size_t i = 0; i < p->nsources; i++) {
		const struct pl_source *s = &p->sources[i];
		json_array_append_new(inputs, json_pack("{s:s,s:I,s:I,s:s,s:s,s:s,s:I,s:I}",
			"path", s->path, "size", (json_int_t)s->size,
			"text_bytes", (json_int_t)s->text_bytes, "sha256", s->sha256,
			"format", pl_format_name(s->format), "compression", s->codec,
			"lines", (json_int_t)s->lines, "records", (json_int_t)s->records));
	}
	for (size_t i = 0; i < p->npreviews; i++)
		json_array_append_new(preview, json_pack("{s:I,s:s,s:s}",
			"line", (json_int_t)p->previews[i].line_no,
			"reason", p->previews[i].reason, "text", p->previews[i].text));
	return json_pack("{s:s,s:s,s:o,s:{s:I,s:I,s:I,s:I,s:I},s:o,s:{s:I,s:I,s:I,s:I,s:I,s:I}}",
		"tool", "perflens", "tool_version", PL_VERSION, "inputs", inputs,
		"counts", "lines", (json_int_t)p->lines, "records_parsed", (json_int_t)p->records_parsed,
		"records_skipped", (json_int_t)p->records_skipped,
		"records_malformed", (json_int_t)p->records_malformed, "srclines", (json_int_t)p->srclines,
		"malformed_preview", preview,
		"limits", "max_input_bytes", (json_int_t)p->limits.max_input_bytes,
		"max_records", (json_int_t)p->limits.max_records, "max_line", (json_int_t)p->limits.max_line,
		"max_depth", (json_int_t)p->limits.max_depth, "max_frames", (json_int_t)p->limits.max_frames,
		"max_stacks", (json_int_t)p->limits.max_stacks);
}

static json_t *quality_json(const struct pl_profile *p)
{
	json_t *warnings = json_array();
	uint64_t total = 0;

	for (size_t e = 0; e < p->nevents; e++) {
		const struct pl_event *ev = &p->events[e];
		total += ev->samples;
		if (ev->samples && ev->samples < 100)
			json_array_append_new(warnings, json_sprintf(
				"event '%s' has only %llu samples: percentages are coarse",
				pl_str(p, ev->name), (unsigned long long)ev->samples));
		if (ev->records_without_period && ev->records_without_period < ev->samples)
			json_array_append_new(warnings, json_sprintf(
				"event '%s': %llu of %llu records carried no period and count as 1",
				pl_str(p, ev->name), (unsigned long long)ev->records_without_period,
				(unsigned long long)ev->samples));
	}
	if (p->nevents > 1)
		json_array_append_new(warnings, json_sprintf(
			"%zu events in one capture: each is analyzed on its own, never summed", p->nevents));
	if (p->records_malformed)
		json_array_append_new(warnings, json_sprintf(
			"%llu malformed lines were skipped (see provenance.malformed_preview)",
			(unsigned long long)p->records_malformed));
	if (p->ntails)
		json_array_append_new(warnings, json_sprintf(
			"%zu last record(s) had no closing blank line: kept here, though stackcollapse-perf.pl drops them",
			p->ntails));
	if (total == 0 && p->nstats == 0)
		json_array_append_new(warnings, json_string("no samples were found in the input"));
	return json_pack("{s:I,s:o}", "unterminated_records", (json_int_t)p->ntails, "warnings", warnings);
}

static json_t *summary_new(const struct pl_profile *p)
{
	json_t *events = json_array(), *funcs = json_array(), *threads = json_array();
	json_t *views = json_array(), *stats = json_array();

	for (uint32_t e = 0; e < p->nevents; e++) {
		const struct pl_event *ev = &p->events[e];
		json_array_append_new(events, json_pack("{s:s,s:s,s:I,s:I,s:I}",
			"name", pl_str(p, ev->name), "unit", pl_event_unit(p, e),
			"samples", (json_int_t)ev->samples, "period", (json_int_t)ev->period,
			"records_without_period", (json_int_t)ev->records_without_period));
		json_array_append_new(views, view_json(p, e));
	}
	for (size_t i = 0; i < pl_nfuncs(p); i++) {
		const struct pl_func *f = &p->funcs[i];
		json_array_append_new(funcs, json_pack("{s:s,s:o,s:s,s:b}",
			"symbol", pl_str(p, f->symbol), "dso", opt_str(p, f->dso),
			"kind", pl_kind_name(f->kind), "inlined", f->inlined));
	}
	for (size_t i = 0; i < pl_nthreads(p); i++) {
		const struct pl_thread *t = &p->threads[i];
		json_array_append_new(threads, json_pack("{s:o,s:o,s:o}",
			"pid", opt_i64(t->pid), "tid", opt_i64(t->tid), "comm", opt_str(p, t->comm)));
	}
	for (size_t i = 0; i < p->nstats; i++)
		json_array_append_new(stats, stat_block_json(p->stats[i]));
	return json_pack("{s:s,s:i,s:s,s:o,s:o,s:o,s:o,s:o,s:o,s:o}",
		"schema", "perflens.analysis", "version", PL_ANALYSIS_SCHEMA_VERSION,
		"id", "", "provenance", provenance_json(p), "quality", quality_json(p),
		"events", events, "functions", funcs, "threads", threads,
		"views", views, "perf_stat", stats);
}

/* ------------------------------------------------------------- writing */

bool pl_artifact_id_valid(const char *id)
{
	if (strlen(id) != 23 || strncmp(id, "an-", 3) != 0)
		return false;
	for (size_t i = 3; i < 23; i++)
		if (!((id[i] >= '0' && id[i] <= '9') || (id[i] >= 'a' && id[i] <= 'f')))
			return false;
	return true;
}

enum pl_err pl_artifact_write(const struct pl_profile *p, const char *root,
			      struct pl_artifact_ref *ref, json_t **summary_out,
			      struct pl_error *err)
{
	struct pl_atomic_file stacks_file;
	struct hashed_out o;
	unsigned char digest[SHA256_DIGEST_SIZE];
	char hex[65], tmp_path[4096];
	json_t *summary;
	char *text;
	enum pl_err rc;

	memset(ref, 0, sizeof(*ref));
	snprintf(tmp_path, sizeof(tmp_path), "%s/analyses/pending.stacks.json", root);
	if ((rc = pl_atomic_open(&stacks_file, tmp_path, err)))
		return rc;
	o.fp = stacks_file.fp;
	o.failed = false;
	sha256_init(&o.sha);
	write_stacks_doc(&o, p);
	if (o.failed) {
		pl_atomic_abort(&stacks_file);
		return pl_fail(err, PL_ERR_OUTPUT, "check free space at the artifact root",
			       "cannot write the stack table under '%s'", root);
	}
	summary = summary_new(p);
	text = json_dumps(summary, PL_DUMP_FLAGS);
	sha256_update(&o.sha, strlen(text), (const uint8_t *)text);
	free(text);
	sha256_digest(&o.sha, sizeof(digest), digest);
	pl_hex(digest, sizeof(digest), hex);
	snprintf(ref->id, sizeof(ref->id), "an-%.20s", hex);
	json_object_set_new(summary, "id", json_string(ref->id));
	snprintf(ref->summary_path, sizeof(ref->summary_path), "%s/analyses/%s.json", root, ref->id);
	snprintf(ref->stacks_path, sizeof(ref->stacks_path), "%s/analyses/%s.stacks.json", root, ref->id);
	snprintf(stacks_file.path, sizeof(stacks_file.path), "%s", ref->stacks_path);
	if ((rc = pl_atomic_commit(&stacks_file, err))) {
		json_decref(summary);
		return rc;
	}
	text = json_dumps(summary, PL_DUMP_FLAGS | JSON_INDENT(1));
	rc = pl_write_file_atomic(ref->summary_path, text, strlen(text), err);
	free(text);
	if (rc || !summary_out)
		json_decref(summary);
	else
		*summary_out = summary;
	return rc;
}

/* ------------------------------------------------------------- reading */

static enum pl_err load_json(const char *path, json_t **out, struct pl_error *err)
{
	json_error_t je;

	*out = json_load_file(path, JSON_REJECT_DUPLICATES, &je);
	if (!*out) {
		if (access(path, F_OK) != 0)
			return pl_fail(err, PL_ERR_INPUT, "call analyze first, or list the artifacts to find a valid id",
				       "no analysis at '%s'", path);
		return pl_fail(err, PL_ERR_MALFORMED, "analyze the input again to rebuild the artifact",
			       "artifact '%s' is not valid JSON: %s (line %d)", path, je.text, je.line);
	}
	return PL_OK;
}

static enum pl_err check_id(const char *id, struct pl_error *err)
{
	if (!pl_artifact_id_valid(id))
		return pl_fail(err, PL_ERR_USAGE, "pass the analysis_id printed by analyze (an- and 20 hex digits)",
			       "'%s' is not an analysis id", id);
	return PL_OK;
}

enum pl_err pl_artifact_load_summary(const char *root, const char *id,
				     json_t **summary, struct pl_error *err)
{
	char path[4096];

	if (check_id(id, err))
		return err->code;
	snprintf(path, sizeof(path), "%s/analyses/%s.json", root, id);
	return load_json(path, summary, err);
}

static enum pl_err bad_table(const char *id, const char *what, struct pl_error *err)
{
	return pl_fail(err, PL_ERR_MALFORMED, "analyze the input again to rebuild the artifact",
		       "stack table of '%s' has a bad %s entry", id, what);
}

static uint32_t json_id(json_t *v)
{
	return json_is_integer(v) ? (uint32_t)json_integer_value(v) : PL_NOID;
}

static enum pl_err rebuild(struct pl_profile *p, json_t *doc, const char *id,
			   struct pl_error *err)
{
	json_t *v, *a;
	size_t i;

	json_array_foreach(json_object_get(doc, "strings"), i, v) {
		if (!json_is_string(v))
			return bad_table(id, "string", err);
		pl_intern_str(p, json_string_value(v), json_string_length(v));
	}
	json_array_foreach(json_object_get(doc, "events"), i, a) {
		uint32_t name = json_id(json_array_get(a, 0));
		const char *s = pl_str(p, name);
		if (name >= p->strs.count)
			return bad_table(id, "event", err);
		pl_intern_event(p, s, strlen(s));
		p->events[i].records_without_period = 0;
	}
	json_array_foreach(json_object_get(doc, "functions"), i, a)
		pl_intern_func(p, json_id(json_array_get(a, 0)), json_id(json_array_get(a, 1)));
	json_array_foreach(json_object_get(doc, "threads"), i, a) {
		json_t *pid = json_array_get(a, 0), *tid = json_array_get(a, 1);
		pl_intern_thread(p, json_is_integer(pid) ? json_integer_value(pid) : -1,
				 json_is_integer(tid) ? json_integer_value(tid) : -1,
				 json_id(json_array_get(a, 2)));
	}
	json_array_foreach(json_object_get(doc, "frames"), i, a) {
		json_t *addr = json_array_get(a, 1);
		uint32_t fn = json_id(json_array_get(a, 0));
		if (fn >= pl_nfuncs(p))
			return bad_table(id, "frame", err);
		if (pl_intern_frame(p, fn, json_is_string(addr),
				    json_is_string(addr) ? strtoull(json_string_value(addr), NULL, 16) : 0,
				    json_id(json_array_get(a, 2)), err) == PL_NOID)
			return err->code;
	}
	json_array_foreach(json_object_get(doc, "stacks"), i, a) {
		json_t *frames = json_array_get(a, 1), *weights = json_array_get(a, 2), *w, *f;
		size_t j, depth = json_array_size(frames);
		uint32_t *ids = pl_xmalloc((depth + 1) * sizeof(uint32_t)), s;
		json_array_foreach(frames, j, f) {
			ids[j] = json_id(f);
			if (ids[j] >= pl_nframes(p)) {
				free(ids);
				return bad_table(id, "stack", err);
			}
		}
		s = pl_intern_stack(p, json_id(json_array_get(a, 0)), ids, (uint32_t)depth, err);
		free(ids);
		if (s == PL_NOID)
			return err->code;
		json_array_foreach(weights, j, w) {
			uint32_t ev = json_id(json_array_get(w, 0));
			if (ev >= p->nevents)
				return bad_table(id, "weight", err);
			pl_add_weight(p, s, ev, (uint64_t)json_integer_value(json_array_get(w, 1)),
				      (uint64_t)json_integer_value(json_array_get(w, 2)), true);
		}
	}
	json_array_foreach(json_object_get(doc, "events"), i, a)
		p->events[i].records_without_period = (uint64_t)json_integer_value(json_array_get(a, 1));
	json_array_foreach(json_object_get(doc, "tails"), i, a) {
		PL_GROW(p->tails, p->tails_cap, p->ntails + 1);
		p->tails[p->ntails++] = (struct pl_tail){json_id(json_array_get(a, 0)),
			json_id(json_array_get(a, 1)), (uint64_t)json_integer_value(json_array_get(a, 2))};
	}
	return PL_OK;
}

enum pl_err pl_artifact_load_profile(const char *root, const char *id,
				     struct pl_profile *p, struct pl_error *err)
{
	char path[4096];
	json_t *doc;
	enum pl_err rc;

	if (check_id(id, err))
		return err->code;
	snprintf(path, sizeof(path), "%s/analyses/%s.stacks.json", root, id);
	if ((rc = load_json(path, &doc, err)))
		return rc;
	rc = rebuild(p, doc, id, err);
	json_decref(doc);
	return rc;
}

/* ------------------------------------------------------------ listing */

static bool safe_name(const char *s)
{
	if (!*s || *s == '.')
		return false;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		      (*s >= '0' && *s <= '9') || *s == '.' || *s == '_' || *s == '-'))
			return false;
	return true;
}

static const char *mime_of(const char *name)
{
	size_t n = strlen(name);

	if (n > 5 && strcmp(name + n - 5, ".json") == 0)
		return "application/json";
	if (n > 4 && strcmp(name + n - 4, ".svg") == 0)
		return "image/svg+xml";
	return "text/plain";
}

static const char *kind_of(const char *dir, const char *name)
{
	size_t n = strlen(name);

	if (strcmp(dir, "exports") == 0)
		return "export";
	if (n > 12 && strcmp(name + n - 12, ".stacks.json") == 0)
		return "stacks";
	return "analysis";
}

static int cmp_path_field(const void *a, const void *b)
{
	return strcmp(json_string_value(json_object_get(*(json_t *const *)a, "path")),
		      json_string_value(json_object_get(*(json_t *const *)b, "path")));
}

static void list_dir(const char *root, const char *dir, json_t *out)
{
	char path[4096];
	DIR *d;
	struct dirent *de;

	snprintf(path, sizeof(path), "%s/%s", root, dir);
	if (!(d = opendir(path)))
		return;
	while ((de = readdir(d))) {
		struct stat sb;
		char full[4096 + 512], rel[600];
		if (!safe_name(de->d_name) || strstr(de->d_name, ".tmp-") ||
		    strncmp(de->d_name, "pending.", 8) == 0)
			continue;
		snprintf(full, sizeof(full), "%s/%s", path, de->d_name);
		if (lstat(full, &sb) < 0 || !S_ISREG(sb.st_mode))
			continue;
		snprintf(rel, sizeof(rel), "%s/%s", dir, de->d_name);
		json_array_append_new(out, json_pack("{s:s,s:s,s:s,s:I,s:s}", "path", rel,
			"kind", kind_of(dir, de->d_name), "uri", "", "bytes", (json_int_t)sb.st_size,
			"mime_type", mime_of(de->d_name)));
	}
	closedir(d);
}

json_t *pl_artifact_list(const char *root)
{
	json_t *all = json_array(), *sorted = json_array(), *v;
	json_t **items;
	size_t n, i;

	list_dir(root, "analyses", all);
	list_dir(root, "exports", all);
	n = json_array_size(all);
	items = pl_xmalloc((n + 1) * sizeof(*items));
	json_array_foreach(all, i, v)
		items[i] = v;
	qsort(items, n, sizeof(*items), cmp_path_field);
	for (i = 0; i < n; i++) {
		char uri[700];
		snprintf(uri, sizeof(uri), "perflens://artifacts/%s",
			 json_string_value(json_object_get(items[i], "path")));
		json_object_set_new(items[i], "uri", json_string(uri));
		json_array_append(sorted, items[i]);
	}
	free(items);
	json_decref(all);
	return sorted;
}

bool pl_artifact_rel_path(const char *p, char *rel, size_t cap)
{
	static const char scheme[] = "perflens://artifacts/";
	const char *slash;

	if (!p)
		return false;
	if (strncmp(p, scheme, sizeof(scheme) - 1) == 0)
		p += sizeof(scheme) - 1;
	slash = strchr(p, '/');
	if (!slash || strchr(slash + 1, '/') || !safe_name(slash + 1))
		return false;
	if (!((slash - p == 8 && strncmp(p, "analyses", 8) == 0) ||
	      (slash - p == 7 && strncmp(p, "exports", 7) == 0)))
		return false;
	if (strlen(p) >= cap)
		return false;
	memcpy(rel, p, strlen(p) + 1);
	return true;
}

int pl_artifact_open(const char *root, const char *rel, uint64_t *size,
		     struct pl_error *err)
{
	char path[4096];
	struct stat sb;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0) {
		pl_fail(err, PL_ERR_INPUT, "call list_artifacts to see what exists",
			"no artifact '%s'", rel);
		return -1;
	}
	if (fstat(fd, &sb) < 0 || !S_ISREG(sb.st_mode)) {
		close(fd);
		pl_fail(err, PL_ERR_PATH, "call list_artifacts to see what exists",
			"artifact '%s' is not a regular file", rel);
		return -1;
	}
	*size = (uint64_t)sb.st_size;
	return fd;
}
