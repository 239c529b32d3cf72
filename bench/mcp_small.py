#!/usr/bin/env python3
"""mcp_small.py - the latency of a small MCP call over stdio, A/B.

Starts one perflens-mcp per --server LABEL=BINARY (each with its own
artifact root) and, with --floor, bench/fork_answer (a bare server that
answers each line from a forked child: the floor under a forked-worker
call).  Each perflens server analyzes the capture through analyze_profile
(untimed), then every timed tool (list_hotspots limit 10 on that
analysis, list_artifacts) is called on every server in turn, round by
round, the order rotating each round, so that all see the same background
load.  The floor is called in the same rounds with a request line of the
same size.  Latency is from writing the request line to reading its
answer line, in this client (python; a few tens of microseconds of it).

Prints per tool and server: p50, p10-p90 and the p50 over the floor's;
and for each server after the first, its p50 over the first's.  One line
per figure, `key=value` words, then the readable table.
Measurements, not tests: exit 0 whatever the figures are (2 if a server
cannot be started or answers with an error).

  mcp_small.py --server A=/tmp/a/perflens-mcp --server B=build/perflens-mcp
               --floor build/bench/fork_answer --capture FILE --root DIR
               --scratch DIR [--rounds 300] [--warmup 20] [--pace-ms 0]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

PROTOCOL = "2025-11-25"


class Fail(Exception):
    pass


class Server:
    def __init__(self, label, argv, errpath):
        self.label = label
        self.err = open(errpath, "wb")
        self.p = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=self.err)
        self.next_id = 0

    def call(self, method, params=None, pad=0):
        self.next_id += 1
        msg = {"jsonrpc": "2.0", "id": self.next_id, "method": method}
        if params is not None:
            msg["params"] = params
        if pad:
            msg["pad"] = "x" * pad
        line = json.dumps(msg, separators=(",", ":")).encode() + b"\n"
        t0 = time.perf_counter_ns()
        self.p.stdin.write(line)
        self.p.stdin.flush()
        while True:
            resp = self.p.stdout.readline()
            t1 = time.perf_counter_ns()
            if not resp:
                raise Fail("%s closed stdout" % self.label)
            m = json.loads(resp)
            if m.get("id") == self.next_id:
                return m, t1 - t0

    def notify(self, method):
        self.p.stdin.write(json.dumps({"jsonrpc": "2.0", "method": method}).encode() + b"\n")
        self.p.stdin.flush()

    def stop(self):
        try:
            self.p.stdin.close()
        except OSError:
            pass
        try:
            self.p.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.p.kill()
            self.p.wait()
        self.err.close()


def result(label, resp):
    if "error" in resp:
        raise Fail("%s: JSON-RPC error %s" % (label, json.dumps(resp["error"])[:300]))
    res = resp.get("result", {})
    if res.get("isError"):
        raise Fail("%s: tool error %s" % (label, json.dumps(res.get("content"))[:300]))
    return res.get("structuredContent", {})


def pct(xs, p):
    xs = sorted(xs)
    k = (len(xs) - 1) * p / 100.0
    lo = int(k)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (k - lo)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--server", action="append", required=True, help="LABEL=BINARY")
    ap.add_argument("--floor", help="bench/fork_answer binary")
    ap.add_argument("--capture", required=True)
    ap.add_argument("--root", required=True, help="--allowed-root of the servers")
    ap.add_argument("--scratch", required=True)
    ap.add_argument("--rounds", type=int, default=300)
    ap.add_argument("--warmup", type=int, default=20)
    ap.add_argument("--pace-ms", type=float, default=0.0)
    ap.add_argument("--tools", default="list_hotspots,list_artifacts")
    a = ap.parse_args()

    servers = []
    floor = None
    try:
        for spec in a.server:
            label, binary = spec.split("=", 1)
            art = os.path.join(a.scratch, "art-" + label)
            os.makedirs(art, exist_ok=True)
            s = Server(label, [binary, "--allowed-root", a.root, "--artifact-root", art,
                               "--allow-writes"], os.path.join(a.scratch, label + ".err"))
            servers.append(s)
            init = s.call("initialize", {"protocolVersion": PROTOCOL, "capabilities": {},
                                         "clientInfo": {"name": "mcp_small", "version": "1"}})[0]
            if "error" in init:
                raise Fail("%s: initialize: %s" % (label, json.dumps(init["error"])[:300]))
            s.notify("notifications/initialized")
            sc = result(label, s.call("tools/call", {"name": "analyze_profile",
                                                     "arguments": {"path": a.capture}})[0])
            s.analysis_id = sc["analysis_id"]
        if a.floor:
            floor = Server("floor", [a.floor], os.path.join(a.scratch, "floor.err"))
        tools = [t for t in a.tools.split(",") if t]

        def args_of(tool, s):
            if tool == "list_hotspots":
                return {"analysis_id": s.analysis_id, "limit": 10}
            return {}

        lat = {(t, s.label): [] for t in tools for s in servers}
        lat.update({(t, "floor"): [] for t in tools})
        targets = servers + ([floor] if floor else [])
        pace = a.pace_ms / 1000.0
        for r in range(a.warmup + a.rounds):
            k = r % len(targets)
            order = targets[k:] + targets[:k]
            for t in tools:
                for s in order:
                    if pace:
                        time.sleep(pace)
                    if s is floor:
                        resp, dt = s.call("tools/call", {"name": t, "arguments": args_of(t, servers[0])})
                    else:
                        resp, dt = s.call("tools/call", {"name": t, "arguments": args_of(t, s)})
                        result(s.label, resp)
                    if r >= a.warmup:
                        lat[(t, s.label)].append(dt / 1e6)
    except Fail as e:
        print("mcp_small: %s" % e, file=sys.stderr)
        return 2
    finally:
        for s in servers:
            s.stop()
        if floor:
            floor.stop()

    labels = [s.label for s in servers] + (["floor"] if a.floor else [])
    print("rounds=%d warmup=%d pace_ms=%g load=%s" % (a.rounds, a.warmup, a.pace_ms,
          open("/proc/loadavg").read().split()[0]))
    for t in tools:
        p50 = {l: statistics.median(lat[(t, l)]) for l in labels}
        for l in labels:
            xs = lat[(t, l)]
            line = "tool=%s server=%s p50_ms=%.3f p10_ms=%.3f p90_ms=%.3f" % (
                t, l, p50[l], pct(xs, 10), pct(xs, 90))
            if a.floor and l != "floor":
                line += " over_floor=%.2f" % (p50[l] / p50["floor"])
            if l not in ("floor", labels[0]):
                line += " over_%s=%.2f" % (labels[0], p50[l] / p50[labels[0]])
            print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
