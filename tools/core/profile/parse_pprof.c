/* parse_pprof.c - a pprof profile (profile.proto) into the profile model.
 *
 * protobuf-c decodes the message (code generated from pprof.proto), through
 * an allocator that counts what it takes, so a small file that declares
 * huge repeated fields fails with PL_ERR_LIMIT rather than exhausting
 * memory.  Then, in the model's terms:
 *
 *  - every sample type is its own event, named by its type ("cpu",
 *    "alloc_space") and in its unit ("nanoseconds", "bytes", "count"):
 *    values of different types are never summed.  A sample's value for a
 *    type is the period of one record of that event; its sample count is
 *    the value of type 0 when that type's unit is "count" (pprof's
 *    convention for "how many events this sample stands for"), else 1.
 *    Zero values add nothing; a negative value (a diff profile) is counted
 *    malformed, as is a sample with the wrong number of values.
 *  - a location is one frame per line, the inlined callees (line[0] up to
 *    the last) as functions inlined into the last line's function, in the
 *    location's mapping (its file is the DSO); a location without lines is
 *    an "[unknown]" frame that keeps its address, which, with the mappings
 *    (load address, offset) and their build-ids, is what frame recovery and
 *    symbolize need.  A line's file and number become the frame's srcline.
 *  - labels "comm"/"thread"/"thread_name", "pid" and "tid"/"thread_id" make
 *    the sample's thread (the names this project's pprof export writes and
 *    the common ones); a numeric label "end_timestamp_ns" (Datadog's
 *    profilers) or "timestamp_ns" is the sample's time (profile.h's timed
 *    samples: view.time and get_timeline), one timed sample per event for
 *    each of the sample's count, its value split evenly among them (the
 *    first takes the remainder), so a window counts samples and value as
 *    the whole does.  Go's CPU profiles have no such label: the profile's
 *    time_nanos and duration_nanos say when it ran, not when each sample
 *    was, so their samples are counted untimed.  Other labels are not kept.
 *
 * Ids that point nowhere (a location, function or mapping id, a string
 * index) make the record that uses them malformed (counted, previewed);
 * a truncated or undecodable message is PL_ERR_MALFORMED.
 */
#include "parse_pprof.h"

#include <stdlib.h>
#include <string.h>

#include <pprof.pb-c.h>

typedef Perflens__Pprof__Profile PbProfile;
typedef Perflens__Pprof__Location PbLocation;
typedef Perflens__Pprof__Sample PbSample;

/* ---------------------------------------------------- bounded allocator */

struct pp_alloc {
	uint64_t used, cap;
	bool refused;
};

static void *pp_alloc_fn(void *data, size_t size)
{
	struct pp_alloc *a = data;
	uint64_t *blk;

	if (size > a->cap || a->used + size + 16 > a->cap) {
		a->refused = true;
		return NULL;
	}
	blk = malloc(size + 16);
	if (!blk)
		return NULL;
	blk[0] = size + 16;
	a->used += size + 16;
	return blk + 2;
}

static void pp_free_fn(void *data, void *ptr)
{
	struct pp_alloc *a = data;
	uint64_t *blk = ptr;

	if (!ptr)
		return;
	blk -= 2;
	a->used -= blk[0];
	free(blk);
}

/* ---------------------------------------------------------- id lookups */

struct pp_id {
	uint64_t id;
	uint32_t index;
};

static int cmp_id(const void *a, const void *b)
{
	const struct pp_id *x = a, *y = b;

	if (x->id != y->id)
		return x->id < y->id ? -1 : 1;
	return (x->index > y->index) - (x->index < y->index);
}

/* Sorted (id, index) pairs of a table, the first of equal ids kept. */
struct pp_index {
	struct pp_id *v;
	size_t n;
	uint64_t duplicates;
};

static void index_build(struct pp_index *ix, size_t n, uint64_t (*id_of)(const void *, size_t),
			const void *table)
{
	size_t w = 0;

	ix->v = pl_xmalloc((n ? n : 1) * sizeof(*ix->v));
	for (size_t i = 0; i < n; i++)
		ix->v[i] = (struct pp_id){id_of(table, i), (uint32_t)i};
	qsort(ix->v, n, sizeof(*ix->v), cmp_id);
	ix->duplicates = 0;
	for (size_t i = 0; i < n; i++) {
		if (w && ix->v[w - 1].id == ix->v[i].id) {
			ix->duplicates++;
			continue;
		}
		ix->v[w++] = ix->v[i];
	}
	ix->n = w;
}

/* The table index of `id`, or UINT32_MAX. */
static uint32_t index_find(const struct pp_index *ix, uint64_t id)
{
	size_t lo = 0, hi = ix->n;

	if (id == 0)
		return UINT32_MAX;   /* 0 is "none" for every id */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (ix->v[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < ix->n && ix->v[lo].id == id ? ix->v[lo].index : UINT32_MAX;
}

static uint64_t loc_id(const void *t, size_t i) { return ((PbLocation *const *)t)[i]->id; }
static uint64_t fn_id(const void *t, size_t i)
{
	return ((Perflens__Pprof__Function *const *)t)[i]->id;
}
static uint64_t map_id(const void *t, size_t i)
{
	return ((Perflens__Pprof__Mapping *const *)t)[i]->id;
}

/* ------------------------------------------------------------- context */

struct pp {
	struct pl_profile *p;
	const PbProfile *m;
	struct pl_error *err;
	struct pp_index locs, fns, maps;
	uint32_t *events;          /* sample type -> event id */
	uint64_t *ev_total;        /* summed period per type, checked for overflow */
	bool count_first;          /* type 0 is a count: the sample count */
	/* Each location's frames, root first, made on first use. */
	uint32_t *loc_first, *loc_n; /* loc_n UINT32_MAX: not made yet; 0: bad */
	uint32_t *frames;
	size_t nframes, frames_cap;
	uint32_t *map_dso;         /* mapping index -> DSO string id (PL_NOID) */
	uint32_t *stack;           /* a sample's frames, max_depth */
	uint64_t record;           /* 1-based sample number, for previews */
};

/* A string of the table; NULL when the index points nowhere. */
static const char *pp_str(const struct pp *c, int64_t i)
{
	if (i < 0 || (uint64_t)i >= c->m->n_string_table)
		return NULL;
	return c->m->string_table[i] ? c->m->string_table[i] : "";
}

static void pp_bad(struct pp *c, const char *reason, const char *what)
{
	pl_note_malformed(c->p, c->record, reason, what, strlen(what));
}

/* ----------------------------------------------------------- sample types */

static enum pl_err pp_events(struct pp *c)
{
	const PbProfile *m = c->m;

	if (m->n_sample_type == 0)
		return pl_fail(c->err, PL_ERR_MALFORMED, "check that the file is a pprof profile",
			       "pprof profile has no sample types");
	if (m->n_string_table == 0 || (m->string_table[0] && m->string_table[0][0]))
		return pl_fail(c->err, PL_ERR_MALFORMED, "check that the file is a pprof profile",
			       "pprof string table does not start with \"\"");
	c->events = pl_xcalloc(m->n_sample_type, sizeof(*c->events));
	c->ev_total = pl_xcalloc(m->n_sample_type, sizeof(*c->ev_total));
	for (size_t i = 0; i < m->n_sample_type; i++) {
		const char *type = m->sample_type[i] ? pp_str(c, m->sample_type[i]->type) : NULL;
		const char *unit = m->sample_type[i] ? pp_str(c, m->sample_type[i]->unit) : NULL;
		struct pl_buf name = {0};

		if (!type || !unit)
			return pl_fail(c->err, PL_ERR_MALFORMED, "check that the file is a pprof profile",
				       "pprof sample type %zu names a string that is not in the table", i);
		if (!*unit)
			unit = "count";
		pl_buf_adds(&name, *type ? type : "unknown");
		/* Two types of one name (rare): the second is TYPE/UNIT. */
		for (size_t j = 0; j < i; j++)
			if (strcmp(pl_str(c->p, c->p->events[c->events[j]].name), name.data) == 0) {
				pl_buf_addf(&name, "/%s", unit);
				break;
			}
		c->events[i] = pl_intern_event_unit(c->p, name.data, name.len, unit, c->err);
		pl_buf_release(&name);
		if (c->events[i] == PL_NOID)
			return c->err->code;
		for (size_t j = 0; j < i; j++)
			if (c->events[j] == c->events[i])
				return pl_fail(c->err, PL_ERR_MALFORMED, "check the pprof file's sample types",
					       "pprof sample types %zu and %zu are the same event", j, i);
	}
	c->count_first = strcmp(pp_str(c, m->sample_type[0]->unit), "count") == 0;
	return PL_OK;
}

/* ------------------------------------------------------------- mappings */

static bool is_hex_id(const char *s)
{
	size_t n = strlen(s);

	if (n == 0 || n % 2 || n > 128)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f') ||
		      (s[i] >= 'A' && s[i] <= 'F')))
			return false;
	return true;
}

/* Every mapping with a file becomes a pl_mapping of every process (a
 * pprof profile is one process's, and its threads say no pid), and its
 * build-id, when it is one in hex, a pl_build_id. */
static void pp_mappings(struct pp *c)
{
	const PbProfile *m = c->m;
	struct pl_profile *p = c->p;

	c->map_dso = pl_xmalloc((m->n_mapping ? m->n_mapping : 1) * sizeof(*c->map_dso));
	for (size_t i = 0; i < m->n_mapping; i++) {
		const Perflens__Pprof__Mapping *mp = m->mapping[i];
		const char *file = pp_str(c, mp->filename), *bid = pp_str(c, mp->build_id);

		c->map_dso[i] = PL_NOID;
		if (!file || !bid) {
			c->record = 0;
			pp_bad(c, "mapping string points nowhere", "mapping");
			continue;
		}
		if (!*file)
			continue;
		c->map_dso[i] = pl_intern_str(p, file, strlen(file));
		if (mp->memory_limit > mp->memory_start && p->nmappings < PL_MAX_MAPPINGS) {
			PL_GROW(p->mappings, p->mappings_cap, p->nmappings + 1);
			p->mappings[p->nmappings++] = (struct pl_mapping){
				.pid = -1, .start = mp->memory_start,
				.len = mp->memory_limit - mp->memory_start,
				.pgoff = mp->file_offset, .path = c->map_dso[i]};
		} else if (mp->memory_limit > mp->memory_start) {
			p->mappings_dropped++;
		}
		if (is_hex_id(bid) && p->nbuild_ids < PL_MAX_BUILD_IDS) {
			struct pl_build_id *b;
			PL_GROW(p->build_ids, p->build_ids_cap, p->nbuild_ids + 1);
			b = &p->build_ids[p->nbuild_ids++];
			b->dso = c->map_dso[i];
			for (size_t k = 0; bid[k]; k++)
				b->hex[k] = (char)(bid[k] >= 'A' && bid[k] <= 'F' ? bid[k] + 32 : bid[k]);
			b->hex[strlen(bid)] = '\0';
		}
	}
}

/* ------------------------------------------------------------ locations */

static void pp_push_frame(struct pp *c, uint32_t f)
{
	PL_GROW(c->frames, c->frames_cap, c->nframes + 1);
	c->frames[c->nframes++] = f;
}

/* The frame of one line of a location: its function, inlined into the
 * next line's when it is not the last. */
static uint32_t pp_line_frame(struct pp *c, const Perflens__Pprof__Line *ln, uint32_t dso,
			      bool inlined, bool *bad)
{
	struct pl_profile *p = c->p;
	uint32_t fi = index_find(&c->fns, ln->function_id), sym, func, srcline = PL_NOID;
	const Perflens__Pprof__Function *fn;
	const char *name, *file;

	if (fi == UINT32_MAX) {
		*bad = true;
		return PL_NOID;
	}
	fn = c->m->function[fi];
	name = pp_str(c, fn->name);
	file = pp_str(c, fn->filename);
	if (!name || !file || !pp_str(c, fn->system_name)) {
		*bad = true;
		return PL_NOID;
	}
	if (!*name)
		name = pp_str(c, fn->system_name);
	if (!*name)
		name = "[unknown]";
	sym = pl_intern_str(p, name, strlen(name));
	func = inlined ? pl_intern_func_inlined(p, sym, dso) : pl_intern_func(p, sym, dso);
	if (*file) {
		struct pl_buf b = {0};
		pl_buf_adds(&b, file);
		if (ln->line > 0)
			pl_buf_addf(&b, ":%lld", (long long)ln->line);
		srcline = pl_intern_str(p, b.data, b.len);
		pl_buf_release(&b);
	}
	return pl_intern_frame(p, func, false, 0, srcline, c->err);
}

/* Make location `li`'s frames, root first: the last line (the caller)
 * first.  PL_OK with loc_n 0 when the location is malformed. */
static enum pl_err pp_location(struct pp *c, uint32_t li)
{
	const PbLocation *l = c->m->location[li];
	struct pl_profile *p = c->p;
	uint32_t dso = PL_NOID;
	bool bad = false;

	c->loc_first[li] = (uint32_t)c->nframes;
	c->loc_n[li] = 0;
	if (l->mapping_id) {
		uint32_t mi = index_find(&c->maps, l->mapping_id);
		if (mi == UINT32_MAX) {
			pp_bad(c, "location's mapping id points nowhere", "location");
			return PL_OK;
		}
		dso = c->map_dso[mi];
	}
	if (l->n_line == 0) {
		uint32_t func = pl_intern_func(p, pl_intern_str(p, "[unknown]", 9), dso);
		uint32_t f = pl_intern_frame(p, func, true, l->address, PL_NOID, c->err);
		if (f == PL_NOID)
			return c->err->code;
		pp_push_frame(c, f);
		c->loc_n[li] = 1;
		return PL_OK;
	}
	for (size_t k = l->n_line; k-- > 0;) {
		uint32_t f = pp_line_frame(c, l->line[k], dso, k + 1 < l->n_line, &bad);
		if (bad) {
			c->nframes = c->loc_first[li];
			pp_bad(c, "location's function id or string points nowhere", "location");
			return PL_OK;
		}
		if (f == PL_NOID)
			return c->err->code;
		pp_push_frame(c, f);
	}
	c->loc_n[li] = (uint32_t)l->n_line;
	return PL_OK;
}

/* --------------------------------------------------------------- samples */

/* The sample's time label (ns, > 0), or 0 when it has none. */
static uint64_t pp_time(const struct pp *c, const PbSample *s)
{
	for (size_t i = 0; i < s->n_label; i++) {
		const char *key = pp_str(c, s->label[i]->key);
		if (key && (!strcmp(key, "end_timestamp_ns") || !strcmp(key, "timestamp_ns")) &&
		    s->label[i]->num > 0)
			return (uint64_t)s->label[i]->num;
	}
	return 0;
}

/* `samples` timed samples of one event at `time_ns` (0: untimed), sharing
 * `value`; past the timed table's room, counted at once (past_cap), not
 * one by one (a count may be huge). */
static void pp_add_timed(struct pl_profile *p, uint32_t stack, uint32_t event, uint64_t time_ns,
			 uint64_t samples, uint64_t value)
{
	uint64_t each = value / samples, extra = value % samples;

	for (uint64_t k = 0; k < samples; k++) {
		if (!time_ns) {
			p->timed.untimed += samples - k;
			return;
		}
		if (p->timed.n == PL_MAX_TIMED) {
			p->timed.past_cap += samples - k;
			return;
		}
		pl_add_timed(p, stack, event, time_ns, each + (k == 0 ? extra : 0));
	}
}

static uint32_t pp_thread(struct pp *c, const PbSample *s)
{
	int64_t pid = -1, tid = -1;
	uint32_t comm = PL_NOID;

	for (size_t i = 0; i < s->n_label; i++) {
		const Perflens__Pprof__Label *lb = s->label[i];
		const char *key = pp_str(c, lb->key), *str = pp_str(c, lb->str);
		if (!key || !str)
			continue;
		if ((!strcmp(key, "comm") || !strcmp(key, "thread") || !strcmp(key, "thread_name")) &&
		    *str)
			comm = pl_intern_str(c->p, str, strlen(str));
		else if (!strcmp(key, "pid") && lb->num >= 0)
			pid = lb->num;
		else if ((!strcmp(key, "tid") || !strcmp(key, "thread_id") ||
			  !strcmp(key, "threadid")) && lb->num >= 0)
			tid = lb->num;
	}
	return pl_intern_thread(c->p, pid, tid, comm);
}

/* The sample's frames, root first, into c->stack; *depth 0 and *bad when
 * a location is malformed. */
static enum pl_err pp_frames(struct pp *c, const PbSample *s, uint32_t *depth, bool *bad)
{
	size_t d = 0;
	enum pl_err rc;

	*bad = false;
	for (size_t k = s->n_location_id; k-- > 0;) {
		uint32_t li = index_find(&c->locs, s->location_id[k]);
		if (li == UINT32_MAX) {
			pp_bad(c, "sample's location id points nowhere", "sample");
			*bad = true;
			return PL_OK;
		}
		if (c->loc_n[li] == UINT32_MAX && (rc = pp_location(c, li)))
			return rc;
		if (c->loc_n[li] == 0) {
			*bad = true;
			return PL_OK;
		}
		if (d + c->loc_n[li] > c->p->limits.max_depth)
			return pl_fail(c->err, PL_ERR_LIMIT, "raise --max-depth",
				       "pprof sample %llu is deeper than %u frames",
				       (unsigned long long)c->record, c->p->limits.max_depth);
		memcpy(c->stack + d, c->frames + c->loc_first[li], c->loc_n[li] * sizeof(uint32_t));
		d += c->loc_n[li];
	}
	*depth = (uint32_t)d;
	return PL_OK;
}

static enum pl_err pp_sample(struct pp *c, const PbSample *s)
{
	struct pl_profile *p = c->p;
	const size_t nt = c->m->n_sample_type;
	uint64_t samples = 1;
	uint32_t depth = 0, stack;
	bool bad;
	enum pl_err rc;

	if (s->n_value != nt) {
		pp_bad(c, "sample's value count is not its type count", "sample");
		return PL_OK;
	}
	for (size_t i = 0; i < nt; i++)
		if (s->value[i] < 0) {
			pp_bad(c, "negative sample value (a diff profile?)", "sample");
			return PL_OK;
		}
	if (s->n_location_id == 0) {
		p->records_skipped++;
		return PL_OK;
	}
	if ((rc = pp_frames(c, s, &depth, &bad)) || bad)
		return rc;
	for (size_t i = 0; i < nt; i++)
		if (__builtin_add_overflow(c->ev_total[i], (uint64_t)s->value[i], &c->ev_total[i]))
			return pl_fail(c->err, PL_ERR_MALFORMED, "check the pprof file's values",
				       "pprof values of type %zu add up past 2^64", i);
	if (c->count_first && s->value[0] > 0)
		samples = (uint64_t)s->value[0];
	stack = pl_intern_stack(p, pp_thread(c, s), c->stack, depth, c->err);
	if (stack == PL_NOID)
		return c->err->code;
	for (size_t i = 0; i < nt; i++)
		if (s->value[i] > 0) {
			pl_add_weight(p, stack, c->events[i], samples, (uint64_t)s->value[i], true);
			pp_add_timed(p, stack, c->events[i], pp_time(c, s), samples, (uint64_t)s->value[i]);
		}
	if (++p->records_parsed > p->limits.max_records)
		return pl_fail(c->err, PL_ERR_LIMIT, "raise --max-records",
			       "more than %llu records", (unsigned long long)p->limits.max_records);
	return PL_OK;
}

/* ------------------------------------------------------------------ API */

static void pp_release(struct pp *c)
{
	free(c->locs.v);
	free(c->fns.v);
	free(c->maps.v);
	free(c->events);
	free(c->ev_total);
	free(c->loc_first);
	free(c->loc_n);
	free(c->frames);
	free(c->map_dso);
	free(c->stack);
}

enum pl_err pl_parse_pprof(struct pl_profile *p, const void *data, size_t n,
			   const char *source, struct pl_error *err)
{
	struct pp_alloc a = {0, ((uint64_t)64 << 20) + (uint64_t)n * 32, false};
	ProtobufCAllocator alloc = {pp_alloc_fn, pp_free_fn, &a};
	struct pp c = {.p = p, .err = err};
	PbProfile *m;
	enum pl_err rc = PL_OK;

	m = perflens__pprof__profile__unpack(&alloc, n, data);
	if (!m) {
		if (a.refused)
			return pl_fail(err, PL_ERR_LIMIT, "lower what the profile holds, or split it",
				       "pprof profile '%s' would take more than %llu MiB decoded",
				       source, (unsigned long long)(a.cap >> 20));
		return pl_fail(err, PL_ERR_MALFORMED,
			       "check that the file is a whole pprof profile (profile.proto, gzipped or not)",
			       "'%s' is not a decodable pprof profile (truncated or not protobuf)", source);
	}
	c.m = m;
	if ((rc = pp_events(&c)))
		goto out;
	index_build(&c.locs, m->n_location, loc_id, m->location);
	index_build(&c.fns, m->n_function, fn_id, m->function);
	index_build(&c.maps, m->n_mapping, map_id, m->mapping);
	p->records_malformed += c.locs.duplicates + c.fns.duplicates + c.maps.duplicates;
	pp_mappings(&c);
	c.loc_first = pl_xmalloc((m->n_location ? m->n_location : 1) * sizeof(uint32_t));
	c.loc_n = pl_xmalloc((m->n_location ? m->n_location : 1) * sizeof(uint32_t));
	memset(c.loc_n, 0xff, (m->n_location ? m->n_location : 1) * sizeof(uint32_t));
	c.stack = pl_xmalloc((size_t)p->limits.max_depth * sizeof(uint32_t));
	for (size_t i = 0; i < m->n_sample && !rc; i++) {
		c.record = i + 1;
		rc = pp_sample(&c, m->sample[i]);
	}
out:
	pp_release(&c);
	perflens__pprof__profile__free_unpacked(m, &alloc);
	return rc;
}

/* Read a varint at b[*i] (< n); false when it runs past n or 10 bytes. */
static bool sniff_varint(const unsigned char *b, size_t n, size_t *i, uint64_t *v)
{
	*v = 0;
	for (unsigned shift = 0; *i < n && shift < 70; shift += 7) {
		unsigned char c = b[(*i)++];
		*v |= (uint64_t)(c & 0x7f) << shift;
		if (!(c & 0x80))
			return true;
	}
	return false;
}

/* Producers write the fields in any order (Go starts with time_nanos), so
 * the first fields are checked against profile.proto: known numbers, each
 * with its wire type (0 varint, 2 length-delimited).  Three in a row (or
 * the whole of a smaller file) is no text. */
/* Does the head hold a byte that text never does (a C0 control other than
 * tab, newline and carriage return)?  Every pprof profile does within its
 * first bytes: a message's varint field tags are 0x08, 0x10, ..., the tags
 * of fields 2 and 3 are 0x12 and 0x1a, and string_table[0] is "" (a 0x00
 * length).  Plain text whose letters happen to read as protobuf tags and
 * lengths (a perf script line of a program named "jit_map", "java" or
 * "httpd") has none. */
static bool has_binary_byte(const unsigned char *b, size_t n)
{
	for (size_t i = 0; i < n && i < 32; i++)
		if (b[i] < 0x20 && b[i] != '\t' && b[i] != '\n' && b[i] != '\r')
			return true;
	return false;
}

bool pl_pprof_sniff(const unsigned char *b, size_t n)
{
	/* wire type of fields 1..16: 2 = length-delimited, 0 = varint, 3 = either */
	static const unsigned char wire[17] = {9, 2, 2, 2, 2, 2, 2, 0, 0, 0, 0, 2, 0, 3, 0, 0, 2};
	size_t i = 0;
	unsigned good = 0;

	if (!has_binary_byte(b, n))
		return false;

	while (good < 3 && i < n) {
		uint64_t tag, v;
		unsigned field, type;
		if (!sniff_varint(b, n, &i, &tag))
			return false;
		field = (unsigned)(tag >> 3), type = tag & 7;
		if (tag >> 3 > 16 || field == 0 || (type != 0 && type != 2) ||
		    (wire[field] != 3 && wire[field] != type))
			return false;
		if (!sniff_varint(b, n, &i, &v))
			return i >= n && good >= 1;   /* cut by the head's end */
		if (type == 2) {
			if (v > n - i)
				return good >= 1 || n >= 4096;
			i += (size_t)v;
		}
		good++;
	}
	return good >= 3 || (good >= 1 && i == n);
}
