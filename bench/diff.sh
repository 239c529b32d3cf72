#!/bin/sh
# diff.sh - speed of compare_profiles against difffolded.pl | flamegraph.pl,
# timed in the same run.  A measurement, not a test: it prints figures, the
# ratio and whether the target was met, and exits 0 whatever they are (2 only
# when it cannot start).  See bench/README.md.
#
#   BUILD=/tmp/build-bench sh bench/diff.sh        (run.sh runs it too)
#
# Input: two folded profiles of BENCH_DIFF_STACKS unique stacks (default
# 100000): a baseline from the real captures in SHARED/peers/flamegraph
# (gen_inputs.py folded-unique, as bench 4 of run.sh) and a candidate varied
# from it (gen_inputs.py folded-vary: counts scaled, 5% of the stacks gone,
# 10% new).  Each is analyzed once (untimed; the time is printed).  Then:
#   perflens compare --baseline-id A --candidate-id B
#       the comparison, the folded diff and the differential SVG, written
#       atomically (fsync) under the artifact root;
#   perl difffolded.pl a.folded b.folded | perl flamegraph.pl > diff.svg
#       the peer's diff and differential SVG (its folded diff only piped).
# Target: perflens <= 1 s.
#
# Environment: BUILD, SHARED, BENCH_QUICK=1 (20000 stacks, one run),
# BENCH_DIFF_STACKS, BENCH_RUNS (default 3; quick 1), BENCH_TMPDIR,
# BENCH_KEEP=1, FLAMEGRAPH_DIR, FLAMEGRAPH_GIT: as for run.sh.
set -u

BUILD=${BUILD:-build}
REPO=$(pwd)
. "$REPO/bench/lib.sh"
bench_setup
if [ ! -d "$PEERDATA/test" ]; then
	echo "bench: $PEERDATA/test not found (set SHARED)" >&2
	exit 2
fi
if [ "${BENCH_QUICK:-0}" != 0 ]; then
	STACKS=${BENCH_DIFF_STACKS:-20000} RUNS=${BENCH_RUNS:-1}
else
	STACKS=${BENCH_DIFF_STACKS:-100000} RUNS=${BENCH_RUNS:-3}
fi
TARGET_S=1
PEER_ONCE_S=3   # a peer slower than this runs once

if [ -n "${BENCH_TMPDIR:-}" ]; then
	TMP=$BENCH_TMPDIR/diff
	mkdir -p "$TMP" || exit 2
else
	TMP=$(mktemp -d "${TMPDIR:-/tmp}/perflens-bench-diff.XXXXXX") || exit 2
fi
# shellcheck disable=SC2317  # called through trap
cleanup() {
	if [ -n "${BENCH_KEEP:-}" ]; then
		echo "bench: inputs kept in $TMP"
	else
		rm -rf "$TMP"
	fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM
mkdir -p "$TMP/base" "$TMP/art" "$TMP/out" "$TMP/peer"

calc() { awk "BEGIN { x = ($*); print x }"; }
fmt() { awk -v x="$2" "BEGIN { printf \"$1\", x }"; }
GNU_TIME=
if [ -x /usr/bin/time ] && /usr/bin/time --version 2>&1 | grep -q GNU; then
	GNU_TIME=/usr/bin/time
fi

# best RUNS MAX_S OUT CMD...: the lowest wall time of RUNS runs (stops
# repeating after a run slower than MAX_S); sets B_WALL, B_CPU (user+sys,
# "?" without GNU time), B_RSS (KiB or "?"), B_RUNS and B_RC.
best() {
	_runs=$1 _slow=$2 _out=$3
	shift 3
	B_WALL='' B_CPU='?' B_RSS='?' B_RUNS=0 B_RC=0
	while [ "$B_RUNS" -lt "$_runs" ]; do
		_t0=$(date +%s.%N)
		if [ -n "$GNU_TIME" ]; then
			"$GNU_TIME" -f '%U %S %M' -o "$TMP/time" "$@" > "$_out" 2> "$TMP/err"
		else
			"$@" > "$_out" 2> "$TMP/err"
		fi
		B_RC=$?
		_t1=$(date +%s.%N)
		B_RUNS=$((B_RUNS + 1))
		[ "$B_RC" -ne 0 ] && return
		_w=$(calc "$_t1 - $_t0")
		if [ -z "$B_WALL" ] || [ "$(calc "$_w < $B_WALL")" = 1 ]; then
			B_WALL=$_w
			if [ -n "$GNU_TIME" ]; then
				read -r _u _s _m <<-EOF
				$(tail -n 1 "$TMP/time")
				EOF
				B_CPU=$(calc "$_u + $_s") B_RSS=$_m
			fi
		fi
		[ "$(calc "$_w > $_slow")" = 1 ] && break
	done
}

# The peer scripts.
PEER=
if ! command -v perl > /dev/null 2>&1; then
	PEER_WHY="perl not found"
elif [ -n "${FLAMEGRAPH_DIR:-}" ]; then
	if [ -f "$FLAMEGRAPH_DIR/difffolded.pl" ] && [ -f "$FLAMEGRAPH_DIR/flamegraph.pl" ]; then
		PEER=$FLAMEGRAPH_DIR
	else
		PEER_WHY="no difffolded.pl and flamegraph.pl in FLAMEGRAPH_DIR=$FLAMEGRAPH_DIR"
	fi
elif git --git-dir="$FLAMEGRAPH_GIT" archive HEAD difffolded.pl flamegraph.pl 2>/dev/null | tar -x -C "$TMP/peer" 2>/dev/null &&
	[ -f "$TMP/peer/difffolded.pl" ]; then
	PEER=$TMP/peer
else
	PEER_WHY="FlameGraph scripts not found (set FLAMEGRAPH_DIR, or FLAMEGRAPH_GIT to a snapshot)"
fi

echo
echo "== diff: compare_profiles, ${STACKS} + ${STACKS} unique stacks"
echo "machine: $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg)"

# The real folded stacks: each capture analyzed and exported per event.
export_base_folded "$PL" "$TMP/art" "$TMP/base" "$PEERDATA/example-perf-stacks.txt.gz" "$PEERDATA"/test/*.txt
set -- "$TMP"/base/*.folded
if [ ! -f "$1" ]; then
	echo "error: could not export folded stacks of the real captures"
	exit 0
fi
A=$TMP/a.folded B=$TMP/b.folded
echo "baseline:  $($GEN folded-unique --out "$A" --stacks "$STACKS" "$@")"
echo "candidate: $($GEN folded-vary --input "$A" --out "$B")"
sync

analysis_id() { python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["analysis_id"])' "$1"; }
best 1 0 "$TMP/out/a.json" "$PL" analyze --input "$A" --input-format folded --artifact-root "$TMP/art"
AN_A=$B_WALL RC_A=$B_RC
best 1 0 "$TMP/out/b.json" "$PL" analyze --input "$B" --input-format folded --artifact-root "$TMP/art"
AN_B=$B_WALL
if [ "$RC_A" -ne 0 ] || [ "$B_RC" -ne 0 ]; then
	echo "error: analyze failed: $(head -c 300 "$TMP/err")"
	exit 0
fi
IA=$(analysis_id "$TMP/out/a.json") IB=$(analysis_id "$TMP/out/b.json")
echo "perflens analyze (untimed setup): $(fmt %.2f "$AN_A") s + $(fmt %.2f "$AN_B") s"

best "$RUNS" 20 "$TMP/out/cmp.json" "$PL" compare --baseline-id "$IA" --candidate-id "$IB" --artifact-root "$TMP/art"
if [ "$B_RC" -ne 0 ]; then
	echo "error: perflens compare exited $B_RC: $(head -c 400 "$TMP/err")"
	exit 0
fi
PL_WALL=$B_WALL
SVG=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["exports"]["svg"]["path"])' "$TMP/out/cmp.json")
FOLDED=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["exports"]["folded_diff"]["path"])' "$TMP/out/cmp.json")
echo "perflens compare:        $(fmt %.3f "$PL_WALL") s wall, $B_CPU s cpu, peak RSS $B_RSS KiB, $B_RUNS run(s); folded diff $(wc -l < "$FOLDED") lines, $(wc -c < "$FOLDED") bytes; svg $(wc -c < "$SVG") bytes, $(grep -c '<rect' "$SVG") rects"
if [ -n "$PEER" ]; then
	PEER_CMD="perl '$PEER/difffolded.pl' '$A' '$B' | perl '$PEER/flamegraph.pl'"
	best 1 0 "$TMP/out/peer.svg" sh -c "$PEER_CMD"
	[ "$B_RC" -eq 0 ] && [ "$(calc "$B_WALL <= $PEER_ONCE_S")" = 1 ] &&
		best "$RUNS" "$PEER_ONCE_S" "$TMP/out/peer.svg" sh -c "$PEER_CMD"
	if [ "$B_RC" -ne 0 ]; then
		echo "error: difffolded.pl | flamegraph.pl exited $B_RC: $(head -c 300 "$TMP/err")"
	else
		echo "difffolded | flamegraph: $(fmt %.3f "$B_WALL") s wall, $B_CPU s cpu, peak RSS $B_RSS KiB, $B_RUNS run(s); svg $(wc -c < "$TMP/out/peer.svg") bytes, $(grep -c '<rect' "$TMP/out/peer.svg") rects"
		RATIO=$(fmt %.1f "$(calc "$B_WALL / $PL_WALL")")
		echo "diff + differential svg: perflens $(fmt %.2f "$PL_WALL") s, difffolded.pl | flamegraph.pl $(fmt %.2f "$B_WALL") s, ratio ${RATIO}x (target perflens <= $TARGET_S s): $( [ "$(calc "$PL_WALL <= $TARGET_S")" = 1 ] && echo met || echo MISSED)"
		echo "  with both analyses: perflens $(fmt %.2f "$(calc "$AN_A + $AN_B + $PL_WALL")") s from the two folded files"
	fi
else
	echo "skip: the peer: $PEER_WHY"
	echo "diff + differential svg: perflens $(fmt %.2f "$PL_WALL") s (target <= $TARGET_S s): $( [ "$(calc "$PL_WALL <= $TARGET_S")" = 1 ] && echo met || echo MISSED)"
fi
exit 0
