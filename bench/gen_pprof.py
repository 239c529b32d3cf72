#!/usr/bin/env python3
"""gen_pprof.py - a large Go-shaped CPU profile (profile.proto, gzipped) for
bench/formats.sh: the pprof reader against `go tool pprof -top`.

Usage: gen_pprof.py OUT.pb.gz SIZE_MB

Shaped as runtime/pprof writes a CPU profile (sample types samples/count and
cpu/nanoseconds, period 10 ms, one mapping with a build-id, functions with
files, locations with an address and one to three lines: inline chains),
but with far more distinct stacks than a real run of a few seconds gives:
samples walk a fixed random call tree (seed 1) to depths of 8 to 64, and
each sample is its own stack (as labels make them in Go).  Samples are
added until the gzipped file reaches SIZE_MB (10^6 bytes).  It prints one
line of key=value facts.
"""
import gzip
import os
import random
import sys
import zlib


def varint(v):
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


def main():
    out, size_mb = sys.argv[1], float(sys.argv[2])
    rnd = random.Random(1)
    strings = [""]
    index = {"": 0}

    def s(t):
        if t not in index:
            index[t] = len(strings)
            strings.append(t)
        return index[t]

    nfunc, nloc = 4000, 30000
    pkgs = ["main", "runtime", "net/http", "encoding/json", "sync", "bufio", "strings", "sort"]
    funcs = []
    for i in range(1, nfunc + 1):
        pkg = pkgs[i % len(pkgs)]
        funcs.append(field(1, i) + field(2, s("%s.fn%d" % (pkg, i))) + field(3, s("%s.fn%d" % (pkg, i)))
                     + field(4, s("/usr/lib/go/src/%s/f%d.go" % (pkg, i % 97))) + field(5, i % 500 + 1))
    locs = []
    for i in range(1, nloc + 1):
        lines = b"".join(field(4, field(1, rnd.randint(1, nfunc)) + field(2, rnd.randint(1, 900)))
                         for _ in range(rnd.choice((1, 1, 1, 2, 3))))
        locs.append(field(1, i) + field(2, 1) + field(3, 0x401000 + i * 16) + lines)
    # A call tree: node -> children locations; samples walk it.
    children = {}

    def kids(node):
        if node not in children:
            children[node] = [rnd.randint(1, nloc) for _ in range(rnd.randint(1, 4))]
        return children[node]

    head = bytearray()
    head += field(1, field(1, s("samples")) + field(2, s("count")))
    head += field(1, field(1, s("cpu")) + field(2, s("nanoseconds")))
    body = bytearray()
    z = zlib.compressobj(6)  # the compressed size so far, block by block
    zlen = 0
    nsamples = 0
    target = size_mb * 1e6
    block = bytearray()
    while True:
        for _ in range(5000):
            depth = rnd.randint(8, 64)
            path, node = [], 0
            for _ in range(depth):
                node = rnd.choice(kids(node))
                path.append(node)
            n = rnd.choice((1, 1, 1, 2, 3))
            block += field(2, packed(1, path[::-1]) + packed(2, [n, n * 10000000]))
            nsamples += 1
        body += block
        zlen += len(z.compress(bytes(block)))
        block = bytearray()
        if zlen > target * 0.9:
            break
    tail = bytearray()
    tail += field(3, field(1, 1) + field(2, 0x400000) + field(3, 0x400000 + nloc * 16 + 0x1000)
                  + field(5, s("/srv/app/bin/server")) + field(6, s("4f9c1a2b3c4d5e6f708192a3b4c5d6e7f8091a2b"))
                  + field(7, 1) + field(8, 1) + field(9, 1) + field(10, 1))
    for l in locs:
        tail += field(4, l)
    for f in funcs:
        tail += field(5, f)
    trailer = field(9, 1764547200000000000) + field(10, 30000000000) + \
        field(11, field(1, s("cpu")) + field(2, s("nanoseconds"))) + field(12, 10000000)
    strs = bytearray()
    for t in strings:
        strs += field(6, t.encode())
    data = bytes(head + body + tail + strs + trailer)
    with gzip.GzipFile(out, "wb", compresslevel=6, mtime=0) as f:
        f.write(data)
    print("file=%s gz_bytes=%d raw_bytes=%d samples=%d locations=%d functions=%d" %
          (out, os.path.getsize(out), len(data), nsamples, nloc, nfunc))


main()
