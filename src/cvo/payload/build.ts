// Building a release from bosun's release sources (release-payload/): one source tree gives
// any number of versions. Every `{{VERSION}}` in a source manifest is replaced by the version
// being built (image tags, RELEASE_VERSION environment values, ClusterOperator
// status.versions); a Go template string literal `{{ "…" }}` becomes its text (how upstream
// carries Prometheus templates through); any other `{{…}}` left over is an error. image-references lists every
// `bosun.local/<component>` image the manifests use, tagged by component name;
// release-metadata takes `previous` and `channels` from release-payload/releases/<V>.yaml when
// that file exists ({version, previous: [], channels: []}).
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import semver from 'semver';
import { parse as parseYaml } from 'yaml';
import { isManifestFileName } from './manifest.js';
import { PayloadInvalidError, readPayloadFiles, validatePayload, type Payload, type PayloadFile } from './payload.js';
import {
  channelsMetadataKey, imageReferencesFile, parseImageReferences, releaseMetadataFile, serializeImageReferences, serializeReleaseMetadata,
  type ReleaseMetadata,
} from '../../release/release-metadata.js';
import { cvoManifestsDir, releaseManifestsDir, writeRelease, type ReleaseFiles } from '../../release/release-store.js';

export const versionPlaceholder = '{{VERSION}}';
export const imageRegistry = 'bosun.local';

export interface BuildOptions {
  version: string;
  /** The release sources: manifests/ and optionally releases/<version>.yaml. */
  from: string;
  /** The CVO's own install manifests, copied (rendered) into the release's manifests/. */
  cvoManifests?: string;
  store: string;
}

export interface BuiltRelease {
  version: string;
  digest: string;
  pullspec: string;
  dir: string;
  payload: Payload;
}

/** release-payload/releases/<version>.yaml: the release's place in the update graph. */
export interface ReleaseInfo {
  version: string;
  previous?: string[];
  channels?: string[];
}

function readReleaseInfo(from: string, version: string): ReleaseInfo | undefined {
  const path = join(from, 'releases', `${version}.yaml`);
  if (!existsSync(path)) return undefined;
  const info = parseYaml(readFileSync(path, 'utf8')) as ReleaseInfo | null;
  if (!info || info.version !== version) throw new Error(`${path}: version must be ${JSON.stringify(version)}`);
  for (const key of ['previous', 'channels'] as const) {
    if (info[key] !== undefined && (!Array.isArray(info[key]) || info[key]!.some((v) => typeof v !== 'string'))) throw new Error(`${path}: ${key} must be a list of strings`);
  }
  return info;
}

/** A Go template string literal, `{{ "…" }}`, which renders as its text: how OpenShift's manifests
 *  carry Prometheus's own templates (`{{ "{{ $labels.name }}" }}`) through the CVO's rendering. */
const ESCAPED = /\{\{\s*"((?:[^"\\]|\\.)*)"\s*\}\}/g;

/** Substitutes the version into one source file, and escaped text; throws naming the file on a leftover placeholder. */
export function renderSource(file: string, text: string, version: string): string {
  const rendered = text.split(versionPlaceholder).join(version);
  const leftover = /\{\{[^}]*\}\}/.exec(rendered.replace(ESCAPED, ''));
  if (leftover) throw new Error(`${file}: unknown placeholder ${leftover[0]} (only ${versionPlaceholder} and {{ "escaped text" }} are substituted)`);
  return rendered.replace(ESCAPED, (_, literal: string) => JSON.parse(`"${literal}"`) as string);
}

function renderDir(dir: string, label: string, version: string): PayloadFile[] {
  return readPayloadFiles(dir)
    .filter((f) => isManifestFileName(f.name))
    .map((f) => ({ name: f.name, text: renderSource(`${label}/${f.name}`, f.text, version) }));
}

function collectImages(value: unknown, into: Record<string, string>): void {
  if (Array.isArray(value)) {
    for (const v of value) collectImages(v, into);
  } else if (value !== null && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      const m = k === 'image' && typeof v === 'string' ? new RegExp(`^${imageRegistry}/([a-z0-9-]+)[:@]`).exec(v) : null;
      if (m) into[m[1]] = v;
      else collectImages(v, into);
    }
  }
}

/** Builds release `version` from the sources into the store; throws on invalid sources, naming file and document. */
export function buildRelease(options: BuildOptions): BuiltRelease {
  const { version, from, store } = options;
  if (!semver.valid(version)) throw new Error(`--version ${JSON.stringify(version)} is not a semantic version (e.g. 1.0.0)`);
  const sourceDir = join(from, 'manifests');
  if (!existsSync(sourceDir)) throw new Error(`${sourceDir} does not exist: --from must name a release source directory with a manifests/ subdirectory`);
  const manifestFiles = renderDir(sourceDir, sourceDir, version);
  const cvoFiles = options.cvoManifests ? renderDir(options.cvoManifests, options.cvoManifests, version) : [];
  const info = readReleaseInfo(from, version);

  const metadata: ReleaseMetadata = { kind: 'cincinnati-metadata-v0', version, previous: info?.previous ?? [], next: [], metadata: {} };
  if (info?.channels?.length) metadata.metadata = { [channelsMetadataKey]: info.channels.join(',') };

  // Images are collected after a first validation so that a YAML error is reported as such.
  const precheck = validatePayload([...manifestFiles, { name: releaseMetadataFile, text: serializeReleaseMetadata(metadata) }, { name: imageReferencesFile, text: serializeImageReferences(version, {}) }], cvoFiles);
  if (!precheck.payload) throw new PayloadInvalidError(from, precheck.problems);
  const images: Record<string, string> = {};
  for (const m of [...precheck.payload.manifests, ...precheck.payload.cvoManifests]) collectImages(m.object, images);

  const references = serializeImageReferences(version, images);
  const releaseFiles: PayloadFile[] = [
    ...manifestFiles,
    { name: releaseMetadataFile, text: serializeReleaseMetadata(metadata) },
    { name: imageReferencesFile, text: references },
  ];
  // Only image-references differs from what the first validation saw: it alone is checked again
  // (the manifests are not parsed twice).
  const parsed = parseImageReferences(references);
  if (!parsed.imageReferences) throw new PayloadInvalidError(from, parsed.problems.map((message) => ({ file: `${releaseManifestsDir}/${imageReferencesFile}`, message })));
  const checked = { payload: { ...precheck.payload, imageReferences: parsed.imageReferences } };

  const files: ReleaseFiles = {};
  for (const f of releaseFiles) files[`${releaseManifestsDir}/${f.name}`] = f.text;
  for (const f of cvoFiles) files[`${cvoManifestsDir}/${f.name}`] = f.text;
  const written = writeRelease(store, files);
  return { version, ...written, payload: checked.payload };
}
