// viewer_views.mjs - the viewer's timeline, frame menu, sandwich and URL
// state in Debian's Chromium (puppeteer-core), on the two-phase workload's
// recording (test_viewer_views.sh).
//
//   node viewer_views.mjs CONFIG.json
//
// CONFIG: {base, login, chromium, out, id, event, data (the perf.data),
// repo}.  The oracles: perf report --time on the same perf.data for the
// brushed window (every symbol >= 1% within 0.1 pp), and the tools'
// answers under the same view (list_hotspots, get_hotspot), asked through
// the viewer's API in another fetch than the page's.  Prints "ok - ..." /
// "not ok - ..." lines and saves screenshots into CONFIG.out.
import { readFileSync, writeFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { tap, launch, login, rendered, act, shotter } from './browser_common.mjs';

const cfg = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const {check, failed} = tap('viewer views');
const shot = shotter(cfg.out);
const tool = (page, name, args) => page.evaluate(async (name, args) => {
  const r = await fetch('/viewer/api/call', {method: 'POST', headers: {'Content-Type': 'application/json'},
    body: JSON.stringify({tool: name, arguments: args})});
  const b = await r.json();
  return b.error ? {error: b.error} : b.result;
}, name, args);
// The hotspot table: {symbol: self percent}.
const table = page => page.$$eval('#hotspots tbody tr', rows => Object.fromEntries(rows.map(r =>
  [r.children[1].textContent, parseFloat(r.children[3].textContent)])));
// perf report --time WINDOW on the recording: {symbol: self percent}.
function perfReport(perfTime) {
  const rep = path.join(cfg.out, 'report.txt');
  writeFileSync(rep, execFileSync('perf', ['report', '-i', cfg.data, '--stdio', '--no-children', '--sort', 'sym',
    '-g', 'none', '--percent-limit', '0', '--time', perfTime], {maxBuffer: 64 << 20, stdio: ['ignore', 'pipe', 'ignore']}));
  return JSON.parse(execFileSync('python3', ['-c',
    'import json,sys; sys.path.insert(0, sys.argv[1]); from compare_perf_report import parse_report; ' +
    'h, s = parse_report(sys.argv[2], False); print(json.dumps({"header": h, "shares": s}))',
    path.join(cfg.repo, 'tests/integration'), rep]).toString());
}
// The flame graph's widest node named `name` with weight, or -1.
const nodeNamed = (page, handle, name) => page.evaluate((h, name) => {
  const v = window[h[0]][h[1]] || window[h[0]], t = v.tree;
  let best = -1;
  for (let i = 1; i < t.size; i++) if (t.name(i) === name && t.total[i] > 0 && (best < 0 || t.total[i] > t.total[best])) best = i;
  return best;
}, handle, name);
// Right-click a node of a flame view and pick a menu item.
async function menuPick(page, handle, node, item) {
  const at = await page.evaluate((h, n) => (window[h[0]][h[1]] || window[h[0]]).where(n), handle, node);
  if (!at) return false;
  await page.mouse.click(at.x, at.y, {button: 'right'});
  await page.waitForSelector('#frame-menu #menu-' + item, {timeout: 10000});
  await act(page, () => page.click('#frame-menu #menu-' + item));
  return true;
}

const browser = await launch(cfg);
try {
  const page = await browser.newPage();
  await page.setViewport({width: 1280, height: 1000});
  const pageErrors = [], csp = [];
  page.on('pageerror', e => pageErrors.push(e.message));
  page.on('console', m => { if (/Content Security Policy/i.test(m.text())) csp.push(m.text()); });
  await login(page, cfg.login);

  // --- the timeline above the analysis, the whole profile in the table
  await page.goto(`${cfg.base}/viewer/?a=${cfg.id}&e=${cfg.event}&tab=hotspots`, {waitUntil: 'load'});
  await rendered(page);
  await page.waitForSelector('#timeline canvas');
  const tl = await page.$eval('#timeline', e => ({buckets: Number(e.dataset.buckets), span: Number(e.dataset.span)}));
  const whole = await tool(page, 'get_timeline', {analysis_id: cfg.id, event: cfg.event, buckets: 200});
  check(tl.buckets === whole.samples.length && tl.buckets > 10,
    `a timeline of ${tl.buckets} bars over ${tl.span.toFixed(3)} s is drawn (get_timeline's)`, JSON.stringify(tl));
  const all = await table(page);
  check(all.a > 20 && all.b > 20, `the whole profile lists a() and b() (${all.a}%, ${all.b}%)`, JSON.stringify(all));
  await shot(page, '01-timeline-whole');

  // --- brush phase B's window: the table becomes that window's
  const box = await page.$eval('#timeline-canvas', c => { const r = c.getBoundingClientRect(); return {x: r.left, y: r.top, w: r.width, h: r.height}; });
  await act(page, async () => {
    await page.mouse.move(box.x + box.w * 0.6, box.y + box.h / 2);
    await page.mouse.down();
    await page.mouse.move(box.x + box.w * 0.75, box.y + box.h / 2, {steps: 5});
    await page.mouse.move(box.x + box.w * 0.9, box.y + box.h / 2, {steps: 5});
    await page.mouse.up();
  });
  const u = new URL(page.url()).searchParams;
  const t0 = Number(u.get('t0')), t1 = Number(u.get('t1'));
  check(Math.abs(t0 - tl.span * 0.6) < tl.span * 0.02 && Math.abs(t1 - tl.span * 0.9) < tl.span * 0.02,
    `brushing 60%..90% of the timeline puts the window [${t0}, ${t1}) s in the URL`, page.url());
  const view = {time: {from_seconds: t0, to_seconds: t1}};
  const inWin = await tool(page, 'list_hotspots', {analysis_id: cfg.id, event: cfg.event, limit: 20, view});
  const brushed = await table(page);
  check(Object.keys(brushed)[0] === 'b' && brushed.b > 50 && !(brushed.a > 1),
    `the window's table is b()'s phase, b() first (b ${brushed.b}%, a ${brushed.a ?? 0}%)`,
    JSON.stringify(brushed));
  check(inWin.hotspots.every(h => brushed[h.short_name || h.symbol] === Number(h.self.percent.toFixed(2))) &&
    Object.keys(brushed).length === inWin.hotspots.length,
    'the table equals list_hotspots with that view.time', JSON.stringify(inWin.hotspots.map(h => [h.symbol, h.self.percent])));
  const perf = perfReport(inWin.view.time_window.perf_time);
  const bad = [];
  let n = 0;
  for (const sym of new Set([...Object.keys(perf.shares), ...Object.keys(brushed)])) {
    const p = perf.shares[sym] || 0, m = brushed[sym] || 0;
    if (p < 1 && m < 1) continue;
    n++;
    if (Math.abs(p - m) > 0.1) bad.push(`${sym} perf ${p} viewer ${m}`);
  }
  check(n > 0 && !bad.length && perf.header.samples === inWin.total.samples,
    `${n} symbols >= 1% within 0.1 pp of perf report --time ${inWin.view.time_window.perf_time} ` +
    `(${perf.header.samples} samples = ${inWin.total.samples})`, bad.join('; ') + JSON.stringify(perf.header));
  await shot(page, '02-timeline-brushed');

  // --- the flame graph of the window
  await act(page, () => page.click('#tab-flame'));
  await page.waitForFunction(() => document.querySelector('#flame') && document.querySelector('#flame').dataset.total);
  const fl = await page.$eval('#flame', e => ({samples: Number(e.dataset.samples), total: Number(e.dataset.total)}));
  check(fl.samples === inWin.total.samples && fl.total === inWin.total.period,
    `the flame graph holds the window's ${inWin.total.samples} samples and period`, JSON.stringify(fl));
  check(await nodeNamed(page, ['perflensFlame'], 'a') < 0, 'a() is not in the window\'s flame graph');

  // --- focus from a frame's menu
  const nb = await nodeNamed(page, ['perflensFlame'], 'b');
  check(nb > 0 && await menuPick(page, ['perflensFlame'], nb, 'focus'), 'the menu of b()\'s frame focuses on it');
  const focus = new URL(page.url()).searchParams.get('focus');
  const fview = {...view, focus: '^b$'};
  const inFocus = await tool(page, 'list_hotspots', {analysis_id: cfg.id, event: cfg.event, limit: 20, view: fview});
  await page.waitForFunction(() => document.querySelector('#flame') && document.querySelector('#flame').dataset.total);
  const ff = await page.$eval('#flame', e => ({samples: Number(e.dataset.samples), total: Number(e.dataset.total)}));
  check(focus === '^b$' && ff.samples === inFocus.total.samples &&
    ff.total === inFocus.total.period && await page.$eval('#view-focus', e => e.value) === '^b$',
    `focus=^b$ is in the URL and the field, the flame graph holds list_hotspots' ${inFocus.total.samples} samples under it`,
    `${focus} ${JSON.stringify(ff)} vs ${JSON.stringify(inFocus.total)}`);
  await shot(page, '03-flame-focus');

  // --- the keyboard opens the menu too; Escape closes it
  await page.focus('#flame canvas');
  await page.keyboard.press('ArrowUp');
  await page.keyboard.press('m');
  const kmenu = await page.$('#frame-menu');
  await page.keyboard.press('Escape');
  check(kmenu && !(await page.$('#frame-menu')), 'm on the focused frame opens its menu, Escape closes it');

  // --- the sandwich of b(): callers above, callees below
  const nb2 = await nodeNamed(page, ['perflensFlame'], 'b');
  check(await menuPick(page, ['perflensFlame'], nb2, 'sandwich'), 'the menu of b()\'s frame opens its sandwich');
  await page.waitForSelector('#sandwich');
  const sw = new URL(page.url()).searchParams.get('sw');
  const hot = await tool(page, 'get_hotspot', {analysis_id: cfg.id, event: cfg.event, hotspot_id: sw, limit: 50, view: fview});
  const sand = await page.evaluate(() => {
    const level = t => {
      const f = t.kids[t.kidStart[0]], out = {};
      // as drawn: a frame the window left no sample is not (flame.js skips it)
      for (let k = t.kidStart[f]; k < t.kidStart[f + 1]; k++)
        if (t.samples[t.kids[k]] > 0) out[t.name(t.kids[k])] = t.samples[t.kids[k]];
      return {fn: t.name(f), samples: t.samples[f], next: out};
    };
    return {symbol: document.getElementById('sandwich-symbol').textContent,
      callers: level(window.perflensSandwich.callers.tree), callees: level(window.perflensSandwich.callees.tree)};
  });
  // get_hotspot's callees have a "[self]" row: the function's own samples, no frame
  const same = (mine, rows) => {
    const fr = rows.filter(r => r.symbol !== '[self]');
    return fr.every(r => mine[r.symbol] === r.samples) && Object.keys(mine).length === fr.length;
  };
  check(sand.symbol === 'b' && sand.callers.fn === 'b' && sand.callers.samples === hot.inclusive.samples &&
    sand.callees.samples === hot.inclusive.samples,
    `the sandwich is of b() and both halves hold get_hotspot's ${hot.inclusive.samples} inclusive samples`,
    JSON.stringify(sand) + ' ' + JSON.stringify(hot.inclusive));
  check(same(sand.callers.next, hot.callers) && same(sand.callees.next, hot.callees),
    `its first callers (${Object.keys(sand.callers.next)}) and callees (${Object.keys(sand.callees.next)}) are get_hotspot's, sample for sample`,
    JSON.stringify(sand) + ' vs ' + JSON.stringify({callers: hot.callers, callees: hot.callees}));
  await shot(page, '04-sandwich');

  // --- the URL restores the view: a reload, and a new tab
  const url = page.url();
  const viewState = p => p.evaluate(() => ({
    from: document.getElementById('time-from').value, to: document.getElementById('time-to').value,
    focus: document.getElementById('view-focus').value, symbol: (document.getElementById('sandwich-symbol') || {}).textContent,
    samples: (document.getElementById('sandwich') || {dataset: {}}).dataset.samples}));
  const before = await viewState(page);
  await page.reload({waitUntil: 'load'});
  await rendered(page);
  await page.waitForSelector('#sandwich');
  const after = await viewState(page);
  check(page.url() === url && JSON.stringify(after) === JSON.stringify(before) && Number(after.samples) === hot.inclusive.samples,
    'reloading the URL gives the same view (window, focus, sandwich)', JSON.stringify([before, after]));
  const p2 = await browser.newPage();
  await p2.setViewport({width: 1280, height: 1000});
  await p2.goto(url, {waitUntil: 'load'});
  await rendered(p2);
  await p2.waitForSelector('#sandwich');
  check(JSON.stringify(await viewState(p2)) === JSON.stringify(before), 'the URL in a new tab opens the same view');
  await p2.close();

  check(/b's inclusive part/.test(await page.$eval('#timeline-note', e => e.textContent)),
    'the timeline shows the sandwich function\'s part');

  // --- two windows of the recording compared (compare_profiles' view and candidate_view)
  {
    const wa = {from_seconds: Number((tl.span * 0.05).toFixed(3)), to_seconds: Number((tl.span * 0.4).toFixed(3))};
    const wb = {from_seconds: t0, to_seconds: t1};
    const p3 = await browser.newPage();
    await p3.setViewport({width: 1280, height: 1000});
    await p3.goto(`${cfg.base}/viewer/?` + new URLSearchParams({view: 'compare', b: cfg.id, c: cfg.id, e: cfg.event,
      bt0: wa.from_seconds, bt1: wa.to_seconds, ct0: wb.from_seconds, ct1: wb.to_seconds}), {waitUntil: 'load'});
    await rendered(p3);
    const rows = await p3.$$eval('#deltas tbody tr', rs => rs.map(r => [r.children[2].textContent, parseFloat(r.children[6].textContent)]));
    const want = await tool(p3, 'compare_profiles', {baseline_id: cfg.id, candidate_id: cfg.id, event: cfg.event, sort: 'self',
      limit: 20, view: {time: wa}, candidate_view: {time: wb}, exports: false});
    const moved = Object.fromEntries(rows.slice(0, 2));
    check(!want.error && rows.length === want.functions.length &&
      want.functions.every((f, i) => rows[i][0] === f.symbol && rows[i][1] === Number(f.self_delta_points.toFixed(2))) &&
      moved.a < -50 && moved.b > 50,
      `the Compare page with a window per side (phase A against phase B) shows compare_profiles' deltas: a ${moved.a}, b +${moved.b}`,
      JSON.stringify(rows.slice(0, 4)) + ' ' + JSON.stringify(want.error || want.functions.slice(0, 4).map(f => [f.symbol, f.self_delta_points])));
    await shot(p3, '05-compare-windows');
    await p3.close();
  }

  // --- closing the sandwich, clearing the window
  await act(page, () => page.click('#sandwich-close'));
  check(!new URL(page.url()).searchParams.get('sw') && await page.$('#flame canvas'), 'closing the sandwich gives the flame graph back');
  await act(page, () => page.click('#time-clear'));
  const cleared = new URL(page.url()).searchParams;
  check(!cleared.get('t0') && !cleared.get('t1') && cleared.get('focus') === '^b$', '"Whole profile" clears the window, keeps the focus');
  await shot(page, '06-cleared');
  check(!pageErrors.length, 'no page errors', pageErrors.join(' | '));
  check(!csp.length, 'no Content-Security-Policy violations (no inline script or style)', csp.join(' | '));
} catch (e) {
  check(false, 'the browser run', String(e && e.stack || e).split('\n').slice(0, 3).join(' '));
} finally {
  await browser.close();
}
process.exit(failed() ? 1 : 0);
