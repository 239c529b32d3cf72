"""mcp_lines.py - lines of perf.data through perflens-mcp's sandboxed worker.

Run by test_mcp_lines.sh with HERE, BUILD_DIR and WORK set (WORK/bin holds
the callsite workload; WORK/away/data.fp and data.dwarf were recorded from
a binary that was then moved to WORK/away/copy/callsite).  Here: collect
record with fp and with dwarf in the server, analyze each with srcline off
and on; the lines (callers at their return address minus one, inline
frames) must agree with eu-addr2line over perf's own reading of the
samples (srcline_oracle.py, run outside the sandbox), and the hot module
offsets source_context lists go to symbolize as given.  Then the capture
handed over from elsewhere: without its binary the answer names the
build-id and the --binary that would give lines; with --binary it gets
them, checked the same way against the copy, and source_context finds
its moved source with --path-map applied to the debug info's full path.
"""
import os
import re
import subprocess
import sys

sys.path.insert(0, os.environ["HERE"])
from mcp_client import *  # noqa: E402,F401,F403

here, build, work = os.environ["HERE"], os.environ["BUILD_DIR"], os.environ["WORK"]
P = "I_EXPLICITLY_AUTHORIZE_TARGET_PROFILING"
exe = work + "/bin/callsite"


def server(extra, name):
    s = Stdio([build + "/perflens-mcp", "--allowed-root", work, "--artifact-root", work + "/art-" + name,
               "--allow-writes", "--allow-process-execution", "--allow-collection"] + extra, name)
    s.initialize()
    return s


def analyze(s, path, srcline):
    r = s.call("analyze_profile", {"path": path, "srcline": srcline}, timeout=240)
    r = (r or {}).get("result", {})
    return r, r.get("structuredContent") or {}


def oracle(sc, data, recorded, binary, mode, env=None):
    p = subprocess.run([sys.executable, here + "/srcline_oracle.py", data, sc["artifact"]["stacks_path"],
                        recorded, binary, mode], capture_output=True, text=True,
                       env=dict(os.environ, **(env or {})))
    return p.returncode == 0, (p.stdout + p.stderr).strip()


def srclines(sc):
    d = json.load(open(sc["artifact"]["summary_path"]))
    return d["provenance"]["counts"]["srclines"]


def hot_offsets(aid, mode):
    """source_context lists the inlined helper's sampled module offsets with
    the symbolize call to make; made as given, it names each of them as
    eu-addr2line does (function, line, inline chain)."""
    r = s.call("list_hotspots", {"analysis_id": aid, "limit": 50})
    hs = [h for h in ((r or {}).get("result") or {}).get("structuredContent", {}).get("hotspots", [])
          if h["symbol"] == "helper"]
    r = s.call("source_context", {"analysis_id": aid, "hotspot_id": hs[0]["hotspot_id"]}) if hs else {}
    sc = ((r or {}).get("result") or {}).get("structuredContent") or {}
    ho = sc.get("hot_offsets") or {}
    step = [n for n in sc.get("next_steps", []) if n["tool"] == "symbolize"]
    if not check("lines MCP: %s source_context lists helper's hot module offsets and the symbolize call" % mode,
                 ho.get("module") == exe and ho.get("offsets") and step, short(sc, 500)):
        return
    r = s.call(step[0]["tool"], step[0]["arguments"])
    ans = (((r or {}).get("result") or {}).get("structuredContent") or {}).get("answers", [])
    offs = [a["offset"] for a in ans]
    eu = subprocess.run(["eu-addr2line", "-f", "-i", "-e", exe] + offs, capture_output=True,
                        text=True).stdout.split("\n")
    mine = []
    for a in ans:
        mine += [f["function"] + (" inlined at %s:%d:%d in " % (f["call_file"], f["call_line"], f["call_column"]))
                 for f in a["inlines"][:1]]
    check("lines MCP: %s symbolize of the hot offsets names helper inlined in work, as eu-addr2line" % mode,
          ans and all(a["inlines"] and a["inlines"][0]["function"] == "helper" for a in ans) and
          all(m in "\n".join(eu) for m in mine), short(ans, 400) + " / " + " ".join(eu)[:300])


s = server([], "col")
for mode in ("fp", "dwarf"):
    r = s.call("collect_profile", {"mode": "record", "executable": exe, "call_graph": mode,
                                   "authorization": P}, timeout=240)
    r = (r or {}).get("result", {})
    sc = r.get("structuredContent") or {}
    if not check("lines MCP: collect record call_graph=%s in the sandboxed worker" % mode,
                 not r.get("isError") and sc.get("collection_id"), short(r)):
        continue
    uri = "perflens://artifacts/collections/%s/perf.data" % sc["collection_id"]
    data = sc["folder"] + "/perf.data"
    a, asc = analyze(s, uri, False)
    tops = [h["symbol"] for e in asc.get("events", []) for h in e["top_hotspots"]]
    check("lines MCP: %s perf.data analyzes in the same server without srcline; work leads" % mode,
          not a.get("isError") and tops[:1] == ["work"] and srclines(asc) == 0, short(a))
    a, asc = analyze(s, uri, True)
    if check("lines MCP: %s perf.data analyzes with srcline (no perf addr2line child)" % mode,
             not a.get("isError") and srclines(asc) > 0, short(a)):
        ok, why = oracle(asc, data, exe, exe, mode)
        check("lines MCP: %s lines and inline frames agree with eu-addr2line at return address - 1: %s"
              % (mode, why), ok, why)
        hot_offsets(asc["analysis_id"], mode)
s.close()

# A capture from another machine: its binary is only at WORK/away/copy.
recorded, copy = work + "/away/build/callsite", work + "/away/copy/callsite"
bid = open(work + "/away/build_id").read().strip()
s = server([], "away")
a, asc = analyze(s, work + "/away/data.fp", True)
miss = [m for m in asc.get("missing_binaries", []) if m["dso"] == recorded]
check("lines MCP: a handed-over capture without its binary names build-id %s and --binary" % bid[:12],
      not a.get("isError") and miss and miss[0].get("build_id") == bid and "--binary" in miss[0]["fix"]
      and miss[0]["unknown_frames"] > 0, short(asc.get("missing_binaries")) + short(a))
s.close()
s = server(["--binary", copy, "--path-map", work + "/away/build=" + work + "/here/src"], "away-bin")
for mode in ("fp", "dwarf"):
    a, asc = analyze(s, work + "/away/data." + mode, True)
    miss = [m for m in asc.get("missing_binaries", []) if m["dso"] == recorded]
    if check("lines MCP: handed-over %s capture with --binary: frames named, none missing" % mode,
             not a.get("isError") and not miss and srclines(asc) > 0, short(a)):
        # perf unwinds a DWARF chain itself and needs the binary for it: at
        # its recorded path (gone) or in its build-id cache, which the
        # server hands perf (--buildid-dir, the server's user's ~/.debug);
        # --binary reaches PerfLens's lines, not perf's unwinder, so the
        # oracle's perf reads with that same cache.
        ok, why = oracle(asc, work + "/away/data." + mode, recorded, copy, mode,
                         {"ORACLE_BUILDID_DIR": os.path.join(os.environ.get("HOME", "/root"), ".debug")})
        check("lines MCP: handed-over %s capture's lines agree with eu-addr2line on the copy: %s"
              % (mode, why), ok, why)
    if mode != "fp" or a.get("isError"):
        continue
    # The debug info's full path, mapped: /their/build=/here/src as a user means it.
    r = s.call("source_context", {"analysis_id": asc["analysis_id"], "file": "callsite.c"}, timeout=60)
    sc = ((r or {}).get("result") or {}).get("structuredContent") or {}
    f = (sc.get("files") or [{}])[0]
    src = open(work + "/here/src/callsite.c").read().splitlines()
    call = next(i + 1 for i, l in enumerate(src) if "x = work(x + i);" in l)
    lines = {h["line"]: h for h in f.get("hot_lines", [])}
    check("lines MCP: source_context finds the handed-over source by --path-map of the DWARF path; "
          "the caller's samples are on the call (line %d), none on the next" % call,
          f.get("recorded_path") == work + "/away/build/callsite.c" and
          f.get("read_path") == work + "/here/src/callsite.c" and
          # A sample whose own pc is on the next line (caller's self) may
          # land there; no caller frame may (the return address minus one).
          lines.get(call, {}).get("total_samples", 0) > 100 and
          lines.get(call + 1, {}).get("total_samples", 0) == lines.get(call + 1, {}).get("self_samples", 0),
          short(sc, 600))
s.close()
# perf killed by the sandbox: the error names the system call (the audit
# record is read by the server; without a readable kernel log, say so).
# (The perf script reader asked for: the native one would read the file.)
os.environ["PERFLENS_PERF_DATA_READER"] = "perf-script"
s = server(["--perf-path", work + "/bin/sysperf-c"], "sigsys")
del os.environ["PERFLENS_PERF_DATA_READER"]
try:
    os.close(os.open("/dev/kmsg", os.O_RDONLY | os.O_NONBLOCK))
    kmsg = True
except OSError:
    kmsg = False


def check_sigsys(what, r, words):
    """The error of a perf killed by the sandbox: SIGSYS and `words`, and
    ptrace named when the kernel log has the audit record of its pid."""
    text = (((r or {}).get("result") or {}).get("content") or [{}])[0].get("text", "")
    base = "killed by SIGSYS" in text and all(w in text for w in words) and "complete perf.data" not in text
    m = re.search(r"\(pid (\d+)\)", text)
    logged = m and kmsg and re.search(r"type=1326 .* pid=%s .*syscall=101 " % m.group(1),
                                      subprocess.run(["dmesg"], capture_output=True, text=True).stdout)
    if logged:
        check(what + ": the error names SIGSYS and the refused call (ptrace)",
              base and "the system call the sandbox refused: ptrace" in text, text)
        return
    # Without a readable kernel log, or when printk rate-limited the audit
    # record ("kauditd_printk_skb: N callbacks suppressed", many sandboxed
    # processes killed at once), no name can be given.
    check(what + ": the error names SIGSYS", base, text)
    print("skip - %s: the refused call's name: %s" % (what,
          "the kernel log has no audit record of it (rate-limited)" if kmsg else "/dev/kmsg is not readable here"),
          flush=True)


check_sigsys("lines MCP: perf killed by the sandbox",
             s.call("analyze_profile", {"path": work + "/away/data.fp"}, timeout=60), ["refused a system call"])
# perf record under collect_profile runs from the collection launcher,
# outside the sandbox (issue 29): the same perf is not killed there; it
# wrote no perf.data, and the error says that, not SIGSYS.
r = s.call("collect_profile", {"mode": "record", "executable": work + "/bin/sysperf-c",
                               "authorization": "I_EXPLICITLY_AUTHORIZE_TARGET_PROFILING"}, timeout=60)
text = (((r or {}).get("result") or {}).get("content") or [{}])[0].get("text", "")
check("collect MCP: perf record runs outside the sandbox: its ptrace is not refused (no SIGSYS), and a perf "
      "that wrote no perf.data is an error saying so",
      r["result"].get("isError") and "SIGSYS" not in text and "wrote no perf.data" in text, text)
s.close()
sys.exit(1 if fails else 0)
