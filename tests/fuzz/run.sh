#!/bin/sh
# run.sh - fuzz each named libFuzzer harness for FUZZ_SECONDS, FUZZ_JOBS at
# a time (make fuzz, make fuzz-long; the harnesses are built by make
# fuzz-build into $BUILD/fuzz/fuzzers/).
#
#   BUILD=build FUZZ_SECONDS=20 FUZZ_JOBS=2 FUZZ_NICE=10 sh tests/fuzz/run.sh NAME...
#
# New inputs go to $BUILD/fuzz-corpus/NAME (the committed corpus stays as
# it is); a harness' log is $BUILD/fuzz-crashes/NAME.log and a crash leaves
# its input as $BUILD/fuzz-crashes/NAME-*.  Each harness prints its
# executions and coverage when it ends; any crash makes the exit status 1,
# after every harness has run (one crash does not hide another).
set -u
BUILD=${BUILD:-build}
FUZZ_SECONDS=${FUZZ_SECONDS:-20}
FUZZ_JOBS=${FUZZ_JOBS:-2}
FUZZ_NICE=${FUZZ_NICE:-10}
export BUILD FUZZ_SECONDS FUZZ_NICE

# one NAME: fuzz one harness; prints its summary under a lock.
one() {
	n=$1
	mkdir -p "$BUILD/fuzz-corpus/$n"
	dict=
	[ -f "tests/fuzz/$n.dict" ] && dict="-dict=tests/fuzz/$n.dict"
	flags=$(sed -n 's|^// fuzz-flags:||p' "tests/fuzz/fuzz_$n.c")
	log="$BUILD/fuzz-crashes/$n.log"
	# shellcheck disable=SC2086 # $dict and $flags are lists of options
	nice -n "$FUZZ_NICE" "$BUILD/fuzz/fuzzers/$n" -max_total_time="$FUZZ_SECONDS" \
		-timeout=30 -rss_limit_mb=2048 -print_final_stats=1 $dict $flags \
		-artifact_prefix="$BUILD/fuzz-crashes/$n-" \
		"$BUILD/fuzz-corpus/$n" "tests/fuzz/corpus/$n" >"$log" 2>&1
	rc=$?
	{
		flock 9
		echo "fuzz: $n for $FUZZ_SECONDS s"
		if [ "$rc" -ne 0 ]; then
			tail -60 "$log"
			echo "fuzz: $n found a crash (input: $BUILD/fuzz-crashes/$n-*)"
			echo "$n" >>"$BUILD/fuzz-crashes/failed"
		else
			grep -E '^#[0-9]+ *DONE|stat::number_of_executed_units|cov: ' "$log" | tail -2
		fi
	} 9>"$BUILD/fuzz-crashes/lock"
}

if [ "${FUZZ_ONE:-}" = 1 ]; then
	one "$1"
	exit 0
fi
mkdir -p "$BUILD/fuzz-crashes"
rm -f "$BUILD/fuzz-crashes/failed"
printf '%s\n' "$@" | xargs -P "$FUZZ_JOBS" -n 1 env FUZZ_ONE=1 sh "$0"
if [ -s "$BUILD/fuzz-crashes/failed" ]; then
	echo "fuzz: crashes in: $(tr '\n' ' ' <"$BUILD/fuzz-crashes/failed")" >&2
	exit 1
fi
echo "fuzz: $# harnesses, $FUZZ_SECONDS s each, $FUZZ_JOBS at a time: no crash"
