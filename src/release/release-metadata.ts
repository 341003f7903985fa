// The two special files of release-manifests/: `release-metadata` (Cincinnati metadata, JSON)
// and `image-references` (an image.openshift.io/v1 ImageStream named for the version). Owns
// their types, their checks and their serialisation, so building and loading agree.
import semver from 'semver';
import { parse as parseYaml, stringify as stringifyYaml } from 'yaml';

export const releaseMetadataFile = 'release-metadata';
export const imageReferencesFile = 'image-references';
export const channelsMetadataKey = 'io.openshift.upgrades.graph.release.channels';

export interface ReleaseMetadata {
  kind: 'cincinnati-metadata-v0';
  version: string;
  previous?: string[];
  next?: string[];
  metadata?: Record<string, string>;
}

export interface ImageStreamTag {
  name: string;
  from: { kind: string; name: string };
  annotations?: Record<string, string>;
}

export interface ImageReferences {
  apiVersion: 'image.openshift.io/v1';
  kind: 'ImageStream';
  metadata: { name: string; [key: string]: unknown };
  spec: { tags: ImageStreamTag[] };
}

/** Parses and checks release-metadata; returns the metadata or the problems. */
export function parseReleaseMetadata(text: string): { metadata?: ReleaseMetadata; problems: string[] } {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    return { problems: [`invalid JSON: ${(err as Error).message}`] };
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return { problems: ['must be a JSON object'] };
  const m = value as Record<string, unknown>;
  const problems: string[] = [];
  if (m.kind !== 'cincinnati-metadata-v0') problems.push(`kind must be "cincinnati-metadata-v0", not ${JSON.stringify(m.kind)}`);
  if (typeof m.version !== 'string' || m.version === '') problems.push('version is missing');
  else if (!semver.valid(m.version)) problems.push(`version ${JSON.stringify(m.version)} is not a semantic version`);
  for (const key of ['previous', 'next'] as const) {
    const list = m[key];
    if (list === undefined) continue;
    if (!Array.isArray(list) || list.some((v) => typeof v !== 'string' || !semver.valid(v))) problems.push(`${key} must be a list of semantic versions`);
  }
  if (m.metadata !== undefined && (m.metadata === null || typeof m.metadata !== 'object' || Object.values(m.metadata).some((v) => typeof v !== 'string'))) {
    problems.push('metadata must map strings to strings');
  }
  return problems.length > 0 ? { problems } : { metadata: m as unknown as ReleaseMetadata, problems };
}

/** Parses and checks image-references (YAML or JSON). */
export function parseImageReferences(text: string): { imageReferences?: ImageReferences; problems: string[] } {
  let value: unknown;
  try {
    value = parseYaml(text);
  } catch (err) {
    return { problems: [`invalid YAML: ${(err as Error).message.split('\n')[0]}`] };
  }
  // Parsed YAML, unchecked: read through optional fields of unknown type, each checked below.
  const o = (value ?? {}) as { apiVersion?: unknown; kind?: unknown; metadata?: { name?: unknown } | null; spec?: { tags?: unknown } | null };
  const problems: string[] = [];
  if (o.apiVersion !== 'image.openshift.io/v1' || o.kind !== 'ImageStream') problems.push('must be an image.openshift.io/v1 ImageStream');
  if (typeof o.metadata?.name !== 'string' || o.metadata.name === '') problems.push('metadata.name (the release version) is missing');
  const tags = o.spec?.tags;
  if (tags !== undefined && !Array.isArray(tags)) problems.push('spec.tags must be a list');
  const items: readonly ({ name?: unknown; from?: { name?: unknown } | null } | null)[] = Array.isArray(tags) ? tags : [];
  for (const [i, t] of items.entries()) {
    if (typeof t?.name !== 'string' || typeof t?.from?.name !== 'string') problems.push(`spec.tags[${i}] needs name and from.name`);
  }
  return problems.length > 0 ? { problems } : { imageReferences: { ...o, spec: { tags: tags ?? [] } } as ImageReferences, problems };
}

export function serializeReleaseMetadata(m: ReleaseMetadata): string {
  return `${JSON.stringify(m, null, 2)}\n`;
}

export function serializeImageReferences(version: string, images: Record<string, string>): string {
  const stream: ImageReferences = {
    apiVersion: 'image.openshift.io/v1',
    kind: 'ImageStream',
    metadata: { name: version },
    spec: {
      tags: Object.keys(images)
        .sort()
        .map((name) => ({ name, from: { kind: 'DockerImage', name: images[name] } })),
    },
  };
  return stringifyYaml(stream);
}
