# perf_data_readers.sh - the native perf.data reader against the perf
# script text path and perf report, on one file; sourced by the perf.data
# tests after lib.sh ($name, $here, $WORK, $PERFLENS set).
#
# compare_readers F DATA [SELF_ONLY [CHILDREN_G [TOLERANCE [REPORT_ARGS]]]]: ok / not ok lines for recording F
# (a label) in DATA: provenance names the reader (native, perf script
# when asked); per event, the folded output is byte-identical; the
# summary and the stack table are equal but for provenance; the hotspots
# agree with perf report --stdio (compare_perf_report.py).  SELF_ONLY=1
# where perf report has no children column (no callchain, pipe mode);
# CHILDREN_G perf report's -g for the children column (default none);
# TOLERANCE the points allowed (default 0.1); REPORT_ARGS more perf report
# options (--no-inline: with DWARF callchains perf report adds inline
# frames to the children view, which --no-inline perf script does not).
mkdir -p "$WORK/art"

# analyze READER FILE: the summary path of one analysis.
analyze() {
	PERFLENS_PERF_DATA_READER=$1 "$PERFLENS" analyze --path "$2" --artifact-root "$WORK/art" \
		2>>"$WORK/err" | /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["artifact"]["summary_path"])'
}
events_of() { /usr/bin/python3 -c 'import json,sys; print(" ".join(e["name"] for e in json.load(open(sys.argv[1]))["events"]))' "$1"; }
id_of() { /usr/bin/python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["id"])' "$1"; }
# Everything but the provenance, and the stack tables, byte for byte.
same_but_provenance() {
	/usr/bin/python3 - "$1" "$2" <<'EOF'
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
for d in (a, b):
    for k in ("provenance", "id", "stacks_file"):
        d.pop(k, None)
keys = sorted(k for k in set(a) | set(b) if a.get(k) != b.get(k))
def leaves(x, y, path, out):
    if isinstance(x, dict) and isinstance(y, dict):
        for k in sorted(set(x) | set(y)):
            leaves(x.get(k), y.get(k), path + "." + k, out)
    elif x != y:
        out.append("%s: %s | %s" % (path, json.dumps(x)[:160], json.dumps(y)[:160]))
if keys:
    where = []
    for k in keys:
        leaves(a.get(k), b.get(k), k, where)
    print("summaries differ in", keys, "(native | perf script:", "; ".join(where[:3]) + ")"); sys.exit(1)
if open(sys.argv[1][:-5] + ".stacks.json").read() != open(sys.argv[2][:-5] + ".stacks.json").read():
    print("stack tables differ"); sys.exit(1)
EOF
}

compare_readers() {
	f=$1 data=$2 self_only=${3:-0} children_g=${4:-none} tolerance=${5:-0.1} report_args=${6:-}
	nat=$(analyze native "$data") txt=$(analyze perf-script "$data")
	if [ -z "$nat" ] || [ -z "$txt" ]; then
		notok "$name $f: analyze failed: $(oneline "$WORK/err")"
		return
	fi
	reader="$(jget "$nat" provenance.inputs.0.reader) $(jget "$txt" provenance.inputs.0.reader)"
	if [ "$reader" = "native perf script" ]; then
		ok "$name $f: provenance names the reader (native; perf script when asked)"
	else
		notok "$name $f: readers are '$reader'"
	fi
	nid=$(id_of "$nat") tid=$(id_of "$txt") evs=$(events_of "$txt")
	same=1 lines=0
	for ev in $evs; do
		"$PERFLENS" export --analysis-id "$nid" --event "$ev" --format folded --output - \
			--artifact-root "$WORK/art" >"$WORK/n.folded" 2>>"$WORK/err"
		"$PERFLENS" export --analysis-id "$tid" --event "$ev" --format folded --output - \
			--artifact-root "$WORK/art" >"$WORK/t.folded" 2>>"$WORK/err"
		if [ -s "$WORK/t.folded" ] && cmp -s "$WORK/n.folded" "$WORK/t.folded"; then
			lines=$((lines + $(wc -l <"$WORK/t.folded")))
		else
			same=0
			notok "$name $f $ev: folded output differs: $(diff "$WORK/n.folded" "$WORK/t.folded" | head -4 | oneline /dev/stdin)"
		fi
	done
	[ $same = 1 ] && ok "$name $f: folded output byte-identical to the perf script path ($evs; $lines lines)"
	if out=$(same_but_provenance "$nat" "$txt"); then
		ok "$name $f: summary and stack table equal the perf script path's but for provenance"
	else
		notok "$name $f: $out"
	fi
	perf report -i "$data" --stdio --no-children --sort sym -g none --percent-limit 0 $report_args >"$WORK/self.all" 2>/dev/null
	perf report -i "$data" --stdio --children --sort sym -g "$children_g" --percent-limit 0 $report_args >"$WORK/children.all" 2>/dev/null
	for ev in $evs; do
		# One event's section of perf report's output.
		section() { awk -v ev="$ev" '/^# Samples: /{on = index($0, "of event '"'"'" ev "'"'"'") > 0} on' "$1"; }
		section "$WORK/self.all" >"$WORK/self"
		section "$WORK/children.all" >"$WORK/children"
		# Without callchains (or in pipe mode, where perf report sets up
		# before the events arrive) perf report has no children column.
		if [ "$self_only" = 1 ]; then
			cp "$WORK/self" "$WORK/children"
		fi
		if /usr/bin/python3 "$here/compare_perf_report.py" "$nat" "$WORK/self" "$WORK/children" \
			--event "$ev" --tolerance "$tolerance" >"$WORK/cmp.out" 2>&1; then
			ok "$name $f $ev: hotspots agree with perf report --stdio ($tolerance points, every symbol >= 0.5%)"
		elif [ "$self_only" = 1 ] && ! grep -q "^self fail\|^totals fail" "$WORK/cmp.out"; then
			ok "$name $f $ev: self shares and totals agree with perf report --stdio"
		else
			notok "$name $f $ev: differs from perf report: $(grep -v '^ok' "$WORK/cmp.out" | oneline /dev/stdin)"
		fi
	done
}
