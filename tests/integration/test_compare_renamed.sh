# test_compare_renamed.sh - compare_profiles of two builds of one program
# under two names, as an agent names its A/B copy (prog and prog-fixed),
# through perflens-mcp: collect_profile(mode="record") of each, analyze
# what the collections' next steps name, compare_profiles.
#
# Oracles: the two sides' own folded exports (export_profile), their
# roots renamed from prog-fixed to prog here: compare_profiles' folded
# diff must be exactly those two files paired line by line (what
# difffolded.pl makes of the renamed files), no listed path may be rooted
# at prog-fixed, and a warning says the commands were matched as one.
. tests/integration/lib.sh
name="compare renamed"
if ! command -v perf >/dev/null 2>&1 || ! command -v gcc >/dev/null 2>&1; then
	skip "$name: perf or gcc is not installed"
	exit 0
fi
if ! perf record -e cpu-clock -g -N -o "$WORK/probe.data" -- true >/dev/null 2>"$WORK/probe.err"; then
	skip "$name: perf cannot record cpu-clock here: $(oneline "$WORK/probe.err")"
	exit 0
fi
mkdir -p "$WORK/bin" "$WORK/art"
gcc -O1 -g -fno-omit-frame-pointer -o "$WORK/bin/prog" "$REPO/tests/workloads/fib.c" 2>"$WORK/err" &&
	gcc -O2 -g -fno-omit-frame-pointer -o "$WORK/bin/prog-fixed" "$REPO/tests/workloads/fib.c" 2>>"$WORK/err" ||
	{ notok "$name: gcc failed: $(oneline "$WORK/err")"; exit 0; }
HERE="$REPO/tests/integration" BUILD_DIR="$(cd "$BUILD" && pwd)" WORK="$WORK" /usr/bin/python3 - <<'PY'
import json, os, subprocess, sys
sys.path.insert(0, os.environ["HERE"])
from mcp_client import *  # noqa: E402,F401,F403

work = os.environ["WORK"]
s = Stdio([os.environ["BUILD_DIR"] + "/perflens-mcp", "--allowed-root", work + "/bin", "--artifact-root", work + "/art",
           "--allow-writes", "--allow-process-execution", "--allow-collection"], "renamed")
s.initialize()
s.check_outputs()


def call(tool, args, timeout=120):
    r = (s.call(tool, args, timeout=timeout) or {}).get("result", {})
    return r, r.get("structuredContent") or {}


def analysis(binary):
    r, c = call("collect_profile", {"mode": "record", "executable": work + "/bin/" + binary,
                                    "authorization": "I_EXPLICITLY_AUTHORIZE_TARGET_PROFILING"})
    steps = [st["arguments"] for st in c.get("next_steps", []) if st.get("tool") == "analyze_profile"]
    if r.get("isError") or not steps:
        return None, short(r)
    r, a = call("analyze_profile", steps[0])
    return a.get("analysis_id"), short(r)


def folded(aid, root):
    """The side's folded lines {stack: count}, its root renamed to prog."""
    r, e = call("export_profile", {"analysis_id": aid, "format": "folded", "event": "cpu-clock"})
    out = {}
    path = (e.get("path") or (e.get("exports") or [{}])[0].get("path")) if e else None
    for line in open(path) if path else []:
        stack, n = line.rstrip("\n").rsplit(" ", 1)
        head, _, rest = stack.partition(";")
        stack = ("prog" if head == root else head) + (";" + rest if rest else "")
        out[stack] = out.get(stack, 0) + int(n)
    return out


base, why0 = analysis("prog")
cand, why1 = analysis("prog-fixed")
if check("compare renamed: prog and prog-fixed collected and analyzed", base and cand, why0 + " " + why1):
    r, c = call("compare_profiles", {"baseline_id": base, "candidate_id": cand, "event": "cpu-clock",
                                     "path_limit": 50,
                                     # every function, however small its change: fib's
                                     # status must be there to be checked
                                     "min_delta_percent": 0, "limit": 100})
    warns = c.get("comparability", {}).get("warnings", [])
    check("compare renamed: a warning says the commands prog and prog-fixed are matched as one",
          any("commands differ" in w and "prog-fixed" in w for w in warns), warns)
    b, f = folded(base, "prog"), folded(cand, "prog-fixed")
    diff = {}
    path = ((c.get("exports") or {}).get("folded_diff") or {}).get("path")
    for line in open(path) if path else []:
        stack, n0, n1 = line.rsplit(" ", 2)
        diff[stack] = (int(n0), int(n1))
    want = {k: (b.get(k, 0), f.get(k, 0)) for k in set(b) | set(f)}
    common = sorted(k for k, v in diff.items() if v[0] and v[1])
    check("compare renamed: the folded diff is the renamed exports paired line by line (%d lines, %d common)"
          % (len(diff), len(common)), diff and diff == want and common,
          short(sorted(set(diff.items()) ^ set(want.items()))[:6]))
    added = [p for p in c.get("call_paths", []) if p.get("frames", [""])[0].startswith("prog-fixed")]
    check("compare renamed: no call path is rooted at prog-fixed (%d paths listed)" % len(c.get("call_paths", [])),
          not added and c.get("call_paths"), short(added or c.get("call_paths")))
    funcs = {x.get("symbol"): x.get("status") for x in c.get("functions", [])}
    check("compare renamed: fib and main are compared, not added or removed (%s)" % short(funcs, 200),
          funcs.get("fib") in ("changed", "unchanged") and funcs.get("main") in ("changed", "unchanged", None), funcs)
s.close()
sys.exit(1 if fails else 0)
PY
exit 0
