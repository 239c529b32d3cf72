// check_exports.mjs - speedscope and pprof exports checked with the tools
// their own projects publish, against the folded export of the same event.
//
//   node check_exports.mjs CASES
//
// CASES has one export to check a line, fields separated by tabs:
//   LABEL FOLDED SPEEDSCOPE PPROF EVENT UNIT SAMPLES [SRCLINE-NAME SRCLINE-FILE]
//
// The folded export is the reference: test_folded_peer.sh checks it byte
// for byte against stackcollapse-perf.pl's own expected outputs.  Checks,
// per line:
//  - speedscope: valid against the schema the npm package `speedscope`
//    ships (dist/release/file-format-schema.json, draft-07) with ajv; its
//    samples, read as frame names root to leaf and summed by weight, give
//    exactly the folded lines and weights; endValue is the total.
//  - pprof: gunzipped and decoded with the npm package `pprof-format`;
//    string_table[0] is ""; sample_type is [samples/count, EVENT/unit];
//    the weights sum to the folded total and the sample counts to the
//    analysis' sample count (SAMPLES, from the analysis summary); read
//    leaf first (process name from the comm label, then locations from the
//    last to the first, each location's lines from the last to the first)
//    the samples give exactly the folded lines; the first location's first
//    line of every sample is the folded line's last frame (leaf weights
//    compared); every id resolves; no build-id is invented; re-encoding
//    the decoded profile gives back the same bytes (nothing was skipped).
//  - with SRCLINE-NAME and SRCLINE-FILE (a capture with perf script
//    -F +srcline): the speedscope frame and the pprof function of that
//    name carry that file, and a line number.
// Prints "ok - ..." / "not ok - ...: why" lines; exits 1 on a failure.
import { createRequire } from 'node:module';
import { readFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const require = createRequire(path.join(here, '../mcp/package.json'));
const Ajv = require('ajv').default;
const { Profile } = require('pprof-format');

let args, label, failed = false;
const ok = (what) => console.log(`ok - ${label}: ${what}`);
const notok = (what, why) => { failed = true; console.log(`not ok - ${label}: ${what}: ${why}`); };
const check = (cond, what, why) => (cond ? ok(what) : notok(what, why()));

// ------------------------------------------------------- the reference
// Folded lines: "frame;frame;... weight"; the weight after the last space.
let folded, foldedTotal, foldedLeaves;
const leafOf = (stack) => stack.slice(stack.lastIndexOf(';') + 1);
function readFolded(file) {
  folded = new Map();
  foldedTotal = 0n;
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    if (!line) continue;
    const sp = line.lastIndexOf(' ');
    const stack = line.slice(0, sp), w = BigInt(line.slice(sp + 1));
    folded.set(stack, (folded.get(stack) ?? 0n) + w);
    foldedTotal += w;
  }
  foldedLeaves = new Map();
  for (const [stack, w] of folded) add(foldedLeaves, leafOf(stack), w);
}

// First difference between two maps of stack -> weight, for messages.
function firstDiff(got, want) {
  for (const [k, v] of want) if (got.get(k) !== v) return `${JSON.stringify(k).slice(0, 200)}: got ${got.get(k)}, want ${v}`;
  for (const [k, v] of got) if (!want.has(k)) return `unexpected ${JSON.stringify(k).slice(0, 200)} (${v})`;
  return null;
}
const add = (m, k, v) => m.set(k, (m.get(k) ?? 0n) + v);

// ---------------------------------------------------------- speedscope
function checkSpeedscope(file) {
  const schemaPath = path.join(path.dirname(require.resolve('speedscope/package.json')),
    'dist/release/file-format-schema.json');
  const schema = JSON.parse(readFileSync(schemaPath, 'utf8'));
  const validate = new Ajv({ allErrors: true, strict: false }).compile(schema);
  const doc = JSON.parse(readFileSync(file, 'utf8'));
  check(validate(doc), 'speedscope file is valid against speedscope\'s file-format-schema.json',
    () => JSON.stringify(validate.errors).slice(0, 400));
  const prof = doc.profiles?.[0];
  if (!prof || doc.profiles.length !== 1 || prof.type !== 'sampled') {
    notok('speedscope holds one sampled profile', JSON.stringify(doc.profiles?.map((p) => p.type)));
    return;
  }
  ok('speedscope holds one sampled profile');
  const wantUnit = args.unit === 'ns' ? 'nanoseconds' : 'none';
  check(prof.unit === wantUnit && prof.name === args.event, `speedscope profile is ${args.event} in ${wantUnit}`,
    () => `${prof.name} in ${prof.unit}`);
  const got = new Map();
  let total = 0n, badIndex = 0;
  prof.samples.forEach((s, i) => {
    const names = s.map((f) => { if (!doc.shared.frames[f]) badIndex++; return doc.shared.frames[f]?.name; });
    add(got, names.join(';'), BigInt(prof.weights[i]));
    total += BigInt(prof.weights[i]);
  });
  check(badIndex === 0 && prof.samples.length === prof.weights.length,
    'speedscope samples and weights pair up and every frame index resolves',
    () => `${badIndex} bad indexes, ${prof.samples.length} samples, ${prof.weights.length} weights`);
  const diff = firstDiff(got, folded);
  check(diff === null, `speedscope stacks root to leaf and weights equal the folded export (${folded.size} lines)`, () => diff);
  if (args['srcline-name']) {
    const fr = doc.shared.frames.filter((f) => f.name === args['srcline-name']);
    check(fr.some((f) => f.file === args['srcline-file'] && f.line > 0),
      `speedscope frame ${args['srcline-name']} carries ${args['srcline-file']} and a line`, () => JSON.stringify(fr).slice(0, 300));
  }
  check(total === foldedTotal && BigInt(prof.endValue) === foldedTotal,
    `speedscope total ${total} and endValue equal the folded total`, () => `${total} / ${prof.endValue} vs ${foldedTotal}`);
}

// --------------------------------------------------------------- pprof
function checkPprof(file) {
  const raw = gunzipSync(readFileSync(file));
  const p = Profile.decode(raw);
  const str = p.stringTable.strings;
  const s = (i) => str[Number(i)];
  check(str.length > 0 && str[0] === '', 'pprof string_table[0] is ""', () => JSON.stringify(str[0]));
  const types = p.sampleType.map((t) => `${s(t.type)}/${s(t.unit)}`);
  const wantUnit = args.unit === 'ns' ? 'nanoseconds' : 'count';
  check(types.join(',') === `samples/count,${args.event}/${wantUnit}`,
    `pprof sample_type is samples/count, ${args.event}/${wantUnit}`, () => types.join(','));
  check(s(p.defaultSampleType) === args.event, 'pprof default_sample_type is the event', () => s(p.defaultSampleType));

  const fns = new Map(p.function.map((f) => [Number(f.id), f]));
  const locs = new Map(p.location.map((l) => [Number(l.id), l]));
  const maps = new Map(p.mapping.map((m) => [Number(m.id), m]));
  let badRefs = 0;
  for (const l of p.location) {
    if (Number(l.mappingId) && !maps.has(Number(l.mappingId))) badRefs++;
    for (const ln of l.line) if (!fns.has(Number(ln.functionId))) badRefs++;
  }
  const idsDense = (m) => [...m.keys()].every((id, i) => id === i + 1);
  check(badRefs === 0 && idsDense(fns) && idsDense(locs) && idsDense(maps),
    `pprof ids run 1..n and every reference resolves (${p.location.length} locations, ${p.function.length} functions, ${p.mapping.length} mappings)`,
    () => `${badRefs} dangling references`);
  check(p.mapping.every((m) => s(m.buildId) === ''), 'pprof mappings carry no invented build-id',
    () => p.mapping.map((m) => s(m.buildId)).join(','));

  const got = new Map(), leaves = new Map();
  let weight = 0n, samples = 0n, badSample = null;
  for (const smp of p.sample) {
    if (smp.value.length !== 2) { badSample = `${smp.value.length} values`; continue; }
    const comm = smp.label.find((l) => s(l.key) === 'comm');
    // Root to leaf: the process name, then locations last to first, each
    // location's lines last (the caller) to first (the innermost).
    const names = comm ? [s(comm.str).replace(/ /g, '_')] : [];
    for (let i = smp.locationId.length - 1; i >= 0; i--) {
      const loc = locs.get(Number(smp.locationId[i]));
      if (!loc) { badSample = `location ${smp.locationId[i]}`; break; }
      for (let k = loc.line.length - 1; k >= 0; k--) names.push(s(fns.get(Number(loc.line[k].functionId))?.name));
    }
    const w = BigInt(smp.value[1]);
    add(got, names.join(';'), w);
    // The leaf, read from the front: location_id[0], its line[0].
    const first = locs.get(Number(smp.locationId[0]));
    const leaf = first ? s(fns.get(Number(first.line[0]?.functionId))?.name) : names[names.length - 1];
    add(leaves, leaf, w);
    weight += w;
    samples += BigInt(smp.value[0]);
  }
  check(badSample === null, 'pprof samples have 2 values and known locations', () => badSample);
  check(weight === foldedTotal, `pprof weights sum to the folded total ${foldedTotal}`, () => `${weight}`);
  check(samples === BigInt(args.samples), `pprof sample counts sum to the analysis' ${args.samples} samples`, () => `${samples}`);
  const diff = firstDiff(got, folded);
  check(diff === null, `pprof stacks read leaf first equal the folded lines and weights (${folded.size} lines)`, () => diff);
  const ldiff = firstDiff(leaves, foldedLeaves);
  check(ldiff === null, `pprof location_id[0] line[0] is the folded leaf frame (${foldedLeaves.size} leaves)`, () => ldiff);
  if (args['srcline-name']) {
    const ids = new Set(p.function.filter((f) => s(f.name) === args['srcline-name'] && s(f.filename) === args['srcline-file'])
      .map((f) => Number(f.id)));
    const lines = p.location.flatMap((l) => l.line).filter((ln) => ids.has(Number(ln.functionId)) && Number(ln.line) > 0);
    check(lines.length > 0, `pprof function ${args['srcline-name']} carries ${args['srcline-file']} and line numbers`,
      () => `${ids.size} functions, ${lines.length} lines`);
  }
  const again = p.encode();
  check(Buffer.compare(Buffer.from(again), raw) === 0,
    `pprof-format re-encodes the decoded profile to the same ${raw.length} bytes`, () => `${again.length} bytes`);
}

const fields = ['label', 'folded', 'speedscope', 'pprof', 'event', 'unit', 'samples', 'srcline-name', 'srcline-file'];
for (const line of readFileSync(process.argv[2], 'utf8').split('\n')) {
  if (!line) continue;
  const parts = line.split('\t');
  args = Object.fromEntries(fields.map((f, i) => [f, parts[i]]));
  label = args.label;
  try {
    readFolded(args.folded);
  } catch (e) {
    notok('folded export', e.message);
    continue;
  }
  for (const [what, fn] of [['speedscope', checkSpeedscope], ['pprof', checkPprof]]) {
    try {
      fn(args[what]);
    } catch (e) {
      notok(`${what} check`, e.stack.split('\n').slice(0, 3).join(' '));
    }
  }
}
process.exit(failed ? 1 : 0);
