"""investigation.py - an investigation run through perflens-mcp as an agent runs it.

Run by test_investigation.sh with HERE, BUILD_DIR, WORK, APP and SRC set.
APP is tests/workloads/investigation/app.c built with frame pointers; it
has four planted causes (see app.c): a quadratic strlen under a helper
that frame-pointer stacks skip, three threads contending on one mutex,
a sleeping pipe writer and a blocked pipe reader.

The client knows only what an agent knows: the tool list, the results and
their next_steps.  It collects (fp and dwarf records, off-CPU, stat),
follows next_steps to analyze, pages hotspots to the end, reads call paths
(with a thread filter), get_hotspot, source_context, classifies and builds
one report over several analyses, and checks that each planted cause is
found with its evidence, against what the workload was built to do.  Each
check prints one ok / not ok line.
"""
import json
import os
import re
import sys

sys.path.insert(0, os.environ["HERE"])
from mcp_client import *  # noqa: E402,F401,F403

build, work, app, src = (os.environ[k] for k in ("BUILD_DIR", "WORK", "APP", "SRC"))
P = "I_EXPLICITLY_AUTHORIZE_TARGET_PROFILING"
W = "investigation"
locked_line = next(i for i, l in enumerate(open(src), 1) if "/* LOCKED */" in l)
# count_stat's critical section: after its lock, before its unlock.
lock_line = next(i for i, l in enumerate(open(src), 1) if "pthread_mutex_lock(&stat_lock)" in l)
unlock_line = next(i for i, l in enumerate(open(src), 1) if "pthread_mutex_unlock(&stat_lock)" in l)

s = Stdio([build + "/perflens-mcp", "--allowed-root", work, "--artifact-root", work + "/art",
           "--allow-writes", "--allow-process-execution", "--allow-collection"], "investigation")
s.initialize()
listed = s.request("tools/list")["result"]["tools"]
schemas = {t["name"]: t for t in listed}
calls = []          # every (tool, args) made, for the next_steps check


def call(name, args, timeout=180):
    """A tool call: (structuredContent or {}, the raw result)."""
    calls.append((name, args))
    r = s.call(name, args, timeout=timeout)
    res = (r or {}).get("result") or {}
    return (res.get("structuredContent") or {}), res


def leading_call(text):
    """The tool call a next_steps text starts with, "name(...)", up to its
    matching parenthesis (JSON strings skipped), or None."""
    m = re.match(r"^\s*([a-z_]+)\(", text)
    if not m:
        return None
    depth, i, quoted = 1, m.end(), False
    while i < len(text) and depth:
        c = text[i]
        if quoted:
            if c == "\\":
                i += 1
            elif c == '"':
                quoted = False
        elif c == '"':
            quoted = True
        elif c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        i += 1
    return (m.group(1), text[m.end():i - 1]) if depth == 0 else None


def parse_step(step):
    """A next_steps entry as (tool, args), or None when it is not a tool call."""
    if isinstance(step, dict):
        name = step.get("tool") or step.get("name")
        return (name, step.get("arguments") or step.get("args") or {}) if name else None
    lc = leading_call(step or "")
    if not lc or lc[0] not in schemas:
        return None
    name, body = lc[0], lc[1].strip()
    if not body:
        return name, {}
    # name=JSON, name=JSON ...: quote the names and read it as one object.
    text = re.sub(r'(^|,\s*)([a-z_]+)=', r'\1"\2":', body)
    try:
        return name, json.loads("{" + text + "}")
    except ValueError:
        return None


def follow(result, tool, **want):
    """The first next_step calling `tool` (with `want` among its args)."""
    for step in result.get("next_steps") or []:
        st = parse_step(step)
        if st and st[0] == tool and all(st[1].get(k) == v for k, v in want.items()):
            return st[1]
    return None


def collect(what, **args):
    sc, res = call("collect_profile", dict(args, authorization=P, executable=app), timeout=240)
    check("%s: collect_profile %s" % (W, what), sc.get("collection_id") and not res.get("isError"),
          short(res, 600))
    return sc


def analyze_from(what, coll, **want):
    """Analyze a collection the way its next_steps say."""
    args = follow(coll, "analyze_profile", **want)
    if not check("%s: %s: collect's next_steps name analyze_profile" % (W, what), args is not None,
                 coll.get("next_steps")):
        return {}
    sc, res = call("analyze_profile", args)
    check("%s: %s: analyze_profile in the sandboxed server (%s)" % (W, what, short(args, 120)),
          sc.get("analysis_id") and not res.get("isError"), short(res, 600))
    return sc


def all_pages(name, args, key):
    """Every item of a paged tool, following next_cursor to the end."""
    items, cursor, pages = [], None, 0
    while pages < 200:
        a = dict(args, **({"cursor": cursor} if cursor else {}))
        sc, res = call(name, a)
        if res.get("isError"):
            check("%s: %s pages" % (W, name), False, short(res))
            break
        items += sc.get(key) or []
        pages += 1
        cursor = (sc.get("page") or {}).get("next_cursor")
        if not cursor:
            break
    return items, pages


def rule_id(c):
    r = c.get("rule")
    return (r.get("id") if isinstance(r, dict) else r) or c.get("category") or c.get("kind")


def sym(h):
    return h.get("symbol") or ""


def tids_named(threads, prefix):
    return [t.get("tid") for t in threads if (t.get("comm") or "").startswith(prefix)]


# ------------------------------------------------------------ capabilities
caps, res = call("inspect_collection_capabilities", {})
dwarf = [g for g in caps.get("call_graphs", []) if g.get("mode") == "dwarf"]
check("%s: capabilities: dwarf call graphs probed as usable, not shallow" % W,
      dwarf and dwarf[0].get("status") not in ("shallow_chains", "unavailable"), short(dwarf or res))
check("%s: capabilities report online CPUs" % W,
      isinstance((caps.get("cpus") or {}).get("online"), int) and caps["cpus"]["online"] == os.cpu_count(), short(caps, 400))

# The capabilities' next_steps: collect_profile calls of what works here,
# each saying it needs what to profile and the phrase.
cstep = next((st for st in caps.get("next_steps") or [] if st.get("tool") == "collect_profile" and
              (st.get("arguments") or {}).get("mode") == "record" and
              st["arguments"].get("call_graph") == "fp"), None)
recording = [e.get("event") for e in caps.get("events", []) if e.get("record") == "works"]
check("%s: capabilities name collect_profile record (fp) next with an event that records here (%s), "
      "needing what to profile and the authorization" % (W, recording[:1]),
      cstep and (cstep["arguments"].get("events") or [None])[0] in recording and
      sorted(cstep.get("needs") or []) == ["authorization", "executable or pid"], short(caps.get("next_steps"), 500))

# ------------------------------------------------------------ on-CPU, fp
# as the capabilities' step says, with what it needs added (collect())
fp = collect("record, frame pointers", **dict((cstep or {}).get("arguments") or {"mode": "record", "call_graph": "fp"},
                                              arguments=["3"]))
meta = fp.get("metadata") or {}
check("%s: the collection keeps the target's exit status and its stdout (its own metric)" % W,
      meta.get("target_exit_status", meta.get("exit_status")) == 0 and
      "records_per_second" in json.dumps(meta), short(meta, 500))
on = analyze_from("fp record", fp)
aid = on.get("analysis_id")

hot, pages = all_pages("list_hotspots", {"analysis_id": aid, "limit": 5}, "hotspots")
names = [sym(h) for h in hot]
check("%s: list_hotspots pages to the end (%d items over %d pages)" % (W, len(hot), pages),
      pages > 1 and len(set(h.get("hotspot_id") for h in hot)) == len(hot), names[:10])
# An agent that only follows next_steps walks the same pages: each page's
# last step is the next page, its first the heaviest function's get_hotspot.
stepped, res, first_steps = [], call("list_hotspots", {"analysis_id": aid, "limit": 5}), []
for _ in range(200):
    sc = res[0]
    stepped += sc.get("hotspots") or []
    first_steps.append(parse_step((sc.get("next_steps") or [None])[0] or {}))
    nxt = follow(sc, "list_hotspots")
    if not nxt:
        break
    res = call("list_hotspots", nxt)
check("%s: following list_hotspots' next_steps walks the same %d hotspots as the cursors, each page "
      "leading with get_hotspot of its first" % (W, len(stepped)),
      [h.get("hotspot_id") for h in stepped] == [h.get("hotspot_id") for h in hot] and
      all(st and st[0] == "get_hotspot" for st in first_steps) and
      [st[1].get("hotspot_id") for st in first_steps] == [h.get("hotspot_id") for h in hot[::5]],
      short(first_steps[:3], 400))
strlen = next((h for h in hot if "strlen" in sym(h)), None)
count = next((h for h in hot if sym(h) == "count_stat"), None)
check("%s: strlen and count_stat are among the hottest functions by self" % W,
      strlen and count and names.index(sym(strlen)) < 6 and names.index("count_stat") < 6, names[:10])

# The strlen path skips append_field under frame pointers: flagged.
paths, _ = call("get_call_paths", {"analysis_id": aid, "symbol": sym(strlen) if strlen else "strlen"})
fmt_paths = [p for p in paths.get("paths", []) if "format_record" in json.dumps(p)]
flagged = [p for p in fmt_paths
           if (p.get("caller_check") or {}).get("samples_caller_may_be_missing", 0) > 0 and
           any("strlen" in f.get("symbol", "") and f.get("caller_may_be_missing", 0) > 0 for f in p["frames"])]
check("%s: the fp path format_record > strlen is flagged caller_may_be_missing" % W,
      flagged, short([p.get("caller_check") for p in fmt_paths] + [p["frames"][-1] for p in fmt_paths], 600))
# The paths' next_steps: get_hotspot of the symbol asked for, and its source.
gst = follow(paths, "get_hotspot")
if check("%s: get_call_paths(strlen) names get_hotspot of it next" % W, gst, short(paths.get("next_steps"), 300)):
    gh, res = call("get_hotspot", gst)
    check("%s: get_hotspot as get_call_paths' step says: %s, called from format_record" % (W, gh.get("symbol")),
          not res.get("isError") and "strlen" in (gh.get("symbol") or "") and
          "format_record" in [sym(c) for c in gh.get("callers", [])], short(res, 400))
quality = json.dumps(on.get("quality") or on.get("data_quality") or on)
check("%s: the analysis counts the share of samples whose caller may be missing" % W,
      "caller_may_be_missing" in quality, short(quality, 300))

# Threads: one formatter, three counters, a writer and a reader.
th, _ = call("list_threads", {"analysis_id": aid, "limit": 50})
threads = th.get("threads", [])
comms = sorted(t.get("comm") or "" for t in threads)
check("%s: list_threads names formatter, counter-1..3, writer and reader" % W,
      all(c in comms for c in ("formatter", "counter-1", "counter-2", "counter-3")), comms)
idle = [t for t in threads if (t.get("comm") or "") in ("writer", "reader")]
nxt = (th.get("blocked_threads") or {}).get("next_step") or {}
# A thread with no on-CPU sample at all is in no list (nothing says it
# exists): then there is nothing to call blocked, and the check says so.
busy_ok = not any(t.get("probably_blocked") for t in threads if (t.get("comm") or "").startswith(("formatter", "counter")))
if idle:
    check("%s: nearly idle threads (writer, reader) are called probably blocked, with the off-CPU collection" % W,
          all(t.get("probably_blocked") is True for t in idle) and busy_ok and
          nxt.get("tool") == "collect_profile" and (nxt.get("arguments") or {}).get("mode") == "off_cpu",
          short([(t.get("comm"), t.get("probably_blocked")) for t in threads] + [th.get("blocked_threads")], 500))
else:
    check("%s: writer and reader had no on-CPU sample this run (nothing to call blocked); no busy thread is "
          "called blocked" % W, busy_ok, short([(t.get("comm"), t.get("probably_blocked")) for t in threads], 500))
# list_threads' next_steps: the heaviest thread's hotspots, for its tid.
lst = follow(th, "list_hotspots")
if check("%s: list_threads names list_hotspots of its heaviest thread next" % W,
         lst and threads and lst.get("tid") == threads[0].get("tid"), short(th.get("next_steps"), 300)):
    lh, res = call("list_hotspots", lst)
    check("%s: list_hotspots as list_threads' step says keeps that one thread (tid %s, %s)"
          % (W, lst.get("tid"), threads[0].get("comm")),
          not res.get("isError") and (lh.get("thread_filter") or {}).get("tid") == lst.get("tid") and
          (lh.get("thread_filter") or {}).get("threads") == 1, short(res, 400))


def tops_of(t):
    return [f.get("symbol") for f in (t.get("top_functions") or [])]


fmt_tops = [tops_of(t) for t in threads if t.get("comm") == "formatter"]
counter_tops = [tops_of(t) for t in threads if (t.get("comm") or "").startswith("counter-")]
check("%s: each thread's top functions say what it does (formatter: format_record, counters: count_stat)" % W,
      any("format_record" in f for f in fmt_tops) and any("count_stat" in c for c in counter_tops),
      short({"formatter": fmt_tops, "counters": counter_tops}, 500))
ctid = (tids_named(threads, "counter-") or [None])[0]
byt, res = call("list_hotspots", {"analysis_id": aid, "tid": ctid, "limit": 5})
check("%s: list_hotspots for one counter thread (tid %s) leads with count_stat" % (W, ctid),
      not res.get("isError") and byt.get("hotspots") and sym(byt["hotspots"][0]) == "count_stat" and
      "format_record" not in json.dumps(byt), short(res, 400))
# The thread's page names get_hotspot of count_stat for that thread.
gstep = follow(byt, "get_hotspot", tid=ctid)
if check("%s: that page's next_steps name get_hotspot of its first hotspot, for tid %s" % (W, ctid),
         gstep and byt.get("hotspots") and gstep.get("hotspot_id") == byt["hotspots"][0].get("hotspot_id"),
         short(byt.get("next_steps"), 400)):
    gh, res = call("get_hotspot", gstep)
    callers = [sym(c) for c in gh.get("callers", [])]
    check("%s: get_hotspot as the step says: %s of tid %s, called from counter" % (W, gh.get("symbol"), ctid),
          not res.get("isError") and gh.get("symbol") == "count_stat" and "counter" in callers, short(res, 400))
cp, res = call("get_call_paths", {"analysis_id": aid, "tid": ctid, "limit": 5})
# The heaviest path is counter > count_stat, and no path is another
# thread's (the formatter's).  Not every path need hold counter: with frame
# pointers a sample in frameless libc code (the lock's futex wait) may skip
# its caller, which is the caller check's business, not the tid filter's.
check("%s: get_call_paths for that tid leads with counter > count_stat and holds no other thread's path" % W,
      not res.get("isError") and cp.get("paths") and
      all(x in json.dumps(cp["paths"][0]) for x in ('"counter"', '"count_stat"')) and
      "format_record" not in json.dumps(cp["paths"]), short(res, 400))

if count:
    gh, res = call("get_hotspot", {"analysis_id": aid, "hotspot_id": count["hotspot_id"]})
    callers = [sym(c) for c in gh.get("callers", [])]
    check("%s: get_hotspot count_stat: called from counter" % W, "counter" in callers, short(res, 400))
    sstep = follow(gh, "source_context")
    check("%s: get_hotspot count_stat names source_context of it next" % W,
          sstep and sstep.get("hotspot_id") == count["hotspot_id"], short(gh.get("next_steps"), 300))
    sctx, res = call("source_context", sstep or {"analysis_id": aid, "hotspot_id": count["hotspot_id"]})
    lines = [(l.get("line"), l.get("self_samples", 0)) for f in sctx.get("files", [])
             for l in (f.get("hot_lines") or f.get("lines") or []) if isinstance(l, dict)]
    lines = sorted(lines, key=lambda x: -(x[1] or 0))
    # The compiler may give the loop's instructions to its for line or
    # to its body: either is inside the lock.
    check("%s: source_context puts count_stat's heat inside the lock (lines %d-%d, the LOCKED loop at %d)"
          % (W, lock_line + 1, unlock_line - 1, locked_line),
          lines and lock_line < lines[0][0] < unlock_line and
          sum(n for l, n in lines if lock_line < l < unlock_line) >= 0.9 * sum(n for _, n in lines),
          short(lines[:5] or res, 400))

cls, res = call("classify_hotspots", {"analysis_id": aid})
cands = cls.get("candidates", [])
text = json.dumps(cands)
check("%s: classify (on-CPU): a user-code candidate names the program's own hot code" % W,
      any(("count_stat" in json.dumps(c) or "format_record" in json.dumps(c) or "append_field" in json.dumps(c))
          and "source_context" in json.dumps(c) for c in cands), short(cands, 600))
steps_of = [st for c in cands for st in (c.get("next_steps") or [])]
check("%s: classify (on-CPU): skipped callers point to collect_profile(call_graph=\"dwarf\")" % W,
      any(rule_id(c) == "frame_pointer_loss" for c in cands) and
      any((parse_step(st) or ("", {}))[0] == "collect_profile" and
          (parse_step(st) or ("", {}))[1].get("call_graph") == "dwarf" for st in steps_of),
      short([rule_id(c) for c in cands] + steps_of, 600))
size = len(result_text({"result": res}).encode())
check("%s: classify_hotspots's result, as the model reads it, is small (%d bytes <= 10 KB, test_mcp_budget's page)" % (W, size),
      0 < size <= 10 * 1024, size)

# ------------------------------------------------------------ on-CPU, dwarf
dw = collect("record, dwarf", mode="record", call_graph="dwarf", arguments=["2"])
dwa = analyze_from("dwarf record", dw)
if dwa.get("analysis_id"):
    dp, res = call("get_call_paths", {"analysis_id": dwa["analysis_id"], "symbol": sym(strlen) if strlen else "strlen"})
    frames = json.dumps(dp.get("paths", []))
    check("%s: dwarf stacks show the real caller: format_record > append_field > strlen" % W,
          "append_field" in frames and "format_record" in frames, short(res, 500))

# ------------------------------------------------------------ off-CPU
off = collect("off_cpu", mode="off_cpu", arguments=["2"])
offa = analyze_from("off-CPU", off)
oid = offa.get("analysis_id")
if oid:
    ev = (offa.get("events") or [{}])[0]
    check("%s: off-CPU analysis: one event with a time unit" % W,
          len(offa.get("events", [])) == 1 and ev.get("unit") in ("us", "ns", "ms", "s"), short(offa.get("events"), 300))
    oc, res = call("classify_hotspots", {"analysis_id": oid, "limit": 50})
    kinds = {rule_id(c): c for c in oc.get("candidates", [])}
    ktext = json.dumps(oc.get("candidates", []))
    # Three counters and the formatter are four CPU-bound threads on a
    # machine of few CPUs: the counters switch out blocked on the mutex
    # (lock_wait) or preempted while runnable (cpu_wait), in proportions
    # the machine's load decides.  Either way the mutex waits are
    # lock_wait's, never a wait for work or an unknown futex wait.
    quiet = {k: v for q in oc.get("quiet", []) for k, v in (q.get("below_threshold") or {}).items()}
    lockf = (kinds.get("lock_wait") or {}).get("figure", {}).get("value", quiet.get("lock_wait", 0))
    check("%s: off-CPU classify: the counters' futex waits under the mutex are lock_wait (%.1f%%; fired: %s), "
          "lock_wait or cpu_wait fires, idle_wait and futex_wait_unknown do not" % (W, lockf, sorted(k for k in kinds if k)),
          lockf > 0 and ("lock_wait" in kinds or "cpu_wait" in kinds) and
          "idle_wait" not in kinds and "futex_wait_unknown" not in kinds, ktext[:600])
    check("%s: off-CPU classify: io_wait fires on the reader's pipe_read" % W,
          "io_wait" in kinds and "pipe_read" in json.dumps(kinds["io_wait"]), short(kinds.get("io_wait") or ktext, 400))
    check("%s: off-CPU classify: a sleep candidate fires on the writer's nanosleep" % W,
          any("sleep" in (k or "") for k in kinds) and "nanosleep" in ktext, sorted(k for k in kinds if k))
    ot, _ = call("list_threads", {"analysis_id": oid, "limit": 50})
    ottext = json.dumps(ot.get("threads", []))
    check("%s: off-CPU list_threads keeps comm and gives blocked time by state" % W,
          "reader" in ottext and "writer" in ottext and "state" in ottext, short(ot, 500))
    oh, _ = call("list_hotspots", {"analysis_id": oid, "limit": 5})
    first = [sym(h) for h in oh.get("hotspots", [])][:1]
    check("%s: the off-CPU view leads with a blocking user frame, not __schedule" % W,
          first and "schedule" not in first[0], [sym(h) for h in oh.get("hotspots", [])][:5])

# ------------------------------------------------------------ perf stat
st = collect("stat", mode="stat", arguments=["1"])
sta = analyze_from("stat", st)
if sta.get("analysis_id"):
    ps, _ = call("get_perf_stat", {"analysis_id": sta["analysis_id"]})
    pt = json.dumps(ps)
    check("%s: perf stat gives elapsed, user and system time" % W,
          all(w in pt for w in ("elapsed", "user", "sys")), short(ps, 400))

# ------------------------------------------------------------ the report
ids = [x for x in (aid, oid, sta.get("analysis_id")) if x]
rep, res = call("build_report", {"analysis_id": aid, "with_analysis_ids": ids[1:],
                                 "problem": "records per second is low", "metric": "records_per_second"})
if rep.get("uri") or rep.get("path"):
    page, _ = call("read_artifact_page", {"artifact": rep.get("uri") or rep.get("path")})
    md = page.get("text", "")
    check("%s: build_report over on-CPU, off-CPU and stat carries all three" % W,
          all(i in md for i in ids) and "\\-\\-" not in md, short(md, 300))
else:
    check("%s: build_report over several analyses" % W, False, short(res, 400))

# ------------------------------------------------------------ next_steps
bad = []
steps = []
for r in (fp, on, off, offa, st, sta, dw, dwa, rep):
    steps += r.get("next_steps") or []
for step in steps:
    st_ = parse_step(step)
    if st_ is None and re.match(r"^\s*(perf|sudo|perflens)\b", str(step)):
        bad.append(step)
check("%s: next_steps name tool calls, never shell commands where a tool exists (%d steps)" % (W, len(steps)),
      not bad, bad[:3])
check("%s: the server keeps serving" % W, s.ping_ms() is not None)
rc = s.close()
check("%s: the server exits cleanly at end of input" % W, rc == 0, rc)
