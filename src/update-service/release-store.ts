// Reads the releases of a release store (the directory `bosun release build --out STORE` writes):
// one directory per release named `sha256=<hex>`, holding `release-manifests/release-metadata`
// (kind cincinnati-metadata-v0). Each becomes a graph Release with the pullspec
// `bosun.local/release@sha256:<hex>`.
import { readdirSync, readFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import semver from 'semver';
import type { Release } from './graph.js';

export const RELEASE_REPOSITORY = 'bosun.local/release';
export const DIGEST_DIR_PATTERN = /^sha256=([0-9a-f]{64})$/;
/** Release metadata key naming the payload's architecture; absent means amd64. */
export const ARCHITECTURE_METADATA_KEY = 'release.openshift.io/architecture';

export class ReleaseMetadataError extends Error {}

/** Validates one release-metadata document (pure). */
export function parseReleaseMetadata(text: string, where: string, payload: string): Release {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (err) {
    throw new ReleaseMetadataError(`${where}: invalid JSON: ${(err as Error).message}`);
  }
  const m = doc as Record<string, unknown>;
  if (m === null || typeof m !== 'object') throw new ReleaseMetadataError(`${where}: expected a JSON object`);
  if (m.kind !== 'cincinnati-metadata-v0') throw new ReleaseMetadataError(`${where}: kind must be "cincinnati-metadata-v0", got ${JSON.stringify(m.kind)}`);
  if (typeof m.version !== 'string' || !semver.valid(m.version)) throw new ReleaseMetadataError(`${where}: "version" must be a semantic version, got ${JSON.stringify(m.version)}`);
  const list = (key: string): string[] => {
    const v = m[key] ?? [];
    if (!Array.isArray(v) || v.some((x) => typeof x !== 'string')) throw new ReleaseMetadataError(`${where}: "${key}" must be a list of versions`);
    return v as string[];
  };
  const metadata: Record<string, string> = {};
  for (const [k, v] of Object.entries((m.metadata as Record<string, unknown>) ?? {})) metadata[k] = String(v);
  return {
    version: m.version,
    arch: metadata[ARCHITECTURE_METADATA_KEY] ?? 'amd64',
    payload,
    previous: list('previous'),
    next: list('next'),
    metadata,
  };
}

/** Every release in STORE; a store that does not exist yet holds no releases. */
export function loadReleaseStore(store: string): Release[] {
  if (!existsSync(store)) return [];
  const releases: Release[] = [];
  for (const name of readdirSync(store).sort()) {
    const match = DIGEST_DIR_PATTERN.exec(name);
    if (!match) continue;
    const file = join(store, name, 'release-manifests', 'release-metadata');
    if (!existsSync(file)) throw new ReleaseMetadataError(`${join(store, name)}: no release-manifests/release-metadata`);
    releases.push(parseReleaseMetadata(readFileSync(file, 'utf8'), file, `${RELEASE_REPOSITORY}@sha256:${match[1]}`));
  }
  return releases;
}
