# test_artifacts.sh - analysis artifacts and tool results against their
# JSON Schemas (python3-jsonschema as the oracle), and determinism: the
# same input analyzed twice gives the same id and byte-identical files.
. tests/integration/lib.sh
need_shared "artifact schemas"
PY=/usr/bin/python3
if ! $PY -c 'import jsonschema' 2>/dev/null; then
	skip "artifact schemas: python3-jsonschema is not installed (apt-get install python3-jsonschema)"
	exit 0
fi
validate() { $PY tests/integration/validate_json.py "$@"; }

for f in schemas/tools/*.json; do
	if $PY -c "
import json,jsonschema
d=json.load(open('$f'))
for k in ('inputSchema','outputSchema'):
    jsonschema.Draft202012Validator.check_schema(d[k])
assert d['inputSchema'].get('additionalProperties') is False
" ; then ok "schema $f is valid 2020-12 with additionalProperties false"; else notok "schema $f"; fi
done

peers="$SHARED/peers/flamegraph/test"
for input in "$peers/perf-cycles-instructions-01.txt" "$peers/perf-numa-stacks-01.txt" \
	"$peers/perf-java-stacks-01.txt" "$SHARED/peers/device-sessions/session-x86-baseline"; do
	name=$(basename "$input")
	"$PERFLENS" analyze --input "$input" --artifact-root "$WORK/a" > "$WORK/an.json" 2>"$WORK/err" ||
		{ notok "analyze $name: $(cat "$WORK/err")"; continue; }
	id=$($PY -c 'import json,sys; print(json.load(open(sys.argv[1]))["analysis_id"])' "$WORK/an.json")
	if validate schemas/analysis.schema.json "$WORK/a/analyses/$id.json" &&
		validate schemas/stacks.schema.json "$WORK/a/analyses/$id.stacks.json"; then
		ok "artifact of $name validates"
	else
		notok "artifact of $name does not validate"
	fi
	validate schemas/tools/analyze_profile.json:outputSchema "$WORK/an.json" &&
		ok "analyze_profile result of $name validates" || notok "analyze_profile result of $name"
	"$PERFLENS" analyze --input "$input" --artifact-root "$WORK/b" > "$WORK/an2.json"
	if cmp -s "$WORK/a/analyses/$id.json" "$WORK/b/analyses/$id.json" &&
		cmp -s "$WORK/a/analyses/$id.stacks.json" "$WORK/b/analyses/$id.stacks.json"; then
		ok "analysis of $name is byte-identical on a second run (id $id)"
	else
		notok "analysis of $name differs between runs"
	fi
	event=$($PY -c 'import json,sys; print(json.load(open(sys.argv[1]))["events"][0]["name"])' "$WORK/an.json")
	for call in "hotspots --sort self --limit 3 --event $event" \
		"hotspots --sort inclusive --limit 100 --event $event" \
		"callpaths --limit 5 --event $event" "stat" \
		"export --format folded --event $event" "export --format svg --event $event"; do
		tool=${call%% *}
		case $tool in
		hotspots) schema=list_hotspots ;; callpaths) schema=get_call_paths ;;
		stat) schema=get_perf_stat ;; export) schema=export_profile ;;
		esac
		# shellcheck disable=SC2086
		if "$PERFLENS" $call --analysis-id "$id" --artifact-root "$WORK/a" \
			> "$WORK/r.json" 2>"$WORK/err"; then
			validate "schemas/tools/$schema.json:outputSchema" "$WORK/r.json" &&
				ok "$tool ${call#* } on $name validates" || notok "$call on $name"
		else
			notok "$call on $name: $(cat "$WORK/err")"
		fi
	done
done
