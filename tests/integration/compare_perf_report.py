#!/usr/bin/env python3
"""compare_perf_report.py - PerfLens hotspot percentages vs `perf report`.

usage: compare_perf_report.py SUMMARY_JSON SELF_TXT CHILDREN_TXT
           [--threshold PCT] [--tolerance PP] [--event NAME]

SUMMARY_JSON  the summary artifact `perflens analyze` wrote
SELF_TXT      perf report --stdio --no-children --sort sym -g none
CHILDREN_TXT  perf report --stdio --children --sort sym -g none

perf report names a frame without a symbol by its address (0x... or bare hex) and
PerfLens keeps "[unknown]", so only named symbols are compared.  perf
report keeps one line per symbol *address range* (the same name in two
DSOs gives two lines) and PerfLens one function per (symbol, DSO), so both
sides are summed by symbol name.  Every name at or above the threshold
(0.5%) in either tool must agree within the tolerance (0.1 percentage
points); a name missing on one side counts as 0% there.  The totals
(sample count, event count) in perf report's header must equal PerfLens's.

Prints one result line per check, then '#'-led details:
  totals ok|fail samples=N period=N
  self ok|fail worst=D pp at SYM (perf A%, perflens B%); N symbols >= 0.5%
  children ok|fail ...
Exit status 0 when every check passes, 1 otherwise, 2 on bad input.
"""
import json
import re
import sys

SELF_RE = re.compile(r'^\s*(\d+(?:\.\d+)?)%\s+\[(.)\]\s(.*)$')
CHILD_RE = re.compile(r'^\s*(\d+(?:\.\d+)?)%\s+(\d+(?:\.\d+)?)%\s+\[(.)\]\s(.*)$')
# perf abbreviates counts of 1000 and more ("Samples: 1K"): the unit is
# kept, and perflens' exact count is compared as perf would print it.
SAMPLES_RE = re.compile(r"^# Samples: (\d+)([KMG]?)\S*\s+of event '([^']*)'")
UNITS = {'': 1, 'K': 1000, 'M': 1000 ** 2, 'G': 1000 ** 3}
COUNT_RE = re.compile(r'^# Event count \(approx\.\): (\d+)')
# perf prints an unresolved frame as its address, with or without 0x
# (e.g. 0000000000000000 for a zero return address).
ADDR_RE = re.compile(r'^(0x)?[0-9a-fA-F]{8,}$')


def named(sym):
    return bool(sym) and sym != '[unknown]' and not ADDR_RE.match(sym)


def parse_report(path, children):
    """-> (header dict, {symbol: percent}); percents of one name summed."""
    header, out = {}, {}
    with open(path, encoding='utf-8', errors='replace') as f:
        for line in f:
            line = line.rstrip('\n')
            m = SAMPLES_RE.match(line)
            if m:
                header['samples'] = int(m.group(1))
                header['samples_unit'] = m.group(2)
                header['event'] = m.group(3)
                continue
            m = COUNT_RE.match(line)
            if m:
                header['period'] = int(m.group(1))
                continue
            if line.startswith('#') or not line.strip():
                continue
            m = (CHILD_RE if children else SELF_RE).match(line)
            if not m:
                continue  # callchain or other decoration
            pct = float(m.group(1))
            sym = m.group(m.lastindex).rstrip()
            if named(sym):
                out[sym] = out.get(sym, 0.0) + pct
    return header, out


def load_perflens(path, event):
    with open(path, encoding='utf-8') as f:
        s = json.load(f)
    funcs = s['functions']
    views = s['views']
    if event is not None:
        views = [v for v in views if v['event'] == event]
    if len(views) != 1:
        raise ValueError('want one view for event %r, found %s' %
                         (event, [v['event'] for v in s['views']]))
    v = views[0]
    total = v['total']
    self_pct, incl_pct = {}, {}
    problems = {'self': [], 'inclusive': []}
    for h in v['hotspots']:
        fn = funcs[h['function']]
        sym = fn.get('symbol')
        # The percent must be the period share of the event total.
        for mode in ('self', 'inclusive'):
            want = 100.0 * h[mode]['period'] / total['period'] if total['period'] else 0.0
            if abs(h[mode]['percent'] - want) > 0.0001:
                problems[mode].append('%s %s percent %.4f is not period share %.4f' %
                                (sym, mode, h[mode]['percent'], want))
        if not named(sym):
            continue
        self_pct[sym] = self_pct.get(sym, 0.0) + h['self']['percent']
        incl_pct[sym] = incl_pct.get(sym, 0.0) + h['inclusive']['percent']
    return total, self_pct, incl_pct, problems


def compare(mode, perf, mine, threshold, tolerance, problems):
    worst, worst_sym, checked, bad = 0.0, None, 0, []
    for sym in sorted(set(perf) | set(mine)):
        a, b = perf.get(sym, 0.0), mine.get(sym, 0.0)
        if a < threshold and b < threshold:
            continue
        checked += 1
        d = abs(a - b)
        if worst_sym is None or d > worst:
            worst, worst_sym = d, sym
        if d > tolerance:
            bad.append((d, sym, a, b))
    passed = not bad and not problems and checked > 0
    if worst_sym is None:
        where = 'no symbol >= %.2f%%' % threshold
    else:
        where = 'at %s (perf %.2f%%, perflens %.4f%%)' % (
            worst_sym, perf.get(worst_sym, 0.0), mine.get(worst_sym, 0.0))
    print('%s %s worst=%.4f pp %s; %d symbols >= %.2f%%' %
          (mode, 'ok' if passed else 'fail', worst, where, checked, threshold))
    for d, sym, a, b in sorted(bad, reverse=True):
        print('#   %s MISMATCH %-40s perf %7.2f%%  perflens %8.4f%%  diff %.4f pp'
              % (mode, sym, a, b, d))
    for p in problems:
        print('#   %s PROBLEM %s' % (mode, p))
    return passed


def main(argv):
    args, opts = [], {'--threshold': 0.5, '--tolerance': 0.1, '--event': None}
    it = iter(argv[1:])
    for a in it:
        if a in opts:
            v = next(it, None)
            if v is None:
                print('%s needs a value' % a, file=sys.stderr)
                return 2
            opts[a] = v if a == '--event' else float(v)
        else:
            args.append(a)
    if len(args) != 3:
        print(__doc__.split('\n\n')[1], file=sys.stderr)
        return 2
    summary, self_txt, child_txt = args
    threshold, tolerance = opts['--threshold'], opts['--tolerance']
    try:
        sh, perf_self = parse_report(self_txt, children=False)
        ch, perf_incl = parse_report(child_txt, children=True)
        event = opts['--event'] or sh.get('event')
        total, my_self, my_incl, problems = load_perflens(summary, event)
    except (OSError, ValueError, KeyError, IndexError, TypeError) as e:
        print('bad input: %s' % e)
        return 2

    ok = True
    def as_perf_prints(n, unit):
        # perf's convert_unit(): divide by 1000 while above 1000, truncating
        return n // UNITS[unit] if unit else n

    tot_ok = all(h.get('samples') == as_perf_prints(total['samples'], h.get('samples_unit', '')) and
                 h.get('period') == total['period'] for h in (sh, ch))
    print('totals %s samples=%s/%s period=%s/%s (perf/perflens)' %
          ('ok' if tot_ok else 'fail', '%s%s' % (sh.get('samples'), sh.get('samples_unit', '')), total['samples'],
           sh.get('period'), total['period']))
    if not tot_ok:
        print('#   totals perf --children header: samples=%s period=%s' %
              (ch.get('samples'), ch.get('period')))
    ok &= tot_ok
    ok &= compare('self', perf_self, my_self, threshold, tolerance,
                  problems['self'])
    ok &= compare('children', perf_incl, my_incl, threshold, tolerance,
                  problems['inclusive'])
    return 0 if ok else 1


if __name__ == '__main__':
    sys.exit(main(sys.argv))
