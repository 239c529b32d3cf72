#!/bin/sh
# perf_data_dwarf.sh - --call-graph dwarf perf.data read natively (libdw
# unwinding, tools/core/perfdata/pdunwind.c) vs perf, timed in the same
# run.  Recordings made here unless given: the test workloads built
# without frame pointers (depth, libc_strings, threads, forks: -O2
# -fomit-frame-pointer) run in a loop until perf has written
# BENCH_PD_DWARF_MB (default 30 MiB, -F 2000), and one python3 process
# (its interpreter, libc, libm, extension modules; 770-ish samples at
# -F 2000).  For each: `perflens analyze` (native) against the perf
# script text path (PERFLENS_PERF_DATA_READER=perf-script) and `perf
# report --stdio` (default: inline frames by addr2line; and with
# --no-inline), median wall and cpu of BENCH_RUNS (5), and the ratios
# against the targets (>= 5x perf report, >= 10x the perf script path).
# A measurement, not a test: exits 0 whatever the figures.
#
#   BUILD=/tmp/b sh bench/perf_data_dwarf.sh
# Environment: BENCH_PD_DWARF (recordings to use instead, space separated),
# BENCH_RUNS, BENCH_TMPDIR (kept), BENCH_PD_DWARF_MB, BENCH_BASE (another
# build's perflens, say main's: timed in the same run, native only, as
# the "before" of a change).
set -u
BUILD=${BUILD:-build}
PL=$(cd "$BUILD" && pwd)/perflens
RUNS=${BENCH_RUNS:-5}
TMP=${BENCH_TMPDIR:-/tmp/perflens-bench-pd-dwarf}
mkdir -p "$TMP/art"
if ! command -v perf >/dev/null 2>&1 || [ ! -x "$PL" ]; then
	echo "perf_data_dwarf bench: needs perf and $PL" >&2
	exit 2
fi
for w in depth libc_strings threads forks; do
	[ -x "$TMP/$w" ] || gcc -O2 -g -fomit-frame-pointer -pthread -o "$TMP/$w" "tests/workloads/$w.c" || exit 2
done
MB=${BENCH_PD_DWARF_MB:-30}
if [ -z "${BENCH_PD_DWARF:-}" ]; then
	if [ ! -s "$TMP/nofp.data" ]; then
		echo "# recording $TMP/nofp.data: perf record -e cpu-clock -F 2000 --call-graph dwarf --max-size ${MB}M" >&2
		perf record -e cpu-clock -F 2000 --call-graph dwarf -N --max-size "${MB}M" -o "$TMP/nofp.data" -- sh -c "
			end=\$((\$(date +%s) + 300))
			while [ \$(date +%s) -lt \$end ]; do '$TMP/depth'; '$TMP/threads'; '$TMP/forks'; done & a=\$!
			while [ \$(date +%s) -lt \$end ]; do '$TMP/libc_strings'; done & b=\$!
			trap 'kill \$a \$b' TERM
			wait" >/dev/null 2>&1
	fi
	py=$(command -v python3)
	py=$(readlink -f "$py")
	if [ ! -s "$TMP/python.data" ] && [ -x "$py" ]; then
		perf record -e cpu-clock -F 2000 --call-graph dwarf -N -o "$TMP/python.data" -- "$py" -c '
import json, re
d = [{"a": i, "b": str(i) * 3} for i in range(20000)]
for k in range(12):
    s = json.dumps(d); json.loads(s); re.findall(r"\d+", s)
' >/dev/null 2>&1
	fi
	set -- "$TMP/nofp.data" "$TMP/python.data"
else
	set -- $BENCH_PD_DWARF
fi
echo "# load average: $(cut -d' ' -f1-3 /proc/loadavg) ($(nproc) CPUs)"

# med CMD...: "WALL MB CPU", the medians of wall and cpu time and the
# largest peak RSS of $RUNS runs: the machine is shared, so a median says
# more than a best run.
med() {
	python3 - "$RUNS" "$@" <<'PY' 2>"$TMP/err"
import os, statistics, subprocess, sys, time
runs, cmd = int(sys.argv[1]), sys.argv[2:]
walls, cpus, rss = [], [], 0
for _ in range(runs):
    t0 = time.monotonic()
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, ru = os.wait4(p.pid, 0)
    walls.append(time.monotonic() - t0)
    if status != 0:
        print("fail fail fail")
        sys.exit(0)
    cpus.append(ru.ru_utime + ru.ru_stime)
    rss = max(rss, ru.ru_maxrss // 1024)
print("%.3f %d %.3f" % (statistics.median(walls), rss, statistics.median(cpus)))
PY
}
ratio() { python3 -c 'import sys; a, b = float(sys.argv[1]), float(sys.argv[2]); print("%.1fx" % (a / b) if b > 0 else "inf")' "$1" "$2"; }

for f in "$@"; do
	[ -s "$f" ] || continue
	samples=$(perf script -i "$f" -F tid -G 2>/dev/null | wc -l)
	nat=$(med env PERFLENS_PERF_DATA_READER=native "$PL" analyze --path "$f" --artifact-root "$TMP/art")
	txt=$(med env PERFLENS_PERF_DATA_READER=perf-script "$PL" analyze --path "$f" --artifact-root "$TMP/art")
	rep=$(med perf report -i "$f" --stdio)
	rni=$(med perf report -i "$f" --stdio --no-inline)
	base=""
	[ -n "${BENCH_BASE:-}" ] && base=$(med env PERFLENS_PERF_DATA_READER=native "$BENCH_BASE" analyze --path "$f" --artifact-root "$TMP/art-base")
	set -- $nat; nat_t=$1 nat_m=$2 nat_c=$3
	set -- $txt; txt_t=$1 txt_c=$3
	set -- $rep; rep_t=$1 rep_c=$3
	set -- $rni; rni_t=$1 rni_c=$3
	echo "perf.data $(basename "$f") ($(( $(stat -c %s "$f") / 1000000 )) MB, $samples samples), load $(cut -d' ' -f1 /proc/loadavg):"
	echo "  perflens analyze (native)      ${nat_t} s wall  ${nat_c} s cpu  ${nat_m} MB peak RSS"
	echo "  perflens analyze (perf script) ${txt_t} s wall  ${txt_c} s cpu"
	if [ -n "$base" ]; then
		set -- $base
		echo "  perflens analyze (native, base) $1 s wall  $3 s cpu  $2 MB peak RSS  (this build: $(ratio "$1" "$nat_t") wall, $(ratio "$3" "$nat_c") cpu faster)"
	fi
	echo "  perf report --stdio            ${rep_t} s wall  ${rep_c} s cpu"
	echo "  perf report --stdio --no-inline ${rni_t} s wall  ${rni_c} s cpu"
	echo "  wall: native vs perf report $(ratio "$rep_t" "$nat_t") (--no-inline $(ratio "$rni_t" "$nat_t"); target >= 5x), vs the perf script path $(ratio "$txt_t" "$nat_t") (target >= 10x)"
	echo "  cpu:  native vs perf report $(ratio "$rep_c" "$nat_c") (--no-inline $(ratio "$rni_c" "$nat_c")), vs the perf script path $(ratio "$txt_c" "$nat_c")"
done
