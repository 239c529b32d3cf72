#!/bin/sh
# run.sh - run every integration test against the real binaries.
#
#   sh tests/integration/run.sh [-j N]
#
# Each tests/integration/test_*.sh prints one line per check:
#   ok - WHAT         not ok - WHAT: WHY        skip - WHAT: WHY
# This runner counts them (a script that exits non-zero, or prints a Python
# traceback, without a "not ok" line counts as one failure) and ends with
# the plain closing line "N passed, N failed, N skipped".  Exit status is
# non-zero on any failure.
#
# Scripts run N at a time (-j N, or $JOBS; default 3: most scripts wait on
# perf, servers and timeouts more than they compute, and the machine has 2
# cores).  A script's output is printed whole when it ends, with its time,
# so parallel scripts never interleave; the slowest ten close the run.
# Tags, a comment line in the script itself, one tag per line (the first
# word after "run.sh:" is the tag, the rest its reason):
#   # run.sh: slow        started first (the longest poles of the run)
#   # run.sh: serial      run alone, after the parallel ones (a fixed port,
#                         gigabytes of input, a timing bound)
#   # run.sh: no-asan     left out of the sanitized half (SAN=1), with the
#                         reason after it: it drives no sanitized code
#   # run.sh: timing      measures time or contention: runs beside the
#                         others at its own priority while they run at
#                         nice 10
# ONLY="NAME ..." runs the scripts whose path contains one of the names.
# The deadline slack of the tests scales with CK_TIMEOUT_MULTIPLIER (see
# lib.sh); running several at once on two cores doubles it.
set -u

tagged() { grep -q "^# run.sh: $2" "$1"; }

# one SCRIPT: run it, then print its output and its counts under a lock.
one() {
	t=$1
	name=$(basename "$t" .sh)
	out="$RUN/$name.out"
	start=$(date +%s.%N)
	# Beside other scripts, a script that measures time or contention
	# (tagged timing) keeps its priority and the rest yield to it.
	nice=""
	[ "${RUN_PARALLEL:-}" = 1 ] && ! tagged "$t" timing && nice="nice -n 10"
	$nice sh "$t" >"$out" 2>&1 </dev/null
	rc=$?
	secs=$(echo "$(date +%s.%N) - $start" | bc)
	p=$(grep -c '^ok - ' "$out")
	f=$(grep -c '^not ok - ' "$out")
	s=$(grep -c '^skip - ' "$out")
	extra=""
	if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
		extra="not ok - $t exited $rc"
		f=1
	fi
	# A check that crashed mid-script (a Python traceback) with no "not ok"
	# line of its own: the script's exit status is its last command's.
	if [ "$f" -eq 0 ] && grep -q '^Traceback (most recent call last):' "$out"; then
		extra="not ok - $t: a Python traceback and no not ok line (a check crashed mid-script)"
		f=1
	fi
	{
		flock 9
		echo "# $t ($(printf '%.1f' "$secs") s)"
		cat "$out"
		[ -n "$extra" ] && echo "$extra"
		echo "$p $f $s $secs $t" >>"$RUN/counts"
	} 9>"$RUN/lock"
}

# xargs runs each script through this file again (RUN_ONE=1 SCRIPT).
if [ "${RUN_ONE:-}" = 1 ]; then
	one "$1"
	exit 0
fi

JOBS=${JOBS:-3}
while [ $# -gt 0 ]; do
	case "$1" in
	-j) JOBS=$2; shift 2 ;;
	-j*) JOBS=${1#-j}; shift ;;
	*) echo "usage: run.sh [-j N]" >&2; exit 2 ;;
	esac
done
BUILD=${BUILD:-build}
export BUILD
export PERFLENS="$(cd "$BUILD" && pwd)/perflens"
export REPO="$(pwd)"
export SHARED="${SHARED:-$(cd .. && pwd)/shared}"
if [ "$JOBS" -gt 1 ]; then
	m=${CK_TIMEOUT_MULTIPLIER:-1}
	export CK_TIMEOUT_MULTIPLIER=$((${m%%.*} * 2))
fi
RUN=$(mktemp -d /tmp/perflens-run.XXXXXX)
trap 'rm -rf "$RUN"' EXIT

selected() {
	[ -n "${ONLY:-}" ] || return 0
	for o in $ONLY; do
		case "$1" in *"$o"*) return 0 ;; esac
	done
	return 1
}

# The list: slow scripts first, then the rest; serial ones apart.
: >"$RUN/parallel"
: >"$RUN/serial"
for t in tests/integration/test_*.sh; do
	selected "$t" || continue
	if [ "${SAN:-}" = 1 ] && tagged "$t" no-asan; then
		echo "# $t: not in the sanitized half ($(sed -n 's/^# run.sh: no-asan *//p' "$t" | head -1))"
		continue
	fi
	if tagged "$t" serial; then
		echo "$t" >>"$RUN/serial"
	elif tagged "$t" slow; then
		echo "0 $t" >>"$RUN/parallel"
	else
		echo "1 $t" >>"$RUN/parallel"
	fi
done
sort -s -k1,1n "$RUN/parallel" | cut -d' ' -f2 >"$RUN/order"

: >"$RUN/counts"
export RUN
if [ -s "$RUN/order" ]; then
	# xargs starts each script through this same file (RUN_ONE), so that
	# one() is the one definition of how a script is run and counted.
	xargs -P "$JOBS" -n 1 env RUN_ONE=1 RUN_PARALLEL=$([ "$JOBS" -gt 1 ] && echo 1) sh "$0" <"$RUN/order"
fi
while read -r t; do
	one "$t"
done <"$RUN/serial"

pass=$(awk '{ s += $1 } END { print s + 0 }' "$RUN/counts")
fail=$(awk '{ s += $2 } END { print s + 0 }' "$RUN/counts")
skip=$(awk '{ s += $3 } END { print s + 0 }' "$RUN/counts")
echo "# slowest scripts (seconds):"
sort -k4,4nr "$RUN/counts" | head -10 | awk '{ printf "#   %6.1f %s\n", $4, $5 }'
echo "integration: $pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
