/* flamegraph.c - the SVG flame graph writer (see flamegraph.h).
 *
 * How it works: every name id in use gets a rank, its position among the
 * distinct name strings in byte order (ids with equal strings share a
 * rank).  Each stack becomes a sequence of ranks, and the stacks are sorted
 * lexicographically by those sequences, shorter prefix first.  In that order
 * every frame of the merged tree is one contiguous run of stacks, its
 * children are sub-runs grouped by the rank at the next depth (found by
 * galloping search), and a frame's left edge is simply the prefix sum of the
 * weights before its run.  So the tree is never built: an iterative walk over
 * the runs emits frames in order and skips a too-narrow frame's whole
 * subtree in O(1).  Cost is O(S log S) to sort S stacks plus the frames
 * drawn.  Weights add up in 128 bits, so n weights of up to 2^64-1 never
 * overflow.  Pixel edges are rounded once per prefix sum, in hundredths, so
 * siblings tile their parent exactly and output is byte-deterministic.
 *
 * Differential mode changes only a frame's colour and title: its change is
 * that of the stacks ending in it, which sort first in its run (a shorter
 * prefix sorts first), so it costs O(1) per such stack.
 */
#include "flamegraph.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "base/escape.h"
#include "base/util.h"

typedef unsigned __int128 fg_u128;
typedef __int128 fg_i128;

#define FG_XPAD 10          /* px left and right of the graph */
#define FG_TOP_PAD 36       /* px above the frames for the title */
#define FG_SUB_PAD 18       /* extra px above when there is a subtitle */
#define FG_BOTTOM_PAD 30    /* px below the frames for the status line */
#define FG_CHAR_RATIO 0.59  /* average glyph width / font size */
#define FG_FLUSH_AT 65536   /* bytes buffered before writing */
#define FG_ROOT_RANK UINT32_MAX

/* One input stack with its name ids replaced by ranks. */
struct fg_path {
	const uint32_t *rank;   /* into fg.ranks, `depth` entries */
	uint32_t depth;
	uint64_t weight;
	uint64_t before;        /* differential mode only */
};

/* One frame of the merged tree: the sorted stacks [lo, hi) share its path. */
struct fg_frame {
	uint32_t level;         /* 0 is "all" */
	uint32_t rank;          /* FG_ROOT_RANK for "all" */
	size_t lo, hi;
};

/* Walk state of one open frame: its run, and where its next child starts. */
struct fg_level {
	size_t pos, hi;
};

struct fg_layout;

struct fg {
	FILE *out;
	struct fg_layout *layout;   /* pl_flamegraph_layout's receiver, or NULL */
	struct pl_buf buf;          /* pending output */
	bool write_failed;

	/* resolved options */
	const char *title, *subtitle, *unit;
	size_t unit_len;
	uint32_t width, fh;
	double min_px, font, charw;
	bool differential;

	/* ranked and sorted input */
	struct fg_path *paths;
	size_t n;
	uint32_t *ranks;            /* every path's ranks, back to back */
	const char **rank_name;     /* rank -> display text (borrowed) */
	size_t nranks;
	fg_u128 *cum;               /* cum[i]: weight of paths[0..i) */
	double scale;               /* px per unit of weight */
	fg_u128 max_delta;          /* differential: largest |change|, >= 1 */
	uint32_t max_depth;         /* deepest stack */

	struct fg_level *lv;        /* walk stack, max_depth + 1 entries */
	uint32_t levels;            /* levels drawn, "all" included */
	uint32_t height;
};

typedef void (*fg_visit_fn)(struct fg *g, const struct fg_frame *f);

/* ------------------------------------------------------------- options */

static enum pl_err fg_resolve_opts(struct fg *g, const struct pl_flame_opts *o,
				   struct pl_error *err)
{
	static const struct pl_flame_opts none;

	if (!o)
		o = &none;
	g->title = o->title ? o->title : "Flame Graph";
	g->subtitle = o->subtitle;
	g->unit = o->unit ? o->unit : "samples";
	g->unit_len = strlen(g->unit);
	g->width = o->width ? o->width : 1200;
	g->fh = o->frame_height ? o->frame_height : 16;
	g->min_px = o->min_width_px != 0 ? o->min_width_px : 0.1;
	g->differential = o->differential != 0;
	if (g->width < 100 || g->width > 100000)
		return pl_fail(err, PL_ERR_USAGE, "use a width from 100 to 100000",
			       "flame graph width '%u' is out of range", g->width);
	if (g->fh < 8 || g->fh > 256)
		return pl_fail(err, PL_ERR_USAGE, "use a frame height from 8 to 256",
			       "flame graph frame height '%u' is out of range", g->fh);
	if (!(g->min_px >= 0) || !isfinite(g->min_px))
		return pl_fail(err, PL_ERR_USAGE, "use a small positive number such as 0.1",
			       "flame graph minimum frame width '%g' is invalid", g->min_px);
	g->font = g->fh >= 16 ? 12.0 : g->fh * 0.75;
	g->charw = g->font * FG_CHAR_RATIO;
	return PL_OK;
}

/* ------------------------------------------------- validation and ranks */

/* Check every stack; report the largest id used and the total depth. */
static enum pl_err fg_validate(const struct pl_flame_stack *stacks, size_t n,
			       const char *const *names, size_t nnames, bool differential,
			       uint32_t *max_id, size_t *total_depth,
			       struct pl_error *err)
{
	*max_id = 0;
	*total_depth = 0;
	for (size_t i = 0; i < n; i++) {
		const struct pl_flame_stack *s = &stacks[i];

		if (s->weight == 0 && !differential)
			return pl_fail(err, PL_ERR_INPUT, "drop stacks with no weight",
				       "flame graph stack %zu has weight 0", i);
		if (s->depth && !s->names)
			return pl_fail(err, PL_ERR_INTERNAL, NULL,
				       "flame graph stack %zu has depth %u but no names",
				       i, s->depth);
		for (uint32_t d = 0; d < s->depth; d++) {
			uint32_t id = s->names[d];

			if (!names)
				return pl_fail(err, PL_ERR_INTERNAL, NULL,
					       "flame graph stacks use names, but the name array is NULL");
			if (id >= nnames)
				return pl_fail(err, PL_ERR_INPUT, "pass every name the stacks use",
					       "flame graph stack %zu uses name id %u, but only %zu names exist",
					       i, id, nnames);
			if (!names[id])
				return pl_fail(err, PL_ERR_INPUT, "give every name id in use a string",
					       "flame graph name id %u is NULL", id);
			if (id > *max_id)
				*max_id = id;
		}
		*total_depth += s->depth;
	}
	return PL_OK;
}

static int fg_cmp_id_by_name(const void *a, const void *b, void *ctx)
{
	const char *const *names = ctx;
	int c = strcmp(names[*(const uint32_t *)a], names[*(const uint32_t *)b]);

	if (c)
		return c;
	return (*(const uint32_t *)a > *(const uint32_t *)b) -
	       (*(const uint32_t *)a < *(const uint32_t *)b);
}

/* Fill `rank_of[id]` (max_id + 1 entries) for every id the stacks use:
 * the id's position among the distinct name strings in byte order. */
static void fg_rank_names(struct fg *g, const struct pl_flame_stack *stacks,
			  size_t n, const char *const *names, uint32_t max_id,
			  uint32_t *rank_of)
{
	size_t nids = (size_t)max_id + 1, nused = 0;
	uint32_t *used;

	memset(rank_of, 0xff, nids * sizeof(*rank_of));
	for (size_t i = 0; i < n; i++)
		for (uint32_t d = 0; d < stacks[i].depth; d++)
			rank_of[stacks[i].names[d]] = 0;
	used = pl_xmalloc(nids * sizeof(*used));
	for (size_t id = 0; id < nids; id++)
		if (rank_of[id] == 0)
			used[nused++] = (uint32_t)id;
	qsort_r(used, nused, sizeof(*used), fg_cmp_id_by_name, (void *)names);

	g->rank_name = pl_xmalloc((nused ? nused : 1) * sizeof(*g->rank_name));
	g->nranks = 0;
	for (size_t i = 0; i < nused; i++) {
		const char *s = names[used[i]];

		if (!g->nranks || strcmp(g->rank_name[g->nranks - 1], s) != 0)
			g->rank_name[g->nranks++] = s;
		rank_of[used[i]] = (uint32_t)(g->nranks - 1);
	}
	free(used);
}

/* ------------------------------------------------ sorting and weights */

static int fg_cmp_path(const void *a, const void *b)
{
	const struct fg_path *p = a, *q = b;
	uint32_t m = p->depth < q->depth ? p->depth : q->depth;

	for (uint32_t i = 0; i < m; i++)
		if (p->rank[i] != q->rank[i])
			return p->rank[i] < q->rank[i] ? -1 : 1;
	return (p->depth > q->depth) - (p->depth < q->depth);
}

/* Turn the stacks into rank paths, sort them and sum their weights. */
static void fg_build(struct fg *g, const struct pl_flame_stack *stacks,
		     size_t n, const char *const *names, uint32_t max_id,
		     size_t total_depth)
{
	uint32_t *rank_of = pl_xmalloc(((size_t)max_id + 1) * sizeof(*rank_of));
	uint32_t *r;

	fg_rank_names(g, stacks, n, names, max_id, rank_of);
	g->n = n;
	g->paths = pl_xmalloc(n * sizeof(*g->paths));
	g->ranks = pl_xmalloc((total_depth ? total_depth : 1) * sizeof(*g->ranks));
	r = g->ranks;
	g->max_depth = 0;
	for (size_t i = 0; i < n; i++) {
		const struct pl_flame_stack *s = &stacks[i];

		g->paths[i].rank = r;
		g->paths[i].depth = s->depth;
		g->paths[i].weight = s->weight;
		g->paths[i].before = g->differential ? s->before : 0;
		for (uint32_t d = 0; d < s->depth; d++)
			*r++ = rank_of[s->names[d]];
		if (s->depth > g->max_depth)
			g->max_depth = s->depth;
	}
	free(rank_of);
	qsort(g->paths, n, sizeof(*g->paths), fg_cmp_path);

	g->cum = pl_xmalloc((n + 1) * sizeof(*g->cum));
	g->cum[0] = 0;
	for (size_t i = 0; i < n; i++)
		g->cum[i + 1] = g->cum[i] + g->paths[i].weight;
	g->scale = g->cum[n] ? (double)(g->width - 2 * FG_XPAD) / (double)g->cum[n] : 0;
	g->max_delta = 1;
	for (size_t i = 0; i < n && g->differential; i++) {
		const struct fg_path *p = &g->paths[i];
		fg_u128 d = p->weight > p->before ? p->weight - p->before : p->before - p->weight;
		if (d > g->max_delta)
			g->max_delta = d;
	}
}

/* ---------------------------------------------------------------- walk */

/* End of the run of paths from `lo` (< hi) sharing the rank at depth d;
 * every path in [lo, hi) is deeper than d and sorted at d. */
static size_t fg_run_end(const struct fg *g, size_t lo, size_t hi, uint32_t d)
{
	uint32_t r = g->paths[lo].rank[d];
	size_t step = 1, a, b;

	while (lo + step < hi && g->paths[lo + step].rank[d] == r)
		step *= 2;
	a = lo + step / 2;          /* known equal */
	b = lo + step < hi ? lo + step : hi;  /* first known different, or hi */
	while (b - a > 1) {
		size_t mid = a + (b - a) / 2;

		if (g->paths[mid].rank[d] == r)
			a = mid;
		else
			b = mid;
	}
	return b;
}

static bool fg_wide_enough(const struct fg *g, size_t lo, size_t hi)
{
	return (double)(g->cum[hi] - g->cum[lo]) * g->scale >= g->min_px;
}

/* Visit every frame wide enough to draw, in depth-first order with siblings
 * by name; a narrow frame's subtree is skipped whole. */
static void fg_walk(struct fg *g, fg_visit_fn visit)
{
	struct fg_frame f = {.level = 0, .rank = FG_ROOT_RANK, .lo = 0, .hi = g->n};
	size_t top = 1;

	visit(g, &f);
	g->lv[0].pos = 0;
	g->lv[0].hi = g->n;
	while (top) {
		struct fg_level *l = &g->lv[top - 1];
		uint32_t d = (uint32_t)(top - 1);
		size_t lo;

		while (l->pos < l->hi && g->paths[l->pos].depth <= d)
			l->pos++;   /* stacks ending here: self weight */
		if (l->pos >= l->hi) {
			top--;
			continue;
		}
		lo = l->pos;
		l->pos = fg_run_end(g, lo, l->hi, d);
		if (!fg_wide_enough(g, lo, l->pos))
			continue;
		f.level = d + 1;
		f.rank = g->paths[lo].rank[d];
		f.lo = lo;
		f.hi = l->pos;
		visit(g, &f);
		g->lv[top].pos = lo;
		g->lv[top].hi = f.hi;
		top++;
	}
}

static void fg_count_level(struct fg *g, const struct fg_frame *f)
{
	if (f->level + 1 > g->levels)
		g->levels = f->level + 1;
}

/* ---------------------------------------------------------- output text */

static void fg_flush(struct fg *g, bool force)
{
	if (!force && g->buf.len < FG_FLUSH_AT)
		return;
	if (g->buf.len && fwrite(g->buf.data, 1, g->buf.len, g->out) != g->buf.len)
		g->write_failed = true;
	pl_buf_reset(&g->buf);
}

/* Length of the UTF-8 character at `s` (len > 0 bytes left); *ok is false
 * for a byte that starts no valid character (then the length is 1). */
static size_t fg_utf8_step(const unsigned char *s, size_t len, bool *ok)
{
	unsigned c = s[0];
	size_t more;
	uint32_t cp, min;

	*ok = true;
	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf) {
		more = 1, cp = c & 0x1f, min = 0x80;
	} else if ((c & 0xf0) == 0xe0) {
		more = 2, cp = c & 0x0f, min = 0x800;
	} else if (c >= 0xf0 && c <= 0xf4) {
		more = 3, cp = c & 0x07, min = 0x10000;
	} else {
		*ok = false;
		return 1;
	}
	if (len <= more) {
		*ok = false;
		return 1;
	}
	for (size_t i = 1; i <= more; i++) {
		if ((s[i] & 0xc0) != 0x80) {
			*ok = false;
			return 1;
		}
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff) ||
	    cp == 0xfffe || cp == 0xffff)
		*ok = false;
	return *ok ? more + 1 : 1;
}

/* Append `len` bytes of `s` as XML character data: markup characters
 * escaped, bytes that are not UTF-8 as `\xHH` (base/escape.h's text
 * form), control characters as '?' (tab and line breaks as spaces). */
static void fg_add_xml(struct pl_buf *b, const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0;

	while (i < len) {
		bool ok;
		size_t step = fg_utf8_step(p + i, len - i, &ok);
		unsigned char c = p[i];

		if (!ok)
			pl_esc_add_text(b, s + i, 1);
		else if (c == '&')
			pl_buf_adds(b, "&amp;");
		else if (c == '<')
			pl_buf_adds(b, "&lt;");
		else if (c == '>')
			pl_buf_adds(b, "&gt;");
		else if (c == '"')
			pl_buf_adds(b, "&quot;");
		else if (c == '\t' || c == '\n' || c == '\r')
			pl_buf_addc(b, ' ');
		else if (c < 0x20)
			pl_buf_addc(b, '?');
		else
			pl_buf_add(b, p + i, step);
		i += step;
	}
}

static void fg_add_xmls(struct pl_buf *b, const char *s)
{
	fg_add_xml(b, s, strlen(s));
}

/* Append as much of `name` as fits in `max_chars` characters, ending in
 * ".." when cut; nothing when fewer than 3 characters fit. */
static void fg_add_fitted(struct pl_buf *b, const char *name, long max_chars)
{
	const unsigned char *p = (const unsigned char *)name;
	size_t len = strlen(name), i = 0, cut = 0;
	long chars = 0;

	if (max_chars < 3)
		return;
	while (i < len) {
		bool ok;
		size_t step = fg_utf8_step(p + i, len - i, &ok);
		long shown = ok ? 1 : 4;  /* an escaped byte shows as 4 */

		if (chars + shown <= max_chars - 2)
			cut = i + step;
		i += step;
		chars += shown;
	}
	if (chars <= max_chars) {
		fg_add_xml(b, name, len);
		return;
	}
	fg_add_xml(b, name, cut);
	pl_buf_adds(b, "..");
}

/* Append `v` in decimal with a ',' between groups of three digits. */
static void fg_add_count(struct pl_buf *b, fg_u128 v)
{
	char digits[48];
	size_t n = 0;

	do {
		digits[n++] = (char)('0' + (int)(v % 10));
		v /= 10;
	} while (v);
	while (n) {
		pl_buf_addc(b, digits[--n]);
		if (n && n % 3 == 0)
			pl_buf_addc(b, ',');
	}
}

/* Append `v` in decimal (a hand-rolled printf: frames are the hot path). */
static void fg_add_uint(struct pl_buf *b, unsigned long long v)
{
	char digits[24];
	size_t n = sizeof(digits);

	do {
		digits[--n] = (char)('0' + (int)(v % 10));
		v /= 10;
	} while (v);
	pl_buf_add(b, digits + n, sizeof(digits) - n);
}

/* Append `v` / 10^decimals (v >= 0, decimals 1 or 2) with that many
 * decimals, e.g. (1234, 2) -> "12.34". */
static void fg_add_fixed(struct pl_buf *b, long long v, int decimals)
{
	unsigned long long u = v > 0 ? (unsigned long long)v : 0;
	unsigned long long div = decimals == 1 ? 10 : 100, frac = u % div;

	fg_add_uint(b, u / div);
	pl_buf_addc(b, '.');
	if (decimals == 2)
		pl_buf_addc(b, (char)('0' + (int)(frac / 10)));
	pl_buf_addc(b, (char)('0' + (int)(frac % 10)));
}

/* ---------------------------------------------------------------- colour */

static bool fg_ends_with(const char *s, size_t len, const char *tail)
{
	size_t n = strlen(tail);

	return len >= n && memcmp(s + len - n, tail, n) == 0;
}

/* A colour that depends only on the name: warm "hot" shades, with kernel
 * ("_[k]"), JIT ("_[j]") and inlined ("_[i]") annotations set apart. */
static void fg_fill_rgb(const char *name, unsigned rgb[3])
{
	size_t len = strlen(name);
	uint64_t h = pl_hash(name, len, 0x666c616d65ULL);
	unsigned v1 = (unsigned)(h & 0xffff), v2 = (unsigned)(h >> 16 & 0xffff),
		 v3 = (unsigned)(h >> 32 & 0xffff);

	if (fg_ends_with(name, len, "_[k]")) {
		rgb[0] = 215 + v1 % 41, rgb[1] = 120 + v2 % 61, rgb[2] = v3 % 41;
	} else if (fg_ends_with(name, len, "_[j]")) {
		rgb[0] = 50 + v1 % 61, rgb[1] = 170 + v2 % 61, rgb[2] = 50 + v3 % 61;
	} else if (fg_ends_with(name, len, "_[i]")) {
		rgb[0] = 60 + v1 % 51, rgb[1] = 190 + v2 % 41, rgb[2] = 190 + v3 % 41;
	} else {
		rgb[0] = 205 + v1 % 51, rgb[1] = v2 % 231, rgb[2] = v3 % 56;
	}
}

static void fg_add_fill(struct pl_buf *b, const char *name)
{
	unsigned rgb[3];

	fg_fill_rgb(name, rgb);
	pl_buf_adds(b, "rgb(");
	fg_add_uint(b, rgb[0]);
	pl_buf_addc(b, ',');
	fg_add_uint(b, rgb[1]);
	pl_buf_addc(b, ',');
	fg_add_uint(b, rgb[2]);
	pl_buf_addc(b, ')');
}

/* flamegraph.pl's color_scale for a change of `d` out of the largest
 * `max`: white, shading to red (grew) or blue (shrank) in proportion,
 * truncated as Perl's int() does. */
static void fg_add_delta_fill(struct pl_buf *b, fg_i128 d, fg_u128 max)
{
	fg_u128 mag = d < 0 ? (fg_u128)-d : (fg_u128)d;
	unsigned shade = 255;

	if (mag > max)
		mag = max;
	if (d != 0)
		shade = (unsigned)(210 * (max - mag) / max);
	pl_buf_adds(b, "rgb(");
	fg_add_uint(b, d < 0 ? shade : 255);
	pl_buf_addc(b, ',');
	fg_add_uint(b, shade);
	pl_buf_addc(b, ',');
	fg_add_uint(b, d > 0 ? shade : 255);
	pl_buf_addc(b, ')');
}

/* The change of the stacks that end in frame `f`: those first in its run. */
static fg_i128 fg_self_delta(const struct fg *g, const struct fg_frame *f)
{
	fg_i128 d = 0;

	for (size_t i = f->lo; i < f->hi && g->paths[i].depth == f->level; i++)
		d += (fg_i128)g->paths[i].weight - (fg_i128)g->paths[i].before;
	return d;
}

/* "; +1.25%": the change as a share of the total, as flamegraph.pl
 * prints it (sprintf "%.2f", a '+' when it grew). */
static void fg_add_delta_pct(struct pl_buf *b, fg_i128 d, fg_u128 total)
{
	char num[64];

	snprintf(num, sizeof(num), "%.2f", 100.0 * (double)d / (double)total);
	pl_buf_adds(b, d > 0 ? "; +" : "; ");
	pl_buf_adds(b, num);
	pl_buf_addc(b, '%');
}

/* ---------------------------------------------------------------- frames */

/* Pixel edge of the weight offset `c`, in hundredths of a pixel.  Every edge
 * comes from here, so adjacent frames share edges exactly. */
static long long fg_edge(const struct fg *g, fg_u128 c)
{
	return llround((FG_XPAD + (double)c * g->scale) * 100.0);
}

static void fg_emit_frame(struct fg *g, const struct fg_frame *f)
{
	struct pl_buf *b = &g->buf;
	const char *name = f->rank == FG_ROOT_RANK ? "all" : g->rank_name[f->rank];
	fg_u128 w = g->cum[f->hi] - g->cum[f->lo];
	long long x0 = fg_edge(g, g->cum[f->lo]), x1 = fg_edge(g, g->cum[f->hi]);
	unsigned y = g->height - FG_BOTTOM_PAD - (f->level + 1) * g->fh;
	long long pct100 = llround((double)w * 10000.0 / (double)g->cum[g->n]);
	long long text_y10 = llround((y + (g->fh - 1) / 2.0 + g->font * 0.35) * 10.0);
	fg_i128 delta = g->differential ? fg_self_delta(g, f) : 0;

	pl_buf_adds(b, "<g class=\"frame\"><title>");
	fg_add_xmls(b, name);
	pl_buf_adds(b, " (");
	fg_add_count(b, w);
	pl_buf_addc(b, ' ');
	fg_add_xml(b, g->unit, g->unit_len);
	pl_buf_adds(b, ", ");
	fg_add_fixed(b, pct100, 2);
	pl_buf_addc(b, '%');
	/* flamegraph.pl gives "all" no change */
	if (g->differential && f->rank != FG_ROOT_RANK)
		fg_add_delta_pct(b, delta, g->cum[g->n]);
	pl_buf_adds(b, ")</title><rect x=\"");
	fg_add_fixed(b, x0, 2);
	pl_buf_adds(b, "\" y=\"");
	fg_add_uint(b, y);
	pl_buf_adds(b, "\" width=\"");
	fg_add_fixed(b, x1 - x0, 2);
	pl_buf_adds(b, "\" height=\"");
	fg_add_uint(b, g->fh - 1);
	pl_buf_adds(b, "\" rx=\"2\" ry=\"2\" fill=\"");
	if (g->differential)
		fg_add_delta_fill(b, delta, g->max_delta);
	else
		fg_add_fill(b, name);
	pl_buf_adds(b, "\"/><text x=\"");
	fg_add_fixed(b, x0 + 300, 2);
	pl_buf_adds(b, "\" y=\"");
	fg_add_fixed(b, text_y10, 1);
	pl_buf_adds(b, "\">");
	fg_add_fitted(b, name, (long)floor(((double)(x1 - x0) / 100.0 - 6) / g->charw));
	pl_buf_adds(b, "</text></g>\n");
	fg_flush(g, false);
}

/* ------------------------------------------------------------ document */

/* The viewer: zoom, search and the status line.  Reads each frame's
 * geometry and name back from the SVG, so it needs no data of its own. */
static const char fg_script[] =
	"(function () {\n"
	"\"use strict\";\n"
	"var box = document.getElementById(\"pl_frames\");\n"
	"var details = document.getElementById(\"pl_details\");\n"
	"var matched = document.getElementById(\"pl_matched\");\n"
	"var unzoomBtn = document.getElementById(\"pl_unzoom\");\n"
	"var searchBtn = document.getElementById(\"pl_search\");\n"
	"var xpad = parseFloat(box.getAttribute(\"data-xpad\"));\n"
	"var fullW = parseFloat(box.getAttribute(\"data-width\")) - 2 * xpad;\n"
	"var charW = parseFloat(box.getAttribute(\"data-charw\"));\n"
	"var HIT = \"rgb(230,0,230)\", EPS = 0.005;\n"
	"var frames = [], searching = false;\n"
	"\n"
	"function Frame(g) {\n"
	"  var label = g.getElementsByTagName(\"title\")[0].textContent;\n"
	"  var cut = label.lastIndexOf(\" (\");\n"
	"  this.g = g;\n"
	"  this.rect = g.getElementsByTagName(\"rect\")[0];\n"
	"  this.text = g.getElementsByTagName(\"text\")[0];\n"
	"  this.label = label;\n"
	"  this.name = cut >= 0 ? label.substring(0, cut) : label;\n"
	"  this.x = parseFloat(this.rect.getAttribute(\"x\"));\n"
	"  this.w = parseFloat(this.rect.getAttribute(\"width\"));\n"
	"  this.y = parseFloat(this.rect.getAttribute(\"y\"));\n"
	"  this.fill = this.rect.getAttribute(\"fill\");\n"
	"}\n"
	"\n"
	"function place(f, x, w) {\n"
	"  var max = Math.floor((w - 6) / charW), s = \"\";\n"
	"  f.rect.setAttribute(\"x\", x.toFixed(2));\n"
	"  f.rect.setAttribute(\"width\", w.toFixed(2));\n"
	"  f.text.setAttribute(\"x\", (x + 3).toFixed(2));\n"
	"  if (max >= 3)\n"
	"    s = f.name.length <= max ? f.name : f.name.substring(0, max - 2) + \"..\";\n"
	"  f.text.textContent = s;\n"
	"}\n"
	"\n"
	"function show(f, x, w, opacity) {\n"
	"  f.g.style.display = \"\";\n"
	"  f.g.style.opacity = opacity;\n"
	"  place(f, x, w);\n"
	"}\n"
	"\n"
	"function unzoom() {\n"
	"  for (var i = 0; i < frames.length; i++)\n"
	"    show(frames[i], frames[i].x, frames[i].w, \"\");\n"
	"  unzoomBtn.style.opacity = \"0\";\n"
	"}\n"
	"\n"
	"function zoom(t) {\n"
	"  var k, i, f, below, inside;\n"
	"  if (t.w <= EPS || t.w >= fullW - EPS) {\n"
	"    unzoom();\n"
	"    return;\n"
	"  }\n"
	"  k = fullW / t.w;\n"
	"  for (i = 0; i < frames.length; i++) {\n"
	"    f = frames[i];\n"
	"    below = f.y > t.y + EPS;\n"
	"    inside = f.x >= t.x - EPS && f.x + f.w <= t.x + t.w + EPS;\n"
	"    if (below && f.x <= t.x + EPS && f.x + f.w >= t.x + t.w - EPS)\n"
	"      show(f, xpad, fullW, \"0.5\");\n"
	"    else if (inside && (f === t || f.y < t.y - EPS))\n"
	"      show(f, xpad + (f.x - t.x) * k, f.w * k, \"\");\n"
	"    else\n"
	"      f.g.style.display = \"none\";\n"
	"  }\n"
	"  unzoomBtn.style.opacity = \"1\";\n"
	"}\n"
	"\n"
	"function resetSearch() {\n"
	"  for (var i = 0; i < frames.length; i++)\n"
	"    frames[i].rect.setAttribute(\"fill\", frames[i].fill);\n"
	"  matched.textContent = \" \";\n"
	"  searchBtn.textContent = \"Search\";\n"
	"  searching = false;\n"
	"}\n"
	"\n"
	"function search(term) {\n"
	"  var re, hits = [], i, f, sum = 0, end = -1;\n"
	"  try {\n"
	"    re = new RegExp(term);\n"
	"  } catch (e) {\n"
	"    details.textContent = \"Invalid regular expression: \" + term;\n"
	"    return;\n"
	"  }\n"
	"  for (i = 0; i < frames.length; i++) {\n"
	"    f = frames[i];\n"
	"    if (re.test(f.name)) {\n"
	"      f.rect.setAttribute(\"fill\", HIT);\n"
	"      hits.push(f);\n"
	"    } else {\n"
	"      f.rect.setAttribute(\"fill\", f.fill);\n"
	"    }\n"
	"  }\n"
	"  /* nested matches count once: sum the union of their spans */\n"
	"  hits.sort(function (a, b) { return a.x - b.x || b.w - a.w; });\n"
	"  for (i = 0; i < hits.length; i++) {\n"
	"    f = hits[i];\n"
	"    if (f.x >= end)\n"
	"      sum += f.w;\n"
	"    else if (f.x + f.w > end)\n"
	"      sum += f.x + f.w - end;\n"
	"    end = Math.max(end, f.x + f.w);\n"
	"  }\n"
	"  matched.textContent = \"Matched: \" +\n"
	"    (fullW > 0 ? 100 * sum / fullW : 0).toFixed(1) + \"%\";\n"
	"  searchBtn.textContent = \"Reset Search\";\n"
	"  searching = true;\n"
	"}\n"
	"\n"
	"function askSearch() {\n"
	"  var term = window.prompt(\"Search frames (regular expression):\", \"\");\n"
	"  if (term)\n"
	"    search(term);\n"
	"}\n"
	"\n"
	"function frameOf(node) {\n"
	"  for (; node && node !== box; node = node.parentNode)\n"
	"    if (node.plFrame)\n"
	"      return node.plFrame;\n"
	"  return null;\n"
	"}\n"
	"\n"
	"box.addEventListener(\"click\", function (e) {\n"
	"  var f = frameOf(e.target);\n"
	"  if (f)\n"
	"    zoom(f);\n"
	"});\n"
	"box.addEventListener(\"mouseover\", function (e) {\n"
	"  var f = frameOf(e.target);\n"
	"  if (f)\n"
	"    details.textContent = f.label;\n"
	"});\n"
	"box.addEventListener(\"mouseout\", function () {\n"
	"  details.textContent = \" \";\n"
	"});\n"
	"unzoomBtn.addEventListener(\"click\", unzoom);\n"
	"searchBtn.addEventListener(\"click\", function () {\n"
	"  if (searching)\n"
	"    resetSearch();\n"
	"  else\n"
	"    askSearch();\n"
	"});\n"
	"document.addEventListener(\"keydown\", function (e) {\n"
	"  if (e.key === \"F3\" || ((e.ctrlKey || e.metaKey) && (e.key === \"f\" || e.key === \"F\"))) {\n"
	"    e.preventDefault();\n"
	"    askSearch();\n"
	"  } else if (e.key === \"Escape\") {\n"
	"    resetSearch();\n"
	"    unzoom();\n"
	"  }\n"
	"});\n"
	"(function () {\n"
	"  var gs = box.getElementsByTagName(\"g\"), i, m;\n"
	"  for (i = 0; i < gs.length; i++) {\n"
	"    gs[i].plFrame = new Frame(gs[i]);\n"
	"    frames.push(gs[i].plFrame);\n"
	"  }\n"
	"  /* file.svg#search=REGEX opens with that search applied */\n"
	"  m = /[#&]search=([^&]*)/.exec(window.location.hash);\n"
	"  if (m)\n"
	"    search(decodeURIComponent(m[1]));\n"
	"})();\n"
	"})();\n";

static void fg_emit_head(struct fg *g)
{
	struct pl_buf *b = &g->buf;
	unsigned w = g->width, h = g->height;

	pl_buf_addf(b,
		"<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n"
		"<svg version=\"1.1\" xmlns=\"http://www.w3.org/2000/svg\" "
		"width=\"%u\" height=\"%u\" viewBox=\"0 0 %u %u\">\n"
		"<!-- Flame graph written by PerfLens: click a frame to zoom, "
		"Ctrl-F or Search to highlight frames by regular expression. -->\n"
		"<defs><linearGradient id=\"pl_background\" x1=\"0\" y1=\"0\" x2=\"0\" y2=\"1\">"
		"<stop offset=\"5%%\" stop-color=\"#eeeeee\"/>"
		"<stop offset=\"95%%\" stop-color=\"#eeeeb0\"/></linearGradient></defs>\n"
		"<style type=\"text/css\">\n"
		"text { font-family: Verdana, \"DejaVu Sans\", sans-serif; font-size: 12px; fill: #000000; }\n"
		"#pl_title { font-size: 17px; }\n"
		"#pl_subtitle { fill: #808080; }\n"
		".pl_button { cursor: pointer; }\n"
		".pl_button:hover { text-decoration: underline; }\n"
		".frame { cursor: pointer; }\n"
		".frame text { font-size: %.1fpx; }\n"
		".frame:hover rect { stroke: #000000; stroke-width: 0.5; }\n"
		"</style>\n"
		"<rect x=\"0\" y=\"0\" width=\"%u\" height=\"%u\" fill=\"url(#pl_background)\"/>\n",
		w, h, w, h, g->font, w, h);
	pl_buf_addf(b, "<text id=\"pl_title\" x=\"%.1f\" y=\"24\" text-anchor=\"middle\">",
		    w / 2.0);
	fg_add_xmls(b, g->title);
	pl_buf_adds(b, "</text>\n");
	if (g->subtitle) {
		pl_buf_addf(b, "<text id=\"pl_subtitle\" x=\"%.1f\" y=\"%u\" text-anchor=\"middle\">",
			    w / 2.0, 24 + FG_SUB_PAD);
		fg_add_xmls(b, g->subtitle);
		pl_buf_adds(b, "</text>\n");
	}
	pl_buf_addf(b,
		"<text id=\"pl_unzoom\" class=\"pl_button\" x=\"%u\" y=\"24\" style=\"opacity:0\">Reset Zoom</text>\n"
		"<text id=\"pl_search\" class=\"pl_button\" x=\"%u\" y=\"24\" text-anchor=\"end\">Search</text>\n"
		"<text id=\"pl_details\" x=\"%u\" y=\"%u\"> </text>\n"
		"<text id=\"pl_matched\" x=\"%u\" y=\"%u\" text-anchor=\"end\"> </text>\n",
		FG_XPAD, w - FG_XPAD, FG_XPAD, h - 10, w - FG_XPAD, h - 10);
	pl_buf_addf(b, "<g id=\"pl_frames\" data-xpad=\"%u\" data-width=\"%u\" data-charw=\"%.4f\">\n",
		    FG_XPAD, w, g->charw);
}

static void fg_emit_tail(struct fg *g)
{
	struct pl_buf *b = &g->buf;

	pl_buf_adds(b, "</g>\n");
	if (g->cum[g->n] == 0)
		pl_buf_addf(b, "<text x=\"%.1f\" y=\"%u\" text-anchor=\"middle\">no samples</text>\n",
			    g->width / 2.0, g->height - FG_BOTTOM_PAD - g->fh);
	pl_buf_adds(b, "<script type=\"text/ecmascript\"><![CDATA[\n");
	pl_buf_adds(b, fg_script);
	pl_buf_adds(b, "]]></script>\n</svg>\n");
	fg_flush(g, true);
}

/* ----------------------------------------------------------------- API */

static void fg_release(struct fg *g)
{
	pl_buf_release(&g->buf);
	free(g->paths);
	free(g->ranks);
	free(g->rank_name);
	free(g->cum);
	free(g->lv);
}

enum pl_err pl_flamegraph_write(FILE *out, const struct pl_flame_stack *stacks,
				size_t n, const char *const *names, size_t nnames,
				const struct pl_flame_opts *opts,
				struct pl_error *err)
{
	struct fg g;
	uint32_t max_id;
	size_t total_depth;
	bool drawn;
	enum pl_err rc;

	memset(&g, 0, sizeof(g));
	if (!out)
		return pl_fail(err, PL_ERR_INTERNAL, NULL, "flame graph output stream is NULL");
	if (n && !stacks)
		return pl_fail(err, PL_ERR_INTERNAL, NULL, "flame graph has %zu stacks but no array", n);
	if ((rc = fg_resolve_opts(&g, opts, err)) != PL_OK)
		return rc;
	if ((rc = fg_validate(stacks, n, names, nnames, g.differential, &max_id,
			       &total_depth, err)) != PL_OK)
		return rc;

	g.out = out;
	fg_build(&g, stacks, n, names, max_id, total_depth);
	g.lv = pl_xmalloc(((size_t)g.max_depth + 1) * sizeof(*g.lv));
	/* Nothing to draw: no stacks, or (differential) none with weight. */
	drawn = g.cum[n] != 0;
	if (drawn)
		fg_walk(&g, fg_count_level);
	g.height = FG_TOP_PAD + (g.subtitle ? FG_SUB_PAD : 0) + FG_BOTTOM_PAD +
		   (drawn ? g.levels : 3) * g.fh;
	fg_emit_head(&g);
	if (drawn)
		fg_walk(&g, fg_emit_frame);
	fg_emit_tail(&g);
	fg_release(&g);
	if (g.write_failed || fflush(out) != 0 || ferror(out))
		return pl_fail(err, PL_ERR_OUTPUT, "check the disk space and the output path",
			       "cannot write the flame graph");
	return PL_OK;
}

/* ------------------------------------------------------------- layout */

struct fg_layout {
	pl_flame_box_fn fn;
	void *arg;
};

static void fg_emit_box(struct fg *g, const struct fg_frame *f)
{
	struct pl_flame_box b;
	unsigned rgb[3];
	fg_u128 w = g->cum[f->hi] - g->cum[f->lo];

	b.name = f->rank == FG_ROOT_RANK ? "all" : g->rank_name[f->rank];
	b.level = f->level;
	b.x0 = (double)fg_edge(g, g->cum[f->lo]) / 100.0;
	b.x1 = (double)fg_edge(g, g->cum[f->hi]) / 100.0;
	b.weight = (double)w;
	b.percent = 100.0 * (double)w / (double)g->cum[g->n];
	fg_fill_rgb(b.name, rgb);
	b.rgb[0] = (uint8_t)rgb[0], b.rgb[1] = (uint8_t)rgb[1], b.rgb[2] = (uint8_t)rgb[2];
	g->layout->fn(g->layout->arg, &b);
}

enum pl_err pl_flamegraph_layout(const struct pl_flame_stack *stacks, size_t n,
				 const char *const *names, size_t nnames,
				 const struct pl_flame_opts *opts, pl_flame_box_fn fn, void *arg,
				 uint32_t *levels, struct pl_error *err)
{
	struct fg g;
	struct fg_layout l = {fn, arg};
	uint32_t max_id;
	size_t total_depth;
	enum pl_err rc;

	memset(&g, 0, sizeof(g));
	*levels = 0;
	if (n && !stacks)
		return pl_fail(err, PL_ERR_INTERNAL, NULL, "flame graph has %zu stacks but no array", n);
	if ((rc = fg_resolve_opts(&g, opts, err)) != PL_OK)
		return rc;
	if (g.differential)
		return pl_fail(err, PL_ERR_INTERNAL, NULL, "the layout has no differential mode");
	if ((rc = fg_validate(stacks, n, names, nnames, false, &max_id, &total_depth, err)))
		return rc;
	g.layout = &l;
	fg_build(&g, stacks, n, names, max_id, total_depth);
	g.lv = pl_xmalloc(((size_t)g.max_depth + 1) * sizeof(*g.lv));
	if (g.cum[n] != 0) {
		fg_walk(&g, fg_count_level);
		fg_walk(&g, fg_emit_box);
	}
	*levels = g.levels;
	fg_release(&g);
	return PL_OK;
}
