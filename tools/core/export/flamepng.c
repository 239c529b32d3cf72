/* flamepng.c - PNG flame graphs and sandwich pictures (see flamepng.h).
 *
 * How it works: a picture is a cairo ARGB image.  The background gradient
 * and the frames' rectangles are cairo paths; each frame comes from the
 * SVG's layout walk (pl_flamegraph_layout) and is placed at its level's y
 * by a `struct band` (where a reference level sits and which way levels
 * grow).  Labels are queued while frames are drawn and blitted from the
 * glyph atlas into the image's pixels afterwards (a glyph is a few dozen
 * pixel blends, far cheaper than a cairo mask each); then cairo writes
 * the PNG into a memory buffer.
 *
 * A timeline is a bar chart on the same canvas: a bar per time bucket,
 * a function's part drawn over it, axis labels from the same atlas.
 *
 * Text is UTF-8, decoded strictly: each code point is one cell of the
 * monospaced atlas, drawn with its glyph, or a box when the atlas lacks
 * it; each invalid subpart (a stray byte, an overlong form, a cut
 * sequence) is one U+FFFD, so nothing is dropped and two names that
 * differ only there do not look alike.  Widths and ".." cuts count
 * cells, so a cut never splits a sequence.
 */
#include "flamepng.h"
#include "font_atlas.h"

#include <cairo.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define PNG_XPAD 10
#define PNG_TOP 36          /* title */
#define PNG_SUB 18          /* subtitle */
#define PNG_BOTTOM 10
#define PNG_FH 16           /* px per level, as the SVG's default */
#define PNG_MAX_LABEL 256   /* cells of one label */

/* ------------------------------------------------------------ cairo */

/* libcairo is not linked: it is dlopen()ed on the first picture (or by
 * pl_flamepng_preload(), which the server calls before its workers fork
 * and are confined), and called through this table.  Linked, it and its
 * ~17 dependencies (pixman, fontconfig, freetype, X11, xcb, ...) were
 * mapped and relocated in every process: 0.8 ms of every CLI call, most
 * of which never draw.  <cairo.h> still gives the types and constants. */
#define LIBCAIRO_SONAME "libcairo.so.2"

static struct {
	cairo_t *(*create)(cairo_surface_t *target);
	void (*destroy)(cairo_t *cr);
	void (*fill)(cairo_t *cr);
	cairo_surface_t *(*image_surface_create)(cairo_format_t format, int width, int height);
	unsigned char *(*image_surface_get_data)(cairo_surface_t *surface);
	int (*image_surface_get_stride)(cairo_surface_t *surface);
	void (*paint)(cairo_t *cr);
	void (*pattern_add_color_stop_rgb)(cairo_pattern_t *pattern, double offset, double red, double green, double blue);
	cairo_pattern_t *(*pattern_create_linear)(double x0, double y0, double x1, double y1);
	void (*pattern_destroy)(cairo_pattern_t *pattern);
	void (*rectangle)(cairo_t *cr, double x, double y, double width, double height);
	void (*set_source)(cairo_t *cr, cairo_pattern_t *source);
	void (*set_source_rgb)(cairo_t *cr, double red, double green, double blue);
	const char *(*status_to_string)(cairo_status_t status);
	void (*surface_destroy)(cairo_surface_t *surface);
	void (*surface_flush)(cairo_surface_t *surface);
	void (*surface_mark_dirty)(cairo_surface_t *surface);
	cairo_status_t (*surface_status)(cairo_surface_t *surface);
	cairo_status_t (*surface_write_to_png_stream)(cairo_surface_t *surface, cairo_write_func_t write_func, void *closure);
} cx;

static pthread_once_t cairo_once = PTHREAD_ONCE_INIT;
static bool cairo_loaded;
static char cairo_error[400];  /* why not, when !cairo_loaded */

static void load_cairo(void)
{
	const struct pl_dl_sym syms[] = {
		{"cairo_create", &cx.create},
		{"cairo_destroy", &cx.destroy},
		{"cairo_fill", &cx.fill},
		{"cairo_image_surface_create", &cx.image_surface_create},
		{"cairo_image_surface_get_data", &cx.image_surface_get_data},
		{"cairo_image_surface_get_stride", &cx.image_surface_get_stride},
		{"cairo_paint", &cx.paint},
		{"cairo_pattern_add_color_stop_rgb", &cx.pattern_add_color_stop_rgb},
		{"cairo_pattern_create_linear", &cx.pattern_create_linear},
		{"cairo_pattern_destroy", &cx.pattern_destroy},
		{"cairo_rectangle", &cx.rectangle},
		{"cairo_set_source", &cx.set_source},
		{"cairo_set_source_rgb", &cx.set_source_rgb},
		{"cairo_status_to_string", &cx.status_to_string},
		{"cairo_surface_destroy", &cx.surface_destroy},
		{"cairo_surface_flush", &cx.surface_flush},
		{"cairo_surface_mark_dirty", &cx.surface_mark_dirty},
		{"cairo_surface_status", &cx.surface_status},
		{"cairo_surface_write_to_png_stream", &cx.surface_write_to_png_stream},
	};

	cairo_loaded = pl_dl_load(LIBCAIRO_SONAME, syms, PL_ARRAY_LEN(syms), cairo_error,
				  sizeof(cairo_error)) != NULL;
}

bool pl_flamepng_preload(void)
{
	pthread_once(&cairo_once, load_cairo);
	return cairo_loaded;
}

static enum pl_err cairo_ready(struct pl_error *err)
{
	if (pl_flamepng_preload())
		return PL_OK;
	return pl_fail(err, PL_ERR_UNSUPPORTED, "install libcairo2 (apt-get install libcairo2), or export svg",
		       "PNG pictures need libcairo, which cannot be loaded: %s", cairo_error);
}

/* A label is glyph indices of the atlas (font_atlas.h), one a cell. */
struct label {
	double x;
	int baseline;
	const struct pl_font *font;
	uint8_t rgb[3];
	uint16_t n;
	uint16_t glyph[PNG_MAX_LABEL];
};

/* Where the levels of one layout go. */
struct band {
	int y_ref;           /* top of the frame at level `ref` */
	uint32_t ref;
	int dir;             /* -1: deeper levels higher up; +1: lower down */
	uint32_t min, max;   /* levels drawn */
};

struct png {
	cairo_surface_t *surface;
	cairo_t *cr;
	uint32_t width, height;
	struct label *labels;
	size_t nlabels, labels_cap;
	struct band band;
	uint32_t cut_deepest;  /* deepest level not drawn */
	uint64_t frames;
};

/* ------------------------------------------------------------- text */

/* The code point of the UTF-8 sequence at s (*len bytes), or -1 for an
 * invalid one, of which *len is the maximal subpart (Unicode's "U+FFFD
 * substitution of maximal subparts"): an overlong form, a surrogate, a
 * code point past U+10FFFF, a stray continuation byte or a cut sequence
 * is invalid, each subpart one replacement character. */
static long utf8_decode(const unsigned char *s, size_t *len)
{
	unsigned need, cp;
	unsigned char lo = 0x80, hi = 0xbf;

	*len = 1;
	if (s[0] < 0x80)
		return s[0];
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		need = 1, cp = s[0] & 0x1f;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		need = 2, cp = s[0] & 0x0f, lo = s[0] == 0xe0 ? 0xa0 : 0x80, hi = s[0] == 0xed ? 0x9f : 0xbf;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		need = 3, cp = s[0] & 0x07, lo = s[0] == 0xf0 ? 0x90 : 0x80, hi = s[0] == 0xf4 ? 0x8f : 0xbf;
	else
		return -1;
	for (unsigned k = 1; k <= need; k++) {
		if (s[k] < lo || s[k] > hi)
			return -1;   /* s[k] is not part of it (a NUL ends it too) */
		cp = cp << 6 | (s[k] & 0x3f);
		*len = k + 1;
		lo = 0x80, hi = 0xbf;
	}
	return cp;
}

/* The atlas glyph of a code point: its own, U+FFFD's for an invalid
 * sequence (-1), the box for one the atlas lacks (controls included). */
static uint16_t glyph_of(long cp)
{
	size_t lo = 0, hi = pl_font_nglyphs;

	if (cp < 0)
		return (uint16_t)pl_font_replacement;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (pl_font_code_points[mid] < (unsigned long)cp)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < pl_font_nglyphs && pl_font_code_points[lo] == (unsigned long)cp
		? (uint16_t)lo : (uint16_t)pl_font_nglyphs;
}

/* `s` (UTF-8) as glyphs of at most max_cells cells, one a code point or
 * invalid subpart: a cut ends in "..", nothing when fewer than 3 cells
 * fit (the SVG's rule).  Returns the cells. */
static uint16_t fit_text(uint16_t *out, const char *s, long max_cells)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n = 0, len;

	if (max_cells < 3)
		return 0;
	if (max_cells > PNG_MAX_LABEL)
		max_cells = PNG_MAX_LABEL;
	while (*p && n < (size_t)max_cells) {
		out[n++] = glyph_of(utf8_decode(p, &len));
		p += len;
	}
	if (*p) {   /* more cells than fit */
		n = (size_t)max_cells - 2;
		out[n++] = glyph_of('.');
		out[n++] = glyph_of('.');
	}
	return (uint16_t)n;
}

static void queue_label(struct png *g, double x, int baseline, const struct pl_font *f,
			const uint8_t rgb[3], const uint16_t *glyphs, uint16_t n)
{
	struct label *l;

	if (!n)
		return;
	PL_GROW(g->labels, g->labels_cap, g->nlabels + 1);
	l = &g->labels[g->nlabels++];
	l->x = x;
	l->baseline = baseline;
	l->font = f;
	memcpy(l->rgb, rgb, 3);
	l->n = n;
	memcpy(l->glyph, glyphs, n * sizeof(*glyphs));
}

/* A label of text that fits the picture's width, from x. */
static void queue_text(struct png *g, double x, int baseline, const struct pl_font *f,
		       const uint8_t rgb[3], const char *text)
{
	uint16_t glyphs[PNG_MAX_LABEL];

	queue_label(g, x, baseline, f, rgb, glyphs,
		    fit_text(glyphs, text, (long)((g->width - x - PNG_XPAD) / f->advance)));
}

static void queue_centered(struct png *g, int baseline, const struct pl_font *f,
			   const uint8_t rgb[3], const char *text)
{
	uint16_t glyphs[PNG_MAX_LABEL];
	uint16_t n = fit_text(glyphs, text, (long)((g->width - 2 * PNG_XPAD) / f->advance));

	queue_label(g, (g->width - n * f->advance) / 2.0, baseline, f, rgb, glyphs, n);
}

static unsigned hexval(char c)
{
	return c <= '9' ? (unsigned)(c - '0') : (unsigned)(c - 'a' + 10);
}

/* Blend one glyph's coverage into the pixels (ARGB32, opaque). */
static void blit_glyph(unsigned char *data, int stride, uint32_t w, uint32_t h,
		       const struct pl_font *f, uint16_t glyph, int x0, int y0, const uint8_t rgb[3])
{
	const struct pl_glyph *gl = &f->glyphs[glyph];
	const char *cell = f->cells + gl->offset;

	for (unsigned y = 0; y < gl->rows; y++) {
		int py = y0 + (int)(gl->top + y);
		if (py < 0 || (uint32_t)py >= h)
			continue;
		for (unsigned x = 0; x < f->cell_w; x++) {
			int px = x0 + (int)x;
			unsigned a = hexval(cell[y * f->cell_w + x]) * 17;
			uint32_t *d;
			unsigned ch[3];
			if (!a || px < 0 || (uint32_t)px >= w)
				continue;
			d = (uint32_t *)(data + (size_t)py * stride) + px;
			ch[0] = *d >> 16 & 0xff, ch[1] = *d >> 8 & 0xff, ch[2] = *d & 0xff;
			for (int k = 0; k < 3; k++)
				ch[k] = (ch[k] * (255 - a) + rgb[k] * a + 127) / 255;
			*d = 0xff000000u | ch[0] << 16 | ch[1] << 8 | ch[2];
		}
	}
}

static void draw_labels(struct png *g)
{
	unsigned char *data;
	int stride;

	cx.surface_flush(g->surface);
	data = cx.image_surface_get_data(g->surface);
	stride = cx.image_surface_get_stride(g->surface);
	for (size_t i = 0; i < g->nlabels; i++) {
		const struct label *l = &g->labels[i];
		for (size_t k = 0; k < l->n; k++)
			blit_glyph(data, stride, g->width, g->height, l->font, l->glyph[k],
				   (int)lround(l->x + k * l->font->advance) - 1,
				   l->baseline - (int)l->font->baseline, l->rgb);
	}
	cx.surface_mark_dirty(g->surface);
}

/* ------------------------------------------------------------- frames */

static void draw_box(void *arg, const struct pl_flame_box *b)
{
	static const uint8_t black[3] = {0, 0, 0};
	struct png *g = arg;
	const struct band *bd = &g->band;
	uint16_t glyphs[PNG_MAX_LABEL];
	int y;

	if (b->level < bd->min)
		return;
	if (b->level > bd->max) {
		if (b->level > g->cut_deepest)
			g->cut_deepest = b->level;
		return;
	}
	y = bd->y_ref + bd->dir * (int)(b->level - bd->ref) * PNG_FH;
	cx.set_source_rgb(g->cr, b->rgb[0] / 255.0, b->rgb[1] / 255.0, b->rgb[2] / 255.0);
	cx.rectangle(g->cr, b->x0, y, b->x1 - b->x0, PNG_FH - 1);
	cx.fill(g->cr);
	g->frames++;
	queue_label(g, b->x0 + 3, y + 12, &pl_font12, black, glyphs,
		    fit_text(glyphs, b->name, (long)floor((b->x1 - b->x0 - 6) / pl_font12.advance)));
}

/* ------------------------------------------------------------ picture */

static enum pl_err png_start(struct png *g, const struct pl_png_opts *o, uint32_t height,
			     struct pl_error *err)
{
	static const uint8_t black[3] = {0, 0, 0}, gray[3] = {0x60, 0x60, 0x60};
	cairo_pattern_t *bg;
	enum pl_err rc;

	memset(g, 0, sizeof(*g));
	if ((rc = cairo_ready(err)))
		return rc;
	g->width = o->width;
	g->height = height;
	g->surface = cx.image_surface_create(CAIRO_FORMAT_RGB24, (int)g->width, (int)height);
	if (cx.surface_status(g->surface) != CAIRO_STATUS_SUCCESS) {
		cx.surface_destroy(g->surface);
		return pl_fail(err, PL_ERR_LIMIT, "use a smaller width",
			       "cannot make a %ux%u picture", g->width, height);
	}
	g->cr = cx.create(g->surface);
	bg = cx.pattern_create_linear(0, 0, 0, height);
	cx.pattern_add_color_stop_rgb(bg, 0.05, 0xee / 255.0, 0xee / 255.0, 0xee / 255.0);
	cx.pattern_add_color_stop_rgb(bg, 0.95, 0xee / 255.0, 0xee / 255.0, 0xb0 / 255.0);
	cx.set_source(g->cr, bg);
	cx.paint(g->cr);
	cx.pattern_destroy(bg);
	queue_centered(g, 24, &pl_font16, black, o->title ? o->title : "Flame Graph");
	if (o->subtitle)
		queue_centered(g, 24 + PNG_SUB, &pl_font12, gray, o->subtitle);
	return PL_OK;
}

static cairo_status_t png_write(void *closure, const unsigned char *data, unsigned int n)
{
	pl_buf_add(closure, data, n);
	return CAIRO_STATUS_SUCCESS;
}

static enum pl_err png_finish(struct png *g, struct pl_buf *out, struct pl_png_stats *st,
			      uint32_t levels, struct pl_error *err)
{
	cairo_status_t cs;

	draw_labels(g);
	cs = cx.surface_write_to_png_stream(g->surface, png_write, out);
	st->width = g->width;
	st->height = g->height;
	st->levels = levels;
	st->frames = g->frames;
	cx.destroy(g->cr);
	cx.surface_destroy(g->surface);
	free(g->labels);
	if (cs != CAIRO_STATUS_SUCCESS)
		return pl_fail(err, PL_ERR_INTERNAL, NULL, "cairo cannot write the PNG: %s",
			       cx.status_to_string(cs));
	return PL_OK;
}

static enum pl_err check_opts(struct pl_png_opts *o, const struct pl_png_opts *in,
			      struct pl_error *err)
{
	static const struct pl_png_opts none;

	*o = in ? *in : none;
	if (!o->width)
		o->width = 1200;
	if (!o->max_height)
		o->max_height = 1600;
	if (o->width < 200 || o->width > 4000)
		return pl_fail(err, PL_ERR_USAGE, "use a width from 200 to 4000",
			       "picture width '%u' is out of range", o->width);
	if (o->max_height < 200 || o->max_height > 8000)
		return pl_fail(err, PL_ERR_USAGE, "use a height from 200 to 8000",
			       "picture height '%u' is out of range", o->max_height);
	return PL_OK;
}

/* The layout options that put frames where the SVG of this width does. */
static struct pl_flame_opts layout_opts(const struct pl_png_opts *o)
{
	struct pl_flame_opts fo = {0};

	fo.width = o->width;
	fo.unit = o->unit;
	fo.frame_height = PNG_FH;
	return fo;
}

/* A note of the cut levels, as a label at the top left. */
static void note_cut(struct png *g, uint32_t cut, int baseline)
{
	static const uint8_t red[3] = {0xb0, 0, 0};
	char note[96];

	if (!cut)
		return;
	snprintf(note, sizeof(note), "%u deeper level%s not drawn", cut, cut == 1 ? "" : "s");
	queue_text(g, PNG_XPAD, baseline, &pl_font12, red, note);
}

enum pl_err pl_flamegraph_png(struct pl_buf *out, const struct pl_flame_stack *stacks, size_t n,
			      const char *const *names, size_t nnames,
			      const struct pl_png_opts *in, struct pl_png_stats *st,
			      struct pl_error *err)
{
	struct pl_png_opts o;
	struct pl_flame_opts fo;
	struct png g;
	uint32_t levels, shown, head, height;
	enum pl_err rc;

	memset(st, 0, sizeof(*st));
	if ((rc = check_opts(&o, in, err)))
		return rc;
	fo = layout_opts(&o);
	/* A first walk counts the levels (the layout is cheap next to drawing). */
	{
		struct png probe = {0};
		probe.band = (struct band){0, 0, 1, 1, 0};  /* draws nothing: min > max */
		if ((rc = pl_flamegraph_layout(stacks, n, names, nnames, &fo, draw_box, &probe,
					       &levels, err)))
			return rc;
	}
	head = PNG_TOP + (o.subtitle ? PNG_SUB : 0);
	shown = levels ? levels : 3;
	if (head + PNG_BOTTOM + shown * PNG_FH > o.max_height)
		shown = (o.max_height - head - PNG_BOTTOM) / PNG_FH;
	height = head + PNG_BOTTOM + shown * PNG_FH;
	if ((rc = png_start(&g, &o, height, err)))
		return rc;
	g.band = (struct band){(int)(height - PNG_BOTTOM - PNG_FH), 0, -1, 0, shown - 1};
	if (levels)
		rc = pl_flamegraph_layout(stacks, n, names, nnames, &fo, draw_box, &g, &levels, err);
	else
		queue_centered(&g, (int)(height - PNG_BOTTOM - PNG_FH), &pl_font12,
			       (const uint8_t[3]){0, 0, 0}, "no samples");
	st->levels_cut = levels > shown ? levels - shown : 0;
	note_cut(&g, st->levels_cut, 11);
	if (rc) {
		cx.destroy(g.cr);
		cx.surface_destroy(g.surface);
		free(g.labels);
		return rc;
	}
	return png_finish(&g, out, st, levels > shown ? shown : levels, err);
}

enum pl_err pl_sandwich_png(struct pl_buf *out, const struct pl_flame_stack *callers, size_t ncallers,
			    const struct pl_flame_stack *callees, size_t ncallees,
			    const char *const *names, size_t nnames,
			    const struct pl_png_opts *in, struct pl_png_stats *st,
			    struct pl_error *err)
{
	struct pl_png_opts o;
	struct pl_flame_opts fo;
	struct png g, probe = {0};
	uint32_t up, down, up_shown, down_shown, head, height, room, y_mid;
	enum pl_err rc;

	memset(st, 0, sizeof(*st));
	if ((rc = check_opts(&o, in, err)))
		return rc;
	fo = layout_opts(&o);
	probe.band = (struct band){0, 0, 1, 1, 0};
	if ((rc = pl_flamegraph_layout(callers, ncallers, names, nnames, &fo, draw_box, &probe, &up, err)) ||
	    (rc = pl_flamegraph_layout(callees, ncallees, names, nnames, &fo, draw_box, &probe, &down, err)))
		return rc;
	/* Levels past "all" and the function itself: callers above, callees below. */
	up = up > 2 ? up - 2 : 0;
	down = down > 2 ? down - 2 : 0;
	head = PNG_TOP + (o.subtitle ? PNG_SUB : 0) + PNG_SUB;
	room = (o.max_height - head - PNG_BOTTOM) / PNG_FH - 1;
	up_shown = up, down_shown = down;
	while (up_shown + down_shown > room) {
		if (up_shown >= down_shown)
			up_shown--;
		else
			down_shown--;
	}
	height = head + PNG_BOTTOM + (up_shown + 1 + down_shown) * PNG_FH;
	if ((rc = png_start(&g, &o, height, err)))
		return rc;
	y_mid = head + up_shown * PNG_FH;
	st->levels_cut = up - up_shown + down - down_shown;
	{
		char note[128];
		int k = snprintf(note, sizeof(note), "%s, %s", up ? "callers above" : "no callers",
				 down ? "callees below" : "no callees");
		if (st->levels_cut)
			snprintf(note + k, sizeof(note) - (size_t)k, "; %u deeper level%s not drawn",
				 st->levels_cut, st->levels_cut == 1 ? "" : "s");
		queue_text(&g, PNG_XPAD, (int)head - 4, &pl_font12, (const uint8_t[3]){0x60, 0x60, 0x60}, note);
	}
	g.band = (struct band){(int)y_mid, 1, -1, 1, 1 + up_shown};
	rc = pl_flamegraph_layout(callers, ncallers, names, nnames, &fo, draw_box, &g, &up, err);
	g.band = (struct band){(int)y_mid, 1, 1, 2, 1 + down_shown};
	if (!rc)
		rc = pl_flamegraph_layout(callees, ncallees, names, nnames, &fo, draw_box, &g, &down, err);
	if (rc) {
		cx.destroy(g.cr);
		cx.surface_destroy(g.surface);
		free(g.labels);
		return rc;
	}
	return png_finish(&g, out, st, up_shown + 1 + down_shown, err);
}

/* ------------------------------------------------------------ timeline */

#define TL_LEFT 70          /* room for the y axis' labels */
#define TL_AXIS 28          /* room below for the x axis' labels */

static void tl_bar(struct png *g, double x, double w, int base, double h, const double rgb[3])
{
	if (h <= 0)
		return;
	cx.set_source_rgb(g->cr, rgb[0], rgb[1], rgb[2]);
	cx.rectangle(g->cr, x, base - h, w > 2 ? w - 1 : w, h);
	cx.fill(g->cr);
	g->frames++;
}

/* Tick labels along the x axis, about every 120 px, in seconds. */
static void tl_x_labels(struct png *g, size_t n, double start_s, double bucket_s, double left, double bw,
			int y)
{
	static const uint8_t gray[3] = {0x40, 0x40, 0x40};
	size_t every = (size_t)(120 / bw) + 1;
	char label[32];

	for (size_t i = 0; i <= n; i += every) {
		snprintf(label, sizeof(label), "%.4g s", start_s + (double)i * bucket_s);
		queue_text(g, left + (double)i * bw, y, &pl_font12, gray, label);
	}
}

enum pl_err pl_timeline_png(struct pl_buf *out, const uint64_t *all, const uint64_t *part, size_t n,
			    double start_s, double bucket_s, const struct pl_png_opts *in,
			    struct pl_png_stats *st, struct pl_error *err)
{
	static const double light[3] = {0.95, 0.70, 0.35}, strong[3] = {0.80, 0.20, 0.10};
	static const uint8_t gray[3] = {0x40, 0x40, 0x40};
	struct pl_png_opts o;
	struct png g;
	uint64_t max = 1;
	double left = TL_LEFT, plot_w, bw;
	int top, base;
	char label[32];
	enum pl_err rc;

	struct pl_png_opts want = in ? *in : (struct pl_png_opts){0};

	memset(st, 0, sizeof(*st));
	if (!want.max_height)
		want.max_height = 320;
	if ((rc = check_opts(&o, &want, err)))
		return rc;
	for (size_t i = 0; i < n; i++)
		if (all[i] > max)
			max = all[i];
	if ((rc = png_start(&g, &o, o.max_height, err)))
		return rc;
	top = PNG_TOP + (o.subtitle ? PNG_SUB : 0) + 8;
	base = (int)o.max_height - TL_AXIS;
	plot_w = o.width - left - PNG_XPAD;
	bw = n ? plot_w / (double)n : plot_w;
	for (size_t i = 0; i < n; i++) {
		double x = left + (double)i * bw;
		tl_bar(&g, x, bw, base, (double)all[i] * (base - top) / (double)max, light);
		if (part)
			tl_bar(&g, x, bw, base, (double)part[i] * (base - top) / (double)max, strong);
	}
	cx.set_source_rgb(g.cr, 0.25, 0.25, 0.25);
	cx.rectangle(g.cr, left, base, plot_w, 1);
	cx.fill(g.cr);
	snprintf(label, sizeof(label), "%llu", (unsigned long long)max);
	queue_text(&g, PNG_XPAD, top + 10, &pl_font12, gray, label);
	queue_text(&g, PNG_XPAD, base, &pl_font12, gray, "0");
	tl_x_labels(&g, n, start_s, bucket_s, left, bw, base + 16);
	return png_finish(&g, out, st, (uint32_t)n, err);
}
