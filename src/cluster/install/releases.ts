// The cluster's releases, as a release pipeline would publish them: every version defined in
// release-payload/releases/ built into the release store and signed with the cluster's release
// key (made at the first start, kept in <data-dir>/keys), the signatures in the signature store
// the update service serves.
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildRelease, type BuiltRelease } from '../../cvo/payload/build.js';
import { generateSigningKey, parsePullspec, signRelease } from '../../release/signature.js';
import { readStoredSignatures, storeSignature } from '../../release/signature-store.js';

/** The versions defined in release-payload/releases/, in version order. */
function releaseVersions(sources: string): string[] {
  return readdirSync(join(sources, 'releases'))
    .filter((f) => f.endsWith('.yaml'))
    .map((f) => f.slice(0, -'.yaml'.length))
    .sort((a, b) => a.localeCompare(b, undefined, { numeric: true }));
}

async function loadOrCreateSigningKey(dir: string): Promise<{ privateKey: string; publicKey: string }> {
  const privatePath = join(dir, 'signing-key.asc');
  const publicPath = join(dir, 'signing-key.pub.asc');
  if (existsSync(privatePath) && existsSync(publicPath)) return { privateKey: readFileSync(privatePath, 'utf8'), publicKey: readFileSync(publicPath, 'utf8') };
  mkdirSync(dir, { recursive: true });
  const key = await generateSigningKey('bosun local release signing key');
  writeFileSync(privatePath, key.privateKey, { mode: 0o600 });
  writeFileSync(publicPath, key.publicKey);
  return key;
}

export interface PublishedReleases {
  releases: BuiltRelease[];
  store: string;
  signatures: string;
  publicKey: string;
}

export async function publishReleases(o: { dataDir: string; sources: string; cvoManifests: string; say: (line: string) => void }): Promise<PublishedReleases> {
  const store = join(o.dataDir, 'releases');
  const signatures = join(o.dataDir, 'signatures');
  const key = await loadOrCreateSigningKey(join(o.dataDir, 'keys'));
  const releases: BuiltRelease[] = [];
  for (const version of releaseVersions(o.sources)) {
    const built = buildRelease({ version, from: o.sources, cvoManifests: o.cvoManifests, store });
    const digest = parsePullspec(built.pullspec).digest;
    if (readStoredSignatures(signatures, digest).length === 0) storeSignature(signatures, digest, await signRelease(built.pullspec, key.privateKey));
    releases.push(built);
    o.say(`      ${version.padEnd(8)} ${built.pullspec}`);
  }
  return { releases, store, signatures, publicKey: key.publicKey };
}
