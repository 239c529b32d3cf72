# test_viewer_views.sh - the viewer's timeline, frame menu, sandwich and
# URL state, in Debian's Chromium, on one real recording.
#
# The two-phase workload (tests/workloads/phases.c: a() then b()) is
# recorded with perf on this kernel and analyzed with the perflens CLI;
# perflens-mcp --http serves it and viewer_views.mjs drives the page as a
# person would: brush a window on the timeline (the hotspot table then
# holds perf report --time's shares of that window, and list_hotspots'
# under view.time), the flame graph of the window, focus from a frame's
# menu, the sandwich of b() (its callers and callees against get_hotspot
# under the same view), and a reload and a new tab of the URL giving the
# same view.  Screenshots go to $BUILD/test-output/viewer-views/.
# run.sh: slow
. tests/integration/lib.sh
name="viewer views"
here="$REPO/tests/integration"
MCP="$(dirname "$PERFLENS")/perflens-mcp"
case $BUILD in /*) out="$BUILD/test-output/viewer-views" ;; *) out="$REPO/$BUILD/test-output/viewer-views" ;; esac
rm -rf "$out" && mkdir -p "$out"
need_perf_record "$name"
node=$(sh tests/mcp/setup-node.sh --check 2>"$WORK/node.err") || node=""
if [ -z "$node" ]; then
	skip "$name: $(cat "$WORK/node.err")"
	exit 0
fi
if [ ! -x /usr/bin/chromium ]; then
	skip "$name: /usr/bin/chromium is not installed (tests/setup.sh installs it)"
	exit 0
fi
if ! command -v gcc >/dev/null 2>&1; then
	skip "$name: gcc is not installed"
	exit 0
fi
art="$WORK/art"
mkdir -p "$art" "$WORK/in"
if ! gcc -O0 -g -fno-omit-frame-pointer -o "$WORK/phases" "$REPO/tests/workloads/phases.c" 2>"$WORK/err"; then
	notok "$name: gcc failed: $(oneline "$WORK/err")"
	exit 0
fi
data="$WORK/in/phases.data"
if ! perf record -e cpu-clock -F 999 -g -N -o "$data" -- "$WORK/phases" 600 >/dev/null 2>"$WORK/err"; then
	notok "$name: perf record failed: $(oneline "$WORK/err")"
	exit 0
fi
id=$("$PERFLENS" --artifact-root "$art" --allowed-root "$WORK" analyze --input "$data" 2>"$WORK/err" |
	/usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["analysis_id"])' 2>>"$WORK/err")
[ -n "$id" ] || { notok "$name: analyze failed: $(oneline "$WORK/err")"; exit 0; }
export PERFLENS_TOKEN="viewer-views-$$-token"
start_http_server "$name" "$MCP" --http 127.0.0.1:0 --allowed-root "$WORK" --artifact-root "$art"
login=$(sed -n 's#^perflens-mcp: viewer (one-time login): ##p' "$WORK/server.err")
cat > "$WORK/cfg.json" <<JSON
{"base": "http://127.0.0.1:$port", "login": "$login", "chromium": "/usr/bin/chromium", "out": "$out",
 "id": "$id", "event": "cpu-clock", "data": "$data", "repo": "$REPO"}
JSON
HOME="$WORK" timeout 300 "$node" "$here/viewer_views.mjs" "$WORK/cfg.json" 2>"$WORK/browser.err"
rc=$?
[ "$rc" -ne 0 ] && [ -s "$WORK/browser.err" ] && notok "$name: browser run exited $rc: $(oneline "$WORK/browser.err")"
echo "# $name: screenshots in $out"
stop_server "$name"
