#!/usr/bin/python3
"""pprof_oracle.py - compare PerfLens's reading of a pprof file with
`go tool pprof` on the same file.

Usage: pprof_oracle.py PERFLENS ARTIFACT_ROOT PROFILE

Runs `perflens analyze` and, for every event, `perflens hotspots`; then
`go tool pprof -raw` (the sample types and units, in order) and, per sample
type, `go tool pprof -top -sample_index=TYPE` with every node shown.  Checks:
the events are the sample types with their units, in order; each event's
total is pprof's total; every function pprof lists has PerfLens's flat
share (the sum over its hotspots: an inlined copy is a hotspot apart) and
cumulative share (when one hotspot has the name) within 0.01 points (pprof
prints "100%" for 99.95 to 100.05 and "1%" for 0.95 to 1: within 0.05
there), and
flat value exactly; and PerfLens has no function with self weight that
pprof does not list.  Prints "ok - ..." / "not ok - ..." lines.
"""
import json
import math
import re
import subprocess
import sys

perflens, art, profile = sys.argv[1:4]
UNIT_FLAG = {"nanoseconds": ["-unit=ns"], "bytes": ["-unit=B"]}
ROW = re.compile(r"^\s*([0-9.]+)[a-zA-Z]*\s+([0-9.]+)%\s+[0-9.]+%\s+([0-9.]+)[a-zA-Z]*\s+([0-9.]+)%\s+(.*)$")
TOTAL = re.compile(r"of ([0-9.]+)[a-zA-Z]* total")
name = profile.rsplit("/", 1)[-1]
fails = 0


def say(good, what):
    global fails
    if not good:
        fails += 1
    print(("ok - " if good else "not ok - ") + name + ": " + what)


def run(*args):
    r = subprocess.run(args, capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit("not ok - %s: %s failed: %s" % (name, " ".join(args[:3]), r.stderr[:300]))
    return r.stdout


def tolerance(shown):
    """pprof prints shares of 1% and more with 2 decimals, "100%" for 99.95
    to 100.05, and smaller ones with 2 significant digits (%.2g: 0.9964 is
    "1", 0.054 is "0.054"): half a unit of the last digit shown, and at
    least the 0.01 points asked for."""
    v = float(shown)
    if shown == "100":
        return 0.05
    if v >= 1 and "." in shown:
        return 0.01
    if v == 0:
        return 0.0
    return max(0.01, 0.5 * 10 ** (math.floor(math.log10(v)) - 1))


def pprof_types():
    raw = run("go", "tool", "pprof", "-raw", profile)
    lines = raw.splitlines()
    i = lines.index("Samples:")
    return [tuple(t.split("/", 1)) for t in lines[i + 1].split()]


def pprof_top(sample_type, unit):
    out = run("go", "tool", "pprof", "-top", "-nodecount=1000000", "-nodefraction=0",
              "-edgefraction=0", "-sample_index=" + sample_type, *UNIT_FLAG.get(unit, []), profile)
    total = None
    rows = []
    for line in out.splitlines():
        m = TOTAL.search(line)
        if m and total is None:
            total = float(m.group(1))
        m = ROW.match(line)
        if m:
            fn = m.group(5)
            if fn.endswith(" (inline)"):
                fn = fn[: -len(" (inline)")]
            rows.append((fn, float(m.group(1)), m.group(2), m.group(4)))
    return total, rows


an = json.loads(run(perflens, "analyze", "--input", profile, "--artifact-root", art))
aid = an["analysis_id"]
types = pprof_types()
ours = [(e["name"], e["unit"]) for e in an["events"]]
say(ours == types, "events are pprof's sample types with their units, in order (%s; pprof %s)" %
    (ours, types))
for ev, unit in types:
    if (ev, unit) not in ours:
        continue
    hs = json.loads(run(perflens, "hotspots", "--analysis-id", aid, "--event", ev, "--limit", "100",
                        "--artifact-root", art))
    page = hs
    while page.get("page", {}).get("next_cursor"):
        page = json.loads(run(perflens, "hotspots", "--analysis-id", aid, "--event", ev, "--limit", "100",
                              "--cursor", page["page"]["next_cursor"], "--artifact-root", art))
        hs["hotspots"] += page["hotspots"]
    total, rows = pprof_top(ev, unit)
    say(total is not None and hs["total"]["period"] == total,
        "%s: total %s %s is pprof's %s" % (ev, hs["total"]["period"], unit, total))
    by_name = {}
    for h in hs["hotspots"]:
        by_name.setdefault(h["symbol"], []).append(h)
    bad = []
    cum_checked = 0
    for fn, flat, flat_s, cum_s in rows:
        flat_pct, cum_pct = float(flat_s), float(cum_s)
        mine = by_name.get(fn, [])
        my_flat = sum(h["self"]["period"] for h in mine)
        my_flat_pct = sum(h["self"]["percent"] for h in mine)
        if my_flat != flat or abs(my_flat_pct - flat_pct) > tolerance(flat_s):
            bad.append("%s flat %s (%.4f%%) vs pprof %s (%.2f%%)" % (fn, my_flat, my_flat_pct, flat, flat_pct))
        if len(mine) == 1:
            cum_checked += 1
            if abs(mine[0]["inclusive"]["percent"] - cum_pct) > tolerance(cum_s):
                bad.append("%s cum %.4f%% vs pprof %.2f%%" % (fn, mine[0]["inclusive"]["percent"], cum_pct))
    listed = {r[0] for r in rows}
    extra = [h["symbol"] for h in hs["hotspots"] if h["self"]["period"] and h["symbol"] not in listed]
    say(not bad and not extra and rows,
        "%s: %d functions' flat shares, %d cumulative shares within 0.01 points of go tool pprof -top%s"
        % (ev, len(rows), cum_checked, ("; " + "; ".join(bad[:5] + extra[:5])) if bad or extra else ""))
sys.exit(1 if fails else 0)
