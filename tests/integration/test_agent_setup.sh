# test_agent_setup.sh - the agent setup commands: `perflens install-skill`
# installs the embedded Agent Skill with valid front matter, identical to
# skill/ in the tree, and refuses (exit 5, nothing changed) to overwrite
# it; `perflens codex-config` prints TOML that python3's tomllib parses,
# with absolute, correctly escaped paths; usage errors are exit 2 with one
# JSON error object on stderr.
# run.sh: no-asan: the Skill and config files the CLI writes, checked by Python
. tests/integration/lib.sh
PY=python3
SKILL=perflens-performance-analysis

# wired CMD: does perflens know CMD?  Says how to fix it when not.
wired() {
	if "$PERFLENS" "$1" --help > "$WORK/out" 2> "$WORK/err"; then
		return 0
	fi
	notok "$1: perflens does not know the command (wire $2 from tools/cli/agent_setup.c into main() in tools/cli/perflens.c and add agent_setup.o to CLI_OBJ): $(head -c 200 "$WORK/err")"
	return 1
}

# json_error CODE WANT_EXIT: is $WORK/err one JSON error object with that
# code, the exit code and a non-empty message and hint?
json_error() {
	$PY -c '
import json, sys
text = open(sys.argv[1]).read()
assert text.count("\n") == 1, "not one line"
e = json.loads(text)["error"]
assert e["code"] == sys.argv[2] and e["exit_code"] == int(sys.argv[3]), e
assert e["message"] and e["hint"], e' "$WORK/err" "$1" "$2" 2>/dev/null
}

# expect_error WHAT CODE EXIT -- ARGS...
expect_error() {
	what=$1 code=$2 want=$3
	shift 4
	"$PERFLENS" "$@" > "$WORK/out" 2> "$WORK/err"
	got=$?
	if [ "$got" -ne "$want" ]; then
		notok "$what: exit $got, wanted $want: $(head -c 300 "$WORK/err")"
	elif ! json_error "$code" "$want"; then
		notok "$what: stderr is not one JSON error with code $code: $(head -c 300 "$WORK/err")"
	else
		ok "$what (exit $want, $code)"
	fi
}

# A listing of every file under DIR with its SHA-256, to tell "unchanged".
snapshot() {
	(cd "$1" && find . -print | LC_ALL=C sort | while IFS= read -r f; do
		if [ -f "$f" ]; then printf '%s %s\n' "$(sha256sum < "$f")" "$f"; else printf 'dir %s\n' "$f"; fi
	done)
}

# ------------------------------------------------------- install-skill

if wired install-skill cli_install_skill; then
	proj="$WORK/proj"
	mkdir -p "$proj"
	dest="$proj/.agents/skills/$SKILL"
	if "$PERFLENS" install-skill --project "$proj" > "$WORK/out" 2> "$WORK/err"; then
		ok "install-skill into a new project"
	else
		notok "install-skill: exit $?: $(head -c 300 "$WORK/err")"
	fi
	if $PY -c '
import json, os, sys
out, proj, dest = sys.argv[1:4]
lines = open(out).read().splitlines()
assert len(lines) == 1, lines
r = json.loads(lines[0])
assert r["installed"] == os.path.realpath(dest), r
n = sum(len(files) for _, _, files in os.walk(dest))
assert r["files"] == n and n >= 1, (r, n)' "$WORK/out" "$proj" "$dest"; then
		ok "install-skill prints one JSON line with the absolute path and the file count"
	else
		notok "install-skill output: $(head -c 300 "$WORK/out")"
	fi
	if diff -r "skill/$SKILL" "$dest" > "$WORK/diff" 2>&1; then
		ok "installed files are identical to skill/$SKILL"
	else
		notok "installed files differ from skill/$SKILL: $(head -c 300 "$WORK/diff")"
	fi
	left=$(ls -A "$proj/.agents/skills")
	[ "$left" = "$SKILL" ] && ok "no staging folder is left beside the Skill" ||
		notok "unexpected entries in .agents/skills: $left"

	if $PY "$REPO/tests/integration/check_skill.py" "$dest"; then
		ok "installed SKILL.md front matter: name equals the folder, description within 1024 chars"
	else
		notok "installed SKILL.md front matter is invalid"
	fi

	# Never overwrite: a second install is refused and changes nothing,
	# not even a user's edit.
	echo "local note" >> "$dest/SKILL.md"
	snapshot "$proj" > "$WORK/before"
	expect_error "a second install-skill is refused" output_refused 5 -- install-skill --project "$proj"
	grep -q "$SKILL" "$WORK/err" && ok "the refusal names the existing folder" ||
		notok "the refusal does not name the folder: $(cat "$WORK/err")"
	snapshot "$proj" > "$WORK/after"
	cmp -s "$WORK/before" "$WORK/after" && ok "a refused install changes nothing" ||
		notok "a refused install changed files: $(diff "$WORK/before" "$WORK/after" | head -5)"
	[ ! -s "$WORK/out" ] && ok "a refused install prints nothing on stdout" || notok "stdout: $(head -c 200 "$WORK/out")"

	expect_error "install-skill without --project" usage 2 -- install-skill
	expect_error "install-skill into a missing folder" usage 2 -- install-skill --project "$WORK/nope"
	[ ! -e "$WORK/nope" ] && ok "a missing project folder is not created" || notok "$WORK/nope was created"
	# .agents linked to a folder outside (a user's global one): refused,
	# nothing written there.
	mkdir -p "$WORK/linked" "$WORK/global-agents"
	ln -s "$WORK/global-agents" "$WORK/linked/.agents"
	expect_error "install-skill through a linked .agents is refused" output_refused 5 -- install-skill --project "$WORK/linked"
	[ -z "$(ls -A "$WORK/global-agents")" ] && ok "nothing is written through the link" ||
		notok "written outside the project: $(ls -A "$WORK/global-agents")"
fi

# -------------------------------------------------------- codex-config

if wired codex-config cli_codex_config; then
	if ! $PY -c 'import tomllib' 2>/dev/null; then
		skip "codex-config TOML: python3 has no tomllib (needs Python 3.11)"
	else
		# check_toml WORKSPACE SERVER: parse $WORK/out, check command and args.
		check_toml() {
			$PY - "$WORK/out" "$1" "$2" <<'PY'
import os, sys, tomllib
out, ws, server = sys.argv[1:4]
conf = tomllib.loads(open(out, encoding="utf-8").read())
s = conf["mcp_servers"]["perflens"]
ws = os.path.realpath(ws)
assert s["command"] == server, (s["command"], server)
assert os.path.isabs(s["command"]), s["command"]
assert s["args"] == ["--allowed-root", ws, "--artifact-root", ws + "/perflens-results",
                     "--allow-writes"], s["args"]
for k in ("startup_timeout_sec", "tool_timeout_sec"):
    assert isinstance(s[k], int) and s[k] > 0, (k, s.get(k))
assert set(conf) == {"mcp_servers"} and set(conf["mcp_servers"]) == {"perflens"}, conf
PY
		}
		beside="$(cd "$(dirname "$PERFLENS")" && pwd -P)/perflens-mcp"
		mkdir -p "$WORK/ws"
		if "$PERFLENS" codex-config --workspace "$WORK/ws" > "$WORK/out" 2> "$WORK/err" &&
			check_toml "$WORK/ws" "$beside"; then
			ok "codex-config: TOML parses; perflens-mcp beside perflens, allowed and artifact roots, --allow-writes"
		else
			notok "codex-config: $(head -c 300 "$WORK/err") $(head -c 600 "$WORK/out")"
		fi

		odd="$WORK/w \"q\\ x"
		mkdir -p "$odd" "$WORK/bin"
		if (cd "$WORK" && "$PERFLENS" codex-config --workspace "w \"q\\ x/." --server bin/perflens-mcp) \
			> "$WORK/out" 2> "$WORK/err" && check_toml "$odd" "$(cd "$WORK/bin" && pwd -P)/perflens-mcp"; then
			ok "codex-config escapes quotes and backslashes and makes relative paths absolute"
		else
			notok "codex-config with an odd workspace name: $(head -c 300 "$WORK/err") $(head -c 600 "$WORK/out")"
		fi
	fi
	expect_error "codex-config without --workspace" usage 2 -- codex-config
	expect_error "codex-config with a missing workspace" usage 2 -- codex-config --workspace "$WORK/nope"
	expect_error "codex-config with an unknown flag" usage 2 -- codex-config --workspace "$WORK" --frob 1
fi
