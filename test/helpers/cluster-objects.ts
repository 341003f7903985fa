// Setting up what an installer gives a cluster before the CVO runs: the CRDs of a release, and a
// free loopback port for a server a test starts as a child process.
import { readFileSync, readdirSync } from 'node:fs';
export { freePort } from '../../src/common/listen.js';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import type { KubeClient } from '../../src/kube/client.js';

const CRDS = { group: 'apiextensions.k8s.io', version: 'v1', resource: 'customresourcedefinitions', namespaced: false };

/** Creates every CustomResourceDefinition in the release's manifests/ (the CVO's own). */
export async function createReleaseCrds(client: KubeClient, releaseDir: string): Promise<void> {
  const dir = join(releaseDir, 'manifests');
  for (const file of readdirSync(dir).sort()) {
    for (const doc of parseAllDocuments(readFileSync(join(dir, file), 'utf8'))) {
      const o = doc.toJS();
      if (o?.kind === 'CustomResourceDefinition') await client.create(CRDS, o);
    }
  }
}

