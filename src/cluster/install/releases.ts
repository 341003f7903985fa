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

/** The cluster's release signing key, made at the first start (RSA key generation runs off the
 *  main thread: start it early, and await it when signing). */
export function releaseSigningKey(dataDir: string): Promise<{ privateKey: string; publicKey: string }> {
  const key = loadOrCreateSigningKey(join(dataDir, 'keys'));
  key.catch(() => undefined); // awaited by whoever signs; not unhandled meanwhile
  return key;
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

export async function publishReleases(o: { dataDir: string; sources: string; cvoManifests: string; say: (line: string) => void; signingKey?: Promise<{ privateKey: string; publicKey: string }> }): Promise<PublishedReleases> {
  const store = join(o.dataDir, 'releases');
  const signatures = join(o.dataDir, 'signatures');
  // The key is made (at the first start) off the main thread while the releases are built on it.
  const signingKey = o.signingKey ?? releaseSigningKey(o.dataDir);
  const releases: BuiltRelease[] = [];
  for (const version of releaseVersions(o.sources)) {
    // A turn of the event loop between builds, for the key generation's steps.
    await new Promise((r) => setImmediate(r));
    releases.push(buildRelease({ version, from: o.sources, cvoManifests: o.cvoManifests, store }));
  }
  const key = await signingKey;
  for (const built of releases) {
    const digest = parsePullspec(built.pullspec).digest;
    if (readStoredSignatures(signatures, digest).length === 0) storeSignature(signatures, digest, await signRelease(built.pullspec, key.privateKey));
    o.say(`      ${built.version.padEnd(8)} ${built.pullspec}`);
  }
  return { releases, store, signatures, publicKey: key.publicKey };
}
