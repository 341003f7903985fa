// What `bosun adm upgrade status` reports, computed as `oc adm upgrade status` computes it, from
// the ClusterVersion, ClusterOperators, MachineConfigPools, MachineConfigs and Nodes alone (so it
// reads any cluster that has them). Pure: objects and a clock in, the report's rows out.
//
// Control plane: the update in history[0] (target) from the last completed one; operators updated
// (versions[operator] = target), updating (Progressing=True, not updated) or waiting; assessment
// Progressing, Degraded (an operator is) or Completed (all updated). Nodes, per pool (master is the
// control plane's): a node's version is its current rendered config's release version;
//   Degraded     state Degraded/Unreconcilable (message: the daemon's reason)
//   Progressing  being updated: Draining (a drain asked and not yet answered), Rebooting, Updating
//   Completed    Updated: on the pool's target config, Done, at the target version
//   Excluded     Paused: its pool is paused
//   Unavailable  not Ready, not being updated
//   Outdated     Pending: waiting for its turn
// Pools: Completed, Degraded, Excluded, Progressing or Pending; "P% (u/t)"; "A Available,
// P Progressing, D Draining" (+ Excluded, Degraded when any). Health: operators degraded or
// unavailable, nodes degraded; else "Update is proceeding well".
import type { Obj } from '../kube/client.js';
import { isNodeReady } from '../kube/readiness.js';

const MCO = 'machineconfiguration.openshift.io';
const RELEASE_VERSION = `${MCO}/release-image-version`;

export type NodeAssessment = 'Degraded' | 'Progressing' | 'Completed' | 'Excluded' | 'Unavailable' | 'Outdated';
export interface NodeRow { name: string; assessment: NodeAssessment; phase: string; version: string; est: string; message: string }
export interface PoolRow { name: string; assessment: string; completion: string; status: string; nodes: NodeRow[] }
export interface OperatorRow { name: string; since: string; reason: string; message: string }
export interface Insight { since: string; level: 'Error' | 'Warning' | 'Info'; impact: string; message: string; resource: string; description: string }

export interface UpgradeStatus {
  updating: boolean;
  controlPlane?: {
    assessment: string; target: string; from?: string; updatingOperators: string[]; waitingOperators: string[];
    completion: string; duration: string; operatorHealth: string; operators: OperatorRow[];
  };
  masters?: PoolRow;
  workers: PoolRow[];
  health: Insight[];
}

const cond = (o: Obj | undefined, type: string): Obj | undefined => (o?.status?.conditions ?? []).find((c: Obj) => c.type === type);
const isTrue = (o: Obj | undefined, type: string) => cond(o, type)?.status === 'True';

/** oc's short durations: 45s, 3m51s, 54m, 1h7m. */
export function shortDuration(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 10) return `${m}m${s % 60}s`;
  if (m < 60) return `${m}m`;
  return `${Math.floor(m / 60)}h${m % 60}m`;
}

const ann = (n: Obj, key: string): string => n.metadata?.annotations?.[`${MCO}/${key}`] ?? '';

function nodeRow(node: Obj, pool: Obj, target: string, versionOf: (config: string) => string | undefined): NodeRow {
  const name = node.metadata.name;
  const current = ann(node, 'currentConfig');
  const desired = ann(node, 'desiredConfig');
  const state = ann(node, 'state');
  const version = versionOf(current) ?? '?';
  const ready = isNodeReady(node);
  const drainAsked = ann(node, 'desiredDrain');
  if (state === 'Degraded' || state === 'Unreconcilable') return { name, assessment: 'Degraded', phase: 'Updating', version, est: '?', message: ann(node, 'reason') };
  const updating = (desired !== '' && desired !== current) || state === 'Working' || state === 'Rebooting';
  if (updating) {
    const phase = drainAsked.startsWith('drain-') && ann(node, 'lastAppliedDrain') !== drainAsked ? 'Draining' : state === 'Rebooting' || !ready ? 'Rebooting' : 'Updating';
    return { name, assessment: 'Progressing', phase, version, est: '?', message: '' };
  }
  const poolTarget = pool.spec?.configuration?.name ?? '';
  if (current === poolTarget && state === 'Done' && version === target) return { name, assessment: 'Completed', phase: 'Updated', version, est: '-', message: '' };
  if (pool.spec?.paused) return { name, assessment: 'Excluded', phase: 'Paused', version, est: '', message: '' };
  if (!ready) return { name, assessment: 'Unavailable', phase: 'Pending', version, est: '?', message: 'Node is unavailable' };
  return { name, assessment: 'Outdated', phase: 'Pending', version, est: '?', message: '' };
}

function poolRow(pool: Obj, nodes: Obj[], target: string, versionOf: (config: string) => string | undefined): PoolRow {
  const pairs = nodes.map((n) => ({ n, r: nodeRow(n, pool, target, versionOf) })).sort((a, b) => (a.r.name < b.r.name ? -1 : 1));
  const rows = pairs.map((p) => p.r);
  const count = (a: NodeAssessment) => rows.filter((r) => r.assessment === a).length;
  const updated = count('Completed');
  const progressing = count('Progressing');
  const draining = rows.filter((r) => r.phase === 'Draining').length;
  // Available: Ready, schedulable and not taken down by the update.
  const available = pairs.filter(({ n, r }) => isNodeReady(n) && !n.spec?.unschedulable && r.assessment !== 'Progressing' && r.assessment !== 'Degraded').length;
  const degraded = count('Degraded');
  const excluded = count('Excluded');
  const assessment = pool.spec?.paused ? 'Excluded' : degraded ? 'Degraded' : rows.length > 0 && updated === rows.length ? 'Completed' : progressing || updated ? 'Progressing' : 'Pending';
  const pct = rows.length ? Math.floor((updated * 100) / rows.length) : 100;
  const status = [`${available} Available`, `${progressing} Progressing`, `${draining} Draining`, ...(excluded ? [`${excluded} Excluded`] : []), ...(degraded ? [`${degraded} Degraded`] : [])].join(', ');
  return { name: pool.metadata.name, assessment, completion: `${pct}% (${updated}/${rows.length})`, status, nodes: rows };
}

/** Which pool each node belongs to: master wins, then a custom pool, then worker (as the MCO decides). */
function membership(pools: Obj[], nodes: Obj[]): Map<string, Obj[]> {
  const out = new Map<string, Obj[]>(pools.map((p) => [p.metadata.name, []]));
  const matches = (p: Obj, n: Obj) => {
    const labels: Record<string, string> = p.spec?.nodeSelector?.matchLabels ?? {};
    return Object.keys(labels).length > 0 && Object.entries(labels).every(([k, v]) => n.metadata.labels?.[k] === v);
  };
  for (const n of nodes) {
    const matched = pools.filter((p) => matches(p, n)).map((p) => p.metadata.name as string);
    const pool = matched.includes('master') ? 'master' : matched.find((m) => m !== 'worker') ?? (matched.includes('worker') ? 'worker' : undefined);
    if (pool) out.get(pool)!.push(n);
  }
  return out;
}

export function assessUpgradeStatus(inp: { cv: Obj; operators: Obj[]; pools: Obj[]; machineConfigs: Obj[]; nodes: Obj[]; now: Date }): UpgradeStatus {
  const { cv, now } = inp;
  const history: Obj[] = cv.status?.history ?? [];
  const head = history[0];
  const updating = Boolean(head) && (head.state !== 'Completed' || isTrue(cv, 'Progressing'));
  if (!updating) return { updating: false, workers: [], health: [] };
  const target: string = head.version ?? cv.status?.desired?.version ?? '';
  const from: string | undefined = history.slice(1).find((h) => h.state === 'Completed')?.version;
  const started = Date.parse(head.startedTime ?? '') || now.getTime();
  const since = (t: string | undefined) => shortDuration(now.getTime() - (Date.parse(t ?? '') || now.getTime()));

  const ops = [...inp.operators].sort((a, b) => (a.metadata.name < b.metadata.name ? -1 : 1));
  const updatedOps = ops.filter((o) => (o.status?.versions ?? []).find((v: Obj) => v.name === 'operator')?.version === target);
  const updatingOps = ops.filter((o) => !updatedOps.includes(o) && isTrue(o, 'Progressing'));
  const degradedOps = ops.filter((o) => isTrue(o, 'Degraded'));
  const unavailableOps = ops.filter((o) => cond(o, 'Available')?.status === 'False');
  const waiting = ops.length - updatedOps.length - updatingOps.length;
  const fraction = ops.length ? updatedOps.length / ops.length : 1;
  const elapsed = now.getTime() - started;
  const estimate = fraction > 0 && fraction < 1 ? ` (Est. Time Remaining: ${shortDuration((elapsed * (1 - fraction)) / fraction)})` : '';
  const healthy = ops.length - new Set([...degradedOps, ...unavailableOps]).size;
  const operatorHealth = [`${healthy} Healthy`, ...(unavailableOps.length ? [`${unavailableOps.length} Unavailable`] : []), ...(degradedOps.length ? [`${degradedOps.length} Degraded`] : [])].join(', ');

  const versions = new Map<string, string | undefined>(inp.machineConfigs.map((m) => [m.metadata.name, m.metadata.annotations?.[RELEASE_VERSION]]));
  const members = membership(inp.pools, inp.nodes);
  const rows = inp.pools.map((p) => poolRow(p, members.get(p.metadata.name) ?? [], target, (c) => versions.get(c))).sort((a, b) => (a.name < b.name ? -1 : 1));
  const masters = rows.find((r) => r.name === 'master');
  const workers = rows.filter((r) => r.name !== 'master');

  const health: Insight[] = [];
  for (const o of degradedOps) {
    const c = cond(o, 'Degraded')!;
    health.push({ since: since(c.lastTransitionTime), level: 'Error', impact: 'Update Stalled', message: `Cluster Operator ${o.metadata.name} is degraded (${c.reason ?? ''})`, resource: `clusteroperators.config.openshift.io: ${o.metadata.name}`, description: c.message ?? '' });
  }
  for (const o of unavailableOps) {
    const c = cond(o, 'Available')!;
    health.push({ since: since(c.lastTransitionTime), level: 'Error', impact: 'API Availability', message: `Cluster Operator ${o.metadata.name} is unavailable (${c.reason ?? ''})`, resource: `clusteroperators.config.openshift.io: ${o.metadata.name}`, description: c.message ?? '' });
  }
  for (const r of rows) {
    for (const n of r.nodes.filter((x) => x.assessment === 'Degraded')) {
      health.push({ since: '-', level: 'Error', impact: 'Update Stalled', message: `Node ${n.name} is degraded`, resource: `nodes: ${n.name}`, description: n.message });
    }
  }
  if (health.length === 0) health.push({ since: shortDuration(elapsed), level: 'Info', impact: 'None', message: 'Update is proceeding well', resource: '', description: '' });

  return {
    updating: true,
    controlPlane: {
      assessment: degradedOps.length ? 'Degraded' : updatedOps.length === ops.length ? 'Completed' : 'Progressing',
      target, from,
      updatingOperators: updatingOps.map((o) => o.metadata.name),
      waitingOperators: ops.filter((o) => !updatedOps.includes(o) && !updatingOps.includes(o)).map((o) => o.metadata.name),
      completion: `${Math.floor(fraction * 100)}% (${updatedOps.length} operators updated, ${updatingOps.length} updating, ${waiting} waiting)`,
      duration: `${shortDuration(elapsed)}${estimate}`,
      operatorHealth,
      operators: updatingOps.map((o) => {
        const c = cond(o, 'Progressing')!;
        return { name: o.metadata.name, since: since(c.lastTransitionTime), reason: c.reason ?? '', message: c.message ?? '' };
      }),
    },
    masters,
    workers,
    health,
  };
}
