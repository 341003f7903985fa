// The root CA publisher, as kube-controller-manager's: a ConfigMap `kube-root-ca.crt` in every
// active namespace holding the CA that verifies the API server (`ca.crt`), which pods mount through
// their projected service-account volumes. Edited or deleted, it is put back.
import { Controller, type SyncResult } from '../../kube/index.js';
import type { WorkloadContext } from './context.js';
import { CONFIG_MAPS } from './resources.js';

export const ROOT_CA_CONFIG_MAP = 'kube-root-ca.crt';
const DESCRIPTION_KEY = 'kubernetes.io/description';
const DESCRIPTION =
  'Contains a CA bundle that can be used to verify the kube-apiserver when using internal endpoints such as the internal service IP or kubernetes.default.svc. No other usage is guaranteed across distributions of Kubernetes clusters.';

export function rootCaPublisher(ctx: WorkloadContext, rootCa: string): Controller {
  const { namespaces, rootCaConfigMaps } = ctx.informers;
  const controller = new Controller({ name: 'root-ca-cert-publisher', clock: ctx.clock, workers: 2, sync: (key) => sync(key) });
  controller.watch(namespaces);
  controller.watch(rootCaConfigMaps, (cm) => cm.metadata.namespace);

  async function sync(namespace: string): Promise<SyncResult | void> {
    const ns = namespaces.get(namespace);
    if (!ns || (ns.status?.phase ?? 'Active') !== 'Active') return;
    const current = rootCaConfigMaps.get(ROOT_CA_CONFIG_MAP, namespace);
    if (!current) {
      await ctx.client.create(CONFIG_MAPS, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: ROOT_CA_CONFIG_MAP, namespace, annotations: { [DESCRIPTION_KEY]: DESCRIPTION } }, data: { 'ca.crt': rootCa } });
      return;
    }
    const data: Record<string, string> = current.data ?? {};
    if (Object.keys(data).length === 1 && data['ca.crt'] === rootCa && current.metadata.annotations?.[DESCRIPTION_KEY] === DESCRIPTION) return;
    await ctx.client.update(CONFIG_MAPS, { ...current, metadata: { ...current.metadata, annotations: { ...(current.metadata.annotations ?? {}), [DESCRIPTION_KEY]: DESCRIPTION } }, data: { 'ca.crt': rootCa } });
  }

  return controller;
}
