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
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!jsonEqual(a[i], b[i])) return false;
    return true;
  }
  if (!isPlainObject(a) || !isPlainObject(b)) return false;
  // Counted rather than listed: every write compares objects this way, and lists of keys were
  // most of what the comparison allocated.
  let keys = 0;
  for (const k in a) {
    if (a[k] === undefined) continue;
    if (!jsonEqual(a[k], b[k])) return false;
    keys++;
  }
  for (const k in b) if (b[k] !== undefined) keys--;
  return keys === 0;
}
