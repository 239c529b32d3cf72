"""agent_live.py - our device agent (perflens-agent) against our server's
agent link, with real perf on this kernel (root, cpu-clock), driven through
perflens-mcp as an agent would.

  agent_live.py SERVER AGENT WORKLOAD BINARY [netns]

WORKLOAD is a stripped copy of BINARY: perf on the "device" leaves its
frames [unknown]; the server, given --binary BINARY, names them only
through the agent's maps files (the load base, the build-id), which a copy
of the session without them shows.

Loopback: the agent dials in, list_devices shows it paired by mutual proof,
list_device_processes finds the workload, start_capture (with both
phrases) runs the agent's probe and its continuous capture, chunks arrive
zstd-compressed, metrics of every enabled type (system, process, network)
arrive, the live session analyzes, stop_capture's next step analyzes the
finished one to exactly the samples the agent says it sent (its counters),
and list_hotspots finds the workload's own function.  Then pause_capture
stops chunks arriving (at most the one in flight lands while paused),
resume_capture resumes them, and start_capture's duration_seconds stops
a capture by itself, its session finalized (live: false) and analyzed to
what the agent counted; a target that exits mid-capture ends its session
(metadata "ended" says so) and the agent keeps serving.  With "netns": three
agents as separate hosts (network namespaces with veth pairs this test
makes), each with its own session that analyzes to its own counters.
"""
import glob, json, os, subprocess, sys, time
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mcp_client import *  # noqa

SERVER, AGENT, WORKLOAD, BINARY = sys.argv[1:5]
NETNS = len(sys.argv) > 5 and sys.argv[5] == "netns"
CODE = "live-" + os.urandom(8).hex()
AUTH = "I_EXPLICITLY_AUTHORIZE_TARGET_PROFILING"
PAUTH = "I_EXPLICITLY_AUTHORIZE_PID_ATTACH"
ART = os.path.join(WORK, "art-netns" if NETNS else "art")
procs = []
if not os.path.exists(WORKLOAD) and os.path.exists(WORKLOAD + ".on-the-device"):
    os.rename(WORKLOAD + ".on-the-device", WORKLOAD)  # the loopback run moved it


def sc(r):
    return (r or {}).get("result", {}).get("structuredContent") or {}


def wait(cond, timeout=20.0, step=0.2):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        v = cond()
        if v:
            return v
        time.sleep(step)
    return cond()


def spawn(argv, name, env=None):
    p = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=open(os.path.join(WORK, name + ".err"), "w"),
                         env=env)
    procs.append(p)
    return p


def cleanup():
    reap(procs)


def devices(s):
    return sc(s.call("list_devices", {})).get("devices", [])


def server(listen):
    code_file = os.path.join(WORK, "code")
    open(code_file, "w").write(CODE + "\n")
    s = Stdio([SERVER, "--allowed-root", WORK, "--artifact-root", ART, "--allow-writes", "--agent-listen", listen,
               "--agent-pairing-code-file", code_file, "--allow-device-control", "--binary", BINARY], "live")
    s.initialize()
    port = link_port(s)
    return s, port


def settled(s, dev, quiet):
    """The device's chunk count once it has not changed for `quiet` s (at
    most 15 s, scaled): a capture still running never settles at 1 s chunks."""
    last, since = chunks_of(s, dev), time.monotonic()
    end = since + 15 * SCALE
    while time.monotonic() < end:
        time.sleep(0.25)
        n = chunks_of(s, dev)
        if n != last:
            last, since = n, time.monotonic()
        elif time.monotonic() - since >= quiet:
            break
    return last


def capture_and_check(s, dev, pid, label, seconds=5):
    """start, watch, stop, analyze; the checks of one device."""
    r = s.call("start_capture", {"device": dev, "pid": pid, "frequency_hz": 199, "interval_seconds": 1,
                                 "authorization": AUTH, "pid_authorization": PAUTH}, timeout=90)
    st = sc(r)
    check("%s: start_capture ran the agent's probe and started (%s)" % (label, st.get("capture", {}).get("mode")),
          st.get("capture", {}).get("ok") is True and st.get("session"), result_text(r)[:400])
    session = st.get("session") or "none"
    d = wait(lambda: next((x for x in devices(s) if x["device"] == dev and x["chunks"] >= 2), None), 30)
    check("%s: chunks arrive while it runs (%s)" % (label, (d or {}).get("chunks")), d is not None)
    time.sleep(seconds)
    return session


def finish(s, dev, session, label, func, log=None):
    r = s.call("stop_capture", {"device": dev}, timeout=60)
    stop = sc(r)
    counters = stop.get("agent_counters") or {}
    steps = stop.get("next_steps") or [{}]
    check("%s: stop_capture names the session and analyze_profile next" % label,
          stop.get("session") == session and steps[0].get("tool") == "analyze_profile", result_text(r)[:400])
    sdir = os.path.join(ART, "sessions", session)
    zst = sorted(glob.glob(os.path.join(sdir, "chunk_*.zst")))
    check("%s: %d chunks on disk, zstd as the agent sent them (%s sent)" % (label, len(zst), counters.get("chunks_sent")),
          zst and len(zst) == counters.get("chunks_sent") and
          all(open(f, "rb").read(4) == b"\x28\xb5\x2f\xfd" for f in zst), (zst, counters))
    # The device's copy of the workload is not here: only --binary is.
    if os.path.exists(WORKLOAD):
        os.rename(WORKLOAD, WORKLOAD + ".on-the-device")
    r = s.call("analyze_profile", steps[0].get("arguments", {}), timeout=90)
    an = sc(r)
    total = sum(e["samples"] for e in an.get("events", []))
    check("%s: the session's total samples %d equal the agent's samples_sent %s" % (label, total,
          counters.get("samples_sent")), (total > 0 or log) and total == counters.get("samples_sent"),
          (an.get("records"), an.get("warnings"), counters))
    if total == 0 and log:
        # The link's part held (nothing lost); the agent's perf gave no sample.
        tail = " ".join(l for l in open(log, errors="replace").read().splitlines()[-8:] if "metrics:" not in l)
        print("skip - %s: the agent sent no samples, so no hotspots to look for (its log: %s)" % (label, tail[:400]))
        return an, counters
    hs = [x for x in an.get("next_steps", []) if x["tool"] == "list_hotspots"]
    r = s.call("list_hotspots", hs[0]["arguments"]) if hs else None
    names = [h.get("symbol") for h in sc(r).get("hotspots", [])]
    check("%s: list_hotspots finds the workload's %s (named through the maps: the device ran it stripped)"
          % (label, func), func in names, names[:8])
    return an, counters


def chunks_of(s, dev):
    return next((x["chunks"] for x in devices(s) if x["device"] == dev), -1)


def session_total(s, session):
    r = s.call("analyze_profile", {"path": "perflens://artifacts/sessions/%s" % session}, timeout=90)
    return sum(e["samples"] for e in sc(r).get("events", [])), sc(r).get("session", {})


def finalized(session):
    """A condition for wait(): the session's metadata once it is final."""
    def final():
        try:
            m = json.load(open(os.path.join(ART, "sessions", session, "metadata.json")))
        except (OSError, ValueError):
            return None
        return m if m.get("live") is False else None
    return final


def check_last_session_step(s, dev, session, label):
    """No stop_capture answered for a capture that stopped by itself:
    list_devices names its finished session and analyze_profile on it."""
    r = sc(s.call("list_devices", {}))
    d = next((x for x in r.get("devices", []) if x["device"] == dev), {})
    steps = [x for x in r.get("next_steps", []) if x["tool"] == "analyze_profile"]
    check("%s: list_devices names the finished session (last_session) and analyze_profile on it next" % label,
          d.get("last_session") == session and (d.get("session") is None or d.get("session_chunks") == 0) and
          any(x["arguments"].get("path", "").endswith(session) for x in steps), (d.get("last_session"), steps))


def pause_resume(s, dev, pid, sent_before):
    """pause stops chunks arriving; resume restarts them; stop names the
    session; it analyzes to the samples the agent sent during it."""
    # Disk and per-thread metrics are opt-in: configure_device_metrics.
    r = s.call("configure_device_metrics", {"device": dev, "interval_seconds": 0}, timeout=40)
    check("configure_device_metrics: an interval of 0 is refused before the device", is_tool_error(r, "interval"),
          result_text(r)[:300])
    r = s.call("configure_device_metrics", {"device": dev, "disk": True, "threads": True, "interval_seconds": 1},
               timeout=40)
    m = sc(r).get("metrics") or {}
    check("configure_device_metrics: the device answers disk and threads on, every 1 s",
          m.get("disk") is True and m.get("threads") is True and m.get("interval_seconds") == 1 and
          m.get("network") is True, result_text(r)[:300])
    r = s.call("start_capture", {"device": dev, "pid": pid, "frequency_hz": 199, "interval_seconds": 1,
                                 "authorization": AUTH, "pid_authorization": PAUTH}, timeout=90)
    session = sc(r).get("session") or "none"
    base = chunks_of(s, dev)
    wait(lambda: chunks_of(s, dev) >= base + 2, 30)
    r = s.call("pause_capture", {"device": dev}, timeout=40)
    check("pause_capture: the device is paused", sc(r).get("state") == "paused", result_text(r)[:300])
    c0 = chunks_of(s, dev)
    cs = settled(s, dev, 1.5 * SCALE)   # what was in flight at the pause lands first
    time.sleep(3)  # three chunk intervals
    c1 = chunks_of(s, dev)
    check("paused at 1 s chunks: the chunks in flight landed (%d), then none in 3 s (%d)" % (cs - c0, c1 - cs),
          0 <= cs - c0 <= 2 and c1 == cs, (c0, cs, c1))
    r = s.call("resume_capture", {"device": dev}, timeout=40)
    check("resume_capture without the collection phrase: refused, naming it",
          is_tool_error(r, "authorization"), result_text(r)[:300])
    r = s.call("resume_capture", {"device": dev, "authorization": AUTH}, timeout=40)
    check("resume_capture: profiling again", sc(r).get("state") == "profiling", result_text(r)[:300])
    c2 = wait(lambda: (lambda n: n if n >= c1 + 2 else None)(chunks_of(s, dev)), 20)
    check("after resume chunks arrive again (%s after %d)" % (c2, c1), c2 is not None, chunks_of(s, dev))
    r = s.call("stop_capture", {"device": dev}, timeout=60)
    stop = sc(r)
    steps = stop.get("next_steps") or [{}]
    check("pause/resume: stop_capture names the session and analyze_profile on it next",
          stop.get("session") == session and steps[0].get("tool") == "analyze_profile" and
          steps[0].get("arguments", {}).get("path", "").endswith(session), result_text(r)[:400])
    for typ in ("disk", "threads"):
        r = s.call("get_device_metrics", {"session": session, "type": typ, "limit": 5})
        check("after configure_device_metrics, %s metrics arrived in the session (%s frames)"
              % (typ, sc(r).get("page", {}).get("total_items")),
              sc(r).get("frames") and all(f["type"] == typ for f in sc(r)["frames"]), result_text(r)[:300])
    sent = (stop.get("agent_counters") or {}).get("samples_sent", 0)
    total, meta = session_total(s, session)
    check("pause/resume: the session's %d samples = the agent's samples_sent during it (%d)" % (total, sent - sent_before),
          total > 0 and total == sent - sent_before and meta.get("live") is False, (total, sent, sent_before, meta))
    return sent


def auto_stop(s, dev, pid, sent_before, seconds=4):
    """duration_seconds: the link stops the capture by itself."""
    r = s.call("start_capture", {"device": dev, "pid": pid, "frequency_hz": 199, "interval_seconds": 1,
                                 "duration_seconds": seconds, "authorization": AUTH, "pid_authorization": PAUTH},
               timeout=90)
    session = sc(r).get("session") or "none"
    t0 = time.monotonic()
    check("start_capture with duration_seconds %d started" % seconds, sc(r).get("capture", {}).get("ok") is True,
          result_text(r)[:300])
    m = wait(finalized(session), seconds + 15 * SCALE, 0.1)
    dt = time.monotonic() - t0
    d = next((x for x in devices(s) if x["device"] == dev), {})
    # The duration, the agent's stop (it cuts and sends the chunk in
    # flight), the link's 2 s grace, and this poll, on a loaded machine.
    check("duration_seconds %d: the capture stopped by itself and the session was finalized after %.1f s "
          "(the duration, the agent's stop and the 2 s grace)" % (seconds, dt),
          m is not None and seconds <= dt <= seconds + 2 + 6 * SCALE and d.get("state") == "connected", (dt, m, d.get("state")))
    sent = ((m or {}).get("agent_counters") or {}).get("samples_sent", 0)
    total, meta = session_total(s, session)
    if total == 0 and sent == sent_before and m is not None:
        # A loaded machine (CI's scripts side by side) can keep the
        # device's perf from printing a sample within the 4 s.
        print("skip - duration: the device's perf sent no sample in %d s (a loaded machine): nothing to "
              "count (the session and samples_sent agree on 0)" % seconds)
    else:
        check("duration: the finalized session's %d samples = the agent's samples_sent during it (%d)"
              % (total, sent - sent_before), total > 0 and total == sent - sent_before and meta.get("live") is False,
              (total, sent, sent_before, meta))
    check_last_session_step(s, dev, session, "duration")
    r = s.call("list_sessions", {"device": dev})
    check("list_sessions shows the auto-stopped session finished",
          any(x["session"] == session and x["live"] is False for x in sc(r).get("sessions", [])), result_text(r)[:300])
    return sent


def target_exits(s, dev, sent_before):
    """The profiled process exits mid-capture: the agent ends its capture
    and says why in status; the link's next ping sees it, the session
    records it (ended) and is finalized; the agent keeps serving."""
    victim = spawn([BINARY], "victim")
    r = s.call("start_capture", {"device": dev, "pid": victim.pid, "frequency_hz": 199, "interval_seconds": 1,
                                 "authorization": AUTH, "pid_authorization": PAUTH}, timeout=120)
    session = sc(r).get("session") or "none"
    base = chunks_of(s, dev)
    wait(lambda: chunks_of(s, dev) >= base + 2, 30)
    victim.kill()
    victim.wait()
    t0 = time.monotonic()
    m = wait(finalized(session), 25, 0.2) or {}
    dt = time.monotonic() - t0
    d = next((x for x in devices(s) if x["device"] == dev), {})
    check("the target exits mid-capture: the session is finalized after %.1f s (a ping interval and the grace), "
          "ended: %s" % (dt, m.get("ended")),
          m.get("live") is False and "pid %d) exited" % victim.pid in (m.get("ended") or "") and
          d.get("state") == "connected", (m, d.get("state"), d.get("reason")))
    sent = (m.get("agent_counters") or {}).get("samples_sent", 0)
    total, meta = session_total(s, session)
    check("the ended session's %d samples = the agent's samples_sent during it (%d)" % (total, sent - sent_before),
          total > 0 and total == sent - sent_before, (total, sent, sent_before, meta))
    check_last_session_step(s, dev, session, "target exited")
    r = s.call("stop_capture", {"device": dev}, timeout=40)
    check("stop_capture after the capture ended by itself: refused, naming analyze_profile on its session",
          is_tool_error(r, "analyze_profile", session), result_text(r)[:300])
    r = s.call("list_device_processes", {"device": dev, "limit": 200}, timeout=60)
    pids = [p["pid"] for p in sc(r).get("processes", [])]
    check("the agent keeps serving after its target exited (list_device_processes: %d processes)" % len(pids),
          pids and victim.pid not in pids, result_text(r)[:300])
    return sent


try:
    if not NETNS:
        s, port = server("127.0.0.1:0")
        w = spawn([WORKLOAD], "workload")
        env = dict(os.environ, PERFLENS_TOKEN=CODE)
        # --text-chunks: these checks read the device's perf script text
        # (perf.data chunks, extension 4, are test_agent_perfdata's)
        spawn([AGENT, "--server", "127.0.0.1:%d" % port, "--text-chunks"], "agent", env)
        d = wait(lambda: next((x for x in devices(s) if x["state"] == "connected"), None), 20)
        check("the agent dials in and pairs by mutual proof (features %s)" % (d or {}).get("features"),
              d and d["features"] == ["maps", "counters"] and not d["legacy"], (d, open(os.path.join(WORK, "agent.err")).read()[-500:]))
        dev = (d or {}).get("device", "none")
        r = s.call("list_device_processes", {"device": dev, "match": os.path.basename(WORKLOAD)}, timeout=60)
        pids = [p["pid"] for p in sc(r).get("processes", [])]
        check("list_device_processes finds the workload (pid %d)" % w.pid, w.pid in pids, result_text(r)[:300])
        session = capture_and_check(s, dev, w.pid, "loopback")
        r = s.call("analyze_profile", {"path": "perflens://artifacts/sessions/%s" % session}, timeout=90)
        live = sc(r).get("session", {})
        check("the live session analyzes: live, %s chunks read" % live.get("chunks_read"),
              live.get("live") is True and live.get("chunks_read", 0) >= 1, result_text(r)[:300])
        check("the agent's maps file came (extension 2)",
              glob.glob(os.path.join(ART, "sessions", session, "maps_*.json")), os.listdir(os.path.join(ART, "sessions", session)))
        an, counters = finish(s, dev, session, "loopback", "spin_leaf")
        check("the analysis took the maps as mappings", an.get("session", {}).get("mappings", 0) >= 1, an.get("session"))
        # The oracle of the naming: the same chunks without the maps files.
        bare = os.path.join(WORK, "bare-session")
        os.makedirs(bare)
        for f in glob.glob(os.path.join(ART, "sessions", session, "chunk_*")):
            open(os.path.join(bare, os.path.basename(f)), "wb").write(open(f, "rb").read())
        r = s.call("analyze_profile", {"path": bare}, timeout=90)
        hs = [x for x in sc(r).get("next_steps", []) if x["tool"] == "list_hotspots"]
        names = [h.get("symbol") for h in sc(s.call("list_hotspots", hs[0]["arguments"])).get("hotspots", [])] if hs else []
        check("without the maps files the stripped workload's frames stay [unknown] (%s)" % names[:3],
              "spin_leaf" not in names and "[unknown]" in names, names[:8])
        for typ in ("system", "process", "network"):
            r = s.call("get_device_metrics", {"session": session, "type": typ, "limit": 5})
            check("metrics of type %s arrived (%s frames)" % (typ, sc(r).get("page", {}).get("total_items")),
                  sc(r).get("frames") and all(f["type"] == typ for f in sc(r)["frames"]), result_text(r)[:300])
        check("the pairing code is in no log, result or state file",
              CODE not in s.stderr() and not any(CODE in open(f).read() for f in glob.glob(os.path.join(ART, "devices", "*.json"))))
        sent = pause_resume(s, dev, w.pid, counters.get("samples_sent", 0))
        sent = auto_stop(s, dev, w.pid, sent)
        target_exits(s, dev, sent)
        s.close()
    else:
        s, port = server("0.0.0.0:0")
        hosts = []
        for k in range(3):
            ns, a, b = "pl-link-%d-%d" % (os.getpid(), k), "plv%d%d" % (os.getpid() % 10000, k), "plp%d%d" % (os.getpid() % 10000, k)
            ip_host, ip_ns = "10.231.%d.1" % k, "10.231.%d.2" % k
            cmds = [["ip", "netns", "add", ns], ["ip", "link", "add", a, "type", "veth", "peer", "name", b],
                    ["ip", "link", "set", b, "netns", ns], ["ip", "addr", "add", ip_host + "/24", "dev", a],
                    ["ip", "link", "set", a, "up"], ["ip", "netns", "exec", ns, "ip", "addr", "add", ip_ns + "/24", "dev", b],
                    ["ip", "netns", "exec", ns, "ip", "link", "set", b, "up"],
                    ["ip", "netns", "exec", ns, "ip", "link", "set", "lo", "up"]]
            for c in cmds:
                subprocess.run(c, check=True, capture_output=True)
            hosts.append((ns, a, ip_host, ip_ns))
        with open(os.path.join(WORK, "netns"), "w") as f:
            f.write("\n".join("%s %s" % (h[0], h[1]) for h in hosts) + "\n")
        check("three network namespaces with veth pairs", True)
        env = dict(os.environ, PERFLENS_TOKEN=CODE)
        work = {}
        for ns, a, ip_host, ip_ns in hosts:
            wp = spawn(["ip", "netns", "exec", ns, WORKLOAD], "w-" + ns)
            spawn(["ip", "netns", "exec", ns, AGENT, "--server", "%s:%d" % (ip_host, port), "--text-chunks"], "a-" + ns,
                  env)
            work[ip_ns] = wp
        ds = wait(lambda: (lambda l: l if len(l) == 3 else None)(
            [x for x in devices(s) if x["state"] == "connected"]), 30) or []
        check("three agents from three hosts (%s)" % sorted(x["address"] for x in ds),
              sorted(x["address"] for x in ds) == sorted(work), [x.get("address") for x in devices(s)])

        def child_pid(wrapper):
            # ip netns exec execs the workload: same pid.
            return wrapper.pid
        # The three probes run at once: send, then wait for each answer.
        rids = []
        for x in ds:
            s.next_id += 1
            rids.append((x, s.next_id))
            s.send({"jsonrpc": "2.0", "id": s.next_id, "method": "tools/call", "params": {"name": "start_capture",
                    "arguments": {"device": x["device"], "pid": child_pid(work[x["address"]]), "frequency_hz": 199,
                                  "interval_seconds": 1, "authorization": AUTH, "pid_authorization": PAUTH}}})
        sessions = {}
        for x, rid in rids:
            r = s.wait_for(rid, 120)
            sessions[x["device"]] = sc(r).get("session")
            check("%s: started" % x["address"], sc(r).get("capture", {}).get("ok") is True, result_text(r)[:300])
        check("three distinct sessions", len(set(filter(None, sessions.values()))) == 3, sessions)
        wait(lambda: all(x["chunks"] >= 2 for x in devices(s) if x["device"] in sessions), 40)
        time.sleep(3)
        for x in ds:
            if not sessions.get(x["device"]):
                continue
            ns = next(h[0] for h in hosts if h[3] == x["address"])
            finish(s, x["device"], sessions[x["device"]], x["address"], "spin_leaf",
                   log=os.path.join(WORK, "a-" + ns + ".err"))
        s.close()
finally:
    cleanup()
sys.exit(1 if fails else 0)
