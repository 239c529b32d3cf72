"""mcp_collect.py - collect_profile through perflens-mcp's sandboxed worker.

Run by test_collect.sh with HERE, BUILD_DIR, WORK and HANG set: record,
stat and off_cpu of the test's workloads, the capabilities probe, then a
hanging target (HANG, which starts `sleep $NAPS`) that must be killed at its
2 s timeout together with perf, leaving no process and no staging folder.
"""
import os
import re
import sys
import time

sys.path.insert(0, os.environ["HERE"])
from mcp_client import *  # noqa: E402,F401,F403

build, work, hang = os.environ["BUILD_DIR"], os.environ["WORK"], os.environ["HANG"]
P = "I_EXPLICITLY_AUTHORIZE_TARGET_PROFILING"
# The artifact root lies outside the allowed root: collections are read
# back by their artifact names (perflens://artifacts/collections/...,
# collections/ID/FILE), never by a path outside the allowed roots.
s = Stdio([build + "/perflens-mcp", "--allowed-root", work + "/bin", "--artifact-root", work + "/art-col",
           "--allow-writes", "--allow-process-execution", "--allow-collection"], "collect")
s.initialize()


def collect(args, timeout=120):
    r = s.call("collect_profile", dict(args, authorization=P), timeout=timeout)["result"]
    return r, r.get("structuredContent") or {}


def cmdline(pid):
    try:
        return open("/proc/%d/cmdline" % pid, "rb").read().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


r, sc = collect({"mode": "record", "executable": work + "/bin/fib"})
ok1 = not r.get("isError") and any(f["name"] == "perf.data" and f["bytes"] > 0 for f in sc.get("files", []))
check("collect MCP: record in the sandboxed worker writes perf.data", ok1, short(r))
if ok1:
    # By its artifact name, as next_steps say: the artifact root is not an allowed root.
    uri = "perflens://artifacts/collections/%s/perf.data" % sc["collection_id"]
    check("collect MCP: next_steps name the collection by its artifact URI",
          uri in [st["arguments"].get("path") for st in sc["next_steps"]], sc.get("next_steps"))
    outside = s.call("analyze_profile", {"path": sc["folder"] + "/perf.data"}, timeout=60)["result"]
    check("collect MCP: the same file by its path outside the allowed root is refused",
          outside.get("isError") and "path_refused" in outside["content"][0]["text"], short(outside))
    a = s.call("analyze_profile", {"path": uri}, timeout=60)["result"]
    tops = [h["symbol"] for e in (a.get("structuredContent") or {}).get("events", []) for h in e["top_hotspots"]]
    check("collect MCP: the collected perf.data analyzes; leaf_work and fib lead",
          set(tops[:2]) == {"leaf_work", "fib"}, short(a))

r, sc = collect({"mode": "stat", "executable": work + "/bin/fib", "events": ["task-clock"]})
check("collect MCP: stat in the sandboxed worker", not r.get("isError") and sc.get("files"), short(r))

r, sc = collect({"mode": "off_cpu", "executable": work + "/bin/blk"})
us = 0
if not r.get("isError"):
    for block in open(sc["folder"] + "/offcpu.txt", errors="replace").read().split("\n\n"):
        head = block.strip("\n").split("\n")
        if len(head) > 1 and head[1] == "\t0 [state S]":
            us += int(re.search(r" (\d+) offcpu-time:", head[0]).group(1)) // 1000
check("collect MCP: off_cpu in the sandboxed worker, %d us blocked (the workload blocks ~250 ms)" % us,
      not r.get("isError") and 200e3 <= us <= 1000e3, short(r))
if not r.get("isError"):
    # The next step as given, then the threads: one event, offcpu-time in
    # ns, from collection to analysis; both tasks keep pid, tid and comm.
    nxt = sc["next_steps"][0]
    a = s.call(nxt["tool"], nxt["arguments"], timeout=60)["result"]
    ev = ((a.get("structuredContent") or {}).get("events") or [{}])[0]
    check("collect MCP: off_cpu's next step analyzes to offcpu-time in ns (%s, %s)" % (ev.get("name"), ev.get("unit")),
          ev.get("name") == "offcpu-time" and ev.get("unit") == "ns" and ev.get("period", 0) >= 200e6, short(a))
    aid = (a.get("structuredContent") or {}).get("analysis_id")
    t = s.call("list_threads", {"analysis_id": aid, "event": "offcpu-time"}, timeout=60)["result"]
    th = (t.get("structuredContent") or {}).get("threads", [])
    root = sc["metadata"]["off_cpu"]["root_pid"]
    check("collect MCP: the off-CPU threads keep pid, tid and comm (parent %d and its child)" % root,
          len(th) == 2 and all(x["comm"] == "blk" and x["pid"] == x["tid"] for x in th) and
          root in [x["pid"] for x in th], short(t))

r, sc = collect({"mode": "sched", "executable": work + "/bin/blk"})
page = {}
if not r.get("isError"):
    page = s.call("read_artifact_page", {"artifact": "collections/%s/timehist.txt" % sc["collection_id"]})["result"]
text = (page.get("structuredContent") or {}).get("text", "")
check("collect MCP: sched in the sandboxed worker; its timehist reads back with read_artifact_page",
      not r.get("isError") and "blk[" in text, short(r) + short(page))

c = s.call("inspect_collection_capabilities", {}, timeout=120)["result"]
cs = c.get("structuredContent") or {}
cpu = [e for e in cs.get("events", []) if e["event"] == "cpu-clock"]
check("collect MCP: capabilities probed in the worker: cpu-clock counts and records, fp gives real chains",
      cpu and cpu[0]["count"] == "counted" and cpu[0]["record"] == "works" and
      any(g["mode"] == "fp" and g["status"] == "real_chains" for g in cs.get("call_graphs", [])), short(c))
# Chains are called shallow only from samples read back: a mode whose
# samples could not be read (DWARF in the sandbox, issue 21) is unknown.
graphs = {g["mode"]: g for g in cs.get("call_graphs", [])}
dw = graphs.get("dwarf", {})
check("collect MCP: no call-graph mode is called shallow without samples (dwarf: %s, %s samples)" % (
      dw.get("status"), dw.get("samples")),
      graphs and all(g["samples"] > 0 or g["status"] in ("no_samples", "failed") for g in graphs.values()), short(c))

t0 = time.time()
r, sc = collect({"mode": "record", "executable": hang, "timeout_seconds": 2}, timeout=60)
took = time.time() - t0
time.sleep(0.5)
left = [p for p in processes() if cmdline(p).startswith(hang) or cmdline(p) == "sleep %s " % os.environ["NAPS"]]
staging = [n for n in os.listdir(work + "/art-col/collections") if n.startswith(".staging")]
check("collect MCP: a hanging target is killed at 2 s with perf (%.1f s), no orphan, nothing kept" % took,
      r.get("isError") and took < 15 and not left and not staging,
      "%s left=%s staging=%s" % (short(r), left, staging))
check("collect MCP: the server keeps serving", s.ping_ms() is not None)
s.close()
