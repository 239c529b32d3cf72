#!/bin/sh
# perf_data.sh - perf.data read natively vs perf, timed in the same run.
#
# For a ~6 MB and a >= 100 MB frame-pointer recording (cpu-clock, of the
# test workloads, made here unless given): `perflens analyze` (the native
# reader) against `perf report --stdio` and against the perf script text
# path (PERFLENS_PERF_DATA_READER=perf-script), with peak RSS, and a bare
# walk of the records (bench/perf_data_walk.c) as the floor.  Prints the
# figures and the ratios against the targets (>= 5x perf report, >= 10x
# the perf script path).  A measurement, not a test: exits 0 whatever
# the figures.
#
#   BUILD=/tmp/b sh bench/perf_data.sh
# Environment: BENCH_PD_SMALL, BENCH_PD_BIG (existing recordings to use),
# BENCH_RUNS (best of, default 3), BENCH_TMPDIR (where recordings go;
# kept), BENCH_PD_BIG_SECONDS (seconds recorded for the big one, default
# 40, at 40 kHz).
set -u
BUILD=${BUILD:-build}
REPO=$(pwd)
PL=$(cd "$BUILD" && pwd)/perflens
RUNS=${BENCH_RUNS:-3}
TMP=${BENCH_TMPDIR:-/tmp/perflens-bench-pd}
mkdir -p "$TMP/art"
if ! command -v perf >/dev/null 2>&1 || [ ! -x "$PL" ]; then
	echo "perf_data bench: needs perf and $PL" >&2
	exit 2
fi
WALK="$TMP/perf_data_walk"
cc -O2 -Itools/core -I. -o "$WALK" bench/perf_data_walk.c "$BUILD/libperflens.a" \
	$(pkg-config --libs libzstd libelf libdw jansson zlib nettle) -lm -lpthread || exit 2

# record FILE SECONDS FREQ: a frame-pointer recording of the test
# workloads (fib's deep recursion, libc string calls, two threads) run in
# two loops for SECONDS, so both CPUs are busy.
for w in fib libc_strings threads; do
	[ -x "$TMP/$w" ] || gcc -O1 -g -fno-omit-frame-pointer -o "$TMP/$w" "tests/workloads/$w.c" -lpthread || exit 2
done
record() {
	[ -s "$1" ] && return 0
	echo "# recording $1: perf record -e cpu-clock -F $3 -g, $2 s of the workloads" >&2
	perf record -e cpu-clock -F "$3" -g -N -o "$1" -- sh -c "
		end=\$((\$(date +%s) + $2))
		while [ \$(date +%s) -lt \$end ]; do '$TMP/fib'; '$TMP/threads'; done &
		while [ \$(date +%s) -lt \$end ]; do '$TMP/libc_strings'; done
		wait" >/dev/null 2>&1
}
SMALL=${BENCH_PD_SMALL:-$TMP/small.data}
BIG=${BENCH_PD_BIG:-$TMP/big.data}
record "$SMALL" 6 5000
record "$BIG" "${BENCH_PD_BIG_SECONDS:-40}" 40000

# best CMD...: the best wall time of $RUNS runs (seconds) and the peak RSS
# of that run (MB), as "SECONDS MB".
best() {
	b=""
	for i in $(seq "$RUNS"); do
		/usr/bin/time -f "%e %M" -o "$TMP/time" "$@" >/dev/null 2>"$TMP/err" || { echo "fail fail"; return; }
		set -- "$@"
		t=$(cut -d' ' -f1 "$TMP/time") m=$(cut -d' ' -f2 "$TMP/time")
		if [ -z "$b" ] || [ "$(echo "$t < $b" | bc -l)" = 1 ]; then b=$t bm=$m; fi
	done
	echo "$b $((bm / 1024))"
}
ratio() { python3 -c 'import sys; a, b = float(sys.argv[1]), float(sys.argv[2]); print("%.1fx" % (a / b) if b > 0 else "inf")' "$1" "$2"; }

for f in "$SMALL" "$BIG"; do
	mb=$(( $(stat -c %s "$f") / 1000000 ))
	walk=$(best "$WALK" "$f")
	nat=$(env PERFLENS_PERF_DATA_READER=native "$PL" analyze --path "$f" --artifact-root "$TMP/art" \
		>/dev/null 2>&1 && best env PERFLENS_PERF_DATA_READER=native "$PL" analyze --path "$f" --artifact-root "$TMP/art")
	txt=$(best env PERFLENS_PERF_DATA_READER=perf-script "$PL" analyze --path "$f" --artifact-root "$TMP/art")
	rep=$(best perf report -i "$f" --stdio)
	set -- $walk; walk_t=$1
	set -- $nat; nat_t=$1 nat_m=$2
	set -- $txt; txt_t=$1 txt_m=$2
	set -- $rep; rep_t=$1 rep_m=$2
	echo "perf.data $(basename "$f") ($mb MB, $("$WALK" "$f")):"
	echo "  record walk (floor)            ${walk_t} s"
	echo "  perflens analyze (native)      ${nat_t} s  ${nat_m} MB peak RSS"
	echo "  perflens analyze (perf script) ${txt_t} s  ${txt_m} MB peak RSS"
	echo "  perf report --stdio            ${rep_t} s  ${rep_m} MB peak RSS"
	echo "  native vs perf report: $(ratio "$rep_t" "$nat_t") (target >= 5x); vs the perf script path: $(ratio "$txt_t" "$nat_t") (target >= 10x); native / floor: $(ratio "$nat_t" "$walk_t")"
done
