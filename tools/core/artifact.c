/* artifact.c - writing and reading analysis artifacts (see artifact.h).
 *
 * Each document goes through a buffered writer that feeds every byte to a
 * SHA-256; the id hashes the two digests.  The stack table is streamed by
 * stack_table.c, for a big profile on a thread of its own while the
 * summary is written.  The summary is streamed too (see struct sw): its
 * values are made and encoded by jansson a piece at a time, so memory is
 * bounded by the largest piece rather than by the number of functions,
 * and it is written straight to its file, with a placeholder id of the
 * same length that is overwritten in place once the hash is known.  Its
 * provenance comes last, so the SHA-256 of a big input, which a thread of
 * input.c may still be computing, is waited for only then.  Every list is
 * in id order or a total order, and reals are printed with 10 significant
 * digits, which makes the output byte-identical for the same input.
 * Artifacts are read whole into memory and parsed by jansson from the
 * buffer.
 */
#include "artifact.h"
#include "aggregate.h"
#include "perf_stat.h"
#include "parse.h"
#include "stack_table.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <nettle/sha2.h>

/* ---------------------------------------------------------- atomic files */

enum pl_err pl_make_dirs(const char *path, struct pl_error *err)
{
	char buf[4096];
	size_t n = strlen(path);

	if (n >= sizeof(buf))
		return pl_fail(err, PL_ERR_OUTPUT, "use a shorter path", "path too long: '%s'", path);
	memcpy(buf, path, n + 1);
	for (size_t i = 1; i <= n; i++) {
		if (buf[i] != '/' && buf[i] != '\0')
			continue;
		buf[i] = '\0';
		if (mkdir(buf, 0755) < 0 && errno != EEXIST)
			return pl_fail(err, PL_ERR_OUTPUT, "check that the folder is writable",
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
		if (pl_make_dirs(dir, err))
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

int pl_atomic_sync(struct pl_atomic_file *af)
{
	if (fflush(af->fp) != 0 || ferror(af->fp) || fsync(fileno(af->fp)) != 0)
		return -1;
	af->synced = true;
	return 0;
}

enum pl_err pl_atomic_commit(struct pl_atomic_file *af, struct pl_error *err)
{
	bool bad = !af->synced && pl_atomic_sync(af) != 0;

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

/* ------------------------------------------------------- hashed output */

#define HASHED_FLUSH (64 * 1024)
#define HEAD_KEEP 512

/* A file written through a buffer, every byte also fed to the SHA-256 that
 * makes the analysis id; the first HEAD_KEEP bytes are kept so the id
 * placeholder can be found in them afterwards. */
struct hashed_out {
	FILE *fp;
	struct sha256_ctx sha;
	bool failed;
	char *buf;            /* HASHED_FLUSH bytes */
	size_t len;
	char head[HEAD_KEEP];
	size_t head_len;
};

static void hashed_bytes(struct hashed_out *o, const char *s, size_t n)
{
	sha256_update(&o->sha, n, (const uint8_t *)s);
	if (n && fwrite(s, 1, n, o->fp) != n)
		o->failed = true;
}

static void hashed_flush(struct hashed_out *o)
{
	hashed_bytes(o, o->buf, o->len);
	o->len = 0;
}

/* A json_dump_callback_t (and the stack table's emit function).  jansson
 * calls it for every token, so the common case is one short memcpy. */
static int hashed_write(const char *s, size_t n, void *data)
{
	struct hashed_out *o = data;

	if (o->head_len < HEAD_KEEP) {
		size_t k = n < HEAD_KEEP - o->head_len ? n : HEAD_KEEP - o->head_len;
		memcpy(o->head + o->head_len, s, k);
		o->head_len += k;
	}
	if (n > HASHED_FLUSH - o->len) {
		hashed_flush(o);
		if (n >= HASHED_FLUSH) {
			hashed_bytes(o, s, n);
			return o->failed ? -1 : 0;
		}
	}
	memcpy(o->buf + o->len, s, n);
	o->len += n;
	return o->failed ? -1 : 0;
}

/* Start writing a new file through `o`, keeping the hash running. */
static void hashed_next_file(struct hashed_out *o, FILE *fp)
{
	o->fp = fp;
	o->head_len = 0;
}

static json_t *opt_i64(int64_t v)
{
	return v < 0 ? json_null() : json_integer(v);
}

/* ----------------------------------------------------------- summary */

/* The summary is hashed with this in place of its id (same length). */
#define ID_PLACEHOLDER "an-00000000000000000000"

/* Objects built key by key: the summary holds one per function and three
 * per hotspot, and json_pack's format parsing and key checks cost more
 * than the values here. */
static void set_new(json_t *o, const char *key, json_t *v)
{
	json_object_set_new_nocheck(o, key, v);
}

static json_t *amount_json(const struct pl_view *v, const struct pl_amount *a)
{
	json_t *o = json_object();

	set_new(o, "samples", json_integer((json_int_t)a->samples));
	set_new(o, "period", json_integer((json_int_t)a->period));
	set_new(o, "percent", json_real(pl_percent(v, a->period)));
	return o;
}

/* Amount objects repeat a lot (every function seen once has the same
 * ones) and nothing changes them after they are built, so a view shares
 * each distinct one: (samples, period) -> object, open addressing.  The
 * table holds a reference to each (amounts_release drops them). */
struct amounts {
	const struct pl_view *v;
	struct amount_slot {
		uint64_t samples, period;
		json_t *obj;
	} *slots;
	size_t mask, count;
};

static size_t amount_slot(const struct amounts *t, uint64_t samples, uint64_t period)
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
			t->slots[amount_slot(t, old[i].samples, old[i].period)] = old[i];
	free(old);
}

/* A new reference to the shared amount object of `a`. */
static json_t *amount_shared(struct amounts *t, const struct pl_amount *a)
{
	size_t j = amount_slot(t, a->samples, a->period);
	json_t *o = t->slots[j].obj;

	if (o)
		return json_incref(o);
	o = amount_json(t->v, a);
	t->slots[j] = (struct amount_slot){a->samples, a->period, o};
	if (++t->count * 2 > t->mask)
		amounts_grow(t);
	return json_incref(o);
}

static void amounts_release(struct amounts *t)
{
	for (size_t i = 0; i <= t->mask; i++)
		json_decref(t->slots[i].obj);
	free(t->slots);
}

/* Hotspot `f` of the view, put into `o` (one object reused for every
 * hotspot: its keys stay in place and only the values change, which
 * costs a fraction of a new object each time). */
static void hotspot_set(json_t *o, struct amounts *t, uint32_t f)
{
	set_new(o, "function", json_integer((json_int_t)f));
	set_new(o, "self", amount_shared(t, &t->v->funcs[f].self));
	set_new(o, "inclusive", amount_shared(t, &t->v->funcs[f].incl));
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
		json_t *in = json_pack("{s:s,s:I,s:I,s:s,s:s,s:s,s:I,s:I}",
			"path", s->path, "size", (json_int_t)s->size,
			"text_bytes", (json_int_t)s->text_bytes, "sha256", s->sha256,
			"format", pl_format_name(s->format), "compression", s->codec,
			"lines", (json_int_t)s->lines, "records", (json_int_t)s->records);
		if (s->converted_by)
			json_object_set_new(in, "converted_by", json_string(s->converted_by));
		json_array_append_new(inputs, in);
	}
	for (size_t i = 0; i < p->npreviews; i++)
		json_array_append_new(preview, json_pack("{s:I,s:s,s:s}",
			"line", (json_int_t)p->previews[i].line_no,
			"reason", p->previews[i].reason, "text", p->previews[i].text));
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
	if (p->names_repaired)
		json_array_append_new(warnings, json_sprintf(
			"%llu names held bytes that are not UTF-8 (or NUL); each such byte reads U+FFFD",
			(unsigned long long)p->names_repaired));
	if (p->ntails)
		json_array_append_new(warnings, json_sprintf(
			"%zu last record(s) had no closing blank line: kept here, though stackcollapse-perf.pl drops them",
			p->ntails));
	if (total == 0 && p->nstats == 0)
		json_array_append_new(warnings, json_string("no samples were found in the input"));
	if (p->recovery.user_frames_unknown > p->recovery.recovered)
		json_array_append_new(warnings, json_sprintf(
			"%llu unique user frames stay [unknown] (quality.frame_recovery says why); "
			"do not read their share as any function's",
			(unsigned long long)(p->recovery.user_frames_unknown - p->recovery.recovered)));
	return json_pack("{s:I,s:o,s:o,s:o}", "unterminated_records", (json_int_t)p->ntails,
			 "warnings", warnings, "frame_recovery", recovery_json(p),
			 "build_ids", build_ids_json(p));
}

/* Strings every function entry repeats (kinds, DSOs), made once and
 * shared; NULL until first use.  Each holds a reference of its own
 * (shared_strs_release drops them). */
struct shared_strs {
	json_t *kind[PL_KIND_UNKNOWN + 1];
	json_t **dso;         /* by string id */
};

static json_t *shared(json_t **slot, json_t *(*make)(const struct pl_profile *, uint32_t),
		      const struct pl_profile *p, uint32_t id)
{
	if (!*slot)
		*slot = make(p, id);
	return json_incref(*slot);
}

static void shared_strs_release(struct shared_strs *ss, size_t nstrs)
{
	for (size_t i = 0; i <= PL_KIND_UNKNOWN; i++)
		json_decref(ss->kind[i]);
	for (size_t i = 0; i < nstrs; i++)
		json_decref(ss->dso[i]);
	free(ss->dso);
}

static json_t *make_dso(const struct pl_profile *p, uint32_t id)
{
	return opt_str(p, id);
}

static json_t *make_kind(const struct pl_profile *p, uint32_t kind)
{
	(void)p;
	return json_string_nocheck(pl_kind_name((enum pl_kind)kind));
}

/* A function as the summary lists it, put into `o` (reused, as
 * hotspot_set does); false when its symbol or DSO is not UTF-8, which
 * leaves the entry out, as json_pack always did. */
static bool function_set(json_t *o, const struct pl_profile *p, const struct pl_func *f,
			 struct shared_strs *ss)
{
	json_t *dso, *sym = json_string(pl_str(p, f->symbol));

	if (!sym)
		return false;
	dso = f->dso == PL_NOID ? json_null() : shared(&ss->dso[f->dso], make_dso, p, f->dso);
	if (!dso) {
		json_decref(sym);
		return false;
	}
	set_new(o, "symbol", sym);
	set_new(o, "dso", dso);
	set_new(o, "kind", shared(&ss->kind[f->kind], make_kind, p, f->kind));
	set_new(o, "inlined", json_boolean(f->inlined));
	return true;
}

/* ------------------------------------------------------ summary stream */

/* The summary is written as jansson dumps a whole document with
 * PL_DUMP_FLAGS | JSON_INDENT(1), but piece by piece: the two lists that
 * grow with the profile (functions, and each view's hotspots) are never
 * held as a tree, which would cost about 1.2 KB per function, and the
 * provenance, which needs the inputs' SHA-256, comes last, so a big
 * file's hash is finished while the rest is written.  jansson encodes
 * every value; only the punctuation and indentation of the containers
 * opened here (the document, the views and those two lists) are written
 * by hand, as jansson lays them out: an opening bracket, each member on a
 * new line one space deeper, ',' between members, and the closing bracket
 * on a line of its own (or right after the opening one when empty). */
struct sw {
	struct hashed_out *o;
	int depth;            /* containers open */
	bool first;           /* the innermost holds nothing yet */
	json_t *brief;        /* see pl_artifact_write's summary_out */
};

static void sw_raw(struct sw *w, const char *s, size_t n)
{
	hashed_write(s, n, w->o);
}

static void sw_newline(struct sw *w, int depth)
{
	static const char spaces[] = "\n                                ";

	sw_raw(w, spaces, 1);
	for (int left = depth; left > 0; left -= 32)
		sw_raw(w, spaces + 1, left < 32 ? (size_t)left : 32);
}

/* A dump of a value nested `depth` deep: each line jansson starts gets
 * that much more indentation (JSON strings hold no raw newline). */
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
 * jansson could not make, such as a name that is not UTF-8) leaves the
 * member out. */
static void sw_value(struct sw *w, const char *key, json_t *v)
{
	struct sw_nested d = {w, w->depth};

	if (!v)
		return;
	sw_member(w, key);
	if (json_dump_callback(v, sw_nested_write, &d,
			       PL_DUMP_FLAGS | JSON_INDENT(1) | JSON_ENCODE_ANY) != 0)
		w->o->failed = true;
}

static void sw_value_new(struct sw *w, const char *key, json_t *v)
{
	sw_value(w, key, v);
	json_decref(v);
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

/* The brief's entry for a hotspot just written (`hot`, reused). */
static json_t *brief_hotspot(const struct pl_profile *p, json_t *hot, uint32_t f)
{
	const struct pl_func *fn = &p->funcs[f];
	json_t *b = json_deep_copy(hot);

	set_new(b, "symbol", json_string(pl_str(p, fn->symbol)));
	set_new(b, "dso", opt_str(p, fn->dso));
	return b;
}

static void sw_hotspots(struct sw *w, const struct pl_profile *p, struct amounts *am,
			json_t *top)
{
	const struct pl_view *v = am->v;
	json_t *hot = json_object();

	sw_open(w, "hotspots", '[');
	for (size_t i = 0; i < v->nhot; i++) {
		hotspot_set(hot, am, v->hot_order[i]);
		sw_value(w, NULL, hot);
		if (i < PL_ARTIFACT_TOP)
			json_array_append_new(top, brief_hotspot(p, hot, v->hot_order[i]));
	}
	sw_close(w, ']');
	json_decref(hot);
}

static void sw_view(struct sw *w, const struct pl_profile *p, uint32_t event)
{
	struct pl_view v;
	struct amounts am = {&v, pl_xcalloc(256, sizeof(struct amount_slot)), 255, 0};
	json_t *threads = json_array(), *dsos = json_array(), *top = json_array();

	pl_view_build(&v, p, event);
	sw_open(w, NULL, '{');
	sw_value_new(w, "event", json_string(pl_str(p, p->events[event].name)));
	sw_value_new(w, "unit", json_string(pl_event_unit(p, event)));
	sw_value_new(w, "total", json_pack("{s:I,s:I}", "samples", (json_int_t)v.total.samples,
					   "period", (json_int_t)v.total.period));
	sw_value_new(w, "unique_stacks", json_integer((json_int_t)v.stacks));
	sw_value_new(w, "unknown_self_percent", json_real(pl_percent(&v, v.unknown_leaf.period)));
	sw_hotspots(w, p, &am, top);
	for (size_t i = 0; i < v.nthread_order; i++) {
		uint32_t t = v.thread_order[i];
		json_array_append_new(threads, json_pack("{s:I,s:o}", "thread", (json_int_t)t,
			"weight", amount_shared(&am, &v.threads[t])));
	}
	for (size_t i = 0; i < v.ndsos; i++)
		json_array_append_new(dsos, json_pack("{s:o,s:o,s:o}",
			"dso", opt_str(p, v.dso_ids[i]),
			"self", amount_shared(&am, &v.dsos[i].self),
			"inclusive", amount_shared(&am, &v.dsos[i].incl)));
	sw_value_new(w, "threads", threads);
	sw_value_new(w, "dsos", dsos);
	sw_close(w, '}');
	json_array_append_new(json_object_get(w->brief, "top_hotspots"), top);
	amounts_release(&am);
	pl_view_release(&v);
}

static void sw_functions(struct sw *w, const struct pl_profile *p)
{
	struct shared_strs ss = {{0}, pl_xcalloc(p->strs.count + 1, sizeof(json_t *))};
	json_t *fn = json_object();

	sw_open(w, "functions", '[');
	for (size_t i = 0; i < pl_nfuncs(p); i++)
		if (function_set(fn, p, &p->funcs[i], &ss))
			sw_value(w, NULL, fn);
	sw_close(w, ']');
	json_decref(fn);
	shared_strs_release(&ss, p->strs.count + 1);
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

/* The whole summary, with the placeholder id.  The inputs' hashes are
 * waited for only before the provenance, the last member. */
static enum pl_err sw_summary(struct sw *w, struct pl_profile *p, struct pl_error *err)
{
	enum pl_err rc;

	json_object_set_new(w->brief, "events", events_json(p));
	json_object_set_new(w->brief, "quality", quality_json(p));
	json_object_set_new(w->brief, "top_hotspots", json_array());
	sw_open(w, NULL, '{');
	sw_value_new(w, "schema", json_string("perflens.analysis"));
	sw_value_new(w, "version", json_integer(PL_ANALYSIS_SCHEMA_VERSION));
	sw_value_new(w, "id", json_string(ID_PLACEHOLDER));
	sw_value(w, "quality", json_object_get(w->brief, "quality"));
	sw_value(w, "events", json_object_get(w->brief, "events"));
	sw_functions(w, p);
	sw_value_new(w, "threads", threads_json(p));
	sw_open(w, "views", '[');
	for (uint32_t e = 0; e < p->nevents; e++)
		sw_view(w, p, e);
	sw_close(w, ']');
	sw_value_new(w, "perf_stat", stats_json(p));
	if ((rc = pl_parse_finish_hashes(p, err)))
		return rc;
	sw_value_new(w, "provenance", provenance_json(p));
	sw_close(w, '}');
	return PL_OK;
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

/* Put the id over its placeholder in the file, at the offset where it
 * was written (found in the kept head). */
static enum pl_err patch_id(struct hashed_out *o, const char *id, struct pl_error *err)
{
	static const char needle[] = "\"id\":\"" ID_PLACEHOLDER "\"";
	const char *at = memmem(o->head, o->head_len, needle, sizeof(needle) - 1);
	off_t off;

	if (!at)
		return pl_fail(err, PL_ERR_INTERNAL, NULL, "summary id placeholder not found");
	off = (off_t)(at - o->head) + 6;
	if (fflush(o->fp) != 0 || pwrite(fileno(o->fp), id, strlen(id), off) != (ssize_t)strlen(id))
		return pl_fail(err, PL_ERR_OUTPUT, "check free space at the artifact root",
			       "cannot write the analysis id: %s", strerror(errno));
	return PL_OK;
}

/* From this many unique stacks on, the stack table is written on a
 * thread of its own while the summary is built and dumped: below, starting
 * the thread costs about what it saves. */
#define STACKS_THREAD_FROM 10000

/* The stack table, written through its own hashed output to its own
 * file, which it also syncs to disk. */
struct stacks_out {
	const struct pl_profile *p;
	struct pl_atomic_file *file;
	struct hashed_out o;
	pthread_t thread;
	bool threaded;
};

static void *stacks_write(void *arg)
{
	struct stacks_out *s = arg;

	if (!pl_stack_table_write(s->p, hashed_write, &s->o))
		s->o.failed = true;
	hashed_flush(&s->o);
	if (pl_atomic_sync(s->file) != 0)
		s->o.failed = true;
	return NULL;
}

static void stacks_start(struct stacks_out *s, const struct pl_profile *p,
			 struct pl_atomic_file *file)
{
	s->p = p;
	s->file = file;
	sha256_init(&s->o.sha);
	s->o.buf = pl_xmalloc(HASHED_FLUSH);
	hashed_next_file(&s->o, file->fp);
	s->threaded = p->stack_keys.count >= STACKS_THREAD_FROM &&
		      pthread_create(&s->thread, NULL, stacks_write, s) == 0;
	if (!s->threaded)
		stacks_write(s);
}

static void stacks_finish(struct stacks_out *s)
{
	if (s->threaded)
		pthread_join(s->thread, NULL);
	free(s->o.buf);
}

/* The analysis id: the SHA-256 of the two documents' SHA-256s (stack
 * table, then summary as written, with the placeholder id). */
static void analysis_id(struct hashed_out *stacks, struct hashed_out *summary, char id[32])
{
	unsigned char both[2 * SHA256_DIGEST_SIZE], digest[SHA256_DIGEST_SIZE];
	struct sha256_ctx c;
	char hex[65];

	sha256_digest(&stacks->sha, SHA256_DIGEST_SIZE, both);
	sha256_digest(&summary->sha, SHA256_DIGEST_SIZE, both + SHA256_DIGEST_SIZE);
	sha256_init(&c);
	sha256_update(&c, sizeof(both), both);
	sha256_digest(&c, sizeof(digest), digest);
	pl_hex(digest, sizeof(digest), hex);
	snprintf(id, 32, "an-%.20s", hex);
}

/* Both documents written: name them by the id and move them into place. */
static enum pl_err commit_both(struct pl_atomic_file *stacks_file,
			       struct pl_atomic_file *summary_file,
			       struct pl_artifact_ref *ref, const char *root,
			       struct pl_error *err)
{
	enum pl_err rc;

	snprintf(ref->summary_path, sizeof(ref->summary_path), "%s/analyses/%s.json", root, ref->id);
	snprintf(ref->stacks_path, sizeof(ref->stacks_path), "%s/analyses/%s.stacks.json", root, ref->id);
	snprintf(stacks_file->path, sizeof(stacks_file->path), "%s", ref->stacks_path);
	snprintf(summary_file->path, sizeof(summary_file->path), "%s", ref->summary_path);
	if ((rc = pl_atomic_commit(stacks_file, err))) {
		pl_atomic_abort(summary_file);
		return rc;
	}
	return pl_atomic_commit(summary_file, err);
}

/* The two documents are written side by side (see STACKS_THREAD_FROM);
 * the summary is streamed straight to its file (see struct sw), and its
 * id patched in once both are hashed. */
enum pl_err pl_artifact_write(struct pl_profile *p, const char *root,
			      struct pl_artifact_ref *ref, json_t **summary_out,
			      struct pl_error *err)
{
	struct pl_atomic_file stacks_file, summary_file;
	struct stacks_out stacks = {0};
	struct hashed_out o = {0};
	struct sw w = {&o, 0, true, json_object()};
	char tmp_path[4096];
	enum pl_err rc;

	memset(ref, 0, sizeof(*ref));
	snprintf(tmp_path, sizeof(tmp_path), "%s/analyses/pending.stacks.json", root);
	if ((rc = pl_atomic_open(&stacks_file, tmp_path, err)))
		goto out;
	snprintf(tmp_path, sizeof(tmp_path), "%s/analyses/pending.json", root);
	if ((rc = pl_atomic_open(&summary_file, tmp_path, err))) {
		pl_atomic_abort(&stacks_file);
		goto out;
	}
	stacks_start(&stacks, p, &stacks_file);
	sha256_init(&o.sha);
	o.buf = pl_xmalloc(HASHED_FLUSH);
	hashed_next_file(&o, summary_file.fp);
	rc = sw_summary(&w, p, err);
	hashed_flush(&o);
	stacks_finish(&stacks);
	o.failed |= stacks.o.failed;
	free(o.buf);
	if (rc == PL_OK && o.failed)
		rc = pl_fail(err, PL_ERR_OUTPUT, "check free space at the artifact root",
			     "cannot write the analysis under '%s'", root);
	if (rc == PL_OK) {
		analysis_id(&stacks.o, &o, ref->id);
		rc = patch_id(&o, ref->id, err);
	}
	if (rc == PL_OK) {
		rc = commit_both(&stacks_file, &summary_file, ref, root, err);
	} else {
		pl_atomic_abort(&stacks_file);
		pl_atomic_abort(&summary_file);
	}
out:
	if (rc == PL_OK && summary_out)
		*summary_out = w.brief;
	else
		json_decref(w.brief);
	return rc;
}

/* ------------------------------------------------------------- reading */

/* The whole file in memory (jansson then parses from a buffer, which is
 * several times faster than from a FILE). */
static char *read_all(const char *path, size_t *len)
{
	struct stat sb;
	char *buf;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return NULL;
	if (fstat(fd, &sb) < 0 || !S_ISREG(sb.st_mode)) {
		close(fd);
		return NULL;
	}
	buf = pl_xmalloc((size_t)sb.st_size + 1);
	pl_prefault(buf, (size_t)sb.st_size);
	*len = pl_read_full(fd, buf, (size_t)sb.st_size);
	close(fd);
	return buf;
}

static enum pl_err load_json(const char *path, json_t **out, struct pl_error *err)
{
	json_error_t je;
	size_t len = 0;
	char *text = read_all(path, &len);

	if (!text) {
		*out = NULL;
		if (access(path, F_OK) != 0)
			return pl_fail(err, PL_ERR_INPUT, "call analyze first, or list the artifacts to find a valid id",
				       "no analysis at '%s'", path);
		return pl_fail(err, PL_ERR_MALFORMED, "analyze the input again to rebuild the artifact",
			       "cannot read artifact '%s': %s", path, strerror(errno));
	}
	/* Parsed, the summary takes about 3.6 times its text. */
	pl_heap_reserve(len * 4);
	*out = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
	free(text);
	if (!*out)
		return pl_fail(err, PL_ERR_MALFORMED, "analyze the input again to rebuild the artifact",
			       "artifact '%s' is not valid JSON: %s (line %d)", path, je.text, je.line);
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
	rc = pl_stack_table_read(p, doc, id, err);
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
	if (strlen(name) > 3 && strcmp(name + strlen(name) - 3, ".md") == 0)
		return "text/markdown";
	size_t n = strlen(name);

	if (n > 5 && strcmp(name + n - 5, ".json") == 0)
		return "application/json";
	if (n > 4 && strcmp(name + n - 4, ".svg") == 0)
		return "image/svg+xml";
	if (n > 3 && strcmp(name + n - 3, ".gz") == 0)
		return "application/gzip";  /* pprof exports (.pb.gz) */
	return "text/plain";
}

static const char *kind_of(const char *dir, const char *name)
{
	size_t n = strlen(name);

	if (strcmp(dir, "exports") == 0)
		return "export";
	if (strcmp(dir, "benchmarks") == 0)
		return "benchmark";
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
	list_dir(root, "benchmarks", all);
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
	/* collections/co-ID/FILE: what collect_profile wrote. */
	if (slash && slash - p == 11 && strncmp(p, "collections", 11) == 0) {
		const char *second = strchr(slash + 1, '/');
		char id[64];
		if (!second || second - slash - 1 >= (long)sizeof(id) || strchr(second + 1, '/') ||
		    !safe_name(second + 1) || strlen(p) >= cap)
			return false;
		memcpy(id, slash + 1, (size_t)(second - slash - 1));
		id[second - slash - 1] = '\0';
		if (!safe_name(id))
			return false;
		memcpy(rel, p, strlen(p) + 1);
		return true;
	}
	if (!slash || strchr(slash + 1, '/') || !safe_name(slash + 1))
		return false;
	if (!((slash - p == 8 && strncmp(p, "analyses", 8) == 0) ||
	      (slash - p == 7 && strncmp(p, "exports", 7) == 0) ||
	      (slash - p == 10 && strncmp(p, "benchmarks", 10) == 0)))
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
