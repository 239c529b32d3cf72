"""live_analysis.py - perflens-mcp --live-analysis-interval-ms 500 with
our agent (real perf) on a spinning workload, as a viewer would see it:

- while the capture runs, with no client calling analyze_profile, the
  artifact root gains analyses of the live session, each of more chunks
  than the one before (the profile grows as chunks land);
- the newest one's top function is the workload's leaf (list_hotspots);
- after the stop, one more analysis covers every chunk, and its samples
  are those the chunks hold by an independent count (perf script -G over
  each perf.data chunk, the text's sample headers for a text chunk);
- the session is not analyzed again once finished and unchanged.
"""
import glob, json, os, re, subprocess, sys, time
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mcp_client import *  # noqa

SERVER, AGENT, WORKLOAD = sys.argv[1:4]
CODE = "live-" + os.urandom(6).hex()
AUTH = "I_EXPLICITLY_AUTHORIZE_TARGET_PROFILING"
PAUTH = "I_EXPLICITLY_AUTHORIZE_PID_ATTACH"
HEADER = re.compile(r"^\s*\S.*\s\d+/\d+\s+\d+\.\d+:\s")
ART = os.path.join(WORK, "art")
procs = []


def analyses_of(session):
    """(mtime, inputs, id, samples) of each analysis of the session's chunks."""
    out = []
    for f in glob.glob(os.path.join(ART, "analyses", "an-*.json")):
        if f.endswith(".stacks.json"):
            continue
        try:
            d = json.load(open(f))
        except ValueError:
            continue
        ins = d.get("provenance", {}).get("inputs", [])
        if ins and all(session in i.get("path", "") for i in ins):
            out.append((os.stat(f).st_mtime, len(ins), d.get("id"), sum(e.get("samples", 0) for e in d.get("events", []))))
    return sorted(out)


def chunk_samples(path):
    if path.endswith(".perf.zst"):
        data = subprocess.run(["zstd", "-d", "-c", path], capture_output=True).stdout
        out = subprocess.run(["perf", "script", "-i", "-", "-F", "tid", "-G"], input=data, capture_output=True).stdout
        return sum(1 for l in out.decode(errors="replace").splitlines() if l.strip())
    text = subprocess.run(["zstd", "-d", "-c", path], capture_output=True).stdout.decode(errors="replace")
    return sum(1 for l in text.split("### PERF_STAT ###")[0].splitlines() if HEADER.match(l))


try:
    code_file = os.path.join(WORK, "code")
    open(code_file, "w").write(CODE + "\n")
    s = Stdio([SERVER, "--allowed-root", WORK, "--artifact-root", ART, "--allow-writes", "--agent-listen",
               "127.0.0.1:0", "--agent-pairing-code-file", code_file, "--allow-device-control",
               "--live-analysis-interval-ms", "500"], "live")
    s.initialize()
    port = link_port(s)
    w = subprocess.Popen([WORKLOAD])
    procs.append(w)
    a = subprocess.Popen([AGENT, "--server", "127.0.0.1:%d" % port] + os.environ.get("AGENT_EXTRA", "").split(), stdout=subprocess.DEVNULL,
                         stderr=open(os.path.join(WORK, "agent.err"), "w"), env=dict(os.environ, PERFLENS_TOKEN=CODE))
    procs.append(a)
    dev = (until(lambda: next((d for d in sc(s.call("list_devices", {})).get("devices", [])
                               if d["state"] == "connected"), None), 20) or {}).get("device", "none")
    r = s.call("start_capture", {"device": dev, "pid": w.pid, "frequency_hz": 199, "interval_seconds": 1,
                                 "authorization": AUTH, "pid_authorization": PAUTH}, timeout=120)
    session = sc(r).get("session") or "none"
    check("start_capture on our agent answers with the live session (%s)" % session,
          sc(r).get("capture", {}).get("ok") is True, result_text(r)[:300])
    grown = until(lambda: (lambda l: l if len({x[1] for x in l}) >= 2 else None)(analyses_of(session)), 40, 0.5)
    seen = analyses_of(session)
    check("while the capture runs, analyses of the live session appear with no client asking, of more "
          "chunks each time (%s)" % [x[1] for x in seen],
          grown is not None and [x[1] for x in seen] == sorted(x[1] for x in seen), seen)
    newest = seen[-1][2] if seen else "none"
    hs = sc(s.call("list_hotspots", {"analysis_id": newest, "limit": 3})).get("hotspots", [])
    check("the newest live analysis' top function is the workload's leaf (%s)" % [h["symbol"] for h in hs],
          hs and hs[0]["symbol"] == "live_leaf", hs)
    stop = sc(s.call("stop_capture", {"device": dev}, timeout=60))
    chunks = sorted(glob.glob(os.path.join(ART, "sessions", session, "chunk_*")))

    def final():
        m = json.load(open(os.path.join(ART, "sessions", session, "metadata.json")))
        l = analyses_of(session)
        return l if m.get("live") is False and l and l[-1][1] == len(chunks) else None
    done = until(final, 30, 0.5)
    want = sum(chunk_samples(c) for c in chunks)
    last = (done or analyses_of(session) or [(0, 0, "", 0)])[-1]
    check("after the stop, one analysis covers all %d chunks, with the %d samples perf script and the text "
          "count in them (%d)" % (len(chunks), want, last[3]), done is not None and last[3] == want and want > 0,
          (analyses_of(session)[-3:], stop.get("gaps")))
    counts = [x[1] for x in analyses_of(session)]
    live_counts = counts[:-1]
    check("while live, each analysis read at least a tenth more chunks than the one before (%s; the last, after "
          "the stop, any more)" % counts,
          all(b - a >= max(1, a // 10) for a, b in zip(live_counts, live_counts[1:])), counts)
    n = len(analyses_of(session))
    time.sleep(2)
    check("the finished session is not analyzed again (%d analyses, %d after 2 s)" % (n, len(analyses_of(session))),
          len(analyses_of(session)) == n)
    check("the server logged no failed live analysis", "live analysis of" not in s.stderr(), s.stderr()[-400:])
    s.close()
finally:
    reap(procs)
sys.exit(1 if fails else 0)
