# test_pictures.sh - PNG flame graphs and sandwich pictures, and the new
# inputs, through perflens-mcp as an agent calls them (mcp_pictures.py):
# a hand-made pprof profile, a V8 .cpuprofile, a speedscope file and the
# bundled device-agent perf script capture are analyzed (format auto),
# their hotspots listed by following next_steps, and each one's flame
# graph and its top function's callers and callees asked for as pictures.
# The PNGs are decoded by a reader in the test, compared with the SVG's
# colours and with the files written, and checked for determinism; then
# pngcheck (when installed) checks every one again.
. tests/integration/lib.sh
mkdir -p "$WORK/in" "$WORK/pics"
/usr/bin/python3 tests/integration/pprof_craft.py "$WORK/in"
/usr/bin/python3 tests/integration/json_craft.py "$WORK/in"
gzip -dc fixtures/device-x86/chunk_000.txt.gz >"$WORK/in/chunk.txt"
HERE="$REPO/tests/integration" BUILD_DIR="$(cd "$BUILD" && pwd)" WORK="$WORK" INPUTS="$WORK/in" \
	PICS="$WORK/pics" oracle pictures /usr/bin/python3 tests/integration/mcp_pictures.py
if [ -n "${KEEP_PICTURES:-}" ]; then
	mkdir -p "$KEEP_PICTURES" && cp "$WORK"/pics/*.png "$KEEP_PICTURES"/
fi
if ! command -v pngcheck >/dev/null 2>&1; then
	skip "pictures: pngcheck is not installed (sh tests/setup.sh)"
elif ls "$WORK"/pics/*.png >/dev/null 2>&1 && pngcheck -q "$WORK"/pics/*.png >"$WORK/pngcheck" 2>&1; then
	ok "pictures: pngcheck finds the $(ls "$WORK"/pics/*.png | wc -l) pictures valid"
else
	notok "pictures: pngcheck: $(oneline "$WORK/pngcheck")"
fi
