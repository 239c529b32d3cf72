"""check_skill.py - is FOLDER a valid Agent Skill?

Usage: check_skill.py FOLDER   (exit 0 valid, 1 with the reason)
SKILL.md must open with YAML front matter whose name equals the folder
name (1-64 of [a-z0-9-], no leading, trailing or double hyphen) and whose
description is 1-1024 characters; only the keys the Agent Skills format
knows; a body after it.  The subset of YAML a front matter uses: `key:
value` lines, values optionally quoted, indented lines continuing the
previous value.
"""
import os
import re
import sys

folder = sys.argv[1].rstrip("/")
text = open(os.path.join(folder, "SKILL.md"), encoding="utf-8").read()
lines = text.split("\n")
assert lines[0] == "---", "SKILL.md must open with a --- line"
end = lines.index("---", 1)
meta, key = {}, None
for line in lines[1:end]:
    if not line.strip() or line.lstrip().startswith("#"):
        continue
    if line[0] in " \t" and key:
        meta[key] += " " + line.strip()
        continue
    m = re.match(r"^([A-Za-z_][A-Za-z0-9_-]*):(?:\s+(.*))?$", line)
    assert m, "not a key: value line: %r" % line
    key, value = m.group(1), (m.group(2) or "").strip()
    assert key not in meta, "duplicate key " + key
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
        value = value[1:-1]
    meta[key] = value
allowed = {"name", "description", "license", "compatibility", "metadata", "allowed-tools"}
assert set(meta) <= allowed, "unknown keys: %s" % (set(meta) - allowed)
name, desc = meta.get("name", ""), meta.get("description", "")
assert name == os.path.basename(folder), "name %r is not the folder name" % name
assert re.fullmatch(r"[a-z0-9-]{1,64}", name), "bad name %r" % name
assert not name.startswith("-") and not name.endswith("-") and "--" not in name, name
assert desc and len(desc) <= 1024, "description is empty or %d chars" % len(desc)
assert len(meta.get("compatibility", "")) <= 500, "compatibility over 500 chars"
assert text[text.index("\n---", 3) + 4:].strip(), "empty body"
