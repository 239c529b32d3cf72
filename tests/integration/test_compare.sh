# test_compare.sh - compare_profiles on real captures, checked against the
# peers: its folded diff against difffolded.pl run on the two folded
# exports (whose byte-identity to stackcollapse-perf.pl test_folded_peer.sh
# checks), its differential SVG against flamegraph.pl run on that output
# (check_diff_svg.py), its result against the tool's outputSchema, and a
# capture compared with itself changing nothing.
#
# difffolded.pl prints its lines in Perl's hash order, which changes from
# run to run; both outputs are put in byte order (LC_ALL=C sort) before
# they are compared byte for byte.
. tests/integration/lib.sh
need_shared "compare_profiles"
SCHEMA=schemas/tools/compare_profiles.json:outputSchema
PEERS="$SHARED/peers/flamegraph/test"
SESSION="$SHARED/peers/device-sessions/session-x86-baseline"
FG_GIT=${FLAMEGRAPH_GIT:-/work/.mirror/brendangregg+FlameGraph/repo}

analyze() {
	"$PERFLENS" analyze --input "$1" --artifact-root "$WORK" 2>"$WORK/err" |
		sed -n 's/^  "analysis_id": "\(.*\)",$/\1/p'
}
# json FILE EXPR: a value of a JSON file (python3 expression on `d`).
json() { python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"; }

# The peer scripts, from the FlameGraph snapshot (run from $WORK, not copied
# into the repository).
PEER=
if command -v perl >/dev/null 2>&1 && [ -d "$FG_GIT" ] && mkdir -p "$WORK/peer" &&
	git --git-dir="$FG_GIT" archive HEAD difffolded.pl flamegraph.pl 2>/dev/null | tar -x -C "$WORK/peer" 2>/dev/null &&
	[ -f "$WORK/peer/difffolded.pl" ]; then
	PEER=$WORK/peer
fi

# Two halves of a real capture: its records alternately, as two runs.
half() { awk -v want="$2" 'BEGIN { RS = ""; ORS = "\n\n" } { n++ } n % 2 == want' "$1"; }

# check_pair NAME BASE_ID CAND_ID EVENT: the result validates, and the
# exports match the peers'.
check_pair() {
	name=$1 base=$2 cand=$3 ev=$4
	if ! "$PERFLENS" compare --baseline-id "$base" --candidate-id "$cand" --event "$ev" \
		--artifact-root "$WORK" --min-delta-percent 0 --output "$WORK/cmp.json" 2>"$WORK/err"; then
		notok "compare $name: $(cat "$WORK/err")"
		return
	fi
	if out=$(/usr/bin/python3 tests/integration/validate_json.py "$SCHEMA" "$WORK/cmp.json" 2>&1); then
		ok "compare $name: the result validates against the outputSchema"
	else
		case $out in *"not installed"*) skip "compare $name schema: $out" ;; *) notok "compare $name schema: $out" ;; esac
	fi
	folded=$(json "$WORK/cmp.json" 'd["exports"]["folded_diff"]["path"]')
	svg=$(json "$WORK/cmp.json" 'd["exports"]["svg"]["path"]')
	# Every line of the folded diff is one call path of the result.
	[ "$(wc -l < "$folded")" = "$(json "$WORK/cmp.json" 'd["call_paths_compared"]')" ] &&
		ok "compare $name: one call path per folded diff line" ||
		notok "compare $name: $(wc -l < "$folded") folded lines, $(json "$WORK/cmp.json" 'd["call_paths_compared"]') call paths"
	if [ -z "$PEER" ]; then
		skip "compare $name against difffolded.pl and flamegraph.pl: perl or the FlameGraph snapshot ($FG_GIT) is missing"
		return
	fi
	"$PERFLENS" export --analysis-id "$base" --artifact-root "$WORK" --format folded --event "$ev" --output "$WORK/a.folded" >/dev/null &&
		"$PERFLENS" export --analysis-id "$cand" --artifact-root "$WORK" --format folded --event "$ev" --output "$WORK/b.folded" >/dev/null ||
		{ notok "compare $name: folded exports failed"; return; }
	perl "$PEER/difffolded.pl" "$WORK/a.folded" "$WORK/b.folded" > "$WORK/peer.diff"
	LC_ALL=C sort "$WORK/peer.diff" > "$WORK/peer.sorted"
	LC_ALL=C sort "$folded" > "$WORK/ours.sorted"
	if cmp -s "$WORK/peer.sorted" "$WORK/ours.sorted"; then
		ok "compare $name: folded diff is byte-identical to difffolded.pl's ($(wc -l < "$folded") lines, both sorted)"
	else
		notok "compare $name: folded diff differs from difffolded.pl's: $(diff "$WORK/ours.sorted" "$WORK/peer.sorted" | head -4 | tr '\n' ' ')"
	fi
	perl "$PEER/flamegraph.pl" "$WORK/peer.diff" > "$WORK/peer.svg" 2>/dev/null
	if out=$(python3 tests/integration/check_svg.py "$svg" 2>&1); then
		ok "compare $name: differential svg is well formed and nested ($out)"
	else
		notok "compare $name: differential svg: $out"
	fi
	if out=$(python3 tests/integration/check_diff_svg.py "$svg" "$WORK/peer.svg" "$WORK/peer.diff" 2>&1); then
		ok "compare $name: differential svg against flamegraph.pl's ($out)"
	else
		notok "compare $name: differential svg against flamegraph.pl's: $out"
	fi
}

# 1. Two chunks of a real device session (6 events; cycles compared).
c0=$(analyze "$SESSION/chunk_000.txt.gz")
c1=$(analyze "$SESSION/chunk_001.txt.gz")
if [ -z "$c0" ] || [ -z "$c1" ]; then
	notok "analyze the session chunks: $(cat "$WORK/err")"
else
	check_pair "session chunks 0 vs 1" "$c0" "$c1" cycles
	# -n: difffolded.pl -n scales count1 to the candidate's total
	if [ -n "$PEER" ] && "$PERFLENS" compare --baseline-id "$c0" --candidate-id "$c1" --event instructions \
		--normalize --artifact-root "$WORK" --output "$WORK/n.json" 2>"$WORK/err"; then
		"$PERFLENS" export --analysis-id "$c0" --artifact-root "$WORK" --format folded --event instructions --output "$WORK/a.folded" >/dev/null
		"$PERFLENS" export --analysis-id "$c1" --artifact-root "$WORK" --format folded --event instructions --output "$WORK/b.folded" >/dev/null
		perl "$PEER/difffolded.pl" -n "$WORK/a.folded" "$WORK/b.folded" | LC_ALL=C sort > "$WORK/peer.sorted"
		LC_ALL=C sort "$(json "$WORK/n.json" 'd["exports"]["folded_diff"]["path"]')" > "$WORK/ours.sorted"
		cmp -s "$WORK/peer.sorted" "$WORK/ours.sorted" &&
			ok "compare normalize=true is byte-identical to difffolded.pl -n" ||
			notok "compare normalize=true differs from difffolded.pl -n: $(diff "$WORK/ours.sorted" "$WORK/peer.sorted" | head -4 | tr '\n' ' ')"
	elif [ -n "$PEER" ]; then
		notok "compare --normalize: $(cat "$WORK/err")"
	fi
	# Several events and no --event: refused, naming them, nothing merged.
	if "$PERFLENS" compare --baseline-id "$c0" --candidate-id "$c1" --artifact-root "$WORK" >/dev/null 2>"$WORK/err"; then
		notok "compare without --event on multi-event analyses must be refused"
	else
		grep -q 'choices: .*cycles' "$WORK/err" && grep -q '"hint":"pass event=NAME' "$WORK/err" &&
			ok "compare without --event names the choices and the fix" ||
			notok "compare without --event: $(cat "$WORK/err")"
	fi
fi

# 2. Halves of FlameGraph's test captures: Java (deep stacks, many names)
#    and iperf with kernel frames.
for cap in perf-vertx-stacks-01 perf-iperf-stacks-pidtid-01 perf-numa-stacks-01; do
	half "$PEERS/$cap.txt" 0 > "$WORK/h0.txt"
	half "$PEERS/$cap.txt" 1 > "$WORK/h1.txt"
	h0=$(analyze "$WORK/h0.txt")
	h1=$(analyze "$WORK/h1.txt")
	if [ -z "$h0" ] || [ -z "$h1" ]; then
		notok "analyze halves of $cap: $(cat "$WORK/err")"
		continue
	fi
	ev=$(json "$WORK/analyses/$h0.json" 'd["events"][0]["name"]')
	check_pair "$cap halves" "$h0" "$h1" "$ev"
done

# The last differential SVG in a real browser (skipped without Chromium).
if [ -n "${svg:-}" ]; then
	sh tests/integration/svg_browser.sh "$svg" "$WORK/shot.png" > "$WORK/browser" 2>&1
	case $? in
	0) ok "chromium renders the differential flame graph ($(tail -1 "$WORK/browser"))" ;;
	77) skip "differential svg in a browser: $(tail -1 "$WORK/browser")" ;;
	*) notok "differential svg in a browser: $(tail -3 "$WORK/browser" | tr '\n' ' ')" ;;
	esac
fi

# 3. A capture against itself: every change 0, nothing added or removed.
v=$(analyze "$PEERS/perf-vertx-stacks-01.txt")
if "$PERFLENS" compare --baseline-id "$v" --candidate-id "$v" --artifact-root "$WORK" \
	--min-delta-percent 0 --limit 100 --path-limit 50 --output "$WORK/self.json" 2>"$WORK/err"; then
	if out=$(python3 - "$WORK/self.json" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
bad = [f["symbol"] for f in d["functions"]
       if f["status"] != "unchanged" or f["self_delta_points"] != 0 or f["inclusive_delta_points"] != 0]
bad += [";".join(p["frames"]) for p in d["call_paths"] if p["status"] != "unchanged" or p["delta_points"] != 0]
c = d["status_counts"]
if c["added"] or c["removed"] or c["changed"]:
    bad.append("status_counts %s" % c)
if d["unknown_share"]["leaf"]["delta_points"] != 0 or d["unknown_share"]["any_frame"]["delta_points"] != 0:
    bad.append("unknown share moved")
if not d["functions"] or not d["call_paths"]:
    bad.append("nothing listed")
if bad:
    print("changed: %s" % ", ".join(bad[:5]))
    sys.exit(1)
print("%d functions, %d paths" % (d["functions_compared"], d["call_paths_compared"]))
EOF
	); then
		ok "compare of a capture with itself: every change is 0 ($out)"
	else
		notok "compare of a capture with itself: $out"
	fi
	folded=$(json "$WORK/self.json" 'd["exports"]["folded_diff"]["path"]')
	svg=$(json "$WORK/self.json" 'd["exports"]["svg"]["path"]')
	awk '$(NF - 1) != $NF { bad++ } END { exit bad > 0 }' "$folded" &&
		ok "compare with itself: every folded diff line has count1 = count2" ||
		notok "compare with itself: a folded diff line has different counts"
	grep -o 'fill="rgb([0-9,]*)"' "$svg" | grep -v 'rgb(255,255,255)' | grep -q . &&
		notok "compare with itself: a frame of the svg is coloured" ||
		ok "compare with itself: every svg frame is white"
	# The default threshold leaves nothing to list.
	"$PERFLENS" compare --baseline-id "$v" --candidate-id "$v" --artifact-root "$WORK" --exports=false \
		--output "$WORK/self2.json" 2>"$WORK/err" &&
		[ "$(json "$WORK/self2.json" 'len(d["functions"]) + len(d["call_paths"])')" = 0 ] &&
		[ "$(json "$WORK/self2.json" 'd["exports"]')" = None ] &&
		ok "compare with itself at the default threshold lists nothing and writes nothing" ||
		notok "compare with itself at the default threshold: $(cat "$WORK/err")"
else
	notok "compare a capture with itself: $(cat "$WORK/err")"
fi

# 4. Different events are refused, never compared, naming both.
pf=$(analyze "$PEERS/perf-java-faults-01.txt")
if "$PERFLENS" compare --baseline-id "$v" --candidate-id "$pf" --artifact-root "$WORK" >/dev/null 2>"$WORK/err"; then
	notok "compare of cpu-clock with page-faults must be refused"
else
	grep -q "cpu-clock" "$WORK/err" && grep -q "page-faults" "$WORK/err" && grep -q '"hint":"record both runs' "$WORK/err" &&
		ok "compare of different events is refused, naming both and the fix" ||
		notok "compare of different events: $(cat "$WORK/err")"
fi

# 5. Paging: the second page follows the first with no overlap.
if [ -n "${c0:-}" ] && "$PERFLENS" compare --baseline-id "$c0" --candidate-id "$c1" --event cycles --min-delta-percent 0 \
	--limit 3 --exports=false --artifact-root "$WORK" --output "$WORK/p1.json" 2>"$WORK/err"; then
	cur=$(json "$WORK/p1.json" 'd["page"]["next_cursor"]')
	"$PERFLENS" compare --baseline-id "$c0" --candidate-id "$c1" --event cycles --min-delta-percent 0 \
		--limit 3 --exports=false --cursor "$cur" --artifact-root "$WORK" --output "$WORK/p2.json" 2>"$WORK/err"
	[ "$(json "$WORK/p2.json" '[f["rank"] for f in d["functions"]]')" = "[4, 5, 6]" ] &&
		ok "compare pages functions by cursor" ||
		notok "compare paging: $(cat "$WORK/err") $(json "$WORK/p2.json" '[f["rank"] for f in d["functions"]]' 2>&1)"
fi
