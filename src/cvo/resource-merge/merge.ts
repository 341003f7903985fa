// The entry point of resource merging: merge(existing, required) for any kind, returning the
// object to write and whether it differs from what the cluster has. Metadata is merged the same
// way for every kind (object-meta.ts); the rest by the kind's rules (kinds.ts). Pure: the apply
// engine reads, calls this, and writes only when `modified` (or recreates when `recreate`).
import { isPlainObject, type JsonObject } from './ensure.js';
import { genericMerge, kindMerges, type KindMergeResult } from './kinds.js';
import { ensureObjectMeta } from './object-meta.js';

export type { KindMergeResult as MergeOutcome } from './kinds.js';

function groupOf(apiVersion: unknown): string {
  const s = String(apiVersion ?? '');
  return s.includes('/') ? s.slice(0, s.indexOf('/')) : '';
}

/** Merges manifest `required` into the cluster's `existing` object of the same kind and name. */
export function merge(existing: JsonObject, required: JsonObject): KindMergeResult {
  const kindMerge = kindMerges[`${groupOf(required.apiVersion)}/${String(required.kind)}`] ?? genericMerge;
  const meta = ensureObjectMeta(isPlainObject(existing.metadata) ? existing.metadata : undefined, isPlainObject(required.metadata) ? required.metadata : {});
  const rest = kindMerge({ ...existing, metadata: meta.object }, required);
  return { ...rest, modified: meta.modified || rest.modified };
}
