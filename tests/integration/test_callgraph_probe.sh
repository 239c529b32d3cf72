# test_callgraph_probe.sh - the call-graph probe's known-depth chain,
# against perf's own output.
#
# `perflens --perflens-known-chain` (the workload every PerfLens binary
# carries) is recorded here with perf record --call-graph fp and dwarf,
# exactly as the probe's reported command does, and perf script's own
# output is read by chain_oracle.py: fp must show the chain built with
# frame pointers whole and the one without cut short, dwarf both whole.
# The probe (CLI capabilities and the sandboxed MCP tool) must report the
# same depths and verdicts, lbr as failed where perf record refuses it,
# its output must validate against the tool's outputSchema, and a second
# call is answered from the cache.
# run.sh: slow
. tests/integration/lib.sh
name="callgraph probe"
here="$REPO/tests/integration"
P=I_EXPLICITLY_AUTHORIZE_TARGET_PROFILING
B=$(cd "$BUILD" && pwd)

if ! command -v perf >/dev/null 2>&1; then
	skip "$name: perf is not installed"
	exit 0
fi
if ! perf record -e cpu-clock -g -N -o "$WORK/probe.data" -- true >/dev/null 2>"$WORK/probe.err"; then
	skip "$name: perf cannot record here: $(oneline "$WORK/probe.err")"
	exit 0
fi

# The workload alone: it exits 0 and spends ~2 x 150 ms of CPU.
if "$B/perflens" --perflens-known-chain && "$B/perflens-mcp" --perflens-known-chain; then
	ok "$name: both binaries run the known chain and exit 0"
else
	notok "$name: the known-chain workload failed"
fi

# The probe through the CLI (unconfined), then its recordings redone here.
mkdir -p "$WORK/art" "$WORK/root"
"$B/perflens" --artifact-root "$WORK/art" --authorize-target "$P" capabilities --refresh \
	>"$WORK/cli.json" 2>"$WORK/cli.err"
if [ -s "$WORK/cli.json" ] &&
	/usr/bin/python3 "$here/validate_json.py" schemas/tools/inspect_collection_capabilities.json:outputSchema \
		"$WORK/cli.json" >"$WORK/v.out" 2>&1; then
	ok "$name: the CLI's answer validates against the outputSchema"
else
	notok "$name: CLI capabilities: $(oneline "$WORK/cli.err") $(oneline "$WORK/v.out")"
fi
for mode in fp dwarf; do
	# The command the probe reports, run again into our own file.
	/usr/bin/python3 - "$WORK/cli.json" "$mode" "$WORK/$mode.data" >"$WORK/cmd" <<'PY'
import json, sys
g = [g for g in json.load(open(sys.argv[1]))["call_graphs"] if g["mode"] == sys.argv[2]][0]
cmd = g["command"]
cmd[cmd.index("-o") + 1] = sys.argv[3]
print("\n".join(cmd))
PY
	tr '\n' '\0' <"$WORK/cmd" | xargs -0 sh -c '"$0" "$@"' >/dev/null 2>"$WORK/rec.err" ||
		notok "$name: $mode: the probe's own command failed: $(oneline "$WORK/rec.err")"
	/usr/bin/python3 "$here/chain_oracle.py" "$WORK/$mode.data" >"$WORK/$mode.oracle"
done
/usr/bin/python3 - "$WORK/cli.json" "$WORK/fp.oracle" "$WORK/dwarf.oracle" <<'PY'
import json, sys
g = {x["mode"]: x for x in json.load(open(sys.argv[1]))["call_graphs"]}
o = {"fp": json.load(open(sys.argv[2])), "dwarf": json.load(open(sys.argv[3]))}
def say(ok, what):
    print(("ok - " if ok else "not ok - ") + "callgraph probe: " + what)
for mode in ("fp", "dwarf"):
    p, r = g[mode], o[mode]
    say(r["fp"]["samples"] >= 20 and r["nofp"]["samples"] >= 20,
        "%s: perf script of the probe's command shows samples at the bottom of both chains (%d, %d)" % (
            mode, r["fp"]["samples"], r["nofp"]["samples"]))
    say(p["with_frame_pointers"]["depth_found"] == r["fp"]["depth"] and
        p["without_frame_pointers"]["depth_found"] == r["nofp"]["depth"],
        "%s: the probe's depths match perf script's: with frame pointers %d/%d (perf: %d), without %d/%d (perf: %d)" % (
            mode, p["with_frame_pointers"]["depth_found"], p["expected_depth"], r["fp"]["depth"],
            p["without_frame_pointers"]["depth_found"], p["expected_depth"], r["nofp"]["depth"]))
say(o["fp"]["fp"]["depth"] == 8 and g["fp"]["status"] == "real_chains" and
    o["fp"]["nofp"]["depth"] < 8 and g["fp"]["needs_frame_pointers"] is True,
    "fp: real chains with frame pointers, cut short without (perf: %d and %d of 8): %s" % (
        o["fp"]["fp"]["depth"], o["fp"]["nofp"]["depth"], g["fp"]["detail"]))
say(o["dwarf"]["fp"]["depth"] == 8 and o["dwarf"]["nofp"]["depth"] == 8 and
    g["dwarf"]["status"] == "real_chains" and g["dwarf"]["needs_frame_pointers"] is False,
    "dwarf: real chains with and without frame pointers (perf: %d and %d of 8): %s" % (
        o["dwarf"]["fp"]["depth"], o["dwarf"]["nofp"]["depth"], g["dwarf"]["detail"]))
PY

# LBR: the probe says failed exactly when perf record refuses the mode.
if perf record -q -N -e cycles:u --call-graph lbr -o "$WORK/lbr.data" -- "$B/perflens" --perflens-known-chain \
	>/dev/null 2>"$WORK/lbr.err"; then
	lbr_perf=works
else
	lbr_perf=failed
fi
lbr_probe=$(/usr/bin/python3 -c 'import json,sys
print([g for g in json.load(open(sys.argv[1]))["call_graphs"] if g["mode"] == "lbr"][0]["status"])' "$WORK/cli.json")
if { [ "$lbr_perf" = failed ] && [ "$lbr_probe" = failed ]; } ||
	{ [ "$lbr_perf" = works ] && [ "$lbr_probe" != failed ]; }; then
	ok "$name: lbr: perf record $lbr_perf, the probe says $lbr_probe ($(oneline "$WORK/lbr.err"))"
else
	notok "$name: lbr: perf record $lbr_perf but the probe says $lbr_probe"
fi

# The same probe in the MCP server's sandboxed worker: perf runs
# perflens-mcp itself as the workload; then the cache answers.
HERE="$here" WORK="$WORK" B="$B" /usr/bin/python3 - <<'PY'
import json, os, sys
sys.path.insert(0, os.environ["HERE"])
from mcp_client import *  # noqa: F401,F403
w, b = os.environ["WORK"], os.environ["B"]
s = Stdio([b + "/perflens-mcp", "--allowed-root", w + "/root", "--artifact-root", w + "/art-mcp",
           "--allow-writes", "--allow-process-execution", "--allow-collection"], "probe")
s.initialize()
r = s.call("inspect_collection_capabilities", {"refresh": True}, timeout=180)["result"]
g = {x["mode"]: x for x in (r.get("structuredContent") or {}).get("call_graphs", [])}
check("callgraph probe MCP: in the sandbox fp and dwarf recover the 8-frame chain, dwarf without frame pointers too, lbr failed (%s)" % (
      {m: (x["status"], x["with_frame_pointers"]["depth_found"], x["without_frame_pointers"]["depth_found"]) for m, x in g.items()}),
      not r.get("isError") and g and g["fp"]["status"] == "real_chains" and g["fp"]["depth_found"] == 8 and
      g["dwarf"]["status"] == "real_chains" and g["dwarf"]["without_frame_pointers"]["depth_found"] == 8 and
      g["fp"]["needs_frame_pointers"] is True and g["lbr"]["status"] == "failed", short(r, 600))
check("callgraph probe MCP: the workload is the server binary itself",
      g and g["fp"]["command"][-2] == os.path.realpath(b + "/perflens-mcp") and g["fp"]["command"][-1] == "--perflens-known-chain",
      short(g.get("fp", {}).get("command")))
again = s.call("inspect_collection_capabilities", {}, timeout=60)["result"]
sc = again.get("structuredContent") or {}
check("callgraph probe MCP: a second call is answered from the cache, same verdicts",
      sc.get("cached") is True and [x["status"] for x in sc.get("call_graphs", [])] == [g[m]["status"] for m in ("fp", "dwarf", "lbr")],
      short(again))
s.close()
PY
