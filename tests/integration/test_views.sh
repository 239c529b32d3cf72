# test_views.sh - the view argument (tools/lib/view.h, profile/transform.h) on
# one real recording, through perflens-mcp as an agent calls it.
#
# The workload (tests/workloads/views.c: hash_str under two callers, a
# recursion, a leaf worth hiding) is recorded once with perf record -g.
# Oracles, none of them PerfLens's own output:
#  - go tool pprof (Debian's golang-go) with -focus, -ignore, -hide and
#    -show_from (and pairs of them) on PerfLens's pprof export of the
#    same analysis without a view: every function's flat and cum percent
#    (-top -relative_percentages, nothing dropped) equals list_hotspots'
#    self and inclusive percent under the same view within 0.01 points,
#    every page of it;
#  - perf script of the recording, read here: under (samples through
#    hash_str called from render_page), merge (fmt_num's samples on
#    walk_tree) and collapse_recursion (the user part of each path with
#    runs of one function made one) count as the stacks perf printed;
#  - python3-jsonschema: every result against its tool's outputSchema.
# Then as an agent: a viewed list_hotspots paged and its next step
# followed keep the view, get_call_paths under the same view, a cursor of
# another view refused, an invalid pattern a usage error naming the field,
# its position and the valid form, a focus matching nothing and an ignore
# of everything errors saying so, view.time answered with its window,
# and the older top-level tid still answered (with thread_filter).
. tests/integration/lib.sh
name="views"
PY=/usr/bin/python3
if ! $PY -c 'import jsonschema' 2>/dev/null; then
	skip "$name: python3-jsonschema is not installed"
	exit 0
fi
if ! command -v go >/dev/null || ! command -v gcc >/dev/null; then
	skip "$name: go (golang-go) or gcc is not installed"
	exit 0
fi
need_perf_record "$name"
export HOME="$WORK" PPROF_TMPDIR="$WORK/pprof-tmp" GOCACHE="$GO_CACHE"
mkdir -p "$WORK/cap" "$WORK/art"
if ! gcc -O1 -g -fno-omit-frame-pointer -o "$WORK/cap/wl" "$REPO/tests/workloads/views.c" 2>"$WORK/err" ||
	! perf record -e cpu-clock -F 999 -g -N -o "$WORK/cap/wl.data" -- "$WORK/cap/wl" 1 >/dev/null 2>"$WORK/err"; then
	notok "$name: record the workload: $(oneline "$WORK/err")"
	exit 0
fi
perf script -F tid,period,ip,sym,dso -i "$WORK/cap/wl.data" >"$WORK/script.txt" 2>"$WORK/err" ||
	{ notok "$name: perf script: $(oneline "$WORK/err")"; exit 0; }

server="$(cd "$BUILD" && pwd)/perflens-mcp"
WORK="$WORK" timeout 300 $PY - "$server" "$WORK/cap" "$WORK/art" "$WORK/script.txt" <<'PY'
import json, os, re, subprocess, sys
sys.path.insert(0, os.path.join(os.environ.get("REPO", os.getcwd()), "tests", "integration"))
from mcp_client import *  # the shared MCP test client (mcp_client.py)

SERVER, CAP, ART, SCRIPT = sys.argv[1:5]
s = Stdio([SERVER, "--allowed-root", CAP, "--artifact-root", ART, "--allow-writes"], "views")
s.initialize()


def ok_result(r, what):
    res = (r or {}).get("result", {})
    if res.get("isError") or "structuredContent" not in res:
        check(what, False, short(r))
        return None
    return res["structuredContent"]


a = ok_result(s.call("analyze_profile", {"path": os.path.join(CAP, "wl.data")}, timeout=120), "analyze the recording")
if not a:
    sys.exit(0)
aid = a["analysis_id"]
ev = "cpu-clock"
x = ok_result(s.call("export_profile", {"analysis_id": aid, "format": "pprof", "event": ev}, timeout=60),
              "export the whole analysis as pprof")
if not x:
    sys.exit(0)


def hotspots(view):
    """Every hotspot of list_hotspots under `view`, page by page (None on an error)."""
    out, cursor = [], None
    for _ in range(50):
        args = {"analysis_id": aid, "event": ev, "limit": 100, "view": view}
        if cursor:
            args["cursor"] = cursor
        r = s.call("list_hotspots", args)
        page = ok_result(r, "list_hotspots view=%s" % json.dumps(view))
        if not page:
            return None, None
        out += page["hotspots"]
        cursor = page["page"]["next_cursor"]
        if not cursor:
            return out, page
    return None, None


def pprof_top(flags):
    p = subprocess.run(["go", "tool", "pprof", "-top", "-relative_percentages", "-nodecount=100000",
                        "-nodefraction=0", "-edgefraction=0"] + flags + [x["path"]], capture_output=True, text=True)
    rows = {}
    for line in p.stdout.splitlines():
        m = re.match(r"^\s*(\S+)\s+([\d.]+)%\s+([\d.]+)%\s+(\S+)\s+([\d.]+)%\s+(.*)$", line)
        if m:
            rows[m.group(6).strip()] = (float(m.group(2)), float(m.group(5)))
    return rows, p.returncode, p.stderr


def near(printed, value):
    """pprof prints a share in [99.95, 100.05] as "100%"."""
    if printed == 100.0:
        return 99.95 - 0.005 <= value <= 100.0
    return abs(printed - value) <= 0.01


def name_of(h):
    dso = h.get("dso") or ""
    return h["symbol"] if h["symbol"] != "[unknown]" or not dso or dso.startswith("[") else "[%s]" % os.path.basename(dso)


# ------------------------------------------------ go tool pprof as oracle
# Patterns anchored on the workload's own functions: pprof also matches a
# file name and the mapping's path, which these never hit.
CASES = [
    {"focus": "^hash_str$"},
    {"ignore": "^walk_tree$"},
    {"hide": "^(walk_tree|main)$"},
    {"show_from": "^render_page$"},
    {"focus": "^(hash_str|fmt_num)$", "ignore": "^parse_input$"},
    {"hide": "^render_page$", "show_from": "^(walk_tree|parse_input)$"},
    {"focus": "^walk_tree$", "hide": "^fmt_num$"},
]
for view in CASES:
    flags = ["-%s=%s" % (k, v) for k, v in view.items()]
    rows, rc, err = pprof_top(flags)
    hs, page = hotspots(view)
    if hs is None:
        continue
    ours = {}
    for h in hs:
        ours.setdefault(name_of(h), []).append(h)
    bad = []
    for n, xs in ours.items():
        if n not in rows:
            bad.append("%s not in pprof's -top" % n)
            continue
        flat, cum = rows[n]
        if not near(flat, sum(h["self"]["percent"] for h in xs)):
            bad.append("%s flat %.2f vs self %.4f" % (n, flat, sum(h["self"]["percent"] for h in xs)))
        if len(xs) == 1 and not near(cum, xs[0]["inclusive"]["percent"]):
            bad.append("%s cum %.2f vs inclusive %.4f" % (n, cum, xs[0]["inclusive"]["percent"]))
    bad += ["%s only in pprof's" % n for n in rows if n not in ours]
    echo = (page or {}).get("view", {})
    check("pprof %s: flat and cum of all %d functions equal list_hotspots' self and inclusive within 0.01 points; "
          "the view kept %.2f%% of the period and echoes itself"
          % (" ".join(flags), len(rows), echo.get("percent_of_period", -1)),
          rc == 0 and rows and not bad and echo.get("applied") == view, [err[-200:], bad[:6], echo])

# export_profile under a view: pprof of the viewed file (nothing asked of
# pprof) against pprof's own -focus and -hide on the whole export.
view = {"focus": "^hash_str$", "hide": "^main$"}
xv = ok_result(s.call("export_profile", {"analysis_id": aid, "format": "pprof", "event": ev, "view": view}, timeout=60),
               "export_profile pprof with a view")
if xv:
    want_rows, _, _ = pprof_top(["-focus=^hash_str$", "-hide=^main$"])
    p = subprocess.run(["go", "tool", "pprof", "-top", "-nodecount=100000", "-nodefraction=0", "-edgefraction=0",
                        xv["path"]], capture_output=True, text=True)
    got_rows = {}
    for line in p.stdout.splitlines():
        m = re.match(r"^\s*(\S+)\s+([\d.]+)%\s+([\d.]+)%\s+(\S+)\s+([\d.]+)%\s+(.*)$", line)
        if m:
            got_rows[m.group(6).strip()] = (float(m.group(2)), float(m.group(5)))
    diff = [(n, got_rows.get(n), want_rows.get(n)) for n in set(got_rows) | set(want_rows)
            if n not in got_rows or n not in want_rows or
            abs(got_rows[n][0] - want_rows[n][0]) > 0.011 or abs(got_rows[n][1] - want_rows[n][1]) > 0.011]
    check("export_profile under a view: pprof reads the file as its own -focus -hide of the whole export "
          "(%d functions), in a file of its own, the view stated" % len(got_rows),
          got_rows and not diff and xv["path"] != x["path"] and xv["view"]["applied"] == view,
          [diff[:5], xv["path"], xv.get("view")])

# ------------------------------------------------ perf script as oracle
stacks = []   # (period, [(sym, dso), ...] leaf first)
cur = None
for line in open(SCRIPT):
    if not line.strip():
        cur = None
        continue
    if not line.startswith("\t"):   # a sample's header (its tid may be padded with spaces)
        cur = [int(line.split()[1]), []]
        stacks.append(cur)
        continue
    m = re.match(r"^\s*[0-9a-f]+ (.*) \((.*)\)$", line.rstrip("\n"))
    if cur is not None and m:
        cur[1].append((re.sub(r"\+0x[0-9a-f]+$", "", m.group(1)), m.group(2)))
binary = os.path.join(CAP, "wl")
OWN = {"main", "parse_input", "tokenize", "hash_str", "render_page", "walk_tree", "fmt_num", "checkpoint"}


def oracle_counts(keep, rewrite=lambda fr: fr):
    """self and inclusive samples of the workload's functions over the
    stacks `keep` accepts (root first), after `rewrite`."""
    selfs, incl, total = {}, {}, 0
    for _, fr in stacks:
        root_first = [f for f, _ in reversed(fr)]
        if not keep(root_first):
            continue
        root_first = rewrite(root_first)
        total += 1
        selfs[root_first[-1]] = selfs.get(root_first[-1], 0) + 1
        for f in set(root_first):
            incl[f] = incl.get(f, 0) + 1
    return total, selfs, incl


def compare_counts(what, view, keep, rewrite=lambda fr: fr):
    hs, page = hotspots(view)
    if hs is None:
        return
    total, selfs, incl = oracle_counts(keep, rewrite)
    got_s = {h["symbol"]: h["self"]["samples"] for h in hs if h["symbol"] in OWN and h["self"]["samples"]}
    got_i = {h["symbol"]: h["inclusive"]["samples"] for h in hs if h["symbol"] in OWN}
    want_s = {f: n for f, n in selfs.items() if f in OWN}
    want_i = {f: n for f, n in incl.items() if f in OWN}
    check("%s: %d samples kept, the workload's self and inclusive samples as perf script's stacks give them"
          % (what, total), page["view"]["samples"] == total and got_s == want_s and got_i == want_i,
          [page["view"]["samples"], total, got_s, want_s, got_i, want_i])


def under(fr):
    return "render_page" in fr and "hash_str" in fr[fr.index("render_page") + 1:]


compare_counts("under: hash_str called from render_page", {"focus": "^hash_str$", "under": "^render_page$"}, under)
compare_counts("merge: fmt_num folded into walk_tree", {"merge": "^fmt_num$"}, lambda fr: True,
               lambda fr: [f for i, f in enumerate(fr) if i == 0 or f != "fmt_num"])

# collapse_recursion on get_call_paths: the user part of each path (frames
# of the workload and libc), runs of one function made one, against perf
# script's stacks so projected.


def collapse(fr):
    out = []
    for f in fr:
        if not out or out[-1] != f:
            out.append(f)
    return out


want = {}
for _, fr in stacks:
    user = tuple(collapse([f for f, d in reversed(fr) if d == binary or "libc" in d]))
    want[user] = want.get(user, 0) + 1
got, cursor = {}, None
for _ in range(50):
    args = {"analysis_id": aid, "event": ev, "limit": 50, "max_frames": 64, "view": {"collapse_recursion": True}}
    if cursor:
        args["cursor"] = cursor
    cp = ok_result(s.call("get_call_paths", args), "get_call_paths collapse_recursion")
    if not cp:
        break
    for p in cp["paths"]:
        user = tuple(collapse([f["symbol"] for f in p["frames"] if f.get("dso") == binary or "libc" in (f.get("dso") or "")]))
        got[user] = got.get(user, 0) + p["samples"]
    cursor = cp["page"]["next_cursor"]
    if not cursor:
        break
runs = [p for p in got if any(a == b for a, b in zip(p, p[1:]))]
check("collapse_recursion: %d user paths as perf script's stacks give them, none with walk_tree twice in a row"
      % len(want), got == want and not runs and any("walk_tree" in p for p in got),
      [sorted(set(got) ^ set(want))[:4], runs[:2]])

# ------------------------------------------------ as an agent
view = {"focus": "^hash_str$"}
r1 = ok_result(s.call("list_hotspots", {"analysis_id": aid, "event": ev, "view": view, "limit": 1}), "list_hotspots view limit 1")
if r1:
    steps = r1["next_steps"]
    nxt = [st for st in steps if st["tool"] == "list_hotspots"]
    gh = [st for st in steps if st["tool"] == "get_hotspot"]
    check("a viewed page: next_call, the next page's step and get_hotspot's step carry the view",
          "^hash_str$" in (r1["page"]["next_call"] or "") and nxt and nxt[0]["arguments"].get("view") == view and
          gh and gh[0]["arguments"].get("view") == view, short(steps, 600))
    r2 = nxt and ok_result(s.call("list_hotspots", nxt[0]["arguments"]), "follow the next page step")
    check("the next page of the view: rank 2 under the same view and total",
          r2 and r2["hotspots"][0]["rank"] == 2 and r2["view"] == r1["view"] and r2["total"] == r1["total"],
          short(r2))
    bad_cursor = s.call("list_hotspots", {"analysis_id": aid, "event": ev, "view": {"focus": "^fmt_num$"},
                                          "cursor": r1["page"]["next_cursor"]})
    check("a cursor of one view is refused under another", is_tool_error(bad_cursor, "cursor"), short(bad_cursor))
    g = gh and ok_result(s.call("get_hotspot", gh[0]["arguments"]), "follow get_hotspot")
    callers = g and {c["symbol"] for c in g["callers"]}
    check("get_hotspot hash_str under the view: callers parse_input and render_page, the view echoed, "
          "its call-paths step keeps the view",
          g and g["symbol"] == "hash_str" and {"parse_input", "render_page"} <= callers and g["view"]["applied"] == view and
          any(st["tool"] == "get_call_paths" and st["arguments"].get("view") == view for st in g["next_steps"]),
          short(g, 600))
    cpv = {"focus": "^hash_str$", "under": "^render_page$"}
    cp = ok_result(s.call("get_call_paths", {"analysis_id": aid, "event": ev, "view": cpv, "limit": 50}),
                   "get_call_paths focus under")
    through = cp and all(any(f["symbol"] == "render_page" for f in p["frames"]) and
                         any(f["symbol"] == "hash_str" for f in p["frames"]) for p in cp["paths"])
    check("get_call_paths with focus hash_str under render_page: %d paths, every one through render_page then hash_str"
          % (len(cp["paths"]) if cp else 0), cp and cp["paths"] and through and cp["view"]["applied"] == cpv, short(cp))

hid = r1 and r1["hotspots"][0]["hotspot_id"]
sv = {"focus": "^hash_str$", "under": "^render_page$"}
sc_ = hid and ok_result(s.call("source_context", {"analysis_id": aid, "event": ev, "hotspot_id": hid, "view": sv}),
                        "source_context with a view")
check("source_context under a view: the view stated with its share, its get_hotspot step keeps it",
      sc_ and sc_["view"]["applied"] == sv and 0 < sc_["view"]["percent_of_samples"] < 100 and
      any(st["tool"] == "get_hotspot" and st["arguments"].get("view") == sv for st in sc_["next_steps"]),
      short(sc_, 600))

ltv = r1 and ok_result(s.call("list_threads", {"analysis_id": aid, "event": ev, "view": view}), "list_threads with a view")
st = ltv and [x for x in ltv["next_steps"] if x["tool"] == "list_hotspots"]
check("list_threads under a view: the threads' samples add up to the view's, list_hotspots' step keeps it with the tid",
      ltv and sum(t["samples"] for t in ltv["threads"]) == r1["view"]["samples"] == ltv["view"]["samples"] and
      st and st[0]["arguments"]["view"] == dict(view, tid=ltv["threads"][0]["tid"]), short(ltv, 600))

cv = {"ignore": "^hash_str$"}
cl = ok_result(s.call("classify_hotspots", {"analysis_id": aid, "event": ev, "view": cv, "limit": 50}),
               "classify_hotspots with a view")
named = cl and [h["symbol"] for c in cl["candidates"] for h in c.get("hotspots", [])]
viewed = cl and [st for st in steps_of(cl) if st["arguments"].get("analysis_id") == aid and
                 st["tool"] in ("list_hotspots", "get_hotspot", "get_call_paths", "source_context")]
check("classify_hotspots under ignore=hash_str: no candidate names hash_str, the view stated, its %d steps on "
      "this analysis keep it" % len(viewed or []),
      cl and cl["candidates"] and "hash_str" not in named and cl["view"]["applied"] == cv and viewed and
      all(st["arguments"].get("view") == cv for st in viewed), short(cl, 600))

cmp_ = r1 and ok_result(s.call("compare_profiles", {"baseline_id": aid, "candidate_id": aid, "event": ev, "view": view},
                              timeout=60), "compare_profiles with a view")
check("compare_profiles under a view: each side counts the view's samples, its diff files apart, the view stated",
      cmp_ and cmp_["baseline"]["samples"] == cmp_["candidate"]["samples"] == r1["view"]["samples"] and
      cmp_["view"]["applied"] == view and cmp_["candidate_view"]["samples"] == r1["view"]["samples"] and
      ".view-" in cmp_["exports"]["folded_diff"]["path"], short(cmp_, 600))

br = r1 and ok_result(s.call("build_report", {"analysis_id": aid, "event": ev, "view": view, "problem": "p", "metric": "m"},
                             timeout=60), "build_report with a view")
md = open(br["path"]).read() if br else ""
check("build_report under a view: the report names the view and its share, the result states it",
      br and br["view"]["applied"] == view and "Read under the view" in md and "hash_str" in md and
      ("%.2f%% of the event's samples" % r1["view"]["percent_of_samples"]) in md, short(br, 400))

# A view's answer is kept under cache/views/: the next call reads it and
# answers the same bytes as the answer computed from the stack table.
import glob, shutil
cv2 = {"hide": "^main$", "collapse_recursion": True}
args = {"analysis_id": aid, "event": ev, "view": cv2, "sort": "inclusive", "limit": 4}
first = s.call("list_hotspots", args)
kept = glob.glob(os.path.join(ART, "cache", "views", "*.json"))
again = s.call("list_hotspots", args)
shutil.rmtree(os.path.join(ART, "cache", "views"))
recomputed = s.call("list_hotspots", args)
check("a view's answer is kept (%d files under cache/views) and read back as the same bytes as computed" % len(kept),
      kept and result_text(first) and result_text(first) == result_text(again) == result_text(recomputed),
      [result_text(first)[:200], result_text(again)[:200]])

r = s.call("list_hotspots", {"analysis_id": aid, "event": ev, "view": {"focus": "hash_(str"}})
check("an invalid pattern: a usage error naming view.focus, the byte and the valid form",
      is_tool_error(r, "view.focus", "byte 5", "POSIX extended"), short(r))
r = s.call("list_hotspots", {"analysis_id": aid, "event": ev, "view": {"hide": "(a)\\1"}})
check("a back-reference is refused", is_tool_error(r, "view.hide", "back-reference"), short(r))
r = s.call("list_hotspots", {"analysis_id": aid, "event": ev, "view": {"focus": "^no_such_function$"}})
check("a focus matching nothing: an error saying it matches no function", is_tool_error(r, "matches no function"), short(r))
r = s.call("get_call_paths", {"analysis_id": aid, "event": ev, "view": {"ignore": "."}})
check("an ignore of everything: an error saying the view keeps none and what dropped them",
      is_tool_error(r, "keeps none", "ignore dropped"), short(r))
r = s.call("list_hotspots", {"analysis_id": aid, "event": ev, "view": {"time": {"from_seconds": 0.1, "to_seconds": 0.5}}})
tw = (sc(r).get("view") or {}).get("time_window") or {}
check("view.time: answered, the view saying its window (%s; test_timeline checks it against perf report --time)"
      % tw.get("perf_time"), not is_tool_error(r) and tw.get("from_seconds") == 0.1 and "," in tw.get("perf_time", ""),
      short(r))
r = s.call("list_hotspots", {"analysis_id": aid, "event": ev, "view": {"under": "^main$"}})
check("under without focus: a usage error", is_tool_error(r, "view.focus"), short(r))
lt = ok_result(s.call("list_threads", {"analysis_id": aid, "event": ev}), "list_threads")
tid = lt and lt["threads"][0]["tid"]
if tid:
    old = ok_result(s.call("list_hotspots", {"analysis_id": aid, "event": ev, "tid": tid}), "list_hotspots tid")
    new = ok_result(s.call("list_hotspots", {"analysis_id": aid, "event": ev, "view": {"tid": tid}}), "list_hotspots view.tid")
    osteps = old and [st["arguments"] for st in old["next_steps"] if st["tool"] == "get_hotspot"]
    nsteps = new and [st["arguments"] for st in new["next_steps"] if st["tool"] == "get_hotspot"]
    check("the older tid argument and view.tid answer alike, with thread_filter and the view; each one's steps "
          "carry tid as it was given (at the top, or in the view)",
          old and new and old["hotspots"] == new["hotspots"] and old["thread_filter"]["tid"] == tid and
          old["view"]["applied"] == {"tid": tid} and osteps and osteps[0].get("tid") == tid and "view" not in osteps[0] and
          nsteps and nsteps[0].get("view") == {"tid": tid} and "tid" not in nsteps[0], [osteps, nsteps])
    r = s.call("list_hotspots", {"analysis_id": aid, "event": ev, "tid": tid, "view": {"tid": tid + 1}})
    check("tid given twice with two values: a usage error", is_tool_error(r, "tid", "both"), short(r))
s.close()
sys.exit(0)
PY
