# test_collect.sh - authorized collection with real perf on this kernel.
#
# Gates first: every missing gate is refused, naming it, with nothing run
# and nothing written (CLI and MCP).  Then real collections through the
# CLI: record (checked against perf report on the perf.data collected),
# stat (checked against the CSV perf wrote), off-CPU of a workload that
# sleeps and blocks on a pipe (blocked time per task within bounds set by
# the workload's own sleeps, and equal to perf sched timehist's wait time
# on the same perf.data), sched and lock runs, a pid attach, and a
# timeout that must kill perf and the workload it started, leaving no
# process and no staging folder behind.
# run.sh: slow
# run.sh: timing
. tests/integration/lib.sh
name="collect"
here="$REPO/tests/integration"
P=I_EXPLICITLY_AUTHORIZE_TARGET_PROFILING
PP=I_EXPLICITLY_AUTHORIZE_PID_ATTACH

if ! command -v perf >/dev/null 2>&1; then
	skip "$name: perf is not installed"
	exit 0
fi
if ! perf record -e cpu-clock -g -N -o "$WORK/probe.data" -- true >/dev/null 2>"$WORK/probe.err"; then
	skip "$name: perf cannot record here: $(oneline "$WORK/probe.err")"
	exit 0
fi
mkdir -p "$WORK/bin" "$WORK/art"
gcc -O1 -g -fno-omit-frame-pointer -o "$WORK/bin/fib" "$REPO/tests/workloads/fib.c" 2>"$WORK/err" ||
	notok "$name: gcc failed: $(oneline "$WORK/err")"
cat >"$WORK/blk.c" <<'EOF'
/* Blocks on a pipe for ~100 ms (a child writes every 20 ms), then sleeps
 * 50 ms; the child sleeps 5 x 20 ms. */
#include <time.h>
#include <unistd.h>
static void nap(long ms) { struct timespec t = {0, ms * 1000000L}; nanosleep(&t, 0); }
int main(void)
{
	int p[2];
	char c;
	if (pipe(p) < 0)
		return 1;
	if (fork() == 0) {
		for (int i = 0; i < 5; i++) {
			nap(20);
			if (write(p[1], "x", 1) != 1)
				_exit(1);
		}
		_exit(0);
	}
	for (int i = 0; i < 5; i++)
		if (read(p[0], &c, 1) != 1)
			return 1;
	nap(50);
	return 0;
}
EOF
gcc -O1 -g -fno-omit-frame-pointer -o "$WORK/bin/blk" "$WORK/blk.c" 2>"$WORK/err" ||
	notok "$name: gcc blk failed: $(oneline "$WORK/err")"
gcc -O1 -g -fno-omit-frame-pointer -pthread -o "$WORK/bin/contend" "$REPO/tests/workloads/contend.c" 2>"$WORK/err" ||
	notok "$name: gcc contend failed: $(oneline "$WORK/err")"
gcc -O1 -g -fomit-frame-pointer -o "$WORK/bin/depth" "$REPO/tests/workloads/depth.c" 2>"$WORK/err" ||
	notok "$name: gcc depth failed: $(oneline "$WORK/err")"

# ------------------------------------------------------------- gates
collect() { "$PERFLENS" collect --artifact-root "$WORK/art" "$@" >"$WORK/out.json" 2>"$WORK/err"; }
refused() { # WHAT WANT_TEXT ARGS...: exit 5 naming WANT_TEXT, nothing written
	what=$1 want=$2
	shift 2
	collect "$@"
	rc=$?
	if [ $rc -eq 5 ] && grep -q -- "$want" "$WORK/err" && [ ! -d "$WORK/art/collections" ]; then
		ok "$name gate: $what is refused naming $want, nothing written"
	else
		notok "$name gate: $what: exit $rc, $(oneline "$WORK/err"), collections: $(ls "$WORK/art" 2>&1)"
	fi
}
refused "no --authorize-target" "--authorize-target" --executable "$WORK/bin/fib"
refused "a wrong phrase" "the authorization phrase" --executable "$WORK/bin/fib" --authorize-target yes
refused "a pid without --allow-pid-attach" "--allow-pid-attach" --pid $$ --duration-seconds 1 --authorize-target $P
refused "a pid without its phrase" "pid_authorization" --pid $$ --duration-seconds 1 --authorize-target $P --allow-pid-attach
refused_usage() { # WHAT WANT_TEXT ARGS...: exit 2 naming WANT_TEXT, nothing written
	what=$1 want=$2
	shift 2
	collect "$@"
	rc=$?
	if [ $rc -eq 2 ] && grep -q -- "$want" "$WORK/err" && [ ! -d "$WORK/art/collections" ]; then
		ok "$name gate: $what is refused naming $want, nothing written"
	else
		notok "$name gate: $what: exit $rc, $(oneline "$WORK/err"), collections: $(ls "$WORK/art" 2>&1)"
	fi
}
refused_usage "the event offcpu-time (PerfLens's, not perf's)" 'mode=\\"off_cpu\\"' --mode record --events offcpu-time \
	--executable "$WORK/bin/fib" --authorize-target $P
collect --executable "$WORK/bin/fib" --authorize-target yes
if grep -q -e "$P" -e "$PP" "$WORK/err"; then
	notok "$name gate: the refusal quotes a phrase: $(oneline "$WORK/err")"
else
	ok "$name gate: the refusal names the authorization argument, never the phrase itself"
fi
collect --pid $$ --authorize-target $P --allow-pid-attach --pid-authorization $PP
[ $? -eq 2 ] && grep -q duration_seconds "$WORK/err" && ok "$name gate: a pid without duration_seconds is a usage error" ||
	notok "$name gate: pid without duration: $(oneline "$WORK/err")"

# The same gates over MCP, in the sandboxed server.
cat >"$WORK/gates.py" <<'EOF'
import os, sys
sys.path.insert(0, os.environ["HERE"])
from mcp_client import *
build, work = os.environ["BUILD_DIR"], os.environ["WORK"]
exe = work + "/bin/fib"
P = "I_EXPLICITLY_AUTHORIZE_TARGET_PROFILING"
def server(flags, tag):
    s = Stdio([build + "/perflens-mcp", "--allowed-root", work, "--artifact-root", work + "/art-mcp"] + flags, tag)
    s.initialize()
    return s
cases = [
    ([], {"executable": exe, "authorization": P}, "--allow-collection"),
    (["--allow-collection", "--allow-process-execution"], {"executable": exe, "authorization": P}, "--allow-writes"),
    (["--allow-collection", "--allow-writes"], {"executable": exe, "authorization": P}, "--allow-process-execution"),
    (["--allow-collection", "--allow-writes", "--allow-process-execution"], {"executable": exe}, "authorization"),
    (["--allow-collection", "--allow-writes", "--allow-process-execution"],
     {"pid": os.getpid(), "duration_seconds": 1, "authorization": P}, "--allow-pid-attach"),
]
for flags, args, want in cases:
    s = server(flags, "gate")
    r = s.call("collect_profile", args)["result"]
    text = r["content"][0]["text"]
    written = os.path.isdir(work + "/art-mcp/collections")
    check("collect MCP gate: missing %s is refused naming it, nothing written" % want,
          r.get("isError") and want in text and not written, short(text))
    s.close()
EOF
HERE="$here" BUILD_DIR="$(cd "$BUILD" && pwd)" WORK="$WORK" /usr/bin/python3 "$WORK/gates.py"

# ------------------------------------------------------------ record
if collect --mode record --executable "$WORK/bin/fib" --authorize-target $P; then
	folder=$(jget "$WORK/out.json" folder)
	data="$folder/perf.data"
	perf report -i "$data" --stdio --no-children --sort sym -g none --percent-limit 0 >"$WORK/self" 2>/dev/null
	perf report -i "$data" --stdio --children --sort sym -g none --percent-limit 0 >"$WORK/children" 2>/dev/null
	summary=$("$PERFLENS" analyze --path "$data" --artifact-root "$WORK/art" 2>"$WORK/err" |
		/usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["artifact"]["summary_path"])')
	if [ -n "$summary" ] && /usr/bin/python3 "$here/compare_perf_report.py" "$summary" "$WORK/self" "$WORK/children" >"$WORK/cmp" 2>&1; then
		ok "$name record: the collected perf.data analyzes, hotspots agree with perf report on it"
	else
		notok "$name record: $(oneline "$WORK/err") $(grep -v '^ok' "$WORK/cmp" | oneline /dev/stdin)"
	fi
	if /usr/bin/python3 "$here/validate_json.py" "$REPO/schemas/tools/collect_profile.json:outputSchema" "$WORK/out.json" >"$WORK/v" 2>&1 &&
		[ "$(jget "$WORK/out.json" metadata.mode)" = record ] && grep -q '"perf version' "$folder/metadata.json"; then
		ok "$name record: result validates; metadata.json holds the command, perf version and kernel"
	else
		notok "$name record: $(oneline "$WORK/v")"
	fi
else
	notok "$name record: $(oneline "$WORK/err")"
fi

# A staging folder left by a run that died an hour ago is cleaned up by
# the next collection; a young one (a run in progress) is left alone.
mkdir -p "$WORK/art/collections/.staging-dead" "$WORK/art/collections/.staging-live"
touch "$WORK/art/collections/.staging-dead/perf.data"
touch -d '2 hours ago' "$WORK/art/collections/.staging-dead"
if collect --mode stat --executable "$WORK/bin/fib" --authorize-target $P &&
	[ ! -e "$WORK/art/collections/.staging-dead" ] && [ -d "$WORK/art/collections/.staging-live" ]; then
	ok "$name: a dead run's staging folder is removed, a live one kept"
else
	notok "$name: staging cleanup: $(ls -A "$WORK/art/collections" | tr '\n' ' ') $(oneline "$WORK/err")"
fi
rmdir "$WORK/art/collections/.staging-live"

# -------------------------------------------------------------- stat
if collect --mode stat --repeat 3 --events task-clock --events page-faults --executable "$WORK/bin/fib" --authorize-target $P; then
	csv="$(jget "$WORK/out.json" folder)/stat.csv"
	"$PERFLENS" stat --input "$csv" --input-format perf_stat --artifact-root "$WORK/art" >"$WORK/stat.json" 2>"$WORK/err"
	# -x output has no header: the format is detected from its first counter
	"$PERFLENS" stat --input "$csv" --artifact-root "$WORK/art" >"$WORK/stat-auto.json" 2>>"$WORK/err"
	if /usr/bin/python3 - "$csv" "$WORK/stat.json" "$WORK/stat-auto.json" <<'EOF'
import json, sys
csv, res, auto = sys.argv[1:4]
if open(res).read() != open(auto).read():
    sys.exit(1)
theirs, statuses = {}, {}
for line in open(csv):
    f = line.strip().split(",")
    if len(f) > 3 and not line.startswith("#"):
        if f[0].startswith("<"):
            statuses[f[2]] = f[0].strip("<>").replace(" ", "_")
        else:
            theirs[f[2]] = float(f[0])
counters = [c for b in json.load(open(res))["blocks"] for c in b["counters"]]
ours = {c["event"]: c["value"] for c in counters}
status = {c["event"]: c["status"] for c in counters}
bad = [e for e in theirs if abs(ours.get(e, -1) - theirs[e]) > 1e-6 * max(1, theirs[e])]
bad += [e for e in statuses if status.get(e) != statuses[e]]
sys.exit(1 if bad or not theirs else 0)
EOF
	then
		ok "$name stat: repeated perf stat counters read back equal to the CSV perf wrote, format given or detected"
	else
		notok "$name stat: $(oneline "$WORK/err") $(head -c 300 "$WORK/stat.json")"
	fi
else
	notok "$name stat: $(oneline "$WORK/err")"
fi

# ------------------------------------------------- tracefs not mounted
# In a mount namespace of its own, without tracefs: the tracepoint modes
# are refused before anything runs, with the mount that fixes it (perf
# would mount tracefs itself, and the sandbox kills it for that).
if [ "$(id -u)" = 0 ] && command -v unshare >/dev/null 2>&1; then
	unshare -m --propagation private sh -c '
		for m in /sys/kernel/debug/tracing /sys/kernel/tracing /sys/kernel/debug; do umount -l $m 2>/dev/null; done
		[ -e /sys/kernel/tracing/events ] || [ -e /sys/kernel/debug/tracing/events ] && exit 99
		exec "$@"' sh "$PERFLENS" collect --artifact-root "$WORK/art-notrace" --mode off_cpu \
		--executable "$WORK/bin/blk" --authorize-target $P >"$WORK/nt.json" 2>"$WORK/nt.err"
	rc=$?
	if [ $rc = 99 ]; then
		skip "$name: tracefs could not be unmounted in a mount namespace"
	elif [ $rc = 3 ] && grep -q "mount -t tracefs nodev /sys/kernel/tracing" "$WORK/nt.err" &&
		[ ! -e "$WORK/art-notrace/collections" ]; then
		ok "$name: without tracefs, off_cpu is refused (exit 3) naming the mount, and nothing is run or kept"
	else
		notok "$name: without tracefs: exit $rc: $(oneline "$WORK/nt.err")"
	fi
	# A tracepoint event of mode stat (the syscall count a classify step
	# proposes) is refused the same way, not killed by the sandbox.
	unshare -m --propagation private sh -c '
		for m in /sys/kernel/debug/tracing /sys/kernel/tracing /sys/kernel/debug; do umount -l $m 2>/dev/null; done
		[ -e /sys/kernel/tracing/events ] || [ -e /sys/kernel/debug/tracing/events ] && exit 99
		exec "$@"' sh "$PERFLENS" collect --artifact-root "$WORK/art-notrace" --mode stat \
		--events raw_syscalls:sys_enter --executable "$WORK/bin/blk" --authorize-target $P >"$WORK/nt.json" 2>"$WORK/nt.err"
	rc=$?
	if [ $rc = 99 ]; then
		skip "$name: tracefs could not be unmounted in a mount namespace"
	elif [ $rc = 3 ] && grep -q "tracepoint.*mount -t tracefs nodev\|mount -t tracefs nodev.*tracepoint" "$WORK/nt.err" &&
		[ ! -e "$WORK/art-notrace/collections" ]; then
		ok "$name: without tracefs, a stat of raw_syscalls:sys_enter is refused (exit 3) naming the mount"
	else
		notok "$name: without tracefs, a tracepoint event: exit $rc: $(oneline "$WORK/nt.err")"
	fi
else
	skip "$name: the tracefs-less case needs root and unshare"
fi
need_tracefs "$name"

# ----------------------------------------------------------- off-CPU
# offcpu.txt is perf script text of the event offcpu-time (period: blocked
# ns) with the task state as the leaf frame; each record keeps comm,
# pid and tid.  The workload's own sleeps bound what it must show, and
# perf sched timehist over the same perf.data (run here, outside PerfLens)
# is the oracle for each task's total time off the CPU.
if collect --mode off_cpu --executable "$WORK/bin/blk" --authorize-target $P; then
	folder=$(jget "$WORK/out.json" folder)
	perf sched timehist -i "$folder/perf.data" >"$WORK/timehist" 2>/dev/null
	if /usr/bin/python3 "$here/offcpu_oracle.py" "$folder/offcpu.txt" "$WORK/out.json" "$WORK/timehist" >"$WORK/oc" 2>&1; then
		ok "$name off_cpu: offcpu.txt per task, state and stack: $(tail -n 1 "$WORK/oc")"
	else
		notok "$name off_cpu: $(oneline "$WORK/oc")"
	fi
	"$PERFLENS" analyze --path "$folder/offcpu.txt" --artifact-root "$WORK/art" >"$WORK/off.json" 2>"$WORK/err"
	[ "$(jget "$WORK/off.json" events.0.name)" = offcpu-time ] && [ "$(jget "$WORK/off.json" events.0.unit)" = ns ] &&
		ok "$name off_cpu: offcpu.txt analyzes as the event offcpu-time with unit ns" ||
		notok "$name off_cpu: analyze: $(oneline "$WORK/err") $(head -c 300 "$WORK/off.json")"
else
	notok "$name off_cpu: $(oneline "$WORK/err")"
fi

# ------------------------------------------------------ sched and lock
# perf sched record is system-wide: a name of this run's own (comm
# "sblkPID") keeps other programs called blk out of the tasks checked.
sblk="sblk$$"
cp "$WORK/bin/blk" "$WORK/bin/$sblk"
if collect --mode sched --executable "$WORK/bin/$sblk" --authorize-target $P &&
	grep -q "$sblk\[" "$(jget "$WORK/out.json" folder)/timehist.txt"; then
	ok "$name sched: perf sched timehist names the workload's tasks"
	# The per-task table, in the result and in the analysis of the
	# perf.data, against perf sched timehist and perf script run here on
	# the same file (sched_oracle.py); each tracepoint is its own event,
	# with perf script's count of it.
	data="$(jget "$WORK/out.json" folder)/perf.data"
	/usr/bin/python3 "$here/sched_oracle.py" "$WORK/out.json" "$data" "$sblk" >"$WORK/so" 2>&1 &&
		/usr/bin/python3 - "$WORK/out.json" "$sblk" <<'EOF' >>"$WORK/so" 2>&1
import json, sys
# blk: the parent waits ~100 ms on the pipe and sleeps 50 ms; the child
# sleeps 5 x 20 ms.  Theirs are first in the table, the parent first.
tasks = [t for t in json.load(open(sys.argv[1]))["sched"]["tasks"] if t["comm"] == sys.argv[2]]
waits = sorted(t["wait_ns"] for t in tasks)
ok = len(tasks) == 2 and 80e6 <= waits[0] <= 400e6 and 130e6 <= waits[1] <= 600e6
print("waits %s ns" % waits)
sys.exit(0 if ok else 1)
EOF
	[ $? -eq 0 ] && ok "$name sched: collect_profile's per-task table agrees with perf sched timehist (run) and perf script's switches (wait, delay): $(tail -n 2 "$WORK/so" | head -n 1)" ||
		notok "$name sched: per-task table: $(oneline "$WORK/so")"
	"$PERFLENS" analyze --path "$data" --artifact-root "$WORK/art" >"$WORK/sa.json" 2>"$WORK/err"
	summary=$(jget "$WORK/sa.json" artifact.summary_path 2>/dev/null)
	perf script -i "$data" -F event 2>/dev/null | sed 's/^ *//; s/: *$//' | sort | uniq -c >"$WORK/events"
	if [ -n "$summary" ] && /usr/bin/python3 "$here/sched_oracle.py" "$summary" "$data" "$sblk" >"$WORK/so" 2>&1 &&
		/usr/bin/python3 - "$WORK/sa.json" "$WORK/events" <<'EOF' >>"$WORK/so" 2>&1
import json, sys
a = json.load(open(sys.argv[1]))
ours = {e["name"]: e["samples"] for e in a["events"]}
theirs = {l.split()[1]: int(l.split()[0]) for l in open(sys.argv[2]) if l.strip()}
print("events %s, perf script %s, malformed %d" % (ours, theirs, a["records"]["malformed"]))
sys.exit(0 if ours == theirs and a["records"]["malformed"] == 0 else 1)
EOF
	then
		ok "$name sched: the perf.data analyzes to one event per tracepoint (perf script's counts) and the same table"
	else
		notok "$name sched: analyze: $(oneline "$WORK/err") $(oneline "$WORK/so")"
	fi
else
	notok "$name sched: $(oneline "$WORK/err")"
fi
if collect --mode lock --executable "$WORK/bin/blk" --authorize-target $P; then
	# The kernel here may record no contention: the report may be empty,
	# but it must be there, with the command that made it.
	if [ -f "$(jget "$WORK/out.json" folder)/lock.txt" ] &&
		[ "$(jget "$WORK/out.json" metadata.post_command.1)" = lock ]; then
		ok "$name lock: perf lock ran; its report and the command that made it are kept"
	else
		notok "$name lock: no lock.txt or post_command: $(head -c 300 "$WORK/out.json")"
	fi
else
	grep -q "perf lock" "$WORK/err" && ok "$name lock: unsupported here, said plainly: $(oneline "$WORK/err")" ||
		notok "$name lock: $(oneline "$WORK/err")"
fi

# --------------------------------------------------------- pid attach
# A target that outlives the attach (fib may end within the second on a
# busy machine, and perf then has nothing to attach to).
cat >"$WORK/spin.c" <<'EOF'
#include <time.h>
int main(void)
{
	volatile unsigned long x = 0;
	for (time_t end = time(0) + 60; time(0) < end;)
		for (int i = 0; i < 1000000; i++)
			x += (unsigned long)i;
	return 0;
}
EOF
gcc -O1 -o "$WORK/bin/spin" "$WORK/spin.c" 2>/dev/null
"$WORK/bin/spin" &
spin=$!
# 3 s: on a loaded machine perf itself may take most of a second to start.
if collect --mode record --pid $spin --duration-seconds 3 --authorize-target $P --allow-pid-attach --pid-authorization $PP; then
	n=$(perf script -i "$(jget "$WORK/out.json" folder)/perf.data" -F pid 2>/dev/null | grep -c "^ *$spin *$")
	[ "$n" -gt 0 ] && ok "$name pid: 3 s attached to a running pid: $n samples of it" ||
		notok "$name pid: no samples of $spin"
else
	notok "$name pid: $(oneline "$WORK/err")"
fi
kill $spin 2>/dev/null
wait $spin 2>/dev/null

# ------------------------------------------------------------ timeout
marker="perflens-collect-hang-$$"
# The grandchild sleeps a time of this run's own, so that counting (and
# killing) what is left never touches another run's processes.
naps="4$$"
cat >"$WORK/hang.c" <<'EOF'
#include <unistd.h>
int main(void)
{
	char *const argv[] = {"sleep", NAPS, 0};
	if (fork() == 0)
		execv("/bin/sleep", argv);
	for (;;)
		sleep(1);
}
EOF
gcc -DNAPS="\"$naps\"" -o "$WORK/bin/$marker" "$WORK/hang.c" 2>/dev/null
before=$(ls -A "$WORK/art/collections" | wc -l)
start=$(date +%s)
collect --mode record --executable "$WORK/bin/$marker" --timeout-seconds 2 --authorize-target $P
rc=$? took=$(($(date +%s) - start))
sleep 0.5
left=$(($(pgrep -f "$marker" | wc -l) + $(pgrep -fx "sleep $naps" | wc -l)))
after=$(ls -A "$WORK/art/collections" | wc -l)
if [ $rc -eq 6 ] && [ "$took" -le 8 ] && [ "$left" -eq 0 ] && [ "$after" -eq "$before" ]; then
	ok "$name timeout: perf and the workload it started are killed at 2 s (exit 6), no orphan, nothing kept"
else
	notok "$name timeout: exit $rc after ${took}s, $left processes left, collections $before -> $after: $(oneline "$WORK/err")"
fi
# The same collections in perflens-mcp's sandboxed worker.
HERE="$here" BUILD_DIR="$(cd "$BUILD" && pwd)" WORK="$WORK" HANG="$WORK/bin/$marker" NAPS="$naps" \
	/usr/bin/python3 "$here/mcp_collect.py"
# What each mode finds, in the sandboxed worker, against the workloads.
HERE="$here" BUILD_DIR="$(cd "$BUILD" && pwd)" WORK="$WORK" SBLK="$sblk" /usr/bin/python3 "$here/mcp_collect_modes.py"
for p in $(pgrep -f "$marker"); do kill "$p" 2>/dev/null; done
for p in $(pgrep -fx "sleep $naps"); do kill "$p" 2>/dev/null; done
exit 0
