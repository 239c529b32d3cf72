# test_timeline.sh - sample times: get_timeline and list_hotspots' view.time
# against perf report --time on one recording, made here on this kernel.
#
# The two-phase workload (tests/workloads/phases.c: a() for 0.6 s, then
# b() for 0.6 s) is recorded once with `perf record -e cpu-clock -F 999
# -g` and analyzed twice, from `perf script` text and by the native
# perf.data reader; timeline_oracle.py then drives perflens-mcp over
# stdio as an agent would: perf report --time START,END on the same
# perf.data for two windows (every symbol >= 1% within 0.1 pp, the
# window's sample count equal), a()'s and b()'s function timelines in
# their halves, the busiest bucket's next step and its pages, folded
# input's refusal naming the inputs with times, and the PNG picture.
. tests/integration/lib.sh
name="timeline"
need_perf_record "$name"
if ! command -v gcc >/dev/null 2>&1; then
	skip "$name: gcc is not installed"
	exit 0
fi
mkdir -p "$WORK/art" "$WORK/in"
if ! gcc -O0 -g -fno-omit-frame-pointer -o "$WORK/phases" "$REPO/tests/workloads/phases.c" 2>"$WORK/err"; then
	notok "$name: gcc failed: $(oneline "$WORK/err")"
	exit 0
fi
data="$WORK/in/phases.data"
# -N: keep the throwaway binary out of ~/.debug
if ! perf record -e cpu-clock -F 999 -g -N -o "$data" -- "$WORK/phases" 600 >/dev/null 2>"$WORK/err" ||
	! perf script -i "$data" -F comm,pid,tid,time,event,period,ip,sym,symoff,dso \
		>"$WORK/in/phases.txt" 2>"$WORK/err"; then
	notok "$name: perf record/script failed: $(oneline "$WORK/err")"
	exit 0
fi
printf 'main;a 60\nmain;b 40\n' >"$WORK/in/two.folded"

# analyze FILE [READER] -> the analysis id, or nothing (error in $WORK/err)
analyze() {
	PERFLENS_PERF_DATA_READER=${2:-} "$PERFLENS" analyze --path "$1" --artifact-root "$WORK/art" 2>"$WORK/err" |
		python3 -c 'import json,sys; print(json.load(sys.stdin)["analysis_id"])' 2>>"$WORK/err"
}
text_id=$(analyze "$WORK/in/phases.txt")
native_id=$(analyze "$data" native)
if [ -z "$text_id" ] || [ -z "$native_id" ]; then
	notok "$name: analyze failed: $(oneline "$WORK/err")"
	exit 0
fi
reader=$(jget "$WORK/art/analyses/$native_id.json" provenance.inputs.0.reader)
[ "$reader" = native ] && ok "$name: the perf.data was read by the native reader" ||
	notok "$name: the perf.data was read by '$reader', not the native reader"
# The same input gives the same bytes, times included.
again=$(analyze "$WORK/in/phases.txt")
[ "$again" = "$text_id" ] && grep -q '"timed":{"first_ns"' "$WORK/art/analyses/$text_id.stacks.json" &&
	ok "$name: the stack table keeps the samples' times, the same id again ($text_id)" ||
	notok "$name: no timed table or another id ($again vs $text_id)"
export WORK
oracle "$name" python3 "$REPO/tests/integration/timeline_oracle.py" "$(cd "$BUILD" && pwd)/perflens-mcp" \
	"$WORK/art" "$data" "$text_id" "$native_id" "$WORK/in/two.folded"
