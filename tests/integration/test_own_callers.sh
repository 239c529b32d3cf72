# test_own_callers.sh - a candidate whose leaf is a library function names
# the program's own function nearest above it (own_callers), and one that
# is the program's own code names none (issue 30); perf script on the same
# perf.data is the oracle (own_callers.py says what is checked).
. tests/integration/lib.sh
name="own callers"
need_perf_record "$name"
mkdir -p "$WORK/bin"
if ! gcc -O1 -g -fomit-frame-pointer -pthread -o "$WORK/bin/roles" tests/workloads/classify/roles.c 2>"$WORK/err"; then
	notok "$name: gcc roles.c failed: $(oneline "$WORK/err")"
	exit 0
fi
server="$(cd "$BUILD" && pwd)/perflens-mcp"
oracle "$name" env WORK="$WORK" timeout 300 /usr/bin/python3 tests/integration/own_callers.py "$server" "$WORK/bin"
exit 0
