#!/bin/sh
# setup-agents.sh - the real coding-agent CLIs the setup tests drive:
# Claude Code (`claude`) and Codex (`codex`), pinned, from the npm registry.
#
#   sh tests/mcp/setup-agents.sh           install what is missing, print the bin folder
#   sh tests/mcp/setup-agents.sh --check   install nothing: print the bin folder when
#                                          both run at the pinned versions, else say
#                                          what is missing and exit 1
#
# Both packages carry their own native binaries (no download at install or
# run time).  They go into a cache folder, $PERFLENS_AGENTS_CACHE or by
# default $HOME/.cache/perflens-agents (about 760 MB, so not into
# tests/mcp/node_modules, which every CI run installs afresh); npm comes
# from the image's Node or setup-node.sh's Node 22.  Running it again
# changes nothing and needs no network.  Progress goes to stderr; stdout
# gets only the bin folder.  The tests that need them skip, saying so,
# when this fails.
set -eu
CLAUDE_VERSION=2.1.328
CODEX_VERSION=0.169.0
here=$(cd "$(dirname "$0")" && pwd)
cache=${PERFLENS_AGENTS_CACHE:-${HOME:-/root}/.cache/perflens-agents}
bin="$cache/node_modules/.bin"
check_only=false
[ "${1:-}" = "--check" ] && check_only=true

say() { echo "setup-agents: $*" >&2; }
die() { say "$*"; exit 1; }

# The CLIs write state under HOME: ask them for their version in a
# throw-away one.
agents_ok() {
	h=$(mktemp -d)
	v1=$(HOME="$h" "$bin/claude" --version 2>/dev/null </dev/null || true)
	v2=$(HOME="$h" "$bin/codex" --version 2>/dev/null </dev/null || true)
	rm -rf "$h"
	[ "$v1" = "$CLAUDE_VERSION (Claude Code)" ] && [ "$v2" = "codex-cli $CODEX_VERSION" ]
}

if agents_ok; then
	echo "$bin"
	exit 0
fi
$check_only && die "claude $CLAUDE_VERSION and codex $CODEX_VERSION are not installed in $cache (run: sh tests/mcp/setup-agents.sh)"

# npm: the image's, or the one beside setup-node.sh's Node 22.
if ! command -v npm >/dev/null 2>&1; then
	node=$(sh "$here/setup-node.sh" --check 2>/dev/null) || die "npm is not installed"
	PATH="$(dirname "$node"):$PATH"
	export PATH
fi
say "installing claude $CLAUDE_VERSION and codex $CODEX_VERSION into $cache"
mkdir -p "$cache"
[ -f "$cache/package.json" ] || printf '{"name": "perflens-agents", "private": true}\n' > "$cache/package.json"
(cd "$cache" && npm --no-audit --no-fund --loglevel=error install --no-save --no-package-lock \
	"@anthropic-ai/claude-code@$CLAUDE_VERSION" "@openai/codex@$CODEX_VERSION" >&2) ||
	die "npm install of the agent CLIs failed (registry $(npm config get registry 2>/dev/null)); see npm's messages above"
agents_ok || die "claude or codex does not run at the pinned version after the install"
echo "$bin"
