# test_mcp_lines.sh - source lines of perf.data, computed by PerfLens.
#
# The workload (tests/workloads/callsite.c) calls on one line and stores
# on the next, and inlines a helper.  Through the CLI first: the lines of
# an fp and a DWARF perf.data against eu-addr2line (srcline_oracle.py:
# callers at their return address minus one), the leaf lines against
# perf's own srcline (perf script -F +srcline, run here, unconfined), and
# a perf killed by a signal answers with what the signal means, never a
# hint about a damaged file.  Then the MCP server, sandboxed (mcp_lines.py):
# collect with fp and dwarf, analyze with srcline off and on, and a capture
# handed over from another build directory, read with --binary.
. tests/integration/lib.sh
name="lines"
here="$REPO/tests/integration"

if ! command -v perf >/dev/null 2>&1 || ! command -v eu-addr2line >/dev/null 2>&1; then
	skip "$name: perf or eu-addr2line is not installed"
	exit 0
fi
if ! perf record -e cpu-clock -g -N -o "$WORK/probe.data" -- true >/dev/null 2>"$WORK/probe.err"; then
	skip "$name: perf cannot record here: $(oneline "$WORK/probe.err")"
	exit 0
fi
mkdir -p "$WORK/bin" "$WORK/art" "$WORK/away/build" "$WORK/away/copy"
bin="$WORK/bin/callsite"
if ! gcc -O1 -g -fno-omit-frame-pointer -o "$bin" "$REPO/tests/workloads/callsite.c" 2>"$WORK/err" ||
	! gcc -O1 -g -fno-omit-frame-pointer -o "$WORK/away/build/callsite" "$REPO/tests/workloads/callsite.c" \
		-Wl,--build-id=0x$(date +%s%N | sha1sum | cut -c1-40) 2>>"$WORK/err"; then
	notok "$name: gcc failed: $(oneline "$WORK/err")"
	exit 0
fi
for m in fp dwarf; do
	perf record -e cpu-clock -F 999 --call-graph $m -o "$WORK/cs.$m" -- "$bin" >/dev/null 2>>"$WORK/err" &&
		perf record -e cpu-clock -F 999 --call-graph $m -o "$WORK/away/data.$m" -- "$WORK/away/build/callsite" \
			>/dev/null 2>>"$WORK/err" || notok "$name: perf record --call-graph $m failed: $(oneline "$WORK/err")"
done
# The capture "from another machine": the binary leaves its build path.
eu-readelf -n "$WORK/away/build/callsite" | sed -n 's/.*Build ID: *//p' >"$WORK/away/build_id"
mv "$WORK/away/build/callsite" "$WORK/away/copy/callsite"

for m in fp dwarf; do
	"$PERFLENS" analyze --path "$WORK/cs.$m" --srcline --artifact-root "$WORK/art" >"$WORK/cs.$m.json" 2>"$WORK/err" ||
		{ notok "$name cli $m: analyze --srcline failed: $(oneline "$WORK/err")"; continue; }
	stacks=$(jget "$WORK/cs.$m.json" artifact.stacks_path)
	if out=$(/usr/bin/python3 "$here/srcline_oracle.py" "$WORK/cs.$m" "$stacks" "$bin" "$bin" $m 2>&1); then
		ok "$name cli $m: lines and inline frames agree with eu-addr2line ($out)"
	else
		notok "$name cli $m: $out"
	fi
done

# perf's own srcline for the caller frame names the line after the call
# (its return address); PerfLens names the call.  Leaves: the same line.
/usr/bin/python3 - "$WORK/cs.fp" "$(jget "$WORK/cs.fp.json" artifact.stacks_path)" "$bin" <<'EOF'
import collections, subprocess, sys
sys.path.insert(0, "tests/integration")
import srcline_oracle as o
data, stacks, binary = sys.argv[1:4]
src = open("tests/workloads/callsite.c").read().splitlines()
call = next(i + 1 for i, l in enumerate(src) if "x = work(x + i);" in l)
mine = o.perflens(stacks, binary)
perf = subprocess.run(["perf", "script", "-i", data, "-F", "ip,sym,srcline", "--no-inline"],
                      capture_output=True, text=True).stdout.splitlines()
theirs, leaves, first = collections.Counter(), collections.Counter(), True
for i, line in enumerate(perf):
    if not line.strip():
        first = True
        continue
    if i + 1 < len(perf) and "callsite.c:" in perf[i + 1]:
        fn, sl = line.split()[1].split("+")[0], perf[i + 1].strip().split()[0]
        theirs[(fn, sl.rsplit(":", 1)[1])] += 1
        if first:
            leaves[sl.rsplit(":", 1)[1]] += 1
    if line.startswith("\t") and "callsite.c:" not in line and not line.strip().startswith("callsite"):
        first = first and "[kernel" in line
at_call = sum(n for (fn, sl), n in mine.items() if fn == "caller" and sl.endswith("/callsite.c:%d" % call))
perf_next = theirs.get(("caller", str(call + 1)), 0)
ok = at_call > 100 and perf_next > 100 and theirs.get(("caller", str(call)), 0) == 0
print(("ok" if ok else "not ok") + " - lines cli fp: the caller's %d samples are on the call (line %d); "
      "perf's srcline puts %d on the line after it" % (at_call, call, perf_next))
EOF

# A perf killed by a signal: the error names the signal and the sandbox,
# and never sends the user to check the file.
cat >"$WORK/bin/sysperf" <<'EOF'
#!/bin/sh
case "$1" in script) kill -SYS $$ ;; esac
exit 0
EOF
chmod +x "$WORK/bin/sysperf"
"$PERFLENS" analyze --path "$WORK/cs.fp" --perf-path "$WORK/bin/sysperf" --artifact-root "$WORK/art" \
	>/dev/null 2>"$WORK/sys.err"
rc=$?
if [ $rc -eq 6 ] && grep -q "killed by SIGSYS" "$WORK/sys.err" && grep -q "refused a system call" "$WORK/sys.err" &&
	! grep -q "complete perf.data" "$WORK/sys.err"; then
	ok "$name: a perf killed by SIGSYS is named as such, with the sandbox and what to do (exit 6)"
else
	notok "$name: perf killed by SIGSYS: exit $rc: $(oneline "$WORK/sys.err")"
fi

HERE="$here" BUILD_DIR="$(cd "$BUILD" && pwd)" WORK="$WORK" /usr/bin/python3 "$here/mcp_lines.py"
exit 0
