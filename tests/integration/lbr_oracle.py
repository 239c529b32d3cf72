#!/usr/bin/python3
"""lbr_oracle.py - what perf itself makes of a file lbr_craft.py wrote.

usage: lbr_oracle.py NAME ORIGINAL.data CRAFTED.data DEPTH [NR0_TIME...]

Runs `perf script -F tid,time,ip,sym` on the frame-pointer recording and
on its LBR rewrite and checks, sample by sample (both in perf's delivery
order, the times unchanged), that perf read the crafted file as an LBR
call stack: the kernel frames as recorded, then the user frames the
branch stack holds - the recorded user chain without its zero entries,
cut to DEPTH + 1 frames (the leaf from entries[0].to, one frame per
entry's `from`) - by symbol.  The original's user chain is perf's own
reading of the frame pointers, so perf on both files is the oracle; the
crafted file's frames must also differ from its own callchain (which
holds only the user leaf), or the branch stack was not what perf used.
NR0_TIME (ns, as lbr_craft.py prints them) names the samples whose branch
stack is empty: perf 6.1 still reads entries[0].to there, past the branch
stack, so each must show exactly one user frame, whatever its name.
Prints ok / not ok lines.
"""
import subprocess
import sys


def samples(path):
    run = subprocess.run(["perf", "script", "-i", path, "-F", "tid,time,ip,sym,symoff,dso", "--no-inline"],
                         capture_output=True, text=True, check=True)
    if not run.stdout.strip():
        raise SystemExit("not ok - perf script -i %s printed nothing: %s" % (path, run.stderr.strip()[:300]))
    out = run.stdout
    res, cur = [], None
    for line in out.split("\n"):
        if not line.strip():
            if cur is not None:
                res.append(cur)
            cur = None
        elif line[0] != "\t":
            # A sample's first line; frames start with a tab.  (Not "does
            # not start with a space": perf pads the tid to 5 columns, and
            # pid_max 32768 wraps here, so a tid under 10000 starts with one.)
            cur = {"head": line.strip(), "frames": []}
        elif cur is not None:
            ip, rest = line.strip().split(" ", 1)
            sym, dso = rest.rsplit(" (", 1)
            sym, plus, off = sym.rpartition("+0x")
            if not plus:  # [unknown]: no offset
                sym, off = off, "-1"
            cur["frames"].append((int(ip, 16), sym, dso.rstrip(")") == "[kernel.kallsyms]", int(off, 16)))
    if cur is not None:
        res.append(cur)
    return res


def same_frame(i, fp, lbr):
    """Frame i of the fp chain and of perf's LBR reading name the same call.
    By symbol, except where the fp frame's return address is the first
    byte of its function (ld.so's _start calls _dl_start as its last
    instruction, so its return address opens _dl_start_user): the branch
    stack holds the call instruction (5 bytes before), in the function
    before, and perf names that one."""
    if i > 0 and fp[3] == 0:
        return lbr[0] == fp[0] - 5
    return lbr[1] == fp[1]


def main():
    name, orig, crafted, depth = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    # perf script's time field: seconds and microseconds of the ns time.
    nr0 = {"%d.%06d:" % (int(t) // 10**9, int(t) % 10**9 // 1000) for t in sys.argv[5:]}
    a, b = samples(orig), samples(crafted)
    if len(a) != len(b) or not a:
        print("not ok - %s: perf script gives %d samples for the crafted file, %d for the original"
              % (name, len(b), len(a)))
        return
    bad, cut, kern, longest, empty = [], 0, 0, 0, 0
    for i, (x, y) in enumerate(zip(a, b)):
        kx = [f[1] for f in x["frames"] if f[2]]
        fx = [f for f in x["frames"] if not f[2] and not (f[0] == 0 and f[1] == "[unknown]")]
        ux = [f[1] for f in fx]
        ky = [f[1] for f in y["frames"] if f[2]]
        fy = [f for f in y["frames"] if not f[2]]
        uy = [f[1] for f in fy]
        if kx:
            kern += 1
        if ux and x["head"].split()[-1] in nr0:
            ok = kx == ky and len(uy) == 1
        else:
            ok = kx == ky and len(fy) == len(fx[:depth + 1]) and all(
                same_frame(i, a, b) for i, (a, b) in enumerate(zip(fx, fy)))
        if ux and x["head"].split()[-1] in nr0:
            empty += 1
        if len(ux) > depth + 1:
            cut += 1
        longest = max(longest, len(uy))
        if not ok and len(bad) < 3:
            bad.append("sample %d (%s): fp %s | crafted %s" % (i, x["head"], kx + ux, ky + uy))
        elif not ok:
            bad.append("")
    if bad:
        print("not ok - %s: perf reads %d of %d crafted samples otherwise: %s"
              % (name, len(bad), len(a), "; ".join(s for s in bad if s)))
    else:
        print("ok - %s: perf script reads the crafted file as LBR call stacks: %d samples, %d with kernel "
              "frames, %d cut at the LBR depth %d, up to %d user frames from the branch stack, %d with an "
              "empty one" % (name, len(a), kern, cut, depth, longest, empty))


if __name__ == "__main__":
    main()
