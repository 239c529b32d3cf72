# test_skill_tools.sh - the Skill's tool table is the server's tools/list.
#
# The server is started with every `--allow-*` flag its --help lists (so
# tools listed only behind a flag are listed), and its tools/list, read as
# a client reads it, is the oracle: every listed tool must be named in the
# Skill's tool table (SKILL.md, "## Tools"), and the table, the Skill's
# call examples (lines "tool_name {json}") and `mcp__perflens__NAME`
# mentions must name no tool the server lacks; the installed Skill
# (perflens install-skill) is the same text.  Nothing is tolerated.
# run.sh: no-asan: the Skill's text against tools/list
. tests/integration/lib.sh
SKILL="$REPO/skill/perflens-performance-analysis/SKILL.md"
server="$(cd "$BUILD" && pwd)/perflens-mcp"
flags=$("$server" --help | awk '{ c = substr($0, 3, 28); sub(/ +$/, "", c) } c ~ /^--allow-[a-z-]+$/ { print c }' | tr '\n' ' ')
echo "$flags" | grep -q -- --allow-writes || notok "perflens-mcp --help lists no --allow-writes (flags: $flags)"
WORK="$WORK" timeout 120 /usr/bin/python3 - "$server" "$SKILL" "$PERFLENS" $flags <<'PY'
import os, re, subprocess, sys
sys.path.insert(0, os.path.join(os.environ.get("REPO", os.getcwd()), "tests", "integration"))
from mcp_client import *  # the shared MCP test client (mcp_client.py)
SERVER, SKILL, PERFLENS = sys.argv[1:4]
flags = sys.argv[4:]
# --fleet-store lists the fleet tools (listing asks the store nothing)
s = Stdio([SERVER, "--allowed-root", WORK, "--artifact-root", os.path.join(WORK, "art")] + flags +
          ["--fleet-store", "http://127.0.0.1:9/skill_check"], "skill-tools")
s.initialize()
listed, cursor = [], None
for _ in range(20):
    r = s.request("tools/list", {"cursor": cursor} if cursor else {})
    res = (r or {}).get("result", {})
    listed += [t["name"] for t in res.get("tools", [])]
    cursor = res.get("nextCursor")
    if not cursor:
        break
s.close()
check("tools/list of a server with %s: %d tools" % (" ".join(flags), len(listed)), len(listed) >= 19, listed)
text = open(SKILL).read()
tools_section = text.split("## Tools", 1)[1].split("\n## ", 1)[0]
table = set()
for row in tools_section.splitlines():
    cells = row.split("|")
    if row.startswith("|") and len(cells) > 3 and not set(cells[2].strip()) <= set("-"):
        table |= set(re.findall(r"`([a-z][a-z0-9_]*)`", cells[2]))
examples = set(re.findall(r"^([a-z][a-z0-9_]*) \{", text, re.M))
prefixed = set(re.findall(r"mcp__perflens__([a-z0-9_]+)", text))
missing = sorted(set(listed) - table)
check("every listed tool is named in the Skill's tool table", not missing, "not in the table: %s" % missing)
for what, names in (("the tool table", table), ("the call examples", examples), ("mcp__perflens__ mentions", prefixed)):
    extra = sorted(names - set(listed))
    check("%s name no tool the server lacks (%d names)" % (what, len(names)), not extra, "the server lacks: %s" % extra)
proj = os.path.join(WORK, "proj")
os.makedirs(proj)
subprocess.run([PERFLENS, "install-skill", "--project", proj], capture_output=True)
inst = [os.path.join(d, f) for d, _, fs in os.walk(proj) for f in fs if f == "SKILL.md"]
check("perflens install-skill installs this SKILL.md", inst and open(inst[0]).read() == text, inst)
PY
