# test_demangle.sh - C++ and Rust names, as perf names them.
#
# tests/workloads/cxx_names.cc (namespaces, overloads, class and function
# templates, a lambda, an operator) built with g++ and clang++, and
# tests/workloads/rust_names.rs built by Debian's rustc with the legacy and
# the v0 mangling, are recorded with real perf.  Oracle: `perf report -v`
# (perf 6.1 demangles with libiberty, with parameters under -v), every
# user hotspot of 1% or more named the same, at the same self percent,
# through the native reader (no process run).  Also: the perf script reader
# (perf --no-demangle, then ours) gives the same stack table byte for
# byte; a short name names one function per DSO; each linkage_name is the
# symbol nm lists, and symbolize at its address answers the same name.
. tests/integration/lib.sh
name="demangle"
need_perf_record "$name"
mkdir -p "$WORK/b"

check() {   # check LABEL BINARY
	label=$1 bin=$2 data="$WORK/$1.data"
	if ! perf record -e cpu-clock -F 999 -g -o "$data" -- "$bin" 2000 >/dev/null 2>"$WORK/err" ||
		! perf report -v -i "$data" --stdio --no-children --sort sym -g none --percent-limit 1 \
			>"$WORK/$label.report" 2>>"$WORK/err"; then
		notok "$name $label: recording failed: $(oneline "$WORK/err")"
		return
	fi
	for r in native perf-script; do
		PERFLENS_PERF_DATA_READER=$r "$PERFLENS" analyze --path "$data" --artifact-root "$WORK/art-$r" \
			>"$WORK/$label.$r.json" 2>"$WORK/err" || { notok "$name $label: analyze ($r) failed: $(oneline "$WORK/err")"; return; }
	done
	id=$(jget "$WORK/$label.native.json" analysis_id)
	"$PERFLENS" hotspots --analysis-id "$id" --artifact-root "$WORK/art-native" --limit 100 \
		>"$WORK/$label.hot.json" 2>"$WORK/err" || { notok "$name $label: hotspots failed: $(oneline "$WORK/err")"; return; }
	nm "$bin" >"$WORK/$label.nm"
	# Exports: compat=stackcollapse shows perf script's own names, the same
	# folded text as the analysis of perf's (demangling) perf script text;
	# names=short folds no two functions into one line.
	perf script -i "$data" -F comm,pid,tid,time,event,period,trace,ip,sym,symoff,dso --show-mmap-events \
		>"$WORK/$label.txt" 2>"$WORK/err" &&
		"$PERFLENS" analyze --path "$WORK/$label.txt" --artifact-root "$WORK/art-txt" >"$WORK/$label.txt.json" 2>>"$WORK/err" &&
		"$PERFLENS" export --analysis-id "$(jget "$WORK/$label.txt.json" analysis_id)" --artifact-root "$WORK/art-txt" \
			--format folded --compat stackcollapse >"$WORK/$label.ex1.json" 2>>"$WORK/err" &&
		"$PERFLENS" export --analysis-id "$id" --artifact-root "$WORK/art-native" \
			--format folded --compat stackcollapse >"$WORK/$label.ex2.json" 2>>"$WORK/err" &&
		"$PERFLENS" export --analysis-id "$id" --artifact-root "$WORK/art-native" \
			--format folded --names short >"$WORK/$label.ex3.json" 2>>"$WORK/err"
	if [ $? -ne 0 ]; then
		notok "$name $label: exports failed: $(oneline "$WORK/err")"
	elif cmp -s "$(jget "$WORK/$label.ex1.json" path)" "$(jget "$WORK/$label.ex2.json" path)"; then
		ok "$name $label: the stackcollapse-compatible export names functions as perf script does"
	else
		notok "$name $label: compat folded of perf.data and of perf's perf script text differ: $(diff "$(jget "$WORK/$label.ex1.json" path)" "$(jget "$WORK/$label.ex2.json" path)" | head -4 | tr '\n' ' ')"
	fi
	short=$(jget "$WORK/$label.ex3.json" path)
	case $label in
	g++|clang++)
		# Both instances of kv::Box<T>::twice keep their template argument
		# in the short form when both were sampled (as the full names of
		# the same analysis show); one sampled alone is unique as
		# kv::Box::twice (a loaded machine may give the other no sample).
		boxes=$(grep -o 'kv::Box<[a-z]*>::twice' "$(jget "$WORK/$label.ex2.json" path)" | sort -u | wc -l)
		if [ "$boxes" -ge 2 ]; then
			box_ok() { grep -q ';kv::Box<int>::twice[ ;]' "$short" && grep -q ';kv::Box<double>::twice[ ;]' "$short"; }
		else
			box_ok() { grep -q ';kv::Box::twice[ ;]' "$short" && ! grep -q ';kv::Box<' "$short"; }
		fi
		if box_ok && grep -q ';kv::Store::get(long)[ ;]' "$short"; then
			ok "$name $label: names=short folds kv::Box<int>::twice apart from kv::Box<double>::twice ($boxes sampled), overloads by their parameters"
		else
			notok "$name $label: names=short folded: $(grep -o ';kv::[^;]*' "$short" | sort -u | head -6 | tr '\n' ' ')"
		fi ;;
	esac
	oracle "$name $label" /usr/bin/python3 - "$label" "$bin" "$WORK" "$PERFLENS" "$id" <<'PY'
import json, re, subprocess, sys
label, binary, work, perflens, aid = sys.argv[1:6]
pre = f"{label}:"
def ok(m): print(f"ok - demangle {pre} {m}")
def notok(m): print(f"not ok - demangle {pre} {m}")

want = []
for line in open(f"{work}/{label}.report"):
    m = re.match(r"^\s+([\d.]+)%\s+0x[0-9a-f]+\s+\S\s+\[\.\]\s+(.*)$", line.rstrip("\n"))
    # a bare address is a sample perf could not name ([unknown] here)
    if m and not re.fullmatch(r"0x[0-9a-f]+", m.group(2)):
        want.append((float(m.group(1)), m.group(2)))
hot = json.load(open(f"{work}/{label}.hot.json"))["hotspots"]
got = [(h["self"]["percent"], h["symbol"]) for h in hot]
missing = []
for pct, nm in want:
    match = [g for g in got if g[1] == nm and abs(g[0] - pct) <= 0.011]
    if match:
        got.remove(match[0])
    else:
        missing.append(f"{nm} {pct}%")
if want and not missing:
    ok(f"all {len(want)} user hotspots of >= 1% named as perf report -v names them, at its percentages")
else:
    notok(f"perf report -v hotspots not found (of {len(want)}): {missing[:4]}; perflens has {[h['symbol'] for h in hot[:8]]}")
if not any("_Z" in h["symbol"] or h["symbol"].startswith("_R") for h in hot):
    ok("no hotspot shows a mangled name")
else:
    notok(f"mangled names shown: {[h['symbol'] for h in hot if '_Z' in h['symbol'] or h['symbol'].startswith('_R')][:3]}")

summary = json.load(open(json.load(open(f"{work}/{label}.native.json"))["artifact"]["summary_path"]))
prov = summary["provenance"]
qn = summary["quality"].get("names", {})
if qn.get("demangled", 0) > 0 and qn.get("undemangled") == 0:
    ok(f"quality.names counts {qn['demangled']} demangled functions of {qn['functions']}, none left mangled")
else:
    notok(f"quality.names: {qn}")
reader = prov["inputs"][0].get("reader")
if reader != "native":
    notok(f"the native reader was not the one that ran: {reader}")
a = open(json.load(open(f"{work}/{label}.native.json"))["artifact"]["stacks_path"]).read()
b = open(json.load(open(f"{work}/{label}.perf-script.json"))["artifact"]["stacks_path"]).read()
if a == b:
    ok("the native reader and perf script --no-demangle give the same stack table, byte for byte")
else:
    notok("the native and perf script stack tables differ")

seen = {}
for h in hot:
    key = (h.get("short_name") or h["symbol"], h["dso"])
    seen.setdefault(key, set()).add(h["symbol"])
shared = {k: v for k, v in seen.items() if len(v) > 1}
shorts = sum(1 for h in hot if "short_name" in h)
if not shared:
    ok(f"every shown name names one function ({shorts} short names)")
else:
    notok(f"one short name for several functions: {list(shared.items())[:2]}")

nm = {}
for line in open(f"{work}/{label}.nm"):
    p = line.split()
    if len(p) == 3 and p[1] in "tTwW":
        nm[p[2]] = p[0]
linked = [h for h in hot if h.get("linkage_name") and h["dso"] == binary][:6]
bad = []
for h in linked:
    addr = nm.get(h["linkage_name"])
    if not addr:
        bad.append(f"{h['linkage_name']} not in nm")
        continue
    r = subprocess.run([perflens, "symbolize", "--binary", binary, "--offsets", "0x" + addr.lstrip("0")],
                       capture_output=True, text=True)
    a0 = json.loads(r.stdout)["answers"][0] if r.returncode == 0 else {}
    if a0.get("function") != h["symbol"] or a0.get("linkage_name") != h["linkage_name"]:
        bad.append(f"{h['linkage_name']}: symbolize says {a0.get('function')} / {a0.get('linkage_name')}")
def tool(*args):
    r = subprocess.run([perflens, *args, "--analysis-id", aid, "--artifact-root", f"{work}/art-native"],
                       capture_output=True, text=True)
    return json.loads(r.stdout or r.stderr or "{}")
fails = []
for h in linked[:3]:
    g = tool("hotspot", "--hotspot-id", h["hotspot_id"])
    if g.get("linkage_name") != h["linkage_name"] or g.get("short_name") != h.get("short_name"):
        fails.append(f"get_hotspot {h['hotspot_id']}: {g.get('linkage_name')} {g.get('short_name')}")
    for key in ("short_name", "linkage_name"):
        if h.get(key):
            c = tool("callpaths", "--symbol", h[key])
            if "error" in c or not c.get("paths"):
                fails.append(f"get_call_paths({key}={h[key]}): {c.get('error')}")
if not fails:
    ok("get_hotspot shows the names too, and get_call_paths finds a function by its short or linkage name")
else:
    notok(f"names in get_hotspot/get_call_paths: {fails[:3]}")
if linked and not bad:
    ok(f"{len(linked)} linkage names are nm's symbols, and symbolize at their address answers the same names")
else:
    notok(f"linkage round trip: {bad[:3] or 'no hotspot with a linkage name'}")
PY
}

src="$REPO/tests/workloads"
for cxx in g++ clang++; do
	if ! command -v $cxx >/dev/null 2>&1; then
		skip "$name $cxx: not installed"
		continue
	fi
	if $cxx -O2 -g -fno-omit-frame-pointer -o "$WORK/b/cxx-$cxx" "$src/cxx_names.cc" 2>"$WORK/err"; then
		check "$cxx" "$WORK/b/cxx-$cxx"
	else
		notok "$name $cxx: build failed: $(oneline "$WORK/err")"
	fi
done
# Debian's rustc (1.63): v0 through -Z, which RUSTC_BOOTSTRAP allows.
if [ -x /usr/bin/rustc ]; then
	for m in legacy v0; do
		flag=""
		[ $m = v0 ] && flag="-Z symbol-mangling-version=v0"
		# shellcheck disable=SC2086
		if RUSTC_BOOTSTRAP=1 /usr/bin/rustc -O -g -C force-frame-pointers=yes $flag -o "$WORK/b/rust-$m" \
			"$src/rust_names.rs" 2>"$WORK/err"; then
			check "rust-$m" "$WORK/b/rust-$m"
		else
			notok "$name rust-$m: build failed: $(oneline "$WORK/err")"
		fi
	done
else
	skip "$name rust: Debian's rustc is not installed (tests/setup.sh)"
fi
