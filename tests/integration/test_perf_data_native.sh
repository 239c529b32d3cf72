# test_perf_data_native.sh - the native perf.data reader against perf.
#
# Real recordings made here (cpu-clock, as root): frame-pointer stacks,
# two events at once, pipe mode (perf record -o -), zstd (-z),
# --buildid-mmap and no callchain.  Oracles: the perf script text path
# (PERFLENS_PERF_DATA_READER=perf-script runs it on the same file): the
# folded output of every event is byte-identical, and so are the summary
# and the stack table but for provenance; perf report --stdio agrees on
# every symbol's self and children share (compare_perf_report.py).  A
# DWARF recording is unwound natively, also in the sandboxed worker.  Bad
# files (truncated, sizes past the end, a zero-size record) are clear
# errors, never crashes.  The MCP server started without
# --allow-process-execution analyzes a perf.data in its worker, then
# list_hotspots answers from it.  --binary names a moved binary's frames
# after the native reader as after perf script.
# run.sh: slow
. tests/integration/lib.sh
name="perf.data native"
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
for w in fib libc_strings depth; do
	gcc -O1 -g -fno-omit-frame-pointer -o "$WORK/$w" "$REPO/tests/workloads/$w.c" 2>>"$WORK/err" ||
		notok "$name: cannot build $w: $(oneline "$WORK/err")"
done

# record NAME PERF-RECORD-ARGS... -- CMD: perf record into $WORK/NAME.data.
record() {
	n=$1
	shift
	perf record -N "$@" >/dev/null 2>"$WORK/$n.rec.err"
}
record fp -e cpu-clock -F 999 -g -o "$WORK/fp.data" -- "$WORK/fib" &&
record multi -e cpu-clock,task-clock -F 999 -g -o "$WORK/multi.data" -- "$WORK/libc_strings" &&
record z -e cpu-clock -F 999 -g -z -o "$WORK/z.data" -- "$WORK/libc_strings" &&
record bid -e cpu-clock -F 999 -g --buildid-mmap -o "$WORK/bid.data" -- "$WORK/libc_strings" &&
record nog -e cpu-clock -F 999 -o "$WORK/nog.data" -- "$WORK/fib" &&
perf record -N -e cpu-clock -F 999 -g -o - -- "$WORK/fib" 2>"$WORK/pipe.rec.err" >"$WORK/pipe.data" &&
# User-only, with the build-id cache (no -N): depth's clock_gettime calls
# land in the vdso, which perf names only from its cache (~/.debug).
perf record -e cpu-clock:u -F 999 -g -o "$WORK/vdso.data" -- "$WORK/depth" >/dev/null 2>"$WORK/vdso.rec.err"
if [ $? -ne 0 ]; then
	notok "$name: recording failed: $(cat "$WORK"/*.rec.err | oneline /dev/stdin)"
	exit 0
fi

. "$here/perf_data_readers.sh"
for f in fp multi pipe z bid nog vdso; do
	case $f in nog | pipe) compare_readers "$f" "$WORK/$f.data" 1 ;; *) compare_readers "$f" "$WORK/$f.data" ;; esac
	# compare_readers leaves the last event's folded text in t.folded: the
	# vdso frames are named as perf script names them (perf's cache).
	if [ $f = vdso ]; then
		want=$(perf script -i "$WORK/vdso.data" 2>/dev/null | grep -c ' __vdso_[a-z_]*+0x[0-9a-f]* (\[vdso\])')
		if [ "$want" -gt 0 ] && grep -q ';__vdso_[a-z_]* [0-9]*$' "$WORK/t.folded" && ! grep -q '\[\[vdso\]\]' "$WORK/t.folded"; then
			ok "$name vdso: the vdso frames are named as perf script names them ($want frames)"
		elif [ "$want" -eq 0 ]; then
			skip "$name vdso: perf script names no __vdso_ frame in this recording"
		else
			notok "$name vdso: perf script names $want __vdso_ frames, the folded output: $(grep vdso "$WORK/t.folded" | oneline /dev/stdin)"
		fi
	fi
done

# The kallsyms index (perfdata/pdkindex.h): the first analysis under an
# artifact root leaves cache/kallsyms-BOOT.index beside the kallsyms copy,
# and later ones map it.  A damaged index is never trusted: one kernel
# name that the folded output holds is changed in the index in place
# (same length, so only the checksum can tell), and the next analysis
# still gives the same names, byte for byte, without the changed one.  The
# recording is of dd copying in 1 KB blocks: mostly kernel frames.
kx="$WORK/kx"
rm -rf "$kx"
perf record -N -e cpu-clock -F 999 -g -o "$WORK/kx.data" -- dd if=/dev/zero of=/dev/null bs=1k count=300000 \
	>/dev/null 2>>"$WORK/err"
kx_folded() {
	id=$(PERFLENS_PERF_DATA_READER=native "$PERFLENS" analyze --path "$WORK/kx.data" --artifact-root "$kx" 2>>"$WORK/err" |
		/usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["analysis_id"])')
	"$PERFLENS" export --analysis-id "$id" --format folded --output - --artifact-root "$kx" 2>>"$WORK/err"
}
kx_folded >"$WORK/kx1.folded"
index=$(ls "$kx"/cache/kallsyms-*.index 2>/dev/null | head -1)
if [ -n "$index" ] && [ -s "$WORK/kx1.folded" ]; then
	ok "$name: the first analysis leaves the kallsyms index beside the copy ($(basename "$index"), $(stat -c %s "$index") bytes)"
	changed=$(/usr/bin/python3 - "$index" "$WORK/kx1.folded" <<'EOF2'
import sys
index = bytearray(open(sys.argv[1], "rb").read())
frames = {f for line in open(sys.argv[2]) for f in line.rsplit(" ", 1)[0].split(";")}
for name in sorted(frames, key=lambda n: (-len(n), n)):
    key = b"\0" + name.encode() + b"\0"
    at = index.find(key)
    if len(name) > 8 and at >= 0 and index.find(key, at + 1) < 0:
        index[at + 1] = ord("Q") if name[0] != "Q" else ord("R")
        with open(sys.argv[1], "r+b") as f:
            f.seek(at + 1); f.write(index[at + 1:at + 2])
        print(index[at + 1:at + 1 + len(name)].decode()); break
EOF2
)
	rm -rf "$kx/analyses"
	kx_folded >"$WORK/kx2.folded"
	if [ -n "$changed" ] && cmp -s "$WORK/kx1.folded" "$WORK/kx2.folded" && ! grep -qF "$changed" "$WORK/kx2.folded"; then
		ok "$name: a damaged kallsyms index is refused: the names stay perf's, byte for byte ($changed was planted and not read)"
	else
		notok "$name: damaged index (planted '$changed'): $(diff "$WORK/kx1.folded" "$WORK/kx2.folded" | head -3 | oneline /dev/stdin)"
	fi
else
	notok "$name: no kallsyms index after an analysis under $kx: $(ls "$kx/cache" 2>&1 | oneline /dev/stdin)"
fi

# Provenance of a compressed recording: what the reader saw.
nat=$(analyze native "$WORK/z.data")
if [ "$(jget "$nat" provenance.inputs.0.perf_data.compressed)" = True ] &&
	[ "$(jget "$nat" provenance.inputs.0.perf_data.decompressed_bytes)" -gt 0 ] &&
	[ -n "$(jget "$nat" provenance.inputs.0.perf_data.cmdline)" ]; then
	ok "$name: a -z recording's provenance says compressed, the bytes it became, the perf command line"
else
	notok "$name: -z provenance: $(jget "$nat" provenance.inputs.0.perf_data)"
fi
if /usr/bin/python3 "$here/validate_json.py" "$REPO/schemas/analysis.schema.json" "$nat" >"$WORK/v.out" 2>&1; then
	ok "$name: the native reader's summary validates against analysis.schema.json"
else
	notok "$name: schema: $(oneline "$WORK/v.out")"
fi

# DWARF callchains: the native reader unwinds them (libdw), and the
# provenance counts the unwound samples (test_perf_data_dwarf.sh compares
# them with perf script on several workloads).
if perf record -N -e cpu-clock -F 499 --call-graph dwarf -o "$WORK/dwarf.data" -- "$WORK/fib" \
	>/dev/null 2>"$WORK/err"; then
	d=$(analyze "" "$WORK/dwarf.data")
	if [ "$(jget "$d" provenance.inputs.0.reader)" = "native" ] &&
		[ "$(jget "$d" provenance.inputs.0.perf_data.dwarf_unwind.samples)" -gt 0 ]; then
		ok "$name: a DWARF recording is read natively, its samples unwound ($(jget "$d" provenance.inputs.0.perf_data.dwarf_unwind.samples))"
	else
		notok "$name: DWARF: reader $(jget "$d" provenance.inputs.0.reader 2>&1) $(jget "$d" provenance.inputs.0.perf_data.dwarf_unwind 2>&1)"
	fi
else
	notok "$name: cannot record DWARF: $(oneline "$WORK/err")"
fi

# Bad files: a clear error (exit 3, the file named as malformed), never a
# crash.
size=$(stat -c %s "$WORK/fp.data")
head -c $((size / 2)) "$WORK/fp.data" >"$WORK/half.data"
head -c 120 "$WORK/fp.data" >"$WORK/head.data"
/usr/bin/python3 - "$WORK/fp.data" "$WORK/zero.data" "$WORK/pastend.data" <<'EOF'
import struct, sys
b = bytearray(open(sys.argv[1], "rb").read())
data_off = struct.unpack_from("<Q", b, 40)[0]
z = bytearray(b); struct.pack_into("<H", z, data_off + 6, 0)      # first record of size 0
open(sys.argv[2], "wb").write(z)
p = bytearray(b); struct.pack_into("<Q", p, 48, len(b) * 4)         # data size past the end
open(sys.argv[3], "wb").write(p)
EOF
for bad in half head zero pastend; do
	PERFLENS_PERF_DATA_READER=native "$PERFLENS" analyze --path "$WORK/$bad.data" --artifact-root "$WORK/art" \
		>/dev/null 2>"$WORK/bad.err"
	rc=$?
	if [ $rc = 3 ] && grep -q "malformed perf.data" "$WORK/bad.err"; then
		ok "$name: $bad file: exit 3, $(grep -o 'malformed perf.data[^"]*' "$WORK/bad.err" | head -1)"
	else
		notok "$name: $bad file: exit $rc: $(oneline "$WORK/bad.err")"
	fi
done

# The MCP server without --allow-process-execution: the worker reads the
# perf.data itself, and list_hotspots answers from the analysis.
cli_top=$("$PERFLENS" hotspots --analysis-id "$(id_of "$(analyze native "$WORK/fp.data")")" --limit 1 \
	--artifact-root "$WORK/art" 2>/dev/null | /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["hotspots"][0]["symbol"])')
cat >"$WORK/mcp.py" <<'EOF'
import json, os, sys
sys.path.insert(0, os.environ["HERE"])
from mcp_client import *
build, work = os.environ["BUILD_DIR"], os.environ["WORK"]
os.makedirs(work + "/mart", exist_ok=True)
s = Stdio([build + "/perflens-mcp", "--allowed-root", work, "--artifact-root", work + "/mart", "--allow-writes"], "noexec")
s.initialize()
r = s.call("analyze_profile", {"path": os.path.join(work, "fp.data")}, timeout=60)["result"]
sc = r.get("structuredContent") or {}
check("perf.data native MCP: analyze_profile reads perf.data in a server without --allow-process-execution",
      not r.get("isError") and sc.get("records", {}).get("parsed", 0) > 0, short(r))
summary = json.load(open(sc["artifact"]["summary_path"])) if sc.get("artifact") else {}
inp = (summary.get("provenance", {}).get("inputs") or [{}])[0]
check("perf.data native MCP: the provenance says the native reader ran", inp.get("reader") == "native", short(inp))
steps = [st for st in sc.get("next_steps", []) if st.get("tool") == "list_hotspots"]
if check("perf.data native MCP: next_steps lead to list_hotspots", bool(steps), short(sc.get("next_steps"))):
    h = s.call("list_hotspots", steps[0]["arguments"])["result"]
    hs = (h.get("structuredContent") or {}).get("hotspots", [])
    top = hs[0]["symbol"] if hs else None
    check("perf.data native MCP: list_hotspots' top symbol is the CLI's (%s)" % os.environ["CLI_TOP"],
          top == os.environ["CLI_TOP"], short(h))
r = s.call("analyze_profile", {"path": os.path.join(work, "dwarf.data")}, timeout=60)["result"]
sc = r.get("structuredContent") or {}
summary = json.load(open(sc["artifact"]["summary_path"])) if sc.get("artifact") else {}
inp = (summary.get("provenance", {}).get("inputs") or [{}])[0]
check("perf.data native MCP: a DWARF file is unwound in the worker of a server without --allow-process-execution",
      not r.get("isError") and inp.get("reader") == "native" and
      inp.get("perf_data", {}).get("dwarf_unwind", {}).get("user_frames", 0) > 0, short(r))
s.close()
EOF
HERE="$here" BUILD_DIR="$(cd "$BUILD" && pwd)" WORK="$WORK" CLI_TOP="$cli_top" /usr/bin/python3 "$WORK/mcp.py"

# A binary perf cannot find where it was recorded: --binary with the
# recorded build-id names its frames either way.  The native reader takes
# its symbols (and a DWARF chain's CFI) from the --binary file itself, as
# perf with --symfs would; on the perf script path perf leaves them
# [unknown] and the recovery names them afterwards.  The folded stacks
# are the same.
mkdir -p "$WORK/rec/keep"
(cat "$REPO/tests/workloads/fib.c"; echo "int perflens_unique_$$(void) { return $$; }") >"$WORK/rec/uniq.c"
if gcc -O1 -g -fno-omit-frame-pointer -o "$WORK/rec/uniq" "$WORK/rec/uniq.c" 2>"$WORK/err" &&
	perf record -N -e cpu-clock -F 999 -g -o "$WORK/rec/uniq.data" -- "$WORK/rec/uniq" >/dev/null 2>>"$WORK/err"; then
	mv "$WORK/rec/uniq" "$WORK/rec/keep/uniq"
	# recovered READER: "UNKNOWN RECOVERED", the reader's folded stacks
	# in $WORK/rec/READER.folded.
	recovered() {
		PERFLENS_PERF_DATA_READER=$1 "$PERFLENS" analyze --path "$WORK/rec/uniq.data" --artifact-root "$WORK/rec/art" \
			--binary "$WORK/rec/keep/uniq" 2>>"$WORK/err" >"$WORK/rec/$1.json"
		"$PERFLENS" export --analysis-id "$(jget "$WORK/rec/$1.json" analysis_id)" --format folded --output - \
			--artifact-root "$WORK/rec/art" 2>>"$WORK/err" | sort >"$WORK/rec/$1.folded"
		/usr/bin/python3 -c 'import json,sys; s=json.load(open(sys.argv[1]))["artifact"]["summary_path"]; r=json.load(open(s))["quality"]["frame_recovery"]; print(r["user_frames_unknown"], r["recovered"])' "$WORK/rec/$1.json"
	}
	n=$(recovered native) t=$(recovered perf-script)
	set -- $t
	if [ "${2:-0}" -gt 0 ] && [ "$n" = "0 0" ] && [ -s "$WORK/rec/native.folded" ] &&
		cmp -s "$WORK/rec/native.folded" "$WORK/rec/perf-script.folded"; then
		ok "$name: --binary names the frames of a moved binary: read from it by the native reader (none unknown), recovered after perf script ($t unknown/recovered), the same folded stacks"
	else
		notok "$name: moved binary with --binary: native '$n' vs perf script '$t' (unknown/recovered): $(diff "$WORK/rec/native.folded" "$WORK/rec/perf-script.folded" | head -4 | oneline /dev/stdin) $(oneline "$WORK/err")"
	fi
else
	notok "$name recovery: build or record failed: $(oneline "$WORK/err")"
fi
