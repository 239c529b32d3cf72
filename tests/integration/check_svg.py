#!/usr/bin/env python3
"""check_svg.py - sanity checks for a flame graph SVG (python3 stdlib only).

Usage: check_svg.py FILE.svg

Parses the file with xml.etree (so it must be well-formed), requires a
<script>, and rebuilds the frame tree from geometry: a frame is a <g> holding
a <title> and a <rect>; frames are stacked in rows by their rect's y, the
root row at the bottom, and each frame's parent is the frame in the row
below whose x-span contains it.  Every frame above the root row must have a
parent, and the widths of a parent's children must not add up to more than
the parent's width (+0.01 px).  Prints "ok: ..." or one line saying why not;
exits 0 on success, 1 on a failed check, 2 on usage errors.
"""
import bisect
import sys
import xml.etree.ElementTree as ET

SVG = "{http://www.w3.org/2000/svg}"
TOL = 0.01


def local(tag):
    return tag.rsplit("}", 1)[-1]


def frames_of(root):
    """[(y, x, width, title)] for every frame <g> in the document."""
    out = []
    for g in root.iter():
        if local(g.tag) != "g":
            continue
        kids = {local(c.tag): c for c in g}
        if "title" not in kids or "rect" not in kids:
            continue
        r = kids["rect"]
        try:
            x, y, w = (float(r.get(a)) for a in ("x", "y", "width"))
        except (TypeError, ValueError):
            raise ValueError("frame %r has a rect without numeric x/y/width"
                             % (kids["title"].text or ""))
        if w < 0:
            raise ValueError("frame %r has negative width" % kids["title"].text)
        out.append((y, x, w, kids["title"].text or ""))
    return out


def check_tree(frames):
    """Return None when every row fits in the row below it, else a reason."""
    rows = {}
    for f in frames:
        rows.setdefault(f[0], []).append(f)
    ys = sorted(rows, reverse=True)  # root row first (largest y)
    if len(rows[ys[0]]) != 1:
        return "the bottom row has %d frames, expected one root" % len(rows[ys[0]])
    for below, above in zip(ys, ys[1:]):
        parents = sorted(rows[below], key=lambda f: f[1])
        starts = [p[1] for p in parents]
        used = [0.0] * len(parents)
        for y, x, w, title in rows[above]:
            i = bisect.bisect_right(starts, x + 1e-6) - 1
            # a zero-width neighbour may share the start; step back to one
            # that really contains the child
            while i > 0 and parents[i][1] + parents[i][2] < x + w - TOL:
                i -= 1
            if i < 0 or x + w > parents[i][1] + parents[i][2] + TOL:
                return "frame %r at x=%g y=%g has no parent below it" % (title, x, y)
            used[i] += w
        for p, u in zip(parents, used):
            if u > p[2] + TOL:
                return "children of %r are %.2f px wide, more than its %.2f px" % (
                    p[3], u, p[2])
    return None


def main(argv):
    if len(argv) != 2:
        print("usage: check_svg.py FILE.svg")
        return 2
    try:
        root = ET.parse(argv[1]).getroot()
    except (OSError, ET.ParseError) as e:
        print("not well-formed: %s" % e)
        return 1
    if local(root.tag) != "svg":
        print("root element is <%s>, not <svg>" % local(root.tag))
        return 1
    if not any(local(e.tag) == "script" and (e.text or "").strip() for e in root.iter()):
        print("no <script> element")
        return 1
    try:
        frames = frames_of(root)
    except ValueError as e:
        print(str(e))
        return 1
    if frames:
        reason = check_tree(frames)
        if reason:
            print(reason)
            return 1
    print("ok: %d frames in %d rows" % (len(frames), len({f[0] for f in frames})))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
