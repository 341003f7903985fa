// The pod-template hash that names a Deployment's ReplicaSets (`<deployment>-<hash>`) and labels
// their pods, and the DaemonSet's controller-revision-hash. Kube hashes the template with FNV-32a
// (over Go's deep-print of the struct, plus the collision count) and spells the number in an
// alphabet without vowels; bosun hashes the canonical JSON of the template the same way, so the
// value is stable, changes with the template and has kube's shape (e.g. `5d59d67564`).
import type * as api from '../api/index.js';
import { isPlainObject } from '../common/json.js';
import { canonicalJson, sameJson, withoutEmpty } from './canonical.js';
import { defaultPodSpec } from './pod-defaults.js';

/** The label a Deployment adds to its ReplicaSets' selectors and templates. */
export const POD_TEMPLATE_HASH = 'pod-template-hash';

const SAFE_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';

function fnv32a(bytes: Uint8Array): number {
  let hash = 0x811c9dc5;
  for (const byte of bytes) {
    hash ^= byte;
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash >>> 0;
}

/** kube's rand.SafeEncodeString: each character mapped into an alphabet with no vowels or look-alikes. */
function safeEncode(text: string): string {
  return [...text].map((c) => SAFE_ALPHABET[c.charCodeAt(0) % SAFE_ALPHABET.length]).join('');
}

export function templateHash(template: unknown, collisionCount?: number): string {
  const bytes = new TextEncoder().encode(canonicalJson(withoutEmpty(template) ?? {}));
  const withCollision = collisionCount === undefined ? bytes : new Uint8Array([...bytes, ...new Uint8Array(new Uint32Array([collisionCount]).buffer)]);
  return safeEncode(String(fnv32a(withCollision)));
}

/**
 * The template without the pod-template-hash label (kube's EqualIgnoreHash compares these), with
 * the PodSpec defaults: a Deployment written before templates got them has the same template as
 * the ReplicaSet made from it since, which has them.
 */
function withoutHashLabel(template: unknown): unknown {
  // (withoutEmpty makes the copy the defaults and the label's removal change.)
  const copy = (withoutEmpty(template) ?? {}) as { metadata?: { labels?: Record<string, string> }; spec?: unknown };
  if (isPlainObject(copy.spec)) defaultPodSpec(copy.spec as api.PodSpec);
  if (copy.metadata?.labels) {
    delete copy.metadata.labels[POD_TEMPLATE_HASH];
    if (Object.keys(copy.metadata.labels).length === 0) delete copy.metadata.labels;
  }
  return copy;
}

export function equalIgnoringHash(a: unknown, b: unknown): boolean {
  return sameJson(withoutHashLabel(a), withoutHashLabel(b));
}
