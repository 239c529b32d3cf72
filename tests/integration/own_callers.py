"""own_callers.py - a library candidate names the program's code above it.

  own_callers.py SERVER BIN_DIR

Run by test_own_callers.sh.  roles (tests/workloads/classify/roles.c,
built without frame pointers) has a formatter thread whose strlen calls
come from append_field, and counters whose time is their own count_stat.
Recorded through perflens-mcp with DWARF stacks:
  - runtime_and_libc (strlen and friends) names append_field as its
    nearest own caller, with the share of the candidate's libc-leaf
    samples that perf script on the same perf.data puts under it (the
    first frame of the roles binary above the leaf's libc frames), within
    3 points;
  - program_code, the program's own function, names no own caller.
"""
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mcp_client import *  # noqa: E402,F401,F403

SERVER, BIN = sys.argv[1], sys.argv[2]
P = "I_EXPLICITLY_AUTHORIZE_TARGET_PROFILING"
exe = os.path.join(BIN, "roles")
s = Stdio([SERVER, "--allowed-root", BIN, "--artifact-root", os.path.join(WORK, "art"), "--allow-writes",
           "--allow-collection", "--allow-process-execution"], "own")
s.initialize()


def call(tool, args, timeout=300):
    r = s.call(tool, args, timeout=timeout) or {}
    return r, sc(r)


def perf_script_own_callers(data, binary):
    """{function: samples} of the first frame of `binary` above each
    sample's libc leaf (perf script's own unwinding), and how many libc
    leaves there were."""
    p = subprocess.run(["perf", "script", "-i", data, "-F", "ip,sym,dso"], capture_output=True, text=True,
                       timeout=300)
    # The binary's own functions, from its symbol table (an inlined frame
    # perf files under the binary may be a libc function's name).
    own = set(ln.split()[-1] for ln in subprocess.run(["nm", "--defined-only", binary], capture_output=True,
                                                       text=True).stdout.splitlines() if ln.split())
    out, n = {}, 0
    for rec in p.stdout.split("\n\n"):
        frames = [re.match(r"^\s*[0-9a-f]+\s+(.*?)(?:\+0x[0-9a-f]+)?\s+\((.*)\)$", ln) for ln in rec.splitlines()]
        frames = [[m.group(1), m.group(2)] for m in frames if m]
        # perf prints a frame's inlined calls first, "(inlined)" for a
        # module: they are of the module of the frame that follows.
        for i in range(len(frames) - 2, -1, -1):
            if frames[i][1] == "inlined":
                frames[i][1] = frames[i + 1][1]
        if not frames or not re.search(r"/libc\.so", frames[0][1]):
            continue
        n += 1
        for sym, dso in frames[1:]:
            if re.search(r"/libc\.so|/ld-linux", dso) or dso == "inlined":
                continue
            if dso == binary and sym in own:
                out[sym] = out.get(sym, 0) + 1
                break
            if dso != binary:
                break
    return out, n


r, c = call("collect_profile", {"mode": "record", "call_graph": "dwarf", "executable": exe, "arguments": ["1.0"],
                                "stdout": "discard", "authorization": P})
if check("roles, record dwarf: collected", c.get("collection_id"), short(r, 300)):
    step = next(st for st in c["next_steps"] if st["tool"] == "analyze_profile")
    _, a = call("analyze_profile", step["arguments"])
    _, k = call("classify_hotspots", {"analysis_id": a.get("analysis_id"), "event": "cpu-clock", "limit": 50})
    cands = {x["rule"]["id"]: x for x in k.get("candidates", [])}
    rl = cands.get("runtime_and_libc")
    _, full = call("classify_hotspots", {"analysis_id": a.get("analysis_id"), "candidate_id": "runtime_and_libc@cpu-clock"})
    own = ((full.get("candidates") or [{}])[0].get("own_callers") or [])
    theirs, n = perf_script_own_callers(os.path.join(c["folder"], "perf.data"), os.path.realpath(exe))
    share = 100.0 * theirs.get("append_field", 0) / n if n else 0.0
    top = own[0] if own else {}
    check("roles: runtime_and_libc names append_field as the own caller of %.1f%% of its stacks; perf script puts "
          "%.1f%% of its %d libc-leaf samples under append_field (%s)"
          % (top.get("of_candidate_percent", 0), share, n, theirs),
          rl and (rl.get("own_callers") or [{}])[0].get("symbol") == "append_field" and top.get("symbol") == "append_field"
          and n > 0 and abs(top.get("of_candidate_percent", 0) - share) <= 3, [own, rl and rl.get("own_callers")])
    pc = cands.get("program_code")
    check("roles: program_code (count_stat, the program's own) names no own caller",
          pc and pc["hotspots"][0]["symbol"] == "count_stat" and "own_callers" not in pc, short(pc, 300))
s.close()
sys.exit(1 if fails else 0)
