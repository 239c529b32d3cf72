# test_perf_data.sh - perf.data read through the allowlisted perf.
#
# Workloads are recorded here with real `perf record -g` on this kernel.
# Oracles: the analysis of the same data's `perf script` text (made by
# perf itself, with the same field list), and `perf report` on the
# perf.data for self and children percentages.  Also: the MCP server reads
# perf.data only with --allow-process-execution (and says so otherwise,
# writing nothing), in its sandboxed worker; a perf that hangs is killed at
# --perf-timeout with everything it started, leaving no process behind.
. tests/integration/lib.sh
name="perf.data"
# This script tests the perf script path: the native reader, which would
# read these files first, is tested against it in test_perf_data_native.sh.
export PERFLENS_PERF_DATA_READER=perf-script
here="$REPO/tests/integration"
FIELDS=comm,pid,tid,time,event,period,trace,ip,sym,symoff,dso

if ! command -v perf >/dev/null 2>&1; then
	skip "$name: perf is not installed"
	exit 0
fi
if ! perf record -e cpu-clock -g -N -o "$WORK/probe.data" -- true >/dev/null 2>"$WORK/probe.err"; then
	skip "$name: perf cannot record here: $(oneline "$WORK/probe.err")"
	exit 0
fi
mkdir -p "$WORK/bin" "$WORK/art" "$WORK/art2"

# same_analysis A B: the two summaries agree on everything but provenance,
# the build-ids and the caller check (which need what only perf.data holds:
# build-ids and event attributes; test_cfi.sh tests the check), and so do
# their stack tables, byte for byte once the check's three entries are
# taken out of the first.
same_analysis() {
	/usr/bin/python3 - "$1" "$2" <<'EOF'
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
if "caller_check" in b.get("quality", {}):
    print("the perf script text (no event attributes) was caller-checked"); sys.exit(1)
for d in (a, b):
    d.pop("provenance", None); d.pop("analysis_id", None); d.pop("id", None)
    d.pop("stacks_file", None)
    q = d.get("quality", {})
    q.pop("build_ids", None)  # only perf.data records them
    q.pop("caller_check", None)
    q["warnings"] = [w for w in q.get("warnings", []) if "frame-pointer edge that may skip" not in w]
if a != b:
    keys = [k for k in set(a) | set(b) if a.get(k) != b.get(k)]
    print("differ in", keys); sys.exit(1)
sa = json.load(open(sys.argv[1][:-5] + ".stacks.json"))
for k in ("caller_check", "marks", "marked"):
    sa.pop(k, None)
if json.dumps(sa, separators=(",", ":"), ensure_ascii=False) + "\n" != open(sys.argv[2][:-5] + ".stacks.json").read():
    print("stack tables differ beyond the caller check"); sys.exit(1)
EOF
}

for w in fib libc_strings; do
	bin="$WORK/bin/$w" data="$WORK/$w.data"
	gcc -O1 -g -fno-omit-frame-pointer -o "$bin" "$REPO/tests/workloads/$w.c" 2>"$WORK/err" &&
		perf record -e cpu-clock -F 999 -g -N -o "$data" -- "$bin" >/dev/null 2>>"$WORK/err" &&
		perf script -i "$data" -F $FIELDS --show-mmap-events >"$WORK/$w.txt" 2>>"$WORK/err" &&
		perf report -i "$data" --stdio --no-children --sort sym -g none --percent-limit 0 \
			>"$WORK/$w.self" 2>>"$WORK/err" &&
		perf report -i "$data" --stdio --children --sort sym -g none --percent-limit 0 \
			>"$WORK/$w.children" 2>>"$WORK/err"
	if [ $? -ne 0 ]; then
		notok "$name $w: building or recording failed: $(oneline "$WORK/err")"
		continue
	fi
	"$PERFLENS" analyze --path "$data" --artifact-root "$WORK/art" >"$WORK/$w.pd.json" 2>"$WORK/err"
	rc=$?
	"$PERFLENS" analyze --path "$WORK/$w.txt" --artifact-root "$WORK/art" >"$WORK/$w.txt.json" 2>>"$WORK/err"
	rc2=$?
	if [ $rc -ne 0 ] || [ $rc2 -ne 0 ]; then
		notok "$name $w: perflens analyze failed: $(oneline "$WORK/err")"
		continue
	fi
	pd=$(jget "$WORK/$w.pd.json" artifact.summary_path)
	tx=$(jget "$WORK/$w.txt.json" artifact.summary_path)
	if out=$(same_analysis "$pd" "$tx" 2>&1); then
		ok "$name $w: the perf.data analysis equals the one of perf's own perf script text"
	else
		notok "$name $w: perf.data and perf script text analyses differ: $out"
	fi
	conv="$(jget "$pd" provenance.inputs.0.format) $(jget "$pd" provenance.inputs.0.converted_by)"
	case "$conv" in
	"perf_data /"*" script -i $data -F $FIELDS --show-mmap-events --kallsyms /proc/kallsyms --no-inline --no-demangle") ok "$name $w: provenance names the format and the exact perf command" ;;
	*) notok "$name $w: provenance says '$conv'" ;;
	esac
	if /usr/bin/python3 "$here/compare_perf_report.py" "$pd" "$WORK/$w.self" "$WORK/$w.children" >"$WORK/cmp.out" 2>&1; then
		ok "$name $w: self and children agree with perf report on the perf.data"
	else
		notok "$name $w: differs from perf report: $(grep -v '^ok' "$WORK/cmp.out" | oneline /dev/stdin)"
	fi
	maps=$(jget "$pd" provenance.counts.mappings)
	if [ "${maps:-0}" -gt 0 ] && [ "$(jget "$pd" provenance.counts.records_malformed)" = 0 ]; then
		ok "$name $w: $maps mmap side-band records kept as mappings, none counted malformed"
	else
		notok "$name $w: mappings=$maps, malformed=$(jget "$pd" provenance.counts.records_malformed)"
	fi
done

# Frame recovery: a binary that perf cannot find at its recorded path
# leaves [unknown] frames; the local copy given with --binary (same
# build-id) names them, and the hotspots then agree with perf report run
# when the binary is back in place.  A different binary is refused.
rec="$WORK/rec"
mkdir -p "$rec/keep"
recovery() { /usr/bin/python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))["quality"]["frame_recovery"]; print(r["user_frames_unknown"], r["recovered"], " ".join(sorted(r["not_recovered"])))' "$1"; }
(cat "$REPO/tests/workloads/fib.c"; echo "int perflens_unique_$$(void) { return $$; }") >"$rec/uniq.c"
gcc -O1 -g -fno-omit-frame-pointer -o "$rec/uniq" "$rec/uniq.c" 2>"$WORK/err" &&
	gcc -O1 -g -fno-omit-frame-pointer -o "$rec/other" "$REPO/tests/workloads/libc_strings.c" 2>>"$WORK/err" &&
	perf record -e cpu-clock -F 999 -g -N -o "$rec/uniq.data" -- "$rec/uniq" >/dev/null 2>>"$WORK/err"
if [ $? -ne 0 ]; then
	notok "$name recovery: build or record failed: $(oneline "$WORK/err")"
else
	mv "$rec/uniq" "$rec/keep/uniq"
	summary_of() { "$PERFLENS" analyze --path "$rec/uniq.data" --artifact-root "$rec/art" "$@" 2>"$WORK/err" |
		/usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["artifact"]["summary_path"])'; }
	none=$(summary_of) bin=$(summary_of --binary "$rec/keep/uniq") wrong=$(summary_of --module-map "$rec/uniq=$rec/other")
	set -- $(recovery "$none")
	if [ "${1:-0}" -gt 0 ] && [ "$2" = 0 ] && [ "$3" = no_local_binary_with_that_build_id ]; then
		ok "$name recovery: without the binary, $1 unknown user frames are counted and say why"
	else
		notok "$name recovery: without the binary: $(recovery "$none") $(oneline "$WORK/err")"
	fi
	# A sample may land in start-up code linked in from crt objects built
	# without -g: no line table row confirms its symbol, so it stays
	# unknown, and says so.  Every other frame must be named.
	set -- $(recovery "$bin")
	if [ "${1:-0}" -gt 0 ] && [ "$1" = "$2" ]; then
		ok "$name recovery: --binary with the recorded build-id names all $2 unknown frames"
	elif [ "${2:-0}" -gt 0 ] && [ "$3" = no_line_table_row ] && [ -z "$4" ] && [ $(($1 - $2)) -le 2 ]; then
		ok "$name recovery: --binary with the recorded build-id names $2 of $1 unknown frames; the rest have no line table row"
	else
		notok "$name recovery: with --binary: $(recovery "$bin")"
	fi
	set -- $(recovery "$wrong")
	if [ "${1:-0}" -gt 0 ] && [ "$2" = 0 ]; then
		ok "$name recovery: a local file with another build-id is never used ($(recovery "$wrong"))"
	else
		notok "$name recovery: a wrong binary was used: $(recovery "$wrong")"
	fi
	# The oracle: perf report once the binary is back where it was recorded.
	mv "$rec/keep/uniq" "$rec/uniq"
	perf report -i "$rec/uniq.data" --stdio --no-children --sort sym -g none --percent-limit 0 >"$rec/self" 2>/dev/null
	perf report -i "$rec/uniq.data" --stdio --children --sort sym -g none --percent-limit 0 >"$rec/children" 2>/dev/null
	if /usr/bin/python3 "$here/compare_perf_report.py" "$bin" "$rec/self" "$rec/children" >"$WORK/cmp.out" 2>&1; then
		ok "$name recovery: recovered hotspots agree with perf report given the binary"
	else
		notok "$name recovery: recovered hotspots differ from perf report: $(grep -v '^ok' "$WORK/cmp.out" | oneline /dev/stdin)"
	fi
fi

# pprof mappings carry the build-ids the recording states: every mapping's
# build-id (decoded by pprof-format) is the one `perf buildid-list` gives.
node=$(sh "$REPO/tests/mcp/setup-node.sh" --check 2>/dev/null)
if [ -z "$node" ]; then
	skip "$name pprof build-ids: Node 22 and tests/mcp/node_modules are missing (sh tests/mcp/setup-node.sh)"
elif [ -n "${bin:-}" ] && [ -f "$bin" ]; then
	bid=$(/usr/bin/python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["id"])' "$bin")
	"$PERFLENS" export --analysis-id "$bid" --format pprof --artifact-root "$rec/art" >"$WORK/pp.json" 2>"$WORK/err"
	"$node" "$here/pprof_build_ids.mjs" "$(jget "$WORK/pp.json" path)" | sort >"$WORK/pp.ids" 2>>"$WORK/err"
	perf buildid-list -i "$rec/uniq.data" 2>/dev/null | sort >"$WORK/perf.ids"
	missing=$(awk '$1 != "-"' "$WORK/pp.ids" | comm -23 - "$WORK/perf.ids" | wc -l)
	with=$(awk '$1 != "-"' "$WORK/pp.ids" | wc -l)
	if [ "$with" -gt 0 ] && [ "$missing" -eq 0 ] && grep -q " $rec/uniq\$" "$WORK/pp.ids" &&
		! grep -q "^- $rec/uniq\$" "$WORK/pp.ids"; then
		ok "$name pprof: $with mappings carry the build-id perf buildid-list gives, the workload's among them"
	else
		notok "$name pprof build-ids: $(oneline "$WORK/pp.ids") vs $(oneline "$WORK/perf.ids") $(oneline "$WORK/err")"
	fi
fi

# A device capture: runtime addresses and no mmap records, so no load base
# is known and nothing is guessed.
dev=$("$PERFLENS" analyze --path "$REPO/fixtures/device-x86/chunk_000.txt.gz" --artifact-root "$WORK/art" 2>"$WORK/err" |
	/usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["artifact"]["summary_path"])')
set -- $(recovery "$dev")
if [ "${1:-0}" -gt 0 ] && [ "$2" = 0 ] && [ "$3" = no_verified_load_base ]; then
	ok "$name recovery: a device capture without mmap records names none of its $1 unknown frames (no verified base)"
else
	notok "$name recovery: device capture: $(recovery "$dev") $(oneline "$WORK/err")"
fi

# The MCP server: refused without --allow-process-execution, read in the
# sandboxed worker with it; the analysis id is the CLI's (same content).
cat >"$WORK/mcp.py" <<'EOF'
import json, os, sys
sys.path.insert(0, os.environ["HERE"])
from mcp_client import *
build, work = os.environ["BUILD_DIR"], os.environ["WORK"]
data = os.path.join(work, "fib.data")
expect = json.load(open(os.path.join(work, "fib.pd.json")))["analysis_id"]
base = [build + "/perflens-mcp", "--allowed-root", work, "--artifact-root", work + "/art2", "--allow-writes"]

s = Stdio(base, "noexec")
s.initialize()
r = s.call("analyze_profile", {"path": data})["result"]
text = r["content"][0]["text"]
check("perf.data MCP: refused without --allow-process-execution, naming the flag",
      r.get("isError") and "--allow-process-execution" in text, short(text))
check("perf.data MCP: nothing written when refused", not os.listdir(work + "/art2") or
      not os.listdir(work + "/art2/analyses") if os.path.isdir(work + "/art2/analyses") else True,
      os.listdir(work + "/art2"))
s.close()

s = Stdio(base + ["--allow-process-execution"], "exec")
s.initialize()
r = s.call("analyze_profile", {"path": data}, timeout=60)["result"]
sc = r.get("structuredContent") or {}
if sc.get("analysis_id") != expect:
    import subprocess
    subprocess.call(["diff", json.load(open(os.path.join(work, "fib.pd.json")))["artifact"]["summary_path"], sc["artifact"]["summary_path"]])
check("perf.data MCP: analyzed by perf in the sandboxed worker, same analysis_id as the CLI",
      not r.get("isError") and sc.get("analysis_id") == expect, short(r))
s.close()

hang = os.environ.get("HANG")
if hang and os.path.exists(hang):
    s = Stdio(base + ["--allow-process-execution", "--perf-path", hang, "--perf-timeout", "1"], "hang")
    s.initialize()
    t0 = time.time()
    r = s.call("analyze_profile", {"path": os.path.join(work, "fake.data")}, timeout=30)["result"]
    took = time.time() - t0
    time.sleep(0.3)
    def cmdline(pid):
        try:
            return open("/proc/%d/cmdline" % pid, "rb").read().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            return ""
    left = [p for p in processes() if cmdline(p).startswith(hang) or cmdline(p) == "sleep %s " % os.environ["NAPS"]]
    check("perf.data MCP: a hanging perf in the worker is killed at --perf-timeout (%.1f s), nothing left" % took,
          r.get("isError") and took < 10 and not left, short(r) + " left=%s" % left)
    check("perf.data MCP: the server keeps serving after it", s.ping_ms() is not None)
    s.close()
EOF

# A perf that hangs, and starts a child that hangs too: killed at the
# timeout with its child, through the CLI (own process group) and through
# the MCP worker (the worker's group).
marker="perflens-hang-$$"
# The child sleeps a time of this run's own, so that counting (and
# killing) what is left never touches another run's processes.
naps="3$$"
cat >"$WORK/hang.c" <<EOF
#include <unistd.h>
int main(void)
{
	char *const argv[] = {"sleep", "$naps", 0};
	if (fork() == 0)
		execv("/bin/sleep", argv);
	for (;;)
		sleep(1);
}
EOF
printf 'PERFILE2 not really' >"$WORK/fake.data"
if gcc -o "$WORK/$marker" "$WORK/hang.c" 2>"$WORK/err"; then
	start=$(date +%s)
	"$PERFLENS" analyze --path "$WORK/fake.data" --perf-path "$WORK/$marker" --perf-timeout 1 \
		--artifact-root "$WORK/art" >/dev/null 2>"$WORK/err"
	rc=$? took=$(($(date +%s) - start))
	sleep 0.3
	left=$(($(pgrep -f "$marker" | wc -l) + $(pgrep -fx "sleep $naps" | wc -l)))
	if [ $rc -eq 6 ] && [ $took -le 5 ] && [ "$left" -eq 0 ]; then
		ok "$name: a hanging perf is killed at --perf-timeout (exit 6 after ${took}s), nothing left"
	else
		notok "$name: hanging perf: exit $rc after ${took}s, $left left: $(oneline "$WORK/err")"
	fi
	pkill -f "$marker" 2>/dev/null
	pkill -fx "sleep $naps" 2>/dev/null
else
	notok "$name: cannot build the hanging perf: $(oneline "$WORK/err")"
fi
HERE="$here" BUILD_DIR="$(cd "$BUILD" && pwd)" WORK="$WORK" HANG="$WORK/$marker" NAPS="$naps" \
	/usr/bin/python3 "$WORK/mcp.py"
