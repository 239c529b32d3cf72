"""inline_oracle.py - check source_context's inlined_samples against
eu-addr2line -i (run by test_source_context.sh).

argv: the source_context result (JSON), the perf.data, the binary (non-PIE,
so perf's addresses are the file's).  The samples of `prog` whose leaf is
in the binary are counted by address; eu-addr2line -i gives each address's
inline chain (the innermost line, then one call site per inlined level);
the samples whose chain passes through a line of inline_sum.c as a call
site are that line's inlined samples.
"""
import collections
import json
import subprocess
import sys

r = json.load(open(sys.argv[1]))
f = [x for x in r["files"] if x["recorded_path"].endswith("inline_sum.c")]
assert f, r
lines = {h["line"]: h for h in f[0]["hot_lines"]}
out = subprocess.run(["perf", "script", "-i", sys.argv[2], "-F", "comm,ip,dso", "-G"],
                     capture_output=True, text=True).stdout
addrs = collections.Counter()
for ln in out.splitlines():
    w = ln.split()
    if len(w) >= 3 and w[0] == "prog" and w[2].strip("()").endswith("/prog"):
        addrs[w[1]] += 1
assert addrs, out[:500]
want = collections.Counter()
for a, n in addrs.items():
    chain = subprocess.run(["eu-addr2line", "-i", "-e", sys.argv[3], "0x" + a],
                           capture_output=True, text=True).stdout.split()
    for site in set(chain[1:]):
        if site.split(":")[0].endswith("inline_sum.c"):
            want[int(site.split(":")[1])] += n
assert want, "eu-addr2line names no call site in inline_sum.c"
top_line, top = max(want.items(), key=lambda kv: kv[1])
got = lines.get(top_line, {})
assert got.get("inlined_samples", -1) == top, ("line %d: eu-addr2line %d, source_context %s" % (top_line, top, got), want)
assert f[0]["hot_lines"][0]["line"] == top_line, f[0]["hot_lines"]
assert got["self_samples"] * 10 < got["inlined_samples"], got
print("line %d: %d samples inlined there by eu-addr2line -i, %d by source_context (self %d)"
      % (top_line, top, got["inlined_samples"], got["self_samples"]))
