/* font_atlas.h - the glyphs PNG pictures draw their text with: printable
 * ASCII (0x20..0x7e) of a monospaced font at two pixel sizes, as coverage
 * (tools/fontgen/gen-font.c renders them with cairo; font_atlas.c is its output).
 * Glyph c is cell c - 0x20: cell_h rows of cell_w hex digits (coverage
 * 0..15), its origin at x 1 and y baseline; glyphs are `advance` apart.
 */
#ifndef PL_FONT_ATLAS_H
#define PL_FONT_ATLAS_H

struct pl_font {
	unsigned size;          /* pixels */
	double advance;         /* px from one glyph to the next */
	unsigned cell_w, cell_h, baseline;
	const char *cells;      /* 95 cells of cell_w * cell_h hex digits */
};

extern const struct pl_font pl_font12, pl_font16;

#endif
