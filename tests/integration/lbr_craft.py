#!/usr/bin/python3
"""lbr_craft.py - turn a frame-pointer perf.data into the perf.data that
`perf record --call-graph lbr` would have written for the same samples.

This VM has no PMU, so perf cannot record LBR call stacks here; the test
records `perf record -e cpu-clock -g` of a fixture and rewrites it.  What
the rewrite does, from perf 6.1 (util/evsel.c __evsel__config_callchain,
builtin-record.c, kernel/events/core.c perf_output_sample):

- every attr (the attr section and EVENT_DESC's copies) gains
  PERF_SAMPLE_BRANCH_STACK in sample_type and branch_sample_type
  USER|CALL_STACK|NO_FLAGS|NO_CYCLES|HW_INDEX, as --call-graph lbr sets;
  HEADER_BRANCH_STACK stays clear (perf record clears it unless -b/-j);
- each sample's branch stack is {nr, hw_idx, nr x {from, to, flags}},
  entry i the call still on the stack i levels up: `from` the call
  instruction in frame i+1's function (its return address - 5), `to` the
  entry of frame i's function (from the ELF symbol tables, else the
  address itself); at most DEPTH entries, the innermost ones, as the
  hardware keeps them;
- the callchain keeps the kernel part, PERF_CONTEXT_USER and the user
  leaf only.  The kernel writes the frame-pointer user part too, but
  perf 6.1 (util/machine.c resolve_lbr_callchain_sample) reads the chain
  only up to PERF_CONTEXT_USER and takes the user frames from the branch
  stack; cutting it means a reader that walked the user chain instead
  would be caught.  Samples without a user part get nr 0.

Usage: lbr_craft.py IN OUT [--depth N] [--nr0 K] [--drop-lone] [--bad KIND]
  --depth N   LBR depth (default 32)
  --drop-lone samples whose user chain is one frame (no call for the LBR)
              are left out, so that no branch stack is empty
  --nr0 K     the K-th sample with a user part (0-based) gets nr 0
  --bad KIND  one sample made wrong: overrun (nr runs off the record),
              no-hwidx (attr has HW_INDEX, the sample lacks it: what the
              kernel writes when it has no branch stack), extra-hwidx (the
              attr lacks HW_INDEX, one sample carries one)
Prints what it wrote (samples, with a user part, entries, deepest stack),
then on a line of its own the times (ns) of the samples with a user part
and no entries: the --nr0 one, and those whose user chain was one frame
(the LBR holds no call for them).  Needs TIME in sample_type.
"""
import bisect
import struct
import sys

CTX_USER = (1 << 64) - 512
CTX_MAX = (1 << 64) - 4095
S_BRANCH_STACK = 1 << 11
S_CALLCHAIN = 1 << 5
BR_USER, BR_CALL_STACK, BR_NO_FLAGS, BR_NO_CYCLES, BR_HW_INDEX = 1, 1 << 11, 1 << 14, 1 << 15, 1 << 17
LBR_BRANCH_TYPE = BR_USER | BR_CALL_STACK | BR_NO_FLAGS | BR_NO_CYCLES | BR_HW_INDEX
FEAT_EVENT_DESC = 12


class Elf:
    """Function ranges of one ELF file, by file offset -> vaddr."""

    def __init__(self, path):
        self.loads, self.funcs = [], []
        try:
            b = open(path, "rb").read()
        except OSError:
            return
        if b[:4] != b"\x7fELF" or b[4] != 2 or b[5] != 1:
            return
        phoff, shoff = struct.unpack_from("<QQ", b, 32)
        phentsize, phnum, shentsize, shnum = struct.unpack_from("<HHHH", b, 54)
        for i in range(phnum):
            p_type, _, p_offset, p_vaddr, _, p_filesz = struct.unpack_from("<IIQQQQ", b, phoff + i * phentsize)
            if p_type == 1:
                self.loads.append((p_offset, p_filesz, p_vaddr))
        for i in range(shnum):
            sh = struct.unpack_from("<IIQQQQIIQQ", b, shoff + i * shentsize)
            if sh[1] not in (2, 11):   # SHT_SYMTAB, SHT_DYNSYM
                continue
            off, size, entsize = sh[4], sh[5], sh[9] or 24
            for k in range(size // entsize):
                _, info, _, shndx, value, sz = struct.unpack_from("<IBBHQQ", b, off + k * entsize)
                if info & 0xF in (2, 10) and sz and shndx:   # STT_FUNC, STT_GNU_IFUNC
                    self.funcs.append((value, value + sz))
        self.funcs.sort()
        self.starts = [f[0] for f in self.funcs]

    def func_start(self, file_off):
        """The file offset of the entry of the function at file_off, or None."""
        for p_offset, p_filesz, p_vaddr in self.loads:
            if p_offset <= file_off < p_offset + p_filesz:
                vaddr = file_off - p_offset + p_vaddr
                i = bisect.bisect_right(self.starts, vaddr) - 1
                if i >= 0 and self.funcs[i][0] <= vaddr < self.funcs[i][1]:
                    return self.funcs[i][0] - p_vaddr + p_offset
        return None


class Maps:
    """User mappings per pid from MMAP/MMAP2 records."""

    def __init__(self):
        self.by_pid, self.elves = {}, {}

    def add(self, pid, start, length, pgoff, name):
        self.by_pid.setdefault(pid, []).append((start, start + length, pgoff, name))

    def entry(self, pid, ip):
        """The runtime address of the entry of the function holding ip."""
        for start, end, pgoff, name in reversed(self.by_pid.get(pid, [])):
            if start <= ip < end:
                if name not in self.elves:
                    self.elves[name] = Elf(name)
                fs = self.elves[name].func_start(ip - start + pgoff)
                return ip if fs is None else fs - pgoff + start
        return ip


def records(b, off, end):
    while off + 8 <= end:
        typ, misc, size = struct.unpack_from("<IHH", b, off)
        if size < 8 or off + size > end:
            raise SystemExit("lbr_craft: bad record at %d" % off)
        yield off, typ, misc, size
        off += size


def main():
    args = sys.argv[1:]
    opts = {"--depth": "32", "--nr0": "-1", "--bad": ""}
    pos, drop_lone = [], False
    while args:
        a = args.pop(0)
        if a == "--drop-lone":
            drop_lone = True
        elif a in opts:
            opts[a] = args.pop(0)
        else:
            pos.append(a)
    if len(pos) != 2:
        raise SystemExit(__doc__)
    depth, nr0, bad = int(opts["--depth"]), int(opts["--nr0"]), opts["--bad"]
    b = open(pos[0], "rb").read()
    if b[:8] != b"PERFILE2":
        raise SystemExit("lbr_craft: not a little-endian file-mode perf.data")
    hsize, attr_size, a_off, a_size, d_off, d_size = struct.unpack_from("<QQQQQQ", b, 8)
    feats = int.from_bytes(b[72:104], "little")
    branch_type = LBR_BRANCH_TYPE & ~BR_HW_INDEX if bad == "extra-hwidx" else LBR_BRANCH_TYPE
    hw_idx_in_attr = bool(branch_type & BR_HW_INDEX)

    def patch_attr(buf, at):
        st = struct.unpack_from("<Q", buf, at + 24)[0]
        struct.pack_into("<Q", buf, at + 24, st | S_BRANCH_STACK)
        struct.pack_into("<Q", buf, at + 72, branch_type)
        return st

    out = bytearray(b[:d_off])
    sample_type = None
    for i in range(a_size // attr_size):
        st = patch_attr(out, a_off + i * attr_size)
        if sample_type not in (None, st):
            raise SystemExit("lbr_craft: events of different sample_type")
        sample_type = st
    if not sample_type & S_CALLCHAIN or sample_type & (1 << 4 | 1 << 10 | 1 << 11):
        raise SystemExit("lbr_craft: needs a -g recording without READ, RAW or a branch stack")
    # The u64 fields before the callchain (IDENTIFIER..PERIOD, no READ).
    before = bin(sample_type & (0xF | 0x1C0 | 1 << 9 | 1 << 16)).count("1")
    tid_at = 8 + 8 * bin(sample_type & (1 << 16 | 1)).count("1")

    maps = Maps()
    for off, typ, misc, size in records(b, d_off, d_off + d_size):
        if typ in (1, 10) and misc & 7 == 2:
            pid, _, start, length, pgoff = struct.unpack_from("<IIQQQ", b, off + 8)
            name_at = off + (40 if typ == 1 else 72)
            name = b[name_at:off + size].split(b"\0")[0].decode("utf-8", "replace")
            maps.add(pid, start, length, pgoff, name)

    stats = {"samples": 0, "user": 0, "entries": 0, "deepest": 0, "dropped": 0}
    bad_done = False
    nr0_times = []   # samples with a user part and an empty branch stack
    data = bytearray()
    for off, typ, misc, size in records(b, d_off, d_off + d_size):
        rec = b[off:off + size]
        if typ != 9:
            data += rec
            continue
        stats["samples"] += 1
        pid = struct.unpack_from("<I", rec, tid_at)[0]
        c = 8 + 8 * before
        nr = struct.unpack_from("<Q", rec, c)[0]
        chain = list(struct.unpack_from("<%dQ" % nr, rec, c + 8))
        rest = rec[c + 8 + 8 * nr:]
        if rest:
            raise SystemExit("lbr_craft: bytes after the callchain")
        entries = []
        if CTX_USER in chain:
            u = chain.index(CTX_USER)
            user = [ip for ip in chain[u + 1:] if 0 < ip < CTX_MAX]
            chain = chain[:u + 2]
            calls = user[:depth + 1]
            for k in range(len(calls) - 1):
                entries.append((calls[k + 1] - 5, maps.entry(pid, calls[k]), 0))
            if stats["user"] == nr0:
                entries = []
            elif drop_lone and len(calls) == 1:
                stats["dropped"] += 1
                continue
            if not entries:
                nr0_times.append(struct.unpack_from("<Q", rec, tid_at + 8)[0])
            stats["user"] += 1
        stats["entries"] += len(entries)
        stats["deepest"] = max(stats["deepest"], len(chain) + len(entries))
        branch = struct.pack("<Q", len(entries))
        extra = not bad_done and entries and bad == "extra-hwidx"
        if hw_idx_in_attr or extra:
            branch += struct.pack("<Q", len(entries) - 1 if entries else 0)
            bad_done = bad_done or extra
        for e in entries:
            branch += struct.pack("<QQQ", *e)
        if not bad_done and entries and bad == "overrun":
            branch = struct.pack("<Q", 1 << 40) + branch[8:]
            bad_done = True
        elif not bad_done and not entries and bad == "no-hwidx" and CTX_USER in chain:
            branch = struct.pack("<Q", 0)
            bad_done = True
        body = rec[8:c] + struct.pack("<Q", len(chain)) + struct.pack("<%dQ" % len(chain), *chain) + branch
        data += struct.pack("<IHH", typ, misc, 8 + len(body)) + body
    if bad and not bad_done:
        raise SystemExit("lbr_craft: no sample to make %s (use --nr0 for no-hwidx)" % bad)

    # Features follow the data: their table and payloads move with it.
    nfeat = bin(feats).count("1")
    f_at = d_off + d_size
    table = [struct.unpack_from("<QQ", b, f_at + 16 * i) for i in range(nfeat)]
    payloads = [bytearray(b[o:o + s]) for o, s in table]
    bits = [i for i in range(256) if feats >> i & 1]
    for bit, p in zip(bits, payloads):
        if bit == FEAT_EVENT_DESC:
            n, asz = struct.unpack_from("<II", p, 0)
            at = 8
            for _ in range(n):
                patch_attr(p, at)
                nids = struct.unpack_from("<I", p, at + asz)[0]
                slen = struct.unpack_from("<I", p, at + asz + 4)[0]
                at += asz + 8 + slen + 8 * nids
    out += data
    new_f = len(out)
    at = new_f + 16 * nfeat
    for p in payloads:
        out += struct.pack("<QQ", at, len(p))
        at += len(p)
    for p in payloads:
        out += p
    struct.pack_into("<Q", out, 48, len(data))
    open(pos[1], "wb").write(out)
    print("samples %(samples)d user %(user)d entries %(entries)d deepest %(deepest)d dropped %(dropped)d" % stats)
    print(" ".join(str(t) for t in nr0_times))


if __name__ == "__main__":
    main()
