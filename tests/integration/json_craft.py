#!/usr/bin/python3
"""json_craft.py - speedscope files written from a known profile, and bad
speedscope and V8 files, for test_json_inputs.sh and the fuzz corpora.
Usage: json_craft.py OUT_DIR

Good (json_oracle.py recomputes what they hold):
  sampled.speedscope.json   two sampled profiles (threads "main" and
                            "worker") in milliseconds, fractional weights,
                            frames with file and line
  evented.speedscope.json   an evented profile in microseconds (nested
                            opens and closes) and a sampled one in bytes
  none.speedscope.json      a sampled profile with unit "none"
Bad (each: a clear error, exit 3, or records counted malformed):
  ss-truncated.json, ss-wrongtype.json (profiles is an object),
  ss-dangling.json (frame index 99), ss-badclose.json (closes a frame that
  is not open), ss-huge.json (weight 1e30), ss-negative.json,
  v8-truncated.json, v8-wrongtype.json (nodes is a string),
  v8-dangling.json (a child id and a sampled id that point nowhere),
  v8-cycle.json (parent links 2 -> 3 -> 2), v8-huge.json (delta 1e30)
"""
import json
import os
import sys

SCHEMA = "https://www.speedscope.app/file-format-schema.json"
FRAMES = [
    {"name": "main", "file": "/src/app.py", "line": 1},
    {"name": "parse", "file": "/src/app.py", "line": 10},
    {"name": "tokenize", "file": "/src/lex.py", "line": 5},
    {"name": "render"},
    {"name": "parse", "file": "/src/other.py", "line": 3},
]


def doc(profiles):
    return {"$schema": SCHEMA, "shared": {"frames": FRAMES}, "profiles": profiles,
            "name": "crafted", "activeProfileIndex": 0, "exporter": "json_craft.py"}


def sampled(name, unit, samples, weights):
    return {"type": "sampled", "name": name, "unit": unit, "startValue": 0,
            "endValue": sum(weights), "samples": samples, "weights": weights}


def evented(name, unit, events):
    return {"type": "evented", "name": name, "unit": unit, "startValue": events[0]["at"],
            "endValue": events[-1]["at"], "events": events}


def ev(t, f, at):
    return {"type": t, "frame": f, "at": at}


GOOD = {
    "sampled.speedscope.json": doc([
        sampled("main", "milliseconds", [[0, 1, 2], [0, 1], [0, 3], [0, 4]], [1.5, 0.25, 2.0, 0.125]),
        sampled("worker", "milliseconds", [[0, 1, 2], [3]], [3.0, 0.5]),
    ]),
    "evented.speedscope.json": doc([
        evented("loop", "microseconds", [ev("O", 0, 0), ev("O", 1, 10), ev("O", 2, 15), ev("C", 2, 40),
                                         ev("C", 1, 45), ev("O", 3, 45), ev("C", 3, 100), ev("C", 0, 120)]),
        sampled("heap", "bytes", [[0, 1], [0, 3]], [4096, 512]),
    ]),
    "none.speedscope.json": doc([sampled("py", "none", [[0, 1], [0, 1, 2], [0]], [3, 1, 2])]),
}


def v8_doc():
    nodes = [
        {"id": 1, "callFrame": {"functionName": "(root)", "scriptId": "0", "url": "", "lineNumber": -1, "columnNumber": -1}, "hitCount": 0, "children": [2]},
        {"id": 2, "callFrame": {"functionName": "main", "scriptId": "1", "url": "file:///app.js", "lineNumber": 0, "columnNumber": 0}, "hitCount": 1, "children": [3]},
        {"id": 3, "callFrame": {"functionName": "", "scriptId": "1", "url": "file:///app.js", "lineNumber": 4, "columnNumber": 2}, "hitCount": 2, "children": []},
    ]
    return {"nodes": nodes, "startTime": 1000, "endTime": 2000, "samples": [2, 3, 3], "timeDeltas": [10, 300, 200]}


def bad():
    out = {}
    good = json.dumps(GOOD["sampled.speedscope.json"])
    out["ss-truncated.json"] = good[: len(good) // 2]
    d = doc({"not": "a list"})
    out["ss-wrongtype.json"] = json.dumps(d)
    out["ss-dangling.json"] = json.dumps(doc([sampled("m", "milliseconds", [[0, 99], [0, 1]], [1, 1])]))
    out["ss-badclose.json"] = json.dumps(doc([evented("e", "microseconds", [ev("O", 0, 0), ev("O", 1, 5), ev("C", 0, 9), ev("C", 1, 10)])]))
    out["ss-huge.json"] = json.dumps(doc([sampled("m", "seconds", [[0], [0, 1]], [1e30, 1])]))
    out["ss-negative.json"] = json.dumps(doc([sampled("m", "none", [[0], [0, 1]], [-4, 2])]))
    v = json.dumps(v8_doc())
    out["v8-truncated.json"] = v[: len(v) // 2]
    d = v8_doc(); d["nodes"] = "nodes"
    out["v8-wrongtype.json"] = json.dumps(d)
    d = v8_doc(); d["nodes"][2]["children"] = [77]; d["samples"] = [2, 3, 55]
    out["v8-dangling.json"] = json.dumps(d)
    d = v8_doc(); d["nodes"][0]["children"] = []; d["nodes"][2]["children"] = [2]
    out["v8-cycle.json"] = json.dumps(d)
    d = v8_doc(); d["timeDeltas"] = [10, 1e30, 5]
    out["v8-huge.json"] = json.dumps(d)
    return out


def main():
    d = sys.argv[1]
    os.makedirs(d, exist_ok=True)
    for n, v in GOOD.items():
        with open(os.path.join(d, n), "w") as f:
            json.dump(v, f)
    with open(os.path.join(d, "good.cpuprofile"), "w") as f:
        json.dump(v8_doc(), f)
    for n, v in bad().items():
        with open(os.path.join(d, n), "w") as f:
            f.write(v)


main()
