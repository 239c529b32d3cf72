"""agent_peer.py - a fake PerfLens server that drives the real perflens-agent.

It speaks the seed's base protocol (5-byte frames, hello, auth, commands)
and the extensions of docs/agent-protocol.md (hmac-sha256-v1 pairing,
maps, counters) with nothing but the Python standard library: hmac and
hashlib for the proofs (no code shared with the agent's own SHA-256), the
`zstd` command for decompression, and `readelf -n` for build-ids.

Used as a module by the scenario scripts below (python3 agent_peer.py
SCENARIO ...), which print the "ok - / not ok - / skip -" lines that
tests/integration/run.sh counts.
"""
import hashlib
import hmac
import json
import os
import re
import secrets
import socket
import struct
import subprocess
import sys
import time

import metrics_oracle

# The sanitizer halves of `make check` set it (ASan 4, TSan 10): slack in
# deadlines scales with it, never a bound the agent itself promises.
SCALE = float(os.environ.get("CK_TIMEOUT_MULTIPLIER") or 1)

FLAG_RAW, FLAG_ZSTD, FLAG_CMD, FLAG_RESP, FLAG_METRICS = 0, 1, 2, 3, 4


def check(what, cond, detail=""):
    print(("ok - " if cond else "not ok - ") + what + ("" if cond else ": " + str(detail)[:600]))
    sys.stdout.flush()
    return cond


def proof(code, role, agent_nonce, server_nonce):
    msg = ("perflens-pair-v1 %s %s %s" % (role, agent_nonce, server_nonce)).encode()
    return hmac.new(code.encode(), msg, hashlib.sha256).hexdigest()


def unzstd(data):
    r = subprocess.run(["zstd", "-d", "-c", "-q"], input=data, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=60)
    if r.returncode != 0:
        raise ValueError("zstd -d failed: " + r.stderr.decode(errors="replace"))
    return r.stdout


def count_samples(text):
    """Sample header lines: non-empty lines that do not start with a tab,
    outside the PERF_STAT sections (perf script -F ... with call chains)."""
    n = 0
    in_stat = False
    for line in text.split("\n"):
        if line.startswith("### PERF_STAT ###"):
            in_stat = True
            continue
        if in_stat:
            if "seconds time elapsed" in line:
                in_stat = False
            continue
        if line and not line.startswith("\t"):
            n += 1
    return n


def build_id_of(path):
    """The GNU build-id readelf -n prints for path."""
    r = subprocess.run(["readelf", "-n", path], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                       text=True)
    m = re.search(r"Build ID: ([0-9a-f]+)", r.stdout)
    return m.group(1) if m else None


class Peer:
    """One connection to an agent.  Frames that are not the answer being
    waited for are kept: chunks (decompressed text), metrics by type, maps
    frames and other flag-3 frames."""

    def __init__(self, sock):
        self.sock = sock
        self.buf = b""
        self.chunks = []        # (flag, wire payload, text)
        self.metrics = {}       # type -> [frame]
        self.maps = []
        self.others = []
        self.hello = None
        self.n = 0
        self.closed = False
        self.target = None      # the capture's pid, for the oracle of disk metrics

    @classmethod
    def connect(cls, port, host="127.0.0.1", timeout=10):
        s = socket.create_connection((host, port), timeout=timeout)
        return cls(s)

    def send_frame(self, flag, payload):
        self.sock.sendall(struct.pack(">IB", len(payload), flag) + payload)

    def _read(self, n, deadline):
        while len(self.buf) < n:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("no frame in time")
            self.sock.settimeout(left)
            try:
                d = self.sock.recv(1 << 20)
            except socket.timeout:
                raise TimeoutError("no frame in time")
            except (ConnectionResetError, OSError):
                d = b""
            if not d:
                self.closed = True
                raise EOFError("the agent closed the link")
            self.buf += d
        out, self.buf = self.buf[:n], self.buf[n:]
        return out

    def recv_frame(self, timeout=10):
        deadline = time.monotonic() + timeout
        hdr = self._read(5, deadline)
        n, flag = struct.unpack(">IB", hdr)
        return flag, self._read(n, deadline)

    def _keep(self, flag, payload):
        if flag in (FLAG_RAW, FLAG_ZSTD):
            text = (unzstd(payload) if flag == FLAG_ZSTD else payload).decode(errors="replace")
            self.chunks.append((flag, payload, text))
        elif flag == FLAG_METRICS:
            m = json.loads(payload)
            m["_oracle"] = metrics_oracle.snapshot(m, self.target)
            self.metrics.setdefault(m.get("type"), []).append(m)
        elif flag == FLAG_RESP:
            m = json.loads(payload)
            if m.get("type") == "maps":
                self.maps.append(m)
            else:
                self.others.append(m)

    def read_hello(self, timeout=15):
        flag, payload = self.recv_frame(timeout)
        assert flag == FLAG_RESP, "the first frame has flag %d" % flag
        self.hello = json.loads(payload)
        return self.hello

    def command(self, cmd, args=None, timeout=60, raw_id=None):
        self.n += 1
        cid = raw_id if raw_id is not None else "t%d" % self.n
        req = {"id": cid, "cmd": cmd}
        if args is not None:
            req["args"] = args
        self.send_frame(FLAG_CMD, json.dumps(req).encode())
        return self.wait_answer(cid, timeout)

    def wait_answer(self, cid, timeout=60):
        deadline = time.monotonic() + timeout
        while True:
            flag, payload = self.recv_frame(max(0.01, deadline - time.monotonic()))
            if flag == FLAG_RESP:
                m = json.loads(payload)
                if m.get("type") != "maps" and (m.get("id") == cid or "id" not in m):
                    return m
            self._keep(flag, payload)

    def pump(self, seconds):
        """Keep every frame that arrives for that long."""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            try:
                flag, payload = self.recv_frame(max(0.01, deadline - time.monotonic()))
            except TimeoutError:
                break
            self._keep(flag, payload)

    def pump_until(self, cond, longest):
        """Keep frames until cond() holds or `longest` seconds pass; cond()."""
        end = time.monotonic() + longest
        while not cond() and time.monotonic() < end:
            self.pump(min(0.25, max(0.01, end - time.monotonic())))
        return cond()

    def settle(self, quiet, longest=20.0):
        """Pump until no chunk has come for `quiet` seconds (at most
        `longest`): the chunk a pause or stop cut is sent after the answer,
        later on a slow build (TSan) or a loaded machine."""
        end = time.monotonic() + longest
        while time.monotonic() < end:
            n = len(self.chunks)
            self.pump(quiet)
            if len(self.chunks) == n:
                return

    def auth_hmac(self, code, wrong=False, features=("maps", "counters")):
        sn = secrets.token_hex(16)
        an = self.hello["ext"]["nonce"]
        p = proof(code + ("x" if wrong else ""), "server", an, sn)
        r = self.command("auth", {"method": "hmac-sha256-v1", "server_nonce": sn, "proof": p,
                                  "features": list(features)})
        r["_expected_agent_proof"] = proof(code, "agent", an, sn)
        return r

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass


def expect_closed(peer, timeout=5):
    """True when the agent ends the link within timeout."""
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            peer.recv_frame(max(0.01, deadline - time.monotonic()))
    except EOFError:
        return True
    except TimeoutError:
        return False
    return False


# ---------------------------------------------------------------------
# scenarios

def perf_children_checks(what):
    """The agent's perf children (AGENT_PID's): each in its own process
    group, LC_ALL=C, perf script at nice 5, no inherited descriptors."""
    agent = int(os.environ.get("AGENT_PID", "0"))
    if not agent:
        return
    kids = []
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            stat = open("/proc/%s/stat" % d).read().rsplit(")", 1)[1].split()
            argv = open("/proc/%s/cmdline" % d, "rb").read().split(b"\0")
            env = open("/proc/%s/environ" % d, "rb").read().split(b"\0")
            fds = set()
            for f in os.listdir("/proc/%s/fd" % d):
                try:
                    fds.add(os.readlink("/proc/%s/fd/%s" % (d, f)))
                except OSError:
                    pass
        except OSError:
            continue
        if int(stat[1]) == agent and argv[0].endswith(b"perf"):
            kids.append((int(d), argv[1].decode(), int(stat[2]), int(stat[16]), env, fds))
    names = sorted(k[1] for k in kids)
    check(what + ": the agent runs perf record and perf script (and perf stat) as children: %s" % names,
          "record" in names and "script" in names, names)
    check(what + ": each perf child leads its own process group", kids and all(k[2] == k[0] for k in kids), kids)
    check(what + ": perf children run with LC_ALL=C", kids and all(b"LC_ALL=C" in k[4] for k in kids), "")
    check(what + ": perf script runs at nice 5", [k[3] for k in kids if k[1] == "script"] == [5],
          [(k[1], k[3]) for k in kids])
    mine = set()
    for f in os.listdir("/proc/%d/fd" % agent):
        try:
            if int(f) > 2:
                mine.add(os.readlink("/proc/%d/fd/%s" % (agent, f)))
        except OSError:
            pass
    # A child's stdin/stdout pipes are shared with the agent by design;
    # the agent's sockets (the link, the listener) must not leak into perf.
    leaked = [(k[1], sorted(x for x in k[5] & mine if x.startswith("socket:"))) for k in kids]
    check(what + ": no agent socket leaks into a perf child (close-on-exec everywhere)",
          kids and all(not l[1] for l in leaked) and any(x.startswith("socket:") for x in mine), (leaked, sorted(mine)))


def capture_checks(p, what, workload, pid, seconds=7, stop=True):
    """start in continuous mode, collect, stop; check chunks, metrics, maps, counters.
    Disk and threads metrics are opt-in: off for the first 2.5 s of the
    capture (none may arrive), then turned on."""
    p.target = pid
    r = p.command("configure_metrics", {"enabled": True, "interval": 1, "network": True})
    check(what + ": configure_metrics: disk and threads are off unless asked for", r.get("ok")
          and r.get("disk") is False and r.get("threads") is False and r.get("interval") == 1, r)
    r = p.command("start", {"pid": pid, "frequency": 99, "duration": 2}, timeout=120)
    check(what + ": start answers continuous mode with cpu-clock (no PMU here)",
          r.get("ok") and r.get("mode") == "continuous" and r.get("events") == ["cpu-clock"], r)
    check(what + ": start reports frame-pointer call chains", r.get("callgraph") == "fp", r)
    p.pump(2.5)
    got = {t: len(p.metrics.get(t, [])) for t in ("system", "process", "network", "disk", "threads")}
    check(what + ": opt-in: system, process and network metrics but no disk or threads before they are enabled",
          got["system"] and got["process"] and got["network"] and not got["disk"] and not got["threads"], got)
    r = p.command("configure_metrics", {"disk": True, "threads": True})
    check(what + ": configure_metrics turns disk and threads on", r.get("ok") and r.get("disk")
          and r.get("threads") and r.get("interval") == 1 and r.get("network"), r)
    p.pump(max(0.5, seconds / 2 - 2.5))
    perf_children_checks(what)
    p.pump(seconds / 2)
    st = p.command("status")
    check(what + ": status says profiling, with the probed capabilities and counters",
          st.get("state") == "profiling" and "cpu-clock" in st.get("capabilities", {}).get("record_events", [])
          and "counters" in st, st)
    rate = int(open("/proc/sys/kernel/perf_event_max_sample_rate").read())
    check(what + ": status carries max_sample_rate (%d)" % rate, st.get("max_sample_rate") == rate, st)
    end = p.command("stop", timeout=30) if stop else None
    p.pump(1.5)
    return end


def verify_capture(p, what, workload, pid, end, perflens=None, work=None):
    zchunks = [c for c in p.chunks if c[0] == FLAG_ZSTD]
    check(what + ": zstd chunks arrive (%d) and decompress" % len(zchunks),
          len(zchunks) >= 2 and all(c[1][:4] == b"\x28\xb5\x2f\xfd" for c in zchunks), len(zchunks))
    raw = sum(len(c[2]) for c in zchunks)
    wire = sum(len(c[1]) for c in zchunks)
    if wire:
        print("# %s: %d chunks, %d bytes of text sent as %d (%.1fx)" % (what, len(zchunks), raw, wire, raw / wire))
    texts = "".join(c[2] for c in p.chunks)
    samples = sum(count_samples(c[2]) for c in p.chunks)
    check(what + ": chunks hold call chains of the workload (spin_inner)", "spin_inner" in texts,
          texts[:300])
    check(what + ": chunks carry perf stat rounds", "### PERF_STAT ###" in texts and
          "seconds time elapsed" in texts, texts[-300:])
    for t in ("system", "process", "network", "disk", "threads"):
        check(what + ": metrics of type %s arrive" % t, len(p.metrics.get(t, [])) >= 1,
              sorted(p.metrics))
    sysm = (p.metrics.get("system") or [{}])[-1]
    check(what + ": system metrics have the seed's fields", all(k in sysm for k in (
        "ts", "cpu", "mem", "load", "uptime_sec", "context_switches", "procs_running"))
        and "overall_pct" in sysm.get("cpu", {}) and "used_pct" in sysm.get("mem", {}), sysm)
    procm = (p.metrics.get("process") or [{}])[-1]
    check(what + ": process metrics are of the target", procm.get("pid") == pid
          and procm.get("rss_kb", 0) > 0 and "voluntary_csw" in procm, procm)
    thr = (p.metrics.get("threads") or [{}])[-1]
    check(what + ": threads metrics list the target's thread", any(t.get("comm") for t in thr.get("threads", [])), thr)
    disk = (p.metrics.get("disk") or [{}])[-1]
    check(what + ": disk metrics carry the target's I/O (proc)", "proc" in disk and "syscr" in disk["proc"], disk)
    metrics_oracle.check_metrics(p.metrics, check, what)
    check(what + ": a maps frame arrives", len(p.maps) >= 1, p.maps[:1])
    if p.maps:
        m = p.maps[0]
        mine = [e for e in m["maps"] if e["path"] == workload]
        want = build_id_of(workload)
        check(what + ": maps list the workload's executable mapping", mine and "x" in mine[0]["perms"],
              [e["path"] for e in m["maps"]])
        check(what + ": the workload's build_id equals readelf -n's", mine and want and mine[0]["build_id"] == want,
              (mine[:1], want))
        libc = [e for e in m["maps"] if "libc.so" in e["path"]]
        check(what + ": libc's mapping has a build_id too", libc and libc[0]["build_id"] and
              libc[0]["build_id"] == build_id_of(libc[0]["path"]), libc[:1])
        check(what + ": maps carry pid and start_time", m.get("pid") and m.get("start_time") and m.get("seq") == 0, m)
    if end is not None:
        c = end.get("counters", {})
        check(what + ": stop answers ok with the counters", end.get("ok") and "samples_sent" in c, end)
        check(what + ": counters.samples_sent (%s) equals the samples in the chunks (%d)" % (c.get("samples_sent"), samples),
              c.get("samples_sent") == samples and samples > 0, c)
        check(what + ": counters.chunks_sent equals the chunks received (%d)" % len(p.chunks),
              c.get("chunks_sent") == len(p.chunks), c)
        check(what + ": counters.wire_bytes equals the bytes received", c.get("wire_bytes") ==
              sum(len(x[1]) + 5 for x in p.chunks), c)
    if perflens and work:
        d = os.path.join(work, "session-" + what.replace(" ", "_"))
        os.makedirs(d, exist_ok=True)
        for i, c in enumerate(p.chunks):
            with open(os.path.join(d, "chunk_%05d.%s" % (i, "zst" if c[0] == FLAG_ZSTD else "txt")), "wb") as f:
                f.write(c[1])
        with open(os.path.join(d, "metadata.json"), "w") as f:
            json.dump({"session_id": "test", "chunks": len(p.chunks), "total_samples": samples}, f)
        r = subprocess.run([perflens, "analyze", "--input", d, "--artifact-root", work + "/art"],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=120)
        try:
            an = json.loads(r.stdout)
            got = sum(e["samples"] for e in an["events"])
        except (ValueError, KeyError):
            got = None
        check(what + ": perflens analyze reads the chunks as a session: %s samples, as counted (%d)" % (got, samples),
              got == samples, r.stderr[-300:])
    return samples


def scenario_listen(port, code, pid, workload, perflens, work):
    what = "listen"
    # 1. before auth: unauthenticated; bad ids; three wrong codes end the link
    p = Peer.connect(port)
    h = p.read_hello()
    check(what + ": hello has the seed's fields", h.get("type") == "hello" and h.get("version") == 1
          and h.get("agent") == "perflens" and h.get("auth") == "token" and "arch" in h.get("platform", {}), h)
    ext = h.get("ext", {})
    check(what + ": hello offers hmac-sha256-v1 with a 32-hex nonce and maps, counters, perf_data",
          ext.get("pairing") == "hmac-sha256-v1" and re.fullmatch("[0-9a-f]{32}", ext.get("nonce", ""))
          and ext.get("features") == ["maps", "counters", "perf_data"], ext)
    check(what + ": the hello does not carry the code", code not in json.dumps(h), h)
    r = p.command("status")
    check(what + ": status before auth is answered unauthenticated", r == {"id": "t1", "ok": False,
                                                                         "error": "unauthenticated"}, r)
    r = p.command("ping", raw_id='x"y')
    check(what + ": a bad id is answered 'invalid id' and not echoed", r.get("error") == "invalid id"
          and "id" not in r, r)
    p.send_frame(FLAG_CMD, b"{not json")
    r = p.command("ping")
    check(what + ": a frame that is not JSON is dropped, the link stays", r.get("error") == "unauthenticated", r)
    for i in range(3):
        r = p.command("auth", {"token": "wrong%d" % i})
        check(what + ": wrong code %d is answered auth failed" % (i + 1), r.get("error") == "auth failed", r)
    check(what + ": three wrong codes end the link", expect_closed(p), "still open")
    p.close()
    # 2. the seed's plaintext token
    p = Peer.connect(port)
    h = p.read_hello()
    r = p.command("auth", {"token": code})
    check(what + ": the seed's plaintext token authenticates", r.get("ok") is True, r)
    r = p.command("auth", {"token": code})
    check(what + ": auth again answers already", r.get("ok") and r.get("already"), r)
    r = p.command("ping")
    check(what + ": ping after auth", r.get("ok") is True, r)
    r = p.command("update")
    check(what + ": update is refused: updates are the operator's", r.get("ok") is False and "operator" in r.get("error", ""), r)
    r = p.command("frobnicate")
    check(what + ": an unknown command is named", r.get("error") == "unknown command: frobnicate", r)
    r = p.command("start", {"pid": pid, "frequency": 0})
    check(what + ": start refuses frequency 0 with the valid range", r.get("ok") is False and "1.." in r.get("error", ""), r)
    r = p.command("verify_perf", {"perf": "perf/relative"})
    check(what + ": verify_perf refuses a relative perf path", r.get("ok") is False and "absolute" in r.get("error", ""), r)
    perf = subprocess.run(["sh", "-c", "command -v perf"], stdout=subprocess.PIPE, text=True).stdout.strip()
    r = p.command("verify_perf", {"perf": perf})
    check(what + ": verify_perf with an absolute perf: available and functional (cpu-clock)",
          r.get("available") and r.get("functional") and r.get("perf_path") == perf
          and r.get("version", "").startswith("perf version"), r)
    r = p.command("verify_pid", {"pid": pid})
    check(what + ": verify_pid finds the workload", r.get("exists") and r.get("info", {}).get("comm"), r)
    p.close()
    # 3. hmac: a wrong server proof is refused, then the right one works both ways
    p = Peer.connect(port)
    h = p.read_hello()
    r = p.auth_hmac(code, wrong=True)
    check(what + ": a wrong server proof is refused (auth failed, no agent proof)",
          r.get("error") == "auth failed" and "proof" not in r, r)
    h2 = p.hello
    r = p.auth_hmac(code)
    check(what + ": the right server proof authenticates", r.get("ok") is True, r)
    check(what + ": the agent's proof is HMAC(code, agent nonces)", r.get("proof") == r["_expected_agent_proof"], r)
    check(what + ": features maps and counters are taken", r.get("features") == ["maps", "counters"], r)
    check(what + ": the code never crossed the wire from the agent", code not in json.dumps(h2) + json.dumps(r), "")
    end = capture_checks(p, what, workload, pid)
    verify_capture(p, what, workload, pid, end, perflens, work)
    p.close()


def scenario_server(port, code, pid, workload, perflens, work, agent_log):
    """The agent dials us: auth, capture, drop it mid-chunk, it comes back;
    failed auths make the backoff grow."""
    what = "server"
    ls = socket.socket()
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind(("127.0.0.1", port))
    ls.listen(4)
    ls.settimeout(40)

    def accept():
        s, _ = ls.accept()
        return Peer(s), time.monotonic()

    p, t = accept()
    p.read_hello()
    r = p.auth_hmac(code)
    check(what + ": the dialing agent authenticates with hmac", r.get("ok") and r.get("proof") == r["_expected_agent_proof"], r)
    r = p.command("start", {"pid": pid, "frequency": 99, "duration": 1}, timeout=120)
    check(what + ": start", r.get("ok") and r.get("mode") == "continuous", r)
    # The first chunk: perf record and perf script start on the agent first,
    # which a loaded machine can stretch past a few intervals (a clean-clone
    # CI run got none in 3 s); the drop is then half a second later.
    p.pump_until(lambda: len(p.chunks) >= 1, 10 * SCALE)
    # Drop mid-chunk: half a second into the next interval.
    p.pump(0.5)
    first = len(p.chunks)
    check(what + ": chunks arrive before the drop", first >= 1, first)
    p.close()
    t_drop = time.monotonic()
    try:
        p2, t2 = accept()
    except socket.timeout:
        check(what + ": the agent reconnects after the drop", False, "no connection in 40 s")
        return
    check(what + ": the agent reconnects within 3 s of the drop (backoff reset after an authenticated session)",
          t2 - t_drop < 1.0 + 2.5 * SCALE, "%.1f s" % (t2 - t_drop))
    p2.read_hello()
    r = p2.auth_hmac(code)
    p2.pump_until(lambda: len(p2.chunks) >= 1, 10 * SCALE)
    check(what + ": the capture goes on across the reconnect: chunks arrive on the new link",
          len(p2.chunks) >= 1, len(p2.chunks))
    r = p2.command("pause", timeout=30)
    check(what + ": pause", r.get("ok") is True, r)
    st = p2.command("status")
    check(what + ": status says paused", st.get("state") == "paused", st)
    r = p2.command("reprobe")
    check(what + ": reprobe is refused while paused", r.get("ok") is False and "stop first" in r.get("error", ""), r)
    r = p2.command("start", {"pid": pid})
    check(what + ": start is refused while paused, naming resume", "resume" in r.get("error", ""), r)
    # The chunk the pause cut comes once perf has stopped and perf script
    # drained: up to the 3 s grace and its reading on a loaded machine, so
    # quiet must last longer than that before it counts as paused.
    p2.settle(6.0, longest=30.0)
    before = len(p2.chunks)
    p2.pump(2.5)
    check(what + ": no chunk while paused", len(p2.chunks) == before, len(p2.chunks) - before)
    r = p2.command("resume")
    check(what + ": resume", r.get("ok") is True, r)
    r = p2.command("resume")
    check(what + ": resume again answers not paused", r.get("error") == "not paused", r)
    p2.pump_until(lambda: len(p2.chunks) > before, 10 * SCALE)  # perf starts again first
    check(what + ": chunks arrive again after resume", len(p2.chunks) > before, len(p2.chunks) - before)
    st = p2.command("status")
    c = st.get("counters", {})
    check(what + ": counters after the reconnect: chunks_sent >= both links' chunks",
          c.get("chunks_sent", 0) >= first + len(p2.chunks), c)
    r = p2.command("stop", timeout=30)
    check(what + ": stop", r.get("ok"), r)
    p2.close()
    # Failed auth: the gaps between connects grow (1 s, 2 s, 4 s).
    times = []
    for i in range(4):
        try:
            q, tq = accept()
        except socket.timeout:
            break
        times.append(tq)
        q.read_hello()
        for _ in range(3):
            try:
                q.auth_hmac(code, wrong=True)
            except (EOFError, TimeoutError):
                break
        expect_closed(q, 5)
        q.close()
    gaps = [b - a for a, b in zip(times, times[1:])]
    check(what + ": after failed auths the backoff grows (gaps %s s)" % ["%.1f" % g for g in gaps],
          len(gaps) == 3 and gaps[2] > gaps[0] + 1.5 and gaps[1] > gaps[0] + 0.5, gaps)
    ls.close()


def scenario_stall(port, code, pid, timeout_ms):
    """The server stops reading: the agent's send bound ends the link and it dials again."""
    what = "stall"
    ls = socket.socket()
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    ls.bind(("127.0.0.1", port))
    ls.listen(4)
    ls.settimeout(60)
    s, _ = ls.accept()
    p = Peer(s)
    p.read_hello()
    r = p.auth_hmac(code)
    r = p.command("configure_metrics", {"interval": 1, "disk": True, "threads": True})
    r = p.command("start", {"pid": pid, "frequency": 999, "duration": 1}, timeout=120)
    check(what + ": start", r.get("ok"), r)
    t0 = time.monotonic()
    # Stop reading; keep asking, so answers pile up too.
    try:
        for i in range(60):
            p.send_frame(FLAG_CMD, json.dumps({"id": "s%d" % i, "cmd": "status"}).encode())
    except OSError:
        pass
    try:
        s2, _ = ls.accept()
        dt = time.monotonic() - t0
        check(what + ": the agent gave up the stalled link and dialed again after %.1f s (send bound %d ms)"
              % (dt, timeout_ms), dt < 60, dt)
        p2 = Peer(s2)
        p2.read_hello()
        p2.auth_hmac(code)
        p2.command("stop", timeout=30)
        p2.close()
    except socket.timeout:
        check(what + ": the agent gave up the stalled link", False, "no new connection in 60 s")
    s.close()
    ls.close()


def scenario_garbage(port, code, agent_pid):
    """Garbage before the hello, a 4 GB header before and after auth: refused, no allocation."""
    what = "garbage"
    ls = socket.socket()
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind(("127.0.0.1", port))
    ls.listen(4)
    ls.settimeout(40)

    def hwm():
        for line in open("/proc/%d/status" % agent_pid):
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
        return 0

    s, _ = ls.accept()
    s.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")  # before reading the hello
    p = Peer(s)
    check(what + ": HTTP garbage before the hello ends the link", expect_closed(p, 10), "still open")
    s.close()
    before = hwm()
    s, _ = ls.accept()
    p = Peer(s)
    p.read_hello()
    s.sendall(struct.pack(">IB", 0xFFFFFFFF, FLAG_CMD))
    check(what + ": a 4 GB frame header before auth ends the link", expect_closed(p, 10), "still open")
    s.close()
    s, _ = ls.accept()
    p = Peer(s)
    p.read_hello()
    r = p.auth_hmac(code)
    p.send_frame(FLAG_CMD, b"\xff\xfe garbage after the hello")
    p.send_frame(FLAG_METRICS, b"{}")
    r = p.command("ping")
    check(what + ": garbage frames after auth are dropped, the link stays", r.get("ok") is True, r)
    s.sendall(struct.pack(">IB", 0xFFFFFFFF, FLAG_CMD))
    check(what + ": a 4 GB frame header after auth ends the link", expect_closed(p, 10), "still open")
    after = hwm()
    check(what + ": no allocation for the 4 GB headers (peak RSS %d -> %d kB)" % (before, after),
          after - before < 32 * 1024, (before, after))
    s.close()
    ls.close()


def scenario_cut(port, code, pid, limit):
    """A chunk is cut at the size limit (lowered by PERFLENS_TEST_CHUNK_BYTES)
    at a sample boundary, long before the 30 s interval."""
    what = "cut"
    p = Peer.connect(port)
    p.read_hello()
    p.auth_hmac(code)
    r = p.command("start", {"pid": pid, "frequency": 2000, "duration": 30}, timeout=120)
    check(what + ": start at 2000 Hz with a 30 s interval", r.get("ok"), r)
    p.pump(6)
    end = p.command("stop", timeout=30)
    p.pump(1)
    texts = [c[2].split("\n### PERF_STAT ###")[0] for c in p.chunks]
    sizes = [len(c[2].encode()) for c in p.chunks]
    check(what + ": several chunks within 6 s of a 30 s interval (%d, sizes %s)" % (len(texts), sizes[:8]),
          len(texts) >= 3, sizes)
    check(what + ": every chunk but the last reached the %d-byte limit" % limit,
          all(s >= limit for s in sizes[:-1]), sizes)
    check(what + ": every chunk ends at a sample boundary (a blank line after a call chain)",
          all(t.endswith("\n\n") for t in texts if t), [t[-80:] for t in texts if not t.endswith("\n\n")][:2])
    check(what + ": every chunk starts with a sample header", all(t and not t.startswith("\t") for t in texts), "")
    samples = sum(count_samples(c[2]) for c in p.chunks)
    check(what + ": counters still equal the samples received (%d)" % samples,
          end.get("counters", {}).get("samples_sent") == samples, end)
    p.close()


def scenario_rounds(port, code, pid):
    """Rounds mode over the link (PERFLENS_TEST_ROUNDS=1): one chunk per round, each with its stat."""
    what = "rounds"
    p = Peer.connect(port)
    p.read_hello()
    p.auth_hmac(code)
    r = p.command("start", {"pid": pid, "frequency": 99, "duration": 1}, timeout=120)
    check(what + ": start answers rounds mode", r.get("ok") and r.get("mode") == "rounds", r)
    # Two rounds of 1 s each, however slowly a loaded machine runs them.
    p.pump_until(lambda: len(p.chunks) >= 2, 8 * SCALE)
    end = p.command("stop", timeout=30)
    p.pump(1)
    check(what + ": a chunk per round arrives (%d)" % len(p.chunks), len(p.chunks) >= 2, len(p.chunks))
    check(what + ": each round's chunk carries its PERF_STAT section",
          p.chunks and all("### PERF_STAT ###" in c[2] for c in p.chunks), "")
    samples = sum(count_samples(c[2]) for c in p.chunks)
    check(what + ": counters equal the samples received (%d)" % samples,
          end.get("counters", {}).get("samples_sent") == samples and samples > 0, end)
    p.close()


def scenario_require_proof(port, code):
    """--require-proof: the seed's plaintext token is refused, the hmac proof works."""
    what = "require-proof"
    p = Peer.connect(port)
    p.read_hello()
    r = p.command("auth", {"token": code})
    check(what + ": the right code in clear is refused", r.get("error") == "auth failed", r)
    r = p.auth_hmac(code)
    check(what + ": the hmac proof authenticates", r.get("ok") is True and r.get("proof") == r["_expected_agent_proof"], r)
    p.close()
    # A peer that never proves anything is dropped after 30 s (monotonic).
    p = Peer.connect(port)
    p.read_hello()
    t0 = time.monotonic()
    closed = expect_closed(p, 40)
    dt = time.monotonic() - t0
    check(what + ": a peer that sends no auth is dropped after 30 s (%.1f s)" % dt, closed and 29 < dt < 36, dt)
    p.close()


def scenario_handshake(port, code):
    """The hello and both proofs only (the aarch64 agent under qemu)."""
    what = "handshake"
    p = Peer.connect(port)
    h = p.read_hello()
    check(what + ": hello from the agent (arch %s)" % h.get("platform", {}).get("arch"),
          h.get("type") == "hello" and h.get("ext", {}).get("pairing") == "hmac-sha256-v1", h)
    r = p.auth_hmac(code)
    check(what + ": hmac proofs both ways", r.get("ok") and r.get("proof") == r["_expected_agent_proof"], r)
    r = p.command("ping")
    check(what + ": ping", r.get("ok") is True, r)
    p.pump(2.5)
    check(what + ": system metrics arrive", len(p.metrics.get("system", [])) >= 1, sorted(p.metrics))
    metrics_oracle.check_metrics(p.metrics, check, what, ("system", "network"))
    p.close()


def scenario_emfile(port, code, agent_pid, log):
    """--listen out of descriptors: the test lowered the agent's
    RLIMIT_NOFILE below its next descriptor, so accept() fails (EMFILE).
    The agent logs it and backs off (about once a second, not a spin),
    keeps listening, and takes the waiting connection once descriptors
    are there again (the limit raised back)."""
    what = "listen, out of descriptors"
    p = Peer.connect(port)  # completes in the kernel's backlog
    deadline = time.monotonic() + 6
    while time.monotonic() < deadline and "accept failed: Too many open files" not in open(log).read():
        time.sleep(0.1)
    t0, n0 = time.monotonic(), open(log).read().count("accept failed")
    time.sleep(3)
    n1 = open(log).read().count("accept failed")
    rate = (n1 - n0) / (time.monotonic() - t0)
    check(what + ": accept() EMFILE is logged and backed off (%.1f retries/s)" % rate,
          n0 >= 1 and "retrying in 1 s" in open(log).read() and 0.3 <= rate <= 1.5, open(log).read()[-400:])
    check(what + ": the agent is still running", os.path.exists("/proc/%d" % agent_pid))
    subprocess.run(["prlimit", "--pid", str(agent_pid), "--nofile=1024:"], check=True)  # the soft limit back
    try:
        h = p.read_hello(timeout=6)
        r = p.auth_hmac(code)
        ok = h.get("type") == "hello" and r.get("ok") is True and p.command("ping").get("ok") is True
    except (TimeoutError, EOFError, AssertionError) as e:
        ok, r = False, repr(e)
    check(what + ": with descriptors back, the waiting connection is accepted and pairs", ok, r)
    p.close()


def proc_ticks(pid):
    """utime + stime of pid itself (not its children), and its VmRSS/VmHWM in kB."""
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    ticks = int(fields[11]) + int(fields[12])
    rss = hwm = 0
    for line in open("/proc/%d/status" % pid):
        if line.startswith("VmRSS:"):
            rss = int(line.split()[1])
        if line.startswith("VmHWM:"):
            hwm = int(line.split()[1])
    return ticks, rss, hwm


def scenario_bench(port, code, pid, agent_pid, seconds, freq):
    """bench/agent.sh: the agent's own CPU (beyond perf) and RSS during a
    continuous capture, and the compressed/raw ratio of what it sent."""
    p = Peer.connect(port)
    p.read_hello()
    p.auth_hmac(code)
    r = p.command("start", {"pid": pid, "frequency": freq, "duration": 8}, timeout=180)
    if not r.get("ok"):
        print("bench: start failed: %s" % r)
        return
    t0, (k0, _, _) = time.monotonic(), proc_ticks(agent_pid)
    p.pump(seconds)
    t1, (k1, rss, hwm) = time.monotonic(), proc_ticks(agent_pid)
    end = p.command("stop", timeout=60)
    c = end.get("counters", {})
    hz = os.sysconf("SC_CLK_TCK")
    cpu = 100.0 * (k1 - k0) / hz / (t1 - t0)
    raw, wire = c.get("raw_bytes", 0), c.get("wire_bytes", 0)
    print("agent CPU beyond perf: %.2f%% of one core at %d Hz over %.0f s (target <= 1%%): %d ticks"
          % (cpu, freq, t1 - t0, k1 - k0))
    print("agent RSS: %d kB now, %d kB peak" % (rss, hwm))
    print("wire: %d chunks, %d samples, %d bytes of text sent as %d bytes: %.1fx (compressed/raw %.3f)"
          % (c.get("chunks_sent", 0), c.get("samples_sent", 0), raw, wire,
             raw / wire if wire else 0, wire / raw if raw else 0))


if __name__ == "__main__":
    name, args = sys.argv[1], sys.argv[2:]
    try:
        if name == "listen":
            scenario_listen(int(args[0]), args[1], int(args[2]), args[3], args[4], args[5])
        elif name == "server":
            scenario_server(int(args[0]), args[1], int(args[2]), args[3], args[4], args[5], None)
        elif name == "stall":
            scenario_stall(int(args[0]), args[1], int(args[2]), int(args[3]))
        elif name == "garbage":
            scenario_garbage(int(args[0]), args[1], int(args[2]))
        elif name == "bench":
            scenario_bench(int(args[0]), args[1], int(args[2]), int(args[3]), float(args[4]), int(args[5]))
        elif name == "cut":
            scenario_cut(int(args[0]), args[1], int(args[2]), int(args[3]))
        elif name == "rounds":
            scenario_rounds(int(args[0]), args[1], int(args[2]))
        elif name == "require_proof":
            scenario_require_proof(int(args[0]), args[1])
        elif name == "handshake":
            scenario_handshake(int(args[0]), args[1])
        elif name == "emfile":
            scenario_emfile(int(args[0]), args[1], int(args[2]), args[3])
        else:
            check("agent_peer: scenario " + name, False, "unknown")
    except Exception as e:  # one failing step must not hide what came before
        import traceback
        check("agent_peer %s: the scenario ran to its end" % name, False, traceback.format_exc()[-800:])
