# test_classify.sh - classify_hotspots and build_report on real captures.
#
# The workloads in tests/workloads/classify/ are built with frame pointers
# and recorded here with real perf (cpu-clock at 999 Hz; page-faults and
# sched:sched_switch for some), converted with perf script and analyzed by
# the CLI.  Oracles, none of them PerfLens's own output:
#  - the workloads' construction: each must get its candidate (malloc loop
#    -> memory_allocation, memcpy loop -> memory_copy, write/getppid loop ->
#    system_calls and kernel_time, mutex -> synchronization, fresh pages ->
#    page_faults, fdatasync -> disk_io, mutex switches -> lock_wait and
#    cpu_wait together, a sched_yield spinner -> busy_wait and not
#    system_calls, every other sample of the syscalls capture put on
#    pvm_irq_enable -> vm_irq_enable) and must
#    not get unrelated ones; the pure compute loop gets program_code (its
#    own function holds the samples) and no other hotspot rule;
#  - classify_oracle.py: every figure (fired or not) recomputed from the
#    perf script text with its own parser and Python's re, within 0.001
#    points, on these captures and on the peers' captures;
#  - python3-jsonschema: the rules file against its schema, every result
#    against the tools' output schemas;
#  - cmark-gfm (GitHub's CommonMark parser) for the report's headings and
#    the escaping of caller text (skipped with a reason when absent).
# run.sh: slow
# run.sh: timing
. tests/integration/lib.sh
need_shared "classify"
PY=/usr/bin/python3
if ! $PY -c 'import jsonschema' 2>/dev/null; then
	skip "classify: python3-jsonschema is not installed"
	exit 0
fi
rules=schemas/rules/classify-rules.json
oracle=tests/integration/classify_oracle.py
validate() { $PY tests/integration/validate_json.py "$@"; }
art="$WORK/art"

if validate schemas/classify-rules.schema.json "$rules" >"$WORK/v.out" 2>&1; then
	ok "classify: $rules validates against schemas/classify-rules.schema.json"
else
	notok "classify: $rules does not validate: $(oneline "$WORK/v.out")"
fi

# classify NAME INPUT [ARGS...]: classify INPUT (analyzed first) into
# $WORK/NAME.json, validated against the output schema.
classify() {
	n=$1 in=$2
	shift 2
	if ! "$PERFLENS" classify --input "$in" --artifact-root "$art" --limit 50 "$@" \
		>"$WORK/$n.json" 2>"$WORK/err"; then
		notok "classify $n: $(oneline "$WORK/err")"
		return 1
	fi
	if ! validate schemas/tools/classify_hotspots.json:outputSchema "$WORK/$n.json" >"$WORK/v.out" 2>&1; then
		notok "classify $n: result does not validate: $(oneline "$WORK/v.out")"
		return 1
	fi
	return 0
}

# figures NAME TXT: every figure against classify_oracle.py.
figures() {
	if $PY "$oracle" "$rules" "$2" "$WORK/$1.json" >"$WORK/o.out" 2>&1; then
		ok "classify $1: validates; $(tail -1 "$WORK/o.out") agree with classify_oracle.py"
	else
		notok "classify $1: figures differ from classify_oracle.py: $(oneline "$WORK/o.out")"
	fi
}

# expect NAME EVENT MUST MUSTNOT: rules that must fire on EVENT and rules
# that must not; every candidate's status must be "candidate".
expect() {
	$PY - "$WORK/$1.json" "$2" "$3" "$4" >"$WORK/e.out" 2>&1 <<'EOF'
import json, sys
res = json.load(open(sys.argv[1]))
event, must, mustnot = sys.argv[2], sys.argv[3].split(), sys.argv[4].split()
fired = {c["rule"]["id"]: c for c in res["candidates"] if c["event"] == event}
samples = [e["samples"] for e in res["events"] if e["event"] == event]
errs = ["%s did not fire" % r for r in must if r not in fired]
errs += ["%s fired (%s %.2f)" % (r, fired[r]["figure"]["name"], fired[r]["figure"]["value"])
         for r in mustnot if r in fired]
bad = [c["candidate_id"] for c in res["candidates"] if c["status"] != "candidate"]
errs += ["status is not candidate: %s" % " ".join(bad)] if bad else []
print("; ".join(errs) if errs else "%s samples; fired: %s" % (
    samples[0] if samples else "?",
    ", ".join("%s %.1f" % (r, c["figure"]["value"]) for r, c in fired.items()) or "nothing"))
sys.exit(1 if errs else 0)
EOF
	if [ $? -eq 0 ]; then
		ok "classify $1 on $2: $(cat "$WORK/e.out")"
	else
		notok "classify $1 on $2: $(oneline "$WORK/e.out")"
	fi
}

# ------------------------------------------------------ peers' captures

peers="$SHARED/peers/flamegraph"
for f in "$peers"/test/perf-*.txt "$peers/example-perf-stacks.txt.gz"; do
	n=peer-$(basename "$f")
	classify "$n" "$f" && figures "$n" "$f"
done
session="$SHARED/peers/device-sessions/session-x86-baseline"
if classify device "$session"; then
	ok "classify device session: validates ($($PY -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["candidates"]))' "$WORK/device.json") candidates over 6 events)"
	# Same input, same bytes; pages of 3 chain to the same list.
	"$PERFLENS" classify --input "$session" --artifact-root "$art" --limit 50 >"$WORK/device2.json" 2>/dev/null
	cmp -s "$WORK/device.json" "$WORK/device2.json" && ok "classify device session: byte-identical on a second run" ||
		notok "classify device session: differs between runs"
	id=$($PY -c 'import json,sys; print(json.load(open(sys.argv[1]))["analysis_id"])' "$WORK/device.json")
	: >"$WORK/paged.ids"
	cursor=""
	for _ in $(seq 50); do
		set -- --analysis-id "$id" --artifact-root "$art" --limit 3
		[ -n "$cursor" ] && set -- "$@" --cursor "$cursor"
		"$PERFLENS" classify "$@" >"$WORK/page.json" 2>"$WORK/err" || { notok "classify paging: $(oneline "$WORK/err")"; break; }
		$PY -c 'import json,sys; [print(c["candidate_id"]) for c in json.load(open(sys.argv[1]))["candidates"]]' "$WORK/page.json" >>"$WORK/paged.ids"
		cursor=$($PY -c 'import json,sys; print(json.load(open(sys.argv[1]))["page"]["next_cursor"] or "")' "$WORK/page.json")
		[ -z "$cursor" ] && break
	done
	$PY -c 'import json,sys; [print(c["candidate_id"]) for c in json.load(open(sys.argv[1]))["candidates"]]' "$WORK/device.json" >"$WORK/all.ids"
	cmp -s "$WORK/paged.ids" "$WORK/all.ids" && ok "classify paging: pages of 3 chain to the same $(wc -l <"$WORK/all.ids") candidates" ||
		notok "classify paging: pages of 3 differ from one page of 50"
fi

# ---------------------------------------------------- recorded workloads

record_workloads() {
	if ! command -v perf >/dev/null 2>&1 || ! command -v gcc >/dev/null 2>&1; then
		skip "classify workloads: perf or gcc is not installed"
		return
	fi
	if ! perf record -e cpu-clock -g -N -o "$WORK/probe.data" -- true >/dev/null 2>"$WORK/probe.err"; then
		skip "classify workloads: perf cannot record cpu-clock here: $(oneline "$WORK/probe.err")"
		return
	fi
	mkdir -p "$WORK/bin"
	for src in tests/workloads/classify/*.c; do
		w=$(basename "$src" .c)
		if ! gcc -O1 -g -fno-omit-frame-pointer -o "$WORK/bin/$w" "$src" -lpthread 2>"$WORK/err"; then
			notok "classify workload $w: gcc failed: $(oneline "$WORK/err")"
		fi
	done
	# rec NAME EVENT WORKLOAD [ARGS]: record and convert to $WORK/NAME.txt
	rec() {
		n=$1 ev=$2 w=$3
		shift 3
		[ -x "$WORK/bin/$w" ] || return 1
		# -N: keep the throwaway binaries out of ~/.debug
		if ! perf record -e "$ev" -F 999 -g -N -o "$WORK/$n.data" -- "$WORK/bin/$w" "$@" \
			>/dev/null 2>"$WORK/err"; then
			skip "classify $n: perf record -e $ev failed: $(oneline "$WORK/err")"
			return 1
		fi
		perf script -i "$WORK/$n.data" -F comm,pid,tid,time,event,period,ip,sym,symoff,dso \
			>"$WORK/$n.txt" 2>"$WORK/err" || { notok "classify $n: perf script failed: $(oneline "$WORK/err")"; return 1; }
	}
	on_cpu="memory_allocation memory_copy system_calls kernel_time synchronization page_faults runtime_and_libc io_wait lock_wait sleep cpu_wait disk_io idle_wait futex_wait_unknown frame_pointer_loss unresolved_symbols busy_wait vm_irq_enable"
	if rec compute cpu-clock compute && classify compute "$WORK/compute.txt"; then
		figures compute "$WORK/compute.txt"
		expect compute cpu-clock program_code "$on_cpu"
	fi
	if rec alloc cpu-clock alloc && classify alloc "$WORK/alloc.txt"; then
		figures alloc "$WORK/alloc.txt"
		expect alloc cpu-clock memory_allocation "memory_copy system_calls synchronization page_faults io_wait busy_wait vm_irq_enable"
	fi
	if rec copy cpu-clock copy && classify copy "$WORK/copy.txt"; then
		figures copy "$WORK/copy.txt"
		expect copy cpu-clock memory_copy "memory_allocation synchronization page_faults busy_wait vm_irq_enable"
	fi
	if rec syscalls cpu-clock syscalls && classify syscalls "$WORK/syscalls.txt"; then
		figures syscalls "$WORK/syscalls.txt"
		expect syscalls cpu-clock "system_calls kernel_time" "memory_allocation memory_copy synchronization busy_wait vm_irq_enable"
	fi
	if rec mutex cpu-clock mutex && classify mutex "$WORK/mutex.txt"; then
		figures mutex "$WORK/mutex.txt"
		expect mutex cpu-clock synchronization "memory_allocation memory_copy page_faults busy_wait vm_irq_enable"
	fi
	# A thread spinning on sched_yield while another computes: busy_wait,
	# and its yields are not system_calls (the rule's unless).  A yielding
	# thread gives its CPU to anything else runnable, so on a loaded machine
	# (CI runs two scripts at once) it barely runs and there is no busy wait
	# to see: the workload runs SCHED_FIFO where it may (root), which yields
	# only to its own priority, and otherwise the check needs the spinner to
	# have had 10% of the samples, or skips saying why.
	if chrt -f 1 true 2>/dev/null; then
		printf '#!/bin/sh\nexec chrt -f 1 "%s" "$@"\n' "$WORK/bin/yield" > "$WORK/bin/yield-rt"
		chmod +x "$WORK/bin/yield-rt"
		yw=yield-rt
	else
		yw=yield
	fi
	if rec yield cpu-clock $yw && classify yield "$WORK/yield.txt"; then
		figures yield "$WORK/yield.txt"
		spun=$($PY -c '
import re, sys
n = s = 0
rec = []
for l in open(sys.argv[1], errors="replace"):
    if re.match(r"^\S.*\s\d+\.\d+:\s", l):
        n += 1
        rec = []
    elif "sched_yield" in l:
        rec.append(1)
        if len(rec) == 1:
            s += 1
print(int(100 * s / n) if n else 0)' "$WORK/yield.txt")
		if [ "${spun:-0}" -lt 10 ]; then
			skip "classify yield on cpu-clock: the spinner had ${spun}% of the samples (the machine is busy and it yields; run as root for SCHED_FIFO)"
		else
			expect yield cpu-clock busy_wait "system_calls memory_allocation memory_copy synchronization page_faults vm_irq_enable"
		fi
	fi
	if rec faults cpu-clock faults && classify faults "$WORK/faults.txt"; then
		figures faults "$WORK/faults.txt"
		expect faults cpu-clock page_faults "memory_allocation memory_copy synchronization busy_wait vm_irq_enable"
	fi
	if rec faults-pf page-faults faults && classify faults-pf "$WORK/faults-pf.txt"; then
		figures faults-pf "$WORK/faults-pf.txt"
		expect faults-pf page-faults page_faults "kernel_time memory_allocation system_calls synchronization"
	fi
	if rec mutex-switch sched:sched_switch mutex && classify mutex-switch "$WORK/mutex-switch.txt"; then
		figures mutex-switch "$WORK/mutex-switch.txt"
		# Two threads on one mutex switch out either blocked on it
		# (lock_wait) or preempted while runnable (cpu_wait): on a busy
		# machine preemption can take 95% of the switches, on an idle
		# one next to none.  Together they are the switches, and no
		# other wait is planted.
		expect mutex-switch sched:sched_switch "" "io_wait disk_io idle_wait futex_wait_unknown sleep synchronization memory_allocation program_code"
		if $PY - "$WORK/mutex-switch.json" >"$WORK/m.out" 2>&1 <<'EOF'
import json, sys
res = json.load(open(sys.argv[1]))
fig = {c["rule"]["id"]: c["figure"]["value"] for c in res["candidates"]}
for q in res["quiet"]:
    fig.update(q["below_threshold"])
lock, cpu = fig.get("lock_wait", 0), fig.get("cpu_wait", 0)
print("lock_wait %.1f + cpu_wait %.1f" % (lock, cpu))
sys.exit(0 if lock > 0 and lock + cpu >= 90 else 1)
EOF
		then
			ok "classify mutex-switch: blocked on the mutex or preempted, $(cat "$WORK/m.out") >= 90% of the switches"
		else
			notok "classify mutex-switch: lock_wait and cpu_wait are not the switches: $(oneline "$WORK/m.out")"
		fi
	fi
	if [ "$(stat -f -c %T "$WORK")" = tmpfs ]; then
		skip "classify iowait: $WORK is on tmpfs, where fdatasync waits for no device"
	elif rec iowait sched:sched_switch iowait "$WORK/iowait.tmp" && classify iowait "$WORK/iowait.txt"; then
		figures iowait "$WORK/iowait.txt"
		expect iowait sched:sched_switch disk_io "io_wait lock_wait idle_wait futex_wait_unknown sleep synchronization memory_allocation"
	fi
}
record_workloads

# A VM guest whose samples pile on its hypervisor's irq-enable (a PVM
# board's kernel, as seen on a device): the syscalls capture with every
# other sample's leaf moved onto pvm_irq_enable above its own stack (as
# the guest defers the timer interrupt to it).  vm_irq_enable must fire
# on it and on no recorded workload above (their expect lines), nor on
# the peers' captures.
if [ -f "$WORK/syscalls.txt" ]; then
	$PY - "$WORK/syscalls.txt" "$WORK/vm.txt" <<'EOF'
import re, sys
head = re.compile(r"^\S.*\s\d+\.\d+:\s")
out, n = [], 0
for line in open(sys.argv[1], errors="replace"):
    out.append(line)
    if head.match(line):
        n += 1
        if n % 2 == 0:
            out.append("\tffffffff81001234 pvm_irq_enable+0x4 ([kernel.kallsyms])\n")
open(sys.argv[2], "w").write("".join(out))
EOF
	if classify vm "$WORK/vm.txt"; then
		figures vm "$WORK/vm.txt"
		expect vm cpu-clock vm_irq_enable "busy_wait memory_allocation memory_copy"
	fi
fi
for f in "$WORK"/peer-*.json "$WORK/device.json"; do
	[ -f "$f" ] || continue
	if $PY -c 'import json,sys; sys.exit(any(c["rule"]["id"] in ("busy_wait", "vm_irq_enable") for c in json.load(open(sys.argv[1]))["candidates"]))' "$f"; then
		ok "classify $(basename "$f" .json): neither busy_wait nor vm_irq_enable fires"
	else
		notok "classify $(basename "$f" .json): busy_wait or vm_irq_enable fired on a capture that holds neither"
	fi
done

# ---------------------------------------------------------- build_report

# A problem text full of Markdown and HTML that must come out literally.
problem='The *worker* pool | got slow <script>alert(1)</script> after `v2.1` [link](http://x)
# not a heading
1. not a list item'
metric='jobs/s (higher is better) & p99 < 5 ms'
report_of() {
	n=$1
	id=$($PY -c 'import json,sys; print(json.load(open(sys.argv[1]))["analysis_id"])' "$WORK/$n.json") || return 1
	if ! "$PERFLENS" report --analysis-id "$id" --artifact-root "$art" --problem "$problem" --metric "$metric" \
		>"$WORK/$n.report.json" 2>"$WORK/err"; then
		notok "build_report $n: $(oneline "$WORK/err")"
		return 1
	fi
	validate schemas/tools/build_report.json:outputSchema "$WORK/$n.report.json" >"$WORK/v.out" 2>&1 ||
		{ notok "build_report $n: result does not validate: $(oneline "$WORK/v.out")"; return 1; }
	$PY - "$WORK/$n.report.json" "$WORK/$n.json" "$art" >"$WORK/r.out" 2>&1 <<'EOF'
import json, os, re, sys
r = json.load(open(sys.argv[1]))
cl = json.load(open(sys.argv[2]))
md = open(r["path"], encoding="utf-8").read()
errs = []
if os.path.getsize(r["path"]) != r["bytes"]:
    errs.append("bytes %d but the file has %d" % (r["bytes"], os.path.getsize(r["path"])))
if not r["uri"].startswith("perflens://artifacts/exports/"):
    errs.append("uri %s" % r["uri"])
want = ["Problem", "Data quality", "Observations", "Top hotspots", "Threads", "Candidates",
        "Missing evidence", "A/B validation plan", "Conclusion"]
got = re.findall(r"^## (.+)$", md, re.M)
if got != want:
    errs.append("sections %s" % got)
# No claim beyond the evidence: "confirm" only as unconfirmed/not confirmed/would confirm.
for m in re.finditer(r"(?i)root cause is|the cause is|\bproves?\b|\bproven\b|\w*confirm\w*", md):
    w = m.group(0).lower()
    ctx = md[max(0, m.start() - 12):m.start()].lower()
    if w == "unconfirmed" or (w.startswith("confirm") and re.search(r"(not|would|to|never) $", ctx)):
        continue
    errs.append("claim %r in %r" % (m.group(0), md[max(0, m.start() - 40):m.end() + 20]))
concl = md.split("## Conclusion", 1)[-1]
for need in ("unconfirmed", "A/B"):
    if need not in concl:
        errs.append("conclusion lacks %r" % need)
ids = [c["candidate_id"] for c in cl["candidates"]]
if sorted(r["summary"]["candidates"]) != sorted(ids):
    errs.append("summary candidates %s vs classify %s" % (r["summary"]["candidates"], ids))
for c in cl["candidates"]:
    if "- Rule: `%s`" % c["rule"]["id"] not in md:
        errs.append("candidate %s missing from the report" % c["candidate_id"])
print("; ".join(errs) if errs else "%d bytes, %d candidates" % (r["bytes"], len(ids)))
sys.exit(1 if errs else 0)
EOF
	if [ $? -eq 0 ]; then
		ok "build_report $n: 9 sections in order, no claim beyond the evidence, $(cat "$WORK/r.out")"
	else
		notok "build_report $n: $(oneline "$WORK/r.out")"
		return 1
	fi
	path=$($PY -c 'import json,sys; print(json.load(open(sys.argv[1]))["path"])' "$WORK/$n.report.json")
	cp "$path" "$WORK/$n.first.md"
	"$PERFLENS" report --analysis-id "$id" --artifact-root "$art" --problem "$problem" --metric "$metric" \
		>"$WORK/$n.report2.json" 2>/dev/null
	if cmp -s "$WORK/$n.report.json" "$WORK/$n.report2.json" && cmp -s "$path" "$WORK/$n.first.md"; then
		ok "build_report $n: same arguments, same path and bytes"
	else
		notok "build_report $n: a second run differs"
	fi
	uri=$($PY -c 'import json,sys; print(json.load(open(sys.argv[1]))["uri"])' "$WORK/$n.report.json")
	if "$PERFLENS" read_artifact_page --artifact "$uri" --artifact-root "$art" >"$WORK/page.json" 2>"$WORK/err" &&
		$PY -c 'import json,sys; t=json.load(open(sys.argv[1]))["text"]; assert t.startswith("# PerfLens evidence report")' "$WORK/page.json"; then
		ok "build_report $n: the report reads back through read_artifact_page"
	else
		notok "build_report $n: read_artifact_page on $uri: $(oneline "$WORK/err")"
	fi
	if ! command -v cmark-gfm >/dev/null 2>&1; then
		skip "build_report $n Markdown parse: cmark-gfm is not installed (apt-get install cmark-gfm)"
		return 0
	fi
	cmark-gfm -e table "$path" >"$WORK/$n.html"
	$PY - "$WORK/$n.html" "$problem" "$metric" >"$WORK/h.out" 2>&1 <<'EOF'
import html, re, sys
page, problem, metric = open(sys.argv[1]).read(), sys.argv[2], sys.argv[3]
errs = []
h2 = re.findall(r"<h2>(.*?)</h2>", page)
if [html.unescape(h) for h in h2] != ["Problem", "Data quality", "Observations", "Top hotspots", "Threads",
                                      "Candidates", "Missing evidence", "A/B validation plan", "Conclusion"]:
    errs.append("h2 headings %s" % h2)
if "<script" in page or "<a " in page or "<em>" in page or "<ol>\n<li>not" in page:
    errs.append("caller text became markup")
quote = re.search(r"<blockquote>\s*<p>(.*?)</p>\s*</blockquote>", page, re.S)
text = html.unescape(quote.group(1)) if quote else ""
if text.split() != problem.split():
    errs.append("problem rendered as %r" % text)
if html.escape(metric, quote=False) not in page:
    errs.append("metric not rendered literally")
if page.count("<table>") < 2:
    errs.append("%d tables" % page.count("<table>"))
print("; ".join(errs) if errs else "ok")
sys.exit(1 if errs else 0)
EOF
	if [ $? -eq 0 ]; then
		ok "build_report $n: cmark-gfm renders 9 h2 sections, tables, and the problem and metric literally"
	else
		notok "build_report $n: cmark-gfm: $(oneline "$WORK/h.out")"
	fi
}
[ -f "$WORK/mutex.json" ] && report_of mutex
[ -f "$WORK/device.json" ] && report_of device
report_of peer-perf-numa-stacks-01.txt

# ------------------------------------------------ the same tools over MCP

# Through perflens-mcp's sandboxed workers: listed with their schemas,
# results valid against them, and build_report refused without writes.
server="$(cd "$BUILD" && pwd)/perflens-mcp"
WORK="$WORK" timeout 120 $PY - "$server" "$SHARED/peers" "$WORK/mcp-art" <<'PY'
import json, os, sys
sys.path.insert(0, os.path.join(os.environ.get("REPO", os.getcwd()), "tests", "integration"))
from mcp_client import *  # the shared MCP test client (mcp_client.py)
import jsonschema

SERVER, PEERS, ART = sys.argv[1:4]
capture = os.path.join(PEERS, "flamegraph", "test", "perf-numa-stacks-01.txt")
s = Stdio([SERVER, "--allowed-root", PEERS, "--artifact-root", ART, "--allow-writes"], "classify-mcp")
s.initialize()
tools, cursor = {}, None
for _ in range(20):
    r = s.request("tools/list", {"cursor": cursor} if cursor else {})
    res = (r or {}).get("result", {})
    tools.update({t["name"]: t for t in res.get("tools", [])})
    cursor = res.get("nextCursor")
    if not cursor:
        break
check("MCP: tools/list has classify_hotspots (read-only) and build_report (writes)",
      tools.get("classify_hotspots", {}).get("annotations", {}).get("readOnlyHint") is True and
      tools.get("build_report", {}).get("annotations", {}).get("readOnlyHint") is False, sorted(tools))
r = s.call("analyze_profile", {"path": capture})
aid = (r or {}).get("result", {}).get("structuredContent", {}).get("analysis_id")
for name, args in (("classify_hotspots", {"analysis_id": aid, "limit": 3}),
                   ("build_report", {"analysis_id": aid, "problem": "numa test is slow", "metric": "run time, s"})):
    r = s.call(name, args)
    res = (r or {}).get("result", {})
    sc = res.get("structuredContent")
    try:
        jsonschema.validate(sc, tools[name]["outputSchema"])
        valid = not res.get("isError")
    except Exception as e:  # the validator's message says what is wrong
        valid, r = False, str(e)[:300]
    check("MCP: %s through the sandbox validates against its outputSchema" % name, valid, short(r))
s.close()
ro = Stdio([SERVER, "--allowed-root", PEERS, "--artifact-root", ART], "classify-mcp-ro")
ro.initialize()
r = ro.call("build_report", {"analysis_id": aid, "problem": "p", "metric": "m"})
check("MCP: build_report without --allow-writes is an error naming the flag",
      is_tool_error(r, "allow-writes"), short(r))
r = ro.call("classify_hotspots", {"analysis_id": aid})
check("MCP: classify_hotspots needs no writes", not (r or {}).get("result", {}).get("isError", True), short(r))
ro.close()
sys.exit(0)
PY
