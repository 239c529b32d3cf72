"""classify_oracle.py - recompute classify_hotspots' figures from perf script text.

Usage: classify_oracle.py RULES.json PERF_SCRIPT.txt[.gz] CLASSIFY_RESULT.json...
(or imported: busy_gate.py reads samples and thread gates with it)

An independent implementation of the documented rule semantics
(schemas/classify-rules.schema.json): this script parses the perf script
text itself (not PerfLens's analysis), matches the rules' patterns with
Python's re, and sums sample periods per event:
  self_percent       leaf function matched
  inclusive_percent  any frame of the stack matched (once per stack)
  function_self_percent  per_function rules: the largest self share of one
                     matched function (symbol and DSO)
  event_percent      the event belongs to a whole_event set (100)
  unless             a function rule skips the stacks that any rule it
                     names matches (by that rule's functions alone, and
                     for a rule with a thread gate only in the threads
                     that pass it)
  thread             a rule's thread gate: it keeps the stacks of the
                     threads (comm, pid, tid) whose samples are at least
                     min_share_percent its stacks and that ran at least
                     min_core_percent of one CPU (cpu-clock/task-clock
                     periods over last - first sample time + one mean
                     period; unknown, so not tested, without times)
  samples            the event's sample count
  unknown_leaf_percent   leaf symbol is [unknown]
  unknown_frame_percent  any frame's symbol is [unknown]
  truncated_stack_percent  one frame that is not a root, or a root frame
                           [unknown] in [unknown] (events not recorded with
                           DWARF stacks)
  dwarf_truncated_stack_percent  events whose "# event :" header line says
                           STACK_USER (DWARF stacks): a stack with a user
                           frame (a module that is not the kernel's) and
                           no frame matching the roots
Every rule of every event in the results (candidates and below-threshold
quiet rules) is compared, within 0.001 points; a candidate must pass its
threshold and a quiet rule must not.  Prints one line per mismatch and
exits 1 on any; prints "checked N figures" and exits 0 otherwise.
"""
import gzip
import json
import re
import sys

FRAME = re.compile(r"^\s*([0-9a-fA-F]+)\s+(.*)$")
USER_MAPS = ("[vdso]", "[vsyscall]", "[heap]", "[stack]", "[anon", "[uprobes]",
             "[vectors]", "[sigpage]")


def kind_of(dso):
    """The frame kind, as perf names DSOs (see profile.h)."""
    if not dso:
        return "unknown"
    if dso.endswith("vmlinux"):
        return "kernel"
    if dso.startswith("/tmp/perf-") and dso.endswith(".map"):
        return "jit"
    if dso.startswith("["):
        if dso.startswith("[JIT"):
            return "jit"
        if dso == "[unknown]":
            return "unknown"
        if dso.startswith(USER_MAPS):
            return "user"
        return "kernel"
    return "user"


def parse_frame(rest):
    """'sym+0x1f (dso)' -> (sym, dso); a frame without a name is [unknown]."""
    sym, dso = rest, None
    if rest.endswith(")") and (rest.startswith("(") or " (" in rest):
        cut = rest.rindex("(")
        sym, dso = rest[:cut], rest[cut + 1:-1]
    sym = re.sub(r"\+0x[0-9a-fA-F]+$", "", sym.strip())
    return sym or "[unknown]", dso


def parse_header(line):
    """(event, period) of a sample header `comm [pid/]tid [time:] [period]
    event:`; the period is read only after a time (else 1); None for lines
    that are not headers."""
    toks = line.split()
    for i in range(len(toks) - 1, 0, -1):
        t = toks[i]
        if t.endswith(":") and not re.match(r"^[0-9.]+:$", t):
            prev = toks[i - 1]
            if prev.isdigit() and i >= 2 and re.match(r"^[0-9.]+:$", toks[i - 2]):
                return t[:-1], int(prev)
            return t[:-1], 1
    return None


DWARF_EVENTS = set()
THREAD = re.compile(r"^(.*?)\s+(?:(-?\d+)/)?(-?\d+)\s+(?:\[\d+\]\s+)?(\d+)\.(\d+):\s")


def thread_and_time(line):
    """((comm, pid, tid), time in ns or None) of a sample header."""
    m = THREAD.match(line)
    if not m:
        return (line.split()[0] if line.split() else "", None, None), None
    ns = int(m.group(4)) * 10**9 + int(m.group(5).ljust(9, "0")[:9])
    return (m.group(1).strip(), m.group(2), m.group(3)), ns


THREADS = {}  # id(frames list) -> (thread key, time ns or None)


def read_samples(path):
    """[(event, period, [(sym, dso), ...] root first)]; the events whose
    header line says they were recorded with DWARF stacks go in
    DWARF_EVENTS; each sample's thread and time in THREADS."""
    samples, cur = [], None
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", errors="replace") as f:
        for raw in f:
            line = raw.rstrip("\n")
            if not line.strip():
                if cur:
                    samples.append(cur)
                cur = None
                continue
            if line.startswith("#"):
                m = re.match(r"^# event : name = ([^,]+),", line)
                if m and "STACK_USER" in line and re.search(r"sample_stack_user[ =:]+[1-9]", line):
                    DWARF_EVENTS.add(m.group(1))
                continue
            m = FRAME.match(line) if cur is not None else None
            if m and (line[0] in " \t" or line.endswith(")")):
                cur[2].append(parse_frame(m.group(2)))
                continue
            hdr = parse_header(line)
            if hdr:
                if cur:
                    samples.append(cur)
                cur = (hdr[0], hdr[1], [], thread_and_time(line))
    if cur:
        samples.append(cur)
    out = []
    for e, p, fr, tt in samples:
        if fr:
            fr = list(reversed(fr))
            THREADS[id(fr)] = tt
            out.append((e, p, fr))
    return out


def matcher_hits(m, sym, dso, kind):
    if "kinds" in m and kind not in m["kinds"]:
        return False
    if "symbol" in m and not re.search(m["symbol"], sym):
        return False
    if "dso" in m and not (dso is not None and re.search(m["dso"], dso)):
        return False
    if "not_symbol" in m and re.search(m["not_symbol"], sym):
        return False
    return not ("not_dso" in m and dso is not None and re.search(m["not_dso"], dso))


def func_matches(rule, sym, dso):
    kind = kind_of(dso)
    return any(matcher_hits(m, sym, dso, kind) for m in rule["match"]["functions"])


def gate_pass(rules, rule, event, samples):
    """The threads that pass `rule`'s thread gate on `event` (all of them
    when it has none)."""
    gate = rule["match"].get("thread")
    if not gate:
        return None
    others = [r for r in rules["rules"] if r["id"] in rule["match"].get("unless", [])]
    total, mine, times, cache = {}, {}, {}, {}

    def matches(r, f):
        if (r["id"], f) not in cache:
            cache[(r["id"], f)] = func_matches(r, *f)
        return cache[(r["id"], f)]
    for e, p, fr in samples:
        if e != event:
            continue
        key, ns = THREADS[id(fr)]
        total[key] = total.get(key, 0) + p
        hit = any(matches(rule, f) for f in fr) and not any(matches(o, f) for o in others for f in fr)
        if hit:
            mine[key] = mine.get(key, 0) + p
        if ns is not None:
            times.setdefault(key, []).append((ns, p))
    ns_unit = re.match(r"^(cpu-clock|task-clock)(:|$)", event) is not None
    ok = set()
    for key, w in mine.items():
        share = round(w * 100.0 / total[key] * 1e4) / 1e4
        core = None
        t = times.get(key, [])
        if ns_unit and len(t) >= 2:
            period = sum(p for _, p in t)
            span = max(n for n, _ in t) - min(n for n, _ in t) + period / len(t)
            core = min(100.0, round(100.0 * period / span * 1e4) / 1e4)
        if share >= gate["min_share_percent"] and (core is None or core >= gate["min_core_percent"]):
            ok.add(key)
    return ok


def expected(rules, rule, event, samples):
    """The rule's figure on `event`: (name, value) or None if not applicable."""
    sets = rules["event_sets"]
    match = rule["match"]
    in_set = lambda names: any(re.search(sets[n]["pattern"], event) for n in names)
    if "metric" not in match and in_set(match.get("whole_event", [])):
        return "event_percent", 100.0
    evs = [(p, fr) for e, p, fr in samples if e == event]
    total = sum(p for p, _ in evs)
    passed = gate_pass(rules, rule, event, samples) if "metric" not in match else None
    pct = lambda w: round(w * 100.0 / total * 1e4) / 1e4 if total else 0.0
    metric = match.get("metric")
    # Each truncated-stack metric judges the stacks of its own recording
    # kind; the other is not applicable.
    if (metric == "truncated_stack_percent") == (event in DWARF_EVENTS) and metric in (
            "truncated_stack_percent", "dwarf_truncated_stack_percent"):
        return "not_applicable", float("nan")
    if metric == "samples":
        return "samples", float(len(evs))
    if metric == "unknown_leaf_percent":
        return metric, pct(sum(p for p, fr in evs if fr[-1][0] == "[unknown]"))
    if metric == "unknown_frame_percent":
        return metric, pct(sum(p for p, fr in evs if any(s == "[unknown]" for s, _ in fr)))
    if metric == "dwarf_truncated_stack_percent":
        def user(sym, dso):
            return dso is not None and kind_of(dso) in ("user", "jit")

        def cut(fr):
            return (any(user(s, d) for s, d in fr) and
                    not any(re.search(match["roots"], s) for s, _ in fr))
        return metric, pct(sum(p for p, fr in evs if cut(fr)))
    if metric == "truncated_stack_percent":
        def cut(fr):
            if len(fr) == 1 and not re.search(match["roots"], fr[0][0]):
                return True
            return fr[0][0] == "[unknown]" and fr[0][1] in (None, "[unknown]")
        return metric, pct(sum(p for p, fr in evs if cut(fr)))
    cache = {}

    def hit(frame):
        if frame not in cache:
            cache[frame] = func_matches(rule, *frame)
        return cache[frame]
    # unless: a stack any frame of which a named rule matches is not this
    # rule's (the named rules' own matches, before their exclusions).
    others = [r for r in rules["rules"] if r["id"] in match.get("unless", [])]
    if others:
        gates = {r["id"]: gate_pass(rules, r, event, samples) for r in others}
        ocache = {}

        def matches(r, f):
            if (r["id"], f) not in ocache:
                ocache[(r["id"], f)] = func_matches(r, *f)
            return ocache[(r["id"], f)]

        def excluded(fr):
            for r in others:
                g = gates[r["id"]]
                if (g is None or THREADS[id(fr)][0] in g) and any(matches(r, f) for f in fr):
                    return True
            return False
        evs = [(p, fr) for p, fr in evs if not excluded(fr)]
    if passed is not None:
        evs = [(p, fr) for p, fr in evs if THREADS[id(fr)][0] in passed]
    if match.get("per_function"):
        per = {}
        for p, fr in evs:
            for f in ([fr[-1]] if match["weight"] == "self" else set(fr)):
                if hit(f):
                    per[f] = per.get(f, 0) + p
        return "function_%s_percent" % match["weight"], pct(max(per.values(), default=0))
    if match["weight"] == "self":
        return "self_percent", pct(sum(p for p, fr in evs if hit(fr[-1])))
    return "inclusive_percent", pct(sum(p for p, fr in evs if any(hit(f) for f in fr)))


def threshold_of(rule):
    """(op, threshold) as the rules document states them."""
    m = rule["match"]
    if "below" in m:
        return "below", m["below"]
    return "at_least", m["at_least"] if "at_least" in m else m["min_percent"]


def main():
    rules = json.load(open(sys.argv[1]))
    by_id = {r["id"]: r for r in rules["rules"]}
    samples = read_samples(sys.argv[2])
    bad = checked = 0
    for path in sys.argv[3:]:
        res = json.load(open(path))
        for c in res["candidates"]:
            rule = by_id[c["rule"]["id"]]
            name, value = expected(rules, rule, c["event"], samples)
            fig = c["figure"]
            checked += 1
            if name != fig["name"] or abs(value - fig["value"]) > 1e-3:
                bad += 1
                print("%s: %s on %s: PerfLens %s %.4f, oracle %s %.4f" % (
                    path, rule["id"], c["event"], fig["name"], fig["value"], name, value))
            passes = value < fig["threshold"] if fig["op"] == "below" else value >= fig["threshold"]
            if not passes:
                bad += 1
                print("%s: %s fired on %s below its threshold" % (path, rule["id"], c["event"]))
        # quiet: per event, {rule: figure} of the rules below threshold; their
        # operator and threshold come from the rules document itself.
        for group in res["quiet"]:
            for rid, got in group["below_threshold"].items():
                rule = by_id[rid]
                name, value = expected(rules, rule, group["event"], samples)
                checked += 1
                if name == "not_applicable" or abs(value - got) > 1e-3:
                    bad += 1
                    print("%s: quiet %s on %s: PerfLens %.4f, oracle %.4f" % (
                        path, rid, group["event"], got, value))
                op, threshold = threshold_of(rule)
                fires = value < threshold if op == "below" else value >= threshold and value > 0
                if fires:
                    bad += 1
                    print("%s: %s stayed quiet on %s though it passes its threshold" % (path, rid, group["event"]))
    print("checked %d figures" % checked)
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
