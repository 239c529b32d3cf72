# lib.sh - helpers sourced by the integration tests.
#
# ok/notok/skip print the lines run.sh counts.  need_shared skips a whole
# script with a reason when ../shared is not beside the repo.
ok() { echo "ok - $*"; }
notok() { echo "not ok - $*"; }
skip() { echo "skip - $*"; }
# oneline FILE: a file's text on one line, cut to 300 bytes, for messages.
oneline() { tr '\n\t' '  ' <"$1" | tr -s ' ' | cut -c1-300; }
# jget FILE KEY.KEY.0.KEY: one value of a JSON file (jq is not a dependency).
jget() {
	/usr/bin/python3 -c 'import json,sys
v = json.load(open(sys.argv[1]))
for k in sys.argv[2].split("."):
    v = v[int(k)] if isinstance(v, list) else v[k]
print(v)' "$1" "$2"
}
# oracle WHAT CMD...: run an oracle that prints its own ok / not ok
# lines.  One that exits non-zero without a "not ok" line (a traceback, a
# missing module) is a not ok too, never a silent pass; the script goes on.
oracle() {
	_oracle_what=$1
	shift
	"$@" >"$WORK/oracle.out" 2>&1
	_oracle_rc=$?
	cat "$WORK/oracle.out"
	if [ "$_oracle_rc" -ne 0 ] && ! grep -q '^not ok - ' "$WORK/oracle.out"; then
		notok "$_oracle_what: $(basename "$1") exited $_oracle_rc without a check line: $(tail -3 "$WORK/oracle.out" | tr '\n\t' '  ' | cut -c1-300)"
	fi
	return 0
}
# need_perf_record WHAT: skip the rest of the script, saying why, unless
# perf is installed and can record here (cpu-clock with call chains).
need_perf_record() {
	if ! command -v perf >/dev/null 2>&1; then
		skip "$1: perf is not installed"
		exit 0
	fi
	if ! perf record -e cpu-clock -g -o "$WORK/probe.data" -- true >/dev/null 2>"$WORK/probe.err"; then
		skip "$1: perf cannot record here: $(oneline "$WORK/probe.err")"
		exit 0
	fi
}
# Tracepoint modes (off_cpu, sched, lock) need tracefs mounted; perf mounts
# it itself when it is not, but not in our sandbox (collect.c says how to).
# A machine where nothing mounted it yet gets it mounted here, as root, as
# perf would have done.
need_tracefs() {
	[ -e /sys/kernel/tracing/events ] || [ -e /sys/kernel/debug/tracing/events ] && return 0
	if [ "$(id -u)" = 0 ] && mount -t tracefs nodev /sys/kernel/tracing 2>"$WORK/mount.err"; then
		echo "# $1: tracefs was not mounted: mounted it on /sys/kernel/tracing"
		return 0
	fi
	skip "$1: tracefs is not mounted and cannot be here: $(oneline "$WORK/mount.err" 2>/dev/null)"
	exit 0
}
need_shared() {
	if [ ! -d "$SHARED/peers" ]; then
		skip "$1: $SHARED/peers is absent (tests read the peers' data in place)"
		exit 0
	fi
}
# The sanitizer halves of `make check` set CK_TIMEOUT_MULTIPLIER (ASan 4,
# TSan 10): slack in a deadline scales with it (a whole number here),
# never a bound the product itself promises.
SCALE=${CK_TIMEOUT_MULTIPLIER:-1}
SCALE=${SCALE%%.*}
# Go's build cache, kept across scripts and runs (safe for concurrent
# builds): the Go programs of the pprof tests build in a second, not a
# minute, once the standard library is cached.
GO_CACHE="${PERFLENS_GOCACHE:-${XDG_CACHE_HOME:-${HOME:-/root}/.cache}/perflens-go}"
# A fresh artifact root per script, removed at exit.  Servers are stopped
# at exit too, whatever happened: the one in $srv_pid (started by the
# script) and every pid a python client listed in $WORK/pids; so are the
# network namespaces and veths a test listed in $WORK/netns ("NS VETH").
WORK=$(mktemp -d /tmp/perflens-it.XXXXXX)
srv_pid=""
cleanup() {
	[ -n "$srv_pid" ] && kill "$srv_pid" 2>/dev/null && wait "$srv_pid" 2>/dev/null
	if [ -f "$WORK/pids" ]; then
		while read -r p; do
			grep -q perflens-mcp "/proc/$p/cmdline" 2>/dev/null && kill -9 "$p" 2>/dev/null
		done < "$WORK/pids"
	fi
	[ -f "$WORK/netns" ] && while read -r ns veth; do
		ip link del "$veth" 2>/dev/null
		ip netns del "$ns" 2>/dev/null
	done < "$WORK/netns"
	# KEEP_WORK=1 keeps the work folder to look into (its path is printed).
	if [ -n "${KEEP_WORK:-}" ]; then echo "# kept $WORK"; else rm -rf "$WORK"; fi
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

# start_http_server WHAT SERVER ARGS...: start SERVER --http 127.0.0.1:0
# ARGS in the background (the OS picks the port; the server prints it),
# set $srv_pid and $port; not ok and exit when it does not come up.
start_http_server() {
	what=$1
	shift
	"$@" 2>"$WORK/server.err" &
	srv_pid=$!
	port=""
	for _ in $(seq 100); do
		port=$(sed -n 's#^perflens-mcp: listening on http://127\.0\.0\.1:\([0-9]*\)/mcp$#\1#p' "$WORK/server.err")
		[ -n "$port" ] && return 0
		kill -0 "$srv_pid" 2>/dev/null || break
		sleep 0.1
	done
	notok "$what: perflens-mcp --http did not start: $(tr '\n' ' ' < "$WORK/server.err")"
	exit 0
}

# stop_server WHAT: SIGTERM the server in $srv_pid; ok when it exits 0 with
# no sanitizer report in $WORK/server.err, not ok when it had died.
stop_server() {
	if kill -0 "$srv_pid" 2>/dev/null; then
		kill "$srv_pid"
		wait "$srv_pid"
		src=$?
		srv_pid=""
		if [ "$src" -eq 0 ] && ! grep -qE 'Sanitizer|runtime error' "$WORK/server.err"; then
			ok "$1: the server stops cleanly on SIGTERM"
		else
			notok "$1: the server stops cleanly on SIGTERM: exit $src; $(grep -m3 -E 'Sanitizer|runtime error|SUMMARY' "$WORK/server.err" | tr '\n' ' ')"
		fi
	else
		srv_pid=""
		notok "$1: the server survived: it died; $(tail -5 "$WORK/server.err" | tr '\n' ' ')"
	fi
}
