# test_dwarf_truncated.sh - stacks cut short by DWARF unwinding's stack
# copy are labelled that (dwarf_stack_truncated, with a larger copy as the
# step that works), never frame-pointer loss; on complete DWARF stacks and
# on frame-pointer recordings the rule stays out (issue 30).  perf script
# on the same perf.data is the oracle; dwarf_truncated.py says what is
# checked.
# run.sh: slow
. tests/integration/lib.sh
name="dwarf truncated"
need_perf_record "$name"
tracefs=1
{ [ -e /sys/kernel/tracing/events ] || [ -e /sys/kernel/debug/tracing/events ]; } || tracefs=0
mkdir -p "$WORK/bin"
if ! gcc -O2 -g -fomit-frame-pointer -o "$WORK/bin/deep_nofp" tests/workloads/deep_stack.c 2>"$WORK/err" ||
   ! gcc -O2 -g -fno-omit-frame-pointer -o "$WORK/bin/deep_fp" tests/workloads/deep_stack.c 2>>"$WORK/err"; then
	notok "$name: gcc deep_stack.c failed: $(oneline "$WORK/err")"
	exit 0
fi
server="$(cd "$BUILD" && pwd)/perflens-mcp"
oracle "$name" env WORK="$WORK" timeout 600 /usr/bin/python3 tests/integration/dwarf_truncated.py \
	"$server" "$WORK/bin" "$tracefs"
exit 0
