"""png_text_oracle.py - the text of PNG flame graphs, pixel by pixel, against
the committed glyph atlas.  Run by test_png_text.sh: png_text_oracle.py
PERFLENS WORK REPO.

A folded profile of one stack whose frames are names in Latin-1, Latin
Extended-A, Greek, Cyrillic, punctuation and arrows, a name with invalid
UTF-8 (stray bytes, a cut sequence), one with code points the atlas lacks
(CJK, a tab) and one 300 Cyrillic letters long is analyzed and exported as
a PNG twice (same bytes both times).  Every frame is the whole width, so
each name's label starts at the layout's left edge (flamepng.c: frames from
x 10, labels 3 px in, baseline 12 px into the 16 px level).

The oracle is written here, not taken from the renderer: Python's own UTF-8
decoder (errors="replace", which substitutes maximal subparts as Unicode
recommends) gives the code points; the atlas (font_atlas.c, parsed here)
gives each one's coverage, U+FFFD's for an invalid subpart and the box for
a code point it lacks; the cut rule is the SVG's (cells that fit
floor((width - 6) / advance), the last two "..").  The label's pixels are
then blended here onto the frame's own fill and compared with the decoded
PNG (png_read.py) exactly, cell by cell: a '?' drawn instead, a byte
counted as a cell, a dropped byte or a sequence cut in two all differ.
"""
import math
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from png_read import png_read  # noqa: E402

PERFLENS, WORK, REPO = sys.argv[1:4]
fails = 0

NAMES = [
    "café_Ñoño::Größe_¿¡ß±·×".encode(),
    "Łódź_Ćwikła::œuvre_Ŧŧ".encode(),
    "Ωμέγα::λόγος_Ψ".encode(),
    "функция_Привет::Ёж".encode(),
    "a→b ⇒ c “q” ‘s’ – … • ‰ €".encode(),
    b"bad\xff\xfebytes\xe2\x82end\xc0\xafx\xed\xa0\x80y",
    "関数_日本\tz".encode(),
    ("Ж" * 300).encode(),
]
XPAD, FH, BOTTOM, INSET, BASELINE = 10, 16, 10, 3, 12


def check(what, cond, why=""):
    global fails
    if not cond:
        fails += 1
    print(("ok - %s" if cond else "not ok - %s: " + str(why)[:400]) % what, flush=True)
    return cond


def atlas():
    """The 12 px font of font_atlas.c: code points, metrics, glyphs, cells."""
    src = open(os.path.join(REPO, "tools/core/export/font_atlas.c")).read()
    cps = [int(v, 16) for v in re.search(r"pl_font_code_points\[\] = \{(.*?)\};", src, re.S)
           .group(1).replace(",", " ").split()]
    cells = "".join(re.findall(r'"([0-9a-f]*)"', re.search(r"cells12\[\] =(.*?);\n", src, re.S).group(1)))
    glyphs = [tuple(map(int, g)) for g in re.findall(
        r"\{(\d+), (\d+), (\d+)\}", re.search(r"glyphs12\[\] = \{(.*?)\};", src, re.S).group(1))]
    m = re.search(r"pl_font12 = \{12, ([0-9.]+), (\d+), (\d+), (\d+),", src)
    font = {"adv": float(m.group(1)), "w": int(m.group(2)), "h": int(m.group(3)), "base": int(m.group(4))}
    assert len(glyphs) == len(cps) + 1, "glyph table is not one a code point plus the box"
    return {cp: i for i, cp in enumerate(cps)}, len(cps), glyphs, cells, font


INDEX, BOX, GLYPHS, CELLS, FONT = atlas()


def expected_glyphs(name, frame_width):
    text = name.decode("utf-8", errors="replace")
    fit = int(math.floor((frame_width - 6) / FONT["adv"]))
    if fit < 3:
        return []
    cps = [ord(c) for c in text]
    if len(cps) > fit:
        cps = cps[:fit - 2] + [ord("."), ord(".")]
    return [INDEX.get(cp, BOX) for cp in cps]


def blend(canvas, glyph, x0, y0):
    off, top, rows = GLYPHS[glyph]
    w = FONT["w"]
    for r in range(rows):
        for c in range(w):
            a = int(CELLS[off + r * w + c], 16) * 17
            if a:
                y, x = y0 + top + r, x0 + c
                canvas[(x, y)] = tuple((v * (255 - a) + 127) // 255 for v in canvas[(x, y)])


def check_label(rows, name, level, height, width):
    y = height - BOTTOM - FH - level * FH
    glyphs = expected_glyphs(name, width - 2 * XPAD)
    y0 = y + BASELINE - FONT["base"]
    xs = [int(math.floor(XPAD + INSET + k * FONT["adv"] + 0.5)) - 1 for k in range(len(glyphs))]
    x_end = (xs[-1] if xs else XPAD) + FONT["w"]
    canvas = {}
    for yy in range(y0, y0 + FONT["h"]):
        for xx in range(XPAD + 1, min(x_end, width)):
            canvas[(xx, yy)] = rows[yy][XPAD + 1]   # the frame's fill (or the gap) left of the text
    for k, g in enumerate(glyphs):
        blend(canvas, g, xs[k], y0)
    bad = [(p, canvas[p], rows[p[1]][p[0]]) for p in sorted(canvas) if rows[p[1]][p[0]] != canvas[p]]
    inked = sum(1 for g in glyphs if GLYPHS[g][2])
    shown = name.decode("utf-8", errors="backslashreplace")[:40]
    check("png text: %r drawn as %d cells (%d inked, %d box, %d U+FFFD), every pixel as the atlas says"
          % (shown, len(glyphs), inked, glyphs.count(BOX), glyphs.count(INDEX[0xfffd])),
          not bad, "%d pixels differ, first %s" % (len(bad), bad[:3]))
    return glyphs


def run(*argv):
    return subprocess.run([PERFLENS] + list(argv), capture_output=True, timeout=120)


def export_png(art, folded):
    a = run("analyze", "--input", folded, "--artifact-root", art, "--allowed-root", WORK)
    if a.returncode:
        return None, a.stderr.decode(errors="replace")
    aid = re.search(rb'"analysis_id": "([^"]+)"', a.stdout).group(1).decode()
    e = run("export", "--analysis-id", aid, "--format", "png", "--artifact-root", art)
    if e.returncode:
        return None, e.stderr.decode(errors="replace")
    path = re.search(rb'"path": "([^"]+)"', e.stdout).group(1).decode()
    return open(path, "rb").read(), path


def main():
    folded = os.path.join(WORK, "text.folded")
    with open(folded, "wb") as f:
        f.write(b";".join(NAMES) + b" 10\n")
    first, path = export_png(os.path.join(WORK, "art1"), folded)
    if not check("png text: analyzed and exported as PNG", first is not None, path):
        return
    again, _ = export_png(os.path.join(WORK, "art2"), folded)
    check("png text: the same profile gives the same %d bytes again" % len(first), again == first)
    width, height, rows = png_read(first)
    print("# png text: %s (%dx%d)" % (path, width, height))
    cut = []
    for level, name in enumerate(NAMES, 1):
        cut = check_label(rows, name, level, height, width)
    check("png text: the 300-letter name is cut at %d cells, '..' last, not at a byte count" % len(cut),
          len(cut) == int((width - 2 * XPAD - 6) // FONT["adv"]) and cut[-2:] == [INDEX[0x2e]] * 2
          and cut[0] == INDEX[0x416])
    check("png text: the box, U+FFFD and '?' are three different glyphs",
          len({CELLS[GLYPHS[g][0]:GLYPHS[g][0] + GLYPHS[g][2] * FONT["w"]]
               for g in (BOX, INDEX[0xfffd], INDEX[0x3f])}) == 3)


main()
sys.exit(1 if fails else 0)
