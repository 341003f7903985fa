// The landing page: the cluster's version, channel, platform and API address; its operators,
// pools and nodes at a glance (live); alerts and the API request rate from Prometheus.
import type * as api from '../../../api/index.js';
import { useList, useObject } from '../store.js';
import { kinds, listPath } from '../resources.js';
import { ApiProblem, Page, StatusBadge, conditionOf, show } from '../ui.js';
import { FiringAlerts, RangeChart } from '../charts.js';
import { PoolsTable } from './pools.js';
import { isReady } from './nodes.js';
import { operatorVersion } from './operators.js';

export function Overview() {
  const cv = useObject<api.ClusterVersion>(listPath(kinds.clusterVersions), 'version');
  const infra = useObject<api.Infrastructure>(listPath(kinds.infrastructures), 'cluster');
  const operators = useList<api.ClusterOperator>(listPath(kinds.clusterOperators));
  const pools = useList<api.MachineConfigPool>(listPath(kinds.machineConfigPools));
  const nodes = useList<api.Node>(listPath(kinds.nodes));
  const version = cv.object?.status?.desired?.version ?? cv.object?.status?.history?.[0]?.version;
  const platform = infra.object?.status?.platformStatus?.type ?? infra.object?.status?.platform;
  // An External platform's name (bosun's `local`) is in the spec, as the installer writes it.
  const platformName = (infra.object?.spec?.platformSpec as { external?: { platformName?: string } } | undefined)?.external?.platformName;
  const updating = conditionOf(cv.object, 'Progressing')?.status === 'True';
  return (
    <Page title="Overview">
      <div class="cards">
        <article class="card" aria-labelledby="cluster-details">
          <h2 id="cluster-details">Cluster</h2>
          {cv.error && <ApiProblem error={cv.error} kind={kinds.clusterVersions} what="the cluster version" />}
          {infra.error && <ApiProblem error={infra.error} kind={kinds.infrastructures} what="the infrastructure" />}
          <dl class="facts">
            <dt>Version</dt><dd data-testid="version">{show(version)}{updating && <> <span class="badge badge-unknown">updating</span></>}</dd>
            <dt>Channel</dt><dd data-testid="channel">{show(cv.object?.spec?.channel)}</dd>
            <dt>Platform</dt><dd>{show(platform)}{platformName ? ` (${platformName})` : ''}</dd>
            <dt>API server</dt><dd data-testid="api-url">{show(infra.object?.status?.apiServerURL)}</dd>
            <dt>Cluster ID</dt><dd>{show(cv.object?.spec?.clusterID)}</dd>
          </dl>
          <p><a href="#/settings">Cluster Settings: channel and updates</a></p>
        </article>
        <article class="card" aria-labelledby="nodes-heading">
          <h2 id="nodes-heading">Nodes</h2>
          {nodes.error ? <ApiProblem error={nodes.error} kind={kinds.nodes} /> : (
            <p class="big" data-testid="nodes-ready">{nodes.items.filter(isReady).length} of {nodes.items.length} Ready</p>
          )}
          <p><a href="#/nodes">All nodes</a></p>
        </article>
        <FiringAlerts />
        <RangeChart title="API requests per second" query="sum(rate(apiserver_request_total[5m]))" unit="requests/s" />
      </div>
      <h2>Cluster Operators</h2>
      {operators.error ? <ApiProblem error={operators.error} kind={kinds.clusterOperators} /> : (
        <ul class="operators" aria-label="Cluster operators">
          {operators.items.map((o) => {
            const degraded = conditionOf(o, 'Degraded')?.status === 'True';
            const available = conditionOf(o, 'Available');
            return (
              <li key={o.metadata.name}>
                <StatusBadge condition={available} label={degraded ? 'Degraded' : available?.status === 'True' ? 'Available' : 'Unavailable'} good={degraded ? 'never' : 'True'} /> {o.metadata.name} <span class="muted">{operatorVersion(o)}</span>
              </li>
            );
          })}
        </ul>
      )}
      <h2>MachineConfigPools</h2>
      {pools.error ? <ApiProblem error={pools.error} kind={kinds.machineConfigPools} /> : <PoolsTable pools={pools.items} caption="Machine counts per pool, live" />}
    </Page>
  );
}
