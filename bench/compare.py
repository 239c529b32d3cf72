#!/usr/bin/env python3
"""compare.py - the headline benchmarks of two builds, pair by pair.

Driven by bench/compare.sh, which builds the baseline revision (A) and
makes the inputs; B is the build under test.  python3 stdlib only.

Each round runs A and B back to back, in alternating order (A then B,
then B then A), so both see the same background load; a peer, when
given, runs in the same round.  Each run is timed from fork to wait4:
wall clock (time.perf_counter) and cpu (user+sys of the process and its
children, from wait4's rusage, to the microsecond).  Printed per bench
and figure: the median of A, of B and of the peer, B/A of the medians,
and the spread of the paired ratios B_i/A_i (min, median, max over the
rounds), then the peer's ratios.  Measurements, not tests: exit 0 unless
a run fails (2).

Benches (each skipped when its input is not given):
  script    perflens analyze --input TEXT (perf script text), a fresh
            artifact root each run (removed untimed before it); peer:
            perl stackcollapse-perf.pl TEXT > /dev/null
            and again into a kept root (one untimed run first), where
            the input's digest comes from the digest cache
  perfdata  perflens analyze --path DATA (native reader), the artifact
            root kept (one untimed run first makes its per-boot kallsyms
            copy, as in bench/perf_data.sh, and keeps the input's digest);
            peer: perf report -i DATA --stdio > /dev/null; and again with
            the digest cache emptied before each run (the file hashed)
  mcp       bench/mcp_small.py: list_hotspots (limit 10) and
            list_artifacts over stdio on both servers and the bare
            fork-and-answer floor, called in turn, round by round
"""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import time

ERR_PATH = "/dev/null"  # each run's stderr, kept for its failure message


def run_once(argv, cwd=None, env=None):
    """(wall s, cpu s, exit status) of one run, output discarded."""
    with open(ERR_PATH, "w+b") as errf:
        t0 = time.perf_counter()
        p = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=errf, cwd=cwd, env=env)
        _, status, ru = os.wait4(p.pid, 0)
        wall = time.perf_counter() - t0
        p.returncode = os.waitstatus_to_exitcode(status)
        if p.returncode != 0:
            errf.seek(0)
            sys.stderr.write("compare: %s exited %d: %s\n" % (
                " ".join(argv), p.returncode, errf.read()[-400:].decode(errors="replace")))
    return wall, ru.ru_utime + ru.ru_stime, p.returncode


def summary(name, a, b, peer, peer_name):
    """Print medians, B/A and the paired spread for wall and cpu."""
    print("%s: %d pairs%s" % (name, len(a), ", %d peer runs" % len(peer) if peer else ""))
    for k, what in ((0, "wall"), (1, "cpu")):
        ma = statistics.median(x[k] for x in a)
        mb = statistics.median(x[k] for x in b)
        pairs = sorted(y[k] / x[k] for x, y in zip(a, b) if x[k] > 0)
        line = "  %-4s A %.3f s  B %.3f s  B/A %.3f (pairs min %.3f median %.3f max %.3f)" % (
            what, ma, mb, mb / ma, pairs[0], statistics.median(pairs), pairs[-1])
        if peer:
            mp = statistics.median(x[k] for x in peer)
            line += "  %s %.3f s: A %.1fx B %.1fx" % (peer_name, mp, mp / ma, mp / mb)
        print(line)
    print("  %s B/A: wall %.3f cpu %.3f" % (name, statistics.median(x[0] for x in b) /
                                           statistics.median(x[0] for x in a),
                                           statistics.median(x[1] for x in b) /
                                           statistics.median(x[1] for x in a)))
    sys.stdout.flush()


def bench_pairs(name, cmd_a, cmd_b, peer_cmd, peer_name, rounds, peer_rounds, before=None):
    a, b, peer = [], [], []
    for r in range(rounds):
        order = (("A", cmd_a, a), ("B", cmd_b, b))
        if r % 2:
            order = order[::-1]
        for _, cmd, out in order:
            if before:
                before()
            wall, cpu, rc = run_once(cmd)
            if rc != 0:
                return False
            out.append((wall, cpu))
        if peer_cmd and r < peer_rounds:
            wall, cpu, rc = run_once(peer_cmd)
            if rc != 0:
                return False
            peer.append((wall, cpu))
    summary(name, a, b, peer, peer_name)
    return True


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--a", required=True, help="baseline build folder")
    ap.add_argument("--b", required=True, help="build folder under test")
    ap.add_argument("--scratch", required=True)
    ap.add_argument("--rounds", type=int, default=9)
    ap.add_argument("--peer-rounds", type=int, default=3)
    ap.add_argument("--script-input")
    ap.add_argument("--stackcollapse")
    ap.add_argument("--perf-data")
    ap.add_argument("--perf", default="perf")
    ap.add_argument("--mcp-capture")
    ap.add_argument("--mcp-root")
    ap.add_argument("--mcp-rounds", type=int, default=300)
    ap.add_argument("--floor")
    a = ap.parse_args()
    global ERR_PATH
    ERR_PATH = os.path.join(a.scratch, "run.err")
    ok = True
    here = os.path.dirname(os.path.abspath(__file__))

    if a.script_input:
        roots = {k: os.path.join(a.scratch, "art-script-" + k) for k in "AB"}

        def fresh():
            for d in roots.values():
                shutil.rmtree(d, ignore_errors=True)
        peer = ["perl", a.stackcollapse, a.script_input] if a.stackcollapse else None
        ok &= bench_pairs("perf script analyze (%.0f MB)" % (os.path.getsize(a.script_input) / 1e6),
                          [os.path.join(a.a, "perflens"), "analyze", "--input", a.script_input,
                           "--artifact-root", roots["A"]],
                          [os.path.join(a.b, "perflens"), "analyze", "--input", a.script_input,
                           "--artifact-root", roots["B"]],
                          peer, "stackcollapse-perf.pl", a.rounds, a.peer_rounds, fresh)
        # The same file analyzed again into a kept root: its digest comes
        # from the digest cache (tools/core/base/digest_cache.h).
        again = {}
        for k, d in (("A", a.a), ("B", a.b)):
            again[k] = [os.path.join(d, "perflens"), "analyze", "--input", a.script_input,
                        "--artifact-root", os.path.join(a.scratch, "art-script-again-" + k)]
            run_once(again[k])  # untimed: the first analysis keeps the digest
        ok &= bench_pairs("perf script analyze again (%.0f MB, kept root)" % (os.path.getsize(a.script_input) / 1e6),
                          again["A"], again["B"], peer, "stackcollapse-perf.pl", a.rounds, a.peer_rounds)
    if ok and a.perf_data:
        cmds = {}
        for k, d in (("A", a.a), ("B", a.b)):
            root = os.path.join(a.scratch, "art-pd-" + k)
            cmds[k] = ["env", "PERFLENS_PERF_DATA_READER=native", os.path.join(d, "perflens"),
                       "analyze", "--path", a.perf_data, "--artifact-root", root]
            run_once(cmds[k])  # untimed: the per-boot kallsyms copy
        ok &= bench_pairs("perf.data analyze (%.0f MB)" % (os.path.getsize(a.perf_data) / 1e6),
                          cmds["A"], cmds["B"],
                          [a.perf, "report", "-i", a.perf_data, "--stdio"], "perf report",
                          a.rounds, a.rounds)
        # And with the digest cache emptied before each run: the file is
        # hashed, as a first analysis of it is.
        def no_digests():
            for k in "AB":
                shutil.rmtree(os.path.join(a.scratch, "art-pd-" + k, "cache", "digests"),
                              ignore_errors=True)
        ok &= bench_pairs("perf.data analyze, hashed (%.0f MB, digest cache emptied)" % (os.path.getsize(a.perf_data) / 1e6),
                          cmds["A"], cmds["B"],
                          [a.perf, "report", "-i", a.perf_data, "--stdio"], "perf report",
                          a.rounds, a.rounds, no_digests)
    if ok and a.mcp_capture:
        argv = [sys.executable, os.path.join(here, "mcp_small.py"),
                "--server", "A=" + os.path.join(a.a, "perflens-mcp"),
                "--server", "B=" + os.path.join(a.b, "perflens-mcp"),
                "--capture", a.mcp_capture, "--root", a.mcp_root,
                "--scratch", os.path.join(a.scratch, "mcp"), "--rounds", str(a.mcp_rounds)]
        if a.floor:
            argv += ["--floor", a.floor]
        os.makedirs(os.path.join(a.scratch, "mcp"), exist_ok=True)
        print("small MCP calls over stdio (mcp_small.py, %d rounds):" % a.mcp_rounds)
        sys.stdout.flush()
        ok &= subprocess.call(argv) == 0
    return 0 if ok else 2


if __name__ == "__main__":
    sys.exit(main())
