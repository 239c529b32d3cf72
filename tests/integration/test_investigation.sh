#!/bin/sh
# test_investigation.sh - the end-to-end investigation an agent runs.
#
# Builds tests/workloads/investigation/app.c (four planted causes, see
# there) with frame pointers, then drives perflens-mcp over stdio as an
# agent would (investigation.py): capabilities, collections (fp and dwarf
# records, off-CPU, stat) analyzed the way next_steps say, hotspots paged
# to the end, call paths with a thread filter, get_hotspot,
# source_context, classification and one report over several analyses.
# Every planted cause must be found with its evidence.
# run.sh: slow
. tests/integration/lib.sh
name="investigation"
need_perf_record "$name"
need_tracefs "$name"
src="$REPO/tests/workloads/investigation/app.c"
mkdir -p "$WORK/bin"
if ! gcc -O1 -g -fno-omit-frame-pointer -pthread -o "$WORK/bin/app" "$src" 2>"$WORK/err"; then
	notok "$name: gcc failed: $(oneline "$WORK/err")"
	exit 0
fi
HERE="$REPO/tests/integration" BUILD_DIR="$(cd "$BUILD" && pwd)" WORK="$WORK" APP="$WORK/bin/app" SRC="$src" \
	/usr/bin/python3 "$REPO/tests/integration/investigation.py"
