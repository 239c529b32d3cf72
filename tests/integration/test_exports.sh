# test_exports.sh - speedscope and pprof exports of real captures, checked
# by the tools those projects publish: every event of the device-agent
# chunk and of the 13 FlameGraph test captures is exported as folded,
# speedscope and pprof through the CLI, then check_exports.mjs (Node 22)
# validates the speedscope file with ajv against the schema the npm package
# `speedscope` ships and decodes the pprof file with the npm package
# `pprof-format`, comparing both with the folded export (which
# test_folded_peer.sh checks byte for byte against stackcollapse-perf.pl):
# same stacks, same totals, leaf first, string_table[0] == "".  A capture
# recorded here with DWARF call graphs and srclines (when perf and gcc can)
# adds inlined frames and file:line.  The Node checks run once, over every
# export; they skip, saying why, without Node 22.
. tests/integration/lib.sh
need_shared "speedscope and pprof exports"
peers="$SHARED/peers/flamegraph/test"
PY=/usr/bin/python3
node=$(sh tests/mcp/setup-node.sh --check 2>"$WORK/node.err") || node=""

# field FILE EXPR: a value read from a JSON file (EXPR indexes `d`).
field() { $PY -c 'import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"; }

# export_all NAME ID EVENT UNIT SAMPLES [SRCLINE-NAME SRCLINE-FILE]: the
# three exports of one event, their results agreeing; the files are added
# to $WORK/cases for check_exports.mjs.
export_all() {
	name=$1 id=$2 event=$3 unit=$4 samples=$5
	shift 5
	: >"$WORK/totals"
	for fmt in folded speedscope pprof; do
		if ! "$PERFLENS" export --analysis-id "$id" --event "$event" --format "$fmt" \
			--artifact-root "$WORK/art" >"$WORK/results/$name.$fmt.json" 2>"$WORK/err"; then
			notok "$name: export $fmt: $(head -c 300 "$WORK/err")"
			return 0
		fi
		field "$WORK/results/$name.$fmt.json" '"%s\t%d %s %d" % (d["path"], d["total_weight"], d["unit"], d["samples"])' >"$WORK/r"
		cp "$(cut -f1 "$WORK/r")" "$WORK/$name.$fmt"
		cut -f2 "$WORK/r" >>"$WORK/totals"
	done
	totals=$(sort -u "$WORK/totals")
	if [ "$(echo "$totals" | wc -l)" -eq 1 ] && [ "${totals##* }" = "$samples" ]; then
		ok "$name: folded, speedscope and pprof results give one total and the analysis' sample count ($totals)"
	else
		notok "$name: the exports' totals differ or miss the analysis' $samples samples: $(echo "$totals" | tr '\n' ' ')"
	fi
	# The same export again gives the same bytes.
	path=$(cut -f1 "$WORK/r")
	"$PERFLENS" export --analysis-id "$id" --event "$event" --format pprof --artifact-root "$WORK/art" \
		>/dev/null 2>&1
	if cmp -s "$WORK/$name.pprof" "$path"; then
		ok "$name: pprof export is byte-identical run to run"
	else
		notok "$name: pprof export differs run to run"
	fi
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s' "$name" "$WORK/$name.folded" "$WORK/$name.speedscope" \
		"$WORK/$name.pprof" "$event" "$unit" "$samples" >>"$WORK/cases"
	[ $# -eq 2 ] && printf '\t%s\t%s' "$1" "$2" >>"$WORK/cases"
	echo >>"$WORK/cases"
}

# analyze_and_export NAME INPUT [SRCLINE-NAME SRCLINE-FILE]: every event
# of one input.
analyze_and_export() {
	input_name=$1 input=$2
	shift 2
	if ! "$PERFLENS" analyze --input "$input" --artifact-root "$WORK/art" >"$WORK/$input_name.analysis" 2>"$WORK/err"; then
		notok "analyze $input_name: $(head -c 300 "$WORK/err")"
		return 0
	fi
	aid=$(field "$WORK/$input_name.analysis" 'd["analysis_id"]')
	field "$WORK/$input_name.analysis" '"\n".join("%s %s %s" % (e["name"], e["unit"], e["samples"]) for e in d["events"])' |
	while read -r ev unit n; do
		export_all "$input_name.$ev" "$aid" "$ev" "$unit" "$n" "$@"
	done
}

mkdir -p "$WORK/results"
analyze_and_export device-x86 fixtures/device-x86/chunk_000.txt.gz
for capture in "$peers"/*.txt; do
	analyze_and_export "$(basename "$capture" .txt)" "$capture"
done

# A capture made here: DWARF call graphs, inlined frames and srclines.
live() {
	command -v perf >/dev/null 2>&1 || { skip "live capture: perf is not installed"; return; }
	command -v gcc >/dev/null 2>&1 || { skip "live capture: gcc is not installed"; return; }
	cat >"$WORK/inl.c" <<'EOF'
#include <stdio.h>
static inline __attribute__((always_inline)) double inner(double x)
{ for (int i = 0; i < 1000; i++) x = x * 1.0000001 + 0.5; return x; }
static __attribute__((noinline)) double outer(double x) { return inner(x) + inner(x * 2); }
int main(void) { double s = 0; for (long i = 0; i < 60000; i++) s += outer((double)i); printf("%f\n", s); return 0; }
EOF
	gcc -O2 -g -fno-omit-frame-pointer -o "$WORK/inl" "$WORK/inl.c" 2>"$WORK/err" ||
		{ skip "live capture: gcc failed: $(head -c 200 "$WORK/err")"; return; }
	if ! timeout 120 perf record -q -e cpu-clock -F 999 --call-graph dwarf,8192 -o "$WORK/perf.data" -- "$WORK/inl" \
		>/dev/null 2>"$WORK/err"; then
		skip "live capture: perf record cannot record here: $(head -c 200 "$WORK/err" | tr '\n' ' ')"
		return
	fi
	timeout 300 perf script -F +srcline -i "$WORK/perf.data" >"$WORK/live.txt" 2>/dev/null
	grep -q 'inl.c:[0-9]* (inlined)' "$WORK/live.txt" ||
		{ skip "live capture: perf printed no inlined srclines"; return; }
	analyze_and_export live-dwarf-srcline "$WORK/live.txt" inner inl.c
}
live

# Every result fits the tool's outputSchema (python3-jsonschema).
if $PY tests/integration/validate_json.py schemas/tools/export_profile.json:outputSchema \
	"$WORK"/results/*.json >"$WORK/err" 2>&1; then
	ok "all $(ls "$WORK/results" | wc -l) export results validate against export_profile's outputSchema"
else
	notok "export results against the outputSchema: $(head -c 400 "$WORK/err")"
fi

# The exports are listed as artifacts, pprof as gzip.
"$PERFLENS" artifacts --kind export --limit 100 --artifact-root "$WORK/art" >"$WORK/list.json" 2>"$WORK/err"
types=$(field "$WORK/list.json" '" ".join(sorted({s + "=" + a["mime_type"] for a in d["artifacts"] for s in (".pb.gz", ".speedscope.json") if a["path"].endswith(s)}))')
[ "$types" = ".pb.gz=application/gzip .speedscope.json=application/json" ] &&
	ok "list_artifacts lists the exports ($types)" || notok "list_artifacts: export types: $types"

# Every export, checked with the speedscope schema and pprof-format.
if [ -z "$node" ]; then
	skip "speedscope schema and pprof-format checks: $(cat "$WORK/node.err")"
	exit 0
fi
timeout 300 "$node" tests/integration/check_exports.mjs "$WORK/cases" >"$WORK/check.out" 2>"$WORK/check.err"
rc=$?
cat "$WORK/check.out"
if [ "$rc" -ne 0 ] && ! grep -q '^not ok' "$WORK/check.out"; then
	notok "check_exports.mjs exited $rc: $(tail -3 "$WORK/check.err" | tr '\n' ' ')"
fi
exit 0
