#!/bin/sh
# svg_browser.sh - render a flame graph SVG in headless Chromium and check
# that a non-trivial picture comes out.
#
# Usage: svg_browser.sh FILE.svg [OUT.png] [#search=REGEX]
#
# Chromium loads the SVG through a file:// URL (an optional fragment such as
# "#search=main" runs the embedded search on load, which also proves the
# script runs) and takes a 1200x800 screenshot with a throw-away profile and
# no network services.  The PNG must decode (python3 stdlib) to that size and
# show a picture rather than a blank page: at least 5% non-white pixels and
# 100 distinct colours (a blank page has 1, the "no samples" graph ~650).
# Exits 0 on success, 1 on failure, 2 on usage errors and 77 (the automake
# "skipped" code) when Chromium is not installed.
set -eu

if [ $# -lt 1 ] || [ $# -gt 3 ]; then
	echo "usage: svg_browser.sh FILE.svg [OUT.png] [#search=REGEX]" >&2
	exit 2
fi
svg=$1
frag=${3:-}

chromium=
for c in /usr/bin/chromium /usr/bin/chromium-browser; do
	if [ -x "$c" ]; then
		chromium=$c
		break
	fi
done
if [ -z "$chromium" ]; then
	echo "SKIP: chromium not installed"
	exit 77
fi
if [ ! -r "$svg" ]; then
	echo "FAIL: cannot read '$svg'"
	exit 1
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT INT TERM
out=${2:-$work/shot.png}
abs=$(cd "$(dirname "$svg")" && pwd)/$(basename "$svg")
rm -f "$out"

if ! timeout 60 "$chromium" --headless --no-sandbox --disable-gpu \
	--disable-quic --no-first-run --disable-background-networking \
	--disable-component-update --disable-sync --hide-scrollbars \
	--user-data-dir="$work/profile" --screenshot="$out" \
	--window-size=1200,800 "file://$abs$frag" >"$work/log" 2>&1; then
	echo "FAIL: chromium exited with an error ($(tail -n 1 "$work/log"))"
	exit 1
fi

python3 - "$out" <<'PYEOF'
import struct, sys, zlib


def decode(data):
    """(width, height, bytes per pixel, rows) of an 8-bit RGB/RGBA PNG."""
    pos, idat, ihdr = 8, [], None
    while pos + 8 <= len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            ihdr = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat.append(body)
        pos += 12 + n
    w, h, depth, ctype, _, _, interlace = ihdr
    if depth != 8 or ctype not in (2, 6) or interlace:
        raise ValueError("unsupported PNG layout (depth %d, colour type %d)" % (depth, ctype))
    bpp = 3 if ctype == 2 else 4
    raw, stride = zlib.decompress(b"".join(idat)), w * bpp
    prev, rows = bytearray(stride), []
    for y in range(h):
        f = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride) if f else ():
            a = line[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            if f == 1:
                add = a
            elif f == 2:
                add = b
            elif f == 3:
                add = (a + b) >> 1
            else:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                add = a if pa <= pb and pa <= pc else b if pb <= pc else c
            line[i] = (line[i] + add) & 255
        rows.append(bytes(line))
        prev = line
    return w, h, bpp, rows


path = sys.argv[1]
try:
    data = open(path, "rb").read()
except OSError as e:
    print("FAIL: no screenshot: %s" % e)
    sys.exit(1)
if data[:8] != b"\x89PNG\r\n\x1a\n" or data[12:16] != b"IHDR":
    print("FAIL: '%s' is not a PNG" % path)
    sys.exit(1)
try:
    w, h, bpp, rows = decode(data)
except (ValueError, zlib.error, struct.error, TypeError) as e:
    print("FAIL: cannot decode '%s': %s" % (path, e))
    sys.exit(1)
if (w, h) != (1200, 800):
    print("FAIL: screenshot is %dx%d, expected 1200x800" % (w, h))
    sys.exit(1)
colours, ink = set(), 0
for r in rows:
    for i in range(0, len(r), bpp):
        px = r[i:i + 3]
        colours.add(px)
        ink += px != b"\xff\xff\xff"
if ink < 0.05 * w * h or len(colours) < 100:
    print("FAIL: screenshot looks blank (%d colours, %.1f%% non-white)"
          % (len(colours), 100.0 * ink / (w * h)))
    sys.exit(1)
print("ok: %s, %dx%d, %d colours, %.1f%% non-white"
      % (path, w, h, len(colours), 100.0 * ink / (w * h)))
PYEOF
