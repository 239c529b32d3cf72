# test_json_rpc_doc.sh - every example of docs/json-rpc.md, run exactly
# as written, in order, in one shell (as someone pasting them would), from
# a folder that holds the repository's fixtures/, with the build on PATH.
#
# Each example has its check below (a new example without one fails): the
# answers are parsed as the JSON they are, and compared with what the CLI
# (`perflens call`, the same registry by another road) answers for the
# same call; the HTTP examples also check status codes and headers.  The
# HTTP part needs port 8765 free on loopback, as the document uses it.
# run.sh: serial: the document's HTTP examples need port 8765
. tests/integration/lib.sh
if ! command -v curl >/dev/null; then
	skip "json-rpc doc: curl is not installed"
	exit 0
fi
mkdir -p "$WORK/repo"
cp -r "$REPO/fixtures" "$WORK/repo/fixtures"
WORK="$WORK" timeout 300 /usr/bin/python3 - "$(cd "$BUILD" && pwd)" "$REPO/docs/json-rpc.md" "$WORK/repo" <<'PY'
import json, os, re, socket, subprocess, sys
BUILD, DOC, CWD = sys.argv[1:4]
text = open(DOC).read()
blocks = re.findall(r"^```sh\n(.*?)^```$", text, re.S | re.M)

def say(good, what, why=""):
    print(("ok - " if good else "not ok - ") + "json-rpc doc: " + what + ("" if good or not why else ": " + str(why)[:400]), flush=True)

s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as the server does: TIME_WAIT is no obstacle
try:
    s.bind(("127.0.0.1", 8765))
    port_free = True
except OSError:
    port_free = False
s.close()
script = []
for i, b in enumerate(blocks):
    script.append("echo '@@block %d@@'\n%s\necho '@@end %d@@'\n" % (i, b, i))
env = dict(os.environ, PATH=BUILD + ":" + os.environ["PATH"])
if not port_free:
    print("skip - json-rpc doc: port 8765 is taken here; the HTTP examples need it", flush=True)
    script = [x for x, b in zip(script, blocks) if "8765" not in b and "$server" not in b and "$session" not in b]
p = subprocess.run(["sh", "-c", "".join(script)], cwd=CWD, env=env, capture_output=True, text=True, timeout=280)
out = {}
for m in re.finditer(r"@@block (\d+)@@\n(.*?)@@end \1@@", p.stdout, re.S):
    out[int(m.group(1))] = m.group(2)

def cli(tool, args):
    r = subprocess.run([os.path.join(BUILD, "perflens"), "call", tool, json.dumps(args),
                        "--artifact-root", os.path.join(CWD, "perflens-results")], cwd=CWD, capture_output=True, text=True)
    return json.loads(r.stdout) if r.returncode == 0 else {"error": r.stderr}

def lines(i):
    return [json.loads(l) for l in out.get(i, "").splitlines() if l.startswith("{")]

def by_id(msgs, rid):
    return next((m for m in msgs if m.get("id") == rid), {})

m = re.search(r"^analysis (an-[0-9a-f]{20})$", out.get(1, ""), re.M)
AID = m.group(1) if m else "none"
HOT = {"analysis_id": AID, "event": "cycles", "limit": 3}
URI = "perflens://artifacts/analyses/%s.json" % AID

def check_tools(i):
    names = re.findall(r'"name":"([a-z_]+)","title"', out.get(i, ""))
    say(len(names) >= 19 and "analyze_profile" in names and "list_hotspots" in names,
        "example %d lists the tools (%d names)" % (i, len(names)), out.get(i, "")[:300])

def check_analyze(i):
    want = cli("analyze_profile", {"path": "fixtures/device-x86/chunk_000.txt.gz"}).get("analysis_id")
    say(AID == want, "example %d: analyze_profile gives the id `perflens analyze` gives (%s)" % (i, AID), out.get(i))

def check_hotspots(i):
    h = by_id(lines(i), 3).get("result", {}).get("structuredContent", {})
    say(h.get("hotspots") and h["hotspots"] == cli("list_hotspots", HOT).get("hotspots"),
        "example %d: list_hotspots answers as `perflens call list_hotspots` does (3 hotspots)" % i, short_(h))

def check_error(i):
    r = by_id(lines(i), 2).get("result", {})
    say(r.get("isError") is True and "allowed" in r.get("content", [{}])[0].get("text", ""),
        "example %d: a path outside the root is an isError result that says why" % i, r)

def check_resource_stdio(i):
    o = out.get(i, "")
    say('"contents":[{"uri":"%s"' % URI in o and o.count("perflens://artifacts/") >= 2,
        "example %d: resources/read gives the summary by its uri; resources/list lists artifacts" % i, o[:400])

def check_stateless_stdio(i):
    m = lines(i)
    d = by_id(m, 1).get("result", {})
    a = by_id(m, 2).get("result", {}).get("structuredContent", {})
    say("2026-07-28" in d.get("supportedVersions", []) and "2025-03-26" in d.get("supportedVersions", []),
        "example %d: server/discover lists the versions" % i, d)
    say(any(x.get("path") == "analyses/%s.json" % AID for x in a.get("artifacts", [])),
        "example %d: a stateless tools/call without initialize lists the analysis" % i, a)

def check_start(i):
    say("listening on http://127.0.0.1:8765/mcp" in out.get(i, ""), "example %d: the server listens on 127.0.0.1:8765" % i, out.get(i))

def check_initialize(i):
    o = out.get(i, "")
    m = re.search(r"^session (\S+)$", o, re.M)
    init = next((json.loads(l) for l in o.splitlines() if l.startswith("{")), {})
    say(m and init.get("result", {}).get("protocolVersion") == "2025-11-25",
        "example %d: initialize over HTTP agrees on 2025-11-25 and gives a session id" % i, o[:300])

def check_http_calls(i):
    o = out.get(i, "").splitlines()
    names = re.findall(r'"name":"([a-z_]+)","title"', out.get(i, ""))
    call = next((json.loads(l) for l in o if l.startswith("{") and '"id":3' in l), {})
    say(o and o[0] == "202", "example %d: notifications/initialized is answered 202" % i, o[:1])
    say(len(names) >= 19, "example %d: tools/list over HTTP (%d names)" % (i, len(names)))
    say(call.get("result", {}).get("structuredContent", {}).get("hotspots") == cli("list_hotspots", HOT).get("hotspots"),
        "example %d: tools/call over HTTP answers as the CLI does" % i, str(call)[:300])

def check_resource_http(i):
    say('"contents":[{"uri":"%s"' % URI in out.get(i, ""), "example %d: resources/read over HTTP" % i, out.get(i, "")[:300])

def check_stateless_http(i):
    m = next((json.loads(l) for l in out.get(i, "").splitlines() if l.startswith("{")), {})
    want = cli("list_hotspots", dict(HOT, event="instructions", limit=2)).get("hotspots")
    say(m.get("result", {}).get("structuredContent", {}).get("hotspots") == want and want,
        "example %d: a stateless 2026-07-28 call over HTTP, no session" % i, str(m)[:300])

def check_end(i):
    o = out.get(i, "").split()
    say(o[:1] == ["401"] and len(o) > 1 and o[1] in ("200", "204"),
        "example %d: no token is 401, DELETE ends the session (%s)" % (i, " ".join(o)), o)

def short_(v):
    return json.dumps(v)[:300]

checks = [check_tools, check_analyze, check_hotspots, check_error, check_resource_stdio, check_stateless_stdio,
          check_start, check_initialize, check_http_calls, check_resource_http, check_stateless_http, check_end]
say(len(blocks) == len(checks), "the document has %d examples and the test %d checks" % (len(blocks), len(checks)))
# Another run may have taken the port between the probe and the start.
http_lost = port_free and "listening on" not in "".join(out.values()) and "in use" in p.stdout + p.stderr
if http_lost:
    print("skip - json-rpc doc: port 8765 was taken while the examples ran; the HTTP checks are left out", flush=True)
for i, (b, c) in enumerate(zip(blocks, checks)):
    if (not port_free or http_lost) and ("8765" in b or "$server" in b or "$session" in b):
        continue
    c(i)
say(p.returncode == 0, "the examples run to their end (exit %d)" % p.returncode, p.stderr[-300:])
PY
