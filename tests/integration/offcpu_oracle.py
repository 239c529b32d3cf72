"""offcpu_oracle.py - check collect_profile's offcpu.txt against the workload
and against perf sched timehist run on the same perf.data.

Usage: offcpu_oracle.py OFFCPU_TXT RESULT_JSON TIMEHIST_TXT

The workload (blk, test_collect.sh) is a parent that blocks ~100 ms reading
a pipe and then sleeps 50 ms, and a child that sleeps 5 x 20 ms writing to
it.  offcpu.txt must hold perf script records "COMM PID/TID NS offcpu-time:
waits=N" whose leaf frame is "[state X]"; both tasks must be there with
their own pid and tid; the records must add up to the metadata's
blocked_ns and their waits to its blocked_intervals; and each task's
blocked time and wait count must agree with the wait time and the rows
perf sched timehist reports for it (which pairs the same switches
itself).
"""
import json
import re
import sys
from collections import defaultdict

text, result, timehist = sys.argv[1:4]
meta = json.load(open(result))["metadata"]["off_cpu"]
bad = []
records, waits_of = [], []
for block in open(text, errors="replace").read().split("\n\n"):
    lines = [line for line in block.split("\n") if line]
    if not lines:
        continue
    m = re.match(r"^(.+) (\d+)/(\d+) (\d+) offcpu-time:(?: waits=(\d+))?$", lines[0])
    st = re.match(r"^\t0 \[state (\S+)\]$", lines[1]) if len(lines) > 1 else None
    if not m or not st:
        bad.append("bad record: %r" % lines[:2])
        continue
    records.append((m.group(1), int(m.group(2)), int(m.group(3)), int(m.group(4)), st.group(1), "\n".join(lines[2:])))
    waits_of.append(int(m.group(5) or 0))

per_tid, waits_tid = defaultdict(int), defaultdict(int)
read = sleep = 0
for (comm, pid, tid, ns, state, stack), w in zip(records, waits_of):
    per_tid[tid] += ns
    waits_tid[tid] += w
    if "pipe_read" in stack and state == "S":
        read += ns
    if "nanosleep" in stack and state == "S":
        sleep += ns
tids = sorted(per_tid)
root = meta["root_pid"]
# The workload's own sleeps are the lower bounds.  Off-CPU time runs from
# the switch-out to the switch-in, so on a loaded machine it also holds
# the wait for a CPU after the wake-up (CI once gave 1.0 s and 1.6 s,
# perf sched timehist agreeing): the upper bounds only catch nonsense.
if not 80e6 <= read <= 5e9:
    bad.append("pipe read blocked %d ns, the workload blocks ~100 ms" % read)
if not 130e6 <= sleep <= 5e9:
    bad.append("nanosleep blocked %d ns, the workload sleeps 50 + 100 ms" % sleep)
if len(tids) != 2 or root not in tids or any(c != "blk" for c, *_ in records):
    bad.append("tasks %s (root %d), comms %s" % (tids, root, sorted({r[0] for r in records})))
if any(pid != tid for _, pid, tid, *_ in records):
    bad.append("a single-threaded task with pid != tid")
if sum(waits_tid.values()) != meta["blocked_intervals"]:
    bad.append("records hold %d waits, metadata counts %d blocked intervals"
               % (sum(waits_tid.values()), meta["blocked_intervals"]))
if sum(per_tid.values()) != meta["blocked_ns"]:
    bad.append("records add up to %d ns, metadata says %d" % (sum(per_tid.values()), meta["blocked_ns"]))

theirs, rows = defaultdict(float), defaultdict(int)
row = re.compile(r"^\s*\d+\.\d+\s+\[\d+\]\s+(.*?)\[(\d+)(?:/\d+)?\]\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)")
for line in open(timehist, errors="replace"):
    m = row.match(line)
    if m:
        theirs[int(m.group(2))] += float(m.group(3)) * 1e6
        rows[int(m.group(2))] += 1
import subprocess
stats = subprocess.run(["perf", "report", "-i", text.rsplit("/", 1)[0] + "/perf.data", "--stats"],
                       capture_output=True, text=True, errors="replace").stdout
lost = sum(int(n) for n in re.findall(r"LOST[A-Z_]* events:\s+(\d+)", stats))
if lost:
    # perf lost events (a loaded machine): PerfLens bounds an interval whose
    # switch-in was lost by the task's next event, timehist cannot.
    print("(the recording lost %d events: not compared with timehist)" % lost)
    tids_compared = []
else:
    tids_compared = tids
# The workload's own bounds per task: the root blocks ~100 ms on the pipe
# and sleeps 50 ms, its child sleeps 5 x 20 ms.
own = {tid: ((130e6, 600e6) if tid == root else (80e6, 400e6)) for tid in tids}
disagree = []
for tid in tids_compared:
    diff = abs(per_tid[tid] - theirs.get(tid, 0))
    # timehist also counts the wait before the exec, which PerfLens, tracking
    # the target from its exec, does not: a few ms at most.
    if diff > 5e6 + 0.05 * theirs.get(tid, 0):
        disagree.append("tid %d: %d ns blocked, perf sched timehist says %d ns" % (tid, per_tid[tid], theirs.get(tid, 0)))
    # Its rows are the task's returns to a CPU, one per wait: the same
    # count as the records' waits, but the wait before the exec and the
    # fork's first switch-in, which PerfLens does not track.
    if abs(waits_tid[tid] - rows.get(tid, 0)) > 2:
        bad.append("tid %d: %d waits in the records, perf sched timehist has %d rows"
                   % (tid, waits_tid[tid], rows.get(tid, 0)))
# Under load timehist itself was seen to undercount a task (87.5 ms for the
# root that blocks 150): then the workload's own bounds decide, and the
# disagreement is printed.
if disagree and all(own[t][0] <= per_tid[t] <= own[t][1] for t in tids):
    print("(timehist disagrees, the workload's own bounds hold: %s)" % "; ".join(disagree))
else:
    bad += disagree
for b in bad:
    print(b)
print("pipe read %.1f ms, nanosleep %.1f ms; per task %s ms, timehist %s ms; waits %s, timehist rows %s" % (
    read / 1e6, sleep / 1e6, [round(per_tid[t] / 1e6, 1) for t in tids], [round(theirs.get(t, 0) / 1e6, 1) for t in tids],
    [waits_tid[t] for t in tids], [rows.get(t, 0) for t in tids]))
sys.exit(1 if bad else 0)
