// File-Based Catalogs (operator-registry's `declcfg`): a catalog is a stream of JSON or YAML blobs,
// each with a `schema` — olm.package, olm.channel, olm.bundle (others are carried along, as opm
// does). This module parses the files of a catalog into blobs, and builds and validates the model
// (packages → channels → bundles) with the rules `opm validate` applies:
//   - one olm.package per package, with a defaultChannel that is one of its channels;
//   - every channel of a known package, non-empty, its entries bundles of that package, each once,
//     a valid skipRange; exactly one head (the entry no other entry replaces or skips); the
//     replaces chain from the head without a cycle; no stranded bundle (off the chain and not
//     skipped);
//   - every bundle of a known package, in some channel, with exactly one olm.package property
//     (a semver version, matching its package), an image or inline objects (olm.bundle.object
//     data: base64 of a manifest); versions unique within a package.
// Every problem names the blob it is in (`file#N (schema "name")`), so a CatalogSource's status
// can say which blob is bad. Pure: no I/O.
import semver from 'semver';
import { parseAllDocuments } from 'yaml';
import type * as api from '../api/index.js';
import { BosunError } from '../common/errors.js';

/** One blob of a catalog, and where it was found. */
export interface Blob {
  schema: string;
  /** `file#N`: the file (a ConfigMap key) and the blob's position in it, from 1. */
  origin: string;
  value: Record<string, unknown>;
}

export interface Gvk {
  group: string;
  version: string;
  kind: string;
}

export interface ChannelEntry {
  name: string;
  replaces?: string;
  skips: string[];
  skipRange?: string;
}

export interface Channel {
  name: string;
  package: string;
  entries: ChannelEntry[];
  /** The entry no other entry replaces or skips. */
  head: string;
}

export interface Bundle {
  name: string;
  package: string;
  version: string;
  image?: string;
  /** The manifests the bundle carries inline (its ClusterServiceVersion, CRDs, …). */
  objects: api.Unstructured[];
  provides: Gvk[];
  requires: Gvk[];
  requiresPackages: { packageName: string; versionRange: string }[];
  properties: { type: string; value: unknown }[];
}

export interface Package {
  name: string;
  defaultChannel: string;
  description?: string;
  channels: Map<string, Channel>;
  bundles: Map<string, Bundle>;
}

export interface Catalog {
  packages: Map<string, Package>;
}

/** A catalog `opm validate` would refuse: every problem, each naming its blob. */
export class InvalidCatalogError extends BosunError {
  constructor(readonly problems: string[]) {
    super('InvalidCatalog', `invalid catalog: ${problems.join('; ')}`);
  }
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const text = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);

/** The JSON values of a stream of concatenated JSON documents (opm's catalog.json). */
function jsonStream(source: string): unknown[] {
  const values: unknown[] = [];
  let depth = 0;
  let start = -1;
  let inString = false;
  for (let i = 0; i < source.length; i++) {
    const c = source[i];
    if (inString) {
      if (c === '\\') i++;
      else if (c === '"') inString = false;
      continue;
    }
    if (c === '"') inString = true;
    else if (c === '{' || c === '[') {
      if (depth++ === 0) start = i;
    } else if (c === '}' || c === ']') {
      if (--depth === 0) values.push(JSON.parse(source.slice(start, i + 1)));
      if (depth < 0) throw new Error(`unexpected "${c}" at offset ${i}`);
    } else if (depth === 0 && !/\s/.test(c)) throw new Error(`unexpected "${c}" at offset ${i} between JSON documents`);
  }
  if (depth !== 0 || inString) throw new Error('the last JSON document is not complete');
  return values;
}

/**
 * The blobs of a catalog's files (name → content): each file YAML (documents separated by `---`)
 * or JSON (one document or a stream of them). Blobs without a schema are problems, as opm has them.
 */
export function parseCatalogFiles(files: Record<string, string>): { blobs: Blob[]; problems: string[] } {
  const blobs: Blob[] = [];
  const problems: string[] = [];
  for (const file of Object.keys(files).sort()) {
    let docs: unknown[];
    try {
      const content = files[file];
      if (/^\s*[{[]/.test(content)) docs = jsonStream(content);
      else {
        const parsed = parseAllDocuments(content);
        const list = Array.isArray(parsed) ? parsed : [parsed];
        const broken = list.find((d) => d.errors.length > 0);
        if (broken) throw new Error(broken.errors[0].message.split('\n')[0]);
        docs = list.map((d) => d.toJS() as unknown);
      }
    } catch (e) {
      problems.push(`${file}: not YAML or JSON: ${(e as Error).message}`);
      continue;
    }
    let n = 0;
    for (const doc of docs) {
      if (doc === null || doc === undefined) continue;
      n++;
      const origin = `${file}#${n}`;
      if (!isRecord(doc)) problems.push(`${origin}: a blob must be an object`);
      else if (!text(doc.schema)) problems.push(`${origin}: the blob has no schema`);
      else blobs.push({ schema: doc.schema as string, origin, value: doc });
    }
  }
  return { blobs, problems };
}

/** The blob as a message names it: `file#N (olm.channel "stable")`. */
const where = (b: Blob) => `${b.origin} (${b.schema}${text(b.value.name) ? ` "${b.value.name as string}"` : ''})`;

/** A bundle's inline manifest, decoded from olm.bundle.object's base64 data (JSON, or YAML). */
function decodeObject(data: unknown): api.Unstructured {
  if (typeof data !== 'string') throw new Error('data is not a base64 string');
  const decoded = Buffer.from(data, 'base64').toString('utf8');
  const docs = parseAllDocuments(decoded);
  const doc = (Array.isArray(docs) ? docs : [docs])[0];
  if (!doc || doc.errors.length > 0) throw new Error('data is not a base64-encoded manifest');
  const object = doc.toJS() as unknown;
  if (!isRecord(object) || !text(object.kind) || !text(object.apiVersion) || !isRecord(object.metadata) || !text(object.metadata.name)) {
    throw new Error('the manifest has no apiVersion, kind or metadata.name');
  }
  return object as api.Unstructured;
}

/** An olm.gvk value; the group may be empty (the core group). */
function gvkOf(v: unknown): Gvk | undefined {
  if (!isRecord(v) || typeof v.group !== 'string' || !text(v.version) || !text(v.kind)) return undefined;
  return { group: v.group, version: v.version as string, kind: v.kind as string };
}

/** The bundle of an olm.bundle blob; problems are pushed, naming the blob. */
function bundleOf(blob: Blob, problems: string[]): Bundle | undefined {
  const v = blob.value;
  const at = where(blob);
  const name = text(v.name);
  const pkg = text(v.package);
  if (!name) problems.push(`${at}: name must be set`);
  if (!pkg) problems.push(`${at}: package must be set`);
  const properties: Bundle['properties'] = [];
  if (v.properties !== undefined && !Array.isArray(v.properties)) problems.push(`${at}: properties must be a list`);
  for (const [i, p] of (Array.isArray(v.properties) ? v.properties : []).entries()) {
    if (!isRecord(p) || !text(p.type)) problems.push(`${at}: properties[${i}] has no type`);
    else properties.push({ type: p.type as string, value: p.value });
  }
  const packages = properties.filter((p) => p.type === 'olm.package');
  let version = '';
  if (packages.length !== 1) problems.push(`${at}: must be exactly one property with type "olm.package" (found ${packages.length})`);
  else {
    const value = packages[0].value;
    const packageName = isRecord(value) ? text(value.packageName) : undefined;
    version = isRecord(value) ? String(value.version ?? '') : '';
    if (pkg && packageName !== pkg) problems.push(`${at}: its olm.package property names package "${packageName ?? ''}", not "${pkg}"`);
    if (!semver.valid(version)) problems.push(`${at}: version "${version}" of its olm.package property is not a semantic version`);
  }
  const objects: api.Unstructured[] = [];
  for (const [i, p] of properties.entries()) {
    if (p.type !== 'olm.bundle.object') continue;
    try {
      objects.push(decodeObject(isRecord(p.value) ? p.value.data : undefined));
    } catch (e) {
      problems.push(`${at}: properties[${i}] (olm.bundle.object): ${(e as Error).message}`);
    }
  }
  const image = text(v.image);
  if (!image && objects.length === 0) problems.push(`${at}: bundle image must be set (or its manifests carried as olm.bundle.object properties)`);
  const gvks = (type: string) =>
    properties.filter((p) => p.type === type).flatMap((p, i) => {
      const gvk = gvkOf(p.value);
      if (!gvk) problems.push(`${at}: ${type} property ${i + 1} needs group, version and kind`);
      return gvk ? [gvk] : [];
    });
  const provides = gvks('olm.gvk');
  const requires = gvks('olm.gvk.required');
  const requiresPackages = properties.filter((p) => p.type === 'olm.package.required').flatMap((p) => {
    const value = p.value;
    const packageName = isRecord(value) ? text(value.packageName) : undefined;
    const versionRange = isRecord(value) ? text(value.versionRange) : undefined;
    if (!packageName || !versionRange || !semver.validRange(versionRange)) {
      problems.push(`${at}: olm.package.required needs a packageName and a valid versionRange`);
      return [];
    }
    return [{ packageName, versionRange }];
  });
  if (!name || !pkg) return undefined;
  return { name, package: pkg, version, image, objects, provides, requires, requiresPackages, properties };
}

/** The head of a channel as opm finds it: the one entry that no entry replaces or skips. */
export function channelHead(entries: readonly ChannelEntry[]): { head?: string; problem?: string } {
  const incoming = new Set<string>();
  for (const e of entries) {
    if (e.replaces) incoming.add(e.replaces);
    for (const s of e.skips) incoming.add(s);
  }
  const heads = entries.filter((e) => !incoming.has(e.name)).map((e) => e.name).sort();
  if (heads.length === 0) return { problem: 'no channel head found in graph' };
  if (heads.length > 1) return { problem: `multiple channel heads found in graph: ${heads.join(', ')}` };
  return { head: heads[0] };
}

/** What is wrong with a channel's graph beyond its head: a replaces cycle, stranded bundles. */
function graphProblems(entries: readonly ChannelEntry[], head: string): string[] {
  const byName = new Map(entries.map((e) => [e.name, e]));
  const skipped = new Set(entries.flatMap((e) => e.skips));
  const chain = [head];
  const onChain = new Set([head]);
  let current = byName.get(head);
  while (current?.replaces && !skipped.has(current.replaces)) {
    if (onChain.has(current.replaces)) return [`detected cycle in replaces chain of upgrade graph: ${[...chain, current.replaces].join(' -> ')}`];
    chain.push(current.replaces);
    onChain.add(current.replaces);
    current = byName.get(current.replaces);
  }
  const stranded = entries.map((e) => e.name).filter((n) => !onChain.has(n) && !skipped.has(n)).sort();
  return stranded.length ? [`channel contains one or more stranded bundles: ${stranded.join(', ')}`] : [];
}

function entriesOf(blob: Blob, problems: string[]): ChannelEntry[] {
  const at = where(blob);
  const raw = blob.value.entries;
  if (!Array.isArray(raw) || raw.length === 0) {
    problems.push(`${at}: channel must contain at least one bundle`);
    return [];
  }
  const entries: ChannelEntry[] = [];
  for (const [i, e] of raw.entries()) {
    if (!isRecord(e) || !text(e.name)) {
      problems.push(`${at}: entries[${i}] has no name`);
      continue;
    }
    const skips = Array.isArray(e.skips) ? e.skips.filter((s): s is string => typeof s === 'string') : [];
    if (Array.isArray(e.skips) && skips.length !== e.skips.length) problems.push(`${at}: entries[${i}] "${e.name as string}": skips must be names`);
    if (skips.includes('')) problems.push(`${at}: entries[${i}] "${e.name as string}": a skip is empty`);
    const skipRange = text(e.skipRange);
    if (skipRange && !semver.validRange(skipRange)) problems.push(`${at}: entries[${i}] "${e.name as string}": invalid skipRange "${skipRange}"`);
    entries.push({ name: e.name as string, ...(text(e.replaces) ? { replaces: e.replaces as string } : {}), skips, ...(skipRange ? { skipRange } : {}) });
  }
  return entries;
}

/** The catalog of the blobs, validated as `opm validate` does; InvalidCatalogError lists every problem. */
export function buildCatalog(blobs: readonly Blob[], problems: string[] = []): Catalog {
  const all = [...problems];
  const packages = new Map<string, Package>();
  const packageBlobs = new Map<string, Blob>();
  for (const blob of blobs.filter((b) => b.schema === 'olm.package')) {
    const name = text(blob.value.name);
    if (!name) {
      all.push(`${where(blob)}: package name must not be empty`);
      continue;
    }
    const first = packageBlobs.get(name);
    if (first) {
      all.push(`${where(blob)}: duplicate package "${name}" (first at ${first.origin})`);
      continue;
    }
    packageBlobs.set(name, blob);
    packages.set(name, { name, defaultChannel: text(blob.value.defaultChannel) ?? '', description: text(blob.value.description), channels: new Map(), bundles: new Map() });
  }
  const bundleBlobs = new Map<string, Blob>();
  for (const blob of blobs.filter((b) => b.schema === 'olm.bundle')) {
    const bundle = bundleOf(blob, all);
    if (!bundle) continue;
    const pkg = packages.get(bundle.package);
    if (!pkg) {
      all.push(`${where(blob)}: package "${bundle.package}" not found (no olm.package blob declares it)`);
      continue;
    }
    const first = bundleBlobs.get(`${bundle.package}/${bundle.name}`);
    if (first) {
      all.push(`${where(blob)}: duplicate bundle "${bundle.name}" of package "${bundle.package}" (first at ${first.origin})`);
      continue;
    }
    bundleBlobs.set(`${bundle.package}/${bundle.name}`, blob);
    pkg.bundles.set(bundle.name, bundle);
  }
  const inChannel = new Set<string>();
  for (const blob of blobs.filter((b) => b.schema === 'olm.channel')) {
    const at = where(blob);
    const name = text(blob.value.name);
    const pkgName = text(blob.value.package);
    if (!name) all.push(`${at}: channel name must not be empty`);
    if (!pkgName) all.push(`${at}: package must be set`);
    if (!name || !pkgName) continue;
    const pkg = packages.get(pkgName);
    if (!pkg) {
      all.push(`${at}: package "${pkgName}" not found (no olm.package blob declares it)`);
      continue;
    }
    if (pkg.channels.has(name)) {
      all.push(`${at}: duplicate channel "${name}" of package "${pkgName}"`);
      continue;
    }
    const entries = entriesOf(blob, all);
    const seen = new Set<string>();
    for (const e of entries) {
      if (seen.has(e.name)) all.push(`${at}: duplicate entry "${e.name}"`);
      seen.add(e.name);
      if (!pkg.bundles.has(e.name)) all.push(`${at}: entry "${e.name}" is not a bundle of package "${pkgName}" (no olm.bundle blob named so)`);
      inChannel.add(`${pkgName}/${e.name}`);
    }
    if (entries.length === 0) continue;
    const { head, problem } = channelHead(entries);
    if (problem || !head) {
      all.push(`${at}: ${problem}`);
      continue;
    }
    for (const p of graphProblems(entries, head)) all.push(`${at}: ${p}`);
    pkg.channels.set(name, { name, package: pkgName, entries, head });
  }
  for (const [name, pkg] of packages) {
    const at = where(packageBlobs.get(name)!);
    if (!pkg.defaultChannel) all.push(`${at}: default channel must be set`);
    else if (!pkg.channels.has(pkg.defaultChannel)) all.push(`${at}: default channel "${pkg.defaultChannel}" not found in the package's channels`);
    if (pkg.channels.size === 0 && pkg.defaultChannel) all.push(`${at}: package must contain at least one channel`);
    const versions = new Map<string, string>();
    for (const bundle of pkg.bundles.values()) {
      if (!inChannel.has(`${name}/${bundle.name}`)) all.push(`${where(bundleBlobs.get(`${name}/${bundle.name}`)!)}: bundle "${bundle.name}" not found in any channel entries`);
      const clean = semver.valid(bundle.version);
      if (!clean) continue;
      const other = versions.get(clean);
      if (other) all.push(`${where(bundleBlobs.get(`${name}/${bundle.name}`)!)}: version ${clean} of package "${name}" is also bundle "${other}"'s`);
      versions.set(clean, bundle.name);
    }
  }
  if (all.length > 0) throw new InvalidCatalogError(all);
  return { packages };
}

/** Parses and validates a catalog's files (a ConfigMap's data). */
export function loadCatalog(files: Record<string, string>): Catalog {
  const { blobs, problems } = parseCatalogFiles(files);
  return buildCatalog(blobs, problems);
}

/** The bundle's ClusterServiceVersion among its inline objects. */
export function bundleCsv(bundle: Bundle): api.ClusterServiceVersion | undefined {
  return bundle.objects.find((o) => o.kind === 'ClusterServiceVersion') as api.ClusterServiceVersion | undefined;
}
