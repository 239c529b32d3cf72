# test_viewer.sh - the web viewer of perflens-mcp --http, in a real browser.
#
# Analyses are made with the perflens CLI: the bundled device capture, a
# baseline and a candidate folded profile that differ in known ways, a
# profile whose symbols, module path and comm hold HTML (<script>, quotes,
# tags), and, when perf can record here, a workload with source lines.
# The CLI also writes the oracle: the tools' own answers (list_hotspots,
# compare_profiles, source_context) for the views the browser opens.
# Then perflens-mcp --http serves them and viewer_browser.mjs drives
# Debian's Chromium through the login link, the list, the analysis (event
# switch, sort and page, flame graph zoom and search, keyboard), source
# heat, a view (focus and hide in the URL: the flame graph and the hotspot
# table hold what list_hotspots keeps under it), compare (two analyses; an experiment's verdicts and runs) and the
# hostile profile, checking the page against the
# oracle; screenshots go to $BUILD/test-output/viewer/.  curl checks what a
# browser cannot show: 401 without or with a wrong token or cookie, 403
# for a foreign Origin or Host, 404 for path-like ids, the security
# headers, no CORS, and that only read-only tools answer.
# run.sh: slow
. tests/integration/lib.sh
name="viewer"
here="$REPO/tests/integration"
MCP="$(dirname "$PERFLENS")/perflens-mcp"
case $BUILD in /*) out="$BUILD/test-output/viewer" ;; *) out="$REPO/$BUILD/test-output/viewer" ;; esac
rm -rf "$out" && mkdir -p "$out"
art="$WORK/art"
mkdir -p "$art" "$WORK/in"
P() { "$PERFLENS" --artifact-root "$art" --allowed-root "$WORK" --allowed-root "$REPO" "$@"; }
idof() { /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["analysis_id"])'; }

# --- the analyses
bundled=$(P analyze --input "$REPO/fixtures/device-x86/chunk_000.txt.gz" 2>"$WORK/err" | idof)
[ -n "$bundled" ] || { notok "$name: analyze the bundled capture: $(oneline "$WORK/err")"; exit 0; }
printf 'main;work;hot 600\nmain;work;cold 300\nmain;idle 100\n' > "$WORK/in/base.folded"
printf 'main;work;hot 900\nmain;work;cold 100\nmain;idle 100\nmain;fresh 100\n' > "$WORK/in/cand.folded"
base_id=$(P analyze --input "$WORK/in/base.folded" | idof)
cand_id=$(P analyze --input "$WORK/in/cand.folded" | idof)
/usr/bin/python3 - "$WORK/in/hostile.txt" <<'PY'
import sys
def rec(t, frames):
    s = "<b>evil</b> 4242/4242 [000] 1000.%06d:    1000000 cpu-clock: \n" % t
    for i, (sym, dso) in enumerate(frames):
        s += "\t    %x %s+0x10 (%s)\n" % (0x555500000000 + i * 16, sym, dso)
    return s + "\n"
out = "".join(rec(t, [("evil\"quote'<script>alert(1)</script>", "/tmp/<b>x</b>/lib.so"),
                      ("<img src=x onerror=alert(2)>", "/usr/bin/app"), ("main", "/usr/bin/app")]) for t in range(30))
out += "".join(rec(t, [("\"><svg onload=alert(3)>", "/usr/bin/app"), ("main", "/usr/bin/app")]) for t in range(30, 50))
open(sys.argv[1], "w").write(out)
PY
hostile=$(P analyze --input "$WORK/in/hostile.txt" | idof)
# C++ linker names: listed by their short names (an overload and two
# template instances), the full and linker names one step away.
printf 'main;%s 60\nmain;_ZN2kv3BoxIiE5twiceEv 30\nmain;_ZN2kv3BoxIdE5twiceEv 10\n' \
	_ZN2kv5Store3getERKNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEE > "$WORK/in/cxx.folded"
cxx=$(P analyze --input "$WORK/in/cxx.folded" | idof)
# Enough analyses for the list to have a second page (it pages by 20).
for i in $(seq 1 18); do
	printf 'main;step%s %s\n' "$i" "$i" > "$WORK/in/small-$i.folded"
	P analyze --input "$WORK/in/small-$i.folded" >/dev/null 2>>"$WORK/err"
done
P export --analysis-id "$bundled" --event cycles --format folded >/dev/null 2>>"$WORK/err"
P export --analysis-id "$bundled" --event cycles --format svg >/dev/null 2>>"$WORK/err"

# Source lines from a real recording, when perf can record.
src_id=""
if command -v perf >/dev/null 2>&1 && perf record -e cpu-clock -g -N -o "$WORK/probe.data" -- true >/dev/null 2>&1; then
	mkdir -p "$WORK/src"
	cp "$REPO/tests/workloads/fib.c" "$WORK/src/fib.c"
	if (cd "$WORK/src" && gcc -O1 -g -fno-omit-frame-pointer -o fib fib.c) 2>"$WORK/err" &&
		perf record -e cpu-clock -F 999 -g -N -o "$WORK/fib.data" -- "$WORK/src/fib" >/dev/null 2>"$WORK/err"; then
		src_id=$(P analyze --input "$WORK/fib.data" --srcline 2>"$WORK/err" | idof)
	fi
	[ -n "$src_id" ] || notok "$name: record and analyze fib with srclines: $(oneline "$WORK/err")"
fi

# --- the oracle: the tools' answers for the views the browser opens
P hotspots --analysis-id "$bundled" --event cycles --sort self --limit 20 > "$WORK/hot_self.json"
P hotspots --analysis-id "$bundled" --event cycles --sort inclusive --limit 20 --offset 20 > "$WORK/hot_incl2.json"
search_incl=$(P hotspots --analysis-id "$bundled" --event cycles --sort inclusive --limit 100 | /usr/bin/python3 -c '
import json,sys
print([h for h in json.load(sys.stdin)["hotspots"] if h["symbol"] == "cpu_intensive"][0]["inclusive"]["percent"])')
# the function of page 2 (sort inclusive) with the most weight in callees
hot_fn=$(/usr/bin/python3 -c 'import json,sys
hs = json.load(open(sys.argv[1]))["hotspots"]
print(max(hs, key=lambda h: h["inclusive"]["samples"] - h["self"]["samples"])["hotspot_id"])' "$WORK/hot_incl2.json")
P hotspot --analysis-id "$bundled" --event cycles --hotspot-id "$hot_fn" --limit 10 > "$WORK/hotspot.json"
P compare --baseline-id "$base_id" --candidate-id "$cand_id" --limit 20 --no-exports > "$WORK/compare.json"
P hotspots --analysis-id "$cxx" > "$WORK/hot_cxx.json"
# a view in the URL: the tools' answer under the same view
P hotspots --analysis-id "$bundled" --event cycles --limit 20 --view '{"focus":"^run_workload$","hide":"^main$"}' > "$WORK/hot_view.json"
# An experiment (run_experiment from the CLI, /bin/true on both sides):
# its result is the oracle of the Compare page's experiment section.
exp_id=""
if command -v perf >/dev/null 2>&1; then
	cp /bin/true "$WORK/in/true"
	side="{\"executable\": \"$WORK/in/true\"}"
	exp_id=$(P experiment --authorize-target I_EXPLICITLY_AUTHORIZE_TARGET_PROFILING --runs 3 --warmup 1 \
		--baseline "$side" --candidate "$side" --format json 2>"$WORK/err" | tee "$WORK/experiment.json" |
		/usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["experiment_id"])')
	[ -n "$exp_id" ] || notok "$name: run an experiment for the Compare page: $(oneline "$WORK/err")"
fi
src_oracle=null
if [ -n "$src_id" ]; then
	fn=$(P hotspots --analysis-id "$src_id" --limit 100 | /usr/bin/python3 -c '
import json,sys
print([h for h in json.load(sys.stdin)["hotspots"] if h["symbol"] == "fib"][0]["hotspot_id"])')
	P source --analysis-id "$src_id" --hotspot-id "$fn" --before 3 --after 3 --hot-lines 10 > "$WORK/source.json"
	src_oracle="\"$WORK/source.json\""
fi

# --- the server
export PERFLENS_TOKEN="viewer-test-$$-token"
start_http_server "$name" "$MCP" --http 127.0.0.1:0 --allowed-root "$WORK" --artifact-root "$art"
base="http://127.0.0.1:$port"
login=$(sed -n 's#^perflens-mcp: viewer (one-time login): ##p' "$WORK/server.err")
login2=$("$PERFLENS" viewer-url --http "127.0.0.1:$port")
case $login in "$base/viewer/login?n="*) ok "$name: the server prints a one-time login URL" ;;
*) notok "$name: the server prints a one-time login URL: $(oneline "$WORK/server.err")" ;; esac
case $login$login2 in *"$PERFLENS_TOKEN"*) notok "$name: the login URLs do not hold the token" ;;
*) ok "$name: the login URLs do not hold the token" ;; esac

# --- what a browser cannot show: curl
api() { # api STATUS-FILE BODY-FILE ARGS...: POST to the API
	s=$1 b=$2
	shift 2
	curl -s -o "$b" -w '%{http_code}' -H 'Content-Type: application/json' "$@" >"$s"
}
hot="{\"tool\":\"list_hotspots\",\"arguments\":{\"analysis_id\":\"$bundled\",\"limit\":1}}"
api "$WORK/s" "$WORK/b" -d "$hot" "$base/viewer/api/call"
if [ "$(cat "$WORK/s")" = 401 ] && ! grep -q hotspot "$WORK/b"; then ok "$name: no token: 401 and no data"
else notok "$name: no token: 401 and no data: $(cat "$WORK/s") $(oneline "$WORK/b")"; fi
api "$WORK/s" "$WORK/b" -H "Authorization: Bearer wrong" -d "$hot" "$base/viewer/api/call"
if [ "$(cat "$WORK/s")" = 401 ] && ! grep -q hotspot "$WORK/b"; then ok "$name: a wrong token: 401 and no data"
else notok "$name: a wrong token: 401 and no data: $(cat "$WORK/s")"; fi
api "$WORK/s" "$WORK/b" -H "Cookie: perflens_viewer=00000000000000000000000000000000.$(printf '%064d' 0)" -d "$hot" "$base/viewer/api/call"
if [ "$(cat "$WORK/s")" = 401 ] && ! grep -q hotspot "$WORK/b"; then ok "$name: a forged cookie: 401 and no data"
else notok "$name: a forged cookie: 401 and no data: $(cat "$WORK/s")"; fi
code=$(curl -s -o "$WORK/b" -w '%{http_code}' "$base/viewer/?a=$bundled")
if [ "$code" = 401 ] && ! grep -q "$bundled" "$WORK/b"; then ok "$name: the page without a token: 401, no data"
else notok "$name: the page without a token: 401, no data: $code"; fi
forged=$(echo "$login" | sed 's/m=\(.\)/m=0\1/; s/m=0\(.\{64\}\).*/m=\1/')
code=$(curl -s -o /dev/null -w '%{http_code}' "$(echo "$login2" | sed 's/&m=.*/\&m=0000000000000000000000000000000000000000000000000000000000000000/')")
[ "$code" = 401 ] && ok "$name: a login link with a wrong MAC: 401" || notok "$name: a login link with a wrong MAC: 401: $code"
code=$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $PERFLENS_TOKEN" -H "Origin: http://evil.example" "$base/viewer/")
[ "$code" = 403 ] && ok "$name: a foreign Origin: 403" || notok "$name: a foreign Origin: 403: $code"
code=$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $PERFLENS_TOKEN" -H "Origin: http://evil.example" -H 'Content-Type: application/json' -d "$hot" "$base/viewer/api/call")
[ "$code" = 403 ] && ok "$name: a foreign Origin on the API: 403" || notok "$name: a foreign Origin on the API: 403: $code"
code=$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $PERFLENS_TOKEN" -H "Host: evil.example:$port" "$base/viewer/")
[ "$code" = 403 ] && ok "$name: a foreign Host (DNS rebinding): 403" || notok "$name: a foreign Host: 403: $code"
A="Authorization: Bearer $PERFLENS_TOKEN"
bad=""
for p in "analyses/..%2F..%2Fetc%2Fpasswd" "analyses/../../../etc/passwd" "..%2Fserver.err" "analyses/%2Fetc%2Fpasswd" "collections/x/y" "benchmarks/a.json"; do
	code=$(curl -s --path-as-is -o "$WORK/b" -w '%{http_code}' -H "$A" "$base/viewer/api/file/$p")
	{ [ "$code" = 404 ] && ! grep -q root: "$WORK/b"; } || bad="$bad $p:$code"
done
for args in "\"analysis_id\":\"../../etc/passwd\"" "\"analysis_id\":\"/etc/passwd\""; do
	api "$WORK/s" "$WORK/b" -H "$A" -d "{\"tool\":\"list_hotspots\",\"arguments\":{$args}}" "$base/viewer/api/call"
	[ "$(cat "$WORK/s")" = 404 ] || bad="$bad $args:$(cat "$WORK/s")"
done
for a in /etc/passwd ../../etc/passwd "perflens://artifacts/../x" "collections/co-x/perf.data"; do
	api "$WORK/s" "$WORK/b" -H "$A" -d "{\"tool\":\"read_artifact_page\",\"arguments\":{\"artifact\":\"$a\"}}" "$base/viewer/api/call"
	{ [ "$(cat "$WORK/s")" = 404 ] && ! grep -q root: "$WORK/b"; } || bad="$bad read:$a:$(cat "$WORK/s")"
done
if [ -n "$exp_id" ]; then
	# The Compare page's data for an experiment: its artifact through
	# read_artifact_page, whose record holds the verdicts the tool gave.
	api "$WORK/s" "$WORK/b" -H "Authorization: Bearer $PERFLENS_TOKEN" \
		-d "{\"tool\":\"read_artifact_page\",\"arguments\":{\"artifact\":\"benchmarks/$exp_id.json\",\"limit_bytes\":32768}}" \
		"$base/viewer/api/call"
	if [ "$(cat "$WORK/s")" = 200 ] && /usr/bin/python3 - "$WORK/b" "$WORK/experiment.json" <<'PY'
import json, sys
page, res = json.load(open(sys.argv[1]))["result"], json.load(open(sys.argv[2]))
doc = json.loads(page["text"]) if page["next_offset"] is None else {}
got = [(v["measure"], v["verdict"]) for v in doc.get("experiment", {}).get("verdicts", [])]
sys.exit(0 if got and got == [(v["measure"], v["verdict"]) for v in res["verdicts"]] else 1)
PY
	then ok "$name: an experiment's artifact reads through the API with the verdicts run_experiment gave"
	else notok "$name: an experiment's artifact through the API: $(cat "$WORK/s") $(oneline "$WORK/b")"; fi
fi
[ -z "$bad" ] && ok "$name: path-like ids and artifacts: 404, nothing outside the artifact root" ||
	notok "$name: path-like ids and artifacts: 404:$bad"
# A folder of the root that is a symbolic link out of it: the server
# process serves files itself (no Landlock behind it), so the link must
# not be followed.  The exports folder is put back afterwards.
mkdir -p "$WORK/outside" && echo "root:outside-secret" > "$WORK/outside/secret.txt"
mv "$art/exports" "$art/exports.real" && ln -s "$WORK/outside" "$art/exports"
code=$(curl -s -o "$WORK/b" -w '%{http_code}' -H "$A" "$base/viewer/api/file/exports/secret.txt")
api "$WORK/s" "$WORK/b2" -H "$A" -d '{"tool":"read_artifact_page","arguments":{"artifact":"exports/secret.txt"}}' "$base/viewer/api/call"
rm "$art/exports" && mv "$art/exports.real" "$art/exports"
if [ "$code" = 404 ] && ! grep -q outside-secret "$WORK/b" "$WORK/b2"; then
	ok "$name: exports -> a folder outside the root: 404, the file there is not served"
else
	notok "$name: a symlinked exports folder: $code, $(oneline "$WORK/b") $(oneline "$WORK/b2")"
fi
bad=""
for t in analyze_profile export_profile collect_profile build_report normalize_benchmark inspect_collection_capabilities symbolize inspect_elf; do
	api "$WORK/s" "$WORK/b" -H "$A" -d "{\"tool\":\"$t\",\"arguments\":{\"analysis_id\":\"$bundled\",\"format\":\"svg\"}}" "$base/viewer/api/call"
	[ "$(cat "$WORK/s")" = 404 ] || bad="$bad $t:$(cat "$WORK/s")"
done
api "$WORK/s" "$WORK/b" -H "$A" -d "{\"tool\":\"source_context\",\"arguments\":{\"analysis_id\":\"$bundled\",\"file\":\"/etc/passwd\"}}" "$base/viewer/api/call"
[ "$(cat "$WORK/s")" = 400 ] || bad="$bad source_context(file):$(cat "$WORK/s")"
n_before=$(ls "$art/exports" | wc -l)
api "$WORK/s" "$WORK/b" -H "$A" -d "{\"tool\":\"compare_profiles\",\"arguments\":{\"baseline_id\":\"$base_id\",\"candidate_id\":\"$cand_id\",\"exports\":true}}" "$base/viewer/api/call"
[ "$(cat "$WORK/s")" = 200 ] && [ "$(ls "$art/exports" | wc -l)" = "$n_before" ] || bad="$bad compare-wrote-exports:$(cat "$WORK/s")"
[ -z "$bad" ] && ok "$name: only read-only tools answer; the viewer passes no path and writes nothing" ||
	notok "$name: only read-only tools answer:$bad"
code=$(curl -s -o /dev/null -w '%{http_code}' -H "$A" -H 'Content-Type: text/plain' -d "$hot" "$base/viewer/api/call")
[ "$code" = 415 ] && ok "$name: the API takes application/json only (no form posts)" || notok "$name: the API takes application/json only: $code"
curl -s -D "$WORK/h" -o /dev/null -H "$A" "$base/viewer/"
bad=""
grep -qi "^Content-Security-Policy: default-src 'none'; script-src 'self';" "$WORK/h" || bad="$bad csp"
grep -qi "frame-ancestors 'none'" "$WORK/h" || bad="$bad frame-ancestors"
grep -qi "unsafe-inline\|unsafe-eval" "$WORK/h" && bad="$bad unsafe"
grep -qi '^X-Content-Type-Options: nosniff' "$WORK/h" || bad="$bad nosniff"
grep -qi '^Access-Control-' "$WORK/h" && bad="$bad cors"
curl -s -D "$WORK/h2" -o /dev/null -H "$A" -H "Origin: $base" -X OPTIONS "$base/viewer/api/call"
grep -qi '^Access-Control-' "$WORK/h2" && bad="$bad cors-preflight"
[ -z "$bad" ] && ok "$name: strict CSP, nosniff, no framing, no CORS headers" || notok "$name: security headers:$bad; $(oneline "$WORK/h")"
# Long polling for the live page: an answer on a change, none before.  The
# change comes 2 s after the request, so that a loaded (sanitizer) server
# has taken the request's baseline before it.
t0=$(date +%s%N)
curl -s -H "$A" "$base/viewer/api/wait?timeout=2" > "$WORK/w0"
t1=$(date +%s%N)
( sleep 2; mkdir -p "$art/sessions/s-test"; echo x > "$art/sessions/s-test/.chunk_000.tmp"; mv "$art/sessions/s-test/.chunk_000.tmp" "$art/sessions/s-test/chunk_000.txt" ) &
w1_pid=$!
curl -s -H "$A" "$base/viewer/api/wait?timeout=20" > "$WORK/w1"
wait "$w1_pid"
( sleep 2; echo '{"type":"system"}' >> "$art/sessions/s-test/metrics.jsonl" ) &
w2_pid=$!
curl -s -H "$A" "$base/viewer/api/wait?timeout=20&session=s-test" > "$WORK/w2"
t2=$(date +%s%N)
wait "$w2_pid"
if grep -q '"changed":\[\]' "$WORK/w0" && [ $(( (t1 - t0) / 1000000 )) -ge 1900 ] &&
	grep -q '"root"\|"sessions"' "$WORK/w1" && grep -q '"session"' "$WORK/w2" && [ $(( (t2 - t1) / 1000000 )) -lt 15000 ]; then
	ok "$name: /viewer/api/wait answers when a session or its metrics change, and waits (no answer) otherwise"
else
	notok "$name: /viewer/api/wait: $(cat "$WORK/w0") $(cat "$WORK/w1") $(cat "$WORK/w2") $(( (t1 - t0) / 1000000 )) ms"
fi
rm -rf "$art/sessions"
code=$(curl -s -o /dev/null -w '%{http_code}' -H "$A" "$base/viewer/api/wait?session=..%2F..")
[ "$code" = 404 ] && ok "$name: a path-like session id to wait on: 404" || notok "$name: a path-like session id to wait on: 404: $code"
grep -q '<script>' "$REPO/mcp-server/viewer/index.html" && notok "$name: no inline script in the page" || ok "$name: no inline script in the page"

# --- the browser
node=$(sh tests/mcp/setup-node.sh --check 2>"$WORK/node.err") || node=""
if [ -z "$node" ]; then
	skip "$name: browser checks: $(cat "$WORK/node.err")"
elif [ ! -x /usr/bin/chromium ]; then
	skip "$name: browser checks: /usr/bin/chromium is not installed (tests/setup.sh installs it)"
else
	printf 'main;late 5\n' > "$WORK/in/late.folded"
	# A live session in the agent link's layout (docs/agent-protocol.md), as
	# the link writes it; the browser run appends to it while the page is open.
	live="$art/sessions/dev1-20261201T120000"
	mkdir -p "$live"
	printf '{"agent":"dev1","live":true,"chunks":1,"started":"2026-12-01T12:00:00Z","text_bytes":100}\n' > "$live/metadata.json"
	for i in 1 2 3; do
		printf '{"type":"system","ts":179600000%s,"cpu":{"overall_pct":%s.5,"per_core":[],"num_cores":2},"mem":{"used_pct":4%s.0},"load":{"avg_1m":0.%s}}\n' "$i" "$((i * 10))" "$i" "$i"
		printf '{"type":"process","ts":179600000%s,"pid":5,"comm":"app","cpu_pct":%s.0,"rss_kb":%s}\n' "$i" "$((i * 5))" "$((i * 1000))"
	done > "$live/metrics.jsonl"
	n_analyses=$(ls "$art/analyses" | grep -c '^an-[0-9a-f]*\.json$')
	src_json=null
	[ -n "$src_id" ] && src_json="\"$src_id\""
	cat > "$WORK/cfg.json" <<JSON
{"base": "$base", "login": "$login", "login2": "$login2", "chromium": "/usr/bin/chromium", "out": "$out",
 "bundled": "$bundled", "hostile": "$hostile", "base_id": "$base_id", "cand_id": "$cand_id",
 "src_id": $src_json, "page": 20, "analyses": $n_analyses, "experiment_id": "$exp_id",
 "live_session": "dev1-20261201T120000", "live_dir": "$art/sessions/dev1-20261201T120000",
 "late_analyze": ["$PERFLENS", "--artifact-root", "$art", "--allowed-root", "$WORK", "analyze", "--input", "$WORK/in/late.folded"], "zoom_symbol": "main", "search_symbol": "cpu_intensive",
 "grew": "hot", "shrank": "cold", "hostile_comm": "<b>evil</b>",
 "cxx": "$cxx",
 "oracle": {"hot_cxx": "$WORK/hot_cxx.json", "hot_view": "$WORK/hot_view.json",
   "hot_cycles_self": "$WORK/hot_self.json", "hot_cycles_incl_p2": "$WORK/hot_incl2.json",
   "compare": "$WORK/compare.json", "hotspot": "$WORK/hotspot.json", "experiment": "$WORK/experiment.json", "source": $src_oracle, "search_incl_percent": $search_incl,
   "hostile_symbols": ["evil\"quote'<script>alert(1)</script>", "<img src=x onerror=alert(2)>", "\"><svg onload=alert(3)>"]}}
JSON
	HOME="$WORK" timeout 300 "$node" "$here/viewer_browser.mjs" "$WORK/cfg.json" 2>"$WORK/browser.err"
	rc=$?
	[ "$rc" -eq 0 ] || [ -s "$WORK/browser.err" ] && [ "$rc" -ne 0 ] && notok "$name: browser run exited $rc: $(oneline "$WORK/browser.err")"
	echo "# $name: screenshots in $out"
fi
stop_server "$name"
