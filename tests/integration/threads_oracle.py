"""threads_oracle.py - per-thread figures recomputed from perf script text.

Usage: threads_oracle.py PERF_SCRIPT.txt OUT.json

Its own parser (not PerfLens's): a sample header `comm pid/tid time: period
event:` then frame lines `addr sym+off (dso)`, leaf first.  Writes, per event
and per tid: the samples under each comm it had, the number of samples and summed period, the self
samples per symbol (the leaf's), the samples of stacks through each
symbol (once per stack) and the first frame above the kernel's with its
caller ("sym<caller") per stack, for test_threads.sh to compare with list_threads,
list_hotspots, get_call_paths and get_hotspot filtered by tid or comm.
"""
import json
import re
import sys

HEADER = re.compile(r"^(?P<comm>.*?)\s+(?P<pid>\d+)/(?P<tid>\d+)\s+[0-9.]+:\s+(?P<period>\d+)\s+(?P<event>\S+):")
FRAME = re.compile(r"^\s+[0-9a-fA-F]+\s+(.*)$")


def symbol(rest):
    sym = rest.rsplit(" (", 1)[0] if rest.endswith(")") else rest
    return re.sub(r"\+0x[0-9a-fA-F]+$", "", sym.strip()) or "[unknown]"


def kernel(rest):
    return rest.endswith("([kernel.kallsyms])") or rest.endswith(".ko])")


def samples(path):
    cur = None
    for line in open(path, errors="replace"):
        line = line.rstrip("\n")
        m = FRAME.match(line) if cur else None
        if m:
            cur[3].append(symbol(m.group(1)))
            cur[5].append(kernel(m.group(1)))
            continue
        h = HEADER.match(line)
        if h or not line.strip():
            if cur:
                yield cur
            cur = (h.group("event"), int(h.group("tid")), h.group("comm"), [], int(h.group("period")), []) if h else None
    if cur:
        yield cur


def main():
    out = {}
    for event, tid, comm, frames, period, kern in samples(sys.argv[1]):
        t = out.setdefault(event, {}).setdefault(str(tid), {"comms": {}, "samples": 0, "period": 0,
                                                           "self": {}, "through": {}, "blocking": {}})
        first = [i for i, k in enumerate(kern) if not k and not frames[i].startswith("[state ")]
        if first:
            i = first[0]
            key = "%s<%s" % (frames[i], frames[i + 1] if i + 1 < len(frames) else "")
            t["blocking"][key] = t["blocking"].get(key, 0) + 1
        t["comms"][comm] = t["comms"].get(comm, 0) + 1
        t["samples"] += 1
        t["period"] += period
        if frames:
            t["self"][frames[0]] = t["self"].get(frames[0], 0) + 1
        for f in set(frames):
            t["through"][f] = t["through"].get(f, 0) + 1
    json.dump(out, open(sys.argv[2], "w"), sort_keys=True)


main()
