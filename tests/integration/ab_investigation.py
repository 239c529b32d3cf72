"""ab_investigation.py - an A/B regression investigation through perflens-mcp
over stdio, as an agent runs one (test_ab_investigation.sh builds the two
programs and runs the oracles' recordings).

The agent collects a profile of the baseline and of the candidate build of
tests/workloads/ab.c (collect_profile, authorized), analyzes each the way
collect's next_steps say, compares them (compare_profiles, every page of
functions), follows the comparison's next_steps, and then compares
hyperfine timings of the two builds (normalize_benchmark, then
compare_benchmarks as their next_steps name it).  What it must find: the
planted regression, hash_key's self share up and parse_record's down, by
the points `perf report` gives on the same perf.data files (the oracle),
and the candidate slower by hyperfine's own means.
"""
import json, os, subprocess, sys

sys.path.insert(0, os.environ["HERE"])
from mcp_client import *  # noqa: F401,F403 (check, short, Stdio)

build, work = os.environ["BUILD_DIR"], os.environ["WORK"]
bins = {"baseline": os.environ["AB_BASE"], "candidate": os.environ["AB_CAND"]}
P = "I_EXPLICITLY_AUTHORIZE_TARGET_PROFILING"
W = "ab"
s = Stdio([build + "/perflens-mcp", "--allowed-root", work, "--artifact-root", work + "/art",
           "--allow-writes", "--allow-process-execution", "--allow-collection"], "ab")
s.initialize()
listed = {t["name"]: t for t in s.request("tools/list")["result"]["tools"]}


def call(name, args, timeout=180):
    r = s.call(name, args, timeout=timeout)
    res = (r or {}).get("result") or {}
    return (res.get("structuredContent") or {}), res


def steps_of(v, out=None):
    """Every next_steps entry at any depth of a result."""
    out = [] if out is None else out
    if isinstance(v, dict):
        for k, x in v.items():
            if k == "next_steps" and isinstance(x, list):
                out.extend(st for st in x if isinstance(st, dict) and "tool" in st)
            else:
                steps_of(x, out)
    elif isinstance(v, list):
        for x in v:
            steps_of(x, out)
    return out


def follow(result, tool):
    return next((st["arguments"] for st in steps_of(result) if st["tool"] == tool and not st.get("needs")), None)


def perf_report_self(data):
    """Self shares by symbol, from perf report on the same perf.data (the oracle)."""
    out = subprocess.run(["perf", "report", "-i", data, "--stdio", "--no-children", "-g", "none",
                          "-F", "overhead,sym"], capture_output=True, text=True).stdout
    shares = {}
    for line in out.splitlines():
        f = line.split()
        if len(f) >= 3 and f[0].endswith("%") and f[1].startswith("["):
            shares[" ".join(f[2:])] = shares.get(" ".join(f[2:]), 0.0) + float(f[0][:-1])
    return shares


# 1. Collect and analyze each build, as collect's next_steps say.
ids, datas = {}, {}
for side, exe in bins.items():
    coll, res = call("collect_profile", {"mode": "record", "call_graph": "fp", "executable": exe,
                                         "arguments": ["2"], "authorization": P}, timeout=240)
    if not check("%s: collect_profile of the %s build" % (W, side), coll.get("collection_id") and
                 not res.get("isError"), short(res, 500)):
        sys.exit(0)
    args = follow(coll, "analyze_profile")
    if not check("%s: the %s collection's next_steps name analyze_profile" % (W, side), args,
                 coll.get("next_steps")):
        sys.exit(0)
    an, res = call("analyze_profile", args)
    if not check("%s: analyze_profile of the %s collection" % (W, side), an.get("analysis_id"), short(res, 500)):
        sys.exit(0)
    ids[side] = an["analysis_id"]
    # The perf.data the collection wrote (its folder, files by name).
    datas[side] = next((os.path.join(coll.get("folder", ""), f["name"]) for f in coll.get("files") or []
                        if f["name"].endswith(".data")), "")

# 2. Compare, every page of functions.
args = {"baseline_id": ids["baseline"], "candidate_id": ids["candidate"], "min_delta_percent": 0, "limit": 5}
funcs, cmp_, pages = [], {}, 0
while pages < 50:
    sc, res = call("compare_profiles", args)
    if not check("%s: compare_profiles page %d" % (W, pages + 1), sc and not res.get("isError"), short(res, 500)):
        break
    cmp_ = cmp_ or sc
    funcs += sc.get("functions") or []
    pages += 1
    nxt = (sc.get("page") or {}).get("next_cursor")
    if not nxt:
        break
    args = dict(args, cursor=nxt)
by = {}
for f in funcs:
    by.setdefault(f.get("symbol"), f)
check("%s: the comparison's pages list each function once (%d functions, %d pages)" % (W, len(funcs), pages),
      funcs and len(by) == len(funcs), [f.get("symbol") for f in funcs][:20])


def delta(f):
    return f.get("self_delta_points")


warn = [w for w in (cmp_.get("comparability") or {}).get("warnings") or [] if "main executables differ" in w]
check("%s: the comparison says the two builds' executables differ and are joined by name" % W,
      warn and bins["baseline"] in warn[0] and bins["candidate"] in warn[0], cmp_.get("comparability"))
top = max(funcs, key=lambda f: delta(f) or -1e9) if funcs else {}
check("%s: the largest self-share increase is the planted regression, hash_key (%s: %+.2f points)"
      % (W, top.get("symbol"), delta(top) or 0), top.get("symbol") == "hash_key", short(funcs[:3], 600))
pr = by.get("parse_record", {})
check("%s: parse_record's self share falls (%+.2f points)" % (W, delta(pr) or 0),
      (delta(pr) or 0) < -5, short(pr, 300))

# The oracle: perf report on the perf.data files the collections wrote.
data_files = {side: sc for side, sc in datas.items() if sc and os.path.exists(sc)}
if len(data_files) == 2:
    base, cand = perf_report_self(data_files["baseline"]), perf_report_self(data_files["candidate"])
    for sym in ("hash_key", "parse_record"):
        want = cand.get(sym, 0.0) - base.get(sym, 0.0)
        got = delta(by.get(sym, {}))
        check("%s: %s's change agrees with perf report within 0.2 points (ours %+.2f, perf report %+.2f)"
              % (W, sym, got or 0, want), got is not None and abs(got - want) <= 0.2,
              "baseline %s candidate %s" % (base.get(sym), cand.get(sym)))
else:
    print("not ok - %s: the collections' perf.data paths are not in their results: %s" % (W, datas))

# 3. Follow the comparison's next_steps that can be sent as they are.
sent = bad = 0
for st in steps_of(cmp_):
    if st.get("needs") or st["tool"] not in listed or st["tool"] in ("collect_profile",):
        continue
    sc, res = call(st["tool"], st["arguments"])
    sent += 1
    if res.get("isError"):
        bad += 1
        print("# %s %s -> %s" % (st["tool"], short(st["arguments"], 200), short(res, 300)))
check("%s: the comparison's next_steps, sent as they are, answer (%d sent)" % (W, sent), sent and not bad)

# 4. Timings: hyperfine of each build, normalized and compared.  On a
# loaded machine (CI runs scripts side by side) ten repeats can overlap
# and the verdict rightly says no_material_change: then once more with
# 30 repeats a side, as a person would.
def timings(runs):
    hf = {}
    for side, exe in bins.items():
        out = os.path.join(work, side + ".hyperfine.json")
        r = subprocess.run(["hyperfine", "-N", "--warmup", "1", "--runs", str(runs), "--export-json", out,
                            "--command-name", "ab", "%s -n 300000" % exe], capture_output=True, text=True)
        if r.returncode:
            print("not ok - %s: hyperfine %s: %s" % (W, side, r.stderr[-300:]))
            sys.exit(0)
        nb, res = call("normalize_benchmark", {"path": out})
        if not check("%s: normalize_benchmark of the %s timings (%d runs)" % (W, side, runs),
                     nb.get("benchmark_id"), short(res, 400)):
            sys.exit(0)
        hf[side] = (nb, json.load(open(out))["results"][0]["mean"])
    nxt = follow(hf["candidate"][0], "compare_benchmarks") or {}
    args = {"baseline_id": hf["baseline"][0]["benchmark_id"], "candidate_id": hf["candidate"][0]["benchmark_id"]}
    if nxt.get("baseline_id") and nxt.get("candidate_id"):
        args = nxt
    cb, res = call("compare_benchmarks", args)
    return hf, cb, res


hf, cb, res = timings(10)
rows = cb.get("results") or []
if rows and rows[0].get("status") == "no_material_change":
    print("# 10 repeats a side gave no_material_change (%s): 30 more" % short(rows[0].get("reason"), 300))
    hf, cb, res = timings(30)
    rows = cb.get("results") or []
slower = hf["candidate"][1] > hf["baseline"][1]
# The candidate does four times the hashing: hyperfine must see it slower,
# and compare_benchmarks must call it a regression with a positive change.
check("%s: hyperfine's means put the candidate slower (%.4f s vs %.4f s)"
      % (W, hf["candidate"][1], hf["baseline"][1]), slower)
check("%s: compare_benchmarks finds the candidate a regression (%+.1f%%)"
      % (W, (rows[0].get("change_percent") or 0) if rows else 0),
      rows and rows[0].get("status") == "candidate_regression" and (rows[0].get("change_percent") or 0) > 0,
      short(res, 600))
check("%s: the server exits 0 at end of input" % W, s.close() == 0)
