// The Accept header of a resource request, negotiated as kube-apiserver does (its
// handlers/negotiation and RequestScope.AllowsMediaTypeTransform): the clauses in order of
// preference (q, then the more specific first), the first one this server can answer wins.
// A clause may ask for the answer transformed with `as=<Kind>;g=meta.k8s.io;v=<v1|v1beta1>`:
// a Table (kubectl's printing; JSON or YAML only), PartialObjectMetadata or
// PartialObjectMetadataList (client-go's metadata client, which kube's garbage collector and
// many operators' informers use). A clause this server cannot answer (protobuf, another kind, a
// version that does not exist) is passed over; when none is left the request is refused, 406.
import { errors } from '../errors.js';

export type MetaVersion = 'v1' | 'v1beta1';
export type TransformKind = 'Table' | 'PartialObjectMetadata' | 'PartialObjectMetadataList';

/** What a response is turned into before it is written; undefined when the object is written as it is. */
export interface Transform {
  kind: TransformKind;
  /** The meta.k8s.io version asked for. */
  version: MetaVersion;
}

/** Media types this server writes (YAML clients get JSON, which YAML reads). */
const SERVED = ['application/json', 'application/yaml'];
const KINDS: readonly string[] = ['Table', 'PartialObjectMetadata', 'PartialObjectMetadataList'];

interface Clause {
  type: string;
  subtype: string;
  q: number;
  params: Map<string, string>;
}

function parseClause(text: string): Clause {
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
function byPreference(a: Clause, b: Clause): number {
  if (a.q !== b.q) return b.q - a.q;
  const wild = (c: Clause) => (c.type === '*' ? 2 : 0) + (c.subtype === '*' ? 1 : 0);
  return wild(a) - wild(b);
}

/** The transform a clause asks for and whether this server can answer it; null when it cannot. */
function answerable(clause: Clause): { transform?: Transform } | null {
  const { type, subtype, params } = clause;
  const mediaType = `${type}/${subtype}`;
  if (!SERVED.includes(mediaType) && mediaType !== '*/*' && mediaType !== 'application/*') return null;
  const stream = params.get('stream');
  if (stream !== undefined && stream !== '' && stream !== 'watch') return null;
  const kind = params.get('as');
  const group = params.get('g');
  const version = params.get('v');
  if (kind === undefined && group === undefined && version === undefined) return {};
  if (kind === undefined || !KINDS.includes(kind) || group !== 'meta.k8s.io' || (version !== 'v1' && version !== 'v1beta1')) return null;
  // A Table is JSON or YAML: kube-apiserver writes it in no other format.
  if (kind === 'Table' && subtype !== 'json' && subtype !== 'yaml' && subtype !== '*') return null;
  return { transform: { kind: kind as TransformKind, version } };
}

/**
 * The transform the request's Accept header asks for (undefined: the object as it is), or a 406
 * NotAcceptable when no clause is one this server answers. No header, or an empty one, is JSON.
 */
export function negotiateOutput(accept: string | undefined): Transform | undefined {
  if (accept === undefined || accept.trim() === '') return undefined;
  // The common case, decided without parsing.
  if (accept === 'application/json' || accept === '*/*') return undefined;
  const clauses = accept.split(',').filter((c) => c.trim() !== '').map(parseClause).sort(byPreference);
  for (const clause of clauses) {
    const answer = answerable(clause);
    if (answer) return answer.transform;
  }
  throw errors.notAcceptable(`only the following media types are accepted: ${SERVED.join(', ')}`);
}
