# test_collect_fidelity.sh - a program profiled by collect_profile runs as
# it runs without PerfLens (issue 29).
#
# tests/workloads/fidelity.c opens files in its working directory and in
# /var/tmp, writes /dev/null, reads /etc/hostname and /proc/self/status,
# opens a loopback TCP connection and a UNIX socketpair, forks and execs,
# blocks on a pipe its child writes to, commits a journal with fsync,
# names a thread and prints what worked.  It runs once directly, then
# under collect_profile through perflens-mcp over stdio (record with fp
# and dwarf call graphs, stat, off_cpu with fp and dwarf, sched, lock;
# built with and without frame pointers): the same stdout and exit status
# each time, the thread's name in list_threads, the fsync waits under the
# program's own journal_commit without frame pointers, the program's
# failure and perf's lines (a forced lossy run against perf report
# --stats) as warnings, a pid attach that names the threads too, and a
# collection worker that holds nothing of perf's (mcp_fidelity.py).
. tests/integration/lib.sh
name="collect fidelity"
here="$REPO/tests/integration"

need_perf_record "$name"
mkdir -p "$WORK/bin" "$WORK/art"
gcc -O1 -g -fno-omit-frame-pointer -pthread -o "$WORK/bin/fidelity" "$REPO/tests/workloads/fidelity.c" 2>"$WORK/err" &&
	gcc -O1 -g -fomit-frame-pointer -pthread -o "$WORK/bin/fidelity-nofp" "$REPO/tests/workloads/fidelity.c" 2>>"$WORK/err" ||
	{ notok "$name: gcc failed: $(oneline "$WORK/err")"; exit 0; }
(cd "$WORK/bin" && FIDELITY_VAR=fid ./fidelity >"$WORK/direct.out" 2>"$WORK/direct.err"; echo $? >"$WORK/direct.rc")
if [ "$(cat "$WORK/direct.rc")" = 0 ] && grep -q '^failures 0$' "$WORK/direct.out"; then
	ok "$name: the workload does everything it tries when run directly"
else
	notok "$name: the workload run directly: exit $(cat "$WORK/direct.rc"): $(oneline "$WORK/direct.out")"
fi
tracefs=0
if [ -e /sys/kernel/tracing/events ] || [ -e /sys/kernel/debug/tracing/events ]; then
	tracefs=1
fi
oracle "$name" env HERE="$here" BUILD_DIR="$(cd "$BUILD" && pwd)" WORK="$WORK" TRACEFS=$tracefs \
	/usr/bin/python3 "$here/mcp_fidelity.py"
# The CLI has no sandbox: the program runs from the CLI's own process, the
# same way (--environment NAME=VALUE repeats).
"$PERFLENS" collect --artifact-root "$WORK/art-cli" --allowed-root "$WORK/bin" --executable "$WORK/bin/fidelity" \
	--environment FIDELITY_VAR=fid --authorize-target I_EXPLICITLY_AUTHORIZE_TARGET_PROFILING >"$WORK/cli.json" 2>"$WORK/cli.err"
folder=$(jget "$WORK/cli.json" folder 2>/dev/null)
if [ -n "$folder" ] && cmp -s "$folder/target.stdout" "$WORK/direct.out" &&
	[ "$(jget "$WORK/cli.json" metadata.launch.where)" = this_process ]; then
	ok "$name: the CLI's collection gives the same stdout, from its own process"
else
	notok "$name: the CLI's collection: $(oneline "$WORK/cli.err") $(head -c 300 "$WORK/cli.json")"
fi
