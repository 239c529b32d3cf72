// fleet_browser.mjs - the viewer's Fleet page in Debian's Chromium
// (puppeteer-core), checked against the fleet tools' own answers that
// fleet.py wrote beforehand (the same registry over MCP: the oracle).
//
//   node fleet_browser.mjs CONFIG.json
//
// CONFIG: {login, base, chromium, out, devices, changed: [FUNCTION...],
// a: "KEY=VALUE", b: "KEY=VALUE"}.  Prints ok / not ok lines.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { tap, launch, login } from './browser_common.mjs';

const cfg = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const {check, failed} = tap('fleet viewer');

const browser = await launch(cfg);
let page;
try {
  page = await browser.newPage();
  await page.setViewport({width: 1280, height: 900});
  await login(page, cfg.login);
  const q = new URLSearchParams({view: 'fleet', e: 'cycles', fa: cfg.a, fb: cfg.b});
  await page.goto(`${cfg.base}/viewer/?${q}`, {waitUntil: 'load'});
  await page.waitForSelector('#fleet-compare', {timeout: 90000});  // three fleet calls on ClickHouse, ASan builds included
  const devices = await page.$$eval('#fleet-devices tbody tr', rows => rows.length);
  check(devices === cfg.devices, `the Fleet page lists the store's ${cfg.devices} devices (${devices})`);
  const rows = await page.$$eval('#fleet-compare tbody tr', rs => rs.map(r => [r.children[0].textContent,
    r.children[8].textContent]));
  const changed = rows.filter(r => r[1] === 'changed').map(r => r[0]).sort();
  check(JSON.stringify(changed) === JSON.stringify(cfg.changed),
    `comparing ${cfg.a} with ${cfg.b} marks ${JSON.stringify(changed)} changed, as fleet_compare does`,
    JSON.stringify(rows));
  const hot = await page.$$eval('#fleet-hotspots tbody tr', rs => rs.length);
  check(hot > 0, `the top functions table has rows (${hot})`);
  await page.screenshot({path: path.join(cfg.out, 'fleet.png'), fullPage: true});
} catch (e) {
  const text = page ? await page.evaluate(() => document.body.innerText).catch(() => '') : '';
  check(false, 'the Fleet page renders', `${String(e).slice(0, 200)}; the page says: ${text.slice(0, 400)}`);
} finally {
  await browser.close();
}
process.exit(failed() ? 1 : 0);
