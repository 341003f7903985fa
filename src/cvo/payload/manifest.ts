// A manifest of a release payload: one Kubernetes object from one document of one file, with
// where it came from (file name and document index) so every problem can name its source.
// Owns parsing a payload file into manifests, the file-name grammar (0000_<level>_<component>_…)
// and the object checks that apply to every document (apiVersion, kind, metadata.name).
import { CORE_SCHEMA, loadAll } from 'js-yaml';
import { parseAllDocuments } from 'yaml';
import { isDnsLabel } from '../../common/dns-names.js';

/** The object of a manifest, as loosely typed as a Kubernetes object is on the wire. */
export interface KubeObject {
  apiVersion: string;
  kind: string;
  metadata: {
    name: string;
    namespace?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    [key: string]: unknown;
  };
  [key: string]: unknown;
}

export interface GroupVersionKind {
  group: string;
  version: string;
  kind: string;
}

export interface Manifest {
  /** File name inside release-manifests/ (or manifests/), e.g. 0000_00_cluster-version-operator_00_namespace.yaml. */
  file: string;
  /** 0-based index of the document inside the file, counting every document, empty ones included. */
  document: number;
  gvk: GroupVersionKind;
  object: KubeObject;
}

/** A problem found while reading a payload, naming the file and (when known) the document. */
export interface PayloadProblem {
  file: string;
  document?: number;
  message: string;
}

export function formatProblem(p: PayloadProblem): string {
  return p.document === undefined ? `${p.file}: ${p.message}` : `${p.file} (document ${p.document}): ${p.message}`;
}

/** The extensions the CVO reads; any other file in release-manifests/ is ignored, as OpenShift does. */
export const manifestExtensions = ['.yaml', '.yml', '.json'];

export function isManifestFileName(name: string): boolean {
  return manifestExtensions.some((ext) => name.endsWith(ext));
}

/** OpenShift's run-level/component grammar (pkg/payload/task_graph.go reMatchPattern). */
export const manifestNamePattern = /^0000_(\d+)_([a-zA-Z0-9]+(-[a-zA-Z0-9]+)*?)_/;

export interface ParsedManifestName {
  runLevel: number;
  component: string;
}

/** The run level and component of a file name, or undefined when the name does not follow the grammar. */
export function parseManifestName(file: string): ParsedManifestName | undefined {
  const m = manifestNamePattern.exec(file);
  if (!m) return undefined;
  return { runLevel: Number.parseInt(m[1], 10), component: m[2] };
}

export function parseApiVersion(apiVersion: string): { group: string; version: string } {
  const slash = apiVersion.indexOf('/');
  return slash < 0 ? { group: '', version: apiVersion } : { group: apiVersion.slice(0, slash), version: apiVersion.slice(slash + 1) };
}

// Names as the API server accepts them for most kinds: DNS subdomains, plus ':' which RBAC
// names such as system:openshift:… use.
const objectName = /^[a-z0-9]([-a-z0-9.:]*[a-z0-9])?$/;
const apiVersionPattern = /^([a-z0-9]([-a-z0-9.]*[a-z0-9])?\/)?v[0-9]+((alpha|beta)[0-9]+)?$/;
const kindPattern = /^[A-Z][A-Za-z0-9]*$/;

/** Checks one parsed document; returns the problems (empty when it is a usable object). */
export function checkObject(value: unknown): string[] {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return ['the document is not a mapping (an object with apiVersion, kind and metadata)'];
  const o = value as Record<string, unknown>;
  const problems: string[] = [];
  if (typeof o.apiVersion !== 'string' || o.apiVersion === '') problems.push('apiVersion is missing');
  else if (!apiVersionPattern.test(o.apiVersion)) problems.push(`apiVersion ${JSON.stringify(o.apiVersion)} is not of the form group/version or version`);
  if (typeof o.kind !== 'string' || o.kind === '') problems.push('kind is missing');
  else if (!kindPattern.test(o.kind)) problems.push(`kind ${JSON.stringify(o.kind)} is not a valid kind`);
  const md = o.metadata;
  if (md === null || typeof md !== 'object' || Array.isArray(md)) {
    problems.push('metadata is missing');
    return problems;
  }
  const { name, namespace, labels, annotations } = md as Record<string, unknown>;
  if (typeof name !== 'string' || name === '') problems.push('metadata.name is missing');
  else if (name.length > 253 || !objectName.test(name)) problems.push(`metadata.name ${JSON.stringify(name)} is not a valid name`);
  if (namespace !== undefined && (typeof namespace !== 'string' || !isDnsLabel(namespace))) {
    problems.push(`metadata.namespace ${JSON.stringify(namespace)} is not a valid namespace name`);
  }
  for (const [field, map] of [['labels', labels], ['annotations', annotations]] as const) {
    if (map === undefined) continue;
    if (map === null || typeof map !== 'object' || Array.isArray(map) || Object.values(map).some((v) => typeof v !== 'string')) {
      problems.push(`metadata.${field} must map strings to strings`);
    }
  }
  return problems;
}

/**
 * Parses one payload file (YAML or JSON, several documents allowed) into manifests. Empty
 * documents are skipped as OpenShift skips them; every other document must be a valid object.
 *
 * A file is read first with js-yaml (YAML 1.2's core schema, as the full parser's default; no
 * timestamps turned into dates, duplicate keys refused), four to ten times faster than the full
 * parser: a payload of 99 files, 535 KB, in 20–150 ms against 200–580 ms, which a CVO taking over
 * an install waits for before it applies anything. A file it refuses, or with a document that is
 * not a valid object, is read again by the full parser, whose per-document problems are the ones
 * reported.
 */
export function parseManifestFile(file: string, text: string): { manifests: Manifest[]; problems: PayloadProblem[] } {
  return quickParse(file, text) ?? fullParse(file, text);
}

/** The manifests of a file every document of which is valid, or undefined (any problem: the full parser says which). */
function quickParse(file: string, text: string): { manifests: Manifest[]; problems: PayloadProblem[] } | undefined {
  let values: unknown[];
  try {
    values = loadAll(text, undefined, { schema: CORE_SCHEMA, filename: file });
  } catch {
    return undefined;
  }
  const manifests: Manifest[] = [];
  for (const [document, value] of values.entries()) {
    if (value === null || value === undefined) continue;
    if (checkObject(value).length > 0) return undefined;
    const object = value as KubeObject;
    manifests.push({ file, document, gvk: { ...parseApiVersion(object.apiVersion), kind: object.kind }, object });
  }
  return { manifests, problems: [] };
}

/** The full parser alone: what parseManifestFile falls back to (and what tests compare its fast path with). */
export function fullParse(file: string, text: string): { manifests: Manifest[]; problems: PayloadProblem[] } {
  const manifests: Manifest[] = [];
  const problems: PayloadProblem[] = [];
  const docs = parseAllDocuments(text, { uniqueKeys: true });
  const list = Array.isArray(docs) ? docs : [docs];
  list.forEach((doc, document) => {
    if (doc.errors.length > 0) {
      problems.push({ file, document, message: `invalid YAML: ${doc.errors[0].message.split('\n')[0]}` });
      return;
    }
    const value: unknown = doc.toJS();
    if (value === null || value === undefined) return;
    const objectProblems = checkObject(value);
    if (objectProblems.length > 0) {
      for (const message of objectProblems) problems.push({ file, document, message });
      return;
    }
    const object = value as KubeObject;
    manifests.push({ file, document, gvk: { ...parseApiVersion(object.apiVersion), kind: object.kind }, object });
  });
  return { manifests, problems };
}

/** `kind "name"` or `kind "namespace/name"`, as the CVO names a manifest in messages. */
export function describeManifest(m: Manifest): string {
  const { name, namespace } = m.object.metadata;
  return `${m.gvk.kind.toLowerCase()} "${namespace ? `${namespace}/${name}` : name}"`;
}

/** The identity two manifests may not share: group, kind, namespace and name. */
export function manifestKey(m: Manifest): string {
  return `${m.gvk.group}/${m.gvk.kind}/${m.object.metadata.namespace ?? ''}/${m.object.metadata.name}`;
}
