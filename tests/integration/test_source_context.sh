# test_source_context.sh - source lines with per-line samples.
#
# A workload built here with -g is recorded with real perf; its perf.data
# is analyzed with srclines.  Oracles: `perf report --sort srcline` on the
# same perf.data for the share of samples on each line, the source file
# itself for the text of each line, and the tool's outputSchema (python3
# jsonschema).  Also: the file is found through the binary's DWARF (perf
# prints base names only), a moved source tree is found with --path-map
# and otherwise named in an error with every path tried, and nothing
# outside the allowed roots is read.
. tests/integration/lib.sh
name="source_context"
here="$REPO/tests/integration"

if ! command -v perf >/dev/null 2>&1; then
	skip "$name: perf is not installed"
	exit 0
fi
if ! perf record -e cpu-clock -g -N -o "$WORK/probe.data" -- true >/dev/null 2>"$WORK/probe.err"; then
	skip "$name: perf cannot record here: $(oneline "$WORK/probe.err")"
	exit 0
fi
mkdir -p "$WORK/src" "$WORK/bin" "$WORK/art"
cp "$REPO/tests/workloads/fib.c" "$WORK/src/fib.c"
if ! (cd "$WORK/src" && gcc -O1 -g -fno-omit-frame-pointer -o "$WORK/bin/fib" fib.c) 2>"$WORK/err" ||
	! perf record -e cpu-clock -F 999 -g -N -o "$WORK/fib.data" -- "$WORK/bin/fib" >/dev/null 2>"$WORK/err" ||
	! perf report -i "$WORK/fib.data" --stdio --no-children --sort srcline -g none --percent-limit 0 \
		>"$WORK/srcline.report" 2>"$WORK/err"; then
	notok "$name: building, recording or perf report failed: $(oneline "$WORK/err")"
	exit 0
fi

id=$("$PERFLENS" analyze --path "$WORK/fib.data" --srcline --artifact-root "$WORK/art" 2>"$WORK/err" |
	/usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["analysis_id"])')
if [ -z "$id" ]; then
	notok "$name: analyze --srcline failed: $(oneline "$WORK/err")"
	exit 0
fi
hot=$("$PERFLENS" hotspots --analysis-id "$id" --artifact-root "$WORK/art" --limit 100 2>>"$WORK/err" |
	/usr/bin/python3 -c 'import json,sys
for h in json.load(sys.stdin)["hotspots"]:
    if h["symbol"] == "leaf_work": print(h["hotspot_id"])')
out="$WORK/leaf.json"
"$PERFLENS" source --analysis-id "$id" --hotspot-id "$hot" --artifact-root "$WORK/art" >"$out" 2>"$WORK/err"
if /usr/bin/python3 "$here/validate_json.py" "$REPO/schemas/tools/source_context.json:outputSchema" "$out" >"$WORK/v" 2>&1; then
	ok "$name: the leaf_work answer validates against the outputSchema"
else
	notok "$name: leaf_work answer: $(oneline "$WORK/v") $(oneline "$WORK/err")"
fi

# file mode over the whole of fib.c, checked line by line
"$PERFLENS" source --analysis-id "$id" --file fib.c --hot-lines 50 --before 0 --after 0 \
	--artifact-root "$WORK/art" >"$WORK/file.json" 2>"$WORK/err"
/usr/bin/python3 - "$WORK/leaf.json" "$WORK/file.json" "$WORK/srcline.report" "$WORK/src/fib.c" \
	"$WORK/art/analyses/$id.json" <<'EOF'
import json, re, sys
leaf, whole, report, src_path, summary = sys.argv[1:6]
leaf, whole = json.load(open(leaf)), json.load(open(whole))
src = open(src_path).read().split("\n")
total = json.load(open(summary))["events"][0]["samples"]
def check(what, cond, why=""):
    print(("ok - " if cond else "not ok - ") + "source_context: " + what + ("" if cond else ": " + str(why)[:400]))
f = leaf["files"][0]
check("the base name fib.c is found through the binary's DWARF (%s)" % f["read_path"],
      f["read_path"] == src_path, f)
bad = [l for l in f["lines"] + whole["files"][0]["lines"] if src[l["line"] - 1][:240] != l["text"]]
check("every line's text is the source file's line", not bad, bad[:2])
hot = {h["line"]: h for h in f["hot_lines"]}
check("leaf_work's hottest lines lie inside leaf_work (lines 9-15 of fib.c)",
      hot and all(9 <= n <= 15 for n in hot), sorted(hot))
ours = {h["line"]: h["self_samples"] * 100.0 / total for h in whole["files"][0]["hot_lines"]}
theirs = {}
for line in open(report):
    m = re.match(r"\s*([\d.]+)%\s+fib\.c:(\d+)\s*$", line)
    if m:
        theirs[int(m.group(2))] = float(m.group(1))
diff = {n: (ours.get(n, 0), theirs.get(n, 0)) for n in set(ours) | set(theirs)
        if (ours.get(n, 0) >= 0.5 or theirs.get(n, 0) >= 0.5) and abs(ours.get(n, 0) - theirs.get(n, 0)) > 0.1}
check("self share of every fib.c line >= 0.5%% agrees with perf report --sort srcline within 0.1 pp (%d lines)" % len(theirs),
      theirs and not diff, diff)
EOF

# A moved source tree: the hot lines still come (file:line with samples,
# the same as with the text), the text is said to be missing, and the
# fix (source_text_fix) names every path tried and --path-map; then --path-map.
mkdir -p "$WORK/moved"
mv "$WORK/src/fib.c" "$WORK/moved/fib.c"
"$PERFLENS" source --analysis-id "$id" --hotspot-id "$hot" --artifact-root "$WORK/art" \
	--allowed-root "$WORK" >"$WORK/moved.json" 2>"$WORK/err"
rc=$?
if [ $rc -eq 0 ] && /usr/bin/python3 - "$WORK/moved.json" "$WORK/leaf.json" "$WORK/src/fib.c" <<'EOF'
import json, sys
moved, before = (json.load(open(p)) for p in sys.argv[1:3])
f, g = moved["files"][0], before["files"][0]
sys.exit(not (moved["source_text_missing"] and f["read_path"] is None and f["lines"] == [] and
              f["hot_lines"] == g["hot_lines"] and sys.argv[3] in f["tried"] and
              sys.argv[3] in moved["source_text_fix"] and "--path-map" in moved["source_text_fix"]))
EOF
then
	ok "$name: a missing source file still gives the hot lines, says the text is missing and names the paths tried and --path-map"
else
	notok "$name: moved source: exit $rc: $(oneline "$WORK/moved.json") $(oneline "$WORK/err")"
fi
"$PERFLENS" source --analysis-id "$id" --hotspot-id "$hot" --artifact-root "$WORK/art" \
	--allowed-root "$WORK" --path-map "$WORK/src=$WORK/moved" >"$WORK/mapped.json" 2>"$WORK/err"
if [ "$(/usr/bin/python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["files"][0]["read_path"])' "$WORK/mapped.json" 2>/dev/null)" = "$WORK/moved/fib.c" ]; then
	ok "$name: --path-map FROM=TO finds the moved source"
else
	notok "$name: --path-map: $(oneline "$WORK/err") $(oneline "$WORK/mapped.json")"
fi
# Outside the allowed roots: not read, even when mapped there.
"$PERFLENS" source --analysis-id "$id" --hotspot-id "$hot" --artifact-root "$WORK/art" \
	--allowed-root "$WORK/art" --allowed-root "$WORK/bin" --path-map "$WORK/src=$WORK/moved" \
	>"$WORK/outside.json" 2>"$WORK/err"
rc=$?
if [ $rc -eq 0 ] && ! grep -q '"read_path": "/' "$WORK/outside.json" && grep -q '"source_text_missing": true' "$WORK/outside.json"; then
	ok "$name: a source outside the allowed roots is not read (its text is said to be missing)"
else
	notok "$name: outside roots: exit $rc: $(oneline "$WORK/outside.json")"
fi
# No srclines: the error says how to get them.
"$PERFLENS" analyze --path "$WORK/fib.data" --artifact-root "$WORK/art" >"$WORK/nosrc.json" 2>"$WORK/err"
id2=$(/usr/bin/python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["analysis_id"])' "$WORK/nosrc.json")
"$PERFLENS" source --analysis-id "$id2" --file fib.c --artifact-root "$WORK/art" >/dev/null 2>"$WORK/err"
rc=$?
if [ $rc -eq 3 ] && grep -q "srcline" "$WORK/err"; then
	ok "$name: an analysis without srclines answers exit 3 with how to get them"
else
	notok "$name: no srclines: exit $rc: $(oneline "$WORK/err")"
fi
# A hotspot of that analysis (classify names source_context for program
# code whatever the input held) is still an answer: no files, the fix
# naming srcline, and the hotspot's samples counted as without lines.
"$PERFLENS" hotspots --analysis-id "$id2" --artifact-root "$WORK/art" >"$WORK/nosrc-hot.json" 2>"$WORK/err"
hot2=$(/usr/bin/python3 -c 'import json,sys; h=[x for x in json.load(open(sys.argv[1]))["hotspots"] if x["symbol"]=="fib"]; print(h[0]["hotspot_id"] if h else "")' "$WORK/nosrc-hot.json")
"$PERFLENS" source --analysis-id "$id2" --hotspot-id "$hot2" --artifact-root "$WORK/art" >"$WORK/nosrc-src.json" 2>"$WORK/err"
rc=$?
if [ $rc -eq 0 ] && /usr/bin/python3 - "$WORK/nosrc-src.json" "$WORK/nosrc-hot.json" "$hot2" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))
hot = [h for h in json.load(open(sys.argv[2]))["hotspots"] if h["hotspot_id"] == sys.argv[3]][0]
assert r["files"] == [] and r["samples_with_lines"] == 0, r
assert r["source_text_missing"] and "srcline" in r["source_text_fix"], r
assert r["samples_without_lines"] >= hot["self"]["samples"] > 0, (r["samples_without_lines"], hot)
assert any(s["tool"] == "get_hotspot" for s in r["next_steps"]), r["next_steps"]
EOF
then
	ok "$name: a hotspot of an analysis without srclines answers with no files and the srcline fix"
else
	notok "$name: hotspot without srclines: exit $rc: $(oneline "$WORK/err") $(oneline "$WORK/nosrc-src.json")"
fi

# An optimized build whose hot loop is a header's inlined code, the
# header gone from the machine (as a system or library header often is):
# every sample's own srcline is the header's, and the program's line that
# calls the inlined code must still get the samples, as inlined_samples
# (inline_oracle.py checks them against eu-addr2line -i).
mkdir -p "$WORK/inl/inc" "$WORK/inl/src"
cp "$REPO/tests/workloads/inline_sum.h" "$WORK/inl/inc/"
cp "$REPO/tests/workloads/inline_sum.c" "$WORK/inl/src/"
if ! (cd "$WORK/inl/src" && gcc -O2 -g -no-pie -fno-omit-frame-pointer -I../inc -o "$WORK/inl/prog" inline_sum.c) 2>"$WORK/err" ||
	! perf record -e cpu-clock -F 999 -g -N -o "$WORK/inl.data" -- "$WORK/inl/prog" 60000 >/dev/null 2>"$WORK/err"; then
	notok "$name: inlined header: building or recording failed: $(oneline "$WORK/err")"
	exit 0
fi
rm -rf "$WORK/inl/inc"
id3=$("$PERFLENS" analyze --path "$WORK/inl.data" --srcline --artifact-root "$WORK/art" --allowed-root "$WORK" 2>"$WORK/err" |
	/usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["analysis_id"])')
"$PERFLENS" source --analysis-id "$id3" --file inline_sum.c --artifact-root "$WORK/art" --allowed-root "$WORK" \
	>"$WORK/inl-src.json" 2>>"$WORK/err"
if out=$(/usr/bin/python3 "$here/inline_oracle.py" "$WORK/inl-src.json" "$WORK/inl.data" "$WORK/inl/prog" 2>&1); then
	ok "$name: a hot loop inlined from a header that is gone is credited to the program's call-site line: $out"
else
	notok "$name: inlined header: $(printf '%s' "$out" | tail -3 | tr '\n' ' ') $(oneline "$WORK/err")"
fi
