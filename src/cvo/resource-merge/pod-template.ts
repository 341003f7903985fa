// Merging pod templates (Deployments, DaemonSets): template labels and annotations merged;
// containers and init containers matched by name, unknown ones removed, the manifest's order
// kept; within a container image, command, args and env are replaced as a whole when they
// differ, other fields merged; nodeSelector owned as a whole; everything else by the default
// rule (see ensure.ts). Mirrors the CVO's resourcemerge ensurePodTemplateSpec.
import { ensureFields, isPlainObject, replaceUnlessEqual, type FieldRules, type Json, type JsonObject } from './ensure.js';
import { ensureObjectMeta } from './object-meta.js';

function mergeContainers(existing: Json | undefined, required: Json): { value: Json; modified: boolean } {
  const current = Array.isArray(existing) ? existing.filter(isPlainObject) : [];
  const wanted = Array.isArray(required) ? required.filter(isPlainObject) : [];
  let modified = current.length !== wanted.length || current.some((c, i) => c.name !== wanted[i]?.name);
  const value = wanted.map((w) => {
    const match = current.find((c) => c.name === w.name);
    const r = ensureFields(match, w);
    if (r.modified) modified = true;
    return r.object;
  });
  return { value, modified };
}

const podSpecRules: FieldRules = {
  containers: mergeContainers,
  initContainers: mergeContainers,
  nodeSelector: replaceUnlessEqual,
};

export function mergePodTemplate(existing: Json | undefined, required: Json): { value: Json; modified: boolean } {
  if (!isPlainObject(required)) return { value: existing ?? null, modified: false };
  const r = ensureFields(isPlainObject(existing) ? existing : undefined, required, {
    metadata: (e, req) => {
      const m = ensureObjectMeta(isPlainObject(e) ? e : undefined, req as JsonObject);
      return { value: m.object, modified: m.modified };
    },
    spec: (e, req) => {
      const s = ensureFields(isPlainObject(e) ? e : undefined, req as JsonObject, podSpecRules);
      return { value: s.object, modified: s.modified };
    },
  });
  return { value: r.object, modified: r.modified };
}
