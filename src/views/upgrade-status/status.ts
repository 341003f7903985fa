// `bosun adm upgrade status` as `oc adm upgrade status` computes and writes it, from the objects
// alone (pure: the cluster's objects and a clock in, the text out): the Control Plane with its
// nodes, the worker pools with theirs, and Update Health. Alerts are not read (oc reads them from
// the cluster's Thanos querier, which a bosun cluster does not run).
import type * as api from '../../api/index.js';
import { BosunError } from '../../common/errors.js';
import { roundDuration, parseTime, SECOND } from './format.js';
import { assessControlPlane, findCondition, isMultiArchMigration, writeControlPlane, type ControlPlane } from './control-plane.js';
import { assessHealth, writeHealth, type Health, type Insight } from './health.js';
import { assessNodes, assessPool, nodesPerPool, writeNodes, writeWorkerPools, type PoolData } from './pools.js';

export type { ControlPlane, Health, Insight, PoolData };

export const DETAILS = ['none', 'all', 'nodes', 'health', 'operators'] as const;
export type Details = (typeof DETAILS)[number];

export class UpgradeStatusError extends BosunError {
  constructor(message: string) {
    super('UpgradeStatusFailed', message);
  }
}

export interface ClusterState {
  cv: api.ClusterVersion;
  operators: api.ClusterOperator[];
  pools: api.MachineConfigPool[];
  /** At least the rendered MachineConfigs the nodes' current and desired configs name. */
  machineConfigs: api.MachineConfig[];
  nodes: api.Node[];
  /** The image of the machine-config-operator Deployment's operator container ('' when unknown). */
  mcoImage: string;
}

/** The update as oc assesses it: not updating, or the control plane, each pool with its nodes, and
 *  the health insights — what the command writes and the console draws. */
export type UpdateAssessment =
  | { updating: false }
  | { updating: true; controlPlane: ControlPlane; master?: PoolData; workers: PoolData[]; health: Health };

/** The assessment at `now` (ms); throws UpgradeStatusError where oc refuses to assess. */
export function assessUpdate(s: ClusterState, now: number): UpdateAssessment {
  if (!s.operators.length) throw new UpgradeStatusError('no cluster operator information available - you must be connected to an OpenShift version 4 server');
  const progressing = findCondition(s.cv, 'Progressing');
  if (!progressing) throw new UpgradeStatusError('no current Progressing info, see `kubectl describe clusterversion` for more details.');

  const history = s.cv.status?.history ?? [];
  const releaseVersion = new Map<string, string>(s.machineConfigs.map((mc) => [mc.metadata.name, mc.metadata.annotations?.['machineconfiguration.openshift.io/release-image-version'] ?? '']));
  const versionOf = (config: string | undefined) => releaseVersion.get(config ?? '') ?? '';
  const multiArchInProgress = isMultiArchMigration(history) && progressing.status === 'True';
  const members = nodesPerPool(s.pools, s.nodes);

  const insights: Insight[] = [];
  const workers: PoolData[] = [];
  let master: PoolData | undefined;
  for (const pool of s.pools) {
    const nodes = assessNodes(pool, members.get(pool.metadata.name) ?? [], versionOf, history[0]?.version, multiArchInProgress, now);
    const assessed = assessPool(pool, nodes.rows);
    insights.push(...nodes.insights, ...assessed.insights);
    if (assessed.data.name === 'master') master = assessed.data;
    else workers.push(assessed.data);
  }

  const workersOutdated = workers.some((p) => p.overview.total > 0 && p.completion !== 100);
  if (progressing.status !== 'True' && !workersOutdated) return { updating: false };

  const startedAt = history.length ? parseTime(history[0].startedTime) : parseTime(progressing.lastTransitionTime);
  const updatingFor = roundDuration(now - startedAt, SECOND);

  const cp = assessControlPlane(s.cv, s.operators, s.mcoImage, now);
  insights.push(...cp.insights);
  return { updating: true, controlPlane: cp.data, master, workers, health: assessHealth(insights, updatingFor, now) };
}

/** The report, as oc writes it with `--details=<details>`, evaluated at `now` (ms). */
export function upgradeStatus(s: ClusterState, details: Details, now: number): string {
  const shows = (what: Details) => details === 'all' || details === what;
  const a = assessUpdate(s, now);
  if (!a.updating) return 'The cluster is not updating.\n';
  let out = writeControlPlane(a.controlPlane, shows('operators'), now);
  if (a.master) out += writeNodes(a.master, shows('nodes'));
  if (a.workers.some((p) => p.nodes.length)) {
    out += `\n= Worker Upgrade =\n${writeWorkerPools(a.workers)}`;
    for (const p of a.workers) out += writeNodes(p, shows('nodes'));
  }
  return `${out}\n${writeHealth(a.health, a.health.detailed && shows('health'))}`;
}
