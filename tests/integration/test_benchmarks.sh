# test_benchmarks.sh - normalize_benchmark and compare_benchmarks on files
# the real producers make here: `hyperfine --export-json` (Debian
# hyperfine) and Google Benchmark JSON with repetitions from a tiny
# benchmark built against Debian's libbenchmark-dev; pyperf JSON from the
# hand-made fixtures in fixtures/benchmarks/ (Debian has no python3-pyperf;
# see that folder's README).
#
# Oracles: the producers' own JSON read by Python (repeat counts, values),
# scipy.stats.mannwhitneyu on those values (U and two-sided p; scipy's
# automatic method choice must equal the method we report),
# python3-jsonschema for every tool result and artifact, and statuses that
# follow from how the runs were made (sleep 0.03 is slower than sleep 0.01;
# a 3x larger loop is slower; an artifact against itself shows no change).
# run.sh: slow
# run.sh: timing
. tests/integration/lib.sh
PY=/usr/bin/python3
if ! $PY -c 'import jsonschema, scipy.stats' 2>/dev/null; then
	skip "benchmarks: /usr/bin/python3 lacks jsonschema or scipy (apt-get install python3-jsonschema python3-scipy)"
	exit 0
fi
validate() { $PY tests/integration/validate_json.py "$@"; }
A="$WORK/a"
# call TOOL JSON OUT: run a tool through the CLI; the result goes to OUT.
call() {
	"$PERFLENS" call "$1" "$2" --artifact-root "$A" > "$3" 2> "$WORK/err"
}
field() { $PY -c 'import json,sys; d=json.load(open(sys.argv[1])); print(eval("d" + sys.argv[2]))' "$@"; }

# normalize WHAT FILE OUT [EXTRA_JSON]: normalize, validate the result and
# the artifact; prints the id on stdout.
normalize() {
	what=$1 file=$2 out=$3 extra=${4:-}
	if ! call normalize_benchmark "{\"path\": \"$file\"$extra}" "$out"; then
		notok "normalize $what: $(head -c 400 "$WORK/err")" >&2
		return 1
	fi
	id=$(field "$out" '["benchmark_id"]')
	if validate schemas/tools/normalize_benchmark.json:outputSchema "$out" >&2 &&
		validate schemas/benchmark.schema.json "$A/benchmarks/$id.json" >&2; then
		ok "normalize $what: result and artifact $id validate" >&2
	else
		notok "normalize $what: schema" >&2
	fi
	echo "$id"
}

# compare WHAT BASE CAND OUT [EXTRA_JSON]: compare and validate the result
# (an empty CAND leaves candidate_id out).
compare() {
	what=$1 base=$2 cand=$3 out=$4 extra=${5:-}
	[ -n "$cand" ] && extra=", \"candidate_id\": \"$cand\"$extra"
	if ! call compare_benchmarks "{\"baseline_id\": \"$base\"$extra}" "$out"; then
		notok "compare $what: $(head -c 400 "$WORK/err")"
		return 1
	fi
	validate schemas/tools/compare_benchmarks.json:outputSchema "$out" &&
		ok "compare $what: result validates" || notok "compare $what: schema"
}

# expect_status WHAT OUT NAME STATUS...: the result for NAME has one of the statuses.
expect_status() {
	what=$1 out=$2 name=$3
	shift 3
	got=$($PY -c '
import json,sys
d=json.load(open(sys.argv[1]))
print(" ".join(r["status"] for r in d["results"] if r["name"] == sys.argv[2]) or "absent")' "$out" "$name")
	for want in "$@"; do
		if [ "$got" = "$want" ]; then
			ok "$what: $name is $got"
			return 0
		fi
	done
	notok "$what: $name is $got, wanted $*: $(field "$out" '["results"][0]["reason"]' 2>/dev/null)"
}

# oracle KIND PRODUCER_BASE PRODUCER_CAND COMPARE_OUT NAME [CAND_NAME]: U,
# p and the repeat counts against scipy on the values read from the
# producers' files (the candidate's benchmark is CAND_NAME when given).
oracle() {
	$PY - "$@" <<'PY'
import json, math, sys
from scipy.stats import mannwhitneyu
kind, fb, fc, out, name = sys.argv[1:6]
cname = sys.argv[6] if len(sys.argv) > 6 else name

def values(path, name):
    d = json.load(open(path))
    if kind == "hyperfine":
        r = [r for r in d["results"] if r["command"] == name][0]
        return [t for t, c in zip(r["times"], r["exit_codes"]) if c == 0]
    if kind == "google":
        return [r["real_time"] for r in d["benchmarks"]
                if r["name"] == name and r.get("run_type") == "iteration" and not r.get("error_occurred")]
    b = [b for b in d["benchmarks"] if b.get("metadata", {}).get("name", d["metadata"].get("name")) == name][0]
    return [v for run in b["runs"] for v in run.get("values", [])]

x, y = values(fb, name), values(fc, cname)
res = [r for r in json.load(open(out))["results"] if r["name"] == name][0]
mw = res["mann_whitney"]
auto = mannwhitneyu(x, y, alternative="two-sided", method="auto")
ours = "exact" if mw["method"] == "exact" else "asymptotic"
forced = mannwhitneyu(x, y, alternative="two-sided", method=ours)
checks = [
    ("repeats match the producer's rows (%d, %d)" % (len(x), len(y)),
     res["baseline"]["repeats"] == len(x) and res["candidate"]["repeats"] == len(y)),
    ("U of the baseline equals scipy's statistic (%g)" % auto.statistic,
     abs(mw["u_baseline"] - auto.statistic) < 1e-9 and abs(mw["u_candidate"] - (len(x) * len(y) - auto.statistic)) < 1e-9),
    ("two-sided p equals scipy's (%.6g vs %.6g)" % (mw["p_value"], auto.pvalue),
     math.isclose(mw["p_value"], auto.pvalue, rel_tol=1e-7, abs_tol=1e-15)),
    ("method %s is the one scipy's auto choice makes" % mw["method"],
     forced.pvalue == auto.pvalue and forced.statistic == auto.statistic),
]
for what, good in checks:
    print(("ok - " if good else "not ok - ") + "%s %s: %s" % (kind, name, what))
PY
}

# ------------------------------------------------------------ hyperfine
if ! command -v hyperfine >/dev/null; then
	skip "hyperfine: not installed (apt-get install hyperfine)"
else
	hf() { hyperfine -N --style none --runs "$1" --export-json "$2" -n work "$3" >/dev/null 2>"$WORK/hf.err" ||
		notok "hyperfine $3: $(head -c 300 "$WORK/hf.err")"; }
	hf 10 "$WORK/h-fast.json" 'sleep 0.01'
	hf 10 "$WORK/h-slow.json" 'sleep 0.03'
	hf 10 "$WORK/h-again.json" 'sleep 0.01'
	hf 2 "$WORK/h-few.json" 'sleep 0.01'
	fast=$(normalize "hyperfine fast" "$WORK/h-fast.json" "$WORK/n-fast.json")
	slow=$(normalize "hyperfine slow" "$WORK/h-slow.json" "$WORK/n-slow.json")
	again=$(normalize "hyperfine fast again" "$WORK/h-again.json" "$WORK/n-again.json")
	few=$(normalize "hyperfine 2 runs" "$WORK/h-few.json" "$WORK/n-few.json")
	$PY - "$WORK/h-fast.json" "$A/benchmarks/$fast.json" <<'PY'
import json, sys
h = json.load(open(sys.argv[1]))["results"][0]
a = json.load(open(sys.argv[2]))
b = a["benchmarks"][0]
good = b["values"] == h["times"] and b["unit"] == "seconds" and b["direction"] == "lower_is_better" \
    and a["source"]["format"] == "hyperfine" and all(v is None for v in a["environment"].values())
print(("ok - " if good else "not ok - ") + "hyperfine artifact keeps every run's time exactly, in seconds, with an unknown environment")
PY
	compare "sleep 0.01 -> 0.03" "$fast" "$slow" "$WORK/c-reg.json" && {
		expect_status "hyperfine" "$WORK/c-reg.json" work candidate_regression
		oracle hyperfine "$WORK/h-fast.json" "$WORK/h-slow.json" "$WORK/c-reg.json" work
	}
	compare "sleep 0.03 -> 0.01" "$slow" "$fast" "$WORK/c-imp.json" &&
		expect_status "hyperfine reversed" "$WORK/c-imp.json" work candidate_improvement
	compare "A/A same artifact" "$fast" "$fast" "$WORK/c-aa.json" && {
		expect_status "hyperfine A/A (same artifact)" "$WORK/c-aa.json" work no_material_change
		[ "$(field "$WORK/c-aa.json" '["results"][0]["mann_whitney"]["p_value"]')" = "1.0" ] &&
			ok "A/A on one artifact: p = 1" || notok "A/A p: $(field "$WORK/c-aa.json" '["results"][0]["mann_whitney"]')"
	}
	# Two separate runs of the same command on a shared machine: a wide
	# threshold, since other jobs can shift a sleep's wake-up time.
	compare "A/A two runs" "$fast" "$again" "$WORK/c-aa2.json" ', "practical_threshold_percent": 25' && {
		expect_status "hyperfine A/A (two runs, 25% threshold)" "$WORK/c-aa2.json" work no_material_change
		oracle hyperfine "$WORK/h-fast.json" "$WORK/h-again.json" "$WORK/c-aa2.json" work
	}
	compare "2 runs vs 10" "$few" "$fast" "$WORK/c-few.json" &&
		expect_status "hyperfine 2 runs" "$WORK/c-few.json" work insufficient_data
	# Small samples take the exact distribution (scipy too); 3 + 3 repeats
	# can never reach p < 0.05, and the result says so.
	hf 5 "$WORK/h-fast5.json" 'sleep 0.01'
	hf 5 "$WORK/h-slow5.json" 'sleep 0.03'
	hf 3 "$WORK/h-fast3.json" 'sleep 0.01'
	hf 3 "$WORK/h-slow3.json" 'sleep 0.03'
	f5=$(normalize "hyperfine 5 runs" "$WORK/h-fast5.json" "$WORK/n-f5.json")
	s5=$(normalize "hyperfine 5 runs, slow" "$WORK/h-slow5.json" "$WORK/n-s5.json")
	f3=$(normalize "hyperfine 3 runs" "$WORK/h-fast3.json" "$WORK/n-f3.json")
	s3=$(normalize "hyperfine 3 runs, slow" "$WORK/h-slow3.json" "$WORK/n-s3.json")
	compare "5 runs a side" "$f5" "$s5" "$WORK/c-5.json" && {
		oracle hyperfine "$WORK/h-fast5.json" "$WORK/h-slow5.json" "$WORK/c-5.json" work
		grep -q 'fewer than 9 on a side' "$WORK/c-5.json" && ok "5 runs a side: warned under 9 repeats" ||
			notok "5 runs a side: no warning under 9"
	}
	compare "3 runs a side" "$f3" "$s3" "$WORK/c-3.json" && {
		oracle hyperfine "$WORK/h-fast3.json" "$WORK/h-slow3.json" "$WORK/c-3.json" work
		expect_status "hyperfine 3 runs a side" "$WORK/c-3.json" work no_material_change
		grep -q 'smallest possible p is 0.1' "$WORK/c-3.json" && ok "3 runs a side: says p < 0.05 is out of reach" ||
			notok "3 runs a side: no warning about the smallest p"
	}
	# Environments: what the caller passes is checked; a difference is listed.
	k1=$(normalize "hyperfine with environment" "$WORK/h-fast.json" "$WORK/n-e1.json" \
		', "environment": {"kernel": "6.1.0-28-amd64", "compiler": "gcc 12.2.0", "git_dirty": false}')
	k2=$(normalize "hyperfine with another kernel" "$WORK/h-slow.json" "$WORK/n-e2.json" \
		', "environment": {"kernel": "6.5.0-1-amd64", "compiler": "gcc 12.2.0", "git_dirty": false}')
	compare "different kernels" "$k1" "$k2" "$WORK/c-env.json" && {
		expect_status "hyperfine, kernels differ" "$WORK/c-env.json" work not_comparable
		$PY -c '
import json,sys
c=json.load(open(sys.argv[1]))["comparability"]
d=[x for x in c["differences"] if x["field"]=="kernel"]
good = not c["comparable"] and len(c["differences"]) == 1 and d and d[0]["baseline"]=="6.1.0-28-amd64" and d[0]["candidate"]=="6.5.0-1-amd64"
print(("ok - " if good else "not ok - ") + "not_comparable names the kernel with both values, and nothing else")' "$WORK/c-env.json"
	}
	k3=$(normalize "hyperfine from a dirty tree" "$WORK/h-slow.json" "$WORK/n-e3.json" \
		', "environment": {"kernel": "6.1.0-28-amd64", "compiler": "gcc 12.2.0", "git_dirty": true}')
	compare "dirty tree" "$k1" "$k3" "$WORK/c-dirty.json" &&
		expect_status "hyperfine, dirty candidate tree" "$WORK/c-dirty.json" work not_comparable
fi

# ------------------------------------------------------ Google Benchmark
cat > "$WORK/gbench.cc" <<'CC'
// A loop whose length comes from PL_WORK: the same benchmark name, two workloads.
#include <benchmark/benchmark.h>
#include <cstdlib>
static void BM_loop(benchmark::State &state)
{
	const char *w = std::getenv("PL_WORK");
	long n = w ? std::atol(w) : 2000;
	for (auto _ : state) {
		long x = 0;
		for (long i = 0; i < n; i++)
			benchmark::DoNotOptimize(x += i * i);
	}
}
BENCHMARK(BM_loop);
BENCHMARK_MAIN();
CC
if ! g++ -O2 -o "$WORK/gbench" "$WORK/gbench.cc" -lbenchmark -lpthread 2>"$WORK/gxx.err"; then
	skip "Google Benchmark: cannot build against libbenchmark (apt-get install libbenchmark-dev g++): $(head -c 200 "$WORK/gxx.err")"
else
	gb() { PL_WORK=$1 "$WORK/gbench" --benchmark_repetitions=10 --benchmark_min_time=0.05 \
		--benchmark_format=json > "$2" 2>"$WORK/gb.err" || notok "google benchmark run: $(head -c 300 "$WORK/gb.err")"; }
	gb 2000 "$WORK/g-base.json"
	gb 6000 "$WORK/g-slow.json"
	gbase=$(normalize "google benchmark 2000" "$WORK/g-base.json" "$WORK/n-gbase.json")
	gslow=$(normalize "google benchmark 6000" "$WORK/g-slow.json" "$WORK/n-gslow.json")
	$PY - "$WORK/g-base.json" "$A/benchmarks/$gbase.json" <<'PY'
import json, math, sys
g = json.load(open(sys.argv[1]))
a = json.load(open(sys.argv[2]))
rows = [r for r in g["benchmarks"] if r.get("run_type") == "iteration"]
aggs = [r for r in g["benchmarks"] if r.get("run_type") == "aggregate"]
scale = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}
want = [r["real_time"] * scale[r["time_unit"]] for r in rows]
b = a["benchmarks"][0]
checks = [
    ("one benchmark with every repetition (%d) and no aggregate" % len(rows), len(a["benchmarks"]) == 1 and b["repeats"] == len(rows) == 10),
    ("aggregate rows counted as skipped (%d)" % len(aggs), a["skipped"]["aggregate_rows"] == len(aggs) > 0),
    ("values are real_time converted to seconds", all(math.isclose(p, q, rel_tol=1e-15) for p, q in zip(b["values"], want))),
    ("environment copies the context (num_cpus %s, host %s)" % (g["context"]["num_cpus"], g["context"]["host_name"]),
     a["environment"]["num_cpus"] == g["context"]["num_cpus"] and a["environment"]["host_name"] == g["context"]["host_name"]
     and a["environment"]["cpu_model"] is None),
]
for what, good in checks:
    print(("ok - " if good else "not ok - ") + "google benchmark artifact: " + what)
PY
	compare "google benchmark 2000 -> 6000" "$gbase" "$gslow" "$WORK/c-g.json" && {
		expect_status "google benchmark" "$WORK/c-g.json" BM_loop candidate_regression
		oracle google "$WORK/g-base.json" "$WORK/g-slow.json" "$WORK/c-g.json" BM_loop
	}
	compare "google benchmark A/A same artifact" "$gbase" "$gbase" "$WORK/c-gaa.json" &&
		expect_status "google benchmark A/A" "$WORK/c-gaa.json" BM_loop no_material_change
fi

# ------------------------------------------ benchmarks as people run them
# The A/B shapes users make: one hyperfine run over both commands (one
# artifact, two names), two single-command hyperfine files (the command is
# what changed, so the names differ), and Google Benchmark from two
# binaries (the same names).  Each has a known answer, built in: sleep
# 0.03 is slower than sleep 0.01 (a regression), 'sleep 0.02' and
# 'sleep 0.020' (or 0.01 and 0.010) sleep as long (no material change at
# a 25% threshold, as for the A/A runs above); a 3x longer loop is slower,
# a copy of a binary run interleaved with it is not; scipy checks U and p
# on the producers' values.
# pairing WHAT OUT WANT: the result's pairing is WANT.
pairing() {
	got=$(field "$2" '["pairing"]')
	[ "$got" = "$3" ] && ok "$1: paired $got" || notok "$1: paired $got, wanted $3"
}
if command -v hyperfine >/dev/null; then
	hyperfine -N --style none --runs 10 --export-json "$WORK/h-ab.json" 'sleep 0.01' 'sleep 0.03' \
		>/dev/null 2>"$WORK/hf.err" || notok "hyperfine A/B: $(head -c 300 "$WORK/hf.err")"
	hyperfine -N --style none --runs 10 --export-json "$WORK/h-aa.json" 'sleep 0.02' 'sleep 0.020' \
		>/dev/null 2>"$WORK/hf.err" || notok "hyperfine A/A: $(head -c 300 "$WORK/hf.err")"
	ab=$(normalize "hyperfine, one file with two commands" "$WORK/h-ab.json" "$WORK/n-ab.json")
	aa=$(normalize "hyperfine, one file with two equal commands" "$WORK/h-aa.json" "$WORK/n-aa.json")
	compare "one file, two commands" "$ab" "$ab" "$WORK/c-ab.json" \
		', "baseline_name": "sleep 0.01", "candidate_name": "sleep 0.03"' && {
		expect_status "one hyperfine file, sleep 0.01 vs sleep 0.03" "$WORK/c-ab.json" "sleep 0.01" candidate_regression
		pairing "one hyperfine file, two commands" "$WORK/c-ab.json" explicit
		oracle hyperfine "$WORK/h-ab.json" "$WORK/h-ab.json" "$WORK/c-ab.json" "sleep 0.01" "sleep 0.03"
		grep -q 'A/A' "$WORK/c-ab.json" && notok "two commands of one file called an A/A check" ||
			ok "two commands of one file are not called an A/A check"
	}
	# candidate_id may be left out: it is then the baseline's artifact.
	compare "one file, equal commands" "$aa" "" "$WORK/c-aa1.json" \
		', "baseline_name": "sleep 0.02", "candidate_name": "sleep 0.020", "practical_threshold_percent": 25' && {
		expect_status "one hyperfine file, sleep 0.02 vs sleep 0.020" "$WORK/c-aa1.json" "sleep 0.02" no_material_change
		oracle hyperfine "$WORK/h-aa.json" "$WORK/h-aa.json" "$WORK/c-aa1.json" "sleep 0.02" "sleep 0.020"
	}
	if ! call compare_benchmarks "{\"baseline_id\": \"$ab\"}" "$WORK/e.json" && grep -q "'sleep 0.03'" "$WORK/err" &&
		grep -q 'baseline_name and candidate_name' "$WORK/err" && grep -q '"exit_code":2' "$WORK/err"; then
		ok "one artifact and no names: an error listing its benchmarks and the arguments to pass"
	else
		notok "one artifact, no names: $(cat "$WORK/err")"
	fi
	# Two files, one command each, named by the command (no -n), as people run it.
	for cmd in 'sleep 0.01' 'sleep 0.03' 'sleep 0.010'; do
		hyperfine -N --style none --runs 10 --export-json "$WORK/h-$(echo "$cmd" | tr -d ' .').json" "$cmd" \
			>/dev/null 2>"$WORK/hf.err" || notok "hyperfine $cmd: $(head -c 300 "$WORK/hf.err")"
	done
	s01=$(normalize "hyperfine sleep 0.01" "$WORK/h-sleep001.json" "$WORK/n-s01.json")
	s03=$(normalize "hyperfine sleep 0.03" "$WORK/h-sleep003.json" "$WORK/n-s03.json")
	s010=$(normalize "hyperfine sleep 0.010" "$WORK/h-sleep0010.json" "$WORK/n-s010.json")
	compare "two files, different commands" "$s01" "$s03" "$WORK/c-two.json" && {
		expect_status "two hyperfine files, sleep 0.01 vs 0.03" "$WORK/c-two.json" "sleep 0.01" candidate_regression
		pairing "two single-command files" "$WORK/c-two.json" only_benchmark_each_side
		grep -q "the names differ (baseline 'sleep 0.01', candidate 'sleep 0.03')" "$WORK/c-two.json" &&
			ok "two single-command files: the result says the names differ" ||
			notok "two single-command files: no word that the names differ"
		oracle hyperfine "$WORK/h-sleep001.json" "$WORK/h-sleep003.json" "$WORK/c-two.json" "sleep 0.01" "sleep 0.03"
	}
	compare "two files, equal commands" "$s01" "$s010" "$WORK/c-two-aa.json" ', "practical_threshold_percent": 25' && {
		expect_status "two hyperfine files, sleep 0.01 vs 0.010" "$WORK/c-two-aa.json" "sleep 0.01" no_material_change
		oracle hyperfine "$WORK/h-sleep001.json" "$WORK/h-sleep0010.json" "$WORK/c-two-aa.json" "sleep 0.01" "sleep 0.010"
	}
	# Explicit pairing across artifacts whose names differ, among several.
	compare "across artifacts, explicit" "$ab" "$s03" "$WORK/c-x.json" \
		', "baseline_name": "sleep 0.01", "candidate_name": "sleep 0.03"' && {
		expect_status "explicit pair across artifacts" "$WORK/c-x.json" "sleep 0.01" candidate_regression
		oracle hyperfine "$WORK/h-ab.json" "$WORK/h-sleep003.json" "$WORK/c-x.json" "sleep 0.01" "sleep 0.03"
	}
	# Several a side, no common name, no pairing: never a guess.
	if ! call compare_benchmarks "{\"baseline_id\": \"$ab\", \"candidate_id\": \"$aa\"}" "$WORK/e.json" &&
		grep -q "baseline: 'sleep 0.01', 'sleep 0.03'; candidate: 'sleep 0.02', 'sleep 0.020'" "$WORK/err" &&
		grep -q 'pass baseline_name and candidate_name' "$WORK/err"; then
		ok "several benchmarks a side, no common name: an error listing both sides' names and the arguments"
	else
		notok "several a side: $(cat "$WORK/err")"
	fi
	if ! call compare_benchmarks "{\"baseline_id\": \"$ab\", \"candidate_id\": \"$s03\", \"baseline_name\": \"sleep 0.01\"}" \
		"$WORK/e.json" && grep -q 'go together' "$WORK/err"; then
		ok "baseline_name without candidate_name is refused"
	else
		notok "baseline_name alone: $(cat "$WORK/err")"
	fi
fi
# Google Benchmark: two binaries (the loop length built in), the same names.
gb_binary() {
	sed "s/std::atol(w) : 2000/std::atol(w) : $1/; s/getenv(\"PL_WORK\")/getenv(\"PL_NO_SUCH_VARIABLE\")/" \
		"$WORK/gbench.cc" > "$WORK/gb-$1.cc" && grep -q ": $1;" "$WORK/gb-$1.cc" &&
		g++ -O2 -o "$WORK/gbench-$1" "$WORK/gb-$1.cc" -lbenchmark -lpthread 2>"$WORK/gxx.err"
}
if [ -x "$WORK/gbench" ] && gb_binary 2000 && gb_binary 6000; then
	cp "$WORK/gbench-2000" "$WORK/gbench-2000b"
	for b in 2000 6000; do
		"$WORK/gbench-$b" --benchmark_repetitions=10 --benchmark_min_time=0.05 --benchmark_format=json \
			> "$WORK/gb-$b.json" 2>"$WORK/gb.err" || notok "gbench-$b: $(head -c 300 "$WORK/gb.err")"
	done
	# The no-change pair runs interleaved (A, B, A, B, ... one repetition a
	# run), as the interpretation advises, so that the load of a shared
	# machine falls on both sides alike; each side's rows are then one file.
	for i in 1 2 3 4 5 6 7 8 9 10; do
		for b in 2000 2000b; do
			"$WORK/gbench-$b" --benchmark_min_time=0.05 --benchmark_format=json > "$WORK/gbi-$b-$i.json" \
				2>"$WORK/gb.err" || notok "gbench-$b: $(head -c 300 "$WORK/gb.err")"
		done
	done
	for b in 2000 2000b; do
		$PY - "$WORK/gb-i$b.json" "$WORK"/gbi-$b-*.json <<'PY'
import json, sys
runs = [json.load(open(f)) for f in sys.argv[2:]]
out = dict(runs[0], benchmarks=[r for run in runs for r in run["benchmarks"]])
json.dump(out, open(sys.argv[1], "w"), indent=1)
PY
	done
	ga=$(normalize "google benchmark, binary 2000" "$WORK/gb-2000.json" "$WORK/n-gb2000.json")
	gs=$(normalize "google benchmark, binary 6000" "$WORK/gb-6000.json" "$WORK/n-gb6000.json")
	gi=$(normalize "google benchmark, binary 2000 interleaved" "$WORK/gb-i2000.json" "$WORK/n-gbi2000.json")
	gc=$(normalize "google benchmark, its copy interleaved" "$WORK/gb-i2000b.json" "$WORK/n-gbi2000b.json")
	compare "google benchmark, two binaries" "$ga" "$gs" "$WORK/c-gbin.json" && {
		expect_status "google benchmark, binaries 2000 vs 6000" "$WORK/c-gbin.json" BM_loop candidate_regression
		pairing "google benchmark, two binaries" "$WORK/c-gbin.json" by_name
		oracle google "$WORK/gb-2000.json" "$WORK/gb-6000.json" "$WORK/c-gbin.json" BM_loop
	}
	compare "google benchmark, binary and its copy" "$gi" "$gc" "$WORK/c-gcopy.json" ', "practical_threshold_percent": 25' && {
		expect_status "google benchmark, binary 2000 vs its copy (interleaved)" "$WORK/c-gcopy.json" BM_loop no_material_change
		oracle google "$WORK/gb-i2000.json" "$WORK/gb-i2000b.json" "$WORK/c-gcopy.json" BM_loop
	}
else
	skip "Google Benchmark, two binaries: cannot build against libbenchmark: $(head -c 200 "$WORK/gxx.err" 2>/dev/null)"
fi

# ---------------------------------------------- pyperf (hand-made fixture)
pbase=$(normalize "pyperf fixture baseline" "$REPO/fixtures/benchmarks/pyperf-baseline.json" "$WORK/n-pbase.json")
pcand=$(normalize "pyperf fixture candidate" "$REPO/fixtures/benchmarks/pyperf-candidate.json" "$WORK/n-pcand.json")
compare "pyperf fixtures" "$pbase" "$pcand" "$WORK/c-p.json" && {
	expect_status "pyperf" "$WORK/c-p.json" json_dumps candidate_regression
	expect_status "pyperf" "$WORK/c-p.json" json_loads no_material_change
	for name in json_dumps json_loads; do
		oracle pyperf "$REPO/fixtures/benchmarks/pyperf-baseline.json" \
			"$REPO/fixtures/benchmarks/pyperf-candidate.json" "$WORK/c-p.json" "$name"
	done
}
# Paging: one benchmark per page, the cursor leads to the other.
if call compare_benchmarks "{\"baseline_id\": \"$pbase\", \"candidate_id\": \"$pcand\", \"limit\": 1}" "$WORK/p1.json"; then
	cur=$(field "$WORK/p1.json" '["page"]["next_cursor"]')
	if call compare_benchmarks "{\"baseline_id\": \"$pbase\", \"candidate_id\": \"$pcand\", \"limit\": 1, \"cursor\": \"$cur\"}" "$WORK/p2.json" &&
		[ "$(field "$WORK/p1.json" '["results"][0]["name"]')" = json_dumps ] &&
		[ "$(field "$WORK/p2.json" '["results"][0]["name"]')" = json_loads ] &&
		[ "$(field "$WORK/p2.json" '["page"]["next_cursor"]')" = None ]; then
		ok "compare pages chain: json_dumps, then json_loads, then the end"
	else
		notok "compare paging: $(cat "$WORK/err")"
	fi
fi

# ------------------------------------ the same calls over MCP (sandboxed)
# The server's tools/call runs in a sandboxed worker; the answers must be
# the CLI's: the same benchmark ids and the same statuses.
WORK="$WORK" timeout 120 $PY - "$(cd "$BUILD" && pwd)/perflens-mcp" "$REPO/fixtures/benchmarks" \
	"$pbase" "$pcand" "$WORK/c-p.json" <<'PY'
import json, os, sys
sys.path.insert(0, os.path.join(os.environ.get("REPO", os.getcwd()), "tests", "integration"))
from mcp_client import *  # the shared MCP test client (mcp_client.py)
server, fixtures, pbase, pcand, cli_out = sys.argv[1:6]
s = Stdio([server, "--allowed-root", fixtures, "--artifact-root", os.path.join(WORK, "mcp-art"),
           "--allow-writes"], "bench-mcp")
s.initialize()
ids = []
for f in ("pyperf-baseline.json", "pyperf-candidate.json"):
    r = s.call("normalize_benchmark", {"path": os.path.join(fixtures, f)})
    sc = (r or {}).get("result", {}).get("structuredContent", {})
    ids.append(sc.get("benchmark_id"))
check("MCP normalize_benchmark gives the CLI's ids", ids == [pbase, pcand], short(r))
r = s.call("compare_benchmarks", {"baseline_id": pbase, "candidate_id": pcand})
sc = (r or {}).get("result", {}).get("structuredContent", {})
cli = json.load(open(cli_out))
check("MCP compare_benchmarks answers as the CLI does (statuses, U, p, interval)",
      sc.get("results") == cli["results"], short(r))
r = s.call("compare_benchmarks", {"baseline_id": pbase, "baseline_name": "json_dumps", "candidate_name": "json_loads"})
sc = (r or {}).get("result", {}).get("structuredContent", {})
res = (sc.get("results") or [{}])[0]
check("MCP compare_benchmarks pairs two benchmarks of one artifact (json_dumps with json_loads)",
      sc.get("pairing") == "explicit" and sc.get("candidate_id") == pbase and res.get("name") == "json_dumps"
      and res.get("candidate_name") == "json_loads", short(r))
r = s.call("compare_benchmarks", {"baseline_id": pbase, "candidate_id": pcand, "candidate_name": "json_loads"})
check("MCP compare_benchmarks: candidate_name alone is an error result saying what goes with it",
      is_tool_error(r, "baseline_name"), short(r))
r = s.call("normalize_benchmark", {"path": "/etc/passwd"})
check("MCP normalize_benchmark refuses a path outside the allowed root",
      (r or {}).get("result", {}).get("isError") is True, short(r))
check("MCP server exits cleanly", s.close() == 0, s.stderr()[-300:])
PY

# ------------------------------------------------ determinism and errors
mkdir -p "$WORK/b"
"$PERFLENS" call normalize_benchmark "{\"path\": \"$REPO/fixtures/benchmarks/pyperf-baseline.json\"}" \
	--artifact-root "$WORK/b" > "$WORK/again.json" 2>/dev/null
if cmp -s "$A/benchmarks/$pbase.json" "$WORK/b/benchmarks/$pbase.json"; then
	ok "the same file normalized twice gives the same id ($pbase) and identical bytes"
else
	notok "normalizing twice differs"
fi
call compare_benchmarks "{\"baseline_id\": \"$pbase\", \"candidate_id\": \"$pcand\"}" "$WORK/c-p2.json"
cmp -s "$WORK/c-p.json" "$WORK/c-p2.json" && ok "compare is deterministic (bootstrap with a fixed seed)" ||
	notok "compare differs between two calls"
call list_artifacts '{"kind": "benchmark"}' "$WORK/l.json" &&
	validate schemas/tools/list_artifacts.json:outputSchema "$WORK/l.json" &&
	$PY -c '
import json,sys
l=json.load(open(sys.argv[1]))["artifacts"]
sys.exit(0 if any(a["path"]=="benchmarks/%s.json" % sys.argv[2] and a["kind"]=="benchmark" for a in l) else 1)' "$WORK/l.json" "$pbase" &&
	ok "list_artifacts(kind=benchmark) lists the benchmark artifacts" || notok "list_artifacts: $(head -c 300 "$WORK/l.json")"
call read_artifact_page "{\"artifact\": \"benchmarks/$pbase.json\", \"limit_bytes\": 200}" "$WORK/r.json" &&
	grep -q 'perflens.benchmark' "$WORK/r.json" && ok "read_artifact_page reads a benchmark artifact" ||
	notok "read_artifact_page on benchmarks/: $(cat "$WORK/err")"
if ! call normalize_benchmark "{\"path\": \"$REPO/fixtures/benchmarks/pyperf-baseline.json\", \"name\": \"nope\"}" "$WORK/e.json" &&
	grep -q "json_dumps" "$WORK/err" && grep -q '"exit_code":2' "$WORK/err"; then
	ok "an absent name is refused (exit 2) with the names listed"
else
	notok "absent name: $(cat "$WORK/err")"
fi
echo '{"something": 1}' > "$WORK/other.json"
if ! call normalize_benchmark "{\"path\": \"$WORK/other.json\"}" "$WORK/e.json" && grep -q '"exit_code":3' "$WORK/err" &&
	grep -q 'hyperfine' "$WORK/err"; then
	ok "a file of another shape is refused (exit 3) naming the formats read"
else
	notok "unknown shape: $(cat "$WORK/err")"
fi
if ! call compare_benchmarks '{"baseline_id": "bm-00000000000000000000", "candidate_id": "bm-00000000000000000000"}' "$WORK/e.json" &&
	grep -q 'normalize_benchmark' "$WORK/err"; then
	ok "an unknown benchmark id is refused with the call to make"
else
	notok "unknown id: $(cat "$WORK/err")"
fi

# ------------------------------------------- plain values, through MCP
# A fixed-duration program's own metric (ops per second, higher is
# better), given as plain repeated values to perflens-mcp as an agent
# gives them: inline for the baseline, a file of numbers for the
# candidate.  Oracles: scipy's mannwhitneyu on the same numbers, the
# schemas, and the construction (the candidate's median is 10% higher,
# so higher_is_better is an improvement and lower_is_better a regression).
mkdir -p "$WORK/plain"
printf '# ops/s, one run a line\n1100\n1111\n1089\n1104\n1096\n1102\n1098\n1107\n1093\n1100\n' >"$WORK/plain/cand.txt"
WORK="$WORK" timeout 120 $PY - "$(cd "$BUILD" && pwd)/perflens-mcp" "$WORK/plain" "$WORK/plain-art" <<'PY'
import json, math, os, sys
sys.path.insert(0, os.path.join(os.environ.get("REPO", os.getcwd()), "tests", "integration"))
from mcp_client import *  # the shared MCP test client (mcp_client.py)
import jsonschema
from scipy.stats import mannwhitneyu

SERVER, PLAIN, ART = sys.argv[1:4]
base = [1000, 1010, 990, 1004, 996, 1002, 998, 1007, 993, 1000]
cand = [float(l) for l in open(os.path.join(PLAIN, "cand.txt")) if l.strip() and not l.startswith("#")]
s = Stdio([SERVER, "--allowed-root", PLAIN, "--artifact-root", ART, "--allow-writes"], "plain-mcp")
s.initialize()
tools = {t["name"]: t for t in s.request("tools/list")["result"]["tools"]}
artifact_schema = json.load(open(os.path.join(os.environ.get("REPO", "."), "schemas/benchmark.schema.json")))


def call(name, args):
    r = s.call(name, args)
    sc = (r or {}).get("result", {}).get("structuredContent")
    try:
        jsonschema.validate(sc, tools[name]["outputSchema"])
    except Exception as e:
        check("plain values: %s validates" % name, False, "%s %s" % (short(r), str(e)[:200]))
        return None
    return sc


plain = {"name": "ops_per_second", "unit": "ops/s"}
for direction, want in (("higher_is_better", "candidate_improvement"), ("lower_is_better", "candidate_regression")):
    b = call("normalize_benchmark", dict(plain, values=base, direction=direction))
    c = call("normalize_benchmark", dict(plain, path=os.path.join(PLAIN, "cand.txt"), format="values", direction=direction))
    if not (b and c):
        continue
    art = json.load(open(os.path.join(ART, "benchmarks", b["benchmark_id"] + ".json")))
    try:
        jsonschema.validate(art, artifact_schema)
        art_ok = art["benchmarks"][0]["values"] == [float(v) for v in base]
    except Exception as e:
        art_ok = str(e)[:200]
    check("plain values %s: normalized (format %s, unit %s, %d and %d repeats); the artifact keeps every value and validates"
          % (direction, b["format"], b["benchmarks"][0]["unit"], b["benchmarks"][0]["repeats"], c["benchmarks"][0]["repeats"]),
          art_ok is True and b["format"] == "values" and b["benchmarks"][0]["metric"] == "plain" and
          b["benchmarks"][0]["direction"] == direction and c["benchmarks"][0]["repeats"] == len(cand), art_ok)
    cmp = call("compare_benchmarks", {"baseline_id": b["benchmark_id"], "candidate_id": c["benchmark_id"]})
    res = cmp and cmp["results"][0]
    if not res:
        continue
    auto = mannwhitneyu(base, cand, alternative="two-sided", method="auto")
    mw = res["mann_whitney"]
    check("plain values %s: compare_benchmarks says %s (change %+.1f%%), U and p equal scipy's (%g, %.4g)"
          % (direction, res["status"], res["change_percent"], auto.statistic, auto.pvalue),
          res["status"] == want and abs(mw["u_baseline"] - auto.statistic) < 1e-9 and
          math.isclose(mw["p_value"], auto.pvalue, rel_tol=1e-7, abs_tol=1e-15), short(res, 500))
r = s.call("normalize_benchmark", dict(plain, values=base))
check("plain values without a direction: an error naming both choices",
      is_tool_error(r, "higher_is_better", "lower_is_better"), short(r))
r = s.call("normalize_benchmark", {"values": base, "path": os.path.join(PLAIN, "cand.txt"), "name": "x", "unit": "u",
                                   "direction": "lower_is_better"})
check("plain values: path and values together are refused", is_tool_error(r, "not both"), short(r))
s.close()
sys.exit(0)
PY
