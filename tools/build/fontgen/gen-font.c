/* gen-font.c - writes tools/core/export/font_atlas.c: the glyphs of DejaVu
 * Sans Mono (Debian's fonts-dejavu-core) that profile names need - ASCII,
 * Latin-1 Supplement, Latin Extended-A, Greek, Cyrillic, general
 * punctuation, arrows and U+FFFD - rendered by cairo at the pixel sizes the
 * PNG flame graphs use, as 4-bit coverage per pixel, plus a drawn box for
 * the code points left out.
 *
 * Why an atlas and not fonts at run time: every tool call runs in a
 * sandboxed worker that may read only under the allowed roots, so it
 * cannot open font files or fontconfig's configuration; and text drawn
 * from the same committed coverage is byte-identical on every machine,
 * whatever fonts it has.  Run it (make font-atlas) only to change the
 * sizes, the font or the ranges; its output is committed.
 *
 * How it stays small: a glyph keeps only its rows from the first to the
 * last with ink (an empty glyph none), so `_` or `.` cost a row or two,
 * not the whole cell.  A code point the font has no glyph for (cairo's
 * glyph index 0) is left out, so that it is drawn as the box, not as a
 * glyph of another font.
 *
 *   cc tools/build/fontgen/gen-font.c $(pkg-config --cflags --libs cairo) -lm -o gen-font
 *   ./gen-font > tools/core/export/font_atlas.c
 */
#include <cairo.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define FACE "DejaVu Sans Mono"

static const unsigned sizes[] = {12, 16};

/* The code point ranges, inclusive, in ascending order. */
static const unsigned ranges[][2] = {
	{0x20, 0x7e},       /* ASCII */
	{0xa0, 0xff},       /* Latin-1 Supplement */
	{0x100, 0x17f},     /* Latin Extended-A */
	{0x370, 0x3ff},     /* Greek and Coptic */
	{0x400, 0x4ff},     /* Cyrillic */
	{0x2010, 0x205e},   /* General Punctuation: dashes, quotes, bullets, ellipsis */
	{0x20ac, 0x20ac},   /* euro sign */
	{0x2190, 0x21ff},   /* Arrows */
	{0xfffd, 0xfffd},   /* replacement character: drawn for invalid UTF-8 */
};

static unsigned cps[2048], ncps;

struct cell {
	unsigned w, h, base;
	double adv;
	cairo_font_options_t *fo;
};

static void set_font(cairo_t *cr, unsigned size, const cairo_font_options_t *fo)
{
	cairo_select_font_face(cr, FACE, CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_NORMAL);
	cairo_set_font_size(cr, size);
	cairo_set_font_options(cr, fo);
}

static int utf8(unsigned cp, char *out)
{
	if (cp < 0x80)
		return out[0] = (char)cp, out[1] = 0, 1;
	if (cp < 0x800)
		return out[0] = (char)(0xc0 | cp >> 6), out[1] = (char)(0x80 | (cp & 0x3f)), out[2] = 0, 2;
	out[0] = (char)(0xe0 | cp >> 12);
	out[1] = (char)(0x80 | (cp >> 6 & 0x3f));
	out[2] = (char)(0x80 | (cp & 0x3f));
	out[3] = 0;
	return 3;
}

/* Does the font itself have a glyph for cp (not .notdef)? */
static int has_glyph(cairo_t *cr, unsigned cp)
{
	char text[5];
	cairo_glyph_t *glyphs = NULL;
	int n = 0, found;

	utf8(cp, text);
	if (cairo_scaled_font_text_to_glyphs(cairo_get_scaled_font(cr), 0, 0, text, -1, &glyphs, &n,
					     NULL, NULL, NULL) != CAIRO_STATUS_SUCCESS)
		return 0;
	found = n == 1 && glyphs[0].index != 0;
	cairo_glyph_free(glyphs);
	return found;
}

static void collect_code_points(void)
{
	cairo_surface_t *probe = cairo_image_surface_create(CAIRO_FORMAT_A8, 8, 8);
	cairo_t *cr = cairo_create(probe);
	cairo_font_options_t *fo = cairo_font_options_create();

	set_font(cr, 12, fo);
	for (size_t r = 0; r < sizeof(ranges) / sizeof(ranges[0]); r++)
		for (unsigned cp = ranges[r][0]; cp <= ranges[r][1]; cp++)
			if (ncps < sizeof(cps) / sizeof(cps[0]) && (cp < 0x80 || has_glyph(cr, cp)))
				cps[ncps++] = cp;
	cairo_font_options_destroy(fo);
	cairo_destroy(cr);
	cairo_surface_destroy(probe);
}

/* The coverage of one glyph (cp 0: the box) as a fresh A8 surface. */
static cairo_surface_t *render(const struct cell *c, unsigned size, unsigned cp)
{
	cairo_surface_t *s = cairo_image_surface_create(CAIRO_FORMAT_A8, (int)c->w, (int)c->h);
	cairo_t *g = cairo_create(s);

	if (cp) {
		char text[5];
		utf8(cp, text);
		set_font(g, size, c->fo);
		cairo_move_to(g, 1, c->base);
		cairo_show_text(g, text);
	} else {
		/* A hollow box of the digits' height: a code point the atlas
		 * lacks, as fonts draw one they lack. */
		double top = c->base - floor(size * 0.72), right = floor(c->adv);
		cairo_set_line_width(g, 1);
		cairo_rectangle(g, 2.5, top + 0.5, right - 2.0, c->base - top - 1.0);
		cairo_stroke(g);
	}
	cairo_destroy(g);
	cairo_surface_flush(s);
	return s;
}

static unsigned level(const unsigned char *px)
{
	unsigned v = (*px + 8) / 17;
	return v > 15 ? 15 : v;
}

/* Print one glyph's inked rows; *top and *rows say which they are. */
static unsigned print_glyph(const struct cell *c, cairo_surface_t *s, unsigned cp, unsigned *top)
{
	unsigned char *px = cairo_image_surface_get_data(s);
	int stride = cairo_image_surface_get_stride(s);
	unsigned first = c->h, last = 0;

	for (unsigned y = 0; y < c->h; y++)
		for (unsigned x = 0; x < c->w; x++)
			if (level(&px[y * stride + x])) {
				if (y < first)
					first = y;
				last = y;
			}
	*top = first < c->h ? first : 0;
	if (first == c->h)
		return 0;
	if (cp)
		printf("\t/* U+%04X */ \"", cp);
	else
		printf("\t/* box */ \"");
	for (unsigned y = first; y <= last; y++)
		for (unsigned x = 0; x < c->w; x++)
			putchar("0123456789abcdef"[level(&px[y * stride + x])]);
	printf("\"\n");
	return last - first + 1;
}

static struct cell measure(unsigned size, cairo_font_options_t *fo)
{
	cairo_surface_t *probe = cairo_image_surface_create(CAIRO_FORMAT_A8, 8, 8);
	cairo_t *cr = cairo_create(probe);
	cairo_font_extents_t fe;
	cairo_text_extents_t te;
	struct cell c;

	set_font(cr, size, fo);
	cairo_font_extents(cr, &fe);
	cairo_text_extents(cr, "M", &te);
	c.adv = te.x_advance;
	c.w = (unsigned)ceil(c.adv) + 2;
	c.base = (unsigned)ceil(fe.ascent);
	/* Below the baseline by the whole descent plus a row: ceil(ascent +
	 * descent) rounds the ascent up and loses the underscore's rows. */
	c.h = c.base + (unsigned)ceil(fe.descent) + 1;
	c.fo = fo;
	cairo_destroy(cr);
	cairo_surface_destroy(probe);
	return c;
}

static void face(unsigned size)
{
	cairo_font_options_t *fo = cairo_font_options_create();
	struct cell c;
	unsigned *top = calloc(ncps + 1, sizeof(*top)), *rows = calloc(ncps + 1, sizeof(*rows));
	unsigned long off = 0;

	cairo_font_options_set_antialias(fo, CAIRO_ANTIALIAS_GRAY);
	cairo_font_options_set_hint_style(fo, CAIRO_HINT_STYLE_SLIGHT);
	cairo_font_options_set_hint_metrics(fo, CAIRO_HINT_METRICS_OFF);
	c = measure(size, fo);
	printf("static const char cells%u[] =\n", size);
	for (unsigned i = 0; i <= ncps; i++) {
		unsigned cp = i < ncps ? cps[i] : 0;
		cairo_surface_t *s = render(&c, size, cp);
		rows[i] = print_glyph(&c, s, cp, &top[i]);
		cairo_surface_destroy(s);
	}
	printf("\t\"\";\n\nstatic const struct pl_glyph glyphs%u[] = {\n", size);
	for (unsigned i = 0; i <= ncps; i++) {
		printf("\t{%lu, %u, %u},%s", off, top[i], rows[i], i % 4 == 3 || i == ncps ? "\n" : "");
		off += (unsigned long)rows[i] * c.w;
	}
	printf("};\n\nconst struct pl_font pl_font%u = {%u, %.4f, %u, %u, %u, glyphs%u, cells%u};\n\n",
	       size, size, c.adv, c.w, c.h, c.base, size, size);
	free(top);
	free(rows);
	cairo_font_options_destroy(fo);
}

static void print_code_points(void)
{
	unsigned replacement = 0;

	printf("const unsigned pl_font_nglyphs = %u;\n\nconst unsigned pl_font_code_points[] = {", ncps);
	for (unsigned i = 0; i < ncps; i++) {
		printf("%s0x%x,", i % 12 ? " " : "\n\t", cps[i]);
		if (cps[i] == 0xfffd)
			replacement = i;
	}
	printf("\n};\n\nconst unsigned pl_font_replacement = %u;\n\n", replacement);
}

int main(void)
{
	collect_code_points();
	printf("/* font_atlas.c - GENERATED by tools/build/fontgen/gen-font.c (make font-atlas): %u glyphs\n"
	       " * of DejaVu Sans Mono (Bitstream Vera license; fonts-dejavu-core) - ASCII,\n"
	       " * Latin-1, Latin Extended-A, Greek, Cyrillic, punctuation, arrows, U+FFFD -\n"
	       " * and a box, as 4-bit coverage, one hex digit a pixel (see font_atlas.h). */\n"
	       "#include \"font_atlas.h\"\n\n", ncps);
	print_code_points();
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
		face(sizes[i]);
	return 0;
}
