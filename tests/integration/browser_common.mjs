// browser_common.mjs - what every viewer script in Chromium does the same
// way: launch Debian's Chromium through puppeteer-core, print TAP lines,
// log in with the one-time URL, and wait for a page's render.
//
// Logging in is the step that needs care: /viewer/login answers 200 with
// a <meta http-equiv="refresh"> to /viewer/ (a new same-site navigation,
// so the SameSite=Strict cookie is sent even when the link was opened
// from elsewhere).  page.goto() resolves on the login page's own load,
// before that refresh; a goto() issued then races the refresh, and on a
// loaded machine the refresh wins and the page ends on the analyses list.
// login() therefore waits until /viewer/ itself has rendered.
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const require = createRequire(path.join(here, '../mcp/package.json'));
export const puppeteer = require('puppeteer-core');

// check(cond, what, why) prints "ok - PREFIX: what" or "not ok - ...";
// failed() tells whether any check failed, for the exit code.
export function tap(prefix) {
  let failures = 0;
  const check = (cond, what, why) => {
    if (cond) console.log(`ok - ${prefix}: ${what}`);
    else {
      failures++;
      console.log(`not ok - ${prefix}: ${what}${why ? ': ' + why : ''}`);
    }
  };
  return {check, failed: () => failures > 0};
}

export function launch(cfg) {
  return puppeteer.launch({executablePath: cfg.chromium, headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-extensions']});
}

// Wait for a render newer than `before` (the page's data-ready counter).
export async function rendered(page, before, timeout = 30000) {
  await page.waitForFunction(prev => document.body.dataset.ready && document.body.dataset.ready !== prev,
    {timeout}, before ?? '');
}
export const readyOf = page => page.evaluate(() => document.body.dataset.ready || '');
export async function act(page, fn) {
  const before = await readyOf(page);
  await fn();
  await rendered(page, before);
}

// Open a one-time login URL and wait until the refresh has landed on
// /viewer/ and that page has rendered; returns the login's response.
export async function login(page, url, timeout = 30000) {
  const res = await page.goto(url, {waitUntil: 'load'});
  await page.waitForFunction(() => location.pathname === '/viewer/' && document.body.dataset.ready,
    {timeout});
  return res;
}

export const shotter = out => (page, name) =>
  page.screenshot({path: path.join(out, name + '.png'), fullPage: true});
