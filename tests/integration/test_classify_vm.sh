# test_classify_vm.sh - vm_irq_enable's stated attribution on crafted perf
# script text of a paravirtualized guest (no hypervisor here): the
# irq-enable samples' callers and the hotspot rules of the paths they
# interrupted, said next to the flag and in the report's Data quality,
# while every figure keeps them on the irq-enable; and quiet, with no
# attribution anywhere, where the irq-enable is under 10% or absent.
# vm_craft.py crafts the text and recomputes the attribution from it
# (classify_oracle.py's reader, the rules' own patterns).
. tests/integration/lib.sh
PY=/usr/bin/python3
if ! $PY -c 'import jsonschema' 2>/dev/null; then
	skip "classify vm: python3-jsonschema is not installed"
	exit 0
fi
rules=schemas/rules/classify-rules.json
art="$WORK/art"
$PY tests/integration/vm_craft.py craft "$WORK" || { notok "classify vm: vm_craft.py craft failed"; exit 0; }
for n in vm vm-low bare; do
	if ! "$PERFLENS" classify --input "$WORK/$n.txt" --artifact-root "$art" --limit 50 >"$WORK/$n.json" 2>"$WORK/err"; then
		notok "classify vm $n: $(oneline "$WORK/err")"
		continue
	fi
	if ! $PY tests/integration/validate_json.py schemas/tools/classify_hotspots.json:outputSchema "$WORK/$n.json" \
		>"$WORK/v.out" 2>&1; then
		notok "classify vm $n: result does not validate: $(oneline "$WORK/v.out")"
		continue
	fi
	if $PY tests/integration/classify_oracle.py "$rules" "$WORK/$n.txt" "$WORK/$n.json" >"$WORK/o.out" 2>&1; then
		ok "classify vm $n: validates; $(tail -1 "$WORK/o.out") agree with classify_oracle.py"
	else
		notok "classify vm $n: figures differ from classify_oracle.py: $(oneline "$WORK/o.out")"
	fi
	md=-
	if [ "$n" = vm ]; then
		id=$(jget "$WORK/$n.json" analysis_id)
		if "$PERFLENS" report --analysis-id "$id" --artifact-root "$art" --problem "guest slow" --metric "req/s" \
			>"$WORK/report.json" 2>"$WORK/err"; then
			md=$(jget "$WORK/report.json" path)
		else
			notok "classify vm report: $(oneline "$WORK/err")"
		fi
	fi
	$PY tests/integration/vm_craft.py check "$rules" "$WORK/$n.txt" "$WORK/$n.json" "$md"
done
