# test_symbolize.sh - symbolize and inspect_elf against independent oracles.
#
# Fixture programs are built here with gcc -g at -O0 and -O2 (static inline
# helpers that -O2 inlines, nested, and a function in a second file).  The
# offsets are every function entry from nm plus every 7th instruction of
# objdump -d; perflens's answers (function+offset, file:line:column, the
# innermost function and the inline chain) must equal eu-addr2line's on the
# same binary, and lines must match the source text.  libc is checked the
# same way with its debug file from libc6-dbg (/usr/lib/debug/.build-id).
# A binary stripped with objcopy and given a .gnu_debuglink resolves like
# the unstripped one.  inspect_elf is checked against eu-readelf.  Every
# tool result is validated against its outputSchema.
# Symbol indexes (tools/core/symindex.h): every CLI call keeps them under
# $WORK/art/cache/symindex, so the first page of each module above builds
# its index and the later pages (fresh processes) read it; then the same
# offsets are asked again with every index warm, and with an index file
# corrupted or truncated (refused, rebuilt byte-identical), each time
# against eu-addr2line.  Through MCP, a sandboxed worker with
# --allow-writes builds and reads the index too.
. tests/integration/lib.sh

VALIDATE="/usr/bin/python3 tests/integration/validate_json.py"
ORACLE="/usr/bin/python3 tests/integration/symbolize_oracle.py --artifact-root $WORK/art"
SYM_SCHEMA=schemas/tools/symbolize.json:outputSchema
ELF_SCHEMA=schemas/tools/inspect_elf.json:outputSchema
unset DEBUGINFOD_URLS
export DEBUGINFOD_URLS=

for tool in gcc objcopy objdump nm eu-addr2line eu-readelf; do
	if ! command -v "$tool" > /dev/null 2>&1; then
		skip "symbolize: $tool is not installed (apt-get install build-essential elfutils)"
		exit 0
	fi
done
if ! /usr/bin/python3 -c 'import jsonschema' 2>/dev/null; then
	skip "symbolize: /usr/bin/python3 has no jsonschema (apt-get install python3-jsonschema)"
	exit 0
fi

pl() { "$PERFLENS" "$@" --artifact-root "$WORK/art"; }

# validate WHAT SCHEMA FILES...: every document conforms to the schema.
validate() {
	v_what=$1 v_schema=$2
	shift 2
	if v_out=$($VALIDATE "$v_schema" "$@" 2>&1); then
		ok "$v_what: $# result(s) validate against ${v_schema#schemas/tools/}"
	else
		notok "$v_what: result does not validate: $(echo "$v_out" | head -3 | tr '\n' ' ')"
	fi
}

# ------------------------------------------------------------ fixtures

mkdir -p "$WORK/src" "$WORK/bin" "$WORK/art"
cat > "$WORK/src/main.c" <<'EOF'
#include <stdio.h>
#include <stdlib.h>
int helper_other(int x);
static inline int square_plus(int x) { return x * x + (x >> 3); }
static inline int pair_sum(int x) { int r = square_plus(x) + square_plus(x + 1); return r * 2; }
static inline int triple(int x) { int t = pair_sum(x) ^ pair_sum(x + 7); return t + pair_sum(t & 15); }
__attribute__((noinline)) int work_loop(int n) {
	int acc = 0;
	for (int i = 0; i < n; i++)
		acc += triple(i) ^ helper_other(i);
	return acc;
}
__attribute__((noinline)) long accumulate(const int *v, int n) {
	long s = 0;
	for (int i = 0; i < n; i++)
		s += square_plus(v[i]);
	return s;
}
int main(int argc, char **argv) {
	int n = argc > 1 ? atoi(argv[1]) : 1000;
	int v[64];
	for (int i = 0; i < 64; i++)
		v[i] = i * n;
	printf("%d %ld\n", work_loop(n), accumulate(v, 64));
	return 0;
}
EOF
cat > "$WORK/src/other.c" <<'EOF'
static inline unsigned mix_bits(unsigned v) { return (v * 2654435761u) >> 7; }
static inline unsigned mix_twice(unsigned v) { return mix_bits(v) ^ mix_bits(v >> 3); }
int helper_other(int x) {
	unsigned t = 0;
	for (int k = 0; k < 3; k++)
		t += mix_twice((unsigned)(x + k));
	return (int)t;
}
EOF
for opt in O0 O2; do
	if ! gcc -g -$opt -o "$WORK/bin/fix_$opt" "$WORK/src/main.c" "$WORK/src/other.c" 2> "$WORK/gcc.err"; then
		notok "symbolize: gcc -g -$opt failed: $(head -c 300 "$WORK/gcc.err")"
		exit 0
	fi
done

# offsets BINARY OUT STARTS: entries of functions in .text (nm) plus every
# 7th instruction address of .text (objdump -d).
offsets() {
	nm --defined-only "$1" | awk '$2 ~ /^[Tt]$/ { print "0x" $1 }' | sort -u > "$3"
	objdump -d -j .text --no-show-raw-insn "$1" |
		awk '/^ *[0-9a-f]+:/ { sub(":", "", $1); print "0x" $1 }' | awk 'NR % 7 == 1' > "$2.ins"
	cat "$3" "$2.ins" | /usr/bin/python3 -c 'import sys; print("\n".join("0x%x" % a for a in sorted({int(x, 16) for x in sys.stdin.read().split()})))' > "$2"
}

for opt in O0 O2; do
	bin=$WORK/bin/fix_$opt
	offsets "$bin" "$WORK/off_$opt" "$WORK/starts_$opt"
	mkdir -p "$WORK/pages_$opt"
	$ORACLE "$PERFLENS" "$bin" "$WORK/off_$opt" "$WORK/pages_$opt" --limit 37 \
		--starts "$WORK/starts_$opt" --sources "$WORK/src" --name "fixture -$opt"
	validate "symbolize fixture -$opt" "$SYM_SCHEMA" "$WORK/pages_$opt"/page-*.json
done
# -O2 must really have inlined, nested: otherwise the chain checks are empty.
if /usr/bin/python3 - "$WORK/pages_O2" <<'PY'
import glob, json, sys
deep = max(len(a.get("inlines", [])) for p in glob.glob(sys.argv[1] + "/page-*.json") for a in json.load(open(p))["answers"])
sys.exit(0 if deep >= 3 else 1)
PY
then ok "symbolize fixture -O2: chains three inlined calls deep are present"
else notok "symbolize fixture -O2: no offset inside a 3-deep inline chain (gcc did not inline?)"; fi

# ------------------------------------------------ stripped + debuglink

s=$WORK/bin/stripped
mkdir -p "$s/.debug"
objcopy --only-keep-debug "$WORK/bin/fix_O2" "$s/fix_O2.debug"
objcopy --strip-all --add-gnu-debuglink="$s/fix_O2.debug" "$WORK/bin/fix_O2" "$s/fix_O2"
objcopy --strip-all --add-gnu-debuglink="$s/fix_O2.debug" "$WORK/bin/fix_O2" "$s/fix_O2_sub"
cp "$s/fix_O2.debug" "$s/.debug/"
if eu-readelf -S "$s/fix_O2" | grep -q -e '\.symtab' -e '\.debug_info'; then
	notok "symbolize stripped: objcopy --strip-all left .symtab or .debug_info"
fi
mkdir -p "$WORK/pages_strip"
$ORACLE "$PERFLENS" "$s/fix_O2" "$WORK/off_O2" "$WORK/pages_strip" --limit 500 --name "stripped -O2 with .gnu_debuglink"
validate "symbolize stripped" "$SYM_SCHEMA" "$WORK/pages_strip"/page-*.json
/usr/bin/python3 - "$WORK/pages_O2" "$WORK/pages_strip" <<'PY' && ok "symbolize stripped: answers equal the unstripped binary's, debug file found by debuglink" || notok "symbolize stripped: answers differ from the unstripped binary's"
import glob, json, sys
def load(d):
    pages = sorted(glob.glob(d + "/page-*.json"), key=lambda p: int(p.rsplit("-", 1)[1][:-5]))
    return [a for p in pages for a in json.load(open(p))["answers"]], json.load(open(pages[0]))["module"]
a, _ = load(sys.argv[1])
b, m = load(sys.argv[2])
sys.exit(0 if a == b and m["debug_source"] == "debuglink" else 1)
PY
# The same debug file found in .debug/ when it is not beside the binary.
mv "$s/fix_O2.debug" "$s/moved.debug"
pl call symbolize "{\"binary\":\"$s/fix_O2\",\"offsets\":[\"$(sed -n 2p "$WORK/starts_O2")\"]}" > "$WORK/sub.json" 2> "$WORK/err"
grep -q "\"debug_file\": \"$s/.debug/fix_O2.debug\"" "$WORK/sub.json" &&
	ok "symbolize stripped: the debuglink file is found in .debug/ too" ||
	notok "symbolize stripped: .debug/ not searched: $(head -c 300 "$WORK/sub.json" "$WORK/err")"
rm -rf "$s/.debug"
pl call symbolize "{\"binary\":\"$s/fix_O2\",\"offsets\":[\"$(sed -n 2p "$WORK/starts_O2")\"]}" > "$WORK/nodebug.json" 2> "$WORK/err"
if grep -q '"resolved": false' "$WORK/nodebug.json" && grep -q 'no debug file was found' "$WORK/nodebug.json"; then
	ok "symbolize stripped without its debug file: resolved=false naming the places tried"
else
	notok "symbolize stripped without its debug file: $(head -c 400 "$WORK/nodebug.json" "$WORK/err")"
fi
validate "symbolize stripped without debug file" "$SYM_SCHEMA" "$WORK/nodebug.json"
mv "$s/moved.debug" "$s/fix_O2.debug"

# ------------------------------------------------------------------ libc

LIBC=$(ldd "$WORK/bin/fix_O2" | awk '/libc\.so/ { print $3 }')
LIBC=$(readlink -f "$LIBC")
LIBC_ID=$(eu-readelf -n "$LIBC" | awk '/Build ID:/ { print $3 }')
LIBC_DEBUG=/usr/lib/debug/.build-id/$(echo "$LIBC_ID" | cut -c1-2)/$(echo "$LIBC_ID" | cut -c3-).debug
if [ -z "$LIBC_ID" ] || [ ! -f "$LIBC_DEBUG" ]; then
	skip "symbolize libc: no debug file $LIBC_DEBUG for $LIBC (apt-get install libc6-dbg)"
else
	# Every 7th exported function entry, and every 1000th instruction
	# (inside functions, many in inlined code).
	nm -D --defined-only "$LIBC" | awk '$2 ~ /^[TtWi]$/ { print "0x" $1 }' | sort -u | awk 'NR % 7 == 1' > "$WORK/libc.entries"
	objdump -d --no-show-raw-insn "$LIBC" | awk '/^ *[0-9a-f]+:/ { sub(":", "", $1); print "0x" $1 }' |
		awk 'NR % 1000 == 500' > "$WORK/libc.ins"
	cat "$WORK/libc.entries" "$WORK/libc.ins" |
		/usr/bin/python3 -c 'import sys; print("\n".join("0x%x" % a for a in sorted({int(x, 16) for x in sys.stdin.read().split()})))' \
		> "$WORK/off_libc"
	mkdir -p "$WORK/pages_libc"
	$ORACLE "$PERFLENS" "$LIBC" "$WORK/off_libc" "$WORK/pages_libc" --limit 250 --name libc
	validate "symbolize libc" "$SYM_SCHEMA" "$WORK/pages_libc"/page-*.json
	# By build-id alone: the debug file under /usr/lib/debug/.build-id
	# answers the same (its code sections are empty; symbols and DWARF are
	# all a symbolizer needs).
	head -n 60 "$WORK/off_libc" > "$WORK/off_libc60"
	mkdir -p "$WORK/pages_bid"
	$ORACLE "$PERFLENS" "$LIBC" "$WORK/off_libc60" "$WORK/pages_bid" --build-id "$LIBC_ID" --name "libc by build-id"
	grep -q "\"path\": \"$LIBC_DEBUG\"" "$WORK/pages_bid/page-1.json" &&
		ok "symbolize libc by build-id: found at $LIBC_DEBUG" ||
		notok "symbolize libc by build-id: module is $(grep -m1 '"path"' "$WORK/pages_bid/page-1.json")"
fi

# ------------------------------------------------------------ symbol index

IDX=$WORK/art/cache/symindex
FIX_ID=$(eu-readelf -n "$WORK/bin/fix_O2" | awk '/Build ID:/ { print $3 }')
if [ -f "$IDX/$FIX_ID.idx" ] && { [ -z "${LIBC_ID:-}" ] || [ ! -f "$LIBC_DEBUG" ] || [ -f "$IDX/$LIBC_ID.idx" ]; }; then
	ok "symbol index: written under the artifact root ($(ls "$IDX" | wc -l) files, $(cat "$IDX"/*.idx | wc -c) bytes)"
else
	notok "symbol index: no index files in $IDX: $(ls "$IDX" 2>&1 | head -5 | tr '\n' ' ')"
fi
# method_index DIR WHAT: every page says its answers came from the index;
# the first may say libdw when it found the index refused (another module
# of the same build-id, the stripped copy, wrote it from other files): it
# is rebuilt after that answer, never on a call's path.
method_index() {
	if /usr/bin/python3 - "$1" <<'PY'
import glob, json, sys
pages = sorted(glob.glob(sys.argv[1] + "/page-*.json"), key=lambda p: int(p.rsplit("-", 1)[1][:-5]))
ms = [json.load(open(p))["module"]["lookup"] for p in pages]
first_ok = ms and (ms[0] == {"method": "index"} or (ms[0]["method"] == "libdw" and "refused" in ms[0].get("note", "")))
sys.exit(0 if first_ok and all(m == {"method": "index"} for m in ms[1:]) else 1)
PY
	then ok "$2: every page answered from the symbol index (the first, if its index was refused, by libdw)"
	else notok "$2: a page was not answered from the index: $(grep -h -A3 '"lookup"' "$1"/page-*.json | head -8 | tr '\n' ' ')"; fi
}
# Warm: every process finds the index on disk; answers still equal
# eu-addr2line's (and the source-text checks).
mkdir -p "$WORK/pages_O2_warm"
$ORACLE "$PERFLENS" "$WORK/bin/fix_O2" "$WORK/off_O2" "$WORK/pages_O2_warm" --limit 37 \
	--starts "$WORK/starts_O2" --sources "$WORK/src" --name "fixture -O2, warm index"
method_index "$WORK/pages_O2_warm" "fixture -O2, warm index"
# Truncated index file: refused, rebuilt, same answers.
cp "$IDX/$FIX_ID.idx" "$WORK/fix.idx.orig"
head -c 3000 "$WORK/fix.idx.orig" > "$IDX/$FIX_ID.idx"
mkdir -p "$WORK/pages_O2_trunc"
$ORACLE "$PERFLENS" "$WORK/bin/fix_O2" "$WORK/off_O2" "$WORK/pages_O2_trunc" --limit 500 \
	--name "fixture -O2, truncated index file"
cmp -s "$IDX/$FIX_ID.idx" "$WORK/fix.idx.orig" &&
	ok "symbol index: a truncated file is refused and rebuilt byte-identical" ||
	notok "symbol index: the truncated file was not rebuilt as before ($(wc -c < "$IDX/$FIX_ID.idx") bytes)"
if [ -n "${LIBC_ID:-}" ] && [ -f "$LIBC_DEBUG" ]; then
	mkdir -p "$WORK/pages_libc_warm" "$WORK/pages_libc_bad"
	before=$(stat -c '%i %Y %s' "$IDX/$LIBC_ID.idx")
	$ORACLE "$PERFLENS" "$LIBC" "$WORK/off_libc" "$WORK/pages_libc_warm" --limit 250 --name "libc, warm index"
	method_index "$WORK/pages_libc_warm" "libc, warm index"
	[ "$(stat -c '%i %Y %s' "$IDX/$LIBC_ID.idx")" = "$before" ] &&
		ok "symbol index: the warm libc run read the index file, never rewrote it" ||
		notok "symbol index: the warm libc run rewrote its index (refused as stale?)"
	[ -f "$IDX/$LIBC_ID.debug.idx" ] &&
		ok "symbol index: libc opened by build-id (its debug file) has its own index file" ||
		notok "symbol index: no $LIBC_ID.debug.idx for libc opened by build-id"
	# Corrupt bytes in the rows (the header stays well-formed): the checksum
	# refuses the file; answers stay right; the rebuilt file is the same.
	cp "$IDX/$LIBC_ID.idx" "$WORK/libc.idx.orig"
	/usr/bin/python3 - "$IDX/$LIBC_ID.idx" <<'PY'
import sys
b = bytearray(open(sys.argv[1], "rb").read())
for i in range(len(b) // 2, len(b) // 2 + 64):
    b[i] ^= 0xa5
open(sys.argv[1], "wb").write(b)
PY
	$ORACLE "$PERFLENS" "$LIBC" "$WORK/off_libc" "$WORK/pages_libc_bad" --limit 250 --name "libc, corrupted index file"
	cmp -s "$IDX/$LIBC_ID.idx" "$WORK/libc.idx.orig" &&
		ok "symbol index: a corrupted libc index is refused and rebuilt byte-identical" ||
		notok "symbol index: the corrupted libc index was not rebuilt as before"
	if /usr/bin/python3 - "$WORK/pages_libc" "$WORK/pages_libc_warm" "$WORK/pages_libc_bad" <<'PY'
import glob, json, sys
def answers(d):
    pages = sorted(glob.glob(d + "/page-*.json"), key=lambda p: int(p.rsplit("-", 1)[1][:-5]))
    return [a for p in pages for a in json.load(open(p))["answers"]]
a = [answers(d) for d in sys.argv[1:]]
sys.exit(0 if a[0] and a[0] == a[1] == a[2] else 1)
PY
	then ok "symbol index: libc answers identical cold, warm and after a corrupt index"
	else notok "symbol index: libc answers differ between cold, warm and corrupt-index runs"; fi
fi

# ------------------------------------------------------------ inspect_elf

# expect_elf WHAT FILE CHECKS: inspect_elf FILE, validate, then the python
# CHECKS against the result `r` and eu-readelf's view `h` (header text),
# `n` (notes text), `S` (section names), `syms` (symbol table counts).
expect_elf() {
	what=$1 file=$2 checks=$3
	if ! pl elf --path "$file" > "$WORK/elf.json" 2> "$WORK/err"; then
		notok "inspect_elf $what: $(head -c 300 "$WORK/err")"
		return
	fi
	what="inspect_elf $what"
	validate "$what" "$ELF_SCHEMA" "$WORK/elf.json"
	eu-readelf -h "$file" > "$WORK/h.txt"
	eu-readelf -n "$file" > "$WORK/n.txt" 2>/dev/null
	eu-readelf -S "$file" > "$WORK/S.txt"
	eu-readelf -s "$file" > "$WORK/s.txt" 2>/dev/null
	if msg=$(/usr/bin/python3 - "$WORK" "$checks" <<'PY' 2>&1
import json, re, sys
w, checks = sys.argv[1], sys.argv[2]
r = json.load(open(w + "/elf.json"))
h = open(w + "/h.txt").read()
n = open(w + "/n.txt").read()
S = set(re.findall(r"^\s*\[\s*\d+\]\s+(\S+)", open(w + "/S.txt").read(), re.M))
syms = {m[1]: int(m[2]) for m in re.findall(r"Symbol table \[\s*(\d+)\] '([^']+)' contains (\d+) entr", open(w + "/s.txt").read())}
bid = re.search(r"Build ID: ([0-9a-f]+)", n)
assert r["class"] == re.search(r"Class:\s+(\S+)", h)[1], ("class", r["class"])
assert {"x86_64": "AMD x86-64", "aarch64": "AARCH64"}.get(r["machine"], r["machine"]) in h, ("machine", r["machine"])
assert r["type"] == re.search(r"Type:\s+(\S+)", h)[1], ("type", r["type"])
assert r["build_id"] == (bid[1] if bid else None), ("build_id", r["build_id"])
assert r["symbols"]["symtab"] == syms.get(".symtab", 0), ("symtab", r["symbols"], syms)
assert r["symbols"]["dynsym"] == syms.get(".dynsym", 0), ("dynsym", r["symbols"], syms)
assert r["stripped"] == (".symtab" not in S), ("stripped", r["stripped"])
assert r["debug"]["debug_info"] == (".debug_info" in S), "debug_info"
assert r["debug"]["gnu_debuglink"] is None or ".gnu_debuglink" in S, "debuglink"
exec(checks)
PY
); then
		ok "$what: class, machine, type, build-id, symbol counts and sections agree with eu-readelf; $(/usr/bin/python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["symbolization"])' "$WORK/elf.json")"
	else
		notok "$what: $(echo "$msg" | tail -2 | tr '\n' ' ')"
	fi
}

expect_elf "-g binary" "$WORK/bin/fix_O2" '
assert not r["stripped"] and r["debug"]["debug_line"] and r["debug"]["separate_file"] is None
assert "own DWARF" in r["symbolization"]'
expect_elf "stripped with .gnu_debuglink" "$s/fix_O2" "
assert r['stripped'] and not r['debug']['debug_info']
assert r['debug']['gnu_debuglink']['file'] == 'fix_O2.debug'
assert r['debug']['separate_file'] == {'path': '$s/fix_O2.debug', 'found_by': 'debuglink'}
assert 'separate debug file' in r['symbolization']"
expect_elf "its debug file" "$s/fix_O2.debug" '
assert r["is_debug_file"] and "separate debug file" in r["symbolization"]'
if [ -f "${LIBC_DEBUG:-/nonexistent}" ]; then
	expect_elf "libc" "$LIBC" "
assert r['stripped'] and r['debug']['build_id_dir'] == '$LIBC_DEBUG'
assert r['debug']['separate_file']['path'] == '$LIBC_DEBUG'
assert 'separate debug file' in r['symbolization']"
fi
objcopy --strip-all --remove-section=.gnu_debuglink "$WORK/bin/fix_O2" "$WORK/bin/bare"
expect_elf "stripped without debug information" "$WORK/bin/bare" '
assert r["stripped"] and r["debug"]["separate_file"] is None and r["debug"]["not_found"]
assert "Only exported" in r["symbolization"], r["symbolization"]'

# ---------------------------------------------------------------- MCP
# Through the server's sandboxed workers: --binary matched by build-id,
# a debuglink found beside a stripped binary, the same answers as the CLI.
FIX_ID=$(eu-readelf -n "$WORK/bin/fix_O2" | awk '/Build ID:/ { print $3 }')
mkdir -p "$WORK/mcp"
WORK="$WORK" timeout 120 /usr/bin/python3 - "$(cd "$BUILD" && pwd)/perflens-mcp" "$WORK" "$FIX_ID" \
	"$(nm "$WORK/bin/fix_O2" | awk '$3 == "work_loop" { print "0x" $1 }')" <<'PY'
import json, os, subprocess, sys, time
sys.path.insert(0, os.path.join(os.environ.get("REPO", os.getcwd()), "tests", "integration"))
from mcp_client import *

server, work, fix_id, off = sys.argv[1:5]
off = "0x%x" % int(off, 16)
s = Stdio([server, "--allowed-root", work + "/bin", "--binary", work + "/bin/fix_O2",
           "--debuginfod", ""], "mcp")
s.initialize()
pages = [json.load(open(work + "/pages_O2/" + f)) for f in os.listdir(work + "/pages_O2")]
want = [a for p in pages for a in p["answers"] if a["offset"] == off]
for name, args, path in [
        ("symbolize", {"build_id": fix_id.upper(), "offsets": [off]}, work + "/bin/fix_O2"),
        ("symbolize", {"binary": work + "/bin/stripped/fix_O2", "offsets": [off]}, work + "/bin/stripped/fix_O2")]:
    r = s.call(name, args)
    sc = (r or {}).get("result", {}).get("structuredContent") or {}
    json.dump(sc, open("%s/mcp/%s-%d.json" % (work, name, len(os.listdir(work + "/mcp"))), "w"))
    check("mcp %s %s: found %s, same answer as the CLI" % (name, list(args)[0], path),
          sc.get("module", {}).get("path") == path and want and sc["answers"] == want, short(r, 500))
r = s.call("inspect_elf", {"path": work + "/bin/stripped/fix_O2"})
sc = (r or {}).get("result", {}).get("structuredContent") or {}
json.dump(sc, open(work + "/mcp/elf.json", "w"))
check("mcp inspect_elf: the stripped binary's debuglink file is found", 
      (sc.get("debug", {}).get("separate_file") or {}).get("found_by") == "debuglink", short(r, 500))
# next_steps as an agent follows them: nothing after answers with their
# lines; inspect_elf of the module after an offset that did not resolve
# (the bare binary keeps only .dynsym, and work_loop is not exported:
# eu-addr2line names nothing there either).
check("mcp symbolize: every answer has its line, so no next step", sc.get("next_steps") == [], short(sc.get("next_steps")))
r = s.call("symbolize", {"binary": work + "/bin/bare", "offsets": [off]})
sc = (r or {}).get("result", {}).get("structuredContent") or {}
json.dump(sc, open(work + "/mcp/symbolize-bare.json", "w"))
a2l = subprocess.run(["eu-addr2line", "-f", "-e", work + "/bin/bare", off], capture_output=True, text=True).stdout.split()
steps = sc.get("next_steps") or []
step = steps[0] if steps else {}
if check("mcp symbolize bare: work_loop unresolved (eu-addr2line: %s) and next_steps names inspect_elf of the module" % a2l,
         sc.get("resolved") == 0 and a2l[:1] == ["??"] and step.get("tool") == "inspect_elf" and
         step.get("arguments") == {"path": work + "/bin/bare"} and "did not resolve" in step.get("why", ""),
         short(sc, 600)):
    r = s.call(step["tool"], step["arguments"])
    e = (r or {}).get("result", {}).get("structuredContent") or {}
    check("mcp: following it, inspect_elf says why: stripped, no debug file, only exported functions named",
          e.get("stripped") is True and (e.get("debug") or {}).get("separate_file") is None and
          "Only exported" in e.get("symbolization", ""), short(e, 600))
r = s.call("symbolize", {"binary": "/usr/lib/x86_64-linux-gnu/libc.so.6", "offsets": ["0x10"]})
check("mcp symbolize: a binary outside the allowed roots is refused", is_tool_error(r, "outside the allowed roots"), short(r))
check("mcp: the server exits cleanly", s.close() == 0 and not sanitizer_report(s.stderr()), s.stderr()[-300:])

# With --allow-writes the symbol index is kept under the artifact root:
# the first call is answered by libdw at once (the index is not built on
# its path: no file when its answer comes), a follow-up worker builds the
# index after the answer, and the next call (another worker) maps it.
art = work + "/mcpart"
idx = art + "/cache/symindex/" + fix_id.lower() + ".idx"
s = Stdio([server, "--allowed-root", work + "/bin", "--artifact-root", art, "--allow-writes",
           "--debuginfod", ""], "mcp-writes")
s.initialize()
for k, method in enumerate(("libdw", "index")):
    r = s.call("symbolize", {"binary": work + "/bin/fix_O2", "offsets": [off]})
    there = os.path.isfile(idx)
    sc = (r or {}).get("result", {}).get("structuredContent") or {}
    json.dump(sc, open("%s/mcp/symbolize-w%d.json" % (work, k), "w"))
    check("mcp symbolize with --allow-writes, call %d: answered by %s, same answer as the CLI" % (k + 1, method),
          sc.get("module", {}).get("lookup", {}).get("method") == method and want and sc["answers"] == want,
          short(r, 500))
    if k == 0:
        check("mcp: the first call did not build the index on its path (no index file when it answered)",
              not there, idx)
        end = time.monotonic() + 30
        while not os.path.isfile(idx) and time.monotonic() < end:
            time.sleep(0.05)
        check("mcp: the follow-up worker wrote the index under the artifact root after the answer", os.path.isfile(idx), idx)
check("mcp (writes): the server exits cleanly", s.close() == 0 and not sanitizer_report(s.stderr()), s.stderr()[-300:])
PY
validate "mcp symbolize" "$SYM_SCHEMA" "$WORK"/mcp/symbolize-*.json
validate "mcp inspect_elf" "$ELF_SCHEMA" "$WORK/mcp/elf.json"

# -------------------------------------------------------------- bad input

# expect CODE WHAT -- ARGS...: perflens exits CODE with one JSON error.
expect() {
	want=$1 what=$2
	shift 3
	pl "$@" > "$WORK/out" 2> "$WORK/err"
	got=$?
	if [ "$got" -eq "$want" ] && { [ "$want" -eq 0 ] || grep -q '"hint"' "$WORK/err"; }; then
		ok "$what (exit $want)"
	else
		notok "$what: exit $got, wanted $want: $(head -c 300 "$WORK/err")"
	fi
}
printf 'not an ELF file at all\n' > "$WORK/bin/text"
head -c 1200 "$WORK/bin/fix_O2" > "$WORK/bin/truncated"
expect 3 "symbolize refuses a non-ELF file" -- call symbolize "{\"binary\":\"$WORK/bin/text\",\"offsets\":[\"0x10\"]}"
grep -q 'not an ELF' "$WORK/err" || notok "symbolize non-ELF: message: $(cat "$WORK/err")"
expect 3 "inspect_elf refuses a non-ELF file" -- elf --path "$WORK/bin/text"
pl call symbolize "{\"binary\":\"$WORK/bin/truncated\",\"offsets\":[\"0x1139\"]}" > "$WORK/out" 2> "$WORK/err"
rc=$?
if [ "$rc" -eq 3 ] || { [ "$rc" -eq 0 ] && grep -q '"resolved": false' "$WORK/out"; }; then
	ok "symbolize on a truncated ELF: an error or an unresolved answer, no crash (exit $rc)"
else
	notok "symbolize on a truncated ELF: exit $rc: $(head -c 300 "$WORK/err")"
fi
pl elf --path "$WORK/bin/truncated" > "$WORK/out" 2> "$WORK/err"
rc=$?
[ "$rc" -eq 0 ] || [ "$rc" -eq 3 ] && ok "inspect_elf on a truncated ELF: exit $rc, no crash" ||
	notok "inspect_elf on a truncated ELF: exit $rc: $(head -c 300 "$WORK/err")"
expect 2 "symbolize needs binary or build_id" -- call symbolize '{"offsets":["0x10"]}'
expect 2 "symbolize refuses both binary and build_id" -- call symbolize "{\"binary\":\"$WORK/bin/fix_O2\",\"build_id\":\"abcd\",\"offsets\":[\"0x10\"]}"
expect 2 "a bad offset is named by its index" -- call symbolize "{\"binary\":\"$WORK/bin/fix_O2\",\"offsets\":[\"0x10\",\"12g\"]}"
grep -q 'offsets\[1\]' "$WORK/err" || notok "bad offset message: $(cat "$WORK/err")"
expect 2 "an unknown build-id is 'not found'" -- call symbolize '{"build_id":"00112233445566778899aabbccddeeff01234567","offsets":["0x10"]}'
grep -q 'no file with build-id 00112233445566778899aabbccddeeff01234567 found; tried:.*debuginfod' "$WORK/err" &&
	ok "the not-found error names the places tried, debuginfod included" || notok "not-found message: $(cat "$WORK/err")"
mkdir -p "$WORK/root"
expect 5 "symbolize refuses a binary outside the allowed roots" -- call symbolize "{\"binary\":\"$WORK/bin/fix_O2\",\"offsets\":[\"0x10\"]}" --allowed-root "$WORK/root"

# Offsets beyond the code and the CLI's string form.
pl symbolize --binary "$WORK/bin/fix_O2" --offsets "0x0 0xffffffffffff,$(sed -n 2p "$WORK/starts_O2")" > "$WORK/far.json" 2> "$WORK/err"
if /usr/bin/python3 -c '
import json, sys
a = json.load(open(sys.argv[1]))["answers"]
assert [x["resolved"] for x in a] == [False, False, True], a
assert "outside the executable sections" in a[1]["reason"]' "$WORK/far.json" 2>/dev/null; then
	ok "offsets outside the code are resolved=false with the reason (CLI --offsets \"a b,c\")"
else
	notok "offsets outside the code: $(head -c 400 "$WORK/far.json" "$WORK/err")"
fi

# 10,000 offsets: accepted and paged; 10,001 refused.
/usr/bin/python3 - "$WORK" "$(sed -n 2p "$WORK/starts_O2")" <<'PY'
import json, sys
w, base = sys.argv[1], int(sys.argv[2], 16)
for n in (10000, 10001):
    json.dump({"binary": w + "/bin/fix_O2", "offsets": ["0x%x" % (base + i % 300) for i in range(n)], "limit": 500},
              open("%s/args%d.json" % (w, n), "w"))
PY
pl call symbolize "$(cat "$WORK/args10000.json")" > "$WORK/big.json" 2> "$WORK/err"
if /usr/bin/python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
p = r["page"]
assert p["total_items"] == 10000 and p["next_cursor"] and 0 < p["returned"] <= 500, p
assert len(open(sys.argv[1]).read()) < 40000' "$WORK/big.json" 2>/dev/null; then
	ok "10,000 offsets are accepted and paged ($(wc -c < "$WORK/big.json") bytes on the first page)"
else
	notok "10,000 offsets: $(head -c 300 "$WORK/big.json" "$WORK/err")"
fi
validate "symbolize 10,000 offsets, first page" "$SYM_SCHEMA" "$WORK/big.json"
expect 2 "10,001 offsets are refused" -- call symbolize "$(cat "$WORK/args10001.json")"
# Determinism: the same call twice gives the same bytes.
pl call symbolize "$(cat "$WORK/args10000.json")" > "$WORK/big2.json" 2>&1
cmp -s "$WORK/big.json" "$WORK/big2.json" && ok "the same call gives byte-identical results" ||
	notok "symbolize is not deterministic"

# A big C++ library whose symbol table has sizeless labels (libjvm.so):
# its index was built through libdw's linear search for every point a
# label might name (about 20,000, 50-60 s after the answer, the CLI
# waiting for it).  Only a label that no symbol's end lies beyond can
# name an address, so the build now asks libdw only for those.  The first
# call (answer, then the index) ends well within 30 s; the second reads
# the index, and its names equal eu-addr2line's around every label.
jvm=$(ls /usr/lib/jvm/*/lib/server/libjvm.so 2>/dev/null | head -1)
if [ -z "$jvm" ]; then
	skip "symbolize libjvm.so: no JDK here (openjdk-17-jdk-headless, tests/setup.sh)"
else
	/usr/bin/python3 - "$jvm" > "$WORK/jvm.offsets" <<'PY'
import subprocess, sys
out = subprocess.run(["nm", "-S", "-n", sys.argv[1]], capture_output=True, text=True).stdout.splitlines()
offs = set()
for l in out:
    f = l.split()
    if len(f) == 3 and f[1] in "tT":
        v = int(f[0], 16)
        offs.update((v, v + 1, v + 0x40))
for o in sorted(offs)[:150]:
    print(hex(o))
PY
	jargs="{\"binary\": \"$jvm\", \"inline\": false, \"limit\": 500, \"offsets\": \"$(tr '\n' ' ' < "$WORK/jvm.offsets")\"}"
	rm -rf "$WORK/jart"
	if timeout 30 "$PERFLENS" call symbolize "$jargs" --artifact-root "$WORK/jart" > "$WORK/jvm1.json" 2> "$WORK/err" &&
		ls "$WORK/jart/cache/symindex/"*.idx > /dev/null 2>&1; then
		ok "symbolize libjvm.so: the call and the index build after it end within 30 s"
	else
		notok "symbolize libjvm.so: not done within 30 s, or no index: $(oneline "$WORK/err")"
	fi
	"$PERFLENS" call symbolize "$jargs" --artifact-root "$WORK/jart" > "$WORK/jvm2.json" 2> "$WORK/err"
	eu-addr2line -S -C -e "$jvm" $(cat "$WORK/jvm.offsets") > "$WORK/jvm.eu" 2>&1
	/usr/bin/python3 - "$WORK/jvm2.json" "$WORK/jvm.eu" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
eu = open(sys.argv[2]).read().splitlines()[0::2]
ans = r["answers"]
method = r["module"]["lookup"]["method"]
bad = []
for a, f in zip(ans, eu):
    want = None if f.startswith(("()", "??")) else (f if "+0x" in f else f + "+0x0")
    got = "%s+0x%x" % (a["function"], a["function_offset"]) if a.get("function") else None
    if want != got:
        bad.append((a["offset"], want, got))
if method == "index" and len(ans) == len(eu) > 0 and not bad:
    print("ok - symbolize libjvm.so: %d offsets at and after its sizeless labels, from the index, name what eu-addr2line names" % len(ans))
else:
    print("not ok - symbolize libjvm.so: method %s, %d answers for %d, differences %s" % (method, len(ans), len(eu), bad[:5]))
PY
fi
exit 0
