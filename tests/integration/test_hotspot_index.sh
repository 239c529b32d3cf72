# test_hotspot_index.sh - list_hotspots pages from the hotspot index
# (cache/hotidx) are the pages the summary gives, on real captures: every
# page of every event in both orders, walked by cursor to the end, and
# filtered; the percents of the first page agree with `perf report`'s
# published figures through the peers' own oracle test (test_perf_report_oracle),
# so here the summary path is the reference.  The index is written only
# where writes are allowed (the CLI; MCP with --allow-writes, by the
# sandboxed worker), never by a read-only server, and a damaged or
# truncated index is not used.
. tests/integration/lib.sh
need_shared "hotspot index"
PY=/usr/bin/python3
peers="$SHARED/peers/flamegraph/test"
root="$WORK/hx"

# Every page of one (event, sort, min_percent), walked by cursor, into
# $2; with $3 = fresh, each page from the summary (the index removed).
walk() {
	args=$1 out=$2 fresh=${3:-} cursor=""
	: > "$out"
	for _ in $(seq 1 200); do
		[ -n "$fresh" ] && rm -rf "$root/cache/hotidx"
		# shellcheck disable=SC2086  # args is a list of words
		"$PERFLENS" list_hotspots $args --limit 7 ${cursor:+--cursor "$cursor"} \
			--artifact-root "$root" >> "$out" 2>&1 || return 0
		cursor=$(tail -n 1 "$out" | $PY -c 'import json,sys; print(json.loads(sys.stdin.read())["page"].get("next_cursor") or "")' 2>/dev/null)
		[ -n "$cursor" ] || return 0
	done
}

for input in "$peers/perf-cycles-instructions-01.txt" "$peers/perf-java-stacks-01.txt" \
	"$peers/perf-vertx-stacks-01.txt"; do
	name=$(basename "$input" .txt)
	"$PERFLENS" analyze --input "$input" --artifact-root "$root" > "$WORK/an.json" 2> "$WORK/err" ||
		{ notok "analyze $name: $(oneline "$WORK/err")"; continue; }
	id=$(jget "$WORK/an.json" analysis_id)
	events=$($PY -c 'import json,sys; print(" ".join(e["name"] for e in json.load(open(sys.argv[1]))["events"]))' "$WORK/an.json")
	same=0 differ=0
	for ev in $events; do
		for sort in self inclusive; do
			for mp in 0 2.5; do
				args="--analysis-id $id --event $ev --sort $sort --min-percent $mp"
				walk "$args" "$WORK/from-summary" fresh
				# The reference must hold pages, not an error both paths share.
				grep -q '"hotspot_id"' "$WORK/from-summary" ||
					notok "$name $ev $sort min $mp: the summary path gave no hotspots: $(head -c 300 "$WORK/from-summary")"
				"$PERFLENS" list_hotspots $args --limit 1 --artifact-root "$root" > /dev/null 2>&1
				walk "$args" "$WORK/from-index"
				if cmp -s "$WORK/from-summary" "$WORK/from-index"; then
					same=$((same + 1))
				else
					differ=$((differ + 1))
					notok "$name $ev $sort min $mp: pages differ: $(diff "$WORK/from-summary" "$WORK/from-index" | head -c 300)"
				fi
			done
		done
	done
	[ -f "$root/cache/hotidx/$id.idx" ] && [ "$differ" = 0 ] && [ "$same" -gt 0 ] &&
		ok "$name: $same page walks (every event, both orders, filtered or not) are the same from the index as from the summary"
	# Damage: a flipped byte deep in the file, and a truncated file.
	idx="$root/cache/hotidx/$id.idx"
	first_ev=${events%% *}
	"$PERFLENS" list_hotspots --analysis-id "$id" --event "$first_ev" --sort inclusive --limit 50 \
		--artifact-root "$root" > "$WORK/want.json"
	size=$(wc -c < "$idx")
	printf '\377' | dd of="$idx" bs=1 seek=$((size - 20)) conv=notrunc 2> /dev/null
	"$PERFLENS" list_hotspots --analysis-id "$id" --event "$first_ev" --sort inclusive --limit 50 \
		--artifact-root "$root" > "$WORK/got.json"
	cmp -s "$WORK/want.json" "$WORK/got.json" && ok "$name: a damaged index is not used (same page)" ||
		notok "$name: a damaged index changed the page"
	head -c 100 "$idx" > "$idx.t" && mv "$idx.t" "$idx"
	"$PERFLENS" list_hotspots --analysis-id "$id" --event "$first_ev" --sort inclusive --limit 50 \
		--artifact-root "$root" > "$WORK/got.json"
	cmp -s "$WORK/want.json" "$WORK/got.json" && ok "$name: a truncated index is not used (same page)" ||
		notok "$name: a truncated index changed the page"
done

# MCP: the sandboxed worker writes the index with --allow-writes (and
# uses it on the next page), never without.
mroot="$WORK/mcp-hx"
mkdir -p "$mroot"
cp -r "$root/analyses" "$mroot/"
# $id: the last capture's analysis (vertx: one event, so no event argument)
$PY - "$BUILD/perflens-mcp" "$SHARED" "$mroot" "$id" > "$WORK/mcp.out" 2>&1 <<'EOF'
import json, os, subprocess, sys
server, shared, root, aid = sys.argv[1:5]
idx = os.path.join(root, "cache", "hotidx", aid + ".idx")

def pages(extra):
    p = subprocess.Popen([server, "--allowed-root", shared, "--artifact-root", root] + extra,
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    def rpc(i, method, params):
        p.stdin.write((json.dumps({"jsonrpc": "2.0", "id": i, "method": method, "params": params}) + "\n").encode())
        p.stdin.flush()
        return json.loads(p.stdout.readline())
    rpc(1, "initialize", {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}})
    out = []
    for i in range(3):
        r = rpc(10 + i, "tools/call", {"name": "list_hotspots", "arguments": {"analysis_id": aid, "sort": "inclusive", "limit": 4, "offset": 4 * i}})
        out.append(json.dumps(r["result"].get("structuredContent"), sort_keys=True))
    p.stdin.close(); p.wait()
    return out

ro = pages([])
print("read-only server wrote an index" if os.path.exists(idx) else "read-only: no index")
rw = pages(["--allow-writes"])
print("writable server wrote the index" if os.path.exists(idx) else "writable: no index")
print("pages equal" if ro == rw and all(x != "null" for x in ro) else "pages differ")
EOF
grep -q "read-only: no index" "$WORK/mcp.out" && ok "mcp: a read-only server writes no index" ||
	notok "mcp read-only: $(oneline "$WORK/mcp.out")"
grep -q "writable server wrote the index" "$WORK/mcp.out" && ok "mcp: with --allow-writes the sandboxed worker writes the index" ||
	notok "mcp writable: $(oneline "$WORK/mcp.out")"
grep -q "pages equal" "$WORK/mcp.out" && ok "mcp: pages from the summary and from the index are the same" ||
	notok "mcp pages: $(oneline "$WORK/mcp.out")"
