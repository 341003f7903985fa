// The Accept header of a resource request, negotiated as kube-apiserver does (its
// handlers/negotiation and RequestScope.AllowsMediaTypeTransform): the clauses in order of
// preference (q, then the more specific first), the first one this server can answer wins.
// A clause may ask for the answer transformed with `as=<Kind>;g=meta.k8s.io;v=<v1|v1beta1>`:
// a Table (kubectl's printing; JSON or YAML only), PartialObjectMetadata or
// PartialObjectMetadataList (client-go's metadata client, which kube's garbage collector and
// many operators' informers use). JSON or YAML; a watch is JSON (YAML has no stream framing). A
// clause this server cannot answer (protobuf, another kind, a version that does not exist) is
// passed over; when none is left the request is refused, 406.
import { errors } from '../errors.js';

export type MetaVersion = 'v1' | 'v1beta1';
export type TransformKind = 'Table' | 'PartialObjectMetadata' | 'PartialObjectMetadataList';

/** How a response is written: its media type, and what it is turned into first (none: the object as it is). */
export interface Output {
  mediaType: 'application/json' | 'application/yaml';
  transform?: Transform;
}

/** What a response is turned into before it is written. */
export interface Transform {
  kind: TransformKind;
  /** The meta.k8s.io version asked for. */
  version: MetaVersion;
}

/** Media types this server writes. */
const SERVED = ['application/json', 'application/yaml'];
const JSON_OUTPUT: Output = Object.freeze({ mediaType: 'application/json' });
const KINDS: readonly string[] = ['Table', 'PartialObjectMetadata', 'PartialObjectMetadataList'];

/** One clause of an Accept header: `type/subtype;param=value;…`, its q apart. */
export interface AcceptClause {
  type: string;
  subtype: string;
  q: number;
  params: Map<string, string>;
}

function parseClause(text: string): AcceptClause {
  const [mediaType = '', ...rest] = text.split(';');
  const trimmed = mediaType.trim().toLowerCase();
  // A lone `*` is `*/*`, as goautoneg reads it.
  const [type = '', subtype = ''] = (trimmed === '*' ? '*/*' : trimmed).split('/');
  const params = new Map<string, string>();
  let q = 1;
  for (const part of rest) {
    const eq = part.indexOf('=');
    if (eq < 0) continue;
    const key = part.slice(0, eq).trim();
    const value = part.slice(eq + 1).trim().replace(/^"(.*)"$/, '$1');
    if (key === 'q') q = Number.isFinite(Number(value)) ? Number(value) : 0;
    else params.set(key, value);
  }
  return { type, subtype, q, params };
}

/** goautoneg's order: higher q first, then a concrete type before `*`, a concrete subtype before `*`; ties keep the header's order. */
function byPreference(a: AcceptClause, b: AcceptClause): number {
  if (a.q !== b.q) return b.q - a.q;
  const wild = (c: AcceptClause) => (c.type === '*' ? 2 : 0) + (c.subtype === '*' ? 1 : 0);
  return wild(a) - wild(b);
}

/** How a clause would be answered; null when this server cannot answer it (for a watch: `stream`). */
/** An Accept header's clauses, the most preferred first (empty ones skipped). */
export function acceptClauses(accept: string): AcceptClause[] {
  return accept.split(',').filter((c) => c.trim() !== '').map(parseClause).sort(byPreference);
}

function answerable(clause: AcceptClause, stream: boolean): Output | null {
  const { type, subtype, params } = clause;
  const named = `${type}/${subtype}`;
  // A wildcard is answered in JSON, the first of the served types.
  const mediaType = named === '*/*' || named === 'application/*' ? 'application/json' : named;
  if (mediaType !== 'application/json' && mediaType !== 'application/yaml') return null;
  if (stream && mediaType !== 'application/json') return null;
  const streamParam = params.get('stream');
  if (streamParam !== undefined && streamParam !== '' && streamParam !== 'watch') return null;
  const kind = params.get('as');
  const group = params.get('g');
  const version = params.get('v');
  if (kind === undefined && group === undefined && version === undefined) return mediaType === 'application/json' ? JSON_OUTPUT : { mediaType };
  if (kind === undefined || !KINDS.includes(kind) || group !== 'meta.k8s.io' || (version !== 'v1' && version !== 'v1beta1')) return null;
  return { mediaType, transform: { kind: kind as TransformKind, version } };
}

/**
 * How the request's Accept header asks to be answered, or a 406 NotAcceptable when no clause is
 * one this server answers. No header, or an empty one, is JSON. `stream`: the request is a watch.
 */
export function negotiateOutput(accept: string | undefined, stream = false): Output {
  if (accept === undefined || accept.trim() === '') return JSON_OUTPUT;
  // The common case, decided without parsing.
  if (accept === 'application/json' || accept === '*/*') return JSON_OUTPUT;
  for (const clause of acceptClauses(accept)) {
    const answer = answerable(clause, stream);
    if (answer) return answer;
  }
  const served = stream ? ['application/json;stream=watch'] : SERVED;
  throw errors.notAcceptable(`only the following media types are accepted: ${served.join(', ')}`);
}
