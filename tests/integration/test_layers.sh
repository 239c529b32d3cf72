#!/bin/sh
# test_layers.sh - the build refuses an include that crosses a layer.
#
# The tree as it is must pass tools/build/check-layers.sh under the Makefile's
# LAYERS table; a copy of the checker, run over a scratch tree holding one
# deliberate wrong include of each kind the table forbids (engine -> tools,
# base -> a higher subsystem, tools -> mcp-server, anything -> sandbox
# internals, a bare name from another folder), must fail naming each.
# run.sh: no-asan: a shell check of the includes, no binary
. "$(dirname "$0")/lib.sh"
what="layering check"
cd "$REPO" || exit 1
LAYERS=$(make -s --no-print-directory print-layers)
export LAYERS

if out=$(sh tools/build/check-layers.sh 2>&1); then
	ok "$what: every include of the tree follows the Makefile's LAYERS"
else
	notok "$what: the tree breaks its own layering: $(printf '%s' "$out" | head -3 | tr '\n' ' ')"
fi

T=$WORK/tree
mkdir -p "$T/tools/build" "$T/tools/lib" "$T/tools/core/base" "$T/tools/core/symbols" "$T/tools/core/store" "$T/collectors" \
	"$T/mcp-server" "$T/sandbox" "$T/agent"
cp tools/build/check-layers.sh "$T/tools/build/"
: >"$T/tools/core/store/artifact.h"
: >"$T/tools/core/symbols/symbolize.h"
: >"$T/sandbox/sbx_int.h"
: >"$T/sandbox/sandbox.h"
probe() { # FILE INCLUDE: a one-line C file including INCLUDE
	printf '#include "%s"\n' "$2" >"$T/$1"
}
probe tools/core/symbols/up.c tools/registry.h
probe tools/core/base/up.c store/artifact.h
probe tools/core/store/ok.c symbols/symbolize.h
probe collectors/int.c sandbox/sbx_int.h
probe tools/core/store/bare.c symbolize.h
probe tools/up.c mcp-server/server.h
probe tools/core/store/fine.c profile/profile.h
probe tools/core/store/same.c artifact.h
probe tools/core/store/lib.c tools/lib/view.h
probe tools/lib/up.c tools/cli/fail.h
probe tools/lib/table.c tools/registry.h
: >"$T/agent/json.h"
: >"$T/collectors/health.h"
: >"$T/collectors/procfs.h"
probe agent/engine.c base/util.h
probe agent/collect.c collectors/run.h
probe agent/health.c collectors/health.h
probe agent/procfs.c collectors/procfs.h
probe agent/own.c json.h

expect_refused() { # FILE INCLUDE
	if (cd "$T" && sh tools/build/check-layers.sh "$1") >"$WORK/out" 2>&1; then
		notok "$what: $1 including \"$2\" passed"
	elif grep -q "$1:1: .*\"$2\"" "$WORK/out"; then
		ok "$what: $1 including \"$2\" is refused: $(oneline "$WORK/out")"
	else
		notok "$what: $1 refused without naming the include: $(oneline "$WORK/out")"
	fi
}
expect_allowed() { # FILE
	if (cd "$T" && sh tools/build/check-layers.sh "$1") >"$WORK/out" 2>&1; then
		ok "$what: $1 is allowed"
	else
		notok "$what: $1 should be allowed: $(oneline "$WORK/out")"
	fi
}
expect_refused tools/core/symbols/up.c tools/registry.h
expect_refused tools/core/base/up.c store/artifact.h
expect_refused tools/core/store/ok.c symbols/symbolize.h
expect_refused collectors/int.c sandbox/sbx_int.h
expect_refused tools/core/store/bare.c symbolize.h
expect_refused tools/up.c mcp-server/server.h
expect_allowed tools/core/store/fine.c
expect_allowed tools/core/store/same.c
# tools/lib, the handlers' shared helpers: below the handlers, above the engine.
expect_refused tools/core/store/lib.c tools/lib/view.h
expect_refused tools/lib/up.c tools/cli/fail.h
expect_allowed tools/lib/table.c
# The static agent links only libc and zstd: its own headers, collectors/health.h and procfs.h.
expect_refused agent/engine.c base/util.h
expect_refused agent/collect.c collectors/run.h
expect_allowed agent/health.c
expect_allowed agent/procfs.c
expect_allowed agent/own.c

# No two source files may need each other (tools/build/check-cycles.sh over the
# objects' symbol tables).  The tree's own objects pass with the groups
# tools/build/cycles.allow still lists; a scratch program whose a.c and b.c call
# each other, and c.c that only calls a.c, fails naming a.c and b.c, not c.c.
if out=$(sh tools/build/check-cycles.sh "$BUILD/obj" 2>&1); then
	ok "cycle check: the tree's files need no other file that needs them back, but the listed groups ($(printf '%s' "$out" | tail -1))"
else
	notok "cycle check: the tree has a new cycle: $(printf '%s' "$out" | head -3 | tr '\n' ' ')"
fi
C=$WORK/cyc
mkdir -p "$C/src/x" "$C/obj/src/x"
printf 'int b(int);\nint a(int n) { return n ? b(n - 1) : 0; }\n' >"$C/src/x/a.c"
printf 'int a(int);\nint b(int n) { return n ? a(n - 1) : 1; }\n' >"$C/src/x/b.c"
printf 'int a(int);\nint c(void) { return a(3); }\n' >"$C/src/x/c.c"
for f in a b c; do cc -c "$C/src/x/$f.c" -o "$C/obj/src/x/$f.o"; done
: >"$C/none.allow"
if out=$(cd "$C" && sh "$REPO/tools/build/check-cycles.sh" obj none.allow 2>&1); then
	notok "cycle check: a.c and b.c call each other and the check passed: $out"
elif printf '%s' "$out" | grep -q 'need each other.*: src/x/a.c src/x/b.c$' && ! printf '%s' "$out" | grep -q 'c\.c'; then
	ok "cycle check: a.c and b.c calling each other fail the build, naming them (c.c, which only calls a.c, is not named)"
else
	notok "cycle check: the refusal does not name a.c and b.c alone: $out"
fi
printf 'src/x/a.c src/x/b.c\n' >"$C/known.allow"
if out=$(cd "$C" && sh "$REPO/tools/build/check-cycles.sh" obj known.allow 2>&1); then
	ok "cycle check: a group listed in the allow file passes ($out)"
else
	notok "cycle check: a listed group was refused: $out"
fi
