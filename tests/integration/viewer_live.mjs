// viewer_live.mjs - the viewer's live page in Debian's Chromium
// (puppeteer-core) while a real device agent streams into the session
// test_viewer_live.sh started: the page's counts and sparklines must grow
// without a reload (long polling), and equal list_sessions and
// get_device_metrics read through the same API at the same moment; the
// device table's chunks of the session agree with the session table's;
// an analysis of the session made while the page is open shows there.
//
//   node viewer_live.mjs CONFIG.json    CONFIG: {base, login, chromium, out, session, analyze}
//
// analyze: the command (argv) that analyzes the session, run mid-way: the
// page's profile section must then show that analysis's hotspots.  Without
// it the server analyzes by itself (--live-analysis-interval-ms): a first
// analysis, then a newer one of more chunks, must show without a reload.
//
// Prints "ok - ..." / "not ok - ..." lines and saves two screenshots.
import { readFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { tap, launch, login, shotter } from './browser_common.mjs';

const cfg = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const {check, failed} = tap('viewer live');
const shot = shotter(cfg.out);
const parse = t => { const n = (t.match(/\d[\d,]*/g) || []).map(x => Number(x.replace(/,/g, ''))); return {chunks: n[0], bytes: n[1], system: n[2], process: n[3]}; };

const browser = await launch(cfg);
try {
  const page = await browser.newPage();
  await page.setViewport({width: 1280, height: 900});
  await login(page, cfg.login);
  await page.goto(`${cfg.base}/viewer/?view=live&s=${cfg.session}`, {waitUntil: 'load'});
  await page.waitForSelector('#live-counts', {timeout: 20000});
  const first = parse(await page.$eval('#live-counts', e => e.textContent));
  await shot(page, '01-live-start');
  // Wait (no reload) for the page to show at least two more chunks and
// 8 KB of text (a first chunk may hold only the PERF_STAT section).
  let grown = null;
  try {
    await page.waitForFunction(c0 => {
      const n = (document.querySelector('#live-counts')?.textContent.match(/\d[\d,]*/g) || []).map(x => Number(x.replace(/,/g, '')));
      return n[0] >= c0 + 2 && n[1] >= 8192 && n[2] > 0;  // samples, not only the first PERF_STAT
    }, {timeout: 90000, polling: 250}, first.chunks);
    grown = parse(await page.$eval('#live-counts', e => e.textContent));
  } catch (e) {
    grown = parse(await page.$eval('#live-counts', x => x.textContent));
  }
  check(grown.chunks >= first.chunks + 2 && grown.bytes >= 8192,
    `the live page grows as the agent's chunks arrive, without a reload (${first.chunks} -> ${grown.chunks} chunks, ${first.bytes} -> ${grown.bytes} bytes)`,
    JSON.stringify({first, grown}));
  await shot(page, '02-live-grown');
  // The page against the tools, read through the same API right after.
  const tools = await page.evaluate(async s => {
    const call = async (tool, args) => (await (await fetch('/viewer/api/call', {method: 'POST',
      headers: {'Content-Type': 'application/json'}, body: JSON.stringify({tool, arguments: args})})).json()).result;
    const ls = await call('list_sessions', {});
    const sys = await call('get_device_metrics', {session: s, type: 'system', limit: 200});
    const text = document.querySelector('#live-counts').textContent;
    return {session: ls.sessions.find(x => x.session === s), system: sys.frames.length, text};
  }, cfg.session);
  const shown = parse(tools.text);
  check(tools.session && tools.session.live === true && shown.chunks <= tools.session.chunks &&
        shown.chunks >= tools.session.chunks - 2,
    `the counts shown follow list_sessions (page ${shown.chunks}, tool ${tools.session && tools.session.chunks} chunks; live)`,
    JSON.stringify(tools));
  check(shown.system > 0 && shown.system <= tools.system && shown.system >= tools.system - 2,
    `the system metrics shown follow get_device_metrics (page ${shown.system}, tool ${tools.system} frames)`,
    JSON.stringify(tools));
  // The device row names the session and its chunks as the session
  // table counts them (both read for the same render; a chunk may land
  // between the two reads).
  const rows = await page.evaluate(s => ({
    device: document.querySelector(`#devices tr[data-session="${s}"]`)?.dataset.sessionChunks,
    session: document.querySelector(`#sessions tr[data-session="${s}"]`)?.dataset.chunks,
  }), cfg.session);
  check(rows.device !== undefined && rows.session !== undefined &&
        Math.abs(Number(rows.device) - Number(rows.session)) <= 1,
    `the device row's chunks of the session agree with the session table's (${rows.device} and ${rows.session})`,
    JSON.stringify(rows));
  // The profile: none until an analysis of the session exists; then,
  // without a reload, its hotspots as list_hotspots gives them.  With no
  // analyze command the server analyzes by itself
  // (--live-analysis-interval-ms): nobody runs anything, and a newer
  // analysis, of more chunks, must replace the first without a reload.
  const readProfile = () => page.evaluate(async () => {
    const of = document.querySelector('#live-profile-of');
    const id = of.dataset.analysis;
    const shown = [...document.querySelectorAll('#live-hotspots tbody tr')].map(r => r.dataset.symbol);
    const r = await (await fetch('/viewer/api/call', {method: 'POST', headers: {'Content-Type': 'application/json'},
      body: JSON.stringify({tool: 'list_hotspots', arguments: {analysis_id: id, limit: 10}})})).json();
    return {id, read: Number(of.dataset.chunksRead), shown, tool: r.result.hotspots.map(h => h.symbol)};
  });
  if (cfg.analyze) {
    const none = await page.$('#live-profile-none');
    check(none !== null, 'before any analysis of the session the page says how to make one');
    execFileSync(cfg.analyze[0], cfg.analyze.slice(1), {stdio: ['ignore', 'ignore', 'inherit']});
  }
  let prof = null;
  try {
    await page.waitForSelector('#live-profile-of', {timeout: 30000});
    prof = await readProfile();
  } catch (e) {
    prof = {error: String(e)};
  }
  const by = cfg.analyze ? 'an analysis of the session' : "the server's own analysis of the session (nobody analyzing)";
  check(prof && prof.id && prof.shown.length > 0 && JSON.stringify(prof.shown) === JSON.stringify(prof.tool) &&
        prof.read >= 1,
    `${by} shows without a reload: its hotspots as list_hotspots gives them (${prof && prof.shown ? prof.shown.slice(0, 3).join(', ') : '-'}; ${prof && prof.read} chunks read)`,
    JSON.stringify(prof));
  if (!cfg.analyze && prof && prof.id) {
    let later = null;
    try {
      await page.waitForFunction(n => Number(document.querySelector('#live-profile-of')?.dataset.chunksRead) > n,
        {timeout: 30000}, prof.read);
      later = await readProfile();
    } catch (e) {
      later = {error: String(e)};
    }
    check(later && later.id && later.id !== prof.id && later.read > prof.read && later.shown.length > 0 &&
          JSON.stringify(later.shown) === JSON.stringify(later.tool),
      `as chunks land a newer analysis replaces it without a reload (${prof.read} then ${later && later.read} chunks read; hotspots as list_hotspots gives them)`,
      JSON.stringify(later));
  }
  await shot(page, '03-live-profile');
  const sparks = await page.$$eval('#sparks figure', f => Object.fromEntries(f.map(x => [x.dataset.metric, Number(x.dataset.points)])));
  check(sparks.CPU > 0 && sparks['process RSS'] > 0, `the health sparklines draw the device's frames (${JSON.stringify(sparks)})`);
} finally {
  await browser.close();
}
process.exit(failed() ? 1 : 0);
