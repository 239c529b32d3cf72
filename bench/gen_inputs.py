#!/usr/bin/env python3
"""gen_inputs.py - build large benchmark inputs from real captures.

Every input is made by repeating or varying real data; no format is
invented.  Sizes are in MB = 10^6 bytes.

  perf-script   repeat a real `perf script` capture to a target size.  Copy k
                of the capture (k = 1 .. variants-1, then again from 0) has
                the first word of every record's comm suffixed with "-k", so
                the output holds about `variants` times the capture's unique
                stacks; variants=1 is plain repetition.  The capture's "#"
                header is written once, at the top, as perf writes it.
  folded-unique from real folded stacks, write exactly N unique stacks: stack
                i is base stack i % n, and copies after the first get their
                leaf frame renamed "LEAF.constprop.k" (a GCC clone suffix),
                keeping the base stack's count (each real file's counts
                divided by their GCD, so period-weighted files count samples;
                files weighted by a varying period are left out).
  folded-repeat repeat a folded file to a target size (concatenated folded
                files, as from many runs; unique stacks do not grow).
  folded-vary   a "candidate" run of a folded file, as after a code change:
                each stack's count scaled by a factor from 0.5 to 1.5, every
                20th stack dropped, every 20th (from the 10th) with its leaf
                renamed "LEAF.v2", and for each dropped stack a new one
                ("LEAF.v3", half its count), so the output has as many
                unique stacks as the input.  Deterministic (fixed seed).

Each command prints one line of key=value facts about what it wrote.
"""
import argparse
import gzip
import math
import os
import sys

MB = 1000 * 1000


def read_bytes(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        return f.read()


def split_capture(data):
    """Return (header, parts): header is the leading '#' comment block;
    joining parts with a suffix inserts it after the first word of each
    record's comm.  The body is made to end with a blank line."""
    lines = data.splitlines(keepends=True)
    i = 0
    while i < len(lines) and (lines[i].startswith(b"#") or not lines[i].strip()):
        i += 1
    header = b"".join(lines[:i])
    parts, cur, at_start, records = [], [], True, 0
    for line in lines[i:]:
        stripped = line.strip()
        if not stripped:
            at_start = True
            cur.append(line)
            continue
        if at_start and not line.startswith(b"#"):
            # A record's first line: "comm  pid/tid [cpu] time: period event:".
            # Frame lines are indented; a header line starts with the comm.
            lead = len(line) - len(line.lstrip())
            end = lead
            while end < len(line) and not line[end:end + 1].isspace():
                end += 1
            cur.append(line[:end])
            parts.append(b"".join(cur))
            cur = [line[end:]]
            records += 1
        else:
            cur.append(line)
        at_start = False
    tail = b"".join(cur)
    if not tail.endswith(b"\n\n"):
        tail += b"\n" if tail.endswith(b"\n") else b"\n\n"
    parts.append(tail)
    return header, parts, records


def cmd_perf_script(a):
    header, parts, records = split_capture(read_bytes(a.base))
    target = int(a.size_mb * MB)
    written, copies = 0, 0
    with open(a.out, "wb") as out:
        out.write(header)
        written += len(header)
        while written < target:
            k = copies % a.variants
            body = b"".join(parts) if k == 0 else ("-%d" % k).encode().join(parts)
            out.write(body)
            written += len(body)
            copies += 1
    print("bytes=%d copies=%d records=%d variants=%d"
          % (written, copies, copies * records, min(copies, a.variants)))


def read_folded(paths):
    """Real folded stacks, deduplicated (counts summed), in first-seen order,
    and the files left out.  Each file's counts are divided by their greatest
    common divisor, so that a capture weighted by a fixed period (cpu-clock:
    10101010 a sample) counts samples like the others.  A file whose counts
    still average over 100 a stack is weighted by a varying period (perf's
    adaptive frequency): its unit does not mix with sample counts, and it
    would fill the whole flame graph, so it is left out."""
    stacks, left_out = {}, []
    for p in paths:
        lines = []
        for line in read_bytes(p).splitlines():
            stack, sep, count = line.rstrip().rpartition(b" ")
            if sep and stack and count.isdigit() and int(count) > 0:
                lines.append((stack, int(count)))
        if not lines:
            continue
        g = 0
        for _, count in lines:
            g = math.gcd(g, count)
        if sum(count // g for _, count in lines) > 100 * len(lines):
            left_out.append(os.path.basename(p))
            continue
        for stack, count in lines:
            stacks[stack] = stacks.get(stack, 0) + count // g
    return list(stacks.items()), left_out


def cmd_folded_unique(a):
    base, left_out = read_folded(a.inputs)
    if not base:
        sys.exit("gen_inputs.py: no folded stacks in %s" % " ".join(a.inputs))
    n, written, samples, seen = len(base), 0, 0, set()
    with open(a.out, "wb") as out:
        for i in range(a.stacks):
            stack, count = base[i % n]
            k = i // n
            if k:
                stack = b"%s.constprop.%d" % (stack, k)
            if stack in seen:  # a base leaf already ending in .constprop.k
                stack = b"%s.%d" % (stack, i)
            seen.add(stack)
            line = b"%s %d\n" % (stack, count)
            out.write(line)
            written += len(line)
            samples += count
    print("bytes=%d stacks=%d base_stacks=%d samples=%d left_out=%s"
          % (written, a.stacks, n, samples, ",".join(left_out) or "none"))


def cmd_folded_repeat(a):
    data = read_bytes(a.input)
    if not data.endswith(b"\n"):
        data += b"\n"
    target = int(a.size_mb * MB)
    written, copies = 0, 0
    with open(a.out, "wb") as out:
        while written < target:
            out.write(data)
            written += len(data)
            copies += 1
    print("bytes=%d copies=%d lines=%d" % (written, copies, copies * data.count(b"\n")))


def cmd_folded_vary(a):
    import random
    rnd = random.Random(a.seed)
    data = read_bytes(a.input)
    kept = added = dropped = 0
    with open(a.out, "wb") as out:
        for i, line in enumerate(data.splitlines()):
            stack, sep, count = line.rpartition(b" ")
            if not sep or not count.isdigit():
                continue
            scaled = max(1, int(int(count) * (0.5 + rnd.random())))
            if i % 20 == 0:
                dropped += 1
                continue
            if i % 20 == 10:
                stack += b".v2"
                added += 1
            else:
                kept += 1
            out.write(b"%s %d\n" % (stack, scaled))
        # as many new stacks as were dropped: kept at N unique stacks
        for i, line in enumerate(data.splitlines()):
            if i % 20 != 0:
                continue
            stack, _, count = line.rpartition(b" ")
            out.write(b"%s.v3 %d\n" % (stack, max(1, int(count) // 2)))
            added += 1
    print("stacks=%d kept=%d renamed_or_new=%d dropped=%d" % (kept + added, kept, added, dropped))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("perf-script")
    p.add_argument("--base", required=True, help="real perf script capture (.gz ok)")
    p.add_argument("--out", required=True)
    p.add_argument("--size-mb", type=float, required=True)
    p.add_argument("--variants", type=int, default=1)
    p.set_defaults(fn=cmd_perf_script)
    p = sub.add_parser("folded-unique")
    p.add_argument("--out", required=True)
    p.add_argument("--stacks", type=int, required=True)
    p.add_argument("inputs", nargs="+", help="real folded files")
    p.set_defaults(fn=cmd_folded_unique)
    p = sub.add_parser("folded-repeat")
    p.add_argument("--input", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--size-mb", type=float, required=True)
    p.set_defaults(fn=cmd_folded_repeat)
    p = sub.add_parser("folded-vary")
    p.add_argument("--input", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--seed", type=int, default=5)
    p.set_defaults(fn=cmd_folded_vary)
    a = ap.parse_args()
    if getattr(a, "variants", 1) < 1:
        ap.error("--variants must be >= 1")
    os.makedirs(os.path.dirname(os.path.abspath(a.out)), exist_ok=True)
    a.fn(a)


if __name__ == "__main__":
    main()
