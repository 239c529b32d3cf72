# test_cli_aliases.sh - the PerfLens Python toolkit's commands, typed as
# its README documents them, run as aliases of ours.
#
# Each alias with the toolkit's flags must give exactly the result our own
# command gives for the same request (the oracle: our command run with our
# flags, compared as parsed JSON; a collection, which is a new run each
# time, is compared by mode, exit status and files); a toolkit flag with
# no equivalent here is refused (exit 2) naming what to do instead; and
# `perflens --help` names every alias.
. tests/integration/lib.sh
PY=/usr/bin/python3
A="$WORK/art"
P() { "$PERFLENS" --artifact-root "$A" "$@"; }
FOLDED="$SHARED/peers/flamegraph/test/results/perf-vertx-stacks-01-collapsed-all.txt"
CAPTURE="$REPO/fixtures/device-x86/chunk_000.txt.gz"
PHRASE=I_EXPLICITLY_AUTHORIZE_TARGET_PROFILING
same() {  # WHAT FILE1 FILE2 [IGNORED_KEY...]: equal JSON results
	what=$1 a=$2 b=$3
	shift 3
	if $PY - "$a" "$b" "$@" <<'PY'
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
for k in sys.argv[3:]:
    a.pop(k, None); b.pop(k, None)
# The second analysis of a file takes its digest from the digest cache
# and says so (inputs[].sha256_from); the digest and all else are equal.
for d in (a, b):
    for i in d.get("inputs") if isinstance(d.get("inputs"), list) else []:
        i.pop("sha256_from", None)
sys.exit(0 if a == b else 1)
PY
	then ok "$what: the same result as our command"
	else notok "$what: results differ: $(head -c 200 "$a") | $(head -c 200 "$b")"
	fi
}
run() {  # OUT ARGS...: run, stdout to OUT; not ok on failure
	out=$1
	shift
	P "$@" >"$out" 2>"$WORK/err" || { notok "perflens $*: $(oneline "$WORK/err")"; return 1; }
}
names=$("$PERFLENS" --help)
missing=""
for a in analyze-folded analyze-perf-script analyze-perf-data inspect-elf resolve-source classify report \
	compare-profiles normalize-benchmark compare-benchmarks collect-profile; do
	echo "$names" | grep -q "^  $a " || missing="$missing $a"
done
[ -z "$missing" ] && ok "perflens --help names the 11 Python-toolkit aliases" || notok "--help lacks:$missing"

if [ -f "$FOLDED" ]; then
	# The toolkit's --output is the result's file, as ours.
	P analyze-folded --input "$FOLDED" --output "$WORK/f1.json" 2>"$WORK/err" &&
		run "$WORK/f2.json" analyze --format folded --input "$FOLDED" &&
		same "analyze-folded --input --output" "$WORK/f1.json" "$WORK/f2.json" ||
		notok "analyze-folded: $(oneline "$WORK/err")"
	P analyze-folded --input "$FOLDED" --max-unique-frames 10 >/dev/null 2>"$WORK/err"
	[ $? -eq 4 ] && grep -q 'max-frames' "$WORK/err" && ok "analyze-folded --max-unique-frames is our --max-frames (exit 4 naming it)" ||
		notok "analyze-folded --max-unique-frames: $(oneline "$WORK/err")"
	if ! P analyze-folded --input "$FOLDED" --top-n 5 >/dev/null 2>"$WORK/err" && grep -q '"exit_code":2' "$WORK/err" &&
		grep -q 'hotspots --limit' "$WORK/err"; then
		ok "analyze-folded --top-n is refused (exit 2), naming hotspots --limit"
	else
		notok "--top-n: $(oneline "$WORK/err")"
	fi
else
	skip "analyze-folded: $FOLDED is absent"
fi
run "$WORK/p1.json" analyze-perf-script --input "$CAPTURE" && run "$WORK/p2.json" analyze --format perf_script --input "$CAPTURE" &&
	same "analyze-perf-script --input" "$WORK/p1.json" "$WORK/p2.json"
ID=$(jget "$WORK/p1.json" analysis_id)
if command -v perf >/dev/null && perf record -e cpu-clock -o "$WORK/t.data" -- /bin/true >/dev/null 2>&1; then
	run "$WORK/d1.json" analyze-perf-data --input "$WORK/t.data" --timeout-seconds 60 &&
		run "$WORK/d2.json" analyze --format perf_data --input "$WORK/t.data" --perf-timeout 60 &&
		same "analyze-perf-data --input --timeout-seconds" "$WORK/d1.json" "$WORK/d2.json"
else
	skip "analyze-perf-data: perf cannot record here"
fi
run "$WORK/e1.json" inspect-elf --input /bin/true && run "$WORK/e2.json" elf --path /bin/true &&
	same "inspect-elf --input" "$WORK/e1.json" "$WORK/e2.json"
run "$WORK/r1.json" resolve-source --binary /bin/true --module-offset 0x2000 &&
	run "$WORK/r2.json" symbolize --binary /bin/true --offsets 0x2000 &&
	same "resolve-source --binary --module-offset (the answers; how the module was read differs: the first call builds its index after)" \
		"$WORK/r1.json" "$WORK/r2.json" module
run "$WORK/c1.json" classify --analysis "$A/analyses/$ID.json" && run "$WORK/c2.json" classify --analysis-id "$ID" &&
	same "classify --analysis FILE" "$WORK/c1.json" "$WORK/c2.json"
run "$WORK/m1.json" report --analysis "$A/analyses/$ID.json" --problem slow --metric wall_time &&
	run "$WORK/m2.json" report --analysis-id "$ID" --problem slow --metric wall_time &&
	same "report --analysis FILE --problem --metric" "$WORK/m1.json" "$WORK/m2.json"
run "$WORK/x1.json" compare-profiles --baseline "$A/analyses/$ID.json" --candidate "$A/analyses/$ID.json" --minimum-delta-percent 0 --event cycles &&
	run "$WORK/x2.json" compare --baseline-id "$ID" --candidate-id "$ID" --min-delta-percent 0 --event cycles &&
	same "compare-profiles --baseline --candidate --minimum-delta-percent" "$WORK/x1.json" "$WORK/x2.json"
B="$REPO/fixtures/benchmarks"
run "$WORK/n1.json" normalize-benchmark --input "$B/pyperf-baseline.json" --benchmark-name json_dumps &&
	run "$WORK/n2.json" normalize-bench --path "$B/pyperf-baseline.json" --name json_dumps &&
	same "normalize-benchmark --input --benchmark-name" "$WORK/n1.json" "$WORK/n2.json"
run "$WORK/n3.json" normalize-bench --path "$B/pyperf-baseline.json" && run "$WORK/n4.json" normalize-bench --path "$B/pyperf-candidate.json"
BB=$(jget "$WORK/n3.json" benchmark_id) BC=$(jget "$WORK/n4.json" benchmark_id)
run "$WORK/b1.json" compare-benchmarks --baseline "$A/benchmarks/$BB.json" --candidate "$A/benchmarks/$BC.json" --minimum-practical-impact-percent 2 &&
	run "$WORK/b2.json" compare-bench --baseline-id "$BB" --candidate-id "$BC" --practical-threshold-percent 2 &&
	same "compare-benchmarks --baseline --candidate --minimum-practical-impact-percent" "$WORK/b1.json" "$WORK/b2.json"
if ! P compare-benchmarks --baseline "$B/pyperf-baseline.json" --candidate "$B/pyperf-candidate.json" >/dev/null 2>"$WORK/err" &&
	grep -q '"exit_code":2' "$WORK/err" && grep -q 'benchmark id' "$WORK/err"; then
	ok "compare-benchmarks of raw producer files is refused (exit 2): pass normalized benchmarks"
else
	notok "compare-benchmarks raw files: $(oneline "$WORK/err")"
fi
if command -v perf >/dev/null && perf stat -o /dev/null -- /bin/true 2>/dev/null; then
	run "$WORK/k1.json" collect-profile --mode stat --executable /usr/bin/true --authorize-target --authorization "$PHRASE" &&
		run "$WORK/k2.json" collect --mode stat --executable /usr/bin/true --authorization "$PHRASE" --authorize-target "$PHRASE" &&
		$PY - "$WORK/k1.json" "$WORK/k2.json" <<'PY'
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
key = lambda d: (d["metadata"]["mode"], d["metadata"]["exit_status"], sorted(f["name"] for f in d["files"]))
print(("ok - " if key(a) == key(b) else "not ok - ") + "collect-profile --authorize-target --authorization: the collection our collect makes (%s)" % (key(a),))
PY
	if ! P collect-profile --mode stat --executable /usr/bin/true --authorize-target --authorization "$PHRASE" \
		--data-output x.data >/dev/null 2>"$WORK/err" && grep -q 'artifact-root' "$WORK/err"; then
		ok "collect-profile --data-output is refused, saying where collections go"
	else
		notok "--data-output: $(oneline "$WORK/err")"
	fi
else
	skip "collect-profile: perf stat cannot run here"
fi
