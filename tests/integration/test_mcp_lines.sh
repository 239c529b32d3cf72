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
# handed over from another build directory, read with --binary, its
# source found with --path-map from the debug info's full path.
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
mkdir -p "$WORK/bin" "$WORK/art" "$WORK/away/build" "$WORK/away/copy" "$WORK/here"
bin="$WORK/bin/callsite"
cp "$REPO/tests/workloads/callsite.c" "$WORK/away/build/callsite.c"
if ! gcc -O1 -g -fno-omit-frame-pointer -o "$bin" "$REPO/tests/workloads/callsite.c" 2>"$WORK/err" ||
	! (cd "$WORK/away/build" && gcc -O1 -g -fno-omit-frame-pointer -o callsite callsite.c \
		-Wl,--build-id=0x$(date +%s%N | sha1sum | cut -c1-40)) 2>>"$WORK/err"; then
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
mkdir -p "$WORK/here/src" && mv "$WORK/away/build/callsite.c" "$WORK/here/src/callsite.c"

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
calls = collections.Counter()   # caller frames only: a leaf in caller may sit on the call's line
for i, line in enumerate(perf):
    if not line.strip():
        first = True
        continue
    if i + 1 < len(perf) and "callsite.c:" in perf[i + 1]:
        fn, sl = line.split()[1].split("+")[0], perf[i + 1].strip().split()[0]
        theirs[(fn, sl.rsplit(":", 1)[1])] += 1
        if first:
            leaves[sl.rsplit(":", 1)[1]] += 1
        else:
            calls[(fn, sl.rsplit(":", 1)[1])] += 1
    if line.startswith("\t") and "callsite.c:" not in line and not line.strip().startswith("callsite"):
        first = first and "[kernel" in line
at_call = sum(n for (fn, sl), n in mine.items() if fn == "caller" and sl.endswith("/callsite.c:%d" % call))
perf_next = theirs.get(("caller", str(call + 1)), 0)
# A sample whose leaf is caller itself, its pc still on the call's line
# (the argument computed before the call), is on that line for perf too;
# only caller frames (return addresses) must be on the line after.
ok = at_call > 100 and perf_next > 100 and calls.get(("caller", str(call)), 0) == 0
print(("ok" if ok else "not ok") + " - lines cli fp: the caller's %d samples are on the call (line %d); "
      "perf's srcline puts %d on the line after it" % (at_call, call, perf_next))
EOF

# A perf killed by a signal: the error names the signal and the sandbox,
# and never sends the user to check the file.
cat >"$WORK/bin/sysperf" <<'EOF'
#!/bin/sh
for a; do [ "$a" = script ] && kill -SYS $$; done
exit 0
EOF
chmod +x "$WORK/bin/sysperf"
# (The perf script reader asked for: the native one would read the file.)
PERFLENS_PERF_DATA_READER=perf-script "$PERFLENS" analyze --path "$WORK/cs.fp" --perf-path "$WORK/bin/sysperf" \
	--artifact-root "$WORK/art" >/dev/null 2>"$WORK/sys.err"
rc=$?
if [ $rc -eq 6 ] && grep -q "killed by SIGSYS" "$WORK/sys.err" && grep -q "refused a system call" "$WORK/sys.err" &&
	! grep -q "complete perf.data" "$WORK/sys.err"; then
	ok "$name: a perf killed by SIGSYS is named as such, with the sandbox and what to do (exit 6)"
else
	notok "$name: perf killed by SIGSYS: exit $rc: $(oneline "$WORK/sys.err")"
fi

# One reader for every srcline: perf's "(discriminator N)" note after the
# line (source_context once took "12 (discriminator 2)" for no line).
printf 'app 10/10 1.000000: 1 cycles:\n\t    1139 work+0x9 (/x/app)\n  /x/app.c:12 (discriminator 2)\n\t    1160 main+0x10 (/x/app)\n  /x/app.c:20\n\n' >"$WORK/disc.txt"
did=$("$PERFLENS" analyze --path "$WORK/disc.txt" --artifact-root "$WORK/art" 2>"$WORK/err" |
	/usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["analysis_id"])')
"$PERFLENS" source --analysis-id "$did" --file app.c --artifact-root "$WORK/art" >"$WORK/disc.json" 2>>"$WORK/err"
if /usr/bin/python3 -c 'import json,sys
d = json.load(open(sys.argv[1]))
hot = {h["line"]: h["self_samples"] for h in d["files"][0]["hot_lines"]}
sys.exit(not (hot.get(12) == 1 and 20 in hot and d["source_text_missing"]))' "$WORK/disc.json" 2>/dev/null; then
	ok "$name: source_context reads a srcline with (discriminator 2) as its line, the text missing"
else
	notok "$name: discriminator srcline: $(oneline "$WORK/disc.json") $(oneline "$WORK/err")"
fi

# A perf that makes a system call the sandbox refuses (ptrace), for the
# server's error: it must name the call, from the kernel's audit record.
printf '#include <string.h>\n#include <sys/ptrace.h>\nint main(int c, char **v) { for (int i = 1; i < c; i++) if (!strcmp(v[i], "script") || !strcmp(v[i], "record")) ptrace(PTRACE_TRACEME, 0, 0, 0); return 0; }\n' >"$WORK/sysperf.c"
gcc -o "$WORK/bin/sysperf-c" "$WORK/sysperf.c" 2>>"$WORK/err" || notok "$name: gcc sysperf failed: $(oneline "$WORK/err")"
HERE="$here" BUILD_DIR="$(cd "$BUILD" && pwd)" WORK="$WORK" /usr/bin/python3 "$here/mcp_lines.py"
exit 0
