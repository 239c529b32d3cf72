"""crawl_steps.py - every next step, followed to depth 3, is a call that works.

  crawl_steps.py SERVER REPO SHARED BIN_DIR TRACEFS(0|1)

Issue 30's crawler.  One server with every collection flag; the roots are
collect_profile in each mode (record, stat, off_cpu, sched, lock; the
tracepoint modes only where tracefs is there, else a skip line says so)
of the test's own workloads in BIN_DIR (a contended mutex, a syscall
loop, the investigation app: each a different mix of causes), and
analyze_profile of the shared peers' captures, each with the reads an
agent starts with (classify_hotspots, list_threads, list_hotspots).
From there, breadth-first to depth 3, every step of every result (the
ones inside candidates, threads and hotspots too) is sent, filling in
only what its `needs` names: the user's phrase (this test acts as the
user), the executable (the workload of its root), the two commands of an
experiment (true, for both).  A step with an `operator` entry other than the user's
consent, or one that needs a live pid or a copy of a file, is counted and
not sent.  Every call sent must succeed.  Identical calls are sent once.
"""
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mcp_client import *  # noqa: E402,F401,F403

SERVER, REPO, SHARED, BIN, TRACEFS = sys.argv[1:6]
P = "I_EXPLICITLY_AUTHORIZE_TARGET_PROFILING"
DEPTH, BUDGET_S = 3, 300 * SCALE
ART = os.path.join(WORK, "art")
TRUE = os.path.join(BIN, "true")
s = Stdio([SERVER, "--allowed-root", WORK, "--allowed-root", REPO, "--allowed-root", SHARED,
           "--artifact-root", ART, "--allow-writes", "--allow-collection", "--allow-process-execution",
           "--allow-pid-attach"], "crawl")
s.initialize()
t0 = time.monotonic()
done = {}            # call key -> ok
counts = {"sent": 0, "operator": 0, "pid": 0, "file": 0, "budget": 0, "same": 0}
bad = []
spent = {}           # tool -> seconds its followed calls took


def failed(r):
    return not r or r.get("result", {}).get("isError") or "error" in r


def consent_only(st):
    """Is every operator entry the user's consent (which this test gives)?"""
    return all(o.startswith("authorization:") for o in st.get("operator", []))


def filled(st, exe):
    """The step's call with what its needs name filled in, or (None, why)."""
    args = dict(st["arguments"])
    for need in st.get("needs", []):
        if need == "authorization":
            args["authorization"] = P
        elif need == "executable or pid":
            args["executable"] = exe
        elif need == "baseline and candidate":
            # The agent's two builds; true stands for both (an experiment
            # repeats each run: the workloads would take minutes).
            args.setdefault("baseline", {"executable": TRUE})
            args.setdefault("candidate", {"executable": TRUE})
        elif need == "pid_authorization":
            return None, "pid"
        else:                      # a copy of a file under an allowed root
            return None, "file"
    if not consent_only(st):
        return None, "operator"
    return args, None


def root_call(where, exe, tool, args, timeout=300):
    r = s.call(tool, args, timeout=timeout)
    ok = check("%s: %s %s" % (where, tool, short(args, 120)), not failed(r), result_text(r)[:300])
    return (r, exe) if ok else None


def reads_of(where, exe, r):
    """An agent's first reads of an analysis."""
    a = sc(r)
    out = [(r, exe)]
    for ev in [e["name"] for e in a.get("events", [])][:2]:
        for tool, extra in (("classify_hotspots", {}), ("list_threads", {"limit": 5}),
                            ("list_hotspots", {"limit": 5})):
            rr = root_call(where, exe, tool, dict({"analysis_id": a["analysis_id"], "event": ev}, **extra))
            if rr:
                out.append(rr)
    return out


def crawl(where, roots):
    """Breadth-first to DEPTH from these (result, executable) roots."""
    sent0 = counts["sent"]
    level = [(st, exe) for r, exe in roots for st in steps_of(sc(r))]
    for depth in range(1, DEPTH + 1):
        nxt = []
        for st, exe in level:
            args, why = filled(st, exe)
            if why:
                counts[why] += 1
                continue
            key = json.dumps([st["tool"], args], sort_keys=True)
            if key in done:
                counts["same"] += 1
                continue
            if time.monotonic() - t0 > BUDGET_S:
                counts["budget"] += 1
                continue
            t = time.monotonic()
            r = s.call(st["tool"], args, timeout=300)
            spent[st["tool"]] = spent.get(st["tool"], 0.0) + time.monotonic() - t
            counts["sent"] += 1
            done[key] = not failed(r)
            if failed(r):
                bad.append("%s depth %d: %s(%s): %s" % (where, depth, st["tool"], short(args, 200),
                                                        (result_text(r) or short(r, 200))[:200]))
                continue
            nxt += [(n, exe) for n in steps_of(sc(r))]
        level = nxt
    return counts["sent"] - sent0


APP = os.path.join(BIN, "app")
# What perf can do here, probed once: collect_profile steps are checked
# against it (an unconfirmed need is an operator entry, not sent).
root_call("probe", APP, "inspect_collection_capabilities", {})
per_root = []
# ------------------------------------------- the shared peers' captures
peers = [os.path.join(SHARED, "peers/flamegraph/test", f) for f in
         ("perf-iperf-stacks-pidtid-01.txt", "perf-java-faults-01.txt", "perf-dd-stacks-01.txt",
          "perf-cycles-instructions-01.txt")] + [os.path.join(SHARED, "peers/device-sessions/session-x86-baseline")]
for path in peers:
    where = "analyze_profile %s" % os.path.basename(path)
    if not os.path.exists(path):
        print("skip - crawl: %s: not in ../shared/peers" % where, flush=True)
        continue
    ar = root_call(where, APP, "analyze_profile", {"path": path})
    if ar:
        per_root.append((where, crawl(where, reads_of(where, APP, ar[0]))))

# ----------------------------------------------------- the collections
workloads = {name: os.path.join(BIN, name) for name in ("mutex", "syscalls", "app")}
modes = [("record", "app", {"call_graph": "fp"}), ("record", "mutex", {}), ("stat", "syscalls", {}),
         ("off_cpu", "mutex", {}), ("off_cpu", "app", {}), ("sched", "app", {}), ("lock", "mutex", {})]
for mode, wl, extra in modes:
    where = "collect_profile mode %s (%s)" % (mode, wl)
    if mode in ("off_cpu", "sched", "lock") and TRACEFS != "1":
        print("skip - crawl: %s: tracefs is not mounted here (its tracepoints are what the mode records)" % where,
              flush=True)
        continue
    if mode == "lock" and not os.path.isdir("/sys/kernel/tracing/events/lock"):
        print("skip - crawl: %s: this kernel has no lock tracepoints (CONFIG_LOCKDEP or lock:contention_begin)"
              % where, flush=True)
        continue
    exe = workloads[wl]
    rr = root_call(where, exe, "collect_profile", dict({"mode": mode, "executable": exe, "authorization": P},
                                                       **extra))
    if not rr:
        continue
    roots = [rr]
    # The analysis the collection's own next step names, and its reads.
    step = next((x for x in sc(rr[0]).get("next_steps", []) if x.get("tool") == "analyze_profile"), None)
    if step:
        ar = root_call(where, exe, "analyze_profile", step["arguments"])
        if ar:
            done[json.dumps(["analyze_profile", step["arguments"]], sort_keys=True)] = True
            roots += reads_of(where, exe, ar[0])
    per_root.append((where, crawl(where, roots)))

secs = time.monotonic() - t0
print("# crawl: %s" % "; ".join("%s %d" % x for x in per_root), flush=True)
check("crawl: %d next steps followed to depth %d from %d roots, every one succeeding (not sent: %d needing the "
      "operator, %d a live pid, %d a file copy, %d past the %d s budget; %d identical calls once) in %.0f s"
      % (counts["sent"], DEPTH, len(per_root), counts["operator"], counts["pid"], counts["file"], counts["budget"],
         BUDGET_S, counts["same"], secs),
      not bad and counts["sent"] >= 36, bad[:4] or "only %d steps" % counts["sent"])
busy = [w for w, n in per_root if n >= 12]
check("crawl: dozens of steps from several roots (%d roots with 12 or more)" % len(busy), len(busy) >= 3,
      per_root)
print("# crawl: seconds per followed tool: %s" % ", ".join("%s %.0f" % kv for kv in sorted(spent.items())),
      flush=True)
if counts["budget"]:
    # A loaded machine, not a wrong step: said, never a failure.
    print("skip - crawl: %d steps not sent: the %d s budget ran out (a loaded machine)" % (counts["budget"], BUDGET_S),
          flush=True)
s.close()
sys.exit(1 if fails else 0)
