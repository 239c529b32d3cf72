/* sniff.c - what an unreadable input looks like, and the decision that
 * nothing in it was read (see sniff.h).
 *
 * The description is built from the first 4 KiB of decompressed content:
 * magic numbers first (ELF, perf.data versions and byte orders, archives
 * and compressors input.c does not undo), then the shape of the bytes: a
 * JSON head (its first top-level keys, found by a bounded scan that only
 * tracks strings and nesting), a protobuf head (a field tag and a length
 * that fits, as every pprof profile begins), other binary data, or text
 * (its first line).  None of it is parsing: the words are a hint for the
 * message, and the formats that are read are named beside them.
 */
#include "sniff.h"
#include "parse.h"
#include "parse_pprof.h"
#include "base/escape.h"
#include "base/input.h"

#include <string.h>

/* The formats by name (parse.h's pl_format_from_name and pl_format_list):
 * here, with the rest of what names an input, below the parsers. */
static const struct {
	const char *name;
	enum pl_format fmt;
} format_names[] = {
	{"auto", PL_FMT_AUTO},
	{"folded", PL_FMT_FOLDED},
	{"perf_script", PL_FMT_PERF_SCRIPT},
	{"agent_chunks", PL_FMT_AGENT_CHUNKS},
	{"perf_stat", PL_FMT_PERF_STAT},
	{"perf_data", PL_FMT_PERF_DATA},
	{"pprof", PL_FMT_PPROF},
	{"speedscope", PL_FMT_SPEEDSCOPE},
	{"cpuprofile", PL_FMT_CPUPROFILE},
};

bool pl_format_from_name(const char *name, enum pl_format *out)
{
	for (size_t i = 0; i < PL_ARRAY_LEN(format_names); i++)
		if (strcmp(name, format_names[i].name) == 0) {
			*out = format_names[i].fmt;
			return true;
		}
	return false;
}

void pl_format_list(struct pl_buf *out)
{
	pl_buf_adds(out, "formats read:");
	for (size_t i = 1; i < PL_ARRAY_LEN(format_names); i++)
		pl_buf_addf(out, "%s %s", i > 1 ? "," : "", format_names[i].name);
	pl_buf_adds(out, " (auto-detected; format=NAME forces one), each gzip- or zstd-compressed or not; "
		    "benchmark results go to normalize_benchmark");
}

#define SNIFF_BYTES 4096
#define JSON_KEYS 6

static bool starts(const unsigned char *h, size_t n, const char *magic, size_t m)
{
	return n >= m && memcmp(h, magic, m) == 0;
}

/* The magic numbers worth naming, with what to do about each. */
static const struct {
	const char *magic;
	size_t len;
	const char *what;
} magics[] = {
	{"\x7f" "ELF", 4, "an ELF file (a program or library; inspect_elf and symbolize read those, "
			  "a profile of it is recorded with perf record)"},
	{"PERFFILE", 8, "perf.data of version 1 (magic PERFFILE), which perf has not written since 2010"},
	{"2ELIFREP", 8, "perf.data written on a machine of the other byte order (magic 2ELIFREP)"},
	{"\x1f\x8b", 2, "gzip inside gzip (decompress the outer layer first)"},
	{"\xfd" "7zXZ", 6, "xz-compressed data (decompress it, or recompress with gzip or zstd)"},
	{"BZh", 3, "bzip2-compressed data (decompress it, or recompress with gzip or zstd)"},
	{"PK\x03\x04", 4, "a zip archive (extract the profile from it)"},
	{"\x04\x22\x4d\x18", 4, "lz4-compressed data (decompress it, or recompress with gzip or zstd)"},
	{"SQLite format 3", 15, "an SQLite database"},
	{"\x89PNG", 4, "a PNG image"},
	{"%PDF", 4, "a PDF document"},
};

static bool is_text_byte(unsigned char c)
{
	return c == '\n' || c == '\r' || c == '\t' || (c >= 0x20 && c != 0x7f);
}

/* The length of the valid UTF-8 sequence at h[i] (2 to 4), or 0. */
static size_t utf8_len(const unsigned char *h, size_t n, size_t i)
{
	size_t len = h[i] >= 0xf0 && h[i] <= 0xf4 ? 4 : h[i] >= 0xe0 ? 3 : h[i] >= 0xc2 && h[i] < 0xe0 ? 2 : 0;

	if (!len || i + len > n)
		return 0;
	for (size_t k = 1; k < len; k++)
		if ((h[i + k] & 0xc0) != 0x80)
			return 0;
	return len;
}

/* The share of bytes that are not text (control bytes, bytes that are not
 * UTF-8), in percent; a sequence cut by the end of the head is text. */
static unsigned binary_percent(const unsigned char *h, size_t n)
{
	size_t bad = 0, i = 0, len;

	while (i < n) {
		if (h[i] < 0x80) {
			bad += !is_text_byte(h[i++]);
		} else if ((len = utf8_len(h, n, i))) {
			i += len;
		} else {
			bad += n - i > 3;
			i++;
		}
	}
	return n ? (unsigned)(bad * 100 / n) : 0;
}

/* One varint at h[*at], at most 10 bytes; false when it runs out. */
static bool varint(const unsigned char *h, size_t n, size_t *at, uint64_t *v)
{
	*v = 0;
	for (int shift = 0; *at < n && shift < 70; shift += 7) {
		unsigned char c = h[(*at)++];
		*v |= (uint64_t)(c & 0x7f) << shift;
		if (!(c & 0x80))
			return true;
	}
	return false;
}

/* Protobuf: the head walks as a run of well-formed fields (a tag of a
 * small field number and a known wire type, then a varint, 4 or 8 bytes,
 * or a length and its bytes), at least 3 of them or the whole head.
 * Random bytes fail within a few fields.  *pprof_like: every field is one
 * of profile.proto's (1..14) with its wire type, as a Go pprof or
 * perftools profile is. */
static bool looks_protobuf(const unsigned char *h, size_t n, bool *pprof_like)
{
	/* profile.proto's wire types by field number: 2 = message/string, 0 = integer */
	static const signed char pprof_wire[15] = {-1, 2, 2, 2, 2, 2, 2, 0, 0, 0, 0, 2, 0, 0, 0};
	size_t at = 0, fields = 0;
	uint64_t tag, v;

	*pprof_like = true;
	while (at < n) {
		if (!varint(h, n, &at, &tag) || (tag >> 3) == 0 || (tag >> 3) > 2047)
			return false;
		if ((tag >> 3) >= 15 || (pprof_wire[tag >> 3] != (signed char)(tag & 7) &&
					 !((tag >> 3) == 13 && (tag & 7) == 2)))
			*pprof_like = false;
		switch (tag & 7) {
		case 0:
			if (!varint(h, n, &at, &v))
				return fields >= 3;
			break;
		case 1:
			at += 8;
			break;
		case 2:
			if (!varint(h, n, &at, &v))
				return fields >= 3;
			if (v > n - at)
				return fields >= 2 || n == SNIFF_BYTES;
			at += v;
			break;
		case 5:
			at += 4;
			break;
		default:
			return false;
		}
		fields++;
	}
	return at == n && fields >= 2;
}

/* The first top-level keys of a JSON object head, quoted, into `out`. */
static void json_keys(const unsigned char *h, size_t n, struct pl_buf *out)
{
	size_t depth = 0, keys = 0, start = 0;
	bool in_str = false, esc = false;

	for (size_t i = 0; i < n && keys < JSON_KEYS; i++) {
		unsigned char c = h[i];
		if (in_str) {
			if (esc)
				esc = false;
			else if (c == '\\')
				esc = true;
			else if (c == '"') {
				size_t j = i + 1;
				in_str = false;
				while (j < n && (h[j] == ' ' || h[j] == '\t' || h[j] == '\n' || h[j] == '\r'))
					j++;
				if (depth == 1 && j < n && h[j] == ':') {
					char tmp[48];
					pl_buf_addf(out, "%s\"%s\"", keys++ ? ", " : "",
						    pl_esc_text_str(tmp, sizeof(tmp), (const char *)h + start, i - start));
				}
			}
			continue;
		}
		if (c == '"') {
			in_str = true;
			start = i + 1;
		} else if (c == '{' || c == '[') {
			depth++;
		} else if (c == '}' || c == ']') {
			if (depth)
				depth--;
		}
	}
}

static void describe_json(const unsigned char *h, size_t n, size_t at, struct pl_buf *out)
{
	struct pl_buf keys = {0};
	enum pl_format f = pl_json_profile_sniff((const char *)h, n);

	/* Read as one, but no record of it could be (the malformed ones say why). */
	if (f != PL_FMT_AUTO) {
		pl_buf_addf(out, "a %s none of whose samples could be read",
			    f == PL_FMT_SPEEDSCOPE ? "speedscope file" : "V8 .cpuprofile");
		return;
	}
	if (h[at] == '[') {
		pl_buf_adds(out, "JSON of an unknown shape (an array at the top)");
		return;
	}
	json_keys(h + at, n - at, &keys);
	if (keys.len)
		pl_buf_addf(out, "JSON of an unknown shape (top-level keys %s%s)", keys.data,
			    n == SNIFF_BYTES ? ", ..." : "");
	else
		pl_buf_adds(out, "JSON of an unknown shape");
	pl_buf_release(&keys);
}

/* The first line that is not blank, quoted and cut at 80 bytes. */
static void describe_text(const unsigned char *h, size_t n, struct pl_buf *out)
{
	size_t i = 0, len;
	char tmp[100];

	while (i < n && (h[i] == '\n' || h[i] == '\r' || h[i] == ' ' || h[i] == '\t'))
		i++;
	for (len = 0; i + len < n && h[i + len] != '\n' && h[i + len] != '\r' && len < 80; len++)
		;
	pl_esc_text_str(tmp, sizeof(tmp), (const char *)h + i, len);
	pl_buf_addf(out, "text that no parser recognised (first line: '%s')", tmp);
}

bool pl_sniff_describe(const unsigned char *h, size_t n, const char *codec, struct pl_buf *out)
{
	bool compressed = codec && strcmp(codec, "none") != 0, pprof;
	size_t at = 0;

	if (compressed)
		pl_buf_addf(out, "%s-compressed ", codec);
	for (size_t i = 0; i < PL_ARRAY_LEN(magics); i++)
		if (starts(h, n, magics[i].magic, magics[i].len)) {
			pl_buf_adds(out, magics[i].what);
			return false;
		}
	while (at < n && (h[at] == ' ' || h[at] == '\t' || h[at] == '\n' || h[at] == '\r'))
		at++;
	if (at < n && (h[at] == '{' || h[at] == '[') && binary_percent(h, n) == 0) {
		describe_json(h, n, at, out);
		return false;
	}
	if (looks_protobuf(h, n, &pprof)) {
		pl_buf_adds(out, pprof ? "protobuf whose fields are those of pprof's profile.proto (a Go pprof or "
					 "perftools profile?)" : "protobuf data");
		return false;
	}
	if (binary_percent(h, n) > 10) {
		pl_buf_addf(out, "binary data (%u%% of the first %zu bytes are not text)", binary_percent(h, n), n);
		return false;
	}
	describe_text(h, n, out);
	return true;
}

void pl_parse_mark_take(const struct pl_profile *p, struct pl_parse_mark *m)
{
	m->parsed = p->records_parsed;
	m->skipped = p->records_skipped;
	m->malformed = p->records_malformed;
	m->nstats = p->nstats;
	m->nsources = p->nsources;
}

/* Did the file yield nothing at all? perf.data read through perf is its
 * own tool's business (an empty recording is still perf.data). */
static bool yielded_nothing(const struct pl_profile *p, const struct pl_parse_mark *b)
{
	if (p->records_parsed != b->parsed || p->nstats != b->nstats || p->nsources == b->nsources)
		return false;
	for (size_t i = b->nsources; i < p->nsources; i++)
		if (p->sources[i].records || p->sources[i].format == PL_FMT_PERF_DATA)
			return false;
	return true;
}

enum pl_err pl_nothing_read(const struct pl_profile *p, const char *path,
			    const struct pl_parse_mark *b, struct pl_error *err)
{
	struct pl_input in;
	struct pl_error ignored;
	struct pl_buf what = {0}, formats = {0};
	char head[SNIFF_BYTES];
	size_t n;
	bool text;

	if (!yielded_nothing(p, b))
		return PL_OK;
	if (pl_input_open(&in, path, &p->limits, &ignored))
		return PL_OK;  /* it was read a moment ago; a vanished file is not this error */
	n = pl_input_peek(&in, head, sizeof(head), &ignored);
	text = pl_sniff_describe((const unsigned char *)head, n, pl_codec_name(in.codec), &what);
	pl_input_close(&in);
	if (n == 0 || (text && p->records_malformed == b->malformed)) {
		pl_buf_release(&what);
		return PL_OK;  /* empty or comment-only text: an empty profile, as before */
	}
	pl_format_list(&formats);
	pl_fail(err, PL_ERR_UNSUPPORTED, formats.data,
		"nothing in '%s' could be read (%llu lines skipped, %llu malformed; no sample or perf stat "
		"block): it looks like %s", PL_ESC_MSG(path),
		(unsigned long long)(p->records_skipped - b->skipped),
		(unsigned long long)(p->records_malformed - b->malformed), what.data);
	pl_buf_release(&what);
	pl_buf_release(&formats);
	return PL_ERR_UNSUPPORTED;
}
