# test_viewer_live.sh - the viewer's live page while a real device agent
# streams: perflens-mcp --http with its agent link, our perflens-agent
# dialing in with real perf (root, cpu-clock) on a workload, a capture
# started through the CLI (the same start_capture tool, through the
# link's request files), and Chromium (viewer_live.mjs) on the live page
# of that session, which must grow (chunks, bytes, metrics frames) without
# a reload and agree with list_sessions and get_device_metrics read in the
# page, and the server's own analyses of the session
# (--live-analysis-interval-ms, nobody analyzing) must show their hotspots
# there, a newer one of more chunks replacing the first without a reload.  Skips, saying why, without the agent, root and perf, Node with
# puppeteer-core, or Chromium.
# run.sh: slow
. tests/integration/lib.sh
name="viewer live"
here="$REPO/tests/integration"
MCP="$(dirname "$PERFLENS")/perflens-mcp"
AGENT="$(dirname "$PERFLENS")/perflens-agent"
case $BUILD in /*) out="$BUILD/test-output/viewer-live" ;; *) out="$REPO/$BUILD/test-output/viewer-live" ;; esac
rm -rf "$out" && mkdir -p "$out"
if [ ! -x "$AGENT" ]; then
	skip "$name: $AGENT is not built (make agent)"
	exit 0
fi
if [ "$(id -u)" -ne 0 ] || ! command -v perf >/dev/null 2>&1; then
	skip "$name: needs root and perf (linux-perf)"
	exit 0
fi
node=$(sh tests/mcp/setup-node.sh --check 2>"$WORK/node.err") || node=""
if [ -z "$node" ]; then
	skip "$name: $(cat "$WORK/node.err")"
	exit 0
fi
if [ ! -x /usr/bin/chromium ]; then
	skip "$name: /usr/bin/chromium is not installed (tests/setup.sh installs it)"
	exit 0
fi
art="$WORK/art"
mkdir -p "$art"
P() { "$PERFLENS" --artifact-root "$art" --allowed-root "$WORK" "$@"; }
printf 'static volatile unsigned long s;\nint main(void){for(unsigned long i=0;;i++)s+=i*i;}\n' > "$WORK/spin.c"
gcc -O1 -o "$WORK/spin" "$WORK/spin.c" || { notok "$name: cannot build the workload"; exit 0; }
"$WORK/spin" & spin_pid=$!
agent_pid=""
live_cleanup() {
	[ -n "$agent_pid" ] && kill "$agent_pid" 2>/dev/null
	kill "$spin_pid" 2>/dev/null
	cleanup
}
trap live_cleanup EXIT
code="viewer-live-$(od -An -N8 -tx1 /dev/urandom | tr -d ' \n')"
printf '%s\n' "$code" > "$WORK/code"
export PERFLENS_TOKEN="viewer-live-$$-token"
start_http_server "$name" "$MCP" --http 127.0.0.1:0 --allowed-root "$WORK" --artifact-root "$art" \
	--allow-writes --agent-listen 127.0.0.1:0 --agent-pairing-code-file "$WORK/code" --allow-device-control \
	--live-analysis-interval-ms 1000
base="http://127.0.0.1:$port"
aport=""
for _ in $(seq 100); do
	aport=$(sed -n 's#.*agent link: listening on [0-9.]*:\([0-9]*\).*#\1#p' "$WORK/server.err" | head -n 1)
	[ -n "$aport" ] && break
	sleep 0.1
done
[ -n "$aport" ] || { notok "$name: the agent link listens: $(oneline "$WORK/server.err")"; exit 0; }
login=$(sed -n 's#^perflens-mcp: viewer (one-time login): ##p' "$WORK/server.err")
PERFLENS_TOKEN="$code" "$AGENT" --server "127.0.0.1:$aport" 2>"$WORK/agent.err" & agent_pid=$!
dev=""
for _ in $(seq 100); do
	dev=$(P devices 2>/dev/null | /usr/bin/python3 -c '
import json, sys
d = [x for x in json.load(sys.stdin).get("devices", []) if x.get("state") == "connected"]
print(d[0]["device"] if d else "")' 2>/dev/null)
	[ -n "$dev" ] && break
	sleep 0.2
done
[ -n "$dev" ] && ok "$name: the agent dials in and pairs ($dev)" ||
	{ notok "$name: the agent dials in and pairs: $(oneline "$WORK/agent.err")"; exit 0; }
P --allow-device-control capture-start --device "$dev" --pid "$spin_pid" --frequency-hz 99 --interval-seconds 1 \
	--authorization I_EXPLICITLY_AUTHORIZE_TARGET_PROFILING --pid-authorization I_EXPLICITLY_AUTHORIZE_PID_ATTACH \
	> "$WORK/start.json" 2>"$WORK/start.err"
session=$(/usr/bin/python3 -c 'import json,sys; print(json.load(open(sys.argv[1])).get("session") or "")' "$WORK/start.json" 2>/dev/null)
[ -n "$session" ] && ok "$name: start_capture through the CLI starts a session ($session)" ||
	{ notok "$name: start_capture: $(oneline "$WORK/start.json") $(oneline "$WORK/start.err")"; exit 0; }
cat > "$WORK/cfg.json" <<JSON
{"base": "$base", "login": "$login", "chromium": "/usr/bin/chromium", "out": "$out", "session": "$session"}
JSON
HOME="$WORK" timeout 240 "$node" "$here/viewer_live.mjs" "$WORK/cfg.json" 2>"$WORK/browser.err"
rc=$?
[ "$rc" -ne 0 ] && [ -s "$WORK/browser.err" ] && notok "$name: browser run exited $rc: $(oneline "$WORK/browser.err")"
P --allow-device-control capture-stop --device "$dev" > "$WORK/stop.json" 2>&1
grep -q "\"$session\"" "$WORK/stop.json" && ok "$name: stop_capture ends the session" ||
	notok "$name: stop_capture: $(oneline "$WORK/stop.json")"
# The session the page watched holds the agent's samples.
P analyze --input "perflens://artifacts/sessions/$session" > "$WORK/an.json" 2>"$WORK/an.err"
samples=$(/usr/bin/python3 -c 'import json,sys; print(sum(e["samples"] for e in json.load(open(sys.argv[1]))["events"]))' "$WORK/an.json" 2>/dev/null)
[ "${samples:-0}" -gt 0 ] && ok "$name: the session analyzes to the agent's samples ($samples)" ||
	notok "$name: the session analyzes: $(oneline "$WORK/an.json") $(oneline "$WORK/an.err")"
echo "# $name: screenshots in $out"
stop_server "$name"
# An if, not `[ ] && cp`: as the last command that made the script exit 1
# (run.sh counts that as a failure) whenever KEEP_SERVER_ERR was unset.
if [ -n "${KEEP_SERVER_ERR:-}" ]; then
	cp "$WORK/server.err" "$KEEP_SERVER_ERR"
fi
