#!/bin/sh
# compare.sh REV - the headline benchmarks of this build against revision
# REV, pair by pair on this machine (see bench/README.md, "Before a merge").
#
# REV is checked out in a temporary git worktree (detached, removed at the
# end) and built there with BUILD=<cache>/build-<sha> (kept, so a second
# comparison against the same revision does not build it again); this
# tree's own build is $BUILD (default build: run `make -j2 all` first).
# Then bench/compare.py times, round by round, A (REV) and B (this build)
# back to back in alternating order, with the peer in the same rounds:
#   perf script text analyze  vs perl stackcollapse-perf.pl
#   perf.data analyze         vs perf report --stdio
#   small MCP calls (stdio)   vs a bare fork-and-answer server
# and prints medians, B/A and the spread of the paired ratios.
#
# Environment:
#   BUILD               the build under test (default build)
#   COMPARE_ROUNDS      pairs per bench (default 9)
#   COMPARE_PEER_ROUNDS stackcollapse-perf.pl runs, in the first rounds (3)
#   COMPARE_MCP_ROUNDS  rounds of small MCP calls (300)
#   COMPARE_SCRIPT_MB   perf script input size, MB (104)
#   COMPARE_PD_MB       perf.data size recorded, MiB (30, at 20 kHz)
#   COMPARE_PERF_DATA   an existing perf.data to use instead
#   COMPARE_BENCHES     which to run: any of script,perfdata,mcp (all)
#   COMPARE_CACHE       builds and inputs kept between runs
#                       (default /tmp/perflens-compare-cache)
#   COMPARE_KEEP        1: keep the temporary folder (scratch artifacts)
#   SHARED, FLAMEGRAPH_DIR, FLAMEGRAPH_GIT as for bench/run.sh
#
# Exits 0 after printing the figures whatever they are; 2 when it cannot
# run (no REV, no build, a build or a run that fails).
set -u

REV=${1:-}
if [ -z "$REV" ]; then
	echo "usage: [BUILD=build] sh bench/compare.sh REV" >&2
	exit 2
fi
cd "$(dirname "$0")/.." || exit 2
REPO=$(pwd)
BUILD=${BUILD:-build}
if [ ! -x "$BUILD/perflens" ] || [ ! -x "$BUILD/perflens-mcp" ]; then
	echo "compare: no perflens and perflens-mcp in $BUILD: run make -j2 all (BUILD=$BUILD) first" >&2
	exit 2
fi
B=$(cd "$BUILD" && pwd)
SHA=$(git rev-parse --verify --quiet "$REV^{commit}") || {
	echo "compare: '$REV' is not a revision of this repository" >&2
	exit 2
}
SHORT=$(git rev-parse --short "$SHA")
SHARED=${SHARED:-../shared}
SHARED=$(cd "$SHARED" 2>/dev/null && pwd) || { echo "compare: no SHARED folder" >&2; exit 2; }
CACHE=${COMPARE_CACHE:-/tmp/perflens-compare-cache}
BENCHES=${COMPARE_BENCHES:-script,perfdata,mcp}
mkdir -p "$CACHE" || exit 2
TMP=$(mktemp -d /tmp/perflens-compare.XXXXXX) || exit 2
WT=$TMP/src

cleanup() {
	if [ -d "$WT" ]; then
		git -C "$REPO" worktree remove --force "$WT" 2>/dev/null || rm -rf "$WT"
	fi
	git -C "$REPO" worktree prune 2>/dev/null
	if [ "${COMPARE_KEEP:-}" = 1 ]; then
		echo "kept: $TMP"
	else
		rm -rf "$TMP"
	fi
}
trap cleanup EXIT
trap 'exit 2' INT TERM HUP

want() { case ",$BENCHES," in *",$1,"*) return 0 ;; esac; return 1; }

# ---------------------------------------------------------- A: REV's build
A=$CACHE/build-$SHA
if [ ! -x "$A/perflens" ] || [ ! -x "$A/perflens-mcp" ]; then
	echo "# building $SHORT in $WT (BUILD=$A)" >&2
	git -C "$REPO" worktree add --detach --quiet "$WT" "$SHA" || exit 2
	if ! make -C "$WT" -j2 all BUILD="$A" > "$TMP/build-A.log" 2>&1; then
		echo "compare: building $SHORT failed; the log's end:" >&2
		tail -20 "$TMP/build-A.log" >&2
		exit 2
	fi
fi

# ------------------------------------------------------------------ inputs
ARGS="--a $A --b $B --scratch $TMP --rounds ${COMPARE_ROUNDS:-9} --peer-rounds ${COMPARE_PEER_ROUNDS:-3}"
PEER_NOTE="none"
if want script; then
	MB=${COMPARE_SCRIPT_MB:-104}
	IN=$CACHE/script-$MB.perf.txt
	if [ ! -s "$IN" ]; then
		python3 bench/gen_inputs.py perf-script --base "$SHARED/peers/flamegraph/example-perf-stacks.txt.gz" \
			--out "$IN.tmp" --size-mb "$MB" --variants 32 > /dev/null && mv "$IN.tmp" "$IN" || exit 2
	fi
	ARGS="$ARGS --script-input $IN"
	FG_GIT=${FLAMEGRAPH_GIT:-/work/.mirror/brendangregg+FlameGraph/repo}
	if [ -n "${FLAMEGRAPH_DIR:-}" ] && [ -f "$FLAMEGRAPH_DIR/stackcollapse-perf.pl" ]; then
		ARGS="$ARGS --stackcollapse $FLAMEGRAPH_DIR/stackcollapse-perf.pl"
		PEER_NOTE="FLAMEGRAPH_DIR=$FLAMEGRAPH_DIR"
	elif [ -d "$FG_GIT" ] && mkdir -p "$TMP/fg" &&
		git --git-dir="$FG_GIT" archive HEAD stackcollapse-perf.pl 2>/dev/null | tar -x -C "$TMP/fg"; then
		ARGS="$ARGS --stackcollapse $TMP/fg/stackcollapse-perf.pl"
		PEER_NOTE="$FG_GIT at $(git --git-dir="$FG_GIT" rev-parse --short HEAD)"
	else
		PEER_NOTE="not found (set FLAMEGRAPH_DIR): perflens timed alone"
	fi
fi
if want perfdata; then
	PD=${COMPARE_PERF_DATA:-}
	if [ -z "$PD" ] && command -v perf > /dev/null 2>&1; then
		PDMB=${COMPARE_PD_MB:-30}
		PD=$CACHE/fp-$PDMB.data
		if [ ! -s "$PD" ]; then
			for w in fib libc_strings threads; do
				gcc -O1 -g -fno-omit-frame-pointer -o "$CACHE/$w" "tests/workloads/$w.c" -lpthread || exit 2
			done
			echo "# recording $PD: perf record -e cpu-clock -F 20000 -g --max-size ${PDMB}M of the workloads" >&2
			perf record -e cpu-clock -F 20000 -g -N --max-size "${PDMB}M" -o "$PD.tmp" -- sh -c "
				end=\$((\$(date +%s) + 300))
				while [ \$(date +%s) -lt \$end ]; do '$CACHE/fib'; '$CACHE/threads'; done & a=\$!
				while [ \$(date +%s) -lt \$end ]; do '$CACHE/libc_strings'; done & b=\$!
				trap 'kill \$a \$b' TERM
				wait" > /dev/null 2>&1
			[ -s "$PD.tmp" ] && mv "$PD.tmp" "$PD"
		fi
	fi
	if [ -n "$PD" ] && [ -s "$PD" ]; then
		ARGS="$ARGS --perf-data $PD"
	else
		echo "skip: perf.data: no perf to record one (set COMPARE_PERF_DATA)"
	fi
fi
if want mcp; then
	cc -O2 -o "$TMP/fork_answer" bench/fork_answer.c || exit 2
	ARGS="$ARGS --mcp-capture $SHARED/peers/flamegraph/test/perf-vertx-stacks-01.txt --mcp-root $SHARED"
	ARGS="$ARGS --mcp-rounds ${COMPARE_MCP_ROUNDS:-300} --floor $TMP/fork_answer"
fi

echo "compare: A = $SHORT ($A), B = $(git rev-parse --short HEAD)$(git diff --quiet HEAD 2>/dev/null || echo '+changes') ($B)"
echo "machine: $(nproc) CPUs, $(uname -r), load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "peer:    stackcollapse-perf.pl from $PEER_NOTE"
# shellcheck disable=SC2086
python3 bench/compare.py $ARGS
RC=$?
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
[ "$RC" -eq 0 ] || exit 2
exit 0
