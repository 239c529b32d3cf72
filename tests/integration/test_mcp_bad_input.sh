# test_mcp_bad_input.sh - perflens-mcp under hostile or broken input, with a
# python3 stdlib client: malformed JSON-RPC, wrong and unknown arguments,
# unknown tools, invalid cursors, a 10 MB line, 10,000-deep nesting, paths
# and symlinks leaving the allowed root; over HTTP missing and wrong tokens,
# foreign Host and Origin, an oversized body.  Each gets an error, never a
# crash; afterwards the artifact root holds nothing new and ping answers.
# Also: unsafe startup flags are refused, and without --allow-writes the
# writing tools say which flag they need.
. tests/integration/lib.sh
need_shared "MCP bad input"
server="$(cd "$BUILD" && pwd)/perflens-mcp"

WORK="$WORK" timeout "${MCP_TEST_TIMEOUT:-170}" python3 - "$server" "$SHARED" <<'PY'
import os, sys
sys.path.insert(0, os.path.join(os.environ.get("REPO", os.getcwd()), "tests", "integration"))
from mcp_client import *  # the shared MCP test client (mcp_client.py)

SERVER, SHARED = sys.argv[1], sys.argv[2]
CAPTURE = os.path.join(SHARED, "peers/flamegraph/test/perf-vertx-stacks-01.txt")
ROOT = os.path.join(WORK, "root")          # the only allowed root
ART = os.path.join(WORK, "art")
os.makedirs(os.path.join(ROOT, "sub"))
import shutil
shutil.copy(CAPTURE, os.path.join(ROOT, "good.txt"))
os.symlink(CAPTURE, os.path.join(ROOT, "escape.txt"))           # a file outside
os.symlink("/etc", os.path.join(ROOT, "sub", "etc-link"))       # a folder outside
base = [SERVER, "--allowed-root", ROOT, "--artifact-root", ART, "--allow-writes"]


def listing(top):
    out = []
    for d, dirs, files in os.walk(top):
        for n in sorted(dirs + files):
            p = os.path.join(d, n)
            st = os.lstat(p)
            out.append((os.path.relpath(p, top), st.st_size, st.st_mtime_ns))
    return sorted(out)


s = Stdio(base, "stdio")
s.initialize()
r = s.call("analyze_profile", {"path": os.path.join(ROOT, "good.txt")})
aid = (r or {}).get("result", {}).get("structuredContent", {}).get("analysis_id")
if not check("setup: a capture under the allowed root analyzes", aid, short(r)):
    sys.exit(0)
# A first page builds the analysis' hotspot index (cache/hotidx), which a
# writable server may do on any valid read; bad input must add nothing.
r = s.call("list_hotspots", {"analysis_id": aid, "limit": 1})
check("setup: a first page of hotspots builds the hotspot index",
      os.path.exists(os.path.join(ART, "cache", "hotidx", aid + ".idx")), short(r))
before = listing(ART)

# ---------------------------------------------------------- JSON-RPC
s.send(b'{"jsonrpc":"2.0","id":1,"method":"ping"')
raw, m = s.recv(5)
check("stdio: malformed JSON is -32700 with id null", m and m.get("error", {}).get("code") == -32700 and
      m.get("id") is None, raw)
for bad, what in [(b"[]", "an empty batch"), (b'[{"jsonrpc":"2.0","id":2,"method":"ping"}]', "a batch"),
                  (b'"just a string"', "a JSON string"), (b'{"id":3,"method":"ping"}', "a request without jsonrpc"),
                  (b'{"jsonrpc":"1.0","id":4,"method":"ping"}', "jsonrpc 1.0"),
                  (b'{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}', "an object id"),
                  (b'{"jsonrpc":"2.0","id":6,"method":7}', "a numeric method"),
                  (b'{"jsonrpc":"2.0","id":7,"method":"ping","params":[1]}', "array params"),
                  (b'\xff\xfe{"jsonrpc":"2.0"}', "invalid UTF-8")]:
    s.send(bad)
    raw, m = s.recv(5)
    code = (m or {}).get("error", {}).get("code")
    check("stdio: %s gets a JSON-RPC error (%s)" % (what, code), code in (-32700, -32600, -32602), raw)
check("stdio: the server still answers ping after malformed messages", s.ping_ms() is not None, s.stderr()[-300:])

# ------------------------------------------------------------ arguments
cases = [
    ("list_hotspots", {"analysis_id": 5}, ["analysis_id"], "a number for a string"),
    ("list_hotspots", {"analysis_id": aid, "limit": "ten"}, ["limit"], "a string for an integer"),
    ("list_hotspots", {"analysis_id": aid, "limit": 1.5}, ["limit"], "a fraction for an integer"),
    ("list_hotspots", {"analysis_id": aid, "limit": 1000}, ["limit"], "an integer above its maximum"),
    ("list_hotspots", {"analysis_id": aid, "sort": "random"}, ["sort"], "a value outside its enum"),
    ("list_hotspots", {"analysis_id": aid, "min_percent": None}, ["min_percent"], "null for a number"),
    ("list_hotspots", {"analysis_id": "an-xyz"}, ["analysis_id"], "an id that does not match its pattern"),
    ("list_hotspots", {"analysis_id": aid, "bogus": 1}, ["bogus"], "an unknown argument"),
    ("list_hotspots", {}, ["analysis_id"], "a missing required argument"),
    ("export_profile", {"analysis_id": aid, "format": "svg", "pid": "yes"}, ["pid"], "a string for a boolean"),
    ("analyze_profile", {"path": ""}, ["path"], "an empty path"),
    ("analyze_profile", {"path": ["a"]}, ["path"], "an array for a string"),
]
for tool, args, words, what in cases:
    r = s.call(tool, args)
    check("stdio: %s: %s is an isError result naming %s" % (tool, what, ", ".join(words)),
          is_tool_error(r, *words), short(r))
for args, what in [([1], "an array"), ("x", "a string"), (None, "null")]:
    r = s.request("tools/call", {"name": "list_hotspots", "arguments": args})
    check("stdio: tools/call with %s as arguments is refused, not a crash" % what,
          is_tool_error(r) or (r or {}).get("error", {}).get("code") == -32602, short(r))
r = s.request("tools/call", {"name": "no_such_tool", "arguments": {}})
check("stdio: an unknown tool is -32602", (r or {}).get("error", {}).get("code") == -32602, short(r))
r = s.request("tools/call", {"name": "LIST_HOTSPOTS", "arguments": {"analysis_id": aid}})
check("stdio: a tool name in the wrong case is an unknown tool (-32602)", (r or {}).get("error", {}).get("code") == -32602, short(r))

# --------------------------------------------------------------- cursors
for c in ["garbage", "", "0", "999999999"]:
    r = s.request("tools/list", {"cursor": c})
    check("stdio: tools/list with cursor %s is -32602" % json.dumps(c), (r or {}).get("error", {}).get("code") == -32602, short(r))
r = s.request("resources/list", {"cursor": "garbage"})
check("stdio: resources/list with an invalid cursor is -32602", (r or {}).get("error", {}).get("code") == -32602, short(r))
r = s.call("list_hotspots", {"analysis_id": aid, "cursor": "garbage"})
check("stdio: list_hotspots with an invalid cursor is an isError result naming the cursor", is_tool_error(r, "cursor"), short(r))
r = s.call("list_hotspots", {"analysis_id": aid, "limit": 2})
cur = (r or {}).get("result", {}).get("structuredContent", {}).get("page", {}).get("next_cursor")
if cur:
    r = s.call("list_hotspots", {"analysis_id": aid, "limit": 2, "cursor": cur[:-1] + ("0" if cur[-1] != "0" else "1")})
    check("stdio: list_hotspots with a forged cursor is an isError result", is_tool_error(r, "cursor"), short(r))
    r = s.call("get_call_paths", {"analysis_id": aid, "cursor": cur})
    check("stdio: a list_hotspots cursor given to get_call_paths is an isError result", is_tool_error(r, "cursor"), short(r))

# ------------------------------------------------------ over-long, deep
t = time.monotonic()
s.send(b'{"jsonrpc":"2.0","id":"big","method":"ping","params":{"pad":"' + b"x" * (10 << 20) + b'"}}')
raw, m = s.recv(20)
check("stdio: a 10 MB line is answered with an error", m and "error" in m and m.get("id") in (None, "big"), (raw or b"")[:300])
r = s.request("ping", rid="after-big", timeout=10)
check("stdio: the request after the 10 MB line is answered", r and r.get("result") == {}, short(r))
for depth in (100, 10000):
    s.send(('{"jsonrpc":"2.0","id":"deep-%d","method":"ping","params":{"a":%s%s}}' % (depth, "[" * depth, "]" * depth)).encode())
    raw, m = s.recv(10)
    check("stdio: a message nested %d deep is -32600 (nested too deeply)" % depth,
          m and m.get("error", {}).get("code") == -32600, (raw or b"")[:300])
r = s.request("ping", rid="after-deep")
check("stdio: the request after the deep messages is answered", r and r.get("result") == {}, short(r))

# ----------------------------------------------------------------- paths
for path, what in [(CAPTURE, "a path outside --allowed-root"),
                   (os.path.join(ROOT, "escape.txt"), "a symlink in the root to a file outside"),
                   (os.path.join(ROOT, "sub", "etc-link", "hostname"), "a path through a symlinked folder outside"),
                   (ROOT + "/../../../../../../../etc/hostname", "a path with .. leaving the root"),
                   ("/proc/self/environ", "/proc/self/environ"),
                   (ROOT + "/../" + os.path.basename(ART), "the artifact root through .."),]:
    r = s.call("analyze_profile", {"path": path})
    check("stdio: analyze_profile of %s is isError path_refused" % what, is_tool_error(r, "path_refused"), short(r))
for art in ["../../etc/passwd", "/etc/passwd", "analyses/../../good.txt", "perflens://artifacts/../../etc/passwd"]:
    r = s.call("read_artifact_page", {"artifact": art})
    check("stdio: read_artifact_page of %s is an isError result" % art, is_tool_error(r), short(r))
for uri in ["perflens://artifacts/../../etc/passwd", "file:///etc/passwd", "perflens://artifacts/analyses/an-00000000000000000000.json"]:
    r = s.request("resources/read", {"uri": uri})
    check("stdio: resources/read of %s is a JSON-RPC error" % uri, (r or {}).get("error", {}).get("code") in (-32602, -32002), short(r))

# An error whose message holds bytes that are not UTF-8 (the Latin-1 name
# a symlink resolves to) is answered, escaped as base/escape.h says; it
# used to kill the worker (SIGSEGV) and answer "the worker failed".
os.makedirs(os.path.join(WORK, "outside"))
latin1 = os.path.join(WORK, "outside").encode() + b"/caf\xe9.txt"
with open(latin1, "wb") as f:
    f.write(b"main;work 1\n")
os.symlink(latin1, os.path.join(ROOT, "latin1-link.txt").encode())
r = s.call("analyze_profile", {"path": os.path.join(ROOT, "latin1-link.txt")})
obj = (r or {}).get("result", {}).get("_meta", {}).get("perflens/error", {})
check("stdio: a path_refused message naming a Latin-1 file is answered with its bytes escaped",
      is_tool_error(r, "path_refused", "outside/caf\\xe9.txt") and "worker failed" not in result_text(r), short(r))
check("stdio: the tool error carries the CLI's error object in _meta (code, message, hint, exit_code)",
      obj.get("code") == "path_refused" and obj.get("exit_code") == 5 and "caf\\xe9" in obj.get("message", "")
      and obj.get("hint"), short(r))

check("stdio: after all of that the server still answers ping", s.ping_ms() is not None, s.stderr()[-300:])

# ================================================================== HTTP
token = "tok-" + os.urandom(12).hex()
h = Http(base, "http", env={"PERFLENS_TOKEN": token})
if check("http: the server starts with PERFLENS_TOKEN", h.port, h.stderr()):
    ping = {"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {"_meta": STATELESS}}
    st, hd, text, msgs = h.post(ping, auth=False)
    check("http: no token is 401 with WWW-Authenticate", st == 401 and "bearer" in hd.get("www-authenticate", "").lower(),
          "%s %s" % (st, hd))
    for auth, what in [("Bearer wrong", "Bearer wrong"), ("Bearer " + token + "x", "Bearer <token>x"),
                       ("Bearer " + token[:-1], "Bearer <token less its last character>"),
                       ("Basic " + token, "Basic <token>"), (token, "<token> alone"), ("Bearer", "Bearer")]:
        st, hd, text, msgs = h.post(ping, auth=False, headers={"Authorization": auth})
        check("http: Authorization: %s is 401" % what, st == 401, "%s %s" % (st, text[:200]))
    st, hd, text, msgs = h.post(ping)
    check("http: the right token, no Origin: 200", st == 200 and msgs and msgs[-1].get("result", {}).get("resultType") == "complete",
          "%s %s" % (st, text[:200]))
    for host in ["evil.example.com", "evil.example.com:%d" % h.port, "localhost.evil.example.com", "127.0.0.1.nip.io:%d" % h.port]:
        st, hd, text, msgs = h.post(ping, headers={"Host": host})
        check("http: Host %s is 403" % host, st == 403, "%s %s" % (st, text[:200]))
    for origin in ["http://evil.example.com", "http://localhost.evil.example.com", "null", "https://127.0.0.1.evil.example.com:%d" % h.port,
                   "http://localhost:%d/x" % h.port]:
        st, hd, text, msgs = h.post(ping, headers={"Origin": origin})
        check("http: Origin %s is 403" % origin, st == 403, "%s %s" % (st, text[:200]))
    for origin in ["http://localhost:%d" % h.port, "http://127.0.0.1:%d" % h.port]:
        st, hd, text, msgs = h.post(ping, headers={"Origin": origin})
        check("http: Origin %s is fine" % origin, st == 200, "%s %s" % (st, text[:200]))
    big = b'{"jsonrpc":"2.0","id":2,"method":"ping","params":{"pad":"' + b"x" * (10 << 20) + b'"}}'
    st, hd, text, msgs = h.post(big)
    check("http: a 10 MB body is 413", st == 413, "%s %s" % (st, text[:200]))
    st, hd, text, msgs = h.post(b'{"jsonrpc":"2.0","id":3,"method":')
    check("http: malformed JSON is 400 with -32700", st == 400 and msgs and msgs[-1].get("error", {}).get("code") == -32700,
          "%s %s" % (st, text[:200]))
    deep = ('{"jsonrpc":"2.0","id":4,"method":"ping","params":{"_meta":%s,"a":%s%s}}' % (json.dumps(STATELESS), "[" * 10000, "]" * 10000)).encode()
    st, hd, text, msgs = h.post(deep)
    check("http: a message nested 10000 deep is refused with -32600",
          st in (400, 200) and msgs and msgs[-1].get("error", {}).get("code") == -32600, "%s %s" % (st, text[:200]))
    st, hd, text, msgs = h.post(None, method="PUT", headers={"Content-Type": None})
    check("http: PUT is refused (4xx)", st is not None and 400 <= st < 500, "%s %s" % (st, text[:200]))
    c = http.client.HTTPConnection("127.0.0.1", h.port, timeout=10)
    c.request("POST", "/other", body=json.dumps(ping), headers={"Authorization": "Bearer " + token,
              "Content-Type": "application/json", "Accept": "application/json, text/event-stream"})
    st = c.getresponse().status
    c.close()
    check("http: a path other than /mcp is 404", st == 404, st)
    r = h.post({"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"_meta": STATELESS, "name": "analyze_profile",
                "arguments": {"path": os.path.join(ROOT, "escape.txt")}}})
    check("http: analyze_profile of a symlink leaving the root is isError path_refused",
          r[0] == 200 and r[3] and is_tool_error(r[3][-1], "path_refused"), r[2][:300])
    ms = h.ping_ms()
    check("http: after all of that the server still answers ping", ms is not None, h.stderr()[-300:])
    rc = h.stop()
    check("http: the server exits 0 on SIGTERM, no sanitizer report", rc == 0 and not sanitizer_report(h.stderr()),
          "exit %s; %s" % (rc, sanitizer_report(h.stderr())))

after = listing(ART)
check("the artifact root holds nothing new after the bad input (%d entries)" % len(after), after == before,
      "new: %s; gone: %s" % (sorted(set(after) - set(before))[:5], sorted(set(before) - set(after))[:5]))
check("stdio: the server still answers ping at the end", s.ping_ms() is not None, s.stderr()[-300:])
check("stdio: stdout carried only JSON-RPC 2.0 messages, one per line (%d lines)" % s.lines, s.lines and not s.garbage,
      s.garbage[:3])
rc = s.close()
check("stdio: the server exits 0 at end of input, no sanitizer report", rc == 0 and not sanitizer_report(s.stderr()),
      "exit %s; %s" % (rc, sanitizer_report(s.stderr())))

# ======================================================== startup refusals
def refused(argv, words, what, env=None):
    try:
        p = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, timeout=5,
                           env=dict(os.environ, **(env or {})))
        err = p.stderr.decode(errors="replace")
        check("startup: %s refuses to start, naming %s" % (what, " and ".join(words)),
              p.returncode != 0 and "listening" not in err and all(w in err for w in words),
              "exit %d: %s" % (p.returncode, err[-300:]))
    except subprocess.TimeoutExpired:
        check("startup: %s refuses to start" % what, False, "it was still running after 5 s")

env_no_token = {"PERFLENS_TOKEN": ""}
refused([SERVER, "--http", "0.0.0.0:0", "--no-auth", "--allowed-root", ROOT], ["--no-auth", "loopback"], "--no-auth on 0.0.0.0")
refused([SERVER, "--http", "[::]:0", "--no-auth", "--allowed-root", ROOT], ["--no-auth", "loopback"], "--no-auth on [::]")
refused([SERVER, "--allow-writes", "--allowed-root", ROOT], ["--artifact-root"], "--allow-writes without --artifact-root")
refused([SERVER, "--http", "127.0.0.1:0", "--allowed-root", ROOT], ["PERFLENS_TOKEN"], "HTTP without a token or --no-auth", env_no_token)
refused([SERVER, "--allowed-root", os.path.join(WORK, "does-not-exist")], ["--allowed-root"], "a missing --allowed-root")
refused([SERVER, "--tool-timeout", "0"], ["--tool-timeout"], "--tool-timeout 0")

# ================================================ writes not allowed
ro = Stdio([SERVER, "--allowed-root", ROOT, "--artifact-root", ART], "readonly")
ro.initialize()
r = ro.call("analyze_profile", {"path": os.path.join(ROOT, "good.txt")})
check("read-only server: analyze_profile is an isError result naming --allow-writes", is_tool_error(r, "--allow-writes"), short(r))
r = ro.call("export_profile", {"analysis_id": aid, "format": "svg"})
check("read-only server: export_profile is an isError result naming --allow-writes", is_tool_error(r, "--allow-writes"), short(r))
r = ro.call("list_hotspots", {"analysis_id": aid, "limit": 1})
check("read-only server: reading the existing analysis still works", (r or {}).get("result", {}).get("isError") is False, short(r))
rc = ro.close()
check("read-only server: exits 0 at end of input", rc == 0 and not sanitizer_report(ro.stderr()), "exit %s" % rc)
check("the artifact root is unchanged by the read-only server", listing(ART) == before, "changed")
sys.exit(0)
PY
rc=$?
[ "$rc" -eq 0 ] || notok "$(basename "$0"): the python3 client exited $rc (timeout or crash; see above)"
