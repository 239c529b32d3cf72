// e2e.mjs - perflens-mcp end to end with the official TypeScript SDK client.
//
//   node e2e.mjs --stdio SERVER [SERVER-ARGS...]
//   node e2e.mjs --http URL            (bearer token in $PERFLENS_TOKEN)
//   common: --shared DIR (the peers' data) --label NAME
//
// Initializes, lists every tool page, analyzes two real captures, pages
// list_hotspots to its end, calls every tool, reads a resource, gets every
// prompt, completes an analysis_id.  Every structuredContent is validated
// against its tool's outputSchema with ajv (JSON Schema 2020-12) and the
// text block must parse to the same JSON.  Prints one line per check:
// "ok - ...", "not ok - ...: why" (tests/integration/run.sh counts them);
// exits 0 when every check passed, 1 otherwise.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import Ajv2020 from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { isDeepStrictEqual } from 'node:util';
import path from 'node:path';

// ------------------------------------------------------------ arguments
const argv = process.argv.slice(2);
let mode = null, target = null, serverArgs = [], shared = null, label = null, elf = null, bench = null;
for (let i = 0; i < argv.length; i++) {
  const a = argv[i];
  if (a === '--shared') shared = argv[++i];
  else if (a === '--label') label = argv[++i];
  else if (a === '--elf') elf = argv[++i];        // an ELF file under the server's roots
  else if (a === '--bench') bench = argv[++i];    // a benchmark result under the server's roots
  else if (a === '--http') { mode = 'http'; target = argv[++i]; }
  else if (a === '--stdio') { mode = 'stdio'; target = argv[++i]; serverArgs = argv.slice(i + 1); break; }
  else { console.error(`e2e.mjs: unknown argument ${a}`); process.exit(2); }
}
if (!mode || !target || !shared) {
  console.error('usage: node e2e.mjs --shared DIR [--label L] (--http URL | --stdio SERVER ARGS...)');
  process.exit(2);
}
label = label ?? `e2e ${mode}`;

// -------------------------------------------------------------- reports
let failures = 0;
const ok = (what) => console.log(`ok - ${label}: ${what}`);
const notok = (what, why) => {
  failures++;
  console.log(`not ok - ${label}: ${what}: ${String(why).replace(/\s+/g, ' ').slice(0, 600)}`);
};
const check = (what, cond, why = '') => (cond ? ok(what) : notok(what, why || 'false'), !!cond);
const short = (v) => JSON.stringify(v)?.slice(0, 300);

// ------------------------------------------------------------ the client
const client = new Client({ name: 'perflens-e2e', version: '1.0.0' }, { capabilities: {} });
let transport;
let stderrText = '';
if (mode === 'stdio') {
  transport = new StdioClientTransport({ command: target, args: serverArgs, stderr: 'pipe' });
  transport.stderr?.on('data', (d) => { stderrText += d.toString(); });
} else {
  const token = process.env.PERFLENS_TOKEN ?? '';
  transport = new StreamableHTTPClientTransport(new URL(target), {
    requestInit: { headers: { Authorization: `Bearer ${token}` } },
  });
}
const TIMEOUT = { timeout: 60000 };

const ajv = new Ajv2020({ allErrors: true, strict: false });
addFormats(ajv);
const validators = new Map();   // tool name -> compiled outputSchema
const called = new Set();       // tools called successfully at least once

// Call a tool and check its result: structuredContent conforms to the
// tool's outputSchema and the one text block is the same JSON.  Returns
// {sc, problems}; problems is empty when everything held.
async function run(name, args) {
  let res;
  try {
    res = await client.callTool({ name, arguments: args }, undefined, TIMEOUT);
  } catch (e) {
    return { sc: null, problems: [`${name} ${short(args)} threw: ${e.message}`] };
  }
  if (res.isError) return { sc: null, problems: [`${name} ${short(args)} answered isError: ${res.content?.[0]?.text}`] };
  const problems = [];
  const sc = res.structuredContent;
  const v = validators.get(name);
  if (!v) problems.push(`no compiled outputSchema for ${name}`);
  else if (!v(sc)) problems.push(`outputSchema: ${ajv.errorsText(v.errors, { separator: '; ' })}`);
  const texts = (res.content ?? []).filter((c) => c.type === 'text');
  let parsed;
  try {
    parsed = texts.length === 1 ? JSON.parse(texts[0].text) : undefined;
  } catch (e) {
    parsed = `unparsable: ${e.message}`;
  }
  if (texts.length !== 1) problems.push(`${texts.length} text blocks`);
  else if (!isDeepStrictEqual(parsed, sc)) problems.push(`text ${short(parsed)} differs from structuredContent ${short(sc)}`);
  if (!problems.length) called.add(name);
  return { sc: sc ?? null, problems };
}

// One call, one check line.
async function call(name, args, what) {
  const { sc, problems } = await run(name, args);
  check(`${what}: structuredContent conforms to the outputSchema, text block is the same JSON`,
    problems.length === 0, problems.join('; '));
  return problems.length ? null : sc;
}

// A call that must be refused with an isError result naming the problem.
async function callError(name, args, what, mustInclude = []) {
  let res;
  try {
    res = await client.callTool({ name, arguments: args }, undefined, TIMEOUT);
  } catch (e) {
    notok(what, `${name} ${short(args)} threw: ${e.message}`);
    return null;
  }
  const text = res.content?.[0]?.text ?? '';
  check(what, res.isError === true && res.structuredContent === undefined && text.length > 0 &&
    mustInclude.every((m) => text.includes(m)), `expected isError naming ${mustInclude.join(', ')}; got ${short(res)}`);
  return text;
}

// Follow next_cursor to the end; one check line for all the pages.
async function followPages(name, args, what, itemsKey) {
  const items = [], problems = [], cursors = new Set();
  let cursor = null, n = 0, last = null, offsetsOk = true;
  for (;;) {
    const { sc, problems: p } = await run(name, cursor ? { ...args, cursor } : args);
    n++;
    problems.push(...p.map((x) => `page ${n}: ${x}`));
    if (!sc) break;
    if (sc.page.offset !== items.length) offsetsOk = false;
    items.push(...sc[itemsKey]);
    last = sc;
    cursor = sc.page.next_cursor;
    if (!cursor) break;
    if (cursors.has(cursor) || n >= 500) { problems.push(`next_cursor ${cursor} does not advance`); break; }
    cursors.add(cursor);
  }
  check(`${what}: ${n} pages, each conforms to the outputSchema with a matching text block`,
    problems.length === 0, problems.slice(0, 3).join('; '));
  return { items, n, last, offsetsOk };
}

async function main() {
  // ---------------------------------------------------------- initialize
  if (mode === 'http') {
    // Without the bearer token the server refuses to talk (401).
    const anon = new Client({ name: 'perflens-e2e-anon', version: '1.0.0' }, { capabilities: {} });
    try {
      await anon.connect(new StreamableHTTPClientTransport(new URL(target)), { timeout: 10000 });
      notok('a client without the bearer token is refused', 'initialize succeeded');
    } catch (e) {
      check('a client without the bearer token is refused (401)', e.code === 401, `code ${e.code}: ${e.message}`);
    }
    await anon.close().catch(() => {});
  }
  try {
    await client.connect(transport, TIMEOUT);
  } catch (e) {
    notok('initialize', e.message);
    return;
  }
  const info = client.getServerVersion();
  const caps = client.getServerCapabilities() ?? {};
  check('initialize: serverInfo names perflens-mcp', info?.name === 'perflens-mcp', short(info));
  check('initialize: tools, resources, prompts, logging and completions declared',
    caps.tools && caps.resources && caps.prompts && caps.logging && caps.completions, short(caps));
  if (mode === 'http') check('a session id (Mcp-Session-Id) was issued', !!transport.sessionId, 'no Mcp-Session-Id');

  try {
    await client.ping(TIMEOUT);
    ok('ping');
  } catch (e) {
    notok('ping', e.message);
  }

  // ------------------------------------------------------------ tools/list
  const tools = [];
  let cursor, pages = 0;
  const seenCursors = new Set();
  try {
    do {
      const r = await client.listTools(cursor ? { cursor } : {}, TIMEOUT);
      tools.push(...r.tools);
      pages++;
      cursor = r.nextCursor;
      if (cursor && seenCursors.has(cursor)) throw new Error(`nextCursor ${cursor} repeats`);
      if (cursor) seenCursors.add(cursor);
    } while (cursor && pages < 100);
    const names = tools.map((t) => t.name);
    check(`tools/list: ${tools.length} tools in ${pages} page(s), no duplicates`,
      tools.length > 0 && new Set(names).size === names.length, names.join(','));
  } catch (e) {
    notok('tools/list', e.message);
  }
  for (const t of tools) {
    try {
      if (!t.outputSchema) throw new Error('no outputSchema');
      validators.set(t.name, ajv.compile(t.outputSchema));
      ajv.compile(t.inputSchema);
    } catch (e) {
      notok(`tools/list: ${t.name}'s inputSchema and outputSchema compile as JSON Schema 2020-12`, e.message);
      continue;
    }
    ok(`tools/list: ${t.name}'s inputSchema and outputSchema compile as JSON Schema 2020-12`);
  }
  check('tools/list: the test-only test_fault tool is not listed',
    !tools.some((t) => t.name === 'test_fault'), 'test_fault is listed');

  // --------------------------------------------------------- analyze
  const vertx = path.join(shared, 'peers/flamegraph/test/perf-vertx-stacks-01.txt');
  const session = path.join(shared, 'peers/device-sessions/session-x86-baseline');
  const a1 = await call('analyze_profile', { path: vertx }, 'analyze_profile perf-vertx-stacks-01.txt');
  const a2 = await call('analyze_profile', { path: session }, 'analyze_profile device session folder');
  if (!a1 || !a2) {
    notok('analyses needed by the later checks', 'analyze_profile failed');
    return;
  }
  const id1 = a1.analysis_id, id2 = a2.analysis_id;
  const ev1 = a1.events[0].name;
  check(`analyze_profile: vertx has one event (${ev1}) with samples`,
    a1.events.length === 1 && a1.events[0].samples > 0, short(a1.events));
  check('analyze_profile: the device session keeps several events apart',
    a2.events.length > 1, short(a2.events.map((e) => e.name)));
  const again = await call('analyze_profile', { path: vertx }, 'analyze_profile again (same input)');
  check('analyze_profile: the same input gives the same analysis_id', again?.analysis_id === id1,
    `${again?.analysis_id} vs ${id1}`);

  // ---------------------------------------------- list_hotspots to the end
  {
    const { items: all, n, last, offsetsOk: offsets } = await followPages('list_hotspots', { analysis_id: id1, limit: 7 },
      'list_hotspots limit=7 followed through next_cursor', 'hotspots');
    const total = last?.page.total_items;
    let contiguous = true;
    for (let i = 1; i < all.length; i++) if (all[i].rank !== all[i - 1].rank + 1) contiguous = false;
    check(`list_hotspots: ${n} pages followed to the end, ${all.length} items = total_items ${total}`,
      total !== undefined && all.length === total && n > 1, `collected ${all.length}, total_items ${total}, pages ${n}`);
    check('list_hotspots: ranks are contiguous across pages', contiguous && all.length > 0 && (all[0].rank === 0 || all[0].rank === 1),
      short(all.map((h) => h.rank)));
    check('list_hotspots: each page starts at the offset where the last one ended', offsets, 'page.offset mismatch');
    check('list_hotspots: self weights never increase down the list',
      all.every((h, i) => i === 0 || h.self.samples <= all[i - 1].self.samples), 'not sorted by self');
    const ids = new Set(all.map((h) => h.hotspot_id));
    check('list_hotspots: hotspot ids are unique', ids.size === all.length, `${ids.size} unique of ${all.length}`);

    const top = all[0];
    if (top) {
      const hs = await call('get_hotspot', { analysis_id: id1, hotspot_id: top.hotspot_id }, `get_hotspot ${top.hotspot_id}`);
      check('get_hotspot: same symbol and self weight as list_hotspots',
        hs && hs.symbol === top.symbol && hs.self.samples === top.self.samples, short(hs));
      const cp = await call('get_call_paths', { analysis_id: id1, symbol: top.symbol, limit: 5 }, 'get_call_paths symbol=top hotspot');
      check('get_call_paths: paths through the top hotspot', cp && cp.paths.length > 0, short(cp));
    }
    await call('list_hotspots', { analysis_id: id1, sort: 'inclusive', limit: 5 }, 'list_hotspots sort=inclusive');
    await call('get_call_paths', { analysis_id: id1 }, 'get_call_paths (no symbol)');
  }

  // --------------------------------------------------- several events
  {
    await callError('list_hotspots', { analysis_id: id2 },
      'list_hotspots without event on a multi-event analysis: isError naming every event', a2.events.map((e) => e.name));
    await call('list_hotspots', { analysis_id: id2, event: a2.events[0].name, limit: 3 }, `list_hotspots event=${a2.events[0].name}`);
    const st = await call('get_perf_stat', { analysis_id: id2 }, 'get_perf_stat device session');
    check('get_perf_stat: one block per chunk of the session', st && st.blocks.length === a2.inputs.length,
      `${st?.blocks.length} blocks, ${a2.inputs.length} inputs`);
    // The session's chunks are perf script text with times: a timeline,
    // whose buckets add up to the event's samples.
    const ev = a2.events[0];
    const tl = await call('get_timeline', { analysis_id: id2, event: ev.name, buckets: 20 }, 'get_timeline device session');
    check('get_timeline: at most 20 buckets holding every sample of the event',
      tl && tl.samples.length <= 20 && tl.samples.reduce((x, y) => x + y, 0) === ev.samples,
      `${short(tl?.samples)} vs ${ev.samples}`);
  }

  // -------------------------------------------------------------- exports
  const folded = await call('export_profile', { analysis_id: id1, format: 'folded' }, 'export_profile folded');
  const svg = await call('export_profile', { analysis_id: id1, format: 'svg', title: 'e2e' }, 'export_profile svg');
  check('export_profile: folded and svg files have bytes', folded?.bytes > 0 && svg?.bytes > 0, `${short(folded)} ${short(svg)}`);

  // ------------------------------------------------------------ artifacts
  {
    const { items: arts } = await followPages('list_artifacts', { limit: 2 }, 'list_artifacts limit=2 followed through next_cursor', 'artifacts');
    const paths = arts.map((a) => a.path);
    check(`list_artifacts: both analyses and both exports listed (${arts.length} artifacts)`,
      [id1, id2].every((id) => paths.includes(`analyses/${id}.json`)) &&
      paths.some((p) => p.endsWith('.svg')) && paths.some((p) => p.endsWith('.folded') || p.includes('folded')),
      paths.join(','));
  }
  let pagesText = '';
  {
    let offset = 0, n = 0;
    const problems = [];
    do {
      const { sc, problems: p } = await run('read_artifact_page', { artifact: `analyses/${id1}.json`, offset, limit_bytes: 32768 });
      problems.push(...p);
      if (!sc) break;
      pagesText += sc.text;
      offset = sc.next_offset;
      n++;
    } while (offset !== null && n < 50);
    check(`read_artifact_page: ${n} pages each conform to the outputSchema with a matching text block`,
      problems.length === 0, problems.slice(0, 3).join('; '));
    let doc = null;
    try { doc = JSON.parse(pagesText); } catch { /* reported below */ }
    check(`read_artifact_page: the ${n} pages rebuild the analysis JSON`, doc?.id === id1,
      `${pagesText.length} bytes, starts ${pagesText.slice(0, 80)}`);
  }

  // ------------------------------------------- evidence, symbols, benchmarks
  await call('classify_hotspots', { analysis_id: id1 }, 'classify_hotspots vertx');
  await call('build_report', { analysis_id: id1, problem: 'e2e: where does vertx spend CPU?', metric: 'CPU samples' },
    'build_report vertx');
  await call('compare_profiles', { baseline_id: id1, candidate_id: id1 }, 'compare_profiles vertx against itself');
  // vertx has no srclines: the answer is an error that says how to get them.
  const sctext = await callError('source_context', { analysis_id: id1, file: 'vertx.c' },
    'source_context without srclines: isError saying how to get them', ['srcline']);
  if (sctext !== null) called.add('source_context');
  if (elf) {
    await call('inspect_elf', { path: elf }, 'inspect_elf');
    await call('symbolize', { binary: elf, offsets: ['0x1000', '0x2000'] }, 'symbolize two offsets');
  }
  // Collection is off on this server: both tools say which flag opens it.
  const side = { executable: elf ?? '/bin/true' };
  for (const [tool, args] of [['collect_profile', { executable: elf ?? '/bin/true', authorization: 'I_EXPLICITLY_AUTHORIZE_TARGET_PROFILING' }],
                              ['run_experiment', { baseline: side, candidate: side, authorization: 'I_EXPLICITLY_AUTHORIZE_TARGET_PROFILING' }],
                              ['inspect_collection_capabilities', {}]]) {
    const text = await callError(tool, args, `${tool} on a server without --allow-collection: isError naming the flag`,
      ['--allow-collection']);
    if (text !== null) called.add(tool);
  }
  if (bench) {
    const nb = await call('normalize_benchmark', { path: bench }, 'normalize_benchmark pyperf fixture');
    if (nb?.benchmark_id)
      await call('compare_benchmarks', { baseline_id: nb.benchmark_id, candidate_id: nb.benchmark_id },
        'compare_benchmarks against itself');
  }

  // ------------------------------------------------ any other listed tool
  for (const t of tools) {
    if (called.has(t.name) || t.name === 'test_fault') continue;
    const req = t.inputSchema?.required ?? [];
    if (req.every((k) => k === 'analysis_id')) {
      await call(t.name, req.length ? { analysis_id: id1 } : {}, `${t.name} (listed tool)`);
    } else {
      notok(`${t.name} (listed tool)`, `e2e.mjs does not know how to call it (required: ${req.join(', ')})`);
    }
  }
  const missing = tools.filter((t) => !called.has(t.name)).map((t) => t.name);
  check('every listed tool was called with a valid result', missing.length === 0, `not called: ${missing.join(', ')}`);

  // ------------------------------------------------------------ resources
  try {
    const res = [];
    let c, n = 0;
    do {
      const r = await client.listResources(c ? { cursor: c } : {}, TIMEOUT);
      res.push(...r.resources);
      c = r.nextCursor;
      n++;
    } while (c && n < 100);
    const uri = `perflens://artifacts/analyses/${id1}.json`;
    check(`resources/list: lists ${uri}`, res.some((r) => r.uri === uri), res.map((r) => r.uri).join(','));
    const rr = await client.readResource({ uri }, TIMEOUT);
    const body = JSON.parse(rr.contents[0].text);
    check('resources/read: the analysis JSON, same as read_artifact_page', body.id === id1 &&
      rr.contents[0].mimeType === 'application/json' && rr.contents[0].text === pagesText,
      `${rr.contents[0].mimeType}, ${rr.contents[0].text.length} vs ${pagesText.length} bytes`);
  } catch (e) {
    notok('resources/list and resources/read', e.message);
  }
  try {
    const tl = await client.listResourceTemplates({}, TIMEOUT);
    check('resources/templates/list: the analysis template', tl.resourceTemplates.some((t) => t.uriTemplate.includes('{analysis_id}')),
      short(tl));
  } catch (e) {
    notok('resources/templates/list', e.message);
  }
  try {
    await client.readResource({ uri: 'perflens://artifacts/analyses/an-00000000000000000000.json' }, TIMEOUT);
    notok('resources/read of a missing analysis is an error', 'it succeeded');
  } catch (e) {
    check('resources/read of a missing analysis is an error', /-32002|not found/i.test(e.message), e.message);
  }

  // -------------------------------------------------------------- prompts
  try {
    const pl = await client.listPrompts({}, TIMEOUT);
    check(`prompts/list: ${pl.prompts.length} prompts`, pl.prompts.length > 0, short(pl));
    for (const p of pl.prompts) {
      const args = {};
      for (const a of p.arguments ?? []) args[a.name] = a.name === 'analysis_id' ? id1 : `value-of-${a.name}`;
      const g = await client.getPrompt({ name: p.name, arguments: args }, TIMEOUT);
      const text = g.messages?.[0]?.content?.text ?? '';
      check(`prompts/get ${p.name}: a user message with every argument filled in`,
        g.messages.length > 0 && Object.values(args).every((v) => text.includes(v)) && !/\{[a-z_]+\}/.test(text),
        text.slice(0, 200));
    }
    try {
      await client.getPrompt({ name: pl.prompts[0].name, arguments: {} }, TIMEOUT);
      notok('prompts/get without its required arguments is an error', 'it succeeded');
    } catch (e) {
      check('prompts/get without its required arguments is an error', /-32602/.test(e.message), e.message);
    }
  } catch (e) {
    notok('prompts', e.message);
  }

  // ----------------------------------------------------------- completion
  try {
    const prompt = 'explain_hotspot';
    const r = await client.complete({ ref: { type: 'ref/prompt', name: prompt },
      argument: { name: 'analysis_id', value: 'an-' } }, TIMEOUT);
    check('completion/complete analysis_id: offers both analyses for "an-"', r.completion.values.includes(id1) &&
      r.completion.values.includes(id2), short(r));
    const r2 = await client.complete({ ref: { type: 'ref/prompt', name: prompt },
      argument: { name: 'analysis_id', value: id1.slice(0, 12) } }, TIMEOUT);
    check('completion/complete analysis_id: a longer prefix narrows to that analysis',
      r2.completion.values.length >= 1 && r2.completion.values.every((v) => v.startsWith(id1.slice(0, 12))) &&
      r2.completion.values.includes(id1), short(r2));
  } catch (e) {
    notok('completion/complete', e.message);
  }

  // -------------------------------------------- a refused call, then ping
  await callError('analyze_profile', { path: '/etc/passwd' }, 'analyze_profile outside the allowed root: isError with path_refused', ['path_refused']);
  try {
    await client.ping(TIMEOUT);
    ok('ping after everything');
  } catch (e) {
    notok('ping after everything', e.message);
  }
}

const watchdog = setTimeout(() => {
  notok('finished in time', 'e2e.mjs ran for more than 120 s');
  process.exit(1);
}, 120000);
try {
  await main();
} catch (e) {
  notok('unexpected exception', e.stack ?? e);
}
if (mode === 'http') {
  try {
    await transport.terminateSession();
    ok('DELETE ends the session');
  } catch (e) {
    notok('DELETE ends the session', e.message);
  }
}
await client.close().catch(() => {});
if (mode === 'stdio') {
  await new Promise((r) => setTimeout(r, 300));
  const bad = stderrText.split('\n').filter((l) => /AddressSanitizer|LeakSanitizer|runtime error|^perflens.*(abort|assert)/.test(l));
  check('stdio server wrote no sanitizer report on stderr', bad.length === 0, bad.slice(0, 3).join(' | '));
}
clearTimeout(watchdog);
process.exit(failures ? 1 : 0);
