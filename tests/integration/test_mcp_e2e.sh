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
# An ELF file and a benchmark result for the symbol and benchmark tools.
mkdir -p "$WORK/elf"
cp /bin/true "$WORK/elf/true"
extra="--allowed-root $WORK/elf --allowed-root $REPO/fixtures"
inputs="--elf $WORK/elf/true --bench $REPO/fixtures/benchmarks/pyperf-baseline.json"


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
# shellcheck disable=SC2086
run_e2e stdio $inputs --stdio "$server" --allowed-root "$SHARED" $extra --artifact-root "$WORK/art-stdio" --allow-writes

# HTTP with a bearer token; port 0: the OS picks a free one.
token=$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')
export PERFLENS_TOKEN="$token"
# shellcheck disable=SC2086
start_http_server "e2e http" "$server" --http 127.0.0.1:0 --allowed-root "$SHARED" $extra \
	--artifact-root "$WORK/art-http" --allow-writes
unset PERFLENS_TOKEN
# shellcheck disable=SC2086
PERFLENS_TOKEN=$token run_e2e http $inputs --http "http://127.0.0.1:$port/mcp"

stop_server "e2e http"
