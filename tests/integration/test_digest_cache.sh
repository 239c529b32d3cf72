# test_digest_cache.sh - a perf.data analyzed again is not hashed again
# while it keeps its identity (tools/core/base/digest_cache.h), and is
# whenever it changed.
#
# A real recording of fib, and a perf script text capture; the oracle
# for every digest is sha256sum of
# the file as it is then.  Checked: the first analysis hashes the file and
# keeps the digest under ARTIFACT_ROOT/cache/digests; the second takes it
# from there, says so in its inputs (entry and identity: inode and size as
# stat gives them), and writes the same artifact (same id, same bytes); a
# rewrite of one byte that keeps the size and puts the modification time
# back to the nanosecond is hashed again (only the change time moved),
# and so is a file analyzed before it settled, until it has; a torn entry
# is a miss; the MCP server's sandboxed worker keeps and uses the cache
# too.
. tests/integration/lib.sh
name="digest cache"
need_perf_record "$name"

gcc -O1 -g -fno-omit-frame-pointer -o "$WORK/fib" "$REPO/tests/workloads/fib.c" 2>"$WORK/err" ||
	{ notok "$name: cannot build fib: $(oneline "$WORK/err")"; exit 0; }
perf record -N -e cpu-clock -F 999 -g -o "$WORK/fp.data" -- "$WORK/fib" >/dev/null 2>"$WORK/rec.err" ||
	{ notok "$name: recording failed: $(oneline "$WORK/rec.err")"; exit 0; }
# And perf script text, as a user's file (a copy of a peer capture).
need_shared "$name"
cp "$SHARED/peers/flamegraph/test/perf-vertx-stacks-01.txt" "$WORK/t.txt"
# A digest is kept only for a file whose change time is 2 s old.
sleep 3

# analyze N: the analysis of fp.data as $WORK/aN.json.
analyze() {
	PERFLENS_PERF_DATA_READER=native "$PERFLENS" analyze --path "$WORK/fp.data" --artifact-root "$WORK/art" \
		>"$WORK/a$1.json" 2>"$WORK/a$1.err" || notok "$name: analysis $1 failed: $(oneline "$WORK/a$1.err")"
}
# digest_of N: "SHA256 FROM" of analysis N (FROM: the cache entry or -).
digest_of() {
	/usr/bin/python3 -c 'import json,sys
i = json.load(open(sys.argv[1]))["inputs"][0]
print(i["sha256"], (i.get("sha256_from") or {}).get("cache", "-"))' "$WORK/a$1.json" 2>/dev/null
}
oracle_sha() { sha256sum "$WORK/fp.data" | cut -d' ' -f1; }

analyze 1
sha=$(oracle_sha)
set -- $(digest_of 1)
if [ "${1:-}" = "$sha" ] && [ "${2:-}" = - ]; then
	ok "$name: the first analysis hashes the file (sha256sum's $sha)"
else
	notok "$name: first analysis: sha256 ${1:-none} from ${2:-?}, sha256sum $sha"
fi
entries=$(ls "$WORK/art/cache/digests" 2>/dev/null | wc -l)
[ "$entries" = 1 ] && ok "$name: one entry kept under the artifact root" ||
	notok "$name: $entries entries in $WORK/art/cache/digests"

analyze 2
set -- $(digest_of 2)
entry=$(ls "$WORK/art/cache/digests" 2>/dev/null | head -1)
if [ "${1:-}" = "$sha" ] && [ "${2:-}" = "cache/digests/$entry" ]; then
	ok "$name: the second analysis takes the digest from the cache and names the entry ($2)"
else
	notok "$name: second analysis: sha256 ${1:-none} from ${2:-?}, want $sha from cache/digests/$entry"
fi
/usr/bin/python3 - "$WORK/a2.json" "$WORK/fp.data" <<'EOF'
import json, os, sys
i = json.load(open(sys.argv[1]))["inputs"][0]
idn = (i.get("sha256_from") or {}).get("identity", {})
st = os.stat(sys.argv[2])
want = {"dev": st.st_dev, "ino": st.st_ino, "size": st.st_size, "mtime_ns": st.st_mtime_ns, "ctime_ns": st.st_ctime_ns}
if idn == want:
    print("ok - digest cache: the result gives the identity the digest was kept for, stat's own")
else:
    print("not ok - digest cache: identity %s, stat says %s" % (idn, want))
EOF
id1=$(jget "$WORK/a1.json" analysis_id)
id2=$(jget "$WORK/a2.json" analysis_id)
if [ "$id1" = "$id2" ] && [ -s "$WORK/art/analyses/$id1.json" ]; then
	ok "$name: the artifact does not depend on where the digest came from (same id $id1)"
else
	notok "$name: ids $id1 and $id2"
fi

# One byte of the recorded hostname changed in place: same size, and the
# modification time put back as it was, to the nanosecond.
mtime=$(stat -c %.9Y "$WORK/fp.data")
/usr/bin/python3 - "$WORK/fp.data" "$(uname -n)" <<'EOF' || notok "$name: cannot find the hostname in the perf.data header"
import sys
path, host = sys.argv[1], sys.argv[2].encode()
data = open(path, "rb").read()
at = data.find(host + b"\0")
if at < 0:
    sys.exit(1)
with open(path, "r+b") as f:
    f.seek(at)
    f.write(b"Z" if host[:1] != b"Z" else b"Y")
EOF
touch -m -d "@$mtime" "$WORK/fp.data"
new=$(oracle_sha)
[ "$(stat -c %.9Y "$WORK/fp.data")" = "$mtime" ] && [ "$new" != "$sha" ] ||
	notok "$name: the rewrite did not keep the modification time ($mtime) or did not change the bytes"
analyze 3
set -- $(digest_of 3)
if [ "${1:-}" = "$new" ] && [ "${2:-}" = - ]; then
	ok "$name: a rewritten file of the same size and modification time is hashed again (only its change time moved)"
else
	notok "$name: after the rewrite: sha256 ${1:-none} from ${2:-?}, sha256sum $new (before $sha)"
fi
analyze 4
set -- $(digest_of 4)
[ "${1:-}" = "$new" ] && [ "${2:-}" = - ] &&
	ok "$name: a file changed less than 2 s before its hashing is not kept: hashed again" ||
	notok "$name: an unsettled file: sha256 ${1:-none} from ${2:-?}"
sleep 3
analyze 5
analyze 6
set -- $(digest_of 6)
[ "${1:-}" = "$new" ] && [ "${2:-}" = "cache/digests/$entry" ] &&
	ok "$name: once settled, the new digest is kept and used" ||
	notok "$name: settled: sha256 ${1:-none} from ${2:-?}, want $new from the cache"

# A torn entry (a crash mid-write would leave none, but a disk can) is a miss.
printf 'perflens-digest 1 1 2 3' >"$WORK/art/cache/digests/$entry"
analyze 7
set -- $(digest_of 7)
[ "${1:-}" = "$new" ] && [ "${2:-}" = - ] && ok "$name: a torn entry is a miss, and the file is hashed" ||
	notok "$name: torn entry: sha256 ${1:-none} from ${2:-?}"

# Text inputs go through the same cache (base/input.c).
for n in 1 2; do
	"$PERFLENS" analyze --input "$WORK/t.txt" --artifact-root "$WORK/art" >"$WORK/t$n.json" 2>"$WORK/t$n.err" ||
		notok "$name: text analysis $n failed: $(oneline "$WORK/t$n.err")"
done
/usr/bin/python3 - "$WORK/t1.json" "$WORK/t2.json" "$(sha256sum "$WORK/t.txt" | cut -d' ' -f1)" <<'EOF2'
import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:3])
ia, ib = a["inputs"][0], b["inputs"][0]
if (ia["sha256"] == ib["sha256"] == sys.argv[3] and "sha256_from" not in ia and
        ib.get("sha256_from", {}).get("cache", "").startswith("cache/digests/") and
        a["analysis_id"] == b["analysis_id"]):
    print("ok - digest cache: perf script text is hashed once, then its digest taken from the cache (same analysis id)")
else:
    print("not ok - digest cache: text inputs %s then %s, ids %s %s, sha256sum %s" % (ia, ib, a["analysis_id"], b["analysis_id"], sys.argv[3]))
EOF2

# The server's worker, confined to the artifact root, keeps and uses it.
cat >"$WORK/mcp.py" <<'EOF'
import os, sys
sys.path.insert(0, os.environ["HERE"])
from mcp_client import *
build, work = os.environ["BUILD_DIR"], os.environ["WORK"]
os.makedirs(work + "/mart", exist_ok=True)
s = Stdio([build + "/perflens-mcp", "--allowed-root", work, "--artifact-root", work + "/mart", "--allow-writes"], "noexec")
s.initialize()
got = []
for _ in range(2):
    r = s.call("analyze_profile", {"path": os.path.join(work, "fp.data")}, timeout=60)["result"]
    got.append(((r.get("structuredContent") or {}).get("inputs") or [{}])[0])
check("digest cache MCP: the first call hashes, the second takes the digest from the worker's cache",
      got[0].get("sha256") == os.environ["SHA"] and "sha256_from" not in got[0] and
      got[1].get("sha256") == os.environ["SHA"] and
      (got[1].get("sha256_from") or {}).get("cache", "").startswith("cache/digests/"), short(got))
s.check_outputs()
s.close()
EOF
HERE="$REPO/tests/integration" BUILD_DIR="$(cd "$BUILD" && pwd)" WORK="$WORK" SHA="$new" /usr/bin/python3 "$WORK/mcp.py"
