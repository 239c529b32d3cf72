#!/usr/bin/env python3
"""mcp_bench.py - speed benchmarks of perflens-mcp, the MCP server.

Driven by bench/mcp.sh (which checks that the binaries and the capture
exist); python3 stdlib only.  Measurements, not tests: it prints figures
and whether each target was met, and exits 0 whatever they are.

  1. stdio round trip: one client, one request at a time, timed from
     writing the request line to reading its response line.  A real
     capture is analyzed through the server first (analyze_profile), then
     `list_hotspots` (limit 5) of that analysis is timed N times on three
     servers called in turn, round by round (so that all see the same
     background load): the normal build (a forked, seccomp+Landlock worker
     per call), the test build with --no-sandbox (the tool runs in the
     server's process) and, every 4th round, the test build with its
     sandbox.  Then the normal build again with a pause between calls
     (--pace-ms, 5 ms), as an agent calls tools: one at a time, with think
     time between, so the sandbox's spare worker is ready when the call
     comes (the pause is not timed).  Then `ping` (protocol only, no
     worker) as the floor.
  2. Streamable HTTP: K concurrent requests, each on its own keep-alive
     connection, send `list_hotspots` (limit 5) for a fixed count; calls/s,
     latency and the server's RSS (VmRSS) at the start, every 10% of the
     run and at the end.  Then the same for `ping`.  The load comes from
     the C client bench/http_load.c (--http-client, built by mcp.sh; one
     process, libcurl multi, its own session) when given, else from K
     python threads (http.client, one session), which cost the server's
     two cores ten times more cpu per call.  The client's own cpu per call
     is printed beside the server's.

Latencies are wall clock (time.perf_counter_ns; CLOCK_MONOTONIC in the C
client) in the client, so they include the client's own share (a few
tens of us for stdio).  Per call the
bench also prints, from /proc/PID/stat, the cpu time (utime+stime of the
server; for the workers, cutime+cstime of those it reaped plus the
zygote's utime+stime+cutime+cstime, since the zygote forks them and reaps
them and their spares) and the minor page faults (minflt, cminflt).

Every server is started with PR_SET_PDEATHSIG, killed at exit (atexit and
SIGTERM/SIGINT/SIGHUP), and waited for.
"""
import argparse
import atexit
import ctypes
import http.client
import json
import os
import signal
import subprocess
import sys
import threading
import time

PROTOCOL = "2025-11-25"
HOTSPOT_LIMIT = 5
WARMUP = 20            # untimed calls before each timed series
STALL_S = 60           # a single call slower than this: kill the server
CLK_TCK = os.sysconf("SC_CLK_TCK")

ROWS = []              # summary table: (bench, figure, baseline, target, verdict)
SERVERS = []           # live Popen objects, killed at exit


def say(*a):
    print(*a, flush=True)


def section(title):
    say()
    say("== " + title)


def row(bench, figure, baseline, target, verdict):
    ROWS.append((bench, figure, baseline, target, verdict))


def verdict(ok):
    return "met" if ok else "MISSED"


def ms(ns):
    return ns / 1e6


def pct(sorted_ns, p):
    """The p-th percentile (nearest rank) of a sorted list, in ms."""
    if not sorted_ns:
        return float("nan")
    k = max(0, min(len(sorted_ns) - 1, int(round(p / 100.0 * len(sorted_ns) + 0.5)) - 1))
    return ms(sorted_ns[k])


def dist(lat_ns):
    s = sorted(lat_ns)
    return {"n": len(s), "p50": pct(s, 50), "p90": pct(s, 90), "p99": pct(s, 99),
            "max": ms(s[-1]) if s else float("nan"),
            "mean": ms(sum(s) / len(s)) if s else float("nan")}


def fmt_dist(d):
    return "p50 %.3f ms, p90 %.3f ms, p99 %.3f ms, max %.3f ms (mean %.3f ms, n=%d)" % (
        d["p50"], d["p90"], d["p99"], d["max"], d["mean"], d["n"])


# ------------------------------------------------------------ processes

def _pdeathsig():
    """In the child before exec: die with the bench (even on SIGKILL)."""
    try:
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def start_server(argv, stderr_path, stdio):
    err = open(stderr_path, "wb")
    p = subprocess.Popen(argv, stdin=subprocess.PIPE if stdio else subprocess.DEVNULL,
                         stdout=subprocess.PIPE if stdio else subprocess.DEVNULL,
                         stderr=err, preexec_fn=_pdeathsig, close_fds=True)
    err.close()
    SERVERS.append(p)
    return p


def stop_server(p, graceful=True):
    """End one server we started (by its pid) and reap it."""
    if p.poll() is None:
        try:
            if graceful and p.stdin:
                p.stdin.close()          # stdio: end of input ends the server
            elif graceful:
                p.send_signal(signal.SIGTERM)  # HTTP: stops the daemon
            p.wait(timeout=5)
        except (OSError, subprocess.TimeoutExpired, ValueError):
            pass
    if p.poll() is None:
        p.kill()
        try:
            p.wait(timeout=5)
        except subprocess.TimeoutExpired:
            pass
    for f in (p.stdin, p.stdout):
        try:
            if f:
                f.close()
        except (OSError, ValueError, RuntimeError):
            pass
    if p in SERVERS:
        SERVERS.remove(p)


def kill_all():
    for p in list(SERVERS):
        stop_server(p, graceful=False)


def on_signal(sig, frame):
    # The main thread may be inside a read of a server's pipe: kill and
    # reap only, closing that pipe here would be a reentrant call.
    for p in list(SERVERS):
        try:
            p.kill()
            p.wait(timeout=5)
        except (OSError, subprocess.TimeoutExpired):
            pass
    os._exit(128 + sig)


def proc_status(pid, key):
    """A field of /proc/PID/status in KiB (VmRSS, VmHWM) or as a number."""
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith(key + ":"):
                    return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        pass
    return None


def stat_fields(pid):
    with open("/proc/%d/stat" % pid) as f:
        return f.read().rsplit(")", 1)[1].split()


def zygote_of(pid):
    """The server's sandbox zygote (its child named perflens-zygote), or None."""
    try:
        with open("/proc/%d/task/%d/children" % (pid, pid)) as f:
            kids = [int(k) for k in f.read().split()]
    except (OSError, ValueError):
        return None
    for k in kids:
        try:
            with open("/proc/%d/comm" % k) as f:
                if f.read().strip() == "perflens-zygote":
                    return k
        except OSError:
            pass
    return None


def proc_cpu_s(pid):
    """(utime+stime of the process, then of the workers, in seconds; then
    minor page faults of each); None if unreadable.  The workers are the
    children the server reaped, and the zygote with all it forked and
    reaped (its spares and workers): the zygote's own time counts as the
    workers', since it does their forking."""
    try:
        # fields[0] is field 3 (state): minflt=10, cminflt=11, utime=14,
        # stime=15, cutime=16, cstime=17
        fields = stat_fields(pid)
        work = (int(fields[13]) + int(fields[14])) / CLK_TCK
        work_flt = int(fields[8])
        z = zygote_of(pid)
        if z:
            zf = stat_fields(z)
            work += sum(int(x) for x in zf[11:15]) / CLK_TCK
            work_flt += int(zf[7]) + int(zf[8])
        return ((int(fields[11]) + int(fields[12])) / CLK_TCK, work,
                int(fields[7]), work_flt)
    except (OSError, ValueError, IndexError):
        return None


def cpu_per_call(c0, c1, n):
    """Per call between two proc_cpu_s(): (server cpu s, workers cpu s,
    server page faults, workers page faults)."""
    if c0 is None or c1 is None or not n:
        return None
    return tuple((b - a) / n for a, b in zip(c0, c1))


def stderr_tail(path, n=400):
    try:
        with open(path, "rb") as f:
            data = f.read()
        return data[-n:].decode("utf-8", "replace").replace("\n", " ").strip()
    except OSError:
        return ""


class BenchError(Exception):
    pass


# ----------------------------------------------------------------- stdio

class StdioClient:
    """One line per message on the server's stdin and stdout."""

    def __init__(self, proc):
        self.p = proc
        self.w = proc.stdin
        self.r = proc.stdout
        self.next_id = 0
        self.last_progress = time.monotonic()
        self.stalled = False
        self._stop = threading.Event()
        self._dog = threading.Thread(target=self._watchdog, daemon=True)
        self._dog.start()

    def _watchdog(self):
        # readline() has no timeout: a server that stops answering is killed.
        while not self._stop.wait(1.0):
            if time.monotonic() - self.last_progress > STALL_S and self.p.poll() is None:
                self.stalled = True
                self.p.kill()
                return

    def close(self):
        self._stop.set()

    def notify(self, method, params=None):
        msg = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            msg["params"] = params
        self.w.write(json.dumps(msg, separators=(",", ":")).encode() + b"\n")
        self.w.flush()

    def call(self, method, params=None):
        """Send one request; return (response, round trip in ns).  Lines
        without our id (notifications) are skipped, inside the timing."""
        self.next_id += 1
        rid = self.next_id
        msg = {"jsonrpc": "2.0", "id": rid, "method": method}
        if params is not None:
            msg["params"] = params
        line = json.dumps(msg, separators=(",", ":")).encode() + b"\n"
        t0 = time.perf_counter_ns()
        try:
            self.w.write(line)
            self.w.flush()
            while True:
                resp = self.r.readline()
                t1 = time.perf_counter_ns()
                if not resp:
                    raise BenchError("the server closed stdout%s" %
                                     (" (killed after %d s without an answer)" % STALL_S
                                      if self.stalled else ""))
                m = json.loads(resp)
                if m.get("id") == rid:
                    self.last_progress = time.monotonic()
                    return m, t1 - t0
        except (BrokenPipeError, ValueError, OSError) as e:
            raise BenchError("stdio exchange failed: %s" % e)


def initialize_msg():
    return {"protocolVersion": PROTOCOL, "capabilities": {},
            "clientInfo": {"name": "perflens-mcp-bench", "version": "1"}}


def tool_result(resp):
    """The structuredContent of a successful tools/call, else BenchError."""
    if "error" in resp:
        raise BenchError("JSON-RPC error %s" % json.dumps(resp["error"])[:300])
    res = resp.get("result", {})
    if res.get("isError"):
        raise BenchError("tool error: %s" % json.dumps(res.get("content"))[:300])
    return res.get("structuredContent", {})


def hotspots_args(analysis_id, event):
    a = {"analysis_id": analysis_id, "limit": HOTSPOT_LIMIT}
    if event:
        a["event"] = event
    return a


def analyze(client, capture):
    """analyze_profile through the server: (analysis_id, event, ms)."""
    resp, dt = client.call("tools/call", {"name": "analyze_profile",
                                          "arguments": {"path": capture}})
    sc = tool_result(resp)
    aid = sc.get("analysis_id")
    if not aid:
        raise BenchError("analyze_profile returned no analysis_id: %s" % json.dumps(sc)[:300])
    events = [e.get("name") for e in sc.get("events", []) if isinstance(e, dict)]
    # One event: list_hotspots needs none.  Several: use the first.
    return aid, (events[0] if len(events) > 1 else None), events, ms(dt)


def series(clients, n, max_s, pace_s=0.0):
    """Interleaved timing: `clients` is a list of (client, method, params,
    check, every); round i calls each client whose `every` divides i, so
    every series sees the same background load.  WARMUP untimed calls
    each first.  With pace_s, each round waits that long first (outside
    the timing, inside the time cap).  Stops after n rounds or max_s
    seconds.  Returns per client (latencies in ns, (server, workers) cpu s
    per call, errors, first error)."""
    for c, method, params, check, _ in clients:
        for _ in range(WARMUP):
            check(c.call(method, params)[0])
    out = [([], proc_cpu_s(c.p.pid), 0, None) for c, *_ in clients]
    stop = time.monotonic() + max_s
    for i in range(n):
        if time.monotonic() > stop:
            say("note: stopped by the time cap (%g s, BENCH_MCP_STDIO_MAX_S) after %d of %d rounds"
                % (max_s, i, n))
            break
        if pace_s:
            time.sleep(pace_s)
        for k, (c, method, params, check, every) in enumerate(clients):
            if i % every:
                continue
            resp, dt = c.call(method, params)
            lat, cpu0, errors, first = out[k]
            lat.append(dt)
            try:
                check(resp)
            except BenchError as e:
                out[k] = (lat, cpu0, errors + 1, first or str(e))
    return [(lat, cpu_per_call(cpu0, proc_cpu_s(c.p.pid), len(lat)), errors, first)
            for (lat, cpu0, errors, first), (c, *_) in zip(out, clients)]


def check_hotspots(resp):
    sc = tool_result(resp)
    hs = sc.get("hotspots")
    if not isinstance(hs, list) or not 0 < len(hs) <= HOTSPOT_LIMIT:
        raise BenchError("unexpected list_hotspots result: %s" % json.dumps(sc)[:300])


def check_ping(resp):
    if resp.get("result") != {}:
        raise BenchError("unexpected ping answer: %s" % json.dumps(resp)[:300])


def stdio_session(argv, errpath):
    p = start_server(argv, errpath, stdio=True)
    c = StdioClient(p)
    try:
        resp, _ = c.call("initialize", initialize_msg())
        if "result" not in resp:
            raise BenchError("initialize failed: %s" % json.dumps(resp)[:300])
        c.notify("notifications/initialized")
    except (BenchError, OSError) as e:
        c.close()
        stop_server(p, graceful=False)
        raise BenchError(str(e))
    return p, c


def cpu_txt(cpu):
    if cpu is None:
        return "server cpu ?"
    return "cpu %.2f ms/call (server %.2f + workers %.2f, user+sys), page faults %.0f/call (%.0f + %.0f)" % (
        (cpu[0] + cpu[1]) * 1e3, cpu[0] * 1e3, cpu[1] * 1e3, cpu[2] + cpu[3], cpu[2], cpu[3])


def bench_stdio(a, common):
    section("1. stdio round trip (list_hotspots limit %d, %d calls, one at a time)" % (HOTSPOT_LIMIT, a.stdio_n))
    say("capture: %s" % a.capture)
    # Three servers side by side: the normal build (sandbox), the test
    # build with --no-sandbox, and, as a cross-check of the share within
    # one binary, the test build with its sandbox (every 4th round).
    specs = [("list_hotspots, sandbox", "stdio", [a.server] + common, 1)]
    if a.faults:
        specs += [("list_hotspots, no sandbox", "stdio-nosbx", [a.faults, "--no-sandbox"] + common, 1),
                  ("test build, sandboxed", "stdio-faults", [a.faults] + common, 4)]
    else:
        say("skip: 1 no-sandbox comparison: no test build (make BUILD=... BUILD/faults/perflens-mcp)")
    state = {}
    running = []
    label = specs[0][0]
    try:
        for label, tag, argv, every in specs:
            errpath = os.path.join(a.tmp, tag + ".err")
            try:
                p, c = stdio_session(argv, errpath)
            except BenchError as e:
                if tag == "stdio":
                    raise
                say("error: 1 stdio (%s): %s; server stderr: %s" % (label, e, stderr_tail(errpath)))
                continue
            running.append((label, tag, p, c, every))
        c0 = running[0][3]
        aid, event, events, an_ms = analyze(c0, a.capture)
        state["analysis_id"], state["event"] = aid, event
        say("analyze_profile:          %.1f ms (sandboxed worker), analysis_id %s, events %s"
            % (an_ms, aid, ", ".join(events) or "?"))
        say("interleaved: each round calls every server in turn, so all see the same background load")
        args = {"name": "list_hotspots", "arguments": hotspots_args(aid, event)}
        label = "list_hotspots"
        res = series([(c, "tools/call", args, check_hotspots, every) for _, _, _, c, every in running],
                     a.stdio_n, a.stdio_max_s)
        for (label, tag, _, _, _), (lat, cpu, errs, first) in zip(running, res):
            d = dist(lat)
            state[tag] = d
            say("%-28s%s; %s" % (label + ":", fmt_dist(d), cpu_txt(cpu)))
            if errs:
                say("error: %d of %d calls failed (%s); first: %s" % (errs, len(lat), label, first))
        if a.pace_ms > 0:
            label = "list_hotspots, paced %g ms" % a.pace_ms
            (qlat, qcpu, qerrs, qfirst), = series([(c0, "tools/call", args, check_hotspots, 1)],
                                                  a.stdio_n, a.stdio_max_s, pace_s=a.pace_ms / 1e3)
            state["stdio-paced"] = dist(qlat)
            say("%-28s%s; %s" % (label + ":", fmt_dist(state["stdio-paced"]), cpu_txt(qcpu)))
            if qerrs:
                say("error: %d of %d calls failed (%s); first: %s" % (qerrs, len(qlat), label, qfirst))
        label = "ping"
        (plat, _, perrs, pfirst), = series([(c0, "ping", None, check_ping, 1)], a.stdio_n, a.stdio_max_s)
        pd = dist(plat)
        state["ping"] = pd
        say("%-28s%s" % ("ping (no worker):", fmt_dist(pd)))
        if perrs:
            say("error: %d pings failed; first: %s" % (perrs, pfirst))
    except BenchError as e:
        say("error: 1 stdio (%s): %s; server stderr: %s" % (label, e, stderr_tail(os.path.join(a.tmp, "stdio.err"))))
        row("1 stdio list_hotspots", "error", "-", "p50 <= 2 ms, p99 <= 10 ms", "error")
        return state
    finally:
        for _, _, p, c, _ in running:
            c.close()
            stop_server(p)

    d = state["stdio"]
    ok = d["p50"] <= 2.0 and d["p99"] <= 10.0
    say("stdio list_hotspots: p50 %.3f ms (target <= 2 ms), p99 %.3f ms (target <= 10 ms), max %.3f ms: %s"
        % (d["p50"], d["p99"], d["max"], verdict(ok)))
    q = state.get("stdio-paced")
    if q:
        q_ok = q["p50"] <= 2.0 and q["p99"] <= 10.0
        say("stdio list_hotspots, paced %g ms: p50 %.3f ms (target <= 2 ms), p99 %.3f ms (target <= 10 ms), max %.3f ms: %s"
            % (a.pace_ms, q["p50"], q["p99"], q["max"], verdict(q_ok)))
    else:
        say("skip: 1 paced series: --pace-ms 0 (BENCH_MCP_PACE_MS=0)")
    base = "-"
    nos = state.get("stdio-nosbx")
    if nos:
        share = d["p50"] - nos["p50"]
        say("sandbox share: p50 %.3f ms with - %.3f ms without = %.3f ms (%.0f%% of the sandboxed p50); p99 %.3f vs %.3f ms"
            % (d["p50"], nos["p50"], share, 100.0 * share / d["p50"] if d["p50"] else 0.0, d["p99"], nos["p99"]))
        fs = state.get("stdio-faults")
        if fs:
            say("  within the test binary: p50 %.3f ms sandboxed - %.3f ms = %.3f ms (%.0f%%)"
                % (fs["p50"], nos["p50"], fs["p50"] - nos["p50"],
                   100.0 * (fs["p50"] - nos["p50"]) / fs["p50"] if fs["p50"] else 0.0))
        no_ok = nos["p50"] <= 2.0 and nos["p99"] <= 10.0
        say("without the sandbox: p50 %.3f ms, p99 %.3f ms (%s the targets)" % (nos["p50"], nos["p99"],
            "within" if no_ok else "still outside"))
        base = "no sandbox p50 %.2f ms" % nos["p50"]
    say("ping floor: p50 %.3f ms, p99 %.3f ms (the protocol and pipes alone)" % (state["ping"]["p50"], state["ping"]["p99"]))
    row("1 stdio list_hotspots", "p50 %.2f ms, p99 %.2f ms" % (d["p50"], d["p99"]), base,
        "p50 <= 2 ms, p99 <= 10 ms", verdict(ok))
    if q:
        row("1 stdio list_hotspots, paced %g ms" % a.pace_ms, "p50 %.2f ms, p99 %.2f ms" % (q["p50"], q["p99"]),
            "back to back p50 %.2f ms" % d["p50"], "p50 <= 2 ms, p99 <= 10 ms", verdict(q_ok))
    row("1 stdio ping", "p50 %.3f ms, p99 %.3f ms" % (state["ping"]["p50"], state["ping"]["p99"]), "-", "-", "-")
    return state


# ------------------------------------------------------------------ HTTP

class HttpSession:
    def __init__(self, port):
        self.port = port
        self.sid = None

    def conn(self):
        return http.client.HTTPConnection("127.0.0.1", self.port, timeout=STALL_S)

    def headers(self):
        h = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
        if self.sid:
            h["Mcp-Session-Id"] = self.sid
            h["MCP-Protocol-Version"] = PROTOCOL
        return h

    def post(self, conn, body):
        conn.request("POST", "/mcp", body, self.headers())
        r = conn.getresponse()
        return r, r.read()

    def initialize(self):
        c = self.conn()
        try:
            body = json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize",
                               "params": initialize_msg()}).encode()
            r, data = self.post(c, body)
            if r.status != 200 or not r.getheader("Mcp-Session-Id"):
                raise BenchError("initialize: HTTP %d %s" % (r.status, data[:300]))
            self.sid = r.getheader("Mcp-Session-Id")
            r, data = self.post(c, b'{"jsonrpc":"2.0","method":"notifications/initialized"}')
            if r.status != 202:
                raise BenchError("notifications/initialized: HTTP %d %s" % (r.status, data[:300]))
        except (OSError, http.client.HTTPException) as e:
            raise BenchError("initialize: %s" % e)
        finally:
            c.close()


def start_http(argv, errpath):
    p = start_server(argv + ["--http", "127.0.0.1:0", "--no-auth"], errpath, stdio=False)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            with open(errpath, "rb") as f:
                text = f.read().decode("utf-8", "replace")
        except OSError:
            text = ""
        for line in text.splitlines():
            marker = "listening on http://127.0.0.1:"
            if marker in line:
                return p, int(line.split(marker, 1)[1].split("/", 1)[0])
        if p.poll() is not None:
            break
        time.sleep(0.02)
    stop_server(p, graceful=False)
    raise BenchError("the HTTP server did not start: %s" % stderr_tail(errpath))


def http_run(sess, pid, make_body, check, total, threads, max_s):
    """`threads` clients, each with its own keep-alive connection, share
    `total` requests.  Returns a dict of figures."""
    lock = threading.Lock()
    st = {"issued": 0, "done": 0, "errors": 0, "first": None, "stopped": False}
    rss = [(0, proc_status(pid, "VmRSS"))]   # (percent done, KiB)
    lats = [[] for _ in range(threads)]
    ready = threading.Barrier(threads + 1)   # every worker warmed up
    go = threading.Barrier(threads + 1)      # the timed run starts
    deadline = [0.0]

    def worker(k):
        conn = sess.conn()
        mine = lats[k]
        try:
            # Warm up outside the timing: the connection, its server thread.
            for i in range(3):
                r, data = sess.post(conn, make_body(-1 - i))
                check(r, data)
        except (OSError, http.client.HTTPException, BenchError) as e:
            with lock:
                st["errors"] += 1
                st["first"] = st["first"] or "warm-up: %s" % e
        ready.wait()
        go.wait()
        while True:
            with lock:
                if st["issued"] >= total:
                    break
                if time.monotonic() > deadline[0]:
                    st["stopped"] = True
                    break
                st["issued"] += 1
                n = st["issued"]
            body = make_body(n)
            t0 = time.perf_counter_ns()
            try:
                r, data = sess.post(conn, body)
                t1 = time.perf_counter_ns()
                check(r, data)
                mine.append(t1 - t0)
            except (OSError, http.client.HTTPException, BenchError) as e:
                with lock:
                    st["errors"] += 1
                    st["first"] = st["first"] or str(e)
                conn.close()
                conn = sess.conn()
            with lock:
                st["done"] += 1
        conn.close()

    ts = [threading.Thread(target=worker, args=(k,), daemon=True) for k in range(threads)]
    for t in ts:
        t.start()
    ready.wait()
    rss_start = proc_status(pid, "VmRSS")
    cpu0, pcpu0 = proc_cpu_s(pid), time.process_time()
    deadline[0] = time.monotonic() + max_s   # before the workers are let go
    t0 = time.perf_counter()
    go.wait()
    # RSS at every 10% of the run: of the count, or of the time cap when
    # that comes first.
    mark, threads_max = 1, 0
    while any(t.is_alive() for t in ts):
        time.sleep(0.01)
        frac = max(st["done"] / total, (time.perf_counter() - t0) / max_s)
        while mark <= 10 and frac >= mark / 10.0 - 1e-9:
            rss.append((mark * 10, proc_status(pid, "VmRSS")))
            threads_max = max(threads_max, proc_status(pid, "Threads") or 0)
            mark += 1
    for t in ts:
        t.join()
    wall = time.perf_counter() - t0
    cpu1, pcpu1 = proc_cpu_s(pid), time.process_time()
    rss_end = proc_status(pid, "VmRSS")
    lat = [x for l in lats for x in l]
    ok = len(lat)
    return {"wall": wall, "calls": st["done"], "ok": ok, "errors": st["errors"], "first": st["first"],
            "stopped": st["stopped"], "dist": dist(lat), "rate": ok / wall if wall > 0 else 0.0,
            "rss_idle": rss[0][1], "rss_start": rss_start, "rss": rss[1:], "rss_end": rss_end,
            "cpu": cpu_per_call(cpu0, cpu1, st["done"]),
            "client_cpu": (pcpu1 - pcpu0) / st["done"] if st["done"] else None,
            "threads_max": threads_max}


def http_run_c(client, url, pid, body, total, threads, max_s, errpath):
    """The same run as http_run(), made by the C client (bench/http_load.c)
    as a child process: it prints a JSON line when its timed part starts,
    at every 10% of it and a last one with its figures; the server is
    sampled at each.  The client's cpu comes from its own getrusage over
    the timed part and, whole process, from wait4."""
    argv = [client, "--url", url, "--body", body, "--calls", str(total),
            "--concurrency", str(threads), "--max-s", "%g" % max_s, "--progress"]
    rss_idle = proc_status(pid, "VmRSS")
    err = open(errpath, "wb")
    p = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=err,
                         preexec_fn=_pdeathsig, close_fds=True)
    err.close()
    SERVERS.append(p)                        # killed with the servers on a signal
    dog = threading.Timer(max_s + STALL_S + 30, p.kill)   # it has its own caps too
    dog.start()
    rss, threads_max, final = [], 0, None
    rss_start = cpu0 = cpu1 = rss_end = None
    try:
        for line in p.stdout:
            m = json.loads(line)
            if "progress" not in m:
                final = m
                cpu1, rss_end = proc_cpu_s(pid), proc_status(pid, "VmRSS")
            elif m["progress"] == 0:
                rss_start, cpu0 = proc_status(pid, "VmRSS"), proc_cpu_s(pid)
            else:
                rss.append((m["progress"], proc_status(pid, "VmRSS")))
                threads_max = max(threads_max, proc_status(pid, "Threads") or 0)
    except ValueError as e:
        p.kill()
        raise BenchError("http_load printed a line that is not JSON: %s" % e)
    finally:
        dog.cancel()
        _, status, ru = os.wait4(p.pid, 0)
        p.returncode = os.waitstatus_to_exitcode(status)
        p.stdout.close()
        SERVERS.remove(p)
    if p.returncode != 0 or final is None:
        raise BenchError("http_load exited %d: %s" % (p.returncode, stderr_tail(errpath)))
    n, ok = final["calls"], final["ok"]
    return {"wall": final["elapsed_s"], "calls": n, "ok": ok,
            "errors": final["failures"] + final["warmup_failures"], "first": final["first_failure"],
            "stopped": final["stopped_by_cap"],
            "dist": {"n": ok, "p50": final["p50_ms"], "p90": final["p90_ms"], "p99": final["p99_ms"],
                     "max": final["max_ms"], "mean": final["mean_ms"]},
            "rate": final["calls_per_s"], "rss_idle": rss_idle, "rss_start": rss_start, "rss": rss,
            "rss_end": rss_end, "cpu": cpu_per_call(cpu0, cpu1, n),
            "client_cpu": final["client_cpu_s"] / n if n else None,
            "client_cpu_process": (ru.ru_utime + ru.ru_stime) / n if n else None,
            "new_connections": final["new_connections"], "threads_max": threads_max}


def client_cpu_txt(res):
    """The client's cpu per call, and which client it is."""
    if "client_cpu_process" in res:
        return "client cpu %.3f ms/call (C http_load, timed part; whole process %.3f, with set-up and warm-up)" % (
            (res["client_cpu"] or 0) * 1e3, (res["client_cpu_process"] or 0) * 1e3)
    return "client cpu %.3f ms/call (python)" % ((res["client_cpu"] or 0) * 1e3)


def http_checker(kind):
    def check(r, data):
        if r.status != 200:
            raise BenchError("HTTP %d: %s" % (r.status, data[:300]))
        if kind == "tool":
            if b'"isError":false' not in data:
                raise BenchError("tool call failed: %s" % data[:300])
        elif b'"result":{}' not in data:
            raise BenchError("unexpected ping answer: %s" % data[:300])
    return check


def mib(kib):
    return "%.1f MiB" % (kib / 1024.0) if kib is not None else "?"


def bench_http(a, common, state):
    if a.http_client:
        section("2. Streamable HTTP: %d concurrent calls, %d calls (keep-alive, a session per run)"
                % (a.threads, a.http_calls))
        say("client: %s (bench/http_load.c: one process, libcurl multi, %d keep-alive connections)"
            % (a.http_client, a.threads))
    else:
        section("2. Streamable HTTP: %d client threads, %d calls (keep-alive, one session)" % (a.threads, a.http_calls))
        say("client: python3 http.client, %d threads, each with its own connection (no --http-client)" % a.threads)
    errpath = os.path.join(a.tmp, "http.err")
    p = None
    try:
        p, port = start_http([a.server] + common, errpath)
        sess = HttpSession(port)
        sess.initialize()
        say("server: pid %d, http://127.0.0.1:%d/mcp, session %s" % (p.pid, port, sess.sid))

        def run(make_body, kind, max_s):
            if a.http_client:
                res = http_run_c(a.http_client, "http://127.0.0.1:%d/mcp" % port, p.pid,
                                 make_body(0).decode(), a.http_calls, a.threads, max_s,
                                 os.path.join(a.tmp, "http_load.err"))
                if res["new_connections"]:
                    say("note: http_load opened %d new connections in the timed part (keep-alive lost)"
                        % res["new_connections"])
                return res
            return http_run(sess, p.pid, make_body, http_checker(kind), a.http_calls, a.threads, max_s)

        aid, event = state.get("analysis_id"), state.get("event")
        if not aid:
            # Stdio failed: analyze through HTTP instead.
            c = sess.conn()
            body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
                "name": "analyze_profile", "arguments": {"path": a.capture}}}).encode()
            r, data = sess.post(c, body)
            c.close()
            sc = tool_result(json.loads(data))
            aid = sc["analysis_id"]
            evs = [e.get("name") for e in sc.get("events", [])]
            event = evs[0] if len(evs) > 1 else None
        args = json.dumps({"name": "list_hotspots", "arguments": hotspots_args(aid, event)},
                          separators=(",", ":")).encode()
        tool_body = lambda n: b'{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":%s}' % (n, args)
        ping_body = lambda n: b'{"jsonrpc":"2.0","id":%d,"method":"ping"}' % n

        res = run(tool_body, "tool", a.http_max_s)
        d = res["dist"]
        say("list_hotspots:            %d calls in %.2f s: %.0f calls/s; latency %s"
            % (res["ok"], res["wall"], res["rate"], fmt_dist(d)))
        say("                          %s; %s" % (cpu_txt(res["cpu"]), client_cpu_txt(res)))
        if res["stopped"]:
            say("note: stopped by the time cap (%d s, BENCH_MCP_HTTP_MAX_S) after %d of %d calls"
                % (a.http_max_s, res["calls"], a.http_calls))
        if res["errors"]:
            say("error: %d calls failed; first: %s" % (res["errors"], res["first"]))
        samples = [("idle", res["rss_idle"]), ("start", res["rss_start"])] + \
                  [("%d%%" % m, k) for m, k in res["rss"]] + [("end", res["rss_end"])]
        say("server RSS (VmRSS):       " + ", ".join("%s %s" % (lab, mib(k)) for lab, k in samples))
        vals = [k for _, k in samples[1:] if k]
        # Growth is counted from the 10% sample: by then every connection,
        # server thread and per-thread buffer of the run is in use (a step
        # at the start), and what grows after that grows with the calls.
        first = dict(res["rss"]).get(10) or res["rss_start"]
        last = res["rss_end"]
        flat = None
        if first and last and vals:
            growth = last - first
            flat = growth <= max(1024, first * 0.05)
            say("RSS over the run: start %s, at 10%% %s, end %s (end/10%% %.3f, %+.1f MiB), max %s (server threads up to %d): %s"
                % (mib(res["rss_start"]), mib(first), mib(last), last / first, growth / 1024.0,
                   mib(max(vals)), res["threads_max"], "flat" if flat else "GROWING"))
        ok_rate = res["rate"] >= 1000
        say("http list_hotspots: %.0f calls/s (target >= 1,000/s), p50 %.3f ms, p99 %.3f ms: %s"
            % (res["rate"], d["p50"], d["p99"], verdict(ok_rate)))

        pres = run(ping_body, "ping", a.ping_max_s)
        pd = pres["dist"]
        say("ping (no worker):         %d calls in %.2f s: %.0f calls/s; latency %s"
            % (pres["ok"], pres["wall"], pres["rate"], fmt_dist(pd)))
        say("                          %s; %s" % (cpu_txt(pres["cpu"]), client_cpu_txt(pres)))
        if pres["stopped"]:
            say("note: ping stopped by the time cap (%d s) after %d of %d calls" % (a.ping_max_s, pres["calls"], a.http_calls))
        if pres["errors"]:
            say("error: %d pings failed; first: %s" % (pres["errors"], pres["first"]))
        say("http ping: %.0f calls/s, p50 %.3f ms, p99 %.3f ms; list_hotspots runs at %.0f%% of the ping rate"
            % (pres["rate"], pd["p50"], pd["p99"], 100.0 * res["rate"] / pres["rate"] if pres["rate"] else 0))
        row("2 http list_hotspots x%d" % a.threads, "%.0f calls/s" % res["rate"],
            "ping %.0f/s" % pres["rate"], ">= 1,000 calls/s", verdict(ok_rate))
        row("2 http latency", "p50 %.2f ms, p99 %.2f ms" % (d["p50"], d["p99"]), "ping p50 %.2f ms" % pd["p50"], "-", "-")
        row("2 http client", "%s, cpu %.3f ms/call" % ("C http_load" if a.http_client else "python threads",
                                                       (res["client_cpu"] or 0) * 1e3),
            "ping %.3f ms/call" % ((pres["client_cpu"] or 0) * 1e3), "-", "-")
        if flat is not None:
            row("2 http server RSS", "%s at 10%% -> %s (x%.3f)" % (mib(first), mib(last), last / first), "max %s" % mib(max(vals)),
                "flat", "flat" if flat else "GROWING")
    except BenchError as e:
        say("error: 2 http: %s; server stderr: %s" % (e, stderr_tail(errpath)))
        row("2 http list_hotspots", "error", "-", ">= 1,000 calls/s", "error")
    finally:
        if p:
            stop_server(p)


# ---------------------------------------------------------------- main

def summary(quick):
    section("summary (MCP)%s" % (" (BENCH_QUICK)" if quick else ""))
    rows = [("bench", "perflens-mcp", "baseline", "target", "verdict")] + ROWS
    w = [max(len(r[i]) for r in rows) for i in range(5)]
    for r in rows:
        say("  ".join(r[i].ljust(w[i]) if i < 4 else r[i] for i in range(5)).rstrip())
    say("(baseline = the same calls without the sandbox (1), back to back for the paced row, or ping, which starts no worker (2))")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--server", required=True, help="perflens-mcp (normal build)")
    ap.add_argument("--faults", default="", help="the test build (accepts --no-sandbox); optional")
    ap.add_argument("--allowed-root", required=True)
    ap.add_argument("--capture", required=True)
    ap.add_argument("--tmp", required=True, help="scratch folder (artifact root, server logs)")
    ap.add_argument("--stdio-n", type=int, default=2000)
    ap.add_argument("--stdio-max-s", type=float, default=60)
    ap.add_argument("--http-calls", type=int, default=100000)
    ap.add_argument("--threads", type=int, default=8)
    ap.add_argument("--http-max-s", type=float, default=180)
    ap.add_argument("--ping-max-s", type=float, default=60)
    ap.add_argument("--pace-ms", type=float, default=5.0,
                    help="pause before each call of the paced stdio series (0: no paced series)")
    ap.add_argument("--http-client", default="",
                    help="the C load client (bench/http_load.c, built); default: python threads")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--only", choices=["stdio", "http"], default=None)
    a = ap.parse_args()

    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, on_signal)
    atexit.register(kill_all)

    art = os.path.join(a.tmp, "art")
    os.makedirs(art, exist_ok=True)
    common = ["--allowed-root", a.allowed_root, "--artifact-root", art, "--allow-writes"]
    state = {}
    if a.only in (None, "stdio"):
        state = bench_stdio(a, common)
    if a.only in (None, "http"):
        bench_http(a, common, state)
    summary(a.quick)
    return 0


if __name__ == "__main__":
    sys.exit(main())
