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

WORK="$WORK" timeout "${MCP_TEST_TIMEOUT:-170}" python3 - "$server" "$faults" <<'PY'
import os, sys
sys.path.insert(0, os.path.join(os.environ.get("REPO", os.getcwd()), "tests", "integration"))
from mcp_client import *  # the shared MCP test client (mcp_client.py)

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

# 4 s leaves room for sanitizer builds on a busy machine.
f = Stdio([FAULTS, "--allowed-root", ROOT, "--tool-timeout", "4"], "faults")
f.initialize()
fnames, cursor = [], None
for _ in range(10):  # every page: test_fault is listed last
    r = f.request("tools/list", {"cursor": cursor} if cursor else {})
    res = (r or {}).get("result", {})
    fnames += [t["name"] for t in res.get("tools", [])]
    cursor = res.get("nextCursor")
    if not cursor:
        break
if not check("faults build: tools/list has test_fault", "test_fault" in fnames, fnames):
    sys.exit(0)
r = f.call("test_fault", {"kind": "ok"})
check("faults build: test_fault ok returns its structuredContent",
      (r or {}).get("result", {}).get("structuredContent") == {"kind": "ok"}, short(r))

for kind in ["crash", "syscall", "exec", "oversize", "hang"]:
    f.send({"jsonrpc": "2.0", "id": "fault-" + kind, "method": "tools/call",
            "params": {"name": "test_fault", "arguments": {"kind": kind}}})
    # Watch the server's children while the worker runs (the hang lasts 4 s).
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
        check("test_fault hang: stopped near --tool-timeout 4 s", 3.5 < took < 9, "%.1f s" % took)
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
# The server answers before the zygote reaps a worker (off the caller's
# path, by design): wait for the reaping rather than a fixed time.
def leftovers():
    kids = children(f.pid)
    return kids, {p: st for p, st in processes().items() if st[0] == "Z" and (st[1] == f.pid or p in kids)}
until(lambda: not any(leftovers()), 5 * SCALE)
kids, zombies = leftovers()
check("after 50 calls the server has no child and no zombie", not kids and not zombies, "children %s" % kids)
fds = len(os.listdir("/proc/%d/fd" % f.pid)) if os.path.isdir("/proc/%d/fd" % f.pid) else -1
check("after 50 calls the server holds few descriptors (%d)" % fds, 0 < fds < 32, fds)
ms = f.ping_ms()
check("after 50 calls ping answers (%s ms)" % (ms and round(ms)), ms is not None and ms < 1000, ms)
rc = f.close()
check("faults server exits 0 at end of input, no sanitizer report", rc == 0 and not sanitizer_report(f.stderr()),
      "exit %s; %s" % (rc, sanitizer_report(f.stderr())))

# The same over HTTP: a crash and a hang, then ping.
h = Http([FAULTS, "--allowed-root", ROOT, "--tool-timeout", "4", "--no-auth"], "http-faults")
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
