# test_json_inputs.sh - V8 .cpuprofile and speedscope files as input.
#
# V8: `node --cpu-prof` profiles a small script; json_oracle.py recomputes
# from the raw JSON each function's self and inclusive ticks and time (a
# tick lasts until the next, the last until endTime) and compares them, and
# the totals, with PerfLens's analysis.  speedscope: json_craft.py writes
# files from a known profile (sampled in fractional milliseconds over two
# threads, evented in microseconds, bytes, unit "none"); each is first
# validated with ajv against the schema the npm package `speedscope` ships
# (check_speedscope.mjs), then json_oracle.py compares.  The npm package
# ships no speedscope-format sample (those live in speedscope's
# repository), only its app and one sample of another format (collapsed
# stacks): speedscope_convert.mjs runs the app in Chromium, which imports
# that sample, and the node --cpu-prof profile, with its own importers and
# exports them as (evented) speedscope JSON; each is validated, compared by
# json_oracle.py with its raw JSON, and the example's totals with the
# collapsed file it came from.  Bad files of both formats
# (truncated, wrong types, ids that point nowhere, a cycle of parent links,
# huge and negative weights, a close of a frame that is not open): exit 3
# with the reason, or the records counted malformed.
. tests/integration/lib.sh
PY=/usr/bin/python3
art="$WORK/art"
$PY tests/integration/json_craft.py "$WORK/jc"

node22=$(sh tests/mcp/setup-node.sh --check 2>"$WORK/node.err") || node22=""
node=$(command -v node || echo "$node22")
if [ -z "$node" ]; then
	skip "V8 input: no node to run --cpu-prof"
else
	cat >"$WORK/busy.js" <<'EOF'
function fib(n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }
function hot() { let s = 0; for (let i = 0; i < 2e7; i++) s += i % 7; return s; }
const spin = () => { const t0 = Date.now(); while (Date.now() - t0 < 600) { hot(); fib(22); } };
spin();
EOF
	if (cd "$WORK" && "$node" --cpu-prof --cpu-prof-dir="$WORK/prof" busy.js) 2>"$WORK/err" &&
		prof=$(ls "$WORK"/prof/*.cpuprofile 2>/dev/null | head -1) && [ -n "$prof" ]; then
		ok "V8 input: node --cpu-prof wrote $(basename "$prof")"
		oracle "V8 input" $PY tests/integration/json_oracle.py "$PERFLENS" "$art" "$prof" v8
	else
		notok "V8 input: node --cpu-prof: $(oneline "$WORK/err")"
	fi
fi
oracle "V8 input" $PY tests/integration/json_oracle.py "$PERFLENS" "$art" "$WORK/jc/good.cpuprofile" v8

if [ -z "$node22" ]; then
	skip "speedscope input: schema validation: $(cat "$WORK/node.err")"
else
	oracle "speedscope schema" "$node22" tests/integration/check_speedscope.mjs "$WORK"/jc/*.speedscope.json
fi
for f in "$WORK"/jc/*.speedscope.json; do
	oracle "speedscope input" $PY tests/integration/json_oracle.py "$PERFLENS" "$art" "$f" speedscope
done

# speedscope's own conversions (see the header): $1 the file to import
# (none: its example), $2 a name for the folder.
by_speedscope() {
	if ! out=$(timeout 120 "$node22" tests/integration/speedscope_convert.mjs /usr/bin/chromium \
		"$WORK/ssc/$2" ${1:+"$1"} 2>"$WORK/ssc.err") || [ ! -s "$out" ]; then
		notok "speedscope's export of $2: $(oneline "$WORK/ssc.err")"
		return 1
	fi
	ok "speedscope's export of $2: speedscope $(jget "$out" exporter) wrote $(basename "$out") ($(jget "$out" profiles.0.type), unit $(jget "$out" profiles.0.unit))"
	oracle "speedscope schema" "$node22" tests/integration/check_speedscope.mjs "$out"
	oracle "speedscope input" $PY tests/integration/json_oracle.py "$PERFLENS" "$art" "$out" speedscope
}
if [ -z "$node22" ]; then
	skip "speedscope's own exports: $(cat "$WORK/node.err")"
elif [ ! -x /usr/bin/chromium ]; then
	skip "speedscope's own exports: /usr/bin/chromium is not installed (tests/setup.sh installs it)"
elif by_speedscope "" example; then
	# The collapsed sample itself: each line a stack and its count.
	"$PERFLENS" analyze --input "$out" --artifact-root "$art" >"$WORK/ssx.json" 2>"$WORK/err"
	want=$(awk '{n++; s += $NF} END {print s, n}' "$WORK/ssc/example/example.txt")
	got="$(jget "$WORK/ssx.json" events.0.period) $(jget "$WORK/ssx.json" events.0.samples)"
	if [ "$got" = "$want" ]; then
		ok "speedscope's example: weight and stacks ($got) are the collapsed sample's sums"
	else
		notok "speedscope's example: weight and stacks $got, the collapsed sample has $want"
	fi
	if [ -n "${prof:-}" ] && by_speedscope "$prof" cpuprofile; then
		# Not a check: speedscope's own reading of the V8 ticks beside ours.
		$PY - "$out" "$prof" <<'PY'
import json, sys
ss, v8 = (json.load(open(f)) for f in sys.argv[1:3])
p = ss["profiles"][0]
ts = v8["startTime"] + sum(v8["timeDeltas"])
print("# speedscope's import of the V8 profile spans %d us; the V8 ticks' deltas %d us, its last tick to endTime %d us"
      % (p["endValue"] - p["startValue"], sum(v8["timeDeltas"]), v8["endTime"] - ts))
PY
	fi
fi

# bad FILE MALFORMED: analyzed, exit 0, MALFORMED records counted; or with
# MALFORMED "refused": exit 3 with a malformed_profile error (or, when no
# record was left, the unsupported error of an input nothing could be read
# from), holding TEXT when given.
bad() {
	"$PERFLENS" analyze --input "$WORK/jc/$1" --artifact-root "$art" >"$WORK/out.json" 2>"$WORK/err"
	rc=$?
	if [ "$2" = refused ]; then
		if [ "$rc" -eq 3 ] && grep -q 'malformed_profile\|"unsupported"' "$WORK/err" &&
			{ [ -z "${3:-}" ] || grep -q "$3" "$WORK/err"; }; then
			ok "bad input: $1 refused with exit 3: $(jget "$WORK/err" error.message | sed 's/^.*\.json. //' | cut -c1-80)"
		else
			notok "bad input: $1 refused: exit $rc $(oneline "$WORK/err") $(oneline "$WORK/out.json")"
		fi
	elif [ "$rc" -eq 0 ] && [ "$(jget "$WORK/out.json" records.malformed)" = "$2" ]; then
		ok "bad input: $1 read with $2 records counted malformed ($(jget "$WORK/out.json" records.parsed) parsed)"
	else
		notok "bad input: $1: exit $rc, $(oneline "$WORK/err") $(oneline "$WORK/out.json")"
	fi
}
bad ss-truncated.json refused
bad ss-wrongtype.json refused
bad ss-dangling.json 1
bad ss-badclose.json 1
bad ss-huge.json 1
bad ss-negative.json 1
bad v8-truncated.json refused
bad v8-wrongtype.json refused
bad v8-dangling.json 2
# Every tick of v8-cycle.json is on nodes whose parent links loop: nothing
# is left, which is an error naming what the file is (profile/sniff.c).
bad v8-cycle.json refused "V8 .cpuprofile none of whose samples could be read"

bad v8-huge.json 1

# format forced through perflens-mcp, as an agent sends it: the server
# checks the arguments against the tool's inputSchema, so each reader's
# name must be in its format enum; a file forced as the wrong format is an
# error naming the fix, never read as another format.
$PY tests/integration/pprof_craft.py "$WORK/pc" >/dev/null
REPO="$REPO" WORK="$WORK" oracle "forced format" $PY - "$(cd "$BUILD" && pwd)/perflens-mcp" "$WORK" <<'PY'
import os, sys
sys.path.insert(0, os.path.join(os.environ["REPO"], "tests", "integration"))
from mcp_client import *
SERVER, W = sys.argv[1:3]
s = Stdio([SERVER, "--allowed-root", W, "--artifact-root", os.path.join(W, "mcpart"), "--allow-writes"], "forced")
s.initialize()
def analyze(path, fmt):
    return s.call("analyze_profile", {"path": os.path.join(W, path), "format": fmt}, timeout=60)
for path, fmt in [("pc/good.pb", "pprof"), ("jc/sampled.speedscope.json", "speedscope"),
                  ("jc/evented.speedscope.json", "speedscope"), ("jc/good.cpuprofile", "cpuprofile")]:
    r = analyze(path, fmt)
    sc = (r or {}).get("result", {}).get("structuredContent") or {}
    got = [i.get("format") for i in sc.get("inputs", [])]
    check("forced format: format=%s reads %s as %s" % (fmt, path, got), got == [fmt], short(r))
for path, fmt, word in [("jc/sampled.speedscope.json", "cpuprofile", "cpuprofile"),
                        ("jc/good.cpuprofile", "pprof", "pprof"), ("pc/good.pb", "speedscope", "speedscope")]:
    r = analyze(path, fmt)
    check("forced format: %s forced as %s is refused naming the fix" % (path, fmt),
          is_tool_error(r, word), short(r))
s.close()
PY
