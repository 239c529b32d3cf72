# test_timed_inputs.sh - sample times of speedscope and pprof inputs.
#
# timed_inputs_oracle.py writes speedscope (sampled in milliseconds from a
# startValue, evented in microseconds) and pprof files (samples with
# end_timestamp_ns labels) from known samples, computes each record's time
# from the file's own fields, and checks through perflens-mcp that
# get_timeline's buckets and list_hotspots under view.time hold exactly
# those samples; and that files whose format has no times (speedscope in
# bytes, pprof with only time_nanos and duration_nanos, a Go CPU profile
# from runtime/pprof when go is installed) are refused naming what they
# lack.
. tests/integration/lib.sh
name="timed inputs"
MCP="$(dirname "$PERFLENS")/perflens-mcp"
go_cpu=""
if command -v go >/dev/null 2>&1; then
	export HOME="$WORK" GOCACHE="$GO_CACHE" GO111MODULE=off GOFLAGS=
	mkdir -p "$WORK/go"
	cp tests/integration/goprof/main.go "$WORK/go/"
	if (cd "$WORK/go" && go build -o goprof main.go) >"$WORK/err" 2>&1 && "$WORK/go/goprof" cpu "$WORK/go/cpu.pprof" 1; then
		go_cpu="$WORK/go/cpu.pprof"
	else
		notok "$name: the Go CPU profile: $(oneline "$WORK/err")"
	fi
else
	skip "$name: a Go CPU profile: go is not installed (Debian golang-go; sh tests/setup.sh)"
fi
export WORK
oracle "$name" /usr/bin/python3 tests/integration/timed_inputs_oracle.py "$MCP" "$WORK/in" $go_cpu
