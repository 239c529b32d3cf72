# test_perf_data_dwarf.sh - DWARF call graphs (perf record --call-graph
# dwarf) unwound by the native perf.data reader (libdw, pdunwind.c).
#
# Fresh recordings made here (cpu-clock, as root) of workloads built
# without frame pointers (-O2 -fomit-frame-pointer: libc leaves, a chain
# of known depth, inlined helpers, threads, a forking program, a vDSO
# loop with write(2) for kernel frames, a recursion past the frame cap)
# and one with them.  Oracle: the
# perf script path on the same file (perf 6.1 post-unwinds with
# libunwind): every sample's chain lands in the same stack, so the folded
# output of every event is byte-identical, the summary and stack table
# equal but for provenance, the hotspots within 0.1 points of perf report
# --stdio --no-inline, self and children (compare_readers).  The provenance counts the unwound samples
# and why each chain ended; a chain cut short is said, not hidden.
# run.sh: slow
. tests/integration/lib.sh
name="perf.data DWARF"
here="$REPO/tests/integration"

if ! command -v perf >/dev/null 2>&1; then
	skip "$name: perf is not installed"
	exit 0
fi
if ! perf record -e cpu-clock --call-graph dwarf -N -o "$WORK/probe.data" -- true >/dev/null 2>"$WORK/probe.err"; then
	skip "$name: perf cannot record DWARF call graphs here: $(oneline "$WORK/probe.err")"
	exit 0
fi
cat >"$WORK/sys.c" <<'C'
#include <time.h>
#include <unistd.h>
static volatile long sink;
__attribute__((noinline)) static void tick(void)
{
	struct timespec ts;
	for (int i = 0; i < 1500000; i++) {
		clock_gettime(CLOCK_MONOTONIC, &ts);
		sink += ts.tv_nsec;
		if (i % 16 == 0)
			sink += write(-1, "", 0);
	}
}
int main(void) { tick(); return (int)(sink & 0); }
C
nofp="-O2 -g -fomit-frame-pointer"
W="$REPO/tests/workloads"
gcc $nofp -o "$WORK/libc_strings" "$W/libc_strings.c" &&
	gcc $nofp -o "$WORK/depth" "$W/depth.c" &&
	gcc $nofp -o "$WORK/callsite" "$W/callsite.c" &&
	gcc $nofp -pthread -o "$WORK/threads" "$W/threads.c" &&
	gcc $nofp -o "$WORK/forks" "$W/forks.c" &&
	gcc $nofp -o "$WORK/sys" "$WORK/sys.c" &&
	gcc -O1 -g -fno-omit-frame-pointer -o "$WORK/fib" "$W/fib.c" 2>>"$WORK/err" || {
	notok "$name: cannot build the workloads: $(oneline "$WORK/err")"
	exit 0
}

. "$here/perf_data_readers.sh"
for w in libc_strings depth callsite threads forks sys fib; do
	if ! perf record -N -e cpu-clock -F 499 --call-graph dwarf -o "$WORK/$w.data" -- "$WORK/$w" \
		>/dev/null 2>"$WORK/$w.rec.err"; then
		notok "$name $w: recording failed: $(oneline "$WORK/$w.rec.err")"
		continue
	fi
	compare_readers "$w" "$WORK/$w.data" 0 none 0.1 --no-inline
	u=$(jget "$nat" provenance.inputs.0.perf_data.dwarf_unwind 2>/dev/null)
	if [ "$(jget "$nat" provenance.inputs.0.perf_data.dwarf_unwind.samples)" -gt 0 ] &&
		[ "$(jget "$nat" provenance.inputs.0.perf_data.dwarf_unwind.stopped.end)" -gt 0 ]; then
		ok "$name $w: the provenance counts the unwound samples and why their chains ended ($u)"
	else
		notok "$name $w: dwarf_unwind is '$u'"
	fi
done

# A fixed period (-c: no PERIOD in sample_type): every sample weighs the
# attr's period, as perf script prints it.
if perf record -N -e cpu-clock -c 1000000 --call-graph dwarf -o "$WORK/fixed.data" -- "$WORK/depth" \
	>/dev/null 2>"$WORK/fixed.rec.err"; then
	compare_readers fixed-period "$WORK/fixed.data" 0 none 0.1 --no-inline
else
	notok "$name fixed-period: recording failed: $(oneline "$WORK/fixed.rec.err")"
fi

# A lossy recording (a 4-page ring buffer at 10 kHz with 8 KB stack
# copies): the loss is the recording's, so both readers warn of the same
# PERF_RECORD_LOST and LOST_SAMPLES counts (a CI run under load once
# lost samples and only the native reader said so).
if perf record -N -m 4 -e cpu-clock -F 10000 --call-graph dwarf -o "$WORK/lossy.data" -- "$WORK/depth" \
	>/dev/null 2>"$WORK/lossy.rec.err"; then
	if grep -q "lost" "$WORK/lossy.rec.err"; then
		compare_readers lossy "$WORK/lossy.data" 0 none 0.1 --no-inline
		for s in "$nat" "$txt"; do
			if grep -q "perf lost data while recording" "$s"; then
				ok "$name lossy: $(jget "$s" provenance.inputs.0.reader) path warns of what perf lost (perf record: $(grep -m1 "lost" "$WORK/lossy.rec.err" | tr -d "\n"))"
			else
				notok "$name lossy: $(jget "$s" provenance.inputs.0.reader) path does not warn of the loss perf reported"
			fi
		done
	else
		skip "$name lossy: perf lost nothing with a 4-page buffer at 10 kHz on this machine"
	fi
else
	notok "$name lossy: recording failed: $(oneline "$WORK/lossy.rec.err")"
fi

# The same recording gzip- and zstd-compressed: read natively in memory
# (perf reads neither), the same folded output as the file itself.
if [ -s "$WORK/depth.data" ]; then
	gzip -c "$WORK/depth.data" >"$WORK/depth.data.gz" && zstd -q -c "$WORK/depth.data" >"$WORK/depth.data.zst"
	"$PERFLENS" export --analysis-id "$(id_of "$(analyze native "$WORK/depth.data")")" --format folded \
		--output - --artifact-root "$WORK/art" >"$WORK/depth.plain.folded" 2>>"$WORK/err"
	for z in gz zst; do
		# asked for perf script, which reads no compressed file: the native reader
		zs=$(analyze perf-script "$WORK/depth.data.$z")
		"$PERFLENS" export --analysis-id "$(id_of "$zs")" --format folded --output - \
			--artifact-root "$WORK/art" >"$WORK/depth.$z.folded" 2>>"$WORK/err"
		if [ -s "$WORK/depth.plain.folded" ] && cmp -s "$WORK/depth.plain.folded" "$WORK/depth.$z.folded"; then
			ok "$name: a $z-compressed perf.data reads as the file itself ($(wc -l <"$WORK/depth.$z.folded") folded lines)"
		else
			notok "$name: the $z-compressed perf.data differs: $(diff "$WORK/depth.plain.folded" "$WORK/depth.$z.folded" | head -3 | oneline /dev/stdin)"
		fi
	done
fi

# A program exec'd from sh, twice (in a child, then in place): its process
# keeps mappings of the older image (perf keeps them), and where a file's
# lowest mapping is not its live one perf 6.1's libunwind stops, so
# perf script's chain is shorter.  Every sample whose chain differs must
# be one the provenance counts: through_file_at_two_bases (that class)
# or stopped.memory_outside_copy (perf adds a frame-pointer guess there).
if perf record -N -e cpu-clock -c 1000000 --call-graph dwarf -o "$WORK/exec.data" -- \
	sh -c "sh -c 'exec $WORK/libc_strings'; exec $WORK/libc_strings" >/dev/null 2>"$WORK/exec.rec.err"; then
	n=$(analyze native "$WORK/exec.data") t=$(analyze perf-script "$WORK/exec.data")
	for x in n t; do
		eval "id=\$(id_of \"\$$x\")"
		"$PERFLENS" export --analysis-id "$id" --format folded --output - --artifact-root "$WORK/art" \
			>"$WORK/exec.$x.folded" 2>>"$WORK/err"
	done
	out=$(/usr/bin/python3 - "$WORK/exec.n.folded" "$WORK/exec.t.folded" "$n" <<'PY'
import collections, json, sys
def load(p):
    c = collections.Counter()
    for l in open(p):
        s, w = l.rstrip("\n").rsplit(" ", 1)
        c[s] += int(w) // 1000000
    return c
a, b = load(sys.argv[1]), load(sys.argv[2])
differ = sum(max(a[k] - b[k], 0) for k in a)
u = json.load(open(sys.argv[3]))["provenance"]["inputs"][0]["perf_data"]["dwarf_unwind"]
counted = u["through_file_at_two_bases"] + u["stopped"]["memory_outside_copy"]
print("%d %d %d" % (differ, counted, sum(b.values())))
PY
)
	set -- $out
	if [ $# = 3 ] && [ "$1" -le "$2" ] && [ "$3" -gt 0 ]; then
		ok "$name exec: of $3 samples, the $1 whose chain differs from perf script's are within the $2 counted"
	else
		notok "$name exec: differing, counted, samples: '$out'"
	fi
else
	notok "$name exec: recording failed: $(oneline "$WORK/exec.rec.err")"
fi

# The chain of known depth: main > depth_1 > ... > depth_12 > spin in the
# hottest stack, from a binary without frame pointers.
if grep -q "main;depth_1;depth_2;depth_3;depth_4;depth_5;depth_6;depth_7;depth_8;depth_9;depth_10;depth_11;depth_12;spin" \
	"$WORK/t.folded" 2>/dev/null || {
	"$PERFLENS" export --analysis-id "$(id_of "$(analyze native "$WORK/depth.data")")" --format folded \
		--output - --artifact-root "$WORK/art" 2>>"$WORK/err" |
		grep -q "main;depth_1;depth_2;depth_3;depth_4;depth_5;depth_6;depth_7;depth_8;depth_9;depth_10;depth_11;depth_12;spin"
}; then
	ok "$name: depth's whole chain (main > depth_1..12 > spin) is unwound without frame pointers"
else
	notok "$name: depth's chain is not whole"
fi

# Deeper than the frame cap: a recursion of 200 frames in a 32 KB stack
# copy.  Every chain stops at perf's 127 frames as perf script's do
# (folded identical), counted max_frames.
cat >"$WORK/deep.c" <<'C'
#include <stdlib.h>
static volatile long sink;
__attribute__((noinline)) long down(int n)
{
	if (n == 0) {
		for (long i = 0; i < 4000000; i++)
			sink += i;
		return sink;
	}
	long r = down(n - 1);
	sink += r;
	return r + 1;
}
int main(int argc, char **argv) { long t = 0; for (int k = 0; k < 30; k++) t += down(atoi(argv[1])); return (int)(t & 1); }
C
if gcc $nofp -o "$WORK/deep" "$WORK/deep.c" 2>>"$WORK/err" &&
	perf record -N -e cpu-clock -F 499 --call-graph dwarf,32768 -o "$WORK/deep.data" -- "$WORK/deep" 200 \
		>/dev/null 2>"$WORK/deep.rec.err"; then
	compare_readers deep "$WORK/deep.data" 0 none 0.1 --no-inline
	capped=$(jget "$nat" provenance.inputs.0.perf_data.dwarf_unwind.stopped.max_frames 2>/dev/null)
	if [ "${capped:-0}" -gt 0 ]; then
		ok "$name deep: $capped chains stop at the frame cap, counted max_frames"
	else
		notok "$name deep: max_frames is '$capped'"
	fi
else
	notok "$name deep: build or recording failed: $(oneline "$WORK/deep.rec.err")"
fi

# A binary that moved or was rebuilt after the recording: its CFI (and
# symbols) come from the build-id-matched file given with --binary, or
# found under --sysroot at the recorded path, through the symbolizer's
# own lookup.  Oracle: the perf script path on the recording while the
# file was still in place (-N: no perf build-id cache copy to fall back
# on).  Without either the chains are cut in that module, so the check
# shows the file given was used.
mkdir -p "$WORK/mv" "$WORK/keep" "$WORK/root$WORK/mv"
gcc $nofp -o "$WORK/mv/depth" "$W/depth.c" 2>>"$WORK/err"
if perf record -N -e cpu-clock -F 499 --call-graph dwarf -o "$WORK/mv.data" -- "$WORK/mv/depth" \
	>/dev/null 2>"$WORK/mv.rec.err"; then
	# folded_of READER [OPTIONS...]: the folded stacks of mv.data, sorted,
	# read by READER with perflens OPTIONS.
	folded_of() {
		_r=$1
		shift
		PERFLENS_PERF_DATA_READER=$_r "$PERFLENS" "$@" analyze --path "$WORK/mv.data" \
			--artifact-root "$WORK/art" 2>>"$WORK/err" >"$WORK/mv.json"
		mvsum=$(jget "$WORK/mv.json" artifact.summary_path 2>/dev/null)
		"$PERFLENS" export --analysis-id "$(jget "$WORK/mv.json" analysis_id 2>/dev/null)" --format folded \
			--output - --artifact-root "$WORK/art" 2>>"$WORK/err" | sort
	}
	# elsewhere: how many samples the provenance says went through a
	# module read from a file found elsewhere, then the stops.
	elsewhere() {
		/usr/bin/python3 -c 'import json,sys
u = json.load(open(sys.argv[1]))["provenance"]["inputs"][0]["perf_data"]["dwarf_unwind"]
print(u["through_file_found_elsewhere"], u["samples"], u["stopped"]["no_module"])' "$mvsum" 2>/dev/null
	}
	folded_of perf-script >"$WORK/mv.want"
	cp "$WORK/mv/depth" "$WORK/keep/depth"
	cp "$WORK/mv/depth" "$WORK/root$WORK/mv/depth"
	# Another build at the recorded path (-O1: other code, other build-id).
	gcc -O1 -g -fomit-frame-pointer -o "$WORK/mv/depth" "$W/depth.c" 2>>"$WORK/err"
	folded_of native >"$WORK/mv.none"
	cnt_none=$(elsewhere)
	folded_of native --binary "$WORK/keep/depth" >"$WORK/mv.binary"
	cnt_binary=$(elsewhere)
	folded_of native --sysroot "$WORK/root" >"$WORK/mv.sysroot"
	if [ -s "$WORK/mv.want" ] && grep -q ';depth_12;spin ' "$WORK/mv.want" &&
		! cmp -s "$WORK/mv.none" "$WORK/mv.want"; then
		for how in binary sysroot; do
			if cmp -s "$WORK/mv.$how" "$WORK/mv.want"; then
				ok "$name moved binary: with --$how the chains and names equal perf script's on the recording before the rebuild ($(wc -l <"$WORK/mv.want") stacks)"
			else
				notok "$name moved binary --$how: $(diff "$WORK/mv.$how" "$WORK/mv.want" | head -4 | oneline /dev/stdin)"
			fi
		done
		# Every sample's chain runs through depth: all of them deeper than
		# perf script (without --symfs) would go, and said; without the
		# file each ends there, counted no_module.
		set -- $cnt_binary
		n_all=$2
		set -- $cnt_none
		if [ "$cnt_binary" = "$n_all $n_all 0" ] && [ "$1" = 0 ] && [ "$3" = "$n_all" ]; then
			ok "$name moved binary: the provenance counts the $n_all samples through a file found elsewhere (through_file_found_elsewhere), and without it their ends (no_module)"
		else
			notok "$name moved binary: elsewhere, samples, no_module: with --binary '$cnt_binary', without '$cnt_none'"
		fi
	else
		notok "$name moved binary: the oracle or the run without the file does not show it ($(head -2 "$WORK/mv.none" | oneline /dev/stdin))"
	fi
else
	notok "$name moved binary: recording failed: $(oneline "$WORK/mv.rec.err")"
fi

# aarch64, read on this host: a crafted recording (dwarf_craft.py) whose
# registers and stack copy stand in the known chain of
# fixtures/dwarf-aarch64/chain (_start > chain_main > chain_mid >
# chain_leaf): the whole chain; a stack copy too short for it (ends at
# chain_mid, counted memory_outside_copy); a saved return address in no
# module ([unknown] below the leaf, counted no_module); no registers (no
# user frames, counted without_stack).
cp "$REPO/fixtures/dwarf-aarch64/chain" "$WORK/chain"
/usr/bin/python3 "$here/dwarf_craft.py" "$WORK/chain" "$WORK/a64.data"
a=$(analyze native "$WORK/a64.data")
if [ -n "$a" ]; then
	"$PERFLENS" export --analysis-id "$(id_of "$a")" --format folded --output - --artifact-root "$WORK/art" \
		>"$WORK/a64.folded" 2>>"$WORK/err"
	printf '%s\n' "full;_start;chain_main;chain_mid;chain_leaf 1000" "noregs 1000" \
		"short;chain_mid;chain_leaf 1000" >"$WORK/a64.want"
	if grep -v '^wild' "$WORK/a64.folded" | cmp -s - "$WORK/a64.want" &&
		grep -q '^wild;.*\[unknown\];chain_leaf 1000$' "$WORK/a64.folded"; then
		ok "$name aarch64: the known chain, a short copy, a wild return address, no registers unwind as expected"
	else
		notok "$name aarch64: folded is $(oneline "$WORK/a64.folded")"
	fi
	u=$(jget "$a" provenance.inputs.0.perf_data.dwarf_unwind)
	if [ "$(jget "$a" provenance.inputs.0.perf_data.dwarf_unwind.stopped.end)" = 1 ] &&
		[ "$(jget "$a" provenance.inputs.0.perf_data.dwarf_unwind.stopped.memory_outside_copy)" = 1 ] &&
		[ "$(jget "$a" provenance.inputs.0.perf_data.dwarf_unwind.stopped.no_module)" = 1 ] &&
		[ "$(jget "$a" provenance.inputs.0.perf_data.dwarf_unwind.without_stack)" = 1 ]; then
		ok "$name aarch64: each chain's end is counted with its reason ($u)"
	else
		notok "$name aarch64: dwarf_unwind is $u"
	fi
else
	notok "$name aarch64: analyze failed: $(oneline "$WORK/err")"
fi
