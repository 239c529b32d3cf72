#!/usr/bin/env python3
"""timeline_oracle.py - get_timeline and list_hotspots' view.time through
perflens-mcp over stdio, as an agent calls them (test_timeline.sh).

usage: timeline_oracle.py SERVER ART DATA TEXT_ID NATIVE_ID FOLDED

DATA is the two-phase workload's perf.data (phase A in a(), then B in
b()); TEXT_ID and NATIVE_ID its analyses from `perf script` text and from
the native reader; FOLDED a folded file.  Checks:
  - perf report --time START,END (the window as list_hotspots' time_window
    states it) on DATA: the sample count, and every symbol >= 1% in either
    tool within 0.1 pp of list_hotspots(view.time) over every page, for
    both analyses;
  - the function timelines of a() and b(): a()'s weight in the first half
    of the buckets, b()'s in the second;
  - get_timeline(symbol=a)'s next step, sent as it is, lists a() and not
    b(); its next page (the cursor) keeps the window, and the cursor with
    another window is refused;
  - folded input: get_timeline and view.time say it has no sample times
    and name the inputs that do;
  - picture: the PNG file is there, a PNG of the stated width and height;
  - compare_profiles of the analysis with itself, view = a window in
    phase A, candidate_view = one in phase B: a() shrank and b() grew
    most, and every symbol's self change is perf report --time's share in
    B less its share in A (within 0.2 pp) for each symbol >= 1% in either.
"""
import json, os, struct, subprocess, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mcp_client import *  # noqa: F401,F403 (check, sc, short, Stdio)
from compare_perf_report import parse_report, named

SERVER, ART, DATA, TEXT_ID, NATIVE_ID, FOLDED = sys.argv[1:7]
s = Stdio([SERVER, "--allowed-root", os.path.dirname(FOLDED), "--artifact-root", ART, "--allow-writes"],
          "timeline")
s.initialize()


def call(name, args):
    r = s.call(name, args, timeout=60)
    res = (r or {}).get("result", {})
    return (None if res.get("isError") else res.get("structuredContent")), r


def all_pages(args):
    """Every hotspot of list_hotspots(args), page after page by cursor."""
    out, first, r = [], None, None
    a = dict(args, limit=100)
    for _ in range(50):
        page, r = call("list_hotspots", a)
        if not page:
            return None, first, r
        first = first or page
        out += page["hotspots"]
        if not page["page"]["next_cursor"]:
            break
        a = dict(args, limit=100, cursor=page["page"]["next_cursor"])
    return out, first, r


def tw_of(page):
    """view.time as list_hotspots answers it, with the share the view kept."""
    v = (page or {}).get("view", {})
    return dict(v.get("time_window", {}), samples=v.get("samples"), percent_of_samples=v.get("percent_of_samples"))


def oracle(label, aid, frm, to):
    hot, first, r = all_pages({"analysis_id": aid, "view": {"time": {"from_seconds": frm, "to_seconds": to}}})
    if not check("timeline %s: list_hotspots with view.time [%g, %g) answers" % (label, frm, to), hot, short(r)):
        return
    tw = tw_of(first)
    rep = os.path.join(os.environ["WORK"], "report-%s.txt" % label)
    with open(rep, "w") as f:
        p = subprocess.run(["perf", "report", "-i", DATA, "--stdio", "--no-children", "--sort", "sym", "-g",
                            "none", "--percent-limit", "0", "--time", tw["perf_time"]],
                           stdout=f, stderr=subprocess.PIPE, text=True)
    if not check("timeline %s: perf report --time %s runs" % (label, tw["perf_time"]), p.returncode == 0,
                 p.stderr[-300:]):
        return
    # The same window given on the recording's clock, as perf report
    # --time takes it: the same hotspots, sample for sample.
    hot_abs, first_abs, r = all_pages({"analysis_id": aid, "view": {"time": {"perf_time": tw["perf_time"]}}})
    by = lambda hs: sorted((h["symbol"], h["self"]["samples"]) for h in hs or [])
    tw_abs = tw_of(first_abs)
    check("timeline %s: view.time {perf_time: %s} keeps the same %s samples and hotspots as [%g, %g) s"
          % (label, tw["perf_time"], tw_abs.get("samples"), frm, to),
          hot_abs and by(hot_abs) == by(hot) and tw_abs.get("samples") == tw["samples"] and
          tw_abs.get("perf_time") == tw["perf_time"], short(r))
    header, perf = parse_report(rep, False)
    check("timeline %s: the window's samples are perf report --time's (%s = %d)"
          % (label, header.get("samples"), tw["samples"]),
          header.get("samples_unit") != "" or header.get("samples") == tw["samples"], header)
    mine = {}
    for h in hot:
        if named(h["symbol"]):
            mine[h["symbol"]] = mine.get(h["symbol"], 0.0) + h["self"]["percent"]
    worst, at, n, bad = 0.0, None, 0, []
    for sym in sorted(set(perf) | set(mine)):
        a, b = perf.get(sym, 0.0), mine.get(sym, 0.0)
        if a < 1 and b < 1:
            continue
        n += 1
        if abs(a - b) > worst:
            worst, at = abs(a - b), sym
        if abs(a - b) > 0.1:
            bad.append("%s perf %.2f%% perflens %.4f%%" % (sym, a, b))
    check("timeline %s: %d symbols >= 1%% within 0.1 pp of perf report --time (worst %.3f pp at %s; "
          "window kept %.2f%% of the samples)" % (label, n, worst, at, tw["percent_of_samples"]),
          n > 0 and not bad, bad)


def halves(label, tl, fn, first_half):
    """fn's weight (get_timeline function part) mostly in one half."""
    part = tl["function"]["period_per_bucket"]
    n = len(part)
    total = sum(part)
    mid = tl["span_seconds"] / 2
    early = sum(v for i, v in enumerate(part) if (i + 0.5) * tl["bucket_seconds"] < mid)
    share = (early if first_half else total - early) * 100.0 / total if total else 0
    check("timeline %s: %.1f%% of %s()'s weight is in the %s half of %d buckets"
          % (label, share, fn, "first" if first_half else "second", n), share >= 90, tl["function"])


# ---------------------------------------------------------- perf report
for label, aid in (("text", TEXT_ID), ("native", NATIVE_ID)):
    base, r = call("get_timeline", {"analysis_id": aid})
    if not check("timeline %s: get_timeline answers" % label, base, short(r)):
        continue
    span = base["span_seconds"]
    # A window across the phase change, and one inside phase B.
    oracle(label, aid, round(span * 0.3, 3), round(span * 0.7, 3))
    oracle(label + " phase B", aid, round(span * 0.6, 3), round(span * 0.95, 3))

# ---------------------------------------------------------------- a zoom
zoom, r = call("get_timeline", {"analysis_id": NATIVE_ID, "buckets": 10,
                                "view": {"time": {"from_seconds": 0.5, "to_seconds": 0.7}}})
if check("timeline: get_timeline zooms into [0.5, 0.7) s", zoom and zoom["start_seconds"] == 0.5, short(r)):
    page, r = call("list_hotspots", {"analysis_id": NATIVE_ID, "limit": 1,
                                     "view": {"time": {"from_seconds": 0.5, "to_seconds": 0.7}}})
    rep = os.path.join(os.environ["WORK"], "report-zoom.txt")
    with open(rep, "w") as f:
        subprocess.run(["perf", "report", "-i", DATA, "--stdio", "--no-children", "--sort", "sym", "-g", "none",
                        "--time", tw_of(page)["perf_time"]], stdout=f, stderr=subprocess.DEVNULL)
    header, _ = parse_report(rep, False)
    check("timeline: the zoom's %d buckets hold perf report --time's %s samples (%d)"
          % (len(zoom["samples"]), header.get("samples"), sum(zoom["samples"])),
          len(zoom["samples"]) <= 10 and sum(zoom["samples"]) == header.get("samples"), header)
    zabs, r = call("get_timeline", {"analysis_id": NATIVE_ID, "buckets": 10,
                                    "view": {"time": {"perf_time": tw_of(page)["perf_time"]}}})
    check("timeline: get_timeline zoomed by perf_time %s gives the same buckets" % tw_of(page)["perf_time"],
          zabs and zabs["samples"] == zoom["samples"] and abs(zabs["start_seconds"] - 0.5) < 1e-6, short(r))

# ------------------------------------------------------- the two phases
tla, r = call("get_timeline", {"analysis_id": TEXT_ID, "symbol": "a", "buckets": 20})
tlb, r2 = call("get_timeline", {"analysis_id": TEXT_ID, "symbol": "b", "buckets": 20})
if check("timeline: function timelines of a() and b()", tla and tlb, short(r) + short(r2)):
    check("timeline: at most 20 buckets, all the samples (%d)" % sum(tla["samples"]),
          len(tla["samples"]) <= 20 and sum(tla["samples"]) == tla["total"]["samples"], tla["samples"])
    halves("a()", tla, "a", True)
    halves("b()", tlb, "b", False)
    steps = tla["next_steps"]
    if check("timeline: the next step lists the hotspots of a()'s busiest bucket",
             steps and steps[0]["tool"] == "list_hotspots" and "time" in steps[0]["arguments"].get("view", {}),
             steps):
        args = dict(steps[0]["arguments"], limit=2)
        page, r = call("list_hotspots", args)
        if check("timeline: that step, sent as it is, answers", page, short(r)):
            hot, _, _ = all_pages(steps[0]["arguments"])
            syms = [h["symbol"] for h in hot or []]
            check("timeline: the busiest bucket of a() names a() first and not b() (%s)" % syms[:3],
                  syms and syms[0] == "a" and "b" not in syms, syms)
            cur = page["page"]["next_cursor"]
            nxt, r = call("list_hotspots", dict(args, cursor=cur)) if cur else (None, None)
            check("timeline: its next page keeps the window",
                  nxt and tw_of(nxt)["from_seconds"] == tw_of(page)["from_seconds"]
                  and nxt["page"]["offset"] == 2, short(r))
            tw = tw_of(page)
            other = dict(args, cursor=cur, view={"time": {"from_seconds": tw["to_seconds"],
                                                          "to_seconds": 2 * tw["to_seconds"] - tw["from_seconds"]}})
            bad, r = call("list_hotspots", other)
            check("timeline: the cursor with another window is refused", cur and bad is None, short(r))

# perf_time that is not a window: a usage error naming perf report's form
for bad_time in ({"perf_time": "soon,later"}, {"perf_time": "5.0,3.0"}, {"perf_time": "1.0123456789,2"},
                 {"perf_time": "1,2", "from_seconds": 0}):
    _, r = call("list_hotspots", {"analysis_id": NATIVE_ID, "view": {"time": bad_time}})
    check("timeline: view.time %s is a usage error naming the form" % json.dumps(bad_time),
          is_tool_error(r, "perf_time", "START,END"), short(r, 400))

# ---------------------------------------------------------------- folded
fa, r = call("analyze_profile", {"path": FOLDED})
if check("timeline: folded input analyzes", fa, short(r)):
    _, r = call("get_timeline", {"analysis_id": fa["analysis_id"]})
    text = json.dumps(r)
    check("timeline: get_timeline on folded input says it has no sample times and names the inputs that do",
          is_tool_error(r, "no sample times", "folded", "perf script", "perf.data"), short(r, 500))
    _, r = call("list_hotspots", {"analysis_id": fa["analysis_id"], "view": {"time": {"from_seconds": 0, "to_seconds": 1}}})
    check("timeline: list_hotspots view.time on folded input says the same",
          is_tool_error(r, "no sample times", "folded"), short(r, 500))

# --------------------------------------------------------------- picture
pic, r = call("get_timeline", {"analysis_id": NATIVE_ID, "symbol": "b", "picture": True})
if check("timeline: picture=true answers with a picture", pic and "picture" in pic, short(r)):
    p = pic["picture"]
    head = open(p["path"], "rb").read(24) if os.path.isfile(p["path"]) else b""
    ok_png = head[:8] == b"\x89PNG\r\n\x1a\n" and head[12:16] == b"IHDR"
    w, h = struct.unpack(">II", head[16:24]) if ok_png else (0, 0)
    check("timeline: %s is a PNG of the stated %dx%d (read %dx%d)" % (os.path.basename(p["path"]), p["width"],
          p["height"], w, h), ok_png and (w, h) == (p["width"], p["height"]) and os.path.getsize(p["path"]) == p["bytes"],
          head)
    blocks = [c for c in r["result"].get("content", []) if c.get("type") == "image"]
    check("timeline: the picture also comes as an image block", blocks or not p["inline"], r["result"].get("content"))

# ------------------------------------------------- two windows compared
def perf_shares(perf_time, label):
    rep = os.path.join(os.environ["WORK"], "report-%s.txt" % label)
    with open(rep, "w") as f:
        subprocess.run(["perf", "report", "-i", DATA, "--stdio", "--no-children", "--sort", "sym", "-g", "none",
                        "--percent-limit", "0", "--time", perf_time], stdout=f, stderr=subprocess.DEVNULL)
    return parse_report(rep, False)[1]


base, r = call("get_timeline", {"analysis_id": NATIVE_ID})
span = base["span_seconds"] if base else 1.2
win_a = {"from_seconds": round(span * 0.05, 3), "to_seconds": round(span * 0.45, 3)}
win_b = {"from_seconds": round(span * 0.55, 3), "to_seconds": round(span * 0.95, 3)}
funcs, first, r = [], None, None
args = {"baseline_id": NATIVE_ID, "candidate_id": NATIVE_ID, "exports": False, "min_delta_percent": 0, "limit": 100,
        "view": {"time": win_a}, "candidate_view": {"time": win_b}}
for _ in range(20):
    page, r = call("compare_profiles", args)
    if not page:
        break
    first = first or page
    funcs += page["functions"]
    if not page["page"]["next_cursor"]:
        break
    args = dict(args, cursor=page["page"]["next_cursor"])
if check("timeline: compare_profiles of phase A's window (view) against phase B's (candidate_view) answers",
         first and funcs, short(r)):
    tw_a, tw_b = first["view"]["time_window"], first["candidate_view"]["time_window"]
    check("timeline: the comparison states each side's window (%s, %s)" % (tw_a["perf_time"], tw_b["perf_time"]),
          tw_a["from_seconds"] == win_a["from_seconds"] and tw_b["from_seconds"] == win_b["from_seconds"]
          and not any("same analysis" in w for w in first["comparability"]["warnings"]), [tw_a, tw_b, first["comparability"]["warnings"]])
    top = sorted(funcs, key=lambda f: -abs(f["self_delta_points"]))[:2]
    moved = {f["symbol"]: f["self_delta_points"] for f in top}
    check("timeline: the two phases' functions changed most: a() shrank, b() grew (%s)" % moved,
          set(moved) == {"a", "b"} and moved["a"] < -50 and moved["b"] > 50, moved)
    pa, pb = perf_shares(tw_a["perf_time"], "cmp-a"), perf_shares(tw_b["perf_time"], "cmp-b")
    mine = {}
    for f in funcs:
        if named(f["symbol"]):
            mine[f["symbol"]] = mine.get(f["symbol"], 0.0) + f["self_delta_points"]
    n, bad, worst = 0, [], 0.0
    for sym in sorted(set(pa) | set(pb)):
        if pa.get(sym, 0) < 1 and pb.get(sym, 0) < 1:
            continue
        n += 1
        want = pb.get(sym, 0.0) - pa.get(sym, 0.0)
        worst = max(worst, abs(want - mine.get(sym, 0.0)))
        if abs(want - mine.get(sym, 0.0)) > 0.2:
            bad.append("%s perf %+.2f perflens %+.4f" % (sym, want, mine.get(sym, 0.0)))
    check("timeline: %d symbols' self change within 0.2 pp of perf report --time's B less A (worst %.3f pp)"
          % (n, worst), n >= 2 and not bad, bad)
    # each next step, sent as it is, answers in the window of the side it names
    for st in first["next_steps"]:
        got, r = call(st["tool"], st["arguments"])
        tw = ((got or {}).get("view") or {}).get("time_window", {})
        side = win_b if st["arguments"].get("view", {}).get("time") == win_b else win_a
        check("timeline: the comparison's next step %s(%s) answers, in its side's window [%g, %g)"
              % (st["tool"], st["arguments"].get("hotspot_id") or st["arguments"].get("symbol"),
                 side["from_seconds"], side["to_seconds"]),
              got and tw.get("from_seconds") == side["from_seconds"], short(r))
    _, r = call("compare_profiles", dict(args, candidate_view={"time": {"from_seconds": 5, "to_seconds": 1}}))
    check("timeline: a bad candidate_view is a usage error naming it",
          is_tool_error(r, "candidate_view"), short(r, 400))
s.close()
sys.exit(1 if fails else 0)
