# test_mcp_progress.sh - progress that means something, and cancellation
# mid-way, through perflens-mcp over stdio as a client sees them.
#
#  - analyze_profile of a 500 MB folded file with a progressToken: several
#    notifications/progress before the result, their values increasing,
#    total the file's size (os.stat, the oracle), the last value the whole
#    file; at most a few a second (no more than 4 a second and 3); the
#    result's sample count equals the sum of the counts the test wrote.
#  - notifications/cancelled after the first real progress of the same
#    call (mid-way: less than the file read): the worker gone within 2 s,
#    no response for it, a ping answered at once.
#  - a collection (perf stat of a 2 s sleep, limit 10 s) reports elapsed
#    time: values increase, in milliseconds of its limit, up to the 2 s
#    the sleep took (at most the call's wall time).
. tests/integration/lib.sh
free_mb=$(df -Pm "$WORK" | awk 'NR == 2 { print $4 }')
if [ "${free_mb:-0}" -lt 1500 ]; then
	skip "MCP progress: $WORK has ${free_mb} MB free, the 500 MB input needs 1.5 GB"
	exit 0
fi
WORK="$WORK" timeout 400 /usr/bin/python3 - "$(cd "$BUILD" && pwd)/perflens-mcp" <<'PY'
import os, sys, time
sys.path.insert(0, os.path.join(os.environ.get("REPO", os.getcwd()), "tests", "integration"))
from mcp_client import *  # the shared MCP test client (mcp_client.py)

SERVER = sys.argv[1]
BIG = os.path.join(WORK, "big.folded")
# 500 MB of folded stacks: 20-deep stacks of 97 x 13 shapes, counts 1..5.
lines, want_samples = [], 0
for i in range(4000):
    frames = ["app", "main"] + ["layer_%d_%d" % (d, (i * 7 + d) % 97) for d in range(16)] + ["work_%d" % (i % 97), "leaf_%d" % (i % 13)]
    count = 1 + i % 5
    lines.append(";".join(frames) + " %d\n" % count)
block = "".join(lines).encode()
block_samples = sum(1 + i % 5 for i in range(4000))
with open(BIG, "wb") as f:
    n = 0
    while n < 500 * 1024 * 1024:
        f.write(block)
        n += len(block)
        want_samples += block_samples
size = os.stat(BIG).st_size

s = Stdio([SERVER, "--allowed-root", WORK, "--artifact-root", os.path.join(WORK, "art"), "--allow-writes",
           "--tool-timeout", "300"], "progress")
s.initialize()
t0 = time.monotonic()
s.notes = []
r = s.call("analyze_profile", {"path": BIG}, meta={"progressToken": "big-1"}, timeout=300)
took = time.monotonic() - t0
prog = [(n["params"], n.get("_t")) for n in s.notes if n.get("method") == "notifications/progress"]
params = [p for p, _ in prog]
vals = [p.get("progress") for p in params]
real = [p for p in params if p.get("progress", 0) > 0]
res = (r or {}).get("result", {})
sc = res.get("structuredContent") or {}
check("500 MB analysis: a success (%.1f s)" % took, res.get("isError") is False, short(r))
# The read takes under a second here, and notifications come at most a
# few a second: real bytes at least once on the way and once at the end.
total = max([p.get("total", 0) for p in params] or [0])
check("500 MB analysis: %d progress notifications before the result, with real bytes on the way" % len(params),
      len(real) >= 2 and any(0 < p["progress"] < total for p in real), short(params[:5]))
check("500 MB analysis: progress values strictly increase (%s)" % vals[:8],
      vals == sorted(vals) and len(set(vals)) == len(vals), vals)
check("500 MB analysis: the totals are the file's size (%d bytes, os.stat) and the last value reaches it" % size,
      real and all(p.get("total") == size for p in real) and real[-1]["progress"] == size,
      short(real[-2:]))
# Bounded rate: at most one every 250 ms after the start (the worker's
# interval), so at most took * 4 + 2 of them.
check("500 MB analysis: at most a few a second (%d in %.1f s)" % (len(params), took), len(params) <= took * 4 + 3,
      len(params))
samples = sum(e.get("samples", 0) for e in sc.get("events", []))
check("500 MB analysis: the sample count is the sum of the counts written (%d)" % want_samples,
      samples == want_samples, "%d vs %d" % (samples, want_samples))

# Cancellation half-way: the same call, cancelled after its first real progress.
s.notes = []
s.send({"jsonrpc": "2.0", "id": "big-2", "method": "tools/call",
        "params": {"name": "analyze_profile", "arguments": {"path": BIG}, "_meta": {"progressToken": "big-2"}}})
t0 = time.monotonic()
seen = None
while time.monotonic() - t0 < 120 and not seen:
    raw, m = s.recv(1)
    if m and m.get("method") == "notifications/progress" and m["params"].get("progress", 0) > 0:
        seen = m["params"]
    elif m and m.get("id") == "big-2":
        s.extra.append(m)
        break
check("cancel: the call reports real progress first (%s)" % (seen and seen.get("message")), seen, s.extra[-1:])
workers = children(s.pid)
s.notify("notifications/cancelled", {"requestId": "big-2", "reason": "test"})
t_cancel = time.monotonic()
left = True
while left and time.monotonic() - t_cancel < 5:
    left = [p for p in workers if p in processes() and comm(p) == "perflens-worker"]
    time.sleep(0.02)
gone_ms = (time.monotonic() - t_cancel) * 1000
check("cancel: the worker is gone %.0f ms after notifications/cancelled, mid-way (%d of %d bytes read then)"
      % (gone_ms, seen and seen["progress"] or 0, size),
      not left and gone_ms < 2000 and seen and seen["progress"] < size, left)
ms = s.ping_ms()
check("cancel: ping answers at once after notifications/cancelled (%s ms)" % (ms and round(ms)), ms is not None and ms < 2000, ms)
r = s.wait_for("big-2", timeout=3)
check("cancel: the cancelled call gets no response", r is None, short(r))
check("cancel: the server exits cleanly", s.close() == 0, s.stderr()[-300:])

# A collection: perf stat of sleep 2, its elapsed time in ms of its limit.
c = Stdio([SERVER, "--allowed-root", "/usr/bin", "--artifact-root", os.path.join(WORK, "art-coll"), "--allow-writes",
           "--allow-collection", "--allow-process-execution"], "progress-collect")
c.initialize()
t0 = time.monotonic()
r = c.call("collect_profile", {"mode": "stat", "executable": "/usr/bin/sleep", "arguments": ["2"], "timeout_seconds": 10,
                               "authorization": "I_EXPLICITLY_AUTHORIZE_TARGET_PROFILING"},
           meta={"progressToken": "coll-1"}, timeout=60)
took = time.monotonic() - t0
res = (r or {}).get("result", {})
if res.get("isError"):
    print("skip - collection progress: collect_profile failed here: %s" % short(r, 200), flush=True)
else:
    params = [n["params"] for n in c.notes if n.get("method") == "notifications/progress"]
    ms = [p["progress"] for p in params if p.get("progress", 0) > 0]
    check("collection: elapsed time reported in ms of its 10 s limit, increasing, reaching the 2 s sleep (%s)" % ms[-3:],
          len(ms) >= 4 and ms == sorted(ms) and ms[-1] >= 1900 and ms[-1] <= took * 1000 + 100 and
          all(p.get("total") == 10000 for p in params if p.get("progress", 0) > 0), short(params, 400))
c.close()
PY
