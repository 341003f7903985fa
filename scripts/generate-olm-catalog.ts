// Writes bosun's default OLM catalog (the sample operators of src/olm/samples/catalog.ts) into
// release-payload/manifests as the ConfigMap openshift-marketplace/bosun-operators:
//   npx tsx scripts/generate-olm-catalog.ts
// test/olm/samples.test.ts fails when the file and the source differ.
import { writeFileSync } from 'node:fs';
import { CATALOG_FILE, catalogConfigMapYaml } from '../src/olm/samples/catalog.js';

writeFileSync(new URL(`../release-payload/manifests/${CATALOG_FILE}`, import.meta.url), catalogConfigMapYaml());
console.log(`wrote release-payload/manifests/${CATALOG_FILE}`);
