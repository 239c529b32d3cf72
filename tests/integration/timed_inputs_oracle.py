#!/usr/bin/env python3
"""timed_inputs_oracle.py - sample times of speedscope and pprof inputs
(test_timed_inputs.sh), through perflens-mcp over stdio.

usage: timed_inputs_oracle.py SERVER DIR [GO_CPU_PPROF]

Writes into DIR, from known samples, files whose format carries times:
  sampled.speedscope.json  a "sampled" profile in milliseconds with a
                           startValue (a() then b() then a() again) and a
                           second thread's profile without one;
  evented.speedscope.json  an "evented" profile in microseconds (opens and
                           closes at their "at" times);
  timed.pb                 pprof samples with end_timestamp_ns labels, some
                           standing for 2 or 3 (samples/count), a few
                           without a label;
and files whose format carries none: a speedscope profile in bytes and a
pprof profile with only time_nanos and duration_nanos (and, when given, a
Go CPU profile written by runtime/pprof).

Each record's time is computed here from the file's own fields, as the
format defines them (an evented interval from the "at" that opens it, a
sampled profile's samples end to end from its startValue, pprof's label),
independently of PerfLens.  Then, for every timed file and event:
get_timeline's buckets hold the samples that fall in them (same count per
bucket, bucket by bucket), its timeless_samples the samples without a
time; list_hotspots with view.time for two windows lists every function's
self samples and period as computed here, over every page.  The files
without times: get_timeline and view.time say the analysis has no sample
times and name what the format lacks.
"""
import json, math, os, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mcp_client import *  # noqa: F401,F403 (check, short, Stdio, is_tool_error)
from pprof_craft import field, packed, Strings

SERVER, DIR = sys.argv[1:3]
GO_CPU = sys.argv[3] if len(sys.argv) > 3 else None
os.makedirs(DIR, exist_ok=True)


# --------------------------------------------------------- the samples
# Each file's expectation: {event: [(time_ns or None, leaf, samples, period)]}

def sampled_speedscope():
    frames = [{"name": "main"}, {"name": "a"}, {"name": "b"}]
    samples, weights = [], []
    for i in range(300):
        leaf = 1 if i < 120 or i >= 220 else 2
        samples.append([0, leaf])
        weights.append(2.5 if leaf == 1 else 1.25)          # ms, exact in binary
    other = {"type": "sampled", "name": "helper", "unit": "milliseconds", "endValue": 50,
             "samples": [[0, 2]] * 20, "weights": [2.5] * 20}
    doc = {"$schema": "https://www.speedscope.app/file-format-schema.json", "shared": {"frames": frames},
           "profiles": [{"type": "sampled", "name": "worker", "unit": "milliseconds", "startValue": 1000.0,
                         "endValue": 1000.0 + sum(weights), "samples": samples, "weights": weights}, other]}
    exp, t = [], 1000.0
    for st, w in zip(samples, weights):
        exp.append((round(t * 1e6), frames[st[-1]]["name"], 1, round(w * 1e6)))
        t += w
    t = 0.0
    for st, w in zip(other["samples"], other["weights"]):
        exp.append((round(t * 1e6), "b", 1, round(w * 1e6)))
        t += w
    return doc, {"time": exp}


def evented_speedscope():
    frames = [{"name": "main"}, {"name": "a"}, {"name": "b"}, {"name": "c"}]
    events, exp = [], []
    at = 7000
    events.append({"type": "O", "frame": 0, "at": at})
    for i in range(200):
        f = 1 if i % 3 else 2
        dur = 250 + (i % 7) * 125                              # microseconds
        events.append({"type": "O", "frame": f, "at": at})
        if i % 10 == 0:                                         # a nested call: two intervals
            events.append({"type": "O", "frame": 3, "at": at + 100})
            events.append({"type": "C", "frame": 3, "at": at + 200})
            exp += [(at * 1000, frames[f]["name"], 1, 100000), ((at + 100) * 1000, "c", 1, 100000),
                    ((at + 200) * 1000, frames[f]["name"], 1, (dur - 200) * 1000)]
        else:
            exp.append((at * 1000, frames[f]["name"], 1, dur * 1000))
        at += dur
        events.append({"type": "C", "frame": f, "at": at})
        if i % 4 == 0:                                          # main alone for a while
            exp.append((at * 1000, "main", 1, 500000))
            at += 500
    events.append({"type": "C", "frame": 0, "at": at})
    doc = {"$schema": "https://www.speedscope.app/file-format-schema.json", "shared": {"frames": frames},
           "profiles": [{"type": "evented", "name": "main thread", "unit": "microseconds", "startValue": 7000,
                         "endValue": at, "events": events}]}
    return doc, {"time": exp}


def bytes_speedscope():
    return {"$schema": "https://www.speedscope.app/file-format-schema.json", "shared": {"frames": [{"name": "main"}, {"name": "alloc"}]},
            "profiles": [{"type": "sampled", "name": "heap", "unit": "bytes", "startValue": 0, "endValue": 300,
                          "samples": [[0, 1], [0]], "weights": [200, 100]}]}


def pprof(timed):
    """samples/count and cpu/nanoseconds over main, a, b; `timed`: labels."""
    s = Strings()
    out = bytearray()
    out += field(1, field(1, s("samples")) + field(2, s("count")))
    out += field(1, field(1, s("cpu")) + field(2, s("nanoseconds")))
    exp = {"samples": [], "cpu": []}
    t0 = 1765000000000000000
    for i in range(400):
        leaf = 2 if i < 150 else 3 if i < 300 else 2
        count = 1 + (i % 5 == 0) + (i % 15 == 0)
        cpu = 10000000 * count + (i % 3)
        t = t0 + i * 10000000 + (i * 7919) % 5000000 if timed and i % 50 != 7 else None
        body = packed(1, [leaf, 1]) + packed(2, [count, cpu])
        if t is not None:
            body += field(3, field(1, s("end_timestamp_ns")) + field(3, t))
        body += field(3, field(1, s("thread_name")) + field(2, s("worker")))
        out += field(2, body)
        name = {2: "a", 3: "b"}[leaf]
        for k in range(count):        # one timed sample per count, the value split evenly
            exp["samples"].append((t, name, 1, 1))
            exp["cpu"].append((t, name, 1, cpu // count + (cpu % count if k == 0 else 0)))
    for lid, fid in ((1, 1), (2, 2), (3, 3)):
        out += field(4, field(1, lid) + field(4, field(1, fid) + field(2, lid * 10)))
    for fid, name in ((1, "main"), (2, "a"), (3, "b")):
        out += field(5, field(1, fid) + field(2, s(name)) + field(3, s(name)) + field(4, s("/src/app.go")))
    for st in s.table:
        out += field(6, st.encode())
    out += field(9, t0)                     # time_nanos
    out += field(10, 4000000000)            # duration_nanos
    out += field(11, field(1, s("cpu")) + field(2, s("nanoseconds")))
    out += field(12, 10000000)
    return bytes(out), exp


files = {}
doc, files["sampled.speedscope.json"] = sampled_speedscope()
json.dump(doc, open(os.path.join(DIR, "sampled.speedscope.json"), "w"))
doc, files["evented.speedscope.json"] = evented_speedscope()
json.dump(doc, open(os.path.join(DIR, "evented.speedscope.json"), "w"))
data, files["timed.pb"] = pprof(True)
open(os.path.join(DIR, "timed.pb"), "wb").write(data)
json.dump(bytes_speedscope(), open(os.path.join(DIR, "bytes.speedscope.json"), "w"))
open(os.path.join(DIR, "untimed.pb"), "wb").write(pprof(False)[0])

s = Stdio([SERVER, "--allowed-root", DIR] + (["--allowed-root", os.path.dirname(GO_CPU)] if GO_CPU else [])
          + ["--artifact-root", os.path.join(DIR, "art"), "--allow-writes"], "timed inputs")
s.initialize()


def call(name, args):
    r = s.call(name, args, timeout=60)
    res = (r or {}).get("result", {})
    return (None if res.get("isError") else res.get("structuredContent")), r


def hotspots(args):
    out, first = [], None
    a = dict(args, limit=100)
    for _ in range(20):
        page, r = call("list_hotspots", a)
        if not page:
            return None, r
        out += page["hotspots"]
        first = first or page
        if not page["page"]["next_cursor"]:
            break
        a = dict(args, limit=100, cursor=page["page"]["next_cursor"])
    return (out, first), None


def by_leaf(recs, first, lo, hi):
    """Self samples and period per leaf of the timed records in [lo, hi) ns after first."""
    out = {}
    for t, leaf, n, p in recs:
        if t is not None and lo <= t - first < hi:
            a = out.setdefault(leaf, [0, 0])
            a[0] += n
            a[1] += p
    return out


for name, exp in files.items():
    a, r = call("analyze_profile", {"path": os.path.join(DIR, name)})
    if not check("timed inputs %s: analyzes" % name, a, short(r)):
        continue
    aid = a["analysis_id"]
    first = min(t for recs in exp.values() for t, _, _, _ in recs if t is not None)
    last = max(t for recs in exp.values() for t, _, _, _ in recs if t is not None)
    for event, recs in exp.items():
        tl, r = call("get_timeline", {"analysis_id": aid, "event": event, "buckets": 40})
        if not check("timed inputs %s %s: get_timeline answers" % (name, event), tl, short(r)):
            continue
        w = round(tl["bucket_seconds"] * 1e9)
        want = [0] * len(tl["samples"])
        for t, _, n, _ in recs:
            if t is not None:
                i = (t - first) // w
                if i < len(want):
                    want[i] += n
        untimed = sum(n for t, _, n, _ in recs if t is None)
        timed_n = sum(n for t, _, n, _ in recs if t is not None)
        check("timed inputs %s %s: the span is the file's (%.6f s) and each of the %d buckets holds the samples "
              "whose time falls in it (%d timed)" % (name, event, (last - first) / 1e9, len(want), timed_n),
              tl["samples"] == want and abs(tl["span_seconds"] - (last - first) / 1e9) < 1e-9
              and sum(want) == timed_n, [tl["samples"], want, tl["span_seconds"]])
        # every event's untimed samples are in timeless_samples (the profile's, all events)
        all_untimed = sum(n for rr in exp.values() for t, _, n, _ in rr if t is None)
        check("timed inputs %s %s: timeless_samples counts the %d samples without a time"
              % (name, event, all_untimed), tl.get("timeless_samples", 0) == all_untimed, tl.get("timeless_samples"))
        # two windows around the 20%..60% and 45%..90% of the timed records
        times = sorted(t - first for t, _, _, _ in recs if t is not None)
        for lo_f, hi_f in ((0.2, 0.6), (0.45, 0.9)):
            lo = round(times[int(len(times) * lo_f)] / 1e9 + 1e-7, 6)
            hi = round(times[int(len(times) * hi_f)] / 1e9 + 1e-7, 6)
            got, r = hotspots({"analysis_id": aid, "event": event, "view": {"time": {"from_seconds": lo, "to_seconds": hi}}})
            if not check("timed inputs %s %s: list_hotspots with view.time [%g, %g) answers" % (name, event, lo, hi),
                         got, short(r)):
                continue
            hs, page = got
            want = by_leaf(recs, first, round(lo * 1e9), round(hi * 1e9))
            mine = {h["symbol"]: [h["self"]["samples"], h["self"]["period"]] for h in hs if h["self"]["samples"]}
            check("timed inputs %s %s [%g, %g): every function's self samples and period are the file's (%s)"
                  % (name, event, lo, hi, sorted(want.items())), mine == want
                  and page["total"]["samples"] == sum(v[0] for v in want.values()), [mine, want, page["total"]])

untimed = [("bytes.speedscope.json", "speedscope", "bytes"), ("untimed.pb", "pprof", "timestamp")]
if GO_CPU:
    untimed.append((GO_CPU, "pprof", "time_nanos"))
for name, fmt, word in untimed:
    a, r = call("analyze_profile", {"path": os.path.join(DIR, name)})
    if not check("timed inputs %s: analyzes" % os.path.basename(name), a, short(r)):
        continue
    ev = {"speedscope": "bytes", "pprof": "cpu"}[fmt]
    _, r = call("get_timeline", {"analysis_id": a["analysis_id"], "event": ev})
    check("timed inputs %s: get_timeline says it has no sample times and what %s lacks ('%s')"
          % (os.path.basename(name), fmt, word), is_tool_error(r, "no sample times", fmt, word), short(r, 600))
    _, r = call("list_hotspots", {"analysis_id": a["analysis_id"], "event": ev,
                                  "view": {"time": {"from_seconds": 0, "to_seconds": 1}}})
    check("timed inputs %s: view.time says the same" % os.path.basename(name),
          is_tool_error(r, "no sample times", fmt, word), short(r, 600))
s.close()
sys.exit(1 if fails else 0)
