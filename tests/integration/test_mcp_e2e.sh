# test_mcp_e2e.sh - perflens-mcp end to end with the official TypeScript
# SDK client (tests/mcp/e2e.mjs), over stdio and over Streamable HTTP with a
# bearer token: real captures analyzed, every tool called, every
# structuredContent validated against its outputSchema with ajv, resources,
# prompts and completion.  Skips, saying why, without Node 22 and
# tests/mcp/node_modules (sh tests/mcp/setup-node.sh installs them).
. tests/integration/lib.sh
need_shared "MCP end to end (TypeScript SDK)"
node=$(sh tests/mcp/setup-node.sh --check 2>"$WORK/node.err") || {
	skip "MCP end to end (TypeScript SDK): $(cat "$WORK/node.err")"
	exit 0
}
server="$(cd "$BUILD" && pwd)/perflens-mcp"

srv_pid=""
cleanup() {
	[ -n "$srv_pid" ] && kill "$srv_pid" 2>/dev/null && wait "$srv_pid" 2>/dev/null
	rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

# Run e2e.mjs; its lines go out as they are; a non-zero exit without any
# "not ok" line (a crash of node itself) still counts as a failure.
run_e2e() {
	name=$1
	shift
	timeout 150 "$node" "$REPO/tests/mcp/e2e.mjs" --shared "$SHARED" --label "e2e $name" "$@" \
		>"$WORK/$name.out" 2>"$WORK/$name.err"
	rc=$?
	cat "$WORK/$name.out"
	if [ "$rc" -ne 0 ] && ! grep -q '^not ok - ' "$WORK/$name.out"; then
		notok "e2e $name: e2e.mjs exited $rc: $(tail -5 "$WORK/$name.err" | tr '\n' ' ')"
	fi
}

# stdio: the SDK starts the server and ends it by closing its stdin.
run_e2e stdio --stdio "$server" --allowed-root "$SHARED" --artifact-root "$WORK/art-stdio" --allow-writes

# HTTP with a bearer token; port 0: the OS picks a free one.
token=$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')
PERFLENS_TOKEN=$token "$server" --http 127.0.0.1:0 --allowed-root "$SHARED" \
	--artifact-root "$WORK/art-http" --allow-writes 2>"$WORK/server.err" &
srv_pid=$!
port=""
for _ in $(seq 100); do
	port=$(sed -n 's#^perflens-mcp: listening on http://127\.0\.0\.1:\([0-9]*\)/mcp$#\1#p' "$WORK/server.err")
	[ -n "$port" ] && break
	kill -0 "$srv_pid" 2>/dev/null || break
	sleep 0.1
done
if [ -z "$port" ]; then
	notok "e2e http: perflens-mcp --http did not start: $(tr '\n' ' ' < "$WORK/server.err")"
	exit 0
fi
PERFLENS_TOKEN=$token run_e2e http --http "http://127.0.0.1:$port/mcp"

if kill -0 "$srv_pid" 2>/dev/null; then
	kill "$srv_pid"
	wait "$srv_pid"
	src=$?
	srv_pid=""
	if [ "$src" -eq 0 ] && ! grep -qE 'Sanitizer|runtime error' "$WORK/server.err"; then
		ok "e2e http: the server stops cleanly on SIGTERM"
	else
		notok "e2e http: the server stops cleanly on SIGTERM: exit $src; $(grep -m3 -E 'Sanitizer|runtime error|SUMMARY' "$WORK/server.err" | tr '\n' ' ')"
	fi
else
	srv_pid=""
	notok "e2e http: the server survived the session: it died; $(tail -5 "$WORK/server.err" | tr '\n' ' ')"
fi
