#!/bin/sh
# formats.sh - speed of the issue-18 paths: the pprof reader against
# `go tool pprof -top`, and a PNG flame graph of 100k unique stacks.
# Measurements, not tests: figures and whether a target was met; exit 0.
#
#   BUILD=/tmp/x sh bench/formats.sh      (run.sh runs it at its end)
#
#   1. pprof input: bench/gen_pprof.py writes a Go-shaped CPU profile of
#      BENCH_PPROF_MB (default 10) gzipped MB; `perflens analyze` (parse,
#      aggregate, write the analysis) against `go tool pprof -top` on the
#      same file.  Target: >= 5x.
#   2. PNG: 100k unique stacks (gen_inputs.py folded-unique from the
#      FlameGraph test captures, as bench 4 of run.sh); `perflens export
#      --format png` (load the analysis, fold, lay out, draw, encode, write).
#      Target: <= 0.5 s.
# Each is the best of BENCH_RUNS (default 3) runs; wall and cpu (user +
# sys) both printed, since a shared machine's load stretches wall time.
set -u
BUILD=${BUILD:-build}
REPO=$(pwd)
. "$REPO/bench/lib.sh"
bench_setup
RUNS=${BENCH_RUNS:-3}
TMP=$(mktemp -d "${TMPDIR:-/tmp}/perflens-bench-formats.XXXXXX") || exit 2
trap 'rm -rf "$TMP"' EXIT
calc() { awk "BEGIN { x = ($*); print x }"; }
# best N CMD...: B_WALL and B_CPU, the least of N runs (stdout to $TMP/out).
best() {
	_n=$1
	shift
	B_WALL='' B_CPU='' B_RC=0
	for _i in $(seq "$_n"); do
		/usr/bin/time -f '%e %U %S' -o "$TMP/t" "$@" >"$TMP/out" 2>"$TMP/err" || { B_RC=$?; return; }
		read -r _w _u _s <"$TMP/t"
		_c=$(calc "$_u + $_s")
		{ [ -z "$B_WALL" ] || [ "$(calc "$_w < $B_WALL")" = 1 ]; } && B_WALL=$_w
		{ [ -z "$B_CPU" ] || [ "$(calc "$_c < $B_CPU")" = 1 ]; } && B_CPU=$_c
	done
}
verdict() { [ "$(calc "$1")" = 1 ] && echo met || echo MISSED; }

echo "== formats 1. pprof input (Go-shaped CPU profile, ${BENCH_PPROF_MB:-10} MB gzipped)"
python3 "$REPO/bench/gen_pprof.py" "$TMP/cpu.pb.gz" "${BENCH_PPROF_MB:-10}"
best "$RUNS" "$PL" analyze --input "$TMP/cpu.pb.gz" --artifact-root "$TMP/art"
if [ "$B_RC" -ne 0 ]; then
	echo "error: perflens analyze exited $B_RC: $(head -c 300 "$TMP/err")"
else
	PW=$B_WALL PC=$B_CPU
	echo "perflens analyze:      $PW s wall, $PC s cpu"
	if command -v go >/dev/null 2>&1; then
		best 1 env HOME="$TMP" GOCACHE="$TMP/gocache" go tool pprof -top "$TMP/cpu.pb.gz"
		if [ "$B_RC" -ne 0 ]; then
			echo "error: go tool pprof exited $B_RC: $(head -c 300 "$TMP/err")"
		else
			echo "go tool pprof -top:    $B_WALL s wall, $B_CPU s cpu (once)"
			echo "pprof input: ratio $(awk -v a="$B_WALL" -v b="$PW" 'BEGIN{printf "%.1f", a/b}')x wall, $(awk -v a="$B_CPU" -v b="$PC" 'BEGIN{printf "%.1f", a/b}')x cpu (target >= 5x): $(verdict "$B_WALL / $PW >= 5")"
		fi
	else
		echo "skip: go tool pprof: go is not installed"
	fi
fi

echo "== formats 2. PNG flame graph (100000 unique stacks)"
if [ ! -d "$PEERDATA/test" ]; then
	echo "skip: $PEERDATA/test is absent (the FlameGraph captures the stacks come from)"
	exit 0
fi
export_base_folded "$PL" "$TMP/art" "$TMP/fb" "$PEERDATA/example-perf-stacks.txt.gz" "$PEERDATA"/test/*.txt
python3 "$REPO/bench/gen_inputs.py" folded-unique --out "$TMP/u.folded" --stacks 100000 "$TMP"/fb/*.folded
"$PL" analyze --input "$TMP/u.folded" --artifact-root "$TMP/art" >"$TMP/an.json" 2>"$TMP/err" ||
	{ echo "error: analyze: $(head -c 300 "$TMP/err")"; exit 0; }
ID=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["analysis_id"])' "$TMP/an.json")
best "$RUNS" "$PL" export --analysis-id "$ID" --format png --artifact-root "$TMP/art"
if [ "$B_RC" -ne 0 ]; then
	echo "error: export png exited $B_RC: $(head -c 300 "$TMP/err")"
else
	echo "perflens export png:   $B_WALL s wall, $B_CPU s cpu; $(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); p=d["picture"]; print("%d bytes, %dx%d, %d frames, %d levels cut" % (d["bytes"], p["width"], p["height"], p["frames"], p["levels_cut"]))' "$TMP/out")"
	echo "png: $B_WALL s wall, $B_CPU s cpu (target <= 0.5 s): wall $(verdict "$B_WALL <= 0.5"), cpu $(verdict "$B_CPU <= 0.5")"
fi
exit 0
