# test_demo.sh - `make demo` (tests/demo.sh) shows the evidence workflow.
#
# Run as make demo runs it, into a fresh folder: it must end 0 and show
# the data quality (the [unknown] frames warning), candidates with their
# missing evidence, where the Markdown report and the flame graph went
# (files that exist: the report has its sections, the SVG is an SVG), and
# for the srcline capture named frames, call paths and per-line samples.
# The oracle for the per-line numbers: the capture's own text, read by
# python: the leaf srcline of each sample, counted per app.c line.
. tests/integration/lib.sh
OUT="$WORK/demo"
if ! (cd "$REPO" && PERFLENS_DEMO_OUT="$OUT" sh tests/demo.sh "$BUILD") >"$WORK/demo.out" 2>"$WORK/demo.err"; then
	notok "make demo: exit non-zero: $(oneline "$WORK/demo.err")"
	exit 0
fi
ok "make demo runs to its end"
has() {  # WHAT PATTERN
	grep -q -- "$2" "$WORK/demo.out" && ok "demo shows $1" || notok "demo does not show $1 ($2)"
}
has "the data quality warning about [unknown] frames" "unique user frames stay \[unknown\]"
has "the coarse-event warning" "has only 16 samples"
has "candidates with their missing evidence" "frame_pointer_loss@cycles .*callers of the leaf functions"
has "that candidates are not findings" "candidate to test, not a finding"
has "named frames of the srcline capture" "count_stat .*/tmp/perflens-fixture/app"
has "call paths root to leaf" "start_thread > counter > count_stat"
has "the threads" "formatter "
report=$(sed -n 's/^-- the Markdown evidence report: //p' "$WORK/demo.out")
svg=$(sed -n 's/^-- the flame graph of cycles: //p' "$WORK/demo.out")
[ -f "$report" ] && grep -q '^## ' "$report" && grep -qi 'missing evidence' "$report" &&
	ok "the report it names exists and holds its sections, missing evidence among them" || notok "report '$report'"
[ -f "$svg" ] && head -c 400 "$svg" | grep -q '<svg' && ok "the flame graph it names is an SVG" || notok "svg '$svg'"
/usr/bin/python3 - "$WORK/demo.out" "$REPO/fixtures/investigation-x86/capture.txt.gz" <<'PY'
import gzip, re, sys
out, cap = sys.argv[1:3]
# leaf srcline per sample: the srcline line right after a sample's first
# frame line (a leaf without one, a kernel frame, has none)
leaf, state = {}, None
for line in gzip.open(cap, "rt", errors="replace"):
    if line.strip() and not line[0].isspace():
        state = "header"
    elif line.startswith("\t"):
        state = "leaf" if state == "header" else "frame"
    elif state == "leaf":
        m = re.match(r"^\s+(\S+):(\d+)", line)
        if m and m.group(1).endswith("/investigation/app.c"):
            leaf[int(m.group(2))] = leaf.get(int(m.group(2)), 0) + 1
        state = "frame"
text = open(out).read().split("-- the source of app.c", 1)[-1]
rows = {int(m.group(1)): int(m.group(2)) for m in re.finditer(r"^\s+(\d+)\s+(\d+)\s+\d+\s", text, re.M)}
shown = [l for l in rows if rows[l] > 0]
good = shown and all(rows[l] == leaf.get(l, 0) for l in rows)
print(("ok - " if good else "not ok - ") + "demo: per-line self samples of app.c equal the capture's leaf srclines (%s)"
      % ", ".join("line %d: %d" % (l, rows[l]) for l in sorted(shown)[:4]))
PY
