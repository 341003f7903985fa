// How the cluster learns where its console is, as OpenShift's console operator publishes it: once
// the console's Service (type LoadBalancer) has an address, its URL goes into ConfigMap
// openshift-config-managed/console-public (key consoleURL) and ClusterOperator `console` is
// Available, saying the URL, with this release's version (what the CVO waits for). Until then the
// operator is Available=False, reason NoLoadBalancer, saying what it waits on. A leader runnable:
// one replica writes.
import type * as api from '../api/index.js';
import { applyObject } from '../kube/apply.js';
import { Controller } from '../kube/controller.js';
import type { Manager } from '../kube/manager.js';
import { ClusterOperatorStatus, releaseVersion } from '../kube/operator-status.js';
import { resources } from '../kube/resources.js';

export const CLUSTER_OPERATOR = 'console';
export const PUBLIC_CONFIGMAP = { namespace: 'openshift-config-managed', name: 'console-public', key: 'consoleURL' };

/** The console's URL from its Service: the load balancer's first address and the `https` port. */
export function consoleURL(service: api.Service | undefined): string | undefined {
  const ingress = service?.status?.loadBalancer?.ingress?.[0];
  const host = ingress?.ip || ingress?.hostname;
  const port = service?.spec?.ports?.find((p) => p.name === 'https')?.port ?? service?.spec?.ports?.[0]?.port;
  if (!host || !port) return undefined;
  return `https://${host}${port === 443 ? '' : `:${port}`}`;
}

export function publishController(manager: Manager, o: { service: { namespace: string; name: string }; version?: string }): Controller {
  const services = manager.informers.forResource(resources.services, { namespace: o.service.namespace, fieldSelector: `metadata.name=${o.service.name}` });
  const operators = manager.informers.forResource(resources.clusterOperators, { fieldSelector: `metadata.name=${CLUSTER_OPERATOR}` });
  const status = new ClusterOperatorStatus({
    client: manager.client, name: CLUSTER_OPERATOR, clock: manager.clock, informer: operators,
    relatedObjects: [
      { group: '', resource: 'namespaces', name: o.service.namespace },
      { group: '', resource: 'configmaps', name: PUBLIC_CONFIGMAP.name, namespace: PUBLIC_CONFIGMAP.namespace },
    ],
  });
  const version = releaseVersion({ version: o.version });
  const controller = new Controller({
    name: 'console-publish',
    clock: manager.clock,
    resyncPeriodMs: 60_000,
    keys: [CLUSTER_OPERATOR],
    sync: async () => {
      const url = consoleURL(services.get(o.service.name, o.service.namespace));
      if (url) {
        await applyObject<api.ConfigMap>(manager.client, {
          apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: PUBLIC_CONFIGMAP.name, namespace: PUBLIC_CONFIGMAP.namespace }, data: { [PUBLIC_CONFIGMAP.key]: url },
        }, resources.configMaps);
      }
      const conditions = status.conditions([
        url
          ? { type: 'Available', status: 'True', reason: 'AsExpected', message: `the console is served at ${url}` }
          : { type: 'Available', status: 'False', reason: 'NoLoadBalancer', message: `waiting for the load balancer of Service ${o.service.namespace}/${o.service.name} to have an address` },
        { type: 'Progressing', status: 'False', reason: 'AsExpected', message: '' },
        { type: 'Degraded', status: 'False', reason: 'AsExpected', message: '' },
        { type: 'Upgradeable', status: 'True', reason: 'AsExpected', message: '' },
      ]);
      await status.write({ conditions, versions: status.versions(Boolean(url), version()) }, { from: 'console-publish' });
    },
  });
  status.onFailureChange(() => controller.enqueue(CLUSTER_OPERATOR));
  controller.watch(services, () => CLUSTER_OPERATOR);
  controller.watch(operators, () => CLUSTER_OPERATOR);
  return controller;
}
