// LimitRanger admission, as kube-apiserver's plugin, for pods created through the API in a
// namespace with LimitRanges: first each container gets the `default` limits and `defaultRequest`
// requests of the ranges' Container items for what it does not say (recorded in the annotation
// `kubernetes.io/limit-ranger`, as kube records it); then, after every mutation, each container
// (Container items) and the pod as a whole (Pod items: its containers summed) is checked against
// `min`, `max` and `maxLimitRequestRatio`, and a pod outside them is refused, 403, with kube's
// words ("maximum cpu usage per Container is 1, but limit is 2"); a PersistentVolumeClaim, created
// or resized, is checked against the PersistentVolumeClaim items' `min` and `max` storage request.
// Runs before the ResourceQuota admission, so defaults count in quotas.
import type * as api from '../../api/index.js';
import { formatMilli, quantityMilli } from '../../kube/quantity.js';
import { isBytes, podAmounts } from '../../kube/quota.js';
import { errors } from '../errors.js';
import { limitranges } from '../kinds/limitranges.js';
import { storagePrefix, type ResourceType } from '../registry/resource-type.js';
import type { Storage } from '../storage/types.js';
import type { AdmissionPlugin } from './plugin.js';

/** The annotation that says what LimitRanger set. */
export const LIMIT_RANGER_ANNOTATION = 'kubernetes.io/limit-ranger';

type ResourceList = Record<string, string>;


function containersOf(pod: api.Pod): { container: api.Container; kind: string }[] {
  return [
    ...(pod.spec?.initContainers ?? []).map((container) => ({ container, kind: 'init container' })),
    ...(pod.spec?.containers ?? []).map((container) => ({ container, kind: 'container' })),
  ];
}

const listOf = (value: unknown): ResourceList => (value && typeof value === 'object' ? value as ResourceList : {});

/** min ≤ request, min ≤ limit; a missing request fails a min. */
function minProblem(kind: string, name: string, enforced: string, requests: ResourceList, limits: ResourceList): string | undefined {
  const request = requests[name];
  const limit = limits[name];
  if (request === undefined) return `minimum ${name} usage per ${kind} is ${enforced}.  No request is specified`;
  if (quantityMilli(request) < quantityMilli(enforced)) return `minimum ${name} usage per ${kind} is ${enforced}, but request is ${request}`;
  if (limit !== undefined && quantityMilli(limit) < quantityMilli(enforced)) return `minimum ${name} usage per ${kind} is ${enforced}, but limit is ${limit}`;
  return undefined;
}

/** limit ≤ max, request ≤ max; a missing limit fails a max. */
function maxProblem(kind: string, name: string, enforced: string, requests: ResourceList, limits: ResourceList): string | undefined {
  const request = requests[name];
  const limit = limits[name];
  if (limit === undefined) return `maximum ${name} usage per ${kind} is ${enforced}.  No limit is specified`;
  if (quantityMilli(limit) > quantityMilli(enforced)) return `maximum ${name} usage per ${kind} is ${enforced}, but limit is ${limit}`;
  if (request !== undefined && quantityMilli(request) > quantityMilli(enforced)) return `maximum ${name} usage per ${kind} is ${enforced}, but request is ${request}`;
  return undefined;
}

function ratioProblem(kind: string, name: string, enforced: string, requests: ResourceList, limits: ResourceList): string | undefined {
  const request = requests[name] === undefined ? 0n : quantityMilli(requests[name]);
  const limit = limits[name] === undefined ? 0n : quantityMilli(limits[name]);
  if (request === 0n) return `${name} max limit to request ratio per ${kind} is ${enforced}, but no request is specified or request is 0`;
  if (limit === 0n) return `${name} max limit to request ratio per ${kind} is ${enforced}, but no limit is specified or limit is 0`;
  const observed = Number(limit) / Number(request);
  const maxRatio = Number(quantityMilli(enforced)) / 1000;
  return observed > maxRatio ? `${name} max limit to request ratio per ${kind} is ${enforced}, but provided ratio is ${observed.toFixed(6)}` : undefined;
}

function itemProblems(item: api.LimitRangeItem, kind: string, requests: ResourceList, limits: ResourceList): string[] {
  const problems: (string | undefined)[] = [
    ...Object.entries(listOf(item.min)).map(([name, v]) => minProblem(kind, name, v, requests, limits)),
    ...Object.entries(listOf(item.max)).map(([name, v]) => maxProblem(kind, name, v, requests, limits)),
    ...Object.entries(listOf(item.maxLimitRequestRatio)).map(([name, v]) => ratioProblem(kind, name, v, requests, limits)),
  ];
  return problems.filter((p): p is string => p !== undefined);
}

/** What a pod requests or limits as a whole (kube's PodRequests / PodLimits: init containers, sidecars, overhead). */
function podTotal(pod: api.Pod, which: 'requests' | 'limits'): ResourceList {
  return Object.fromEntries([...podAmounts(pod, which)].map(([name, milli]) => [name, formatMilli(milli, isBytes(name))]));
}

export class LimitRanger implements AdmissionPlugin {
  constructor(private readonly storage: Storage) {}

  private rangesIn(namespace: string): api.LimitRange[] {
    return this.storage.list(`${storagePrefix(limitranges.type)}${namespace}/`).items.map((i) => i.object as api.LimitRange);
  }

  /** Fills in each container's defaults from the namespace's Container items (pods created only). */
  mutate(type: ResourceType, object: api.Unstructured, previous: api.Unstructured | undefined): void {
    if (type.group !== '' || type.resource !== 'pods' || previous || !object.metadata.namespace) return;
    const ranges = this.rangesIn(object.metadata.namespace);
    if (ranges.length === 0) return;
    const pod = object as api.Pod;
    const defaults: ResourceList = {};
    const defaultRequests: ResourceList = {};
    for (const range of ranges) {
      for (const item of range.spec?.limits ?? []) {
        if (item.type !== 'Container') continue;
        Object.assign(defaults, listOf(item.default));
        Object.assign(defaultRequests, listOf(item.defaultRequest));
      }
    }
    const said: string[] = [];
    for (const { container, kind } of containersOf(pod)) {
      const resources = (container.resources ??= {});
      const limits = (resources.limits ??= {}) as ResourceList;
      const requests = (resources.requests ??= {}) as ResourceList;
      const setRequests = Object.keys(defaultRequests).filter((name) => requests[name] === undefined).sort();
      const setLimits = Object.keys(defaults).filter((name) => limits[name] === undefined).sort();
      for (const name of setRequests) requests[name] = defaultRequests[name];
      for (const name of setLimits) limits[name] = defaults[name];
      if (setRequests.length > 0) said.push(`${setRequests.join(', ')} request for ${kind} ${container.name}`);
      if (setLimits.length > 0) said.push(`${setLimits.join(', ')} limit for ${kind} ${container.name}`);
      if (Object.keys(limits).length === 0) delete resources.limits;
      if (Object.keys(requests).length === 0) delete resources.requests;
    }
    if (said.length > 0) pod.metadata.annotations = { ...pod.metadata.annotations, [LIMIT_RANGER_ANNOTATION]: `LimitRanger plugin set: ${said.join('; ')}` };
  }

  /**
   * Refuses a pod (created) or a claim (created or resized) outside its namespace's ranges, 403,
   * every problem named.
   */
  validate(type: ResourceType, object: api.Unstructured, previous: api.Unstructured | undefined): void {
    if (type.group === '' && type.resource === 'persistentvolumeclaims') return this.validateClaim(object as api.PersistentVolumeClaim, previous);
    if (type.group !== '' || type.resource !== 'pods' || previous || !object.metadata.namespace) return;
    const ranges = this.rangesIn(object.metadata.namespace);
    if (ranges.length === 0) return;
    const pod = object as api.Pod;
    const problems: string[] = [];
    for (const range of ranges) {
      for (const item of range.spec?.limits ?? []) {
        if (item.type === 'Container') {
          for (const { container } of containersOf(pod)) problems.push(...itemProblems(item, 'Container', listOf(container.resources?.requests), listOf(container.resources?.limits)));
        } else if (item.type === 'Pod') {
          problems.push(...itemProblems(item, 'Pod', podTotal(pod, 'requests'), podTotal(pod, 'limits')));
        }
      }
    }
    refuse('pods', pod.metadata.name, problems);
  }

  /**
   * A claim's storage request against the PersistentVolumeClaim items: at least `min`, at most
   * `max` (kube enforces both on the request; a claim's limits are not read). A claim being
   * deleted is not checked.
   */
  private validateClaim(claim: api.PersistentVolumeClaim, previous: api.Unstructured | undefined): void {
    if (!claim.metadata.namespace || previous?.metadata.deletionTimestamp) return;
    const requests = listOf(claim.spec?.resources?.requests);
    const problems: string[] = [];
    for (const range of this.rangesIn(claim.metadata.namespace)) {
      for (const item of range.spec?.limits ?? []) {
        if (item.type !== 'PersistentVolumeClaim') continue;
        for (const [name, enforced] of Object.entries(listOf(item.min))) {
          const tooSmall = minProblem('PersistentVolumeClaim', name, enforced, requests, {});
          if (tooSmall) problems.push(tooSmall);
        }
        for (const [name, enforced] of Object.entries(listOf(item.max))) {
          const request = requests[name];
          if (request === undefined) problems.push(`maximum ${name} usage per PersistentVolumeClaim is ${enforced}.  No request is specified`);
          else if (quantityMilli(request) > quantityMilli(enforced)) problems.push(`maximum ${name} usage per PersistentVolumeClaim is ${enforced}, but request is ${request}`);
        }
      }
    }
    refuse('persistentvolumeclaims', claim.metadata.name, problems);
  }
}

/** kube's 403 naming every problem (one as it is, several in brackets); nothing when there are none. */
function refuse(resource: string, name: string, problems: string[]): void {
  if (problems.length === 0) return;
  throw errors.forbiddenObject(resource, '', name, problems.length === 1 ? problems[0] : `[${problems.join(', ')}]`);
}
