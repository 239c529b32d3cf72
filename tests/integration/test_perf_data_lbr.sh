# test_perf_data_lbr.sh - LBR call stacks (perf record --call-graph lbr)
# in the native perf.data reader.
#
# This VM has no PMU, so perf cannot record LBR here: the test records
# frame-pointer stacks of the fixtures (cpu-clock, as root) and rewrites
# each file into the perf.data --call-graph lbr writes (lbr_craft.py):
# user-only (cpu-clock:u), kernel+user, a stack deeper than the LBR depth
# (perf 6.1 does not stitch by default), one sample with an empty branch
# stack, and pipe copies of two of them (perf inject).  perf decides what each file means: lbr_oracle.py checks that
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

need_perf_record "$name"
for w in fib libc_strings; do
	gcc -O1 -g -fno-omit-frame-pointer -o "$WORK/$w" "$REPO/tests/workloads/$w.c" 2>>"$WORK/err" ||
		notok "$name: cannot build $w: $(oneline "$WORK/err")"
done
if ! { perf record -N -e cpu-clock:u -F 999 -g -o "$WORK/user.fp" -- "$WORK/fib" &&
	perf record -N -e cpu-clock -F 999 -g -o "$WORK/kernel.fp" -- "$WORK/libc_strings" &&
	perf record -N -e cpu-clock -F 999 -g -o "$WORK/deep.fp" -- "$WORK/fib"; } >/dev/null 2>"$WORK/rec.err"; then
	notok "$name: recording failed: $(oneline "$WORK/rec.err")"
	exit 0
fi
cp "$WORK/kernel.fp" "$WORK/nr0.fp"

# craft NAME DEPTH NR0: NAME.fp rewritten into NAME.data with an LBR of
# DEPTH entries (NR0: the sample given nr 0, -1 for none), checked by
# perf; NAME.nr0 keeps the times of the samples with an empty LBR.
craft() {
	if /usr/bin/python3 "$here/lbr_craft.py" "$WORK/$1.fp" "$WORK/$1.data" --depth "$2" --nr0 "$3" \
		>"$WORK/craft.out" 2>&1; then
		sed -n 2p "$WORK/craft.out" >"$WORK/$1.nr0"
		oracle "$name $1" /usr/bin/python3 "$here/lbr_oracle.py" "$name $1 ($(head -1 "$WORK/craft.out"))" \
			"$WORK/$1.fp" "$WORK/$1.data" "$2" $(cat "$WORK/$1.nr0")
	else
		notok "$name $1: lbr_craft failed: $(oneline "$WORK/craft.out")"
	fi
}
craft user 32 -1
craft kernel 32 -1
craft deep 16 -1
craft nr0 32 3

# The native reader on each crafted file, against the perf script path
# and perf report.
. "$here/perf_data_readers.sh"
# perf report --children defaults to caller order, where perf 6.1 resolves
# an LBR sample's kernel frames in user mode (lbr_callchain_add_kernel_ip
# walks the chain backwards from PERF_CONTEXT_USER, so the KERNEL marker
# comes last): its children are asked in callee order, as perf script
# walks.  perf report counts self by the sample's IP, perf script by the
# leaf, which for an empty LBR perf reads past the branch stack: each such
# sample may move 100/N points of self.
for f in user kernel deep nr0; do
	n=$(jget "$(analyze native "$WORK/$f.data")" provenance.inputs.0.perf_data.samples)
	tol=$(/usr/bin/python3 -c 'import sys; print(0.1 + 100.0 * int(sys.argv[1]) / int(sys.argv[2]))' \
		"$(wc -w <"$WORK/$f.nr0")" "$n")
	compare_readers "$f" "$WORK/$f.data" 0 callee "$tol"
done

# Pipe mode, written by perf inject from crafted files: read natively
# when no branch stack is empty (--drop-lone leaves out the samples of one
# user frame, startup code without frame pointers); with an empty one perf
# reads its leaf from a reused record buffer, so the file goes to perf
# script, saying so.
/usr/bin/python3 "$here/lbr_craft.py" "$WORK/deep.fp" "$WORK/lone.data" --depth 16 --drop-lone >/dev/null &&
	perf inject -i "$WORK/lone.data" -o - >"$WORK/deep-pipe.data" 2>>"$WORK/err" &&
	perf inject -i "$WORK/nr0.data" -o - >"$WORK/nr0-pipe.data" 2>>"$WORK/err" ||
	notok "$name: lbr_craft --drop-lone or perf inject failed: $(oneline "$WORK/err")"
compare_readers deep-pipe "$WORK/deep-pipe.data" 1
d=$(analyze "" "$WORK/nr0-pipe.data")
why=$(jget "$d" provenance.inputs.0.reader_reason 2>/dev/null)
if [ "$(jget "$d" provenance.inputs.0.reader 2>/dev/null)" = "perf script" ] &&
	case "$why" in *"empty LBR"*) true ;; *) false ;; esac; then
	ok "$name nr0-pipe: an empty LBR stack in a pipe goes to perf script, and the provenance says why"
else
	notok "$name nr0-pipe: reader $(jget "$d" provenance.inputs.0.reader 2>&1) reason '$why'"
fi

# Broken branch stacks: each a skipped sample, counted, the rest read.
/usr/bin/python3 "$here/lbr_craft.py" "$WORK/kernel.fp" "$WORK/overrun.data" --bad overrun >/dev/null &&
	/usr/bin/python3 "$here/lbr_craft.py" "$WORK/kernel.fp" "$WORK/no-hwidx.data" --nr0 2 --bad no-hwidx >/dev/null &&
	/usr/bin/python3 "$here/lbr_craft.py" "$WORK/kernel.fp" "$WORK/extra-hwidx.data" --bad extra-hwidx >/dev/null ||
	notok "$name: lbr_craft --bad failed"
total=$(jget "$(analyze native "$WORK/kernel.data")" provenance.inputs.0.perf_data.samples)
for bad in overrun no-hwidx extra-hwidx; do
	sum=$(analyze native "$WORK/$bad.data")
	if [ -z "$sum" ]; then
		notok "$name $bad: analyze failed: $(oneline "$WORK/err")"
		continue
	fi
	read_n=$(jget "$sum" provenance.inputs.0.perf_data.samples)
	skipped=$(jget "$sum" provenance.inputs.0.perf_data.samples_skipped)
	if [ "$(jget "$sum" provenance.inputs.0.reader)" = native ] && [ "$skipped" = 1 ] &&
		[ $((read_n + skipped)) = "$total" ]; then
		ok "$name $bad: $skipped of $total samples skipped and counted, the rest read"
	else
		notok "$name $bad: samples $read_n skipped $skipped of $total: $(jget "$sum" provenance.inputs.0)"
	fi
done
