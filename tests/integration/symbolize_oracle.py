"""symbolize_oracle.py - compare perflens symbolize with eu-addr2line.

Usage:
  symbolize_oracle.py PERFLENS BINARY OFFSETS_FILE OUTDIR [--starts FILE]
                      [--sources DIR] [--limit N] [--build-id HEX] [--name WHAT]
                      [--artifact-root DIR]

Runs `PERFLENS call symbolize` on every offset of OFFSETS_FILE (one hex
offset a line), following next_cursor to the end; each page is written to
OUTDIR/page-N.json (for validate_json.py).  Then asks the oracle,
eu-addr2line from elfutils, about the same offsets on BINARY:
  eu-addr2line --relative -a -S  -> symbol+offset (dwfl_module_addrinfo) and file:line:col
  eu-addr2line --relative -a -f -i -> innermost DWARF function and the inline chain
and compares function, function_offset, file, line, column, the innermost
function name and every (caller, call site) pair of the chain.

eu-addr2line -i computes the chain at the address of the line-table row
(src/addr2line.c passes &addr to dwfl_lineinfo, which overwrites it), not
at the offset asked.  Both agree whenever a DWARF scope covers the offset;
for offsets no function covers (padding) the chain is not compared, and the
count of those is printed.

--starts FILE: offsets that are function entries; their source line must
  lie in the body of the function named (the nearest definition line above
  it names it; checked in the source text under --sources).
--artifact-root DIR: passed to perflens (where it keeps symbol indexes).
--sources DIR: for answers whose file lies under DIR, the line must exist,
  and each inline call site's line must contain "NAME(" of the inlined
  function.
Prints one summary line per check as "ok - ..." or "not ok - ...".
Exit 0 when everything agrees.
"""
import json
import os
import re
import subprocess
import sys


def run_symbolize(perflens, binary, offsets, outdir, limit, build_id, root):
    answers, cursor, n = [], None, 0
    while True:
        args = {"offsets": ["0x%x" % o for o in offsets], "limit": limit}
        if build_id:
            args["build_id"] = build_id
        else:
            args["binary"] = binary
        if cursor:
            args["cursor"] = cursor
        out = subprocess.run([perflens, "call", "symbolize", json.dumps(args)]
                             + (["--artifact-root", root] if root else []),
                             capture_output=True, text=True)
        if out.returncode != 0:
            raise SystemExit("not ok - perflens symbolize exited %d: %s" % (out.returncode, out.stderr[:300]))
        page = json.loads(out.stdout)
        n += 1
        with open(os.path.join(outdir, "page-%d.json" % n), "w") as f:
            f.write(out.stdout)
        answers += page["answers"]
        cursor = page["page"]["next_cursor"]
        if not cursor:
            return answers, n, page["module"]


def eu_records(binary, offsets, flags):
    env = dict(os.environ)
    env.pop("DEBUGINFOD_URLS", None)
    text = subprocess.run(["eu-addr2line", "--relative", "-a"] + flags + ["-e", binary],
                          input="".join("0x%x\n" % o for o in offsets),
                          capture_output=True, text=True, env=env).stdout  # exit 1 when an offset has no scopes
    recs, cur = {}, None
    for line in text.splitlines():
        if re.fullmatch(r"0x[0-9a-f]{16}", line):
            cur = int(line, 16)
            recs[cur] = []
        elif cur is not None:
            recs[cur].append(line)
    return recs


def site(file, line, col):
    """A location as eu-addr2line's print_src writes it."""
    if file is None:
        return "??:0"
    return "%s:%d:%d" % (file, line, col) if col else "%s:%d" % (file, line)


def compare(answers, offsets, binary):
    by_off = {int(a["offset"], 16): a for a in answers}
    sym = eu_records(binary, offsets, ["-S"])
    fun = eu_records(binary, offsets, ["-f", "-i"])
    bad = {"function": [], "line": [], "innermost": [], "chain": []}
    skipped = 0
    for o in offsets:
        a, s, f = by_off[o], sym[o], fun[o]
        mine = "??"
        if "function" in a:
            mine = a["function"] + ("+0x%x" % a["function_offset"] if a["function_offset"] else "")
        theirs = "??" if s[0].startswith("(") else s[0]
        if mine != theirs:
            bad["function"].append("0x%x: eu %s, ours %s" % (o, theirs, mine))
        mloc = site(a.get("file"), a.get("line", 0), a.get("column", 0))
        if mloc != s[1]:
            bad["line"].append("0x%x: eu %s, ours %s" % (o, s[1], mloc))
        inner = f[0].split(" inlined at ")[0]
        chain = a.get("inlines", [])
        mine_inner = chain[0]["function"] if chain else a.get("subprogram", a.get("function", "??"))
        if inner != mine_inner:
            bad["innermost"].append("0x%x: eu %s, ours %s" % (o, inner, mine_inner))
        if "subprogram" not in a:
            skipped += 1
            continue
        theirs_chain = [(f[i], f[i + 1]) for i in range(2, len(f) - 1, 2)]
        mine_chain = []
        for i, e in enumerate(chain):
            caller = chain[i + 1]["function"] if i + 1 < len(chain) else a["subprogram"]
            mine_chain.append((caller, site(e["call_file"], e["call_line"], e["call_column"])))
        if theirs_chain != mine_chain:
            bad["chain"].append("0x%x: eu %s, ours %s" % (o, theirs_chain, mine_chain))
    return bad, skipped


def source_lines(path, cache={}):
    if path not in cache:
        try:
            with open(path, errors="replace") as f:
                cache[path] = f.read().split("\n")
        except OSError:
            cache[path] = None
    return cache[path]


# A line that starts a function definition in the fixtures' style.
DEFINITION = re.compile(r"^[A-Za-z_].*\)\s*\{")


def check_sources(answers, starts, root):
    bad, checked = [], 0
    root = os.path.realpath(root)
    for a in answers:
        file = a.get("file")
        if file and os.path.realpath(file).startswith(root + "/"):
            text = source_lines(file)
            checked += 1
            if text is None or not 1 <= a["line"] <= len(text):
                bad.append("%s: line %s of %s does not exist" % (a["offset"], a["line"], file))
                continue
            if int(a["offset"], 16) in starts:
                # The entry's line lies in the body of the function it
                # names: the nearest definition line above it names it.
                name = a.get("subprogram") or a.get("function")
                defs = [i for i in range(a["line"]) if DEFINITION.match(text[i])]
                if not defs or name + "(" not in text[defs[-1]]:
                    bad.append("%s: entry of %s at %s:%d is not in its body (%r)" % (
                        a["offset"], name, file, a["line"], text[defs[-1]].strip() if defs else None))
        for e in a.get("inlines", []):
            cf = e["call_file"]
            if cf and os.path.realpath(cf).startswith(root + "/"):
                text = source_lines(cf)
                checked += 1
                if text is None or not 1 <= e["call_line"] <= len(text) or \
                        e["function"] + "(" not in text[e["call_line"] - 1]:
                    bad.append("%s: %s inlined at %s:%d, which reads %r" % (
                        a["offset"], e["function"], cf, e["call_line"],
                        text[e["call_line"] - 1].strip() if text and 0 < e["call_line"] <= len(text) else None))
    return bad, checked


def main():
    argv = sys.argv[1:]
    opts = {"--starts": None, "--sources": None, "--limit": "500", "--build-id": None, "--name": None,
            "--artifact-root": None}
    pos = []
    while argv:
        a = argv.pop(0)
        if a in opts:
            opts[a] = argv.pop(0)
        else:
            pos.append(a)
    perflens, binary, offsets_file, outdir = pos
    what = opts["--name"] or os.path.basename(binary)
    offsets = [int(x, 16) for x in open(offsets_file).read().split()]
    answers, pages, module = run_symbolize(perflens, binary, offsets, outdir, int(opts["--limit"]), opts["--build-id"],
                                           opts["--artifact-root"])
    failed = False
    if len(answers) != len(offsets) or [int(a["offset"], 16) for a in answers] != offsets:
        print("not ok - %s: %d pages returned %d answers for %d offsets, in another order" % (what, pages, len(answers), len(offsets)))
        return 1
    print("ok - %s: %d offsets answered in order over %d page(s) (debug: %s)" % (what, len(offsets), pages, module["debug_source"]))
    bad, skipped = compare(answers, offsets, binary)
    names = {"function": "function+offset equals eu-addr2line -S",
             "line": "file:line:column equals eu-addr2line",
             "innermost": "innermost (inlined) function equals eu-addr2line -f",
             "chain": "inline chain (callers and call sites) equals eu-addr2line -i"}
    for k, desc in names.items():
        n = len(offsets) - (skipped if k == "chain" else 0)
        if bad[k]:
            failed = True
            print("not ok - %s: %s: %d of %d differ: %s" % (what, desc, len(bad[k]), n, "; ".join(bad[k][:3])))
        else:
            extra = " (%d offsets outside any DWARF function not compared)" % skipped if k == "chain" and skipped else ""
            print("ok - %s: %s for %d offsets%s" % (what, desc, n, extra))
    inlined = sum(1 for a in answers if a.get("inlines"))
    print("# %s: %d answers resolved, %d with inline chains (deepest %d)" % (
        what, sum(a["resolved"] for a in answers), inlined,
        max([len(a.get("inlines", [])) for a in answers] + [0])))
    if opts["--sources"]:
        starts = set(int(x, 16) for x in open(opts["--starts"]).read().split()) if opts["--starts"] else set()
        sbad, checked = check_sources(answers, starts, opts["--sources"])
        if sbad or not checked:
            failed = True
            print("not ok - %s: lines match the source text: %s" % (what, "; ".join(sbad[:3]) or "nothing checked"))
        else:
            print("ok - %s: %d lines and call sites match the source text (entries name their function, call sites call the inlined one)" % (what, checked))
    return 1 if failed else 0


sys.exit(main())
