# test_mcp_budget.sh - what an agent pays to read PerfLens, measured through
# perflens-mcp over stdio as a client sees it (tests/integration/mcp_client.py).
#
#  - tools/list: the part a model reads (each tool's name, description and
#    inputSchema, as compact JSON) must stay within 20 KB; the output
#    schemas, which clients use to check results, are printed beside it and
#    stay complete (every one is a valid JSON Schema 2020-12, checked with
#    python3-jsonschema, the oracle here).
# Both sizes are printed on the ok lines, so a run shows where they stand.
. tests/integration/lib.sh
PY=/usr/bin/python3
if ! $PY -c 'import jsonschema' 2>/dev/null; then
	skip "MCP budget: python3-jsonschema is not installed (apt-get install python3-jsonschema)"
	exit 0
fi
server="$(cd "$BUILD" && pwd)/perflens-mcp"

WORK="$WORK" timeout "${MCP_TEST_TIMEOUT:-170}" $PY - "$server" "$REPO" <<'PY'
import json, os, sys
sys.path.insert(0, os.path.join(os.environ.get("REPO", os.getcwd()), "tests", "integration"))
from mcp_client import *  # the shared MCP test client (mcp_client.py)
import jsonschema

SERVER, REPO = sys.argv[1:3]
MODEL_READ_MAX = 20 * 1024
ART = os.path.join(WORK, "art")
s = Stdio([SERVER, "--allowed-root", REPO, "--artifact-root", ART, "--allow-writes"], "budget")
s.initialize()


def compact(v):
    return len(json.dumps(v, separators=(",", ":"), ensure_ascii=False).encode())


tools, cursor, raw = [], None, 0
for _ in range(20):
    r = s.request("tools/list", {"cursor": cursor} if cursor else {})
    res = (r or {}).get("result", {})
    tools += res.get("tools", [])
    raw += compact(r or {})
    cursor = res.get("nextCursor")
    if not cursor:
        break
check("budget: tools/list answers with tools", tools, short(r))
# What a model reads: the name, the description and the input schema (the
# fields Claude's and OpenAI's tool definitions carry); titles and
# annotations are for the client, output schemas for result checking.
read = sum(compact({"name": t["name"], "description": t.get("description", ""),
                    "inputSchema": t.get("inputSchema")}) for t in tools)
out = sum(compact(t.get("outputSchema")) for t in tools)
heavy = sorted(((compact({"name": t["name"], "description": t.get("description", ""),
                          "inputSchema": t.get("inputSchema")}), t["name"]) for t in tools), reverse=True)[:3]
check("budget: tools/list's model-read part (names, descriptions, input schemas) is %d bytes "
      "(<= %d) for %d tools; output schemas %d bytes; whole answer %d bytes"
      % (read, MODEL_READ_MAX, len(tools), out, raw),
      read <= MODEL_READ_MAX, "heaviest: %s" % heavy)
bad = []
for t in tools:
    for key in ("inputSchema", "outputSchema"):
        try:
            jsonschema.Draft202012Validator.check_schema(t[key])
        except (KeyError, jsonschema.SchemaError) as e:
            bad.append("%s %s: %s" % (t["name"], key, str(e)[:120]))
check("budget: every listed inputSchema and outputSchema is a valid JSON Schema 2020-12", not bad, bad)
undescribed = ["%s.%s" % (t["name"], k) for t in tools
               for k, p in t["inputSchema"].get("properties", {}).items() if not p.get("description")]
check("budget: every input property still says what it means (a description)", not undescribed, undescribed)
short_desc = [t["name"] for t in tools if len(t.get("description", "")) < 60]
check("budget: every tool still has a description that says when to call it", not short_desc, short_desc)
print("# tools/list: model-read %d bytes, output schemas %d bytes, answer %d bytes" % (read, out, raw))
rc = s.close()
check("budget: the server exits 0 at end of input", rc == 0, rc)
sys.exit(0)
PY
