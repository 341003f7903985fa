// The primitive of every merge: make `existing` carry what `required` sets, and nothing more.
// Objects are merged key by key (keys the manifest does not set are left to whoever set them);
// lists and scalars are replaced, but only when they differ. "Differ" is judged by isSubset:
// a list matches when it has the same length and each element carries at least what the
// manifest's element says. So fields the API server defaults (a probe's periodSeconds, an env
// fieldRef's apiVersion, a port's protocol) never count as a difference, and merging the
// result again changes nothing: no hot-looping against the API server or other controllers.
// A null in the manifest means "not set" (as `creationTimestamp: null` in generated YAML):
// NULL_MEANS_UNSET, the option every merge here passes to isSubset.
import { isPlainObject as isObject, jsonEqual } from '../../common/json.js';
import { isSubset, type SubsetOptions } from '../../common/subset.js';

export const NULL_MEANS_UNSET: SubsetOptions = { nullMeans: 'unset' };

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type JsonObject = { [key: string]: Json };

export interface MergeResult<T = JsonObject> {
  modified: boolean;
  object: T;
}

export function isPlainObject(v: unknown): v is JsonObject {
  return isObject(v);
}

export function clone<T>(v: T): T {
  return v === undefined ? v : structuredClone(v);
}

/** Per-field overrides of the default rule while merging one object (see ensureFields). */
export type FieldRules = Record<string, (existing: Json | undefined, required: Json) => { value: Json | undefined; modified: boolean }>;

/** The default rule: merge objects key by key, replace lists and scalars that differ. */
export function ensure(existing: Json | undefined, required: Json | undefined): { value: Json | undefined; modified: boolean } {
  if (required === null || required === undefined) return { value: existing, modified: false };
  if (isPlainObject(required) && isPlainObject(existing)) {
    const r = ensureFields(existing, required);
    return { value: r.object, modified: r.modified };
  }
  if (isSubset(required, existing, NULL_MEANS_UNSET)) return { value: existing, modified: false };
  return { value: clone(required), modified: true };
}

/**
 * Merges the keys of required into a copy of existing, each by its rule in `rules` or by the
 * default rule; keys listed in `skip` are never written.
 */
export function ensureFields(existing: JsonObject | undefined, required: JsonObject, rules: FieldRules = {}, skip: readonly string[] = []): MergeResult {
  const object: JsonObject = { ...(existing ?? {}) };
  let modified = false;
  for (const [key, req] of Object.entries(required)) {
    if (skip.includes(key) || req === null || req === undefined) continue;
    const r = rules[key] ? rules[key](object[key], req) : ensure(object[key], req);
    if (r.modified) {
      modified = true;
      if (r.value === undefined) delete object[key];
      else object[key] = r.value;
    }
  }
  return { modified, object };
}

/** A rule replacing the field as a whole unless exactly equal (jsonEqual: maps that are owned whole, e.g. selectors). */
export function replaceUnlessEqual(existing: Json | undefined, required: Json): { value: Json; modified: boolean } {
  return jsonEqual(existing, required) ? { value: existing as Json, modified: false } : { value: clone(required), modified: true };
}

/** A rule replacing the field as a whole unless existing already carries it (isSubset). */
export function replaceUnlessSubset(existing: Json | undefined, required: Json): { value: Json; modified: boolean } {
  return isSubset(required, existing, NULL_MEANS_UNSET) ? { value: existing as Json, modified: false } : { value: clone(required), modified: true };
}

/**
 * String maps (labels, annotations, ConfigMap data): the manifest's keys win, other keys stay.
 * A manifest key ending in "-" removes that key instead, as library-go's MergeMap does.
 */
export function mergeStringMap(existing: Json | undefined, required: Json): { value: Json; modified: boolean } {
  const out: JsonObject = isPlainObject(existing) ? { ...existing } : {};
  let modified = !isPlainObject(existing) && isPlainObject(required) && Object.keys(required).some((k) => !k.endsWith('-'));
  for (const [k, v] of Object.entries(isPlainObject(required) ? required : {})) {
    if (k.endsWith('-')) {
      const target = k.slice(0, -1);
      if (target in out) {
        delete out[target];
        modified = true;
      }
    } else if (out[k] !== v) {
      out[k] = v;
      modified = true;
    }
  }
  return { value: out, modified };
}
