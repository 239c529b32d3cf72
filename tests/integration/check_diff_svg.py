#!/usr/bin/env python3
"""check_diff_svg.py - a differential flame graph against flamegraph.pl's.

Usage: check_diff_svg.py OURS.svg PEER.svg DIFF.txt

PEER.svg is flamegraph.pl run on DIFF.txt, difffolded.pl's output for the
same two folded files.  Both files are parsed with xml.etree (so both must be
well-formed) and each one's frame tree is rebuilt from geometry, as
check_svg.py does: frames stacked in rows by y, the root row at the bottom,
and a frame's parent the frame in the row below whose x-span holds the
middle of the frame.  Each frame is named by its path of names from the
root.  A frame's title gives its count and, for a differential graph, its
change as a share ("; +1.25%"); its rect gives its fill.

Checked, for every frame at least MIN_PX wide in either graph (both tools
leave out frames under 0.1 px, and the peer rounds positions to 0.1 px):
the same paths exist in both, with the same count, the same change and
the same fill; the fills are red where the change is positive, blue where
it is negative and white where it is zero; and the widths agree within
the peer's rounding.  Annotations (_[k] _[j] _[i] _[w]) are stripped from
names as flamegraph.pl strips them from titles.  The peer draws a frame
twice when text order splits its children (a name with a byte below ';',
e.g. a space, next to a sibling that is its prefix); such paths are
compared by their summed count.

flamegraph.pl keys a frame by (name, depth, end): a stack with a second
count of 0 draws zero-wide frames, and one of them with the name and depth
of a real frame that ends where it starts replaces that frame, which is
then not drawn.  A frame only in ours is accepted as that loss when DIFF.txt
has a line with count2 0 whose frame at that depth has that name; such
frames are counted in the ok line.

Prints "ok: ..." or the differences (up to 10); exits 0 on success, 1 on
a failed check, 2 on usage errors.
"""
import re
import sys
import xml.etree.ElementTree as ET

MIN_PX = 0.5
WIDTH_TOL = 0.25
TITLE = re.compile(r"^(.*) \(([\d,]+) [^,]*, ([\d.]+)%(?:; ([+-]?[\d.]+)%)?\)$", re.S)
ANNOTATION = re.compile(r"_\[[kwij]\]$")
RGB = re.compile(r"^rgb\((\d+),(\d+),(\d+)\)$")


def local(tag):
    return tag.rsplit("}", 1)[-1]


def frames_of(path):
    """[(y, x, w, name, count, delta or None, fill)] of every frame."""
    root = ET.parse(path).getroot()
    out = []
    for g in root.iter():
        if local(g.tag) != "g":
            continue
        kids = {local(c.tag): c for c in g}
        if "title" not in kids or "rect" not in kids:
            continue
        m = TITLE.match(kids["title"].text or "")
        if not m:
            raise ValueError("%s: unreadable title %r" % (path, kids["title"].text))
        r = kids["rect"]
        x, y, w = (float(r.get(a)) for a in ("x", "y", "width"))
        name = ANNOTATION.sub("", m.group(1))
        out.append((y, x, w, name, int(m.group(2).replace(",", "")), m.group(4), r.get("fill")))
    return out


def tree(frames):
    """{path tuple: [frames]}; raises when a frame has no parent."""
    rows = {}
    for f in frames:
        rows.setdefault(f[0], []).append(f)
    ys = sorted(rows, reverse=True)
    if len(rows[ys[0]]) != 1:
        raise ValueError("%d frames in the bottom row" % len(rows[ys[0]]))
    root = rows[ys[0]][0]
    path_of = {id(root): ()}
    paths = {(): [root]}
    for below, above in zip(ys, ys[1:]):
        parents = sorted(rows[below], key=lambda f: f[1])
        for f in rows[above]:
            mid = f[1] + f[2] / 2
            cands = [p for p in parents if p[1] - 0.06 <= mid <= p[1] + p[2] + 0.06]
            if not cands:
                raise ValueError("frame %r at x=%g y=%g has no parent" % (f[3], f[1], f[0]))
            p = min(cands, key=lambda p: abs(p[1] + p[2] / 2 - mid))
            path = path_of[id(p)] + (f[3],)
            path_of[id(f)] = path
            paths.setdefault(path, []).append(f)
    return paths


def colour_ok(delta, fill):
    """Red for a change shown with '+', blue with '-', white for 0.00
    (flamegraph.pl's '+' marks any positive change, even one that rounds
    to +0.00%, and a negative one keeps its sign)."""
    m = RGB.match(fill or "")
    if not m or delta is None:
        return False
    r, g, b = (int(v) for v in m.groups())
    if delta.startswith("+"):
        return r == 255 and g == b and g <= 210
    if delta.startswith("-"):
        return b == 255 and r == g and r <= 210
    return (r, g, b) == (255, 255, 255)


def zero_count_frames(diff_path):
    """{(depth, name)} of the frames of DIFF.txt's lines with count2 0."""
    out = set()
    with open(diff_path, "rb") as f:
        for line in f:
            stack, count1, count2 = line.decode("utf-8", "replace").rstrip("\n").rsplit(" ", 2)
            if int(count2) == 0:
                for depth, name in enumerate(stack.split(";"), 1):
                    out.add((depth, ANNOTATION.sub("", name)))
    return out


def main(argv):
    if len(argv) != 4:
        print("usage: check_diff_svg.py OURS.svg PEER.svg DIFF.txt")
        return 2
    try:
        ours, peer = tree(frames_of(argv[1])), tree(frames_of(argv[2]))
        collisions = zero_count_frames(argv[3])
    except (OSError, ET.ParseError, ValueError) as e:
        print("cannot read the graphs: %s" % e)
        return 1
    problems = []
    wide = lambda fs: any(f[2] >= MIN_PX for f in fs)
    compared = red = blue = lost = 0
    for path in sorted(set(ours) | set(peer)):
        o, p = ours.get(path, []), peer.get(path, [])
        if not (wide(o) or wide(p)):
            continue
        if o and not p and (len(path), path[-1]) in collisions:
            lost += 1
            continue
        if not o or not p:
            problems.append("%s only in %s" % (";".join(path) or "all", "ours" if o else "flamegraph.pl"))
            continue
        compared += 1
        oc, pc = sum(f[4] for f in o), sum(f[4] for f in p)
        if oc != pc:
            problems.append("%s: count %d, flamegraph.pl %d" % (";".join(path), oc, pc))
        if abs(sum(f[2] for f in o) - sum(f[2] for f in p)) > WIDTH_TOL * len(p):
            problems.append("%s: width %.2f, flamegraph.pl %.2f" % (";".join(path), o[0][2], p[0][2]))
        for f in o:
            if path and not colour_ok(f[5], f[6]):
                problems.append("%s: fill %s does not match its change %s" % (";".join(path), f[6], f[5]))
        if len(o) == 1 and len(p) == 1:
            if o[0][5] != p[0][5] and path:
                problems.append("%s: change %s, flamegraph.pl %s" % (";".join(path), o[0][5], p[0][5]))
            if o[0][6] != p[0][6]:
                problems.append("%s: fill %s, flamegraph.pl %s" % (";".join(path) or "all", o[0][6], p[0][6]))
        red += o[0][6] and o[0][6].startswith("rgb(255,") and not o[0][6].endswith(",255)")
        blue += o[0][6] and o[0][6].endswith(",255)") and not o[0][6].startswith("rgb(255,")
    if problems:
        print("%d differences, e.g.:\n  %s" % (len(problems), "\n  ".join(problems[:10])))
        return 1
    print("ok: %d frames match flamegraph.pl's (count, change, fill); %d red, %d blue%s" % (
        compared, red, blue, "; %d lost by flamegraph.pl to a zero-count frame's key" % lost if lost else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
