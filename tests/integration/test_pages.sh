# test_pages.sh - every paged tool's next_call is a call an agent can make:
# through perflens-mcp over stdio, a capture whose events are named
# `ev"quoted` and a 305-byte PMU name is paged with limit 1..3; each
# next_call is parsed as written (TOOL(key=JSON, ...), by this script's
# own parser), called as it stands, and must give the next page: ranks
# and offsets continue, and the pages joined are the items of one call
# with a limit that holds them all (the oracle, limit 50).  Also list_artifacts,
# compare_profiles (both of its lists), classify_hotspots, and
# normalize_benchmark and compare_benchmarks on the pyperf fixtures.
. tests/integration/lib.sh
server="$(cd "$BUILD" && pwd)/perflens-mcp"
mkdir -p "$WORK/in"
python3 - "$WORK/in/two.txt" <<'PY'
import sys
# perf script text, two events, three threads, stacks of 2..5 frames.
events = ['ev"quoted', "cpu/" + "x" * 300 + "/"]
out, t = [], 1.0
for i in range(40):
    for ev in events:
        t += 0.001
        out.append("app 100/%d [000] %.6f: 1000 %s:" % (100 + i % 3, t, ev))
        for d in range(1 + i % 4):
            out.append("\t%x f%d_%d (/bin/app)" % (0x1000 + d, d, i % 7))
        out.append("\t900 main (/bin/app)")
        out.append("")
open(sys.argv[1], "w").write("\n".join(out) + "\n")
PY

WORK="$WORK" timeout "${MCP_TEST_TIMEOUT:-170}" python3 - "$server" "$WORK/in" <<'PY'
import json, os, re, sys
sys.path.insert(0, os.path.join(os.environ.get("REPO", os.getcwd()), "tests", "integration"))
from mcp_client import *  # the shared MCP test client (mcp_client.py)

SERVER, IN = sys.argv[1], sys.argv[2]
ART = os.path.join(WORK, "art")
BENCH = os.path.join(os.environ.get("REPO", os.getcwd()), "fixtures", "benchmarks")
s = Stdio([SERVER, "--allowed-root", IN, "--allowed-root", BENCH, "--artifact-root", ART, "--allow-writes"],
          "pages")
s.initialize()


def parse_call(text):
    """TOOL(key=JSON, key=JSON): (tool, {key: value}), or None."""
    m = re.match(r"^([a-z_]+)\((.*)\)$", text or "", re.S)
    if not m:
        return None
    body, args, dec = m.group(2), {}, json.JSONDecoder()
    i = 0
    while i < len(body):
        k = re.match(r"\s*([a-z_]+)=", body[i:])
        if not k:
            return None
        i += k.end()
        value, i = dec.raw_decode(body, i)
        args[k.group(1)] = value
        if body[i:i + 2] == ", ":
            i += 2
        elif i != len(body):
            return None
    return m.group(1), args


def structured(r):
    return ((r or {}).get("result") or {}).get("structuredContent") or {}


def walk(what, tool, args, items, page="page", limit_key="limit", limit=2):
    """Follow next_call from a first call with a small limit to the end;
    the items must be those of one call with a big limit."""
    big = structured(s.call(tool, dict(args, **{limit_key: 50})))
    if (big.get(page) or {}).get("next_call", 0) is not None:
        return check(what, False, "the oracle call (limit 50) is not one whole page: %s" % short(big))
    want = big[items]
    got, calls, r = [], 0, structured(s.call(tool, dict(args, **{limit_key: limit})))
    while True:
        pg = r.get(page) or {}
        if pg.get("offset") != len(got):
            return check(what, False, "page offset %s after %d items: %s" % (pg.get("offset"), len(got), short(r)))
        got += r.get(items) or []
        nc = pg.get("next_call")
        if nc is None:
            break
        call = parse_call(nc)
        if not call or call[0] != tool:
            return check(what, False, "next_call does not parse as a %s call: %s" % (tool, short(nc, 600)))
        calls += 1
        r = structured(s.call(call[0], call[1]))
        if calls > 200 or not r:
            return check(what, False, "following %s: %s" % (short(nc, 400), short(r)))
    ok = got == want and len(got) > limit and calls >= 1
    return check("%s: %d items in %d pages through next_call equal one big page" % (what, len(got), calls + 1),
                 ok, "got %d items, want %d" % (len(got), len(want)))


r = structured(s.call("analyze_profile", {"path": os.path.join(IN, "two.txt")}))
aid = r.get("analysis_id")
names = [e["name"] for e in r.get("events", [])]
check("analyze: the events keep their quote and their length", names and 'ev"quoted' in names and
      any(len(n) == 305 for n in names), short(r))
LONG = [n for n in names if len(n) == 305][0] if names else ""
for ev in ('ev"quoted', LONG):
    label = "quoted event" if '"' in ev else "305-byte event"
    for sort in ("self", "inclusive"):
        walk("list_hotspots %s sort %s" % (label, sort), "list_hotspots",
             {"analysis_id": aid, "event": ev, "sort": sort, "min_percent": 1}, "hotspots")
    walk("list_threads %s" % label, "list_threads", {"analysis_id": aid, "event": ev}, "threads", limit=1)
    walk("get_call_paths %s" % label, "get_call_paths", {"analysis_id": aid, "event": ev}, "paths", limit=3)
    r = structured(s.call("list_hotspots", {"analysis_id": aid, "event": ev, "limit": 1}))
    nc = (r.get("page") or {}).get("next_call") or ""
    check("list_hotspots %s: next_call names the whole event, JSON-quoted" % label,
          json.dumps(ev) in nc, short(nc, 500))
    walk("compare_profiles %s functions" % label, "compare_profiles",
         {"baseline_id": aid, "candidate_id": aid, "event": ev, "min_delta_percent": 0, "exports": False},
         "functions")
    walk("compare_profiles %s call paths" % label, "compare_profiles",
         {"baseline_id": aid, "candidate_id": aid, "event": ev, "min_delta_percent": 0, "exports": False},
         "call_paths", page="call_paths_page", limit_key="path_limit")
walk("list_artifacts", "list_artifacts", {}, "artifacts", limit=1)
r = structured(s.call("classify_hotspots", {"analysis_id": aid, "limit": 1}))
if (r.get("page") or {}).get("total_items", 0) > 1:
    walk("classify_hotspots", "classify_hotspots", {"analysis_id": aid}, "candidates", limit=1)
else:
    print("skip - classify_hotspots pages: this capture gives %s candidate(s)" %
          (r.get("page") or {}).get("total_items"))
# Benchmarks: two a side in the pyperf fixtures, one a page.
base = os.path.join(BENCH, "pyperf-baseline.json")
walk("normalize_benchmark", "normalize_benchmark", {"path": base, "environment": {"cpu_model": 'a "quoted" cpu'}},
     "benchmarks", limit=1)
bids = [structured(s.call("normalize_benchmark", {"path": os.path.join(BENCH, f)})).get("benchmark_id")
        for f in ("pyperf-baseline.json", "pyperf-candidate.json")]
walk("compare_benchmarks", "compare_benchmarks", {"baseline_id": bids[0], "candidate_id": bids[1],
     "practical_threshold_percent": 2.5}, "results", limit=1)
r = s.call("list_hotspots", {"analysis_id": aid, "event": LONG, "cursor": "1.000000"})
check("a cursor of another query is refused", is_tool_error(r, "invalid cursor"), short(r))
check("server exits 0 at end of input", s.close() == 0)
sys.exit(1 if fails else 0)
PY
