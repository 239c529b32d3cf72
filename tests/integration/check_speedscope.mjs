// check_speedscope.mjs - validate speedscope files against the schema the
// npm package `speedscope` ships (dist/release/file-format-schema.json),
// with ajv, before test_json_inputs.sh reads them.
// Usage: node check_speedscope.mjs FILE...   (prints ok / not ok lines)
import { createRequire } from 'node:module';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const require = createRequire(path.join(here, '../mcp/package.json'));
const Ajv = require('ajv').default;
const schemaPath = path.join(path.dirname(require.resolve('speedscope/package.json')),
  'dist/release/file-format-schema.json');
const validate = new Ajv({ allErrors: true, strict: false }).compile(
  JSON.parse(readFileSync(schemaPath, 'utf8')));
let bad = 0;
for (const f of process.argv.slice(2)) {
  const good = validate(JSON.parse(readFileSync(f, 'utf8')));
  bad += !good;
  console.log(`${good ? 'ok' : 'not ok'} - ${path.basename(f)} is valid against speedscope's file-format-schema.json` +
    (good ? '' : `: ${JSON.stringify(validate.errors).slice(0, 300)}`));
}
process.exit(bad ? 1 : 0);
