# test_unreadable_input.sh - an input that nothing could read is an error
# (exit 3, isError over MCP) naming what the content looks like and the
# formats that are read, never an empty success an agent may report as
# "no hotspots".
#
# Inputs made here by real producers: a Go CPU profile written by Go's own
# runtime/pprof (Debian's golang-go), PerfLens's pprof export of the
# bundled capture, an ELF binary (/bin/true), gzip of random bytes (gzip),
# a JSON of another shape, and the header of a version-1 perf.data.  The
# oracle for what the content is: file(1) where it knows (ELF, gzip) and
# the way each input was made.  When a reader for a format lands (pprof,
# speedscope), its inputs must then parse with samples: still never an
# empty success.  Controls: the bundled capture with a garbage line added
# stays a success with the line counted as malformed, and an empty file
# stays an empty profile.
. tests/integration/lib.sh
A="$WORK/art"
CAPTURE="$REPO/fixtures/device-x86/chunk_000.txt.gz"
# analyze WHAT FILE: run perflens analyze; $rc and $WORK/err, $WORK/out.
analyze() {
	"$PERFLENS" analyze --input "$2" --artifact-root "$A" >"$WORK/out" 2>"$WORK/err"
	rc=$?
}
msg() { /usr/bin/python3 -c 'import json,sys; e=json.load(open(sys.argv[1]))["error"]; print(e["message"] + " | " + e["hint"])' "$WORK/err" 2>/dev/null; }
# unreadable WHAT FILE WORDS...: exit 3 naming every word and the formats read.
unreadable() {
	what=$1 file=$2
	shift 2
	analyze "$what" "$file"
	m=$(msg)
	if [ "$rc" -ne 3 ]; then
		notok "$what: exit $rc, wanted 3: $(head -c 300 "$WORK/out") $(head -c 300 "$WORK/err")"
		return
	fi
	for w in "$@" "formats read: folded, perf_script" "nothing in"; do
		case "$m" in *"$w"*) ;; *) notok "$what: the message lacks '$w': $m"; return ;; esac
	done
	ok "$what: exit 3, says it looks like '$*' and names the formats read"
}
# samples OUT: the sample count of an analysis result, or "none".
samples() {
	/usr/bin/python3 -c 'import json,sys
d=json.load(open(sys.argv[1]))
print(sum(e.get("samples", 0) for e in d.get("events", [])) if d.get("events") else 0)' "$1" 2>/dev/null || echo none
}
# never_empty WHAT FILE WORDS...: unreadable, or (once a reader exists) samples.
never_empty() {
	analyze "$1" "$2"
	if [ "$rc" -eq 0 ]; then
		n=$(samples "$WORK/out")
		[ "$n" != none ] && [ "$n" -gt 0 ] && ok "$1: read, with $n samples (a reader for it exists now)" ||
			notok "$1: an empty success ($n samples): $(head -c 300 "$WORK/out")"
		return
	fi
	unreadable "$@"
}

# ------------------------------------------------------------ Go pprof
if command -v go >/dev/null; then
	mkdir -p "$WORK/go"
	cat >"$WORK/go/main.go" <<'GO'
// A CPU-bound loop profiled by Go's own runtime/pprof.
package main

import (
	"os"
	"runtime/pprof"
)

func spin(n int) int {
	x := 0
	for i := 0; i < n; i++ {
		x += i * i % 7
	}
	return x
}

func main() {
	f, err := os.Create(os.Args[1])
	if err != nil {
		panic(err)
	}
	pprof.StartCPUProfile(f)
	s := 0
	for i := 0; i < 300; i++ {
		s += spin(1000000)
	}
	pprof.StopCPUProfile()
	f.Close()
	if s == 42 {
		println(s)
	}
}
GO
	if (cd "$WORK/go" && GOCACHE="$GO_CACHE" GOPATH="$WORK/go/path" GO111MODULE=off GOFLAGS= \
		go build -o spin main.go) >"$WORK/go.err" 2>&1 && "$WORK/go/spin" "$WORK/go/cpu.pprof"; then
		file -b "$WORK/go/cpu.pprof" | grep -q gzip && ok "Go's pprof file is gzip, says file(1)" ||
			notok "Go's pprof file: file(1) says $(file -b "$WORK/go/cpu.pprof")"
		never_empty "a Go CPU profile (runtime/pprof)" "$WORK/go/cpu.pprof" "gzip-compressed protobuf" "profile.proto"
	else
		skip "Go pprof: cannot build or run a Go program: $(head -c 200 "$WORK/go.err")"
	fi
else
	skip "Go pprof: go is not installed (apt-get install golang-go)"
fi

# ------------------------------------------- our own pprof export
"$PERFLENS" analyze --input "$CAPTURE" --artifact-root "$A" >"$WORK/a.json" 2>"$WORK/err"
id=$(jget "$WORK/a.json" analysis_id 2>/dev/null)
if "$PERFLENS" export --analysis-id "$id" --event cycles --format pprof --output "$WORK/cycles.pb.gz" \
	--artifact-root "$A" 2>"$WORK/err"; then
	never_empty "PerfLens's pprof export" "$WORK/cycles.pb.gz" "gzip-compressed protobuf" "profile.proto"
else
	notok "pprof export of the bundled capture: $(head -c 300 "$WORK/err")"
fi

# -------------------------------------------------- other content
cp /bin/true "$WORK/true"
file -b "$WORK/true" | grep -q ELF || notok "file(1) does not call /bin/true ELF: $(file -b "$WORK/true")"
unreadable "an ELF binary" "$WORK/true" "an ELF file" "inspect_elf"
# Seeded, not /dev/urandom: a random draw can pass for protobuf, which
# the message then rightly names instead.
/usr/bin/python3 -c 'import random, sys; random.seed(7); sys.stdout.buffer.write(bytes(random.getrandbits(8) for _ in range(3000)))' |
	gzip -n >"$WORK/random.gz"
unreadable "gzip of random bytes" "$WORK/random.gz" "gzip-compressed binary data"
printf '{"frobnicate": {"a": [1, 2]}, "version": 3, "items": []}\n' >"$WORK/other.json"
unreadable "a JSON of another shape" "$WORK/other.json" 'JSON of an unknown shape' '"frobnicate", "version", "items"'
gzip -k "$WORK/other.json"
unreadable "the same JSON, gzipped" "$WORK/other.json.gz" 'gzip-compressed JSON of an unknown shape'
# The 16-byte start of a version-1 perf.data header: magic, header size.
printf 'PERFFILE\150\0\0\0\0\0\0\0' >"$WORK/old.data"
unreadable "a version-1 perf.data header" "$WORK/old.data" "perf.data of version 1"
printf 'hello\nworld\n' >"$WORK/words.txt"
unreadable "text of no format" "$WORK/words.txt" "first line: 'hello'"

# ----------------------------------------------------------- controls
{ printf 'this line is garbage\n\n'; zcat "$CAPTURE"; } >"$WORK/capture.txt"
analyze "capture with a garbage line" "$WORK/capture.txt"
if [ "$rc" -eq 0 ] && [ "$(samples "$WORK/out")" -gt 0 ] && [ "$(jget "$WORK/out" records.malformed)" = 1 ]; then
	ok "a capture with a malformed line stays a success with its samples and the line counted"
else
	notok "capture with a garbage line: rc $rc, $(head -c 300 "$WORK/err")"
fi
: >"$WORK/empty.txt"
analyze "an empty file" "$WORK/empty.txt"
[ "$rc" -eq 0 ] && ok "an empty file stays an empty profile (exit 0)" || notok "empty file: rc $rc $(head -c 300 "$WORK/err")"

# ------------------------------------------------ through MCP, as an agent
WORK="$WORK" timeout 120 /usr/bin/python3 - "$(cd "$BUILD" && pwd)/perflens-mcp" <<'PY'
import os, sys
sys.path.insert(0, os.path.join(os.environ.get("REPO", os.getcwd()), "tests", "integration"))
from mcp_client import *  # the shared MCP test client (mcp_client.py)
SERVER = sys.argv[1]
s = Stdio([SERVER, "--allowed-root", WORK, "--artifact-root", os.path.join(WORK, "mcp-art"), "--allow-writes"], "unreadable")
s.initialize()
r = s.call("analyze_profile", {"path": os.path.join(WORK, "true")})
check("MCP analyze_profile of an ELF binary: an error result naming ELF and the formats read",
      is_tool_error(r, "ELF", "formats read"), short(r))
err = ((r or {}).get("result", {}).get("_meta") or {}).get("perflens/error", {})
check("MCP: the error carries code unsupported and exit code 3", err.get("code") == "unsupported" and err.get("exit_code") == 3, short(err))
r = s.call("analyze_profile", {"path": os.path.join(WORK, "other.json")})
check("MCP analyze_profile of a JSON of another shape: an error result", is_tool_error(r, "JSON of an unknown shape"), short(r))
check("MCP server exits cleanly", s.close() == 0, s.stderr()[-300:])
PY
