"""waits_agent.py - an agent tells off-CPU waits apart through perflens-mcp.

Run by test_waits.sh with HERE, BUILD_DIR, WORK and DISK_DIR set; $WORK/bin
holds waits-fp and waits-nofp (tests/workloads/waits/waits.c built with and
without frame pointers).  For each mix and build, as an agent would:
collect_profile(mode="off_cpu") of the workload (frame-pointer stacks, and
DWARF stacks for the build without frame pointers), analyze_profile of the
blocked time, classify_hotspots.  The oracle is the workload's construction:
every cause a mix plants must get its rule, every wait rule it does not
plant must stay quiet (a wrong label fails as surely as a missing one).
Where the user frames are missing, cond-variable waits cannot be told from
mutex waits: futex_wait_unknown must say so, with the DWARF collection
that would tell them apart, and lock_wait must not claim them.
"""
import json
import os
import sys

sys.path.insert(0, os.environ["HERE"])
from mcp_client import *  # noqa: E402,F401,F403

build, work, disk = os.environ["BUILD_DIR"], os.environ["WORK"], os.environ["DISK_DIR"]
P = "I_EXPLICITLY_AUTHORIZE_TARGET_PROFILING"
WAITS = ["cpu_wait", "disk_io", "io_wait", "lock_wait", "idle_wait", "futex_wait_unknown", "sleep"]
s = Stdio([build + "/perflens-mcp", "--allowed-root", work + "/bin", "--artifact-root", work + "/art",
           "--allow-writes", "--allow-process-execution", "--allow-collection"], "waits")
s.initialize()
s.check_outputs()


def call(tool, args, timeout=120):
    r = (s.call(tool, args, timeout=timeout) or {}).get("result", {})
    return r, r.get("structuredContent") or {}


def fired(binary, mix, graph):
    """{rule: figure} of the off-CPU event's candidates, or an error text."""
    r, sc = call("collect_profile", {"mode": "off_cpu", "executable": work + "/bin/" + binary,
                                     "arguments": [disk] + mix, "call_graph": graph, "authorization": P})
    if r.get("isError") or not sc.get("collection_id"):
        return "collect_profile: " + short(r)
    ran[binary + graph] = ((sc.get("metadata") or {}).get("off_cpu") or {}).get("ran_instead", [])
    r, a = call("analyze_profile", {"path": "perflens://artifacts/collections/%s/offcpu.txt" % sc["collection_id"]})
    if r.get("isError"):
        return "analyze_profile: " + short(r)
    r, c = call("classify_hotspots", {"analysis_id": a.get("analysis_id"), "event": "offcpu-time", "limit": 50})
    if r.get("isError"):
        return "classify_hotspots: " + short(r)
    out = {k["rule"]["id"]: round(k["figure"]["value"], 1) for k in c.get("candidates", [])}
    for k in c.get("candidates", []):
        if k["rule"]["id"] == "futex_wait_unknown":
            steps[binary + graph] = [x.get("arguments") for x in k.get("next_steps", [])
                                     if x.get("tool") == "collect_profile"]
    if mix == ["cpu"]:
        # How much of the blocked time the threads spent preempted inside
        # write() (version 3 of the rules called it I/O wait).
        r, h = call("list_hotspots", {"analysis_id": a.get("analysis_id"), "event": "offcpu-time",
                                      "sort": "inclusive", "limit": 50})
        inside[binary + graph] = max([x["inclusive"]["percent"] for x in h.get("hotspots", [])
                                      if x.get("symbol") == "ksys_write"] or [0.0])
    return out


inside, steps, ran = {}, {}, {}


# mix, build, call graph, rules that must fire, rules that may.  The
# condition-variable consumers are idle_wait when their user frames are
# there and futex_wait_unknown when not: libc has no frame pointers, so fp
# stacks stop at its futex wait, and DWARF unwinding here often stops there
# too; the epoll_wait consumer is idle_wait by its kernel frames alone.
cases = [
    (["disk", "idle"], "waits-fp", "fp", ["disk_io", "idle_wait", "futex_wait_unknown"], []),
    (["disk", "idle"], "waits-nofp", "fp", ["disk_io", "idle_wait", "futex_wait_unknown"], []),
    (["disk", "idle"], "waits-nofp", "dwarf", ["disk_io", "idle_wait"], ["futex_wait_unknown"]),
    (["mutex", "disk"], "waits-fp", "fp", ["lock_wait", "disk_io"], []),
    (["mutex", "disk"], "waits-nofp", "fp", ["lock_wait", "disk_io"], []),
    (["mutex", "disk"], "waits-nofp", "dwarf", ["lock_wait", "disk_io"], []),
    (["cpu"], "waits-fp", "fp", ["cpu_wait"], []),
    (["cpu"], "waits-nofp", "dwarf", ["cpu_wait"], []),
]
for mix, binary, graph, must, may in cases:
    what = "waits %s (%s, %s stacks)" % ("+".join(mix), binary, graph)
    got = fired(binary, mix, graph)
    if isinstance(got, str):
        check(what, False, got)
        continue
    wrong = sorted(r for r in WAITS if r in got and r not in must and r not in may)
    missing = [r for r in must if r not in got]
    check("%s: %s fire%s, no other wait rule (%s)" % (what, ", ".join(must), "s" if len(must) == 1 else "",
                                                      ", ".join("%s %.1f" % kv for kv in sorted(got.items()))),
          not wrong and not missing, "missing %s; wrong %s; fired %s" % (missing, wrong, got))
    if "futex_wait_unknown" in got:
        st = steps.get(binary + graph, [])
        check("%s: futex_wait_unknown's next step is the DWARF off-CPU collection that tells them apart" % what,
              any(a.get("mode") == "off_cpu" and a.get("call_graph") == "dwarf" for a in st), st)
    if mix == ["cpu"]:
        w = inside.get(binary + graph, 0.0)
        check("%s: %.1f%% of the blocked time is preempted inside write() (ksys_write), and io_wait stays quiet"
              % (what, w), w >= 20 and "io_wait" not in got, "ksys_write %.1f%%; fired %s" % (w, got))
        # Who took the CPU: the collection names the tasks switched in at
        # each preemption; the program's own hogs are among them.
        ri = ran.get(binary + graph, [])
        own = [e for e in ri if e.get("own_task") and e.get("comm", "").startswith("waits-")]
        total = sum(e.get("runnable_ns", 0) for e in ri) or 1
        if not own and ri and not any(e.get("own_task") for e in ri):
            # CI runs scripts side by side: other processes can take the
            # CPU ahead of the hogs, and the list rightly names them.
            print("skip - %s: off_cpu.ran_instead lists only other programs (the machine was busier than the "
                  "workload's own hogs): %s" % (what, short(ri, 300)))
        else:
            check("%s: off_cpu.ran_instead names the program's own threads as taking the CPU (%.0f%% of the "
                  "listed wait)" % (what, 100.0 * sum(e["runnable_ns"] for e in own) / total), own, short(ri, 400))
s.close()
sys.exit(1 if fails else 0)
