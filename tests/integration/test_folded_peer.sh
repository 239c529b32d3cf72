# test_folded_peer.sh - folded export against stackcollapse-perf.pl's
# own expected outputs: 13 real captures x 6 options = 78 cases, each
# compared byte for byte with the file the peer's test suite ships.
. tests/integration/lib.sh
need_shared "folded export vs stackcollapse-perf.pl"
dir="$SHARED/peers/flamegraph/test"
for capture in "$dir"/*.txt; do
	name=$(basename "$capture" .txt)
	id=$("$PERFLENS" analyze --input "$capture" --artifact-root "$WORK" 2>"$WORK/err" |
		sed -n 's/^  "analysis_id": "\(.*\)",$/\1/p')
	if [ -z "$id" ]; then
		notok "analyze $name: $(cat "$WORK/err")"
		continue
	fi
	for opt in pid tid kernel jit all addrs; do
		want="$dir/results/$name-collapsed-$opt.txt"
		if "$PERFLENS" export --analysis-id "$id" --artifact-root "$WORK" --format folded \
			--compat stackcollapse --"$opt" --output "$WORK/got" 2>"$WORK/err" &&
			cmp -s "$WORK/got" "$want"; then
			ok "folded $name --$opt"
		else
			notok "folded $name --$opt: $(head -c 300 "$WORK/err"; diff "$WORK/got" "$want" | head -5)"
		fi
	done
done
