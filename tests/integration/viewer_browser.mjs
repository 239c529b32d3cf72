// viewer_browser.mjs - drives the web viewer of perflens-mcp --http in
// Debian's Chromium (puppeteer-core, executablePath /usr/bin/chromium) as
// a person would, and checks what the page shows against the tools'
// own answers, which test_viewer.sh wrote to files with the perflens CLI
// beforehand (the oracle: the same registry, another process, no browser).
//
//   node viewer_browser.mjs CONFIG.json
//
// CONFIG: {base, login, login2, chromium, out, bundled, hostile, base_id,
// cand_id, src_id|null, experiment_id, oracle: {hot_cycles_self,
// hot_cycles_incl_p2, compare, experiment, source|null, search_symbol,
// search_incl_percent, total_cycles}}.
// Prints "ok - ..." / "not ok - ..." lines (run.sh counts them) and
// saves a screenshot of every page into CONFIG.out.
import { readFileSync, appendFileSync, writeFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { tap, launch, login, rendered, readyOf, act, shotter } from './browser_common.mjs';

const cfg = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const {check, failed} = tap('viewer');
const shot = shotter(cfg.out);
const oracle = Object.fromEntries(Object.entries(cfg.oracle).map(([k, f]) =>
  [k, typeof f === 'string' && f.endsWith('.json') ? JSON.parse(readFileSync(f, 'utf8')) : f]));
const pct = x => Number(x).toFixed(2) + '%';
const cells = (page, sel, col) => page.$$eval(`${sel} tbody tr`, (rows, c) =>
  rows.map(r => r.children[c].textContent), col);

const browser = await launch(cfg);
const dialogs = [];
try {
  const page = await browser.newPage();
  await page.setViewport({width: 1280, height: 900});
  page.on('dialog', d => { dialogs.push(d.message()); d.dismiss(); });
  const pageErrors = [];
  page.on('pageerror', e => pageErrors.push(e.message));
  const cspViolations = [];
  page.on('console', m => { if (/Content Security Policy/i.test(m.text())) cspViolations.push(m.text()); });

  // --- login: the one-time URL sets the cookie and lands without the secret
  await login(page, cfg.login);
  const landed = new URL(page.url());
  check(landed.pathname === '/viewer/' && !landed.search.includes('m=') && !landed.search.includes('n='),
    'the login URL lands on /viewer/ without the secret in the URL', page.url());
  const cookies = await page.cookies();
  const c = cookies.find(k => k.name === 'perflens_viewer');
  check(c && c.httpOnly && c.sameSite === 'Strict', 'the session cookie is HttpOnly and SameSite=Strict',
    JSON.stringify(cookies));
  check(await page.evaluate(() => document.cookie === ''), 'page script cannot read the session cookie');

  // --- the analyses list
  await page.waitForSelector('#analyses tbody tr');
  const ids = await page.$$eval('#analyses tbody tr', rows => rows.map(r => r.dataset.id));
  const allIds = await page.evaluate(async () => {
    const r = await fetch('/viewer/api/call', {method: 'POST', headers: {'Content-Type': 'application/json'},
      body: JSON.stringify({tool: 'list_artifacts', arguments: {kind: 'analysis', limit: 100}})});
    return (await r.json()).result.artifacts.map(a => a.path.replace(/^analyses\//, '').replace(/\.json$/, ''));
  });
  check(ids.length === 20 && ids.every((id, i) => id === allIds[i]),
    'the list\'s first page is list_artifacts\' first 20 analyses, in its order', ids.slice(0, 3).join(' '));
  await shot(page, '01-analyses');
  // the list pages by 20: the next page holds the rest, then back to the first
  const info1 = await page.$eval('.page-info', e => e.textContent);
  await act(page, () => page.click('#page-next'));
  const ids2 = await page.$$eval('#analyses tbody tr', rows => rows.map(r => r.dataset.id));
  check(ids.length === 20 && ids2.length === cfg.analyses - 20 && !ids2.some(i => ids.includes(i)),
    `the analyses list pages: 20 then ${cfg.analyses - 20} of ${cfg.analyses}`, `${info1}; ${ids.length} + ${ids2.length}`);
  const both = ids.concat(ids2);
  check([cfg.bundled, cfg.base_id, cfg.cand_id, cfg.hostile].every(i => both.includes(i)),
    'the list\'s pages show every analysis', both.join(' '));
  await act(page, () => page.click('#page-first'));
  // an analysis written while the list is open shows up by itself (long polling)
  const rowsBefore = await page.$$eval('#analyses tbody tr', r => r.length);
  const infoBefore = await page.$eval('.page-info', e => e.textContent);
  await act(page, async () => { execFileSync(cfg.late_analyze[0], cfg.late_analyze.slice(1), {stdio: 'ignore'}); });
  const infoAfter = await page.$eval('.page-info', e => e.textContent);
  check(infoAfter !== infoBefore && infoAfter.endsWith(`of ${cfg.analyses + 1}`),
    'an analysis written while the list is open appears without a reload', `${infoBefore} -> ${infoAfter} (${rowsBefore} rows)`);
  await act(page, async () => {
    await page.type('#list-filter', 'chunk_000');
    await page.keyboard.press('Enter');
  });
  const filtered = await page.$$eval('#analyses tbody tr', rows => rows.map(r => r.dataset.id));
  check(filtered.length === 1 && filtered[0] === cfg.bundled, 'the list filter keeps the bundled capture only', filtered.join(' '));
  const bundledRow = await page.$eval(`#analyses tr[data-id="${cfg.bundled}"]`, r => [...r.children].map(td => td.textContent));
  check(bundledRow[1].includes('chunk_000.txt.gz') && bundledRow[2].includes('cycles') && /\d{4}-\d\d-\d\d/.test(bundledRow[4]),
    'the list row names input, events and date', bundledRow.join(' | '));

  // --- the bundled capture's analysis, keyboard-free path: click its link
  await act(page, () => page.click(`#analyses tr[data-id="${cfg.bundled}"] a`));
  await page.waitForSelector('#hotspots');
  const t0 = await page.$eval('#quality', q => q.textContent);
  check(t0.includes('Data quality') && t0.includes('unknown self share'), 'data quality comes first', t0.slice(0, 80));
  const order = await page.evaluate(() => {
    const q = document.getElementById('quality'), h = document.getElementById('hotspots');
    return q.compareDocumentPosition(h) & Node.DOCUMENT_POSITION_FOLLOWING ? 'quality-first' : 'hotspots-first';
  });
  check(order === 'quality-first', 'the data quality box is above the hotspot table');
  await shot(page, '02-analysis-hotspots');

  // switch events: the explicit picker
  await act(page, () => page.select('#event', 'cycles'));
  check(new URL(page.url()).searchParams.get('e') === 'cycles', 'the event picker puts the event in the URL', page.url());
  const syms = await cells(page, '#hotspots', 1);
  const selfp = await cells(page, '#hotspots', 3);
  const want = oracle.hot_cycles_self.hotspots;
  check(syms.length === want.length && want.every((h, i) => syms[i] === h.symbol && selfp[i] === pct(h.self.percent)),
    `cycles hotspots (self) equal list_hotspots: ${want.length} rows, symbol and self %`,
    JSON.stringify({page: syms.slice(0, 3), tool: want.slice(0, 3).map(h => h.symbol)}));
  const qs = await page.$eval('#q-samples', e => e.textContent);
  check(qs.replace(/,/g, '') === String(oracle.hot_cycles_self.total.samples),
    'data quality samples equal the tool\'s total for cycles', `${qs} vs ${oracle.hot_cycles_self.total.samples}`);

  // sort by inclusive, then page 2
  await act(page, () => page.select('#sort', 'inclusive'));
  await page.waitForSelector('#page-next');
  await act(page, () => page.click('#page-next'));
  const p2 = await cells(page, '#hotspots', 1);
  const p2incl = await cells(page, '#hotspots', 5);
  const w2 = oracle.hot_cycles_incl_p2.hotspots;
  check(p2.length === w2.length && w2.every((h, i) => p2[i] === h.symbol && p2incl[i] === pct(h.inclusive.percent)),
    `page 2 sorted by inclusive equals list_hotspots(sort=inclusive, offset=${cfg.page})`,
    JSON.stringify({page: p2.slice(0, 3), tool: w2.slice(0, 3).map(h => h.symbol)}));
  const u = new URL(page.url());
  check(u.searchParams.get('sort') === 'inclusive' && u.searchParams.get('off') === String(cfg.page),
    'sort and page are in the URL', page.url());
  await shot(page, '03-hotspots-inclusive-page2');
  // a function's callers and callees: click its name
  await act(page, () => page.click(`#hotspots tr[data-hotspot="${oracle.hotspot.hotspot_id}"] a.fn-link`));
  const callees = await page.$$eval('#hotspot-detail .side:nth-child(2) tbody tr', rows => rows.map(r => [r.children[0].textContent, r.children[1].textContent]));
  const wantCallees = oracle.hotspot.callees.map(c => [c.symbol, pct(c.percent_of_hotspot)]);
  check(wantCallees.length > 0 && JSON.stringify(callees) === JSON.stringify(wantCallees),
    `${oracle.hotspot.symbol}'s callees and their shares equal get_hotspot`, JSON.stringify({page: callees, tool: wantCallees}));

  // --- the flame graph: draw, zoom by click, search, reset
  await act(page, () => page.click('#tab-flame'));
  await page.waitForFunction(() => document.querySelector('#flame') && document.querySelector('#flame').dataset.total);
  const fl = await page.$eval('#flame', e => ({total: Number(e.dataset.total), samples: Number(e.dataset.samples), ms: Number(e.dataset.drawMs)}));
  check(fl.samples === oracle.hot_cycles_self.total.samples && fl.total === oracle.hot_cycles_self.total.period,
    'the flame graph root holds the tool\'s cycles total (samples and period)', JSON.stringify(fl));
  // click the frame of the search symbol's caller chain: the widest "main"
  // Where the widest frame of `name` is, in viewport coordinates now.
  const frameAt = name => page.evaluate(n => {
    const v = window.perflensFlame;
    v.canvas.scrollIntoView({block: 'center'});
    const cv = v.canvas.getBoundingClientRect();
    const r = v.rects.filter(r => v.tree.name(r[0]) === n).sort((a, b) => b[3] - a[3])[0];
    return r ? {x: cv.left + r[1] + r[3] / 2, y: cv.top + v.height - (r[2] + 1) * 18 + 9} : null;
  }, name);
  const target = await frameAt(cfg.zoom_symbol);
  check(target !== null, `the flame graph draws ${cfg.zoom_symbol}`);
  if (target) {
    await page.mouse.click(target.x, target.y);
    await page.waitForFunction(() => new URL(location.href).searchParams.get('zoom'), {timeout: 5000}).catch(() => {});
    const z = await page.evaluate(() => ({name: window.perflensFlame.tree.name(window.perflensFlame.zoom), ms: window.perflensFlame.lastDrawMs}));
    check(z.name === cfg.zoom_symbol && new URL(page.url()).searchParams.get('zoom'),
      `clicking ${cfg.zoom_symbol} zooms to it and puts the zoom in the URL`, JSON.stringify(z) + ' ' + page.url());
    console.log(`# viewer: zoom redraw ${z.ms.toFixed(1)} ms (bundled capture)`);
  }
  await page.type('#flame-search', cfg.search_symbol);
  const m = await page.evaluate(() => ({p: window.perflensFlame.matchedPercent(), text: document.getElementById('flame-matched').textContent}));
  await shot(page, '04-flame-zoom-search');
  // Reset, then the matched share of the whole graph against the tool's
  // inclusive share (inclusive is counted once per stack, as the search).
  await page.click('#flame-reset');
  const whole = await page.evaluate(() => ({p: window.perflensFlame.matchedPercent(), zoom: window.perflensFlame.zoom}));
  check(whole.zoom === 0, 'reset zoom goes back to the root');
  check(Math.abs(whole.p - oracle.search_incl_percent) < 0.005,
    `search '${cfg.search_symbol}': matched share equals its inclusive % from list_hotspots (once per stack)`,
    `${whole.p} vs ${oracle.search_incl_percent}`);
  check(m.text.includes('matched'), 'the matched share is shown', m.text);
  // The URL reproduces the view: zoom and search again, reload.
  if (target) {
    const again = await frameAt(cfg.zoom_symbol);
    await page.mouse.click(again.x, again.y);
    await page.waitForFunction(() => new URL(location.href).searchParams.get('zoom'), {timeout: 5000}).catch(() => {});
  }
  const viewUrl = page.url();
  check(new URL(viewUrl).searchParams.get('q') === cfg.search_symbol, 'the search is in the URL', viewUrl);
  const p2page = await browser.newPage();
  await p2page.setViewport({width: 1280, height: 900});
  await p2page.goto(viewUrl, {waitUntil: 'load'});
  await rendered(p2page);
  await p2page.waitForFunction(() => document.querySelector('#flame') && document.querySelector('#flame').dataset.total);
  const again = await p2page.evaluate(() => ({
    e: document.getElementById('event').value,
    tab: document.querySelector('[role=tab][aria-selected=true]').id,
    zoom: window.perflensFlame.tree.name(window.perflensFlame.zoom),
    q: document.getElementById('flame-search').value,
    p: window.perflensFlame.matchedPercent(),
  }));
  check(again.e === 'cycles' && again.tab === 'tab-flame' && again.zoom === cfg.zoom_symbol && again.q === cfg.search_symbol,
    'the URL reopens the same view in a new tab (event, tab, zoom, search)', JSON.stringify(again) + ' ' + viewUrl);
  await shot(p2page, '05-flame-reopened');
  // keyboard: focus the canvas, Escape resets, Up walks into the heaviest child, Enter zooms
  await p2page.focus('#flame canvas');
  await p2page.keyboard.press('Escape');
  await p2page.keyboard.press('ArrowUp');
  await p2page.keyboard.press('Enter');
  const kb = await p2page.evaluate(() => window.perflensFlame.zoom);
  check(kb !== 0, 'the flame graph zooms from the keyboard (Escape, ArrowUp, Enter)');
  await p2page.close();

  // --- a view in the URL (focus, hide): the flame graph and the hotspot
  // table hold what list_hotspots keeps under the same view
  {
    const hv = oracle.hot_view;
    const vpage = await browser.newPage();
    await vpage.setViewport({width: 1280, height: 900});
    const vurl = `${new URL(page.url()).origin}/viewer/?` +
      new URLSearchParams({a: cfg.bundled, e: 'cycles', tab: 'flame', focus: '^run_workload$', hide: '^main$'});
    await vpage.goto(vurl, {waitUntil: 'load'});
    await rendered(vpage);
    await vpage.waitForFunction(() => document.querySelector('#flame') && document.querySelector('#flame').dataset.total);
    const fv = await vpage.evaluate(() => {
      const t = window.perflensFlame.tree, names = new Set();
      for (let i = 1; i < t.size; i++) if (t.total[i] > 0) names.add(t.name(i));
      const d = document.querySelector('#flame').dataset;
      return {samples: Number(d.samples), total: Number(d.total), main: names.has('main'), run: names.has('run_workload'),
        focus: document.getElementById('view-focus').value, hide: document.getElementById('view-hide').value};
    });
    check(fv.samples === hv.total.samples && fv.total === hv.total.period && !fv.main && fv.run &&
      fv.focus === '^run_workload$' && fv.hide === '^main$',
      `a view in the URL (focus, hide): the flame graph holds list_hotspots' ${hv.total.samples} samples under it, main hidden`,
      JSON.stringify(fv) + ' vs ' + JSON.stringify(hv.total));
    await shot(vpage, '05b-flame-view');
    await act(vpage, () => vpage.click('#tab-hotspots'));
    const vs = await cells(vpage, '#hotspots', 1);
    const cap = await vpage.$eval('#hotspots caption', e => e.textContent);
    check(vs.length === hv.hotspots.length && hv.hotspots.every((h, i) => vs[i] === (h.short_name || h.symbol)) &&
      cap.includes(`the view keeps ${pct(hv.view.percent_of_samples)}`),
      'the hotspot table under the view equals list_hotspots under it and says what share it keeps', cap + ' ' + vs.slice(0, 3).join(','));
    await act(vpage, () => vpage.click('#hotspots tbody tr:first-child a.view-ignore'));
    const ign = new URL(vpage.url()).searchParams.get('ignore');
    check(ign === '^' + hv.hotspots[0].symbol.replace(/[.[\]{}()*+?^$|\\]/g, '\\$&') + '$' &&
      !(await cells(vpage, '#hotspots', 1)).includes(hv.hotspots[0].symbol),
      'a row\'s ignore link puts the exact name in the URL and the table drops it', ign);
    await vpage.close();
  }

  // --- other tabs of the same analysis
  await act(page, () => page.click('#tab-paths'));
  const paths = await page.$$eval('#paths > li', l => l.length);
  check(paths > 0, 'call paths are listed', String(paths));
  await act(page, () => page.click('#tab-threads'));
  check((await page.$$eval('#threads tbody tr', r => r.length)) > 0, 'threads are listed');
  await act(page, () => page.click('#tab-candidates'));
  const cand = await page.$eval('#candidates', e => e.textContent);
  check(cand.includes('Candidate:') && cand.includes('Missing evidence'), 'classification candidates are worded as candidates, with their missing evidence', cand.slice(0, 120));
  await shot(page, '06-candidates');
  await act(page, () => page.click('#tab-exports'));
  const ex = await page.$$eval('#exports a', a => a.map(x => x.getAttribute('href')));
  check(ex.length >= 2 && ex.every(h => h.startsWith('/viewer/api/file/exports/')), 'exports are download links', ex.join(' '));
  if (ex.length) {
    const got = await page.evaluate(async h => { const r = await fetch(h); return {s: r.status, d: r.headers.get('content-disposition'), n: (await r.text()).length}; }, ex[0]);
    check(got.s === 200 && /attachment/.test(got.d || '') && got.n > 0, 'an export downloads as an attachment', JSON.stringify(got));
  }
  await shot(page, '07-exports');

  // --- source heat
  if (cfg.src_id) {
    const url = `${cfg.base}/viewer/?a=${cfg.src_id}&tab=source&fn=${oracle.source.hotspot_id}`;
    await page.goto(url, {waitUntil: 'load'});
    await rendered(page);
    const lines = await page.$$eval('table.source tbody tr', rows => rows.map(r => ({line: Number(r.dataset.line), self: r.children[1].textContent, heat: r.className})));
    const tool = oracle.source.files.flatMap(f => f.lines || []);
    check(lines.length === tool.length && tool.every((l, i) => lines[i].line === l.line && lines[i].self === (l.self_samples ? String(l.self_samples) : '')),
      `source heat lines equal source_context (${tool.length} lines, self samples)`, JSON.stringify(lines.slice(0, 4)));
    check(lines.some(l => l.heat === 'heat9'), 'the hottest line is drawn hottest');
    await shot(page, '08-source-heat');
  } else {
    console.log('skip - viewer: source heat: no srcline analysis (perf cannot record here)');
  }

  // --- compare two analyses
  await page.goto(`${cfg.base}/viewer/?view=compare&b=${cfg.base_id}&c=${cfg.cand_id}`, {waitUntil: 'load'});
  await rendered(page);
  await page.waitForSelector('#deltas tbody tr');
  const dsym = await cells(page, '#deltas', 2);
  const ddel = await cells(page, '#deltas', 6);
  const wd = oracle.compare.functions;
  check(dsym.length === wd.length && wd.every((f, i) => dsym[i] === f.symbol &&
      ddel[i] === (f.self_delta_points > 0 ? '+' : '') + f.self_delta_points.toFixed(2)),
    `compare deltas equal compare_profiles (${wd.length} functions, self delta points)`, JSON.stringify({page: dsym, d: ddel}));
  const diff = await page.evaluate(() => {
    const v = window.perflensFlame;
    const byName = {};
    for (const r of v.rects) byName[v.tree.name(r[0])] = v.color(r[0], false, false);
    return byName;
  });
  check(/^rgb\(2[0-9][0-9],/.test(diff[cfg.grew] || '') && /,235\)$/.test(diff[cfg.shrank] || ''),
    `the differential flame graph draws ${cfg.grew} red and ${cfg.shrank} blue`, JSON.stringify(diff));
  await shot(page, '09-compare');

  // --- an experiment on the Compare page: run_experiment's verdicts and runs
  if (cfg.experiment_id) {
    await page.goto(`${cfg.base}/viewer/?view=compare&exp=${cfg.experiment_id}`, {waitUntil: 'load'});
    await rendered(page);
    await page.waitForSelector('#verdicts tbody tr');
    const shown = await page.$$eval('#verdicts tbody tr', rows => rows.map(r => [r.children[0].textContent, r.children[1].textContent]));
    const given = oracle.experiment.verdicts.map(v => [v.measure, v.verdict]);
    const runs = await page.$$eval('#runs tbody tr', rows => rows.length);
    check(JSON.stringify(shown) === JSON.stringify(given) && runs === 2 * oracle.experiment.blocks.length,
      `an experiment shows run_experiment's verdict per measure (${given.length}) and every run of both sides (${runs})`,
      JSON.stringify({shown, given, runs}));
    await shot(page, '09b-compare-experiment');
  } else {
    console.log('skip - viewer: experiment on the Compare page: no experiment (perf is not installed)');
  }

  // --- the hostile profile renders as text
  await page.goto(`${cfg.base}/viewer/?a=${cfg.hostile}&tab=hotspots`, {waitUntil: 'load'});
  await rendered(page);
  const hostile = await page.evaluate(() => ({
    scripts: [...document.scripts].map(s => s.src),
    injected: document.querySelectorAll('b, img, svg, iframe, [onerror], [onload]').length,
    syms: [...document.querySelectorAll('#hotspots td.sym')].map(td => td.textContent),
    dsos: [...document.querySelectorAll('#hotspots td.path')].map(td => td.textContent),
  }));
  check(hostile.scripts.length === 1 && hostile.scripts[0].endsWith('/viewer/viewer.js') && hostile.injected === 0,
    'a hostile profile adds no element to the page', JSON.stringify(hostile));
  check(oracle.hostile_symbols.every(s => hostile.syms.includes(s)),
    'symbols holding <script>, quotes and tags show as their text', JSON.stringify(hostile.syms));
  check(hostile.dsos.some(d => d.includes('<b>')), 'a module path holding a tag shows as text', JSON.stringify(hostile.dsos));
  await act(page, () => page.click('#tab-threads'));
  const comm = await page.$$eval('#threads td.sym', t => t.map(x => x.textContent));
  check(comm.includes(cfg.hostile_comm), 'a comm holding a tag shows as text', JSON.stringify(comm));
  await act(page, () => page.click('#tab-flame'));
  await page.waitForFunction(() => document.querySelector('#flame') && document.querySelector('#flame').dataset.total);
  await shot(page, '10-hostile');
  check(dialogs.length === 0, 'no script from the profile ran (no dialog)', dialogs.join(' '));

  // --- C++ names: list_hotspots' short names, the full and linker names in
  // each tooltip, and under the heading of a clicked function
  await page.goto(`${cfg.base}/viewer/?a=${cfg.cxx}&tab=hotspots`, {waitUntil: 'load'});
  await rendered(page);
  const cxx = await page.$$eval('#hotspots a.fn-link', as => as.map(a => [a.textContent, a.getAttribute('title')]));
  const cxxHot = oracle.hot_cxx.hotspots;
  const wantCxx = cxxHot.map(h => [h.short_name || h.symbol, h.short_name ? `${h.symbol}\n${h.linkage_name}` : null]);
  check(cxxHot.filter(h => h.short_name).length === 3 && JSON.stringify(cxx) === JSON.stringify(wantCxx),
    'C++ functions are listed by their short names, with the full and linker names in the tooltip',
    JSON.stringify({page: cxx, tool: wantCxx}));
  const get = cxxHot.find(h => h.short_name === 'kv::Store::get');
  if (get) {
    await act(page, () => page.click(`#hotspots tr[data-hotspot="${get.hotspot_id}"] a.fn-link`));
    const detail = await page.evaluate(() => ({
      head: document.querySelector('#hotspot-detail h2 .sym')?.textContent,
      full: document.getElementById('full-name')?.textContent}));
    check(detail.head === get.short_name && detail.full === `${get.symbol} (${get.linkage_name})`,
      'a clicked function shows its short name, then its full and linker names', JSON.stringify(detail));
  } else {
    check(false, 'kv::Store::get is listed by its short name', JSON.stringify(cxxHot));
  }
  await shot(page, '10b-cxx-names');

  // --- live: a session's health sparklines grow as its metrics arrive
  await page.goto(`${cfg.base}/viewer/?view=live&s=${cfg.live_session}`, {waitUntil: 'load'});
  await rendered(page);
  const sparks = () => page.$$eval('#sparks figure', f => Object.fromEntries(f.map(x => [x.dataset.metric, Number(x.dataset.points)])));
  const toolFrames = await page.evaluate(async s => {
    const r = await fetch('/viewer/api/call', {method: 'POST', headers: {'Content-Type': 'application/json'},
      body: JSON.stringify({tool: 'get_device_metrics', arguments: {session: s, type: 'system', limit: 200}})});
    return (await r.json()).result.frames.length;
  }, cfg.live_session);
  const s0 = await sparks();
  check(s0.CPU === toolFrames && s0['process RSS'] === 3 && s0['load (1 min)'] === toolFrames,
    `the live session's sparklines hold get_device_metrics' frames (${toolFrames})`, JSON.stringify(s0));
  await shot(page, '13-live');
  await act(page, async () => {
    appendFileSync(`${cfg.live_dir}/metrics.jsonl`,
      '{"type":"system","ts":1796000004,"cpu":{"overall_pct":80.5,"per_core":[],"num_cores":2},"mem":{"used_pct":45.0},"load":{"avg_1m":0.9}}\n' +
      '{"type":"process","ts":1796000004,"pid":5,"comm":"app","cpu_pct":25.0,"rss_kb":4000}\n');
  });
  const s1 = await sparks();
  check(s1.CPU === toolFrames + 1 && s1['process RSS'] === 4, 'a metrics frame that arrives shows up without a reload (long polling)', JSON.stringify(s1));
  await act(page, async () => {
    writeFileSync(`${cfg.live_dir}/.metadata.tmp`, '{"agent":"dev1","live":true,"chunks":2,"started":"2026-12-01T12:00:00Z","text_bytes":250}\n');
    const fs = await import('node:fs');
    fs.renameSync(`${cfg.live_dir}/.metadata.tmp`, `${cfg.live_dir}/metadata.json`);
  });
  const counts = await page.$eval('#live-counts', e => e.textContent);
  check(counts.startsWith('2 chunks, 250 bytes'), 'a chunk that arrives updates the session\'s counts', counts);
  await shot(page, '14-live-grown');

  // --- dark theme
  await page.click('#theme');
  const theme = await page.evaluate(() => [document.documentElement.dataset.theme, getComputedStyle(document.body).backgroundColor]);
  check(theme[0] === 'dark' && theme[1] !== 'rgb(251, 251, 250)', 'the theme switch gives the dark palette', theme.join(' '));
  await page.goto(`${cfg.base}/viewer/?a=${cfg.bundled}&e=cycles`, {waitUntil: 'load'});
  await rendered(page);
  await shot(page, '11-dark');

  check(pageErrors.length === 0, 'no script error on any page', pageErrors.join(' | '));
  check(cspViolations.length === 0, 'the page breaks none of its Content-Security-Policy', cspViolations.join(' | '));
  // and the policy holds: a script the page did not bring is refused
  const blocked = await page.evaluate(() => new Promise(res => {
    document.addEventListener('securitypolicyviolation', e => res(e.violatedDirective), {once: true});
    const s = document.createElement('script');
    s.textContent = 'window.__inline = 1';
    document.body.append(s);
    setTimeout(() => res(window.__inline ? 'ran' : 'no event'), 2000);
  }));
  check(blocked.startsWith('script-src'), 'an inline script is refused by the CSP', blocked);

  // --- a second login link from `perflens viewer-url`, and reuse refused
  const fresh = await browser.createBrowserContext();
  const p3 = await fresh.newPage();
  const r401 = await p3.goto(`${cfg.base}/viewer/?a=${cfg.bundled}`, {waitUntil: 'load'});
  const body401 = await p3.evaluate(() => document.body.textContent);
  check(r401.status() === 401 && !body401.includes(cfg.bundled) && !body401.includes('cycles'),
    'without the cookie the page is 401 with no data', `${r401.status()} ${body401.slice(0, 80)}`);
  await shot(p3, '12-no-token-401');
  const reuse = await p3.goto(cfg.login, {waitUntil: 'load'});
  check(reuse.status() === 401, 'a used login URL is refused (401)', String(reuse.status()));
  await login(p3, cfg.login2);
  check(new URL(p3.url()).pathname === '/viewer/' && (await p3.$$eval('#analyses tbody tr', r => r.length)) > 0,
    'the link from perflens viewer-url logs in too');
  await fresh.close();
} catch (e) {
  check(false, 'the browser run stopped', e && e.stack ? e.stack.split('\n').slice(0, 3).join(' ') : String(e));
} finally {
  await browser.close();
}
process.exit(failed() ? 1 : 0);
