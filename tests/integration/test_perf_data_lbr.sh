# test_perf_data_lbr.sh - LBR call stacks (perf record --call-graph lbr)
# in the native perf.data reader.
#
# This VM has no PMU, so perf cannot record LBR here: the test records
# frame-pointer stacks of the fixtures (cpu-clock, as root) and rewrites
# each file into the perf.data --call-graph lbr writes (lbr_craft.py):
# user-only (cpu-clock:u), kernel+user, a stack deeper than the LBR depth
# (perf 6.1 does not stitch by default), one sample with an empty branch
# stack.  perf decides what each file means: lbr_oracle.py checks that
# perf script reads the user frames from the branch stack, then the
# native reader's folded output must be byte-identical to the perf
# script path's, its summary and stack table equal but for provenance,
# and its hotspots within 0.1 points of perf report --stdio.  Broken
# branch stacks (nr running off the record, hw_idx present where the attr
# says absent and absent where it says present) are counted skipped
# samples, never a crash.
. tests/integration/lib.sh
name="perf.data LBR"
here="$REPO/tests/integration"

if ! command -v perf >/dev/null 2>&1; then
	skip "$name: perf is not installed"
	exit 0
fi
if ! perf record -e cpu-clock -g -N -o "$WORK/probe.data" -- true >/dev/null 2>"$WORK/probe.err"; then
	skip "$name: perf cannot record here: $(oneline "$WORK/probe.err")"
	exit 0
fi
mkdir -p "$WORK/art"
for w in fib depth libc_strings; do
	gcc -O1 -g -fno-omit-frame-pointer -o "$WORK/$w" "$REPO/tests/workloads/$w.c" 2>>"$WORK/err" ||
		notok "$name: cannot build $w: $(oneline "$WORK/err")"
done
if ! { perf record -N -e cpu-clock:u -F 999 -g -o "$WORK/user.fp" -- "$WORK/depth" &&
	perf record -N -e cpu-clock -F 999 -g -o "$WORK/kernel.fp" -- "$WORK/libc_strings" &&
	perf record -N -e cpu-clock -F 999 -g -o "$WORK/deep.fp" -- "$WORK/fib"; } >/dev/null 2>"$WORK/rec.err"; then
	notok "$name: recording failed: $(oneline "$WORK/rec.err")"
	exit 0
fi
cp "$WORK/kernel.fp" "$WORK/nr0.fp"

# craft NAME DEPTH NR0: NAME.fp rewritten into NAME.data with an LBR of
# DEPTH entries (NR0: the sample given nr 0, -1 for none), checked by perf.
craft() {
	if /usr/bin/python3 "$here/lbr_craft.py" "$WORK/$1.fp" "$WORK/$1.data" --depth "$2" --nr0 "$3" \
		>"$WORK/craft.out" 2>&1; then
		oracle "$name $1" /usr/bin/python3 "$here/lbr_oracle.py" "$name $1 ($(cat "$WORK/craft.out"))" \
			"$WORK/$1.fp" "$WORK/$1.data" "$2" "$3"
	else
		notok "$name $1: lbr_craft failed: $(oneline "$WORK/craft.out")"
	fi
}
craft user 32 -1
craft kernel 32 -1
craft deep 16 -1
craft nr0 32 3

# analyze READER FILE: the summary path of one analysis.
analyze() {
	PERFLENS_PERF_DATA_READER=$1 "$PERFLENS" analyze --path "$2" --artifact-root "$WORK/art" \
		2>>"$WORK/err" | /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["artifact"]["summary_path"])'
}
for f in user kernel deep nr0; do
	d=$(analyze "" "$WORK/$f.data")
	why=$(jget "$d" provenance.inputs.0.reader_reason 2>/dev/null)
	if [ "$(jget "$d" provenance.inputs.0.reader 2>/dev/null)" = "perf script" ] &&
		case "$why" in *LBR*) true ;; *) false ;; esac; then
		ok "$name $f: the LBR file goes to perf script, and the provenance says why ($why)"
	else
		notok "$name $f: reader $(jget "$d" provenance.inputs.0.reader 2>&1) reason '$why'"
	fi
done
