"""busy_mcp.py - busy_wait through perflens-mcp as an agent drives it:
every next step of the candidate is sent and answers.

  busy_mcp.py SERVER CAPTURE.txt SPINNER

CAPTURE is pollspin (SPINNER, a zero-timeout poll loop beside a worker)
recorded with perf.  analyze_profile, classify_hotspots: busy_wait fires
with its thread evidence.  Then each of its next steps is sent, filling in
only what its `needs` name (this test acts as the user: the phrase; the
executable is SPINNER poll):
- list_threads: the thread busy_wait names is listed with busy_wait as
  its leading rule share;
- get_call_paths of the top symbol: answers with paths;
- collect_profile stat (task-clock, context-switches,
  raw_syscalls:sys_enter) of SPINNER poll: counts, and the system calls
  number over 100,000 a second of task-clock's wall (a spinner's rate);
- run_experiment: baseline SPINNER poll against candidate SPINNER block
  (the experiment's fix: the waiter blocks in poll without a timeout),
  3 runs a side with perf counters: answers, and the candidate's
  task-clock median is lower than the baseline's.
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mcp_client import *  # noqa: E402,F401,F403

SERVER, CAPTURE, SPINNER = sys.argv[1:4]
P = "I_EXPLICITLY_AUTHORIZE_TARGET_PROFILING"
s = Stdio([SERVER, "--allowed-root", WORK, "--artifact-root", os.path.join(WORK, "mcp-art"), "--allow-writes",
           "--allow-collection", "--allow-process-execution"], "busy")
s.initialize()
a = sc(s.call("analyze_profile", {"path": CAPTURE}, timeout=120))
aid = a.get("analysis_id")
cl = sc(s.call("classify_hotspots", {"analysis_id": aid, "event": "cpu-clock"}, timeout=120))
cand = next((c for c in cl.get("candidates", []) if c["rule"]["id"] == "busy_wait"), None)
th = (cand or {}).get("threads", {}).get("passed", [])
check("MCP busy_wait: classify_hotspots names the spinning thread (%s)" % short(th, 200),
      cand is not None and len(th) == 1 and th[0]["core_percent"] and th[0]["share_percent"] >= 50, short(cl, 500))
spinner_tid = th[0]["tid"] if th else None


def fill(st):
    args = dict(st["arguments"])
    for need in st.get("needs", []):
        if need == "authorization":
            args["authorization"] = P
        elif need == "executable or pid":
            args["executable"], args["arguments"] = SPINNER, ["poll"]
        elif need == "baseline and candidate":
            args["baseline"] = {"executable": SPINNER, "arguments": ["poll"]}
            args["candidate"] = {"executable": SPINNER, "arguments": ["block"]}
            args.update(runs=3, warmup=0, perf_counters=True, check_output=False)
    return args


for st in (cand or {}).get("next_steps", []):
    tool, args = st["tool"], fill(st)
    r = s.call(tool, args, timeout=600 if tool in ("run_experiment", "collect_profile") else 120)
    res = sc(r)
    ok = r and not r.get("result", {}).get("isError")
    what = "MCP busy_wait step %s" % tool
    if not ok:
        check(what + " answers", False, result_text(r)[:400])
        continue
    if tool == "list_threads":
        row = next((t for t in res.get("threads", []) if t.get("tid") == spinner_tid), {})
        shares = row.get("rule_shares") or (row.get("description") or {}).get("rule_shares") or []
        check("%s: the spinner %s leads with %s" % (what, spinner_tid, short(shares[:1], 120)),
              bool(shares) and shares[0]["rule"] == "busy_wait", short(res, 600))
    elif tool == "get_call_paths":
        check("%s(%s): %d paths" % (what, args.get("symbol"), len(res.get("paths", []))),
              len(res.get("paths", [])) > 0, short(res, 400))
    elif tool == "collect_profile":
        # perf stat's own CSV (the collection's stat.csv) is the figure
        rows = {}
        try:
            for line in open(os.path.join(res["folder"], "stat.csv")):
                f = line.strip().split(",")
                if len(f) > 2 and f[0].replace(".", "", 1).isdigit():
                    rows[f[2]] = float(f[0])
        except (KeyError, OSError) as e:
            rows = {"error": str(e)}
        rate = rows.get("raw_syscalls:sys_enter", 0) / (rows.get("task-clock", 0) / 1000.0 or 1)
        check("%s stat of the spinner: %.0f system calls a second of task-clock (%s)" % (what, rate, short(rows, 200)),
              rate > 100000, short(res, 600))
    elif tool == "run_experiment":
        tc = next((v for v in res.get("verdicts", []) if v.get("measure") == "task_clock"), {})
        check("%s: poll(0) loop against blocking poll: task_clock median %s -> %s ms (%s)" % (
            what, tc.get("baseline_median"), tc.get("candidate_median"), tc.get("verdict")),
              tc and tc["candidate_median"] < tc["baseline_median"], short(res.get("verdicts"), 600))
    else:
        check("%s answers" % what, True)
s.close()
sys.exit(1 if fails else 0)
