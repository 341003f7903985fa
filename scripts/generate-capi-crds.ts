// Writes the Cluster API CRDs of src/capi/crds.ts, and the webhook configurations of
// src/capi/webhooks.ts, into release-payload/manifests as YAML:
//   npx tsx scripts/generate-capi-crds.ts
// test/capi/crds.test.ts fails when the files and the source differ.
import { writeFileSync } from 'node:fs';
import { CLUSTER_API_CRDS, crdYaml, webhooksYaml } from '../src/capi/crds.js';
import { WEBHOOKS_FILE } from '../src/capi/webhooks.js';

for (const { file, crd } of CLUSTER_API_CRDS) {
  writeFileSync(new URL(`../release-payload/manifests/${file}`, import.meta.url), crdYaml(crd));
  console.log(`wrote release-payload/manifests/${file}`);
}
writeFileSync(new URL(`../release-payload/manifests/${WEBHOOKS_FILE}`, import.meta.url), webhooksYaml());
console.log(`wrote release-payload/manifests/${WEBHOOKS_FILE}`);
