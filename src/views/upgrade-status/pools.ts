// The pools and their nodes, assessed as oc assesses them from the MachineConfigPools, the Nodes'
// machine-config annotations and conditions, and the release version each rendered MachineConfig
// was made for (its release-image-version annotation).
//
// A node is Updated when its current config is of the update's version; Updating when not, its
// desired config is of that version and is the pool's, and it is not there yet (Draining while a
// drain is asked and not yet applied, Rebooting, Updating); otherwise Paused in a paused pool, or
// Pending. Unavailable (not Ready, disk pressure, network unavailable, cordoned, or the daemon still
// at work) unless it is updating; Degraded when the daemon says Degraded or Unreconcilable.
// Nodes sort by assessment, phase and name. A pool is Completed, Pending (no node started),
// Degraded, Excluded (paused with nodes left) or Progressing.
import type * as api from '../../api/index.js';
import { storedSelectorMatches, type MetaLabelSelector } from '../../common/label-selectors.js';
import { fixed0, parseTime, tabwrite, MINUTE, ZERO_TIME } from './format.js';
import { kinds, type Insight } from './health.js';

const MCO = 'machineconfiguration.openshift.io';
const MCO_DOC = 'https://docs.openshift.com/container-platform/latest/post_installation_configuration/machine-configuration-tasks.html#understanding-the-machine-config-operator';
const PAUSED_DOC = 'https://docs.openshift.com/container-platform/latest/support/troubleshooting/troubleshooting-operator-issues.html#troubleshooting-disabling-autoreboot-mco_troubleshooting-operator-issues';

const ASSESSMENTS = ['Degraded', 'Unavailable', 'Progressing', 'Excluded', 'Outdated', 'Completed'] as const;
const PHASES = ['Draining', 'Updating', 'Rebooting', 'Paused', 'Pending', 'Updated'] as const;
type NodeAssessment = (typeof ASSESSMENTS)[number];
type Phase = (typeof PHASES)[number];

export interface NodeRow {
  name: string; assessment: NodeAssessment; phase: Phase; version: string; estimate: string; message: string;
  unavailable: boolean; degraded: boolean; updating: boolean; updated: boolean;
}

export interface PoolData {
  name: string;
  assessment: 'Completed' | 'Pending' | 'Degraded' | 'Excluded' | 'Progressing';
  completion: number;
  overview: { total: number; available: number; progressing: number; outdated: number; draining: number; excluded: number; degraded: number };
  nodes: NodeRow[];
}

const annotation = (o: api.KubeObject, key: string): string | undefined => o.metadata?.annotations?.[`${MCO}/${key}`];

interface Unavailability { reason: string; message: string; since: number }
const NOT_READY = 'Not ready';
const DISK_PRESSURE = 'Disk pressure';
const NETWORK_UNAVAILABLE = 'Network unavailable';
const UNSCHEDULABLE = 'Node is marked unschedulable';
const DAEMON_AT_WORK = 'Machine Config Daemon is processing the node';

/** Whether the node's desired image is the layered pool's (noted in `found` when not), or absent for a pool that is not layered. */
function desiredImageMatchesPool(node: api.Node, pool: api.MachineConfigPool, found: Unavailability[]): boolean {
  const image: string | undefined = pool.metadata?.annotations?.[`${MCO}/newestImageEquivalentConfig`];
  const value = annotation(node, 'desiredImage');
  if (Object.hasOwn(pool.metadata?.labels ?? {}, `${MCO}/layering-enabled`) && image) {
    if (image === value) return true;
    found.push({ reason: `Node has an unexpected annotation ${MCO}/newestImageEquivalentConfig=${image}`, message: '', since: ZERO_TIME });
    return false;
  }
  return !value;
}

/** The MCO's view: done when current = desired config (and image) and the daemon says Done. */
function isDone(node: api.Node): boolean {
  const current = annotation(node, 'currentConfig');
  const desired = annotation(node, 'desiredConfig');
  if (!current || !desired || current !== desired) return false;
  const [di, ci] = [annotation(node, 'desiredImage'), annotation(node, 'currentImage')];
  if (di !== undefined || ci !== undefined) {
    if (!di || !ci || di !== ci) return false;
  }
  return annotation(node, 'state') === 'Done';
}

/** Why the MCO counts the node unavailable (none: available). */
function unavailability(node: api.Node, pool: api.MachineConfigPool): { unavailable: boolean; why: Unavailability[] } {
  const why: Unavailability[] = [];
  for (const c of node.status?.conditions ?? []) {
    const bad = { message: c.message ?? '', since: parseTime(c.lastTransitionTime) };
    if (c.type === 'Ready' && c.status !== 'True') why.push({ reason: NOT_READY, ...bad });
    if (c.type === 'DiskPressure' && c.status !== 'False') why.push({ reason: DISK_PRESSURE, ...bad });
    if (c.type === 'NetworkUnavailable' && c.status !== 'False') why.push({ reason: NETWORK_UNAVAILABLE, ...bad });
  }
  if (node.spec?.unschedulable) why.push({ reason: UNSCHEDULABLE, message: '', since: ZERO_TIME });
  let unavailable: boolean;
  if (why.length) unavailable = true;
  else if (isDone(node)) unavailable = false;
  else if (['Degraded', 'Unreconcilable'].includes(annotation(node, 'state') ?? '')) unavailable = false;
  else {
    why.push({ reason: DAEMON_AT_WORK, message: '', since: ZERO_TIME });
    unavailable = true;
  }
  return { unavailable: unavailable && desiredImageMatchesPool(node, pool, why), why };
}

function seriouslyUnavailable(why: Unavailability[], now: number): boolean {
  return why.some((c) => {
    if (c.reason === UNSCHEDULABLE || c.reason === DAEMON_AT_WORK) return false;
    if (c.reason === NOT_READY && now - c.since < 5 * MINUTE) return false;
    if ((c.reason === DISK_PRESSURE || c.reason === NETWORK_UNAVAILABLE) && now - c.since < MINUTE) return false;
    return true;
  });
}

const CONDITION_OF: Record<string, [string, string]> = { [NOT_READY]: ['Ready', 'True'], [DISK_PRESSURE]: ['DiskPressure', 'False'], [NETWORK_UNAVAILABLE]: ['NetworkUnavailable', 'False'] };
const unavailableSummary = (node: string, why: Unavailability[]) => why.map((c) => (c.reason === NOT_READY ? `Node ${node} is not ready` : c.reason === DISK_PRESSURE ? `Node ${node} has disk pressure` : c.reason === NETWORK_UNAVAILABLE ? `Node ${node} has unavailable network` : c.reason)).join(' | ');
const unavailableDescription = (why: Unavailability[]) => why.map((c) => {
  const cond = CONDITION_OF[c.reason];
  return cond ? `Node has a ${cond[0]}!=${cond[1]} condition with Reason ${JSON.stringify(c.reason)} and message ${JSON.stringify(c.message)}` : c.reason;
}).join(' | ');
const unavailableSince = (why: Unavailability[]) => why.reduce((min, c) => (c.since !== ZERO_TIME && (min === ZERO_TIME || c.since < min) ? c.since : min), ZERO_TIME);

function isDraining(node: api.Node, updating: boolean): boolean {
  const desired = annotation(node, 'desiredDrain');
  const applied = annotation(node, 'lastAppliedDrain');
  if (!desired || !applied) return false;
  if (desired !== applied && desired.split('-')[0] === 'drain') return true;
  // Told to update, but the daemon has not yet gone from Done to Working and started draining.
  return updating && annotation(node, 'state') === 'Done';
}

function phaseOf(pool: api.MachineConfigPool, node: api.Node, updating: boolean, updated: boolean): Phase {
  if (updating && isDraining(node, updating)) return 'Draining';
  if (updating) return ({ Rebooting: 'Rebooting', Done: 'Updated' } as Record<string, Phase>)[annotation(node, 'state') ?? ''] ?? 'Updating';
  if (updated) return 'Updated';
  return pool.spec?.paused ? 'Paused' : 'Pending';
}

const ASSESSMENT_OF: Record<Phase, [NodeAssessment, string]> = {
  Paused: ['Excluded', '-'], Pending: ['Outdated', '?'], Draining: ['Progressing', '+10m'], Updating: ['Progressing', '+5m'], Rebooting: ['Progressing', '+5m'], Updated: ['Completed', '-'],
};

/** `updateVersion`: the version of the ClusterVersion's latest history entry. */
export function assessNodes(pool: api.MachineConfigPool, nodes: readonly api.Node[], versionOf: (config: string | undefined) => string, updateVersion: string | undefined, multiArchInProgress: boolean, now: number): { rows: NodeRow[]; insights: Insight[] } {
  const insights: Insight[] = [];
  const poolConfig: string | undefined = pool.spec?.configuration?.name;
  const scope = (name: string) => [{ kind: kinds.node, name }];
  const rows = nodes.map((node): NodeRow => {
    const name: string = node.metadata.name;
    const current = annotation(node, 'currentConfig');
    const desired = annotation(node, 'desiredConfig');
    const currentVersion = versionOf(current);
    const desiredVersion = versionOf(desired);
    const { unavailable, why } = unavailability(node, pool);
    const state = annotation(node, 'state');
    const degraded = Boolean(desired) && (state === 'Degraded' || state === 'Unreconcilable');
    const matched = (current ?? '') === (desired ?? '');
    const desiredIsPool = (desired ?? '') === (poolConfig ?? '');
    const updated = currentVersion !== '' && currentVersion === updateVersion && (!multiArchInProgress || desired === undefined || (matched && desiredIsPool));
    const updating = !updated && currentVersion !== '' && desiredVersion !== '' && desiredVersion === updateVersion && !matched && desiredIsPool;
    const phase = phaseOf(pool, node, updating, updated);
    let [assessment, estimate] = ASSESSMENT_OF[phase];
    let message = '';
    let summary = '';
    let description = '';
    if (unavailable && !updating) {
      assessment = 'Unavailable';
      message = why.map((c) => c.reason).join(' | ');
      summary = unavailableSummary(name, why);
      description = unavailableDescription(why);
      estimate = updated ? '-' : '?';
    }
    if (degraded) {
      assessment = 'Degraded';
      message = annotation(node, 'reason') ?? '';
      description = message;
      estimate = updated ? '-' : '?';
    }
    if (seriouslyUnavailable(why, now) && !updating) {
      insights.push({ startedAt: unavailableSince(why), level: 'Warning', impact: 'Update Speed', summary, description, reference: MCO_DOC, resources: scope(name) });
    }
    if (degraded) insights.push({ startedAt: ZERO_TIME, level: 'Error', impact: 'Update Stalled', summary: `Node ${name} is degraded`, description, reference: MCO_DOC, resources: scope(name) });
    return {
      name, assessment, phase, version: currentVersion, estimate, message: name.length < 8 ? message : message.replaceAll(name, '<node>'),
      unavailable, degraded, updating, updated,
    };
  });
  rows.sort((a, b) => ASSESSMENTS.indexOf(a.assessment) - ASSESSMENTS.indexOf(b.assessment) || PHASES.indexOf(a.phase) - PHASES.indexOf(b.phase) || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return { rows, insights };
}

export function assessPool(pool: api.MachineConfigPool, nodes: NodeRow[]): { data: PoolData; insights: Insight[] } {
  const o: PoolData['overview'] = { total: nodes.length, available: 0, progressing: 0, outdated: 0, draining: 0, excluded: 0, degraded: 0 };
  let updated = 0;
  let pending = 0;
  for (const n of nodes) {
    if (!n.unavailable) o.available++;
    if (n.degraded) o.degraded++;
    if (n.phase === 'Updated') updated++;
    else o.outdated++;
    if (n.phase === 'Paused') o.excluded++;
    if (n.phase === 'Pending') pending++;
    if (n.phase === 'Draining') o.draining++;
    if (['Draining', 'Updating', 'Rebooting'].includes(n.phase) && !n.degraded) o.progressing++;
  }
  const assessment: PoolData['assessment'] = updated === nodes.length ? 'Completed' : pending === nodes.length ? 'Pending' : o.degraded ? 'Degraded' : o.excluded ? 'Excluded' : 'Progressing';
  const insights: Insight[] = [];
  if (o.excluded > 0 && pool.spec?.paused) {
    insights.push({
      startedAt: ZERO_TIME, level: 'Warning', impact: 'Update Stalled', resources: [{ kind: kinds.pool, name: pool.metadata.name }], reference: PAUSED_DOC,
      summary: `Outdated nodes in a paused pool '${pool.metadata.name}' will not be updated`,
      description: 'Pool is paused, which stops all changes to the nodes in the pool, including updates. The nodes will not be updated until the pool is unpaused by the administrator.',
    });
  }
  return { data: { name: pool.metadata.name, assessment, completion: (updated / nodes.length) * 100, overview: o, nodes }, insights };
}

/** The pool a node belongs to, as the MCO decides: master, else a custom pool, else worker. */
export function nodesPerPool(pools: readonly api.MachineConfigPool[], nodes: readonly api.Node[]): Map<string, api.Node[]> {
  const out = new Map<string, api.Node[]>();
  const selects = (name: string, node: api.Node) => {
    const pool = pools.find((p) => p.metadata.name === name);
    return Boolean(pool) && storedSelectorMatches((pool!.spec?.nodeSelector ?? undefined) as MetaLabelSelector | undefined, node.metadata.labels ?? {});
  };
  const custom = pools.map((p) => p.metadata.name).filter((n) => n !== 'master' && n !== 'worker');
  for (const node of nodes) {
    const name = selects('master', node) ? 'master' : custom.find((c) => selects(c, node)) ?? (selects('worker', node) ? 'worker' : '');
    out.set(name, [...(out.get(name) ?? []), node]);
  }
  return out;
}

export function writeWorkerPools(pools: PoolData[]): string {
  const rows = pools.map((p) => {
    const o = p.overview;
    if (!p.nodes.length) return `${p.name}\tEmpty\t\t${o.total} Total\n`;
    const extra = [['Excluded', o.excluded], ['Degraded', o.degraded]].filter(([, n]) => n).map(([k, n]) => `, ${n} ${k}`).join('');
    return `${p.name}\t${p.assessment}\t${fixed0(p.completion)}% (${o.total - o.outdated}/${o.total})\t${o.available} Available, ${o.progressing} Progressing, ${o.draining} Draining${extra}\n`;
  });
  return tabwrite(`\nWORKER POOL\tASSESSMENT\tCOMPLETION\tSTATUS\n${rows.join('')}`);
}

/** A pool's nodes: without `detailed`, past the tenth only those in trouble, the rest summed up. */
export function writeNodes(p: PoolData, detailed: boolean): string {
  if (!p.nodes.length) return '';
  let out: string;
  if (p.name === 'master') {
    if (p.completion === 100) return `\nAll control plane nodes successfully updated to ${p.nodes[0].version}\n`;
    out = '\nControl Plane Nodes';
  } else {
    out = `\nWorker Pool Nodes: ${p.name}`;
  }
  const omitted = { total: 0, completed: 0, available: 0, progressing: 0, outdated: 0, draining: 0, excluded: 0 };
  let table = '\nNAME\tASSESSMENT\tPHASE\tVERSION\tEST\tMESSAGE\n';
  p.nodes.forEach((n, i) => {
    if (!detailed && i >= 10 && !n.degraded && (!n.unavailable || n.updating)) {
      omitted.total++;
      if (n.updated) omitted.completed++;
      else omitted.outdated++;
      if (!n.unavailable) omitted.available++;
      if (n.phase === 'Draining') omitted.draining++;
      if (n.phase === 'Paused') omitted.excluded++;
      if (n.assessment === 'Progressing') omitted.progressing++;
      return;
    }
    table += `${n.name}\t${n.assessment}\t${n.phase}\t${n.version || '?'}\t${n.estimate}\t${n.message}\n`;
  });
  out += tabwrite(table);
  if (omitted.total) {
    const m = omitted;
    out += `...\nOmitted additional ${m.total} Total, ${m.completed} Completed, ${m.available} Available, ${m.progressing} Progressing, ${m.outdated} Outdated, ${m.draining} Draining, ${m.excluded} Excluded, and 0 Degraded nodes.\nPass along --details=nodes to see all information.\n`;
  }
  return out;
}
