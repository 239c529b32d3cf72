# test_install.sh - `make install` and `make uninstall` into a temporary
# DESTDIR with PREFIX=/usr, as a packager runs them.
#
# Oracles: the file system (every binary, man page, doc and Skill file in
# its GNU place, modes 755/644, the Skill and docs byte-identical to the
# repository's), man(1) rendering the man pages (man-db), the installed
# binaries run from their installed path (versions, an analysis of the
# bundled capture with the id the build's binary gives, install-skill
# writing the same Skill as the installed copy), and after uninstall no
# file left under DESTDIR.
# run.sh: no-asan: make install's file layout, the same for every build
. tests/integration/lib.sh
if ! command -v help2man >/dev/null; then
	skip "make install: help2man is not installed (apt-get install help2man): the man pages need it"
	exit 0
fi
D="$WORK/dest"
if ! make -s BUILD="$BUILD" PREFIX=/usr DESTDIR="$D" install >"$WORK/make.out" 2>&1; then
	notok "make install PREFIX=/usr DESTDIR=...: $(oneline "$WORK/make.out")"
	exit 0
fi
ok "make install PREFIX=/usr DESTDIR=... succeeds"
bad=""
for f in usr/bin/perflens:755 usr/bin/perflens-mcp:755 usr/share/man/man1/perflens.1:644 \
	usr/share/man/man1/perflens-mcp.1:644 usr/share/doc/perflens/README.md:644 \
	usr/share/doc/perflens/agents.md:644 usr/share/doc/perflens/json-rpc.md:644 \
	usr/share/perflens/skill/perflens-performance-analysis/SKILL.md:644; do
	path=${f%:*} mode=${f#*:}
	[ -f "$D/$path" ] && [ "$(stat -c %a "$D/$path")" = "$mode" ] || bad="$bad $path"
done
[ -z "$bad" ] && ok "binaries, man pages, docs and the Skill are in their places with modes 755/644" || notok "missing or wrong mode:$bad"
diffs=""
for f in $(cd "$REPO" && find skill -name '*.md'); do
	cmp -s "$REPO/$f" "$D/usr/share/perflens/$f" || diffs="$diffs $f"
done
for f in $(cd "$REPO" && ls docs/*.md README.md); do
	cmp -s "$REPO/$f" "$D/usr/share/doc/perflens/$(basename "$f")" || diffs="$diffs $f"
done
[ -z "$diffs" ] && ok "every Skill file and doc is installed as it is in the repository" || notok "differ:$diffs"
for m in perflens perflens-mcp; do
	if MANWIDTH=100 man -l "$D/usr/share/man/man1/$m.1" >"$WORK/$m.man" 2>"$WORK/err" &&
		grep -q "^NAME" "$WORK/$m.man" && grep -q -- "--allowed-root" "$WORK/$m.man"; then
		ok "man -l renders $m.1 (NAME, and the options of $m --help)"
	else
		notok "man $m.1: $(oneline "$WORK/err") $(head -c 200 "$WORK/$m.man")"
	fi
done
v=$("$D/usr/bin/perflens" --version) && v2=$("$D/usr/bin/perflens-mcp" --version) &&
	[ "$v" = "$("$PERFLENS" --version)" ] && ok "the installed binaries run ($v; $v2)" || notok "installed --version: $v $v2"
"$D/usr/bin/perflens" analyze --input "$REPO/fixtures/device-x86/chunk_000.txt.gz" --artifact-root "$WORK/a1" >"$WORK/i.json" 2>"$WORK/err"
"$PERFLENS" analyze --input "$REPO/fixtures/device-x86/chunk_000.txt.gz" --artifact-root "$WORK/a2" >"$WORK/b.json" 2>>"$WORK/err"
[ -s "$WORK/i.json" ] && [ "$(jget "$WORK/i.json" analysis_id)" = "$(jget "$WORK/b.json" analysis_id)" ] &&
	ok "the installed perflens analyzes the bundled capture to the build's analysis id" || notok "installed analyze: $(oneline "$WORK/err")"
mkdir -p "$WORK/proj"
if "$D/usr/bin/perflens" install-skill --project "$WORK/proj" >"$WORK/s.out" 2>"$WORK/err"; then
	sk=$(find "$WORK/proj" -name SKILL.md | head -1)
	[ -n "$sk" ] && cmp -s "$sk" "$D/usr/share/perflens/skill/perflens-performance-analysis/SKILL.md" &&
		ok "the installed install-skill writes the Skill installed under share/perflens" ||
		notok "install-skill wrote $sk, not the installed Skill"
else
	notok "installed install-skill: $(oneline "$WORK/err")"
fi
if make -s BUILD="$BUILD" PREFIX=/usr DESTDIR="$D" uninstall >"$WORK/make.out" 2>&1; then
	left=$(find "$D" -type f | sed "s#^$D##")
	[ -z "$left" ] && ok "make uninstall removes every installed file" || notok "make uninstall left:$left"
else
	notok "make uninstall: $(oneline "$WORK/make.out")"
fi
