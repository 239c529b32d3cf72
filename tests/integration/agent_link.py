"""agent_link.py - the server's agent link against fake_agent.py (a Python
agent: its own HMAC, its own zstd through the zstd command, its own sample
count), driven through perflens-mcp as an agent would.

  agent_link.py SERVER CHUNK_TEXT

Checks, each an ok/not ok line: startup gates (no unpaired listener, the
code in no argv or log), tools/list with and without the link (and its
budget), a dial-in agent paired by mutual proof, the control gates (flag,
phrases: nothing reaches the agent), a capture (chunks compressed as sent,
maps, metrics of every type), a live session analyzed, stop_capture's next
step followed to analyze_profile and list_hotspots with the agent's sample
count, paging of processes and metrics, connect_device out to a --listen
agent, wrong codes three times, seed and pre-0.10 agents, a wrong proof,
garbage before the hello, a 4 GB frame header, an agent that stops reading,
a link cut mid-chunk, three agents at once, and a server killed mid-capture
and restarted (the session recovered).
"""
import glob, json, os, signal, socket, subprocess, sys, time
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mcp_client import *  # noqa

SERVER, CHUNK = sys.argv[1:3]
HERE = os.path.dirname(os.path.abspath(__file__))
FAKE = [sys.executable, os.path.join(HERE, "fake_agent.py")]
CODE = "pairing-Code-42"
AUTH = "I_EXPLICITLY_AUTHORIZE_TARGET_PROFILING"
PAUTH = "I_EXPLICITLY_AUTHORIZE_PID_ATTACH"
agents = []


def sc(r):
    return (r or {}).get("result", {}).get("structuredContent") or {}


def wait(cond, timeout=15.0, step=0.1):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        v = cond()
        if v:
            return v
        time.sleep(step)
    return cond()


def session_meta(folder):
    """A session folder's metadata.json ({} before it is written)."""
    try:
        return json.load(open(os.path.join(folder, "metadata.json")))
    except (OSError, ValueError):
        return {}


def counted_chunks(folder, n):
    """The session's metadata once it counts n chunks (or as it is after
    20 s, scaled).  A chunk's file lands before the metadata counts it: a
    clean-clone ASan run read 2 of 3 right after the third file showed."""
    wait(lambda: session_meta(folder).get("chunks", 0) >= n, 20 * SCALE)
    return session_meta(folder)


class Fake:
    def __init__(self, *args):
        self.out = os.path.join(WORK, "fake%d.out" % len(agents))
        self.p = subprocess.Popen(FAKE + list(args), stdout=open(self.out, "w"),
                                  stderr=subprocess.STDOUT)
        agents.append(self)

    def events(self):
        ev = []
        for line in open(self.out, errors="replace"):
            try:
                ev.append(json.loads(line))
            except ValueError:
                pass
        return ev

    def has(self, name):
        return [e for e in self.events() if e.get("event") == name]

    def stop(self):
        if self.p.poll() is None:
            self.p.kill()
            self.p.wait()


def start_server(art, *extra, name="link", env_code=True):
    code_file = os.path.join(WORK, "code")
    open(code_file, "w").write(CODE + "\n")
    argv = [SERVER, "--allowed-root", WORK, "--artifact-root", art, "--allow-writes",
            "--agent-listen", "127.0.0.1:0", "--agent-pairing-code-file", code_file] + list(extra)
    s = Stdio(argv, name)
    s.initialize()
    port = link_port(s)
    return s, port


def devices(s):
    return sc(s.call("list_devices", {})).get("devices", [])


def device_where(s, **want):
    for d in devices(s):
        if all(d.get(k) == v for k, v in want.items()):
            return d
    return None


ART = os.path.join(WORK, "art")

# ------------------------------------------------------------ startup gates
p = subprocess.run([SERVER, "--artifact-root", ART, "--allow-writes", "--agent-listen", "127.0.0.1:0"],
                   stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=20,
                   env={k: v for k, v in os.environ.items() if k != "PERFLENS_AGENT_CODE"})
check("--agent-listen without a pairing code is refused (exit 2, names the flag)",
      p.returncode == 2 and "--agent-pairing-code-file" in p.stderr, (p.returncode, p.stderr))

plain = Stdio([SERVER, "--allowed-root", WORK, "--artifact-root", ART, "--allow-writes"], "plain")
plain.initialize()


def listing(s):
    tools, cursor = [], None
    while True:
        r = s.request("tools/list", {"cursor": cursor} if cursor else {})
        tools += r["result"]["tools"]
        cursor = r["result"].get("nextCursor")
        if not cursor:
            return tools


names = {t["name"] for t in listing(plain)}
check("the default server lists no device tool", not names & {"list_devices", "start_capture"}, sorted(names))
r = plain.call("start_capture", {"device": "x_1", "pid": 1, "authorization": AUTH, "pid_authorization": PAUTH})
check("start_capture on a server without the flag: refused, naming --allow-device-control",
      is_tool_error(r, "--allow-device-control"), result_text(r))
plain.close()

s, port = start_server(ART, "--allow-device-control", "--agent-send-timeout-ms", "3000")
tools = listing(s)
names = {t["name"] for t in tools}
dev_tools = {"list_devices", "list_sessions", "get_device_metrics", "list_device_processes", "connect_device",
             "start_capture", "stop_capture", "pause_capture", "resume_capture", "configure_device_metrics",
             "disconnect_device"}
check("the link's server lists the 11 device tools", dev_tools <= names, sorted(dev_tools - names))
read = len(json.dumps([{"name": t["name"], "description": t["description"], "inputSchema": t["inputSchema"]}
                       for t in tools], separators=(",", ":")).encode())
# 26 KB until 2026-12-07 (see test_mcp_budget.sh's MODEL_READ_MAX), 30 KB
# until get_timeline and list_hotspots' view came (31.1 KB with them), 31 KB
# until the view came to all nine readers and start_capture took call_graph
# and counting (31.6 KB with them).
DEVICE_BUDGET = 33 * 1024
check("device-enabled tools/list: model-read part %d bytes <= %d" % (read, DEVICE_BUDGET), read <= DEVICE_BUDGET)
cmd = open("/proc/%d/cmdline" % s.pid, "rb").read()
check("the pairing code is in no argv", CODE.encode() not in cmd)

# --------------------------------------------------------- a dial-in agent
a = Fake("--server", "127.0.0.1:%d" % port, "--code", CODE, "--chunk", CHUNK, "--max-chunks", "4",
         "--interval", "0.3", "--maps", "--metrics-interval", "0.2")
d = wait(lambda: device_where(s, state="connected"))
check("a dial-in agent pairs by mutual proof (features maps, counters)",
      d and d["features"] == ["maps", "counters"] and not d["legacy"], d)
dev = d["device"] if d else "none"
state = json.load(open(os.path.join(ART, "devices", dev + ".json"))) if d else {}
check("its hello shows, without ext", d and d["agent_version"] == "fake-1" and "ext" not in state.get("hello", {"ext": 1}),
      state.get("hello"))

for args, word in [({}, "authorization"), ({"authorization": AUTH}, "pid_authorization"),
                   ({"authorization": "yes", "pid_authorization": PAUTH}, "authorization")]:
    r = s.call("start_capture", dict({"device": dev, "pid": 4242}, **args))
    check("start_capture without the right %s: refused, naming it" % word, is_tool_error(r, word), result_text(r))
r = s.call("start_capture", {"device": dev, "pid": 4242, "interval_seconds": 301, "authorization": AUTH,
                             "pid_authorization": PAUTH})
check("interval 301 s: refused by the schema", is_tool_error(r, "interval_seconds"), result_text(r))
check("no refused start reached the agent", not a.has("start"), a.events()[-3:])

r = s.call("start_capture", {"device": dev, "pid": 4242, "frequency_hz": 99, "interval_seconds": 1,
                             "authorization": AUTH, "pid_authorization": PAUTH})
st = sc(r)
check("start_capture: the agent started (its answer and a session)",
      st.get("capture", {}).get("mode") == "continuous" and a.has("start") and st.get("session"), result_text(r))
check("the agent got the pid and frequency, not the phrases",
      a.has("start") and a.has("start")[0]["args"].get("pid") == 4242 and
      "authorization" not in a.has("start")[0]["args"], a.has("start"))
session = st.get("session") or "none"
wait(lambda: len(a.has("chunk")) >= 2, 10)
live_dir = os.path.join(ART, "sessions", session)
wait(lambda: glob.glob(os.path.join(live_dir, "chunk_*")), 10)  # the server lags on a slow build (TSan)
meta = json.load(open(os.path.join(live_dir, "metadata.json"))) if os.path.exists(live_dir) else {}
check("the session is live on disk while capturing", meta.get("live") is True, meta)
r = s.call("analyze_profile", {"path": "perflens://artifacts/sessions/%s" % session}, timeout=60)
an = sc(r)
check("analyze_profile reads the live session: live, the chunks so far",
      an.get("session", {}).get("live") is True and an["session"]["chunks_read"] >= 1, result_text(r)[:300])
wait(lambda: len(a.has("chunk")) >= 4, 10)
time.sleep(0.5)
r = s.call("stop_capture", {"device": dev})
stop = sc(r)
steps = stop.get("next_steps", [])
check("stop_capture names the session and analyze_profile on it next",
      stop.get("session") == session and steps and steps[0]["tool"] == "analyze_profile"
      and steps[0]["arguments"]["path"].endswith(session), result_text(r))
counters = stop.get("agent_counters") or {}
zst = sorted(glob.glob(os.path.join(live_dir, "chunk_*.zst")))
sent = [e for e in a.has("chunk")]
check("every chunk the agent sent is on disk, compressed as sent (%d)" % len(zst),
      len(zst) == counters.get("chunks_sent") == len(sent) and
      [os.path.getsize(f) for f in zst] == [e["wire"] for e in sent], (len(zst), counters, sent))
check("chunks are zstd frames (magic)", all(open(f, "rb").read(4) == b"\x28\xb5\x2f\xfd" for f in zst))
check("a maps file came with the first chunk", os.path.exists(os.path.join(live_dir, "maps_00001.json"))
      or os.path.exists(os.path.join(live_dir, "maps_00000.json")), os.listdir(live_dir))
r = s.call(steps[0]["tool"], steps[0]["arguments"], timeout=60) if steps else None
an = sc(r)
total = sum(e["samples"] for e in an.get("events", []))
check("the finished session analyzes: %d samples = the agent's samples_sent %s" % (total, counters.get("samples_sent")),
      total > 0 and total == counters.get("samples_sent") and an.get("session", {}).get("live") is False
      and an["session"]["chunks_read"] == len(zst), (total, counters, an.get("session")))
check("the maps file gave the analysis mappings", an.get("session", {}).get("mappings", 0) >= 1, an.get("session"))
hs = [st for st in an.get("next_steps", []) if st["tool"] == "list_hotspots"]
r = s.call("list_hotspots", hs[0]["arguments"]) if hs else None
check("its next step list_hotspots answers with hotspots", r and sc(r).get("hotspots"), result_text(r)[:200])

for typ in ("system", "process", "network"):
    r = s.call("get_device_metrics", {"session": session, "type": typ, "limit": 2})
    m = sc(r)
    check("get_device_metrics %s: frames of that type, paged" % typ,
          m.get("frames") and all(f["type"] == typ for f in m["frames"]) and
          (typ != "system" or m["page"]["next_cursor"]), result_text(r)[:300])
r = s.call("list_device_processes", {"device": dev, "limit": 10})
pr = sc(r)
check("list_device_processes pages the agent's list (10 of 30, a cursor)",
      len(pr.get("processes", [])) == 10 and pr["page"]["total_items"] == 30 and pr["page"]["next_cursor"],
      result_text(r)[:300])
r = s.call("list_sessions", {"device": dev})
ls = sc(r)
check("list_sessions: the finished session with its uri, not live",
      any(x["session"] == session and x["live"] is False and x["uri"].endswith(session) for x in ls.get("sessions", [])),
      result_text(r)[:300])
r = s.call("disconnect_device", {"device": dev})
check("disconnect_device closes the link", sc(r).get("state") == "disconnected", result_text(r))
a.stop()

# ------------------------------------------------- connect out, wrong codes
lst = Fake("--listen", "0", "--code", CODE, "--chunk", CHUNK)
lport = wait(lambda: next((e["port"] for e in lst.events() if e.get("event") == "listening"), None), 10)
for i in range(3):
    r = s.call("connect_device", {"host": "127.0.0.1", "port": lport, "pairing_code": "wrong-%d" % i})
    check("connect_device with a wrong code (%d of 3): refused, the agent said so" % (i + 1),
          is_tool_error(r, "refused the pairing code"), result_text(r))
check("no wrong code appears in a result or the log", "wrong-" not in s.stderr())
r = s.call("connect_device", {"host": "127.0.0.1", "port": lport, "pairing_code": CODE})
cd = sc(r).get("device", {})
check("connect_device with the right code pairs", cd.get("state") == "connected" and cd.get("direction") == "connected_out",
      result_text(r))
check("the pairing code is in no result, log or state file",
      CODE not in result_text(r) and CODE not in s.stderr() and
      not any(CODE in open(f).read() for f in glob.glob(os.path.join(ART, "devices", "*.json"))))
check("no request file is left behind", not [f for f in glob.glob(os.path.join(ART, "devices", "requests", "*"))])
r = s.call("start_capture", {"device": cd.get("device", "x"), "pid": 7, "frequency_hz": 5000, "interval_seconds": 1,
                             "authorization": AUTH, "pid_authorization": PAUTH})
check("frequency over the device's max sample rate (1000): refused", is_tool_error(r, "max sample rate"), result_text(r))
s.call("disconnect_device", {"device": cd.get("device", "x")})
lst.stop()

# ------------------------------------------------------ who may not connect
for mode, word in [("legacy", "--agent-allow-legacy"), ("pre010", "before 0.10"), ("wrongproof", "proof is wrong")]:
    f = Fake("--server", "127.0.0.1:%d" % port, "--code", CODE, "--mode", mode, "--chunk", CHUNK)
    d = wait(lambda: next((x for x in devices(s) if x["state"] == "rejected" and word in (x.get("reason") or "")
                           and x["port"] not in [y for y in []]), None), 10)
    check("a %s agent is rejected: %s" % (mode, (d or {}).get("reason")), d is not None, [x.get("reason") for x in devices(s)])
    f.stop()
g = Fake("--server", "127.0.0.1:%d" % port, "--code", CODE, "--garbage", "--chunk", CHUNK)
d = wait(lambda: next((x for x in devices(s) if "over the cap" in (x.get("reason") or "") or
                       "garbage" in (x.get("reason") or "")), None), 10)
check("garbage before the hello: rejected (%s)" % (d or {}).get("reason"), d is not None)
g.stop()
h = Fake("--server", "127.0.0.1:%d" % port, "--code", CODE, "--huge-header", "--chunk", CHUNK)
d = wait(lambda: next((x for x in devices(s) if "4294967280 bytes, over the cap" in (x.get("reason") or "")), None), 10)
check("a 4 GB frame header: the link ends before any allocation (%s)" % (d or {}).get("reason"), d is not None)
h.stop()
check("the server still answers after the bad peers", s.ping_ms() is not None)

# ----------------------------------------------- an agent that stops reading
t0 = time.monotonic()
sr = Fake("--server", "127.0.0.1:%d" % port, "--code", CODE, "--stop-reading", "--chunk", CHUNK)
wait(lambda: sr.has("stopped_reading"), 10)
t1 = time.monotonic()
d = wait(lambda: next((x for x in devices(s) if x["state"] == "disconnected" and
                       "stopped answering" in (x.get("reason") or "")), None), 15)
dt = time.monotonic() - t1
check("an agent that stops reading is detected within the send bound (3 s + a ping interval): %.1f s" % dt,
      d is not None and dt < 3.0 + 1.1 + 1.5 * SCALE, (dt, [x.get("reason") for x in devices(s)]))
sr.stop()

# ------------------------- the server's send bound: an agent that stops reading
# while the server sends.  Its receive window is small (SO_RCVBUF 2 KB), so
# a burst of commands (start_capture with 16 long event names, ~1.2 KB
# each) cannot all be sent: the server's socket holds data the agent never
# acknowledges.  The kernel's own view of the server's socket (a duplicate
# taken with pidfd_getfd) shows the bounds set; the link ends within the
# send bound, and every command in flight fails at once, not at its own
# 120 s timeout.
def server_socket_opts(server_pid, peer_port):
    """getsockopt on the server's socket to 127.0.0.1:peer_port, through a
    duplicate of it (pidfd_getfd, Linux 5.6); None when that is not possible."""
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    try:
        pidfd = os.pidfd_open(server_pid)
    except (AttributeError, OSError):
        return None
    try:
        for fd in sorted(int(x) for x in os.listdir("/proc/%d/fd" % server_pid)):
            if not os.readlink("/proc/%d/fd/%d" % (server_pid, fd)).startswith("socket:"):
                continue
            dup = libc.syscall(438, pidfd, fd, 0)  # SYS_pidfd_getfd
            if dup < 0:
                return None
            sk = socket.socket(fileno=dup)
            try:
                if sk.family == socket.AF_INET and sk.type == socket.SOCK_STREAM and sk.getpeername()[1] == peer_port:
                    tv = struct.unpack("ll", sk.getsockopt(socket.SOL_SOCKET, socket.SO_SNDTIMEO, 16))
                    return {"keepalive": sk.getsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE),
                            "keepidle": sk.getsockopt(socket.IPPROTO_TCP, socket.TCP_KEEPIDLE),
                            "keepintvl": sk.getsockopt(socket.IPPROTO_TCP, socket.TCP_KEEPINTVL),
                            "keepcnt": sk.getsockopt(socket.IPPROTO_TCP, socket.TCP_KEEPCNT),
                            "user_timeout_ms": sk.getsockopt(socket.IPPROTO_TCP, 18),  # TCP_USER_TIMEOUT
                            "sndtimeo_ms": tv[0] * 1000 + tv[1] // 1000}
            except OSError:
                pass
            finally:
                sk.close()
    finally:
        os.close(pidfd)
    return None


import struct
sb = Fake("--server", "127.0.0.1:%d" % port, "--code", CODE, "--stop-reading", "--rcvbuf", "2048", "--chunk", CHUNK)
wait(lambda: sb.has("stopped_reading"), 10)
d = wait(lambda: device_where(s, state="connected"), 5) or {}
opts = server_socket_opts(s.pid, d.get("port", 0))
if opts is None:
    print("skip - the server's socket options: pidfd_getfd is not available here")
else:
    check("the server's link socket has keepalive (30 s idle, 5 s x 4), TCP_USER_TIMEOUT and SO_SNDTIMEO "
          "of the send bound (3000 ms): %s" % opts,
          opts == {"keepalive": 1, "keepidle": 30, "keepintvl": 5, "keepcnt": 4, "user_timeout_ms": 3000,
                   "sndtimeo_ms": 3000}, opts)
long_events = ["e%02d-" % i + "x" * 59 for i in range(16)]
rids = []
t1 = time.monotonic()
for i in range(8):
    s.next_id += 1
    rids.append(s.next_id)
    s.send({"jsonrpc": "2.0", "id": s.next_id, "method": "tools/call", "params": {"name": "start_capture",
            "arguments": {"device": d.get("device", "x"), "pid": 1000 + i, "events": long_events, "interval_seconds": 1,
                          "authorization": AUTH, "pid_authorization": PAUTH}}})
answers = [s.wait_for(rid, 30) for rid in rids]
dt_calls = time.monotonic() - t1
gone = wait(lambda: next((x for x in devices(s) if x["device"] == d.get("device") and x["state"] == "disconnected"), None), 10)
dt = time.monotonic() - t1
check("an agent that stops reading while the server sends 8 start commands (~10 KB into a 2 KB window): "
      "the link ends within the send bound, %.1f s (bound 3 s + 1 s ping interval + slack): %s"
      % (dt, (gone or {}).get("reason")), gone is not None and dt < 3.0 + 1.1 + 2.0 * SCALE, [x.get("reason") for x in devices(s)])
check("every command in flight failed at once when the link ended (%.1f s, not their 120 s): %s"
      % (dt_calls, sorted(set(result_text(a)[:90] for a in answers))),
      all(a and a.get("result", {}).get("isError") for a in answers) and dt_calls < 3.0 + 1.1 + 2.0 * SCALE,
      [result_text(a)[:200] for a in answers])
sb.stop()

# ------------------------------------------------------ a link cut mid-chunk
cut = Fake("--server", "127.0.0.1:%d" % port, "--code", CODE, "--chunk", CHUNK, "--cut-after", "2",
           "--interval", "0.2")
d = wait(lambda: device_where(s, state="connected"), 10)
r = s.call("start_capture", {"device": (d or {}).get("device", "x"), "pid": 1, "interval_seconds": 1,
                             "authorization": AUTH, "pid_authorization": PAUTH})
sess = sc(r).get("session", "none")
wait(lambda: cut.has("cut_mid_chunk"), 10)
m = wait(lambda: (lambda p: json.load(open(p)) if os.path.exists(p) else None)(
    os.path.join(ART, "sessions", sess, "metadata.json")) if True else None, 5)
m = wait(lambda: (lambda x: x if x and x.get("live") is False else None)(
    json.load(open(os.path.join(ART, "sessions", sess, "metadata.json")))), 8)
files = sorted(os.listdir(os.path.join(ART, "sessions", sess)))
check("a link cut mid-chunk: the 2 whole chunks kept, the cut one a gap, no partial file",
      m and m["chunks"] == 2 and len(m["gaps"]) == 1 and "mid-frame" in m["gaps"][0]["reason"] and
      [f for f in files if f.startswith("chunk_")] == ["chunk_00000.zst", "chunk_00001.zst"] and
      not [f for f in files if f.startswith(".")], (m, files))
cut.stop()

# --------------------------------------------------------- three at once
many = [Fake("--server", "127.0.0.1:%d" % port, "--code", CODE, "--chunk", CHUNK, "--max-chunks", str(k + 1),
             "--interval", "0.2") for k in range(3)]
ids = wait(lambda: (lambda l: l if len(l) == 3 else None)(
    [x["device"] for x in devices(s) if x["state"] == "connected"]), 15) or []
sessions = []
for k, dv in enumerate(sorted(ids)):
    r = s.call("start_capture", {"device": dv, "pid": 100 + k, "interval_seconds": 1, "authorization": AUTH,
                                 "pid_authorization": PAUTH})
    sessions.append(sc(r).get("session"))
check("three agents at once, three distinct sessions", len(set(filter(None, sessions))) == 3, sessions)
time.sleep(2.5)
got = []
for dv in sorted(ids):
    got.append(sc(s.call("stop_capture", {"device": dv})).get("chunks"))
want = sorted(int(x) for x in got if x is not None)
check("each session holds its own agent's chunks only (%s)" % got, want == [1, 2, 3], got)
for f in many:
    f.stop()

# ------------------------------------- seed agents where the operator allows
# A seed agent (0.10/0.12: a hello without ext, auth by the code in clear,
# no counters) is accepted from loopback with --agent-allow-legacy loopback,
# and from a listed address only (127.0.0.2 is listed, 127.0.0.1 is not).
def seed_capture(srv, label, *fake_args):
    f = Fake("--server", "127.0.0.1:%d" % srv[1], "--code", CODE, "--mode", "legacy", "--chunk", CHUNK,
             "--max-chunks", "3", "--interval", "0.2", *fake_args)
    d = wait(lambda: device_where(srv[0], state="connected"), 10)
    check("%s: a seed agent is accepted, marked legacy (%s)" % (label, (d or {}).get("agent_version")),
          d and d["legacy"] is True and d["features"] == [] and f.has("auth") and
          f.has("auth")[0]["method"] == "token", (d, f.events()[-3:]))
    r = srv[0].call("start_capture", {"device": (d or {}).get("device", "x"), "pid": 1, "interval_seconds": 1,
                                      "authorization": AUTH, "pid_authorization": PAUTH})
    sess = sc(r).get("session") or "none"
    wait(lambda: len(f.has("chunk")) >= 3, 10)
    time.sleep(0.5)
    stop = sc(srv[0].call("stop_capture", {"device": (d or {}).get("device", "x")}))
    steps = stop.get("next_steps") or [{}]
    sent = f.has("stop")[0]["counters"] if f.has("stop") else {}
    an = sc(srv[0].call(steps[0].get("tool", "analyze_profile"), steps[0].get("arguments", {}), timeout=60))
    total = sum(e["samples"] for e in an.get("events", []))
    check("%s: its session lands and analyzes to the %s samples it sent (%d)" % (label, sent.get("samples_sent"), total),
          stop.get("session") == sess and steps[0].get("tool") == "analyze_profile" and stop.get("chunks") == 3 and
          total > 0 and total == sent.get("samples_sent") and an.get("session", {}).get("live") is False,
          (stop, sent, an.get("session")))
    f.stop()


ART5 = os.path.join(WORK, "art-legacy")
lo = start_server(ART5, "--allow-device-control", "--agent-allow-legacy", "loopback", name="legacy-lo")
seed_capture(lo, "--agent-allow-legacy loopback")
lo[0].close()
ART6 = os.path.join(WORK, "art-legacy-listed")
listed = start_server(ART6, "--allow-device-control", "--agent-allow-legacy", "127.0.0.2,10.9.9.9", name="legacy-list")
seed_capture(listed, "--agent-allow-legacy 127.0.0.2,10.9.9.9, from 127.0.0.2", "--source", "127.0.0.2")
f = Fake("--server", "127.0.0.1:%d" % listed[1], "--code", CODE, "--mode", "legacy", "--chunk", CHUNK)
d = wait(lambda: next((x for x in devices(listed[0]) if x["address"] == "127.0.0.1" and x["state"] == "rejected"), None), 10)
check("--agent-allow-legacy 127.0.0.2,...: a seed agent from 127.0.0.1 (not listed) is still refused (%s)"
      % (d or {}).get("reason"), d and "--agent-allow-legacy" in (d.get("reason") or "") and not f.has("auth"),
      ([x.get("reason") for x in devices(listed[0])], f.events()[-3:]))
f.stop()
listed[0].close()

# --------------------------------------------- SIGKILL mid-capture, restart
k = Fake("--server", "127.0.0.1:%d" % port, "--code", CODE, "--chunk", CHUNK, "--interval", "0.2")
d = wait(lambda: device_where(s, state="connected"), 10)
r = s.call("start_capture", {"device": (d or {}).get("device", "x"), "pid": 1, "interval_seconds": 1,
                             "authorization": AUTH, "pid_authorization": PAUTH})
ksess = sc(r).get("session", "none")
wait(lambda: len(k.has("chunk")) >= 3, 10)
# ... and the server has written them (it lags on a slow build: TSan).
wait(lambda: len(glob.glob(os.path.join(ART, "sessions", ksess, "chunk_*"))) >= 3, 10)
s.outputs_summary()
os.kill(s.pid, signal.SIGKILL)
s.p.wait()
k.stop()
kdir = os.path.join(ART, "sessions", ksess)
before = json.load(open(os.path.join(kdir, "metadata.json")))
check("killed mid-capture: the session was left live", before.get("live") is True, before)
s2, port2 = start_server(ART, "--allow-device-control", name="restarted")
after = json.load(open(os.path.join(kdir, "metadata.json")))
nz = len(glob.glob(os.path.join(kdir, "chunk_*")))
check("restarted: the session is recovered (live false, recovered true, %d chunks)" % nz,
      after.get("live") is False and after.get("recovered") is True and after.get("chunks") == nz and nz >= 3, after)
r = s2.call("list_sessions", {})
check("list_sessions says recovered", any(x["session"] == ksess and x["recovered"] for x in sc(r).get("sessions", [])),
      result_text(r)[:300])
r = s2.call("analyze_profile", {"path": "perflens://artifacts/sessions/%s" % ksess}, timeout=60)
check("the recovered session analyzes", sc(r).get("session", {}).get("chunks_read") == nz, result_text(r)[:300])
check("the old server's devices are not shown as linked", not devices(s2), devices(s2))
rc = s2.close()
check("the restarted server exits 0 at end of input", rc == 0, rc)

# ------------------------------------------ accept() fails, the link goes on
ART4 = os.path.join(WORK, "art4")
code_file = os.path.join(WORK, "code")
s4 = Stdio(["prlimit", "--nofile=40:40", SERVER, "--allowed-root", WORK, "--artifact-root", ART4, "--allow-writes",
            "--agent-listen", "127.0.0.1:0", "--agent-pairing-code-file", code_file], "emfile")
s4.initialize()
port4 = link_port(s4)
held = []
for _ in range(50):
    try:
        held.append(socket.create_connection(("127.0.0.1", port4), timeout=2))
    except OSError:
        break
emfile = wait(lambda: "accept failed" in s4.stderr(), 5)
check("accept() out of descriptors (EMFILE) is logged and the listener backs off",
      emfile and "retrying in 1 s" in s4.stderr(), s4.stderr()[-400:])
for c in held:
    c.close()
f4 = Fake("--server", "127.0.0.1:%d" % port4, "--code", CODE, "--chunk", CHUNK)
# (The state file, not list_devices: the workers of this server share its low descriptor limit.)
def state4():
    for f in glob.glob(os.path.join(ART4, "devices", "127.0.0.1_*.json")):
        try:
            x = json.load(open(f))
        except ValueError:
            continue
        if x.get("state") == "connected":
            return x
    return None


d = wait(state4, 20)
check("after the descriptors came back the listener accepts and pairs again", d is not None,
      (f4.events()[-3:], s4.stderr()[-600:]))
f4.stop()
s4.close()

# ------------------------------------------- the sessions folder fills up
small = os.path.join(WORK, "small")
os.makedirs(small)
if os.geteuid() != 0 or subprocess.run(["mount", "-t", "tmpfs", "-o", "size=320k", "tmpfs", small]).returncode:
    print("skip - a full sessions folder: needs root to mount a small tmpfs")
else:
    try:
        s3, port3 = start_server(small, "--allow-device-control", name="full")
        f = Fake("--server", "127.0.0.1:%d" % port3, "--code", CODE, "--chunk", CHUNK, "--max-chunks", "9",
                 "--interval", "0.2", "--metrics-interval", "0.1")
        d = wait(lambda: device_where(s3, state="connected"), 10)
        r = s3.call("start_capture", {"device": (d or {}).get("device", "x"), "pid": 1, "interval_seconds": 1,
                                      "authorization": AUTH, "pid_authorization": PAUTH})
        fsess = sc(r).get("session", "none")
        wait(lambda: len(f.has("chunk")) >= 9, 20)
        time.sleep(1)
        fdir = os.path.join(small, "sessions", fsess)
        m = json.load(open(os.path.join(fdir, "metadata.json")))
        chunks = sorted(glob.glob(os.path.join(fdir, "chunk_*")))
        bad = [c for c in chunks if subprocess.run(["zstd", "-q", "-t", c]).returncode != 0]
        check("a full sessions folder: gaps recorded (%d chunks kept, %d gaps: %s)" % (
              len(chunks), len(m.get("gaps", [])), (m.get("gaps") or [{}])[0].get("reason")),
              m.get("gaps") and "No space left" in m["gaps"][0]["reason"] and len(chunks) + len(m["gaps"]) == 9,
              (m, chunks))
        check("no corrupt or partial chunk (every chunk_* is a whole zstd frame, no temp left)",
              not bad and not [x for x in os.listdir(fdir) if x.startswith(".")], (bad, os.listdir(fdir)))
        idx = sorted(int(os.path.basename(c)[6:11]) for c in chunks)
        check("no gap's index was reused by a later chunk", not set(idx) & {g["chunk"] for g in m["gaps"]}, (idx, m["gaps"]))
        check("the server keeps serving on a full disk", s3.ping_ms() is not None and
              "devices" in sc(s3.call("list_devices", {})), s3.stderr()[-300:])
        # Metrics keep coming; once the disk is full to the last block
        # (a filler file takes what the refused chunks left), metrics.jsonl
        # cannot grow either.
        with open(os.path.join(small, "filler"), "wb", buffering=0) as fill:
            try:
                while fill.write(b"\0" * 4096):
                    pass
            except OSError:
                pass
        # The next metrics frame (one a second) fails to be written; a
        # loaded machine may take a few seconds to send and land it.
        def metrics_refused():
            meta = json.load(open(os.path.join(fdir, "metadata.json")))
            return meta if ((meta.get("write_errors") or {}).get("metrics.jsonl") or {}).get("count") else None
        wait(metrics_refused, 10 * SCALE)
        m = json.load(open(os.path.join(fdir, "metadata.json")))
        werr = (m.get("write_errors") or {}).get("metrics.jsonl") or {}
        check("a full disk: the metrics frames not written are counted in the session's metadata "
              "(write_errors metrics.jsonl: %s x%s), the session stays live" % (werr.get("error"), werr.get("count")),
              "No space left" in (werr.get("error") or "") and werr.get("count", 0) >= 1 and m.get("live") is True, m)
        lines = open(os.path.join(fdir, "metrics.jsonl")).read().split("\n")
        def parses(t):
            try:
                return isinstance(json.loads(t), dict)
            except ValueError:
                return False
        torn = [l for l in lines if l and not parses(l)]
        check("metrics.jsonl holds whole lines only (%d), none torn by the full disk" % len(lines[:-1]),
              lines[-1] == "" and not torn, lines[-2:])
        dv = next((x for x in sc(s3.call("list_devices", {})).get("devices", []) if x["session"] == fsess), {})
        key = "sessions/%s/metrics.jsonl" % fsess
        check("list_devices shows the write error and the device's state is current on the full disk "
              "(its state file rewritten in place: %s chunks)" % dv.get("chunks"),
              key in (dv.get("write_errors") or {}) and dv.get("chunks") == m["chunks"], dv)
        check("the server logs the write error once, naming the file",
              s3.stderr().count("cannot write metrics.jsonl: No space left on device") == 1, s3.stderr()[-600:])
        r = s3.call("list_sessions", {})
        check("list_sessions shows the session's write errors",
              any(x["session"] == fsess and "metrics.jsonl" in (x.get("write_errors") or {})
                  for x in sc(r).get("sessions", [])), result_text(r)[:300])
        f.stop()
        # Space back: the next capture's chunks all land, with no gap.
        os.unlink(os.path.join(small, "filler"))
        subprocess.run(["mount", "-o", "remount,size=64m", small])
        f2 = Fake("--server", "127.0.0.1:%d" % port3, "--code", CODE, "--chunk", CHUNK, "--max-chunks", "3",
                  "--interval", "0.2", "--metrics-interval", "5")
        d2 = wait(lambda: device_where(s3, state="connected"), 10)
        r = s3.call("start_capture", {"device": (d2 or {}).get("device", "x"), "pid": 1, "interval_seconds": 1,
                                      "authorization": AUTH, "pid_authorization": PAUTH})
        sess2 = sc(r).get("session", "none")
        dir2 = os.path.join(small, "sessions", sess2)
        m2 = counted_chunks(dir2, 3)
        check("once space is back, the next session keeps every chunk (%s chunks, %d gaps)" % (
              m2.get("chunks"), len(m2.get("gaps") or [])),
              m2.get("chunks") == 3 and not m2.get("gaps"), m2)
        f2.stop()
        s3.close()
    finally:
        subprocess.run(["umount", "-l", small])

# ------------------------------------ a read-only sessions folder, then rw
ro_art = os.path.join(WORK, "ro-art")
os.makedirs(os.path.join(ro_art, "sessions"))
ro = os.path.join(ro_art, "sessions")
if os.geteuid() != 0 or subprocess.run(["mount", "--bind", ro, ro]).returncode:
    print("skip - a read-only sessions folder: needs root to bind-mount it read-only")
else:
    try:
        s5, port5 = start_server(ro_art, "--allow-device-control", name="ro")
        subprocess.run(["mount", "-o", "remount,bind,ro", ro], check=True)
        f = Fake("--server", "127.0.0.1:%d" % port5, "--code", CODE, "--chunk", CHUNK, "--max-chunks", "3",
                 "--interval", "0.2", "--metrics-interval", "5")
        d = wait(lambda: device_where(s5, state="connected"), 10)
        r = s5.call("start_capture", {"device": (d or {}).get("device", "x"), "pid": 1, "interval_seconds": 1,
                                      "authorization": AUTH, "pid_authorization": PAUTH})
        text = result_text(r)
        print("# read-only start_capture: %s" % text[:400])
        check("a read-only sessions folder: start_capture fails as output_refused, naming the folder and why",
              (r or {}).get("result", {}).get("isError") and "output_refused" in text and "sessions" in text and
              ("Read-only" in text or "read-only" in text), text[:400])
        check("a read-only sessions folder: nothing was written there, the device was not started "
              "and the server keeps serving", not os.listdir(ro) and not f.has("start") and
              s5.ping_ms() is not None, (os.listdir(ro), f.events()[-3:]))
        subprocess.run(["mount", "-o", "remount,bind,rw", ro], check=True)
        r = s5.call("start_capture", {"device": (d or {}).get("device", "x"), "pid": 1, "interval_seconds": 1,
                                      "authorization": AUTH, "pid_authorization": PAUTH})
        sess5 = sc(r).get("session", "none")
        dir5 = os.path.join(ro, sess5)
        m5 = counted_chunks(dir5, 3)
        check("once writable again, the next capture's session keeps every chunk (%s chunks, %d gaps)" % (
              m5.get("chunks"), len(m5.get("gaps") or [])), m5.get("chunks") == 3 and not m5.get("gaps"),
              (result_text(r)[:300], m5))
        f.stop()
        s5.close()
    finally:
        subprocess.run(["umount", "-l", ro])

for f in agents:
    f.stop()
sys.exit(1 if fails else 0)
