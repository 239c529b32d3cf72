# test_experiment.sh - run_experiment through perflens-mcp over stdio (as an
# agent calls it) and the CLI, on a program of our own with known effects:
# `work N` does N units of busy work and prints the milliseconds it took.
#  - a candidate doing twice the work: a regression, by wall time and by
#    the printed metric, the interval excluding 1, CPU time near 2x; the
#    statistics checked against scipy (Mann-Whitney p, ratio of medians)
#    on the artifact's raw values; the artifact validates against
#    schemas/benchmark.schema.json and compare_benchmarks and
#    list_artifacts read it; progress notifications; the seed repeats the
#    block order; nothing left in the staging folders;
#  - the same command on both sides: no difference (or too noisy), never a
#    verdict either way;
#  - a candidate that crashes on its run 3: reported in excluded_runs, not
#    in the sample;
#  - candidate_id round trip: classify (a candidate proposes the
#    experiment, its phrase under needs) -> run_experiment -> classify
#    shows it confirmed by that experiment, and build_report says so;
#    (that run also under perf stat: task_clock halves);
#  - the gates: no phrase, a program outside the allowed roots.
# The machine is shared and loaded: effects are 2x, bounds wide, and the
# no-difference case uses a 10 % threshold.
# run.sh: timing
. tests/integration/lib.sh
PY=/usr/bin/python3
if ! $PY -c 'import jsonschema, scipy.stats' 2>/dev/null; then
	skip "experiment: /usr/bin/python3 lacks jsonschema or scipy (apt-get install python3-jsonschema python3-scipy)"
	exit 0
fi
if ! command -v perf >/dev/null 2>&1; then
	skip "experiment: perf is not installed (the collection gates need it)"
	exit 0
fi
mkdir -p "$WORK/bin" "$WORK/cwd"
cat >"$WORK/work.c" <<'EOF'
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
/* work N [CRASH_ON COUNTER]: N units of busy work, then "result ok" and
 * its own time; with CRASH_ON, the run numbered so in COUNTER aborts. */
int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 100;
	volatile unsigned long x = 1;
	struct timespec a, b;
	if (argc > 3) {
		FILE *f = fopen(argv[3], "a+");
		long c = 0;
		char line[16];
		rewind(f);
		while (fgets(line, sizeof(line), f))
			c++;
		fputs("run\n", f);
		fclose(f);
		if (c + 1 == atol(argv[2])) {
			fputs("crashing on purpose\n", stderr);
			abort();
		}
	}
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (long i = 0; i < n * 100000; i++)
		x = x * 6364136223846793005ul + 1442695040888963407ul;
	clock_gettime(CLOCK_MONOTONIC, &b);
	printf("result ok\nelapsed_ms: %.3f\n", (b.tv_sec - a.tv_sec) * 1e3 + (b.tv_nsec - a.tv_nsec) / 1e6);
	return 0;
}
EOF
gcc -O1 -o "$WORK/bin/work" "$WORK/work.c" 2>"$WORK/err" || notok "experiment: gcc failed: $(oneline "$WORK/err")"

WORK="$WORK" HERE="$REPO/tests/integration" BUILD_DIR="$(cd "$BUILD" && pwd)" timeout 300 $PY - <<'PY'
import glob, json, os, sys
import numpy as np
from scipy import stats
import jsonschema
sys.path.insert(0, os.environ["HERE"])
from mcp_client import *  # noqa: F401,F403

build, work, repo = os.environ["BUILD_DIR"], WORK, os.environ["REPO"]
P = "I_EXPLICITLY_AUTHORIZE_TARGET_PROFILING"
art = work + "/art"
W = work + "/bin/work"
METRIC = {"pattern": "^elapsed_ms: ([0-9.]+)$", "name": "elapsed", "unit": "ms", "direction": "lower_is_better"}
bench_schema = json.load(open(repo + "/schemas/benchmark.schema.json"))
s = Stdio([build + "/perflens-mcp", "--allowed-root", work + "/bin", "--allowed-root", work + "/cwd",
           "--allowed-root", repo + "/fixtures", "--artifact-root", art,
           "--allow-writes", "--allow-process-execution", "--allow-collection"], "experiment")
s.initialize()
s.check_outputs()


def side(n, *extra):
    return {"executable": W, "arguments": [str(n)] + list(extra), "working_directory": work + "/cwd"}


def experiment(args, meta=None):
    r = s.call("run_experiment", dict(args, authorization=P), timeout=240, meta=meta)["result"]
    return r, r.get("structuredContent") or {}


def verdict(sc, measure):
    return next((v for v in sc.get("verdicts", []) if v["measure"] == measure), {})


def values(doc, name):
    return next(b["values"] for b in doc["benchmarks"] if b["name"] == name)


# --- a candidate doing twice the work
r, sc = experiment({"baseline": side(1200), "candidate": side(2400), "runs": 10, "warmup": 1, "seed": 7,
                    "metric": METRIC}, meta={"progressToken": "exp-1"})
ok = not r.get("isError") and sc.get("experiment_id")
check("experiment MCP: twice the work runs from the launcher, 10 runs a side used",
      ok and sc["where"] == "launcher" and sc["used_runs"] == {"baseline": 10, "candidate": 10}
      and not sc["excluded_runs"], short(r))
if ok:
    doc = json.load(open("%s/benchmarks/%s.json" % (art, sc["experiment_id"])))
    errs = list(jsonschema.Draft202012Validator(bench_schema).iter_errors(doc))
    check("experiment MCP: the artifact validates against schemas/benchmark.schema.json",
          not errs, errs[0].message if errs else "")
    runs = doc["experiment"]["runs"]
    blocks = sc["blocks"]
    check("experiment MCP: 11 complete blocks (1 warmup), each side once per block in the recorded order",
          len(blocks) == 11 and len(runs) == 22 and sum(x["warmup"] for x in runs) == 2 and
          all([x["side"] for x in runs if x["block"] == b] == blocks[b].split(",") for b in range(11)),
          blocks)
    for m, lo, hi in (("wall_time", 1.3, 3.5), ("elapsed", 1.3, 3.5), ("user_time", 1.5, 2.7)):
        v = verdict(sc, m)
        ci = v.get("confidence_interval") or {}
        check("experiment MCP: %s is a regression, ratio %.2f in [%.1f, %.1f], interval [%.2f, %.2f] above 1"
              % (m, v.get("ratio_of_medians") or 0, lo, hi, ci.get("low", 0), ci.get("high", 0)),
              v.get("verdict") == "regression" and lo <= v["ratio_of_medians"] <= hi and ci["low"] > 1, v)
    for m in ("wall_time", "elapsed"):
        b, c = values(doc, "baseline " + m), values(doc, "candidate " + m)
        v = verdict(sc, m)
        p = stats.mannwhitneyu(b, c, alternative="two-sided").pvalue
        ratio = float(np.median(c) / np.median(b))
        check("experiment MCP: %s p and ratio agree with scipy (p %.6g vs %.6g, ratio %.6g vs %.6g)"
              % (m, v["p_value"], p, v["ratio_of_medians"], ratio),
              abs(v["p_value"] - p) <= 1e-9 + 1e-6 * p and abs(v["ratio_of_medians"] - ratio) <= 1e-9 * ratio,
              v)
    prog = [n["params"] for n in s.notes if n.get("method") == "notifications/progress"
            and n["params"].get("progressToken") == "exp-1"]
    check("experiment MCP: progress notifications (%d)" % len(prog), len(prog) >= 1, s.notes[-3:])
    cb = s.call("compare_benchmarks", {"baseline_id": sc["experiment_id"], "baseline_name": "baseline wall_time",
                                       "candidate_name": "candidate wall_time"}, timeout=60)["result"]
    cbs = cb.get("structuredContent") or {}
    check("experiment MCP: compare_benchmarks reads the experiment (candidate_regression)",
          [x["status"] for x in cbs.get("results", [])] == ["candidate_regression"], short(cb))
    la = s.call("list_artifacts", {"kind": "benchmark"}, timeout=60)["result"]
    check("experiment MCP: list_artifacts lists it", sc["experiment_id"] in json.dumps(la.get("structuredContent")),
          short(la))
    step = (sc.get("next_steps") or [{}])[0]
    check("experiment MCP: next_steps give the compare_benchmarks call of the metric",
          step.get("tool") == "compare_benchmarks" and step["arguments"].get("candidate_name") == "candidate elapsed",
          sc.get("next_steps"))

# --- the same command on both sides, the same seed
r, same = experiment({"baseline": side(400), "candidate": side(400), "runs": 10, "warmup": 1, "seed": 7,
                      "practical_threshold_percent": 10, "metric": METRIC})
verdicts = {v["measure"]: v["verdict"] for v in same.get("verdicts", [])}
check("experiment MCP: the same command on both sides: no difference or too noisy, never a verdict (%s)"
      % verdicts, not r.get("isError") and all(verdicts.get(m) in ("no_difference", "too_noisy")
                                                for m in ("wall_time", "user_time", "elapsed")), short(r))
check("experiment MCP: the same seed gives the same block order", same.get("blocks") == sc.get("blocks"),
      (same.get("blocks"), sc.get("blocks")))
tn = [v for v in same.get("verdicts", []) if v["verdict"] == "too_noisy"]
check("experiment MCP: a too_noisy verdict says how many runs would resolve it",
      all(isinstance(v["runs_to_resolve"], int) and v["runs_to_resolve"] > 10 for v in tn), tn)

# --- a candidate that crashes on its run 3
counter = work + "/cwd/counter"
r, cr = experiment({"baseline": side(200), "candidate": side(200, "3", counter), "runs": 6, "warmup": 0,
                    "metric": METRIC})
ex = cr.get("excluded_runs") or []
check("experiment MCP: the crash on run 3 is reported (candidate, run 3, failed, signal 6)",
      len(ex) == 1 and ex[0]["side"] == "candidate" and ex[0]["run"] == 3 and ex[0]["status"] == "failed"
      and "signal 6" in ex[0]["reason"] and "crashing on purpose" in ex[0]["reason"], ex)
if cr.get("experiment_id"):
    doc = json.load(open("%s/benchmarks/%s.json" % (art, cr["experiment_id"])))
    check("experiment MCP: ... and never averaged in (5 candidate values, 6 baseline)",
          cr["used_runs"] == {"baseline": 6, "candidate": 5} and len(values(doc, "candidate wall_time")) == 5
          and len(values(doc, "baseline wall_time")) == 6, cr.get("used_runs"))

# --- candidate_id round trip
a = s.call("analyze_profile", {"path": repo + "/fixtures/investigation-x86/capture.txt.gz"}, timeout=120)["result"]
an = (a.get("structuredContent") or {}).get("analysis_id")
cl = (s.call("classify_hotspots", {"analysis_id": an, "limit": 50}, timeout=60)["result"].get("structuredContent") or {})
cand = next((c for c in cl.get("candidates", []) if c["rule"]["group"] == "hotspot"), None)
prop = [st for st in (cand or {}).get("next_steps", []) if st.get("tool") == "run_experiment"]
check("experiment MCP: a hotspot candidate proposes run_experiment, the phrase under needs, never its value",
      cand and prop and "authorization" in prop[0].get("needs", []) and P not in json.dumps(cl)
      and prop[0]["arguments"] == {"analysis_id": an, "candidate_id": cand["candidate_id"]}, prop)
if cand:
    r, rt = experiment({"baseline": side(1600), "candidate": side(800), "runs": 8, "warmup": 1, "metric": METRIC,
                        "perf_counters": True, "analysis_id": an, "candidate_id": cand["candidate_id"]})
    check("experiment MCP: half the work confirms the candidate",
          (rt.get("candidate") or {}).get("status") == "confirmed", short(r))
    tc = verdict(rt, "task_clock")
    check("experiment MCP: perf_counters: task_clock an improvement, ratio %.2f in [0.3, 0.7]"
          % (tc.get("ratio_of_medians") or 0), tc.get("verdict") == "improvement" and
          0.3 <= tc["ratio_of_medians"] <= 0.7 and verdict(rt, "page_faults").get("verdict"), tc)
    cl2 = (s.call("classify_hotspots", {"analysis_id": an, "limit": 50}, timeout=60)["result"]
           .get("structuredContent") or {})
    c2 = next((c for c in cl2.get("candidates", []) if c["candidate_id"] == cand["candidate_id"]), {})
    check("experiment MCP: classify then shows it confirmed by that experiment, with its figure",
          c2.get("status") == "confirmed" and (c2.get("experiment") or {}).get("experiment_id") == rt.get("experiment_id")
          and "elapsed: improvement" in c2["experiment"]["figure"]
          and not any(st.get("tool") == "run_experiment" for st in c2["next_steps"]), c2.get("experiment"))
    others = [c["status"] for c in cl2.get("candidates", []) if c["candidate_id"] != cand["candidate_id"]]
    check("experiment MCP: the other candidates stay candidates", set(others) <= {"candidate"}, others)
    rep = s.call("build_report", {"analysis_id": an, "problem": "the investigation workload is slow",
                                  "metric": "wall time, s, lower is better"}, timeout=120)["result"]
    path = (rep.get("structuredContent") or {}).get("path", "")
    md = open(path).read() if os.path.exists(path) else ""
    check("experiment MCP: build_report says confirmed by experiment %s" % rt.get("experiment_id"),
          "Status: confirmed by experiment `%s`" % rt.get("experiment_id") in md, short(rep))

# --- the gates
r = s.call("run_experiment", {"baseline": side(1), "candidate": side(1)}, timeout=60)
check("experiment MCP: no phrase, no run", is_tool_error(r, "authorization phrase"), short(r))
r = s.call("run_experiment", {"baseline": {"executable": "/bin/true"}, "candidate": side(1), "authorization": P},
           timeout=60)
check("experiment MCP: a program outside the allowed roots is refused", is_tool_error(r, "path_refused"), short(r))
r = s.call("run_experiment", {"baseline": {"executable": W, "shell": "x"}, "candidate": side(1), "authorization": P},
           timeout=60)
check("experiment MCP: an unknown key of a side is refused", is_tool_error(r, "shell"), short(r))
left = glob.glob(art + "/collections/.staging-*")
check("experiment MCP: no staging folder left behind", not left, left)
s.close()
PY
[ $? -eq 0 ] || notok "experiment MCP: the script ended early (see above)"

# --- the CLI: from this process, the same tool
"$PERFLENS" experiment --artifact-root "$WORK/art-cli" --allowed-root "$WORK/bin" \
	--authorize-target I_EXPLICITLY_AUTHORIZE_TARGET_PROFILING --runs 5 --warmup 0 --no-check-output \
	--baseline "{\"executable\": \"$WORK/bin/work\", \"arguments\": [\"300\"]}" \
	--candidate "{\"executable\": \"$WORK/bin/work\", \"arguments\": [\"600\"]}" \
	--format json >"$WORK/cli.json" 2>"$WORK/cli.err"
if $PY - "$WORK/cli.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
v = {x["measure"]: x for x in d["verdicts"]}
sys.exit(0 if d["where"] == "this_process" and v["user_time"]["verdict"] == "regression"
         and 1.5 <= v["user_time"]["ratio_of_medians"] <= 2.7 else 1)
PY
then
	ok "experiment CLI: perflens experiment runs from this process (check_output off); user time a regression near 2x"
else
	notok "experiment CLI: $(oneline "$WORK/cli.json") $(oneline "$WORK/cli.err")"
fi
