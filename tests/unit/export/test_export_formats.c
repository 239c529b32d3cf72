/* test_export_formats.c - unit tests for the speedscope and pprof writers.
 *
 * The protobuf encoder is checked on the byte sequences the protobuf
 * encoding guide gives (protobuf.dev/programming-guides/encoding: 150 is
 * 96 01, a message with field 1 = 150 is 08 96 01, "testing" in field 2 is
 * 12 07 74 65 73 74 69 6e 67, packed 3, 270, 86942 in field 4 is
 * 22 06 03 8e 02 9e a7 05).  The writers are run on small perf script
 * records and read back: pprof through zlib and a protobuf reader written
 * here (independent of the encoder), speedscope through jansson.
 */
#include <check.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "export/formats.h"
#include "profile/parse.h"

/* ------------------------------------------------------------ helpers */

static void expect_bytes(const struct pl_buf *b, const uint8_t *want, size_t n)
{
	ck_assert_uint_eq(b->len, n);
	for (size_t i = 0; i < n; i++)
		ck_assert_msg((uint8_t)b->data[i] == want[i], "byte %zu: %02x, want %02x", i,
			      (uint8_t)b->data[i], want[i]);
}

static void expect_varint(uint64_t v, const uint8_t *want, size_t n)
{
	uint8_t out[10];

	ck_assert_uint_eq(pl_pb_varint(out, v), n);
	ck_assert_msg(memcmp(out, want, n) == 0, "varint of %llu", (unsigned long long)v);
}

static struct pl_profile prof;

static void setup(void)
{
	pl_profile_init(&prof, NULL);
}

static void teardown(void)
{
	pl_profile_release(&prof);
}

static void feed(const char *text)
{
	struct pl_ps_parser *ps = pl_ps_new(&prof, "test");
	struct pl_error err;
	uint64_t line_no = 0;

	while (*text) {
		const char *nl = strchr(text, '\n');
		size_t n = nl ? (size_t)(nl - text) : strlen(text);
		ck_assert_int_eq(pl_ps_line(ps, text, n, ++line_no, &err), PL_OK);
		text += n + (nl ? 1 : 0);
	}
	ck_assert_int_eq(pl_ps_finish(ps, &err), PL_OK);
}

typedef enum pl_err (*writer_fn)(FILE *, const struct pl_profile *, const struct pl_fold_opts *,
				 const struct pl_export_opts *, struct pl_export_stats *,
				 struct pl_error *);

/* Run a writer into memory; the bytes (caller frees) and their count. */
static char *run_writer(writer_fn fn, uint64_t max_refs, size_t *len, enum pl_err *rc,
			struct pl_export_stats *st)
{
	struct pl_fold_opts fo = {0};
	struct pl_export_opts eo = {"test", "perflens test", "a comment", max_refs};
	struct pl_error err;
	char *buf = NULL;
	FILE *f = open_memstream(&buf, len);

	ck_assert_ptr_nonnull(f);
	*rc = fn(f, &prof, &fo, &eo, st, &err);
	fclose(f);
	return buf;
}

/* gunzip `n` bytes (caller frees the result). */
static uint8_t *gunzip(const char *gz, size_t n, size_t *out_len)
{
	z_stream z = {0};
	size_t cap = 1 << 16;
	uint8_t *out = malloc(cap);
	int zr;

	ck_assert_int_eq(inflateInit2(&z, 15 + 32), Z_OK);
	z.next_in = (unsigned char *)gz;
	z.avail_in = (uInt)n;
	do {
		if (z.total_out == cap)
			out = realloc(out, cap *= 2);
		z.next_out = out + z.total_out;
		z.avail_out = (uInt)(cap - z.total_out);
		zr = inflate(&z, Z_NO_FLUSH);
		ck_assert_msg(zr == Z_OK || zr == Z_STREAM_END, "inflate: %d", zr);
	} while (zr != Z_STREAM_END);
	*out_len = z.total_out;
	inflateEnd(&z);
	return out;
}

/* ------------------------------------------- a protobuf reader (tests) */

struct field {
	uint32_t num;
	unsigned wire;
	uint64_t v;          /* varint value */
	const uint8_t *data; /* length-delimited contents */
	size_t len;
};

static uint64_t read_varint(const uint8_t **p, const uint8_t *end)
{
	uint64_t v = 0;

	for (unsigned shift = 0; *p < end && shift < 64; shift += 7) {
		uint8_t byte = *(*p)++;
		v |= (uint64_t)(byte & 0x7f) << shift;
		if (!(byte & 0x80))
			return v;
	}
	ck_abort_msg("truncated varint");
	return 0;
}

static bool next_field(const uint8_t **p, const uint8_t *end, struct field *f)
{
	uint64_t tag;

	if (*p >= end)
		return false;
	tag = read_varint(p, end);
	f->num = (uint32_t)(tag >> 3);
	f->wire = tag & 7;
	if (f->wire == 0) {
		f->v = read_varint(p, end);
	} else {
		ck_assert_uint_eq(f->wire, 2);
		f->len = read_varint(p, end);
		ck_assert(f->len <= (size_t)(end - *p));
		f->data = *p;
		*p += f->len;
	}
	return true;
}

/* The varints of a packed field. */
static size_t unpack(const struct field *f, uint64_t *out, size_t cap)
{
	const uint8_t *p = f->data, *end = f->data + f->len;
	size_t n = 0;

	while (p < end && n < cap)
		out[n++] = read_varint(&p, end);
	return n;
}

/* What the tests look at in a decoded profile. */
#define MAXN 64
struct decoded {
	char *strings[MAXN];
	size_t nstrings;
	uint64_t fn_name[MAXN + 1];           /* by function id */
	uint64_t loc_fn[MAXN + 1][4];         /* by location id: line function ids */
	size_t loc_nlines[MAXN + 1];
	uint64_t loc_mapping[MAXN + 1];
	uint64_t sample_locs[MAXN][16];
	size_t sample_nlocs[MAXN];
	uint64_t sample_values[MAXN][2];
	uint64_t sample_labels[MAXN];         /* labels per sample */
	size_t nsamples;
	size_t nmappings;
	uint64_t mapping_build_id[MAXN + 1];
};

static void decode_profile(const uint8_t *buf, size_t n, struct decoded *d)
{
	const uint8_t *p = buf, *end = buf + n;
	struct field f, g, h;

	memset(d, 0, sizeof(*d));
	while (next_field(&p, end, &f)) {
		const uint8_t *q = f.data, *qend = f.data + f.len;
		uint64_t id = 0, name = 0, nlines = 0, fns[4] = {0}, mapping = 0, build = 0;
		size_t s = d->nsamples;

		switch (f.num) {
		case 2:  /* sample */
			ck_assert_uint_lt(s, MAXN);
			while (next_field(&q, qend, &g)) {
				if (g.num == 1)
					d->sample_nlocs[s] = unpack(&g, d->sample_locs[s], 16);
				else if (g.num == 2)
					ck_assert_uint_eq(unpack(&g, d->sample_values[s], 2), 2);
				else if (g.num == 3)
					d->sample_labels[s]++;
			}
			d->nsamples++;
			break;
		case 3:  /* mapping */
			while (next_field(&q, qend, &g))
				if (g.num == 1)
					id = g.v;
				else if (g.num == 6)
					build = g.v;
			ck_assert(id > 0 && id <= MAXN);
			d->mapping_build_id[id] = build;
			d->nmappings++;
			break;
		case 4:  /* location */
			while (next_field(&q, qend, &g)) {
				if (g.num == 1)
					id = g.v;
				else if (g.num == 2)
					mapping = g.v;
				else if (g.num == 4) {
					const uint8_t *r = g.data, *rend = g.data + g.len;
					while (next_field(&r, rend, &h))
						if (h.num == 1 && nlines < 4)
							fns[nlines] = h.v;
					nlines++;
				}
			}
			ck_assert(id > 0 && id <= MAXN);
			memcpy(d->loc_fn[id], fns, sizeof(fns));
			d->loc_nlines[id] = nlines;
			d->loc_mapping[id] = mapping;
			break;
		case 5:  /* function */
			while (next_field(&q, qend, &g))
				if (g.num == 1)
					id = g.v;
				else if (g.num == 2)
					name = g.v;
			ck_assert(id > 0 && id <= MAXN);
			d->fn_name[id] = name;
			break;
		case 6:  /* string_table */
			ck_assert_uint_lt(d->nstrings, MAXN);
			d->strings[d->nstrings++] = strndup((const char *)f.data, f.len);
			break;
		}
	}
}

static void decoded_release(struct decoded *d)
{
	for (size_t i = 0; i < d->nstrings; i++)
		free(d->strings[i]);
}

/* The name of line `k` of location `loc`. */
static const char *line_name(const struct decoded *d, uint64_t loc, size_t k)
{
	return d->strings[d->fn_name[d->loc_fn[loc][k]]];
}

/* ------------------------------------------------- protobuf encoding */

START_TEST(varint_matches_the_protobuf_guide)
{
	expect_varint(0, (const uint8_t[]){0x00}, 1);
	expect_varint(1, (const uint8_t[]){0x01}, 1);
	expect_varint(127, (const uint8_t[]){0x7f}, 1);
	expect_varint(128, (const uint8_t[]){0x80, 0x01}, 2);
	expect_varint(150, (const uint8_t[]){0x96, 0x01}, 2);
	expect_varint(300, (const uint8_t[]){0xac, 0x02}, 2);
	expect_varint(86942, (const uint8_t[]){0x9e, 0xa7, 0x05}, 3);
	expect_varint(UINT64_MAX, (const uint8_t[]){0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
						   0xff, 0xff, 0x01}, 10);
	/* int64 -1 is its two's complement: ten bytes. */
	expect_varint((uint64_t)(int64_t)-1, (const uint8_t[]){0xff, 0xff, 0xff, 0xff, 0xff,
							       0xff, 0xff, 0xff, 0xff, 0x01}, 10);
}
END_TEST

START_TEST(fields_match_the_protobuf_guide)
{
	struct pl_buf b = {0}, inner = {0};
	static const uint8_t test1[] = {0x08, 0x96, 0x01};
	static const uint8_t test2[] = {0x12, 0x07, 't', 'e', 's', 't', 'i', 'n', 'g'};
	static const uint8_t test3[] = {0x1a, 0x03, 0x08, 0x96, 0x01};
	static const uint8_t packed[] = {0x22, 0x06, 0x03, 0x8e, 0x02, 0x9e, 0xa7, 0x05};
	const uint64_t values[] = {3, 270, 86942};

	pl_pb_put_uint(&b, 1, 150);
	expect_bytes(&b, test1, sizeof(test1));
	pl_buf_reset(&b);
	pl_pb_put_bytes(&b, 2, "testing", 7);
	expect_bytes(&b, test2, sizeof(test2));
	pl_buf_reset(&b);
	pl_pb_put_uint(&inner, 1, 150);
	pl_pb_put_bytes(&b, 3, inner.data, inner.len);
	expect_bytes(&b, test3, sizeof(test3));
	pl_buf_reset(&b);
	pl_pb_put_packed(&b, 4, values, 3);
	expect_bytes(&b, packed, sizeof(packed));
	pl_buf_reset(&b);
	pl_pb_put_packed(&b, 4, values, 0);
	ck_assert_uint_eq(b.len, 0);
	/* A field number past 15 takes a two-byte tag: 16 << 3 | 0 = 128. */
	pl_pb_put_uint(&b, 16, 1);
	expect_bytes(&b, (const uint8_t[]){0x80, 0x01, 0x01}, 3);
	pl_buf_release(&b);
	pl_buf_release(&inner);
}
END_TEST

/* ------------------------------------------------------------- pprof */

/* Two records: an "outer->inner" chain printed as one frame (old perfs),
 * and a perf 6.1 "(inlined)" frame, which stays a location of its own. */
static const char chain_records[] =
	"prog 10/11 1.000000: 1000 cpu-clock: \n"
	"\t    1234 leafy->inner_fn (/tmp/prog)\n"
	"\t    1100 caller+0x10 (/tmp/prog)\n"
	"\t    1000 main+0x5 (/tmp/prog)\n"
	"\n"
	"prog 10/11 1.001000: 3000 cpu-clock: \n"
	"\t    11b4 inner+0x24 (inlined)\n"
	"\t    11b4 outer+0x24 (/tmp/prog)\n"
	"\t    1000 main+0x5 (/tmp/prog)\n"
	"\n";

START_TEST(pprof_puts_the_leaf_first_and_strings_after_an_empty_one)
{
	struct pl_export_stats st;
	struct decoded d;
	enum pl_err rc;
	size_t gz_len, len;
	char *gz;
	uint8_t *raw;

	feed(chain_records);
	gz = run_writer(pl_write_pprof, 0, &gz_len, &rc, &st);
	ck_assert_int_eq(rc, PL_OK);
	ck_assert((uint8_t)gz[0] == 0x1f && (uint8_t)gz[1] == 0x8b);
	raw = gunzip(gz, gz_len, &len);
	decode_profile(raw, len, &d);

	ck_assert_str_eq(d.strings[0], "");
	ck_assert_uint_eq(d.nsamples, 2);
	ck_assert_uint_eq(st.samples, 2);
	ck_assert_uint_eq(st.weight, 4000);
	/* First record: the chain's location lists inner then outer. */
	ck_assert_uint_eq(d.sample_nlocs[0], 3);
	ck_assert_uint_eq(d.loc_nlines[d.sample_locs[0][0]], 2);
	ck_assert_str_eq(line_name(&d, d.sample_locs[0][0], 0), "inner_fn_[i]");
	ck_assert_str_eq(line_name(&d, d.sample_locs[0][0], 1), "leafy");
	ck_assert_str_eq(line_name(&d, d.sample_locs[0][1], 0), "caller");
	ck_assert_str_eq(line_name(&d, d.sample_locs[0][2], 0), "main");
	ck_assert_uint_eq(d.sample_values[0][0], 1);
	ck_assert_uint_eq(d.sample_values[0][1], 1000);
	ck_assert_uint_eq(d.sample_labels[0], 3);  /* comm, pid, tid */
	/* Second: "(inlined)" leaf first, in no mapping; main is shared. */
	ck_assert_uint_eq(d.sample_nlocs[1], 3);
	ck_assert_str_eq(line_name(&d, d.sample_locs[1][0], 0), "inner");
	ck_assert_uint_eq(d.loc_mapping[d.sample_locs[1][0]], 0);
	ck_assert_str_eq(line_name(&d, d.sample_locs[1][1], 0), "outer");
	ck_assert_uint_ne(d.loc_mapping[d.sample_locs[1][1]], 0);
	ck_assert_uint_eq(d.sample_locs[1][2], d.sample_locs[0][2]);
	/* One mapping (/tmp/prog), no build-id invented. */
	ck_assert_uint_eq(d.nmappings, 1);
	ck_assert_uint_eq(d.mapping_build_id[1], 0);
	decoded_release(&d);
	free(raw);
	free(gz);
}
END_TEST

START_TEST(exports_are_byte_identical_run_to_run)
{
	struct pl_export_stats st;
	enum pl_err rc;
	size_t n1, n2;
	char *a, *b;

	feed(chain_records);
	a = run_writer(pl_write_pprof, 0, &n1, &rc, &st);
	b = run_writer(pl_write_pprof, 0, &n2, &rc, &st);
	ck_assert(n1 == n2 && memcmp(a, b, n1) == 0);
	free(a);
	free(b);
	a = run_writer(pl_write_speedscope, 0, &n1, &rc, &st);
	b = run_writer(pl_write_speedscope, 0, &n2, &rc, &st);
	ck_assert(n1 == n2 && memcmp(a, b, n1) == 0);
	free(a);
	free(b);
}
END_TEST

START_TEST(too_many_frame_references_is_a_limit_error)
{
	struct pl_export_stats st;
	enum pl_err rc;
	size_t n;
	char *out;

	feed(chain_records);
	/* 2 stacks of depth 3 (+1 each for the process name): 8 references. */
	out = run_writer(pl_write_pprof, 7, &n, &rc, &st);
	ck_assert_int_eq(rc, PL_ERR_LIMIT);
	ck_assert_uint_eq(n, 0);
	free(out);
	out = run_writer(pl_write_speedscope, 7, &n, &rc, &st);
	ck_assert_int_eq(rc, PL_ERR_LIMIT);
	ck_assert_uint_eq(n, 0);
	free(out);
	out = run_writer(pl_write_speedscope, 8, &n, &rc, &st);
	ck_assert_int_eq(rc, PL_OK);
	free(out);
}
END_TEST

/* -------------------------------------------------------- speedscope */

START_TEST(speedscope_frames_carry_srcline_file_and_line)
{
	static const char records[] =
		"prog 10/11 2.000000: 1000 cpu-clock: \n"
		"\t    1300 work+0x4 (/tmp/prog)\n"
		"  prog.c:42\n"
		"\t    1000 main+0x5 (/tmp/prog)\n"
		"  ??:0\n"
		"\n";
	struct pl_export_stats st;
	json_error_t je;
	json_t *doc, *frames, *profile, *sample;
	enum pl_err rc;
	size_t n;
	char *out;

	feed(records);
	out = run_writer(pl_write_speedscope, 0, &n, &rc, &st);
	ck_assert_int_eq(rc, PL_OK);
	doc = json_loadb(out, n, 0, &je);
	ck_assert_ptr_nonnull(doc);
	frames = json_object_get(json_object_get(doc, "shared"), "frames");
	profile = json_array_get(json_object_get(doc, "profiles"), 0);
	sample = json_array_get(json_object_get(profile, "samples"), 0);
	ck_assert_str_eq(json_string_value(json_object_get(profile, "unit")), "nanoseconds");
	ck_assert_int_eq(json_integer_value(json_object_get(profile, "endValue")), 1000);
	/* Root to leaf: prog, main, work. */
	ck_assert_uint_eq(json_array_size(sample), 3);
	{
		json_t *work = json_array_get(frames, json_integer_value(json_array_get(sample, 2)));
		json_t *main_fr = json_array_get(frames, json_integer_value(json_array_get(sample, 1)));
		ck_assert_str_eq(json_string_value(json_object_get(work, "name")), "work");
		ck_assert_str_eq(json_string_value(json_object_get(work, "file")), "prog.c");
		ck_assert_int_eq(json_integer_value(json_object_get(work, "line")), 42);
		ck_assert_str_eq(json_string_value(json_object_get(main_fr, "name")), "main");
		ck_assert_ptr_null(json_object_get(main_fr, "file"));
	}
	json_decref(doc);
	free(out);
}
END_TEST

Suite *suite_export_formats(void)
{
	Suite *s = suite_create("export_formats");
	TCase *tc = tcase_create("core");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, varint_matches_the_protobuf_guide);
	tcase_add_test(tc, fields_match_the_protobuf_guide);
	tcase_add_test(tc, pprof_puts_the_leaf_first_and_strings_after_an_empty_one);
	tcase_add_test(tc, exports_are_byte_identical_run_to_run);
	tcase_add_test(tc, too_many_frame_references_is_a_limit_error);
	tcase_add_test(tc, speedscope_frames_carry_srcline_file_and_line);
	suite_add_tcase(s, tc);
	return s;
}
