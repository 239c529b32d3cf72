"""chain_oracle.py - how deep perf's own output shows the known chain.

Usage: chain_oracle.py PERF_DATA  (prints JSON)
Reads `perf script` (its default output, not the probe's field list) of
a recording of `perflens --perflens-known-chain` and, for the chain built
with frame pointers (coll_chain_fp_N) and the one built without
(coll_chain_nofp_N), counts the samples whose first chain frame is the
bottom, 8, and how far 8, 7, ... 1 continue in a row; depth is the depth
at least half of those samples reach.  An oracle independent of the C
probe: perf prints, this reads.
"""
import json
import re
import subprocess
import sys

DEPTH = 8
out = subprocess.run(["perf", "script", "-i", sys.argv[1], "--no-inline"], capture_output=True,
                     text=True, errors="replace").stdout
frame = re.compile(r"^\s+[0-9a-f]+\s+(\S+?)(\+0x[0-9a-f]+)?\s+\(")
res = {}
for kind in ("fp", "nofp"):
    name = re.compile(r"^coll_chain_%s_(\d+)$" % kind)
    depths = []
    for block in out.split("\n\n"):
        levels = []
        for line in block.split("\n")[1:]:
            m = frame.match(line)
            if m:
                n = name.match(m.group(1))
                levels.append(int(n.group(1)) if n else 0)
        while levels and levels[0] == 0:  # kernel, clock_gettime
            levels.pop(0)
        if not levels or levels[0] != DEPTH:
            continue
        d = 1
        while d < min(len(levels), DEPTH) and levels[d] == DEPTH - d:
            d += 1
        depths.append(d)
    depths.sort(reverse=True)
    res[kind] = {"samples": len(depths), "full": depths.count(DEPTH),
                 "depth": depths[(len(depths) - 1) // 2] if depths else 0}
print(json.dumps(res))
