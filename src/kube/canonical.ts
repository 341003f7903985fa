// Canonical JSON (keys sorted at every level), so that two objects that say the same thing compare
// and hash the same whatever order their keys arrived in; semantic emptiness; and the status-field rule kube's
// `omitempty` follows, so that statuses read as kube-controller-manager writes them.

export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value ?? null);
}

/**
 * The value without nulls, empty objects and empty arrays, at any depth: what Go's typed
 * round-trip adds or drops (`creationTimestamp: null`, `resources: {}`) when kubectl sends a
 * template back, and what kube's semantic equality does not tell apart.
 */
export function withoutEmpty(value: unknown): unknown {
  if (Array.isArray(value)) {
    const items = value.map(withoutEmpty).filter((v) => v !== undefined);
    return items.length ? items : undefined;
  }
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .map(([k, v]) => [k, withoutEmpty(v)] as const)
      .filter(([, v]) => v !== undefined);
    return entries.length ? Object.fromEntries(entries) : undefined;
  }
  return value === null ? undefined : value;
}

export function sameJson(a: unknown, b: unknown): boolean {
  return canonicalJson(a) === canonicalJson(b);
}

/** `status` without the named fields that are 0 or empty (Go's omitempty on those fields). */
export function omitEmpty<T extends object>(status: T, fields: readonly string[]): T {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(status)) {
    if (v === undefined) continue;
    if ((fields as readonly string[]).includes(k) && (v === 0 || (Array.isArray(v) && v.length === 0))) continue;
    out[k] = v;
  }
  return out as T;
}
