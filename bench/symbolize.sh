#!/bin/sh
# symbolize.sh - the libdw symbolizer against binutils addr2line on libc.
#
# A measurement, not a test (exit 0 whatever the figures; 2 when it cannot
# start).  5,000 libc offsets (instruction addresses spread over .text, so
# many sit in inlined code) are symbolized with inline chains by
#   addr2line -f -i -C -a -e LIBC          (binutils, the peer)
#   symbolize_bench LIBC                    (our engine, bench/symbolize_bench.c,
#                                            built here against libperflens.a)
#   llvm-symbolizer --inlining --demangle --output-style=GNU -a --obj=LIBC
#                                           (Debian's llvm, the second peer)
# timed in the same run, best of RUNS, each a fresh process.  Ours runs
# four ways: libdw per lookup (--no-index, what a module without a
# symbol index costs), first (the index folder emptied, --defer: what the
# first symbolize call for a build-id costs until its answer: libdw, the
# index left to the follow-up), the follow-up (the index folder emptied:
# the run builds libc's symbol index from libdw and writes it, off any
# call's path) and warm (the index file is there: the run maps it).  The
# targets: first >= 1.5x addr2line, warm >= 10x; every call at least as
# fast as addr2line.  All give byte-identical answers (checked).  The
# answers are compared with addr2line's and llvm-symbolizer's on function
# names: the outer function of each offset, and the whole chain
# (binutils 2.40 is known to misname inlined frames, so the chain rate is
# lower).  Then the same batch is looked up
# again from the symbolizer's cache until at least 1,000,000 lookups were
# made, for the cached rate.
#
#   BUILD=/tmp/build-x sh bench/symbolize.sh
# Environment: BUILD, BENCH_RUNS (default 3), BENCH_SYM_OFFSETS (5000),
# BENCH_TMPDIR (its symbolize/ subfolder; default mktemp -d).
set -u

BUILD=${BUILD:-build}
RUNS=${BENCH_RUNS:-3}
N=${BENCH_SYM_OFFSETS:-5000}

if [ ! -f "$BUILD/libperflens.a" ]; then
	echo "bench: $BUILD/libperflens.a not found: build first (make BUILD=$BUILD)" >&2
	exit 2
fi
# Only what this script made is removed: a BENCH_TMPDIR given by the
# caller (run.sh shares its own) gets a symbolize/ folder of its own.
if [ -n "${BENCH_TMPDIR:-}" ]; then
	TMP=$BENCH_TMPDIR/symbolize
else
	TMP=$(mktemp -d "${TMPDIR:-/tmp}/perflens-symbench.XXXXXX")
fi
mkdir -p "$TMP" || exit 2
trap 'rm -rf "$TMP"' EXIT
trap 'exit 130' INT TERM

echo
echo "== symbolize: $N libc offsets with inline chains (load average: $(cut -d' ' -f1-3 /proc/loadavg 2> /dev/null))"
for tool in addr2line objdump cc eu-readelf; do
	if ! command -v "$tool" > /dev/null 2>&1; then
		echo "skip: symbolize bench: $tool not found"
		exit 0
	fi
done
BENCH=$TMP/symbolize_bench
# shellcheck disable=SC2046  # pkg-config prints several words on purpose
if ! cc -O2 -std=gnu11 -D_GNU_SOURCE -Itools/core -I. -o "$BENCH" bench/symbolize_bench.c "$BUILD/libperflens.a" \
	$(pkg-config --libs jansson libzstd libdw libelf libseccomp zlib nettle) -lm 2> "$TMP/cc.err"; then
	echo "error: cannot build bench/symbolize_bench.c: $(head -c 300 "$TMP/cc.err")"
	exit 0
fi
LIBC=$(readlink -f "$(ldd "$BENCH" | awk '/libc\.so/ { print $3 }')")
LIBC_ID=$(eu-readelf -n "$LIBC" 2> /dev/null | awk '/Build ID:/ { print $3 }')
DEBUG=/usr/lib/debug/.build-id/$(echo "$LIBC_ID" | cut -c1-2)/$(echo "$LIBC_ID" | cut -c3-).debug
if [ ! -f "$DEBUG" ]; then
	echo "skip: symbolize bench: no debug file for $LIBC (apt-get install libc6-dbg)"
	exit 0
fi
# N instruction addresses evenly spread over libc's code.
objdump -d --no-show-raw-insn "$LIBC" | awk '/^ *[0-9a-f]+:/ { sub(":", "", $1); print "0x" $1 }' > "$TMP/all"
awk -v n="$N" -v total="$(wc -l < "$TMP/all")" 'NR % int(total / n) == 0 && c < n { print; c++ }' "$TMP/all" > "$TMP/offsets"
echo "input: $(wc -l < "$TMP/offsets") offsets of $LIBC (every $(( $(wc -l < "$TMP/all") / N ))th instruction); debug file $DEBUG"

now() { date +%s.%N; }
calc() { awk "BEGIN { x = ($*); print x }"; }
fmt() { awk -v x="$2" "BEGIN { printf \"$1\", x }"; }

GNU_TIME=
if [ -x /usr/bin/time ] && /usr/bin/time --version 2>&1 | grep -q GNU; then
	GNU_TIME=/usr/bin/time
fi

# best OUT CMD...: the run of RUNS with the lowest wall time (stdin from the
# offsets); B_WALL, B_CPU (user+sys with GNU time, else "?"), B_RC.
best() {
	_out=$1
	shift
	B_WALL='' B_CPU="?" B_RC=0
	for _ in $(seq "$RUNS"); do
		_t0=$(now)
		if [ -n "$GNU_TIME" ]; then
			"$GNU_TIME" -f '%U %S' -o "$TMP/time" "$@" < "$TMP/offsets" > "$_out" 2> "$TMP/err"
		else
			"$@" < "$TMP/offsets" > "$_out" 2> "$TMP/err"
		fi
		B_RC=$?
		_t1=$(now)
		[ "$B_RC" -ne 0 ] && return
		_w=$(calc "$_t1 - $_t0")
		if [ -z "$B_WALL" ] || [ "$(calc "$_w < $B_WALL")" = 1 ]; then
			B_WALL=$_w
			cp "$TMP/err" "$TMP/best.err"
			[ -n "$GNU_TIME" ] && B_CPU=$(awk '{ print $1 + $2 }' "$TMP/time")
		fi
	done
}

env -u DEBUGINFOD_URLS true 2> /dev/null && NOD="env -u DEBUGINFOD_URLS" || NOD=
# shellcheck disable=SC2086  # $NOD is empty or "env -u DEBUGINFOD_URLS"
best "$TMP/a2l.txt" $NOD addr2line -f -i -C -a -e "$LIBC"
if [ "$B_RC" -ne 0 ]; then
	echo "error: addr2line exited $B_RC: $(head -c 300 "$TMP/err")"
	exit 0
fi
A2L=$B_WALL A2L_CPU=$B_CPU
LLVM= LLVM_BIN=$(command -v llvm-symbolizer || command -v llvm-symbolizer-14 || true)
if [ -n "$LLVM_BIN" ]; then
	# shellcheck disable=SC2086
	best "$TMP/llvm.txt" $NOD "$LLVM_BIN" --inlining --demangle --output-style=GNU -a --obj="$LIBC"
	[ "$B_RC" -eq 0 ] && LLVM=$B_WALL LLVM_CPU=$B_CPU
fi
head -n 1 "$TMP/offsets" > "$TMP/one"
best "$TMP/one.txt" sh -c "$NOD addr2line -f -i -C -a -e '$LIBC' < '$TMP/one'"
A2L_ONE=$B_WALL
# ours NAME OUT CMD...: best of RUNS into RUN_WALL, RUN_CPU, RUN_OPEN (open and
# load: the debug file or the index), RUN_COLD (the lookups), RUN_METHOD.
ours() {
	_name=$1 _o=$2
	shift 2
	best "$_o" "$@"
	if [ "$B_RC" -ne 0 ]; then
		echo "error: symbolize_bench ($_name) exited $B_RC: $(head -c 300 "$TMP/err")"
		return 1
	fi
	RUN_WALL=$B_WALL RUN_CPU=$B_CPU
	RUN_OPEN=$(sed -n 's/^open_s=//p' "$TMP/best.err")
	RUN_COLD=$(sed -n 's/^cold_s=//p' "$TMP/best.err")
	RUN_METHOD=$(sed -n 's/^method=//p' "$TMP/best.err")
}
IDX=$TMP/symindex
ours "libdw" "$TMP/direct.tsv" "$BENCH" --no-index "$LIBC" || exit 0
DIRECT=$RUN_WALL DIRECT_CPU=$RUN_CPU DIRECT_OPEN=$RUN_OPEN DIRECT_COLD=$RUN_COLD
# The first call leaves the index to its follow-up, so the folder emptied
# once stays empty across the runs: each is timed alone, as the libdw run
# is, without a shell and an rm -rf of the last index in its figure.
rm -rf "$IDX"
ours "first" "$TMP/first.tsv" "$BENCH" --defer --index-dir "$IDX" "$LIBC" || exit 0
if [ -n "$(ls -A "$IDX" 2> /dev/null)" ]; then
	echo "error: the first-call runs wrote into the index folder; their figure is not a first call's"
	exit 0
fi
FIRST=$RUN_WALL FIRST_CPU=$RUN_CPU FIRST_METHOD=$RUN_METHOD
# shellcheck disable=SC2016  # the inner shell expands its own arguments
ours "cold" "$TMP/cold.tsv" sh -c 'rm -rf "$1" && exec "$2" --index-dir "$1" "$3"' sh "$IDX" "$BENCH" "$LIBC" || exit 0
BUILT=$RUN_WALL BUILT_CPU=$RUN_CPU BUILT_OPEN=$RUN_OPEN BUILT_COLD=$RUN_COLD BUILT_METHOD=$RUN_METHOD
ours "warm" "$TMP/ours.tsv" "$BENCH" --index-dir "$IDX" "$LIBC" || exit 0
OURS=$RUN_WALL OURS_CPU=$RUN_CPU OPEN=$RUN_OPEN COLD=$RUN_COLD WARM_METHOD=$RUN_METHOD
WARM_LOADED=$(sed -n 's/^indexes_loaded=//p' "$TMP/best.err")
IDX_BYTES=$(cat "$IDX"/*.idx 2> /dev/null | wc -c)

# Agreement on function names, and what the differences are (PEER: the
# output of addr2line or llvm-symbolizer, in GNU style).
agree() {
/usr/bin/python3 - "$1" "$TMP/ours.tsv" <<'PY'
import re, sys
recs, cur = {}, None
for line in open(sys.argv[1]):
    line = line.rstrip("\n")
    if re.fullmatch(r"0x[0-9a-f]+", line):
        cur = int(line, 16)
        recs[cur] = []
    elif line:
        recs[cur].append(line)
outer = chain = inner = n = nosym = alias = 0
for line in open(sys.argv[2]):
    off, func, src, dfunc, inl, sub = line.rstrip("\n").split("\t")
    off = int(off, 16)
    names = recs[off][0::2]          # addr2line: innermost first, then callers
    if sub != "-":
        mine = [x.rsplit("@", 1)[0] for x in inl.split("|")] if inl != "-" else []
        mine.append(sub)
    else:
        mine = [func.rsplit("+", 1)[0] if func != "-" else "??"]
    n += 1
    outer += names[-1] == mine[-1]
    inner += names[0] == mine[0]
    chain += names == mine
    if names[-1] != mine[-1]:
        if mine == ["??"]:
            nosym += 1               # no symbol covers it (eu-addr2line agrees): padding
        else:
            alias += 1               # named differently: aliases of assembly functions
print("%d %d %d %d %d %d" % (n, outer, inner, chain, nosym, alias))
PY
}
AGREE=$(agree "$TMP/a2l.txt")
LLVM_AGREE=
[ -n "$LLVM" ] && LLVM_AGREE=$(agree "$TMP/llvm.txt")
# shellcheck disable=SC2086  # six numbers, split on purpose
set -- $AGREE
pct() { fmt %.1f "$(calc "100 * $1 / $2")"; }
cpu() { [ "$1" = "?" ] && echo "" || echo ", $(fmt %.3f "$1") s cpu"; }
echo "addr2line -f -i -C:      $(fmt %.3f "$A2L") s wall$(cpu "$A2L_CPU") for the batch ($(fmt %.3f "$A2L_ONE") s wall for one offset: start-up and debug loading)"
ratio() { fmt %.1f "$(calc "$A2L / ($1 > 0 ? $1 : 1e-9)")"; }
[ -n "$LLVM" ] && echo "llvm-symbolizer --inlining: $(fmt %.3f "$LLVM") s wall$(cpu "$LLVM_CPU") for the batch = $(fmt %.2f "$(calc "$A2L / $LLVM")")x addr2line"
echo "perflens, libdw per lookup (no index):        $(fmt %.3f "$DIRECT") s wall$(cpu "$DIRECT_CPU") (open, decompress, load debug file and symbols $(fmt %.3f "$DIRECT_OPEN") s; lookups $(fmt %.3f "$DIRECT_COLD") s) = $(ratio "$DIRECT")x addr2line"
echo "perflens, first call (no index yet, answered by $FIRST_METHOD): $(fmt %.3f "$FIRST") s wall$(cpu "$FIRST_CPU") = $(ratio "$FIRST")x addr2line (target >= 1.5x: $([ "$(calc "$A2L / $FIRST >= 1.5")" = 1 ] && echo met || echo MISSED))"
echo "perflens, the follow-up: index build, fresh process, after the first answer: $(fmt %.3f "$BUILT") s wall$(cpu "$BUILT_CPU") (load debug file, build and write the index $(fmt %.3f "$BUILT_OPEN") s; lookups $(fmt %.3f "$BUILT_COLD") s; answered by $BUILT_METHOD)"
echo "perflens, warm: index on disk, fresh process: $(fmt %.3f "$OURS") s wall$(cpu "$OURS_CPU") (open the module, check and map the index $(fmt %.3f "$OPEN") s; lookups $(fmt %.3f "$COLD") s; answered by $WARM_METHOD, indexes loaded $WARM_LOADED) = $(ratio "$OURS")x addr2line"
echo "  index file: $IDX_BYTES bytes for libc; answers byte-identical across libdw, first, follow-up and warm runs: $(cmp -s "$TMP/direct.tsv" "$TMP/first.tsv" && cmp -s "$TMP/direct.tsv" "$TMP/cold.tsv" && cmp -s "$TMP/direct.tsv" "$TMP/ours.tsv" && echo yes || echo NO)"
echo "agreement on $1 offsets: outer function $2 ($(pct "$2" "$1")%), innermost $3 ($(pct "$3" "$1")%), whole chain $4 ($(pct "$4" "$1")%)"
echo "  of the $(( $1 - $2 )) outer differences: $5 offsets no symbol covers (padding after a function; eu-addr2line names none either, addr2line names the one before), $6 named differently (aliases of assembly functions, e.g. __GI___sigsetjmp for __sigsetjmp)"
if [ -n "$LLVM_AGREE" ]; then
	# shellcheck disable=SC2086
	set -- $LLVM_AGREE
	echo "agreement with llvm-symbolizer on $1 offsets: outer function $2 ($(pct "$2" "$1")%), innermost $3 ($(pct "$3" "$1")%), whole chain $4 ($(pct "$4" "$1")%)"
fi
RATIO=$(calc "$A2L / $OURS")
MARGINAL=$(calc "($A2L - $A2L_ONE) / ($COLD > 0 ? $COLD : 1e-9)")
echo "symbolize batch (warm index): perflens $(fmt %.3f "$OURS") s, addr2line $(fmt %.3f "$A2L") s, ratio $(fmt %.1f "$RATIO")x end to end$([ "$A2L_CPU" != "?" ] && [ "$OURS_CPU" != "?" ] && echo " ($(fmt %.1f "$(calc "$A2L_CPU / ($OURS_CPU > 0 ? $OURS_CPU : 1e-9)")")x by cpu)") (target >= 10x: $([ "$(calc "$RATIO >= 10")" = 1 ] && echo met || echo MISSED))"
echo "  first call for a build-id: $(fmt %.3f "$FIRST") s, ratio $(ratio "$FIRST")x (target >= 1.5x); the index is built after its answer ($(fmt %.3f "$BUILT") s, off the call's path)"
echo "  per-offset work (addr2line: batch minus one-offset run; perflens warm: lookups after loading): ratio $(fmt %.1f "$MARGINAL")x"

# Cached lookups: the batch again and again from the answer cache.
REPEAT=$(( (1000000 + N - 1) / N + 1 ))
"$BENCH" --quiet --repeat "$REPEAT" --index-dir "$IDX" "$LIBC" < "$TMP/offsets" > /dev/null 2> "$TMP/cache.err"
RATE=$(sed -n 's/^cached_per_s=//p' "$TMP/cache.err")
echo "cached lookups: $(sed -n 's/^cached_lookups=//p' "$TMP/cache.err") in $(fmt %.3f "$(sed -n 's/^cached_s=//p' "$TMP/cache.err")") s = $(fmt %.2f "$(calc "${RATE:-0} / 1e6")") M offsets/s (target >= 1 M/s: $([ "$(calc "${RATE:-0} >= 1e6")" = 1 ] && echo met || echo MISSED))"
exit 0
