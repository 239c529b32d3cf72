# test_consent_steps.sh - consent is the caller's act and every next step
# is a call that works here (issues 34 and 30): no tool result, under
# three kinds of server and every device state of a fake agent, holds an
# authorization phrase, and every step offered as runnable, followed to
# depth 2, succeeds (consent_steps.py says what is checked).
. tests/integration/lib.sh
need_shared "consent and next steps"
zcat "$SHARED/peers/device-sessions/session-x86-baseline/chunk_000.txt.gz" > "$WORK/chunk.txt"
server="$(cd "$BUILD" && pwd)/perflens-mcp"
oracle "consent and next steps" env WORK="$WORK" timeout 300 /usr/bin/python3 tests/integration/consent_steps.py \
	"$server" "$(pwd)" "$SHARED" "$WORK/chunk.txt"
