# test_mcp_protocol.sh - perflens-mcp's JSON-RPC and MCP protocol over stdio
# and Streamable HTTP, with a python3 stdlib client: ids echoed exactly,
# unknown methods, notifications, server/discover and stateless 2026-07-28
# requests, version negotiation, HTTP sessions and status codes, progress
# (also as SSE), logging, and cancellation of a running call (the faults
# build's test_fault hang): no response, the worker gone, ping at once.
. tests/integration/lib.sh
need_shared "MCP protocol"
server="$(cd "$BUILD" && pwd)/perflens-mcp"
faults="$(cd "$BUILD" && pwd)/faults/perflens-mcp"
if [ ! -x "$faults" ]; then
	skip "MCP protocol: $faults is missing (make BUILD=$BUILD $BUILD/faults/perflens-mcp)"
	exit 0
fi

WORK="$WORK" timeout "${MCP_TEST_TIMEOUT:-170}" python3 - "$server" "$faults" "$SHARED" <<'PY'
import os, sys
sys.path.insert(0, os.path.join(os.environ.get("REPO", os.getcwd()), "tests", "integration"))
from mcp_client import *  # the shared MCP test client (mcp_client.py)

SERVER, FAULTS, SHARED = sys.argv[1], sys.argv[2], sys.argv[3]
CAPTURE = os.path.join(SHARED, "peers/flamegraph/test/perf-vertx-stacks-01.txt")
ART = os.path.join(WORK, "art")
base = [SERVER, "--allowed-root", SHARED, "--artifact-root", ART, "--allow-writes"]

# ================================================================ stdio
s = Stdio(base, "stdio")
# Claude Code's first message: server/discover, version 2026-07-28.
r = s.request("server/discover", {"_meta": STATELESS}, rid="server-discover-probe-1")
res = (r or {}).get("result", {})
check("stdio: server/discover (id server-discover-probe-1) lists 2026-07-28 and both legacy versions",
      r and r.get("id") == "server-discover-probe-1" and
      {"2026-07-28", "2025-11-25", "2025-06-18"} <= set(res.get("supportedVersions", [])) and
      res.get("serverInfo", {}).get("name") == "perflens-mcp" and "tools" in res.get("capabilities", {}), short(r))
check("stdio: server/discover result carries resultType complete", res.get("resultType") == "complete", short(res))

# A stateless 2026-07-28 request, no initialize before it.
r = s.request("tools/list", {"_meta": STATELESS})
res = (r or {}).get("result", {})
check("stdio: stateless 2026-07-28 tools/list without initialize lists the tools",
      len(res.get("tools", [])) > 0 and all("outputSchema" in t for t in res["tools"]), short(r))
check("stdio: stateless tools/list result carries resultType complete", res.get("resultType") == "complete", short(res))
r = s.request("ping", {"_meta": STATELESS})
check("stdio: stateless ping carries resultType complete",
      (r or {}).get("result", {}).get("resultType") == "complete", short(r))
r = s.call("list_artifacts", {"limit": 1}, meta=STATELESS)
check("stdio: stateless tools/call result carries resultType complete",
      (r or {}).get("result", {}).get("resultType") == "complete" and
      r["result"].get("isError") is False, short(r))

# An unsupported version in _meta: -32004 naming the supported ones.
r = s.request("tools/list", {"_meta": dict(STATELESS, **{"io.modelcontextprotocol/protocolVersion": "2099-01-01"})})
err = (r or {}).get("error", {})
sup = json.dumps(err.get("data", {}))
check("stdio: an unsupported _meta protocolVersion is -32004 listing the supported versions",
      err.get("code") == -32004 and all(v in sup for v in ("2026-07-28", "2025-11-25", "2025-06-18")), short(r))

# ids echoed exactly, raw text included.
for rid in ["req-7", 7, 0, -3, 9007199254740993, 9223372036854775807, ""]:
    s.send({"jsonrpc": "2.0", "id": rid, "method": "ping"})
    raw, m = s.recv(5)
    check("stdio: id %s echoed exactly" % json.dumps(rid),
          m is not None and m.get("id") == rid and type(m.get("id")) == type(rid) and
          ('"id":%s' % json.dumps(rid)).encode() in raw.replace(b" ", b"") and m.get("result") == {},
          raw)

r = s.request("no/such/method", {})
check("stdio: an unknown method is -32601 with its id", (r or {}).get("error", {}).get("code") == -32601, short(r))

# Notifications, known and unknown, get no answer: the next line is the ping's.
s.notify("notifications/initialized")
s.notify("notifications/roots/list_changed")
s.notify("notifications/progress", {"progressToken": "x", "progress": 1})
s.notify("notifications/no_such_thing", {"a": 1})
s.notify("no/such/method")
s.send({"jsonrpc": "2.0", "id": "after-notes", "method": "ping"})
raw, m = s.recv(5)
check("stdio: notifications get no response (the next line answers the ping after them)",
      m is not None and m.get("id") == "after-notes", raw)

# initialize: a supported version is echoed, an unknown one gets the newest.
for asked, want in [("2025-06-18", "2025-06-18"), ("2025-11-25", "2025-11-25"), ("2024-01-01", "2025-11-25")]:
    r = s.request("initialize", {"protocolVersion": asked, "capabilities": {},
                                 "clientInfo": {"name": "t", "version": "1"}})
    check("stdio: initialize asking %s answers %s" % (asked, want),
          (r or {}).get("result", {}).get("protocolVersion") == want, short(r))
s.notify("notifications/initialized")

# A 2025-03-26 client: that version is negotiated and answered as it
# defines (no structuredContent, no tool title or outputSchema, no
# serverInfo title); the tool's answer is the JSON in the text block.
old = Stdio(base, "stdio-2025-03-26")
r = old.initialize("2025-03-26")
res = (r or {}).get("result", {})
check("stdio 2025-03-26: initialize answers protocolVersion 2025-03-26, serverInfo without title",
      res.get("protocolVersion") == "2025-03-26" and res.get("serverInfo", {}).get("name") == "perflens-mcp" and
      "title" not in res.get("serverInfo", {}), short(r))
tl = (old.request("tools/list") or {}).get("result", {}).get("tools", [])
check("stdio 2025-03-26: tools/list without outputSchema or title, with inputSchema and annotations (%d tools)" % len(tl),
      tl and all("outputSchema" not in t and "title" not in t and "inputSchema" in t and "annotations" in t for t in tl),
      short(tl[:1]))
r = old.call("list_artifacts", {})
res = (r or {}).get("result", {})
try:
    text_json = json.loads(res["content"][0]["text"])
except (KeyError, IndexError, ValueError):
    text_json = None
check("stdio 2025-03-26: tools/call result has no structuredContent; its text is the JSON result",
      res.get("isError") is False and "structuredContent" not in res and isinstance(text_json, dict) and
      "artifacts" in text_json, short(r))
check("stdio 2025-03-26: the server exits cleanly", old.close() == 0, old.stderr()[-300:])

# Progress: a tools/call with _meta.progressToken.
s.notes = []
r = s.call("analyze_profile", {"path": CAPTURE}, meta={"progressToken": "tok-1"})
prog = [n for n in s.notes if n.get("method") == "notifications/progress"]
check("stdio: tools/call with a progressToken gets notifications/progress before its response",
      r and r.get("result", {}).get("isError") is False and len(prog) >= 1 and
      all(n["params"].get("progressToken") == "tok-1" for n in prog), short(prog))
vals = [n["params"].get("progress") for n in prog]
check("stdio: progress values increase", all(isinstance(v, (int, float)) for v in vals) and vals == sorted(vals) and
      len(set(vals)) == len(vals), vals)

# A tool's answer line (stdio): its structuredContent is, byte for byte,
# the JSON text of its text block (the server writes that line from the
# text), the line is one valid JSON message, ids of each kind echoed.
aid = (r or {}).get("result", {}).get("structuredContent", {}).get("analysis_id")
for rid in ["hot-\"1\"/\u00e9", 41, 0]:
    s.send({"jsonrpc": "2.0", "id": rid, "method": "tools/call",
            "params": {"name": "list_hotspots", "arguments": {"analysis_id": aid, "limit": 10}}})
    raw, m = s.recv(10)
    res = (m or {}).get("result", {})
    text = ((res.get("content") or [{}])[0]).get("text", "")
    check("stdio: a tools/call answer (id %s): structuredContent is its text block's JSON, byte for byte" % json.dumps(rid),
          m is not None and m.get("id") == rid and res.get("isError") is False and text and
          raw.rstrip(b"\n").endswith(b'"structuredContent":' + text.encode() + b',"isError":false}}') and
          json.loads(text) == res.get("structuredContent") and b"\n" not in raw.rstrip(b"\n") and
          len(res["structuredContent"].get("hotspots", [])) == 10, raw[:300])

# Logging: a threshold, then a failing call logs; below it nothing comes.
r = s.request("logging/setLevel", {"level": "no-such-level"})
check("stdio: logging/setLevel with an unknown level is -32602", (r or {}).get("error", {}).get("code") == -32602, short(r))
r = s.request("logging/setLevel", {"level": "warning"})
s.notes = []
r = s.call("analyze_profile", {"path": "/etc/hostname"})
time.sleep(0.2)
s.request("ping")
logs = [n for n in s.notes if n.get("method") == "notifications/message"]
check("stdio: after logging/setLevel warning a failing call sends notifications/message",
      is_tool_error(r, "path_refused") and logs and
      all(l["params"].get("level") in ("warning", "error", "critical", "alert", "emergency") for l in logs) and
      all("data" in l["params"] for l in logs), short(logs) + " " + short(r))
s.request("logging/setLevel", {"level": "emergency"})
s.notes = []
r = s.call("analyze_profile", {"path": "/etc/hostname"})
time.sleep(0.2)
s.request("ping")
logs = [n for n in s.notes if n.get("method") == "notifications/message"]
check("stdio: at level emergency the same failure sends no notifications/message", is_tool_error(r) and not logs, short(logs))

check("stdio: stdout carried only JSON-RPC 2.0 messages, one per line (%d lines)" % s.lines, s.lines and not s.garbage,
      s.garbage[:3])
rc = s.close()
check("stdio: the server exits 0 at end of input, no sanitizer report", rc == 0 and not sanitizer_report(s.stderr()),
      "exit %s; %s" % (rc, sanitizer_report(s.stderr())))

# ======================================================= cancellation
f = Stdio([FAULTS, "--allowed-root", SHARED, "--tool-timeout", "30"], "faults-cancel")
f.initialize()
f.send({"jsonrpc": "2.0", "id": "hang-1", "method": "tools/call",
        "params": {"name": "test_fault", "arguments": {"kind": "hang"}}})
workers = {}
end = time.monotonic() + 5
while not workers and time.monotonic() < end:
    workers = children(f.pid)
    time.sleep(0.05)
check("cancel: the hanging call runs in a worker process (a child of the server)", workers, "no child seen")
ms = f.ping_ms()
check("cancel: ping answers at once while the call hangs (%s ms)" % (ms and round(ms)), ms is not None and ms < 1000, ms)
f.notify("notifications/cancelled", {"requestId": "hang-1", "reason": "test"})
ms = f.ping_ms()
check("cancel: ping answers at once after notifications/cancelled (%s ms)" % (ms and round(ms)), ms is not None and ms < 1000, ms)
end = time.monotonic() + 3
left = workers
while time.monotonic() < end:
    left = {p: st for p, st in processes().items() if p in workers or st[2] in {g for _, _, g in workers.values()}}
    if not left and not children(f.pid):
        break
    time.sleep(0.05)
check("cancel: the worker and its process group are gone", not left and not children(f.pid),
      "left: %s; children: %s" % (left, children(f.pid)))
r = f.wait_for("hang-1", timeout=1.5)
check("cancel: the cancelled request gets no response", r is None, short(r))
# Cancelling something unknown or finished changes nothing.
f.notify("notifications/cancelled", {"requestId": "never-sent"})
f.notify("notifications/cancelled", {"requestId": "hang-1"})
r = f.call("test_fault", {"kind": "ok"})
check("cancel: the next call after cancellations succeeds",
      (r or {}).get("result", {}).get("structuredContent") == {"kind": "ok"}, short(r))
rc = f.close()
check("cancel: the faults server exits 0 at end of input, no sanitizer report",
      rc == 0 and not sanitizer_report(f.stderr()), "exit %s; %s" % (rc, sanitizer_report(f.stderr())))

# ================================================================= HTTP
h = Http(base, "http", env={"PERFLENS_TOKEN": "tok-" + os.urandom(8).hex()})
if not check("http: the server listens on a loopback port the OS picked", h.port, h.stderr()):
    sys.exit(0)

# libmicrohttpd is dlopen()ed by --http after the zygote was forked: the
# server maps it, the zygote and its workers (forked for every call) do not.
HTTP_LIBS = ("libmicrohttpd", "libgnutls", "libp11-kit")
def mapped(pid):
    try:
        return sorted({n for l in open("/proc/%d/maps" % pid) for n in HTTP_LIBS if n in l})
    except OSError as e:
        return ["unreadable: %s" % e]
ldd = subprocess.run(["ldd", SERVER], capture_output=True, text=True).stdout
check("http: ldd perflens-mcp lists none of %s" % ", ".join(HTTP_LIBS),
      ldd and not any(n in ldd for n in HTTP_LIBS), ldd)
zyg = [p for p, st in processes().items() if st[1] == h.pid and comm(p) == "perflens-zygote"]
if not zyg:
    print("skip - http: zygote maps: no perflens-zygote child (sandbox unavailable?)", flush=True)
else:
    spare, end = [], time.monotonic() + 5
    while not spare and time.monotonic() < end:
        spare = [p for p, st in processes().items() if st[1] == zyg[0] and comm(p) in ("perflens-spare", "perflens-worker")]
        time.sleep(0.05)
    check("http: the server maps libmicrohttpd, its zygote and the zygote's worker do not",
          "libmicrohttpd" in mapped(h.pid) and not mapped(zyg[0]) and spare and not mapped(spare[0]),
          "server %s; zygote %s; worker %s" % (mapped(h.pid), mapped(zyg[0]), spare and mapped(spare[0])))

# server/discover and stateless requests need no session.
st, hd, text, msgs = h.post({"jsonrpc": "2.0", "id": "server-discover-probe-1", "method": "server/discover",
                             "params": {"_meta": STATELESS}})
m = msgs[-1] if msgs else {}
check("http: server/discover without a session answers 200 with resultType complete",
      st == 200 and m.get("id") == "server-discover-probe-1" and m.get("result", {}).get("resultType") == "complete" and
      "2026-07-28" in m["result"].get("supportedVersions", []), "%s %s" % (st, text[:300]))
check("http: server/discover creates no session", "mcp-session-id" not in hd, hd)
st, hd, text, msgs = h.post({"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {"_meta": STATELESS}},
                            headers={"MCP-Protocol-Version": "2026-07-28"})
m = msgs[-1] if msgs else {}
check("http: stateless tools/list without Mcp-Session-Id answers 200 with resultType complete",
      st == 200 and len(m.get("result", {}).get("tools", [])) > 0 and m["result"].get("resultType") == "complete",
      "%s %s" % (st, text[:300]))
st, hd, text, msgs = h.post({"jsonrpc": "2.0", "id": 3, "method": "tools/list", "params": {
    "_meta": dict(STATELESS, **{"io.modelcontextprotocol/protocolVersion": "2099-01-01"})}})
m = msgs[-1] if msgs else {}
check("http: an unsupported _meta protocolVersion is -32004",
      m.get("error", {}).get("code") == -32004 and "2026-07-28" in json.dumps(m["error"].get("data")), "%s %s" % (st, text[:300]))

# Sessions.
st, hd, msgs = h.initialize("2025-06-18")
check("http: initialize answers 200 with an Mcp-Session-Id and echoes 2025-06-18",
      st == 200 and h.sid and msgs and msgs[-1].get("result", {}).get("protocolVersion") == "2025-06-18",
      "%s %s %s" % (st, hd, short(msgs)))
sid = h.sid
st, hd, text, msgs = h.post({"jsonrpc": "2.0", "id": 4, "method": "ping"})
check("http: a request with the session id and MCP-Protocol-Version answers 200", st == 200 and msgs and
      msgs[-1].get("id") == 4, "%s %s" % (st, text[:200]))
st, hd, text, msgs = h.post({"jsonrpc": "2.0", "id": 5, "method": "ping"}, session=False)
check("http: a legacy request without Mcp-Session-Id is 400", st == 400, "%s %s" % (st, text[:200]))
st, hd, text, msgs = h.post({"jsonrpc": "2.0", "id": 6, "method": "ping"}, headers={"Mcp-Session-Id": "0123456789abcdef0123456789abcdef"})
check("http: an unknown Mcp-Session-Id is 404", st == 404, "%s %s" % (st, text[:200]))
st, hd, text, msgs = h.post({"jsonrpc": "2.0", "id": 7, "method": "ping"}, headers={"MCP-Protocol-Version": "1999-01-01"})
check("http: a bad MCP-Protocol-Version header is 400", st == 400, "%s %s" % (st, text[:200]))
st, hd, text, msgs = h.post({"jsonrpc": "2.0", "method": "notifications/initialized"})
check("http: a notification is 202 with no body", st == 202 and text == "", "%s %r" % (st, text[:200]))
st, hd, text, msgs = h.post({"jsonrpc": "2.0", "id": 99, "result": {}})
check("http: a JSON-RPC response from the client is 202", st == 202 and text == "", "%s %r" % (st, text[:200]))
st, hd, text, msgs = h.post(None, method="GET", headers={"Accept": "text/event-stream", "Content-Type": None})
check("http: GET is 405", st == 405, "%s %s" % (st, text[:200]))

# Three concurrent POSTs on one session all answered.
import threading
out = [None] * 3
def one(i):
    out[i] = h.post({"jsonrpc": "2.0", "id": 100 + i, "method": "tools/list", "params": {}})
ths = [threading.Thread(target=one, args=(i,)) for i in range(3)]
[t.start() for t in ths]
[t.join(30) for t in ths]
check("http: three concurrent POSTs on one session are all answered 200",
      all(o and o[0] == 200 and o[3] and o[3][-1].get("id") == 100 + i for i, o in enumerate(out)),
      [o and o[0] for o in out])

# Progress over SSE when the client accepts text/event-stream.
st, hd, text, msgs = h.post({"jsonrpc": "2.0", "id": 8, "method": "tools/call", "params": {
    "name": "analyze_profile", "arguments": {"path": CAPTURE}, "_meta": {"progressToken": 42}}})
ids = [i for i, m in enumerate(msgs) if m.get("id") == 8]
prog = [i for i, m in enumerate(msgs) if m.get("method") == "notifications/progress" and m["params"].get("progressToken") == 42]
check("http: tools/call with a progressToken answers text/event-stream with progress before the response",
      st == 200 and hd.get("content-type", "").startswith("text/event-stream") and ids and prog and
      max(prog) < ids[0] and msgs[ids[0]]["result"].get("isError") is False,
      "%s %s %s" % (st, hd.get("content-type"), text[:400]))

# Logging over HTTP: the log notifications come with the answer.
st, hd, text, msgs = h.post({"jsonrpc": "2.0", "id": 9, "method": "logging/setLevel", "params": {"level": "warning"}})
st, hd, text, msgs = h.post({"jsonrpc": "2.0", "id": 10, "method": "tools/call", "params": {
    "name": "analyze_profile", "arguments": {"path": "/etc/hostname"}}})
resp = [m for m in msgs if m.get("id") == 10]
logs = [m for m in msgs if m.get("method") == "notifications/message"]
check("http: after logging/setLevel a failing call's SSE answer holds its notifications/message and the response",
      st == 200 and resp and is_tool_error(resp[0], "path_refused") and logs, "%s %s" % (st, text[:400]))
check("http: in that SSE stream the response comes last (the stream ends with it)",
      msgs and msgs[-1].get("id") == 10, "order: %s" % [m.get("method") or "response %s" % m.get("id") for m in msgs])
# A client that accepts only application/json must still get the response.
st, hd, text, msgs = h.post({"jsonrpc": "2.0", "id": 11, "method": "tools/call", "params": {
    "name": "analyze_profile", "arguments": {"path": "/etc/hostname"}}}, headers={"Accept": "application/json"})
check("http: a JSON-only client (Accept: application/json) gets the tool call's response after logging/setLevel",
      st == 200 and hd.get("content-type", "").startswith("application/json") and msgs and msgs[-1].get("id") == 11 and
      is_tool_error(msgs[-1], "path_refused"), "%s %s %s" % (st, hd.get("content-type"), text[:300]))
h.post({"jsonrpc": "2.0", "id": 12, "method": "logging/setLevel", "params": {"level": "emergency"}})
st, hd, text, msgs = h.post({"jsonrpc": "2.0", "id": 13, "method": "tools/call", "params": {
    "name": "list_artifacts", "arguments": {"limit": 1}, "_meta": {"progressToken": "p"}}}, headers={"Accept": "application/json"})
check("http: a JSON-only client gets the response, not a progress notification",
      st == 200 and msgs and msgs[-1].get("id") == 13 and msgs[-1]["result"].get("isError") is False,
      "%s %s" % (st, text[:300]))

# DELETE ends the session.
st, hd, text, msgs = h.post(None, method="DELETE")
check("http: DELETE ends the session (2xx)", st in (200, 202, 204), "%s %s" % (st, text[:200]))
st, hd, text, msgs = h.post({"jsonrpc": "2.0", "id": 14, "method": "ping"})
check("http: the deleted session is 404 afterwards", st == 404, "%s %s" % (st, text[:200]))
st, hd, text, msgs = h.post(None, method="DELETE")
check("http: DELETE of the deleted session is 404", st == 404, "%s %s" % (st, text[:200]))
h.sid = h.version = None

# Cancellation over HTTP: a second POST cancels the first one's worker.
hf = Http([FAULTS, "--allowed-root", SHARED, "--tool-timeout", "30", "--no-auth"], "http-faults")
if check("http: the faults server listens", hf.port, hf.stderr()):
    hf.initialize()
    res = {}
    def hang():
        t = time.monotonic()
        res["r"] = hf.post({"jsonrpc": "2.0", "id": "h1", "method": "tools/call", "params": {
            "name": "test_fault", "arguments": {"kind": "hang"}}}, timeout=40)
        res["s"] = time.monotonic() - t
    th = threading.Thread(target=hang)
    th.start()
    workers, end = {}, time.monotonic() + 5 * SCALE
    while not workers and time.monotonic() < end:
        workers = children(hf.pid)
        time.sleep(0.05)
    ms = hf.ping_ms()
    check("http cancel: ping answers at once while a call hangs (%s ms)" % (ms and round(ms)), ms is not None and ms < 1000, ms)
    st, hd, text, msgs = hf.post({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": "h1"}})
    th.join(5 * SCALE)
    r = res.get("r")
    check("http cancel: the hanging POST returns at once, without a response for its id",
          r is not None and res["s"] < 5 * SCALE and not any(m.get("id") == "h1" for m in r[3]), short(str(r)))
    end = time.monotonic() + 3
    while children(hf.pid) and time.monotonic() < end:
        time.sleep(0.05)
    gone = not {p: st for p, st in processes().items() if p in workers or st[2] in workers}
    check("http cancel: the worker is gone", workers and gone and not children(hf.pid), "%s %s" % (workers, children(hf.pid)))
    rc = hf.stop()
    check("http: the faults server exits 0 on SIGTERM, no sanitizer report", rc == 0 and not sanitizer_report(hf.stderr()),
          "exit %s; %s" % (rc, sanitizer_report(hf.stderr())))
rc = h.stop()
check("http: the server exits 0 on SIGTERM, no sanitizer report", rc == 0 and not sanitizer_report(h.stderr()),
      "exit %s; %s" % (rc, sanitizer_report(h.stderr())))
sys.exit(0)
PY
rc=$?
[ "$rc" -eq 0 ] || notok "$(basename "$0"): the python3 client exited $rc (timeout or crash; see above)"
