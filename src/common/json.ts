// Plain JSON values: telling an object from an array or null, and comparing two values as JSON
// compares them. One copy for the API server (patches, managed fields, generation), the CVO's
// merge and whoever else needs them.

export type JsonObject = Record<string, unknown>;

/** An object that is neither null nor an array. */
export function isPlainObject(v: unknown): v is JsonObject {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/**
 * Deep equality of JSON values, key order aside. A key whose value is undefined counts as absent,
 * as it is once serialised.
 */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a) || Array.isArray(b)) return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((x, i) => jsonEqual(x, b[i]));
  if (!isPlainObject(a) || !isPlainObject(b)) return false;
  const ka = Object.keys(a).filter((k) => a[k] !== undefined);
  const kb = Object.keys(b).filter((k) => b[k] !== undefined);
  return ka.length === kb.length && ka.every((k) => jsonEqual(a[k], b[k]));
}
