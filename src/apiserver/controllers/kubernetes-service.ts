// The `kubernetes` Service in `default`, as kube-apiserver keeps it: the first address of the
// service network (--service-cluster-ip-range) on port 443, and as its endpoints (an Endpoints and
// an EndpointSlice named `kubernetes`, which no controller owns) the address this server serves
// on. Pods reach the API through it, where the node's service proxy serves the cluster IP.
// Written at start: created when missing, replaced when its cluster IP is not the network's first
// address (a data directory from a server with another range), endpoints rewritten when they name
// another address. Several servers sharing one etcd behind a balancer advertise the balancer
// (`advertise`), so they agree; without it each writes its own address and the last one started is
// the endpoint (kube-apiserver's lease reconciler, listing every live server, is not built).
import { ipToNumber, nthAddress } from '../../common/ipv4.js';
import type { Logger } from '../../common/log.js';
import { type Registry } from '../registry/registry.js';
import { storageKey, type ResourceType } from '../registry/resource-type.js';
import type { Resources } from '../registry/resources.js';
import type * as api from '../../api/index.js';
import { asKind } from '../kinds/strategy.js';

const NAME = 'kubernetes';
const NAMESPACE = 'default';

/** What the Service, its Endpoints and its EndpointSlice should be. Pure. */
export function kubernetesServiceObjects(serviceRange: string, address: { ip: string; port: number }): { service: api.Service; endpoints: api.Endpoints; slice: api.EndpointSlice } {
  const metadata = { name: NAME, namespace: NAMESPACE };
  return {
    service: {
      apiVersion: 'v1', kind: 'Service',
      metadata: { ...metadata, labels: { component: 'apiserver', provider: 'kubernetes' } },
      spec: { type: 'ClusterIP', clusterIP: nthAddress(serviceRange, 1), sessionAffinity: 'None', ports: [{ name: 'https', port: 443, protocol: 'TCP', targetPort: address.port }] },
    },
    endpoints: {
      apiVersion: 'v1', kind: 'Endpoints',
      metadata: { ...metadata, labels: { 'endpointslice.kubernetes.io/skip-mirror': 'true' } },
      subsets: [{ addresses: [{ ip: address.ip }], ports: [{ name: 'https', port: address.port, protocol: 'TCP' }] }],
    },
    slice: {
      apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice',
      metadata: { ...metadata, labels: { 'kubernetes.io/service-name': NAME } },
      addressType: 'IPv4',
      endpoints: [{ addresses: [address.ip], conditions: { ready: true } }],
      ports: [{ name: 'https', port: address.port, protocol: 'TCP' }],
    },
  };
}

/** Creates or corrects the `kubernetes` Service and its endpoints, naming the advertised address and port. */
export async function ensureKubernetesService(resources: Resources, registry: Registry, serviceRange: string, advertise: { address: string; port: number }, log: Logger): Promise<void> {
  // A server on a name rather than an address: the Service still, with endpoints on loopback.
  const ip = ipToNumber(advertise.address) !== undefined && advertise.address !== '0.0.0.0' ? advertise.address : '127.0.0.1';
  const wanted = kubernetesServiceObjects(serviceRange, { ip, port: advertise.port });
  const services = registry.lookup('', 'v1', 'services')!;
  const stored = resources.store.get(storageKey(services, NAMESPACE, NAME))?.object;
  const existing = stored && asKind<api.Service>(stored);
  if (existing && existing.spec?.clusterIP !== wanted.service.spec?.clusterIP) {
    log.info({ service: `${NAMESPACE}/${NAME}`, clusterIP: existing.spec?.clusterIP, wanted: wanted.service.spec?.clusterIP }, 'the kubernetes Service is outside the service network: recreating it');
    await resources.delete(services, NAMESPACE, NAME).catch(notFoundOk);
  }
  await upsert(resources, services, wanted.service, (live) => JSON.stringify(live.spec?.ports) === JSON.stringify(wanted.service.spec?.ports));
  await upsert(resources, registry.lookup('', 'v1', 'endpoints')!, wanted.endpoints, (live) => JSON.stringify(live.subsets) === JSON.stringify(wanted.endpoints.subsets));
  await upsert(resources, registry.lookup('discovery.k8s.io', 'v1', 'endpointslices')!, wanted.slice, (live) => JSON.stringify([live.endpoints, live.ports]) === JSON.stringify([wanted.slice.endpoints, wanted.slice.ports]));
}

const notFoundOk = (e: Error) => {
  if ((e as { reason?: string }).reason !== 'NotFound') throw e;
};

/** Creates `object`, or replaces the live one unless `same` says it already is as wanted; another server's write meanwhile wins. */
async function upsert<T extends api.KubeObject>(resources: Resources, type: ResourceType, object: T, same: (live: T) => boolean): Promise<void> {
  const { name, namespace } = object.metadata;
  let live: T | undefined;
  try {
    live = asKind<T>(resources.get(type, namespace, name));
  } catch (e) {
    notFoundOk(e as Error);
  }
  const write = live
    ? same(live) ? undefined : resources.update(type, namespace, name, { ...live, ...object, metadata: { ...live.metadata, labels: object.metadata.labels } })
    : resources.create(type, namespace, object);
  await write?.catch((e: Error) => {
    // Another server sharing the storage wrote it first (AlreadyExists, Conflict, or the cluster
    // IP its create claimed): its write stands.
    if (live === undefined && resources.store.get(storageKey(type, namespace, name))) return;
    if ((e as { reason?: string }).reason !== 'Conflict') throw e;
  });
}
