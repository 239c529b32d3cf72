/* hotidx.c - the hotspot index (see hotidx.h).
 *
 * Layout (host byte order; the header says which), all in one file:
 *   header | views[nviews] | entries[nentries] | funcs[nfuncs] | pool
 * Each view holds its event name (raw, for picking), its "event", "unit"
 * and "total" values as JSON text, and where its hotspots start in the
 * entry array twice: once in the summary's (self) order, once in the
 * inclusive order list_hotspots sorts them in.  An entry holds the
 * function index, the JSON text of the hotspot's "self" and "inclusive"
 * objects, and the two percents a min_percent filter compares.  A
 * function holds the JSON text of its "symbol", "dso", "kind" and, when
 * it has them, "short_name" and "linkage_name".  Text
 * is in the pool, addressed by (offset, length).
 *
 * Reading loads the file and checks the header, a hash of all the rest,
 * and the view table; entries, functions and strings are bounds-checked
 * again as a page reads them.
 */
#include "hotidx.h"
#include "artifact.h"
#include "base/util.h"

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define HI_MAGIC "PLHOTIX1"
#define HI_VERSION 3u   /* 3: index_checksum is pl_strtab_hash */
#define HI_ENDIAN 0x01020304u
#define HI_MAX_BYTES (256ull << 20)   /* a bigger index is not written */
#define HI_DUMP_FLAGS (JSON_ENCODE_ANY | JSON_COMPACT | JSON_REAL_PRECISION(17))

/* The checksum of an index's body, checked on every open (each page of
 * list_hotspots): the two-lane table hash folds 16 bytes a multiply where
 * pl_hash folds 8 in one dependent chain, about four times faster on the
 * 90 kB index of a small capture (pl_hash was a tenth of that worker's
 * cpu).  It guards against damage, not against a writer of the artifact
 * root, who could write a consistent index anyway. */
static uint64_t index_checksum(const void *p, size_t n)
{
	return pl_strtab_hash(p, n) ^ HI_VERSION;
}

struct hi_header {
	char magic[8];
	uint32_t version, endian;
	uint32_t nviews, nfuncs;
	uint64_t nentries;
	uint64_t summary_size;     /* bytes of ID.json it was built from */
	uint64_t file_size;
	uint64_t pool_size;
	uint64_t checksum;         /* index_checksum of every byte after the header */
	char id[32];               /* NUL-padded */
};

struct hi_str {
	uint32_t off, len;
};

struct hi_view {
	struct hi_str name;        /* events[i].name, raw */
	struct hi_str event, unit, total;  /* JSON text */
	uint64_t nhot;
	uint64_t self_first, incl_first;   /* indexes into the entries */
};

struct hi_entry {
	uint32_t function;
	uint32_t pad;
	struct hi_str self, incl;  /* JSON text */
	double self_pct, incl_pct;
};

struct hi_func {
	struct hi_str symbol, dso, kind;   /* JSON text */
	struct hi_str short_name, linkage; /* JSON text, or empty when absent */
};

struct pl_hotidx {
	const unsigned char *map;
	size_t size;
	const struct hi_header *h;
	const struct hi_view *views;
	const struct hi_entry *entries;
	const struct hi_func *funcs;
	const char *pool;
};

/* ---------------------------------------------------------- ordering */

static json_int_t weight(json_t *h, const char *which, const char *key)
{
	return json_integer_value(json_object_get(json_object_get(h, which), key));
}

static int cmp_inclusive(const void *a, const void *b, void *funcs)
{
	json_t *x = *(json_t *const *)a, *y = *(json_t *const *)b;
	json_int_t fx = json_integer_value(json_object_get(x, "function"));
	json_int_t fy = json_integer_value(json_object_get(y, "function"));
	static const char *const keys[][2] = {
		{"inclusive", "period"}, {"inclusive", "samples"}, {"self", "period"},
	};
	const char *sx, *sy;
	int c;

	for (size_t i = 0; i < PL_ARRAY_LEN(keys); i++) {
		json_int_t vx = weight(x, keys[i][0], keys[i][1]);
		json_int_t vy = weight(y, keys[i][0], keys[i][1]);
		if (vx != vy)
			return vx > vy ? -1 : 1;
	}
	sx = json_string_value(json_object_get(json_array_get(funcs, (size_t)fx), "symbol"));
	sy = json_string_value(json_object_get(json_array_get(funcs, (size_t)fy), "symbol"));
	c = strcmp(sx ? sx : "", sy ? sy : "");
	return c ? c : (fx < fy ? -1 : (fx > fy));
}

void pl_hotidx_sort_inclusive(json_t *funcs, json_t **order, size_t n)
{
	qsort_r(order, n, sizeof(*order), cmp_inclusive, funcs);
}

/* ------------------------------------------------------------ writing */

struct hi_build {
	struct pl_buf views, entries, funcs, pool;
	bool bad;
};

static struct hi_str add_raw(struct hi_build *b, const char *s, size_t n)
{
	struct hi_str r = {(uint32_t)b->pool.len, (uint32_t)n};

	if (b->pool.len + n > UINT32_MAX)
		b->bad = true;
	pl_buf_add(&b->pool, s, n);
	return r;
}

/* The JSON text of `v` (null when absent) into the pool. */
static struct hi_str add_json(struct hi_build *b, json_t *v)
{
	char *text = json_dumps(v ? v : json_null(), HI_DUMP_FLAGS);
	struct hi_str r = {0, 0};

	if (!text) {
		b->bad = true;
		return r;
	}
	r = add_raw(b, text, strlen(text));
	free(text);
	return r;
}

static double percent(json_t *h, const char *which)
{
	return json_number_value(json_object_get(json_object_get(h, which), "percent"));
}

static void add_entry(struct hi_build *b, json_t *h, size_t nfuncs)
{
	json_t *f = json_object_get(h, "function");
	struct hi_entry e = {0};

	if (!json_is_integer(f) || json_integer_value(f) < 0 ||
	    (size_t)json_integer_value(f) >= nfuncs) {
		b->bad = true;
		return;
	}
	e.function = (uint32_t)json_integer_value(f);
	e.self = add_json(b, json_object_get(h, "self"));
	e.incl = add_json(b, json_object_get(h, "inclusive"));
	e.self_pct = percent(h, "self");
	e.incl_pct = percent(h, "inclusive");
	pl_buf_add(&b->entries, &e, sizeof(e));
}

static void add_view(struct hi_build *b, json_t *event, json_t *view, json_t *funcs)
{
	json_t *hot = json_object_get(view, "hotspots"), *h;
	const char *name = json_string_value(json_object_get(event, "name"));
	size_t n = json_array_size(hot), i;
	json_t **order = pl_xmalloc((n + 1) * sizeof(*order));
	struct hi_view v = {0};

	v.name = name ? add_raw(b, name, strlen(name)) : (struct hi_str){0, 0};
	if (!name)
		b->bad = true;
	v.event = add_json(b, json_object_get(view, "event"));
	v.unit = add_json(b, json_object_get(view, "unit"));
	v.total = add_json(b, json_object_get(view, "total"));
	v.nhot = n;
	v.self_first = b->entries.len / sizeof(struct hi_entry);
	json_array_foreach(hot, i, h) {
		order[i] = h;
		add_entry(b, h, json_array_size(funcs));
	}
	v.incl_first = b->entries.len / sizeof(struct hi_entry);
	pl_hotidx_sort_inclusive(funcs, order, n);
	for (i = 0; i < n; i++)
		add_entry(b, order[i], json_array_size(funcs));
	free(order);
	pl_buf_add(&b->views, &v, sizeof(v));
}

static void add_funcs(struct hi_build *b, json_t *funcs)
{
	json_t *f;
	size_t i;

	json_array_foreach(funcs, i, f) {
		json_t *sn = json_object_get(f, "short_name"), *ln = json_object_get(f, "linkage_name");
		struct hi_func hf = {add_json(b, json_object_get(f, "symbol")),
				     add_json(b, json_object_get(f, "dso")),
				     add_json(b, json_object_get(f, "kind")),
				     sn ? add_json(b, sn) : (struct hi_str){0, 0},
				     ln ? add_json(b, ln) : (struct hi_str){0, 0}};
		pl_buf_add(&b->funcs, &hf, sizeof(hf));
	}
}

static void build_release(struct hi_build *b)
{
	pl_buf_release(&b->views);
	pl_buf_release(&b->entries);
	pl_buf_release(&b->funcs);
	pl_buf_release(&b->pool);
}

static void index_path(const char *root, const char *id, char *out, size_t cap)
{
	snprintf(out, cap, "%s/cache/hotidx/%s.idx", root, id);
}

/* The summary's size now, or -1. */
static int64_t summary_size(const char *root, const char *id)
{
	char path[4096];
	struct stat st;

	snprintf(path, sizeof(path), "%s/analyses/%s.json", root, id);
	if (stat(path, &st) < 0 || !S_ISREG(st.st_mode))
		return -1;
	return (int64_t)st.st_size;
}

enum pl_err pl_hotidx_write(const char *root, const char *id, json_t *summary,
			    struct pl_error *err)
{
	int64_t size = root ? summary_size(root, id) : -1;
	json_t *events = json_object_get(summary, "events"), *views = json_object_get(summary, "views");
	json_t *funcs = json_object_get(summary, "functions");
	struct hi_build b = {0};
	struct hi_header h = {0};
	struct pl_buf out = {0};
	char path[4096];
	enum pl_err rc;

	if (size < 0 || !pl_artifact_id_valid(id) || !json_is_array(funcs) ||
	    json_array_size(events) != json_array_size(views) || json_array_size(views) == 0)
		return pl_fail(err, PL_ERR_MALFORMED, NULL, "no hotspot index for this summary");
	add_funcs(&b, funcs);
	for (size_t i = 0; i < json_array_size(views); i++)
		add_view(&b, json_array_get(events, i), json_array_get(views, i), funcs);
	memcpy(h.magic, HI_MAGIC, sizeof(h.magic));
	h.version = HI_VERSION;
	h.endian = HI_ENDIAN;
	h.nviews = (uint32_t)json_array_size(views);
	h.nfuncs = (uint32_t)json_array_size(funcs);
	h.nentries = b.entries.len / sizeof(struct hi_entry);
	h.summary_size = (uint64_t)size;
	h.pool_size = b.pool.len;
	h.file_size = sizeof(h) + b.views.len + b.entries.len + b.funcs.len + b.pool.len;
	memcpy(h.id, id, strlen(id));
	if (b.bad || h.file_size > HI_MAX_BYTES) {
		build_release(&b);
		return pl_fail(err, PL_ERR_LIMIT, NULL, "no hotspot index for this summary");
	}
	pl_buf_add(&out, &h, sizeof(h));
	pl_buf_add(&out, b.views.data, b.views.len);
	pl_buf_add(&out, b.entries.data, b.entries.len);
	pl_buf_add(&out, b.funcs.data, b.funcs.len);
	pl_buf_add(&out, b.pool.data, b.pool.len);
	build_release(&b);
	h.checksum = index_checksum(out.data + sizeof(h), out.len - sizeof(h));
	memcpy(out.data, &h, sizeof(h));
	index_path(root, id, path, sizeof(path));
	rc = pl_write_file_atomic(path, out.data, out.len, err);
	pl_buf_release(&out);
	return rc;
}

/* ------------------------------------------------------------ reading */

static bool str_ok(const struct pl_hotidx *x, struct hi_str s)
{
	return (uint64_t)s.off + s.len <= x->h->pool_size;
}

static bool header_ok(const struct pl_hotidx *x, const char *id, int64_t want_size)
{
	const struct hi_header *h = x->h;
	uint64_t need = sizeof(*h);
	char hid[sizeof(h->id) + 1];

	if (x->size < sizeof(*h) || memcmp(h->magic, HI_MAGIC, sizeof(h->magic)) != 0 ||
	    h->version != HI_VERSION || h->endian != HI_ENDIAN || h->file_size != x->size ||
	    h->summary_size != (uint64_t)want_size || h->nviews == 0)
		return false;
	memcpy(hid, h->id, sizeof(h->id));
	hid[sizeof(h->id)] = '\0';
	if (strcmp(hid, id) != 0)
		return false;
	/* Each count is at most the file size, so the sums cannot overflow. */
	if (h->nviews > x->size || h->nfuncs > x->size || h->nentries > x->size ||
	    h->pool_size > x->size)
		return false;
	need += (uint64_t)h->nviews * sizeof(struct hi_view) +
		h->nentries * sizeof(struct hi_entry) +
		(uint64_t)h->nfuncs * sizeof(struct hi_func) + h->pool_size;
	/* Sizes first, then every byte: a flipped percent would not show
	 * otherwise, and the hash costs far less than parsing the summary. */
	return need == x->size &&
	       index_checksum(x->map + sizeof(*h), x->size - sizeof(*h)) == h->checksum;
}

static bool views_ok(const struct pl_hotidx *x)
{
	for (uint32_t i = 0; i < x->h->nviews; i++) {
		const struct hi_view *v = &x->views[i];
		if (!str_ok(x, v->name) || !str_ok(x, v->event) || !str_ok(x, v->unit) ||
		    !str_ok(x, v->total) || v->nhot > x->h->nentries ||
		    v->self_first > x->h->nentries - v->nhot ||
		    v->incl_first > x->h->nentries - v->nhot)
			return false;
	}
	return true;
}

struct pl_hotidx *pl_hotidx_open(const char *root, const char *id)
{
	struct pl_hotidx *x;
	char path[4096];
	struct stat st;
	int64_t want;
	unsigned char *data;
	size_t got;
	int fd;

	if (!root || !pl_artifact_id_valid(id) || (want = summary_size(root, id)) < 0)
		return NULL;
	index_path(root, id, path, sizeof(path));
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size < (off_t)sizeof(struct hi_header) ||
	    (uint64_t)st.st_size > HI_MAX_BYTES) {
		close(fd);
		return NULL;
	}
	/* Read, not mapped: in a fresh worker every mapped page would fault,
	 * and the unmapping costs a TLB shootdown; a copy costs less. */
	data = pl_xmalloc((size_t)st.st_size);
	got = pl_read_full(fd, data, (size_t)st.st_size);
	close(fd);
	x = pl_xcalloc(1, sizeof(*x));
	x->map = data;
	x->size = got;
	x->h = (const void *)data;
	if (got != (size_t)st.st_size || !header_ok(x, id, want)) {
		pl_hotidx_close(x);
		return NULL;
	}
	x->views = (const void *)(x->map + sizeof(struct hi_header));
	x->entries = (const void *)(x->views + x->h->nviews);
	x->funcs = (const void *)(x->entries + x->h->nentries);
	x->pool = (const char *)(x->funcs + x->h->nfuncs);
	if (!views_ok(x)) {
		pl_hotidx_close(x);
		return NULL;
	}
	return x;
}

void pl_hotidx_close(struct pl_hotidx *x)
{
	if (!x)
		return;
	free((void *)x->map);
	free(x);
}

size_t pl_hotidx_nviews(const struct pl_hotidx *x)
{
	return x->h->nviews;
}

char *pl_hotidx_event_name(const struct pl_hotidx *x, size_t view)
{
	const struct hi_view *v;

	assert(view < x->h->nviews);
	v = &x->views[view];
	return pl_xstrndup(x->pool + v->name.off, v->name.len);
}

/* The JSON value stored at `s`, or NULL when it does not parse. */
/* A JSON string with nothing to unescape ("...", no backslash, quote or
 * control character inside): made directly, as json_loadb would make it
 * (json_stringn checks the UTF-8 as the loader does).  Most of a page's
 * values are such names, and the loader's set-up per value was a fifth
 * of a list_hotspots worker's cpu. */
static bool plain_string(const char *p, size_t n)
{
	if (n < 2 || p[0] != '"' || p[n - 1] != '"')
		return false;
	for (size_t i = 1; i + 1 < n; i++)
		if ((unsigned char)p[i] < 0x20 || p[i] == '"' || p[i] == '\\')
			return false;
	return true;
}

static json_t *load(const struct pl_hotidx *x, struct hi_str s)
{
	const char *p;

	if (!str_ok(x, s))
		return NULL;
	p = x->pool + s.off;
	if (plain_string(p, s.len))
		return json_stringn(p + 1, s.len - 2);
	return json_loadb(p, s.len, JSON_DECODE_ANY, NULL);
}

/* list_hotspots' entry for hotspot `e` at `rank`, or NULL. */
static json_t *hotspot(const struct pl_hotidx *x, const struct hi_entry *e, size_t rank)
{
	const struct hi_func *f;
	json_t *sym, *dso, *kind, *self, *incl;
	char id[32];

	if (e->function >= x->h->nfuncs)
		return NULL;
	f = &x->funcs[e->function];
	sym = load(x, f->symbol);
	dso = load(x, f->dso);
	kind = load(x, f->kind);
	self = load(x, e->self);
	incl = load(x, e->incl);
	if (!sym || !dso || !kind || !self || !incl) {
		json_decref(sym);
		json_decref(dso);
		json_decref(kind);
		json_decref(self);
		json_decref(incl);
		return NULL;
	}
	snprintf(id, sizeof(id), "fn%u", e->function);
	return json_pack("{s:s,s:I,s:o,s:o*,s:o*,s:o,s:o,s:o,s:o}", "hotspot_id", id, "rank", (json_int_t)rank,
			 "symbol", sym, "short_name", f->short_name.len ? load(x, f->short_name) : NULL,
			 "linkage_name", f->linkage.len ? load(x, f->linkage) : NULL,
			 "dso", dso, "kind", kind, "self", self, "inclusive", incl);
}

bool pl_hotidx_view(const struct pl_hotidx *x, size_t view, json_t **event, json_t **unit,
		    json_t **total)
{
	const struct hi_view *v = view < x->h->nviews ? &x->views[view] : NULL;

	*event = v ? load(x, v->event) : NULL;
	*unit = v ? load(x, v->unit) : NULL;
	*total = v ? load(x, v->total) : NULL;
	if (*event && *unit && *total && json_is_string(*event))
		return true;
	json_decref(*event);
	json_decref(*unit);
	json_decref(*total);
	*event = *unit = *total = NULL;
	return false;
}

static const struct hi_entry *first_entry(const struct pl_hotidx *x, size_t view, bool by_inclusive)
{
	const struct hi_view *v;

	assert(view < x->h->nviews);
	v = &x->views[view];
	return x->entries + (by_inclusive ? v->incl_first : v->self_first);
}

size_t pl_hotidx_select(const struct pl_hotidx *x, size_t view, bool by_inclusive, double min_pct,
			size_t **pos)
{
	const struct hi_entry *first = first_entry(x, view, by_inclusive);
	size_t nhot = (size_t)x->views[view].nhot, n = 0;

	/* The filter as the summary path applies it: every entry at or above
	 * min_pct, in order (not assuming that the percents descend). */
	*pos = pl_xmalloc((nhot + 1) * sizeof(**pos));
	for (size_t i = 0; i < nhot; i++)
		if ((by_inclusive ? first[i].incl_pct : first[i].self_pct) >= min_pct)
			(*pos)[n++] = i;
	return n;
}

json_t *pl_hotidx_hotspot(const struct pl_hotidx *x, size_t view, bool by_inclusive, size_t pos,
			  size_t rank)
{
	assert(pos < x->views[view].nhot);
	return hotspot(x, &first_entry(x, view, by_inclusive)[pos], rank);
}
