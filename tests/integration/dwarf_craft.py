#!/usr/bin/python3
"""dwarf_craft.py BINARY OUT: write OUT, a perf.data of an aarch64
recording made with --call-graph dwarf, whose samples stand in the known
chain of fixtures/dwarf-aarch64/chain (_start > chain_main > chain_mid >
chain_leaf, each frame a 16-byte stp x29, x30 pair).  One process (pid
100), one thread per case, its comm naming it:
  full    the whole chain in a 56-byte stack copy (64 recorded);
  short   a 24-byte copy: the leaf's pair and one word, so the chain
          ends at chain_mid (memory_outside_copy).  The copy's last word
          is never read from the copy, as perf's access_mem does
          (addr + 8 >= end goes to the files);
  wild    the leaf's saved x30 points at no module: [unknown], then the
          chain ends (no_module);
  noregs  abi 0 (no user registers): no user frames, as perf.
The registers and the stack words are what an aarch64 CPU would hold at
chain_leaf+8; addresses come from BINARY's symbol table."""
import struct, sys

binary, out = sys.argv[1], sys.argv[2]
elf = open(binary, "rb").read()

def symbols(b):
    shoff, = struct.unpack_from("<Q", b, 0x28)
    shentsize, shnum = struct.unpack_from("<HH", b, 0x3A)
    secs = [struct.unpack_from("<IIQQQQIIQQ", b, shoff + i * shentsize) for i in range(shnum)]
    syms = {}
    for s in secs:
        if s[1] != 2:  # SHT_SYMTAB
            continue
        strtab = secs[s[6]]
        for k in range(s[5] // 24):
            name, info, other, shndx, value, size = struct.unpack_from("<IBBHQQ", b, s[4] + 24 * k)
            n = b[strtab[4] + name:b.index(b"\0", strtab[4] + name)].decode()
            syms[n] = value
    return syms

sym = symbols(elf)
leaf, mid, main, start = sym["chain_leaf"], sym["chain_mid"], sym["chain_main"], sym["_start"]
S = 0x7ffffff000
# Stack words from S up: leaf's pair (x29 = mid's frame, x30 = into mid),
# mid's pair, main's pair (x29 0 in _start, x30 = into _start).
stack_full = [S + 16, mid + 12, S + 32, main + 12, 0, start + 8, 0]

PERF_SAMPLE = 0x1 | 0x2 | 0x4 | 0x20 | 0x100 | 0x1000 | 0x2000  # IP TID TIME CALLCHAIN PERIOD REGS_USER STACK_USER
REGS_MASK = (1 << 33) - 1                                       # x0..x30, sp, pc
STACK_USER = 64

def rec(rtype, misc, body):
    return struct.pack("<IHH", rtype, misc, 8 + len(body)) + body

def padded(s, to=8):
    b = s.encode() + b"\0"
    return b + b"\0" * (-len(b) % to)

def sample(tid, t, stack_words, pc_off=8, abi=2, saved_lr=None):
    words = list(stack_words)
    if saved_lr is not None:
        words[1] = saved_lr
    pc = leaf + pc_off
    body = struct.pack("<QIIQQ", pc, 100, tid, t, 1000)
    body += struct.pack("<Q", 0)                        # callchain nr 0 (exclude_callchain_user)
    body += struct.pack("<Q", abi)
    if abi:
        regs = [0x1000 + i for i in range(29)] + [S, mid + 12, S, pc]  # x0..x28, x29, x30, sp, pc
        body += struct.pack("<%dQ" % len(regs), *regs)
    data = b"".join(struct.pack("<Q", w) for w in words)
    body += struct.pack("<Q", STACK_USER) + data + b"\0" * (STACK_USER - len(data))
    body += struct.pack("<Q", len(data))               # dyn_size
    return rec(9, 2, body)

records = b""
for tid, comm in ((100, "full"), (101, "short"), (102, "wild"), (103, "noregs")):
    records += rec(3, 0, struct.pack("<II", 100, tid) + padded(comm))
records += rec(10, 2, struct.pack("<IIQQQIIQQII", 100, 100, 0x400000, 0x10000, 0, 8, 1, 42, 0, 5, 2) + padded(binary))
records += sample(100, 1000, stack_full)
records += sample(101, 2000, stack_full[:3])
records += sample(102, 3000, stack_full, saved_lr=0xdead0000)
records += sample(103, 4000, stack_full, abi=0)

attr = bytearray(128)
flags = (1 << 8) | (1 << 9) | (1 << 22)                 # mmap, comm, exclude_callchain_user
struct.pack_into("<IIQQQQQ", attr, 0, 1, 128, 0, 1000, PERF_SAMPLE, 0, flags)
struct.pack_into("<QI", attr, 80, REGS_MASK, STACK_USER)
attr_off = 104
data_off = attr_off + 144
feat_off = data_off + len(records)
arch = padded("aarch64", 64)
feat_payload = struct.pack("<I", len(arch)) + arch
header = b"PERFILE2" + struct.pack("<QQ", 104, 144)
header += struct.pack("<QQQQQQ", attr_off, 144, data_off, len(records), 0, 0)
header += struct.pack("<QQQQ", 1 << 6, 0, 0, 0)          # HEADER_ARCH
blob = header + bytes(attr) + struct.pack("<QQ", 0, 0) + records
blob += struct.pack("<QQ", feat_off + 16, len(feat_payload)) + feat_payload
open(out, "wb").write(blob)
