#!/bin/sh
# run.sh - run every integration test against the real binaries.
#
# Each tests/integration/test_*.sh prints one line per check:
#   ok - WHAT         not ok - WHAT: WHY        skip - WHAT: WHY
# This runner counts them (a script that exits non-zero, or prints a Python
# traceback, without a "not ok" line counts as one failure) and ends with the plain closing line
# "N passed, N failed, N skipped".  Exit status is non-zero on any failure.
set -u
BUILD=${BUILD:-build}
export BUILD
export PERFLENS="$(cd "$BUILD" && pwd)/perflens"
export REPO="$(pwd)"
export SHARED="${SHARED:-$(cd .. && pwd)/shared}"
pass=0 fail=0 skip=0
out=$(mktemp)
for t in tests/integration/test_*.sh; do
	if [ -n "${ONLY:-}" ]; then
		# ONLY: one name or several separated by spaces (make test-tsan)
		keep=""
		for o in $ONLY; do
			case "$t" in *"$o"*) keep=1 ;; esac
		done
		[ -n "$keep" ] || continue
	fi
	echo "# $t"
	sh "$t" >"$out" 2>&1
	rc=$?
	cat "$out"
	p=$(grep -c '^ok - ' "$out")
	f=$(grep -c '^not ok - ' "$out")
	s=$(grep -c '^skip - ' "$out")
	if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
		echo "not ok - $t exited $rc"
		f=1
	fi
	# A check that crashed mid-script (a Python traceback) with no "not ok"
	# line of its own: the script's exit status is its last command's.
	if [ "$f" -eq 0 ] && grep -q '^Traceback (most recent call last):' "$out"; then
		echo "not ok - $t: a Python traceback and no not ok line (a check crashed mid-script)"
		f=1
	fi
	pass=$((pass + p)) fail=$((fail + f)) skip=$((skip + s))
done
rm -f "$out"
echo "integration: $pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
