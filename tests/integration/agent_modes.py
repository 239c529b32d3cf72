"""agent_modes.py - device capture modes and capabilities, through
perflens-mcp as an agent drives it.

  agent_modes.py SERVER AGENT WORKLOAD

WORKLOAD is built without frame pointers: main -> outer_caller ->
hot_leaf, spinning.  Our agent (real perf, root) dials the server.
- Before any capture, list_devices shows what perf can do there
  (capabilities.perf), each against an independent oracle on this
  machine: the PMU (perf stat -e cycles counts or says <not supported>),
  perf_event_paranoid (/proc), dwarf unwinding (perf version
  --build-options), counting.
- call_graph=dwarf: hot_leaf's samples have outer_caller above them in
  the device's own perf script text (the chunks, decompressed by the zstd
  command), and the session's analysis gives outer_caller, with callees,
  as many samples as that text has with it on the stack; fp on the same
  build loses it in most samples (the reason dwarf is offered).
- call_graph=none: the chunks hold no frame lines, and the answer says
  callgraph "".
- Source lines: analyze_profile(srcline) of a session (samples_with_lines
  was 0 before: text frames kept no address), with the device's
  binary moved away and the server's --binary copy matched by the maps'
  build-id: hot_leaf's samples per line equal eu-addr2line's for the
  leaf addresses the device's perf script printed.
- counting=true: the chunks hold perf stat sections and no sample; their
  task-clock is the workload's CPU time from /proc over the capture
  (within 25%), and the data quality does not call the empty chunks lost.
- A device whose perf cannot unwind DWARF (a perf wrapper printing
  libunwind and libdw-dwarf-unwind OFF): list_devices says call_graphs
  [fp, none], and start_capture(call_graph=dwarf) is refused before the
  agent is asked, naming fp and none.
- A seed agent (fake_agent.py --mode legacy: no perf_caps, no counting):
  counting is refused naming what it can do, and dwarf when its probe
  said fp; before its probe (--unprobed) call_graph is sent and the
  answer's call_graph_note says the seed recorded with its own method.
- A device whose perf_caps say it cannot sample (fake_agent.py
  --perf-caps): a sampling start is refused naming counting and the
  device's reason.
"""
import glob, json, os, re, subprocess, sys, time
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mcp_client import *  # noqa

SERVER, AGENT, WORKLOAD = sys.argv[1:4]
HERE = os.path.dirname(os.path.abspath(__file__))
CODE = "modes-" + os.urandom(6).hex()
AUTH = "I_EXPLICITLY_AUTHORIZE_TARGET_PROFILING"
PAUTH = "I_EXPLICITLY_AUTHORIZE_PID_ATTACH"
HEADER = re.compile(r"^\s*\S.*\s\d+/\d+\s+\d+\.\d+:\s")  # comm pid/tid time: (flat lines are padded)
procs = []


def server(art, *extra):
    code_file = os.path.join(WORK, "code")
    open(code_file, "w").write(CODE + "\n")
    s = Stdio([SERVER, "--allowed-root", WORK, "--artifact-root", art, "--allow-writes", "--agent-listen",
               "127.0.0.1:0", "--agent-pairing-code-file", code_file, "--allow-device-control",
               "--agent-allow-legacy", "loopback"] + list(extra), "modes")
    s.initialize()
    port = link_port(s)
    return s, port


def agent(port, name, perf="perf"):
    env = dict(os.environ, PERFLENS_TOKEN=CODE)
    # --text-chunks: the checks read the device's perf script text
    # (perf.data chunks, extension 4, are test_agent_perfdata's)
    a = subprocess.Popen([AGENT, "--server", "127.0.0.1:%d" % port, "--perf", perf, "--text-chunks"],
                         stdout=subprocess.DEVNULL,
                         stderr=open(os.path.join(WORK, name + ".err"), "w"), env=env)
    procs.append(a)
    return a


def connected(s, gone=(), want=lambda perf: True):
    """The first connected device not in gone whose capabilities.perf
    is known (the status at pairing came back) and passes want."""
    def f():
        for d in sc(s.call("list_devices", {})).get("devices", []):
            perf = (d.get("capabilities") or {}).get("perf", {})
            if d["state"] == "connected" and d["device"] not in gone and perf.get("source") and want(perf):
                return d
    return until(f, 20 * SCALE, 0.2)


def chunks_text(art, session):
    out = []
    for z in sorted(glob.glob(os.path.join(art, "sessions", session or "none", "chunk_*.zst"))):
        out.append(subprocess.run(["zstd", "-d", "-c", z], capture_output=True).stdout.decode(errors="replace"))
    return out


def samples(text):
    """Each sample of perf script text (stat sections cut): its header and
    frame lines."""
    body = re.sub(r"### PERF_STAT ###.*?seconds time elapsed\n?", "", text, flags=re.S)
    out, cur = [], None
    for line in body.splitlines():
        if HEADER.match(line):
            cur = [line]
            out.append(cur)
        elif cur is not None and line.strip():
            cur.append(line)
        else:
            cur = None
    return out


def ticks(pid):
    f = open("/proc/%d/stat" % pid).read().rsplit(")", 1)[1].split()
    return int(f[11]) + int(f[12])


def capture(s, dev, pid, seconds, **extra):
    args = {"device": dev, "pid": pid, "frequency_hz": 199, "interval_seconds": 2,
            "authorization": AUTH, "pid_authorization": PAUTH}
    args.update(extra)
    r = s.call("start_capture", args, timeout=120)
    k0, t0 = ticks(pid), time.monotonic()
    time.sleep(seconds)
    # The workload's CPU from the start's answer to the stop's request:
    # the window perf stat counted (a stop mid-round sends what it counted).
    cpu, secs = (ticks(pid) - k0) / os.sysconf("SC_CLK_TCK"), time.monotonic() - t0
    stop = sc(s.call("stop_capture", {"device": dev}, timeout=60))
    return r, stop, cpu, secs


try:
    ART = os.path.join(WORK, "art-modes")
    # The server's own copy of the device's binary (the device's is
    # deleted before the lines are asked: only the copy can give them).
    os.makedirs(os.path.join(WORK, "server-copy"))
    COPY = os.path.join(WORK, "server-copy", "nofp")
    subprocess.run(["cp", WORKLOAD, COPY], check=True)
    s, port = server(ART, "--binary", COPY)
    w = subprocess.Popen([WORKLOAD])
    procs.append(w)
    ours = agent(port, "ours")
    d = connected(s) or {}
    dev = d.get("device", "none")
    perf = (d.get("capabilities") or {}).get("perf", {})

    # ---- capabilities before any capture, against this machine
    cyc = subprocess.run(["perf", "stat", "-x", ",", "-e", "cycles:u", "true"], capture_output=True, text=True).stderr
    pmu_here = bool(re.search(r"^\d+,", cyc, re.M))
    paranoid = int(open("/proc/sys/kernel/perf_event_paranoid").read())
    bo = subprocess.run(["perf", "version", "--build-options"], capture_output=True, text=True).stdout
    dwarf_here = bool(re.search(r"(libunwind|libdw-dwarf-unwind): \[ on", bo))
    want_cg = ["fp"] + (["dwarf"] if dwarf_here else []) + ["none"]
    check("before any capture, list_devices shows the device's perf: pmu %s (perf stat cycles: %s), paranoid %s "
          "(/proc %d), call_graphs %s (build options: %s), counting %s" % (
              perf.get("pmu"), pmu_here, perf.get("perf_event_paranoid"), paranoid, perf.get("call_graphs"),
              want_cg, perf.get("counting")),
          perf.get("pmu") is pmu_here and perf.get("perf_event_paranoid") == paranoid and
          perf.get("call_graphs") == want_cg and perf.get("counting") is True and perf.get("sampling") is True and
          d.get("capture") is None, d)

    # ---- call_graph=dwarf and fp on a build without frame pointers
    chain = {}
    for cg in (["dwarf"] if dwarf_here else []) + ["fp"]:
        r, stop, cpu, secs = capture(s, dev, w.pid, 5, call_graph=cg)
        ans = sc(r).get("capture") or {}
        texts = chunks_text(ART, stop.get("session"))
        smp = [x for t in texts for x in samples(t)]
        leaf = [x for x in smp if any("hot_leaf" in f for f in x[1:2])]
        both = [x for x in leaf if any("outer_caller" in f for f in x[2:])]
        under = [x for x in smp if any("outer_caller" in f for f in x[1:])]
        an = sc(s.call("analyze_profile", {"path": "perflens://artifacts/sessions/%s" % stop.get("session")},
                       timeout=120))
        hs = sc(s.call("list_hotspots", {"analysis_id": an.get("analysis_id"), "sort": "inclusive", "limit": 20},
                       timeout=60))
        tot = next((h for h in hs.get("hotspots", []) if h.get("symbol") == "outer_caller"), {})
        chain[cg] = (len(both), len(leaf), tot)
        check("call_graph=%s: the agent answers callgraph %s; the session has %d samples, %d in hot_leaf, %d of them "
              "under outer_caller in the device's perf script text" % (cg, ans.get("callgraph"), len(smp),
                                                                      len(leaf), len(both)),
              ans.get("callgraph") == cg and len(leaf) > 30, (ans, stop.get("gaps")))
        if cg == "dwarf":
            got = (tot.get("inclusive") or {}).get("samples")
            check("call_graph=dwarf: the analysis gives outer_caller %s samples with callees = the chunks' %d with "
                  "it on the stack (hot_leaf under it in %d%% of hot_leaf's)" % (
                      got, len(under), 100 * len(both) // max(1, len(leaf))),
                  len(both) >= 0.9 * len(leaf) and got == len(under), (tot, hs.get("hotspots", [])[:3]))
    if "dwarf" in chain:
        check("fp on the same build reaches outer_caller from hot_leaf in %d of %d samples, dwarf in %d of %d"
              % (chain["fp"][0], chain["fp"][1], chain["dwarf"][0], chain["dwarf"][1]),
              chain["fp"][0] < 0.5 * chain["fp"][1] and chain["dwarf"][0] >= 0.9 * chain["dwarf"][1], chain)

    # ---- call_graph=none: flat samples
    r, stop, cpu, secs = capture(s, dev, w.pid, 3, call_graph="none")
    smp = [x for t in chunks_text(ART, stop.get("session")) for x in samples(t)]
    deep = [x for x in smp if len(x) > 2]
    check("call_graph=none: callgraph '%s', %d samples, %d with more than one frame" % (
        (sc(r).get("capture") or {}).get("callgraph"), len(smp), len(deep)),
        (sc(r).get("capture") or {}).get("callgraph") == "" and len(smp) > 30 and not deep,
        deep[:2] or [t[:600] for t in chunks_text(ART, stop.get("session"))[:2]] or stop)

    # ---- source lines of device samples, from the server's copy
    r, stop, cpu, secs = capture(s, dev, w.pid, 3, call_graph="fp")
    leaf_ips = [x[1].split()[0] if len(x) > 1 else None for t in chunks_text(ART, stop.get("session"))
                for x in samples(t) if any("hot_leaf" in f for f in x[:2])]
    leaf_ips = [ip for ip in leaf_ips if ip]
    # perf 6.1 prints a frame's address in the module (0x1152) where it
    # resolved one, else the runtime address: eu-addr2line -e on the
    # binary for the first, -p on the live process for the second.
    rel = ["0x" + ip for ip in leaf_ips if int(ip, 16) < (1 << 32)]
    absl = ["0x" + ip for ip in leaf_ips if int(ip, 16) >= (1 << 32)]
    a2l = (subprocess.run(["eu-addr2line", "-e", COPY] + rel, capture_output=True, text=True).stdout.split()
           if rel else []) + \
          (subprocess.run(["eu-addr2line", "-p", str(w.pid)] + absl, capture_output=True, text=True).stdout.split()
           if absl else [])
    want = {}
    for loc in a2l:
        m = re.match(r"^(/\S+?):(\d+)(?::\d+)?$", loc)
        if m and m.group(1).endswith("nofp.c"):
            want[int(m.group(2))] = want.get(int(m.group(2)), 0) + 1
    moved = WORKLOAD + ".device-copy-gone"
    os.rename(WORKLOAD, moved)  # the device's file is no longer where its maps say
    an = sc(s.call("analyze_profile", {"path": "perflens://artifacts/sessions/%s" % stop.get("session"),
                                       "srcline": True}, timeout=120))
    hs = sc(s.call("list_hotspots", {"analysis_id": an.get("analysis_id"), "limit": 5}, timeout=60))
    hid = next((h["hotspot_id"] for h in hs.get("hotspots", []) if h.get("symbol") == "hot_leaf"), "none")
    ctx = sc(s.call("source_context", {"analysis_id": an.get("analysis_id"), "hotspot_id": hid, "hot_lines": 20},
                    timeout=60))
    os.rename(moved, WORKLOAD)
    got = {}
    for f in ctx.get("files", []):
        if f.get("recorded_path", "").endswith("nofp.c"):
            for h in f.get("hot_lines", []):
                if h.get("self_samples"):
                    got[h["line"]] = h["self_samples"]
    check("lines of device samples from the server's --binary copy (the device's file gone): hot_leaf's per line "
          "%s = eu-addr2line's of the %d leaf addresses %s (samples_with_lines %s)" % (
              sorted(got.items()), len(leaf_ips), sorted(want.items()), ctx.get("samples_with_lines")),
          # at least 10: a niced run beside CI's other scripts got 21 in 3 s
          len(leaf_ips) >= 10 and got == want and sum(want.values()) == len(leaf_ips),
          (ctx.get("samples_without_lines"), an.get("missing_binaries"), result_text(r)[:100]))

    # ---- counting: perf stat only
    r, stop, cpu, secs = capture(s, dev, w.pid, 5, counting=True)
    texts = chunks_text(ART, stop.get("session"))
    smp = [x for t in texts for x in samples(t)]
    tc = sum(float(m.group(1).replace(",", "")) for t in texts
             for m in re.finditer(r"^\s*([\d,.]+)\s+msec task-clock", t, re.M)) / 1000
    an = sc(s.call("analyze_profile", {"path": "perflens://artifacts/sessions/%s" % stop.get("session")},
                   timeout=120))
    lost = [n for n in an.get("warnings") or [] if "holds no sample" in n or "missing" in n]
    check("counting: mode %s, %d chunks, %d samples, task-clock %.2f s = the workload's CPU %.2f s over %.1f s "
          "(from /proc)" % ((sc(r).get("capture") or {}).get("mode"), len(texts), len(smp), tc, cpu, secs),
          (sc(r).get("capture") or {}).get("mode") == "counting" and len(texts) >= 2 and not smp and
          cpu > 0.3 and abs(tc - cpu) <= 0.25 * cpu, texts[:1])
    check("counting: the data quality calls no empty chunk lost (%s)" % lost, not lost and an.get("session"),
          an.get("warnings"))
    ours.kill()  # (a --server agent dials back in after a disconnect)
    ours.wait()
    s.call("disconnect_device", {"device": dev}, timeout=30)

    # ---- a device whose perf cannot unwind DWARF
    wrapper = os.path.join(WORK, "perf-nodwarf")
    open(wrapper, "w").write("#!/bin/sh\n# perf as built without libunwind and libdw.\n"
                             "if [ \"$1\" = version ] && [ \"$2\" = --build-options ]; then\n"
                             "  perf version --build-options | sed -E 's/(unwind: +\\[ )on /\\1OFF/'; exit 0\nfi\n"
                             "exec perf \"$@\"\n")
    os.chmod(wrapper, 0o755)
    nodwarf = agent(port, "nodwarf", wrapper)
    d2 = connected(s, [dev]) or {}
    dev2 = d2.get("device", "none")
    cg2 = ((d2.get("capabilities") or {}).get("perf") or {}).get("call_graphs")
    r = s.call("start_capture", {"device": dev2, "pid": w.pid, "call_graph": "dwarf",
                                 "authorization": AUTH, "pid_authorization": PAUTH}, timeout=60)
    after = next((x for x in sc(s.call("list_devices", {})).get("devices", []) if x["device"] == dev2), {})
    check("a perf without DWARF unwinding: call_graphs %s, and call_graph=dwarf is refused naming fp and none "
          "before the agent is asked (%s)" % (cg2, result_text(r)[:200]),
          cg2 == ["fp", "none"] and is_tool_error(r, "dwarf", "fp, none") and after.get("capture") is None,
          (result_text(r), after.get("capture")))
    nodwarf.kill()
    nodwarf.wait()
    s.call("disconnect_device", {"device": dev2}, timeout=30)

    # ---- a seed agent: no counting mode in its protocol
    fake = subprocess.Popen([sys.executable, os.path.join(HERE, "fake_agent.py"), "--server", "127.0.0.1:%d" % port,
                             "--code", CODE, "--mode", "legacy", "--interval", "1"],
                            stdout=open(os.path.join(WORK, "seed.out"), "w"), stderr=subprocess.STDOUT)
    procs.append(fake)
    d3 = connected(s, [dev, dev2], lambda perf: perf.get("counting") is False) or {}
    dev3 = d3.get("device", "none")
    # (the fake's status, sent at pairing, names its probe's call graph)
    d3 = until(lambda: next((x for x in sc(s.call("list_devices", {})).get("devices", []) if x["device"] == dev3
                             and (x.get("capabilities") or {}).get("perf", {}).get("call_graphs")), None), 10) or d3
    p3 = (d3.get("capabilities") or {}).get("perf") or {}
    r = s.call("start_capture", {"device": dev3, "pid": 1, "counting": True,
                                 "authorization": AUTH, "pid_authorization": PAUTH}, timeout=60)
    r2 = s.call("start_capture", {"device": dev3, "pid": 1, "call_graph": "dwarf",
                                  "authorization": AUTH, "pid_authorization": PAUTH}, timeout=60)
    check("a seed agent: counting %s, call_graphs %s; counting refused naming what it can (%s); dwarf refused "
          "naming fp (%s)" % (p3.get("counting"), p3.get("call_graphs"), result_text(r)[:160], result_text(r2)[:160]),
          p3.get("counting") is False and is_tool_error(r, "cannot count", "fp") and
          is_tool_error(r2, "dwarf", "fp"), (p3, result_text(r), result_text(r2)))
    fake.kill()
    fake.wait()

    # ---- a seed agent before its probe: call_graph is sent, and the
    # answer says the seed used its own method
    fake = subprocess.Popen([sys.executable, os.path.join(HERE, "fake_agent.py"), "--server", "127.0.0.1:%d" % port,
                             "--code", CODE, "--mode", "legacy", "--interval", "1", "--unprobed"],
                            stdout=open(os.path.join(WORK, "seed2.out"), "w"), stderr=subprocess.STDOUT)
    procs.append(fake)
    d5 = connected(s, [dev, dev2, dev3], lambda perf: perf.get("counting") is False) or {}
    dev5 = d5.get("device", "none")
    r = s.call("start_capture", {"device": dev5, "pid": 1, "call_graph": "dwarf",
                                 "authorization": AUTH, "pid_authorization": PAUTH}, timeout=60)
    note = (sc(r).get("capture") or {}).get("call_graph_note", "")
    s.call("stop_capture", {"device": dev5}, timeout=60)
    check("a seed agent before its probe: call_graph dwarf is sent, and the answer notes it recorded with fp (%s)"
          % note[:120], "dwarf" in note and "with fp" in note and
          ((d5.get("capabilities") or {}).get("perf") or {}).get("call_graphs") is None, (result_text(r)[:300], d5))
    fake.kill()
    fake.wait()

    # ---- a device that cannot sample (its perf_caps say so): only counting
    nocaps = {"perf": True, "pmu": False, "sampling": False, "sampling_error": "Permission denied",
              "privileged": False, "perf_event_paranoid": 3, "call_graphs": [], "counting": True}
    fake = subprocess.Popen([sys.executable, os.path.join(HERE, "fake_agent.py"), "--server", "127.0.0.1:%d" % port,
                             "--code", CODE, "--interval", "1", "--perf-caps", json.dumps(nocaps)],
                            stdout=open(os.path.join(WORK, "nosample.out"), "w"), stderr=subprocess.STDOUT)
    procs.append(fake)
    d4 = connected(s, [dev, dev2, dev3, dev5], lambda perf: perf.get("sampling") is False) or {}
    dev4 = d4.get("device", "none")
    r = s.call("start_capture", {"device": dev4, "pid": 1, "authorization": AUTH, "pid_authorization": PAUTH},
               timeout=60)
    check("a device that cannot sample (paranoid 3): start_capture is refused naming counting and the device's "
          "reason (%s)" % result_text(r)[:200], is_tool_error(r, "cannot sample", "Permission denied", "counting=true"),
          result_text(r))
    s.close()
finally:
    reap(procs)
sys.exit(1 if fails else 0)
