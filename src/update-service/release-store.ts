// The releases of a release store (what `bosun release build --out STORE` writes; layout and
// metadata parsing are the payload code's) as update-graph nodes. Strict: a release whose
// release-metadata is missing or invalid fails the load, so the server keeps its previous graph
// (or refuses to start) and says which release is wrong.
import { BosunError } from '../common/errors.js';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { listReleases, releaseManifestsDir } from '../release/release-store.js';
import { parseReleaseMetadata, releaseMetadataFile } from '../release/release-metadata.js';
import type { Release } from './graph.js';

/** Release metadata key naming the payload's architecture; absent means amd64. */
export const ARCHITECTURE_METADATA_KEY = 'release.openshift.io/architecture';

export class ReleaseMetadataError extends BosunError {
  constructor(message: string, options?: ErrorOptions) {
    super('ReleaseMetadataInvalid', message, options);
  }
}

/** Every release in STORE; a store that does not exist yet holds no releases. */
export function loadReleaseStore(store: string): Release[] {
  return listReleases(store).map((stored) => {
    const file = join(stored.dir, releaseManifestsDir, releaseMetadataFile);
    if (!existsSync(file)) throw new ReleaseMetadataError(`${stored.dir}: no ${releaseManifestsDir}/${releaseMetadataFile}`);
    const { metadata, problems } = parseReleaseMetadata(readFileSync(file, 'utf8'));
    if (!metadata) throw new ReleaseMetadataError(`${file}: ${problems.join('; ')}`);
    const extra = metadata.metadata ?? {};
    return {
      version: metadata.version,
      arch: extra[ARCHITECTURE_METADATA_KEY] ?? 'amd64',
      payload: stored.pullspec,
      previous: metadata.previous ?? [],
      next: metadata.next ?? [],
      metadata: extra,
    };
  });
}
