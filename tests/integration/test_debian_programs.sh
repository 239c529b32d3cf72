# test_debian_programs.sh - real Debian programs nobody here wrote, analyzed
# through perflens-mcp as an agent would (issue 30): sqlite3 committing one
# row per transaction on a real disk, a pure-Python loop in python3, gzip -9
# on a large file, find -exec gzip (a parent in wait4), xz -T2 (threads
# waiting for work), python3 -m http.server under curl load attached by pid.
# What each profile must and must not say is written in debian_programs.py
# from what the programs are known to do; perf report and perf sched
# timehist on the same perf.data are the oracles.  The files are written
# under /var/tmp (a real disk: a commit's sync on tmpfs waits for none).
# run.sh: slow
. tests/integration/lib.sh
name="debian programs"
need_perf_record "$name"
need_tracefs "$name"
for cmd in sqlite3 gzip curl; do
	if ! [ -x "/usr/bin/$cmd" ]; then
		skip "$name: /usr/bin/$cmd is missing (sh tests/setup.sh installs it)"
		exit 0
	fi
done
if ! /usr/bin/python3 -c 'import jsonschema' 2>/dev/null; then
	skip "$name: python3-jsonschema is not installed"
	exit 0
fi
if ! perf record -e sched:sched_switch -g -N -o "$WORK/probe.data" -- true >/dev/null 2>"$WORK/probe.err"; then
	skip "$name: perf cannot record sched:sched_switch here: $(oneline "$WORK/probe.err")"
	exit 0
fi
disk=$(mktemp -d /var/tmp/perflens-debian.XXXXXX) || { notok "$name: cannot make a folder under /var/tmp"; exit 0; }
trap 'rm -rf "$disk"; cleanup' EXIT
if [ "$(stat -f -c %T "$disk")" = tmpfs ]; then
	skip "$name: /var/tmp is on tmpfs, where sqlite3's syncs wait for no device"
	exit 0
fi
mkdir -p "$WORK/art"
oracle "$name" env HERE="$REPO/tests/integration" BUILD_DIR="$(cd "$BUILD" && pwd)" WORK="$WORK" DISK_DIR="$disk" \
	timeout 900 /usr/bin/python3 "$REPO/tests/integration/debian_programs.py"
exit 0
