// The cluster-configuration metrics that conditional-update risk rules and Telemetry read, named,
// labelled and valued as OpenShift's kube-apiserver operator exports them
// (pkg/operator/configmetrics). bosun has no kube-apiserver operator, so the CVO exports them
// beside its own, from Infrastructure/cluster, FeatureGate/cluster and Proxy/cluster:
//   cluster_infrastructure_provider{type,region,external}  status.platformStatus.type; 0 for
//       None, else 1; external = spec.platformSpec.external.platformName on External (bosun's
//       Infrastructure carries no region, so region is "")
//   cluster_controlplane_topology{mode}, cluster_infrastructure_topology{mode}  1
//   cluster_feature_set{name}     spec.featureSet ("" is Default): 1 for Default, else 0
//   cluster_proxy_enabled{type}   http, https, trusted_ca: 1 when set in spec, else 0
// Each object absent (or not yet cached) leaves its metrics out.
import { Gauge, Registry } from 'prom-client';

import type * as api from '../api/index.js';

export interface ClusterConfigSource {
  infrastructure(): api.Infrastructure | undefined;
  featureGate(): api.FeatureGate | undefined;
  proxy(): api.Proxy | undefined;
}

/** Registers the metrics in `registry` (a new one by default) and returns it. */
export function createClusterConfigMetrics(source: ClusterConfigSource, registry = new Registry()): Registry {
  new Gauge({
    name: 'cluster_infrastructure_provider',
    help: 'Reports whether the cluster is configured with an infrastructure provider. type is unset if no cloud provider is recognized or set to the constant used by the Infrastructure config. region is set when the cluster clearly identifies a region within the provider. external is the external platform name when present. The value is 1 if a cloud provider is set or 0 if it is unset.',
    labelNames: ['type', 'region', 'external'],
    registers: [registry],
    collect() {
      this.reset();
      const infra = source.infrastructure();
      const type = infra?.status?.platformStatus?.type;
      if (type === undefined) return;
      const external = type === 'External' ? (infra?.spec?.platformSpec?.external?.platformName ?? '') : '';
      this.set({ type, region: '', external }, type === 'None' ? 0 : 1);
    },
  });
  for (const [name, help, field] of [
    ['cluster_controlplane_topology', 'Reports the clusters expectations for operands that normally run on control plane nodes', 'controlPlaneTopology'],
    ['cluster_infrastructure_topology', 'Reports the clusters expectations for infrastructure operands that normally do not run on control plane nodes', 'infrastructureTopology'],
  ] as const) {
    new Gauge({
      name,
      help,
      labelNames: ['mode'],
      registers: [registry],
      collect() {
        this.reset();
        const infra = source.infrastructure();
        if (infra) this.set({ mode: infra.status?.[field] ?? '' }, 1);
      },
    });
  }
  new Gauge({
    name: 'cluster_feature_set',
    help: 'Reports the feature set the cluster is configured to expose. name corresponds to the featureSet field of the cluster. The value is 1 if a cloud provider is supported.',
    labelNames: ['name'],
    registers: [registry],
    collect() {
      this.reset();
      const fg = source.featureGate();
      if (!fg) return;
      const name = fg.spec?.featureSet ?? '';
      this.set({ name }, name === '' ? 1 : 0);
    },
  });
  new Gauge({
    name: 'cluster_proxy_enabled',
    help: 'Reports whether the cluster has been configured to use a proxy. type is which type of proxy configuration has been set - http for an http proxy, https for an https proxy, and trusted_ca if a custom CA was specified.',
    labelNames: ['type'],
    registers: [registry],
    collect() {
      this.reset();
      const proxy = source.proxy();
      if (!proxy) return;
      this.set({ type: 'http' }, proxy.spec?.httpProxy ? 1 : 0);
      this.set({ type: 'https' }, proxy.spec?.httpsProxy ? 1 : 0);
      this.set({ type: 'trusted_ca' }, proxy.spec?.trustedCA?.name ? 1 : 0);
    },
  });
  return registry;
}
