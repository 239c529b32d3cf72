# test_png_text.sh - UTF-8 names in PNG flame graphs: png_text_oracle.py
# renders names in Latin-1, Latin Extended-A, Greek, Cyrillic, punctuation
# and arrows, invalid UTF-8, code points the atlas lacks and a name too long
# for its frame, and compares every label pixel with what the committed
# atlas and Python's UTF-8 decoder say (see its header); the export is the
# same bytes twice, and pngcheck (when installed) checks the file.
. tests/integration/lib.sh
PY=/usr/bin/python3
mkdir -p "$WORK/text"
oracle "png text" $PY tests/integration/png_text_oracle.py "$PERFLENS" "$WORK/text" "$REPO"
png=$(ls "$WORK"/text/art1/exports/*.png 2>/dev/null | head -1)
if ! command -v pngcheck >/dev/null 2>&1; then
	skip "png text: pngcheck is not installed (sh tests/setup.sh)"
elif [ -n "$png" ] && pngcheck -q "$png" >"$WORK/pngcheck" 2>&1; then
	ok "png text: pngcheck finds $(basename "$png") valid"
else
	notok "png text: pngcheck: $(oneline "$WORK/pngcheck")"
fi
if [ -n "${KEEP_PICTURES:-}" ] && [ -n "$png" ]; then
	mkdir -p "$KEEP_PICTURES" && cp "$png" "$KEEP_PICTURES"/text.png
fi
