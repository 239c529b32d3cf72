"""capture_lbr.py - start_capture(call_graph="lbr"), through perflens-mcp
as an agent drives it.

  capture_lbr.py SERVER [AGENT]

- Our agent on this machine (AGENT given: root and perf): list_devices'
  capabilities.perf.call_graphs names lbr exactly when perf here records
  with it (the oracle: `perf record --call-graph lbr -e cycles -- true`,
  which fails on this VM, as on any machine without branch stack
  sampling); where it does not, start_capture with lbr is refused before
  the agent is asked, naming the methods the device listed (skipped,
  saying so, where the oracle unexpectedly records).
- Our agent with a shim perf that takes --call-graph lbr (it records
  with fp in its stead, so samples flow): its probe lists lbr, and
  start_capture(call_graph="lbr") of a spinning workload is sent, taken
  (the answer's callgraph lbr) and run: the shim sees `--call-graph lbr`
  in the capture's perf record, and the session holds its samples.
- A device whose perf_caps list lbr (fake_agent.py --perf-caps): the
  start is sent with call_graph lbr (the fake prints what it received).
- A seed agent before its probe (methods unknown): lbr is refused,
  naming fp, dwarf and none, while dwarf is still sent (its agent answers
  for it: agent_modes.py).
"""
import json, os, subprocess, sys, time
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mcp_client import *  # noqa

SERVER = sys.argv[1]
AGENT = sys.argv[2] if len(sys.argv) > 2 else ""
WORKLOAD = os.environ.get("WORKLOAD", "")
HERE = os.path.dirname(os.path.abspath(__file__))
CODE = "lbr-" + os.urandom(6).hex()
AUTH = "I_EXPLICITLY_AUTHORIZE_TARGET_PROFILING"
PAUTH = "I_EXPLICITLY_AUTHORIZE_PID_ATTACH"
procs = []


def devices(s):
    return sc(s.call("list_devices", {})).get("devices", [])


def connected(s, gone, want):
    def f():
        for d in devices(s):
            perf = (d.get("capabilities") or {}).get("perf", {})
            if d["state"] == "connected" and d["device"] not in gone and perf.get("source") and want(perf):
                return d
    return until(f, 20 * SCALE, 0.2) or {}


def fake(port, name, *extra):
    out = os.path.join(WORK, name + ".out")
    p = subprocess.Popen([sys.executable, os.path.join(HERE, "fake_agent.py"), "--server", "127.0.0.1:%d" % port,
                          "--code", CODE, "--interval", "1"] + list(extra),
                         stdout=open(out, "w"), stderr=subprocess.STDOUT)
    procs.append(p)
    return p, out


# perf that takes --call-graph lbr: it says yes, and records with fp in
# its stead (this machine has no branch stack sampling)
SHIM = r"""#!/bin/sh
echo "$*" >> "%(log)s"
prev=""
for a in "$@"; do
	shift
	[ "$prev" = --call-graph ] && [ "$a" = lbr ] && a=fp
	set -- "$@" "$a"
	prev=$a
done
exec perf "$@"
"""


def our_agent(port, name, *extra):
    a = subprocess.Popen([AGENT, "--server", "127.0.0.1:%d" % port] + list(extra), stdout=subprocess.DEVNULL,
                         stderr=open(os.path.join(WORK, name + ".err"), "w"), env=dict(os.environ, PERFLENS_TOKEN=CODE))
    procs.append(a)
    return a


def is_error(r):
    return bool((r or {}).get("error") or (r or {}).get("result", {}).get("isError"))


def start(s, dev, cg):
    return s.call("start_capture", {"device": dev, "pid": 1, "call_graph": cg, "authorization": AUTH,
                                    "pid_authorization": PAUTH}, timeout=60)


def sent_starts(out):
    starts = []
    for line in open(out, errors="replace"):
        try:
            e = json.loads(line)
        except ValueError:
            continue
        if e.get("event") == "start":
            starts.append(e.get("args") or {})
    return starts


try:
    code_file = os.path.join(WORK, "code")
    open(code_file, "w").write(CODE + "\n")
    s = Stdio([SERVER, "--allowed-root", WORK, "--artifact-root", os.path.join(WORK, "art"), "--allow-writes",
               "--agent-listen", "127.0.0.1:0", "--agent-pairing-code-file", code_file, "--allow-device-control",
               "--agent-allow-legacy", "loopback"], "lbr")
    s.initialize()
    port = link_port(s)
    gone = []

    # ---- our agent on this VM: lbr listed exactly when perf records with it
    if AGENT:
        lbr_here = subprocess.run(["perf", "record", "--call-graph", "lbr", "-e", "cycles", "-o",
                                   os.path.join(WORK, "lbr.data"), "--", "true"], capture_output=True, text=True)
        why_not = (lbr_here.stderr.strip().splitlines() or ["?"])[-1][:80]
        a = our_agent(port, "agent")
        d = connected(s, gone, lambda perf: True)
        dev = d.get("device", "none")
        gone.append(dev)
        cgs = ((d.get("capabilities") or {}).get("perf") or {}).get("call_graphs") or []
        check("our agent with this machine's perf: call_graphs %s name lbr exactly when perf record --call-graph "
              "lbr -e cycles -- true records here (exit %d: %s)" % (cgs, lbr_here.returncode, why_not),
              cgs and ("lbr" in cgs) == (lbr_here.returncode == 0), (cgs, lbr_here.returncode, why_not))
        if lbr_here.returncode == 0:
            print("skip - capture lbr refused on our agent: perf records --call-graph lbr on this machine (it has "
                  "branch stack sampling), so there is no refusal to check", flush=True)
        else:
            r = start(s, dev, "lbr")
            after = next((x for x in devices(s) if x["device"] == dev), {})
            named = ", ".join(cgs)
            check("our agent here: start_capture(lbr) is refused before the agent is asked, naming call_graphs "
                  "(%s)" % result_text(r)[:200],
                  is_tool_error(r, "lbr", "pass call_graph as one of: " + named) and after.get("capture") is None,
                  (result_text(r), after.get("capture")))
        a.kill()
        a.wait()
        s.call("disconnect_device", {"device": dev}, timeout=30)
    else:
        print("skip - capture lbr on our agent: the agent binary, root or perf is missing", flush=True)

    # ---- our agent with a perf that takes lbr (a shim): listed, sent, run
    if AGENT and WORKLOAD:
        shim, log = os.path.join(WORK, "perf-lbr"), os.path.join(WORK, "perf-lbr.log")
        open(shim, "w").write(SHIM % {"log": log})
        os.chmod(shim, 0o755)
        w = subprocess.Popen([WORKLOAD, "300"])
        procs.append(w)
        a = our_agent(port, "agent-lbr", "--perf", shim)
        d = connected(s, gone, lambda perf: True)
        dev = d.get("device", "none")
        gone.append(dev)
        cgs = ((d.get("capabilities") or {}).get("perf") or {}).get("call_graphs") or []
        probed = [l for l in open(log).read().splitlines() if " lbr " in " %s " % l] if os.path.exists(log) else []
        check("our agent with a perf that takes --call-graph lbr: its probe asked perf (%s) and call_graphs %s "
              "list lbr" % (probed[:1], cgs), "lbr" in cgs and probed, (cgs, probed))
        r = s.call("start_capture", {"device": dev, "pid": w.pid, "call_graph": "lbr", "frequency_hz": 199,
                                     "interval_seconds": 2, "authorization": AUTH, "pid_authorization": PAUTH},
                   timeout=120)
        answer = sc(r).get("capture") or {}
        time.sleep(4)
        stop = sc(s.call("stop_capture", {"device": dev}, timeout=60))
        runs = [l for l in open(log).read().splitlines()
                if l.startswith("record ") and " -p %d " % w.pid in " %s " % l and " --call-graph lbr" in l]
        an = sc(s.call("analyze_profile", {"path": "perflens://artifacts/sessions/%s" % stop.get("session")},
                       timeout=120)) if stop.get("session") else {}
        n = sum(e.get("samples") or 0 for e in an.get("events") or [])
        check("start_capture(call_graph=lbr) on it is taken (callgraph %r, %s) and run: the shim saw perf record "
              "-p %d with --call-graph lbr (%s); the session %s holds %d samples" % (
                  answer.get("callgraph"), result_text(r)[:120] if is_error(r) else "ok", w.pid, runs[:1],
                  stop.get("session"), n),
              not is_error(r) and answer.get("callgraph") == "lbr" and runs and n > 0,
              (result_text(r)[:300], runs, stop))
        a.kill()
        a.wait()
        s.call("disconnect_device", {"device": dev}, timeout=30)
    else:
        print("skip - capture lbr with a perf that takes it: the agent binary, root, perf or the workload is missing",
              flush=True)

    # ---- a device that lists lbr: the start goes out with it
    caps = {"perf": True, "pmu": True, "sampling": True, "privileged": True, "perf_event_paranoid": -1,
            "call_graphs": ["fp", "dwarf", "lbr", "none"], "counting": True}
    f, out = fake(port, "withlbr", "--perf-caps", json.dumps(caps))
    d = connected(s, gone, lambda perf: "lbr" in (perf.get("call_graphs") or []))
    dev = d.get("device", "none")
    gone.append(dev)
    r = start(s, dev, "lbr")
    got = until(lambda: sent_starts(out), 10)
    check("a device whose perf_caps list lbr: start_capture(lbr) is sent with call_graph lbr (%s)" % (got,),
          not sc(r) == {} and not (r or {}).get("result", {}).get("isError") and got and
          got[-1].get("call_graph") == "lbr", (result_text(r)[:300], got))
    s.call("stop_capture", {"device": dev}, timeout=60)
    f.kill()
    f.wait()

    # ---- a seed before its probe: methods unknown, lbr refused, dwarf sent
    f, out = fake(port, "seed", "--mode", "legacy", "--unprobed")
    d = connected(s, gone, lambda perf: perf.get("counting") is False)
    dev = d.get("device", "none")
    r = start(s, dev, "lbr")
    refused = sent_starts(out)
    r2 = start(s, dev, "dwarf")
    check("a seed before its probe: lbr refused naming fp, dwarf, none before it is asked (%s); dwarf still sent" %
          result_text(r)[:160], is_tool_error(r, "lbr", "fp, dwarf, none") and refused == [] and
          not (r2 or {}).get("result", {}).get("isError"), (result_text(r), refused, result_text(r2)[:200]))
    s.call("stop_capture", {"device": dev}, timeout=60)
    s.close()
finally:
    reap(procs)
sys.exit(1 if fails else 0)
