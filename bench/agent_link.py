"""agent_link.py - speed of the server's agent link (bench/agent_link.sh).

A Python agent (tests/integration/fake_agent.py's proofs) pairs with
perflens-mcp --agent-listen and then:
  1. ingest: sends the same zstd chunk of ~CHUNK_MB of perf script text N
     times back to back; the figure is MB/s of decompressed text the link
     checked and spooled (time from the first byte sent to the last chunk's
     rename seen in metadata.json);
  2. delay: in a fresh session, sends one ~10 MB chunk and times from the
     moment it was sent to list_hotspots answering from an analyze_profile
     of the session that includes it (target <= 1 s).
Prints figures; exit 0 whatever they are.

  agent_link.py SERVER TEXT_FILE
"""
import json, os, socket, struct, subprocess, sys, tempfile, threading, time
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "integration"))
os.environ.setdefault("WORK", tempfile.mkdtemp(prefix="perflens-bench-link."))
from mcp_client import Stdio  # noqa
from fake_agent import proof  # noqa

SERVER, TEXT = sys.argv[1:3]
N = int(os.environ.get("BENCH_LINK_CHUNKS", "8"))
CHUNK_MB = float(os.environ.get("BENCH_LINK_CHUNK_MB", "10"))
WORK = os.environ["WORK"]
CODE = "bench-" + os.urandom(6).hex()
AUTH = "I_EXPLICITLY_AUTHORIZE_TARGET_PROFILING"
PAUTH = "I_EXPLICITLY_AUTHORIZE_PID_ATTACH"

base = open(TEXT, "rb").read()
text = base * max(1, int(CHUNK_MB * 1e6 / len(base)))
z = subprocess.run(["zstd", "-q", "-c", "-1"], input=text, stdout=subprocess.PIPE, check=True).stdout
ART = os.path.join(WORK, "art")
open(os.path.join(WORK, "code"), "w").write(CODE)
s = Stdio([SERVER, "--allowed-root", WORK, "--artifact-root", ART, "--allow-writes", "--agent-listen",
           "127.0.0.1:0", "--agent-pairing-code-file", os.path.join(WORK, "code"), "--allow-device-control"], "bench")
s.initialize()
for _ in range(100):
    ls = [l for l in s.stderr().splitlines() if "agent link: listening on" in l]
    if ls:
        break
    time.sleep(0.05)
port = int(ls[0].rsplit(":", 1)[1].split(";")[0])


def sc(r):
    return (r or {}).get("result", {}).get("structuredContent") or {}


class Sender:
    def __init__(self):
        self.sock = socket.create_connection(("127.0.0.1", port))
        self.lock = threading.Lock()
        self.nonce = os.urandom(16).hex()
        self.started = threading.Event()
        self.send_json(3, {"type": "hello", "version": 1, "agent": "perflens", "agent_version": "bench",
                           "auth": "token", "platform": {"arch": "x86_64", "kernel": "bench"},
                           "ext": {"pairing": "hmac-sha256-v1", "nonce": self.nonce, "features": ["counters"]}})
        threading.Thread(target=self.reader, daemon=True).start()

    def send(self, flag, payload):
        with self.lock:
            self.sock.sendall(struct.pack(">IB", len(payload), flag) + payload)

    def send_json(self, flag, obj):
        self.send(flag, json.dumps(obj).encode())

    def recv_exact(self, n):
        b = b""
        while len(b) < n:
            c = self.sock.recv(n - len(b))
            if not c:
                raise EOFError
            b += c
        return b

    def reader(self):
        try:
            while True:
                n, flag = struct.unpack(">IB", self.recv_exact(5))
                cmd = json.loads(self.recv_exact(n))
                rid, name, args = cmd.get("id"), cmd.get("cmd"), cmd.get("args") or {}
                if name == "auth":
                    sn = args["server_nonce"]
                    self.send_json(3, {"id": rid, "ok": True, "proof": proof(CODE, "agent", self.nonce, sn),
                                       "features": args.get("features", [])})
                elif name in ("start", "stop"):
                    self.send_json(3, {"id": rid, "ok": True, "mode": "continuous"})
                    if name == "start":
                        self.started.set()
                else:
                    self.send_json(3, {"id": rid, "ok": True})
        except (EOFError, OSError):
            pass


def meta_chunks(session):
    try:
        return json.load(open(os.path.join(ART, "sessions", session, "metadata.json"))).get("chunks", 0)
    except (OSError, ValueError):
        return 0


agent = Sender()
dev = None
for _ in range(200):
    d = [x for x in sc(s.call("list_devices", {})).get("devices", []) if x["state"] == "connected"]
    if d:
        dev = d[0]["device"]
        break
    time.sleep(0.05)
start = {"device": dev, "pid": 1, "interval_seconds": 1, "authorization": AUTH, "pid_authorization": PAUTH}
session = sc(s.call("start_capture", start)).get("session")
t0 = time.monotonic()
for _ in range(N):
    agent.send(1, z)
while meta_chunks(session) < N and time.monotonic() - t0 < 300:
    time.sleep(0.005)
dt = time.monotonic() - t0
mb = len(text) * N / 1e6
print("agent link ingest: %d chunks of %.1f MB text (%.2f MB zstd, %.0fx) in %.2f s: %.0f MB/s of text, %.0f MB/s on the wire"
      % (N, len(text) / 1e6, len(z) / 1e6, len(text) / len(z), dt, mb / dt, len(z) * N / 1e6 / dt))
s.call("stop_capture", {"device": dev})

# The delay from a chunk's arrival to hotspots that include it.
session = sc(s.call("start_capture", start)).get("session")
agent.send(1, z)
t_sent = time.monotonic()
while meta_chunks(session) < 1:
    time.sleep(0.002)
t_spooled = time.monotonic()
r = s.call("analyze_profile", {"path": "perflens://artifacts/sessions/%s" % session}, timeout=120)
an = sc(r)
t_an = time.monotonic()
steps = [x for x in an.get("next_steps", []) if x["tool"] == "list_hotspots"]
r = s.call("list_hotspots", steps[0]["arguments"]) if steps else None
t_hs = time.monotonic()
ok = bool(sc(r).get("hotspots"))
total = t_hs - t_sent
print("agent link delay: a %.1f MB chunk sent -> spooled %.0f ms -> analyze_profile %.0f ms -> list_hotspots %.0f ms: "
      "%.2f s in all (target <= 1 s: %s)%s" % (len(text) / 1e6, (t_spooled - t_sent) * 1e3, (t_an - t_spooled) * 1e3,
                                               (t_hs - t_an) * 1e3, total, "met" if total <= 1.0 else "not met",
                                               "" if ok else " [no hotspots came back]"))
s.call("stop_capture", {"device": dev})
s.close()
