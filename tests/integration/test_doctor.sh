# test_doctor.sh - `perflens doctor` on this machine, against what the
# machine itself says.
#
# The paranoid level must be the one /proc says; hardware events must be
# reported as available exactly when `perf stat -e cycles` counts them
# (on this VM: software events only); each call-graph line must agree
# with the capabilities tool's probe (one implementation) and fp/dwarf
# with perf script's own reading of the known chain (test_callgraph_probe
# does that part); the sandbox line must say what a confined worker got;
# libc's debug info must be reported present exactly when its build-id
# file exists under /usr/lib/debug; --json and --format table agree.
. tests/integration/lib.sh
name="doctor"
PY=/usr/bin/python3
P=I_EXPLICITLY_AUTHORIZE_TARGET_PROFILING

if ! command -v perf >/dev/null 2>&1; then
	skip "$name: perf is not installed"
	exit 0
fi
if ! "$PERFLENS" doctor --json > "$WORK/d.json" 2> "$WORK/err"; then
	notok "$name: doctor --json: exit $?: $(oneline "$WORK/err")"
	exit 0
fi
"$PERFLENS" doctor > "$WORK/d.txt" 2>&1 || notok "$name: doctor (table): $(oneline "$WORK/d.txt")"
"$PERFLENS" --artifact-root "$WORK/art" --authorize-target "$P" capabilities > "$WORK/caps.json" 2> "$WORK/err" ||
	notok "$name: capabilities: $(oneline "$WORK/err")"
if perf stat -x, -e cycles -- true 2> "$WORK/stat.err" >/dev/null && ! grep -q "not supported" "$WORK/stat.err"; then
	hw=yes
else
	hw=no
fi
libc=$($PY -c 'import ctypes.util, os; print(os.path.realpath("/lib/x86_64-linux-gnu/libc.so.6"))')
bid=$(LC_ALL=C readelf -n "$libc" 2>/dev/null | sed -n 's/.*Build ID: \([0-9a-f]*\).*/\1/p' | head -1)
dbg=no
[ -n "$bid" ] && [ -f "/usr/lib/debug/.build-id/$(echo "$bid" | cut -c1-2)/$(echo "$bid" | cut -c3-).debug" ] && dbg=yes

$PY - "$WORK/d.json" "$WORK/caps.json" "$(cat /proc/sys/kernel/perf_event_paranoid)" "$hw" "$dbg" "$(perf version)" <<'PY'
import json, sys
d, caps = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
paranoid, hw, dbg, version = int(sys.argv[3]), sys.argv[4], sys.argv[5], sys.argv[6]
c = {x["check"]: x for x in d["checks"]}
def say(ok, what):
    print(("ok - " if ok else "not ok - ") + "doctor: " + what)
want = {"perf", "perf_event_paranoid", "hardware_events", "call_graph_fp", "call_graph_dwarf", "call_graph_lbr",
        "sandbox", "debuginfod", "libc_debug_info", "tracefs"}
say(want <= set(c) and all(x["status"] in ("ok", "warn", "fail", "info") and x["detail"] for x in d["checks"]) and
    all(x["fix"] for x in d["checks"] if x["status"] in ("warn", "fail")),
    "every check is there, with a status and a detail, and a fix for each warn or fail")
say(c["perf"]["value"] == version, "perf and its version as perf prints it (%s)" % c["perf"]["value"])
say(c["perf_event_paranoid"]["value"] == paranoid and ("level %d" % paranoid) in c["perf_event_paranoid"]["detail"],
    "the paranoid level /proc says (%d): %s" % (paranoid, c["perf_event_paranoid"]["detail"]))
hwd = c["hardware_events"]
say((hw == "yes") == (hwd["status"] == "ok") and (hw == "yes" or "software events only" in hwd["detail"]),
    "hardware events as perf stat -e cycles says (%s): %s" % (hw, hwd["detail"]))
g = {x["mode"]: x for x in caps["call_graphs"]}
say(all(c["call_graph_" + m]["value"]["status"] == g[m]["status"] and
        c["call_graph_" + m]["value"]["with_frame_pointers"] == g[m]["with_frame_pointers"]["depth_found"] and
        c["call_graph_" + m]["value"]["without_frame_pointers"] == g[m]["without_frame_pointers"]["depth_found"]
        for m in ("fp", "dwarf", "lbr")),
    "call-graph lines agree with the capabilities probe: %s" % {m: c["call_graph_" + m]["value"]["status"] for m in g})
sb = c["sandbox"]
say(sb["status"] in ("ok", "warn") and sb["value"]["seccomp"] is True, "the sandbox: %s" % sb["detail"])
# tracefs: where /proc/self/mounts says, in doctor and in the capabilities
# tool alike, or the exact mount command.
mounts = [l.split() for l in open("/proc/self/mounts")]
tf = [m[1] for m in mounts if m[2] == "tracefs"]
tc, ct = c.get("tracefs", {}), caps.get("tracefs", {})
if tf:
    say(tc.get("status") == "ok" and tc.get("value") in tf and ct.get("mounted") is True and ct.get("path") in tf,
        "tracefs mounted at %s, as /proc/self/mounts says: %s" % (tc.get("value"), tc.get("detail")))
else:
    say(tc.get("status") == "warn" and tc.get("fix") == "as root: mount -t tracefs nodev /sys/kernel/tracing" and
        ct.get("mounted") is False and ct.get("mount_command") == "mount -t tracefs nodev /sys/kernel/tracing",
        "tracefs not mounted: the exact mount command: %s" % tc.get("fix"))
ld = c["libc_debug_info"]
say((dbg == "yes") == (ld["status"] == "ok"), "libc debug info present as /usr/lib/debug says (%s): %s" % (dbg, ld["detail"]))
PY
if grep -q "^ok    perf_event_paranoid  level $(cat /proc/sys/kernel/perf_event_paranoid)" "$WORK/d.txt" &&
	grep -q "do: " "$WORK/d.txt"; then
	ok "$name: the table says the same, with the fixes (do: ...)"
else
	notok "$name: the table: $(oneline "$WORK/d.txt")"
fi
# Without tracefs (a mount namespace of its own): doctor warns with the
# exact mount command.
if [ "$(id -u)" = 0 ] && command -v unshare >/dev/null 2>&1; then
	unshare -m --propagation private sh -c '
		for m in /sys/kernel/debug/tracing /sys/kernel/tracing /sys/kernel/debug; do umount -l $m 2>/dev/null; done
		grep -q " tracefs " /proc/self/mounts && exit 99
		exec "$@"' sh "$PERFLENS" doctor >"$WORK/nt.txt" 2>&1
	rc=$?
	if [ $rc = 99 ]; then
		skip "$name: tracefs could not be unmounted in a mount namespace"
	elif grep -q "^warn  *tracefs .*tracefs is not mounted" "$WORK/nt.txt" &&
		grep -q "as root: mount -t tracefs nodev /sys/kernel/tracing" "$WORK/nt.txt"; then
		ok "$name: without tracefs, doctor warns and gives the exact mount command"
	else
		notok "$name: without tracefs: $(grep tracefs "$WORK/nt.txt" | head -3 | tr '\n' ' ')"
	fi
else
	skip "$name: the tracefs-less case needs root and unshare"
fi
