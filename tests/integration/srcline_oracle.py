"""srcline_oracle.py - PerfLens's lines of a perf.data against eu-addr2line.

usage: srcline_oracle.py PERF_DATA STACKS_JSON RECORDED_PATH LOCAL_BINARY fp|dwarf

The oracle reads the samples with perf itself (perf script outside any
sandbox, --no-inline, user frames as module file offsets, as perf 6.1
prints them), turns each frame of RECORDED_PATH into an ELF address with
LOCAL_BINARY's PT_LOAD headers (readelf), and asks eu-addr2line -f -i
for its function and line chain: the leaf at its address, a caller of an
fp chain at its return address minus one, a caller of a DWARF chain at
the address perf printed (perf's unwinder already took one off); the
"leaf" is the user-mode pc: the first frame below any kernel frames.  Every
(function, file:line) of every frame of every sample is counted, inline
frames included, and compared with the same count over PerfLens's stack
table (stack weights in samples).  Prints the differences and exits 1
when there are any; with none prints how many frames agreed.
ORACLE_BUILDID_DIR, when set, is perf's build-id cache for its reading
(an empty one: perf then sees the binaries as a sandboxed perf does).
"""
import collections, json, os, re, subprocess, sys


def loads(binary):
    out = subprocess.run(["readelf", "-lW", binary], capture_output=True, text=True, check=True).stdout
    segs = []
    for line in out.splitlines():
        f = line.split()
        if f and f[0] == "LOAD":
            segs.append((int(f[1], 16), int(f[2], 16), int(f[4], 16)))
    return segs


def to_vaddr(segs, off):
    for p_offset, p_vaddr, filesz in segs:
        if p_offset <= off < p_offset + filesz:
            return off - p_offset + p_vaddr
    return None


def samples(data, recorded):
    """Per sample: the list of (file offset, is_leaf) of RECORDED frames."""
    cache = ["--buildid-dir", os.environ["ORACLE_BUILDID_DIR"]] if os.environ.get("ORACLE_BUILDID_DIR") else []
    out = subprocess.run(["perf"] + cache + ["script", "-i", data, "-F", "pid,ip,sym,dso", "--no-inline"],
                         capture_output=True, text=True).stdout
    res, cur, first = [], [], True
    for line in out.splitlines() + [""]:
        if not line.strip():
            if cur:
                res.append(cur)
            cur, first = [], True
            continue
        if not line.startswith("\t") and not line.startswith(" " * 8):
            cur, first = [], True
            continue
        m = re.match(r"\s*([0-9a-f]+) .*\((.*)\)\s*$", line)
        if m:
            if m.group(2) == recorded:
                cur.append((int(m.group(1), 16), first))
            # Kernel frames above the user-mode pc do not make it a return address.
            first = first and m.group(2).startswith("[kernel")
    return res


def addr2line(binary, addrs):
    """address -> [(function, file:line)] outermost first."""
    addrs = sorted(set(addrs))
    out = subprocess.run(["eu-addr2line", "-a", "-f", "-i", "-e", binary] + ["0x%x" % a for a in addrs],
                         capture_output=True, text=True, check=True).stdout.splitlines()
    res, cur, i = {}, None, 0
    while i < len(out):
        if out[i].startswith("0x"):
            cur = int(out[i], 16)
            res[cur] = []
            i += 1
            continue
        fn = out[i].split()[0]
        loc = out[i + 1].rsplit(":", 1)[0] if out[i + 1].count(":") >= 2 else out[i + 1]
        res[cur].append((fn, loc))
        i += 2
    for a in res:
        res[a].reverse()
    return res


def oracle(data, recorded, binary, mode):
    segs = loads(binary)
    want, frames = [], []
    for s in samples(data, recorded):
        for off, leaf in s:
            v = to_vaddr(segs, off)
            if v is None:
                continue
            look = v if leaf or mode == "dwarf" else v - 1
            frames.append(look)
        want.append([(to_vaddr(segs, o), leaf) for o, leaf in s])
    names = addr2line(binary, frames)
    count = collections.Counter()
    for s in want:
        for v, leaf in s:
            if v is None:
                continue
            for fl in names.get(v if leaf or mode == "dwarf" else v - 1, []):
                if "??" not in fl[1]:
                    count[fl] += 1
    return count


def perflens(stacks_path, recorded):
    t = json.load(open(stacks_path))
    strs = t["strings"]
    funcs = [e for s in t["functions"] for e in s.split(" ")]
    frames = [e for s in t["frames"] for e in s.split(" ")]
    stacks = [e for s in t["stacks"] for e in s.split(" ")]
    full, count = [], collections.Counter()
    for st in stacks:
        thread, base, own, weights = st.split("|")
        fr = []
        if base:
            b, shared = base.split(":")
            fr = full[int(b)][:int(shared)]
        fr = fr + [int(x) for x in own.split(",") if x]
        full.append(fr)
        n = sum(int(w.split(":")[1]) for w in weights.split(";") if w)
        for f in fr:
            parts = frames[f].split("|")
            fn = funcs[int(parts[0])].split("|")
            if len(fn) < 2 or strs[int(fn[1])] != recorded or len(parts) < 3 or not parts[2]:
                continue
            sl = strs[int(parts[2])]
            count[(strs[int(fn[0])], sl.rsplit(":", 1)[0] + ":" + sl.rsplit(":", 1)[1].split()[0])] += n
    return count


def main():
    data, stacks, recorded, binary, mode = sys.argv[1:6]
    want, got = oracle(data, recorded, binary, mode), perflens(stacks, recorded)
    diff = {k: (want.get(k, 0), got.get(k, 0)) for k in set(want) | set(got) if want.get(k, 0) != got.get(k, 0)}
    if diff or not want:
        print("differ (eu-addr2line, perflens):", sorted(diff.items(), key=lambda kv: -max(kv[1]))[:8])
        return 1
    print("%d frames in %d lines agree" % (sum(want.values()), len(want)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
