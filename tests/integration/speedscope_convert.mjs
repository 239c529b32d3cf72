// speedscope_convert.mjs - speedscope itself turns profiles of other formats
// into speedscope JSON, for test_json_inputs.sh to read.
//
// The npm package `speedscope` ships no speedscope-format sample; it ships
// its web app (dist/release) with one sample of another format, the
// collapsed stacks its "load an example profile" link opens.  So the app
// runs here in Debian's Chromium (puppeteer-core, headless), served from
// the installed package by a local HTTP server: it opens that example, or
// a file given (e.g. a node --cpu-prof .cpuprofile, through its Browse
// button), with its own importers, and its Export button writes the
// speedscope JSON, which is saved to OUT_DIR.
//
// Usage: node speedscope_convert.mjs CHROMIUM OUT_DIR [FILE]
//   prints the path written; OUT_DIR/example.txt is the collapsed sample
//   the example is made from (the test's oracle reads it too).
import { createRequire } from 'node:module';
import { createServer } from 'node:http';
import { copyFileSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const require = createRequire(path.join(here, '../mcp/package.json'));
const puppeteer = require('puppeteer-core');
const [chromium, outDir, input] = process.argv.slice(2);
const release = path.join(path.dirname(require.resolve('speedscope/package.json')), 'dist/release');
const example = readdirSync(release).find(f => f.endsWith('.txt'));
if (!example) throw new Error(`no sample profile in ${release}`);
mkdirSync(outDir, { recursive: true });
copyFileSync(path.join(release, example), path.join(outDir, 'example.txt'));

const types = { '.html': 'text/html', '.js': 'text/javascript', '.css': 'text/css', '.wasm': 'application/wasm' };
const server = createServer((req, res) => {
  const name = path.basename(decodeURIComponent(new URL(req.url, 'http://x').pathname)) || 'index.html';
  try {
    const body = readFileSync(path.join(release, name));
    res.writeHead(200, { 'content-type': types[path.extname(name)] || 'application/octet-stream' });
    res.end(body);
  } catch {
    res.writeHead(404);
    res.end();
  }
});
await new Promise(r => server.listen(0, '127.0.0.1', r));

const browser = await puppeteer.launch({
  executablePath: chromium, headless: true,
  args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-extensions'],
});
try {
  const page = await browser.newPage();
  const errors = [];
  page.on('pageerror', e => errors.push(e.message));
  const cdp = await page.createCDPSession();
  await cdp.send('Browser.setDownloadBehavior', { behavior: 'allow', downloadPath: path.resolve(outDir) });
  await page.goto(`http://127.0.0.1:${server.address().port}/index.html`, { waitUntil: 'load' });
  if (input) {
    const [chooser] = await Promise.all([
      page.waitForFileChooser({ timeout: 20000 }),
      page.locator('::-p-text(Browse)').click(),
    ]);
    await chooser.accept([path.resolve(input)]);
  } else {
    await page.locator('::-p-text(click here)').click();
  }
  const before = new Set(readdirSync(outDir));
  await page.locator('::-p-text(Export)').setTimeout(30000).click();
  let written;
  for (let i = 0; i < 200 && !written; i++) {
    await new Promise(r => setTimeout(r, 100));
    written = readdirSync(outDir).find(f => !before.has(f) && f.endsWith('.speedscope.json'));
  }
  if (!written) throw new Error(`speedscope's Export wrote nothing${errors.length ? ': ' + errors.join('; ') : ''}`);
  console.log(path.join(outDir, written));
} finally {
  await browser.close();
  server.close();
}
