// The EndpointSlice controller, as kube-controller-manager's: keeps each selecting Service's
// EndpointSlices (discovery.k8s.io/v1, labelled with the service name and managed-by, owned by the
// Service) in step with its pods (endpointslice.ts). A slice whose ports and address type are
// still wanted is reused and updated only when its endpoints or labels change; missing ones are
// created with a name generated from the Service's; the rest are deleted — also when the Service
// goes (kube leaves that to the garbage collector through the owner reference; this controller
// does it itself, so no slice outlives its Service where no collector runs). As kube's slice
// tracker, it remembers what it wrote and waits while the informer has not caught up, so a stale
// cache never makes it create a slice twice.
import type * as api from '../../api/index.js';
import { Controller, type SyncResult } from '../../kube/index.js';
import { canonicalJson, sameJson } from '../../kube/canonical.js';
import { keyFor, type WorkloadContext } from './context.js';
import { desiredSlices, MANAGED_BY, CONTROLLER_NAME, SERVICE_NAME, sliceLabels, type SliceContent } from './endpointslice.js';
import { controllerReference } from '../../kube/index.js';
import { ENDPOINT_SLICES } from './resources.js';

const selects = (service: api.Service, pod: api.Pod) => {
  const selector: Record<string, string> | undefined = service.spec?.selector;
  if (!selector || Object.keys(selector).length === 0) return false;
  return Object.entries(selector).every(([k, v]) => pod.metadata?.labels?.[k] === v);
};

const shape = (s: Pick<api.EndpointSlice, 'addressType' | 'ports'>) => `${s.addressType} ${canonicalJson(s.ports ?? [])}`;

export function endpointSliceController(ctx: WorkloadContext): Controller {
  const { pods, services, endpointSlices, nodes } = ctx.informers;
  const servicesOf = (pod: api.Pod) => services.list().filter((s) => s.metadata.namespace === pod.metadata.namespace && selects(s, pod)).map(keyFor);
  const managedSlices = (namespace: string, name: string) =>
    endpointSlices.list().filter((s) => s.metadata.namespace === namespace && s.metadata.labels?.[SERVICE_NAME] === name && s.metadata.labels?.[MANAGED_BY] === CONTROLLER_NAME);

  /** Per Service: the slices this controller wrote last (name → resourceVersion, or deleted). */
  const written = new Map<string, Map<string, string | 'deleted'>>();
  const caughtUp = (key: string, namespace: string) =>
    [...(written.get(key) ?? new Map<string, string | 'deleted'>())].every(([name, rv]) => {
      const seen = endpointSlices.get(name, namespace);
      return rv === 'deleted' ? !seen : Boolean(seen) && Number(seen!.metadata.resourceVersion) >= Number(rv);
    });

  // A slice deleted by anyone has been seen for what it is: nothing to wait for.
  endpointSlices.on((type, slice) => {
    if (type === 'delete') written.get(`${slice.metadata.namespace}/${slice.metadata.labels?.[SERVICE_NAME]}`)?.delete(slice.metadata.name);
  });

  const controller = new Controller({ name: 'endpointslice-controller', clock: ctx.clock, workers: 2, sync: (key) => sync(key) });
  controller.watch(services);
  controller.watch(pods, (pod, _type, old) => [...new Set([...servicesOf(pod), ...(old ? servicesOf(old) : [])])]);
  controller.watch(endpointSlices, (slice) => (slice.metadata.labels?.[MANAGED_BY] === CONTROLLER_NAME && slice.metadata.labels?.[SERVICE_NAME] ? `${slice.metadata.namespace}/${slice.metadata.labels[SERVICE_NAME]}` : undefined));
  // A node's zone is part of its endpoints.
  controller.watch(nodes, (node, type, old) => (type === 'update' && sameJson(node.metadata.labels, old?.metadata?.labels) ? undefined : services.list().map(keyFor)));

  async function sync(key: string): Promise<SyncResult | void> {
    const [namespace, name] = key.split('/');
    if (!caughtUp(key, namespace)) return { requeueAfterMs: 100 };
    const wrote = new Map<string, string | 'deleted'>();
    written.set(key, wrote);
    const existing = managedSlices(namespace, name);
    const service = services.getByKey(key);
    const wanted: SliceContent[] = service && service.spec?.type !== 'ExternalName' && service.spec?.selector
      ? desiredSlices(service, pods.list().filter((p) => p.metadata.namespace === namespace && selects(service, p)), (node) => nodes.get(node))
      : [];
    const labels = service ? sliceLabels(service) : {};
    const unused = [...existing];
    for (const content of wanted) {
      // Reuse a slice of the same shape, preferring one that already holds exactly these endpoints.
      const sameShape = unused.filter((s) => shape(s) === shape(content));
      const slice = sameShape.find((s) => sameJson(s.endpoints ?? [], content.endpoints)) ?? sameShape[0];
      if (slice) {
        unused.splice(unused.indexOf(slice), 1);
        if (sameJson(slice.endpoints ?? [], content.endpoints) && sameJson(slice.metadata.labels ?? {}, labels)) continue;
        const updated = await ctx.client.update(ENDPOINT_SLICES, { ...slice, metadata: { ...slice.metadata, labels }, endpoints: content.endpoints });
        wrote.set(updated.metadata.name, updated.metadata.resourceVersion ?? '');
      } else {
        const created = await ctx.client.create(ENDPOINT_SLICES, {
          apiVersion: 'discovery.k8s.io/v1',
          kind: 'EndpointSlice',
          // No name: the API server makes one from generateName.
          metadata: { generateName: `${name.slice(0, 57)}-`, namespace, labels, ownerReferences: [controllerReference(service!)] } as api.ObjectMeta,
          addressType: content.addressType,
          ports: content.ports,
          endpoints: content.endpoints,
        });
        wrote.set(created.metadata.name, created.metadata.resourceVersion ?? '');
      }
    }
    for (const slice of unused) {
      await ctx.client.delete(ENDPOINT_SLICES, slice.metadata.name, namespace, { preconditions: { uid: slice.metadata.uid } });
      wrote.set(slice.metadata.name, 'deleted');
    }
    if (!service) written.delete(key);
  }

  return controller;
}
