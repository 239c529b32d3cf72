# test_classify_busy.sh - busy_wait on real captures of the shapes it must
# name and those it must not (tests/workloads/busywait/), recorded here
# with real perf (cpu-clock at 999 Hz, frame pointers) and classified by
# the CLI, then through perflens-mcp following its next steps.
#
# Must fire (a waiter spinning beside a worker that computes 1.5 s):
# poll, ppoll, select and epoll_wait with a zero timeout; nanosleep and
# clock_nanosleep of zero; pthread_spin_lock.  Must not fire: an epoll or
# poll server that sleeps between its events (most of its few samples in
# the wait path, a few percent of a CPU), a thread that computes and polls
# between work items (a quarter of its time).  The compute loop and the
# write/getppid loop are test_classify's (busy_wait is in their must-not
# lists).  Oracles, none of them PerfLens's output:
#  - classify_oracle.py: every figure recomputed from the perf script text
#    (its own parser, Python's re; the thread gate from the samples'
#    threads and times);
#  - busy_gate.py: the threads busy_wait names, with their share and share
#    of one CPU, against the same reading; a quiet negative must hold the
#    rule's min_percent without the gate (else it proves nothing);
#  - perf stat's own counts, for the system call rate of the next step.
# The waiters run SCHED_FIFO (chrt, as root): a spinner on a loaded
# machine (CI runs scripts side by side) gets whatever CPU is left, and
# below half a core it is, by the rule, not spinning hard enough to name.
# run.sh: slow
# run.sh: timing
. tests/integration/lib.sh
need_perf_record "classify busy"
PY=/usr/bin/python3
if ! $PY -c 'import jsonschema' 2>/dev/null; then
	skip "classify busy: python3-jsonschema is not installed"
	exit 0
fi
if ! command -v gcc >/dev/null 2>&1; then
	skip "classify busy: gcc is not installed"
	exit 0
fi
rules=schemas/rules/classify-rules.json
art="$WORK/art"
mkdir -p "$WORK/bin"
for src in tests/workloads/busywait/*.c; do
	w=$(basename "$src" .c)
	gcc -O1 -g -fno-omit-frame-pointer -Wall -o "$WORK/bin/$w" "$src" -lpthread 2>"$WORK/err" ||
		notok "classify busy workload $w: gcc failed: $(oneline "$WORK/err")"
done
rt=""
if chrt -f 1 true 2>/dev/null; then
	rt="chrt -f 1"
fi

# run NAME pos|neg WORKLOAD [ARGS]: record, classify, check the figures
# and busy_wait's verdict.
run() {
	n=$1 mode=$2 w=$3
	shift 3
	[ -x "$WORK/bin/$w" ] || return 1
	if ! perf record -e cpu-clock -F 999 -g -N -o "$WORK/$n.data" -- $rt "$WORK/bin/$w" "$@" \
		>/dev/null 2>"$WORK/err"; then
		notok "classify busy $n: perf record failed: $(oneline "$WORK/err")"
		return 1
	fi
	perf script -i "$WORK/$n.data" -F comm,pid,tid,time,event,period,ip,sym,symoff,dso \
		>"$WORK/$n.txt" 2>"$WORK/err" || { notok "classify busy $n: perf script: $(oneline "$WORK/err")"; return 1; }
	if ! "$PERFLENS" classify --input "$WORK/$n.txt" --artifact-root "$art" --limit 50 \
		>"$WORK/$n.json" 2>"$WORK/err"; then
		notok "classify busy $n: $(oneline "$WORK/err")"
		return 1
	fi
	if ! $PY tests/integration/validate_json.py schemas/tools/classify_hotspots.json:outputSchema "$WORK/$n.json" \
		>"$WORK/v.out" 2>&1; then
		notok "classify busy $n: result does not validate: $(oneline "$WORK/v.out")"
		return 1
	fi
	if $PY tests/integration/classify_oracle.py "$rules" "$WORK/$n.txt" "$WORK/$n.json" >"$WORK/o.out" 2>&1; then
		ok "classify busy $n: validates; $(tail -1 "$WORK/o.out") agree with classify_oracle.py"
	else
		notok "classify busy $n: figures differ from classify_oracle.py: $(oneline "$WORK/o.out")"
	fi
	$PY tests/integration/busy_gate.py "$rules" "$WORK/$n.txt" "$WORK/$n.json" "$mode" "$n"
	# one stack, one kind: a spinner's waits are not system_calls
	if [ "$mode" = pos ] && $PY -c 'import json,sys
sys.exit(any(c["rule"]["id"] == "system_calls" for c in json.load(open(sys.argv[1]))["candidates"]))' "$WORK/$n.json"; then
		ok "classify busy $n: system_calls does not fire on the spin"
	elif [ "$mode" = pos ]; then
		notok "classify busy $n: system_calls fired beside busy_wait"
	fi
}

if [ -z "$rt" ]; then
	skip "classify busy positives: chrt -f 1 is refused here (not root): an unprioritized spinner on a busy machine may not reach half a core"
else
	for how in poll ppoll select epoll; do
		run "spin-$how" pos pollspin "$how"
	done
	run nanosleep pos sleepspin nanosleep
	run clock_nanosleep pos sleepspin clock
	run spinlock pos spinlock
fi
run server-epoll neg pollserver epoll
run server-poll neg pollserver poll
run small-share neg smallspin

# Through perflens-mcp: the poll spinner's candidate and each next step.
if [ -f "$WORK/spin-poll.txt" ]; then
	server="$(cd "$BUILD" && pwd)/perflens-mcp"
	oracle "classify busy MCP" env WORK="$WORK" timeout 900 $PY tests/integration/busy_mcp.py "$server" \
		"$WORK/spin-poll.txt" "$WORK/bin/pollspin"
fi
