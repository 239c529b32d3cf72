#!/usr/bin/python3
"""pprof_craft.py - small pprof profiles written field by field (the wire
format of profile.proto), good and bad, for test_pprof_input.sh and the
fuzz corpus.  Usage: pprof_craft.py OUT_DIR; writes:

  good.pb          two sample types (samples/count, cpu/nanoseconds), a
                   mapping with a build-id, an inline chain, a frame without
                   lines, thread labels (comm, pid, tid)
  dangling.pb      good.pb plus a sample whose location id points nowhere
                   and a location whose function id points nowhere
  huge.pb          values that add up past 2^64
  truncated.pb     good.pb cut in the middle of a field
  wrongtype.pb     sample_type given as a varint instead of a message
  negative.pb      a sample with a negative value (a diff profile)

With BINARY BUILD_ID START LIMIT OFFSET ADDR... after OUT_DIR it also writes
  unsymbolized.pb  one sample whose locations (ADDR..., leaf first) have no
                   lines, in one mapping of BINARY with its build-id, loaded
                   at START..LIMIT from file OFFSET: what frame recovery
                   names from the binary
"""
import os
import sys


def varint(v):
    v &= (1 << 64) - 1
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        out.append(b | (0x80 if v else 0))
        if not v:
            return bytes(out)


def field(num, value):
    if isinstance(value, (bytes, bytearray)):
        return varint(num << 3 | 2) + varint(len(value)) + bytes(value)
    return varint(num << 3) + varint(value)


def packed(num, values):
    return field(num, b"".join(varint(v) for v in values))


class Strings:
    def __init__(self):
        self.table = [""]

    def __call__(self, s):
        if s not in self.table:
            self.table.append(s)
        return self.table.index(s)


def profile(extra_samples=(), extra_locations=(), values=None):
    s = Strings()
    out = bytearray()
    out += field(1, field(1, s("samples")) + field(2, s("count")))
    out += field(1, field(1, s("cpu")) + field(2, s("nanoseconds")))
    samples = [
        # leaf first: c (inlined into b) at location 3, a at 2, main at 1
        ([3, 2, 1], values or [2, 20000000], [("comm", "worker", 0), ("tid", None, 42)]),
        ([2, 1], [1, 10000000], []),
        ([4, 1], [1, 10000000], [("pid", None, 7)]),
    ] + list(extra_samples)
    for locs, vals, labels in samples:
        body = packed(1, locs) + packed(2, vals)
        for k, sv, nv in labels:
            lab = field(1, s(k)) + (field(2, s(sv)) if sv else field(3, nv))
            body += field(3, lab)
        out += field(2, body)
    out += field(3, field(1, 1) + field(2, 0x400000) + field(3, 0x500000) + field(4, 0)
                 + field(5, s("/opt/app/bin/app")) + field(6, s("0123456789abcdef0123456789abcdef01234567"))
                 + field(7, 1) + field(8, 1) + field(9, 1) + field(10, 1))
    locations = [
        (1, 1, 0x401000, [(1, 10)]),
        (2, 1, 0x402000, [(2, 20)]),
        (3, 1, 0x403000, [(4, 41), (3, 30)]),   # c inlined into b
        (4, 1, 0x404abc, []),                    # no lines: [unknown]
    ] + list(extra_locations)
    for lid, mid, addr, lines in locations:
        body = field(1, lid) + field(2, mid) + field(3, addr)
        for fid, line in lines:
            body += field(4, field(1, fid) + field(2, line))
        out += field(4, body)
    for fid, fname in [(1, "main"), (2, "a"), (3, "b"), (4, "c")]:
        out += field(5, field(1, fid) + field(2, s(fname)) + field(3, s(fname)) + field(4, s("/src/app.c")))
    for st in s.table:
        out += field(6, st.encode())
    out += field(11, field(1, s("cpu")) + field(2, s("nanoseconds")))
    out += field(12, 10000000)
    return bytes(out)


def unsymbolized(binary, build_id, start, limit, offset, addrs):
    s = Strings()
    out = bytearray()
    out += field(1, field(1, s("samples")) + field(2, s("count")))
    out += field(1, field(1, s("cpu")) + field(2, s("nanoseconds")))
    out += field(2, packed(1, list(range(1, len(addrs) + 1))) + packed(2, [5, 50000000]))
    out += field(3, field(1, 1) + field(2, start) + field(3, limit) + field(4, offset)
                 + field(5, s(binary)) + field(6, s(build_id)))
    for i, a in enumerate(addrs, 1):
        out += field(4, field(1, i) + field(2, 1) + field(3, a))
    for st in s.table:
        out += field(6, st.encode())
    return bytes(out)


def main():
    d = sys.argv[1]
    os.makedirs(d, exist_ok=True)
    good = profile()
    files = {
        "good.pb": good,
        "dangling.pb": profile(extra_samples=[([99, 1], [1, 5], []), ([5, 1], [1, 5], [])],
                               extra_locations=[(5, 1, 0x405000, [(77, 1)])]),
        "huge.pb": profile(extra_samples=[([1], [1, (1 << 63) - 1], []), ([2], [1, (1 << 63) - 1], [])]),
        "truncated.pb": good[: len(good) // 2 + 3],
        "wrongtype.pb": field(1, 5) + good,
        "negative.pb": profile(extra_samples=[([1], [1, -5], [])]),
    }
    if len(sys.argv) > 7:
        b, bid = sys.argv[2], sys.argv[3]
        start, limit, offset = (int(v, 0) for v in sys.argv[4:7])
        files["unsymbolized.pb"] = unsymbolized(b, bid, start, limit, offset, [int(v, 0) for v in sys.argv[7:]])
    for n, data in files.items():
        with open(os.path.join(d, n), "wb") as f:
            f.write(data)


if __name__ == "__main__":
    main()
