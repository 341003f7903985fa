// The tree `bosun cluster describe` prints (and the console draws), as `clusterctl describe cluster` prints it (v1beta2):
// the Cluster, its infrastructure cluster, its control plane with its Machines, and its workers
// (MachineDeployments with their Machines, then MachineSets and Machines of no deployment), in the
// columns NAME, REPLICAS, AVAILABLE, READY, UP TO DATE, STATUS, REASON, SINCE, MESSAGE. Machines
// of one group in the same state collapse into one line ("3 Machines...", "See a, b, c") unless
// grouping is off. A row whose condition is not True shows its message, so a cluster that is still
// coming says on every row what that part waits on. Pure: the objects in, the text out.
import type * as api from '../api/index.js';
import { shortDuration } from './upgrade-status/format.js';

type Condition = { type: string; status: string; reason?: string; message?: string; lastTransitionTime?: string };
/** Any object of the tree: its name and kind, what counts it has, its conditions. */
export type TreeObject = api.KubeObject & {
  spec?: { replicas?: number; clusterName?: string; version?: string };
  status?: { replicas?: number; readyReplicas?: number; availableReplicas?: number; upToDateReplicas?: number; conditions?: Condition[]; phase?: string };
};

export interface ClusterTreeInput {
  cluster: api.Cluster;
  infrastructure?: TreeObject;
  controlPlane?: TreeObject;
  machineDeployments: api.MachineDeployment[];
  machineSets: api.MachineSet[];
  machines: api.Machine[];
  now: number;
  grouping?: boolean;
}

interface Row {
  prefix: string;
  name: string;
  replicas: string;
  available: string;
  ready: string;
  upToDate: string;
  status: string;
  reason: string;
  since: string;
  message: string[];
}

const HEADERS = ['NAME', 'REPLICAS', 'AVAILABLE', 'READY', 'UP TO DATE', 'STATUS', 'REASON', 'SINCE', 'MESSAGE'];

const find = (o: { status?: { conditions?: readonly Condition[] } } | undefined, type: string): Condition | undefined => o?.status?.conditions?.find((c) => c.type === type);
const isTrue = (o: { status?: { conditions?: readonly Condition[] } }, type: string) => find(o, type)?.status === 'True';

function since(c: Condition | undefined, now: number): string {
  const t = c?.lastTransitionTime ? Date.parse(c.lastTransitionTime) : NaN;
  return Number.isNaN(t) ? '' : shortDuration(Math.max(0, Math.floor((now - t) / 1000) * 1000));
}

/** The message of a condition that is not True, else of the first False condition it rests on. */
type WithConditions = { status?: { conditions?: readonly Condition[] } };

function messageOf(o: WithConditions, shown: Condition | undefined): string[] {
  if (shown && shown.status !== 'True' && shown.message) return shown.message.split('\n').filter(Boolean);
  if (shown?.status === 'True') return [];
  const waiting = (o.status?.conditions ?? []).find((c) => c.status === 'False' && c.message);
  return waiting ? [`${waiting.type}: ${waiting.message}`] : [];
}

function conditionRow(prefix: string, name: string, o: WithConditions, type: string, now: number, counts: Pick<Row, 'replicas' | 'available' | 'ready' | 'upToDate'>, label = true): Row {
  const c = find(o, type);
  return {
    prefix, name, ...counts,
    status: c ? (label ? `${type}: ${c.status}` : c.status) : '',
    reason: c?.reason ?? '',
    since: since(c, now),
    message: messageOf(o, c),
  };
}

const replicaCounts = (o: TreeObject | api.MachineDeployment | api.MachineSet) => ({
  replicas: `${o.status?.replicas ?? 0}/${o.spec?.replicas ?? 0}`,
  available: String(o.status?.availableReplicas ?? 0),
  ready: String(o.status?.readyReplicas ?? 0),
  upToDate: String(o.status?.upToDateReplicas ?? 0),
});

const machineCounts = (m: api.Machine) => ({
  replicas: '1',
  available: isTrue(m, 'Available') ? '1' : '0',
  ready: isTrue(m, 'Ready') ? '1' : '0',
  upToDate: find(m, 'UpToDate')?.status === 'False' ? '0' : '1',
});

/** Machine rows under a parent: one per Machine, or one per group of Machines in the same state. */
function machineRows(childPrefix: string, machines: api.Machine[], now: number, grouping: boolean, last: boolean): Row[] {
  const sorted = [...machines].sort((a, b) => a.metadata.name.localeCompare(b.metadata.name));
  const rows: Row[] = [];
  const groups = new Map<string, api.Machine[]>();
  for (const m of sorted) {
    const ready = find(m, 'Ready');
    const key = grouping ? JSON.stringify([ready?.status, ready?.reason, machineCounts(m), m.metadata.deletionTimestamp ? 'deleting' : '']) : m.metadata.name;
    groups.set(key, [...(groups.get(key) ?? []), m]);
  }
  const entries = [...groups.values()];
  entries.forEach((group, i) => {
    const branch = i === entries.length - 1 && last ? '└─' : '├─';
    const first = group[0];
    if (group.length === 1 || !grouping) {
      rows.push(conditionRow(childPrefix + branch, `Machine/${first.metadata.name}`, first, 'Ready', now, machineCounts(first)));
      return;
    }
    const counts = group.map(machineCounts);
    const sum = (k: keyof ReturnType<typeof machineCounts>) => String(counts.reduce((n, c) => n + Number(c[k]), 0));
    const row = conditionRow(childPrefix + branch, `${group.length} Machines...`, first, 'Ready', now, { replicas: sum('replicas'), available: sum('available'), ready: sum('ready'), upToDate: sum('upToDate') });
    row.message = [`See ${group.map((m) => m.metadata.name).join(', ')}`, ...row.message];
    rows.push(row);
  });
  return rows;
}

export function clusterTreeRows(input: ClusterTreeInput): Row[] {
  const { cluster, infrastructure, controlPlane, now } = input;
  const grouping = input.grouping ?? true;
  const cp = cluster.status?.controlPlane;
  const w = cluster.status?.workers;
  const rows: Row[] = [];
  rows.push(conditionRow('', `Cluster/${cluster.metadata.name}`, cluster, 'Available', now, {
    replicas: `${(cp?.replicas ?? 0) + (w?.replicas ?? 0)}/${(cp?.desiredReplicas ?? 0) + (w?.desiredReplicas ?? 0)}`,
    available: String((cp?.availableReplicas ?? 0) + (w?.availableReplicas ?? 0)),
    ready: String((cp?.readyReplicas ?? 0) + (w?.readyReplicas ?? 0)),
    upToDate: String((cp?.upToDateReplicas ?? 0) + (w?.upToDateReplicas ?? 0)),
  }));

  const ownedBy = (m: api.Machine, o: api.KubeObject | undefined) => Boolean(o?.metadata.uid && (m.metadata.ownerReferences ?? []).some((r) => r.uid === o.metadata.uid));
  const cpMachines = input.machines.filter((m) => ownedBy(m, controlPlane) || (!controlPlane && m.metadata.labels?.['cluster.x-k8s.io/control-plane'] !== undefined));
  const deployments = [...input.machineDeployments].sort((a, b) => a.metadata.name.localeCompare(b.metadata.name));
  const setsOf = (d: api.MachineDeployment) => input.machineSets.filter((s) => ownedBy(s as unknown as api.Machine, d));
  const inDeployment = new Set(deployments.flatMap((d) => setsOf(d).map((s) => s.metadata.uid)));
  const loneSets = input.machineSets.filter((s) => !inDeployment.has(s.metadata.uid));
  const machinesOfSets = (sets: api.MachineSet[]) => input.machines.filter((m) => sets.some((s) => ownedBy(m, s)));
  const loneMachines = input.machines.filter((m) => !cpMachines.includes(m) && !input.machineSets.some((s) => ownedBy(m, s)));
  const hasWorkers = deployments.length + loneSets.length + loneMachines.length > 0;

  const infraRef = cluster.spec?.infrastructureRef;
  if (infraRef?.name) {
    const branch = controlPlane || cpMachines.length || hasWorkers ? '├─' : '└─';
    const name = `ClusterInfrastructure - ${infraRef.kind}/${infraRef.name}`;
    rows.push(infrastructure
      ? conditionRow(branch, name, infrastructure, 'Ready', now, { replicas: '', available: '', ready: '', upToDate: '' }, false)
      : { prefix: branch, name, replicas: '', available: '', ready: '', upToDate: '', status: '', reason: '', since: '', message: ['does not exist'] });
  }
  const cpRef = cluster.spec?.controlPlaneRef;
  if (cpRef?.name || cpMachines.length) {
    const branch = hasWorkers ? '├─' : '└─';
    const child = hasWorkers ? '│ ' : '  ';
    if (cpRef?.name) {
      const name = `ControlPlane - ${cpRef.kind}/${cpRef.name}`;
      rows.push(controlPlane
        ? conditionRow(branch, name, controlPlane, 'Available', now, replicaCounts(controlPlane))
        : { prefix: branch, name, replicas: '', available: '', ready: '', upToDate: '', status: '', reason: '', since: '', message: ['does not exist'] });
    } else {
      rows.push({ prefix: branch, name: 'ControlPlane', replicas: '', available: '', ready: '', upToDate: '', status: '', reason: '', since: '', message: [] });
    }
    rows.push(...machineRows(child, cpMachines, now, grouping, true));
  }
  if (hasWorkers) {
    rows.push({ prefix: '└─', name: 'Workers', replicas: '', available: '', ready: '', upToDate: '', status: '', reason: '', since: '', message: [] });
    const items: Array<{ kind: 'md'; o: api.MachineDeployment } | { kind: 'ms'; o: api.MachineSet } | { kind: 'machines' }> = [
      ...deployments.map((o) => ({ kind: 'md' as const, o })),
      ...loneSets.map((o) => ({ kind: 'ms' as const, o })),
      ...(loneMachines.length ? [{ kind: 'machines' as const }] : []),
    ];
    items.forEach((item, i) => {
      const last = i === items.length - 1;
      const branch = `  ${last ? '└─' : '├─'}`;
      const child = `  ${last ? '  ' : '│ '}`;
      if (item.kind === 'machines') {
        rows.push(...machineRows('  ', loneMachines, now, grouping, last));
        return;
      }
      const kind = item.kind === 'md' ? 'MachineDeployment' : 'MachineSet';
      rows.push(conditionRow(branch, `${kind}/${item.o.metadata.name}`, item.o as TreeObject, 'Available', now, replicaCounts(item.o)));
      const machines = item.kind === 'md' ? machinesOfSets(setsOf(item.o)) : machinesOfSets([item.o]);
      rows.push(...machineRows(child, machines, now, grouping, true));
    });
  }
  return rows;
}

/** The rows as clusterctl prints them: left-aligned columns, a message's further lines on rows of their own. */
export function formatClusterTree(rows: Row[]): string {
  const lines: string[][] = [HEADERS];
  for (const r of rows) {
    lines.push([r.prefix + r.name, r.replicas, r.available, r.ready, r.upToDate, r.status, r.reason, r.since, r.message[0] ?? '']);
    for (const more of r.message.slice(1)) lines.push(['', '', '', '', '', '', '', '', more]);
  }
  const widths = HEADERS.map((_, i) => Math.max(...lines.map((l) => [...l[i]].length)));
  return lines.map((l) => l.map((cell, i) => (i === l.length - 1 ? cell : cell.padEnd(widths[i]))).join(' ').trimEnd()).join('\n');
}
