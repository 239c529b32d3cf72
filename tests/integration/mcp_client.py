"""mcp_client.py - the small MCP test client shared by test_mcp_*.sh.

python3 stdlib only: it starts perflens-mcp over stdio or HTTP, sends
JSON-RPC messages, reads answers with deadlines, and prints the ok / not ok
lines that tests/integration/run.sh counts.  The scripts import it with
`from mcp_client import *`.
"""
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


# The sanitizer halves of `make check` set it (ASan 4, TSan 10): slack in
# deadlines scales with it, never a bound the product itself promises.
SCALE = float(os.environ.get("CK_TIMEOUT_MULTIPLIER") or 1)


def until(cond, timeout, step=0.05):
    """Poll cond() until it is true or timeout (seconds) passes; its last value."""
    end = time.monotonic() + timeout
    while True:
        v = cond()
        if v or time.monotonic() >= end:
            return v
        time.sleep(step)


def sc(r):
    """A tools/call response's structuredContent ({} when none)."""
    return (r or {}).get("result", {}).get("structuredContent") or {}


def steps_of(v):
    """Every step ({tool, arguments}) anywhere in a result, nested ones too."""
    out = []
    if isinstance(v, dict):
        if isinstance(v.get("tool"), str) and isinstance(v.get("arguments"), dict):
            out.append(v)
        for x in v.values():
            out += steps_of(x)
    elif isinstance(v, list):
        for x in v:
            out += steps_of(x)
    return out


def short(v, n=300):
    return (v if isinstance(v, str) else json.dumps(v))[:n]


def remember(pid):
    """The shell's exit trap kills every server listed here."""
    with open(os.path.join(WORK, "pids"), "a") as f:
        f.write("%d\n" % pid)


def proc_stat(pid):
    """(state, ppid, pgid) of a process, or None when it is gone."""
    try:
        s = open("/proc/%d/stat" % pid, errors="replace").read()
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


def comm(pid):
    try:
        return open("/proc/%d/comm" % pid).read().strip()
    except OSError:
        return ""


def children(pid):
    """{pid: (state, ppid, pgid)} of the workers of server pid: its direct
    children, except the sandbox's zygote, whose own children (the workers
    it forks for the server) count instead, less its spare: the next
    worker, named perflens-spare until its job comes (and, for the
    microseconds after its fork, still perflens-zygote)."""
    procs = processes()
    direct = {p: st for p, st in procs.items() if st[1] == pid}
    zygotes = {p for p in direct if comm(p) == "perflens-zygote"}
    out = {p: st for p, st in direct.items() if p not in zygotes}
    out.update({p: st for p, st in procs.items()
                if st[1] in zygotes and comm(p) not in ("perflens-spare", "perflens-zygote")})
    return out


def in_groups(pgids):
    return {p: st for p, st in processes().items() if st[2] in pgids}



def link_port(server, timeout=10):
    """The port a perflens-mcp's agent link listens on, read from its stderr
    ("agent link: listening on ADDR:PORT"), or None within `timeout`."""
    return until(lambda: next((int(l.rsplit(":", 1)[1].split(";")[0]) for l in server.stderr().splitlines()
                               if "agent link: listening on" in l), None), timeout)


def reap(procs):
    """Kill and wait for what a script started and is still running (its
    finally:, so no agent, fake or workload outlives the test)."""
    for p in procs:
        try:
            if p.poll() is None:
                p.kill()
                p.wait(timeout=10)
        except Exception:
            pass

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
        self.validators = None  # tool name -> outputSchema validator (check_outputs)
        self.validated = {}     # tool name -> results validated

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
        r = self.request("tools/call", params, timeout=timeout)
        if self.validators is not None:
            self.validate_output(name, r)
        return r

    def check_outputs(self):
        """Validate every later successful tool result's structuredContent
        against the outputSchema tools/list gives for it, with
        python3-jsonschema (an oracle independent of our C): a result that
        breaks its schema is one a client throws away.  Call after
        initialize(); outputs_summary() prints what was validated."""
        try:
            import jsonschema
        except ImportError:
            print("# skip: outputSchema checks: python3-jsonschema is not installed", flush=True)
            return False
        self.validators = {}
        params = {}
        for _ in range(100):   # tools/list is paged: follow nextCursor
            r = self.request("tools/list", params)
            result = (r or {}).get("result") or {}
            for t in result.get("tools") or []:
                if "outputSchema" in t:
                    self.validators[t["name"]] = jsonschema.Draft202012Validator(t["outputSchema"])
            if not result.get("nextCursor"):
                break
            params = {"cursor": result["nextCursor"]}
        if not self.validators:   # a protocol version without outputSchema, or no tools
            print("# outputSchema checks: tools/list gave none to check against", flush=True)
            return False
        return True

    def validate_output(self, name, r):
        res = (r or {}).get("result") or {}
        v = self.validators.get(name)
        if v is None or res.get("isError") or "structuredContent" not in res:
            return
        errors = sorted(v.iter_errors(res["structuredContent"]), key=lambda e: list(e.absolute_path))
        if errors:
            e = errors[0]
            check("%s's result matches its outputSchema" % name, False,
                  "at %s: %s" % ("/".join(str(x) for x in e.absolute_path) or "(top)", e.message))
        else:
            self.validated[name] = self.validated.get(name, 0) + 1

    def outputs_summary(self):
        if self.validators is not None and self.validated:
            check("%d results of %d tools matched their outputSchema (%s)" % (
                sum(self.validated.values()), len(self.validated),
                ", ".join("%s %d" % kv for kv in sorted(self.validated.items()))),
                True)

    def initialize(self, version="2025-11-25"):
        r = self.request("initialize", {"protocolVersion": version, "capabilities": {},
                                        "clientInfo": {"name": "perflens-tests", "version": "1"}})
        self.notify("notifications/initialized")
        if os.environ.get("PERFLENS_CHECK_OUTPUTS") != "0" and self.validators is None:
            self.check_outputs()   # every test's results (PERFLENS_CHECK_OUTPUTS=0: none)
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
        self.outputs_summary()
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
