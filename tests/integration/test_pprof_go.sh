# test_pprof_go.sh - our pprof export as `go tool pprof` (Debian's
# golang-go, the reference reader) sees it.
#
# For the bundled device capture and for a workload recorded here with
# perf (tests/workloads/investigation/app.c, perf.data analyzed through
# perf script):
#  - `go tool pprof -top` names the main executable as its File (the
#    first mapping), not a library such as ld-linux-x86-64.so.2;
#  - every function's flat and cum percent (-top, nothing dropped) equals
#    list_hotspots' self and inclusive percent within 0.01 points (names:
#    a symbol as perf printed it, an unknown one as "[dso basename]");
#  - the sample count of -sample_index=samples in -top and -traces (each
#    trace's value summed) equals the analysis's sample count, and the
#    traces' values of the event index sum to its period.
. tests/integration/lib.sh
PY=/usr/bin/python3
if ! command -v go >/dev/null || ! go tool pprof -h >/dev/null 2>&1; then
	skip "pprof: go tool pprof is not available (apt-get install golang-go)"
	exit 0
fi
export HOME="$WORK" PPROF_TMPDIR="$WORK/pprof-tmp" GOCACHE="$GO_CACHE"
export A="$WORK/art"

# check_export WHAT ANALYSIS_ID EVENT WANT_FILE
check_export() {
	what=$1 id=$2 ev=$3 want=$4
	if ! "$PERFLENS" export --analysis-id "$id" --event "$ev" --format pprof --output "$WORK/$what.pb.gz" \
		--artifact-root "$A" 2>"$WORK/err"; then
		notok "$what: export: $(oneline "$WORK/err")"
		return
	fi
	go tool pprof -top -nodecount=100000 -nodefraction=0 -edgefraction=0 "$WORK/$what.pb.gz" \
		>"$WORK/$what.top" 2>"$WORK/$what.top.err" &&
		go tool pprof -top -sample_index=samples -nodefraction=0 "$WORK/$what.pb.gz" >"$WORK/$what.top0" 2>&1 &&
		go tool pprof -traces -sample_index=samples "$WORK/$what.pb.gz" >"$WORK/$what.traces0" 2>&1 &&
		go tool pprof -traces -unit=ns "$WORK/$what.pb.gz" >"$WORK/$what.traces" 2>&1 ||
		{ notok "$what: go tool pprof failed: $(oneline "$WORK/$what.top.err")"; return; }
	$PY - "$what" "$want" "$ev" "$WORK/$what.top" "$WORK/$what.top0" "$WORK/$what.traces0" \
		"$WORK/$what.traces" "$id" "$A/analyses/$id.json" <<'PY'
import json, os, re, subprocess, sys
what, want, ev, top, top0, traces0, traces, aid, summary = sys.argv[1:10]

def say(good, text):
    print(("ok - " if good else "not ok - ") + "%s: %s" % (what, text))

t = open(top).read()
m = re.search(r"^File: (.*)$", t, re.M)
say(m and m.group(1) == want, "go tool pprof -top names File: %s (wanted %s)" % (m and m.group(1), want))
# flat flat% sum% cum cum% name
rows = {}
for line in t.splitlines():
    r = re.match(r"^\s*(\S+)\s+([\d.]+)%\s+([\d.]+)%\s+(\S+)\s+([\d.]+)%\s+(.*)$", line)
    if r:
        rows[r.group(6).strip()] = (float(r.group(2)), float(r.group(5)))
# every hotspot, page by page, as list_hotspots gives them
hotspots, cursor = [], None
for _ in range(1000):
    args = ["--analysis-id", aid, "--event", ev, "--limit", "100"] + (["--cursor", cursor] if cursor else [])
    page = json.loads(subprocess.run([os.environ["PERFLENS"], "hotspots", "--artifact-root", os.environ["A"]] + args,
                                     capture_output=True, check=True).stdout)
    hotspots += page["hotspots"]
    cursor = page["page"]["next_cursor"]
    if not cursor:
        break
ours = {}
for x in hotspots:
    dso = x.get("dso") or ""
    name = x["symbol"] if x["symbol"] != "[unknown]" or not dso or dso.startswith("[") else "[%s]" % os.path.basename(dso)
    ours.setdefault(name, []).append(x)
def near(printed, value):
    """pprof prints a share in [99.95, 100.05] as "100%" (its Percentage
    rounds there rather than print 99.95%), so 100 means that interval."""
    if printed == 100.0:
        return 99.95 - 0.005 <= value <= 100.0
    return abs(printed - value) <= 0.01
compared, bad = 0, []
for name, xs in ours.items():
    if name not in rows:
        if sum(x["inclusive"]["percent"] for x in xs) >= 0.01:
            bad.append("%s missing from go's -top" % name)
        continue
    flat, cum = rows[name]
    self_ = sum(x["self"]["percent"] for x in xs)
    if not near(flat, self_):
        bad.append("%s flat %.2f vs self %.4f" % (name, flat, self_))
    # a name shared by several hotspots (one per DSO) has no one inclusive
    if len(xs) == 1 and not near(cum, xs[0]["inclusive"]["percent"]):
        bad.append("%s cum %.2f vs inclusive %.4f" % (name, cum, xs[0]["inclusive"]["percent"]))
    compared += 1
extra = [n for n in rows if n not in ours]
say(not bad and not extra and compared > 3 and cursor is None,
    "flat and cum percent of all %d functions equal list_hotspots' self and inclusive within 0.01 points%s"
    % (compared, ("; " + "; ".join(bad[:5]) if bad else "") + ("; only in go's: %s" % extra[:5] if extra else "")))
ana = json.load(open(summary))
evs = [e for e in ana.get("events", []) if e.get("name") == ev]
m = re.search(r"of (\d+) total", open(top0).read())
tr0 = sum(int(l.split()[0]) for l in open(traces0) if re.match(r"^\s*\d+\s+\S", l))
# values in the event's unit (-unit=ns prints a time as "1001001ns")
tr = sum(int(re.match(r"\d+", l.split()[0]).group(0)) for l in open(traces) if re.match(r"^\s*\d+(ns)?\s+\S", l))
if evs:
    e = evs[0]
    say(m and int(m.group(1)) == e["samples"] and tr0 == e["samples"],
        "sample count: -top %s, -traces %d, the analysis %d" % (m and m.group(1), tr0, e["samples"]))
    say(tr == e["period"], "-traces values of the event sum to its period (%d vs %d)" % (tr, e["period"]))
else:
    say(False, "the analysis summary has no event %s" % ev)
PY
}

# ------------------------------------------------- the bundled capture
"$PERFLENS" analyze --input "$REPO/fixtures/device-x86/chunk_000.txt.gz" --artifact-root "$A" >"$WORK/a.json" 2>"$WORK/err" ||
	notok "analyze the bundled capture: $(oneline "$WORK/err")"
id=$(jget "$WORK/a.json" analysis_id)
check_export bundled "$id" cycles sample_workload

# ------------------------------------------------- a recorded workload
need_perf_record "pprof of a recorded workload"
mkdir -p "$WORK/bin"
if ! gcc -O1 -g -fno-omit-frame-pointer -pthread -o "$WORK/bin/app" "$REPO/tests/workloads/investigation/app.c" 2>"$WORK/err" ||
	! perf record -e cpu-clock -F 999 -g -o "$WORK/app.data" -- "$WORK/bin/app" 1 >/dev/null 2>"$WORK/err"; then
	notok "record the investigation workload: $(oneline "$WORK/err")"
	exit 0
fi
"$PERFLENS" analyze --input "$WORK/app.data" --artifact-root "$A" >"$WORK/b.json" 2>"$WORK/err" ||
	notok "analyze the recorded perf.data: $(oneline "$WORK/err")"
check_export recorded "$(jget "$WORK/b.json" analysis_id)" cpu-clock app
