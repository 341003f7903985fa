// Builders for CVO test data: manifests as the payload loader produces them, and temporary
// directories removed after the test.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import { parseApiVersion, type KubeObject, type Manifest } from '../../src/cvo/payload/manifest.js';

/** A manifest from file `file`; kind "Job" gives a batch/v1 Job, others a v1 object of that kind. */
export function manifest(file: string, kind = 'ConfigMap', name?: string, extra: Partial<KubeObject> = {}): Manifest {
  const apiVersion = kind === 'Job' ? 'batch/v1' : 'v1';
  const object: KubeObject = { apiVersion, kind, metadata: { name: name ?? file.replace(/\.ya?ml$/, '').replace(/_/g, '-').toLowerCase() }, ...extra };
  return { file, document: 0, gvk: { ...parseApiVersion(apiVersion), kind }, object };
}

export function tempDir(t: TestContext, prefix = 'bosun-cvo-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}
