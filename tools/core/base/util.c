/* util.c - allocation, buffers, hashing and string interning (see util.h).
 *
 * The hashes read 8 or 16 bytes at a time and mix with 64-bit multiplies;
 * they are the hot path of interning, so they avoid per-byte loops.  The
 * string table is open addressing with linear probing at load <= 1/2;
 * each 16-byte slot keeps the string's full hash and length, so a probe
 * touches one cache line and compares bytes only on a real match.
 */
#include "util.h"

#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <malloc.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif
#define PREFAULT_MIN (64 * 1024)
#define HUGE_PAGE ((uintptr_t)2 << 20)

static void die_oom(size_t n)
{
	fprintf(stderr, "perflens: out of memory allocating %zu bytes\n", n);
	abort();
}

void *pl_xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (!p)
		die_oom(n);
	return p;
}

void *pl_xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);
	if (!p)
		die_oom(n * size);
	return p;
}

void *pl_xrealloc(void *p, size_t n)
{
	void *q = realloc(p, n ? n : 1);
	if (!q)
		die_oom(n);
	return q;
}

char *pl_xstrndup(const char *s, size_t n)
{
	char *p = pl_xmalloc(n + 1);
	memcpy(p, s, n);
	p[n] = '\0';
	return p;
}

char *pl_xstrdup(const char *s)
{
	return pl_xstrndup(s, strlen(s));
}

/* Length of the valid UTF-8 sequence at s (n bytes left), 0 if invalid.
 * NUL counts as invalid: names end up in C strings and JSON. */
size_t pl_utf8_len(const unsigned char *s, size_t n)
{
	size_t len;
	uint32_t cp;

	if (s[0] && s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		len = 2, cp = s[0] & 0x1f;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		len = 3, cp = s[0] & 0x0f;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		len = 4, cp = s[0] & 0x07;
	else
		return 0;
	if (len > n)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (s[i] & 0x3f);
	}
	if ((len == 3 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) ||
	    (len == 4 && (cp < 0x10000 || cp > 0x10ffff)))
		return 0;
	return len;
}

/* Ask for huge pages where [p, p + n) covers whole ones: the range is
 * about to be filled anyway, so they cost no memory, and on the project's
 * VMs first touching a 2 MiB page costs several times less than touching
 * its 512 small pages (0.02 s of a 0.47 s folded analysis). */
static void advise_huge(void *p, size_t n)
{
	uintptr_t lo = ((uintptr_t)p + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1);
	uintptr_t hi = ((uintptr_t)p + n) & ~(HUGE_PAGE - 1);

	if (hi > lo)
		(void)madvise((void *)lo, hi - lo, MADV_HUGEPAGE);
}

void pl_prefault(void *p, size_t n)
{
	/* Asked each time (glibc answers from memory): a static filled on
	 * first use was a data race between compare_profiles' two loaders. */
	long ps = sysconf(_SC_PAGESIZE);
	uintptr_t page = ps > 0 ? (uintptr_t)ps : 4096, start, end;

	if (n < PREFAULT_MIN)
		return;
	start = ((uintptr_t)p + page - 1) & ~(page - 1);
	end = ((uintptr_t)p + n) & ~(page - 1);
	advise_huge(p, n);
	if (end > start)
		(void)madvise((void *)start, end - start, MADV_POPULATE_WRITE);
}

void *pl_xcalloc_hot(size_t n, size_t size)
{
	void *p = pl_xcalloc(n, size);

	pl_prefault(p, n * size);
	return p;
}

/* Below glibc's largest mmap threshold (32 MiB), so that a piece comes
 * from the heap, not from a mapping of its own. */
#define HEAP_PIECE ((size_t)30 << 20)
#define HEAP_RESERVE_MIN ((size_t)8 << 20)
#define HEAP_MAX_PIECES 16

/* Grow the heap's top by taking pieces and giving them back: freed next
 * to the top, they merge into it. */
static void heap_grow_top(size_t top, size_t bytes)
{
	void *piece[HEAP_MAX_PIECES];
	size_t n = 0;

	mallopt(M_MMAP_THRESHOLD, (int)HEAP_PIECE + 4096);
	for (size_t got = top; got < bytes && n < HEAP_MAX_PIECES; got += HEAP_PIECE, n++)
		if (!(piece[n] = malloc(HEAP_PIECE)))
			break;
	/* Back to a fixed threshold the size of glibc's usual ceiling. */
	mallopt(M_MMAP_THRESHOLD, (int)HEAP_PIECE);
	while (n--)
		free(piece[n]);
}

/* What is malloc'd next is carved from the top chunk in address order,
 * and the top ends at the program break (glibc's main heap): advising
 * that span is enough. */
void pl_heap_reserve(size_t bytes)
{
	size_t top;
	uintptr_t lo, hi;

	if (bytes < HEAP_RESERVE_MIN)
		return;  /* before mallinfo2, which walks every bin */
	top = mallinfo2().keepcost;  /* the free chunk at the top */
	mallopt(M_TRIM_THRESHOLD, INT_MAX);
	if (top < bytes) {
		heap_grow_top(top, bytes);
		top = mallinfo2().keepcost;
	}
	hi = (uintptr_t)sbrk(0);
	if (hi == (uintptr_t)-1 || top > hi)
		return;
	lo = (hi - top + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1);
	hi &= ~(HUGE_PAGE - 1);
	if (hi > lo)
		(void)madvise((void *)lo, hi - lo, MADV_HUGEPAGE);
}

size_t pl_read_full(int fd, void *buf, size_t n)
{
	size_t got = 0;

	while (got < n) {
		ssize_t r = read(fd, (char *)buf + got, n - got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		got += (size_t)r;
	}
	return got;
}

void *pl_dl_load(const char *soname, const struct pl_dl_sym *syms, size_t n, char *why,
		 size_t cap)
{
	void *lib = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
	const char *e;

	if (!lib) {
		e = dlerror();
		snprintf(why, cap, "%s", e ? e : "dlopen failed");
		return NULL;
	}
	for (size_t i = 0; i < n; i++) {
		void *f;
		dlerror();
		if (!(f = dlsym(lib, syms[i].name))) {
			e = dlerror();
			snprintf(why, cap, "%s has no %s: %s", soname, syms[i].name,
				 e ? e : "null symbol");
			dlclose(lib);
			return NULL;
		}
		memcpy(syms[i].slot, &f, sizeof(f));  /* object to function pointer, as POSIX allows */
	}
	return lib;
}

void pl_grow(void **items, size_t *cap, size_t need, size_t size)
{
	size_t ncap;

	if (need <= *cap)
		return;
	ncap = *cap ? *cap : 16;
	while (ncap < need)
		ncap *= 2;
	*items = pl_xrealloc(*items, ncap * size);
	/* Arrays fill up in order: map the new part in one go. */
	pl_prefault((char *)*items + *cap * size, (ncap - *cap) * size);
	*cap = ncap;
}

/* ---------------------------------------------------------------- buffer */

static void buf_reserve(struct pl_buf *b, size_t extra)
{
	size_t need = b->len + extra + 1;
	size_t ncap;

	if (need <= b->cap)
		return;
	ncap = b->cap ? b->cap : 64;
	while (ncap < need)
		ncap *= 2;
	b->data = pl_xrealloc(b->data, ncap);
	/* A buffer fills up in order: map the new part in one go. */
	pl_prefault(b->data + b->cap, ncap - b->cap);
	b->cap = ncap;
}

void pl_buf_add(struct pl_buf *b, const void *p, size_t n)
{
	buf_reserve(b, n);
	if (n)  /* p may be NULL for nothing; memcpy(.., NULL, 0) is undefined */
		memcpy(b->data + b->len, p, n);
	b->len += n;
	b->data[b->len] = '\0';
}

void pl_buf_adds(struct pl_buf *b, const char *s)
{
	pl_buf_add(b, s, strlen(s));
}

void pl_buf_addc(struct pl_buf *b, char c)
{
	buf_reserve(b, 1);
	b->data[b->len++] = c;
	b->data[b->len] = '\0';
}

void pl_buf_addf(struct pl_buf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	buf_reserve(b, (size_t)n);
	va_start(ap, fmt);
	vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
}

void pl_buf_reset(struct pl_buf *b)
{
	b->len = 0;
	if (b->data)
		b->data[0] = '\0';
}

void pl_buf_release(struct pl_buf *b)
{
	free(b->data);
	b->data = NULL;
	b->len = b->cap = 0;
}

/* ------------------------------------------------------------------ hash */



uint64_t pl_hash(const void *data, size_t n, uint64_t seed)
{
	const unsigned char *p = data;
	const uint64_t k0 = 0xa0761d6478bd642fULL, k1 = 0xe7037ed1a0b428dbULL;
	uint64_t h = seed ^ (n * k0);

	while (n >= 8) {
		h = pl_mul_fold(h ^ pl_load_u64(p), k1);
		p += 8;
		n -= 8;
	}
	if (n) {
		uint64_t tail = 0;
		memcpy(&tail, p, n);
		h = pl_mul_fold(h ^ tail ^ ((uint64_t)n << 56), k1);
	}
	return pl_mul_fold(h, k0 ^ 0x8ebc6af09c88c6e3ULL);
}

/* Table hash: pl_hash on short keys; from 32 bytes on, two independent
 * lanes each fold 16 bytes per multiply (the wyhash construction), which
 * is about four times faster on the long keys of stacks and folded lines. */
uint64_t pl_strtab_hash(const void *data, size_t n)
{
	const unsigned char *p = data;
	const uint64_t k0 = 0xa0761d6478bd642fULL, k1 = 0xe7037ed1a0b428dbULL;
	const uint64_t k2 = 0x8ebc6af09c88c6e3ULL, k3 = 0x589965cc75374cc3ULL;
	uint64_t a, b;

	if (n < 32)
		return pl_hash(p, n, 0);
	a = n * k0;
	b = n ^ k3;
	for (; n >= 32; p += 32, n -= 32) {
		a = pl_mul_fold(pl_load_u64(p) ^ k1, pl_load_u64(p + 8) ^ a);
		b = pl_mul_fold(pl_load_u64(p + 16) ^ k2, pl_load_u64(p + 24) ^ b);
	}
	/* The last 32 bytes (overlapping what was read) cover the tail. */
	if (n) {
		p -= 32 - n;   /* not p += n - 32: n < 32 would wrap the offset */
		a = pl_mul_fold(pl_load_u64(p) ^ k1, pl_load_u64(p + 8) ^ a);
		b = pl_mul_fold(pl_load_u64(p + 16) ^ k2, pl_load_u64(p + 24) ^ b);
	}
	return pl_mul_fold(a ^ k3, b ^ k0);
}

#define STRTAB_CHUNK (256 * 1024)

void pl_strtab_init(struct pl_strtab *t)
{
	memset(t, 0, sizeof(*t));
	t->nslots = 1024;
	t->slots = pl_xcalloc(t->nslots, sizeof(*t->slots));
}

void pl_strtab_release(struct pl_strtab *t)
{
	for (size_t i = 0; i < t->nchunks; i++)
		free(t->chunks[i]);
	free(t->chunks);
	free(t->strs);
	free(t->lens);
	free(t->slots);
	memset(t, 0, sizeof(*t));
}

static char *strtab_store(struct pl_strtab *t, const char *s, size_t n)
{
	char *dst;

	if (t->chunk_used + n + 8 > t->chunk_cap) {
		/* Chunks grow from 4 KiB to STRTAB_CHUNK, so small tables stay small. */
		size_t cap = t->nchunks < 6 ? (size_t)4096 << t->nchunks : STRTAB_CHUNK;
		if (cap < n + 8)
			cap = n + 8;
		PL_GROW(t->chunks, t->chunks_cap, t->nchunks + 1);
		t->chunk = pl_xmalloc(cap);
		pl_prefault(t->chunk, cap);
		t->chunks[t->nchunks++] = t->chunk;
		t->chunk_used = 0;
		t->chunk_cap = cap;
	}
	dst = t->chunk + t->chunk_used;
	memcpy(dst, s, n);
	dst[n] = '\0';
	/* Keep every entry 8-byte aligned so binary keys can be read in place. */
	t->chunk_used += (n + 1 + 7) & ~(size_t)7;
	t->bytes += n;
	return dst;
}

static void strtab_resize(struct pl_strtab *t, size_t nslots)
{
	struct pl_strtab_slot *slots = pl_xcalloc(nslots, sizeof(*slots));

	pl_prefault(slots, nslots * sizeof(*slots));
	for (size_t i = 0; i < t->nslots; i++) {
		size_t j;
		if (!t->slots[i].id1)
			continue;
		j = t->slots[i].hash & (nslots - 1);
		while (slots[j].id1)
			j = (j + 1) & (nslots - 1);
		slots[j] = t->slots[i];
	}
	free(t->slots);
	t->slots = slots;
	t->nslots = nslots;
}

/* The slot holding `s`, or the empty slot where it would go.  The full
 * hash and the length are compared before the bytes, so a miss costs
 * one cache line in the common case. */
static size_t strtab_probe(const struct pl_strtab *t, const char *s, size_t n,
			   uint64_t h)
{
	size_t mask = t->nslots - 1, j = h & mask;
	const struct pl_strtab_slot *sl;

	for (sl = &t->slots[j]; sl->id1; sl = &t->slots[j]) {
		if (sl->hash == h && sl->len == n &&
		    memcmp(t->strs[sl->id1 - 1], s, n) == 0)
			return j;
		j = (j + 1) & mask;
	}
	return j;
}

void pl_strtab_reserve(struct pl_strtab *t, size_t count)
{
	size_t nslots = t->nslots;

	while (count * 2 > nslots)
		nslots *= 2;
	if (nslots != t->nslots)
		strtab_resize(t, nslots);
	if (count > t->cap) {
		PL_GROW(t->strs, t->cap, count);
		t->lens = pl_xrealloc(t->lens, t->cap * sizeof(*t->lens));
	}
}

uint32_t pl_strtab_find_h(const struct pl_strtab *t, const char *s, size_t n,
			  uint64_t h)
{
	size_t j = strtab_probe(t, s, n, h);
	return t->slots[j].id1 ? t->slots[j].id1 - 1 : PL_NOID;
}

uint32_t pl_strtab_find(const struct pl_strtab *t, const char *s, size_t n)
{
	return pl_strtab_find_h(t, s, n, pl_strtab_hash(s, n));
}

uint32_t pl_strtab_intern_h(struct pl_strtab *t, const char *s, size_t n,
			    uint64_t h)
{
	size_t j = strtab_probe(t, s, n, h);
	uint32_t id;

	if (t->slots[j].id1)
		return t->slots[j].id1 - 1;
	id = (uint32_t)t->count;
	if (t->count + 1 > t->cap) {
		PL_GROW(t->strs, t->cap, t->count + 1);
		t->lens = pl_xrealloc(t->lens, t->cap * sizeof(*t->lens));
	}
	t->strs[id] = strtab_store(t, s, n);
	t->lens[id] = (uint32_t)n;
	t->count++;
	t->slots[j] = (struct pl_strtab_slot){h, id + 1, (uint32_t)n};
	if (t->count * 2 > t->nslots)
		strtab_resize(t, t->nslots * 2);
	return id;
}

uint32_t pl_strtab_intern(struct pl_strtab *t, const char *s, size_t n)
{
	return pl_strtab_intern_h(t, s, n, pl_strtab_hash(s, n));
}

/* ------------------------------------------------------------------ misc */

bool pl_parse_u64(const char *s, size_t n, uint64_t *out)
{
	uint64_t v = 0;

	if (n == 0 || n > 20)
		return false;
	for (size_t i = 0; i < n; i++) {
		unsigned d = (unsigned char)s[i] - '0';
		if (d > 9)
			return false;
		if (v > (UINT64_MAX - d) / 10)
			return false;
		v = v * 10 + d;
	}
	*out = v;
	return true;
}

void pl_hex(const unsigned char *p, size_t n, char *out)
{
	static const char digits[] = "0123456789abcdef";

	for (size_t i = 0; i < n; i++) {
		out[2 * i] = digits[p[i] >> 4];
		out[2 * i + 1] = digits[p[i] & 15];
	}
	out[2 * n] = '\0';
}

size_t pl_fmt_u64(char *out, uint64_t v)
{
	char tmp[20];
	size_t n = 0;

	do {
		tmp[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	for (size_t i = 0; i < n; i++)
		out[i] = tmp[n - 1 - i];
	return n;
}

size_t pl_fmt_x64(char *out, uint64_t v)
{
	static const char digits[] = "0123456789abcdef";
	char tmp[16];
	size_t n = 0;

	do {
		tmp[n++] = digits[v & 15];
		v >>= 4;
	} while (v);
	for (size_t i = 0; i < n; i++)
		out[i] = tmp[n - 1 - i];
	return n;
}
