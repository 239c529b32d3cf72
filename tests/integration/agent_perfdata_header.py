"""agent_perfdata_header.py - nothing silent in perf.data mode: a perf
record that gives no perf.data header, through perflens-mcp as an agent
drives it.

  agent_perfdata_header.py SERVER AGENT WORKLOAD

Our agent (perf.data chunks negotiated, extension 4) runs a shim perf
(--perf): real perf, except the run perf.data mode makes (perf record
with --buildid-mmap, which only that mode passes), which does what the
test says: nothing (the real one), hang without writing (stuck), print an
error and exit 129 (exit), exit 0 having written nothing (empty).  Per
capture (start_capture, stop_capture, list_sessions, analyze_profile):
- good: perf.data chunks, and no problem anywhere (stop_capture's
  problems null, the session's capture without problems, no "the
  device's agent says" warning).
- stuck: list_devices shows the problem while the capture runs, within
  the agent's header wait (5 s) plus the link's status ping (10 s); it
  says "stuck", the seconds and the fix.
- exit: the problem carries perf's exit status and its stderr.
- empty: the problem says perf wrote nothing.
- each bad one: stop_capture's problems, list_sessions' capture.problems
  and analyze_profile's warnings name it with its fix, and the capture
  went on as text (text chunks whose samples the analysis counts, and
  the shim saw perf script run after the failed perf.data run).
"""
import glob, json, os, subprocess, sys, time
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mcp_client import *  # noqa

SERVER, AGENT, WORKLOAD = sys.argv[1:4]
CODE = "pdhead-" + os.urandom(6).hex()
AUTH = "I_EXPLICITLY_AUTHORIZE_TARGET_PROFILING"
PAUTH = "I_EXPLICITLY_AUTHORIZE_PID_ATTACH"
MODE = os.path.join(WORK, "shim-mode")
LOG = os.path.join(WORK, "shim-argv.log")
HEADER_WAIT_S, PING_S = 5, 10
procs = []

SHIM = r"""#!/bin/sh
# perf, except perf.data mode's capture run (record --buildid-mmap)
echo "$*" >> "%(log)s"
case " $* " in
*" record "*" --buildid-mmap "*)
	case "$(cat "%(mode)s")" in
	stuck) exec sleep 600 ;;
	exit) echo "  Error: unknown option \`buildid-mmap'" >&2
	      echo " Usage: perf record [<options>] [<command>]" >&2
	      exit 129 ;;
	empty) exit 0 ;;
	esac ;;
esac
exec perf "$@"
""" % {"log": LOG, "mode": MODE}


def version_code(s):
    import re
    m = re.search(r"(\d+)\.(\d+)", s)
    return int(m.group(1)) * 100 + int(m.group(2)) if m else 0


def devices(s):
    return sc(s.call("list_devices", {})).get("devices", [])


def device(s, dev):
    return next((x for x in devices(s) if x["device"] == dev), {})


def problems_text(v):
    return " | ".join(x for x in (v or []) if isinstance(x, str))


try:
    perf_v = subprocess.run(["perf", "--version"], capture_output=True, text=True).stdout
    if version_code(perf_v) < 512 or version_code(os.uname().release) < 512:
        print("skip - agent perf.data header: perf (%s) or the kernel (%s) is older than 5.12, so the agent "
              "passes no --buildid-mmap and the shim cannot tell perf.data mode's run" % (perf_v.strip(),
                                                                                        os.uname().release))
        sys.exit(0)
    shim = os.path.join(WORK, "perf-shim")
    open(shim, "w").write(SHIM)
    os.chmod(shim, 0o755)
    open(MODE, "w").write("real\n")
    art = os.path.join(WORK, "art")
    code_file = os.path.join(WORK, "code")
    open(code_file, "w").write(CODE + "\n")
    s = Stdio([SERVER, "--allowed-root", WORK, "--artifact-root", art, "--allow-writes", "--agent-listen",
               "127.0.0.1:0", "--agent-pairing-code-file", code_file, "--allow-device-control"], "pdhead")
    s.initialize()
    port = link_port(s)
    w = subprocess.Popen([WORKLOAD, "900"])
    procs.append(w)
    a = subprocess.Popen([AGENT, "--server", "127.0.0.1:%d" % port, "--perf", shim], stdout=subprocess.DEVNULL,
                         stderr=open(os.path.join(WORK, "agent.err"), "w"),
                         env=dict(os.environ, PERFLENS_TOKEN=CODE))
    procs.append(a)
    d = until(lambda: next((x for x in devices(s) if x["state"] == "connected" and
                            ((x.get("capabilities") or {}).get("perf") or {}).get("source")), None),
              20 * SCALE, 0.2) or {}
    dev = d.get("device", "none")
    check("our agent with the shim perf negotiates perf_data (features %s)" % d.get("features"),
          "perf_data" in (d.get("features") or []), d)

    def capture(mode, seconds, watch=False):
        open(MODE, "w").write(mode + "\n")
        log_at = os.path.getsize(LOG) if os.path.exists(LOG) else 0
        r = s.call("start_capture", {"device": dev, "pid": w.pid, "frequency_hz": 199, "interval_seconds": 2,
                                     "call_graph": "fp", "authorization": AUTH, "pid_authorization": PAUTH},
                   timeout=120)
        t0 = time.monotonic()
        seen = None
        if watch:
            seen = until(lambda: problems_text((device(s, dev).get("capture") or {}).get("problems")),
                         (HEADER_WAIT_S + PING_S + 10) * SCALE, 0.25)
            seen = (time.monotonic() - t0, seen)
        left = t0 + seconds - time.monotonic()
        if left > 0:
            time.sleep(left)
        stop = sc(s.call("stop_capture", {"device": dev}, timeout=60))
        sid = stop.get("session") or "none"
        listed = next((x for x in sc(s.call("list_sessions", {"device": dev, "limit": 100})).get("sessions", [])
                       if x.get("session") == sid), {})
        an = sc(s.call("analyze_profile", {"path": "perflens://artifacts/sessions/%s" % sid}, timeout=120))
        files = sorted(os.path.basename(f) for f in glob.glob(os.path.join(art, "sessions", sid, "chunk_*")))
        runs = open(LOG).read()[log_at:].splitlines() if os.path.exists(LOG) else []
        return {"start": r, "stop": stop, "listed": listed, "an": an, "files": files, "seen": seen, "runs": runs}

    def notes(c):
        return [x for x in c["an"].get("warnings") or [] if "the device's agent says" in x]

    def samples(c):
        return sum(e.get("samples") or 0 for e in c["an"].get("events") or [])

    # ---- a good capture: perf.data chunks, no problem anywhere
    good = capture("real", 5)
    check("a good capture: perf.data chunks (%s), %d samples; no problem in stop_capture (%s), list_sessions "
          "(%s) or the analysis' warnings (%s)" % (good["files"], samples(good), good["stop"].get("problems"),
                                                   (good["listed"].get("capture") or {}).get("problems"),
                                                   notes(good)),
          any(f.endswith(".perf.zst") for f in good["files"]) and samples(good) > 0 and
          good["stop"].get("problems") is None and
          "problems" not in (good["listed"].get("capture") or {}) and not notes(good),
          (good["stop"], good["an"].get("warnings")))

    def bad(mode, seconds, must, watch=False):
        c = capture(mode, seconds, watch)
        stop_p = problems_text(c["stop"].get("problems"))
        listed_p = problems_text((c["listed"].get("capture") or {}).get("problems"))
        ns = notes(c)
        said = [x for x in (stop_p, listed_p, " ".join(ns)) if all(m in x for m in must + ["Fix:"])]
        text_after = [r for r in c["runs"] if r.startswith("script")]
        check("%s perf: stop_capture's problems, list_sessions' capture.problems and analyze_profile's warnings "
              "say %s and the fix (%s)" % (mode, must, stop_p[:400]),
              len(said) == 3 and len(c["stop"].get("problems") or []) == 1, (stop_p, listed_p, ns))
        check("%s perf: the capture went on as text: chunks %s, %d samples, perf script ran after the failed "
              "perf.data run (%d runs)" % (mode, c["files"], samples(c), len(text_after)),
              c["files"] and not any(f.endswith(".perf.zst") for f in c["files"]) and samples(c) > 0 and
              text_after and any("--buildid-mmap" in r for r in c["runs"]), c["runs"])
        return c

    c = bad("stuck", 0, ["no perf.data header in", "stuck", "text chunks"], watch=True)
    secs, seen = c["seen"]
    bound = (HEADER_WAIT_S + PING_S + 3) * SCALE
    check("stuck perf: list_devices showed the problem %.1f s after start_capture answered (bound %.0f s: the "
          "agent's %d s header wait and the link's %d s status ping)" % (secs, bound, HEADER_WAIT_S, PING_S),
          seen and secs <= bound and "stuck" in seen, seen)
    bad("exit", 5, ["exited (status 129)", "unknown option", "buildid-mmap"])
    bad("empty", 5, ["exited (status 0) without writing anything", "nothing on its stderr"])

    # ---- and the next good one carries none of them (the agent clears them at start)
    again = capture("real", 4)
    check("a good capture after them: perf.data again, no problem (%s)" % again["stop"].get("problems"),
          any(f.endswith(".perf.zst") for f in again["files"]) and again["stop"].get("problems") is None and
          not notes(again), again["stop"])
    s.close()
finally:
    reap(procs)
sys.exit(1 if fails else 0)
