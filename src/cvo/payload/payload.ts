// A release payload as the CVO sees it: the release directory with release-manifests/ (every
// manifest plus release-metadata and image-references) and manifests/ (the CVO's own install
// manifests). Owns validating a payload as a whole (pure, over file contents) and loading one
// from disk; every problem is reported with its file and document, all at once.
import { BosunError } from '../../common/errors.js';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import {
  describeManifest, formatProblem, isManifestFileName, manifestKey, parseManifestFile,
  type Manifest, type PayloadProblem,
} from './manifest.js';
import {
  imageReferencesFile, parseImageReferences, parseReleaseMetadata, releaseMetadataFile,
  type ImageReferences, type ReleaseMetadata,
} from '../../release/release-metadata.js';
import { cvoManifestsDir, releaseManifestsDir } from '../../release/release-store.js';

export interface PayloadFile {
  name: string;
  text: string;
}

export interface Payload {
  version: string;
  metadata: ReleaseMetadata;
  imageReferences: ImageReferences;
  /** The manifests of release-manifests/, in file-name order then document order. */
  manifests: Manifest[];
  /** The manifests of manifests/ (the CVO's own), same order. */
  cvoManifests: Manifest[];
}

/** A payload that failed validation; `problems` lists everything wrong, by file and document. */
export class PayloadInvalidError extends BosunError {
  constructor(readonly source: string, readonly problems: PayloadProblem[]) {
    super('PayloadInvalid', `the release payload ${source} is invalid: ${problems.map(formatProblem).join('; ')}`);
  }
}

function byName(a: PayloadFile, b: PayloadFile): number {
  return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
}

function parseManifestSet(dir: string, files: PayloadFile[], problems: PayloadProblem[]): Manifest[] {
  const manifests: Manifest[] = [];
  const seen = new Map<string, Manifest>();
  for (const f of [...files].sort(byName)) {
    if (!isManifestFileName(f.name)) continue;
    const parsed = parseManifestFile(f.name, f.text);
    problems.push(...parsed.problems.map((p) => ({ ...p, file: `${dir}/${p.file}` })));
    for (const m of parsed.manifests) {
      const key = manifestKey(m);
      const first = seen.get(key);
      if (first) {
        problems.push({ file: `${dir}/${m.file}`, document: m.document, message: `duplicate ${describeManifest(m)}, first defined in ${dir}/${first.file} (document ${first.document})` });
        continue;
      }
      seen.set(key, m);
      manifests.push(m);
    }
  }
  return manifests;
}

/**
 * Validates a payload given the contents of release-manifests/ and manifests/ (pure: no I/O).
 * Files in release-manifests/ other than .yaml/.yml/.json and the two metadata files are ignored.
 */
export function validatePayload(releaseFiles: PayloadFile[], cvoFiles: PayloadFile[] = []): { payload?: Payload; problems: PayloadProblem[] } {
  const problems: PayloadProblem[] = [];
  const metadataFile = releaseFiles.find((f) => f.name === releaseMetadataFile);
  const referencesFile = releaseFiles.find((f) => f.name === imageReferencesFile);
  const metadataPath = `${releaseManifestsDir}/${releaseMetadataFile}`;
  const referencesPath = `${releaseManifestsDir}/${imageReferencesFile}`;

  let metadata: ReleaseMetadata | undefined;
  if (!metadataFile) problems.push({ file: metadataPath, message: 'missing' });
  else {
    const r = parseReleaseMetadata(metadataFile.text);
    metadata = r.metadata;
    problems.push(...r.problems.map((message) => ({ file: metadataPath, message })));
  }
  let imageReferences: ImageReferences | undefined;
  if (!referencesFile) problems.push({ file: referencesPath, message: 'missing' });
  else {
    const r = parseImageReferences(referencesFile.text);
    imageReferences = r.imageReferences;
    problems.push(...r.problems.map((message) => ({ file: referencesPath, message })));
  }
  if (metadata && imageReferences && metadata.version !== imageReferences.metadata.name) {
    problems.push({ file: referencesPath, message: `metadata.name ${JSON.stringify(imageReferences.metadata.name)} does not match the release version ${JSON.stringify(metadata.version)} in ${metadataPath}` });
  }
  const manifests = parseManifestSet(releaseManifestsDir, releaseFiles.filter((f) => f !== metadataFile && f !== referencesFile), problems);
  const cvoManifests = parseManifestSet(cvoManifestsDir, cvoFiles, problems);
  if (problems.length > 0 || !metadata || !imageReferences) return { problems };
  return { payload: { version: metadata.version, metadata, imageReferences, manifests, cvoManifests }, problems };
}

/** Reads the regular files directly inside dir (not recursing, as the CVO does not). */
export function readPayloadFiles(dir: string): PayloadFile[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((name) => statSync(join(dir, name)).isFile())
    .map((name) => ({ name, text: readFileSync(join(dir, name), 'utf8') }));
}

/** Loads and validates the release directory dir; throws PayloadInvalidError naming every problem. */
export function loadPayload(dir: string): Payload {
  if (!existsSync(join(dir, releaseManifestsDir))) {
    throw new PayloadInvalidError(dir, [{ file: releaseManifestsDir, message: `no ${releaseManifestsDir}/ directory in ${dir}` }]);
  }
  const { payload, problems } = validatePayload(readPayloadFiles(join(dir, releaseManifestsDir)), readPayloadFiles(join(dir, cvoManifestsDir)));
  if (!payload) throw new PayloadInvalidError(dir, problems);
  return payload;
}
