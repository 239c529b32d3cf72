# test_perf_report_oracle.sh - PerfLens hotspot percentages against
# `perf report` on captures recorded here, on this kernel.
#
# Each workload in tests/workloads/ is built with frame pointers, recorded
# with `perf record -e cpu-clock -F 999 -g`, turned into text with
# `perf script`, and analyzed by PerfLens.  The oracle is perf report on the
# same perf.data: --no-children for self, --children for inclusive (perf
# counts a symbol once per sample there, as PerfLens does).  Every named
# symbol at >= 0.5% in either tool must agree within 0.1 percentage points
# (perf prints two decimals, so agreement is normally <= 0.005 pp).  The
# workloads run ~0.5-1 s of CPU (< 1000 samples at 999 Hz), so a single
# misattributed sample (> 0.1 pp) fails the check.  Checks per workload:
# totals (sample count and event count), self, children; one workload is
# also analyzed from the default `perf script` header form.
# run.sh: slow
. tests/integration/lib.sh
name="perf report oracle"
cmp_py="$REPO/tests/integration/compare_perf_report.py"

oneline() { tr '\n\t' '  ' <"$1" | tr -s ' ' | sed 's/^ //; s/ $//' | cut -c1-300; }

if ! command -v perf >/dev/null 2>&1; then
	skip "$name: perf is not installed"
	exit 0
fi
for tool in gcc python3; do
	if ! command -v "$tool" >/dev/null 2>&1; then
		skip "$name: $tool is not installed"
		exit 0
	fi
done
if ! perf record -e cpu-clock -g -N -o "$WORK/probe.data" -- true \
	>/dev/null 2>"$WORK/probe.err"; then
	skip "$name: perf cannot record here: $(oneline "$WORK/probe.err")"
	exit 0
fi

# analyze TXT -> prints the summary path, or nothing (error in $WORK/err)
analyze() {
	"$PERFLENS" analyze --input "$1" --artifact-root "$WORK/art" 2>"$WORK/err" |
		python3 -c 'import json,sys; print(json.load(sys.stdin)["artifact"]["summary_path"])' \
			2>>"$WORK/err"
}

# check LABEL SUMMARY SELF CHILDREN: one ok/not ok line per mode
check() {
	label=$1
	python3 "$cmp_py" "$2" "$3" "$4" >"$WORK/cmp.out" 2>&1
	rc=$?
	for mode in totals self children; do
		line=$(grep "^$mode " "$WORK/cmp.out")
		detail=${line#"$mode "}
		case "$detail" in
		ok\ *) ok "perf report oracle $label $mode: ${detail#ok }" ;;
		fail\ *)
			notok "perf report oracle $label $mode: ${detail#fail }"
			grep "^#   $mode " "$WORK/cmp.out"
			;;
		*) notok "perf report oracle $label $mode: compare_perf_report.py exited $rc: $(oneline "$WORK/cmp.out")" ;;
		esac
	done
}

mkdir -p "$WORK/bin" "$WORK/art"
for src in "$REPO"/tests/workloads/*.c; do
	w=$(basename "$src" .c)
	bin="$WORK/bin/$w"
	if ! gcc -O1 -g -fno-omit-frame-pointer -o "$bin" "$src" -lpthread 2>"$WORK/err"; then
		notok "perf report oracle $w: gcc failed: $(oneline "$WORK/err")"
		continue
	fi
	data="$WORK/$w.data"
	# -N: keep the throwaway binaries out of ~/.debug
	if ! perf record -e cpu-clock -F 999 -g -N -o "$data" -- "$bin" \
		>/dev/null 2>"$WORK/err"; then
		notok "perf report oracle $w: perf record failed: $(oneline "$WORK/err")"
		continue
	fi
	if ! perf script -i "$data" -F comm,pid,tid,time,event,period,ip,sym,symoff,dso \
		>"$WORK/$w.txt" 2>"$WORK/err" ||
		! perf report -i "$data" --stdio --no-children --sort sym -g none \
			--percent-limit 0 >"$WORK/$w.self" 2>"$WORK/err" ||
		! perf report -i "$data" --stdio --children --sort sym -g none \
			--percent-limit 0 >"$WORK/$w.children" 2>"$WORK/err"; then
		notok "perf report oracle $w: perf script/report failed: $(oneline "$WORK/err")"
		continue
	fi
	summary=$(analyze "$WORK/$w.txt")
	if [ -z "$summary" ]; then
		notok "perf report oracle $w: analyze failed: $(oneline "$WORK/err")"
	else
		check "$w" "$summary" "$WORK/$w.self" "$WORK/$w.children"
	fi
	# The default header form, `comm tid time: period event:`, once.
	if [ "$w" = nested ]; then
		if ! perf script -i "$data" >"$WORK/$w.default.txt" 2>"$WORK/err"; then
			notok "perf report oracle $w (default perf script): perf script failed: $(oneline "$WORK/err")"
			continue
		fi
		summary=$(analyze "$WORK/$w.default.txt")
		if [ -z "$summary" ]; then
			notok "perf report oracle $w (default perf script): analyze failed: $(oneline "$WORK/err")"
		else
			check "$w (default perf script)" "$summary" "$WORK/$w.self" "$WORK/$w.children"
		fi
	fi
done
