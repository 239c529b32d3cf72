#!/bin/sh
# test_layers.sh - the build refuses an include that crosses a layer.
#
# The tree as it is must pass tools/check-layers.sh under the Makefile's
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

if out=$(sh tools/check-layers.sh 2>&1); then
	ok "$what: every include of the tree follows the Makefile's LAYERS"
else
	notok "$what: the tree breaks its own layering: $(printf '%s' "$out" | head -3 | tr '\n' ' ')"
fi

T=$WORK/tree
mkdir -p "$T/tools/core/base" "$T/tools/core/symbols" "$T/tools/core/store" "$T/collectors" \
	"$T/mcp-server" "$T/sandbox" "$T/agent"
cp tools/check-layers.sh "$T/tools/"
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
: >"$T/agent/json.h"
: >"$T/collectors/health.h"
: >"$T/collectors/procfs.h"
probe agent/engine.c base/util.h
probe agent/collect.c collectors/run.h
probe agent/health.c collectors/health.h
probe agent/procfs.c collectors/procfs.h
probe agent/own.c json.h

expect_refused() { # FILE INCLUDE
	if (cd "$T" && sh tools/check-layers.sh "$1") >"$WORK/out" 2>&1; then
		notok "$what: $1 including \"$2\" passed"
	elif grep -q "$1:1: .*\"$2\"" "$WORK/out"; then
		ok "$what: $1 including \"$2\" is refused: $(oneline "$WORK/out")"
	else
		notok "$what: $1 refused without naming the include: $(oneline "$WORK/out")"
	fi
}
expect_allowed() { # FILE
	if (cd "$T" && sh tools/check-layers.sh "$1") >"$WORK/out" 2>&1; then
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
# The static agent links only libc and zstd: its own headers, collectors/health.h and procfs.h.
expect_refused agent/engine.c base/util.h
expect_refused agent/collect.c collectors/run.h
expect_allowed agent/health.c
expect_allowed agent/procfs.c
expect_allowed agent/own.c
