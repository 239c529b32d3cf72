# lib.sh - what the bench scripts share (sourced, POSIX sh).

# export_base_folded PL ART OUT FILE...: analyze each real capture FILE with
# the perflens CLI PL (artifacts under ART) and export every event of it as
# folded stacks into OUT/NAME.EVENT.folded.  A capture that does not
# analyze is passed over; the caller checks that OUT holds files.
export_base_folded() {
	_pl=$1 _art=$2 _out=$3
	shift 3
	mkdir -p "$_out"
	for _f in "$@"; do
		[ -f "$_f" ] || continue
		_n=$(basename "$_f" .gz)
		_n=${_n%.txt}
		"$_pl" analyze --input "$_f" --artifact-root "$_art" > "$_out/an.json" 2> /dev/null || continue
		python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
print(d["analysis_id"])
for e in d["events"]: print(e["name"])' "$_out/an.json" > "$_out/events"
		_id=$(head -n 1 "$_out/events")
		tail -n +2 "$_out/events" | while IFS= read -r _ev; do
			"$_pl" export --analysis-id "$_id" --artifact-root "$_art" --format folded \
				--event "$_ev" --output "$_out/$_n.$(printf '%s' "$_ev" | tr -c 'A-Za-z0-9' _).folded" > /dev/null 2>&1
		done
	done
}

# bench_setup: what every bench starts with (BUILD and REPO set): SHARED,
# PEERDATA, FLAMEGRAPH_GIT and GEN, and PL, the perflens of $BUILD (exit 2
# when it is not built).
bench_setup() {
	SHARED=${SHARED:-$(cd .. && pwd)/shared}
	PEERDATA=$SHARED/peers/flamegraph
	FLAMEGRAPH_GIT=${FLAMEGRAPH_GIT:-/work/.mirror/brendangregg+FlameGraph/repo}
	GEN="python3 $REPO/bench/gen_inputs.py"
	if [ ! -x "$BUILD/perflens" ]; then
		echo "bench: $BUILD/perflens not found: build first (make BUILD=$BUILD)" >&2
		exit 2
	fi
	PL=$(cd "$BUILD" && pwd)/perflens
}
