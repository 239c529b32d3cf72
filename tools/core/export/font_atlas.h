/* font_atlas.h - the glyphs PNG pictures draw their text with: the code
 * points of pl_font_code_points (ASCII, Latin-1, Latin Extended-A, Greek,
 * Cyrillic, punctuation, arrows, U+FFFD) of a monospaced font at two pixel
 * sizes, as coverage, and a box for every other code point
 * (tools/build/fontgen/gen-font.c renders them with cairo; font_atlas.c is its output).
 *
 * Glyph i (of either font) is the code point pl_font_code_points[i]; glyph
 * pl_font_nglyphs is the box.  Its `rows` rows of cell_w hex digits
 * (coverage 0..15) start at cells + offset and are the cell's rows from
 * `top` on (the rows above and below are empty); the cell's origin is at
 * x 1 and y baseline, and glyphs are `advance` apart.
 */
#ifndef PL_FONT_ATLAS_H
#define PL_FONT_ATLAS_H

struct pl_glyph {
	unsigned offset;
	unsigned char top, rows;
};

struct pl_font {
	unsigned size;          /* pixels */
	double advance;         /* px from one glyph to the next */
	unsigned cell_w, cell_h, baseline;
	const struct pl_glyph *glyphs;  /* pl_font_nglyphs + 1 (the box) */
	const char *cells;
};

extern const unsigned pl_font_nglyphs;
extern const unsigned pl_font_code_points[];   /* ascending */
extern const unsigned pl_font_replacement;     /* the glyph of U+FFFD */
extern const struct pl_font pl_font12, pl_font16;

#endif
