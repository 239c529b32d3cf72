# test_mcp_sandbox.sh - tool calls run in sandboxed workers: with the faults
# build's test_fault tool, a worker that crashes, makes a forbidden system
# call, executes a program, answers too much or hangs past --tool-timeout
# becomes an isError result with the right code (internal, limit_exceeded,
# timeout); the server answers ping right after, nothing of the worker is
# left, and 50 calls in a row leave no zombie.  The normal build has no
# test_fault.
. tests/integration/lib.sh
server="$(cd "$BUILD" && pwd)/perflens-mcp"
faults="$(cd "$BUILD" && pwd)/faults/perflens-mcp"
if [ ! -x "$faults" ]; then
	skip "MCP sandbox: $faults is missing (make BUILD=$BUILD $BUILD/faults/perflens-mcp)"
	exit 0
fi

# Every server the client starts is listed in $WORK/pids; kill those still
# running at exit, whatever happened.
cleanup() {
	if [ -f "$WORK/pids" ]; then
		while read -r p; do
			grep -q perflens-mcp "/proc/$p/cmdline" 2>/dev/null && kill -9 "$p" 2>/dev/null
		done < "$WORK/pids"
	fi
	rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

WORK="$WORK" timeout "${MCP_TEST_TIMEOUT:-170}" python3 - "$server" "$faults" <<'PY'
# ---- MCP test client (python3 stdlib; the same in each test_mcp_*.sh) ----
import http.client, json, os, re, select, signal, subprocess, sys, time

WORK = os.environ["WORK"]
fails = 0


def check(what, cond, why=""):
    global fails
    if cond:
        print("ok - " + what, flush=True)
    else:
        fails += 1
        print("not ok - %s: %s" % (what, " ".join(str(why).split())[:700]), flush=True)
    return bool(cond)


def short(v, n=300):
    return (v if isinstance(v, str) else json.dumps(v))[:n]


def remember(pid):
    """The shell's exit trap kills every server listed here."""
    with open(os.path.join(WORK, "pids"), "a") as f:
        f.write("%d\n" % pid)


def proc_stat(pid):
    """(state, ppid, pgid) of a process, or None when it is gone."""
    try:
        s = open("/proc/%d/stat" % pid).read()
    except OSError:
        return None
    f = s[s.rindex(")") + 2:].split()
    return f[0], int(f[1]), int(f[2])


def processes():
    out = {}
    for d in os.listdir("/proc"):
        if d.isdigit():
            st = proc_stat(int(d))
            if st:
                out[int(d)] = st
    return out


def children(pid):
    """{pid: (state, ppid, pgid)} of the direct children of pid."""
    return {p: st for p, st in processes().items() if st[1] == pid}


def in_groups(pgids):
    return {p: st for p, st in processes().items() if st[2] in pgids}


class Stdio:
    """A server on stdio: one JSON message per line each way."""

    def __init__(self, argv, name="server"):
        self.errpath = os.path.join(WORK, name + ".stderr")
        self.p = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=open(self.errpath, "wb"))
        remember(self.p.pid)
        self.pid = self.p.pid
        self.buf = b""
        self.notes = []     # notifications seen while waiting for responses
        self.extra = []     # responses that came while waiting for another id
        self.next_id = 1000
        self.lines = 0
        self.garbage = []   # stdout lines that are not JSON-RPC 2.0 objects

    def send(self, msg):
        data = msg if isinstance(msg, bytes) else json.dumps(msg).encode()
        try:
            self.p.stdin.write(data + b"\n")
            self.p.stdin.flush()
        except BrokenPipeError:
            pass

    def recv(self, timeout=10.0):
        """The next message as (raw line, parsed), or (None, None) on timeout."""
        end = time.monotonic() + timeout
        while b"\n" not in self.buf:
            left = end - time.monotonic()
            if left <= 0:
                return None, None
            r, _, _ = select.select([self.p.stdout], [], [], left)
            if not r:
                return None, None
            chunk = os.read(self.p.stdout.fileno(), 1 << 20)
            if not chunk:
                return None, None
            self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        self.lines += 1
        try:
            m = json.loads(line)
        except ValueError:
            m = None
        if not isinstance(m, dict) or m.get("jsonrpc") != "2.0":
            self.garbage.append(line[:200])
            return line, {"unparsable": line[:200].decode(errors="replace")}
        return line, m

    def wait_for(self, rid, timeout=30.0):
        """The response with this id; notifications go to self.notes."""
        for i, m in enumerate(self.extra):
            if m.get("id") == rid and type(m.get("id")) == type(rid):
                return self.extra.pop(i)
        end = time.monotonic() + timeout
        while True:
            raw, m = self.recv(max(0.0, end - time.monotonic()))
            if m is None:
                return None
            if "method" in m and "id" not in m:
                self.notes.append(m)
            elif m.get("id") == rid and type(m.get("id")) == type(rid):
                return m
            else:
                self.extra.append(m)

    def request(self, method, params=None, rid=None, timeout=30.0):
        if rid is None:
            self.next_id += 1
            rid = self.next_id
        msg = {"jsonrpc": "2.0", "id": rid, "method": method}
        if params is not None:
            msg["params"] = params
        self.send(msg)
        return self.wait_for(rid, timeout)

    def notify(self, method, params=None):
        msg = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            msg["params"] = params
        self.send(msg)

    def call(self, name, args, timeout=30.0, meta=None):
        params = {"name": name, "arguments": args}
        if meta:
            params["_meta"] = meta
        return self.request("tools/call", params, timeout=timeout)

    def initialize(self, version="2025-11-25"):
        r = self.request("initialize", {"protocolVersion": version, "capabilities": {},
                                        "clientInfo": {"name": "perflens-tests", "version": "1"}})
        self.notify("notifications/initialized")
        return r

    def ping_ms(self, timeout=5.0):
        """Milliseconds a ping took, or None without an answer."""
        t = time.monotonic()
        r = self.request("ping", timeout=timeout)
        return (time.monotonic() - t) * 1000 if r and r.get("result") == {} else None

    def stderr(self):
        try:
            return open(self.errpath, errors="replace").read()
        except OSError:
            return ""

    def close(self):
        """End of input: the server must exit by itself, 0, with no sanitizer report."""
        try:
            self.p.stdin.close()
        except OSError:
            pass
        try:
            rc = self.p.wait(10)
        except subprocess.TimeoutExpired:
            self.p.kill()
            rc = "still running 10 s after end of input"
        return rc


def sanitizer_report(text):
    return [l for l in text.splitlines() if re.search(r"Sanitizer|runtime error", l)][:3]


class Http:
    """A server on --http 127.0.0.1:0 (the OS picks the port)."""

    def __init__(self, argv, name="http", env=None):
        self.errpath = os.path.join(WORK, name + ".stderr")
        self.p = subprocess.Popen(argv + ["--http", "127.0.0.1:0"], stdin=subprocess.DEVNULL,
                                  stdout=subprocess.DEVNULL, stderr=open(self.errpath, "wb"),
                                  env=dict(os.environ, **(env or {})))
        remember(self.p.pid)
        self.pid = self.p.pid
        self.port = None
        end = time.monotonic() + 10
        while time.monotonic() < end and self.p.poll() is None:
            m = re.search(r"listening on http://127\.0\.0\.1:(\d+)/mcp", self.stderr())
            if m:
                self.port = int(m.group(1))
                break
            time.sleep(0.05)
        self.token = (env or {}).get("PERFLENS_TOKEN")
        self.sid = None
        self.version = None

    def stderr(self):
        try:
            return open(self.errpath, errors="replace").read()
        except OSError:
            return ""

    def post(self, body, headers=None, method="POST", auth=True, session=True, timeout=30):
        """(status, headers {lower-case: value}, body text, [messages])."""
        c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
        h = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
        if auth and self.token:
            h["Authorization"] = "Bearer " + self.token
        if session and self.sid:
            h["Mcp-Session-Id"] = self.sid
        if session and self.version:
            h["MCP-Protocol-Version"] = self.version
        h.update(headers or {})
        h = {k: v for k, v in h.items() if v is not None}
        data = None if body is None else body if isinstance(body, bytes) else json.dumps(body).encode()
        try:
            c.putrequest(method, "/mcp", skip_host="Host" in h, skip_accept_encoding=True)
            for k, v in h.items():
                c.putheader(k, v)
            if data is not None:
                c.putheader("Content-Length", str(len(data)))
            c.endheaders(data)
            r = c.getresponse()
            text = r.read().decode(errors="replace")
            hdrs = {k.lower(): v for k, v in r.getheaders()}
        except (OSError, http.client.HTTPException) as e:
            return None, {}, "connection failed: %s" % e, []
        finally:
            c.close()
        msgs = []
        if hdrs.get("content-type", "").startswith("text/event-stream"):
            for block in text.split("\n\n"):
                data_lines = [l[5:].lstrip() for l in block.split("\n") if l.startswith("data:")]
                if data_lines:
                    msgs.append(json.loads("\n".join(data_lines)))
        elif text.strip():
            try:
                msgs.append(json.loads(text))
            except ValueError:
                pass
        return r.status, hdrs, text, msgs

    def initialize(self, version="2025-11-25"):
        self.sid = None
        self.version = None
        st, h, text, msgs = self.post({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": version, "capabilities": {},
            "clientInfo": {"name": "perflens-tests", "version": "1"}}})
        self.sid = h.get("mcp-session-id")
        self.version = version
        self.post({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return st, h, msgs

    def ping_ms(self):
        t = time.monotonic()
        msg = {"jsonrpc": "2.0", "id": "ping", "method": "ping"}
        if not self.sid:
            msg["params"] = {"_meta": STATELESS}   # no session: a stateless ping
        st, h, text, msgs = self.post(msg)
        ok = st == 200 and msgs and isinstance(msgs[-1].get("result"), dict)
        return (time.monotonic() - t) * 1000 if ok else None

    def stop(self):
        """SIGTERM: the server must exit 0 with no sanitizer report."""
        if self.p.poll() is None:
            self.p.send_signal(signal.SIGTERM)
        try:
            return self.p.wait(10)
        except subprocess.TimeoutExpired:
            self.p.kill()
            return "still running 10 s after SIGTERM"


def result_text(r):
    try:
        return r["result"]["content"][0]["text"]
    except (KeyError, IndexError, TypeError):
        return ""


def is_tool_error(r, *words):
    """An isError result whose text names every word."""
    t = result_text(r)
    return bool(r) and r.get("result", {}).get("isError") is True and all(w in t for w in words)


STATELESS = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
             "io.modelcontextprotocol/clientCapabilities": {}}
# ---- end of the MCP test client ----

SERVER, FAULTS = sys.argv[1], sys.argv[2]
ROOT = os.path.join(WORK, "root")   # tools read nothing here
os.makedirs(ROOT)
WANT = {"crash": "internal", "syscall": "internal", "exec": "internal",
        "oversize": "limit_exceeded", "hang": "timeout"}
# What the message says happened (the sandbox's own account).
DETAIL = {"crash": "SIGSEGV", "syscall": "forbidden system call", "exec": "forbidden system call",
          "oversize": "limit", "hang": "--tool-timeout"}

# The normal build has no test hook.
n = Stdio([SERVER, "--allowed-root", ROOT], "normal")
n.initialize()
names, cursor = [], None
for _ in range(50):
    r = n.request("tools/list", {"cursor": cursor} if cursor else {})
    res = (r or {}).get("result", {})
    names += [t["name"] for t in res.get("tools", [])]
    cursor = res.get("nextCursor")
    if not cursor:
        break
check("normal build: tools/list (%d tools) has no test_fault" % len(names), names and "test_fault" not in names, names)
r = n.call("test_fault", {"kind": "ok"})
check("normal build: calling test_fault is an unknown tool (-32602)", (r or {}).get("error", {}).get("code") == -32602, short(r))
n.close()

f = Stdio([FAULTS, "--allowed-root", ROOT, "--tool-timeout", "2"], "faults")
f.initialize()
r = f.request("tools/list")
if not check("faults build: tools/list has test_fault",
             any(t["name"] == "test_fault" for t in (r or {}).get("result", {}).get("tools", [])), short(r)):
    sys.exit(0)
r = f.call("test_fault", {"kind": "ok"})
check("faults build: test_fault ok returns its structuredContent",
      (r or {}).get("result", {}).get("structuredContent") == {"kind": "ok"}, short(r))

for kind in ["crash", "syscall", "exec", "oversize", "hang"]:
    f.send({"jsonrpc": "2.0", "id": "fault-" + kind, "method": "tools/call",
            "params": {"name": "test_fault", "arguments": {"kind": kind}}})
    # Watch the server's children while the worker runs (the hang lasts 2 s).
    seen, t0 = {}, time.monotonic()
    r = None
    while time.monotonic() - t0 < 15:
        seen.update(children(f.pid))
        _, m = f.recv(0.02)
        if m is None:
            continue
        if m.get("id") == "fault-" + kind:
            r = m
            break
        if "method" in m:
            f.notes.append(m)
    took = time.monotonic() - t0
    want = WANT[kind]
    text = result_text(r)
    check("test_fault %s: isError result with code %s (%.1f s)" % (kind, want, took),
          r and r["result"].get("isError") is True and text.startswith("error (%s)" % want) and
          "structuredContent" not in r["result"], short(r))
    check("test_fault %s: the message says what happened (%s)" % (kind, DETAIL[kind]), DETAIL[kind] in text, text)
    if kind == "hang":
        check("test_fault hang: stopped near --tool-timeout 2 s", 1.5 < took < 6, "%.1f s" % took)
    ms = f.ping_ms()
    check("test_fault %s: ping answers right after (%s ms)" % (kind, ms and round(ms)), ms is not None and ms < 1000, ms)
    # Nothing of the worker is left: no child of the server, nobody in its group.
    groups = {g for _, _, g in seen.values()} | set(seen)
    end = time.monotonic() + 2
    left = kids = None
    while time.monotonic() < end:
        left, kids = in_groups(groups), children(f.pid)
        if not left and not kids:
            break
        time.sleep(0.05)
    check("test_fault %s: no process of the worker is left (%d seen while it ran)" % (kind, len(seen)),
          not left and not kids and (seen or kind != "hang"),
          "group members %s, children %s, seen %s" % (left, kids, seen))

r = f.call("test_fault", {"kind": "ok"})
check("faults build: a call after the faults still succeeds",
      (r or {}).get("result", {}).get("structuredContent") == {"kind": "ok"}, short(r))

# 50 calls in a row: no zombie, no leftover child.
kinds = ["ok", "crash", "syscall", "exec", "ok"]
bad = []
for i in range(50):
    k = kinds[i % len(kinds)]
    r = f.call("test_fault", {"kind": k})
    good = (r or {}).get("result", {}).get("structuredContent") == {"kind": "ok"} if k == "ok" else is_tool_error(r, "error (internal)")
    if not good:
        bad.append((i, k, short(r, 150)))
check("50 calls in a row (ok, crash, syscall, exec) each answered as expected", not bad, bad[:3])
time.sleep(0.2)
kids = children(f.pid)
zombies = {p: st for p, st in processes().items() if st[0] == "Z" and (st[1] == f.pid or p in kids)}
check("after 50 calls the server has no child and no zombie", not kids and not zombies, "children %s" % kids)
fds = len(os.listdir("/proc/%d/fd" % f.pid)) if os.path.isdir("/proc/%d/fd" % f.pid) else -1
check("after 50 calls the server holds few descriptors (%d)" % fds, 0 < fds < 32, fds)
ms = f.ping_ms()
check("after 50 calls ping answers (%s ms)" % (ms and round(ms)), ms is not None and ms < 1000, ms)
rc = f.close()
check("faults server exits 0 at end of input, no sanitizer report", rc == 0 and not sanitizer_report(f.stderr()),
      "exit %s; %s" % (rc, sanitizer_report(f.stderr())))

# The same over HTTP: a crash and a hang, then ping.
h = Http([FAULTS, "--allowed-root", ROOT, "--tool-timeout", "2", "--no-auth"], "http-faults")
if check("http faults server listens", h.port, h.stderr()):
    h.initialize()
    for kind in ["crash", "hang", "oversize"]:
        st, hd, text, msgs = h.post({"jsonrpc": "2.0", "id": kind, "method": "tools/call",
                                     "params": {"name": "test_fault", "arguments": {"kind": kind}}})
        resp = [m for m in msgs if m.get("id") == kind]
        check("http test_fault %s: isError result with code %s" % (kind, WANT[kind]),
              st == 200 and resp and is_tool_error(resp[0], "error (%s)" % WANT[kind]), "%s %s" % (st, text[:300]))
        ms = h.ping_ms()
        check("http test_fault %s: ping answers right after (%s ms)" % (kind, ms and round(ms)), ms is not None and ms < 1000, ms)
    end = time.monotonic() + 2
    while children(h.pid) and time.monotonic() < end:
        time.sleep(0.05)
    check("http: no worker left", not children(h.pid), children(h.pid))
    rc = h.stop()
    check("http faults server exits 0 on SIGTERM, no sanitizer report", rc == 0 and not sanitizer_report(h.stderr()),
          "exit %s; %s" % (rc, sanitizer_report(h.stderr())))
sys.exit(0)
PY
rc=$?
[ "$rc" -eq 0 ] || notok "$(basename "$0"): the python3 client exited $rc (timeout or crash; see above)"
