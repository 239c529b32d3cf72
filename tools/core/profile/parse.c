/* parse.c - format detection, the folded parser and the file driver.
 *
 * pl_parse_path opens each input through input.c (so compression, limits
 * and hashing are handled once), detects the format from its first
 * meaningful line when asked for "auto", and feeds lines to the matching
 * streaming parser.  A folder is read as a device-agent session: its
 * chunk_* files in name order.  perf.data goes to the caller's reader
 * (perf_data.read), or is refused with the command that converts it; a
 * session's perf.data chunks (chunk_N.perf.zst, extension 4) go to the
 * same reader, which adds each to the chunks before it.  A file that yields nothing at all is an
 * error saying what it looks like (sniff.h).  The folded parser of a file keeps caches
 * (see struct folded_cache) so that a repeated line costs a check (and
 * at most a hash) rather than interning every frame again; pl_folded_line, the
 * one-line entry point, parses without them.
 */
#include "parse.h"
#include "base/escape.h"
#include "base/input.h"
#include "parse_pprof.h"
#include "perf_stat.h"
#include "sniff.h"

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static bool ends_with_count(const char *s, size_t n)
{
	size_t i = n;

	while (i > 0 && s[i - 1] >= '0' && s[i - 1] <= '9')
		i--;
	return i < n && i > 1 && s[i - 1] == ' ';
}

/* Look at the first meaningful line: folded lines end in " COUNT" and do
 * not start with white space; perf stat announces itself, or (-x, CSV)
 * its first line is a counter; anything else that has lines is taken for
 * perf script (its parser reports what it cannot read). */
enum pl_format pl_detect_format(const char *head, size_t n)
{
	size_t i = 0;

	if (n >= 8 && memcmp(head, "PERFILE2", 8) == 0)
		return PL_FMT_AUTO;
	if (pl_pprof_sniff((const unsigned char *)head, n))
		return PL_FMT_PPROF;
	if (pl_json_profile_sniff(head, n) != PL_FMT_AUTO)
		return pl_json_profile_sniff(head, n);
	while (i < n) {
		const char *nl = memchr(head + i, '\n', n - i);
		size_t len = nl ? (size_t)(nl - head) - i : n - i;
		const char *line = head + i;

		i += len + 1;
		if (len && line[len - 1] == '\r')
			len--;
		if (len == 0)
			continue;
		if (memmem(line, len, "Performance counter stats", 25))
			return PL_FMT_PERF_STAT;
		if (line[0] == '#')
			continue;
		if (line[0] != ' ' && line[0] != '\t' && ends_with_count(line, len))
			return PL_FMT_FOLDED;
		if (pl_stat_line_is_csv(line, len))
			return PL_FMT_PERF_STAT;
		return PL_FMT_PERF_SCRIPT;
	}
	return PL_FMT_PERF_SCRIPT;
}

/* ------------------------------------------------------------ folded */

/* What one folded line is: skipped, malformed (noted), or a stack text of
 * *n bytes with its count. */
enum folded_kind { FOLDED_SKIP, FOLDED_BAD, FOLDED_STACK };

static enum folded_kind folded_split(struct pl_profile *p, const char *line, size_t *n,
				     uint64_t line_no, uint64_t *count)
{
	size_t len = *n;
	const char *sp;

	p->lines++;
	while (len > 0 && (line[len - 1] == ' ' || line[len - 1] == '\t'))
		len--;
	if (len == 0 || line[0] == '#') {
		p->records_skipped++;
		return FOLDED_SKIP;
	}
	sp = memrchr(line, ' ', len);
	if (!sp || sp == line) {
		pl_note_malformed(p, line_no, "no count after the stack", line, len);
		return FOLDED_BAD;
	}
	if (!pl_parse_u64(sp + 1, len - (size_t)(sp + 1 - line), count)) {
		pl_note_malformed(p, line_no, "count is not a whole number", line, len);
		return FOLDED_BAD;
	}
	*n = (size_t)(sp - line);
	return FOLDED_STACK;
}

/* The caches of one folded file.  Whole lines repeat when folded files
 * are concatenated, so a stack text's hash leads to its stack id; a hit is
 * verified against the stack's frames, whose symbols the text must spell
 * exactly, ';' between them (a symbol holds no ';'), so no line text is
 * stored.  Concatenated files repeat lines in the same order, so the stack
 * after the previous line's is tried first, which saves hashing the line
 * and the (cache-cold) probe of the table.  A new line starts from a known
 * stack that shares all its frames but the leaf, when there is one (see
 * folded_parent).  Each symbol string id leads to its frame, which skips
 * interning the function and the frame again. */
struct folded_slot {
	uint64_t hash;
	uint32_t stack1;      /* stack id + 1, 0 empty */
	uint32_t len;         /* text length */
};
struct folded_text {
	const char *s;        /* a frame's symbol, borrowed from the profile */
	uint32_t len;
};
struct folded_table {
	struct folded_slot *slots;
	size_t mask, count;
};
struct folded_cache {
	struct folded_table lines;       /* a stack's text -> the stack */
	struct folded_table parents;     /* the text but its leaf -> a stack */
	uint32_t *sym_frame;  /* symbol string id -> frame id + 1, 0 unknown */
	size_t sym_frame_cap;
	struct folded_text *frame_text;  /* frame id -> its symbol */
	size_t frame_text_cap;
	uint32_t *pred_len1;  /* stack id -> its text's length + 1, 0 unknown */
	size_t pred_cap;
	uint32_t last;        /* the previous line's stack */
	uint32_t thread;      /* the one thread of folded stacks, once known */
};

static void table_init(struct folded_table *t)
{
	t->mask = 1023;
	t->count = 0;
	t->slots = pl_xcalloc(t->mask + 1, sizeof(*t->slots));
}

/* Fill `slot` (an empty one a probe found), then grow at half full. */
static void table_put(struct folded_table *t, size_t slot, uint64_t h, size_t n,
		      uint32_t stack)
{
	struct folded_slot *old = t->slots;
	size_t old_mask = t->mask;

	t->slots[slot] = (struct folded_slot){h, stack + 1, (uint32_t)n};
	if (++t->count * 2 <= t->mask)
		return;
	t->mask = old_mask * 2 + 1;
	t->slots = pl_xcalloc(t->mask + 1, sizeof(*t->slots));
	pl_prefault(t->slots, (t->mask + 1) * sizeof(*t->slots));
	for (size_t i = 0; i <= old_mask; i++) {
		size_t j = old[i].hash & t->mask;
		if (!old[i].stack1)
			continue;
		while (t->slots[j].stack1)
			j = (j + 1) & t->mask;
		t->slots[j] = old[i];
	}
	free(old);
}

static void folded_cache_init(struct folded_cache *c)
{
	memset(c, 0, sizeof(*c));
	table_init(&c->lines);
	table_init(&c->parents);
	c->last = PL_NOID;
	c->thread = PL_NOID;
}

static void folded_cache_release(struct folded_cache *c)
{
	free(c->lines.slots);
	free(c->parents.slots);
	free(c->sym_frame);
	free(c->frame_text);
	free(c->pred_len1);
}

/* Grow an array of `size`-byte entries to hold index `i`, new ones zero. */
static void grow_zeroed(void **arr, size_t *cap, size_t i, size_t size)
{
	size_t old = *cap;

	if (i < old)
		return;
	pl_grow(arr, cap, i + 1, size);
	memset((char *)*arr + old * size, 0, (*cap - old) * size);
}

static uint32_t folded_frame(struct pl_profile *p, struct folded_cache *c,
			     const char *s, size_t n, struct pl_error *err)
{
	uint32_t sym = pl_intern_str(p, s, n), frame;

	if (c && sym < c->sym_frame_cap && c->sym_frame[sym])
		return c->sym_frame[sym] - 1;
	frame = pl_intern_frame(p, pl_intern_func(p, sym, PL_NOID), false, 0, PL_NOID, err);
	if (c && frame != PL_NOID) {
		grow_zeroed((void **)&c->sym_frame, &c->sym_frame_cap, sym, sizeof(uint32_t));
		c->sym_frame[sym] = frame + 1;
		grow_zeroed((void **)&c->frame_text, &c->frame_text_cap, frame,
			    sizeof(struct folded_text));
		c->frame_text[frame] = (struct folded_text){pl_str(p, sym), (uint32_t)n};
	}
	return frame;
}

/* Does the text spell exactly these frames, ';' between them? */
static bool folded_spells(const struct folded_cache *c, const uint32_t *frames,
			  uint32_t depth, const char *line, size_t n)
{
	size_t pos = 0;

	for (uint32_t d = 0; d < depth; d++) {
		const struct folded_text *t = &c->frame_text[frames[d]];
		if (d && (pos >= n || line[pos++] != ';'))
			return false;
		if (t->len > n - pos || memcmp(line + pos, t->s, t->len) != 0)
			return false;
		pos += t->len;
	}
	return pos == n && depth > 0;
}

/* Does the text spell exactly the frames of `stack`? */
static bool folded_matches(const struct pl_profile *p, const struct folded_cache *c,
			   uint32_t stack, const char *line, size_t n)
{
	const struct pl_stack *st = &p->stacks[stack];

	return folded_spells(c, st->frames, st->depth, line, n);
}

/* Stacks that differ only in their leaf are common (one caller, many
 * callees; or the same path under renamed leaves), so a new line first
 * looks up its text before the last ';': when a known stack's frames but
 * its leaf spell it, those frames are taken as they are and only the leaf
 * is interned.  Returns how many frames were taken into `frames` (0: none;
 * then *slot is where the prefix goes once the stack is made, or SIZE_MAX
 * when there is no prefix or it is known), and sets *start to where the
 * leaf's text begins. */
static uint32_t folded_parent(const struct pl_profile *p, const struct folded_cache *c,
			      const char *line, size_t n, uint32_t *frames, size_t cap,
			      size_t *start, uint64_t *ph, size_t *slot)
{
	const char *semi = memrchr(line, ';', n);
	size_t pn = semi ? (size_t)(semi - line) : 0, j;
	const struct folded_table *t = &c->parents;

	*slot = SIZE_MAX;
	if (!semi || pn >= UINT32_MAX)
		return 0;
	*ph = pl_strtab_hash(line, pn);
	for (j = *ph & t->mask; t->slots[j].stack1; j = (j + 1) & t->mask) {
		const struct pl_stack *st = &p->stacks[t->slots[j].stack1 - 1];
		if (t->slots[j].hash != *ph || t->slots[j].len != pn ||
		    !folded_spells(c, st->frames, st->depth - 1, line, pn))
			continue;
		if (st->depth - 1 > cap)
			return 0;
		memcpy(frames, st->frames, (st->depth - 1) * sizeof(uint32_t));
		*start = pn + 1;
		return st->depth - 1;
	}
	*slot = j;
	return 0;
}

/* Intern the stack of a stack text ("a;b;c"), root first. */
static enum pl_err folded_stack(struct pl_profile *p, struct folded_cache *c,
				const char *line, size_t n, uint64_t line_no,
				uint32_t *stack, struct pl_error *err)
{
	uint32_t small[512], *frames = small, frame;
	size_t depth = 0, start = 0, slot = SIZE_MAX;
	uint64_t ph = 0;
	enum pl_err rc = PL_OK;

	if (c)
		depth = folded_parent(p, c, line, n, frames, PL_ARRAY_LEN(small), &start,
				      &ph, &slot);
	for (size_t i = start; i <= n; i++) {
		if (i < n && line[i] != ';')
			continue;
		if (depth >= p->limits.max_depth) {
			rc = pl_fail(err, PL_ERR_LIMIT, "raise --max-depth",
				     "stack on line %llu is deeper than %u frames",
				     (unsigned long long)line_no, p->limits.max_depth);
			goto out;
		}
		if (frames == small && depth == PL_ARRAY_LEN(small)) {
			frames = pl_xmalloc(sizeof(*frames) * p->limits.max_depth);
			memcpy(frames, small, sizeof(small));
		}
		if ((frame = folded_frame(p, c, line + start, i - start, err)) == PL_NOID) {
			rc = err->code;
			goto out;
		}
		frames[depth++] = frame;
		start = i + 1;
	}
	/* Interned after the frames, as the first line always did. */
	if (!c || c->thread == PL_NOID) {
		uint32_t thread = pl_intern_thread(p, -1, -1, PL_NOID);
		if (c)
			c->thread = thread;
		*stack = pl_intern_stack(p, thread, frames, (uint32_t)depth, err);
	} else {
		*stack = pl_intern_stack(p, c->thread, frames, (uint32_t)depth, err);
	}
	if (*stack == PL_NOID)
		rc = err->code;
	else if (slot != SIZE_MAX && depth >= 2)
		table_put(&c->parents, slot, ph,
			  (size_t)((const char *)memrchr(line, ';', n) - line), *stack);
out:
	if (frames != small)
		free(frames);
	return rc;
}

/* The cached stack of a text, or PL_NOID and the slot it would take. */
static uint32_t folded_find(const struct pl_profile *p, const struct folded_cache *c,
			    const char *line, size_t n, uint64_t h, size_t *slot)
{
	const struct folded_table *t = &c->lines;
	size_t j = h & t->mask;

	for (; t->slots[j].stack1; j = (j + 1) & t->mask)
		if (t->slots[j].hash == h && t->slots[j].len == n &&
		    folded_matches(p, c, t->slots[j].stack1 - 1, line, n))
			return t->slots[j].stack1 - 1;
	*slot = j;
	return PL_NOID;
}

/* The stack after the previous line's, when this text spells it (checked
 * frame by frame, which costs less than hashing the line first). */
static uint32_t folded_predicted(const struct pl_profile *p, const struct folded_cache *c,
				 const char *line, size_t n)
{
	uint32_t s = c->last + 1;

	if (s < c->pred_cap && c->pred_len1[s] == n + 1 && folded_matches(p, c, s, line, n))
		return s;
	return PL_NOID;
}

static void folded_remember(struct folded_cache *c, size_t slot, uint64_t h,
			    size_t n, uint32_t stack)
{
	grow_zeroed((void **)&c->pred_len1, &c->pred_cap, stack, sizeof(uint32_t));
	c->pred_len1[stack] = (uint32_t)n + 1;
	table_put(&c->lines, slot, h, n, stack);
}

/* One line, through the caches when `c` is given. */
static enum pl_err folded_line(struct pl_profile *p, struct folded_cache *c,
			       uint32_t event, const char *line, size_t n,
			       uint64_t line_no, struct pl_error *err)
{
	uint64_t count, h = 0;
	uint32_t stack = PL_NOID;
	size_t slot = 0;
	enum pl_err rc;

	if (folded_split(p, line, &n, line_no, &count) != FOLDED_STACK)
		return PL_OK;
	if (c && n < UINT32_MAX) {
		stack = folded_predicted(p, c, line, n);
		if (stack == PL_NOID) {
			h = pl_strtab_hash(line, n);
			stack = folded_find(p, c, line, n, h, &slot);
		}
	}
	if (stack == PL_NOID) {
		if ((rc = folded_stack(p, c, line, n, line_no, &stack, err)))
			return rc;
		if (c && n < UINT32_MAX)
			folded_remember(c, slot, h, n, stack);
	}
	if (c)
		c->last = stack;
	if (count > 0)
		pl_add_weight(p, stack, event, count, count, false);
	p->records_parsed++;
	if (p->records_parsed > p->limits.max_records)
		return pl_fail(err, PL_ERR_LIMIT, "raise --max-records",
			       "more than %llu records",
			       (unsigned long long)p->limits.max_records);
	return PL_OK;
}

enum pl_err pl_folded_line(struct pl_profile *p, uint32_t event,
			   const char *line, size_t n, uint64_t line_no,
			   struct pl_error *err)
{
	return folded_line(p, NULL, event, line, n, line_no, err);
}

static enum pl_err parse_folded(struct pl_profile *p, struct pl_input *in,
				const struct pl_parse_opts *o, struct pl_error *err)
{
	const char *ev = o->folded_event ? o->folded_event : "unknown", *line;
	uint32_t event = pl_intern_event(p, ev, strlen(ev));
	struct folded_cache c;
	enum pl_err rc = PL_OK;
	size_t n;
	int r;

	folded_cache_init(&c);
	while ((r = pl_input_line(in, &line, &n, err)) > 0)
		if ((rc = folded_line(p, &c, event, line, n, in->line_no, err)))
			break;
	folded_cache_release(&c);
	return rc ? rc : (r < 0 ? err->code : PL_OK);
}

/* The formats that are one message, not lines: the whole file at once. */
static enum pl_err parse_whole(struct pl_profile *p, struct pl_input *in, enum pl_format fmt,
			       struct pl_error *err)
{
	struct pl_buf b = {0};
	enum pl_err rc = pl_input_read_all(in, &b, err);
	struct pl_buf shown = {0};

	pl_esc_add_text(&shown, in->path, strlen(in->path));
	if (rc == PL_OK && fmt == PL_FMT_PPROF)
		rc = pl_parse_pprof(p, b.data ? b.data : "", b.len, shown.data, err);
	else if (rc == PL_OK && fmt == PL_FMT_SPEEDSCOPE)
		rc = pl_parse_speedscope(p, b.data ? b.data : "", b.len, shown.data, err);
	else if (rc == PL_OK)
		rc = pl_parse_cpuprofile(p, b.data ? b.data : "", b.len, shown.data, err);
	pl_buf_release(&b);
	pl_buf_release(&shown);
	return rc;
}

static enum pl_err parse_lines(struct pl_profile *p, struct pl_input *in,
			       enum pl_format fmt, const struct pl_parse_opts *o,
			       struct pl_error *err)
{
	const char *line;
	size_t n;
	int r;
	enum pl_err rc = PL_OK;

	if (fmt == PL_FMT_PPROF || fmt == PL_FMT_SPEEDSCOPE || fmt == PL_FMT_CPUPROFILE)
		return parse_whole(p, in, fmt, err);
	if (fmt == PL_FMT_FOLDED)
		return parse_folded(p, in, o, err);
	if (fmt == PL_FMT_PERF_STAT) {
		struct pl_stat_parser *sp = pl_stat_parser_new(in->path);
		while ((r = pl_input_line(in, &line, &n, err)) > 0) {
			p->lines++;
			if ((rc = pl_stat_parser_line(sp, line, n, err)))
				break;
		}
		PL_GROW(p->stats, p->stats_cap, p->nstats + 1);
		p->stats[p->nstats++] = pl_stat_parser_finish(sp);
		return rc ? rc : (r < 0 ? err->code : PL_OK);
	}
	struct pl_ps_parser *ps = pl_ps_new(p, in->path);
	while ((r = pl_input_line(in, &line, &n, err)) > 0) {
		const char *text;
		size_t avail, used;
		uint64_t nlines;
		if ((rc = pl_ps_line(ps, line, n, in->line_no, err)))
			break;
		/* A record's frame lines are taken in place, all at once. */
		if ((avail = pl_input_buffered(in, &text)) &&
		    (used = pl_ps_body(ps, text, avail, in->line_no + 1, p->limits.max_line,
				       &nlines, &rc, err)))
			pl_input_skip(in, used, nlines);
		if (rc)
			break;
	}
	if (r < 0)
		rc = err->code;
	if (rc) {
		struct pl_error ignored;
		pl_ps_finish(ps, &ignored);
		return rc;
	}
	return pl_ps_finish(ps, err);
}

/* perf.data: as the one input, or as a device session's chunk (which
 * the reader adds to the chunks before it). */
static enum pl_err parse_perf_data(struct pl_profile *p, const char *path,
				   const struct pl_parse_opts *o, enum pl_format fmt, struct pl_error *err)
{
	if (!o->perf_data.read)
		return pl_fail(err, PL_ERR_UNSUPPORTED,
			       o->perf_data.refusal ? o->perf_data.refusal :
			       "convert it first: perf script -F comm,pid,tid,time,event,period,ip,sym,symoff,dso -i FILE > FILE.txt, then analyze FILE.txt",
			       "'%s' is perf.data, which is read by running perf", PL_ESC_MSG(path));
	if (fmt == PL_FMT_AGENT_CHUNKS) {
		struct pl_perf_data_opts chunk = o->perf_data;
		chunk.session_chunk = true;
		return o->perf_data.read(p, path, &chunk, err);
	}
	if (p->nsources || p->records_parsed)
		return pl_fail(err, PL_ERR_UNSUPPORTED, "analyze the perf.data on its own",
			       "'%s' is perf.data inside a session folder", PL_ESC_MSG(path));
	return o->perf_data.read(p, path, &o->perf_data, err);
}

/* The source's digest, made or taken from the digest cache (then the
 * source says which entry and identity). */
static enum pl_err finish_source_hash(struct pl_source *src, struct pl_input_hash *h,
				      struct pl_error *err)
{
	struct pl_input_digest_from from;
	enum pl_err rc = pl_input_hash_finish_from(h, src->sha256, &from, err);

	if (rc == PL_OK && from.cached) {
		src->sha256_cache_entry = pl_xstrdup(from.entry);
		src->identity = from.identity;
	}
	return rc;
}

static enum pl_err parse_file(struct pl_profile *p, const char *path,
			      const struct pl_parse_opts *o, enum pl_format fmt,
			      struct pl_error *err)
{
	struct pl_input in;
	struct pl_source *src;
	char head[4096];
	size_t nhead;
	uint64_t records_before = p->records_parsed;
	size_t stats_before = p->nstats;
	enum pl_err rc;

	/* One hash at most is left pending: an earlier file's is finished
	 * before the next file is read. */
	if ((rc = pl_parse_finish_hashes(p, err)))
		return rc;
	pl_input_set_digest_cache(o->digest_cache);
	rc = pl_input_open(&in, path, &p->limits, err);
	pl_input_set_digest_cache(NULL);
	if (rc)
		return rc;
	nhead = pl_input_peek(&in, head, sizeof(head), err);
	if (nhead >= 8 && (memcmp(head, "PERFILE2", 8) == 0 || memcmp(head, "2ELIFREP", 8) == 0)) {
		pl_input_close(&in);
		return parse_perf_data(p, path, o, fmt, err);
	}
	if (fmt == PL_FMT_PERF_DATA) {
		pl_input_close(&in);
		return pl_fail(err, PL_ERR_MALFORMED, "use format \"auto\" to detect what it is",
			       "'%s' is not perf.data (no PERFILE2 magic)", PL_ESC_MSG(path));
	}
	if (fmt == PL_FMT_AUTO)
		fmt = pl_detect_format(head, nhead);
	rc = parse_lines(p, &in, fmt, o, err);
	if (rc == PL_OK) {
		PL_GROW(p->sources, p->sources_cap, p->nsources + 1);
		src = &p->sources[p->nsources++];
		memset(src, 0, sizeof(*src));
		src->path = pl_xstrndup(path, strlen(path));
		src->size = in.file_size;
		src->text_bytes = in.bytes_out;
		if (o->defer_hash)
			src->pending_hash = pl_input_detach_hash(&in);
		else
			rc = finish_source_hash(src, pl_input_detach_hash(&in), err);
		src->format = fmt;
		src->codec = pl_codec_name(in.codec);
		src->lines = in.line_no;
		src->records = p->records_parsed - records_before;
		for (size_t i = stats_before; i < p->nstats; i++)
			src->records += p->stats[i]->ncounters;
	}
	pl_input_close(&in);
	return rc;
}

enum pl_err pl_parse_finish_hashes(struct pl_profile *p, struct pl_error *err)
{
	enum pl_err rc = PL_OK;

	for (size_t i = 0; i < p->nsources; i++) {
		struct pl_source *src = &p->sources[i];
		if (!src->pending_hash)
			continue;
		if (rc == PL_OK)
			rc = finish_source_hash(src, src->pending_hash, err);
		else
			pl_input_hash_free(src->pending_hash);
		src->pending_hash = NULL;
	}
	return rc;
}

bool pl_parse_hashes_busy(const struct pl_profile *p)
{
	for (size_t i = 0; i < p->nsources; i++)
		if (pl_input_hash_busy(p->sources[i].pending_hash))
			return true;
	return false;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* A device-agent session folder: chunk_* files, in name order. */
static enum pl_err parse_session(struct pl_profile *p, const char *dir,
				 const struct pl_parse_opts *o,
				 struct pl_error *err)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	char **names = NULL;
	size_t n = 0, cap = 0;
	enum pl_err rc = PL_OK;

	if (!d)
		return pl_fail(err, PL_ERR_INPUT, "check the path",
			       "cannot open folder '%s': %s", PL_ESC_MSG(dir), strerror(errno));
	while ((de = readdir(d))) {
		/* A temp of a writer (NAME.tmp-XXXXXX) is not a chunk yet. */
		if (strncmp(de->d_name, "chunk_", 6) != 0 || strstr(de->d_name, ".tmp-"))
			continue;
		PL_GROW(names, cap, n + 1);
		names[n++] = pl_xstrndup(de->d_name, strlen(de->d_name));
	}
	closedir(d);
	if (n == 0) {
		free(names);
		return pl_fail(err, PL_ERR_INPUT,
			       "pass a profile file, or a device session folder holding chunk_000.txt[.gz|.zst]...",
			       "folder '%s' holds no chunk_* files", PL_ESC_MSG(dir));
	}
	qsort(names, n, sizeof(*names), cmp_str);
	for (size_t i = 0; i < n; i++) {
		struct pl_buf path = {0};
		if (rc == PL_OK) {
			pl_buf_addf(&path, "%s/%s", dir, names[i]);
			rc = parse_file(p, path.data, o, PL_FMT_AGENT_CHUNKS, err);
			pl_buf_release(&path);
		}
		free(names[i]);
	}
	free(names);
	return rc;
}

enum pl_err pl_parse_path(struct pl_profile *p, const char *path,
			  const struct pl_parse_opts *o, struct pl_error *err)
{
	struct pl_parse_mark before;
	struct stat sb;
	enum pl_err rc;

	if (stat(path, &sb) == 0 && S_ISDIR(sb.st_mode)) {
		if (o->format != PL_FMT_AUTO && o->format != PL_FMT_AGENT_CHUNKS)
			return pl_fail(err, PL_ERR_USAGE, "use format auto or agent_chunks for a session folder",
				       "'%s' is a folder but format '%s' reads one file",
				       PL_ESC_MSG(path), pl_format_name(o->format));
		return parse_session(p, path, o, err);
	}
	pl_parse_mark_take(p, &before);
	if ((rc = parse_file(p, path, o, o->format, err)))
		return rc;
	return pl_nothing_read(p, path, &before, err);
}
