# test_svg.sh - SVG flame graphs from real captures: well-formed XML with
# its script, children never wider than their parents (check_svg.py),
# byte-identical on a second export, one event per graph, and rendered by
# a real headless Chromium when it is installed.
. tests/integration/lib.sh
need_shared "SVG flame graphs"
peers="$SHARED/peers/flamegraph/test"
for input in "$peers/perf-vertx-stacks-01.txt" "$peers/perf-iperf-stacks-pidtid-01.txt" \
	"$SHARED/peers/device-sessions/session-x86-baseline"; do
	name=$(basename "$input")
	id=$("$PERFLENS" analyze --input "$input" --artifact-root "$WORK" | sed -n 's/^  "analysis_id": "\(.*\)",$/\1/p')
	event=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["events"][0]["name"])' "$WORK/analyses/$id.json")
	"$PERFLENS" export --analysis-id "$id" --artifact-root "$WORK" --event "$event" --format svg --output "$WORK/a.svg" &&
	"$PERFLENS" export --analysis-id "$id" --artifact-root "$WORK" --event "$event" --format svg --output "$WORK/b.svg" ||
		{ notok "export svg of $name"; continue; }
	if out=$(python3 tests/integration/check_svg.py "$WORK/a.svg" 2>&1); then
		ok "svg of $name is well formed and nested ($out)"
	else
		notok "svg of $name: $out"
	fi
	cmp -s "$WORK/a.svg" "$WORK/b.svg" && ok "svg of $name is byte-identical on a second export" ||
		notok "svg of $name differs between exports"
done
# Several events and no --event: refused, naming them.
id=$("$PERFLENS" analyze --input "$SHARED/peers/device-sessions/session-x86-baseline" --artifact-root "$WORK" |
	sed -n 's/^  "analysis_id": "\(.*\)",$/\1/p')
if "$PERFLENS" export --analysis-id "$id" --artifact-root "$WORK" --format svg 2>"$WORK/err" >/dev/null; then
	notok "a multi-event svg export without --event must be refused"
else
	grep -q cycles "$WORK/err" && ok "multi-event svg export without --event names the events" ||
		notok "multi-event refusal: $(cat "$WORK/err")"
fi
sh tests/integration/svg_browser.sh "$WORK/a.svg" "$WORK/shot.png" > "$WORK/browser" 2>&1
case $? in
0) ok "chromium renders the flame graph ($(tail -1 "$WORK/browser"))" ;;
77) skip "svg in a browser: $(tail -1 "$WORK/browser")" ;;
*) notok "svg in a browser: $(tail -3 "$WORK/browser")" ;;
esac
