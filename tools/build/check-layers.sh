#!/bin/sh
# check-layers.sh - refuse an #include that crosses a layer the wrong way.
#
# Usage: LAYERS='...' sh tools/build/check-layers.sh [FILE...]
#        (make exports LAYERS from the Makefile's table; with no FILE every
#        tracked .c and .h file is checked)
#
# LAYERS has one line per folder, "FOLDER: ALLOWED...", where an allowed
# word is a folder (base, collectors, tools, tools/cli, sandbox, ...), a
# single header ("sandbox/sandbox.h") or "*".  A file's folder is its
# engine subsystem under tools/core/ (tools/core/symbols/x.c is "symbols"),
# else its directory (tools/cli, tools/lib, collectors/agentlink, mcp-server), else its top-level directory
# (tests, bench).  A quoted include either names a header of the file's own
# folder bare ("summary.h") or spells its folder ("store/summary.h").  The
# first offending include fails the run with the file, line and the rule.
set -eu
cd "$(dirname "$0")/../.."
if [ -z "${LAYERS:-}" ]; then
	echo "check-layers: LAYERS is empty: run it through make (make check-layers)" >&2
	exit 2
fi
if [ $# -eq 0 ]; then
	# shellcheck disable=SC2046  # one word per tracked file
	set -- $(git ls-files '*.c' '*.h' 2>/dev/null || find . -name '*.[ch]' | sed 's|^\./||')
fi
printf '%s\n' "$LAYERS" | awk -v files="$*" '
function folder_of(path,   n, p) {
	n = split(path, p, "/")
	if (p[1] == "tools" && p[2] == "core" && n >= 4) return p[3]
	if (p[1] == "tools" && p[2] == "cli") return "tools/cli"
	if (p[1] == "tools" && p[2] == "lib" && n >= 3) return "tools/lib"
	if (p[1] == "collectors" && p[2] == "agentlink" && n >= 3) return "collectors/agentlink"
	if (p[1] == "collectors" && p[2] == "fleet" && n >= 3) return "collectors/fleet"
	if (n == 1) return "."
	if (p[1] == "tests" || p[1] == "bench" || p[1] == "agent" || p[1] == "fuzz") return p[1]
	return p[1]
}
function target_of(inc,   p) {
	split(inc, p, "/")
	if (p[1] == "tools" && p[2] == "cli") return "tools/cli"
	if (p[1] == "tools" && p[2] == "lib") return "tools/lib"
	if (p[1] == "collectors" && p[2] == "agentlink") return "collectors/agentlink"
	if (p[1] == "collectors" && p[2] == "fleet") return "collectors/fleet"
	return p[1]
}
function allowed(from, inc, tgt,   words, n, i) {
	if (tgt == from) return 1
	n = split(rules[from], words, " ")
	for (i = 1; i <= n; i++)
		if (words[i] == "*" || words[i] == tgt || words[i] == inc) return 1
	return 0
}
/^[^ :]+:/ {
	key = $1; sub(/:$/, "", key); $1 = ""; rules[key] = $0; known[key] = 1
}
END {
	nf = split(files, list, " ")
	bad = 0
	for (f = 1; f <= nf; f++) {
		file = list[f]
		from = folder_of(file)
		dir = file; sub(/\/[^\/]*$/, "", dir)
		if (!(from in known)) continue
		lineno = 0
		while ((getline line < file) > 0) {
			lineno++
			if (line !~ /^[ \t]*#[ \t]*include[ \t]*"/) continue
			inc = line; sub(/^[^"]*"/, "", inc); sub(/".*$/, "", inc)
			if (inc !~ /\//) {
				if ((getline probe < (dir "/" inc)) < 0 && inc != "suites.h" && inc != "testlib.h") {
					printf "check-layers: %s:%d: \"%s\" is not in %s/: name its folder (\"FOLDER/%s\")\n", file, lineno, inc, dir, inc
					bad = 1
				}
				close(dir "/" inc)
				continue
			}
			tgt = target_of(inc)
			if (!allowed(from, inc, tgt)) {
				printf "check-layers: %s:%d: %s may not include \"%s\" (%s may use: %s)\n", file, lineno, from, inc, from, rules[from] == "" ? " nothing" : rules[from]
				bad = 1
			}
		}
		close(file)
	}
	exit bad
}'
