# test_paths.sh - paths and names that are not UTF-8 (docs/paths.md).
#
# Real files with Latin-1 and stray bytes in their names, read through the
# CLI (argv as the shell passes it) and through perflens-mcp over stdio (a
# symlink inside the allowed root, a session folder of such chunks), and a
# real `perf record` of a program whose binary, folder and comm are not
# UTF-8.  The escaped form each result must show is computed by Python's
# own codec (bytes.decode(..., "backslashreplace") after doubling
# backslashes), an oracle that shares no code with base/escape.c; every
# result is validated against its schema by python3-jsonschema, and the
# folded export of the capture is compared byte for byte with what
# stackcollapse-perf.pl itself (from the FlameGraph mirror) prints.
. tests/integration/lib.sh
PY=/usr/bin/python3
name="paths"
if ! $PY -c 'import jsonschema' 2>/dev/null; then
	skip "$name: python3-jsonschema is not installed (tests/setup.sh installs it)"
	exit 0
fi
server="$(cd "$BUILD" && pwd)/perflens-mcp"
mirror=/work/.mirror/brendangregg+FlameGraph/repo
if git --git-dir="$mirror" show HEAD:stackcollapse-perf.pl >"$WORK/stackcollapse-perf.pl" 2>"$WORK/err"; then
	peer="$WORK/stackcollapse-perf.pl"
else
	peer=""
	skip "$name: folded export vs stackcollapse-perf.pl: no FlameGraph mirror at $mirror: $(oneline "$WORK/err")"
fi

# A real capture: fib.c built as 'f\351b' in 'b\377in/', recorded with
# perf; its DSO path and its comm are not UTF-8.
capture=""
bin="$WORK/cap/$(printf 'b\377in')/$(printf 'f\351b')"
mkdir -p "$(dirname "$bin")"
if ! command -v perf >/dev/null 2>&1; then
	skip "$name: perf capture: perf is not installed"
elif ! perf record -e cpu-clock -g -N -o "$WORK/probe.data" -- true >/dev/null 2>"$WORK/err"; then
	skip "$name: perf capture: perf cannot record here: $(oneline "$WORK/err")"
elif gcc -O1 -g -fno-omit-frame-pointer -o "$bin" "$REPO/tests/workloads/fib.c" 2>"$WORK/err" &&
	perf record -e cpu-clock -F 999 -g -N -o "$WORK/cap.data" -- "$bin" >/dev/null 2>>"$WORK/err" &&
	perf script -i "$WORK/cap.data" -F comm,pid,tid,time,event,period,ip,sym,symoff,dso \
		>"$WORK/cap/capture.txt" 2>>"$WORK/err"; then
	capture="$WORK/cap/capture.txt"
else
	notok "$name: perf capture: building or recording failed: $(oneline "$WORK/err")"
fi

# Source in a folder whose name is not UTF-8, with a Latin-1 comment: the
# perf.data is read with srclines, and source_context finds the file by
# the binary's DWARF path and shows the comment's byte as \xe9.
srcdata=""
sdir="$WORK/srcd/$(printf 'src\351')"
if [ -n "$capture" ] && mkdir -p "$sdir" &&
	{ printf '/* caf\351 */\n'; cat "$REPO/tests/workloads/fib.c"; } >"$sdir/fib.c" &&
	(cd "$sdir" && gcc -O1 -g -fno-omit-frame-pointer -o fib fib.c) 2>"$WORK/err" &&
	perf record -e cpu-clock -F 999 -g -N -o "$WORK/srcd/fib.data" -- "$sdir/fib" >/dev/null 2>>"$WORK/err"; then
	srcdata="$WORK/srcd/fib.data"
elif [ -n "$capture" ]; then
	notok "$name: source capture: building or recording failed: $(oneline "$WORK/err")"
fi

WORK="$WORK" timeout 300 $PY - "$PERFLENS" "$server" "$REPO" "$capture" "$peer" "$srcdata" <<'PY'
import json, os, subprocess, sys
sys.path.insert(0, os.path.join(sys.argv[3], "tests", "integration"))
from mcp_client import *  # the shared MCP test client (mcp_client.py)
import jsonschema

PERFLENS, SERVER, REPO, CAPTURE, PEER, SRCDATA = (os.fsencode(a) for a in sys.argv[1:7])
W = os.fsencode(WORK)


def esc(b):
    """docs/paths.md's form, by Python's codec: backslash doubled, other
    bytes that are not UTF-8 as \\xHH."""
    return b.replace(b"\\", b"\\\\").decode("utf-8", "backslashreplace")


def schema(path, key=None):
    with open(os.path.join(REPO, path.encode())) as f:
        s = json.load(f)
    return s[key] if key else s


def valid(what, doc, sch):
    try:
        jsonschema.validate(doc, sch, cls=jsonschema.Draft202012Validator)
        return check(what + " validates against its schema", True)
    except jsonschema.ValidationError as e:
        return check(what + " validates against its schema", False, e.message)


ANALYSIS = schema("schemas/analysis.schema.json")


def tool_out(name):
    return schema("schemas/tools/%s.json" % name, "outputSchema")


def cli(*args):
    """Run perflens with byte arguments: (exit code, JSON result, stderr)."""
    p = subprocess.run([PERFLENS, *args], capture_output=True, timeout=120)
    try:
        out = json.loads(p.stdout)
    except ValueError:
        out = None
    return p.returncode, out, p.stderr.decode(errors="replace")


def summary_of(art, aid):
    with open(os.path.join(art, b"analyses", aid.encode() + b".json")) as f:
        return json.load(f)


def provenance_paths(art, aid):
    return [i["path"] for i in summary_of(art, aid)["provenance"]["inputs"]]


# --------------------------------------------------------------- CLI
d = W + b"/d"
art = W + b"/art"
os.makedirs(d)
latin = d + b"/caf\xe9.folded"
with open(latin, "wb") as f:
    f.write(b"main;caf\xe9_work 5\nmain;other 3\n")
want = esc(os.path.realpath(latin))
rc, out, err = cli(b"analyze", b"--input", latin, b"--artifact-root", art)
aid = (out or {}).get("analysis_id")
check("CLI: analyze --input with a Latin-1 file name (exit 0)", rc == 0 and aid, err)
if aid:
    check("CLI: the result's inputs name the file escaped (%s)" % want,
          [i["path"] for i in out["inputs"]] == [want], out["inputs"])
    check("CLI: the summary's provenance names the file escaped",
          provenance_paths(art, aid) == [want], provenance_paths(art, aid))
    valid("CLI: the summary", summary_of(art, aid), ANALYSIS)
    valid("CLI: analyze's result", out, tool_out("analyze_profile"))
    rc2, out2, err2 = cli(b"analyze", b"--input", out["inputs"][0]["path"].encode(),
                          b"--artifact-root", art)
    check("CLI: the escaped path from the result, passed back, names the same file (same analysis)",
          rc2 == 0 and (out2 or {}).get("analysis_id") == aid, err2 or out2)
    rc3, hot, err3 = cli(b"hotspots", b"--analysis-id", aid.encode(), b"--artifact-root", art)
    syms = [h.get("symbol") for h in (hot or {}).get("hotspots", [])]
    check("CLI: a frame name that is not UTF-8 reads escaped in hotspots",
          rc3 == 0 and esc(b"caf\xe9_work") in syms, err3 or syms)
    outpath = d + b"/exported-\xe9.folded"
    rc4, _, err4 = cli(b"export", b"--analysis-id", aid.encode(), b"--artifact-root", art,
                       b"--format", b"folded", b"--output", outpath)
    got = open(outpath, "rb").read() if os.path.exists(outpath) else b""
    check("CLI: export --output to a Latin-1 name writes those bytes, the folded text raw",
          rc4 == 0 and b"main;caf\xe9_work 5\n" in got, err4 or got[:200])

# A name holding the escape character itself: typed as it is (a
# backslash that starts no escape stays), it reads doubled; a name holding
# the text of an escape must be passed escaped, as docs/paths.md says.
back = d + b"/back\\slash.folded"
lit = d + b"/lit\\xe9.folded"
for p in (back, lit):
    with open(p, "wb") as f:
        f.write(b"main;x 1\n")
rc, out, err = cli(b"analyze", b"--input", back, b"--artifact-root", art)
shown = [i["path"] for i in (out or {}).get("inputs", [])]
check("CLI: a backslash in a file name, typed as it is, reads doubled (%s)" % esc(os.path.realpath(back)),
      rc == 0 and shown == [esc(os.path.realpath(back))], err or shown)
if shown:
    rc2, out2, err2 = cli(b"analyze", b"--input", shown[0].encode(), b"--artifact-root", art)
    check("CLI: that escaped path passed back names the same file",
          rc2 == 0 and out2["analysis_id"] == out["analysis_id"], err2)
rc, out, err = cli(b"analyze", b"--input", esc(lit).encode(), b"--artifact-root", art)
shown = [i["path"] for i in (out or {}).get("inputs", [])]
check("CLI: a name holding the text '\\xe9' passed escaped reads the same (%s)" % esc(os.path.realpath(lit)),
      rc == 0 and shown == [esc(os.path.realpath(lit))], err or shown)
rc, out, err = cli(b"analyze", b"--input", lit, b"--artifact-root", art)
check("CLI: typed raw, that '\\xe9' is the byte, another (absent) file: exit 2", rc == 2, err)

rc, out, err = cli(b"analyze", b"--input", d + b"/missing-\xff.folded", b"--artifact-root", art)
try:
    e = json.loads(err)["error"]
except (ValueError, KeyError):
    e = {}
check("CLI: a missing Latin-1 path fails (exit 2) with its name escaped in the message",
      rc == 2 and esc(d + b"/missing-\xff.folded") in e.get("message", ""), err)

# --------------------------------------------------------------- MCP
root = W + b"/root"
os.makedirs(root + b"/sub")
target = root + b"/sub/caf\xe9.folded"
with open(target, "wb") as f:
    f.write(b"main;\xff\xfe_frame 7\nmain;other 2\n")
os.symlink(b"sub/caf\xe9.folded", root + b"/link.folded")
sess = root + b"/sess\xe9"
os.makedirs(sess)
chunk = open(os.path.join(REPO, b"fixtures/device-x86/chunk_000.txt.gz"), "rb").read()
chunks = [sess + b"/chunk_000_\xe9.txt.gz", sess + b"/chunk_001_\xff.txt.gz"]
for c in chunks:
    with open(c, "wb") as f:
        f.write(chunk)
mart = root + b"/art"
s = Stdio([SERVER, b"--allowed-root", root, b"--artifact-root", mart, b"--allow-writes"], "paths-mcp")
s.initialize()


def call(name, args):
    r = s.call(name, args, timeout=120)
    res = (r or {}).get("result", {})
    return res.get("structuredContent"), res.get("isError"), result_text(r)


sc, bad, text = call("analyze_profile", {"path": (root + b"/link.folded").decode()})
maid = (sc or {}).get("analysis_id")
check("MCP: a symlink inside the allowed root to a Latin-1 file analyzes", maid and not bad, text)
if maid:
    want = esc(os.path.realpath(target))
    check("MCP: inputs are not empty and name the file escaped (%s)" % want,
          [i["path"] for i in sc["inputs"]] == [want], sc["inputs"])
    check("MCP: the summary's provenance names it too",
          provenance_paths(mart, maid) == [want], provenance_paths(mart, maid))
    valid("MCP: analyze_profile's result", sc, tool_out("analyze_profile"))
    valid("MCP: the summary", summary_of(mart, maid), ANALYSIS)
    sc2, bad2, text2 = call("analyze_profile", {"path": want})
    check("MCP: the escaped path, passed back, names the same file (same analysis)",
          (sc2 or {}).get("analysis_id") == maid, text2)
    sc3, bad3, text3 = call("list_hotspots", {"analysis_id": maid})
    syms = [h.get("symbol") for h in (sc3 or {}).get("hotspots", [])]
    check("MCP: list_hotspots names the frame of stray bytes escaped (\\xff\\xfe_frame)",
          esc(b"\xff\xfe_frame") in syms, text3)
sc, bad, text = call("analyze_profile", {"path": esc(sess)})
want = [esc(os.path.realpath(c)) for c in chunks]
got = [i["path"] for i in (sc or {}).get("inputs", [])]
check("MCP: a session folder named in Latin-1 analyzes, passed escaped", sc and not bad, text)
check("MCP: its chunk files with names that are not UTF-8 are all listed, escaped, in order",
      got == want, got)
if sc:
    check("MCP: the summary's provenance lists both chunks",
          provenance_paths(mart, sc["analysis_id"]) == want, provenance_paths(mart, sc["analysis_id"]))

empty = root + b"/empty\xe9"
os.makedirs(empty)
sc, bad, text = call("analyze_profile", {"path": esc(empty)})
check("MCP: a Latin-1 folder without chunks is an error result naming it escaped",
      bad and esc(os.path.realpath(empty)) in text, text)
with open(root + b"/bad\xe9.data", "wb") as f:
    f.write(b"PERFILE2" + bytes(200))
bench = root + b"/bench-\xe9.json"
with open(bench, "wb") as f:
    f.write(open(os.path.join(REPO, b"fixtures/benchmarks/pyperf-baseline.json"), "rb").read())
nb, bad, text = call("normalize_benchmark", {"path": esc(bench)})
valid("MCP: normalize_benchmark of a Latin-1 file named escaped", nb, tool_out("normalize_benchmark"))
check("MCP: its source path reads escaped", (nb or {}).get("source", {}).get("path") == esc(os.path.realpath(bench)),
      text[:300])
check("MCP: the server still answers", s.ping_ms() is not None)
check("MCP: the server exits 0 at end of input", s.close() == 0, s.stderr()[-300:])
# An artifact root whose name is not UTF-8 (through the CLI: perflens-mcp
# hands its context to workers as JSON, see the note in docs/paths.md):
# every path a tool returns into it is escaped, and read_artifact_page
# takes it back as it was printed.
lart = W + b"/art-\xe9"
lreal = esc(os.path.realpath(W)) + "/art-\\xe9/"


def in_lart(res, *keys):
    v = res or {}
    for k in keys:
        v = v.get(k, {}) if isinstance(v, dict) else {}
    return isinstance(v, str) and v.startswith(lreal)


def call_cli(tool, args):
    return cli(b"call", tool.encode(), json.dumps(args).encode(), b"--artifact-root", lart)


rc, an, err = call_cli("analyze_profile", {"path": esc(target)})
check("CLI: with a Latin-1 artifact root, analyze_profile names its artifacts escaped",
      rc == 0 and in_lart(an, "artifact", "summary_path") and in_lart(an, "artifact", "stacks_path"),
      err or an)
if rc == 0:
    rc, ex, err = call_cli("export_profile", {"analysis_id": an["analysis_id"], "format": "folded"})
    check("CLI: export_profile's path there reads escaped", rc == 0 and in_lart(ex, "path"), err or ex)
    rc, rp, err = call_cli("build_report", {"analysis_id": an["analysis_id"], "problem": "slow",
                                            "metric": "run time, s"})
    check("CLI: build_report's path there reads escaped", rc == 0 and in_lart(rp, "path"), err or rp)
    rc, pg, err = call_cli("read_artifact_page", {"artifact": (rp or {}).get("path", "")})
    check("CLI: read_artifact_page takes the report's escaped absolute path back",
          rc == 0 and (pg or {}).get("total_bytes") == rp.get("bytes"), err or pg)
rc, nb, err = call_cli("normalize_benchmark", {"path": esc(bench)})
check("CLI: normalize_benchmark's artifact path there reads escaped",
      rc == 0 and in_lart(nb, "artifact", "path"), err or nb)
# perf's own words about a file with such a name reach the message escaped.
s = Stdio([SERVER, b"--allowed-root", root, b"--artifact-root", mart, b"--allow-writes",
           b"--allow-process-execution"], "paths-perf")
s.initialize()
sc, bad, text = call("analyze_profile", {"path": esc(root + b"/bad\xe9.data")})
check("MCP: a broken perf.data named in Latin-1: perf's failure is an error result naming it escaped",
      bad and esc(os.path.realpath(root + b"/bad\xe9.data")) in text, text)
check("MCP: the server still answers after it", s.ping_ms() is not None)
check("MCP: that server exits 0 at end of input", s.close() == 0, s.stderr()[-300:])

# ------------------------------------------------ a real perf capture
cid = None
if CAPTURE:
    cap_root = os.path.dirname(CAPTURE)
    binary = os.path.realpath(cap_root + b"/b\xffin/f\xe9b")
    s = Stdio([SERVER, b"--allowed-root", cap_root, b"--artifact-root", cap_root + b"/art",
               b"--allow-writes"], "paths-cap")
    s.initialize()
    sc, bad, text = call("analyze_profile", {"path": CAPTURE.decode()})
    cid = (sc or {}).get("analysis_id")
    check("capture: perf script text with a DSO path and comm that are not UTF-8 analyzes",
          cid and not bad, text)
if CAPTURE and cid:
    valid("capture: analyze_profile's result", sc, tool_out("analyze_profile"))
    valid("capture: the summary", summary_of(cap_root + b"/art", cid), ANALYSIS)
    top = sc["events"][0]["top_hotspots"]
    check("capture: the top hotspots' DSO reads escaped (%s)" % esc(binary),
          any(h["symbol"] == "leaf_work" and h["dso"] == esc(binary) for h in top), top)
    th, bad, text = call("list_threads", {"analysis_id": cid})
    valid("capture: list_threads", th, tool_out("list_threads"))
    comms = [t.get("comm") for t in (th or {}).get("threads", [])]
    check("capture: list_threads names the comm escaped (%s)" % esc(b"f\xe9b"),
          esc(b"f\xe9b") in comms, comms)
    cp, bad, text = call("get_call_paths", {"analysis_id": cid, "symbol": "leaf_work"})
    valid("capture: get_call_paths", cp, tool_out("get_call_paths"))
    dsos = {f.get("dso") for p in (cp or {}).get("paths", []) for f in p.get("frames", [])}
    check("capture: call paths to leaf_work carry the escaped DSO", esc(binary) in dsos, dsos)
    hs, bad, text = call("list_hotspots", {"analysis_id": cid})
    valid("capture: list_hotspots", hs, tool_out("list_hotspots"))
    for fmt in ("svg", "speedscope", "pprof"):
        ex, bad, text = call("export_profile", {"analysis_id": cid, "format": fmt})
        ok_ = ex and not bad and os.path.exists(ex.get("path", "").encode())
        check("capture: export_profile %s succeeds" % fmt, ok_, text)
        if ok_ and fmt == "svg":
            svg = open(ex["path"].encode(), "rb").read()
            check("capture: the SVG shows the comm escaped", esc(b"f\xe9b").encode() in svg)
        if ok_ and fmt == "speedscope":
            doc = json.load(open(ex["path"].encode()))
            names = [f["name"] for f in doc["shared"]["frames"]]
            check("capture: speedscope names are text (escaped comm among them)",
                  esc(b"f\xe9b") in names, names[:5])
    nm = subprocess.run([b"nm", binary], capture_output=True).stdout.decode(errors="replace")
    addr = [l.split()[0] for l in nm.splitlines() if l.endswith(" leaf_work")]
    el, bad, text = call("inspect_elf", {"path": esc(binary)})
    valid("capture: inspect_elf on the binary named by its escaped path", el, tool_out("inspect_elf"))
    check("capture: inspect_elf names the binary escaped, and its advice too",
          (el or {}).get("path") == esc(binary) and esc(binary) in " ".join(el.get("advice", [])),
          text[:300])
    sy, bad, text = call("symbolize", {"binary": esc(binary), "offsets": ["0x" + a for a in addr[:1]]})
    valid("capture: symbolize on that binary", sy, tool_out("symbolize"))
    check("capture: symbolize reads the binary by its escaped path: leaf_work, module path escaped",
          addr and (sy or {}).get("module", {}).get("path") == esc(binary) and
          sy["answers"][0].get("function") == "leaf_work", text[:300])
    # A candidate of the same run: every third record dropped.
    records = open(CAPTURE, "rb").read().split(b"\n\n")
    with open(cap_root + b"/fewer.txt", "wb") as f:
        f.write(b"\n\n".join(r for i, r in enumerate(records) if i % 3))
    fewer, bad, text = call("analyze_profile", {"path": (cap_root + b"/fewer.txt").decode()})
    cmp_, bad, text = call("compare_profiles", {"baseline_id": cid,
                                                "candidate_id": (fewer or {}).get("analysis_id")})
    frames = [f for p in (cmp_ or {}).get("call_paths", []) for f in p.get("frames", [])]
    check("capture: compare_profiles' folded paths keep the comm, escaped", esc(b"f\xe9b") in frames,
          text[:300])
    if PEER:
        for opts in ([], ["pid"], ["tid"], ["all"], ["addrs"]):
            args = {"analysis_id": cid, "format": "folded", "compat": "stackcollapse"}
            args.update({o: True for o in opts})
            ex, bad, text = call("export_profile", args)
            got = open(ex["path"].encode(), "rb").read() if ex and not bad else b""
            p = subprocess.run([b"perl", PEER] + [b"--" + o.encode() for o in opts] + [CAPTURE],
                               capture_output=True)
            check("capture: folded export %s is byte-identical to stackcollapse-perf.pl's (%d lines)"
                  % (" ".join("--" + o for o in opts) or "(defaults)", got.count(b"\n")),
                  got and got == p.stdout and b"f\xe9b" in got,
                  text if not got else "differs: %r vs %r" % (got[:120], p.stdout[:120]))
if CAPTURE:
    check("capture: the server exits 0 at end of input", s.close() == 0, s.stderr()[-300:])
    # Collection of that binary named by its escaped path: the command kept.
    s = Stdio([SERVER, b"--allowed-root", cap_root, b"--artifact-root", cap_root + b"/art",
               b"--allow-writes", b"--allow-process-execution", b"--allow-collection"], "paths-collect")
    s.initialize()
    co, bad, text = call("collect_profile", {"mode": "stat", "executable": esc(binary),
                                             "events": ["task-clock"],
                                             "authorization": "I_EXPLICITLY_AUTHORIZE_TARGET_PROFILING"})
    valid("capture: collect_profile of the binary named escaped", co, tool_out("collect_profile"))
    check("capture: collect_profile runs it; the metadata's command names it escaped",
          esc(binary) in (co or {}).get("metadata", {}).get("command", []), text[:300])
    check("capture: the collecting server exits 0 at end of input", s.close() == 0, s.stderr()[-300:])
if SRCDATA:
    sart = os.path.dirname(SRCDATA) + b"/art"
    rc, an, err = cli(b"analyze", b"--input", SRCDATA, b"--srcline", b"--artifact-root", sart)
    hid = None
    if rc == 0:
        rc2, hot, err2 = cli(b"hotspots", b"--analysis-id", an["analysis_id"].encode(),
                             b"--artifact-root", sart, b"--limit", b"100")
        hid = next((h["hotspot_id"] for h in (hot or {}).get("hotspots", [])
                    if h["symbol"] == "leaf_work"), None)
    rc3, sc, err3 = cli(b"source", b"--analysis-id", (an or {}).get("analysis_id", "").encode(),
                        b"--hotspot-id", (hid or "").encode(), b"--artifact-root", sart,
                        b"--before", b"50", b"--after", b"0")
    valid("source: source_context's answer", sc, tool_out("source_context"))
    src = os.path.realpath(os.path.dirname(SRCDATA) + b"/src\xe9/fib.c")
    files = (sc or {}).get("files", [])
    check("source: the file is found by its DWARF path in a Latin-1 folder, named escaped (%s)" % esc(src),
          any(f.get("read_path") == esc(src) for f in files), err3 or files)
    texts = [l.get("text") for f in files for l in f.get("lines", [])]
    check("source: the Latin-1 comment reads with its byte as \\xe9", "/* caf\\xe9 */" in texts,
          texts[:3])
sys.exit(0)
PY
