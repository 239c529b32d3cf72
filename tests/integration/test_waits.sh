# test_waits.sh - off-CPU waits told apart, through perflens-mcp as an agent.
#
# tests/workloads/waits/waits.c plants one mix of causes per run (a disk
# writer with idle consumers on a condition variable; threads contending
# one mutex around fdatasync; four runnable threads per CPU preempted,
# often inside write()), built with and without frame pointers and
# collected with collect_profile(mode="off_cpu") in frame-pointer and DWARF
# stacks (waits_agent.py).  The oracle is each mix's construction: every
# planted cause gets its rule (cpu_wait, disk_io, lock_wait, idle_wait, or
# futex_wait_unknown where the user frames that tell a condition variable
# from a mutex are missing), and no other wait rule fires.  The files are
# written under /var/tmp (a real disk: fdatasync on tmpfs waits for none).
# run.sh: timing
. tests/integration/lib.sh
name="waits"
if ! command -v perf >/dev/null 2>&1 || ! command -v gcc >/dev/null 2>&1; then
	skip "$name: perf or gcc is not installed"
	exit 0
fi
if ! perf record -e sched:sched_switch -g -N -o "$WORK/probe.data" -- true >/dev/null 2>"$WORK/probe.err"; then
	skip "$name: perf cannot record sched:sched_switch here: $(oneline "$WORK/probe.err")"
	exit 0
fi
if ! /usr/bin/python3 -c 'import jsonschema' 2>/dev/null; then
	skip "$name: python3-jsonschema is not installed"
	exit 0
fi
disk=$(mktemp -d /var/tmp/perflens-waits.XXXXXX) || { notok "$name: cannot make a folder under /var/tmp"; exit 0; }
trap 'rm -rf "$disk"; cleanup' EXIT
if [ "$(stat -f -c %T "$disk")" = tmpfs ]; then
	skip "$name: /var/tmp is on tmpfs, where fdatasync waits for no device"
	exit 0
fi
mkdir -p "$WORK/bin" "$WORK/art"
src="$REPO/tests/workloads/waits/waits.c"
gcc -O1 -g -fno-omit-frame-pointer -o "$WORK/bin/waits-fp" "$src" -lpthread 2>"$WORK/err" &&
	gcc -O1 -g -fomit-frame-pointer -o "$WORK/bin/waits-nofp" "$src" -lpthread 2>>"$WORK/err" ||
	{ notok "$name: gcc failed: $(oneline "$WORK/err")"; exit 0; }
HERE="$REPO/tests/integration" BUILD_DIR="$(cd "$BUILD" && pwd)" WORK="$WORK" DISK_DIR="$disk" \
	/usr/bin/python3 "$REPO/tests/integration/waits_agent.py"
exit 0
