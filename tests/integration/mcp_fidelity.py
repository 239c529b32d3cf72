"""mcp_fidelity.py - collect_profile runs its program faithfully.

Run by test_collect_fidelity.sh with HERE, BUILD_DIR, WORK and TRACEFS
set; $WORK/direct.out and direct.rc hold the workload's own run.
"""
import os
import subprocess
import sys
import time

sys.path.insert(0, os.environ["HERE"])
from mcp_client import *  # noqa: E402,F401,F403

build, work = os.environ["BUILD_DIR"], os.environ["WORK"]
P, PP = "I_EXPLICITLY_AUTHORIZE_TARGET_PROFILING", "I_EXPLICITLY_AUTHORIZE_PID_ATTACH"
direct = open(work + "/direct.out").read()
direct_rc = int(open(work + "/direct.rc").read())
s = Stdio([build + "/perflens-mcp", "--allowed-root", work + "/bin", "--artifact-root", work + "/art",
           "--allow-writes", "--allow-process-execution", "--allow-collection", "--allow-pid-attach"], "fidelity")
s.initialize()


def call(tool, args, timeout=120):
    r = s.call(tool, args, timeout=timeout)["result"]
    return r, r.get("structuredContent") or {}


def collect(args):
    return call("collect_profile", dict(args, authorization=P))


def own_warnings(sc):
    """The warnings about the program (perf's lost data depends on the load
    of the machine, not on the program; perf lock finding no contended
    kernel lock is about what it measures)."""
    return [w for w in sc.get("warnings", []) if not w.startswith(("perf lost", "perf.data holds", "perf warned",
                                                                    "perf lock saw no"))]


analyses = {}


def thread_comms(sc):
    nxt = sc["next_steps"][0]
    a, asc = call(nxt["tool"], nxt["arguments"])
    if a.get("isError"):
        return None, a["content"][0]["text"]
    ev = asc["events"][0]["name"]
    analyses[sc["collection_id"]] = (asc["analysis_id"], ev)
    t, tsc = call("list_threads", {"analysis_id": asc["analysis_id"], "event": ev, "limit": 50})
    return sorted({x["comm"] for x in tsc.get("threads", [])}), t


def inclusive_symbols(sc):
    """{symbol: inclusive percent} of the collection's analysis (made by
    thread_comms)."""
    aid, ev = analyses[sc["collection_id"]]
    r, h = call("list_hotspots", {"analysis_id": aid, "event": ev, "sort": "inclusive", "limit": 100})
    return {x.get("symbol"): x["inclusive"]["percent"] for x in h.get("hotspots", [])}


def perf_unwinds_journal(sc):
    """How many of the program's fsync waits perf script itself (outside
    PerfLens, on the same perf.data) unwinds up to journal_commit."""
    out = subprocess.run(["perf", "script", "-i", sc["folder"] + "/perf.data", "-F", "comm,tid,ip,sym",
                          "--no-inline"], capture_output=True, text=True).stdout
    return sum(1 for b in out.split("\n\n") if b.lstrip().startswith("fidelity-nofp") and
               "__x64_sys_fsync" in b and "journal_commit" in b)


def offcpu_dwarf_names_journal(sc, args):
    """The program's own function that waits on the disk (write and fsync
    in journal_commit), named above the kernel's fsync path in a build
    without frame pointers: DWARF stacks at sched_switch.  The workload
    calls fsync from journal_commit only, so every fsync wait must sit
    under it.  perf 6.1's unwinder stops at the libc leaf in about half
    of such recordings (from a shell too); the collection then takes the
    user frames from PerfLens's own unwinder, and says how many."""
    inc = inclusive_symbols(sc)
    uc = sc["metadata"]["off_cpu"].get("user_chains", {})
    by_perf = perf_unwinds_journal(sc)
    fs, jc = inc.get("fsync", 0.0), inc.get("journal_commit", 0.0)
    check("fidelity off_cpu dwarf (no frame pointers): every fsync wait (%.1f%% of the blocked time) is under "
          "journal_commit (%.1f%%), the function that calls it; perf script alone unwound %d of them, "
          "PerfLens's unwinder went deeper in %d waits" % (fs, jc, by_perf, uc.get("perflens_deeper", -1)),
          fs > 0 and jc >= fs - 0.01 and "perflens_deeper" in uc,
          (uc, sorted(inc.items(), key=lambda kv: -kv[1])[:15]))


runs = [("record fp", {"mode": "record", "call_graph": "fp"}, "fidelity"),
        ("record dwarf", {"mode": "record", "call_graph": "dwarf"}, "fidelity-nofp"),
        ("stat", {"mode": "stat"}, "fidelity")]
if os.environ.get("TRACEFS") == "1":
    runs.append(("off_cpu", {"mode": "off_cpu"}, "fidelity"))
    runs.append(("off_cpu dwarf", {"mode": "off_cpu", "call_graph": "dwarf"}, "fidelity-nofp"))
    runs.append(("sched", {"mode": "sched"}, "fidelity"))
    runs.append(("lock", {"mode": "lock"}, "fidelity-nofp"))
else:
    print("skip - fidelity: off_cpu, sched, lock: tracefs is not mounted here", flush=True)
for what, args, exe in runs:
    args = dict(args, executable=work + "/bin/" + exe, environment={"FIDELITY_VAR": "fid"})
    if what == "stat":
        args["working_directory"] = work + "/bin"   # the default, named
    r, sc = collect(args)
    if r.get("isError"):
        check("fidelity %s: collect_profile" % what, False, short(r, 600))
        continue
    m = sc["metadata"]
    out = open(sc["folder"] + "/target.stdout").read()
    check("fidelity %s (%s): the same stdout as the direct run, from the launcher, in %s" % (what, exe, m["launch"].get("working_directory")),
          out == direct and m["launch"]["where"] == "launcher" and m["launch"]["working_directory"] == work + "/bin",
          "%r vs %r; %s" % (out, direct, m["launch"]))
    check("fidelity %s: the same exit status (%s), stdin /dev/null, no warning" % (what, m["target"]["exit_status"]),
          m["target"]["exit_status"] == direct_rc and m["target"]["stdin"] == "/dev/null" and own_warnings(sc) == [],
          "%s %s" % (m["target"], sc["warnings"]))
    if what.startswith("record"):
        comms, why = thread_comms(sc)
        check("fidelity %s: list_threads names the renamed thread (%s)" % (what, comms),
              comms is not None and "fid-worker" in comms and exe[:15] in comms, short(why))
    if what == "off_cpu dwarf":
        check("fidelity off_cpu dwarf: perf records the sched_switch stacks with --call-graph dwarf",
              "--call-graph" in m["command"] and m["command"][m["command"].index("--call-graph") + 1] == "dwarf",
              m["command"])
    if what.startswith("off_cpu"):
        comms, why = thread_comms(sc)
        check("fidelity off_cpu: the off-CPU threads keep the program's comms (%s)" % comms,
              comms is not None and any(c in comms for c in ("fid-worker", "fidelity")), short(why))
    if what == "off_cpu dwarf" and comms is not None:
        offcpu_dwarf_names_journal(sc, args)

# A recording the machine cannot keep up with (DWARF stacks at 20 kHz on
# both threads: about 150 MB/s into perf's ring buffers) says so, with
# the counts perf itself gives for the same perf.data (perf report
# --stats), and its analysis repeats them at the top.
def perf_lost_counts(data):
    out = subprocess.run(["perf", "report", "-i", data, "--stats"], capture_output=True, text=True).stdout
    lost = [int(x.split()[2]) for x in out.splitlines() if x.strip().startswith("LOST events:")]
    lost_samples = [int(x.split()[2]) for x in out.splitlines() if x.strip().startswith("LOST_SAMPLES events:")]
    return (lost[0] if lost else 0), max(lost_samples or [0])


r, sc = collect({"mode": "record", "executable": work + "/bin/fidelity", "arguments": ["spin", "0.8"],
                 "call_graph": "dwarf", "frequency_hz": 20000, "stdout": "discard"})
if r.get("isError"):
    check("fidelity lossy: collect_profile at 20 kHz with DWARF stacks", False, short(r, 600))
else:
    data = sc["folder"] + "/perf.data"
    records, samples = perf_lost_counts(data)
    w = " ".join(sc.get("warnings", []))
    if records == 0 and samples == 0:
        print("skip - fidelity lossy: perf lost nothing at 20 kHz with DWARF stacks on this machine "
              "(perf report --stats counts no LOST record)", flush=True)
    else:
        said = ("%d PERF_RECORD_LOST records" % records) if records else ("%d lost samples" % samples)
        check("fidelity lossy: the collection's warnings give perf's own loss counts (%d LOST records, "
              "%d lost samples by perf report --stats)" % (records, samples), said in w, w)
        nxt = sc["next_steps"][0]
        a, asc = call(nxt["tool"], nxt["arguments"], timeout=300)
        aw = " ".join(asc.get("warnings", []))
        check("fidelity lossy: its analysis says the run lost data, at the top of the result",
              said in aw, aw or short(a))
    os.unlink(data)   # a few hundred MB

# The program's output may be kept inline or dropped; a failing program is
# a warning with its status and its error line, never silent.
r, sc = collect({"mode": "record", "executable": work + "/bin/fidelity", "arguments": ["fail"],
                 "stdout": "inline", "stderr": "inline", "environment": {"FIDELITY_VAR": "fid"}})
m = sc.get("metadata", {})
inl = m.get("target", {}).get("target_output", {})
names = [f["name"] for f in sc.get("files", [])]
check("fidelity: stdout and stderr inline: in the result, no file kept",
      inl.get("stdout") == direct and "error: asked to fail" in inl.get("stderr", "") and
      "target.stdout" not in names and "target.stderr" not in names, short(sc, 600))
w = " ".join(sc.get("warnings", []))
check("fidelity: a program that exits 5 and prints an error line is said in warnings",
      m.get("target", {}).get("exit_status") == 5 and "status 5" in w and "error: asked to fail" in w, w)
if sc.get("next_steps"):
    nxt = sc["next_steps"][0]
    a, asc = call(nxt["tool"], nxt["arguments"])
    aw = " ".join(asc.get("warnings", []))
    check("fidelity: the analysis of that collection repeats its warnings in the data quality",
          "the collection that made this input warned: the target ended with status 5" in aw and
          "error: asked to fail" in aw, aw or short(a))
r, sc = collect({"mode": "record", "executable": work + "/bin/fidelity", "arguments": ["crash"]})
w = " ".join(sc.get("warnings", []))
check("fidelity: a program that dies of SIGSEGV under record: signal 11 in metadata and warnings",
      sc.get("metadata", {}).get("target", {}).get("signal") == 11 and "signal 11" in w, w or short(r))
r, sc = collect({"mode": "stat", "executable": work + "/bin/fidelity", "arguments": ["crash"]})
w = " ".join(sc.get("warnings", []))
check("fidelity: a program that dies of SIGSEGV under stat (perf stat ends 0): signal 11 from perf's line",
      sc.get("metadata", {}).get("target", {}).get("signal") == 11 and "signal 11" in w, w or short(r))
r, sc = collect({"mode": "stat", "executable": work + "/bin/fidelity", "stdout": "discard", "stderr": "discard"})
names = [f["name"] for f in sc.get("files", [])]
check("fidelity: stdout and stderr discarded: no file, no tail, status kept",
      not r.get("isError") and "target.stdout" not in names and "target.stderr" not in names and
      sc["metadata"]["target"]["stdout_tail"] == "" and sc["metadata"]["target"]["exit_status"] == direct_rc,
      short(sc, 600))

# An attached process: its threads' names reach list_threads too.
p = subprocess.Popen([work + "/bin/fidelity", "spin", "4"])
time.sleep(0.3)
r, sc = call("collect_profile", {"mode": "record", "pid": p.pid, "duration_seconds": 1, "timeout_seconds": 20,
                                 "authorization": P, "pid_authorization": PP})
if r.get("isError"):
    check("fidelity pid attach: collect_profile", False, short(r, 600))
else:
    comms, why = thread_comms(sc)
    check("fidelity pid attach: list_threads names the renamed thread (%s)" % comms,
          comms is not None and "fid-worker" in comms, short(why))
# perf stat stops at SIGINT after the duration and prints its counts: a
# success, not "killed by signal 2".
r, sc = call("collect_profile", {"mode": "stat", "pid": p.pid, "duration_seconds": 1, "timeout_seconds": 20,
                                 "events": ["task-clock"], "authorization": P, "pid_authorization": PP})
check("fidelity pid attach: stat ends at the duration with its counts",
      not r.get("isError") and any(f["name"] == "stat.csv" and f["bytes"] > 0 for f in sc.get("files", [])),
      short(r, 600))
p.kill()
p.wait()

# Attached to a process whose threads come and go (a threaded server's
# handlers), perf may say "WARNING: Ignored open failure for pid N" about
# a thread that exited as it attached: that is perf's line, not the
# program's (whose own stderr is not perf's), so no warning says the
# program wrote an error (a blind trial on python3 -m http.server did).
churn = subprocess.Popen(["python3", "-c", "import threading\nwhile True:\n"
                          "    ts = [threading.Thread(target=lambda: None) for _ in range(16)]\n"
                          "    [t.start() for t in ts]\n    [t.join() for t in ts]\n"])
time.sleep(0.3)
said = []
for attempt in range(3):
    r, sc = call("collect_profile", {"mode": "record", "pid": churn.pid, "duration_seconds": 1,
                                     "timeout_seconds": 20, "authorization": P, "pid_authorization": PP})
    if r.get("isError"):
        break
    perf_lines = sc["metadata"]["perf_warnings"]["perf_lines"]
    said.append((sc["metadata"]["target"]["stderr_note"][:40], [w[:60] for w in sc.get("warnings", [])],
                 perf_lines[:2]))
    if any("Ignored open failure" in x for x in perf_lines):
        break
check("fidelity pid attach: perf's stderr is perf's, never the program's error lines (%s)" % said,
      not r.get("isError") and said and all(n.startswith("perf's stderr alone") and
                                            not any(w.startswith("the program wrote") for w in ws)
                                            for n, ws, _ in said), short(r, 600))
churn.kill()
churn.wait()

# What the program may be given is bounded, and checked before anything runs.
for what, extra, words in [
        ("a working directory outside the allowed roots", {"working_directory": "/etc"}, "path_refused"),
        ("a working directory that is a file", {"working_directory": work + "/bin/fidelity"}, "is not a folder"),
        ("LD_PRELOAD", {"environment": {"LD_PRELOAD": "/tmp/x.so"}}, "would apply to perf as well"),
        ("65 variables", {"environment": {"V%d" % i: "x" for i in range(65)}}, "")]:
    r, sc = collect(dict({"mode": "record", "executable": work + "/bin/fidelity"}, **extra))
    text = r["content"][0]["text"]
    check("fidelity: %s is refused (%s)" % (what, text.splitlines()[0][:120]),
          r.get("isError") and words in text, text)

# A cancelled call ends its run: the worker goes, its connection hangs up,
# and the launcher kills perf and the program.
def spinners():
    found = []
    for d in os.listdir("/proc"):
        try:
            if open("/proc/%s/cmdline" % d, "rb").read().split(b"\0")[:3] == [
                    (work + "/bin/fidelity").encode(), b"spin", b"30"]:
                found.append(int(d))
        except (OSError, ValueError):
            pass
    return found


s.send({"jsonrpc": "2.0", "id": 777, "method": "tools/call", "params": {"name": "collect_profile", "arguments": {
    "mode": "record", "executable": work + "/bin/fidelity", "arguments": ["spin", "30"], "timeout_seconds": 60,
    "authorization": P}}})
started = until(spinners, 10)


def descendants(pid):
    """{pid: comm} of every process below `pid`."""
    kids, found = {}, {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            st = open("/proc/%s/stat" % d).read()
        except (OSError, ValueError):
            continue
        kids.setdefault(int(st[st.rindex(")") + 2:].split()[1]), []).append(
            (int(d), st[st.index("(") + 1:st.rindex(")")]))
    todo = [pid]
    while todo:
        for c, comm in kids.get(todo.pop(), []):
            found[c] = comm
            todo.append(c)
    return found


def status(pid):
    try:
        return dict(x.split(":\t", 1) for x in open("/proc/%d/status" % pid).read().splitlines() if ":\t" in x)
    except OSError:
        return {}


# The worker that reads the collection back holds nothing of perf's: no
# capability (perf events, tracing, ptrace are the launcher's), a seccomp
# filter; the program runs as the user's shell runs it: the test's own
# capabilities and no filter.
mine = status(os.getpid())
workers = [status(c) for c, comm in descendants(s.pid).items() if comm == "perflens-worker"]
prog = status(started[0]) if started else {}
check("fidelity: the collection worker has no capability and a seccomp filter (%s)"
      % [(w.get("CapEff"), w.get("Seccomp")) for w in workers],
      workers and all(int(w.get("CapEff", "1"), 16) == 0 and w.get("Seccomp") == "2" for w in workers),
      workers)
check("fidelity: the program runs with the caller's capabilities (%s) and no seccomp filter"
      % prog.get("CapEff"), prog.get("CapEff") == mine.get("CapEff") and prog.get("Seccomp") == "0",
      (prog.get("CapEff"), prog.get("Seccomp"), mine.get("CapEff")))
s.notify("notifications/cancelled", {"requestId": 777, "reason": "test"})
gone = until(lambda: not spinners(), 5)
check("fidelity: a cancelled collection kills the program the launcher started (%s)" % started,
      started and gone, spinners())
for pid in spinners():
    os.kill(pid, 9)

# Without its launcher (killed here) the server refuses to collect rather
# than run the program inside the sandbox.
def children(pid):
    out = []
    for d in os.listdir("/proc"):
        try:
            st = open("/proc/%s/stat" % d).read()
        except (OSError, ValueError):
            continue
        comm, rest = st[st.index("(") + 1:st.rindex(")")], st[st.rindex(")") + 2:].split()
        if int(rest[1]) == pid:
            out.append((int(d), comm))
    return out


launchers = [c for c, comm in children(s.pid) if comm == "perflens-launch"]
check("fidelity: the server runs one collection launcher", len(launchers) == 1, children(s.pid))
for c in launchers:
    os.kill(c, 9)
time.sleep(0.2)
before = set(os.listdir(work + "/art/collections"))
r, sc = collect({"mode": "record", "executable": work + "/bin/fidelity"})
text = r["content"][0]["text"]
check("fidelity: without the launcher collect_profile is refused, naming it, and nothing is kept",
      r.get("isError") and "launcher" in text and set(os.listdir(work + "/art/collections")) == before, text)
s.close()
sys.exit(1 if fails else 0)
