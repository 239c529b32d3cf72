# test_pprof_input.sh - pprof profiles as input, against go tool pprof.
#
# A small Go program (goprof/main.go, built here with Debian's golang-go)
# writes a CPU profile and a heap profile with runtime/pprof;
# pprof_oracle.py checks PerfLens's reading of each against `go tool pprof`
# on the same file: the events are the sample types with their units, in
# order (the heap profile's four kept apart), totals equal, and every
# function's flat and cumulative shares within 0.01 points.  The same
# profile decompressed is read the same.  Hand-made profiles
# (pprof_craft.py) check the model's side: inline chains, a frame without
# lines keeping its address, a mapping's build-id, thread labels; and bad
# input: ids that point nowhere and negative values counted malformed,
# values past 2^64, a cut file and a wrong wire type refused with exit 3.
. tests/integration/lib.sh
PY=/usr/bin/python3
if ! command -v go >/dev/null 2>&1; then
	skip "pprof input: go is not installed (Debian golang-go; sh tests/setup.sh)"
	exit 0
fi
art="$WORK/art"
export HOME="$WORK" GOCACHE="$GO_CACHE" GO111MODULE=off GOFLAGS=
mkdir -p "$WORK/go"
cp tests/integration/goprof/main.go "$WORK/go/"
if ! (cd "$WORK/go" && go build -o goprof main.go) >"$WORK/err" 2>&1; then
	notok "pprof input: go build: $(oneline "$WORK/err")"
	exit 0
fi
"$WORK/go/goprof" cpu "$WORK/cpu.pprof" 1 && "$WORK/go/goprof" heap "$WORK/heap.pprof" ||
	{ notok "pprof input: goprof did not write its profiles"; exit 0; }
ok "pprof input: a Go program wrote a CPU and a heap profile with runtime/pprof"

for f in cpu heap; do
	oracle "pprof input $f" $PY tests/integration/pprof_oracle.py "$PERFLENS" "$art" "$WORK/$f.pprof"
done

# The same profile, not gzipped: the same events and totals.
gzip -dc "$WORK/cpu.pprof" >"$WORK/cpu.raw.pb"
events() { $PY -c 'import json,sys; d=json.load(open(sys.argv[1])); print([(s["format"]) for s in d["inputs"]], [(e["name"], e["unit"], e["samples"], e["period"]) for e in d["events"]])' "$1" | sed 's/^\[[^]]*\] //'; }
"$PERFLENS" analyze --input "$WORK/cpu.pprof" --artifact-root "$art" >"$WORK/gz.json" 2>"$WORK/err" &&
	"$PERFLENS" analyze --input "$WORK/cpu.raw.pb" --artifact-root "$art" >"$WORK/raw.json" 2>>"$WORK/err"
if [ "$(events "$WORK/gz.json")" = "$(events "$WORK/raw.json")" ] &&
	[ "$(jget "$WORK/raw.json" inputs.0.format)" = pprof ] && [ "$(jget "$WORK/gz.json" inputs.0.codec 2>/dev/null || echo gzip)" = gzip ]; then
	ok "pprof input: gzipped and plain profile.proto are both recognised and read alike ($(events "$WORK/raw.json"))"
else
	notok "pprof input: gzipped and plain read alike: $(events "$WORK/gz.json") vs $(events "$WORK/raw.json") $(oneline "$WORK/err")"
fi

# Hand-made profiles.
$PY tests/integration/pprof_craft.py "$WORK/craft"
analyze() { "$PERFLENS" analyze --input "$1" --artifact-root "$art" >"$WORK/out.json" 2>"$WORK/err"; }
if analyze "$WORK/craft/good.pb"; then
	id=$(jget "$WORK/out.json" analysis_id)
	"$PERFLENS" callpaths --analysis-id "$id" --event cpu --artifact-root "$art" >"$WORK/paths.json"
	"$PERFLENS" threads --analysis-id "$id" --event cpu --artifact-root "$art" >"$WORK/threads.json"
	cp "$art/analyses/$id.stacks.json" "$WORK/stacks.json"
	$PY - "$WORK" <<'EOF' && ok "pprof input: inline chain (c inlined into b), a frame without lines kept as [unknown] with its mapping, thread labels (comm, tid, pid) and the units are kept" || notok "pprof input: the hand-made profile's model: $(cat "$WORK/why")"
import json, sys
w = sys.argv[1]
d = json.load(open(w + "/out.json"))
paths = json.load(open(w + "/paths.json"))
threads = json.load(open(w + "/threads.json"))
why = []
ev = {(e["name"], e["unit"], e["samples"], e["period"]) for e in d["events"]}
if ev != {("samples", "count", 4, 4), ("cpu", "nanoseconds", 4, 40000000)}:
    why.append("events %s" % ev)
chains = [" > ".join(f["symbol"] for f in p["frames"]) for p in paths["paths"]]
if "main > a > b > c" not in chains or "main > [unknown]" not in chains:
    why.append("paths %s" % chains)
st = json.load(open(w + "/stacks.json"))
st = json.loads(st["text"]) if "text" in st else st
funcs = " ".join(st.get("functions", []))
names = st.get("strings", [])
c = names.index("c") if "c" in names else -1
if c < 0 or not any(f.startswith("%d|" % c) and f.endswith("|i") for f in funcs.split()):
    why.append("c is not a function inlined into its module: %s" % funcs[:200])
t = {(x["pid"], x["tid"], x["comm"]) for x in threads["threads"]}
if t != {(None, 42, "worker"), (None, None, None), (7, None, None)}:
    why.append("threads %s" % t)
open(w + "/why", "w").write("; ".join(why))
sys.exit(1 if why else 0)
EOF
else
	notok "pprof input: the hand-made profile: $(oneline "$WORK/err")"
fi
if analyze "$WORK/craft/dangling.pb" && [ "$(jget "$WORK/out.json" records.malformed)" = 2 ] &&
	[ "$(jget "$WORK/out.json" records.parsed)" = 3 ]; then
	ok "pprof input: a location id and a function id that point nowhere: 2 records counted malformed, the other 3 read"
else
	notok "pprof input: ids that point nowhere: $(oneline "$WORK/out.json") $(oneline "$WORK/err")"
fi
if analyze "$WORK/craft/negative.pb" && [ "$(jget "$WORK/out.json" records.malformed)" = 1 ]; then
	ok "pprof input: a negative value (a diff profile) is a malformed record, counted"
else
	notok "pprof input: a negative value: $(oneline "$WORK/out.json") $(oneline "$WORK/err")"
fi
for case in huge truncated wrongtype; do
	"$PERFLENS" analyze --input "$WORK/craft/$case.pb" --artifact-root "$art" >"$WORK/out.json" 2>"$WORK/err"
	rc=$?
	if [ "$rc" -eq 3 ] && grep -q '"malformed_profile"\|"unsupported"' "$WORK/err"; then
		ok "pprof input: $case.pb is refused with exit 3 and says why ($(jget "$WORK/err" error.message | cut -c1-90))"
	else
		notok "pprof input: $case.pb: exit $rc $(oneline "$WORK/err")"
	fi
done

# Mappings and build-ids feed frame recovery: an unsymbolized profile of a
# binary built here (addresses from nm, the load layout from readelf) is
# named from the binary when the build-id matches, and left [unknown], with
# the module listed as missing, when it does not.
if command -v gcc >/dev/null 2>&1; then
	mkdir -p "$WORK/rec"
	cat >"$WORK/rec/app.c" <<'EOF2'
#include <stdio.h>
__attribute__((noinline)) long work_a(long n) { long s = 0; for (long i = 0; i < n; i++) s += i * 3; return s; }
__attribute__((noinline)) long work_b(long n) { return work_a(n) + 1; }
int main(void) { printf("%ld\n", work_b(1000)); return 0; }
EOF2
	gcc -O1 -g -fno-omit-frame-pointer -o "$WORK/rec/app" "$WORK/rec/app.c"
	bid=$(readelf -n "$WORK/rec/app" | sed -n 's/.*Build ID: //p')
	set -- $(readelf -lW "$WORK/rec/app" | awk '$1 == "LOAD" && / E / { print $2, $3, $6 }')
	off=$1 vaddr=$2 memsz=$3
	sym() { printf '0x%x' $((0x555555554000 + $(nm "$WORK/rec/app" | awk -v s="$1" '$3 == s { print "0x" $1 }') + $2)); }
	start=$(printf '0x%x' $((0x555555554000 + vaddr))) limit=$(printf '0x%x' $((0x555555554000 + vaddr + memsz)))
	addrs="$(sym work_a 4) $(sym work_b 9) $(sym main 9)"
	$PY tests/integration/pprof_craft.py "$WORK/rec/ok" "$WORK/rec/app" "$bid" "$start" "$limit" "$off" $addrs
	$PY tests/integration/pprof_craft.py "$WORK/rec/bad" "$WORK/rec/app" 00112233445566778899aabbccddeeff00112233 "$start" "$limit" "$off" $addrs
	names() { $PY -c 'import json,sys; d=json.load(open(sys.argv[1])); print(" ".join(sorted({h["symbol"] for e in d["events"] for h in e["top_hotspots"]})), "missing:", " ".join(m.get("build_id", "") for m in d["missing_binaries"]))' "$1"; }
	"$PERFLENS" analyze --input "$WORK/rec/ok/unsymbolized.pb" --artifact-root "$art" --allowed-root "$WORK" >"$WORK/rec/ok.json" 2>"$WORK/err"
	"$PERFLENS" analyze --input "$WORK/rec/bad/unsymbolized.pb" --artifact-root "$art" --allowed-root "$WORK" >"$WORK/rec/bad.json" 2>>"$WORK/err"
	got_ok=$(names "$WORK/rec/ok.json" 2>/dev/null) got_bad=$(names "$WORK/rec/bad.json" 2>/dev/null)
	if [ "$got_ok" = "main work_a work_b missing: " ] && [ "$got_bad" = "[unknown] missing: 00112233445566778899aabbccddeeff00112233" ]; then
		ok "pprof input: an unsymbolized profile's frames are named from the binary its mapping's build-id matches (main, work_b, work_a); with another build-id they stay [unknown] and the module is listed missing"
	else
		notok "pprof input: frame recovery from mappings: matched '$got_ok', other build-id '$got_bad' $(oneline "$WORK/err")"
	fi
else
	skip "pprof input: frame recovery: gcc is not installed"
fi
