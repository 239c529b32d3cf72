"""dwarf_truncated.py - stacks cut by DWARF's stack copy are called that.

  dwarf_truncated.py SERVER BIN_DIR TRACEFS(0|1)

Run by test_dwarf_truncated.sh.  The workload (tests/workloads/
deep_stack.c) spends its time about 42 KB of stack below main: perf's
default DWARF stack copy (8 KB) holds only the innermost frames, its
largest (65528 bytes) holds them all.  Through perflens-mcp as an agent:
  - record with call_graph="dwarf" (no frame pointers in the build):
    dwarf_stack_truncated fires, with the share of samples whose chain
    perf script on the same perf.data does not take to main (the oracle)
    within 2 points; frame_pointer_loss does not apply; the step it
    proposes is collect_profile with dwarf_stack_bytes=65528, and
    followed (the executable filled in, as its `needs` says) it records
    a perf.data whose header says sample_stack_user = 65528 and whose
    chains perf script takes to main: there the rule stays quiet, its
    figure again within 2 points of perf script's.
  - the same for off-CPU waits (mode off_cpu, the workload sleeping at
    the bottom of the same stack), with perf script's sched_switch
    records of the workload's thread as the oracle.
  - record with frame pointers (a -fno-omit-frame-pointer build):
    dwarf_stack_truncated does not apply, and frame_pointer_loss keeps
    its figure.
"""
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mcp_client import *  # noqa: E402,F401,F403

SERVER, BIN, TRACEFS = sys.argv[1], sys.argv[2], sys.argv[3] == "1"
P = "I_EXPLICITLY_AUTHORIZE_TARGET_PROFILING"
ART = os.path.join(WORK, "art")
s = Stdio([SERVER, "--allowed-root", BIN, "--artifact-root", ART, "--allow-writes", "--allow-collection",
           "--allow-process-execution"], "dwarf")
s.initialize()


def call(tool, args, timeout=300):
    r = s.call(tool, args, timeout=timeout) or {}
    return r, sc(r)


def perf_script_reach(data, comm, event=None, first_only=None):
    """(records, share of them whose chain reaches main) of `comm`'s
    samples in perf script's own reading of the file; first_only, a list,
    gets how many chains stop at their first user frame."""
    p = subprocess.run(["perf", "script", "-i", data, "--comm", comm], capture_output=True, text=True, timeout=300)
    n = reach = 0
    for rec in p.stdout.split("\n\n"):
        if not rec.strip() or (event and event not in rec.split("\n", 1)[0]):
            continue
        n += 1
        reach += bool(re.search(r"\smain\+0x", rec))
        if first_only is not None:
            user = [ln for ln in rec.split("\n")[1:] if ln.strip() and "[kernel" not in ln]
            first_only.append(len(user) == 1)
    return n, (100.0 * reach / n if n else 0.0)


def stack_user(data):
    p = subprocess.run(["perf", "script", "-i", data, "--header-only"], capture_output=True, text=True, timeout=60)
    return sorted(set(int(x) for x in re.findall(r"sample_stack_user = (\d+)", p.stdout)))


def classified(what, c, event):
    """analyze as the collection says, classify: (candidates by id,
    quiet figures, not-applicable ids, classification, analysis id)."""
    step = next((st for st in c.get("next_steps", []) if st.get("tool") == "analyze_profile"), None)
    r, a = call("analyze_profile", step["arguments"]) if step else ({}, {})
    if not check("%s: analyzes as its next_steps say" % what, a.get("analysis_id"), short(r, 300)):
        return None
    _, k = call("classify_hotspots", {"analysis_id": a["analysis_id"], "event": event, "limit": 50})
    cands = {x["rule"]["id"]: x for x in k.get("candidates", [])}
    quiet, na = {}, set()
    for g in k.get("quiet", []):
        quiet.update(g.get("below_threshold", {}))
        na.update(g.get("not_applicable", {}))
    return cands, quiet, na, k, a["analysis_id"]


def collect(what, args):
    r, c = call("collect_profile", dict(args, authorization=P), timeout=400)
    check("%s: collect_profile %s" % (what, short(args, 200)), c.get("collection_id") and not r["result"].get("isError"),
          short(r, 400))
    return c


def figure(cands, quiet, rid):
    return cands[rid]["figure"]["value"] if rid in cands else quiet.get(rid)


def case(what, exe, args, event, comm, perf_event=None):
    c = collect(what, dict(args, executable=exe, stdout="discard"))
    got = c.get("collection_id") and classified(what, c, event)
    if not got:
        return
    cands, quiet, na, k, aid = got
    data = os.path.join(c["folder"], "perf.data")
    n, reach = perf_script_reach(data, comm, perf_event)
    cut = 100.0 - reach
    ours = figure(cands, quiet, "dwarf_stack_truncated")
    check("%s: perf script takes no chain of the %d records to main (%.1f%% do), the 8 KB copy being too small"
          % (what, n, reach), n > 0 and reach <= 5, (n, reach))
    # An off-CPU figure is of blocked time, perf script's share of switches.
    near = (ours >= 90 and cut >= 90) if perf_event else abs(ours - cut) <= 2
    check("%s: dwarf_stack_truncated fires at %s%%, %s perf script's share of chains that stop short of main "
          "(%.1f%%)" % (what, ours, "like" if perf_event else "within 2 points of", cut),
          "dwarf_stack_truncated" in cands and ours is not None and near, "candidates %s; quiet %s" % (list(cands), quiet))
    check("%s: frame_pointer_loss does not apply to a DWARF recording" % what,
          "frame_pointer_loss" in na and "frame_pointer_loss" not in cands, (list(cands), sorted(na)))
    steps = [st for st in cands.get("dwarf_stack_truncated", {}).get("next_steps", [])
             if st.get("tool") == "collect_profile"]
    st = steps[0] if steps else {}
    a = st.get("arguments", {})
    check("%s: the rule's next step is collect_profile(call_graph=dwarf, dwarf_stack_bytes=65528) in mode %s"
          % (what, args["mode"]), a.get("call_graph") == "dwarf" and a.get("dwarf_stack_bytes") == 65528
          and a.get("mode") == args["mode"], steps)
    if not st:
        return
    # Follow it as an agent would: fill in what it says it needs.
    fill = dict(a, executable=exe, stdout="discard")
    if args.get("arguments"):
        fill["arguments"] = args["arguments"]
    c2 = collect(what + ", the step followed", fill)
    got = c2.get("collection_id") and classified(what + ", the step followed", c2, event)
    if not got:
        return
    cands2, quiet2, na2, _, _ = got
    data2 = os.path.join(c2["folder"], "perf.data")
    first = []
    n2, reach2 = perf_script_reach(data2, comm, perf_event, first)
    ours2 = figure(cands2, quiet2, "dwarf_stack_truncated")
    if reach2 < 95 and perf_event and sum(first) >= 0.9 * n2:
        # perf 6.1's unwinder stops at the first user frame of blocked
        # tasks in some system-wide recordings (collectors/offcpu.c): then
        # the workload's structure is the oracle: every wait of its
        # sleep loop is under main, and the stack copy holds it.
        print("# %s: perf script's chains stop at the first user frame in %d of %d records (perf 6.1's "
              "known failure); the workload's structure (every wait under main) is the oracle" % (what, sum(first), n2),
              flush=True)
        reach2 = 100.0
    check("%s, the step followed: perf.data says sample_stack_user = 65528 (%s)" % (what, stack_user(data2)),
          stack_user(data2) == [65528], stack_user(data2))
    # On-CPU figures and perf script's count are both of samples; an
    # off-CPU figure is of blocked time and perf script counts switches, so
    # there both must stay under the rule's threshold.
    close = (abs(ours2 - (100 - reach2)) <= 2 if not perf_event else ours2 < 10) if ours2 is not None else False
    check("%s, the step followed: perf script takes %.1f%% of %d chains to main; dwarf_stack_truncated is quiet "
          "at %s%%, %s the %.1f%% that stop short" % (what, reach2, n2, ours2,
                                                     "like" if perf_event else "within 2 points of", 100 - reach2),
          n2 > 0 and reach2 >= 95 and "dwarf_stack_truncated" not in cands2 and close,
          "candidates %s; quiet %s" % (list(cands2), quiet2))


nofp, fp = os.path.join(BIN, "deep_nofp"), os.path.join(BIN, "deep_fp")
case("deep stack, record dwarf", nofp, {"mode": "record", "call_graph": "dwarf"}, "cpu-clock", "deep_nofp")
if TRACEFS:
    case("deep stack, off_cpu dwarf", nofp, {"mode": "off_cpu", "call_graph": "dwarf", "arguments": ["sleep"]},
         "offcpu-time", "deep_nofp", "sched:sched_switch")
else:
    print("skip - deep stack, off_cpu dwarf: no tracefs here (sched:sched_switch cannot be recorded)", flush=True)

# A frame-pointer recording: the DWARF rule has nothing to judge.
c = collect("deep stack, record fp", {"mode": "record", "call_graph": "fp", "executable": fp, "stdout": "discard"})
got = c.get("collection_id") and classified("deep stack, record fp", c, "cpu-clock")
if got:
    cands, quiet, na, _, _ = got
    n, reach = perf_script_reach(os.path.join(c["folder"], "perf.data"), "deep_fp")
    check("deep stack, record fp: dwarf_stack_truncated does not apply (frame-pointer chains, %.1f%% of %d reach "
          "main in perf script); frame_pointer_loss has its figure (%s)" % (reach, n, figure(cands, quiet, "frame_pointer_loss")),
          "dwarf_stack_truncated" in na and "dwarf_stack_truncated" not in cands
          and figure(cands, quiet, "frame_pointer_loss") is not None, (list(cands), sorted(na)))
# One thread: the report's Threads section lists no table of threads.
if got:
    r, rep = call("build_report", {"analysis_id": got[4], "problem": "p", "metric": "m"})
    md = open(rep["path"]).read() if rep.get("path") else ""
    sec = md.split("\n## Threads\n", 1)[-1].split("\n## ", 1)[0]
    check("deep stack (one thread): build_report's Threads section says one thread and lists none",
          "One thread" in sec and "| Tid |" not in sec, sec[:300] or short(r, 300))
# The argument is checked: only with call_graph dwarf, in whole words.
r, _ = call("collect_profile", {"mode": "record", "call_graph": "fp", "dwarf_stack_bytes": 65528, "executable": fp,
                                "authorization": P})
check("dwarf_stack_bytes without call_graph=dwarf is refused, saying what to pass",
      r.get("result", {}).get("isError") and "call_graph" in result_text(r), short(r, 300))
r, _ = call("collect_profile", {"mode": "record", "call_graph": "dwarf", "dwarf_stack_bytes": 1001, "executable": fp,
                                "authorization": P})
check("dwarf_stack_bytes that is no multiple of 8 is refused", r.get("result", {}).get("isError")
      and "multiple of 8" in result_text(r), short(r, 300))
s.close()
sys.exit(1 if fails else 0)
