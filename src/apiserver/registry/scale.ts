// The autoscaling/v1 Scale view of an object whose type has a scale subresource: its replicas at
// the paths the type declares (a CRD's `subresources.scale`), and its selector. Served at
// `<resource>/scale`, and what admission webhooks registered for that subresource are sent, as
// kube-apiserver sends them a Scale, not the object.
import { formatLabelSelector, fromLabelSelectorObject } from '../../common/label-selectors.js';
import type * as api from '../../api/index.js';
import type { ResourceType } from './resource-type.js';

/** autoscaling/v1 Scale. */
export type Scale = api.KubeObject & { spec?: { replicas?: number }; status?: { replicas: number; selector?: string } };

/** The group, version and kind admission names for a Scale. */
export const SCALE_KIND = { group: 'autoscaling', version: 'v1', kind: 'Scale' } as const;

function valueAt(object: unknown, path: string): unknown {
  let v = object;
  for (const p of path.replace(/^\./, '').split('.')) v = (v as Record<string, unknown> | null | undefined)?.[p];
  return v;
}

/** The Scale of `object`; its type must have a scale subresource. */
export function scaleOf(type: ResourceType, object: api.Unstructured): Scale {
  const scale = type.scale!;
  const replicas = (path: string) => {
    const v = valueAt(object, path);
    return typeof v === 'number' ? v : 0;
  };
  let selector = '';
  if (scale.labelSelectorPath) {
    const v = valueAt(object, scale.labelSelectorPath);
    if (typeof v === 'string') selector = v;
  }
  const specSelector = (object.spec as { selector?: Parameters<typeof fromLabelSelectorObject>[0] } | undefined)?.selector;
  if (!selector && specSelector && type.builtin) {
    selector = formatLabelSelector(fromLabelSelectorObject(specSelector));
  }
  return {
    kind: 'Scale',
    apiVersion: 'autoscaling/v1',
    metadata: { name: object.metadata.name, namespace: object.metadata.namespace, uid: object.metadata.uid, resourceVersion: object.metadata.resourceVersion, creationTimestamp: object.metadata.creationTimestamp },
    spec: { replicas: replicas(scale.specReplicasPath) },
    status: { replicas: replicas(scale.statusReplicasPath), ...(selector ? { selector } : {}) },
  };
}

/** `object` with its spec replicas (at the type's path) set to `replicas`: a copy. */
export function withSpecReplicas(type: ResourceType, object: api.Unstructured, replicas: number): api.Unstructured {
  const out = structuredClone(object) as Record<string, unknown>;
  const path = type.scale!.specReplicasPath.replace(/^\./, '').split('.');
  let cursor = out;
  path.forEach((p, i) => {
    if (i === path.length - 1) cursor[p] = replicas;
    else cursor = (cursor[p] ??= {}) as Record<string, unknown>;
  });
  return out as api.Unstructured;
}
