"""agent_aarch64_perfdata.py - the aarch64 agent (under qemu-aarch64-static)
in perf.data mode (extension 4), through perflens-mcp as an agent drives it.

  agent_aarch64_perfdata.py SERVER AGENT_AARCH64 WORKLOAD_PID RECORDING

RECORDING is a pipe-mode perf.data (`perf record -o -`, the way the agent
runs it) this machine's perf made of WORKLOAD_PID.  The aarch64 agent
runs a shim perf: the capture's perf record (`-o -`, no command after
`--`) prints RECORDING and then waits to be ended, as perf record into a
pipe does; everything else (its version, its probe, perf stat) is this
machine's perf.  So the agent cuts a known stream into perf.data chunks,
with an aarch64 build of its splitter, and the server reads them with its
native reader.  Checked: perf_data is negotiated and the session's chunks
are perf.data (each a pipe-mode perf.data: PERFILE2); the samples the
server counts (analyze_profile's events) = perf script's of RECORDING
(one line per sample with -G -F pid) = perf report's (its "# Samples:")
= the agent's samples_sent; the top
leaf function is perf report's on RECORDING.
"""
import glob, os, re, subprocess, sys, time
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mcp_client import *  # noqa

SERVER, AGENT, PID, RECORDING = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
CODE = "a64pd-" + os.urandom(6).hex()
AUTH = "I_EXPLICITLY_AUTHORIZE_TARGET_PROFILING"
PAUTH = "I_EXPLICITLY_AUTHORIZE_PID_ATTACH"
LOG = os.path.join(WORK, "shim-a64.log")
SHIM = r"""#!/bin/sh
echo "$*" >> "%(log)s"
if [ "$1" = record ]; then
	case " $* " in
	*" -o - "*" -- "*) ;;
	*" -o - "*) cat "%(rec)s"; exec sleep 600 ;;
	esac
fi
exec perf "$@"
""" % {"log": LOG, "rec": RECORDING}
procs = []


def devices(s):
    return sc(s.call("list_devices", {})).get("devices", [])


try:
    shim = os.path.join(WORK, "perf-a64-shim")
    open(shim, "w").write(SHIM)
    os.chmod(shim, 0o755)
    art = os.path.join(WORK, "art-a64")
    code_file = os.path.join(WORK, "code-a64")
    open(code_file, "w").write(CODE + "\n")
    s = Stdio([SERVER, "--allowed-root", WORK, "--artifact-root", art, "--allow-writes", "--agent-listen",
               "127.0.0.1:0", "--agent-pairing-code-file", code_file, "--allow-device-control"], "a64pd")
    s.initialize()
    port = link_port(s)
    a = subprocess.Popen(["qemu-aarch64-static", AGENT, "--server", "127.0.0.1:%d" % port, "--perf", shim],
                         stdout=subprocess.DEVNULL, stderr=open(os.path.join(WORK, "agent-a64.err"), "w"),
                         env=dict(os.environ, PERFLENS_TOKEN=CODE))
    procs.append(a)
    d = until(lambda: next((x for x in devices(s) if x["state"] == "connected" and
                            ((x.get("capabilities") or {}).get("perf") or {}).get("source")), None),
              60 * SCALE, 0.3) or {}
    dev = d.get("device", "none")
    arch = (d.get("platform") or {}).get("arch")
    check("aarch64 agent under qemu: connected (arch %s) and negotiates perf_data (features %s)" % (
        arch, d.get("features")), arch == "aarch64" and "perf_data" in (d.get("features") or []), d)
    r = s.call("start_capture", {"device": dev, "pid": PID, "frequency_hz": 199, "interval_seconds": 2,
                                 "call_graph": "fp", "authorization": AUTH, "pid_authorization": PAUTH},
               timeout=180)
    time.sleep(6)
    stop = sc(s.call("stop_capture", {"device": dev}, timeout=60))
    sid = stop.get("session") or "none"
    files = sorted(glob.glob(os.path.join(art, "sessions", sid, "chunk_*")))
    pd = [f for f in files if f.endswith(".perf.zst")]
    heads = {subprocess.run(["zstd", "-d", "-c", f], capture_output=True).stdout[:8] for f in pd}
    runs = [l for l in open(LOG).read().splitlines() if l.startswith("record ") and " -o - " in " %s " % l
            and " -- " not in " %s " % l] if os.path.exists(LOG) else []
    check("the aarch64 agent ran the capture's perf record -o - (%s) and the session holds perf.data chunks "
          "(%d of %d files, each starting %s)" % (runs[:1], len(pd), len(files), heads),
          runs and pd and heads == {b"PERFILE2"}, (result_text(r)[:300], stop, files))
    an = sc(s.call("analyze_profile", {"path": "perflens://artifacts/sessions/%s" % sid}, timeout=180))
    got = sum(e.get("samples") or 0 for e in an.get("events") or [])
    # -G: no call chain lines, so one line per sample
    script = subprocess.run(["perf", "script", "-G", "-F", "pid", "-i", RECORDING], capture_output=True, text=True)
    want = len([l for l in script.stdout.splitlines() if l.strip()])
    report = subprocess.run(["perf", "report", "--stdio", "--no-children", "--sort", "sym", "-i", RECORDING],
                            capture_output=True, text=True).stdout
    m = re.search(r"^# Samples: (\d+)", report, re.M)
    rep_n = int(m.group(1)) if m else None
    sent = (stop.get("agent_counters") or {}).get("samples_sent")
    check("the server's native reader counts the samples perf script and perf report count in the recording the "
          "aarch64 agent chunked: analyze_profile %d, perf script %d, perf report %s, the agent's samples_sent %s" % (
              got, want, rep_n, sent),
          want > 0 and got == want == rep_n == sent, (an.get("warnings"), script.stderr[-300:], files))
    top_r = next((m.group(1) for m in (re.match(r"^\s+[\d.]+%\s+\[\.\]\s+(\S+)", l) for l in report.splitlines())
                  if m), None)
    hs = sc(s.call("list_hotspots", {"analysis_id": an.get("analysis_id"), "limit": 3}, timeout=60)).get("hotspots", [])
    top_a = hs[0].get("symbol") if hs else None
    check("the top leaf function of the chunks (%s) is perf report's of the recording (%s)" % (top_a, top_r),
          top_r and top_a == top_r, (hs[:2], report[:500]))
    s.close()
finally:
    reap(procs)
sys.exit(1 if fails else 0)
