// Merging Ignition 3.x configs the way Ignition merges a parent config with a child (`config.merge`)
// and the way the MCO folds MachineConfigs together: keyed lists (files/directories/links by path,
// units and dropins, users and groups by name, ...) merge entry by entry with the child winning per
// key; lists of strings become a union; other lists are concatenated; scalars from the child
// replace the parent's. Files, directories and links share one namespace: a child entry at a path
// removes a parent entry of another kind at the same path.
import { CONFIG_SHAPE, type Shape } from './schema.js';
import type { IgnitionConfig } from './types.js';

const NODE_KINDS = ['files', 'directories', 'links'] as const;

/** parent ⊕ child; neither input is modified. The result's version is the newer of the two. */
export function mergeConfigs(parent: IgnitionConfig, child: IgnitionConfig): IgnitionConfig {
  const pruned = structuredClone(parent);
  const storage = pruned.storage as Record<string, { path: string }[] | null | undefined> | null | undefined;
  if (storage) {
    for (const kind of NODE_KINDS) {
      const childPaths = new Set<string>();
      for (const other of NODE_KINDS) if (other !== kind) for (const n of child.storage?.[other] ?? []) childPaths.add(n.path);
      if (storage[kind]) storage[kind] = storage[kind]!.filter((n) => !childPaths.has(n.path));
    }
  }
  const merged = mergeValue(pruned, child, CONFIG_SHAPE) as IgnitionConfig;
  merged.ignition.version = newerVersion(parent.ignition.version, child.ignition.version);
  return merged;
}

/** Folds a list of configs left to right (later wins). */
export function mergeAll(configs: IgnitionConfig[]): IgnitionConfig {
  if (configs.length === 0) throw new Error('mergeAll needs at least one config');
  return configs.slice(1).reduce(mergeConfigs, structuredClone(configs[0]));
}

function newerVersion(a: string, b: string): string {
  const minor = (v: string) => Number(v.split('.')[1] ?? 0);
  return minor(b) >= minor(a) ? b : a;
}

function mergeValue(parent: unknown, child: unknown, shape: Shape | undefined): unknown {
  if (child === undefined || child === null) return structuredClone(parent);
  if (parent === undefined || parent === null || !shape) return structuredClone(child);
  if (shape.kind === 'object') {
    const p = parent as Record<string, unknown>;
    const c = child as Record<string, unknown>;
    const out: Record<string, unknown> = { ...structuredClone(p) };
    for (const [name, v] of Object.entries(c)) out[name] = mergeValue(p[name], v, shape.fields[name]?.shape);
    return out;
  }
  if (shape.kind === 'array') {
    const p = parent as unknown[];
    const c = child as unknown[];
    if (shape.key === undefined) return [...structuredClone(p), ...structuredClone(c)];
    const keyOf = (v: unknown) => (shape.key === '' ? v : (v as Record<string, unknown> | null)?.[shape.key!]);
    const out = structuredClone(p);
    for (const entry of c) {
      const k = keyOf(entry);
      const at = k === undefined || k === null ? -1 : out.findIndex((e) => keyOf(e) === k);
      if (at < 0) out.push(structuredClone(entry));
      else out[at] = mergeValue(out[at], entry, shape.of);
    }
    return out;
  }
  return child;
}
