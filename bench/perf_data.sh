#!/bin/sh
# perf_data.sh - perf.data read natively vs perf, timed in the same run.
#
# For a ~6 MB and a >= 100 MB frame-pointer recording (cpu-clock, of the
# test workloads, made here unless given): `perflens analyze` (the native
# reader) against `perf report --stdio` and against the perf script text
# path (PERFLENS_PERF_DATA_READER=perf-script), with peak RSS, and a bare
# walk of the records (bench/perf_data_walk.c) as the floor.  Prints the
# load, the figures and the ratios against the targets (>= 5x perf
# report, >= 10x the perf script path).  Then peak RSS of one process
# recorded to 6 and to 60 MB, with its distinct stacks and raw call
# chains: what memory follows instead of the file's size.  A measurement,
# not a test: exits 0 whatever the figures.
#
# The recordings are sized, not timed: cpu-clock samples only the CPU
# time the workloads get, so on a loaded VM a timed recording comes out
# a fraction of its size (6 s at 5 kHz gave 1.9 MB at load 8).  perf
# record --max-size stops each at its size; the seconds are only a cap.
#
#   BUILD=/tmp/b sh bench/perf_data.sh
# Environment: BENCH_PD_SMALL, BENCH_PD_BIG (existing recordings to use),
# BENCH_RUNS (best of, default 5), BENCH_TMPDIR (where recordings go;
# kept), BENCH_PD_SMALL_MB / BENCH_PD_BIG_MB (sizes recorded, MiB,
# default 6 and 110, at 5 and 40 kHz), BENCH_PD_CAP_SECONDS (longest a
# recording may run, default 400).
set -u
BUILD=${BUILD:-build}
REPO=$(pwd)
PL=$(cd "$BUILD" && pwd)/perflens
RUNS=${BENCH_RUNS:-5}
TMP=${BENCH_TMPDIR:-/tmp/perflens-bench-pd}
mkdir -p "$TMP/art"
if ! command -v perf >/dev/null 2>&1 || [ ! -x "$PL" ]; then
	echo "perf_data bench: needs perf and $PL" >&2
	exit 2
fi
WALK="$TMP/perf_data_walk"
cc -O2 -Itools/core -I. -o "$WALK" bench/perf_data_walk.c "$BUILD/libperflens.a" \
	$(pkg-config --libs libzstd libelf libdw jansson zlib nettle) -lm -lpthread || exit 2

# record FILE MIB FREQ: a frame-pointer recording of the test workloads
# (fib's deep recursion, libc string calls, two threads) run in two loops,
# so both CPUs are busy, until perf has written MIB of data (or the cap).
for w in fib libc_strings threads; do
	[ -x "$TMP/$w" ] || gcc -O1 -g -fno-omit-frame-pointer -o "$TMP/$w" "tests/workloads/$w.c" -lpthread || exit 2
done
CAP=${BENCH_PD_CAP_SECONDS:-400}
record() {
	[ -s "$1" ] && return 0
	echo "# recording $1: perf record -e cpu-clock -F $3 -g --max-size ${2}M (at most $CAP s) of the workloads" >&2
	# perf stops the workload with SIGTERM at the size: the loops go too.
	perf record -e cpu-clock -F "$3" -g -N --max-size "${2}M" -o "$1" -- sh -c "
		end=\$((\$(date +%s) + $CAP))
		while [ \$(date +%s) -lt \$end ]; do '$TMP/fib'; '$TMP/threads'; done & a=\$!
		while [ \$(date +%s) -lt \$end ]; do '$TMP/libc_strings'; done & b=\$!
		trap 'kill \$a \$b' TERM
		wait" >/dev/null 2>&1
}
# record_app FILE MIB: one long-running process (the investigation app,
# six threads) until perf has written MIB: its stacks stop growing once
# its paths were all seen, whatever the length, which the loops above
# (a new pid per run, so new stacks) never do.
[ -x "$TMP/app" ] || gcc -O1 -g -fno-omit-frame-pointer -pthread -o "$TMP/app" tests/workloads/investigation/app.c || exit 2
record_app() {
	[ -s "$1" ] && return 0
	echo "# recording $1: perf record -e cpu-clock -F 5000 -g --max-size ${2}M of one app process" >&2
	perf record -e cpu-clock -F 5000 -g -N --max-size "${2}M" -o "$1" -- "$TMP/app" "$CAP" >/dev/null 2>&1
}
SMALL=${BENCH_PD_SMALL:-$TMP/small.data}
BIG=${BENCH_PD_BIG:-$TMP/big.data}
record "$SMALL" "${BENCH_PD_SMALL_MB:-6}" 5000
record "$BIG" "${BENCH_PD_BIG_MB:-110}" 40000
echo "# load average: $(cut -d' ' -f1-3 /proc/loadavg) ($(nproc) CPUs)"

# best CMD...: the best wall time of $RUNS runs (seconds), the peak RSS
# of that run (MB) and the best cpu time (user+sys, seconds), as "SECONDS
# MB CPU".  On a loaded VM the cpu time is the steadier figure.  Timed by
# wait4's rusage (microseconds; /usr/bin/time prints 10 ms steps, too
# coarse for the small file).
best() {
	python3 - "$RUNS" "$@" <<'PY' 2>"$TMP/err"
import os, subprocess, sys, time
runs, cmd = int(sys.argv[1]), sys.argv[2:]
best = None
for _ in range(runs):
    t0 = time.monotonic()
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.monotonic() - t0
    if status != 0:
        print("fail fail fail")
        sys.exit(0)
    cpu = ru.ru_utime + ru.ru_stime
    if best is None or wall < best[0]:
        best = [wall, ru.ru_maxrss // 1024, min(cpu, best[2]) if best else cpu]
    best[2] = min(best[2], cpu)
print("%.3f %d %.3f" % tuple(best))
PY
}
ratio() { python3 -c 'import sys; a, b = float(sys.argv[1]), float(sys.argv[2]); print("%.1fx" % (a / b) if b > 0 else "inf")' "$1" "$2"; }

for f in "$SMALL" "$BIG"; do
	mb=$(( $(stat -c %s "$f") / 1000000 ))
	walk=$(best "$WALK" "$f")
	nat=$(env PERFLENS_PERF_DATA_READER=native "$PL" analyze --path "$f" --artifact-root "$TMP/art" \
		>/dev/null 2>&1 && best env PERFLENS_PERF_DATA_READER=native "$PL" analyze --path "$f" --artifact-root "$TMP/art")
	txt=$(best env PERFLENS_PERF_DATA_READER=perf-script "$PL" analyze --path "$f" --artifact-root "$TMP/art")
	rep=$(best perf report -i "$f" --stdio)
	set -- $walk; walk_t=$1 walk_c=$3
	set -- $nat; nat_t=$1 nat_m=$2 nat_c=$3
	set -- $txt; txt_t=$1 txt_m=$2 txt_c=$3
	set -- $rep; rep_t=$1 rep_m=$2 rep_c=$3
	echo "perf.data $(basename "$f") ($mb MB, $("$WALK" "$f")), load $(cut -d' ' -f1 /proc/loadavg):"
	echo "  record walk (floor)            ${walk_t} s wall  ${walk_c} s cpu"
	echo "  perflens analyze (native)      ${nat_t} s wall  ${nat_c} s cpu  ${nat_m} MB peak RSS"
	echo "  perflens analyze (perf script) ${txt_t} s wall  ${txt_c} s cpu  ${txt_m} MB peak RSS"
	echo "  perf report --stdio            ${rep_t} s wall  ${rep_c} s cpu  ${rep_m} MB peak RSS"
	echo "  wall: native vs perf report $(ratio "$rep_t" "$nat_t") (target >= 5x), vs the perf script path $(ratio "$txt_t" "$nat_t") (target >= 10x), native / floor $(ratio "$nat_t" "$walk_t")"
	echo "  cpu:  native vs perf report $(ratio "$rep_c" "$nat_c"), vs the perf script path $(ratio "$txt_c" "$nat_c"), native / floor $(ratio "$nat_c" "$walk_c")"
done

# Peak RSS against file size: one process recorded to 6 and 60 MB.  The
# profile keeps a stack per distinct (thread, frames) and the caller check
# a site per distinct raw call chain, so RSS follows those counts (printed
# by perf_data_walk --counts), not the number of samples.
APP6=$TMP/app6.data APP60=$TMP/app60.data
record_app "$APP6" 6
record_app "$APP60" 60
for f in "$APP6" "$APP60"; do
	env PERFLENS_PERF_DATA_READER=native "$PL" analyze --path "$f" --artifact-root "$TMP/art" >/dev/null 2>&1
	set -- $(best env PERFLENS_PERF_DATA_READER=native "$PL" analyze --path "$f" --artifact-root "$TMP/art")
	eval "rss_$(basename "$f" .data)=$2"
	echo "perf.data $(basename "$f") ($(( $(stat -c %s "$f") / 1000000 )) MB, $("$WALK" "$f"), $("$WALK" --counts "$f")): native peak RSS $2 MB"
done
echo "  peak RSS 60 MB / 6 MB of one process: $(ratio "$rss_app60" "$rss_app6") for $(ratio "$(stat -c %s "$APP60")" "$(stat -c %s "$APP6")") the file"
