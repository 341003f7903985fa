// The endpoint controller, as kube-controller-manager's: keeps the Endpoints object named after
// each Service with a selector in step with the pods the selector matches (endpoints.ts), creates
// it, updates it only when its subsets or labels change, and deletes it with its Service. Services
// without a selector, and ExternalName ones, get none: their Endpoints are their owners' to write.
// (EndpointSlices need the discovery.k8s.io API, which the API server does not serve yet.)
import type * as api from '../../api/index.js';
import { Controller, type SyncResult } from '../../kube/index.js';
import { sameJson } from '../../kube/canonical.js';
import { keyFor, type WorkloadContext } from './context.js';
import { endpointLabels, endpointSubsets, type EndpointSubset } from './endpoints.js';
import { ENDPOINTS } from './resources.js';

const selects = (service: api.Service, pod: api.Pod) => {
  const selector: Record<string, string> | undefined = service.spec?.selector;
  if (!selector || Object.keys(selector).length === 0) return false;
  return Object.entries(selector).every(([k, v]) => pod.metadata?.labels?.[k] === v);
};

/** Subsets as compared: a pod's resourceVersion in a targetRef is no change (as kube ignores it). */
const comparable = (subsets: EndpointSubset[] | undefined) =>
  (subsets ?? []).map((s) => ({
    ...s,
    addresses: s.addresses?.map((a) => ({ ...a, targetRef: a.targetRef && { ...a.targetRef, resourceVersion: undefined } })),
    notReadyAddresses: s.notReadyAddresses?.map((a) => ({ ...a, targetRef: a.targetRef && { ...a.targetRef, resourceVersion: undefined } })),
  }));

export function endpointsController(ctx: WorkloadContext): Controller {
  const { pods, services, endpoints } = ctx.informers;
  const servicesOf = (pod: api.Pod) => services.list().filter((s) => s.metadata.namespace === pod.metadata.namespace && selects(s, pod)).map(keyFor);

  const controller = new Controller({ name: 'endpoint-controller', clock: ctx.clock, workers: 2, sync: (key) => sync(key) });
  controller.watch(services);
  controller.watch(pods, (pod, _type, old) => [...new Set([...servicesOf(pod), ...(old ? servicesOf(old) : [])])]);
  // An Endpoints deleted or edited by someone else is put back.
  controller.watch(endpoints, (ep) => (services.getByKey(keyFor(ep)) ? keyFor(ep) : undefined));

  async function sync(key: string): Promise<SyncResult | void> {
    const [namespace, name] = key.split('/');
    const service = services.getByKey(key);
    if (!service) {
      if (endpoints.get(name, namespace)) await ctx.client.delete(ENDPOINTS, name, namespace);
      return;
    }
    if (service.spec?.type === 'ExternalName' || !service.spec?.selector) return;
    const matching = pods.list().filter((p) => p.metadata.namespace === namespace && selects(service, p));
    const subsets = endpointSubsets(service, matching);
    const labels = endpointLabels(service);
    const current = endpoints.get(name, namespace);
    if (current && sameJson(comparable(current.subsets), subsets) && sameJson(current.metadata.labels ?? {}, labels)) return;
    try {
      if (current) await ctx.client.update(ENDPOINTS, { ...current, metadata: { ...current.metadata, labels }, subsets });
      else await ctx.client.create(ENDPOINTS, { apiVersion: 'v1', kind: 'Endpoints', metadata: { name, namespace, labels }, subsets });
    } catch (e) {
      const subject = { apiVersion: 'v1', kind: 'Endpoints', metadata: { name, namespace } };
      if (current) void ctx.events.event(subject, 'Warning', 'FailedToUpdateEndpoint', `Failed to update endpoint ${namespace}/${name}: ${(e as Error).message}`);
      else void ctx.events.event(subject, 'Warning', 'FailedToCreateEndpoint', `Failed to create endpoint for service ${namespace}/${name}: ${(e as Error).message}`);
      throw e;
    }
  }

  return controller;
}
