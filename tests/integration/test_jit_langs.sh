# test_jit_langs.sh - Node, the JVM and CPython profiled with real perf
# and read through perflens-mcp over stdio without process execution
# (the native perf.data reader, JIT names from the runtimes' own maps).
#
# Workloads (tests/workloads): jit_hot.js under `node --perf-basic-prof`
# (/tmp/perf-PID.map) and under `node --perf-prof` recorded with -k 1
# and merged by `perf inject --jit` (jitted-PID-N.so files beside the
# jitdump); JitHot.java under `java -XX:+DumpPerfMapAtExit` and with its
# map asked for by `jcmd PID Compiler.perfmap` while it runs; interp_loop.py
# under CPython 3.11 (no perf map: interpreter frames).  The server's
# roots are the work folder and each perf map file itself, the narrowest
# an operator can allow.  Oracles: `perf report -v -n` (every hotspot of
# 1% or more named as perf names it, with its sample count; perf lists one
# name twice when the JIT compiled a function twice, so both sides are
# summed by name) and `perf script` (the share of sampled frames that are
# JIT code or interpreter frames, against quality.names.frames_percent).
# run.sh: slow
. tests/integration/lib.sh
name="jit langs"
need_perf_record "$name"
src="$REPO/tests/workloads"
mkdir -p "$WORK/run" "$WORK/art"
labels=""

# record LABEL PERF-RECORD-OPTION... -- COMMAND...: the perf.data and its
# oracles.  The runtimes run in $WORK/run: V8 writes its isolate-*-v8.log
# (and --perf-prof its jitdump) in the working folder.
record() {
	label=$1
	shift
	if ! (cd "$WORK/run" && perf record -e cpu-clock -F 999 -g -o "$WORK/$label.data" "$@" >/dev/null 2>"$WORK/err"); then
		notok "$name $label: perf record failed: $(oneline "$WORK/err")"
		return 1
	fi
	oracles "$label"
}

oracles() {
	if perf report -v -n -i "$WORK/$1.data" --stdio --no-children --sort sym -g none \
		>"$WORK/$1.report" 2>"$WORK/err" &&
		perf script -i "$WORK/$1.data" -F pid,ip,sym,dso >"$WORK/$1.script" 2>>"$WORK/err"; then
		labels="$labels $1"
	else
		notok "$name $1: perf report or perf script failed: $(oneline "$WORK/err")"
	fi
}

if ! command -v node >/dev/null 2>&1; then
	skip "$name node: node is not installed"
else
	record node -- node --perf-basic-prof "$src/jit_hot.js" 2000
	# --perf-prof writes jit-PID.dump in the working folder; perf inject
	# writes the jitted-PID-N.so files beside it.
	if (cd "$WORK/run" && perf record -k 1 -e cpu-clock -F 999 -g -o "$WORK/jitdump.raw" -- \
		node --perf-prof "$src/jit_hot.js" 2000 >/dev/null 2>"$WORK/err") &&
		perf inject --jit -i "$WORK/jitdump.raw" -o "$WORK/jitdump.data" 2>>"$WORK/err"; then
		oracles jitdump
	else
		notok "$name jitdump: node --perf-prof or perf inject --jit failed: $(oneline "$WORK/err")"
	fi
fi
if ! command -v java >/dev/null 2>&1 || ! command -v javac >/dev/null 2>&1; then
	skip "$name java: no JDK (openjdk-17-jdk-headless, tests/setup.sh)"
elif javac -d "$WORK/run" "$src/JitHot.java" 2>"$WORK/err"; then
	# The JVM keeps no frame pointer in compiled code unless told to.
	record java -- java -XX:+UnlockDiagnosticVMOptions -XX:+DumpPerfMapAtExit \
		-XX:+PreserveFramePointer -cp "$WORK/run" JitHot 3000
	# The map asked for while the JVM runs: jcmd once the workload says
	# its pid (half-way, its hot methods compiled).
	(cd "$WORK/run" && exec perf record -e cpu-clock -F 999 -g -o "$WORK/jcmd.data" -- java -XX:+PreserveFramePointer \
		-cp "$WORK/run" JitHot 4000 "$WORK/jvm.pid" >/dev/null 2>"$WORK/jcmd.err") &
	rec=$!
	i=0
	while [ ! -s "$WORK/jvm.pid" ] && [ $i -lt 300 ] && kill -0 $rec 2>/dev/null; do
		sleep 0.1
		i=$((i + 1))
	done
	jcmd "$(cat "$WORK/jvm.pid" 2>/dev/null)" Compiler.perfmap >"$WORK/jcmd.out" 2>&1 ||
		notok "$name jcmd: jcmd Compiler.perfmap failed: $(oneline "$WORK/jcmd.out")"
	if wait $rec; then
		oracles jcmd
	else
		notok "$name jcmd: perf record failed: $(oneline "$WORK/jcmd.err")"
	fi
else
	notok "$name java: javac failed: $(oneline "$WORK/err")"
fi
record python -- /usr/bin/python3 "$src/interp_loop.py" 1000

# The processes of perf script's samples (a header line is the pid alone).
pids() { cat "$@" 2>/dev/null | awk 'NF == 1 && $1 ~ /^[0-9]+$/ {print $1}' | sort -u; }
# The maps the runtimes wrote, each its own root.
maps=""
for l in $labels; do
	[ -f "$WORK/$l.script" ] || continue
	for pid in $(pids "$WORK/$l.script"); do
		[ -f "/tmp/perf-$pid.map" ] && maps="$maps /tmp/perf-$pid.map"
	done
done
HERE="$REPO/tests/integration" BUILD_DIR="$(cd "$BUILD" && pwd)" WORK="$WORK" LABELS="$labels" MAPS="$maps" \
	oracle "$name" /usr/bin/python3 - <<'PY'
import json, os, re, sys
sys.path.insert(0, os.environ["HERE"])
from mcp_client import *  # noqa: E402,F401,F403

work = os.environ["WORK"]
roots = ["--allowed-root", work]
for m in os.environ["MAPS"].split():
    roots += ["--allowed-root", m]
s = Stdio([os.environ["BUILD_DIR"] + "/perflens-mcp", *roots, "--artifact-root", work + "/art", "--allow-writes"],
          "langs")
s.initialize()
s.check_outputs()
JIT_DSO = re.compile(r"(^/tmp/perf-\d+\.map$)|(/jitted-\d+-\d+\.so$)")


def call(tool, args):
    r = (s.call(tool, args, timeout=300) or {}).get("result", {})
    return r, r.get("structuredContent") or {}


def perf_report(label):
    """{name: samples} of perf report -v -n, summed by name; the total."""
    by, total = {}, 0
    for line in open(f"{work}/{label}.report"):
        m = re.match(r"^\s+[\d.]+%\s+(\d+)\s+0x[0-9a-f]+\s+\S\s+\[.\]\s+(.*)$", line.rstrip("\n"))
        if m:
            by[m.group(2)] = by.get(m.group(2), 0) + int(m.group(1))
            total += int(m.group(1))
    return by, total


def interpreter(sym, jit):
    if jit:
        return sym.startswith(("Interpreted", "JS:~")) or sym == "Interpreter"
    return sym in ("Builtins_InterpreterEntryTrampoline", "_PyEval_EvalFrameDefault")


def frame_shares(label):
    """The percent of perf script's frames that are named JIT code and interpreter frames."""
    n = jit = interp = 0
    for line in open(f"{work}/{label}.script"):
        m = re.match(r"^\s+[0-9a-f]+ (.*) \((.*)\)$", line.rstrip("\n"))
        if not m:
            continue
        sym, dso = m.groups()
        is_jit = bool(JIT_DSO.search(dso)) and sym != "[unknown]"
        n += 1
        jit += is_jit
        interp += interpreter(sym, is_jit)
    return 100.0 * jit / max(n, 1), 100.0 * interp / max(n, 1)


for label in os.environ["LABELS"].split():
    pre = f"jit langs {label}"
    r, a = call("analyze_profile", {"path": f"{work}/{label}.data"})
    if not check(f"{pre}: analyze_profile without process execution", a.get("analysis_id"), short(r)):
        continue
    summary = json.load(open(a["artifact"]["summary_path"]))
    inp = summary["provenance"]["inputs"][0]
    jm = inp.get("perf_data", {}).get("jit_maps") or ""
    check(f"{pre}: the native reader read it" + (f" ({jm})" if jm else ""),
          inp.get("reader") == "native" and (label in ("python", "jitdump") or jm.startswith("1 JIT perf maps read")),
          f"reader {inp.get('reader')} ({inp.get('reader_reason')}), jit_maps {jm}")
    got, kinds, hotspots, args = {}, {}, [], {"analysis_id": a["analysis_id"], "limit": 100}
    while len(hotspots) < 5000:  # every page: perf's sums need every entry of a name
        r, h = call("list_hotspots", args)
        hotspots += h.get("hotspots", [])
        if not (h.get("page") or {}).get("next_cursor"):
            break
        args["cursor"] = h["page"]["next_cursor"]
    for x in hotspots:
        got[x["symbol"]] = got.get(x["symbol"], 0) + x["self"]["samples"]
        kinds.setdefault(x["symbol"], set()).add(x["kind"])
    want, total = perf_report(label)
    hot = {k: v for k, v in want.items() if v * 100 >= total and not re.fullmatch(r"0x[0-9a-f]+", k)}
    bad = [f"{k}: perf {v}, perflens {got.get(k)}" for k, v in hot.items() if got.get(k) != v]
    check(f"{pre}: all {len(hot)} hotspots of >= 1% named as perf report names them, with its sample counts",
          len(hot) >= 3 and not bad, f"{bad[:4]} of {sorted(hot, key=hot.get)[-6:]}")
    lang = {"node": "JS:*", "jitdump": "JS:*", "java": "JitHot.", "jcmd": "JitHot."}.get(label)
    if lang:
        jits = sorted(k for k in hot if lang in k)
        check(f"{pre}: the {len(jits)} hot JIT-compiled functions are of kind jit: {jits}",
              len(jits) >= 3 and all(kinds.get(k) == {"jit"} for k in jits), {k: kinds.get(k) for k in jits})
    names = summary["quality"].get("names", {})
    fp = names.get("frames_percent", {})
    want_jit, want_interp = frame_shares(label)
    check(f"{pre}: quality.names.frames_percent {fp} is perf script's share of JIT "
          f"({want_jit:.2f}%) and interpreter ({want_interp:.2f}%) frames",
          fp and abs(fp["jit"] - want_jit) < 0.01 and abs(fp["interpreted"] - want_interp) < 0.01 and
          (want_jit > 1 if lang else want_interp > 5), names)
s.close()
PY
for pid in $(pids "$WORK"/*.script); do
	rm -f "/tmp/perf-$pid.map"
done
