#!/bin/sh
# formats.sh - speed of the issue-18 paths: the pprof reader against
# `go tool pprof -top`, and a PNG flame graph of 100k unique stacks.
# Measurements, not tests: figures and whether a target was met; exit 0.
#
#   BUILD=/tmp/x sh bench/formats.sh      (run.sh runs it at its end)
#
#   1. pprof input: a REAL Go CPU profile of BENCH_PPROF_MB (default 10)
#      gzipped MB: bench/gen_go_cpu.py writes a Go program of many call
#      paths (its header says how), built with Debian's golang-go; it
#      profiles itself with runtime/pprof at 1000 Hz in rounds of
#      BENCH_GO_ROUND s (default 30) until the rounds hold the size, and
#      `go tool pprof -proto` merges them into one profile (Go's own tool:
#      every sample, location and label is runtime/pprof's).  The kernel
#      delivers CPU-timer signals at its tick, some 265 a CPU-second
#      here (whatever the rate asked), and a merged sample takes ~80
#      gzipped bytes, so 10 MB is ~130,000 samples, ~500 CPU-seconds (50
#      rounds, 27 minutes at a load of 12-14): the file is kept in
#      BENCH_GO_CACHE (default $BUILD/bench-go) for the next run.  `perflens analyze` (parse,
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

# go_profile OUT: the cached real Go CPU profile of BENCH_PPROF_MB MB, made
# when missing (see 1. above); non-zero when it cannot be made.
go_profile() (
	_mb=${BENCH_PPROF_MB:-10}
	_dir=${BENCH_GO_CACHE:-$BUILD/bench-go}
	_want=$((_mb * 1000000))
	_out="$_dir/go-cpu-${_mb}mb.pb.gz"
	[ -s "$_out" ] && { ln -sf "$_out" "$1"; return 0; }
	mkdir -p "$_dir/rounds" && python3 "$REPO/bench/gen_go_cpu.py" "$_dir/src" || return 1
	export HOME="$_dir" GOCACHE="$_dir/gocache" GOFLAGS=-mod=mod GOPROXY=off
	(cd "$_dir/src" && go build -o "$_dir/prof" main.go) || return 1
	_t0=$(date +%s)
	_keep=100   # percent of the rounds' bytes the merged profile keeps
	while :; do
		while _have=$(cat "$_dir"/rounds/*.pb.gz 2>/dev/null | wc -c) &&
			[ $((_have * _keep / 100)) -lt "$_want" ]; do
			_n=$(ls "$_dir/rounds" | wc -l)
			"$_dir/prof" "$_dir/rounds/r$_n.pb.gz" 1000 "${BENCH_GO_ROUND:-30}" 2 2>/dev/null || return 1
		done
		# Merging shares the tables the rounds repeat: the result is
		# smaller than their sum; more rounds until it holds the size.
		go tool pprof -proto "$_dir"/rounds/*.pb.gz >"$_out.tmp" 2>"$_dir/merge.err" || return 1
		_size=$(stat -c %s "$_out.tmp")
		[ "$_size" -ge "$_want" ] && break
		_keep=$((_size * 100 / _have))
	done
	mv "$_out.tmp" "$_out" && ln -sf "$_out" "$1"
	echo "made $_out in $(($(date +%s) - _t0)) s: $(ls "$_dir/rounds" | wc -l) rounds of runtime/pprof at 1000 Hz, merged by go tool pprof -proto"
)

echo "== formats 1. pprof input (a real Go CPU profile, ${BENCH_PPROF_MB:-10} MB gzipped)"
if ! command -v go >/dev/null 2>&1; then
	echo "skip: pprof input: go is not installed (golang-go)"
elif ! go_profile "$TMP/cpu.pb.gz"; then
	echo "error: the Go CPU profile could not be made (see ${BENCH_GO_CACHE:-$BUILD/bench-go})"
else
	echo "profile: $(stat -L -c %s "$TMP/cpu.pb.gz") bytes"
	best "$RUNS" "$PL" analyze --input "$TMP/cpu.pb.gz" --artifact-root "$TMP/art"
	if [ "$B_RC" -ne 0 ]; then
		echo "error: perflens analyze exited $B_RC: $(head -c 300 "$TMP/err")"
	else
		PW=$B_WALL PC=$B_CPU
		echo "perflens analyze:      $PW s wall, $PC s cpu"
		best 1 env HOME="$TMP" GOCACHE="$TMP/gocache" go tool pprof -top "$TMP/cpu.pb.gz"
		if [ "$B_RC" -ne 0 ]; then
			echo "error: go tool pprof exited $B_RC: $(head -c 300 "$TMP/err")"
		else
			echo "go tool pprof -top:    $B_WALL s wall, $B_CPU s cpu (once)"
			echo "pprof input: ratio $(awk -v a="$B_WALL" -v b="$PW" 'BEGIN{printf "%.1f", a/b}')x wall, $(awk -v a="$B_CPU" -v b="$PC" 'BEGIN{printf "%.1f", a/b}')x cpu (target >= 5x): $(verdict "$B_WALL / $PW >= 5")"
		fi
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
