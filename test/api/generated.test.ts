// The types generated from the payload's CRDs (src/api/generated) match the CRDs: a CRD changed
// without `npx tsx scripts/generate-api-types.ts` fails here.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { generatedFiles } from '../../scripts/generate-api-types.js';

test('src/api/generated is what scripts/generate-api-types.ts writes from the CRDs', async () => {
  const files = await generatedFiles();
  assert.deepEqual(readdirSync('src/api/generated').sort(), [...files.keys()].map((p) => p.split('/').pop()).sort());
  for (const [path, text] of files) assert.equal(readFileSync(path, 'utf8'), text, `${path} is stale: run npx tsx scripts/generate-api-types.ts`);
});

test('every kind the payload has a CRD for has a body type', async () => {
  const all = [...(await generatedFiles()).values()].join('\n');
  for (const kind of ['ClusterVersion', 'ClusterOperator', 'MachineConfig', 'MachineConfigPool', 'Machine', 'MachineSet', 'LocalMachine']) {
    assert.match(all, new RegExp(`export interface ${kind}Body \\{`));
  }
});
