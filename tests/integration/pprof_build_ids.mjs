// pprof_build_ids.mjs - print "BUILD_ID FILENAME" for every mapping of a
// pprof file (gzipped profile.proto), decoded by the npm package
// pprof-format: an independent reader of what export_profile wrote.
// Usage: node pprof_build_ids.mjs FILE.pb.gz
import { createRequire } from 'node:module';
import { readFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const require = createRequire(path.join(here, '../mcp/package.json'));
const { Profile } = require('pprof-format');
const p = Profile.decode(gunzipSync(readFileSync(process.argv[2])));
const str = p.stringTable.strings;
for (const m of p.mapping)
  console.log(`${str[Number(m.buildId)] || '-'} ${str[Number(m.filename)]}`);
