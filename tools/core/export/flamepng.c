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
 */
#include "flamepng.h"
#include "font_atlas.h"

#include <cairo.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define PNG_XPAD 10
#define PNG_TOP 36          /* title */
#define PNG_SUB 18          /* subtitle */
#define PNG_BOTTOM 10
#define PNG_FH 16           /* px per level, as the SVG's default */
#define PNG_MAX_LABEL 256   /* characters of one label */

struct label {
	double x;
	int baseline;
	const struct pl_font *font;
	uint8_t rgb[3];
	char text[PNG_MAX_LABEL + 1];
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

/* `s` as printable ASCII: another character is '?', a cut ends in "..",
 * nothing when fewer than 3 characters fit (the SVG's rule). */
static void fit_text(char *out, const char *s, long max_chars)
{
	size_t n = 0, chars = 0;
	const unsigned char *p = (const unsigned char *)s;

	out[0] = '\0';
	if (max_chars < 3)
		return;
	if (max_chars > PNG_MAX_LABEL)
		max_chars = PNG_MAX_LABEL;
	for (size_t i = 0; p[i]; i++)
		if ((p[i] & 0xc0) != 0x80)
			chars++;
	for (size_t i = 0; p[i] && n < (size_t)max_chars; i++) {
		if ((p[i] & 0xc0) == 0x80)
			continue;   /* the rest of a character shown as '?' */
		out[n++] = p[i] >= 0x20 && p[i] < 0x7f ? (char)p[i] : '?';
	}
	if (chars > (size_t)max_chars)
		n = (size_t)max_chars - 2, out[n++] = '.', out[n++] = '.';
	out[n] = '\0';
}

static void queue_label(struct png *g, double x, int baseline, const struct pl_font *f,
			const uint8_t rgb[3], const char *text)
{
	struct label *l;

	if (!text[0])
		return;
	PL_GROW(g->labels, g->labels_cap, g->nlabels + 1);
	l = &g->labels[g->nlabels++];
	l->x = x;
	l->baseline = baseline;
	l->font = f;
	memcpy(l->rgb, rgb, 3);
	snprintf(l->text, sizeof(l->text), "%s", text);
}

static void queue_centered(struct png *g, int baseline, const struct pl_font *f,
			   const uint8_t rgb[3], const char *text)
{
	char fitted[PNG_MAX_LABEL + 1];
	long max = (long)((g->width - 2 * PNG_XPAD) / f->advance);

	fit_text(fitted, text, max);
	queue_label(g, (g->width - strlen(fitted) * f->advance) / 2.0, baseline, f, rgb, fitted);
}

static unsigned hexval(char c)
{
	return c <= '9' ? (unsigned)(c - '0') : (unsigned)(c - 'a' + 10);
}

/* Blend one glyph's coverage into the pixels (ARGB32, opaque). */
static void blit_glyph(unsigned char *data, int stride, uint32_t w, uint32_t h,
		       const struct pl_font *f, unsigned char c, int x0, int y0, const uint8_t rgb[3])
{
	const char *cell = f->cells + (size_t)(c - 0x20) * f->cell_w * f->cell_h;

	for (unsigned y = 0; y < f->cell_h; y++) {
		int py = y0 + (int)y;
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

	cairo_surface_flush(g->surface);
	data = cairo_image_surface_get_data(g->surface);
	stride = cairo_image_surface_get_stride(g->surface);
	for (size_t i = 0; i < g->nlabels; i++) {
		const struct label *l = &g->labels[i];
		for (size_t k = 0; l->text[k]; k++)
			blit_glyph(data, stride, g->width, g->height, l->font, (unsigned char)l->text[k],
				   (int)lround(l->x + k * l->font->advance) - 1,
				   l->baseline - (int)l->font->baseline, l->rgb);
	}
	cairo_surface_mark_dirty(g->surface);
}

/* ------------------------------------------------------------- frames */

static void draw_box(void *arg, const struct pl_flame_box *b)
{
	static const uint8_t black[3] = {0, 0, 0};
	struct png *g = arg;
	const struct band *bd = &g->band;
	char fitted[PNG_MAX_LABEL + 1];
	int y;

	if (b->level < bd->min)
		return;
	if (b->level > bd->max) {
		if (b->level > g->cut_deepest)
			g->cut_deepest = b->level;
		return;
	}
	y = bd->y_ref + bd->dir * (int)(b->level - bd->ref) * PNG_FH;
	cairo_set_source_rgb(g->cr, b->rgb[0] / 255.0, b->rgb[1] / 255.0, b->rgb[2] / 255.0);
	cairo_rectangle(g->cr, b->x0, y, b->x1 - b->x0, PNG_FH - 1);
	cairo_fill(g->cr);
	g->frames++;
	fit_text(fitted, b->name, (long)floor((b->x1 - b->x0 - 6) / pl_font12.advance));
	queue_label(g, b->x0 + 3, y + 12, &pl_font12, black, fitted);
}

/* ------------------------------------------------------------ picture */

static enum pl_err png_start(struct png *g, const struct pl_png_opts *o, uint32_t height,
			     struct pl_error *err)
{
	static const uint8_t black[3] = {0, 0, 0}, gray[3] = {0x60, 0x60, 0x60};
	cairo_pattern_t *bg;

	memset(g, 0, sizeof(*g));
	g->width = o->width;
	g->height = height;
	g->surface = cairo_image_surface_create(CAIRO_FORMAT_RGB24, (int)g->width, (int)height);
	if (cairo_surface_status(g->surface) != CAIRO_STATUS_SUCCESS) {
		cairo_surface_destroy(g->surface);
		return pl_fail(err, PL_ERR_LIMIT, "use a smaller width",
			       "cannot make a %ux%u picture", g->width, height);
	}
	g->cr = cairo_create(g->surface);
	bg = cairo_pattern_create_linear(0, 0, 0, height);
	cairo_pattern_add_color_stop_rgb(bg, 0.05, 0xee / 255.0, 0xee / 255.0, 0xee / 255.0);
	cairo_pattern_add_color_stop_rgb(bg, 0.95, 0xee / 255.0, 0xee / 255.0, 0xb0 / 255.0);
	cairo_set_source(g->cr, bg);
	cairo_paint(g->cr);
	cairo_pattern_destroy(bg);
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
	cs = cairo_surface_write_to_png_stream(g->surface, png_write, out);
	st->width = g->width;
	st->height = g->height;
	st->levels = levels;
	st->frames = g->frames;
	cairo_destroy(g->cr);
	cairo_surface_destroy(g->surface);
	free(g->labels);
	if (cs != CAIRO_STATUS_SUCCESS)
		return pl_fail(err, PL_ERR_INTERNAL, NULL, "cairo cannot write the PNG: %s",
			       cairo_status_to_string(cs));
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
	queue_label(g, PNG_XPAD, baseline, &pl_font12, red, note);
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
		cairo_destroy(g.cr);
		cairo_surface_destroy(g.surface);
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
		queue_label(&g, PNG_XPAD, (int)head - 4, &pl_font12, (const uint8_t[3]){0x60, 0x60, 0x60}, note);
	}
	g.band = (struct band){(int)y_mid, 1, -1, 1, 1 + up_shown};
	rc = pl_flamegraph_layout(callers, ncallers, names, nnames, &fo, draw_box, &g, &up, err);
	g.band = (struct band){(int)y_mid, 1, 1, 2, 1 + down_shown};
	if (!rc)
		rc = pl_flamegraph_layout(callees, ncallees, names, nnames, &fo, draw_box, &g, &down, err);
	if (rc) {
		cairo_destroy(g.cr);
		cairo_surface_destroy(g.surface);
		free(g.labels);
		return rc;
	}
	return png_finish(&g, out, st, up_shown + 1 + down_shown, err);
}
