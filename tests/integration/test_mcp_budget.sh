# test_mcp_budget.sh - what an agent pays to read PerfLens, measured through
# perflens-mcp over stdio as a client sees it (tests/integration/mcp_client.py).
#
#  - tools/list: the part a model reads (each tool's name, description and
#    inputSchema, as compact JSON) must stay within 20 KB; the output
#    schemas, which clients use to check results, are printed beside it and
#    stay complete (every one is a valid JSON Schema 2020-12, checked with
#    python3-jsonschema, the oracle here).
#  - classify_hotspots: a first page (default limit) of a typical profile
#    (the peers' single-event captures, up to 5 candidates) within 10 KB of
#    structuredContent, the bundled device capture and session as printed;
#    every candidate on every page still carries its evidence (figure,
#    evidence level, matched hotspots, missing evidence whose keys resolve,
#    next steps), one candidate_id call gives it in full, and the figures of
#    the pages agree with classify_oracle.py (its own perf script parser).
#  - export_profile returns its file's uri beside the absolute path, and
#    read_artifact_page reads it by either (and by the relative path) with
#    the file's own bytes; an absolute path outside the root is refused.
#  - next_steps: a whole investigation of the bundled device capture (and
#    of the bundled benchmark files) through every analysis tool; every
#    next_steps entry of every result, at any depth, is a call of a listed
#    tool whose arguments validate against that tool's inputSchema, and
#    those of the read-only tools, sent as they are, answer without error.
#  - build_report's Markdown reads as raw text (no backslash before '-',
#    '.', '(' and the like outside the quoted problem) and still renders
#    literally with cmark-gfm (GitHub's parser, with its extensions).
# Sizes are printed on the ok lines, so a run shows where they stand.
. tests/integration/lib.sh
need_shared "MCP budget"
PY=/usr/bin/python3
if ! $PY -c 'import jsonschema' 2>/dev/null; then
	skip "MCP budget: python3-jsonschema is not installed (apt-get install python3-jsonschema)"
	exit 0
fi
server="$(cd "$BUILD" && pwd)/perflens-mcp"

WORK="$WORK" timeout "${MCP_TEST_TIMEOUT:-170}" $PY - "$server" "$REPO" "$SHARED" <<'PY'
import glob, json, os, re, subprocess, sys
sys.path.insert(0, os.path.join(os.environ.get("REPO", os.getcwd()), "tests", "integration"))
from mcp_client import *  # the shared MCP test client (mcp_client.py)
import jsonschema

SERVER, REPO, SHARED = sys.argv[1:4]
# What a model reads of tools/list: 20 KB until 2026-12-07, 24 KB since
# collect_profile's working_directory/environment/output, demangled and
# short names, every step's operator and run_experiment came (about 1.2 KB
# a tool; descriptions were cut first); 25 KB since get_timeline and
# list_hotspots' view (24.3 KB with them, 24.4 KB with its zoom); 26 KB
# since the view is on all nine readers, classify_hotspots takes tid and
# comm, and collect_profile dwarf_stack_bytes (25.3 KB with them).
MODEL_READ_MAX = 26 * 1024
# A classify page: 8 KB until 2026-12-07; 10 KB since each candidate's
# collection and experiment steps say what the operator must do first.
CLASSIFY_MAX = 10 * 1024
ART = os.path.join(WORK, "art")
s = Stdio([SERVER, "--allowed-root", REPO, "--allowed-root", SHARED, "--artifact-root", ART,
           "--allow-writes"], "budget")
s.initialize()


def compact(v):
    return len(json.dumps(v, separators=(",", ":"), ensure_ascii=False).encode())


tools, cursor, raw = [], None, 0
for _ in range(20):
    r = s.request("tools/list", {"cursor": cursor} if cursor else {})
    res = (r or {}).get("result", {})
    tools += res.get("tools", [])
    raw += compact(r or {})
    cursor = res.get("nextCursor")
    if not cursor:
        break
check("budget: tools/list answers with tools", tools, short(r))
# What a model reads: the name, the description and the input schema (the
# fields Claude's and OpenAI's tool definitions carry); titles and
# annotations are for the client, output schemas for result checking.
read = sum(compact({"name": t["name"], "description": t.get("description", ""),
                    "inputSchema": t.get("inputSchema")}) for t in tools)
out = sum(compact(t.get("outputSchema")) for t in tools)
heavy = sorted(((compact({"name": t["name"], "description": t.get("description", ""),
                          "inputSchema": t.get("inputSchema")}), t["name"]) for t in tools), reverse=True)[:3]
check("budget: tools/list's model-read part (names, descriptions, input schemas) is %d bytes "
      "(<= %d) for %d tools; output schemas %d bytes; whole answer %d bytes"
      % (read, MODEL_READ_MAX, len(tools), out, raw),
      read <= MODEL_READ_MAX, "heaviest: %s" % heavy)
bad = []
for t in tools:
    for key in ("inputSchema", "outputSchema"):
        try:
            jsonschema.Draft202012Validator.check_schema(t[key])
        except (KeyError, jsonschema.SchemaError) as e:
            bad.append("%s %s: %s" % (t["name"], key, str(e)[:120]))
check("budget: every listed inputSchema and outputSchema is a valid JSON Schema 2020-12", not bad, bad)
undescribed = ["%s.%s" % (t["name"], k) for t in tools
               for k, p in t["inputSchema"].get("properties", {}).items() if not p.get("description")]
check("budget: every input property still says what it means (a description)", not undescribed, undescribed)
short_desc = [t["name"] for t in tools if len(t.get("description", "")) < 60]
check("budget: every tool still has a description that says when to call it", not short_desc, short_desc)
print("# tools/list: model-read %d bytes, output schemas %d bytes, answer %d bytes" % (read, out, raw))

# ------------------------------------------------------ classify_hotspots
schema = {t["name"]: t["outputSchema"] for t in tools}.get("classify_hotspots")


def result(name, args):
    r = s.call(name, args, timeout=60)
    res = (r or {}).get("result", {})
    return None if res.get("isError") else res.get("structuredContent"), r


def evidence_gaps(page):
    """What a candidate of this page lacks to stand on its own."""
    gaps = []
    for c in page["candidates"]:
        cid = c["candidate_id"]
        if c["hotspots_total"] and not c["hotspots"]:
            gaps.append(cid + ": matched hotspots not listed")
        if not c["next_steps"]:
            gaps.append(cid + ": no next step")
        gaps += ["%s: missing_evidence key %s has no text" % (cid, k)
                 for k in c["missing_evidence"] if k not in page["texts"]]
        if c["event"] not in [e["event"] for e in page["events"]]:
            gaps.append(cid + ": its event has no data-quality entry")
    for g in page["quiet"]:
        gaps += ["quiet %s: reason key %s has no text" % (r, k)
                 for r, k in g["not_applicable"].items() if k not in page["texts"]]
    return gaps


peers = os.path.join(SHARED, "peers")
typical = sorted(glob.glob(os.path.join(peers, "flamegraph/test/perf-*.txt")))
others = [os.path.join(REPO, "fixtures/device-x86/chunk_000.txt.gz"),
          os.path.join(peers, "device-sessions/session-x86-baseline")]
for path in typical + others:
    name = os.path.basename(path)
    sc, r = result("analyze_profile", {"path": path})
    if not check("budget classify %s: analyzes" % name, sc, short(r)):
        continue
    aid = sc["analysis_id"]
    first, r = result("classify_hotspots", {"analysis_id": aid})
    if not check("budget classify %s: a first page" % name, first, short(r)):
        continue
    size = compact(first)
    pages, page, bad = [first], first, []
    while page["page"]["next_cursor"] and len(pages) < 50:
        page, r = result("classify_hotspots", {"analysis_id": aid, "cursor": page["page"]["next_cursor"]})
        if not page:
            bad.append("next page: " + short(r))
            break
        pages.append(page)
    for p in pages:
        try:
            jsonschema.validate(p, schema)
        except jsonschema.ValidationError as e:
            bad.append("schema: " + str(e)[:200])
        bad += evidence_gaps(p)
    cands = [c for p in pages for c in p["candidates"]]
    if path in typical and len(cands) <= 5:
        check("budget classify %s: first page %d bytes (<= %d) for %d candidates"
              % (name, size, CLASSIFY_MAX, len(cands)), size <= CLASSIFY_MAX, size)
    else:
        print("# budget classify %s: first page %d bytes, %d candidates over %d pages of %s"
              % (name, size, len(cands), len(pages), [compact(p) for p in pages]))
    check("budget classify %s: %d candidate(s) over %d page(s) valid against the outputSchema, "
          "each with its figure, evidence, hotspots, missing evidence and next steps"
          % (name, len(cands), len(pages)), not bad and len(cands) == first["page"]["total_items"], bad)
    if cands:
        c = max(cands, key=lambda x: x["hotspots_total"])
        one, r = result("classify_hotspots", {"analysis_id": aid, "candidate_id": c["candidate_id"]})
        full = one["candidates"][0] if one and one["candidates"] else {}
        rt = (one or {}).get("rule_texts", {}).get(c["rule"]["id"], {})
        check("budget classify %s: candidate_id %s gives it in full (%d of %d hotspots, rule texts)"
              % (name, c["candidate_id"], len(full.get("hotspots", [])), c["hotspots_total"]),
              full.get("figure") == c["figure"] and len(full["hotspots"]) == min(c["hotspots_total"], 10)
              and rt.get("description") and rt.get("experiment") and rt.get("forbidden_conclusions"),
              short(one or r))
    if path in typical:
        merged = dict(first, candidates=cands)
        with open(os.path.join(WORK, "cl.json"), "w") as f:
            json.dump(merged, f)
        o = subprocess.run([sys.executable, os.path.join(REPO, "tests/integration/classify_oracle.py"),
                            os.path.join(REPO, "schemas/rules/classify-rules.json"), path,
                            os.path.join(WORK, "cl.json")], capture_output=True, text=True)
        check("budget classify %s: the pages' figures agree with classify_oracle.py (%s)"
              % (name, o.stdout.strip().splitlines()[-1:] or "?"), o.returncode == 0,
              o.stdout + o.stderr)
# ------------------------------------------------- export_profile's file
capture = os.path.join(peers, "flamegraph/test/perf-numa-stacks-01.txt")
sc, r = result("analyze_profile", {"path": capture})
ex, r = result("export_profile", {"analysis_id": sc["analysis_id"], "format": "folded"}) if sc else (None, r)
if check("export: export_profile returns path and uri", ex and ex.get("uri", "").startswith(
        "perflens://artifacts/exports/") and os.path.isabs(ex.get("path", "")), short(ex or r)):
    disk = open(ex["path"], "rb").read()
    rel = ex["uri"][len("perflens://artifacts/"):]
    for how, name in (("uri", ex["uri"]), ("absolute path", ex["path"]), ("relative path", rel)):
        page, r = result("read_artifact_page", {"artifact": name, "limit_bytes": 32768})
        check("export: read_artifact_page reads the export by its %s, the file's bytes" % how,
              page and page["text"].encode() == disk[:page["returned_bytes"]] and page["returned_bytes"] > 0
              and page["total_bytes"] == len(disk), short(page or r))
    for bad in (os.path.join(os.path.dirname(ART), "elsewhere", rel),
                os.path.join(ART, "exports", "..", "..", rel)):
        r = s.call("read_artifact_page", {"artifact": bad})
        check("export: read_artifact_page refuses %s, naming the forms it takes" % bad,
              is_tool_error(r, "absolute path under the artifact root"), short(r))

# ---------------------------------------------- next_steps as tool calls
inputs = {t["name"]: t["inputSchema"] for t in tools}
steps = []      # (where, step)


def gather(where, v):
    if isinstance(v, dict):
        for k, x in v.items():
            if k == "next_steps" and isinstance(x, list):
                steps.extend((where, st) for st in x)
            else:
                gather(where, x)
    elif isinstance(v, list):
        for x in v:
            gather(where, x)


def step(name, args):
    sc, r = result(name, args)
    check("investigation: %s answers" % name, sc, short(r))
    gather(name, sc or {})
    return sc or {}


fixture = os.path.join(REPO, "fixtures/device-x86/chunk_000.txt.gz")
an = step("analyze_profile", {"path": fixture})
aid = an.get("analysis_id", "an-00000000000000000000")
ev = an["events"][0]["name"] if an.get("events") else "cycles"
hs = step("list_hotspots", {"analysis_id": aid, "event": ev, "limit": 5})
top = (hs.get("hotspots") or [{}])[0]
step("get_hotspot", {"analysis_id": aid, "event": ev, "hotspot_id": top.get("hotspot_id", "fn0")})
step("get_call_paths", {"analysis_id": aid, "event": ev, "symbol": top.get("symbol", "main"), "limit": 3})
step("list_threads", {"analysis_id": aid, "event": ev, "limit": 3})
step("get_perf_stat", {"analysis_id": aid})
page = step("classify_hotspots", {"analysis_id": aid})
while page.get("page", {}).get("next_cursor"):
    page = step("classify_hotspots", {"analysis_id": aid, "cursor": page["page"]["next_cursor"]})
for c in page.get("candidates", [])[:2]:
    step("classify_hotspots", {"analysis_id": aid, "candidate_id": c["candidate_id"]})
rep = step("build_report", {"analysis_id": aid, "problem": "the agent is slow", "metric": "chunks/s, higher is better"})
step("export_profile", {"analysis_id": aid, "format": "svg", "event": ev})
step("compare_profiles", {"baseline_id": aid, "candidate_id": aid, "event": ev, "exports": False})
elf = os.path.join(WORK, "true")
subprocess.run(["cp", "/bin/true", elf])
s2 = Stdio([SERVER, "--allowed-root", WORK, "--allowed-root", REPO, "--artifact-root", ART, "--allow-writes"], "budget2")
s2.initialize()
for name, args in (("inspect_elf", {"path": elf}),
                   ("normalize_benchmark", {"path": os.path.join(REPO, "fixtures/benchmarks/pyperf-baseline.json")}),
                   ("normalize_benchmark", {"path": os.path.join(REPO, "fixtures/benchmarks/pyperf-candidate.json")})):
    r = s2.call(name, args, timeout=60)
    sc = (r or {}).get("result", {}).get("structuredContent")
    check("investigation: %s answers" % name, sc and not r["result"].get("isError"), short(r))
    gather(name, sc or {})
    if name == "normalize_benchmark" and sc:
        args["id"] = sc["benchmark_id"]
ids = [st[1]["arguments"].get("artifact", "") for st in steps if st[0] == "normalize_benchmark"]
bids = [i.split("/")[-1][:-5] for i in ids if i.startswith("benchmarks/")]
if len(bids) == 2:
    r = s2.call("compare_benchmarks", {"baseline_id": bids[0], "candidate_id": bids[1]}, timeout=60)
    sc = (r or {}).get("result", {}).get("structuredContent")
    check("investigation: compare_benchmarks answers", sc, short(r))
    gather("compare_benchmarks", sc or {})
s2.close()
bad, sent, file_steps = [], 0, [0, 0]
for where, st in steps:
    name, args = st.get("tool"), st.get("arguments")
    if set(st) - {"needs", "operator"} != {"tool", "arguments", "why"}:
        bad.append("%s: %s is not {tool, arguments, why[, needs][, operator]}" % (where, short(st, 200)))
        continue
    # A collection is never ready as it is: the step must say what to add.
    if name == "collect_profile" and not ("authorization" in st.get("needs", []) and
            (args.get("executable") or args.get("pid") or "executable or pid" in st.get("needs", []))):
        bad.append("%s: %s does not say what it needs" % (where, short(st, 200)))
        continue
    # A step naming a file this server cannot read (a device's module
    # path, a library outside the roots) says so in needs, and only then.
    farg = {"inspect_elf": "path", "symbolize": "binary", "analyze_profile": "path"}.get(name)
    fpath = args.get(farg) if farg and isinstance(args, dict) else None
    if isinstance(fpath, str) and not fpath.startswith("perflens://"):
        roots = [WORK, REPO] if where in ("inspect_elf", "normalize_benchmark", "compare_benchmarks") else [REPO, SHARED]
        real = os.path.realpath(fpath)
        readable = os.path.exists(real) and any(real.startswith(os.path.realpath(r).rstrip("/") + "/")
                                                for r in roots)
        said = any(n.startswith(farg + ":") for n in st.get("needs", []))
        file_steps[said] += 1
        if readable == said:
            bad.append("%s: %s: needs must name %s exactly when the file is outside the allowed roots"
                       % (where, short(st, 200), farg))
            continue
    if st.get("needs") or st.get("operator"):
        continue  # validated once the caller has added them, or not to be sent
    if name not in inputs:
        bad.append("%s: %s names no listed tool" % (where, short(st, 200)))
        continue
    try:
        jsonschema.validate(args, inputs[name])
    except jsonschema.ValidationError as e:
        bad.append("%s: %s: %s" % (where, short(st, 200), str(e).splitlines()[0]))
        continue
    if name in ("list_hotspots", "get_hotspot", "get_call_paths", "list_threads", "get_perf_stat",
                "classify_hotspots", "read_artifact_page", "list_artifacts"):
        r = s.call(name, args, timeout=60)
        sent += 1
        if not r or r.get("result", {}).get("isError"):
            bad.append("%s: %s sent as it is fails: %s" % (where, short(st, 200), short(r, 200)))
check("investigation: all %d next_steps are calls of listed tools whose arguments validate against "
      "their inputSchema (%d read-only ones sent as they are answer; of %d naming a file, %d outside "
      "the roots say so in needs); tools: %s"
      % (len(steps), sent, sum(file_steps), file_steps[1], sorted({st.get("tool") for _, st in steps})),
      steps and not bad, bad[:5])

# ------------------------------------------------- the report as raw text
md_path = rep.get("path")
if md_path and os.path.exists(md_path):
    md = open(md_path, encoding="utf-8").read()
    body = md.split("## Data quality", 1)[-1]
    needless = re.findall(r".{0,20}\\[-.(){}=$!+#:/'\"].{0,20}", body)
    check("report: the Markdown reads as raw text (no needless backslash outside the problem)",
          not needless, needless[:5])
    if subprocess.run(["sh", "-c", "command -v cmark-gfm"], capture_output=True).returncode:
        print("skip - report rendering: cmark-gfm is not installed (apt-get install cmark-gfm)")
    else:
        problem = "A *slow* _start | <b>x</b> [l](http://x) ~~y~~ &amp; `c`\n# h\n1. item\n- dash\n  [d]: /u"
        r2, r = result("build_report", {"analysis_id": aid, "problem": problem, "metric": "ops/s & p99 < 5 ms"})
        raw = open(r2["path"], encoding="utf-8").read() if r2 else ""
        html = subprocess.run(["cmark-gfm", "-e", "table", "-e", "strikethrough", "-e", "autolink",
                               "-e", "tagfilter"], input=raw, capture_output=True, text=True).stdout
        import html as htmlmod
        quote = re.search(r"<blockquote>\s*<p>(.*?)</p>\s*</blockquote>", html, re.S)
        text = htmlmod.unescape(re.sub(r"<[^>]+>", "", quote.group(1))) if quote else ""
        marks = [m for m in ("<em>", "<strong>", "<b>", "<del>", "<code>", "<h1>", "<ol>", "<ul>", "<a ")
                 if m in (quote.group(1) if quote else html)]
        check("report: cmark-gfm renders the problem literally (%d bytes of Markdown)" % len(raw),
              r2 and text.split() == problem.split() and not marks and
              htmlmod.escape("ops/s & p99 < 5 ms", quote=False) in html and html.count("<h2>") == 9,
              "text %r marks %s" % (text, marks))

rc = s.close()
check("budget: the server exits 0 at end of input", rc == 0, rc)
sys.exit(0)
PY
