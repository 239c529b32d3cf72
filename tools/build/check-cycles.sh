#!/bin/sh
# check-cycles.sh - refuse source files that need each other.
#
# Usage: sh tools/build/check-cycles.sh OBJDIR [ALLOW]
#
# OBJDIR holds one program's objects, named after their sources
# (OBJDIR/collectors/collect.o for collectors/collect.c); objects whose
# source is gone (a stale build) are left out.  Run from the top folder.
# Reads the symbol tables of the objects under OBJDIR (nm: what each
# defines, what each leaves undefined), links each object to the objects
# that define what it uses, and finds the groups of files that reach each
# other (strongly connected components, Tarjan's algorithm).  A group of
# two or more files is a cycle: the shared part belongs in a module below
# both, or the caller passes a callback.  ALLOW (default
# tools/build/cycles.allow) lists the groups that are known and being broken,
# one a line, its files sorted and separated by spaces; a group not listed
# there, or larger than listed, fails the run with its files.  A listed
# group that is gone is reported, so the list only shrinks.
set -eu
objdir=$1
allow=${2:-$(dirname "$0")/cycles.allow}
[ -d "$objdir" ] || { echo "check-cycles: no folder $objdir (build first)" >&2; exit 2; }
objs=$(find "$objdir" -name '*.o' ! -path '*/tests/*' ! -path '*/gen/*' | sort | while read -r o; do
	src=${o#"$objdir"/}
	if [ -f "${src%.o}.c" ]; then printf '%s\n' "$o"; fi
done)
[ -n "$objs" ] || { echo "check-cycles: no object under $objdir" >&2; exit 2; }
# shellcheck disable=SC2086  # one word per object path
nm -A $objs 2>/dev/null | awk -v objdir="$objdir/" -v allowfile="$allow" '
function src(o) { sub("^" objdir, "", o); sub(/\.o$/, ".c", o); return o }
# Tarjan: index, lowlink, stack; recursion is fine at this graph size.
function visit(v,   i, w, n, comp, k, list) {
	idx[v] = low[v] = ++counter
	stack[++sp] = v; onstack[v] = 1
	n = nout[v]
	for (i = 1; i <= n; i++) {
		w = out[v, i]
		if (!(w in idx)) { visit(w); if (low[w] < low[v]) low[v] = low[w] }
		else if (onstack[w] && idx[w] < low[v]) low[v] = idx[w]
	}
	if (low[v] == idx[v]) {
		k = 0
		do { w = stack[sp--]; onstack[w] = 0; comp[++k] = w } while (w != v)
		if (k > 1) {
			list = sortjoin(comp, k)
			groups[++ngroups] = list
		}
	}
}
function sortjoin(a, n,   i, j, t, s) {
	for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j - 1] > a[j]; j--) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
	s = a[1]
	for (i = 2; i <= n; i++) s = s " " a[i]
	return s
}
{
	# "path/x.o:0000000000000010 T name" or "path/x.o:                 U name"
	split($0, parts, ":")
	obj = src(parts[1])
	files[obj] = 1
	type = $(NF - 1); name = $NF
	if (type == "U") uses[obj, name] = 1
	else if (type ~ /^[TDBRVWGSiu]$/) def[name] = obj
}
END {
	for (key in uses) {
		split(key, kv, SUBSEP)
		if ((kv[2] in def) && def[kv[2]] != kv[1] && !((kv[1], def[kv[2]]) in edge)) {
			edge[kv[1], def[kv[2]]] = 1
			out[kv[1], ++nout[kv[1]]] = def[kv[2]]
		}
	}
	for (f in files) if (!(f in idx)) visit(f)
	while ((getline line < allowfile) > 0)
		if (line !~ /^#/ && line != "") allowed[line] = 1
	bad = 0
	for (g = 1; g <= ngroups; g++) {
		if (groups[g] in allowed) { seen[groups[g]] = 1; continue }
		print "check-cycles: these files need each other (move the shared part below them, or pass a callback): " groups[g] > "/dev/stderr"
		bad = 1
	}
	# a listed group, all of whose files are here, that is gone
	for (a in allowed) if (!(a in seen)) {
		n = split(a, names, " "); mine = 1
		for (i = 1; i <= n; i++) if (!(names[i] in files)) mine = 0
		if (mine) print "check-cycles: no longer a cycle, remove it from " allowfile ": " a
	}
	if (!bad) print "check-cycles: " ngroups + 0 " known cycle group(s), no new one"
	exit bad
}'
