/* test_pdread.c - the native perf.data reader on images built here.
 *
 * A small recording is written by hand, field by field as perf lays it
 * out (the 104-byte header, one attr, a data section of COMM, MMAP2,
 * SAMPLE and FINISHED_ROUND records with sample_id_all trailers), in
 * little-endian and again big-endian (bytes swapped, the attr bit field
 * bit-reversed per byte), and once more with its records inside a zstd
 * stream split across two COMPRESSED records.  The expectations are
 * counted by hand: perf's ordering puts a COMM queued after a sample but
 * older than it before it, so the sample's thread has the new name;
 * every byte order and the compressed form give the same profile; a
 * callchain running off its record is counted and previewed; a record
 * of size 0, data past the end, a corrupt zstd stream and a COMPRESSED
 * record inside the stream are errors; forks past the map-entry bound
 * are a limit error.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "perfdata/pdread.h"
#include "profile/profile.h"

struct img {
	unsigned char *b;
	size_t n, cap;
	bool swap;
};

static void put(struct img *m, const void *p, size_t n)
{
	if (m->n + n > m->cap) {
		m->cap = (m->n + n) * 2 + 256;
		m->b = realloc(m->b, m->cap);
	}
	memcpy(m->b + m->n, p, n);
	m->n += n;
}

static void u16(struct img *m, uint16_t v)
{
	if (m->swap)
		v = (uint16_t)(v << 8 | v >> 8);
	put(m, &v, 2);
}

static void u32(struct img *m, uint32_t v)
{
	if (m->swap)
		v = __builtin_bswap32(v);
	put(m, &v, 4);
}

static void u64(struct img *m, uint64_t v)
{
	if (m->swap)
		v = __builtin_bswap64(v);
	put(m, &v, 8);
}

static void set_u64(struct img *m, size_t at, uint64_t v)
{
	if (m->swap)
		v = __builtin_bswap64(v);
	memcpy(m->b + at, &v, 8);
}

static void hdr(struct img *m, uint32_t type, uint16_t misc, uint16_t size)
{
	u32(m, type);
	u16(m, misc);
	u16(m, size);
}

/* sample_type IP|TID|TIME|CALLCHAIN|PERIOD; trailer TID, TIME. */
static void trailer(struct img *m, uint32_t pid, uint32_t tid, uint64_t time)
{
	u32(m, pid);
	u32(m, tid);
	u64(m, time);
}

static void comm(struct img *m, uint32_t pid, uint32_t tid, const char *name, uint64_t time)
{
	char buf[16] = {0};

	strncpy(buf, name, sizeof(buf) - 1);
	hdr(m, 3, 0, 8 + 8 + 16 + 16);
	u32(m, pid);
	u32(m, tid);
	put(m, buf, 16);
	trailer(m, pid, tid, time);
}

static void mmap2(struct img *m, uint32_t pid, uint64_t start, uint64_t len, const char *path)
{
	char buf[16] = {0};

	strncpy(buf, path, sizeof(buf) - 1);
	hdr(m, 10, 2, 8 + 64 + 16 + 16);
	u32(m, pid);
	u32(m, pid);
	u64(m, start);
	u64(m, len);
	u64(m, 0);       /* pgoff */
	u32(m, 8);       /* maj */
	u32(m, 1);       /* min */
	u64(m, 1234);    /* ino */
	u64(m, 0);
	u32(m, 5);       /* prot r-x */
	u32(m, 2);       /* flags private */
	put(m, buf, 16);
	trailer(m, pid, pid, 1);
}

/* A user sample with `n` chain entries after PERF_CONTEXT_USER; `claim`
 * is the chain length written (n + 1 when honest). */
static void sample(struct img *m, uint32_t pid, uint64_t time, const uint64_t *ips, size_t n,
		   uint64_t claim)
{
	hdr(m, 9, 2, (uint16_t)(8 + 8 * 5 + 8 * (n + 1)));
	u64(m, ips[0]);
	u32(m, pid);
	u32(m, pid);
	u64(m, time);
	u64(m, 1000);                 /* period */
	u64(m, claim);
	u64(m, (uint64_t)-512);       /* PERF_CONTEXT_USER */
	for (size_t i = 0; i < n; i++)
		u64(m, ips[i]);
}

static void round_end(struct img *m)
{
	hdr(m, 68, 0, 8);
}

/* The records: the sample at time 200 is in the file before the COMM at
 * 150 that renames its thread; both wait for the round, so the COMM is
 * delivered first. */
static void records(struct img *m, uint64_t claim_last)
{
	const uint64_t a[] = {0x401010, 0x401200}, b[] = {0x401020};

	comm(m, 10, 10, "first", 100);
	mmap2(m, 10, 0x400000, 0x10000, "/bin/x");
	sample(m, 10, 200, a, 2, 3);
	comm(m, 10, 10, "second", 150);
	round_end(m);
	sample(m, 10, 300, b, 1, claim_last);
	round_end(m);
}

/* The file: header, one attr (with its ids pair), data. */
static void file_image(struct img *m, bool compressed, bool corrupt_zstd)
{
	unsigned char zero[128] = {0};
	struct img data = {.swap = m->swap};
	uint64_t flags = 1ull << 18 | 1ull << 20;   /* sample_id_all, exclude_guest */

	put(m, "PERFILE2", 8);
	if (m->swap)
		memcpy(m->b, "2ELIFREP", 8);
	u64(m, 104);
	u64(m, 128 + 16);       /* attr_size */
	u64(m, 104);            /* attrs at */
	u64(m, 128 + 16);
	u64(m, 0);              /* data: set below */
	u64(m, 0);
	u64(m, 0);              /* event_types */
	u64(m, 0);
	put(m, zero, 32);       /* no features */
	/* attr */
	u32(m, 1);              /* PERF_TYPE_SOFTWARE */
	u32(m, 128);
	u64(m, 0);              /* cpu-clock */
	u64(m, 1000);
	u64(m, 0x127);          /* IP|TID|TIME|CALLCHAIN|PERIOD */
	u64(m, 0);
	uint64_t raw = flags;
	if (m->swap) {
		/* A big-endian bit field: each byte's bits in reverse order. */
		unsigned char *p = (unsigned char *)&raw;
		for (int i = 0; i < 8; i++) {
			unsigned char x = p[i], r = 0;
			for (int k = 0; k < 8; k++)
				if (x & (1u << k))
					r |= (unsigned char)(0x80u >> k);
			p[i] = r;
		}
	}
	put(m, &raw, 8);
	put(m, zero, 128 - 48);
	u64(m, 0);              /* ids: none */
	u64(m, 0);
	size_t data_off = m->n;
	records(&data, 2);
	if (!compressed) {
		put(m, data.b, data.n);
	} else {
		/* One zstd stream, flushed into two COMPRESSED records split
		 * in the middle of a record. */
		ZSTD_CCtx *z = ZSTD_createCCtx();
		size_t half = data.n / 2 + 3;
		for (int part = 0; part < 2; part++) {
			unsigned char out[4096];
			ZSTD_inBuffer in = {data.b + (part ? half : 0), part ? data.n - half : half, 0};
			ZSTD_outBuffer o = {out, sizeof(out), 0};
			ck_assert(!ZSTD_isError(ZSTD_compressStream2(z, &o, &in, ZSTD_e_flush)));
			ck_assert_uint_eq(in.pos, in.size);
			if (corrupt_zstd)
				for (size_t i = 4; i < o.pos; i++)
					out[i] ^= 0x5a;
			hdr(m, 81, 0, (uint16_t)(8 + o.pos));
			put(m, out, o.pos);
		}
		ZSTD_freeCCtx(z);
	}
	set_u64(m, 40, data_off);
	set_u64(m, 48, m->n - data_off);
	free(data.b);
}

static enum pl_err read_img(struct pl_profile *p, struct img *m, struct pl_error *err)
{
	struct pl_limits lim;

	pl_limits_default(&lim);
	pl_profile_init(p, &lim);
	return pd_read_image(p, m->b, m->n, "test", err);
}

/* What every good form of the image must give. */
static void check_profile(const struct pl_profile *p)
{
	ck_assert_uint_eq(p->records_parsed, 2);
	ck_assert_uint_eq(p->records_malformed, 0);
	ck_assert_uint_eq(p->nevents, 1);
	ck_assert_str_eq(pl_str(p, p->events[0].name), "cpu-clock");
	ck_assert_uint_eq(p->events[0].period, 2000);
	ck_assert_uint_eq(pl_nstacks(p), 2);
	/* Both samples ran under the name the later COMM gave. */
	for (size_t s = 0; s < pl_nstacks(p); s++) {
		const struct pl_thread *t = &p->threads[p->stacks[s].thread];
		ck_assert_str_eq(pl_str(p, t->comm), "second");
		ck_assert_int_eq(t->pid, 10);
	}
	/* Stack 0 is the first sample: root first, frames in /bin/x,
	 * unnamed (no symbol files are read), DSO-relative addresses. */
	const struct pl_stack *st = &p->stacks[0];
	ck_assert_uint_eq(st->depth, 2);
	const struct pl_frame *leaf = &p->frames[st->frames[1]];
	ck_assert_str_eq(pl_str(p, p->funcs[leaf->func].dso), "/bin/x");
	ck_assert_str_eq(pl_str(p, p->funcs[leaf->func].symbol), "[unknown]");
	ck_assert_uint_eq(leaf->addr, 0x1010);
	ck_assert_uint_eq(p->nmappings, 1);
	ck_assert_uint_eq(p->mappings[0].start, 0x400000);
	ck_assert(p->mappings[0].has_file_id);
}

START_TEST(file_image_orders_records_as_perf_does)
{
	struct img m = {0};
	struct pl_profile p;
	struct pl_error err;

	file_image(&m, false, false);
	ck_assert_int_eq(read_img(&p, &m, &err), PL_OK);
	check_profile(&p);
	pl_profile_release(&p);
	free(m.b);
}
END_TEST

/* A refusal is PL_ERR_UNSUPPORTED whose text is what the native reader
 * does not support (the caller's sentence holds it) and whose hint is
 * perf script; the profile is left empty. */
START_TEST(unsupported_event_is_refused_saying_what)
{
	struct img m = {0};
	struct pl_profile p;
	struct pl_error err;

	file_image(&m, false, false);
	set_u64(&m, 104 + 24, 0x127 | 1ull << 62);   /* a sample_type bit perf 6.1 does not know */
	ck_assert_int_eq(read_img(&p, &m, &err), PL_ERR_UNSUPPORTED);
	ck_assert_str_eq(err.text, "unknown sample_type bits in event cpu-clock");
	ck_assert_str_eq(err.hint, "let perf script read it (start with --allow-process-execution)");
	ck_assert_uint_eq(p.nevents, 0);
	pl_profile_release(&p);
	free(m.b);
}
END_TEST

START_TEST(big_endian_image_gives_the_same_profile)
{
	struct img m = {.swap = true};
	struct pl_profile p;
	struct pl_error err;

	file_image(&m, false, false);
	ck_assert_int_eq(read_img(&p, &m, &err), PL_OK);
	check_profile(&p);
	pl_profile_release(&p);
	free(m.b);
}
END_TEST

START_TEST(one_zstd_stream_across_compressed_records)
{
	struct img m = {0};
	struct pl_profile p;
	struct pl_error err;

	file_image(&m, true, false);
	ck_assert_int_eq(read_img(&p, &m, &err), PL_OK);
	check_profile(&p);
	pl_profile_release(&p);
	free(m.b);
}
END_TEST

START_TEST(corrupt_zstd_is_an_error)
{
	struct img m = {0};
	struct pl_profile p;
	struct pl_error err;

	file_image(&m, true, true);
	ck_assert_int_eq(read_img(&p, &m, &err), PL_ERR_MALFORMED);
	ck_assert_msg(strstr(err.text, "zstd") != NULL, "%s", err.text);
	pl_profile_release(&p);
	free(m.b);
}
END_TEST

START_TEST(bad_framing_is_an_error_naming_the_offset)
{
	struct img m = {0};
	struct pl_profile p;
	struct pl_error err;
	uint64_t data_off;

	file_image(&m, false, false);
	memcpy(&data_off, m.b + 40, 8);
	/* The first record's size made 0: it would loop forever. */
	m.b[data_off + 6] = 0;
	m.b[data_off + 7] = 0;
	ck_assert_int_eq(read_img(&p, &m, &err), PL_ERR_MALFORMED);
	ck_assert_msg(strstr(err.text, "size less than 8") != NULL, "%s", err.text);
	pl_profile_release(&p);
	/* The data section claimed past the end of the file. */
	m.b[data_off + 6] = 40;
	set_u64(&m, 48, 1u << 30);
	ck_assert_int_eq(read_img(&p, &m, &err), PL_ERR_MALFORMED);
	ck_assert_msg(strstr(err.text, "past the end") != NULL, "%s", err.text);
	pl_profile_release(&p);
	/* Cut in the middle of the data. */
	ck_assert_int_eq(read_img(&p, &(struct img){m.b, 130, 0, false}, &err), PL_ERR_MALFORMED);
	pl_profile_release(&p);
	free(m.b);
}
END_TEST

START_TEST(callchain_off_the_record_is_counted_and_previewed)
{
	struct img m = {0}, data = {0};
	struct pl_profile p;
	struct pl_error err;

	file_image(&m, false, false);
	/* Rewrite the data with the last sample claiming 1 << 40 entries. */
	uint64_t data_off;
	memcpy(&data_off, m.b + 40, 8);
	m.n = data_off;
	records(&data, 1ull << 40);
	put(&m, data.b, data.n);
	set_u64(&m, 48, data.n);
	ck_assert_int_eq(read_img(&p, &m, &err), PL_OK);
	ck_assert_uint_eq(p.records_parsed, 1);
	ck_assert_uint_eq(p.records_malformed, 1);
	ck_assert_uint_eq(p.npreviews, 1);
	ck_assert_str_eq(p.previews[0].reason, "callchain runs past the end of the record");
	pl_profile_release(&p);
	free(data.b);
	free(m.b);
}
END_TEST

START_TEST(unknown_record_types_are_skipped_by_size)
{
	struct img m = {0}, data = {0};
	struct pl_profile p;
	struct pl_error err;
	uint64_t data_off;

	file_image(&m, false, false);
	memcpy(&data_off, m.b + 40, 8);
	m.n = data_off;
	hdr(&data, 60, 0, 24);                 /* a kernel type perf 6.1 does not know */
	u64(&data, 1);
	u64(&data, 2);
	hdr(&data, 120, 0, 12);                /* a user type, unaligned size */
	u32(&data, 7);
	records(&data, 2);
	put(&m, data.b, data.n);
	set_u64(&m, 48, data.n);
	ck_assert_int_eq(read_img(&p, &m, &err), PL_OK);
	check_profile(&p);
	pl_profile_release(&p);
	free(data.b);
	free(m.b);
}
END_TEST

/* A COMPRESSED record whose zstd payload holds another COMPRESSED record
 * (perf writes none): an error naming it, not a recursion. */
static void zstd_record(struct img *m, const unsigned char *src, size_t n)
{
	unsigned char out[4096];
	size_t k = ZSTD_compress(out, sizeof(out), src, n, 1);

	ck_assert(!ZSTD_isError(k));
	hdr(m, 81, 0, (uint16_t)(8 + k));
	put(m, out, k);
}

START_TEST(compressed_inside_compressed_is_an_error)
{
	struct img m = {0}, inner = {0}, outer = {0};
	struct pl_profile p;
	struct pl_error err;
	uint64_t data_off;

	file_image(&m, false, false);
	memcpy(&data_off, m.b + 40, 8);
	m.n = data_off;
	round_end(&inner);
	zstd_record(&outer, inner.b, inner.n);
	round_end(&outer);
	zstd_record(&m, outer.b, outer.n);
	set_u64(&m, 48, m.n - data_off);
	ck_assert_int_eq(read_img(&p, &m, &err), PL_ERR_MALFORMED);
	ck_assert_msg(strstr(err.text, "COMPRESSED record inside compressed data") != NULL, "%s",
		      err.text);
	pl_profile_release(&p);
	free(inner.b);
	free(outer.b);
	free(m.b);
}
END_TEST

/* FORK copies the parent's maps: 1100 forks of a process of 4096 maps
 * would hold 4.5M map entries from a 600 KB file.  Past 4M entries in all
 * processes together the read stops with PL_ERR_LIMIT; 1000 forks fit. */
static void fork_img(struct img *m, unsigned forks)
{
	struct img data = {0};
	uint64_t data_off;

	file_image(m, false, false);
	memcpy(&data_off, m->b + 40, 8);
	m->n = data_off;
	for (unsigned i = 0; i < 4096; i++)
		mmap2(&data, 10, 0x400000 + 0x2000ull * i, 0x1000, "/bin/x");
	for (unsigned i = 0; i < forks; i++) {
		hdr(&data, 7, 0, 8 + 24 + 16);
		u32(&data, 1000 + i);   /* pid, ppid, tid, ptid */
		u32(&data, 10);
		u32(&data, 1000 + i);
		u32(&data, 10);
		u64(&data, 2);          /* time */
		trailer(&data, 1000 + i, 1000 + i, 2);
	}
	put(m, data.b, data.n);
	set_u64(m, 48, data.n);
	free(data.b);
}

START_TEST(fork_copies_of_maps_are_bounded)
{
	struct img m = {0};
	struct pl_profile p;
	struct pl_error err;

	fork_img(&m, 1100);
	ck_assert_int_eq(read_img(&p, &m, &err), PL_ERR_LIMIT);
	ck_assert_msg(strstr(err.text, "mapped regions") != NULL, "%s", err.text);
	pl_profile_release(&p);
	free(m.b);
	m = (struct img){0};
	fork_img(&m, 1000);
	ck_assert_int_eq(read_img(&p, &m, &err), PL_OK);
	pl_profile_release(&p);
	free(m.b);
}
END_TEST

Suite *suite_pdread(void)
{
	Suite *s = suite_create("pdread");
	TCase *tc = tcase_create("core");

	/* fork_copies_of_maps_are_bounded copies 4096 maps a thousand times:
	 * about a second here, more on a loaded machine than check's 4 s. */
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, file_image_orders_records_as_perf_does);
	tcase_add_test(tc, unsupported_event_is_refused_saying_what);
	tcase_add_test(tc, big_endian_image_gives_the_same_profile);
	tcase_add_test(tc, one_zstd_stream_across_compressed_records);
	tcase_add_test(tc, corrupt_zstd_is_an_error);
	tcase_add_test(tc, compressed_inside_compressed_is_an_error);
	tcase_add_test(tc, fork_copies_of_maps_are_bounded);
	tcase_add_test(tc, bad_framing_is_an_error_naming_the_offset);
	tcase_add_test(tc, callchain_off_the_record_is_counted_and_previewed);
	tcase_add_test(tc, unknown_record_types_are_skipped_by_size);
	suite_add_tcase(s, tc);
	return s;
}
