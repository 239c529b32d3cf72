"""consent_steps.py - no result carries an authorization phrase, and every
next step offered as runnable works (issues 34 and 30).

  consent_steps.py SERVER REPO SHARED CHUNK_TEXT

Drives perflens-mcp over stdio as an agent would, on several analyses
(bundled fixtures, ../shared/peers captures, an off-CPU capture written
here) under servers started three ways (reading only; with every
collection flag; with the agent link and device control, a fake agent
dialled in and walked through its states: connected, profiling, paused,
stopped, disconnected).  Every result, success or error, is walked
recursively: no string, key or text anywhere holds either phrase.  Then,
breadth-first to depth 2 from those results, every step without
`operator` is sent, with only what its `needs` names filled in, and must
succeed; a step of collect_profile, start_capture or resume_capture is
never without `operator` (the phrase is the user's), and no
collect_profile step of an off-CPU analysis asks perf for offcpu-time.
"""
import json, os, subprocess, sys, time
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mcp_client import *  # noqa

SERVER, REPO, SHARED, CHUNK = sys.argv[1:5]
PHRASES = ("I_EXPLICITLY_AUTHORIZE_TARGET_PROFILING", "I_EXPLICITLY_AUTHORIZE_PID_ATTACH")
CONSENT_TOOLS = ("collect_profile", "start_capture", "resume_capture")
ART = os.path.join(WORK, "art")
seen = []          # (where, result) of every call
phrase_hits = []


def phrase_in(v, path="$"):
    """Where in `v` a phrase is (keys and values, at any depth), or None."""
    if isinstance(v, str):
        return path if any(p in v for p in PHRASES) else None
    if isinstance(v, dict):
        for k, x in v.items():
            if any(p in k for p in PHRASES):
                return path + "." + k
            hit = phrase_in(x, path + "." + k)
            if hit:
                return hit
    if isinstance(v, list):
        for i, x in enumerate(v):
            hit = phrase_in(x, "%s[%d]" % (path, i))
            if hit:
                return hit
    return None


def call(s, where, name, args, timeout=60):
    r = s.call(name, args, timeout=timeout)
    hit = phrase_in((r or {}).get("result"))
    if hit:
        phrase_hits.append("%s %s: %s" % (where, name, hit))
    seen.append((where, name, r))
    return r


def analyses(s, where, paths):
    """analyze_profile on each path, then the usual reads; the results."""
    roots = []
    for path in paths:
        r = call(s, where, "analyze_profile", {"path": path})
        a = sc(r)
        if not check("%s: analyze_profile %s" % (where, os.path.basename(path)), a.get("analysis_id"),
                     result_text(r)[:300]):
            continue
        roots.append(r)
        aid = a["analysis_id"]
        for ev in [e["name"] for e in a.get("events", [])][:2]:
            roots.append(call(s, where, "classify_hotspots", {"analysis_id": aid}))
            roots.append(call(s, where, "list_hotspots", {"analysis_id": aid, "event": ev, "limit": 3}))
            roots.append(call(s, where, "list_threads", {"analysis_id": aid, "event": ev, "limit": 3}))
    return roots


def follow(s, where, roots, depth=2, budget=120):
    """Send every step without operator, breadth-first to `depth`, with
    only what needs names filled in; (sent, skipped, failures)."""
    sent, skipped, bad, done = 0, 0, [], set()
    level = [st for r in roots for st in steps_of(sc(r))]
    for d in range(depth):
        nxt = []
        for st in level:
            key = json.dumps([st["tool"], st["arguments"]], sort_keys=True)
            if key in done:
                continue
            done.add(key)
            if st.get("operator"):
                skipped += 1
                continue
            if st.get("needs"):
                # Only a file copy can be needed without operator; this
                # test fills none of those in.
                skipped += 1
                continue
            if sent >= budget:
                skipped += 1
                continue
            r = call(s, "%s depth %d" % (where, d + 1), st["tool"], st["arguments"])
            sent += 1
            if not r or r.get("result", {}).get("isError"):
                bad.append("%s: %s(%s), from %s: %s" % (where, st["tool"], short(st["arguments"], 150),
                                                       st.get("_from", "?"), result_text(r)[:200]))
                continue
            for n in steps_of(sc(r)):
                n["_from"] = st["tool"]
                nxt.append(n)
        level = nxt
    return sent, skipped, bad


def step_rules(where):
    """What every step seen so far must say."""
    bad = []
    for w, name, r in seen:
        for st in steps_of(sc(r)):
            args = st["arguments"]
            if st["tool"] in CONSENT_TOOLS and not (st.get("operator") and "authorization" in st.get("needs", [])):
                bad.append("%s %s: %s offered without the user's phrase named" % (w, name, short(st, 200)))
            if st["tool"] == "collect_profile" and "offcpu-time" in json.dumps(args.get("events", [])):
                bad.append("%s %s: asks perf for offcpu-time: %s" % (w, name, short(st, 200)))
            if any("a bug, report it" in o for o in st.get("operator", [])):
                bad.append("%s %s: a step that fails its own tool's inputSchema: %s" % (w, name, short(st, 300)))
    return bad


# ------------------------------------------------------------- the inputs
offcpu = os.path.join(WORK, "offcpu.txt")
with open(offcpu, "w") as f:
    for i in range(12):
        f.write("my worker 41/42 %d offcpu-time:\n\t0 [state S]\n"
                "\tffffffff82265908 __schedule ([kernel.kallsyms])\n"
                "\tffffffff816e6623 anon_pipe_read ([kernel.kallsyms])\n"
                "\tf82ad read (/usr/lib/x86_64-linux-gnu/libc.so.6)\n\t1234 [unknown] ([unknown])\n\n"
                % (1000000 + 7919 * i))
inputs = [offcpu, os.path.join(REPO, "fixtures/device-x86/chunk_000.txt.gz"),
          os.path.join(REPO, "fixtures/investigation-x86/capture.txt.gz"),
          os.path.join(REPO, "fixtures/perf-stat/human-default.txt"),
          os.path.join(SHARED, "peers/flamegraph/test/perf-iperf-stacks-pidtid-01.txt"),
          os.path.join(SHARED, "peers/device-sessions/session-x86-baseline")]
true = os.path.join(WORK, "true")   # a program under the allowed roots
subprocess.run(["cp", "/bin/true", true], check=True)
base = [SERVER, "--allowed-root", WORK, "--allowed-root", REPO, "--allowed-root", SHARED,
        "--artifact-root", ART, "--allow-writes"]

# ----------------------------------------------------- a reading server
t0 = time.monotonic()
s = Stdio(base, "reader")
s.initialize()
roots = analyses(s, "reader", inputs)
roots.append(call(s, "reader", "collect_profile", {"mode": "off_cpu", "executable": true}))
roots.append(call(s, "reader", "normalize_benchmark", {"path": os.path.join(REPO, "fixtures/benchmarks/pyperf-baseline.json")}))
roots.append(call(s, "reader", "inspect_elf", {"path": true}))
roots.append(call(s, "reader", "symbolize", {"binary": true, "offsets": ["0x1000", "0x2000"]}))
roots.append(call(s, "reader", "list_artifacts", {}))
ids = [sc(r)["analysis_id"] for w, n, r in seen if n == "analyze_profile" and sc(r).get("analysis_id")]
if ids:
    roots.append(call(s, "reader", "build_report", {"analysis_id": ids[1 % len(ids)], "problem": "slow",
                                                    "metric": "wall seconds, lower is better"}))
    roots.append(call(s, "reader", "compare_profiles", {"baseline_id": ids[1 % len(ids)],
                                                        "candidate_id": ids[1 % len(ids)], "event": "cycles"}))
oc = [r for w, n, r in seen if n == "classify_hotspots" and "offcpu-time" in json.dumps(sc(r).get("candidates", [])[:1])]
osteps = [st for r in oc for st in steps_of(sc(r)) if st["tool"] == "collect_profile"]
check("reader: the off-CPU analysis's remedies collect with mode off_cpu (%d steps), never perf's offcpu-time"
      % len(osteps), osteps and all(st["arguments"].get("mode") == "off_cpu" and "events" not in st["arguments"]
                                    for st in osteps), short(osteps, 400))
check("reader: its collect_profile steps need the server's collection flags, said in operator",
      osteps and all(any("--allow-collection" in o for o in st.get("operator", [])) for st in osteps), short(osteps, 400))
sent, skipped, bad = follow(s, "reader", roots)
check("reader: %d runnable next steps followed to depth 2 succeed (%d not runnable as they are, skipped)"
      % (sent, skipped), sent > 20 and not bad, bad[:3])
s.outputs_summary()
s.close()

# ------------------------------------------- a server that may collect
s = Stdio(base + ["--allow-collection", "--allow-process-execution", "--allow-pid-attach"], "collector")
s.initialize()
roots = analyses(s, "collector", inputs[:3])
r = call(s, "collector", "collect_profile", {"mode": "stat", "executable": true})
check("collector: a collection without the phrase is refused, naming the argument, not the phrase",
      is_tool_error(r, "authorization"), result_text(r)[:300])
r = call(s, "collector", "collect_profile", {"mode": "record", "pid": 1, "duration_seconds": 1,
                                            "authorization": PHRASES[0]})
check("collector: a pid attach without its phrase is refused, naming pid_authorization",
      is_tool_error(r, "pid_authorization"), result_text(r)[:300])
# What perf can do here, probed and cached: later steps are checked against it.
caps = call(s, "collector", "inspect_collection_capabilities", {}, timeout=300)
roots.append(caps)
# The user's consent, given by this test as the user would: collections
# whose results (and their next steps) are walked and followed too.
for mode, extra in (("stat", {}), ("record", {"call_graph": "fp"})):
    r = call(s, "collector", "collect_profile", dict({"mode": mode, "executable": true,
                                                      "authorization": PHRASES[0]}, **extra), timeout=120)
    check("collector: collect_profile mode %s with the user's phrase collects" % mode, sc(r).get("collection_id"),
          result_text(r)[:300])
    roots.append(r)
roots += analyses(s, "collector probed", inputs[:2])
probed = [st for rr in roots[-6:] for st in steps_of(sc(rr)) if st["tool"] == "collect_profile"]
check("collector: with the probe cached, no collect_profile step is left unconfirmed for want of one",
      sc(caps).get("events") is None or all(not any("no capability probe cached" in o for o in st.get("operator", []))
                                             for st in probed), short(probed, 400))
csteps = [st for rr in roots for st in steps_of(sc(rr)) if st["tool"] == "collect_profile"]
check("collector: %d collect_profile steps, each naming authorization in needs and the user's consent in operator"
      % len(csteps), csteps and all("authorization" in st.get("needs", []) and
                                    any(o.startswith("authorization:") for o in st.get("operator", []))
                                    for st in csteps), short(csteps, 300))
sent, skipped, bad = follow(s, "collector", roots, budget=80)
check("collector: %d runnable next steps followed to depth 2 succeed (%d skipped)" % (sent, skipped),
      sent > 5 and not bad, bad[:3])
s.close()

# ------------------------------------ the agent link, a fake agent in it
code_file = os.path.join(WORK, "code")
open(code_file, "w").write("pairing-Code-34\n")
have_zstd = subprocess.run(["sh", "-c", "command -v zstd"], capture_output=True).returncode == 0
if not have_zstd:
    print("skip - consent: device states: the zstd command is missing (apt-get install zstd)", flush=True)
else:
    s = Stdio(base + ["--agent-listen", "127.0.0.1:0", "--agent-pairing-code-file", code_file,
                      "--allow-device-control"], "link")
    s.initialize()
    port = link_port(s, 10 * SCALE)
    agent = subprocess.Popen([sys.executable, os.path.join(os.path.dirname(os.path.abspath(__file__)), "fake_agent.py"),
                              "--server", "127.0.0.1:%d" % port, "--code", "pairing-Code-34", "--chunk", CHUNK,
                              "--interval", "0.3", "--maps", "--metrics-interval", "0.2"],
                             stdout=open(os.path.join(WORK, "agent.out"), "w"), stderr=subprocess.STDOUT)
    remember(agent.pid)

    def device(state):
        return next((d for d in sc(call(s, "link %s" % state, "list_devices", {})).get("devices", [])
                     if d.get("state") == state), None)

    d = until(lambda: device("connected"), 15 * SCALE)
    dev = (d or {}).get("device", "none")
    check("link: the fake agent is connected", d, short(sc(seen[-1][2]), 300))
    roots = [seen[-1][2]]
    r = call(s, "link connected", "list_device_processes", {"device": dev, "limit": 5})
    roots.append(r)
    cap = [st for st in steps_of(sc(r)) if st["tool"] == "start_capture"]
    check("link: list_device_processes proposes start_capture with both phrases named in needs, none filled in",
          cap and set(cap[0].get("needs", [])) >= {"authorization", "pid_authorization"} and
          "authorization" not in cap[0]["arguments"] and cap[0].get("operator"), short(cap, 400))
    roots.append(call(s, "link connected", "get_device_metrics", {"device": dev, "type": "system"}))
    roots.append(call(s, "link connected", "configure_device_metrics", {"device": dev, "interval_seconds": 1}))
    roots.append(call(s, "link connected", "connect_device", {"host": "127.0.0.1", "port": 9,
                                                             "pairing_code": "pairing-Code-34"}))
    roots.append(call(s, "link connected", "start_capture", {"device": dev, "pid": 3}))
    followed = [follow(s, "link connected", roots, budget=20)]
    # The user's consent, given by this test as the user would.
    start = {"device": dev, "pid": 3, "frequency_hz": 99, "interval_seconds": 1,
             "authorization": PHRASES[0], "pid_authorization": PHRASES[1]}
    r = call(s, "link", "start_capture", start)
    check("link: start_capture with the user's phrases starts", sc(r).get("session"), result_text(r)[:300])
    roots = [r]
    until(lambda: (device("profiling") or {}).get("chunks", 0) >= 1, 10 * SCALE)
    roots.append(call(s, "link profiling", "list_sessions", {}))
    # Followed while it profiles: their stop_capture step ends the capture.
    followed.append(follow(s, "link profiling", roots, budget=20))
    r = call(s, "link", "start_capture", start)
    until(lambda: (device("profiling") or {}).get("chunks", 0) >= 1, 10 * SCALE)
    roots = [call(s, "link profiling", "pause_capture", {"device": dev})]
    roots.append(call(s, "link paused", "list_devices", {}))
    roots.append(call(s, "link paused", "resume_capture", {"device": dev}))
    followed.append(follow(s, "link paused", roots, budget=20))
    r = call(s, "link paused", "resume_capture", {"device": dev, "authorization": PHRASES[0]})
    check("link: resume_capture with the user's phrase resumes", r and not r["result"].get("isError"),
          result_text(r)[:300])
    roots = [call(s, "link stopped", "stop_capture", {"device": dev}),
             call(s, "link stopped", "list_device_processes", {"device": dev, "match": "p1"}),
             call(s, "link stopped", "list_devices", {})]
    followed.append(follow(s, "link stopped", roots, budget=20))
    roots = [call(s, "link", "disconnect_device", {"device": dev})]
    roots.append(call(s, "link disconnected", "list_devices", {}))
    roots.append(call(s, "link disconnected", "list_device_processes", {"device": dev}))
    roots.append(call(s, "link disconnected", "start_capture", {"device": dev, "pid": 3}))
    followed.append(follow(s, "link disconnected", roots, budget=20))
    sent, skipped = sum(f[0] for f in followed), sum(f[1] for f in followed)
    bad = [b for f in followed for b in f[2]]
    check("link: %d runnable next steps, followed to depth 2 in each device state, succeed (%d skipped)"
          % (sent, skipped), sent >= 5 and not bad, bad[:3])
    agent.kill()
    agent.wait()
    s.close()

# ------------------------------------------------------------- verdicts
check("no result of %d calls (successes and errors, every server and device state) holds an authorization phrase"
      % len(seen), not phrase_hits, phrase_hits[:5])
check("every step of every result names what consent it needs and asks perf for no PerfLens event",
      not step_rules("all"), step_rules("all")[:3])
print("# consent_steps: %.1f s" % (time.monotonic() - t0), flush=True)
