/* util.h - small building blocks shared by the engine: checked allocation,
 * growable arrays, a byte buffer, a fast hash and an interning string table.
 *
 * Allocation failure is fatal (pl_xmalloc prints and aborts): every size we
 * allocate is bounded by the resource limits before we get here, so running
 * out of memory is an environment failure, not an input error.
 */
#ifndef PL_UTIL_H
#define PL_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define PL_ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

void *pl_xmalloc(size_t n);
void *pl_xcalloc(size_t n, size_t size);
void *pl_xrealloc(void *p, size_t n);
char *pl_xstrndup(const char *s, size_t n);
char *pl_xstrdup(const char *s);

/* Length of the valid UTF-8 sequence at s (n > 0 bytes left), 0 when
 * invalid; NUL counts as invalid (names go to C strings and JSON). */
size_t pl_utf8_len(const unsigned char *s, size_t n);

/* Ask the kernel to map the pages of a fresh buffer that is about to be
 * filled, in one call: on the project's VMs a page faulted in one by one
 * costs about 20 times more.  Whole 2 MiB pages inside the range are
 * asked for as huge pages.  Contents are unchanged; small buffers, and
 * kernels without MADV_POPULATE_WRITE (before 5.14), are left alone. */
void pl_prefault(void *p, size_t n);

/* pl_xcalloc for a table that is about to be probed all over (a hash
 * table, a direct-mapped cache): its pages are mapped writable now.  A
 * fresh calloc'ed page read before it is written maps the shared zero
 * page, and the write that follows copies it with a TLB flush that
 * interrupts every other CPU this process runs on (the input hash
 * thread): 10% of a perf.data read went there. */
void *pl_xcalloc_hot(size_t n, size_t size);

/* Make room at the top of malloc's heap for about `bytes` of small
 * allocations that are about to be made (a jansson document of tens of
 * MB), on memory the kernel may back with transparent huge pages: on the
 * project's VMs, faulting 50 MB in 4 KiB pages costs more than building
 * the document.  Only for big requests (8 MiB and more), and for a
 * process that will not live long after: the reserve stays with the heap
 * (it is not trimmed) until the process exits.  Without THP, or when
 * malloc will not grow its heap, nothing changes but the room. */
void pl_heap_reserve(size_t bytes);

/* Read up to `n` bytes from `fd` into `buf`, through short reads and
 * EINTR, until end of file or an error: the number of bytes read. */
size_t pl_read_full(int fd, void *buf, size_t n);

/* A function a shared library must have, and the function pointer (of
 * its own type) that gets its address. */
struct pl_dl_sym {
	const char *name;
	void *slot;
};

/* dlopen `soname` (RTLD_NOW: bound at once; RTLD_LOCAL: its symbols stay
 * out of the global namespace) and resolve every symbol into its slot.
 * The handle, never closed by us; or NULL with the reason, dlerror()'s
 * text, in `why` (cap bytes). */
void *pl_dl_load(const char *soname, const struct pl_dl_sym *syms, size_t n, char *why,
		 size_t cap);

/* Grow `*items` (with `*cap` slots of `size` bytes) to hold at least `need`. */
void pl_grow(void **items, size_t *cap, size_t need, size_t size);
#define PL_GROW(arr, cap, need) \
	pl_grow((void **)&(arr), &(cap), (need), sizeof(*(arr)))

/* A growable byte buffer; `data` is always NUL-terminated. */
struct pl_buf {
	char *data;
	size_t len;
	size_t cap;
};
void pl_buf_add(struct pl_buf *b, const void *p, size_t n);
void pl_buf_adds(struct pl_buf *b, const char *s);
void pl_buf_addc(struct pl_buf *b, char c);
void pl_buf_addf(struct pl_buf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void pl_buf_reset(struct pl_buf *b);
void pl_buf_release(struct pl_buf *b);

/* The 128-bit product of a and b, its halves xor-ed: the mixing step of
 * the hashes here. */
static inline uint64_t pl_mul_fold(uint64_t a, uint64_t b)
{
	__uint128_t r = (__uint128_t)a * b;
	return (uint64_t)r ^ (uint64_t)(r >> 64);
}

/* 8 bytes at `p`, unaligned, in host order. */
static inline uint64_t pl_load_u64(const unsigned char *p)
{
	uint64_t v;
	memcpy(&v, p, 8);
	return v;
}

/* 64-bit hash of `n` bytes; fast on short keys, not cryptographic. */
uint64_t pl_hash(const void *p, size_t n, uint64_t seed);

/* Scramble a 64-bit key (two ids side by side, say) so that every bit of
 * it reaches the low bits a table index is taken from (the murmur3
 * finalizer).  A bare multiply leaves keys that differ in one half
 * clustered, and linear probing then walks long runs. */
static inline uint64_t pl_mix_u64(uint64_t k)
{
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdULL;
	k ^= k >> 33;
	k *= 0xc4ceb9fe1a85ec53ULL;
	return k ^ (k >> 33);
}

/* An interning table of byte strings: equal strings get equal ids, ids are
 * dense and given in order of first appearance (so output built from them
 * is deterministic).  Strings live in chunks that never move, so pointers
 * from pl_strtab_get stay valid until pl_strtab_release. */
struct pl_strtab_slot {
	uint64_t hash;      /* full pl_strtab_hash of the string */
	uint32_t id1;       /* id + 1, 0 empty */
	uint32_t len;       /* the string's length, checked before memcmp */
};
struct pl_strtab {
	const char **strs;  /* id -> NUL-terminated string */
	uint32_t *lens;     /* id -> length */
	size_t count, cap;
	struct pl_strtab_slot *slots;  /* open addressing, load <= 1/2 */
	size_t nslots;
	char *chunk;        /* current storage chunk */
	size_t chunk_used, chunk_cap;
	char **chunks;      /* every chunk, for release */
	size_t nchunks, chunks_cap;
	size_t bytes;       /* total string bytes stored */
};
#define PL_NOID UINT32_MAX
void pl_strtab_init(struct pl_strtab *t);
void pl_strtab_release(struct pl_strtab *t);
uint32_t pl_strtab_intern(struct pl_strtab *t, const char *s, size_t n);
/* Size the table for `count` strings (a hint: it grows anyway). */
void pl_strtab_reserve(struct pl_strtab *t, size_t count);
/* Returns PL_NOID when the string is not in the table. */
uint32_t pl_strtab_find(const struct pl_strtab *t, const char *s, size_t n);
static inline const char *pl_strtab_get(const struct pl_strtab *t, uint32_t id)
{
	return id == PL_NOID ? NULL : t->strs[id];
}

/* The hash the string tables use (faster than pl_hash on long keys; not
 * stable across versions, so never store it).  The _h variants take it
 * precomputed, for a find that may be followed by an intern. */
uint64_t pl_strtab_hash(const void *p, size_t n);
uint32_t pl_strtab_intern_h(struct pl_strtab *t, const char *s, size_t n,
			    uint64_t h);
uint32_t pl_strtab_find_h(const struct pl_strtab *t, const char *s, size_t n,
			  uint64_t h);

/* Parse a decimal unsigned integer of exactly `n` bytes; false on any
 * non-digit or overflow. */
bool pl_parse_u64(const char *s, size_t n, uint64_t *out);

/* Lower-case hex of `n` bytes into `out` (2n+1 bytes). */
void pl_hex(const unsigned char *p, size_t n, char *out);

/* Decimal (or lower-case hex) digits of `v` into `out`, which must hold
 * 21 bytes; returns the digit count.  No NUL is written. */
size_t pl_fmt_u64(char *out, uint64_t v);
size_t pl_fmt_x64(char *out, uint64_t v);

#endif
