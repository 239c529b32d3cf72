/* export_pprof.c - one event as a pprof profile: profile.proto encoded by
 * hand and gzipped with zlib (see export_formats.h for what goes where).
 *
 * The encoder is the few wire-format pieces profile.proto uses: varints,
 * tags, length-delimited bytes and packed varints (no protobuf library).
 * Messages are small, so each is encoded into a scratch buffer and then
 * written behind its tag and length.  The profile is streamed into the
 * gzip stream in field-number order: samples go out as they are built,
 * their location ids assigned on first use, then the tables they refer to
 * (mappings, locations, functions, strings), then the period type.
 * Mapping 1 is the main executable (main_dso), as pprof readers expect.
 * Field numbers are those of github.com/google/pprof proto/profile.proto.
 */
#include "export/formats.h"
#include "base/escape.h"
#include "profile/aggregate.h"
#include "profile/srcline.h"

#include <stdlib.h>
#include <string.h>
#include <zlib.h>

/* ------------------------------------------------ protobuf wire format */

enum { WIRE_VARINT = 0, WIRE_LEN = 2 };

size_t pl_pb_varint(uint8_t out[10], uint64_t v)
{
	size_t n = 0;

	do {
		uint8_t low = v & 0x7f;
		v >>= 7;
		out[n++] = low | (v ? 0x80 : 0);
	} while (v);
	return n;
}

void pl_pb_put_varint(struct pl_buf *b, uint64_t v)
{
	uint8_t tmp[10];

	pl_buf_add(b, tmp, pl_pb_varint(tmp, v));
}

static void put_tag(struct pl_buf *b, uint32_t field, unsigned wire)
{
	pl_pb_put_varint(b, (uint64_t)field << 3 | wire);
}

void pl_pb_put_uint(struct pl_buf *b, uint32_t field, uint64_t v)
{
	put_tag(b, field, WIRE_VARINT);
	pl_pb_put_varint(b, v);
}

void pl_pb_put_bytes(struct pl_buf *b, uint32_t field, const void *data, size_t n)
{
	put_tag(b, field, WIRE_LEN);
	pl_pb_put_varint(b, n);
	pl_buf_add(b, data, n);
}

void pl_pb_put_packed(struct pl_buf *b, uint32_t field, const uint64_t *v, size_t n)
{
	uint8_t tmp[10];
	size_t len = 0;

	if (!n)
		return;
	for (size_t i = 0; i < n; i++)
		len += pl_pb_varint(tmp, v[i]);
	put_tag(b, field, WIRE_LEN);
	pl_pb_put_varint(b, len);
	for (size_t i = 0; i < n; i++)
		pl_pb_put_varint(b, v[i]);
}

/* proto3 leaves fields at their zero value out. */
static void put_opt(struct pl_buf *b, uint32_t field, uint64_t v)
{
	if (v)
		pl_pb_put_uint(b, field, v);
}

/* ------------------------------------------------ profile.proto fields */

enum { PROFILE_SAMPLE_TYPE = 1, PROFILE_SAMPLE = 2, PROFILE_MAPPING = 3, PROFILE_LOCATION = 4,
       PROFILE_FUNCTION = 5, PROFILE_STRING_TABLE = 6, PROFILE_PERIOD_TYPE = 11,
       PROFILE_COMMENT = 13, PROFILE_DEFAULT_SAMPLE_TYPE = 14 };
enum { VALUE_TYPE_TYPE = 1, VALUE_TYPE_UNIT = 2 };
enum { SAMPLE_LOCATION_ID = 1, SAMPLE_VALUE = 2, SAMPLE_LABEL = 3 };
enum { LABEL_KEY = 1, LABEL_STR = 2, LABEL_NUM = 3 };
enum { MAPPING_ID = 1, MAPPING_FILENAME = 5, MAPPING_BUILD_ID = 6, MAPPING_HAS_FUNCTIONS = 7,
       MAPPING_HAS_FILENAMES = 8, MAPPING_HAS_LINE_NUMBERS = 9, MAPPING_HAS_INLINE_FRAMES = 10 };
enum { LOCATION_ID = 1, LOCATION_MAPPING_ID = 2, LOCATION_ADDRESS = 3, LOCATION_LINE = 4 };
enum { LINE_FUNCTION_ID = 1, LINE_LINE = 2 };
enum { FUNCTION_ID = 1, FUNCTION_NAME = 2, FUNCTION_SYSTEM_NAME = 3, FUNCTION_FILENAME = 4 };

/* What a mapping is known to have, for its has_* fields. */
enum { HAS_FUNCTIONS = 1, HAS_FILENAMES = 2, HAS_LINE_NUMBERS = 4, HAS_INLINE_FRAMES = 8 };

/* A location's key in the location table: its lines follow. */
struct loc_head {
	uint64_t address;
	uint32_t mapping;   /* mapping id, 0 for none */
	uint32_t nlines;
};
struct loc_line {
	uint32_t function;  /* function id */
	uint32_t line;      /* 0: unknown */
};

struct pp_ctx {
	const struct pl_profile *p;
	const struct pl_strtab *names;  /* folded names */
	struct pl_strtab strings;       /* the string table; "" is 0 */
	struct pl_strtab functions;     /* (name, system_name, filename) -> id - 1 */
	struct pl_strtab locations;     /* loc_head + loc_lines -> id - 1 */
	struct pl_strtab mappings;      /* DSO string index -> id - 1 */
	struct pl_strtab seen;          /* (frame, names...) -> location id - 1 */
	uint32_t *seen_loc;
	size_t seen_cap;
	uint8_t *mapping_has;           /* HAS_* per mapping id - 1 */
	uint64_t mappings_with_build_id;
	size_t mapping_has_cap;
	struct pl_buf key;              /* the location being built */
	struct pl_buf msg, sub;         /* scratch messages */
	uint64_t *loc_ids;              /* the sample being built, leaf first */
	size_t nlocs, loc_ids_cap;
	/* The gzip stream. */
	z_stream z;
	FILE *out;
	bool failed;
	unsigned char zout[1 << 16];
};

/* ------------------------------------------------------- gzip stream */

static void z_pump(struct pp_ctx *c, int flush)
{
	do {
		c->z.next_out = c->zout;
		c->z.avail_out = sizeof(c->zout);
		if (deflate(&c->z, flush) == Z_STREAM_ERROR) {
			c->failed = true;
			return;
		}
		size_t have = sizeof(c->zout) - c->z.avail_out;
		if (have && fwrite(c->zout, 1, have, c->out) != have)
			c->failed = true;
	} while (c->z.avail_out == 0);
}

static void emit(struct pp_ctx *c, const void *data, size_t n)
{
	c->z.next_in = (unsigned char *)data;
	c->z.avail_in = (uInt)n;
	z_pump(c, Z_NO_FLUSH);
}

/* One top-level field of the Profile: tag, length, then the message. */
static void emit_message(struct pp_ctx *c, uint32_t field, const struct pl_buf *m)
{
	uint8_t head[20];
	size_t n = pl_pb_varint(head, (uint64_t)field << 3 | WIRE_LEN);

	n += pl_pb_varint(head + n, m->len);
	emit(c, head, n);
	if (m->len)
		emit(c, m->data, m->len);
}

/* ------------------------------------------------------------ tables */

static uint32_t str_index(struct pp_ctx *c, const char *s, size_t n)
{
	return pl_strtab_intern(&c->strings, s, n);
}

/* A folded name is bytes (fold.h); pprof's strings are text, which
 * holds bytes that are not UTF-8 as \xHH (base/escape.h's text form). */
static uint32_t str_index_bytes(struct pp_ctx *c, const char *s, size_t n)
{
	struct pl_buf b = {0};
	uint32_t id;

	if (!pl_esc_needed(s, n))
		return str_index(c, s, n);
	pl_esc_add_text(&b, s, n);
	id = str_index(c, b.data, b.len);
	pl_buf_release(&b);
	return id;
}

static uint32_t str_index0(struct pp_ctx *c, const char *s)
{
	return str_index(c, s, strlen(s));
}

/* Table ids start at 1: 0 means "none" in profile.proto. */
static uint32_t table_id(struct pl_strtab *t, const void *key, size_t n)
{
	return pl_strtab_intern(t, (const char *)key, n) + 1;
}

static uint32_t mapping_id(struct pp_ctx *c, uint32_t dso)
{
	uint32_t filename = str_index0(c, pl_str(c->p, dso));
	uint32_t id = table_id(&c->mappings, &filename, sizeof(filename));

	PL_GROW(c->mapping_has, c->mapping_has_cap, id);
	if (id == c->mappings.count)
		c->mapping_has[id - 1] = 0;
	return id;
}

/* A frame inlined into its caller: perf prints "(inlined)" where the DSO
 * goes, or, with -F +srcline, no DSO and " (inlined)" after the srcline. */
static bool frame_inlined(const struct pl_profile *p, uint32_t frame)
{
	const struct pl_frame *fr = &p->frames[frame];
	const char *sl;
	size_t n;

	if (p->funcs[fr->func].inlined)
		return true;
	if (fr->srcline == PL_NOID)
		return false;
	sl = pl_str(p, fr->srcline);
	n = strlen(sl);
	return n >= 9 && strcmp(sl + n - 9, "(inlined)") == 0;
}

/* Part `part` of a symbol as perf printed it ("outer->inner" chains). */
static const char *symbol_part(const char *sym, uint32_t part, size_t *n)
{
	const char *arrow;

	for (; part > 0 && (arrow = strstr(sym, "->")); part--)
		sym = arrow + 2;
	arrow = strstr(sym, "->");
	*n = arrow ? (size_t)(arrow - sym) : strlen(sym);
	return sym;
}

/* The Function and line of one folded name: name as folded, system_name
 * the symbol as perf printed it, file and line from the srcline when the
 * name is the innermost of its frame. */
static struct loc_line name_line(struct pp_ctx *c, uint32_t name, const struct pl_fold_src *src,
				 uint8_t *has)
{
	const struct pl_frame *fr = &c->p->frames[src->frame];
	const struct pl_func *fn = &c->p->funcs[fr->func];
	uint32_t key[3] = {str_index_bytes(c, c->names->strs[name], c->names->lens[name]), 0, 0};
	struct loc_line l = {0, 0};
	size_t n, flen;

	if (!fn->unknown) {
		/* a demangled function's system name is its linker symbol */
		const char *sys = fn->linkage != PL_NOID && src->nparts == 1
			? (n = strlen(pl_str(c->p, fn->linkage)), pl_str(c->p, fn->linkage))
			: symbol_part(pl_str(c->p, fn->symbol), src->part, &n);
		key[1] = str_index(c, sys, n);
		*has |= HAS_FUNCTIONS;
	}
	if (src->part + 1 == src->nparts && fr->srcline != PL_NOID &&
	    pl_srcline_split(pl_str(c->p, fr->srcline), &flen, &l.line)) {
		key[2] = str_index(c, pl_str(c->p, fr->srcline), flen);
		*has |= HAS_FILENAMES | (l.line ? HAS_LINE_NUMBERS : 0);
	}
	l.function = table_id(&c->functions, key, sizeof(key));
	return l;
}

/* ------------------------------------------------------------ samples */

/* The frame whose names end just before *i: the names before it of the
 * same frame with rising parts are its (a recursive frame repeats with
 * parts starting again).  Moves *i back to its first name. */
static uint32_t occurrence(const struct pl_fold_src *src, size_t *i)
{
	size_t end = *i, j = end - 1;

	while (j > 0 && src[j - 1].frame == src[end - 1].frame && src[j - 1].part < src[j].part)
		j--;
	*i = j;
	return src[end - 1].frame;
}

/* The location of one frame, whose names are [start, end), and its id:
 * its lines innermost first (several only for an "outer->inner" chain
 * printed as one frame).  perf 6.1's "(inlined)" frames stay locations of
 * their own, as in the folded view: telling which frame one is inlined
 * into needs its address, which the analysis keeps for unknown symbols
 * only (and perf also marks as inlined an outermost function whose
 * debug-info name differs from its ELF symbol). */
static uint32_t new_location(struct pp_ctx *c, const uint32_t *names,
			     const struct pl_fold_src *src, size_t start, size_t end)
{
	struct loc_head head = {0, 0, 0};
	uint32_t frame = src[start].frame;
	const struct pl_frame *fr = &c->p->frames[frame];
	uint32_t dso = c->p->funcs[fr->func].dso;
	uint8_t has = 0;

	pl_buf_reset(&c->key);
	pl_buf_add(&c->key, &head, sizeof(head));
	for (size_t j = end; j-- > start;) {
		struct loc_line l = name_line(c, names[j], &src[j], &has);
		pl_buf_add(&c->key, &l, sizeof(l));
		head.nlines++;
	}
	/* An inlined frame's "DSO" is perf's "(inlined)" or nothing. */
	if (dso != PL_NOID && !frame_inlined(c->p, frame)) {
		head.mapping = mapping_id(c, dso);
		if (head.nlines > 1)
			has |= HAS_INLINE_FRAMES;
		c->mapping_has[head.mapping - 1] |= has;
	}
	if (fr->has_addr)
		head.address = fr->addr;
	memcpy(c->key.data, &head, sizeof(head));
	return table_id(&c->locations, c->key.data, c->key.len);
}

/* The same, through a cache keyed by the frame and its names (a frame's
 * names may differ by process, e.g. Java's), so that the strings of a
 * frame seen before are not looked up again. */
static uint32_t next_location(struct pp_ctx *c, const uint32_t *names,
			      const struct pl_fold_src *src, size_t *i)
{
	size_t end = *i, before = c->seen.count;
	uint32_t frame = occurrence(src, i), key[8], id;
	size_t n = end - *i;

	if (n + 1 > PL_ARRAY_LEN(key))  /* long "->" chains: no cache */
		return new_location(c, names, src, *i, end);
	key[0] = frame;
	memcpy(key + 1, names + *i, n * sizeof(uint32_t));
	id = pl_strtab_intern(&c->seen, (const char *)key, (n + 1) * sizeof(uint32_t));
	if (c->seen.count > before) {
		PL_GROW(c->seen_loc, c->seen_cap, id + 1);
		c->seen_loc[id] = new_location(c, names, src, *i, end);
	}
	return c->seen_loc[id];
}

/* A label: a string (str != 0) or a number. */
static void put_label(struct pp_ctx *c, const char *key, uint32_t str, int64_t num)
{
	pl_buf_reset(&c->sub);
	put_opt(&c->sub, LABEL_KEY, str_index0(c, key));
	put_opt(&c->sub, LABEL_STR, str);
	put_opt(&c->sub, LABEL_NUM, (uint64_t)num);
	pl_pb_put_bytes(&c->msg, SAMPLE_LABEL, c->sub.data, c->sub.len);
}

static void emit_sample(struct pp_ctx *c, const struct pl_thread *t, uint64_t samples,
			uint64_t period)
{
	uint64_t values[2] = {samples, period};

	pl_buf_reset(&c->msg);
	pl_pb_put_packed(&c->msg, SAMPLE_LOCATION_ID, c->loc_ids, c->nlocs);
	pl_pb_put_packed(&c->msg, SAMPLE_VALUE, values, 2);
	if (t->comm != PL_NOID)
		put_label(c, "comm", str_index0(c, pl_str(c->p, t->comm)), 0);
	if (t->pid >= 0)
		put_label(c, "pid", 0, t->pid);
	if (t->tid >= 0)
		put_label(c, "tid", 0, t->tid);
	emit_message(c, PROFILE_SAMPLE, &c->msg);
}

/* Every stack of the event, one sample each, locations leaf first; the
 * process name (the folded line's first names) goes to labels. */
static void emit_samples(struct pp_ctx *c, struct pl_fold_stacks *fs,
			 const struct pl_fold_opts *fo, struct pl_export_stats *st)
{
	for (uint32_t s = 0; s < pl_nstacks(c->p) && !c->failed; s++) {
		const uint32_t *names;
		const struct pl_fold_src *src;
		uint64_t samples, period;
		size_t i;

		if (!pl_fold_weight(c->p, s, fo, &samples, &period))
			continue;
		i = pl_fold_stack_names(fs, s, &names, &src);
		c->nlocs = 0;
		while (i > 0) {
			if (src[i - 1].frame == PL_NOID) {
				i--;
				continue;
			}
			PL_GROW(c->loc_ids, c->loc_ids_cap, c->nlocs + 1);
			c->loc_ids[c->nlocs++] = next_location(c, names, src, &i);
		}
		emit_sample(c, &c->p->threads[c->p->stacks[s].thread], samples, period);
		st->samples += samples;
		st->weight += period;
		st->stacks++;
	}
}

/* ------------------------------------------------------------- tables */

static const char *build_id_of(const struct pl_profile *p, const char *dso)
{
	for (size_t i = 0; dso && i < p->nbuild_ids; i++)
		if (strcmp(pl_str(p, p->build_ids[i].dso), dso) == 0)
			return p->build_ids[i].hex;
	return NULL;
}

static void emit_mappings(struct pp_ctx *c)
{
	for (uint32_t i = 0; i < c->mappings.count; i++) {
		const char *hex;
		uint32_t filename;
		uint8_t has = c->mapping_has[i];

		memcpy(&filename, c->mappings.strs[i], sizeof(filename));
		pl_buf_reset(&c->msg);
		put_opt(&c->msg, MAPPING_ID, i + 1);
		put_opt(&c->msg, MAPPING_FILENAME, filename);
		/* Only the build-id the recording stated (perf.data analyses);
		 * text profiles carry none, and none is invented. */
		hex = build_id_of(c->p, pl_strtab_get(&c->strings, filename));
		if (hex) {
			put_opt(&c->msg, MAPPING_BUILD_ID, str_index0(c, hex));
			c->mappings_with_build_id++;
		}
		put_opt(&c->msg, MAPPING_HAS_FUNCTIONS, !!(has & HAS_FUNCTIONS));
		put_opt(&c->msg, MAPPING_HAS_FILENAMES, !!(has & HAS_FILENAMES));
		put_opt(&c->msg, MAPPING_HAS_LINE_NUMBERS, !!(has & HAS_LINE_NUMBERS));
		put_opt(&c->msg, MAPPING_HAS_INLINE_FRAMES, !!(has & HAS_INLINE_FRAMES));
		emit_message(c, PROFILE_MAPPING, &c->msg);
	}
}

static void emit_locations(struct pp_ctx *c)
{
	for (uint32_t i = 0; i < c->locations.count; i++) {
		const char *key = c->locations.strs[i];
		struct loc_head head;

		memcpy(&head, key, sizeof(head));
		pl_buf_reset(&c->msg);
		put_opt(&c->msg, LOCATION_ID, i + 1);
		put_opt(&c->msg, LOCATION_MAPPING_ID, head.mapping);
		put_opt(&c->msg, LOCATION_ADDRESS, head.address);
		for (uint32_t k = 0; k < head.nlines; k++) {
			struct loc_line l;
			memcpy(&l, key + sizeof(head) + k * sizeof(l), sizeof(l));
			pl_buf_reset(&c->sub);
			put_opt(&c->sub, LINE_FUNCTION_ID, l.function);
			put_opt(&c->sub, LINE_LINE, l.line);
			pl_pb_put_bytes(&c->msg, LOCATION_LINE, c->sub.data, c->sub.len);
		}
		emit_message(c, PROFILE_LOCATION, &c->msg);
	}
}

static void emit_functions(struct pp_ctx *c)
{
	for (uint32_t i = 0; i < c->functions.count; i++) {
		uint32_t key[3];

		memcpy(key, c->functions.strs[i], sizeof(key));
		pl_buf_reset(&c->msg);
		put_opt(&c->msg, FUNCTION_ID, i + 1);
		put_opt(&c->msg, FUNCTION_NAME, key[0]);
		put_opt(&c->msg, FUNCTION_SYSTEM_NAME, key[1]);
		put_opt(&c->msg, FUNCTION_FILENAME, key[2]);
		emit_message(c, PROFILE_FUNCTION, &c->msg);
	}
}

/* Every string, "" first, each one field (the empty one too: its place
 * is what makes it index 0). */
static void emit_strings(struct pp_ctx *c)
{
	for (uint32_t i = 0; i < c->strings.count; i++) {
		pl_buf_reset(&c->msg);
		pl_pb_put_bytes(&c->msg, PROFILE_STRING_TABLE, c->strings.strs[i], c->strings.lens[i]);
		emit(c, c->msg.data, c->msg.len);
	}
}

static void put_value_type(struct pp_ctx *c, uint32_t field, uint32_t type, uint32_t unit)
{
	pl_buf_reset(&c->sub);
	put_opt(&c->sub, VALUE_TYPE_TYPE, type);
	put_opt(&c->sub, VALUE_TYPE_UNIT, unit);
	pl_pb_put_bytes(&c->msg, field, c->sub.data, c->sub.len);
}

/* sample_type [samples/count, EVENT/UNIT]: the count first, by pprof's
 * convention. */
static void emit_sample_types(struct pp_ctx *c, uint32_t event, uint32_t unit)
{
	pl_buf_reset(&c->msg);
	put_value_type(c, PROFILE_SAMPLE_TYPE, str_index0(c, "samples"), str_index0(c, "count"));
	put_value_type(c, PROFILE_SAMPLE_TYPE, event, unit);
	emit(c, c->msg.data, c->msg.len);
}

/* The period's type (not its value: perf's period varies from sample to
 * sample, and the analysis keeps sums only), the comment and the default
 * sample type. */
static void emit_trailer(struct pp_ctx *c, uint32_t event, uint32_t unit, uint32_t comment)
{
	uint64_t comment_id = comment;

	pl_buf_reset(&c->msg);
	put_value_type(c, PROFILE_PERIOD_TYPE, event, unit);
	if (comment)
		pl_pb_put_packed(&c->msg, PROFILE_COMMENT, &comment_id, 1);
	pl_pb_put_uint(&c->msg, PROFILE_DEFAULT_SAMPLE_TYPE, event);
	emit(c, c->msg.data, c->msg.len);
}

static void pp_release(struct pp_ctx *c)
{
	pl_strtab_release(&c->strings);
	pl_strtab_release(&c->functions);
	pl_strtab_release(&c->locations);
	pl_strtab_release(&c->mappings);
	pl_strtab_release(&c->seen);
	free(c->seen_loc);
	free(c->mapping_has);
	pl_buf_release(&c->key);
	pl_buf_release(&c->msg);
	pl_buf_release(&c->sub);
	free(c->loc_ids);
}

/* A writer of `p` into `out`: its tables with the empty string first, and
 * the gzip stream started; NULL when zlib cannot start. */
static struct pp_ctx *pp_new(const struct pl_profile *p, FILE *out)
{
	struct pp_ctx *c = pl_xcalloc(1, sizeof(*c));

	c->p = p;
	c->out = out;
	pl_strtab_init(&c->strings);
	pl_strtab_init(&c->functions);
	pl_strtab_init(&c->locations);
	pl_strtab_init(&c->mappings);
	pl_strtab_init(&c->seen);
	str_index(c, "", 0);
	/* windowBits 15 + 16: a gzip wrapper; zlib writes its time stamp as 0. */
	if (deflateInit2(&c->z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8,
			 Z_DEFAULT_STRATEGY) != Z_OK) {
		pp_release(c);
		free(c);
		return NULL;
	}
	return c;
}

/* What the file holds, for the export's answer. */
static void pp_stats(const struct pp_ctx *c, struct pl_export_stats *st)
{
	st->frames = c->locations.count;
	st->functions = c->functions.count;
	st->mappings = c->mappings.count;
	st->mappings_with_build_id = c->mappings_with_build_id;
}

enum pl_err pl_write_pprof(FILE *out, const struct pl_profile *p,
			   const struct pl_fold_opts *fo,
			   const struct pl_export_opts *eo,
			   struct pl_export_stats *st, struct pl_error *err)
{
	const char *u = pl_event_unit(p, fo->event);
	/* A unit the input named (a pprof or JSON input) is written as it came. */
	const char *unit = strcmp(u, "ns") == 0 ? "nanoseconds" :
			   p->events[fo->event].unit1 ? u : "count";
	struct pp_ctx *c;
	struct pl_fold_stacks *fs;
	uint32_t event, unit_id, comment, main;
	enum pl_err rc;

	memset(st, 0, sizeof(*st));
	st->file_unit = unit;
	if ((rc = pl_export_check_size(p, fo, eo, err)))
		return rc;
	if (!(c = pp_new(p, out)))
		return pl_fail(err, PL_ERR_INTERNAL, "report this as a bug", "cannot start zlib");
	fs = pl_fold_stacks_new(p, fo);
	c->names = pl_fold_stacks_names(fs);
	event = str_index0(c, pl_str(p, p->events[fo->event].name));
	unit_id = str_index0(c, unit);
	comment = eo->comment ? str_index0(c, eo->comment) : 0;
	/* The main executable is mapping 1, whatever frame comes first. */
	if ((main = pl_main_dso(p, fo->event)) != PL_NOID)
		mapping_id(c, main);
	/* Fields in ascending number order, as protobuf serializers write them. */
	emit_sample_types(c, event, unit_id);
	emit_samples(c, fs, fo, st);
	emit_mappings(c);
	emit_locations(c);
	emit_functions(c);
	emit_strings(c);
	emit_trailer(c, event, unit_id, comment);
	c->z.avail_in = 0;
	z_pump(c, Z_FINISH);
	deflateEnd(&c->z);
	pp_stats(c, st);
	if (c->failed || ferror(out))
		rc = pl_fail(err, PL_ERR_OUTPUT, "check free space on the output's disk",
			     "cannot write the pprof file");
	pl_fold_stacks_free(fs);
	pp_release(c);
	free(c);
	return rc;
}
