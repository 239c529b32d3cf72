#!/bin/sh
# run.sh - speed benchmarks: PerfLens against its peers, timed in the same run.
#
# These are measurements, not tests: they print figures, ratios and whether a
# target was met, and exit 0 whatever the figures are (non-zero only when the
# run cannot start, e.g. no perflens binary).  See bench/README.md.
#
#   BUILD=/tmp/build-bench sh bench/run.sh        (or: make bench BUILD=...)
#
# Environment:
#   BUILD            where perflens was built (default build)
#   BENCH_QUICK=1    smaller inputs, one run each (a smoke run, ~1 minute)
#   BENCH_PARSE_MB   perf script size for bench 1 (default 100; quick 20)
#   BENCH_FOLDED_MB  folded size for bench 2 (default 500; quick 50)
#   BENCH_BIG_MB     perf script size for bench 3 (default 1000; quick 100);
#                    keep it below perflens's 1 GiB input limit (1073 MB)
#   BENCH_SVG_STACKS unique stacks for bench 4 (default 100000; quick 20000)
#   BENCH_RUNS       runs per measurement, best kept (default 3; quick 1)
#   BENCH_TMPDIR     where inputs are generated (default: mktemp -d under
#                    $TMPDIR or /tmp); removed at the end unless BENCH_KEEP=1
#   FLAMEGRAPH_DIR   a FlameGraph checkout to use instead of the git snapshot
#   FLAMEGRAPH_GIT   the snapshot (default /work/.mirror/brendangregg+FlameGraph/repo)
#   SHARED           the shared data directory (default ../shared)
#   BENCH_NO_GNU_TIME=1  measure without /usr/bin/time (python3; RSS by polling VmHWM)
set -u

BUILD=${BUILD:-build}
REPO=$(pwd)
. "$REPO/bench/lib.sh"
bench_setup

QUICK=${BENCH_QUICK:-0}
[ "$QUICK" = 0 ] && QUICK=
if [ -n "$QUICK" ]; then
	PARSE_MB=${BENCH_PARSE_MB:-20} FOLDED_MB=${BENCH_FOLDED_MB:-50}
	BIG_MB=${BENCH_BIG_MB:-100} SVG_STACKS=${BENCH_SVG_STACKS:-20000}
	RUNS=${BENCH_RUNS:-1}
else
	PARSE_MB=${BENCH_PARSE_MB:-100} FOLDED_MB=${BENCH_FOLDED_MB:-500}
	BIG_MB=${BENCH_BIG_MB:-1000} SVG_STACKS=${BENCH_SVG_STACKS:-100000}
	RUNS=${BENCH_RUNS:-3}
fi
PEER_ONCE_S=3     # a peer slower than this runs once
REPEAT_MAX_S=20   # a perflens run slower than this is not repeated

if [ -n "${BENCH_TMPDIR:-}" ]; then
	TMP=$BENCH_TMPDIR
	mkdir -p "$TMP" || exit 2
else
	TMP=$(mktemp -d "${TMPDIR:-/tmp}/perflens-bench.XXXXXX") || exit 2
fi
# shellcheck disable=SC2317  # called through trap
cleanup() {
	if [ -n "${BENCH_KEEP:-}" ]; then
		echo "bench: inputs kept in $TMP"
	elif [ -n "${BENCH_TMPDIR:-}" ]; then
		rm -rf "$TMP/in" "$TMP/art" "$TMP/out" "$TMP/peer" "$TMP/m"
	else
		rm -rf "$TMP"
	fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM
mkdir -p "$TMP/in" "$TMP/art" "$TMP/out" "$TMP/m"
ROWS=$TMP/m/summary

# ---------------------------------------------------------------- helpers

now() { date +%s.%N; }
calc() { awk "BEGIN { x = ($*); print x }"; }   # calc '1 / 3', calc '2 > 1'
fmt() { awk -v x="$2" "BEGIN { printf \"$1\", x }"; }   # fmt %.1f 3.14159
fsize() { wc -c < "$1" | tr -d ' '; }

# Human throughput for bytes/second.
rate() {
	awk -v r="$1" 'BEGIN {
		if (r >= 1e9) printf "%.2f GB/s", r / 1e9
		else if (r >= 1e6) printf "%.0f MB/s", r / 1e6
		else printf "%.2f MB/s", r / 1e6 }'
}

GNU_TIME=
if [ -z "${BENCH_NO_GNU_TIME:-}" ] && [ -x /usr/bin/time ] && /usr/bin/time --version 2>&1 | grep -q GNU; then
	GNU_TIME=/usr/bin/time
fi

# measure OUT CMD...: run CMD once, stdout to OUT, stderr to $TMP/m/err.
# Sets M_RC, M_WALL (s), M_CPU (user+sys s) and M_RSS (KiB peak resident
# set).  With GNU time: wall from date +%s.%N around it, cpu and RSS from its
# %U %S %M.  Without: python3 times the child, takes cpu from wait4 and the
# RSS by polling /proc/PID/status VmHWM.
measure() {
	_out=$1
	shift
	if [ -n "$GNU_TIME" ]; then
		_t0=$(now)
		"$GNU_TIME" -f '%U %S %M' -o "$TMP/m/time" "$@" > "$_out" 2> "$TMP/m/err"
		M_RC=$?
		_t1=$(now)
		# On failure GNU time puts "Command exited with ..." first.
		# shellcheck disable=SC2046  # split into fields on purpose
		set -- $(tail -n 1 "$TMP/m/time")
		M_WALL=$(calc "$_t1 - $_t0") M_CPU=$(calc "$1 + $2") M_RSS=$3
	else
		# shellcheck disable=SC2046  # split into fields on purpose
		set -- $(python3 -c '
import os, sys, time
# Peak RSS: poll VmHWM of the child (every 2 ms; growth in its last 2 ms is
# missed).  wait4 ru_maxrss would count the python3 image the child had
# before exec, and RUSAGE_CHILDREN what ran here before an exec (pyenv).
out = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
err = os.open(sys.argv[2], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
t = time.perf_counter()
pid = os.fork()
if pid == 0:
    os.dup2(out, 1)
    os.dup2(err, 2)
    try:
        os.execvp(sys.argv[3], sys.argv[3:])
    finally:
        os._exit(127)
hwm, status_path = 0, "/proc/%d/status" % pid
while True:
    done, status, ru = os.wait4(pid, os.WNOHANG)
    if done:
        break
    try:
        with open(status_path) as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    hwm = max(hwm, int(line.split()[1]))
    except (OSError, ValueError):
        pass
    time.sleep(0.002)
w = time.perf_counter() - t
print("%d %.6f %.3f %d" % (os.waitstatus_to_exitcode(status), w, ru.ru_utime + ru.ru_stime, hwm or ru.ru_maxrss))
' "$_out" "$TMP/m/err" "$@")
		M_RC=$1 M_WALL=$2 M_CPU=$3 M_RSS=$4
	fi
}

# best RUNS MAXRUNS_IF_SLOW OUT CMD...: best (lowest wall) of RUNS runs; stops
# repeating once a run took longer than MAXRUNS_IF_SLOW seconds.  Sets
# B_WALL B_CPU B_RSS B_RUNS, and B_RC (non-zero if any run failed).
best() {
	_runs=$1 _slow=$2
	shift 2
	B_WALL='' B_CPU='' B_RSS=0 B_RUNS=0 B_RC=0
	while [ "$B_RUNS" -lt "$_runs" ]; do
		measure "$@"
		B_RUNS=$((B_RUNS + 1))
		if [ "$M_RC" -ne 0 ]; then
			B_RC=$M_RC
			return
		fi
		if [ -z "$B_WALL" ] || [ "$(calc "$M_WALL < $B_WALL")" = 1 ]; then
			B_WALL=$M_WALL
		fi
		if [ -z "$B_CPU" ] || [ "$(calc "$M_CPU < $B_CPU")" = 1 ]; then
			B_CPU=$M_CPU
		fi
		[ "$M_RSS" -gt "$B_RSS" ] && B_RSS=$M_RSS
		[ "$(calc "$M_WALL > $_slow")" = 1 ] && break
	done
}

# A failed perflens run: say so with its stderr, and record it.
failed() {
	echo "error: $1: perflens exited $B_RC: $(head -c 400 "$TMP/m/err" | tr '\n' ' ')"
	row "$1" "error (exit $B_RC)" "-" "-" "$2" "error"
}

# row BENCH PERFLENS PEER RATIO TARGET VERDICT: a line of the summary table.
row() { printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$@" >> "$ROWS"; }
verdict() { [ "$(calc "$1")" = 1 ] && echo met || echo MISSED; }

# unique_stacks ANALYZE_JSON: unique stacks per event, from the artifact.
unique_stacks() {
	python3 -c '
import json, sys
a = json.load(open(sys.argv[1]))
s = json.load(open(a["artifact"]["summary_path"]))
print(", ".join("%s %d" % (v["event"], v["unique_stacks"]) for v in s["views"]))
' "$1" 2>/dev/null || echo "?"
}
analysis_id() {
	python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["analysis_id"])' "$1"
}

say() { echo "$*"; }
# After writing an input: flush it to disk now, so that writeback does not
# compete with the timed runs (the file stays in the page cache).
settle() { sync; }
# A big input is deleted once its bench is done (kept with BENCH_KEEP=1).
drop() { [ -n "${BENCH_KEEP:-}" ] || rm -f "$1"; }
section() { echo; echo "== $*"; }

# ---------------------------------------------------------------- peers

PEER=
PEER_WHY=
PEER_DETAIL=
if ! command -v perl > /dev/null 2>&1; then
	PEER_WHY="perl not found"
elif [ -n "${FLAMEGRAPH_DIR:-}" ]; then
	if [ -f "$FLAMEGRAPH_DIR/stackcollapse-perf.pl" ] && [ -f "$FLAMEGRAPH_DIR/flamegraph.pl" ]; then
		PEER=$FLAMEGRAPH_DIR
		PEER_FROM="FLAMEGRAPH_DIR=$FLAMEGRAPH_DIR"
	else
		PEER_WHY="FlameGraph scripts not found (set FLAMEGRAPH_DIR)"
		PEER_DETAIL="no stackcollapse-perf.pl and flamegraph.pl in FLAMEGRAPH_DIR=$FLAMEGRAPH_DIR"
	fi
elif [ -d "$FLAMEGRAPH_GIT" ] && command -v git > /dev/null 2>&1; then
	mkdir -p "$TMP/peer"
	if git --git-dir="$FLAMEGRAPH_GIT" archive HEAD stackcollapse-perf.pl flamegraph.pl difffolded.pl 2>/dev/null |
		tar -x -C "$TMP/peer" 2>/dev/null && [ -f "$TMP/peer/flamegraph.pl" ]; then
		PEER=$TMP/peer
		PEER_FROM="$FLAMEGRAPH_GIT at $(git --git-dir="$FLAMEGRAPH_GIT" rev-parse --short HEAD 2>/dev/null)"
	else
		PEER_WHY="FlameGraph scripts not found (set FLAMEGRAPH_DIR)"
		PEER_DETAIL="git archive of $FLAMEGRAPH_GIT failed"
	fi
else
	PEER_WHY="FlameGraph scripts not found (set FLAMEGRAPH_DIR)"
	PEER_DETAIL="no FLAMEGRAPH_DIR, and no git snapshot at $FLAMEGRAPH_GIT"
fi

echo "PerfLens speed benchmarks$( [ -n "$QUICK" ] && echo ' (BENCH_QUICK: small inputs, not comparable with the targets)')"
echo "perflens:  $PL ($("$PL" --version 2>/dev/null | head -n 1))"
if [ -n "$PEER" ]; then
	echo "peers:     FlameGraph from $PEER_FROM; $(perl -e 'printf "perl %vd", $^V')"
else
	echo "peers:     none: $PEER_WHY${PEER_DETAIL:+; $PEER_DETAIL}"
fi
echo "machine:   $(nproc) CPUs, $(uname -r), load average$(cut -d' ' -f1-3 /proc/loadavg | sed 's/^/ /')"
echo "timing:    wall clock (date +%s.%N), best of $RUNS; cpu = user+sys of that command;"
echo "           peak RSS from $( [ -n "$GNU_TIME" ] && echo 'GNU time %M' || echo 'polling /proc/PID/status VmHWM (GNU time not installed: apt-get install time)')"
echo "inputs in: $TMP (MB = 10^6 bytes)"

EXAMPLE=$PEERDATA/example-perf-stacks.txt.gz
if [ ! -f "$EXAMPLE" ]; then
	echo "bench: $EXAMPLE not found (set SHARED)" >&2
	exit 2
fi

# ------------------------------------------- 1. perf script parse+aggregate

section "1. perf script parse+aggregate (${PARSE_MB} MB)"
IN=$TMP/in/parse.perf.txt
say "input: $($GEN perf-script --base "$EXAMPLE" --out "$IN" --size-mb "$PARSE_MB" --variants 32)"
settle
SIZE=$(fsize "$IN")

best "$RUNS" 1e9 /dev/null cat "$IN"
CAT_WALL=$B_WALL
best "$RUNS" "$REPEAT_MAX_S" "$TMP/out/parse.json" "$PL" analyze --input "$IN" --artifact-root "$TMP/art"
if [ "$B_RC" -ne 0 ]; then
	failed "1 perf-script parse" ">= 20x, 400 MB/s"
else
	PL_WALL=$B_WALL PL_CPU=$B_CPU
	say "perflens analyze:        $(fmt %.3f "$PL_WALL") s wall, $(fmt %.3f "$PL_CPU") s cpu, $(rate "$(calc "$SIZE / $PL_WALL")") ($(rate "$(calc "$SIZE / $PL_CPU")") of cpu), peak RSS $((B_RSS / 1024)) MiB, $B_RUNS run(s)"
	say "unique stacks:           $(unique_stacks "$TMP/out/parse.json")"
	say "cat > /dev/null:         $(fmt %.3f "$CAT_WALL") s, $(rate "$(calc "$SIZE / $CAT_WALL")")"
	PEER_TXT="skipped" RATIO_TXT="-" V=
	if [ -n "$PEER" ]; then
		best 1 0 /dev/null perl "$PEER/stackcollapse-perf.pl" "$IN"
		[ "$B_RC" -eq 0 ] && [ "$(calc "$B_WALL <= $PEER_ONCE_S")" = 1 ] &&
			best "$RUNS" "$PEER_ONCE_S" /dev/null perl "$PEER/stackcollapse-perf.pl" "$IN"
		if [ "$B_RC" -ne 0 ]; then
			say "error: 1: stackcollapse-perf.pl exited $B_RC: $(head -c 300 "$TMP/m/err")"
		else
			PE_WALL=$B_WALL PE_CPU=$B_CPU
			say "stackcollapse-perf.pl:   $(fmt %.3f "$PE_WALL") s wall, $(fmt %.3f "$PE_CPU") s cpu, $(rate "$(calc "$SIZE / $PE_WALL")"), $B_RUNS run(s)"
			RATIO=$(calc "$PE_WALL / $PL_WALL")
			PEER_TXT="$(rate "$(calc "$SIZE / $PE_WALL")")"
			RATIO_TXT="$(fmt %.1f "$RATIO")x"
			V=$(verdict "$RATIO >= 20 && $SIZE / $PL_WALL >= 400e6")
			say "perf-script parse: perflens $(rate "$(calc "$SIZE / $PL_WALL")"), stackcollapse-perf.pl $(rate "$(calc "$SIZE / $PE_WALL")"), ratio $(fmt %.1f "$RATIO")x (target >= 20x); cat floor $(rate "$(calc "$SIZE / $CAT_WALL")") (perflens at $(fmt %.1f "$(calc "100 * $CAT_WALL / $PL_WALL")")% of floor)"
			say "  by cpu time: ratio $(fmt %.1f "$(calc "$PE_CPU / $PL_CPU")")x"
		fi
	else
		say "skip: 1 perf-script parse: $PEER_WHY"
		say "perf-script parse: perflens $(rate "$(calc "$SIZE / $PL_WALL")") (aim 400 MB/s); cat floor $(rate "$(calc "$SIZE / $CAT_WALL")") (perflens at $(fmt %.1f "$(calc "100 * $CAT_WALL / $PL_WALL")")% of floor)"
	fi
	[ -z "$V" ] && V=$(verdict "$SIZE / $PL_WALL >= 400e6")
	row "1 perf-script parse ${PARSE_MB} MB" "$(rate "$(calc "$SIZE / $PL_WALL")")" "$PEER_TXT" "$RATIO_TXT" ">= 20x, 400 MB/s" "$V"
fi
drop "$IN"

# ------------------------------------------------ real folded stacks (base)
# The real captures, each analyzed by perflens and exported per event as
# folded stacks: the base of the folded inputs of benches 2 and 4.

FB=$TMP/in/base
export_base_folded "$PL" "$TMP/art" "$FB" "$EXAMPLE" "$PEERDATA"/test/*.txt
set -- "$FB"/*.folded
if [ ! -f "$1" ]; then
	echo "error: could not export folded stacks of the real captures; benches 2 and 4 skipped"
	row "2 folded" "error" "-" "-" ">= 1 GB/s" "error"
	row "4 svg" "error" "-" "-" "<= 0.5 s" "error"
	BASE_OK=
else
	BASE_OK=1
	UNIQ=$TMP/in/unique.folded
	UNIQ_FACTS=$($GEN folded-unique --out "$UNIQ" --stacks "$SVG_STACKS" "$@")
	settle
fi

# ------------------------------------------------------ 2. folded input

if [ -n "$BASE_OK" ]; then
	section "2. folded input (${FOLDED_MB} MB)"
	IN=$TMP/in/big.folded
	say "input: $($GEN folded-repeat --input "$UNIQ" --out "$IN" --size-mb "$FOLDED_MB") (copies of the ${SVG_STACKS}-stack file of bench 4)"
	settle
	SIZE=$(fsize "$IN")
	best "$RUNS" 1e9 /dev/null cat "$IN"
	CAT_WALL=$B_WALL
	best "$RUNS" "$REPEAT_MAX_S" "$TMP/out/folded.json" "$PL" analyze --input "$IN" --input-format folded --artifact-root "$TMP/art"
	if [ "$B_RC" -ne 0 ]; then
		failed "2 folded ${FOLDED_MB} MB" ">= 1 GB/s"
	else
		say "perflens analyze:        $(fmt %.3f "$B_WALL") s wall, $(fmt %.3f "$B_CPU") s cpu, $(rate "$(calc "$SIZE / $B_WALL")") ($(rate "$(calc "$SIZE / $B_CPU")") of cpu), peak RSS $((B_RSS / 1024)) MiB, $B_RUNS run(s)"
		say "unique stacks:           $(unique_stacks "$TMP/out/folded.json")"
		say "folded parse: perflens $(rate "$(calc "$SIZE / $B_WALL")") (target >= 1 GB/s, at $(fmt %.1f "$(calc "100 * $SIZE / $B_WALL / 1e9")")% of it); cat floor $(rate "$(calc "$SIZE / $CAT_WALL")") (perflens at $(fmt %.1f "$(calc "100 * $CAT_WALL / $B_WALL")")% of floor)"
		row "2 folded ${FOLDED_MB} MB" "$(rate "$(calc "$SIZE / $B_WALL")")" "-" "-" ">= 1 GB/s" "$(verdict "$SIZE / $B_WALL >= 1e9")"
	fi
	drop "$IN"
fi

# ------------------------------------------------------- 3. peak RSS

section "3. peak RSS, perf script (${BIG_MB} MB)"
IN=$TMP/in/big.perf.txt
say "input: $($GEN perf-script --base "$EXAMPLE" --out "$IN" --size-mb "$BIG_MB" --variants 96)"
settle
SIZE=$(fsize "$IN")
best 1 0 "$TMP/out/big.json" "$PL" analyze --input "$IN" --artifact-root "$TMP/art"
if [ "$B_RC" -ne 0 ]; then
	failed "3 peak RSS ${BIG_MB} MB" "<= 64 MiB"
else
	RSS_MIB=$(fmt %.1f "$(calc "$B_RSS / 1024")")
	say "perflens analyze:        $(fmt %.3f "$B_WALL") s wall, $(fmt %.3f "$B_CPU") s cpu, $(rate "$(calc "$SIZE / $B_WALL")")"
	say "unique stacks:           $(unique_stacks "$TMP/out/big.json")"
	say "peak RSS: perflens $RSS_MIB MiB for $(fmt %.0f "$(calc "$SIZE / 1e6")") MB (target <= 64 MiB)"
	row "3 peak RSS ${BIG_MB} MB" "$RSS_MIB MiB" "-" "-" "<= 64 MiB" "$(verdict "$B_RSS <= 65536")"
fi
drop "$IN"

# ------------------------------------------------------- 4. SVG flame graph

if [ -n "$BASE_OK" ]; then
	section "4. SVG flame graph (${SVG_STACKS} unique stacks)"
	say "input: $UNIQ_FACTS"
	"$PL" analyze --input "$UNIQ" --input-format folded --artifact-root "$TMP/art" > "$TMP/out/svg.json" 2> "$TMP/m/err"
	rc=$?
	if [ "$rc" -ne 0 ]; then
		B_RC=$rc
		failed "4 svg ${SVG_STACKS} stacks" "<= 0.5 s"
	else
		say "unique stacks:           $(unique_stacks "$TMP/out/svg.json")"
		ID=$(analysis_id "$TMP/out/svg.json")
		best "$RUNS" "$REPEAT_MAX_S" /dev/null "$PL" export --analysis-id "$ID" --artifact-root "$TMP/art" \
			--format svg --output "$TMP/out/perflens.svg"
		if [ "$B_RC" -ne 0 ]; then
			failed "4 svg ${SVG_STACKS} stacks" "<= 0.5 s"
		else
			PL_WALL=$B_WALL
			say "perflens export svg:     $(fmt %.3f "$B_WALL") s wall, $(fmt %.3f "$B_CPU") s cpu, peak RSS $((B_RSS / 1024)) MiB, $(fsize "$TMP/out/perflens.svg") bytes, $(grep -c '<rect' "$TMP/out/perflens.svg") rects, $B_RUNS run(s)"
			PEER_TXT="skipped" RATIO_TXT="-"
			if [ -n "$PEER" ]; then
				best 1 0 "$TMP/out/peer.svg" perl "$PEER/flamegraph.pl" "$UNIQ"
				[ "$B_RC" -eq 0 ] && [ "$(calc "$B_WALL <= $PEER_ONCE_S")" = 1 ] &&
					best "$RUNS" "$PEER_ONCE_S" "$TMP/out/peer.svg" perl "$PEER/flamegraph.pl" "$UNIQ"
				if [ "$B_RC" -ne 0 ]; then
					say "error: 4: flamegraph.pl exited $B_RC: $(head -c 300 "$TMP/m/err")"
				else
					say "flamegraph.pl:           $(fmt %.3f "$B_WALL") s wall, $(fmt %.3f "$B_CPU") s cpu, peak RSS $((B_RSS / 1024)) MiB, $(fsize "$TMP/out/peer.svg") bytes, $(grep -c '<rect' "$TMP/out/peer.svg") rects, $B_RUNS run(s)"
					PEER_TXT="$(fmt %.2f "$B_WALL") s"
					RATIO_TXT="$(fmt %.1f "$(calc "$B_WALL / $PL_WALL")")x"
					say "svg flame graph: perflens $(fmt %.2f "$PL_WALL") s, flamegraph.pl $(fmt %.2f "$B_WALL") s, ratio $RATIO_TXT faster (target perflens <= 0.5 s)"
				fi
			else
				say "skip: 4 svg flame graph: $PEER_WHY"
				say "svg flame graph: perflens $(fmt %.2f "$PL_WALL") s (target <= 0.5 s)"
			fi
			row "4 svg ${SVG_STACKS} stacks" "$(fmt %.2f "$PL_WALL") s" "$PEER_TXT" "$RATIO_TXT" "<= 0.5 s" "$(verdict "$PL_WALL <= 0.5")"
		fi
	fi
fi

# ---------------------------------------------------------------- summary

section "summary$( [ -n "$QUICK" ] && echo ' (BENCH_QUICK)')"
{
	printf 'bench\tperflens\tpeer\tratio\ttarget\tverdict\n'
	cat "$ROWS" 2>/dev/null
} | awk -F '\t' '
	{ for (i = 1; i <= NF; i++) { c[NR, i] = $i; if (length($i) > w[i]) w[i] = length($i) } n = NR }
	END { for (r = 1; r <= n; r++) { line = ""
		for (i = 1; i <= 6; i++) line = line sprintf(i < 6 ? "%-" w[i] "s  " : "%s", c[r, i])
		print line } }'
echo "(peer = stackcollapse-perf.pl for 1, flamegraph.pl for 4; ratio = peer time / perflens time)"
[ "${BENCH_SKIP_MCP:-0}" = 1 ] || BUILD="$BUILD" SHARED="$SHARED" sh "$REPO/bench/mcp.sh"
[ "${BENCH_SKIP_DIFF:-0}" = 1 ] || BUILD="$BUILD" SHARED="$SHARED" BENCH_RUNS="$RUNS" sh "$REPO/bench/diff.sh"
[ "${BENCH_SKIP_SYMBOLIZE:-0}" = 1 ] || BUILD="$BUILD" BENCH_RUNS="$RUNS" sh "$REPO/bench/symbolize.sh"
[ "${BENCH_SKIP_FORMATS:-0}" = 1 ] || BUILD="$BUILD" SHARED="$SHARED" BENCH_RUNS="$RUNS" sh "$REPO/bench/formats.sh"
[ "${BENCH_SKIP_VIEWS:-0}" = 1 ] || BUILD="$BUILD" SHARED="$SHARED" BENCH_RUNS="$RUNS" sh "$REPO/bench/views.sh"
[ "${BENCH_SKIP_LINK:-0}" = 1 ] || BUILD="$BUILD" SHARED="$SHARED" sh "$REPO/bench/agent_link.sh"
exit 0
