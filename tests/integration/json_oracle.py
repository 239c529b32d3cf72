#!/usr/bin/python3
"""json_oracle.py - what a V8 .cpuprofile or a speedscope file says, computed
from the raw JSON here, compared with PerfLens's analysis of the same file.

Usage: json_oracle.py PERFLENS ARTIFACT_ROOT FILE v8|speedscope

V8: per function (name, or "(anonymous)", and its script url: PerfLens's
symbol and DSO) self and
inclusive ticks and time; a tick's time is the next tick's delta (the last
tick's, endTime minus its timestamp), inclusive counted once per stack;
"(root)" is no function.  speedscope: per frame (name, file), self and inclusive
weight of the sampled profiles' weights and the evented profiles'
intervals, time units in nanoseconds.  Checks every event's totals and
every function's self and inclusive weight exactly (shares follow).
Prints "ok - ..." / "not ok - ..." lines.
"""
import json
import subprocess
import sys
from collections import defaultdict

perflens, art, path, kind = sys.argv[1:5]
name = path.rsplit("/", 1)[-1]
fails = 0


def say(good, what):
    global fails
    fails += not good
    print(("ok - " if good else "not ok - ") + name + ": " + what)


def run(*args):
    r = subprocess.run(args, capture_output=True, text=True)
    if r.returncode:
        raise SystemExit("not ok - %s: %s: %s" % (name, " ".join(args[:2]), r.stderr[:300]))
    return json.loads(r.stdout)


class Event:
    def __init__(self):
        self.samples = self.total = 0
        self.self_w = defaultdict(int)
        self.incl = defaultdict(int)

    def add(self, stack, w, samples=1):
        if w <= 0 or not stack:
            return
        self.samples += samples
        self.total += w
        self.self_w[stack[-1]] += w
        for f in set(stack):
            self.incl[f] += w


def v8(doc):
    nodes = {n["id"]: n for n in doc["nodes"]}
    parent = {}
    for n in doc["nodes"]:
        for c in n.get("children", []):
            parent.setdefault(c, n["id"])
    def stack(i):
        out = []
        while i is not None:
            cf = nodes[i]["callFrame"]
            if cf["functionName"] != "(root)":
                out.append((cf["functionName"] or "(anonymous)", cf.get("url") or None))
            i = parent.get(i)
        return out[::-1]
    ticks, time = Event(), Event()
    t = doc.get("startTime", 0)
    ts = []
    for d in doc["timeDeltas"]:
        t += d
        ts.append(t)
    for i, s in enumerate(doc["samples"]):
        st = stack(s)
        ticks.add(st, 1)
        dur = ts[i + 1] - ts[i] if i + 1 < len(ts) else doc["endTime"] - ts[i]
        time.add(st, dur)
    return {("samples", "count"): ticks, ("time", "microseconds"): time}


def fkey(frame):
    return (frame["name"], frame.get("file") or None)


def speedscope(doc):
    frames = doc["shared"]["frames"]
    factor = {"nanoseconds": 1, "microseconds": 1e3, "milliseconds": 1e6, "seconds": 1e9}
    events = {}
    for p in doc["profiles"]:
        u = p["unit"]
        key = ("time", "nanoseconds") if u in factor else ("bytes", "bytes") if u == "bytes" else ("weight", "count")
        ev = events.setdefault(key, Event())
        f = factor.get(u, 1)
        if p["type"] == "sampled":
            for st, w in zip(p["samples"], p["weights"]):
                ev.add([fkey(frames[i]) for i in st], round(w * f))
        else:
            open_, last = [], None
            for e in p["events"]:
                if open_ and last is not None and e["at"] > last:
                    ev.add([fkey(frames[i]) for i in open_], round((e["at"] - last) * f))
                last = e["at"]
                if e["type"] == "O":
                    open_.append(e["frame"])
                else:
                    open_.pop()
    return events


doc = json.load(open(path))
want = v8(doc) if kind == "v8" else speedscope(doc)
an = run(perflens, "analyze", "--input", path, "--artifact-root", art)
say(an["inputs"][0]["format"] == ("cpuprofile" if kind == "v8" else "speedscope"),
    "format auto says %s" % an["inputs"][0]["format"])
got = {(e["name"], e["unit"]): e for e in an["events"]}
say(set(got) == set(want), "events %s are the file's %s" % (sorted(got), sorted(want)))
for key, ev in sorted(want.items()):
    if key not in got:
        continue
    e = got[key]
    say(e["period"] == ev.total and e["samples"] == ev.samples,
        "%s: total %d %s in %d samples (recomputed: %d in %d)" % (key[0], e["period"], key[1], e["samples"], ev.total, ev.samples))
    hs, cursor = [], None
    while True:
        args = [perflens, "hotspots", "--analysis-id", an["analysis_id"], "--event", key[0], "--limit", "100",
                "--artifact-root", art] + (["--cursor", cursor] if cursor else [])
        page = run(*args)
        hs += page["hotspots"]
        cursor = page["page"]["next_cursor"]
        if not cursor:
            break
    mine_self, mine_incl = defaultdict(int), defaultdict(int)
    for h in hs:
        mine_self[(h["symbol"], h["dso"])] += h["self"]["period"]
        mine_incl[(h["symbol"], h["dso"])] += h["inclusive"]["period"]
    bad = ["%s self %d vs %d" % (f, mine_self[f], w) for f, w in ev.self_w.items() if mine_self[f] != w]
    bad += ["%s inclusive %d vs %d" % (f, mine_incl[f], w) for f, w in ev.incl.items() if mine_incl[f] != w]
    say(not bad, "%s: %d functions' self and inclusive weights equal the recomputation%s" %
        (key[0], len(ev.incl), ("; " + "; ".join(bad[:6])) if bad else ""))
sys.exit(1 if fails else 0)
