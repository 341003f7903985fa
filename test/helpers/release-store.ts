// Stores releases with only their release-metadata (no manifests), for update-service tests and
// the benchmark that need many releases without running the full `bosun release build`.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { writeRelease as storeFiles } from '../../src/release/release-store.js';

export interface ReleaseDefinition {
  version: string;
  previous?: string[];
  next?: string[];
  channels?: string[];
  arch?: string;
}

/** Writes one release; returns its pullspec. */
export function writeRelease(store: string, def: ReleaseDefinition): string {
  const metadata: Record<string, string> = { 'io.openshift.upgrades.graph.release.channels': (def.channels ?? []).join(',') };
  if (def.arch) metadata['release.openshift.io/architecture'] = def.arch;
  const text = JSON.stringify({ kind: 'cincinnati-metadata-v0', version: def.version, previous: def.previous ?? [], next: def.next ?? [], metadata }, null, 2);
  return storeFiles(store, { 'release-manifests/release-metadata': text }).pullspec;
}

/** Writes every release-payload/releases/*.yaml; returns version → pullspec. */
export function writeReleasesFrom(releasesDir: string, store: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const f of readdirSync(releasesDir).filter((f) => f.endsWith('.yaml')).sort()) {
    const def = parse(readFileSync(join(releasesDir, f), 'utf8')) as ReleaseDefinition;
    out.set(def.version, writeRelease(store, def));
  }
  return out;
}
