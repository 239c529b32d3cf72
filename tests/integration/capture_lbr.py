"""capture_lbr.py - start_capture(call_graph="lbr"), through perflens-mcp
as an agent drives it.

  capture_lbr.py SERVER [AGENT]

- Our agent on this machine (AGENT given: root and perf): list_devices'
  capabilities.perf.call_graphs does not name lbr, and neither can perf
  here (the oracle: `perf record --call-graph lbr -- true` fails on this
  VM, as on any machine without branch stack sampling); start_capture
  with lbr is refused before the agent is asked, naming the methods the
  device listed.
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
    port = until(lambda: next((int(l.rsplit(":", 1)[1].split(";")[0]) for l in s.stderr().splitlines()
                               if "agent link: listening on" in l), None), 10)
    gone = []

    # ---- our agent on this VM: no lbr
    if AGENT:
        lbr_here = subprocess.run(["perf", "record", "--call-graph", "lbr", "-o", os.path.join(WORK, "lbr.data"),
                                   "--", "true"], capture_output=True, text=True)
        env = dict(os.environ, PERFLENS_TOKEN=CODE)
        a = subprocess.Popen([AGENT, "--server", "127.0.0.1:%d" % port], stdout=subprocess.DEVNULL,
                             stderr=open(os.path.join(WORK, "agent.err"), "w"), env=env)
        procs.append(a)
        d = connected(s, gone, lambda perf: True)
        dev = d.get("device", "none")
        gone.append(dev)
        cgs = ((d.get("capabilities") or {}).get("perf") or {}).get("call_graphs") or []
        r = start(s, dev, "lbr")
        after = next((x for x in devices(s) if x["device"] == dev), {})
        named = ", ".join(cgs)
        check("our agent here: perf record --call-graph lbr fails (%s); call_graphs %s; start_capture(lbr) is "
              "refused before the agent is asked, naming them (%s)" % (
                  (lbr_here.stderr.strip().splitlines() or ["?"])[-1][:80], cgs, result_text(r)[:200]),
              lbr_here.returncode != 0 and cgs and "lbr" not in cgs and
              is_tool_error(r, "lbr", "pass call_graph as one of: " + named) and after.get("capture") is None,
              (lbr_here.returncode, cgs, result_text(r), after.get("capture")))
        a.kill()
        a.wait()
        s.call("disconnect_device", {"device": dev}, timeout=30)
    else:
        print("skip - capture lbr on our agent: the agent binary, root or perf is missing", flush=True)

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
    for p in procs:
        if p.poll() is None:
            p.kill()
            p.wait()
sys.exit(1 if fails else 0)
