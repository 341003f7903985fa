// Writes a release store in the agreed layout (sha256=<hex>/release-manifests/release-metadata)
// from release definitions like release-payload/releases/*.yaml, for tests that need releases
// without running `bosun release build`. The digest is over the metadata, so it is stable.
import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';

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
  const hex = createHash('sha256').update(text).digest('hex');
  const dir = join(store, `sha256=${hex}`, 'release-manifests');
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'release-metadata'), text);
  mkdirSync(join(store, `sha256=${hex}`, 'manifests'), { recursive: true });
  return `bosun.local/release@sha256:${hex}`;
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
