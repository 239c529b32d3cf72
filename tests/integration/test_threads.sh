# test_threads.sh - per-thread answers and the rules of a workload whose
# every thread has one known job (tests/workloads/classify/roles.c: one
# formatter, three counters on one mutex, one sleeping writer, one pipe
# reader), recorded with real perf (cpu-clock and sched:sched_switch in one
# capture) and investigated through perflens-mcp as an agent does.
# Oracles, none of them PerfLens's own output:
#  - the workload's construction: count_stat is the program's hottest
#    function (program_code), the counters block on the futex (lock_wait),
#    the reader in a pipe read (io_wait), the writer in clock_nanosleep
#    (sleep); the writer and the reader are nearly idle on CPU;
#  - classify_oracle.py: every figure recomputed from the perf script text;
#  - threads_oracle.py: per-thread samples, top inclusive functions and
#    filtered hotspots recomputed from the perf script text;
#  - python3-jsonschema: every result against the tool's outputSchema as
#    tools/list serves it.
# Then the same workload collected off-CPU by collect_profile through a
# server that may collect: lock_wait, io_wait and sleep must fire on its
# blocked time with its unit, and list_threads must name each role.
# Last, build_report over the on-CPU capture, the off-CPU collection and a
# perf stat collection of the workload: one report with every analysis,
# its candidates and the counters as perf wrote them in stat.csv.
# run.sh: timing
. tests/integration/lib.sh
name="threads"
PY=/usr/bin/python3
if ! $PY -c 'import jsonschema' 2>/dev/null; then
	skip "$name: python3-jsonschema is not installed"
	exit 0
fi
if ! command -v perf >/dev/null 2>&1 || ! command -v gcc >/dev/null 2>&1; then
	skip "$name: perf or gcc is not installed"
	exit 0
fi
if ! perf record -e cpu-clock -e sched:sched_switch -g -N -o "$WORK/probe.data" -- true >/dev/null 2>"$WORK/probe.err"; then
	skip "$name: perf cannot record cpu-clock and sched:sched_switch here: $(oneline "$WORK/probe.err")"
	exit 0
fi
mkdir -p "$WORK/cap" "$WORK/art" "$WORK/bin"
if ! gcc -O1 -g -fno-omit-frame-pointer -o "$WORK/bin/roles" tests/workloads/classify/roles.c -lpthread 2>"$WORK/err"; then
	notok "$name: gcc failed: $(oneline "$WORK/err")"
	exit 0
fi
# No -F: perf samples the tracepoint at every switch and cpu-clock at its
# default frequency.  -N keeps the binary out of ~/.debug.
if ! perf record -e cpu-clock -e sched:sched_switch -g -N -o "$WORK/roles.data" -- "$WORK/bin/roles" 1.5 \
	>/dev/null 2>"$WORK/err"; then
	notok "$name: perf record failed: $(oneline "$WORK/err")"
	exit 0
fi
perf script -i "$WORK/roles.data" -F comm,pid,tid,time,event,period,ip,sym,symoff,dso \
	>"$WORK/cap/roles.txt" 2>"$WORK/err" || { notok "$name: perf script failed: $(oneline "$WORK/err")"; exit 0; }

server="$(cd "$BUILD" && pwd)/perflens-mcp"
WORK="$WORK" ROLES="$WORK/bin/roles" timeout 500 $PY - "$server" "$WORK/cap" "$WORK/art" <<'PY'
import json, os, subprocess, sys
here = os.path.join(os.environ.get("REPO", os.getcwd()), "tests", "integration")
sys.path.insert(0, here)
from mcp_client import *  # the shared MCP test client (mcp_client.py)
import jsonschema

SERVER, CAP, ART = sys.argv[1:4]
capture = os.path.join(CAP, "roles.txt")
s = Stdio([SERVER, "--allowed-root", CAP, "--artifact-root", ART, "--allow-writes"], "threads-mcp")
s.initialize()
tools, cursor = {}, None
for _ in range(20):
    r = s.request("tools/list", {"cursor": cursor} if cursor else {})
    res = (r or {}).get("result", {})
    tools.update({t["name"]: t for t in res.get("tools", [])})
    cursor = res.get("nextCursor")
    if not cursor:
        break


def call(name, args, what):
    """structuredContent of a successful call, validated; None otherwise."""
    r = s.call(name, args, timeout=120)
    res = (r or {}).get("result", {})
    sc = res.get("structuredContent")
    if res.get("isError") or sc is None:
        check("%s: %s" % (what, name), False, short(r))
        return None
    try:
        jsonschema.validate(sc, tools[name]["outputSchema"])
    except Exception as e:  # the validator's message says what is wrong
        check("%s: %s validates against its outputSchema" % (what, name), False, str(e)[:300])
        return None
    return sc


an = call("analyze_profile", {"path": capture}, "threads analyze")
aid = an and an["analysis_id"]

# ----------------------------------------------------------- the rules
cl = aid and call("classify_hotspots", {"analysis_id": aid, "limit": 50}, "threads classify")
if cl:
    path = os.path.join(os.environ["WORK"], "classify.json")
    json.dump(cl, open(path, "w"))
    o = subprocess.run([sys.executable, os.path.join(here, "classify_oracle.py"),
                        os.path.join(os.environ.get("REPO", "."), "schemas/rules/classify-rules.json"),
                        capture, path], capture_output=True, text=True)
    check("threads classify: validates; %s agree with classify_oracle.py" % (o.stdout.strip().splitlines() or ["?"])[-1],
          o.returncode == 0, o.stdout[-500:])
    fired = {(c["rule"]["id"], c["event"]): c for c in cl["candidates"]}

    def top(rule, event):
        c = fired.get((rule, event))
        return c and c["hotspots"] and c["hotspots"][0]["symbol"]
    pc = fired.get(("program_code", "cpu-clock"))
    steps = pc and [st.get("tool") for st in pc["next_steps"]]
    check("threads classify: program_code fires on cpu-clock with count_stat first and source_context next "
          "(%s %.1f%%)" % (top("program_code", "cpu-clock"), pc["figure"]["value"] if pc else 0),
          pc and top("program_code", "cpu-clock") == "count_stat" and steps and steps[0] == "source_context",
          short(pc))
    sw = "sched:sched_switch"
    want = {"lock_wait": ("futex", "lll_lock_wait", "pthread_mutex_lock"), "io_wait": ("pipe_read", "vfs_read", "ksys_read", "read"),
            "sleep": ("nanosleep",)}
    for rule, words in sorted(want.items()):
        t = top(rule, sw) or ""
        check("threads classify: %s fires on %s led by %s" % (rule, sw, t),
              (rule, sw) in fired and any(w in t for w in words),
              [k for k in fired] if (rule, sw) not in fired else t)
    wrong = [k for k in fired if k[0] in ("io_wait", "lock_wait", "sleep") and k[1] != sw]
    wrong += [k for k in fired if k[0] == "program_code" and k[1] != "cpu-clock"]
    check("threads classify: off-CPU rules only on the switch event, program_code only on cpu-clock", not wrong, wrong)

# ------------------------------------------------------ per-thread answers
subprocess.run([sys.executable, os.path.join(here, "threads_oracle.py"), capture,
                os.path.join(os.environ["WORK"], "threads.json")], check=True)
oracle = json.load(open(os.path.join(os.environ["WORK"], "threads.json")))
cpu, sw = oracle.get("cpu-clock", {}), oracle.get("sched:sched_switch", {})
by_comm = lambda ev, c: sorted((t for t in ev if c in ev[t]["comms"]), key=lambda t: -ev[t]["comms"][c])
counters, writer, reader = by_comm(cpu, "counter"), by_comm(cpu, "writer"), by_comm(cpu, "reader")
check("threads oracle: the capture holds 3 counter threads, a writer and a reader on cpu-clock",
      len(counters) == 3 and writer and reader, {t: v["comms"] for t, v in cpu.items()})
lt = aid and call("list_threads", {"analysis_id": aid, "event": "cpu-clock", "limit": 50}, "threads list_threads cpu-clock")
if lt and len(counters) == 3 and writer and reader:
    got = {str(t["tid"]): t for t in lt["threads"] if t["comm"] not in ("roles",)}  # a thread's name before it set its own
    bad = ["%s: %s samples, oracle %d" % (tid, sum(x["samples"] for x in lt["threads"] if str(x["tid"]) == tid),
                                            v["samples"])
           for tid, v in cpu.items() if sum(x["samples"] for x in lt["threads"] if str(x["tid"]) == tid) != v["samples"]]
    check("list_threads cpu-clock: every tid's samples agree with threads_oracle.py (%d threads)" % len(cpu), not bad, bad)
    desc = lambda t: "%s %s/%s" % (t["comm"], [f["symbol"] for f in t["top_functions"]][:2], [r["rule"] for r in t["rule_shares"]][:1])
    ok_counters = all(got[t]["top_functions"][0]["symbol"] == "count_stat" and
                      got[t]["rule_shares"][0]["rule"] == "program_code" and got[t]["probably_blocked"] is False
                      for t in counters)
    check("list_threads cpu-clock: the three counters run count_stat (program_code) and are not blocked",
          ok_counters, [desc(got[t]) for t in counters])
    fmt = [t for t in lt["threads"] if t["comm"] == "formatter"]
    check("list_threads cpu-clock: the formatter runs format_record, mostly in libc (runtime_and_libc)",
          fmt and any(f["symbol"] in ("format_record", "append_field") for f in fmt[0]["top_functions"]) and
          fmt[0]["rule_shares"] and fmt[0]["rule_shares"][0]["rule"] == "runtime_and_libc",
          fmt and desc(fmt[0]))
    idle = [got[t[0]]["probably_blocked"] for t in (writer, reader)]
    bt = lt.get("blocked_threads") or {}
    check("list_threads cpu-clock: the writer and the reader are probably blocked; the hint calls collect_profile(mode=off_cpu)",
          idle == [True, True] and bt.get("next_step", {}).get("tool") == "collect_profile" and
          bt["next_step"]["arguments"].get("mode") == "off_cpu", [idle, bt])
lt2 = aid and call("list_threads", {"analysis_id": aid, "event": "sched:sched_switch", "limit": 50}, "threads list_threads switch")
if lt2:
    role = {}
    for t in lt2["threads"]:
        role.setdefault(t["comm"], []).append([r["rule"] for r in t["rule_shares"]])
    check("list_threads sched_switch: one sleeping writer, one pipe reader, three counters on the lock (%s)" % role,
          any("sleep" in r[:1] for r in role.get("writer", [])) and
          [r[:1] for r in role.get("reader", [])] == [["io_wait"]] and
          len(role.get("counter", [])) == 3 and all("lock_wait" in r for r in role["counter"]) and
          all(t["probably_blocked"] is None for t in lt2["threads"]), role)

if aid and counters:
    tid = int(counters[0])
    want = cpu[counters[0]]
    lh = call("list_hotspots", {"analysis_id": aid, "event": "cpu-clock", "tid": tid, "limit": 100}, "list_hotspots tid")
    if lh:
        selfs = {}
        for h in lh["hotspots"]:
            selfs[h["symbol"]] = selfs.get(h["symbol"], 0) + h["self"]["samples"]
        bad = {k: (selfs.get(k, 0), v) for k, v in want["self"].items() if selfs.get(k, 0) != v}
        # threads >= 1: a thread sampled before pthread_setname_np is one tid under two comms.
        check("list_hotspots tid=%d: %d samples, count_stat first, every self count as threads_oracle.py has it"
              % (tid, lh["total"]["samples"]),
              lh["total"]["samples"] == want["samples"] and lh["hotspots"][0]["symbol"] == "count_stat" and
              not bad and lh["thread_filter"]["threads"] >= 1, [lh["total"], bad, lh.get("thread_filter")])
        cs = lh["hotspots"][0]["hotspot_id"]
        gh = call("get_hotspot", {"analysis_id": aid, "event": "cpu-clock", "hotspot_id": cs, "tid": tid}, "get_hotspot tid")
        check("get_hotspot count_stat tid=%d: inclusive samples as threads_oracle.py counts them" % tid,
              gh and gh["inclusive"]["samples"] == want["through"]["count_stat"] and gh["thread_filter"]["tid"] == tid,
              gh and [gh["inclusive"], want["through"]["count_stat"]])
    lp = call("list_hotspots", {"analysis_id": aid, "event": "cpu-clock", "tid": tid, "limit": 2}, "list_hotspots tid paged")
    nc = lp and lp["page"]["next_call"] or ""
    check("list_hotspots tid paging: the next call keeps tid=%d" % tid, ("tid=%d" % tid) in nc, nc)
    lc = call("list_hotspots", {"analysis_id": aid, "event": "cpu-clock", "comm": "counter", "limit": 5}, "list_hotspots comm")
    check("list_hotspots comm=counter: the three counters' samples together",
          lc and lc["total"]["samples"] == sum(cpu[t]["comms"]["counter"] for t in counters) and lc["thread_filter"]["threads"] == 3,
          lc and [lc["total"], lc["thread_filter"]])
if aid and by_comm(sw, "reader"):
    rt = by_comm(sw, "reader")[0]
    cp = call("get_call_paths", {"analysis_id": aid, "event": "sched:sched_switch", "comm": "reader", "limit": 50},
              "get_call_paths comm")
    if cp:
        in_read = lambda p: any("pipe_read" in f["symbol"] or f["symbol"] in ("read", "__GI___libc_read")
                                for f in p["frames"])
        # a switch may also be a preemption point the kernel passes (e.g.
        # __cond_resched while unmapping at thread exit, or the return to
        # user mode from a syscall or an interrupt when another task is
        # due, which a loaded machine sees): not a wait
        preempted = lambda p: any(f["symbol"] in ("__cond_resched", "preempt_schedule", "preempt_schedule_irq",
                                                  "exit_to_user_mode_loop", "irqentry_exit_to_user_mode")
                                  for f in p["frames"])
        reads = sum(p["samples"] for p in cp["paths"] if in_read(p))
        allsw = sum(p["samples"] for p in cp["paths"])
        through = all(in_read(p) or preempted(p) for p in cp["paths"]) and reads >= 0.95 * allsw
        check("get_call_paths comm=reader on sched_switch: %d paths, %d switches, %d of them in a pipe read, the "
              "others preemption points"
              % (cp["page"]["total_items"], allsw, reads),
              through and cp["page"]["total_items"] == len(cp["paths"]) and
              sum(p["samples"] for p in cp["paths"]) == sum(sw[t]["comms"]["reader"] for t in by_comm(sw, "reader")), [p["frames"][-4:] for p in cp["paths"][:3]])
oc = aid and call("list_hotspots", {"analysis_id": aid, "event": "sched:sched_switch", "limit": 3}, "list_hotspots off-CPU")
if oc:
    bf = {"%s<%s" % (b["symbol"], b["caller"] or ""): b["samples"] for b in oc.get("off_cpu", {}).get("blocking_frames", [])}
    want = {}
    for t in sw.values():
        for f, n in t["blocking"].items():
            want[f] = want.get(f, 0) + n
    bad = {f: (n, want.get(f)) for f, n in bf.items() if want.get(f) != n}
    check("list_hotspots sched_switch: self is explained and the blocking frames (%s) count as threads_oracle.py does"
          % ", ".join("%s %d" % kv for kv in sorted(bf.items(), key=lambda kv: -kv[1])),
          "self_means" in oc.get("off_cpu", {}) and any(f.startswith("read<") for f in bf) and
          any("nanosleep" in f for f in bf) and not bad,
          [bad, oc.get("off_cpu")])
    lc = call("list_hotspots", {"analysis_id": aid, "event": "cpu-clock", "limit": 3}, "list_hotspots on-CPU")
    check("list_hotspots cpu-clock: no off_cpu part on an on-CPU event", lc and "off_cpu" not in lc, lc and list(lc))
# ------------------------------------------- candidates per thread
# classify_hotspots with tid or comm classifies those threads' stacks
# alone: a counter's candidates are its own count_stat (figures as
# classify_oracle.py computes them on the perf script text cut to that
# tid), the writer's off-CPU time is sleep with no lock or pipe wait in it,
# the reader's a pipe wait with no sleep or lock; the steps that read the
# analysis keep the filter.  Unfiltered, all three waits fire (above).
def cut_capture(keep, name):
    """The capture's records of the threads keep(comm, tid) accepts."""
    out = os.path.join(os.environ["WORK"], name)
    with open(out, "w") as f:
        for rec in open(capture, errors="replace").read().split("\n\n"):
            m = re.match(r"^\s*(.*?)\s+(\d+)/(\d+)\s", rec)
            if m and keep(m.group(1), int(m.group(3))):
                f.write(rec.strip("\n") + "\n\n")
    return out
import re
if aid and counters:
    tid = int(counters[0])
    k = call("classify_hotspots", {"analysis_id": aid, "event": "cpu-clock", "tid": tid, "limit": 50},
             "classify tid")
    if k:
        path = os.path.join(os.environ["WORK"], "classify_tid.json")
        json.dump(k, open(path, "w"))
        o = subprocess.run([sys.executable, os.path.join(here, "classify_oracle.py"),
                            os.path.join(os.environ.get("REPO", "."), "schemas/rules/classify-rules.json"),
                            cut_capture(lambda comm, t: t == tid, "tid.txt"), path], capture_output=True, text=True)
        fk = {x["rule"]["id"]: x for x in k["candidates"]}
        pc = fk.get("program_code")
        readers = [st for x in k["candidates"] for st in x["next_steps"]
                   if st["tool"] in ("get_call_paths", "list_hotspots", "get_hotspot")]
        check("classify_hotspots tid=%d (a counter): %s agree with classify_oracle.py on that tid's records; "
              "program_code leads with count_stat; thread_filter says so; the reading steps keep tid (%d)"
              % (tid, (o.stdout.strip().splitlines() or ["?"])[-1], len(readers)),
              o.returncode == 0 and pc and pc["hotspots"][0]["symbol"] == "count_stat" and
              (k.get("thread_filter") or {}).get("tid") == tid and readers and
              all(st["arguments"].get("tid") == tid for st in readers),
              [o.stdout[-300:], list(fk), k.get("thread_filter")])
    sw_ev = "sched:sched_switch"
    for comm, lead, never in (("writer", "sleep", ("lock_wait", "io_wait")), ("reader", "io_wait", ("lock_wait", "sleep"))):
        k = call("classify_hotspots", {"analysis_id": aid, "event": sw_ev, "comm": comm, "limit": 50},
                 "classify comm=" + comm)
        if not k:
            continue
        path = os.path.join(os.environ["WORK"], "classify_%s.json" % comm)
        json.dump(k, open(path, "w"))
        o = subprocess.run([sys.executable, os.path.join(here, "classify_oracle.py"),
                            os.path.join(os.environ.get("REPO", "."), "schemas/rules/classify-rules.json"),
                            cut_capture(lambda c_, t, comm=comm: c_ == comm, comm + ".txt"), path],
                           capture_output=True, text=True)
        hot = [x for x in k["candidates"] if x["rule"]["group"] == "hotspot"]
        ids = [x["rule"]["id"] for x in hot]
        check("classify_hotspots comm=%s on %s: %s leads (%s), none of %s; figures agree with classify_oracle.py "
              "on its records (%s)" % (comm, sw_ev, lead, ", ".join("%s %.1f" % (x["rule"]["id"], x["figure"]["value"])
                                                                   for x in hot), never,
                                       (o.stdout.strip().splitlines() or ["?"])[-1]),
              o.returncode == 0 and ids[:1] == [lead] and not set(never) & set(ids), [ids, o.stdout[-300:]])
    lt3 = call("list_threads", {"analysis_id": aid, "event": "cpu-clock", "limit": 5}, "list_threads steps")
    st = [x for x in (lt3 or {}).get("next_steps", []) if x["tool"] == "classify_hotspots"]
    check("list_threads of a multi-threaded event proposes the heaviest thread's own classification (%s)"
          % (st and st[0]["arguments"]), st and st[0]["arguments"].get("tid") == (lt3["threads"][0]["tid"]), lt3 and lt3.get("next_steps"))
    r = s.call("classify_hotspots", {"analysis_id": aid, "tid": tid})
    check("classify_hotspots tid without event on a two-event analysis: an error naming the events",
          r and is_tool_error(r, "cpu-clock"), short(r))
r = aid and s.call("list_hotspots", {"analysis_id": aid, "event": "cpu-clock", "tid": 1})
check("list_hotspots tid=1: an error that names the threads there are and list_threads",
      r and is_tool_error(r, "list_threads", "counter"), short(r))

s.close()

# ------------------------------------------ off-CPU collection, by MCP
# collect_profile(mode="off_cpu") of the same workload in a server that
# may collect, its next step analyzed as it says; then the off-CPU rules
# and list_threads on the blocked nanoseconds (offcpu-time, unit ns).
BIN = os.path.dirname(os.environ["ROLES"])
c = Stdio([SERVER, "--allowed-root", BIN, "--artifact-root", ART + "-col", "--allow-writes",
           "--allow-process-execution", "--allow-collection"], "threads-offcpu")
c.initialize()
r = c.call("collect_profile", {"mode": "off_cpu", "executable": os.environ["ROLES"], "arguments": ["1.0"],
                               "authorization": "I_EXPLICITLY_AUTHORIZE_TARGET_PROFILING"}, timeout=180)
sc = (r or {}).get("result", {}).get("structuredContent") or {}
steps = [st for st in sc.get("next_steps", []) if st.get("tool") == "analyze_profile"]
check("off-CPU collect: the workload's blocked time is collected and the next step analyzes it",
      not (r or {}).get("result", {}).get("isError") and steps, short(r))
a = steps and c.call("analyze_profile", steps[0]["arguments"], timeout=120)
oid = a and (a.get("result", {}).get("structuredContent") or {}).get("analysis_id")
events = oid and {e["name"]: e["unit"] for e in a["result"]["structuredContent"]["events"]}
if oid:
    ev = "offcpu-time" if "offcpu-time" in events else sorted(events)[0]
    r = c.call("classify_hotspots", {"analysis_id": oid, "event": ev, "limit": 50}, timeout=120)
    cs = (r or {}).get("result", {}).get("structuredContent") or {}
    fired = {x["rule"]["id"]: x for x in cs.get("candidates", [])}
    check("off-CPU classify on %s (unit %s): lock_wait, io_wait and sleep fire, unit kept (%s)"
          % (ev, events[ev], ", ".join("%s %.1f" % (k, v["figure"]["value"]) for k, v in fired.items())),
          {"lock_wait", "io_wait", "sleep"} <= set(fired) and
          all(x["unit"] == events[ev] for x in fired.values()) and events[ev] in ("ns", "us"), short(cs))
    # Who woke the waits (metadata off_cpu.woken_by): the reader is woken
    # by the writer (the pipe), each counter by the other counters (the
    # mutex's unlocker: its holder), never by itself or another role; perf
    # script's own sched_waking records on the same perf.data are the
    # oracle for the reader's heaviest waker.
    wb = (((sc.get("metadata") or {}).get("off_cpu") or {}).get("woken_by") or {}).get("pairs", [])
    role_of = lambda name: name.rsplit("/", 1)[0]
    reader_w = [p for p in wb if role_of(p["waiter"]) == "reader"]
    counter_w = [p for p in wb if role_of(p["waiter"]) == "counter" and p["own_task"]]
    ps = subprocess.run(["perf", "script", "-i", os.path.join(sc.get("folder", ""), "perf.data"), "-F",
                         "comm,tid,event,trace"], capture_output=True, text=True).stdout
    theirs = {}
    for ln in ps.splitlines():
        m = re.match(r"^\s*(\S.*?)\s+(\d+)\s+sched:sched_waking:\s+comm=reader\s", ln)
        if m:
            theirs[m.group(1)] = theirs.get(m.group(1), 0) + 1
    check("off-CPU woken_by: the reader is woken by the writer (%s; perf script's wakings of the reader: %s), "
          "each counter only by the other counters (%s)"
          % (reader_w[:1], theirs, ["%s<-%s" % (p["waiter"], p["woken_by"]) for p in counter_w]),
          reader_w and role_of(reader_w[0]["woken_by"]) == "writer" and theirs and
          max(theirs, key=theirs.get) == "writer" and counter_w and
          all(role_of(p["woken_by"]) == "counter" and p["woken_by"] != p["waiter"] for p in counter_w),
          [wb, theirs])
    r = c.call("list_threads", {"analysis_id": oid, "event": ev, "limit": 50}, timeout=120)
    lt = (r or {}).get("result", {}).get("structuredContent") or {}
    role = {}
    for t in lt.get("threads", []):
        role.setdefault(t["comm"], []).append(([x["rule"] for x in t["rule_shares"]],
                                               [st["state"] for st in t["blocked_by_state"] or []]))
    check("off-CPU list_threads: a sleeping writer, a pipe reader, three counters on the lock, blocked in state S (%s)"
          % {k: v[0] for k, v in role.items()},
          any(r_[:1] == ["sleep"] and "S" in st for r_, st in role.get("writer", [])) and
          any(r_[:1] == ["io_wait"] and "S" in st for r_, st in role.get("reader", [])) and
          len(role.get("counter", [])) == 3 and all("lock_wait" in r_ for r_, st in role["counter"]), role)
c.close()

# ------------------------------- one report over the run's analyses
# build_report of the on-CPU capture with the off-CPU collection and a
# perf stat collection of the same workload: every analysis is in the
# report, each candidate under its own analysis, and the stat counters as
# perf wrote them (stat.csv read here).
if aid and oid:
    c2 = Stdio([SERVER, "--allowed-root", BIN, "--allowed-root", CAP, "--artifact-root", ART + "-col",
                    "--allow-writes", "--allow-process-execution", "--allow-collection"], "threads-report")
    c2.initialize()
    tools2 = {t["name"]: t for t in c2.request("tools/list")["result"]["tools"]}
    r = c2.call("collect_profile", {"mode": "stat", "executable": os.environ["ROLES"], "arguments": ["0.5"],
                                    "events": ["task-clock"],
                                    "authorization": "I_EXPLICITLY_AUTHORIZE_TARGET_PROFILING"}, timeout=120)
    st = (r or {}).get("result", {}).get("structuredContent") or {}
    step = [x for x in st.get("next_steps", []) if x.get("tool") == "analyze_profile"]
    a = step and c2.call("analyze_profile", step[0]["arguments"], timeout=60)
    sid = a and (a.get("result", {}).get("structuredContent") or {}).get("analysis_id")
    # the on-CPU capture again in this server's artifact root
    a = c2.call("analyze_profile", {"path": capture}, timeout=120)
    mid = (a.get("result", {}).get("structuredContent") or {}).get("analysis_id")
    r = c2.call("build_report", {"analysis_id": mid, "with_analysis_ids": [oid] + ([sid] if sid else []),
                                 "problem": "roles is slow", "metric": "records per second, higher is better"},
                timeout=120)
    rep = (r or {}).get("result", {}).get("structuredContent") or {}
    try:
        jsonschema.validate(rep, tools2["build_report"]["outputSchema"])
        valid = not r["result"].get("isError")
    except Exception as e:
        valid = str(e)[:300]
    md = open(rep["path"]).read() if valid is True else ""
    csv = open(os.path.join(st.get("folder", ""), "stat.csv")).read() if st.get("folder") else ""
    task = [l.split(",")[0] for l in csv.splitlines() if ",task-clock," in l or l.endswith(",task-clock")]
    cands = rep.get("summary", {}).get("candidates", [])
    errs = [] if valid is True else [valid]
    errs += ["%s not in the report" % x for x in [mid, oid] + ([sid] if sid else []) if x not in md]
    errs += [] if "program_code@cpu-clock" in cands else ["no program_code@cpu-clock in %s" % cands]
    errs += [] if any(x.startswith(oid + ":lock_wait@") for x in cands) else ["no off-CPU lock_wait in %s" % cands]
    errs += [] if sid and "perf stat of" in md else ["no perf stat observation"]
    errs += [] if task and ("`task-clock` %.3f" % float(task[0])) in md else ["task-clock %s not in the report" % task[:1]]
    errs += [] if md.count("\n## ") == 9 else ["%d sections" % md.count("\n## ")]
    # The Threads section: per event of several threads, each role's own
    # leading rule (the workload's construction): the counters run their
    # own count_stat, the formatter libc's strlen under append_field.
    sec = md.split("\n## Threads\n", 1)[-1].split("\n## ", 1)[0]
    rows = [l for l in sec.splitlines() if l.startswith("| ") and not l.startswith("| Tid") and "cpu-clock" not in l]
    first_cpu = sec.split("### Event `cpu-clock`", 1)[-1].split("### Event", 1)[0]
    crow = [l for l in first_cpu.splitlines() if "| `counter` |" in l]
    frow = [l for l in first_cpu.splitlines() if "| `formatter` |" in l]
    errs += [] if len(crow) == 3 and all(l.split(" | ")[3].startswith("program_code") for l in crow) else [
        "Threads section's counters: %s" % crow]
    errs += [] if frow and frow[0].split(" | ")[3].startswith("runtime_and_libc") else ["Threads formatter: %s" % frow]
    # Three runs (a perf record capture, an off-CPU and a stat collection):
    # none is "the same run" as another.
    errs += ["a different run called the same run"] if "same run:" in md else []
    errs += [] if md.count("whether it is the same run is not known") == 1 + bool(sid) else [
        "the header does not say the runs are not known to be one: %s" % md[:400]]
    check("build_report over 3 analyses of the run: every analysis, its candidates and the stat counters in one "
          "report (%d candidates, %d bytes)" % (len(cands), rep.get("bytes", 0)), not errs, errs)
    # Two analyses of one collection (its offcpu.txt and its perf.data) are
    # the same run, and the report says so, naming the collection.
    off_uri = steps[0]["arguments"]["path"] if steps else ""
    a = c2.call("analyze_profile", {"path": off_uri.rsplit("/", 1)[0] + "/perf.data"}, timeout=120)
    pid_ = (a.get("result", {}).get("structuredContent") or {}).get("analysis_id")
    r = pid_ and c2.call("build_report", {"analysis_id": oid, "with_analysis_ids": [pid_], "problem": "p",
                                          "metric": "m"}, timeout=120)
    rep2 = (r or {}).get("result", {}).get("structuredContent") or {}
    md2 = open(rep2["path"]).read() if rep2.get("path") else ""
    co = re.search(r"collections/(co-[0-9a-f]{20})/", off_uri)
    check("build_report of two analyses of one collection: the same run, naming it (%s)" % (co and co.group(1)),
          co and ("(the same run: collection `%s`)" % co.group(1)) in md2, [off_uri, md2[:300], short(r, 200)])
    r = c2.call("build_report", {"analysis_id": mid, "with_analysis_ids": [mid], "problem": "p", "metric": "m"})
    check("build_report with its own analysis_id among the others: an error naming the fix",
          is_tool_error(r, "twice"), short(r))
    c2.close()
sys.exit(0)
PY
