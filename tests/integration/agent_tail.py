"""agent_tail.py - a device capture loses nothing silently, and its numbers
add up, driven through perflens-mcp as an agent would.

  agent_tail.py SERVER CHUNK_TEXT [AGENT WORKLOAD]

With fake_agent.py (its own zstd and sample count):
- a seed agent (--mode legacy) discards the chunk in flight at a pause and
  at a stop: the session records a gap of the seconds after its last chunk
  for each, and the analysis sizes them in samples near what the fake
  discarded (its stdout);
- an agent with counters whose last chunk comes 3 s after the stop answer
  (past the 2 s grace): the link waits for it, the session holds every
  sample the agent counted, no gap, and the data quality names no loss;
  then the metrics-only session that waits for the next capture is named
  by no result (session null, last_session the finished one), while
  get_device_metrics(device) reads it (the frame that opened it
  republished the device's state), not the finished one;
- one that counts its last chunk sent and loses it: a gap with the chunk,
  and the analysis names the samples missing against the agent's count;
- a crafted session (a chunk with no sample but 6.4 s of task-clock, and
  samples standing for far more CPU than task-clock counted): both in the
  data quality; per-chunk sample counts in the session's summary;
- duration_seconds echoed by start_capture and the session says it ended
  by its duration; a chunk's perflens://artifacts/sessions/ID/chunk_N.zst
  reads through read_artifact_page as its text;
- a link that ends mid-capture: a gap of the seconds after the last chunk.
With AGENT and WORKLOAD (our agent, real perf, root): a 7 s capture at 2 s
intervals whose session holds exactly the samples the agent's perf script
printed on the device (its output kept by a perf wrapper there: an
independent count), every chunk with samples, with a data quality that
says nothing of the session (at 99 Hz, and at 999 Hz); then 9 s in rounds mode (5 s rounds), where
the stop mid-round sends the partial round (each perf script's count is
a chunk's).  CPU in one unit: list_device_processes' cpu_pct (percent of
one CPU) against /proc's ticks, thread metrics' per-thread cpu_pct against
the process's.
"""
import glob, json, os, re, stat, subprocess, sys, time
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mcp_client import *  # noqa

SERVER, CHUNK = sys.argv[1:3]
AGENT = sys.argv[3] if len(sys.argv) > 4 else None
WORKLOAD = sys.argv[4] if len(sys.argv) > 4 else None
HERE = os.path.dirname(os.path.abspath(__file__))
FAKE = [sys.executable, os.path.join(HERE, "fake_agent.py")]
CODE = "tail-" + os.urandom(6).hex()
AUTH = "I_EXPLICITLY_AUTHORIZE_TARGET_PROFILING"
PAUTH = "I_EXPLICITLY_AUTHORIZE_PID_ATTACH"
HEADER = re.compile(r"^\S.*\s\d+\.\d+:\s")
procs = []


def wait(cond, timeout=15.0, step=0.1):
    return until(cond, timeout, step)


def events(out, name):
    ev = []
    for line in open(out, errors="replace"):
        try:
            e = json.loads(line)
        except ValueError:
            continue
        if e.get("event") == name:
            ev.append(e)
    return ev


def server(art, *extra):
    code_file = os.path.join(WORK, "code")
    open(code_file, "w").write(CODE + "\n")
    s = Stdio([SERVER, "--allowed-root", WORK, "--artifact-root", art, "--allow-writes", "--agent-listen",
               "127.0.0.1:0", "--agent-pairing-code-file", code_file, "--allow-device-control"] + list(extra), "tail")
    s.initialize()
    port = link_port(s)
    return s, port


def fake(port, name, *args):
    out = os.path.join(WORK, name + ".out")
    p = subprocess.Popen(FAKE + ["--server", "127.0.0.1:%d" % port, "--code", CODE] + list(args),
                         stdout=open(out, "w"), stderr=subprocess.STDOUT)
    procs.append(p)
    return p, out


def connected(s, gone=()):
    def f():
        for d in sc(s.call("list_devices", {})).get("devices", []):
            if d["state"] == "connected" and d["device"] not in gone:
                return d
    return wait(f, 15)


def session_notes(an):
    return [w for w in an.get("warnings") or [] if "session gap" in w or "task-clock" in w or
            "the agent counted" in w or "CPUs busy" in w]


def capture(s, dev, seconds, interval=1, freq=99, **extra):
    args = {"device": dev, "pid": 1, "frequency_hz": freq, "interval_seconds": interval,
            "authorization": AUTH, "pid_authorization": PAUTH}
    args.update(extra)
    r = s.call("start_capture", args, timeout=120)
    time.sleep(seconds)
    return sc(r)


def live_session(sid):
    """A session folder of the server whose metadata says live."""
    meta = os.path.join(ART, "sessions", sid or "none", "metadata.json")
    return os.path.exists(meta) and json.load(open(meta)).get("live") is True


def analyze(s, session):
    r = s.call("analyze_profile", {"path": "perflens://artifacts/sessions/%s" % session}, timeout=90)
    return sc(r), sum(e["samples"] for e in sc(r).get("events", []))


try:
    ART = os.path.join(WORK, "art-tail")
    s, port = server(ART, "--agent-allow-legacy", "loopback")
    seen = []

    # ---- a seed agent: the chunk in flight at the stop is discarded
    p, out = fake(port, "seed", "--mode", "legacy", "--chunk", CHUNK, "--tail", "drop", "--interval", "1")
    d = connected(s)
    dev = (d or {}).get("device", "none")
    seen.append(dev)
    st = capture(s, dev, 2.6)
    s.call("pause_capture", {"device": dev}, timeout=40)
    time.sleep(1)
    s.call("resume_capture", {"device": dev, "authorization": AUTH}, timeout=40)
    time.sleep(2.6)
    stop = sc(s.call("stop_capture", {"device": dev}, timeout=60))
    tails = events(out, "tail")
    gaps = stop.get("gaps") or []
    check("a seed agent's pause and stop: the session records two gaps, the %s s after its last chunk each (%s)"
          % ([t.get("seconds") for t in tails], [(g.get("seconds"), g.get("reason", "")[:50]) for g in gaps]),
          len(gaps) == 2 == len(tails) and "pause" in gaps[0]["reason"] and "stop" in gaps[1]["reason"] and
          all(abs(g.get("seconds", -9) - t.get("seconds", 9)) < 0.4 for g, t in zip(gaps, tails)), (stop, tails))
    an, total = analyze(s, stop.get("session"))
    notes = session_notes(an)
    est = [float(m.group(1)) for n in notes for m in [re.search(r"about (\d+) samples", n)] if m]
    want = [t.get("samples", -100) for t in tails]
    check("its analysis sizes the gaps: about %s samples, the fake discarded %s" % (est, want),
          len(est) == 2 and all(abs(e - w) <= max(5, 0.25 * w) for e, w in zip(est, want)), notes)
    p.kill()
    p.wait()

    # ---- ours, the last chunk 3 s after the stop answer (past the grace)
    p, out = fake(port, "late", "--chunk", CHUNK, "--tail", "late", "--interval", "1", "--tail-delay", "3")
    d = connected(s, seen)
    dev = (d or {}).get("device", "none")
    seen.append(dev)
    st = capture(s, dev, 2.5, duration_seconds=60)
    check("start_capture echoes duration_seconds (%s)" % st.get("capture", {}).get("duration_seconds"),
          st.get("capture", {}).get("duration_seconds") == 60, st)
    stop = sc(s.call("stop_capture", {"device": dev}, timeout=60))
    late = (events(out, "late_chunk") or [{}])[0]
    counters = (events(out, "stop") or [{}])[0].get("counters", {})
    an, total = analyze(s, stop.get("session"))
    check("a last chunk 3 s after the stop answer lands in the session (%s samples late; %d = the agent's %s), "
          "no gap" % (late.get("samples"), total, counters.get("samples_sent")),
          late.get("samples", 0) > 0 and total == counters.get("samples_sent") and stop.get("gaps") == [] and
          an.get("session", {}).get("samples") == total, (stop, counters, an.get("session")))
    # (The fake repeats one chunk of a real session each second: its CPU
    # rate does not add up, by construction; our agent's session below does.)
    lossy = [n for n in session_notes(an) if "session gap" in n or "the agent counted" in n]
    check("nothing lost: the data quality names no gap and no samples missing", not lossy, lossy)
    # Metrics keep coming after the stop (every 0.5 s): they wait in the
    # next capture's session, which no result names.
    time.sleep(1.5)
    r = sc(s.call("list_devices", {}))
    dd = next((x for x in r.get("devices", []) if x["device"] == dev), {})
    waiting = [os.path.basename(os.path.dirname(x)) for x in glob.glob(os.path.join(ART, "sessions", "*", "metrics.jsonl"))
               if json.load(open(os.path.join(os.path.dirname(x), "metadata.json"))).get("live")]
    paths = [x["arguments"].get("path", "") for x in r.get("next_steps", []) if "path" in x.get("arguments", {})]
    check("after the stop, the metrics-only session waiting for the next capture is named nowhere: "
          "session null, last_session the finished one, no next step on it (%s waiting)" % waiting,
          dd.get("session") is None and dd.get("last_session") == stop.get("session") and
          any(x.endswith(stop.get("session") or "-") for x in paths) and
          not [x for x in paths if x.rsplit("/", 1)[-1] in waiting], (dd, paths, waiting))
    # The metrics frame that opened the waiting session republished the
    # device's state: get_device_metrics(device) reads that session (the
    # frames arriving now), not the finished one, and not "no session".
    stop_ts = max((f.get("recv_ts", 0) for f in sc(s.call("get_device_metrics", {
        "session": stop.get("session"), "type": "system", "limit": 200})).get("frames", [])), default=0)
    gm = s.call("get_device_metrics", {"device": dev, "type": "system", "limit": 200})
    gmr = sc(gm) or {}
    # (recv_ts is whole seconds: the first frame may share the second of
    # the finished session's last)
    fresh = [f for f in gmr.get("frames", []) if f.get("recv_ts", 0) >= stop_ts]
    check("after the stop, get_device_metrics(device) reads the session the metrics now wait in (%s, live %s, "
          "%d frames, none older than the finished one's last), not the finished %s"
          % (gmr.get("session"), gmr.get("live"), len(fresh), stop.get("session")),
          gmr.get("session") != stop.get("session") and live_session(gmr.get("session")) and
          gmr.get("live") is True and fresh and len(fresh) == len(gmr.get("frames", [])), result_text(gm)[:400])
    p.kill()
    p.wait()

    # ---- ours, the last chunk counted as sent and lost
    p, out = fake(port, "lose", "--chunk", CHUNK, "--tail", "lose", "--interval", "1")
    d = connected(s, seen)
    dev = (d or {}).get("device", "none")
    seen.append(dev)
    capture(s, dev, 2.5)
    stop = sc(s.call("stop_capture", {"device": dev}, timeout=60))
    lost = (events(out, "tail") or [{}])[0].get("samples", -1)
    an, total = analyze(s, stop.get("session"))
    notes = session_notes(an)
    check("a last chunk counted as sent but lost: a gap of 1 chunk, and the analysis names %d samples missing (%s)"
          % (lost, notes), any(x.get("chunks_missing") == 1 for x in stop.get("gaps") or []) and
          any("%d missing" % lost in n for n in notes), (stop.get("gaps"), notes))
    p.kill()
    p.wait()

    # ---- a crafted session: numbers that do not add up
    text = open(CHUNK, "rb").read()
    nsamp = sum(1 for l in text.decode(errors="replace").splitlines() if HEADER.match(l))
    stat_block = lambda ms, secs: ("\n### PERF_STAT ###\n\n Performance counter stats for process id '1':\n\n"
                                   "          %.2f msec task-clock                       #    1.000 CPUs utilized\n\n"
                                   "       %.9f seconds time elapsed\n" % (ms, secs)).encode()
    c0 = os.path.join(WORK, "crafted0.txt")
    c1 = os.path.join(WORK, "crafted1.txt")
    open(c0, "wb").write(text + stat_block(1000.0, 1.0))
    open(c1, "wb").write(stat_block(6400.0, 6.4))   # no sample, 6.4 s of task-clock
    p, out = fake(port, "crafted", "--chunk", c0 + "," + c1, "--tail", "late", "--interval", "1",
                  "--tail-delay", "0", "--max-chunks", "2")
    d = connected(s, seen)
    dev = (d or {}).get("device", "none")
    seen.append(dev)
    capture(s, dev, 2.6)
    stop = sc(s.call("stop_capture", {"device": dev}, timeout=60))
    an, total = analyze(s, stop.get("session"))
    notes = session_notes(an)
    cs = an.get("session", {}).get("chunk_samples")
    check("crafted: per-chunk sample counts in the session's summary (%s; the first chunk's %d by a count of "
          "its text)" % (cs, nsamp), cs and cs[0] == nsamp and cs[1] == 0, an.get("session"))
    check("crafted: samples standing for more CPU than task-clock counted are in the data quality",
          any("CPUs busy" in n and "more sampled than counted" in n for n in notes), notes)
    check("crafted: the empty chunk is not called missing when the session holds more samples than its "
          "task-clock stands for", not any("holds no sample" in n for n in notes), notes)
    p.kill()
    p.wait()

    # ---- crafted: the same chunks sampled at 999 Hz: the session is short of
    # what its task-clock stands for, so the empty chunk's samples are missing
    pb, outb = fake(port, "crafted-999", "--chunk", c0 + "," + c1, "--tail", "late", "--interval", "1",
                    "--tail-delay", "0", "--max-chunks", "2")
    d = connected(s, seen)
    devb = (d or {}).get("device", "none")
    seen.append(devb)
    capture(s, devb, 2.6, freq=999)
    stopb = sc(s.call("stop_capture", {"device": devb}, timeout=60))
    anb, _ = analyze(s, stopb.get("session"))
    notesb = session_notes(anb)
    check("crafted at 999 Hz: a chunk with no sample but 6.40 s of task-clock, in a session short of its "
          "task-clock, is in the data quality", any("chunk_00001" in n and "6.40 s of task-clock" in n
                                                     for n in notesb), notesb)
    pb.kill()
    pb.wait()

    # ---- crafted: perf stat's rounds counted three times the CPU time the
    # samples stand for: samples are missing, whatever the capture's edges
    c3 = os.path.join(WORK, "crafted3.txt")
    samples_only = text.split(b"\n### PERF_STAT ###")[0] + b"\n"   # the chunk's own block out
    open(c3, "wb").write(samples_only + stat_block(3000.0 * nsamp / 99, 1.0))
    p3, out3 = fake(port, "crafted-short", "--chunk", c3, "--tail", "late", "--interval", "1",
                    "--tail-delay", "0", "--max-chunks", "1")
    d = connected(s, seen)
    dev3 = (d or {}).get("device", "none")
    seen.append(dev3)
    capture(s, dev3, 2.6)
    stop3 = sc(s.call("stop_capture", {"device": dev3}, timeout=60))
    an3, _ = analyze(s, stop3.get("session"))
    notes3 = session_notes(an3)
    check("crafted: chunks of at most %d samples at 99 Hz (%.2f s of CPU) against %.2f s of task-clock each in "
          "perf stat's rounds: the data quality says samples are missing" % (nsamp, nsamp / 99.0, 3.0 * nsamp / 99),
          any("samples are missing" in n and "within its rounds" in n for n in notes3),
          (notes3, an3.get("session")))
    p3.kill()
    p3.wait()

    # ---- crafted: an empty first chunk whose samples the other chunks hold
    # (perf script printed the first interval late, as under ASan in CI):
    # nothing is missing, so the data quality must not say so
    p2, out2 = fake(port, "crafted-late", "--chunk", c1 + "," + c0, "--tail", "late", "--interval", "1",
                    "--tail-delay", "0", "--max-chunks", "2")
    d = connected(s, seen)
    dev2 = (d or {}).get("device", "none")
    seen.append(dev2)
    capture(s, dev2, 2.6)
    stop2 = sc(s.call("stop_capture", {"device": dev2}, timeout=60))
    an2, _ = analyze(s, stop2.get("session"))
    notes2 = session_notes(an2)
    cs2 = an2.get("session", {}).get("chunk_samples")
    check("crafted: an empty first chunk (6.40 s of task-clock) whose samples the next chunk holds (%s) is "
          "not called missing" % cs2, cs2 and cs2[0] == 0 and cs2[1] == nsamp and
          not any("chunk_00000" in n and "holds no sample" in n for n in notes2), notes2)
    p2.kill()
    p2.wait()
    zst = sorted(glob.glob(os.path.join(ART, "sessions", stop.get("session") or "none", "chunk_*.zst")))
    uri = "perflens://artifacts/sessions/%s/%s" % (stop.get("session"), os.path.basename(zst[0]) if zst else "x")
    r = s.call("read_artifact_page", {"artifact": uri, "limit_bytes": 4096})
    want = subprocess.run(["zstd", "-d", "-c", zst[0]], capture_output=True).stdout[:4096] if zst else b"-"
    check("read_artifact_page reads %s as its text (= zstd -d's first 4 KB)" % uri.split("/")[-1],
          sc(r).get("text", "").encode() == want[:len(sc(r).get("text", "").encode())] and
          len(sc(r).get("text", "")) > 100 and sc(r).get("total_bytes") == len(subprocess.run(
              ["zstd", "-d", "-c", zst[0]], capture_output=True).stdout), result_text(r)[:300])
    r = s.call("analyze_profile", {"path": uri}, timeout=90)
    one = sum(e["samples"] for e in sc(r).get("events", []))
    check("analyze_profile takes that one chunk (%d samples, as chunk_samples says)" % one,
          cs and one == cs[0], result_text(r)[:300])
    p.kill()
    p.wait()

    # ---- duration_seconds: the session says it ended by it
    p, out = fake(port, "dur", "--chunk", CHUNK, "--tail", "late", "--interval", "1", "--tail-delay", "0")
    d = connected(s, seen)
    dev = (d or {}).get("device", "none")
    seen.append(dev)
    st = capture(s, dev, 0, duration_seconds=2)
    sess = st.get("session") or "none"
    meta = wait(lambda: (lambda m: m if m and m.get("live") is False else None)(
        json.load(open(os.path.join(ART, "sessions", sess, "metadata.json"))) if os.path.exists(
            os.path.join(ART, "sessions", sess, "metadata.json")) else None), 20)
    an, total = analyze(s, sess)
    check("duration_seconds 2: the session says it ended by its duration (%s)" % an.get("session", {}).get("ended"),
          "duration_seconds (2 s)" in (an.get("session", {}).get("ended") or "") and
          (meta or {}).get("capture", {}).get("duration_seconds") == 2, (an.get("session"), meta))
    p.kill()
    p.wait()

    # ---- the link ends mid-capture: the time after the last chunk is a gap
    p, out = fake(port, "cut", "--chunk", CHUNK, "--tail", "late", "--interval", "1")
    d = connected(s, seen)
    dev = (d or {}).get("device", "none")
    seen.append(dev)
    st = capture(s, dev, 2.5)
    sess = st.get("session") or "none"
    t_kill = time.monotonic()
    p.kill()
    p.wait()
    last = (events(out, "chunk") or [{}])[-1]
    meta = wait(lambda: (lambda m: m if m and m.get("live") is False else None)(
        json.load(open(os.path.join(ART, "sessions", sess, "metadata.json"))) if os.path.exists(
            os.path.join(ART, "sessions", sess, "metadata.json")) else None), 20) or {}
    g = [x for x in meta.get("gaps", []) if "link ended" in x.get("reason", "")]
    check("the link ends mid-capture: the session records a gap of the seconds after its last chunk (%s)"
          % [x.get("seconds") for x in g], len(g) == 1 and 0.05 <= g[0].get("seconds", 0) <= 2.5, meta.get("gaps"))
    s.close()

    # ---- our agent, real perf: every sample its perf script printed
    def middle(cs, rounds):
        """The chunks that must hold samples: not the first (perf script can
        print the first interval after the agent cut it), nor in rounds
        mode the last (a round begun just before the stop, late when the
        previous round's perf script was slow, can hold none)."""
        return cs[1:-1] if rounds else cs[1:]

    def chunks_flow(cs, rounds):
        """Samples keep arriving: in rounds mode every middle chunk holds
        some; in continuous mode no two chunks in a row after the first are
        empty (perf script, behind on a loaded machine, can print a whole
        interval late: [784, 0, 1262] once in CI, every sample there)."""
        m = middle(cs, rounds)
        if rounds:
            return all(x > 0 for x in m)
        return not any(a == 0 and b == 0 for a, b in zip(m, m[1:]))

    def live(label, rounds, interval, seconds, freq=99):
        art2 = os.path.join(WORK, "art-tail-" + label)
        s, port = server(art2)
        teedir = os.path.join(WORK, "perf-script-" + label)
        os.makedirs(teedir)
        wrapper = os.path.join(WORK, "perf-tee-" + label)
        open(wrapper, "w").write("#!/bin/sh\n# The device's perf, its script output kept (an independent count).\n"
                                 "if [ \"$1\" = script ]; then perf \"$@\" | tee \"%s/script.$$\"; exit 0; fi\n"
                                 "exec perf \"$@\"\n" % teedir)
        os.chmod(wrapper, 0o755)
        w = subprocess.Popen([WORKLOAD])
        procs.append(w)
        env = dict(os.environ, PERFLENS_TOKEN=CODE)
        if rounds:
            env["PERFLENS_TEST_ROUNDS"] = "1"
        # --text-chunks: the tail is checked in the text (extension 4 is
        # test_agent_perfdata's)
        a = subprocess.Popen([AGENT, "--server", "127.0.0.1:%d" % port, "--perf", wrapper, "--text-chunks"],
                             stdout=subprocess.DEVNULL, stderr=open(os.path.join(WORK, label + ".err"), "w"), env=env)
        procs.append(a)
        d = connected(s)
        dev = (d or {}).get("device", "none")
        if not rounds and freq == 99:
            cpu_units(s, dev, w.pid)
        r = s.call("start_capture", {"device": dev, "pid": w.pid, "frequency_hz": freq,
                                     "interval_seconds": interval, "authorization": AUTH,
                                     "pid_authorization": PAUTH}, timeout=120)
        t_start = time.time()
        mode = sc(r).get("capture", {}).get("mode")
        check("%s: started (%s mode)" % (label, mode), sc(r).get("capture", {}).get("ok") is True and
              mode == ("rounds" if rounds else "continuous"), result_text(r)[:300])
        time.sleep(seconds)
        stop = sc(s.call("stop_capture", {"device": dev}, timeout=60))
        # The capture's perf scripts: those written after the start answered
        # (the probe's ran before it).
        files = [f for f in glob.glob(os.path.join(teedir, "script.*")) if os.stat(f).st_mtime >= t_start]
        per_file = [sum(1 for l in open(f, errors="replace") if HEADER.match(l)) for f in files]
        printed = sum(per_file)
        an, total = analyze(s, stop.get("session"))
        cs = an.get("session", {}).get("chunk_samples") or []
        check("%s, %d s at %d s intervals: the session holds the %d samples its perf script printed on the device "
              "(%s; the session %d, chunks %s)" % (label, seconds, interval, printed, per_file, total, cs),
              printed > (100 if not rounds else 0) and total == printed and (sorted(per_file) == sorted(cs) if rounds else len(files) == 1),
              (files, stop, an.get("warnings")))
        # The first chunk may be empty: perf script can print the first
        # interval after the agent cut it (loaded machines, CI under ASan);
        # its samples are in the next chunks, as the totals above show.
        # A loaded machine can keep perf script from ending within the
        # agent's drain after the stop: then the session says so (the
        # tails_cut gap), and that is all it may say.
        cut = [g for g in stop.get("gaps") or [] if "tails_cut" in g.get("reason", "")]
        notes = [n for n in session_notes(an) if not ("session gap" in n and "tails_cut" in n)]
        check("%s: a good session, the data quality says nothing of it (chunks %s%s)"
              % (label, cs, "; its tail was cut at the stop, and the gap says so" if cut else ""),
              not notes and len(stop.get("gaps") or []) == len(cut) and cs and chunks_flow(cs, rounds),
              (session_notes(an), stop.get("gaps")))
        if not rounds and freq == 99:
            thread_rates(s, stop.get("session") or "none")
        s.close()
        w.kill()
        a.kill()

    def ticks(pid):
        f = open("/proc/%d/stat" % pid).read().rsplit(")", 1)[1].split()
        return int(f[11]) + int(f[12])

    def cpu_units(s, dev, pid):
        """list_device_processes: cpu_pct, percent of one CPU, against
        /proc's ticks of the workload over the call (the agent's 500 ms
        window lies inside it)."""
        hz = os.sysconf("SC_CLK_TCK")
        t0, k0 = time.monotonic(), ticks(pid)
        r = sc(s.call("list_device_processes", {"device": dev, "match": os.path.basename(WORKLOAD)}, timeout=60))
        want = 100.0 * (ticks(pid) - k0) / hz / (time.monotonic() - t0)
        got = next((x.get("cpu_pct") for x in r.get("processes", []) if x["pid"] == pid), None)
        check("list_device_processes: the workload's cpu_pct %s (percent of one CPU, unit named: %s) ~ /proc's %.0f"
              % (got, "cpu_unit" in r, want), got is not None and abs(got - want) <= 30 and
              "percent of one CPU" in r.get("cpu_unit", ""), r)
        r = sc(s.call("configure_device_metrics", {"device": dev, "threads": True, "interval_seconds": 1}, timeout=40))

    def thread_rates(s, session):
        """Thread metrics: each thread's cpu_pct per frame, which for the
        one-thread workload is its process's cpu_pct (both from /proc on
        the device, over the same ticks)."""
        th = sc(s.call("get_device_metrics", {"session": session, "type": "threads", "limit": 50}))
        pr = sc(s.call("get_device_metrics", {"session": session, "type": "process", "limit": 50}))
        rates = [t.get("cpu_pct") for f in th.get("frames", [])[1:] for t in f.get("threads", [])]
        procs_ = [f.get("cpu_pct") for f in pr.get("frames", [])[1:] if f.get("cpu_pct") is not None]
        mean = lambda v: sum(v) / len(v) if v else -1
        check("thread metrics carry per-thread cpu_pct (mean %.0f over %d frames) ~ the process's cpu_pct (mean %.0f)"
              % (mean([x for x in rates if x is not None]), len(rates), mean(procs_)),
              rates and None not in rates and procs_ and abs(mean(rates) - mean(procs_)) <= 20 and
              "percent of one CPU" in th.get("cpu_unit", ""), (rates, procs_))

    def cut_tail():
        """perf script still running when the agent's drain after the stop
        runs out (a wrapper holds its output open 8 s): the agent counts
        it (tails_cut) and the session has a gap saying so."""
        art3 = os.path.join(WORK, "art-tail-cut")
        s, port = server(art3)
        wrapper = os.path.join(WORK, "perf-slow-script")
        open(wrapper, "w").write("#!/bin/sh\n# perf script that ends 8 s after perf's own script\n"
                                 "if [ \"$1\" = script ]; then perf \"$@\"; sleep 8; exit 0; fi\n"
                                 "exec perf \"$@\"\n")
        os.chmod(wrapper, 0o755)
        w = subprocess.Popen([WORKLOAD])
        procs.append(w)
        a = subprocess.Popen([AGENT, "--server", "127.0.0.1:%d" % port, "--perf", wrapper, "--text-chunks"],
                             stdout=subprocess.DEVNULL, stderr=open(os.path.join(WORK, "cut.err"), "w"),
                             env=dict(os.environ, PERFLENS_TOKEN=CODE))
        procs.append(a)
        dev = (connected(s) or {}).get("device", "none")
        r = s.call("start_capture", {"device": dev, "pid": w.pid, "frequency_hz": 99, "interval_seconds": 1,
                                     "authorization": AUTH, "pid_authorization": PAUTH}, timeout=120)
        time.sleep(3)
        stop = sc(s.call("stop_capture", {"device": dev}, timeout=60))
        an, total = analyze(s, stop.get("session"))
        gaps = [g.get("reason", "") for g in stop.get("gaps") or []]
        check("our agent, perf script cut by the drain deadline at the stop: a gap says so (tails_cut %s; %s)"
              % ((stop.get("agent_counters") or {}).get("tails_cut"), gaps),
              any("tails_cut" in g for g in gaps) and
              any("session gap" in n and "tails_cut" in n for n in session_notes(an)),
              (result_text(r)[:200], stop, session_notes(an)))
        s.close()
        w.kill()
        a.kill()

    if AGENT:
        cut_tail()
        live("our agent", False, 2, 7)
        # Above 250 Hz perf record's buffers are small instead of unbuffered.
        live("our agent, 999 Hz", False, 2, 7, 999)
        # Rounds mode (no pipe): 5 s rounds, so the stop at 9 s comes well
        # into the second round, whose part is sent (the seed discarded it).
        live("our agent, rounds", True, 5, 9)
finally:
    reap(procs)
sys.exit(1 if fails else 0)
