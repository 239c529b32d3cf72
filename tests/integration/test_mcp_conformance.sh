# test_mcp_conformance.sh - the official MCP conformance suite
# (@modelcontextprotocol/conformance, Node 22) against perflens-mcp over
# Streamable HTTP.  One line per scenario of the suite's summary: a
# protocol scenario must pass; a scenario listed in
# tests/mcp/conformance-baseline.yml (it needs the suite's own fixture
# tools, resources or prompts) must fail, and passing it is reported so
# the stale entry gets removed.  The suite's exit status must agree (it
# exits 1 on an unexpected failure or a stale entry).  Skips, saying why,
# without Node 22 and tests/mcp/node_modules (sh tests/mcp/setup-node.sh).
. tests/integration/lib.sh
need_shared "MCP conformance suite"
node=$(sh tests/mcp/setup-node.sh --check 2>"$WORK/node.err") || {
	skip "MCP conformance suite: $(cat "$WORK/node.err")"
	exit 0
}
server="$(cd "$BUILD" && pwd)/perflens-mcp"
baseline="$REPO/tests/mcp/conformance-baseline.yml"
conformance="$REPO/tests/mcp/node_modules/@modelcontextprotocol/conformance/dist/index.js"

# Port 0: the OS picks a free loopback port; the server prints it.
start_http_server conformance "$server" --http 127.0.0.1:0 --no-auth --allowed-root "$SHARED" \
	--artifact-root "$WORK/art" --allow-writes

# `npx conformance` without npx: the pinned copy, run by Node 22.
(cd "$REPO/tests/mcp" && PATH="$(dirname "$node"):$PATH" timeout 150 "$node" "$conformance" server \
	--url "http://127.0.0.1:$port/mcp" --expected-failures "$baseline" -o "$WORK/out") \
	>"$WORK/conformance.log" 2>&1
rc=$?

python3 - "$WORK/conformance.log" "$WORK/out" "$baseline" "$rc" <<'PY'
import glob, json, os, re, sys

log_path, out_dir, baseline_path, rc = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
log = re.sub(r"\x1b\[[0-9;]*m", "", open(log_path, encoding="utf-8", errors="replace").read())

def line(ok, what, why=""):
    print(("ok - " if ok else "not ok - ") + what + ("" if ok or not why else ": " + why))

# The baseline: "server:" then "  - name" items (comments allowed).
baseline, in_server = set(), False
for raw in open(baseline_path):
    s = raw.split("#", 1)[0].rstrip()
    if not s:
        continue
    if not s.startswith((" ", "-")):
        in_server = s.strip() == "server:"
        continue
    m = re.match(r"\s*-\s*(\S+)\s*$", s)
    if in_server and m:
        baseline.add(m.group(1).strip("'\""))

required = ["server-initialize", "ping", "tools-list", "logging-set-level", "completion-complete",
            "resources-list", "prompts-list", "dns-rebinding-protection"]
bad_baseline = sorted(set(required) & baseline)
line(not bad_baseline, "conformance baseline lists no protocol scenario",
     "remove " + ", ".join(bad_baseline))

summary = log.split("=== SUMMARY ===", 1)
if len(summary) < 2:
    line(False, "conformance suite ran", "no summary (exit %d): %s" % (rc, " ".join(log.split())[-600:]))
    sys.exit(0)
rows = re.findall(r"^[✓✗] (\S+): (\d+) passed, (\d+) failed", summary[1], re.M)
line(len(rows) > 0, "conformance suite ran %d scenarios" % len(rows), "no scenario lines in the summary")

def checks_of(name):
    """The scenario's checks.json (-o output): FAILURE and WARNING checks."""
    paths = sorted(glob.glob(os.path.join(out_dir, "server-%s-*" % name, "checks.json")))
    if not paths:
        return None
    checks = json.load(open(paths[-1]))
    return [c for c in checks if c.get("status") in ("FAILURE", "WARNING")]

unexpected = stale = 0
for name, passed, failed in rows:
    bad = checks_of(name)
    # The suite counts a WARNING as a failure when it applies the baseline.
    failing = int(failed) > 0 or bool(bad)
    why = "; ".join("%s %s: %s" % (c["status"], c.get("id"), (c.get("errorMessage") or c.get("description") or "")[:200])
                    for c in (bad or []))[:700] or "%s failed" % failed
    if name in baseline:
        if failing:
            line(True, "conformance %s: fails as listed in the baseline (needs the suite's fixtures)" % name)
        else:
            stale += 1
            line(False, "conformance %s: expected failure" % name,
                 "it passes now: remove it from tests/mcp/conformance-baseline.yml")
    else:
        if failing:
            unexpected += 1
        line(not failing, "conformance %s: %s checks passed" % (name, passed), why)

ran = {r[0] for r in rows}
for name in required:
    if name not in ran:
        unexpected += 1
        line(False, "conformance %s: ran" % name, "not in the suite's summary")

want = 1 if unexpected or stale else 0
line(rc == want, "conformance exit status %d agrees with the summary (%d unexpected failures, %d stale baseline entries)"
     % (rc, unexpected, stale), "expected %d" % want)
for flag in ("Unexpected failures", "Stale baseline entries"):
    if flag in log:
        print("# conformance: " + " ".join(log.split(flag, 1)[1].split())[:400])
PY

# The server survived the suite and stops cleanly (no sanitizer report).
stop_server "conformance"
