// The release store: a directory holding one directory per release, named `sha256=<hex>`, each
// with release-manifests/ and manifests/. A release is addressed by the digest of its content:
// pullspec `bosun.local/release@sha256:<hex>`.
//
// The digest is sha256 over, for every regular file under release-manifests/ and manifests/ in
// order of relative path (POSIX separators, byte order), the line `<relative path>\n` followed
// by `<sha256 hex of the file's bytes>\n`. Names and contents both count; timestamps, modes
// and the store location do not, so the same input always gives the same digest.
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import semver from 'semver';
import { parseReleaseMetadata, releaseMetadataFile } from './release-metadata.js';

/** A release's two directories: the payload's manifests (with release-metadata) and the CVO's own. */
export const releaseManifestsDir = 'release-manifests';
export const cvoManifestsDir = 'manifests';

export const releaseRepository = 'bosun.local/release';

/** Files of a release by relative path (e.g. release-manifests/release-metadata). */
export type ReleaseFiles = Record<string, string | Buffer>;

function sha256(data: string | Buffer): string {
  return createHash('sha256').update(data).digest('hex');
}

/** The digest (hex, no prefix) of a set of release files; see the header for the definition. */
export function digestOfFiles(files: ReleaseFiles): string {
  const h = createHash('sha256');
  for (const path of Object.keys(files).sort()) h.update(`${path}\n${sha256(files[path])}\n`);
  return h.digest('hex');
}

/** The release files of a release directory (the two payload subdirectories, not recursing). */
export function readReleaseFiles(dir: string): ReleaseFiles {
  const files: ReleaseFiles = {};
  for (const sub of [releaseManifestsDir, cvoManifestsDir]) {
    const d = join(dir, sub);
    if (!existsSync(d)) continue;
    for (const name of readdirSync(d)) {
      if (statSync(join(d, name)).isFile()) files[`${sub}/${name}`] = readFileSync(join(d, name));
    }
  }
  return files;
}

/** Recomputes the digest of a release directory from its files. */
export function computeReleaseDigest(dir: string): string {
  return digestOfFiles(readReleaseFiles(dir));
}

export function pullspecForDigest(hex: string): string {
  return `${releaseRepository}@sha256:${hex}`;
}

const pullspecPattern = /^(?:[^@\s]+)@sha256:([0-9a-f]{64})$/;

/** The digest hex of a by-digest pullspec; the store is keyed by digest, so any repository name is accepted. */
export function digestOfPullspec(pullspec: string): string {
  const m = pullspecPattern.exec(pullspec.trim());
  if (!m) throw new Error(`${JSON.stringify(pullspec)} is not a release pullspec by digest (expected ${releaseRepository}@sha256:<64 hex digits>)`);
  return m[1];
}

export function releaseDirName(hex: string): string {
  return `sha256=${hex}`;
}

/** The directory of the release named by pullspec in store; throws when the store does not hold it. */
export function resolvePullspec(store: string, pullspec: string): string {
  const dir = join(store, releaseDirName(digestOfPullspec(pullspec)));
  if (!existsSync(join(dir, releaseManifestsDir))) throw new Error(`the release store ${store} has no release ${pullspec}`);
  return dir;
}

/**
 * Writes files as a release into store and returns its digest and pullspec. Writing is atomic
 * (a temporary directory renamed into place) and idempotent: a release already present is kept.
 * No validation happens here, so tests can store broken payloads; `buildRelease` validates.
 */
export function writeRelease(store: string, files: ReleaseFiles): { digest: string; pullspec: string; dir: string } {
  const digest = digestOfFiles(files);
  const dir = join(store, releaseDirName(digest));
  if (!existsSync(dir)) {
    mkdirSync(store, { recursive: true });
    const tmp = join(store, `.tmp-${randomBytes(6).toString('hex')}`);
    try {
      for (const [path, content] of Object.entries(files)) {
        const target = join(tmp, path);
        mkdirSync(join(target, '..'), { recursive: true });
        writeFileSync(target, content);
      }
      mkdirSync(join(tmp, releaseManifestsDir), { recursive: true });
      if (existsSync(dir)) rmSync(tmp, { recursive: true, force: true });
      else renameSync(tmp, dir);
    } catch (err) {
      rmSync(tmp, { recursive: true, force: true });
      throw err;
    }
  }
  return { digest, pullspec: pullspecForDigest(digest), dir };
}

export interface StoredRelease {
  digest: string;
  pullspec: string;
  dir: string;
  /** From release-metadata; undefined when it is missing or unreadable. */
  version?: string;
}

/** The releases in store, ordered by version (unreadable ones last) then digest. */
export function listReleases(store: string): StoredRelease[] {
  if (!existsSync(store)) return [];
  const out: StoredRelease[] = [];
  for (const name of readdirSync(store)) {
    const m = /^sha256=([0-9a-f]{64})$/.exec(name);
    if (!m || !statSync(join(store, name)).isDirectory()) continue;
    const dir = join(store, name);
    const metadataPath = join(dir, releaseManifestsDir, releaseMetadataFile);
    const version = existsSync(metadataPath) ? parseReleaseMetadata(readFileSync(metadataPath, 'utf8')).metadata?.version : undefined;
    out.push({ digest: m[1], pullspec: pullspecForDigest(m[1]), dir, version });
  }
  const rank = (r: StoredRelease): string | null => (r.version && semver.valid(r.version) ? r.version : null);
  return out.sort((a, b) => {
    const va = rank(a);
    const vb = rank(b);
    if (va && vb && va !== vb) return semver.compare(va, vb);
    if (va !== vb) return va ? -1 : vb ? 1 : 0;
    return a.digest < b.digest ? -1 : a.digest > b.digest ? 1 : 0;
  });
}
