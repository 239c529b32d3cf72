"""vm_craft.py - perf script text of a paravirtualized guest, and the
check of vm_irq_enable's stated attribution against it.

  vm_craft.py craft DIR        writes DIR/vm.txt, DIR/vm-low.txt, DIR/bare.txt
  vm_craft.py check RULES TXT RESULT.json REPORT.md|-

craft: cpu-clock samples (1 ms periods, two threads) whose kernel paths end
on the guest's irq-enable where it re-enabled interrupts:
  vm.txt      40 write() samples ending _raw_spin_unlock_irqrestore >
              pvm_irq_enable; 20 page faults ending handle_mm_fault >
              pvm_irq_enable; 10 getppid() ending __x64_sys_getppid >
              __raw_callee_save_pvm_irq_enable > pvm_irq_enable; 10 bare
              pvm_irq_enable (no caller); 100 user compute samples.
  vm-low.txt  the same with only 8 irq-enable samples (the write path) in
              172: below the rule's 10%.
  bare.txt    the same paths as vm.txt without the irq-enable frames (the
              guest on bare metal).
check: recomputes, with classify_oracle.py's reading of the text and the
rules' own patterns, the irq-enable samples' callers (the nearest frame
the rule does not match), the inclusive hotspot rules of the path from
the root to that caller, and the share without a caller, and compares
them with the candidate's "interrupted" (0.01 points); the figures are
not moved (the candidate's top hotspot keeps its self share, equal to the
rule's figure); the report states it in Data quality.  For a file whose
rule must stay quiet, RESULT must hold no vm_irq_enable candidate and no
"interrupted" anywhere.  Prints one ok / not ok line.
"""
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import classify_oracle as co  # noqa: E402

K = "[kernel.kallsyms]"
PROG = "/opt/guest/app"
WRITE = [("main", PROG), ("flush_log", PROG), ("entry_SYSCALL_64_after_hwframe", K), ("do_syscall_64", K),
         ("__x64_sys_write", K), ("ksys_write", K), ("vfs_write", K), ("pipe_write", K),
         ("_raw_spin_unlock_irqrestore", K)]
FAULT = [("main", PROG), ("fill_table", PROG), ("asm_exc_page_fault", K), ("exc_page_fault", K),
         ("do_user_addr_fault", K), ("handle_mm_fault", K)]
PPID = [("main", PROG), ("ask_parent", PROG), ("entry_SYSCALL_64_after_hwframe", K), ("do_syscall_64", K),
        ("__x64_sys_getppid", K), ("__raw_callee_save_pvm_irq_enable", K)]
COMPUTE = [("start_thread", PROG), ("crunch", PROG)]
IRQ = ("pvm_irq_enable", K)


def craft(path, n_write, n_fault, n_ppid, n_bare, irq=True):
    out, t = [], 1000 * 10**6

    def sample(tid, stack):
        nonlocal t
        t += 10**6
        out.append("app  100/%d  %d.%06d:    1000000 cpu-clock: \n" % (tid, t // 10**9, (t % 10**9) // 1000))
        for i, (sym, dso) in enumerate(reversed(stack)):
            out.append("\t%16x %s+0x%x (%s)\n" % (0xffffffff81000000 + 16 * i if dso == K else 0x401000 + 16 * i,
                                                 sym, 4, dso))
        out.append("\n")
    tail = [IRQ] if irq else []
    for stack, n in ((WRITE, n_write), (FAULT, n_fault)):
        for _ in range(n):
            sample(100, stack + tail)
    for _ in range(n_ppid):
        sample(100, PPID + tail if irq else PPID[:-1])
    for _ in range(n_bare if irq else 0):
        sample(100, [IRQ])
    for _ in range(100):
        sample(101, COMPUTE)
    open(path, "w").write("".join(out))


def check(rules_path, txt, res_path, report):
    rules = json.load(open(rules_path))
    rule = next(r for r in rules["rules"] if r["id"] == "vm_irq_enable")
    res = json.load(open(res_path))
    samples = [(p, fr) for e, p, fr in co.read_samples(txt) if e == "cpu-clock"]
    total = sum(p for p, _ in samples)
    cand = next((c for c in res["candidates"] if c["rule"]["id"] == "vm_irq_enable"), None)
    mine = [(p, fr) for p, fr in samples if co.func_matches(rule, *fr[-1])]
    share = round(sum(p for p, _ in mine) * 100.0 / total * 1e4) / 1e4 if total else 0
    if share < rule["match"]["min_percent"]:
        leaked = "interrupted" in json.dumps(res)
        errs = (["vm_irq_enable fired"] if cand else []) + (["an interrupted block appears"] if leaked else [])
        return errs, "quiet at %.2f%% (threshold %g%%), no interrupted block" % (share, rule["match"]["min_percent"])
    if not cand:
        return ["vm_irq_enable did not fire at %.2f%%" % share], ""
    n = sum(p for p, _ in mine)
    callers, by_rule, none = {}, {}, 0
    hot = [r for r in rules["rules"] if r["group"] == "hotspot" and "metric" not in r["match"] and
           r["match"].get("weight") == "inclusive" and r["id"] != rules["own_code_rule"] and
           not any(re.search(rules["event_sets"][s]["pattern"], "cpu-clock") for s in r["match"].get("whole_event", [])) and
           not any(re.search(rules["event_sets"][s]["pattern"], "cpu-clock") for s in r["match"].get("skip_events", [])) and
           any(re.search(rules["event_sets"][s]["pattern"], "cpu-clock") for s in r["match"].get("events", []))]
    for p, fr in mine:
        d = len(fr) - 1
        while d >= 0 and co.func_matches(rule, *fr[d]):
            d -= 1
        if d < 0:
            none += p
            continue
        callers[fr[d][0]] = callers.get(fr[d][0], 0) + p
        path = fr[:d + 1]
        for r in hot:
            others = [o for o in rules["rules"] if o["id"] in r["match"].get("unless", [])]
            if any(co.func_matches(r, *f) for f in path) and not any(co.func_matches(o, *f) for o in others
                                                                      for f in path):
                by_rule[r["id"]] = by_rule.get(r["id"], 0) + p
    pct = lambda w: round(w * 100.0 / n * 1e4) / 1e4
    it = cand.get("interrupted") or {}
    errs = []
    want_callers = sorted(callers.items(), key=lambda kv: (-kv[1], kv[0]))[:3]
    got_callers = [(c["symbol"], c["of_candidate_percent"]) for c in it.get("callers", [])]
    if [s for s, _ in got_callers] != [s for s, _ in want_callers] or any(
            abs(g - pct(w)) > 0.01 for (_, g), (_, w) in zip(got_callers, want_callers)):
        errs.append("callers %s, oracle %s" % (got_callers, [(s, pct(w)) for s, w in want_callers]))
    got_rules = {x["rule"]: x["of_candidate_percent"] for x in it.get("rules", [])}
    if set(got_rules) != set(by_rule) or any(abs(got_rules[k] - pct(w)) > 0.01 for k, w in by_rule.items()):
        errs.append("rules %s, oracle %s" % (got_rules, {k: pct(w) for k, w in by_rule.items()}))
    if abs(it.get("without_caller_percent", -1) - pct(none)) > 0.01:
        errs.append("without caller %s, oracle %s" % (it.get("without_caller_percent"), pct(none)))
    top = cand["hotspots"][0]
    if top["symbol"] != "pvm_irq_enable" or abs(top["self_percent"] - share) > 0.01 or \
            abs(cand["figure"]["value"] - share) > 0.01:
        errs.append("the figures moved: top %s self %s, figure %s, oracle %.4f" % (
            top["symbol"], top["self_percent"], cand["figure"]["value"], share))
    if report != "-":
        md = open(report).read().split("## Observations")[0]
        line = next((l for l in md.splitlines() if "interrupts off" in l), "")
        for sym, w in want_callers:
            if "`%s` %.2f%%" % (sym, pct(w)) not in line:
                errs.append("the report's Data quality lacks `%s` %.2f%%: %r" % (sym, pct(w), line[:300]))
    return errs, "vm_irq_enable %.2f%%, interrupted: callers %s; rules %s; %.1f%% without a caller%s" % (
        share, ", ".join("%s %.1f%%" % (s, pct(w)) for s, w in want_callers),
        ", ".join("%s %.1f%%" % (k, pct(w)) for k, w in sorted(by_rule.items())), pct(none),
        "; the report says so" if report != "-" else "")


if sys.argv[1] == "craft":
    d = sys.argv[2]
    craft(os.path.join(d, "vm.txt"), 40, 20, 10, 10)
    craft(os.path.join(d, "vm-low.txt"), 8, 0, 0, 0)
    craft(os.path.join(d, "bare.txt"), 40, 20, 10, 10, irq=False)
else:
    errs, text = check(*sys.argv[2:6])
    name = os.path.basename(sys.argv[3])
    if errs:
        print("not ok - classify %s: %s" % (name, "; ".join(errs)))
        sys.exit(1)
    print("ok - classify %s: %s" % (name, text))
