# test_cli_tables.sh - `--format table` on every command of the CLI.
#
# Every command `perflens --help` lists is run with --format table: it
# prints a table (not JSON: python's json module must refuse it) or says
# on stderr that it has no table (exit 2), never JSON on stdout.  The
# commands that return a list or a verdict (analyze, hotspots, callpaths,
# hotspot, threads, stat, source, artifacts, classify, report, compare,
# normalize-bench, compare-bench, elf, symbolize, capabilities, collect,
# export, read-artifact) must have one.  The oracle for the contents: the
# same command's JSON result, read by python; values from it (the first
# row's name, a status, an id) must appear in the table.  A command added
# later with no table passes only by saying so.
. tests/integration/lib.sh
PY=/usr/bin/python3
A="$WORK/art"
CAPTURE="$REPO/fixtures/device-x86/chunk_000.txt.gz"
PHRASE=I_EXPLICITLY_AUTHORIZE_TARGET_PROFILING
P() { "$PERFLENS" --artifact-root "$A" "$@"; }
P analyze --input "$CAPTURE" >"$WORK/a.json" 2>"$WORK/err" || { notok "analyze: $(oneline "$WORK/err")"; exit 0; }
ID=$(jget "$WORK/a.json" analysis_id)
P normalize-bench --path "$REPO/fixtures/benchmarks/pyperf-baseline.json" >"$WORK/nb.json" 2>/dev/null
P normalize-bench --path "$REPO/fixtures/benchmarks/pyperf-candidate.json" >"$WORK/nc.json" 2>/dev/null
BB=$(jget "$WORK/nb.json" benchmark_id) BC=$(jget "$WORK/nc.json" benchmark_id)
# The bundled capture with source lines (fixtures/investigation-x86).
P analyze --input "$REPO/fixtures/investigation-x86/capture.txt.gz" >"$WORK/s.json" 2>"$WORK/err" ||
	notok "analyze the srcline capture: $(oneline "$WORK/err")"
SID=$(jget "$WORK/s.json" analysis_id)

# args COMMAND: the arguments of one command's call, and the JSON path of
# a value its table must show (after a '|').
args() {
	case $1 in
	analyze) echo "--input $CAPTURE|events.0.name" ;;
	hotspots) echo "--analysis-id $ID --event cycles|hotspots.0.symbol" ;;
	callpaths) echo "--analysis-id $ID --event cycles|paths.0.frames.0.symbol" ;;
	stat) echo "--analysis-id $ID|blocks.0.counters.0.event" ;;
	export) echo "--analysis-id $ID --event cycles --format folded|path" ;;
	hotspot) echo "--analysis-id $ID --event cycles --hotspot-id fn2|symbol" ;;
	threads) echo "--analysis-id $ID --event cycles|threads.0.comm" ;;
	artifacts) echo "|artifacts.0.path" ;;
	read-artifact) echo "--artifact analyses/$ID.json --limit-bytes 300|artifact" ;;
	source) echo "--analysis-id $SID --file investigation/app.c --path-map /perflens=$REPO|files.0.recorded_path" ;;
	collect) echo "--mode stat --executable /bin/true --authorization $PHRASE --authorize-target $PHRASE|collection_id" ;;
	capabilities) echo "--authorize-target $PHRASE|perf_path" ;;
	classify) echo "--analysis-id $ID|candidates.0.candidate_id" ;;
	report) echo "--analysis-id $ID --problem slow --metric wall_time|path" ;;
	normalize-bench) echo "--path $REPO/fixtures/benchmarks/pyperf-baseline.json|benchmarks.0.name" ;;
	compare-bench) echo "--baseline-id $BB --candidate-id $BC|results.0.status" ;;
	compare) echo "--baseline-id $ID --candidate-id $ID --event cycles --min-delta-percent 0|functions.0.symbol" ;;
	elf) echo "--path /bin/true|build_id" ;;
	symbolize) echo "--binary /bin/true --offsets 0x2000|module.path" ;;
	*) echo "|" ;;
	esac
}
must_have_table=" analyze hotspots callpaths stat export hotspot threads artifacts read-artifact source collect capabilities classify report normalize-bench compare-bench compare elf symbolize "
is_json() { $PY -c 'import json,sys; json.load(open(sys.argv[1]))' "$1" 2>/dev/null; }

commands=$("$PERFLENS" --help | sed -n '/^commands:/,/^$/p' | awk 'NR > 1 && NF { print $1 }')
[ "$(echo "$commands" | wc -w)" -ge 19 ] || notok "perflens --help lists only: $commands"
for cmd in $commands; do
	spec=$(args "$cmd")
	a=${spec%|*} key=${spec#*|}
	# shellcheck disable=SC2086 # the arguments are words on purpose
	P "$cmd" $a --format table >"$WORK/t.out" 2>"$WORK/t.err"
	rc=$?
	if [ "$cmd" = collect ] && [ "$rc" -ne 0 ] && grep -q '"exit_code":[56]' "$WORK/t.err"; then
		skip "collect --format table: perf cannot run here: $(oneline "$WORK/t.err")"
		continue
	fi
	if [ "$rc" -eq 2 ] && [ ! -s "$WORK/t.out" ] && grep -q 'has no table' "$WORK/t.err"; then
		case "$must_have_table" in
		*" $cmd "*) notok "$cmd --format table: says it has no table, but it returns a list or verdict" ;;
		*) ok "$cmd --format table: says it has no table (exit 2), prints no JSON" ;;
		esac
		continue
	fi
	if [ "$rc" -ne 0 ]; then
		case "$must_have_table" in
		*" $cmd "*) notok "$cmd --format table: exit $rc: $(oneline "$WORK/t.err")" ;;
		*) [ ! -s "$WORK/t.out" ] && ok "$cmd --format table (no arguments known to the test): an error, no JSON (exit $rc)" ||
			notok "$cmd --format table: exit $rc with output $(oneline "$WORK/t.out")" ;;
		esac
		continue
	fi
	if [ ! -s "$WORK/t.out" ] || is_json "$WORK/t.out"; then
		notok "$cmd --format table: printed JSON or nothing: $(oneline "$WORK/t.out")"
		continue
	fi
	[ -z "$key" ] && { ok "$cmd --format table: a table, not JSON"; continue; }
	# The oracle: the same call's JSON, one of its values shown in the table.
	# collect runs once only (a second collection is a second run).
	if [ "$cmd" = collect ]; then
		want=$(grep -o 'collection [^ ]*' "$WORK/t.out" | head -1 | cut -d' ' -f2)
		[ -n "$want" ] && [ -d "$A/collections/$want" ] && ok "collect --format table: a table naming collection $want, which exists" ||
			notok "collect --format table: no collection named: $(oneline "$WORK/t.out")"
		continue
	fi
	# shellcheck disable=SC2086
	P "$cmd" $a >"$WORK/j.out" 2>/dev/null
	want=$(jget "$WORK/j.out" "$key" 2>/dev/null)
	if [ -n "$want" ] && grep -qF -- "$want" "$WORK/t.out"; then
		ok "$cmd --format table: a table, not JSON, showing $key '$want' as the JSON result has it"
	else
		notok "$cmd --format table: '$want' ($key of the JSON result) is not in the table: $(oneline "$WORK/t.out")"
	fi
done
# compare-bench names a pair whose names differ as baseline -> candidate.
P compare-bench --baseline-id "$BB" --baseline-name json_dumps --candidate-name json_loads --format table >"$WORK/t.out" 2>"$WORK/t.err" &&
	grep -q 'json_dumps -> json_loads' "$WORK/t.out" && grep -q 'paired explicit' "$WORK/t.out" &&
	ok "compare-bench table shows an explicit pair as 'json_dumps -> json_loads'" ||
	notok "compare-bench explicit pair table: $(oneline "$WORK/t.out") $(oneline "$WORK/t.err")"
