# test_project_setup.sh - `perflens init` and `perflens detach` with the
# real clients, and their round trips byte for byte.
#
# Claude Code: after `init --client claude-code`, `claude mcp list` run in
# the project (its own HOME, the project server approved there) lists
# perflens from .mcp.json and reaches it (Connected), `claude mcp get`
# names the project scope and the arguments; the Skill folder has valid
# front matter.  Codex: after `init --client codex`, `codex mcp list
# --json` in the project (trusted in the test's own CODEX home) shows the
# server enabled with the expected arguments, `codex mcp get perflens`
# prints them.  Round trips on files the user had: init then detach gives
# back the very bytes; the user's other server in .mcp.json and their own
# line in .codex/config.toml survive init --update and detach; --update
# refuses, naming the file, when the user edited our block; init twice is
# a no-op (no file touched); a read-only project gets no write flags;
# nothing outside the project is written.  Also claude-config and
# install-skill --client claude-code.
# run.sh: no-asan: the real claude and codex CLIs reading the files init wrote
. tests/integration/lib.sh
name="project setup"
PY=/usr/bin/python3
here="$REPO/tests/integration"
B=$(cd "$BUILD" && pwd)
SERVER="$B/perflens-mcp"
SKILL=perflens-performance-analysis
# The clients must not phone home from a test.
export DISABLE_TELEMETRY=1 CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 DISABLE_AUTOUPDATER=1

# snapshot DIR: every file with its SHA-256 and mtime, to tell "untouched".
snapshot() {
	(cd "$1" && find . -print | LC_ALL=C sort | while IFS= read -r f; do
		if [ -f "$f" ]; then printf '%s %s %s\n' "$(sha256sum < "$f")" "$(stat -c %Y.%y "$f")" "$f"
		else printf 'dir %s\n' "$f"; fi
	done)
}
# expect_args FILE.json ARGS...: the JSON array in FILE equals ARGS.
expect_args() {
	f=$1
	shift
	$PY -c 'import json, sys; a = json.load(open(sys.argv[1])); sys.exit(0 if a == sys.argv[2:] else 1)' "$f" "$@"
}

# --------------------------------------------------- round trips (files)

p="$WORK/rt"
mkdir -p "$p/.codex"
printf 'model = "o3"\n[profiles.x]\nmodel = "gpt"' > "$p/.codex/config.toml"      # no final newline
printf '{ "mcpServers" : { "other": {"command": "/bin/true"} }, "x": [1,2] }' > "$p/.mcp.json"
cp "$p/.codex/config.toml" "$WORK/toml.orig"
cp "$p/.mcp.json" "$WORK/json.orig"
touch "$WORK/outside.stamp"
if "$PERFLENS" init --project "$p" > "$WORK/init.json" 2> "$WORK/err"; then
	ok "$name: init into a project with its own .codex/config.toml and .mcp.json"
else
	notok "$name: init: exit $?: $(oneline "$WORK/err")"
fi
$PY - "$p" "$SERVER" "$WORK/toml.orig" <<'PY' && ok "$name: the TOML keeps the user's bytes before the block and parses with tomllib; .mcp.json keeps the other server" || notok "$name: init's files are wrong"
import json, os, sys, tomllib
p, server, orig = sys.argv[1:4]
text = open(p + "/.codex/config.toml").read()
o = open(orig).read()
assert text.startswith(o + "\n# >>> perflens"), text[:200]
conf = tomllib.loads(text)
assert conf["model"] == "o3" and conf["profiles"]["x"]["model"] == "gpt", conf
s = conf["mcp_servers"]["perflens"]
assert s["command"] == server, s
assert s["args"] == ["--allowed-root", p, "--artifact-root", p + "/perflens-results", "--allow-writes"], s
m = json.load(open(p + "/.mcp.json"))
assert m["mcpServers"]["other"] == {"command": "/bin/true"} and m["x"] == [1, 2], m
assert m["mcpServers"]["perflens"] == {"type": "stdio", "command": server, "args": s["args"], "env": {}}, m
rec = json.load(open(p + "/.perflens/setup.json"))
assert set(rec["clients"]) == {"codex", "claude-code"}, rec
PY
$PY - "$p" <<'PY' && ok "$name: setup.json records each file with its SHA-256 (checked with hashlib)" || notok "$name: setup.json's hashes do not match the files"
import hashlib, json, sys, tomllib
p = sys.argv[1]
rec = json.load(open(p + "/.perflens/setup.json"))
n = 0
for c in rec["clients"].values():
    for f in c["files"]:
        data = open(p + "/" + f["path"], "rb").read()
        if f["kind"] == "file":
            got = data
        elif f["kind"] == "toml_block":
            t = data.decode()
            got = t[t.index("# >>> perflens"):].encode()
            got = got[:got.index(b"# <<< perflens <<<\n") + 19]
        else:
            e = json.loads(data)["mcpServers"]["perflens"]
            got = json.dumps(e, sort_keys=True, separators=(",", ":")).encode()
        assert hashlib.sha256(got).hexdigest() == f["sha256"], f
        n += 1
assert n >= 4, n
PY
snapshot "$p" > "$WORK/s1"
"$PERFLENS" init --project "$p" > "$WORK/again.json" 2> "$WORK/err"
rc=$?
snapshot "$p" > "$WORK/s2"
if [ "$rc" -eq 0 ] && cmp -s "$WORK/s1" "$WORK/s2" && [ "$(jget "$WORK/again.json" changed)" = False ]; then
	ok "$name: init twice is a no-op (changed false, no file touched, not even setup.json)"
else
	notok "$name: a second init changed something (exit $rc): $(diff "$WORK/s1" "$WORK/s2" | head -3 | tr '\n' ' ')"
fi
"$PERFLENS" detach --project "$p" > "$WORK/detach.json" 2> "$WORK/err"
left=$(cd "$p" && find . -mindepth 1 | LC_ALL=C sort | tr '\n' ' ')
if cmp -s "$p/.codex/config.toml" "$WORK/toml.orig" && cmp -s "$p/.mcp.json" "$WORK/json.orig" &&
	[ "$left" = "./.codex ./.codex/config.toml ./.mcp.json " ]; then
	ok "$name: init then detach gives back the user's files byte for byte, and nothing else is left"
else
	notok "$name: after detach: $left; $(diff "$p/.codex/config.toml" "$WORK/toml.orig" | head -3 | tr '\n' ' ') $(oneline "$WORK/err")"
fi

# The user's own edits around ours: kept by --update and by detach.
"$PERFLENS" init --project "$p" > /dev/null 2> "$WORK/err" || notok "$name: init (2): $(oneline "$WORK/err")"
printf '\n# my own line\n' >> "$p/.codex/config.toml"
$PY - "$p/.mcp.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d["mcpServers"]["other"]["args"] = ["--edited"]
open(sys.argv[1], "w").write(json.dumps(d, indent=2) + "\n")
PY
if "$PERFLENS" init --project "$p" --allow-collection --update > "$WORK/upd.json" 2> "$WORK/err" &&
	$PY - "$p" <<'PY'
import json, sys, tomllib
p = sys.argv[1]
text = open(p + "/.codex/config.toml").read()
assert text.endswith("# <<< perflens <<<\n\n# my own line\n"), text[-80:]
s = tomllib.loads(text)["mcp_servers"]["perflens"]
assert s["args"][-2:] == ["--allow-process-execution", "--allow-collection"], s
m = json.load(open(p + "/.mcp.json"))
assert m["mcpServers"]["other"] == {"command": "/bin/true", "args": ["--edited"]}, m
assert m["mcpServers"]["perflens"]["args"][-1] == "--allow-collection", m
PY
then
	ok "$name: init --update rewrites our block and entry (collection flags) and keeps the user's line and their edited server"
else
	notok "$name: init --update: $(oneline "$WORK/err")"
fi
"$PERFLENS" init --project "$p" --read-only > /dev/null 2> "$WORK/err"
rc=$?
if [ "$rc" -eq 5 ] && grep -q -- "--update" "$WORK/err"; then
	ok "$name: other choices without --update are refused (exit 5), naming --update"
else
	notok "$name: init with other choices and no --update: exit $rc: $(oneline "$WORK/err")"
fi
cp "$p/.codex/config.toml" "$WORK/toml.user"
sed -i 's/^tool_timeout_sec = 120$/tool_timeout_sec = 300/' "$p/.codex/config.toml"
snapshot "$p" > "$WORK/s1"
"$PERFLENS" init --project "$p" --update > /dev/null 2> "$WORK/err"
rc=$?
snapshot "$p" > "$WORK/s2"
if [ "$rc" -eq 5 ] && grep -q '.codex/config.toml' "$WORK/err" && cmp -s "$WORK/s1" "$WORK/s2"; then
	ok "$name: --update refuses, naming .codex/config.toml, when the user edited our block; nothing is written"
else
	notok "$name: --update over an edited block: exit $rc: $(oneline "$WORK/err")"
fi
"$PERFLENS" detach --project "$p" --dry-run > "$WORK/dry.json" 2> "$WORK/err"
snapshot "$p" > "$WORK/s3"
if cmp -s "$WORK/s1" "$WORK/s3" && $PY -c '
import json, sys
f = {x["path"]: x["action"] for x in json.load(open(sys.argv[1]))["files"]}
assert f[".codex/config.toml"] == "kept_changed" and f[".mcp.json"] == "removed_entry", f' "$WORK/dry.json"; then
	ok "$name: detach --dry-run reports the edited block as kept and touches nothing"
else
	notok "$name: detach --dry-run: $(oneline "$WORK/dry.json") $(oneline "$WORK/err")"
fi
cp "$WORK/toml.user" "$p/.codex/config.toml"   # the user undoes their edit of our block
"$PERFLENS" detach --project "$p" --format table > "$WORK/detach.txt" 2> "$WORK/err"
{ cat "$WORK/toml.orig"; printf '\n# my own line\n'; } > "$WORK/toml.want"
if cmp -s "$p/.codex/config.toml" "$WORK/toml.want" && $PY -c '
import json, sys
m = json.load(open(sys.argv[1]))
assert m == {"mcpServers": {"other": {"command": "/bin/true", "args": ["--edited"]}}, "x": [1, 2]}, m' "$p/.mcp.json" &&
	grep -q "removed_block" "$WORK/detach.txt"; then
	ok "$name: detach leaves the user's TOML byte for byte (their line kept) and their edited server"
else
	notok "$name: detach after edits: $(diff "$p/.codex/config.toml" "$WORK/toml.want" | head -4 | tr '\n' ' ') $(oneline "$WORK/err")"
fi
# A Skill file the user changed is reported, not removed; --keep-skills.
"$PERFLENS" init --project "$p" --client codex > /dev/null 2> "$WORK/err"
echo "my note" >> "$p/.agents/skills/$SKILL/SKILL.md"
"$PERFLENS" detach --project "$p" > "$WORK/d.json" 2> "$WORK/err"
if [ -f "$p/.agents/skills/$SKILL/SKILL.md" ] && [ ! -e "$p/.agents/skills/$SKILL/reference/tools.md" ] &&
	grep -q kept_changed "$WORK/d.json" && [ ! -e "$p/.perflens" ]; then
	ok "$name: detach keeps a Skill file the user changed (reported kept_changed) and removes the rest"
else
	notok "$name: detach with a changed Skill file: $(oneline "$WORK/d.json") $(oneline "$WORK/err")"
fi
rm -rf "$p/.agents"
"$PERFLENS" init --project "$p" --client claude-code > /dev/null 2> "$WORK/err"
"$PERFLENS" detach --project "$p" --keep-skills > /dev/null 2> "$WORK/err"
if [ -f "$p/.claude/skills/$SKILL/SKILL.md" ] && ! grep -q '"perflens"' "$p/.mcp.json"; then
	ok "$name: detach --keep-skills removes the registration and keeps the Skill"
else
	notok "$name: detach --keep-skills: $(oneline "$WORK/err")"
fi
rm -rf "$p/.claude"

# detach --client: one client goes, the other stays set up and recorded.
"$PERFLENS" init --project "$p" > /dev/null 2> "$WORK/err"
"$PERFLENS" detach --project "$p" --client codex > /dev/null 2> "$WORK/err"
if [ ! -e "$p/.agents" ] && ! grep -q "perflens" "$p/.codex/config.toml" && grep -q '"perflens"' "$p/.mcp.json" &&
	[ -f "$p/.claude/skills/$SKILL/SKILL.md" ] &&
	$PY -c 'import json, sys; sys.exit(0 if set(json.load(open(sys.argv[1]))["clients"]) == {"claude-code"} else 1)' "$p/.perflens/setup.json"; then
	ok "$name: detach --client codex removes Codex's files only; Claude Code's stay set up and recorded"
else
	notok "$name: detach --client codex: $(oneline "$WORK/err")"
fi
"$PERFLENS" detach --project "$p" > /dev/null 2> "$WORK/err"
[ ! -e "$p/.perflens" ] && [ ! -e "$p/.claude" ] || notok "$name: the last detach left $(ls -A "$p" | tr '\n' ' ')"

# Bytes TOML does not expect (a NUL) before our block: still found and
# removed, the user's bytes given back exactly.
z="$WORK/nul"
mkdir -p "$z/.codex"
printf 'x = 1\n# \000 odd\n' > "$z/.codex/config.toml"
cp "$z/.codex/config.toml" "$WORK/nul.orig"
"$PERFLENS" init --project "$z" --client codex > /dev/null 2> "$WORK/err" &&
	"$PERFLENS" detach --project "$z" > "$WORK/nul.json" 2>> "$WORK/err"
if cmp -s "$z/.codex/config.toml" "$WORK/nul.orig" && grep -q removed_block "$WORK/nul.json"; then
	ok "$name: a NUL byte before the block: init and detach give the file back byte for byte"
else
	notok "$name: NUL round trip: $(oneline "$WORK/nul.json") $(oneline "$WORK/err")"
fi

# Refusals: a file init did not write; a symbolic link out of the project.
q="$WORK/refuse"
mkdir -p "$q/.claude/skills/$SKILL" "$WORK/elsewhere"
echo "not PerfLens's" > "$q/.claude/skills/$SKILL/SKILL.md"
snapshot "$q" > "$WORK/s1"
"$PERFLENS" init --project "$q" > /dev/null 2> "$WORK/err"
rc=$?
snapshot "$q" > "$WORK/s2"
if [ "$rc" -eq 5 ] && grep -q "SKILL.md" "$WORK/err" && cmp -s "$WORK/s1" "$WORK/s2"; then
	ok "$name: a Skill file init did not write is refused by name, and nothing at all is written"
else
	notok "$name: init over a foreign Skill file: exit $rc: $(oneline "$WORK/err")"
fi
rm -rf "$q/.claude"
ln -s "$WORK/elsewhere" "$q/.codex"
"$PERFLENS" init --project "$q" --client codex > /dev/null 2> "$WORK/err"
rc=$?
if [ "$rc" -eq 5 ] && grep -q "symbolic link" "$WORK/err" && [ -z "$(ls -A "$WORK/elsewhere")" ]; then
	ok "$name: a symbolic link out of the project (.codex -> elsewhere) is refused; nothing written there"
else
	notok "$name: init through a symlink: exit $rc: $(oneline "$WORK/err")"
fi
outside=$(find "$WORK" -newer "$WORK/outside.stamp" -type f ! -path "$WORK/rt/*" ! -path "$WORK/refuse/*" ! -path "$WORK/nul/*" | grep -v "^$WORK/[a-z0-9.]*$" | head -3)
[ -z "$outside" ] && ok "$name: nothing outside the projects was written" || notok "$name: written outside: $outside"

# A record that climbs out of the project (a cloned repository may carry
# .perflens/setup.json): detach refuses its paths by name and removes
# nothing outside, even an empty file whose SHA-256 the record gives.
x="$WORK/climb"
mkdir -p "$x/proj/.perflens" "$x/victim-dir"
: > "$x/victim"
$PY - "$x/proj/.perflens/setup.json" <<'PY'
import hashlib, json, sys
e = hashlib.sha256(b"").hexdigest()
json.dump({"format": 1, "clients": {"codex": {"files": [
    {"path": "../victim", "kind": "file", "sha256": e, "created": True}],
    "dirs": ["../victim-dir"]}}}, open(sys.argv[1], "w"))
PY
"$PERFLENS" detach --project "$x/proj" > /dev/null 2> "$WORK/err"
rc=$?
if [ "$rc" -eq 5 ] && grep -q "not a plain path" "$WORK/err" && [ -e "$x/victim" ] && [ -d "$x/victim-dir" ]; then
	ok "$name: a recorded '../victim' is refused (exit 5); the file and folder outside the project stay"
else
	notok "$name: detach with a record climbing out: exit $rc, victim $( [ -e "$x/victim" ] && echo kept || echo REMOVED): $(oneline "$WORK/err")"
fi

# claude-config and install-skill --client claude-code.
mkdir -p "$WORK/ws"
if "$PERFLENS" claude-config --workspace "$WORK/ws" --read-only > "$WORK/cc.json" 2> "$WORK/err" && $PY - "$WORK/cc.json" "$WORK/ws" "$SERVER" <<'PY'
import json, os, sys
d = json.load(open(sys.argv[1]))
ws = os.path.realpath(sys.argv[2])
assert d == {"mcpServers": {"perflens": {"type": "stdio", "command": sys.argv[3],
             "args": ["--allowed-root", ws, "--artifact-root", ws + "/perflens-results"], "env": {}}}}, d
PY
then
	ok "$name: claude-config prints the .mcp.json document (read-only: no --allow-writes)"
else
	notok "$name: claude-config: $(oneline "$WORK/err") $(oneline "$WORK/cc.json")"
fi
if "$PERFLENS" install-skill --project "$WORK/ws" --client claude-code > /dev/null 2> "$WORK/err" &&
	diff -r "skill/$SKILL" "$WORK/ws/.claude/skills/$SKILL" > /dev/null &&
	$PY "$here/check_skill.py" "$WORK/ws/.claude/skills/$SKILL"; then
	ok "$name: install-skill --client claude-code installs into .claude/skills/, identical to skill/"
else
	notok "$name: install-skill --client claude-code: $(oneline "$WORK/err")"
fi
helps=""
for cmd in init detach status doctor claude-config; do
	"$PERFLENS" "$cmd" --help > "$WORK/h" 2>&1 && grep -q -- "--format" "$WORK/h" || helps="$helps $cmd"
done
[ -z "$helps" ] && ok "$name: init, detach, status, doctor and claude-config have --help naming --format" ||
	notok "$name: --help does not name --format for:$helps"

# --------------------------------------------------------------- status

sp="$WORK/st"
mkdir -p "$sp" "$WORK/srv"
cp "$SERVER" "$WORK/srv/perflens-mcp"
"$PERFLENS" status --project "$sp" > "$WORK/st0.json" 2> "$WORK/err"
[ "$(jget "$WORK/st0.json" set_up)" = False ] && ok "$name: status on a project never set up says so" ||
	notok "$name: status before init: $(oneline "$WORK/st0.json") $(oneline "$WORK/err")"
"$PERFLENS" init --project "$sp" --server "$WORK/srv/perflens-mcp" --allow-collection > /dev/null 2> "$WORK/err" ||
	notok "$name: init --server: $(oneline "$WORK/err")"
snapshot "$sp" > "$WORK/s1"
"$PERFLENS" status --project "$sp" > "$WORK/st1.json" 2> "$WORK/err"
snapshot "$sp" > "$WORK/s2"
if $PY - "$WORK/st1.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
assert r["set_up"] and r["ok"], r
cl = {c["client"]: c for c in r["clients"]}
assert set(cl) == {"codex", "claude-code"}, cl
for c in cl.values():
    s = c["server"]
    assert s["exists"] and s["version"].startswith("perflens-mcp "), s
    i = s["initialize"]
    assert i["answered"] and i["protocol_version"] == "2025-11-25" and i["ms"] < 15000, i
    assert c["skill"]["state"] == "matches", c["skill"]
    assert c["allows"] == {"writes": True, "process_execution": True, "collection": True}, c["allows"]
    assert all(f["state"] == "as_written" for f in c["files"]), c["files"]
    assert c["problems"] == [], c["problems"]
PY
then
	ok "$name: status: both clients set up, the server answers --version and an MCP initialize, the Skill matches, writes + process execution + collection allowed"
else
	notok "$name: status: $(oneline "$WORK/st1.json") $(oneline "$WORK/err")"
fi
cmp -s "$WORK/s1" "$WORK/s2" && [ ! -e "$sp/perflens-results" ] &&
	ok "$name: status is read-only (nothing in the project changes; the artifact root is not created)" ||
	notok "$name: status changed the project: $(diff "$WORK/s1" "$WORK/s2" | head -3 | tr '\n' ' ')"
echo "edited" >> "$sp/.claude/skills/$SKILL/SKILL.md"
mv "$WORK/srv/perflens-mcp" "$WORK/srv/moved-perflens-mcp"
"$PERFLENS" status --project "$sp" > "$WORK/st2.json" 2> "$WORK/err"
"$PERFLENS" status --project "$sp" --format table > "$WORK/st2.txt" 2>&1
if $PY - "$WORK/st2.json" "$WORK/srv/perflens-mcp" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
assert not r["ok"], r
cl = {c["client"]: c for c in r["clients"]}
for c in cl.values():
    assert c["server"]["exists"] is False and c["server"]["path"] == sys.argv[2], c["server"]
    p = [x for x in c["problems"] if "not there" in x["problem"]]
    assert p and "--update --server" in p[0]["fix"] and sys.argv[2] in p[0]["fix"], c["problems"]
cc = cl["claude-code"]
assert cc["skill"]["state"] == "differs" and cc["skill"]["differing"] == ["SKILL.md"], cc["skill"]
assert any(f["state"] == "changed" for f in cc["files"]), cc["files"]
assert cl["codex"]["skill"]["state"] == "matches", cl["codex"]["skill"]
PY
then
	ok "$name: status on a moved server binary reports it with the fix (init --update --server), and the edited Skill"
else
	notok "$name: status after moving the binary: $(oneline "$WORK/st2.json") $(oneline "$WORK/err")"
fi
grep -q "fix .*--update --server" "$WORK/st2.txt" && ok "$name: status --format table names the fix" ||
	notok "$name: status table: $(oneline "$WORK/st2.txt")"

# A record that names another program (a cloned repository may carry
# .perflens/setup.json): status reports it and does not run it; a number
# where an argument belongs does not crash it.
h="$WORK/hostile-rec"
mkdir -p "$h/.perflens"
$PY - "$h/.perflens/setup.json" "$WORK/ran" <<'PY'
import json, sys
json.dump({"format": 1, "clients": {"codex": {"server": "/bin/sh", "files": [],
    "args": ["-c", "touch " + sys.argv[2], 7]}}}, open(sys.argv[1], "w"))
PY
"$PERFLENS" status --project "$h" > "$WORK/st3.json" 2> "$WORK/err"
rc=$?
if [ "$rc" -le 2 ] && [ ! -e "$WORK/ran" ] && grep -q "status does not run it" "$WORK/st3.json"; then
	ok "$name: status does not run a recorded server that is not perflens-mcp (/bin/sh -c ...); it says so"
else
	notok "$name: status with a hostile record: exit $rc, $( [ -e "$WORK/ran" ] && echo RAN): $(oneline "$WORK/st3.json") $(oneline "$WORK/err")"
fi

# ------------------------------------------------------- the real clients

if ! bin=$(sh tests/mcp/setup-agents.sh --check 2>"$WORK/err"); then
	skip "$name: claude and codex: $(oneline "$WORK/err")"
	exit 0
fi

# Claude Code, its own HOME; the project's server approved there as a
# user would (`claude` asks once per project).
cp="$WORK/cc-proj"
ch="$WORK/cc-home"
mkdir -p "$cp" "$ch/.claude"
echo '{"enabledMcpjsonServers": ["perflens"]}' > "$ch/.claude/settings.json"
"$PERFLENS" init --project "$cp" --client claude-code > /dev/null 2> "$WORK/err" ||
	notok "$name: init --client claude-code: $(oneline "$WORK/err")"
(cd "$cp" && HOME="$ch" timeout 120 "$bin/claude" mcp list < /dev/null > "$WORK/cl.out" 2>&1)
cp_real=$(cd "$cp" && pwd -P)
if grep -q "^perflens: $SERVER --allowed-root $cp_real --artifact-root $cp_real/perflens-results --allow-writes - ✔ Connected" "$WORK/cl.out"; then
	ok "$name: claude mcp list in the project lists perflens from .mcp.json and reaches it (Connected)"
else
	notok "$name: claude mcp list: $(oneline "$WORK/cl.out")"
fi
(cd "$cp" && HOME="$ch" timeout 120 "$bin/claude" mcp get perflens < /dev/null > "$WORK/cg.out" 2>&1)
if grep -q "Scope: Project config" "$WORK/cg.out" && grep -q "Args: --allowed-root $cp_real " "$WORK/cg.out"; then
	ok "$name: claude mcp get perflens: project scope, the arguments init chose"
else
	notok "$name: claude mcp get: $(oneline "$WORK/cg.out")"
fi
$PY "$here/check_skill.py" "$cp/.claude/skills/$SKILL" && ok "$name: the Claude Code Skill folder has valid front matter" ||
	notok "$name: the Claude Code Skill folder is invalid"
[ ! -e "$cp/.agents" ] && [ ! -e "$cp/.codex" ] && ok "$name: --client claude-code writes nothing for Codex" ||
	notok "$name: --client claude-code wrote Codex files"

# Codex, its own CODEX home (HOME/.codex) trusting the project; read-only.
xp="$WORK/cx-proj"
xh="$WORK/cx-home"
mkdir -p "$xp" "$xh/.codex"
git -C "$xp" init -q
xp_real=$(cd "$xp" && pwd -P)
printf '[projects."%s"]\ntrust_level = "trusted"\n' "$xp_real" > "$xh/.codex/config.toml"
"$PERFLENS" init --project "$xp" --client codex --read-only > /dev/null 2> "$WORK/err" ||
	notok "$name: init --client codex --read-only: $(oneline "$WORK/err")"
(cd "$xp" && HOME="$xh" timeout 120 "$bin/codex" mcp list --json < /dev/null > "$WORK/xl.json" 2> "$WORK/xl.err")
if $PY - "$WORK/xl.json" "$SERVER" "$xp_real" <<'PY'
import json, sys
servers = {s["name"]: s for s in json.load(open(sys.argv[1]))}
s = servers["perflens"]
assert s["enabled"] is True, s
t = s["transport"]
assert t["type"] == "stdio" and t["command"] == sys.argv[2], t
assert t["args"] == ["--allowed-root", sys.argv[3], "--artifact-root", sys.argv[3] + "/perflens-results"], t["args"]
PY
then
	ok "$name: codex mcp list in the trusted project shows perflens enabled, read-only arguments (no --allow-writes)"
else
	notok "$name: codex mcp list: $(oneline "$WORK/xl.json") $(oneline "$WORK/xl.err")"
fi
(cd "$xp" && HOME="$xh" timeout 120 "$bin/codex" mcp get perflens < /dev/null > "$WORK/xg.out" 2> "$WORK/xg.err")
if grep -q "^  command: $SERVER$" "$WORK/xg.out" &&
	grep -q "^  args: --allowed-root $xp_real --artifact-root $xp_real/perflens-results$" "$WORK/xg.out" &&
	grep -q "^  enabled: true" "$WORK/xg.out"; then
	ok "$name: codex mcp get perflens prints the command and arguments"
else
	notok "$name: codex mcp get: $(oneline "$WORK/xg.out") $(oneline "$WORK/xg.err")"
fi
$PY "$here/check_skill.py" "$xp/.agents/skills/$SKILL" && ok "$name: the Codex Skill folder has valid front matter" ||
	notok "$name: the Codex Skill folder is invalid"
"$PERFLENS" detach --project "$xp" > /dev/null 2> "$WORK/err"
(cd "$xp" && HOME="$xh" timeout 120 "$bin/codex" mcp list --json < /dev/null > "$WORK/xl2.json" 2> /dev/null)
if $PY -c 'import json, sys; sys.exit(0 if all(s["name"] != "perflens" for s in json.load(open(sys.argv[1]))) else 1)' "$WORK/xl2.json" &&
	[ -z "$(cd "$xp" && find . -mindepth 1 ! -path './.git*')" ]; then
	ok "$name: after detach codex lists no perflens and the project holds nothing of init's"
else
	notok "$name: after detach: $(oneline "$WORK/xl2.json"); $(cd "$xp" && find . -mindepth 1 ! -path './.git*' | head -3)"
fi
