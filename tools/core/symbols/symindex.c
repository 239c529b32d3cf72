/* symindex.c - the symbol index format: building, checking, lookups (see
 * symindex.h).
 *
 * Rows are gathered with strings interned (ids in first-appearance order,
 * so the same input gives the same ids) and inline chains deduplicated;
 * finish lays out header and sections in one zeroed blob, turns string
 * ids into byte offsets and seals it with a checksum.  A lookup is an
 * upper-bound binary search over one section's starts.  Nothing read from
 * a blob is trusted before check_blob() passed, and references inside rows
 * are bounds-checked again at use.
 */
#include "symindex.h"

#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/checksum.h"
#include "base/fsatomic.h"
#include "base/util.h"

#define MAGIC "PLSYMIDX"
#define BYTE_ORDER_MARK 0x01020304u
#define NONE UINT32_MAX

enum { FLAG_DWARF = 1, FLAG_SEARCHED = 2, FLAG_DEBUGLINK = 4 };
enum { SCOPE_TRUNCATED = 1, SCOPE_HIDDEN_CUT = 2 };
enum { SEC_EXEC, SEC_STRINGS, SEC_FUNC, SEC_LINE, SEC_SCOPE, SEC_INLINE, NSEC };

struct sx_range {
	uint64_t start, end;
};
struct sx_func {
	uint64_t start, value;
	uint32_t name, pad;
};
struct sx_line {
	uint64_t start;
	uint32_t file, comp_dir, line, column;
};
struct sx_scope {
	uint64_t start;
	uint32_t function, subprogram, first;
	uint16_t count, flags;
};
struct sx_inline {
	uint32_t function, call_file, call_line, call_column;
};

struct sx_section {
	uint64_t offset, count;
};

/* Fixed layout, all fields naturally aligned, written as is (the byte
 * order mark refuses a file from another kind of machine). */
struct sx_header {
	char magic[8];
	uint32_t version, byte_order;
	uint64_t header_size, file_size;
	uint64_t checksum;                 /* of the whole file with this field 0 */
	uint32_t flags, debug_source;
	uint32_t debuglink_crc, pad;
	uint64_t main_size;
	int64_t main_mtime_s, main_mtime_ns;
	uint64_t debug_size;
	int64_t debug_mtime_s, debug_mtime_ns;
	uint64_t nsyms;
	struct sx_section sec[NSEC];
	char build_id[PL_BUILD_ID_HEX_MAX];
	char pad2[(8 - PL_BUILD_ID_HEX_MAX % 8) % 8];
	char debuglink[PL_DEBUGLINK_MAX];
	char debug_path[PL_SYMINDEX_PATH_MAX];
};
_Static_assert(sizeof(struct sx_header) % 8 == 0, "sections stay 8-byte aligned");

static const size_t entry_size[NSEC] = {
	sizeof(struct sx_range), 1, sizeof(struct sx_func), sizeof(struct sx_line),
	sizeof(struct sx_scope), sizeof(struct sx_inline),
};

/* A NUL-terminated copy cut to `cap` bytes. */
static void copy_str(char *dst, size_t cap, const char *src)
{
	size_t n = strnlen(src, cap - 1);

	memcpy(dst, src, n);
	dst[n] = '\0';
}

/* ----------------------------------------------------------- checksum */

/* The checksum of a blob whose header's checksum field is taken as 0. */
static uint64_t blob_checksum(const unsigned char *p, size_t n)
{
	return pl_checksum_sealed(p, n, sizeof(struct sx_header), offsetof(struct sx_header, checksum));
}

/* ------------------------------------------------------------ builder */

struct chain_slot {
	uint64_t hash;
	uint32_t first1;               /* first inline + 1; 0 empty */
	uint32_t count;
};

struct pl_symindex_builder {
	struct pl_strtab strs;         /* rows hold ids until finish */
	struct sx_range *exec;
	size_t nexec, exec_cap;
	struct sx_func *func;
	size_t nfunc, func_cap;
	struct sx_line *line;
	size_t nline, line_cap;
	struct sx_scope *scope;
	size_t nscope, scope_cap;
	struct sx_inline *inl;
	size_t ninl, inl_cap;
	struct chain_slot *chains;     /* open addressing, load <= 1/2 */
	size_t nchains, chain_slots;
};

struct pl_symindex_builder *pl_symindex_builder_new(void)
{
	struct pl_symindex_builder *b = pl_xcalloc(1, sizeof(*b));

	pl_strtab_init(&b->strs);
	b->chain_slots = 1024;
	b->chains = pl_xcalloc(b->chain_slots, sizeof(*b->chains));
	return b;
}

void pl_symindex_builder_free(struct pl_symindex_builder *b)
{
	if (!b)
		return;
	pl_strtab_release(&b->strs);
	free(b->exec);
	free(b->func);
	free(b->line);
	free(b->scope);
	free(b->inl);
	free(b->chains);
	free(b);
}

static uint32_t str_id(struct pl_symindex_builder *b, const char *s)
{
	return s ? pl_strtab_intern(&b->strs, s, strnlen(s, PL_SYMINDEX_NAME_KEEP)) : NONE;
}

void pl_symindex_add_exec(struct pl_symindex_builder *b, uint64_t start, uint64_t end)
{
	PL_GROW(b->exec, b->exec_cap, b->nexec + 1);
	b->exec[b->nexec++] = (struct sx_range){start, end};
}

void pl_symindex_add_func(struct pl_symindex_builder *b, uint64_t start, const char *name,
			  uint64_t value)
{
	struct sx_func r = {.start = start, .value = name ? value : 0, .name = str_id(b, name)};
	struct sx_func *last = b->nfunc ? &b->func[b->nfunc - 1] : NULL;

	if (last && (start <= last->start || (last->name == r.name && last->value == r.value)))
		return;
	PL_GROW(b->func, b->func_cap, b->nfunc + 1);
	b->func[b->nfunc++] = r;
}

void pl_symindex_add_line(struct pl_symindex_builder *b, uint64_t start, const char *file,
			  const char *comp_dir, uint32_t line, uint32_t column)
{
	struct sx_line r = {.start = start, .file = str_id(b, file), .comp_dir = NONE};
	struct sx_line *last = b->nline ? &b->line[b->nline - 1] : NULL;

	if (file) {
		r.comp_dir = str_id(b, comp_dir);
		r.line = line;
		r.column = column;
	}
	if (last && (start <= last->start ||
		     (last->file == r.file && last->comp_dir == r.comp_dir && last->line == r.line &&
		      last->column == r.column)))
		return;
	PL_GROW(b->line, b->line_cap, b->nline + 1);
	b->line[b->nline++] = r;
}

static void chains_grow(struct pl_symindex_builder *b)
{
	struct chain_slot *old = b->chains;
	size_t n = b->chain_slots;

	b->chain_slots *= 2;
	b->chains = pl_xcalloc(b->chain_slots, sizeof(*b->chains));
	for (size_t i = 0; i < n; i++) {
		size_t j;
		if (!old[i].first1)
			continue;
		for (j = old[i].hash & (b->chain_slots - 1); b->chains[j].first1;
		     j = (j + 1) & (b->chain_slots - 1))
			;
		b->chains[j] = old[i];
	}
	free(old);
}

/* The index of the first entry of an equal chain stored before, or of
 * this one appended. */
static uint32_t chain_first(struct pl_symindex_builder *b, const struct sx_inline *c, size_t n)
{
	uint64_t h = pl_hash(c, n * sizeof(*c), n);
	uint32_t first;
	size_t j;

	for (j = h & (b->chain_slots - 1); b->chains[j].first1; j = (j + 1) & (b->chain_slots - 1)) {
		const struct chain_slot *cs = &b->chains[j];
		if (cs->hash == h && cs->count == n &&
		    memcmp(&b->inl[cs->first1 - 1], c, n * sizeof(*c)) == 0)
			return cs->first1 - 1;
	}
	first = (uint32_t)b->ninl;
	PL_GROW(b->inl, b->inl_cap, b->ninl + n);
	memcpy(&b->inl[b->ninl], c, n * sizeof(*c));
	b->chains[j] = (struct chain_slot){h, first + 1, (uint32_t)n};
	b->ninl += n;
	if (2 * ++b->nchains > b->chain_slots)
		chains_grow(b);
	return first;
}

void pl_symindex_add_scope(struct pl_symindex_builder *b, uint64_t start,
			   const struct pl_symindex_scope *sc)
{
	struct sx_inline c[PL_SYMINDEX_MAX_INLINES];
	size_t n = sc->ninl < PL_SYMINDEX_MAX_INLINES ? sc->ninl : PL_SYMINDEX_MAX_INLINES;
	struct sx_scope r = {.start = start, .function = str_id(b, sc->dwarf_function),
			     .subprogram = str_id(b, sc->dwarf_subprogram), .first = 0,
			     .count = (uint16_t)n,
			     .flags = (sc->truncated ? SCOPE_TRUNCATED : 0) |
				      (sc->hidden_cut ? SCOPE_HIDDEN_CUT : 0)};
	struct sx_scope *last = b->nscope ? &b->scope[b->nscope - 1] : NULL;

	for (size_t i = 0; i < n; i++)
		c[i] = (struct sx_inline){str_id(b, sc->inl[i].function), str_id(b, sc->inl[i].call_file),
					  sc->inl[i].call_line, sc->inl[i].call_column};
	if (n)
		r.first = chain_first(b, c, n);
	if (last && (start <= last->start ||
		     (last->function == r.function && last->subprogram == r.subprogram &&
		      last->first == r.first && last->count == r.count && last->flags == r.flags)))
		return;
	PL_GROW(b->scope, b->scope_cap, b->nscope + 1);
	b->scope[b->nscope++] = r;
}

static uint64_t align8(uint64_t n)
{
	return (n + 7) & ~(uint64_t)7;
}

uint64_t pl_symindex_builder_bytes(const struct pl_symindex_builder *b)
{
	return sizeof(struct sx_header) + 8 * NSEC + b->nexec * sizeof(struct sx_range) +
	       b->strs.bytes + b->strs.count + b->nfunc * sizeof(struct sx_func) +
	       b->nline * sizeof(struct sx_line) + b->nscope * sizeof(struct sx_scope) +
	       b->ninl * sizeof(struct sx_inline);
}

static int cmp_range(const void *a, const void *b)
{
	const struct sx_range *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return (x->end > y->end) - (x->end < y->end);
}

static void fill_header(struct sx_header *h, const struct pl_symindex_source *src)
{
	memcpy(h->magic, MAGIC, 8);
	h->version = PL_SYMINDEX_VERSION;
	h->byte_order = BYTE_ORDER_MARK;
	h->header_size = sizeof(*h);
	h->flags = (src->has_dwarf ? FLAG_DWARF : 0) | (src->debug_searched ? FLAG_SEARCHED : 0) |
		   (src->has_debuglink ? FLAG_DEBUGLINK : 0);
	h->debug_source = src->debug_source;
	h->debuglink_crc = src->debuglink_crc;
	h->main_size = src->main_size;
	h->main_mtime_s = src->main_mtime_s;
	h->main_mtime_ns = src->main_mtime_ns;
	h->debug_size = src->debug_size;
	h->debug_mtime_s = src->debug_mtime_s;
	h->debug_mtime_ns = src->debug_mtime_ns;
	h->nsyms = src->nsyms;
	copy_str(h->build_id, sizeof(h->build_id), src->build_id);
	copy_str(h->debuglink, sizeof(h->debuglink), src->debuglink);
	copy_str(h->debug_path, sizeof(h->debug_path), src->debug_path);
}

/* String id -> byte offset in the strings section. */
static uint32_t off_of(const uint32_t *offs, uint32_t id)
{
	return id == NONE ? NONE : offs[id];
}

static void place_rows(struct pl_symindex_builder *b, const uint32_t *offs)
{
	for (size_t i = 0; i < b->nfunc; i++)
		b->func[i].name = off_of(offs, b->func[i].name);
	for (size_t i = 0; i < b->nline; i++) {
		b->line[i].file = off_of(offs, b->line[i].file);
		b->line[i].comp_dir = off_of(offs, b->line[i].comp_dir);
	}
	for (size_t i = 0; i < b->nscope; i++) {
		b->scope[i].function = off_of(offs, b->scope[i].function);
		b->scope[i].subprogram = off_of(offs, b->scope[i].subprogram);
	}
	for (size_t i = 0; i < b->ninl; i++) {
		b->inl[i].function = off_of(offs, b->inl[i].function);
		b->inl[i].call_file = off_of(offs, b->inl[i].call_file);
	}
}

enum pl_err pl_symindex_finish(struct pl_symindex_builder *b, const struct pl_symindex_source *src,
			       void **blob, size_t *len, struct pl_error *err)
{
	const void *data[NSEC];
	uint64_t count[NSEC], at = sizeof(struct sx_header);
	struct sx_header h = {0};
	uint32_t *offs;
	unsigned char *p;
	uint64_t total = pl_symindex_builder_bytes(b), soff = 0;

	*blob = NULL;
	*len = 0;
	if (total > PL_SYMINDEX_MAX_BYTES || b->strs.bytes + b->strs.count >= NONE) {
		pl_symindex_builder_free(b);
		return pl_fail(err, PL_ERR_LIMIT, NULL,
			       "the symbol index would take more than %llu MiB",
			       (unsigned long long)(PL_SYMINDEX_MAX_BYTES >> 20));
	}
	if (b->nexec)
		qsort(b->exec, b->nexec, sizeof(*b->exec), cmp_range);
	offs = pl_xmalloc((b->strs.count + 1) * sizeof(*offs));
	for (size_t i = 0; i < b->strs.count; i++) {
		offs[i] = (uint32_t)soff;
		soff += b->strs.lens[i] + 1;
	}
	place_rows(b, offs);
	data[SEC_EXEC] = b->exec, count[SEC_EXEC] = b->nexec;
	data[SEC_STRINGS] = NULL, count[SEC_STRINGS] = soff;
	data[SEC_FUNC] = b->func, count[SEC_FUNC] = b->nfunc;
	data[SEC_LINE] = b->line, count[SEC_LINE] = b->nline;
	data[SEC_SCOPE] = b->scope, count[SEC_SCOPE] = b->nscope;
	data[SEC_INLINE] = b->inl, count[SEC_INLINE] = b->ninl;
	fill_header(&h, src);
	for (int s = 0; s < NSEC; s++) {
		h.sec[s] = (struct sx_section){at, count[s]};
		at = align8(at + count[s] * entry_size[s]);
	}
	h.file_size = at;
	p = pl_xcalloc(1, at);   /* zeroed: padding bytes are deterministic */
	for (int s = 0; s < NSEC; s++)
		if (data[s] && count[s])
			memcpy(p + h.sec[s].offset, data[s], count[s] * entry_size[s]);
	for (size_t i = 0; i < b->strs.count; i++)
		memcpy(p + h.sec[SEC_STRINGS].offset + offs[i], b->strs.strs[i], b->strs.lens[i]);
	memcpy(p, &h, sizeof(h));
	h.checksum = blob_checksum(p, at);
	memcpy(p, &h, sizeof(h));
	free(offs);
	pl_symindex_builder_free(b);
	*blob = p;
	*len = at;
	return PL_OK;
}

enum pl_err pl_symindex_save(const void *blob, size_t len, const char *path,
			     struct pl_error *err)
{
	return pl_write_file_atomic(path, blob, len, err);
}

/* ------------------------------------------------------------ loading */

struct pl_symindex {
	const unsigned char *base;
	size_t len;
	bool mapped;                   /* munmap, else free */
	struct pl_symindex_source src;
	const struct sx_range *exec;
	const char *strs;
	const struct sx_func *func;
	const struct sx_line *line;
	const struct sx_scope *scope;
	const struct sx_inline *inl;
	uint64_t n[NSEC];
};

static bool terminated(const char *s, size_t cap)
{
	return memchr(s, '\0', cap) != NULL;
}

static void read_source(const struct sx_header *h, struct pl_symindex_source *s)
{
	memset(s, 0, sizeof(*s));
	copy_str(s->build_id, sizeof(s->build_id), h->build_id);
	s->main_size = h->main_size;
	s->main_mtime_s = h->main_mtime_s;
	s->main_mtime_ns = h->main_mtime_ns;
	s->has_dwarf = h->flags & FLAG_DWARF;
	s->debug_searched = h->flags & FLAG_SEARCHED;
	s->has_debuglink = h->flags & FLAG_DEBUGLINK;
	s->debug_source = h->debug_source;
	copy_str(s->debug_path, sizeof(s->debug_path), h->debug_path);
	s->debug_size = h->debug_size;
	s->debug_mtime_s = h->debug_mtime_s;
	s->debug_mtime_ns = h->debug_mtime_ns;
	copy_str(s->debuglink, sizeof(s->debuglink), h->debuglink);
	s->debuglink_crc = h->debuglink_crc;
	s->nsyms = h->nsyms;
}

static enum pl_err refuse(struct pl_error *err, const char *why)
{
	return pl_fail(err, PL_ERR_UNSUPPORTED, "it is rebuilt from the debug information",
		       "symbol index refused: %s", why);
}

/* Every check that does not look at rows; fills x's section pointers. */
static enum pl_err check_blob(struct pl_symindex *x, const char *build_id, struct pl_error *err)
{
	struct sx_header h;
	const void **ptr[NSEC] = {(const void **)&x->exec, (const void **)&x->strs,
				  (const void **)&x->func, (const void **)&x->line,
				  (const void **)&x->scope, (const void **)&x->inl};

	if (x->len < sizeof(h))
		return refuse(err, "truncated header");
	memcpy(&h, x->base, sizeof(h));
	if (memcmp(h.magic, MAGIC, 8) != 0)
		return refuse(err, "not a symbol index");
	if (h.byte_order != BYTE_ORDER_MARK)
		return refuse(err, "written on a machine of another byte order");
	if (h.version != PL_SYMINDEX_VERSION)
		return refuse(err, "another format version");
	if (h.header_size != sizeof(h) || h.file_size != x->len)
		return refuse(err, "truncated or resized");
	if (!terminated(h.build_id, sizeof(h.build_id)) ||
	    !terminated(h.debuglink, sizeof(h.debuglink)) ||
	    !terminated(h.debug_path, sizeof(h.debug_path)))
		return refuse(err, "corrupt header strings");
	if (!build_id || strcmp(h.build_id, build_id) != 0)
		return refuse(err, "built for another build-id");
	for (int s = 0; s < NSEC; s++) {
		uint64_t off = h.sec[s].offset, cnt = h.sec[s].count;
		if (off % 8 || off < sizeof(h) || off > x->len ||
		    cnt > (x->len - off) / entry_size[s])
			return refuse(err, "a section lies outside the file");
		*ptr[s] = x->base + off;
		x->n[s] = cnt;
	}
	if (x->n[SEC_STRINGS] && x->strs[x->n[SEC_STRINGS] - 1] != '\0')
		return refuse(err, "unterminated strings");
	if (blob_checksum(x->base, x->len) != h.checksum)
		return refuse(err, "checksum mismatch (corrupt)");
	read_source(&h, &x->src);
	return PL_OK;
}

bool pl_symindex_seal(void *blob, size_t len, char build_id[PL_BUILD_ID_HEX_MAX])
{
	struct sx_header h;

	if (len < sizeof(h))
		return false;
	memcpy(&h, blob, sizeof(h));
	h.file_size = len;
	memcpy(build_id, h.build_id, PL_BUILD_ID_HEX_MAX - 1);
	build_id[PL_BUILD_ID_HEX_MAX - 1] = '\0';
	memcpy(blob, &h, sizeof(h));
	h.checksum = blob_checksum(blob, len);
	memcpy(blob, &h, sizeof(h));
	return true;
}

enum pl_err pl_symindex_from_blob(void *blob, size_t len, const char *build_id,
				  struct pl_symindex **out, struct pl_error *err)
{
	struct pl_symindex *x = pl_xcalloc(1, sizeof(*x));

	x->base = blob;
	x->len = len;
	*out = NULL;
	if (check_blob(x, build_id, err)) {
		pl_symindex_free(x);
		return err->code;
	}
	*out = x;
	return PL_OK;
}

enum pl_err pl_symindex_open(const char *path, const char *build_id, struct pl_symindex **out,
			     struct pl_error *err)
{
	struct pl_symindex *x;
	struct stat st;
	void *p;
	int fd;

	*out = NULL;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return pl_fail(err, PL_ERR_INPUT, NULL, "no symbol index at '%s': %s", path,
			       strerror(errno));
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size < (off_t)sizeof(struct sx_header) ||
	    (uint64_t)st.st_size > PL_SYMINDEX_MAX_BYTES) {
		close(fd);
		return refuse(err, "not a regular file of a plausible size");
	}
	p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (p == MAP_FAILED)
		return pl_fail(err, PL_ERR_INPUT, NULL, "cannot map '%s': %s", path, strerror(errno));
	x = pl_xcalloc(1, sizeof(*x));
	x->base = p;
	x->len = (size_t)st.st_size;
	x->mapped = true;
	if (check_blob(x, build_id, err)) {
		pl_symindex_free(x);
		return err->code;
	}
	*out = x;
	return PL_OK;
}

void pl_symindex_free(struct pl_symindex *x)
{
	if (!x)
		return;
	if (x->mapped)
		munmap((void *)x->base, x->len);
	else
		free((void *)x->base);
	free(x);
}

const struct pl_symindex_source *pl_symindex_source(const struct pl_symindex *x)
{
	return &x->src;
}

uint64_t pl_symindex_bytes(const struct pl_symindex *x)
{
	return x->len;
}

size_t pl_symindex_exec_count(const struct pl_symindex *x)
{
	return (size_t)x->n[SEC_EXEC];
}

void pl_symindex_exec_range(const struct pl_symindex *x, size_t i, uint64_t *start, uint64_t *end)
{
	*start = x->exec[i].start;
	*end = x->exec[i].end;
}

/* ------------------------------------------------------------ lookups */

static const char *str_at(const struct pl_symindex *x, uint32_t off)
{
	return off < x->n[SEC_STRINGS] ? x->strs + off : NULL;
}

/* Number of rows whose start is <= addr (rows of `size` bytes, the start
 * first). */
static size_t upper(const void *rows, size_t n, size_t size, uint64_t addr)
{
	const unsigned char *r = rows;
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		uint64_t start;
		memcpy(&start, r + mid * size, sizeof(start));
		if (start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

bool pl_symindex_func(const struct pl_symindex *x, uint64_t addr, const char **name,
		      uint64_t *value)
{
	size_t i = upper(x->func, x->n[SEC_FUNC], sizeof(*x->func), addr);

	*name = i ? str_at(x, x->func[i - 1].name) : NULL;
	*value = *name ? x->func[i - 1].value : 0;
	return *name != NULL;
}

bool pl_symindex_line(const struct pl_symindex *x, uint64_t addr, const char **file,
		      const char **comp_dir, uint32_t *line, uint32_t *column)
{
	size_t i = upper(x->line, x->n[SEC_LINE], sizeof(*x->line), addr);
	const struct sx_line *r = i ? &x->line[i - 1] : NULL;

	*file = r ? str_at(x, r->file) : NULL;
	*comp_dir = *file ? str_at(x, r->comp_dir) : NULL;
	*line = *file ? r->line : 0;
	*column = *file ? r->column : 0;
	return *file != NULL;
}

void pl_symindex_scope(const struct pl_symindex *x, uint64_t addr, struct pl_symindex_scope *sc)
{
	size_t i = upper(x->scope, x->n[SEC_SCOPE], sizeof(*x->scope), addr);
	const struct sx_scope *r = i ? &x->scope[i - 1] : NULL;

	sc->dwarf_function = sc->dwarf_subprogram = NULL;
	sc->ninl = 0;
	sc->truncated = sc->hidden_cut = false;
	if (!r)
		return;
	sc->dwarf_function = str_at(x, r->function);
	sc->dwarf_subprogram = str_at(x, r->subprogram);
	sc->truncated = r->flags & SCOPE_TRUNCATED;
	sc->hidden_cut = r->flags & SCOPE_HIDDEN_CUT;
	if (r->count > PL_SYMINDEX_MAX_INLINES || r->first > x->n[SEC_INLINE] ||
	    r->count > x->n[SEC_INLINE] - r->first)
		return;
	for (size_t k = 0; k < r->count; k++) {
		const struct sx_inline *e = &x->inl[r->first + k];
		sc->inl[sc->ninl++] = (struct pl_symindex_inline){
			str_at(x, e->function), str_at(x, e->call_file), e->call_line, e->call_column};
	}
}
