"""busy_gate.py - busy_wait's thread gate on one capture, against
classify_oracle.py's reading of the perf script text.

  busy_gate.py RULES.json PERF_SCRIPT.txt CLASSIFY_RESULT.json pos|neg NAME

pos: busy_wait fired, and its threads evidence names the threads the
     oracle's gate passes (comm, pid, tid; heaviest first), each with the
     oracle's share of the thread in the rule's stacks and share of one
     CPU (within 0.01 points).
neg: busy_wait did not fire although, without the gate, the rule's
     functions hold at least its min_percent of the event (so the gate,
     not the patterns, decided); the line names each thread with wait
     stacks, its share and its share of one CPU.
Prints one ok / not ok line.
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import classify_oracle as co  # noqa: E402

RULES, TXT, RES, MODE, NAME = sys.argv[1:6]
rules = json.load(open(RULES))
rule = next(r for r in rules["rules"] if r["id"] == "busy_wait")
gate = rule["match"]["thread"]
samples = co.read_samples(TXT)
res = json.load(open(RES))
event = res["events"][0]["event"] if res.get("events") else "cpu-clock"
cand = next((c for c in res["candidates"] if c["rule"]["id"] == "busy_wait" and c["event"] == event), None)

total, per, times, wait = 0, {}, {}, {}
for e, p, fr in samples:
    if e != event:
        continue
    key, ns = co.THREADS[id(fr)]
    total += p
    per[key] = per.get(key, 0) + p
    if any(co.func_matches(rule, *f) for f in fr):
        wait[key] = wait.get(key, 0) + p
    if ns is not None:
        times.setdefault(key, []).append((ns, p))


def core(key):
    t = times.get(key, [])
    if len(t) < 2:
        return None
    period = sum(p for _, p in t)
    return min(100.0, round(100.0 * period / (max(n for n, _ in t) - min(n for n, _ in t) + period / len(t)) * 1e4) / 1e4)


def share(key):
    return round(wait.get(key, 0) * 100.0 / per[key] * 1e4) / 1e4


def desc(key):
    c = core(key)
    return "%s/%s %.1f%% of it waiting, %s of a CPU" % (key[0], key[2], share(key),
                                                       "unknown" if c is None else "%.1f%%" % c)


passed = co.gate_pass(rules, rule, event, samples)
errs = []
if MODE == "pos":
    if not cand:
        errs.append("busy_wait did not fire (threads: %s)" % "; ".join(desc(k) for k in wait))
    else:
        th = cand["threads"]
        want = sorted(passed, key=lambda k: (-wait[k], k))[:3]
        got = [(t["comm"], str(t["pid"]), str(t["tid"])) for t in th["passed"]]
        if got != want or th["passed_total"] != len(passed):
            errs.append("passed threads %s (%d), oracle %s (%d)" % (got, th["passed_total"], want, len(passed)))
        for t, k in zip(th["passed"], want):
            c = core(k)
            if abs(t["share_percent"] - share(k)) > 0.01 or (c is None) != (t["core_percent"] is None) or (
                    c is not None and abs(t["core_percent"] - c) > 0.01):
                errs.append("thread %s: share %s core %s, oracle %s %s" % (k, t["share_percent"], t["core_percent"],
                                                                        share(k), c))
    ok_text = "busy_wait %.1f%%: %s" % (cand["figure"]["value"], "; ".join(desc(k) for k in sorted(
        passed, key=lambda k: -wait[k]))) if cand else ""
else:
    ungated = round(sum(wait.values()) * 100.0 / total * 1e4) / 1e4 if total else 0
    if cand:
        errs.append("busy_wait fired %.1f%% (threads %s)" % (cand["figure"]["value"], cand["threads"]["passed"]))
    if ungated < rule["match"]["min_percent"]:
        errs.append("the wait functions hold only %.1f%% of the event: the gate was not what kept it quiet" % ungated)
    ok_text = "quiet, though its functions hold %.1f%% of the event: %s" % (
        ungated, "; ".join(desc(k) for k in sorted(wait, key=lambda k: -wait[k])[:3]))
if errs:
    print("not ok - classify %s (%s): %s" % (NAME, MODE, "; ".join(errs)))
    sys.exit(1)
print("ok - classify %s: %s (gate: %g%% of the thread, %g%% of a CPU)" % (NAME, ok_text, gate["min_share_percent"],
                                                                       gate["min_core_percent"]))
