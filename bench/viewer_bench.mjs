// viewer_bench.mjs - the web viewer's speed in Chromium (see viewer.sh).
//
//   node viewer_bench.mjs CONFIG.json
//
// CONFIG: {login, base, chromium, bundled, big, runs}.  Prints one line
// per figure: the bundled capture's analysis page interactive from
// navigation start (its hotspot table and data quality in place, median
// of `runs` loads), the big analysis' flame graph (stack table fetched,
// decoded, tree built and weighed; then the first draw), and a zoom
// redraw (layout and paint calls, and until the next frame is shown).
import { createRequire } from 'node:module';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const require = createRequire(path.join(here, '../tests/mcp/package.json'));
const puppeteer = require('puppeteer-core');
const cfg = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const median = a => { const s = [...a].sort((x, y) => x - y); return s[Math.floor(s.length / 2)]; };
const verdict = ok => (ok ? 'met' : 'NOT met');

const browser = await puppeteer.launch({executablePath: cfg.chromium, headless: true,
  args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-extensions']});
try {
  const page = await browser.newPage();
  await page.setViewport({width: 1280, height: 900});
  await page.goto(cfg.login, {waitUntil: 'load'});
  await page.waitForFunction(() => document.body.dataset.ready);
  const ready = () => page.waitForFunction(() => document.body.dataset.ready && document.querySelector('#hotspots') &&
    document.querySelector('#quality'), {timeout: 30000});

  // 1. the bundled capture's analysis page, interactive from navigation
  const times = [];
  for (let i = 0; i < cfg.runs; i++) {
    await page.goto('about:blank');
    await page.goto(`${cfg.base}/viewer/?a=${cfg.bundled}&e=cycles`, {waitUntil: 'domcontentloaded'});
    await ready();
    times.push(await page.evaluate(() => performance.now()));
  }
  // Where the time of the last load went: each request's start and end.
  const parts = await page.evaluate(() => performance.getEntriesByType('resource').map(r =>
    `${r.name.replace(/^.*\/viewer\//, '')}@${r.startTime.toFixed(0)}-${r.responseEnd.toFixed(0)}`));
  console.log(`viewer: the last load's requests (ms from navigation): ${parts.join(' ')}`);
  const t = median(times);
  console.log(`viewer: analysis page of the bundled capture interactive in ${t.toFixed(0)} ms from navigation ` +
    `(median of ${cfg.runs}: ${times.map(x => x.toFixed(0)).join(' ')}) [target <= 500 ms: ${verdict(t <= 500)}]`);

  // 2. the flame graph of the big analysis
  await page.goto('about:blank');
  await page.goto(`${cfg.base}/viewer/?a=${cfg.big}&tab=flame`, {waitUntil: 'domcontentloaded'});
  await page.waitForFunction(() => document.querySelector('#flame') && document.querySelector('#flame').dataset.drawMs, {timeout: 120000});
  const f = await page.evaluate(() => {
    const d = document.querySelector('#flame').dataset;
    return {load: Number(d.loadMs), draw: Number(d.drawMs), nodes: Number(d.nodes), since: performance.now(),
      stacks: window.perflensFlame.tree.table.base.length, rects: window.perflensFlame.rects.length};
  });
  console.log(`viewer: flame graph of ${f.stacks} unique stacks (${f.nodes} tree nodes, ${f.rects} frames drawn): ` +
    `fetch+decode+tree ${f.load.toFixed(0)} ms, first draw ${f.draw.toFixed(0)} ms, page ready ${f.since.toFixed(0)} ms ` +
    `from navigation [target draw <= 1000 ms: ${verdict(f.draw <= 1000)}; fetch to drawn ${verdict(f.load + f.draw <= 1000)}]`);

  // 3. zoom: into the widest frame two levels up, and back, several times
  const z = await page.evaluate(async () => {
    const v = window.perflensFlame, calls = [], frames = [];
    const next = () => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)));
    const target = v.rects.filter(r => r[2] === 2).sort((a, b) => b[3] - a[3])[0][0];
    for (let i = 0; i < 5; i++) {
      for (const n of [target, 0]) {
        const t0 = performance.now();
        v.setZoom(n, false);
        calls.push(v.lastDrawMs);
        await next();
        frames.push(performance.now() - t0);
      }
    }
    return {calls, frames};
  });
  const zc = median(z.calls), zf = median(z.frames);
  console.log(`viewer: zoom redraw of the ${f.stacks}-stack graph: ${zc.toFixed(1)} ms layout+paint, ` +
    `${zf.toFixed(1)} ms until the frame is shown (median of ${z.calls.length}) [target <= 100 ms: ${verdict(zf <= 100)}]`);
} finally {
  await browser.close();
}
