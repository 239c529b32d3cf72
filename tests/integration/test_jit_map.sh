# test_jit_map.sh - JIT frames named from /tmp/perf-PID.map by the native
# perf.data reader.
#
# tests/workloads/jit_map.c runs one loop from two anonymous executable
# mappings and writes its perf map as Node and the JVM's agent do, with
# lines perf reads oddly.  Oracles: `perf report` (both JIT hotspots,
# named from the map, at its percentages) and the perf script reader (the
# same stack table, byte for byte).  The analysis says which functions
# came from a JIT map (kind jit, quality.names.jit, provenance jit_maps);
# a map outside --allowed-root is not read.  x86-64 only.
. tests/integration/lib.sh
name="jit map"
if [ "$(uname -m)" != x86_64 ]; then
	skip "$name: the workload's machine code is x86-64"
	exit 0
fi
need_perf_record "$name"
bin="$WORK/jit" data="$WORK/jit.data"
if ! gcc -O2 -g -fno-omit-frame-pointer -o "$bin" "$REPO/tests/workloads/jit_map.c" 2>"$WORK/err" ||
	! perf record -e cpu-clock -F 999 -g -o "$data" -- "$bin" 3000 >/dev/null 2>>"$WORK/err" ||
	! perf report -i "$data" --stdio --no-children --sort sym -g none --percent-limit 1 \
		>"$WORK/report" 2>>"$WORK/err"; then
	notok "$name: build, record or report failed: $(oneline "$WORK/err")"
	exit 0
fi
pid=$(perf script -i "$data" -F pid 2>/dev/null | head -1 | tr -d ' ')
for r in native perf-script; do
	PERFLENS_PERF_DATA_READER=$r "$PERFLENS" analyze --path "$data" --artifact-root "$WORK/art-$r" \
		>"$WORK/$r.json" 2>"$WORK/err" || notok "$name: analyze ($r) failed: $(oneline "$WORK/err")"
done
# Beneath --allowed-root only: the map in /tmp is outside $WORK, so it is
# not read, its frames stay [unknown], and the provenance says so.
PERFLENS_PERF_DATA_READER=native "$PERFLENS" analyze --path "$data" --allowed-root "$WORK" \
	--artifact-root "$WORK/art-roots" >"$WORK/roots.json" 2>"$WORK/err" ||
	notok "$name: analyze under --allowed-root failed: $(oneline "$WORK/err")"
oracle "$name" /usr/bin/python3 - "$WORK" <<'PY'
import json, re, sys
work = sys.argv[1]
def ok(m): print(f"ok - jit map: {m}")
def notok(m): print(f"not ok - jit map: {m}")
a = json.load(open(f"{work}/native.json"))
s = json.load(open(a["artifact"]["summary_path"]))
if s["provenance"]["inputs"][0].get("reader") == "native":
    ok("the native reader read the perf.data with its perf map (no perf run)")
else:
    notok(f"reader: {s['provenance']['inputs'][0].get('reader')} ({s['provenance']['inputs'][0].get('reader_note', '')})")
want = []
for line in open(f"{work}/report"):
    m = re.match(r"^\s+([\d.]+)%\s+\[\.\]\s+(.*?)\s*$", line)
    if m:
        want.append((float(m.group(1)), m.group(2)))
top = a["events"][0]["top_hotspots"]
jit = [h for h in top if h["dso"] and h["dso"].startswith("/tmp/perf-")]
miss = [w for w in want if not any(h["symbol"] == w[1] and abs(h["self_percent"] - w[0]) <= 0.011 for h in top)]
if len(want) >= 3 and not miss and len(jit) >= 3:
    ok(f"{len(jit)} JIT hotspots named from the map as perf report names them: {[h['symbol'] for h in jit]}")
else:
    notok(f"perf report {want}, missing {miss}; perflens {[(h['symbol'], h['self_percent']) for h in top[:4]]}")
funcs = [f for f in s["functions"] if f["dso"] and f["dso"].startswith("/tmp/perf-")]
q = s["quality"].get("names", {})
if funcs and all(f["kind"] == "jit" for f in funcs) and q.get("jit", 0) >= 3 and \
        q.get("interpreted") == sum(f["symbol"].startswith("Interpreted") for f in funcs) > 0:
    ok(f"JIT functions are kind jit and quality.names counts {q['jit']}, {q['interpreted']} of them interpreted")
else:
    notok(f"kinds {[f['kind'] for f in funcs]}, quality.names {q}")
rt = json.load(open(f"{work}/roots.json"))
rs = json.load(open(rt["artifact"]["summary_path"]))
jm = rs["provenance"]["inputs"][0]["perf_data"].get("jit_maps", "")
named = [h["symbol"] for h in rt["events"][0]["top_hotspots"] if h["dso"] and h["dso"].startswith("/tmp/perf-")]
if "1 outside the allowed roots" in jm and named and all(n == "[unknown]" for n in named):
    ok(f"a map outside --allowed-root is not read: {jm}")
else:
    notok(f"outside the allowed roots: jit_maps '{jm}', JIT names {named}")
if "1 JIT perf maps read" in s["provenance"]["inputs"][0]["perf_data"].get("jit_maps", ""):
    ok("the provenance says the map was read: " + s["provenance"]["inputs"][0]["perf_data"]["jit_maps"])
else:
    notok(f"jit_maps: {s['provenance']['inputs'][0]['perf_data'].get('jit_maps')}")
b = json.load(open(f"{work}/perf-script.json"))
if open(a["artifact"]["stacks_path"]).read() == open(b["artifact"]["stacks_path"]).read():
    ok("the native reader and perf script give the same stack table, byte for byte")
else:
    notok("the native and perf script stack tables differ")
PY
[ -n "$pid" ] && rm -f "/tmp/perf-$pid.map"
