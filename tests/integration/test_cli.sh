# test_cli.sh - the CLI's contract: help and version, exit codes from the
# one error table, one JSON error object on stderr with a hint, limits
# that stop with exit 4 instead of dropping data, paths outside the
# allowed roots refused, and pages that chain to the end.
. tests/integration/lib.sh
need_shared "CLI"
peers="$SHARED/peers/flamegraph/test"
multi="$peers/perf-cycles-instructions-01.txt"

# expect CODE WHAT -- ARGS...: run perflens, check the exit code and that
# stderr is one JSON object with code, message and hint.
expect() {
	want=$1 what=$2
	shift 3
	"$PERFLENS" "$@" --artifact-root "$WORK/a" > "$WORK/out" 2> "$WORK/err"
	got=$?
	if [ "$got" -ne "$want" ]; then
		notok "$what: exit $got, wanted $want: $(head -c 300 "$WORK/err")"
		return
	fi
	if [ "$want" -ne 0 ] && ! python3 -c '
import json,sys
e=json.load(open(sys.argv[1]))["error"]
assert e["code"] and e["message"] and e["hint"] and e["exit_code"]==int(sys.argv[2]), e' "$WORK/err" "$want" 2>/dev/null; then
		notok "$what: stderr is not one JSON error with a hint: $(head -c 300 "$WORK/err")"
		return
	fi
	ok "$what (exit $want)"
}

"$PERFLENS" --version | grep -q '^perflens [0-9]' && ok "--version" || notok "--version"
for cmd in analyze hotspots callpaths stat export; do
	"$PERFLENS" $cmd --help | grep -q -- '--analysis-id\|--path' && ok "$cmd --help lists its arguments" ||
		notok "$cmd --help"
done
expect 2 "unknown command" -- frobnicate
expect 2 "unknown flag" -- hotspots --frob 1
expect 2 "out-of-range limit" -- hotspots --analysis-id an-00000000000000000000 --limit 1000
expect 2 "bad enum value names the choices" -- hotspots --analysis-id an-00000000000000000000 --sort fastest
grep -q 'self, inclusive' "$WORK/err" && ok "enum error lists self, inclusive" || notok "enum error choices: $(cat "$WORK/err")"
expect 2 "missing input file" -- analyze --input "$WORK/nope.txt"
expect 2 "analysis id that does not exist" -- hotspots --analysis-id an-00000000000000000000
printf 'PERFILE2\0\0\0\0' > "$WORK/perf.data"
# The CLI reads perf.data natively (test_perf_data_native.sh has real
# ones): a truncated one is a malformed profile, named as such, with or
# without perf.
expect 3 "a truncated perf.data is a malformed profile, named as such" -- analyze --input "$WORK/perf.data"
grep -q "malformed perf.data" "$WORK/err" && grep -qF "$WORK/perf.data" "$WORK/err" && ok "the perf.data error names the file and what is wrong" ||
	notok "the perf.data error: $(head -c 300 "$WORK/err")"
grep -q 'perf script' "$WORK/err" && ok "perf.data hint names perf script" || notok "perf.data hint"
expect 4 "depth limit stops with exit 4" -- analyze --input "$peers/perf-java-stacks-01.txt" --max-depth 5
expect 4 "unique-stack limit stops with exit 4" -- analyze --input "$peers/perf-vertx-stacks-01.txt" --max-stacks 10
expect 4 "line limit stops with exit 4" -- analyze --input "$peers/perf-vertx-stacks-01.txt" --max-line 64
expect 4 "input size limit stops with exit 4" -- analyze --input "$peers/perf-vertx-stacks-01.txt" --max-input-bytes 1000
expect 2 "limits can only be lowered" -- analyze --input "$multi" --max-depth 99999
mkdir -p "$WORK/root" && ln -s "$multi" "$WORK/root/link.txt"
expect 5 "symlink out of the allowed root is refused" -- analyze --input "$WORK/root/link.txt" --allowed-root "$WORK/root"
# An error naming bytes that are not UTF-8 (the Latin-1 name the link
# resolves to) keeps its message, escaped as base/escape.h says; it used
# to print "(null)".
latin1=$(printf '%s/caf\351.txt' "$WORK")
cp "$multi" "$latin1" && ln -s "$latin1" "$WORK/root/latin1-link.txt"
expect 5 "a refused path with a Latin-1 name is one JSON error" -- analyze --input "$WORK/root/latin1-link.txt" --allowed-root "$WORK/root"
python3 -c '
import json,sys
e=json.load(open(sys.argv[1]))["error"]
assert e["message"].endswith("caf\\xe9.txt'"'"', outside the allowed roots"), e' "$WORK/err" 2>/dev/null &&
	ok "the error message keeps the Latin-1 byte as \\xe9" || notok "Latin-1 error: $(head -c 300 "$WORK/err")"
cp "$multi" "$WORK/outside.txt"
expect 5 "dot-dot out of the allowed root is refused" -- analyze --input "$WORK/root/../outside.txt" --allowed-root "$WORK/root"
cp "$multi" "$WORK/root/in.txt"
expect 0 "a file under the allowed root is read" -- analyze --input "$WORK/root/in.txt" --allowed-root "$WORK/root"

# Several events and no --event: an error that lists them.
id=$("$PERFLENS" analyze --input "$multi" --artifact-root "$WORK/a" | sed -n 's/^  "analysis_id": "\(.*\)",$/\1/p')
expect 2 "several events need --event" -- hotspots --analysis-id "$id"
grep -q 'instructions' "$WORK/err" && grep -q 'cycles' "$WORK/err" &&
	ok "the error names both events" || notok "event choices: $(cat "$WORK/err")"
expect 2 "invalid cursor" -- hotspots --analysis-id "$id" --event cycles --cursor 12.zzzzzz

# Paging: follow next_cursor to the end; ranks are contiguous and the
# page count matches total_items.
python3 - "$PERFLENS" "$WORK/a" "$peers/perf-vertx-stacks-01.txt" <<'PY'
import json, subprocess, sys
pl, root, capture = sys.argv[1:4]
run = lambda *a: json.loads(subprocess.check_output([pl, *a, "--artifact-root", root]))
aid = run("analyze", "--input", capture)["analysis_id"]
cursor, seen, total = None, [], None
while True:
    args = ["hotspots", "--analysis-id", aid, "--limit", "37", "--sort", "inclusive"]
    if cursor:
        args += ["--cursor", cursor]
    page = run(*args)
    seen += [h["rank"] for h in page["hotspots"]]
    total = page["page"]["total_items"]
    cursor = page["page"]["next_cursor"]
    if not cursor:
        break
ok = seen == list(range(1, total + 1))
print(("ok - " if ok else "not ok - ") + "hotspot pages chain to the end (%d items)" % total)
PY

# Global options anywhere on the line, as --help says: before the command
# too (the limit applies, the artifacts go where told).
"$PERFLENS" --artifact-root "$WORK/before" --max-depth 5 analyze --input "$peers/perf-java-stacks-01.txt" \
	> /dev/null 2> "$WORK/err"
[ $? -eq 4 ] && grep -q limit_exceeded "$WORK/err" && ok "a limit before the command applies (exit 4)" ||
	notok "a limit before the command: $(head -c 300 "$WORK/err")"
"$PERFLENS" --artifact-root "$WORK/before" analyze --input "$multi" > /dev/null 2> "$WORK/err" &&
	ls "$WORK/before/analyses/"*.json > /dev/null 2>&1 && ok "--artifact-root before the command is used" ||
	notok "--artifact-root before the command: $(head -c 300 "$WORK/err")"
expect 2 "an unknown option before the command" -- --frob analyze --input "$multi"
"$PERFLENS" --artifact-root "$WORK/a" --version | grep -q '^perflens [0-9]' &&
	ok "a global option, then --version" || notok "a global option, then --version"

# Booleans: --flag, --flag=true|false and --no-flag.  stackcollapse-perf's
# --pid names each stack's root comm-PID (test_folded_peer checks the
# bytes against the peer); here the four spellings must agree.
vid=$("$PERFLENS" analyze --input "$peers/perf-vertx-stacks-01.txt" --artifact-root "$WORK/a" |
	sed -n 's/^  "analysis_id": "\(.*\)",$/\1/p')
for spelling in --pid --pid=true --pid=false --no-pid none; do
	flag=$spelling; [ "$flag" = none ] && flag=
	"$PERFLENS" export --analysis-id "$vid" --format folded --compat stackcollapse $flag --output - \
		--artifact-root "$WORK/a" > "$WORK/fold$spelling" 2> "$WORK/err" ||
		notok "export $spelling: $(head -c 300 "$WORK/err")"
done
cmp -s "$WORK/fold--pid" "$WORK/fold--pid=true" && grep -Eq '^[^;]+-([0-9]+|[?]);' "$WORK/fold--pid" &&
	ok "--pid and --pid=true both give comm-PID roots" || notok "--pid vs --pid=true"
cmp -s "$WORK/fold--pid=false" "$WORK/foldnone" && cmp -s "$WORK/fold--no-pid" "$WORK/foldnone" &&
	! cmp -s "$WORK/fold--pid" "$WORK/foldnone" &&
	ok "--pid=false and --no-pid are the default, unlike --pid" || notok "--pid=false / --no-pid"
expect 2 "a boolean given another word" -- export --analysis-id "$vid" --format folded --pid=maybe
expect 2 "--no-flag given a value" -- export --analysis-id "$vid" --format folded --no-pid=true
