#!/usr/bin/env python3
"""fake_agent.py - a device agent in Python for the agent link's tests.

It speaks the wire protocol of docs/agent-protocol.md from the agent's side:
the hello (with extension 1's ext, or the seed's without, or a pre-0.10 one
with a token), both pairing proofs (HMAC-SHA256 from Python's hmac, an
implementation independent of the server's nettle), the commands the link
sends (auth ping status start stop pause resume list_processes), chunks of
a given perf script text compressed with the zstd command, metrics frames,
maps frames, and the faults the tests need (garbage before the hello, a
4 GB frame header, a wrong proof, a link that stops reading after its
first command, a small receive window, a link cut mid-chunk), and what a stop does to the
chunk in flight (--tail: the seed discards it, or ours sends it late, or
counts it sent and loses it).  Events go to stdout as JSON lines so the
test can follow.

  fake_agent.py --server HOST:PORT | --listen PORT  --code CODE [options]
"""
import argparse, hashlib, hmac, json, os, re, socket, struct, subprocess, sys, threading, time

SAMPLE_HEADER = re.compile(rb"^\S.*\s\d+\.\d+:\s")


def emit(**kw):
    sys.stdout.write(json.dumps(kw) + "\n")
    sys.stdout.flush()


def proof(code, role, an, sn):
    return hmac.new(code.encode(), ("perflens-pair-v1 %s %s %s" % (role, an, sn)).encode(),
                    hashlib.sha256).hexdigest()


def count_samples(text):
    n, in_stat = 0, False
    for line in text.split(b"\n"):
        if line.startswith(b"### PERF_STAT ###"):
            in_stat = True
            continue
        if in_stat:
            if line.strip().endswith(b"seconds time elapsed"):
                in_stat = False
            continue
        if SAMPLE_HEADER.match(line):
            n += 1
    return n


class Agent:
    def __init__(self, sock, a):
        self.s, self.a = sock, a
        self.lock = threading.Lock()
        self.profiling = threading.Event()
        self.paused = False
        self.stop_all = False
        self.counters = dict(chunks_sent=0, samples_sent=0, raw_bytes=0, wire_bytes=0,
                             chunks_refused=0, chunks_lost=0)
        self.nonce = os.urandom(16).hex()
        self.probed = False
        self.features = []
        self.chunk_lock = threading.Lock()
        self.last_chunk_t = time.monotonic()

    def send(self, flag, payload):
        with self.lock:
            self.s.sendall(struct.pack(">IB", len(payload), flag) + payload)

    def send_json(self, flag, obj):
        self.send(flag, json.dumps(obj).encode())

    def recv_exact(self, n):
        b = b""
        while len(b) < n:
            c = self.s.recv(n - len(b))
            if not c:
                raise EOFError
            b += c
        return b

    def recv(self):
        n, flag = struct.unpack(">IB", self.recv_exact(5))
        return flag, self.recv_exact(n)

    def hello(self):
        # The seed's 0.10/0.12 hello: no ext, auth "token", its version.
        h = {"type": "hello", "version": 1, "agent": "perflens",
             "agent_version": "0.12.0" if self.a.mode == "legacy" else "fake-1", "auth": "token", "platform": {"arch": "x86_64", "kernel": "fake", "perf_version": "perf version fake",
                                           "perf_event_paranoid": 2}}
        if self.a.mode in ("hmac", "wrongproof"):
            h["ext"] = {"pairing": "hmac-sha256-v1", "nonce": self.nonce, "features": ["maps", "counters"]}
        if self.a.mode == "pre010":
            h["token"] = self.a.code
        if self.a.label:
            h["labels"] = dict(x.split("=", 1) for x in self.a.label)
        self.send_json(3, h)

    def answer(self, rid, **kw):
        kw.update({"id": rid})
        self.send_json(3, kw)

    def chunk_text(self, index=0):
        files = self.a.chunk.split(",")
        return open(files[min(index, len(files) - 1)], "rb").read()

    def tail_text(self, since):
        """The chunk in flight at a stop: the first samples of a chunk, as
        many as the time since the last chunk holds at its rate."""
        text = self.chunk_text()
        recs = [r for r in text.split(b"\n\n") if SAMPLE_HEADER.match(r)]
        k = int(round(len(recs) * min(1.0, since / self.a.interval)))
        return b"\n\n".join(recs[:k]) + b"\n\n" if k else b""

    def send_chunk(self, text):
        z = subprocess.run(["zstd", "-q", "-c", "-1"], input=text, stdout=subprocess.PIPE, check=True).stdout
        self.send(1, z)
        c = self.counters
        c["chunks_sent"] += 1
        c["samples_sent"] += count_samples(text)
        c["raw_bytes"] += len(text)
        c["wire_bytes"] += len(z)
        emit(event="chunk", index=c["chunks_sent"] - 1, wire=len(z), raw=len(text))

    def collector(self):
        sent = 0
        self.last_chunk_t = time.monotonic()
        while not self.stop_all:
            text = self.chunk_text(sent)
            if self.a.tail and self.profiling.is_set() and not self.paused:
                # A chunk at the end of each interval, as the agents cut them.
                if time.monotonic() - self.last_chunk_t < self.a.interval:
                    time.sleep(0.01)
                    continue
            if not self.profiling.is_set() or self.paused:
                time.sleep(0.05)
                continue
            if self.a.max_chunks and sent >= self.a.max_chunks:
                time.sleep(0.05)
                continue
            if self.a.cut_after is not None and sent == self.a.cut_after:
                z = subprocess.run(["zstd", "-q", "-c"], input=text, stdout=subprocess.PIPE).stdout
                with self.lock:
                    self.s.sendall(struct.pack(">IB", len(z), 1) + z[: len(z) // 2])
                emit(event="cut_mid_chunk")
                # Half-close and read to the server's end: closing with its
                # pings unread would send a reset, which may overtake the
                # half frame on a slow server (TSan) and hide the cut.
                self.s.shutdown(socket.SHUT_WR)
                self.s.settimeout(10)
                try:
                    while self.s.recv(65536):
                        pass
                except OSError:
                    pass
                self.s.close()
                os._exit(0)
            try:
                with self.chunk_lock:
                    if not self.profiling.is_set() or self.paused:
                        continue
                    self.send_chunk(text)
                    self.last_chunk_t = time.monotonic()
            except OSError:
                return
            sent += 1
            if (self.a.maps or self.a.build_id) and sent == 1:
                maps = [{"start": "400000", "end": "401000", "offset": "0", "perms": "r-xp",
                         "inode": 1, "path": "/bin/fake", "build_id": None, "dev": "00:01"}]
                for k, pb in enumerate(self.a.build_id):
                    path, hexid = pb.rsplit("=", 1)
                    maps.append({"start": "%x" % (0x500000 + k * 0x10000), "end": "%x" % (0x50f000 + k * 0x10000),
                                 "offset": "0", "perms": "r-xp", "inode": 2 + k, "path": path, "build_id": hexid,
                                 "dev": "00:01"})
                self.send_json(3, {"type": "maps", "pid": 1, "start_time": 1, "ts": time.time(), "seq": 0,
                                   "maps": maps})
            if not self.a.tail:
                time.sleep(self.a.interval)

    def stop_tail(self):
        """At a stop, the chunk in flight: "drop" (the seed discards it),
        "late" (sent after the answer, in --tail-delay s), "lose" (counted as
        sent, never sent); its samples go to stdout.  None: nothing to send
        later; else the text to send."""
        since = time.monotonic() - self.last_chunk_t
        text = self.tail_text(since)
        emit(event="tail", mode=self.a.tail, seconds=round(since, 3), samples=count_samples(text))
        if self.a.tail == "drop" or not text:
            return None
        c = self.counters
        if self.a.tail == "lose":
            c["chunks_sent"] += 1
            c["samples_sent"] += count_samples(text)
            return None
        return text

    def metrics(self):
        while not self.stop_all:
            try:
                self.send_json(4, {"type": "system", "ts": time.time(), "cpu": {"overall_pct": 12.5}})
                if self.profiling.is_set():
                    self.send_json(4, {"type": "process", "ts": time.time(), "pid": 1, "cpu_pct": 50.0})
                self.send_json(4, {"type": "network", "ts": time.time(), "interfaces": {}})
            except OSError:
                return
            time.sleep(self.a.metrics_interval)

    def handle(self, cmd):
        rid, name, args = cmd.get("id"), cmd.get("cmd"), cmd.get("args") or {}
        if name == "ping":
            self.answer(rid, ok=True)
        elif name == "status":
            caps = {"record_events": ["cpu-clock"], "stat_only_events": [], "callgraph_method": "fp",
                    "pipe_mode": True}
            state = "profiling" if self.profiling.is_set() else "idle"
            if self.a.mode == "legacy":
                # The seed's status: no counters (extension 3), no max rate;
                # capabilities only after its probe (the first start).
                if self.a.unprobed and not self.probed:
                    caps = None
                self.answer(rid, ok=True, state=state, pid=-1, frequency=99, duration=8,
                            agent_version="0.12.0", **({"capabilities": caps} if caps else {}),
                            platform={"arch": "x86_64", "kernel": "fake", "perf_version": "perf version fake",
                                      "perf_event_paranoid": 2})
            else:
                extra = {"perf_caps": json.loads(self.a.perf_caps)} if self.a.perf_caps else {}
                self.answer(rid, ok=True, state=state, counters=self.counters, max_sample_rate=1000,
                            capabilities=caps, **extra)
        elif name == "start":
            if self.profiling.is_set():
                self.answer(rid, ok=False, error="already profiling")
                return
            emit(event="start", args=args)
            self.probed = True
            self.last_chunk_t = time.monotonic()
            self.profiling.set()
            self.answer(rid, ok=True, pid=args.get("pid", -1), frequency=args.get("frequency", 99),
                        duration=args.get("duration", 1), events=["cpu-clock"], callgraph="fp", mode="continuous")
        elif name == "stop":
            if not self.profiling.is_set():
                self.answer(rid, ok=False, error="not profiling")
                return
            with self.chunk_lock:
                self.profiling.clear()
            late = self.stop_tail() if self.a.tail else None
            if late is not None:
                # Counted now, sent after the answer (a slow link).
                c = self.counters
                c["chunks_sent"] += 1
                c["samples_sent"] += count_samples(late)
            emit(event="stop", counters=self.counters)
            if self.a.mode == "legacy":
                self.answer(rid, ok=True)  # the seed's stop answer
            else:
                self.answer(rid, ok=True, counters=dict(self.counters))
            if late is not None:
                def send_late():
                    time.sleep(self.a.tail_delay)
                    z = subprocess.run(["zstd", "-q", "-c", "-1"], input=late, stdout=subprocess.PIPE).stdout
                    self.send(1, z)
                    emit(event="late_chunk", samples=count_samples(late))
                threading.Thread(target=send_late, daemon=True).start()
        elif name == "pause":
            with self.chunk_lock:
                self.paused = True
            if self.a.tail == "drop":
                self.stop_tail()  # the seed discards the chunk in flight at a pause too
            self.answer(rid, ok=True)
        elif name == "resume":
            self.last_chunk_t = time.monotonic()
            self.paused = False
            self.answer(rid, ok=True)
        elif name == "list_processes":
            procs = [{"pid": i, "comm": "p%d" % i, "cmdline": "/bin/p%d" % i, "cpu": 0.1 * i} for i in range(1, 31)]
            # Ours says its CPU count (cpu is a share of all of them); the seed's does not.
            self.answer(rid, ok=True, processes=procs, **({} if self.a.mode == "legacy" else {"cpus": 2}))
        else:
            self.answer(rid, ok=False, error="unknown command: %s" % name)

    def run(self):
        a = self.a
        if a.garbage:
            self.s.sendall(b"GET / HTTP/1.0\r\n\r\n")
        if a.huge_header:
            self.s.sendall(struct.pack(">IB", 0xFFFFFFF0, 3))
        self.hello()
        threading.Thread(target=self.metrics, daemon=True).start() if a.metrics_early else None
        authed = False
        while True:
            try:
                flag, payload = self.recv()
            except (EOFError, OSError):
                emit(event="closed", authed=authed)
                return
            if flag != 2:
                continue
            cmd = json.loads(payload)
            if not authed:
                if cmd.get("cmd") != "auth":
                    self.answer(cmd.get("id"), ok=False, error="unauthenticated")
                    continue
                args = cmd.get("args") or {}
                if "token" in args:
                    ok = args["token"] == a.code
                    emit(event="auth", method="token", ok=ok)
                    self.answer(cmd["id"], ok=ok, **({} if ok else {"error": "auth failed"}))
                else:
                    sn = args.get("server_nonce", "")
                    ok = hmac.compare_digest(args.get("proof", ""), proof(a.code, "server", self.nonce, sn))
                    emit(event="auth", method="hmac", ok=ok, features=args.get("features"))
                    if not ok:
                        self.answer(cmd["id"], ok=False, error="auth failed")
                        continue
                    mine = proof(a.code, "agent", self.nonce, sn)
                    if a.mode == "wrongproof":
                        mine = "0" * 64
                    self.features = args.get("features") or []
                    self.answer(cmd["id"], ok=True, proof=mine, features=self.features)
                if ok:
                    authed = True
                    emit(event="auth_ok")
                    if not a.metrics_early:
                        threading.Thread(target=self.metrics, daemon=True).start()
                    threading.Thread(target=self.collector, daemon=True).start()
                continue
            self.handle(cmd)
            if a.stop_reading:
                # The link's first command (its status) answered, then nothing
                # is read again: the kernel's receive buffer fills and stays full.
                emit(event="stopped_reading")
                while True:
                    time.sleep(1)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--server")
    p.add_argument("--listen", type=int)
    p.add_argument("--bind", default="127.0.0.1")
    p.add_argument("--source", help="--server: dial from this local address (127.0.0.2: another loopback peer)")
    p.add_argument("--code", default="")
    p.add_argument("--mode", default="hmac", choices=["hmac", "legacy", "pre010", "wrongproof"])
    p.add_argument("--chunk", help="perf script text sent as each chunk (FILE,FILE...: one per chunk, the last repeated)")
    p.add_argument("--tail", choices=["drop", "late", "lose"],
                   help="chunks at each interval's end; at a stop the one in flight is dropped, sent late or lost")
    p.add_argument("--tail-delay", type=float, default=3.0)
    p.add_argument("--interval", type=float, default=0.3)
    p.add_argument("--max-chunks", type=int, default=0)
    p.add_argument("--metrics-interval", type=float, default=0.5)
    p.add_argument("--metrics-early", action="store_true")
    p.add_argument("--maps", action="store_true")
    p.add_argument("--perf-caps", help="status's perf_caps (JSON), as our agent measures it")
    p.add_argument("--unprobed", action="store_true", help="legacy: status has no capabilities until a start")
    p.add_argument("--build-id", action="append", default=[],
                   help="PATH=HEX: a mapping with this build-id in the maps frame (repeatable; implies maps)")
    p.add_argument("--garbage", action="store_true")
    p.add_argument("--huge-header", action="store_true")
    p.add_argument("--stop-reading", action="store_true")
    p.add_argument("--rcvbuf", type=int, help="--server: SO_RCVBUF before connecting (a small window)")
    p.add_argument("--cut-after", type=int)
    p.add_argument("--label", action="append", default=[], help="KEY=VALUE in the hello's labels (repeatable)")
    p.add_argument("--once", action="store_true", help="--listen: serve one connection and leave")
    a = p.parse_args()
    if a.server:
        host, port = a.server.rsplit(":", 1)
        s = socket.socket()
        if a.rcvbuf:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, a.rcvbuf)
        if a.source:
            s.bind((a.source, 0))
        s.settimeout(10)
        s.connect((host, int(port)))
        s.settimeout(None)
        emit(event="connected")
        Agent(s, a).run()
        return
    ls = socket.socket()
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind((a.bind, a.listen))
    ls.listen(4)
    emit(event="listening", port=ls.getsockname()[1])
    while True:
        c, _ = ls.accept()
        emit(event="accepted")
        Agent(c, a).run()
        if a.once:
            return


if __name__ == "__main__":
    main()
