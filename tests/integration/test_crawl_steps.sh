# test_crawl_steps.sh - every next step, followed breadth-first to depth 3,
# is a call that works here (issue 30): from collect_profile in each mode
# (record, stat, off_cpu, sched, lock; the tracepoint modes only with
# tracefs) of three workloads of our own, and from analyze_profile of the
# shared peers' captures; crawl_steps.py says what is filled in and what
# is not sent.
# run.sh: slow
. tests/integration/lib.sh
name="crawl"
need_shared "$name"
need_perf_record "$name"
tracefs=1
{ [ -e /sys/kernel/tracing/events ] || [ -e /sys/kernel/debug/tracing/events ]; } || tracefs=0
mkdir -p "$WORK/bin"
for w in classify/mutex classify/syscalls investigation/app; do
	if ! gcc -O1 -g -fno-omit-frame-pointer -pthread -DBUDGET_S=0.3 -DRUN_SECONDS=0.6 -o "$WORK/bin/$(basename "$w")" \
		"$REPO/tests/workloads/$w.c" 2>"$WORK/err"; then
		notok "$name: gcc $w.c failed: $(oneline "$WORK/err")"
		exit 0
	fi
done
cp /bin/true "$WORK/bin/true"
server="$(cd "$BUILD" && pwd)/perflens-mcp"
oracle "$name" env WORK="$WORK" timeout 900 /usr/bin/python3 tests/integration/crawl_steps.py \
	"$server" "$(pwd)" "$SHARED" "$WORK/bin" "$tracefs"
