#!/bin/sh
# mcp.sh - speed benchmarks of perflens-mcp, the MCP server: stdio round
# trip of a small tools/call (with and without the sandbox, back to back
# and paced, and ping), and Streamable HTTP throughput with the server's
# RSS over the run.  It builds the HTTP load client, bench/http_load.c
# (libcurl multi), into its scratch folder; if that fails it says why and
# the python client makes the load instead.
#
# Measurements, not tests: it prints figures and whether each target was
# met, and exits 0 whatever the figures are (2 only when it cannot start,
# e.g. no perflens-mcp binary).  bench/run.sh runs it at its end unless
# BENCH_SKIP_MCP=1.  See bench/README.md.
#
#   BUILD=/tmp/build-bench sh bench/mcp.sh
#
# Environment:
#   BUILD                 where perflens-mcp was built (default build); the
#                         no-sandbox figures need BUILD/faults/perflens-mcp
#                         (make BUILD=... BUILD/faults/perflens-mcp)
#   BENCH_QUICK=1         a short run (under a minute), not comparable with
#                         the targets
#   BENCH_MCP_STDIO_N     timed stdio calls per series (default 2000; quick 300)
#   BENCH_MCP_STDIO_MAX_S time cap of one stdio series (default 60; quick 10)
#   BENCH_MCP_HTTP_CALLS  HTTP calls per run (default 100000; quick 20000)
#   BENCH_MCP_PACE_MS     pause before each call of the paced stdio series
#                         (default 5; 0: no paced series)
#   BENCH_MCP_THREADS     concurrent HTTP calls: connections of the C client,
#                         or python threads (default 8)
#   BENCH_MCP_HTTP_CLIENT c (default: bench/http_load.c, built here with cc,
#                         CC) or python (the python threads, for comparison)
#   BENCH_MCP_HTTP_MAX_S  time cap of the list_hotspots HTTP run (default 900,
#                         enough for the 100,000 calls the RSS target names at
#                         about 200 calls/s;
#                         quick 20); the ping run gets BENCH_MCP_PING_MAX_S
#                         (default 60; quick 8)
#   BENCH_MCP_CAPTURE     the capture analyzed first (default
#                         SHARED/peers/flamegraph/test/perf-vertx-stacks-01.txt)
#   BENCH_TMPDIR          scratch folder (default: mktemp -d); BENCH_KEEP=1 keeps it
#   SHARED                the shared data directory (default ../shared), which
#                         is also the server's --allowed-root
set -u

BUILD=${BUILD:-build}
HERE=$(cd "$(dirname "$0")" && pwd)
SHARED=${SHARED:-$(cd .. && pwd)/shared}

if [ ! -x "$BUILD/perflens-mcp" ]; then
	echo "bench: $BUILD/perflens-mcp not found: build first (make BUILD=$BUILD)" >&2
	exit 2
fi
BUILD=$(cd "$BUILD" && pwd)
SERVER=$BUILD/perflens-mcp
FAULTS=
[ -x "$BUILD/faults/perflens-mcp" ] && FAULTS=$BUILD/faults/perflens-mcp
CAPTURE=${BENCH_MCP_CAPTURE:-$SHARED/peers/flamegraph/test/perf-vertx-stacks-01.txt}
if [ ! -f "$CAPTURE" ]; then
	echo "bench: $CAPTURE not found (set SHARED or BENCH_MCP_CAPTURE)" >&2
	exit 2
fi
if ! command -v python3 > /dev/null 2>&1; then
	echo "bench: python3 not found" >&2
	exit 2
fi
SHARED=$(cd "$SHARED" && pwd)

QUICK=${BENCH_QUICK:-0}
[ "$QUICK" = 0 ] && QUICK=
if [ -n "$QUICK" ]; then
	STDIO_N=${BENCH_MCP_STDIO_N:-300} STDIO_MAX_S=${BENCH_MCP_STDIO_MAX_S:-10}
	HTTP_CALLS=${BENCH_MCP_HTTP_CALLS:-20000}
	HTTP_MAX_S=${BENCH_MCP_HTTP_MAX_S:-20} PING_MAX_S=${BENCH_MCP_PING_MAX_S:-8}
else
	STDIO_N=${BENCH_MCP_STDIO_N:-2000} STDIO_MAX_S=${BENCH_MCP_STDIO_MAX_S:-60}
	HTTP_CALLS=${BENCH_MCP_HTTP_CALLS:-100000}
	HTTP_MAX_S=${BENCH_MCP_HTTP_MAX_S:-900} PING_MAX_S=${BENCH_MCP_PING_MAX_S:-60}
fi
THREADS=${BENCH_MCP_THREADS:-8}
PACE_MS=${BENCH_MCP_PACE_MS:-5}
CLIENT_KIND=${BENCH_MCP_HTTP_CLIENT:-c}

if [ -n "${BENCH_TMPDIR:-}" ]; then
	TMP=$BENCH_TMPDIR/mcp
	mkdir -p "$TMP" || exit 2
else
	TMP=$(mktemp -d "${TMPDIR:-/tmp}/perflens-mcp-bench.XXXXXX") || exit 2
fi
PY=
# shellcheck disable=SC2317  # called through trap
cleanup() {
	# The servers are python's children: it kills them (and they die with
	# it: PR_SET_PDEATHSIG).  Stop python if it is still running.
	if [ -n "$PY" ] && kill -0 "$PY" 2> /dev/null; then
		kill "$PY" 2> /dev/null
		wait "$PY" 2> /dev/null
	fi
	if [ -n "${BENCH_KEEP:-}" ]; then
		echo "bench: MCP scratch kept in $TMP"
	else
		rm -rf "$TMP"
	fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP

# The HTTP load client: compiled here, or the python threads instead.
HTTP_CLIENT=
build_http_client() {
	_err=$TMP/http_load.cc.err
	# shellcheck disable=SC2086  # the flags are separate words
	if _flags=$(pkg-config --cflags --libs libcurl jansson 2> "$_err") &&
		${CC:-cc} -std=gnu11 -O2 -Wall -Wextra -Werror -Wshadow -o "$TMP/http_load" \
			"$HERE/http_load.c" $_flags -lm 2>> "$_err"; then
		HTTP_CLIENT=$TMP/http_load
	fi
}
case $CLIENT_KIND in
python) HTTP_CLIENT_TXT="python3 threads (BENCH_MCP_HTTP_CLIENT=python)" ;;
*)	build_http_client
	HTTP_CLIENT_TXT="$HTTP_CLIENT (bench/http_load.c, libcurl multi)"
	[ -z "$HTTP_CLIENT" ] && HTTP_CLIENT_TXT="python3 threads, because bench/http_load.c did not build:
$(head -n 5 "$TMP/http_load.cc.err" | sed 's/^/           /')" ;;
esac

echo
echo "perflens-mcp speed benchmarks$( [ -n "$QUICK" ] && echo ' (BENCH_QUICK: short runs, not comparable with the targets)')"
echo "server:    $SERVER ($("$SERVER" --version 2>/dev/null | head -n 1)): a forked, seccomp+Landlock worker per tools/call"
if [ -n "$FAULTS" ]; then
	echo "test build: $FAULTS (--no-sandbox: the tool runs in the server's process)"
else
	echo "test build: none ($BUILD/faults/perflens-mcp; make BUILD=$BUILD $BUILD/faults/perflens-mcp): no-sandbox figures skipped"
fi
echo "machine:   $(nproc) CPUs, $(uname -r), load average$(cut -d' ' -f1-3 /proc/loadavg | sed 's/^/ /')"
echo "timing:    wall clock in the client (python3 perf_counter_ns; CLOCK_MONOTONIC in http_load), request written to response read;"
echo "           stdio: $STDIO_N calls per series after 20 untimed (cap ${STDIO_MAX_S} s), paced series ${PACE_MS} ms apart; HTTP: $THREADS concurrent, $HTTP_CALLS calls, caps ${HTTP_MAX_S} s / ${PING_MAX_S} s"
echo "HTTP load: $HTTP_CLIENT_TXT"
# The floor under a forked worker per call: a bare fork+exit, measured now.
if ${CC:-cc} -std=gnu11 -O2 -Wall -Wextra -o "$TMP/fork_floor" "$HERE/fork_floor.c" 2> "$TMP/fork_floor.err" &&
	FLOOR=$("$TMP/fork_floor" 2000 8); then
	_f() { printf '%s\n' "$FLOOR" | tr ' ' '\n' | sed -n "s/^$1=//p"; }
	echo "fork floor: a bare fork+exit+wait of an 8 MB process (bench/fork_floor.c): $(_f cpu_ms) ms cpu (parent $(_f parent_cpu_ms), child $(_f child_cpu_ms)),"
	echo "           $(_f wall_ms) ms wall: at most $(_f max_per_s) per second on $(_f cpus) CPUs, before any work"
else
	echo "fork floor: not measured: $(head -n 3 "$TMP/fork_floor.err")"
fi
echo "scratch:   $TMP (artifact root; server logs)"

# In the background with wait, so that a signal to this script reaches
# the trap at once, which then stops python with SIGTERM.
python3 "$HERE/mcp_bench.py" --server "$SERVER" ${FAULTS:+--faults "$FAULTS"} \
	--allowed-root "$SHARED" --capture "$CAPTURE" --tmp "$TMP" \
	--stdio-n "$STDIO_N" --stdio-max-s "$STDIO_MAX_S" --http-calls "$HTTP_CALLS" --threads "$THREADS" \
	--http-max-s "$HTTP_MAX_S" --ping-max-s "$PING_MAX_S" --pace-ms "$PACE_MS" \
	${HTTP_CLIENT:+--http-client "$HTTP_CLIENT"} ${QUICK:+--quick} &
PY=$!
wait "$PY"
rc=$?
PY=
[ "$rc" -eq 2 ] && exit 2
[ "$rc" -ne 0 ] && echo "bench: mcp_bench.py exited $rc"
exit 0
