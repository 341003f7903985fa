// `bosun adm upgrade status [--details=nodes|operators|health|all]`: the update's progress as
// `oc adm upgrade status` prints it — the Control Plane section with its nodes, each worker pool
// with its nodes, and Update Health — from adm-upgrade-status-assess.ts. Reads only standard
// OpenShift objects, so it works on any cluster that has them.
import type { Command } from 'commander';
import { loadKubeConfig } from '../kube/kubeconfig.js';
import { KubeClient, isNotFound, type Obj } from '../kube/client.js';
import { resources } from '../kube/resources.js';
import { BosunError } from '../common/errors.js';
import { assessUpgradeStatus, type Insight, type NodeRow, type UpgradeStatus } from './adm-upgrade-status-assess.js';

const DETAILS = ['none', 'nodes', 'operators', 'health', 'all'] as const;
type Details = (typeof DETAILS)[number];

export class UpgradeStatusError extends BosunError {
  constructor(message: string) {
    super('UpgradeStatusFailed', message);
  }
}

/** Columns padded as Go's tabwriter with padding 3, trailing spaces trimmed. */
export function table(rows: string[][]): string[] {
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length)));
  return rows.map((r) => r.map((cell, i) => (i === r.length - 1 ? cell : cell.padEnd(widths[i] + 3))).join('').trimEnd());
}

function nodesTable(title: string, nodes: NodeRow[], all: boolean): string[] {
  // Without --details=nodes, as oc: the nodes still to do, and at most ten of them.
  const shown = all ? nodes : nodes.filter((n) => n.assessment !== 'Completed').slice(0, 10);
  if (shown.length === 0) return [];
  const out = ['', title, ...table([['NAME', 'ASSESSMENT', 'PHASE', 'VERSION', 'EST', 'MESSAGE'], ...shown.map((n) => [n.name, n.assessment, n.phase, n.version, n.est, n.message])])];
  const hidden = nodes.length - shown.length;
  if (!all && hidden > 0) out.push(`...and ${hidden} more nodes (${nodes.length - nodes.filter((n) => n.assessment !== 'Completed').length} completed); use --details=nodes to see them all`);
  return out;
}

function healthLines(health: Insight[], detailed: boolean): string[] {
  if (!detailed) return table([['SINCE', 'LEVEL', 'IMPACT', 'MESSAGE'], ...health.map((h) => [h.since, h.level, h.impact, h.message])]);
  const out: string[] = [];
  for (const h of health) {
    out.push(`Message: ${h.message}`, `  Since:       ${h.since}`, `  Level:       ${h.level}`, `  Impact:      ${h.impact}`);
    if (h.resource) out.push('  Resources:', `    ${h.resource}`);
    if (h.description) out.push(`  Description: ${h.description}`);
    out.push('');
  }
  return out.slice(0, -1);
}

/** The report as text. */
export function renderUpgradeStatus(s: UpgradeStatus, details: Details = 'none'): string {
  if (!s.updating || !s.controlPlane) return 'The cluster is not updating.';
  const cp = s.controlPlane;
  const all = (what: Details) => details === 'all' || details === what;
  const out = [
    '= Control Plane =',
    `Assessment:      ${cp.assessment}`,
    `Target Version:  ${cp.target}${cp.from ? ` (from ${cp.from})` : ''}`,
    ...(cp.updatingOperators.length ? [`Updating:        ${cp.updatingOperators.join(', ')}`] : []),
    `Completion:      ${cp.completion}`,
    `Duration:        ${cp.duration}`,
    `Operator Health: ${cp.operatorHealth}`,
  ];
  if (cp.operators.length) out.push('', 'Updating Cluster Operators', ...table([['NAME', 'SINCE', 'REASON', 'MESSAGE'], ...cp.operators.map((o) => [o.name, o.since, o.reason, o.message])]));
  if (all('operators') && cp.waitingOperators.length) out.push('', `Waiting Cluster Operators: ${cp.waitingOperators.join(', ')}`);
  if (s.masters) out.push(...nodesTable('Control Plane Nodes', s.masters.nodes, all('nodes')));
  const workers = s.workers.filter((p) => p.nodes.length > 0);
  if (workers.length) {
    out.push('', '= Worker Upgrade =', '', ...table([['WORKER POOL', 'ASSESSMENT', 'COMPLETION', 'STATUS'], ...workers.map((p) => [p.name, p.assessment, p.completion, p.status])]));
    for (const p of workers) out.push(...nodesTable(`Worker Pool Nodes: ${p.name}`, p.nodes, all('nodes')));
  }
  out.push('', '= Update Health =', ...healthLines(s.health, all('health')));
  return out.join('\n');
}

async function list(api: KubeClient, ref: (typeof resources)[keyof typeof resources]): Promise<Obj[]> {
  try {
    return ((await api.list(ref)).items ?? []) as Obj[];
  } catch (e) {
    // A cluster without the machine-config kinds has no pools to show.
    if (isNotFound(e)) return [];
    throw e;
  }
}

export function registerUpgradeStatus(upgrade: Command): void {
  upgrade
    .command('status')
    .description('show the progress of the cluster update, as `oc adm upgrade status` does: control plane, worker pools and their nodes, update health')
    .option('--kubeconfig <file>', 'kubeconfig (default: $KUBECONFIG)')
    .option('--details <what>', `show more: ${DETAILS.filter((d) => d !== 'none').join(', ')}`, 'none')
    .addHelpText('after', `
Example (during \`bosun adm upgrade --to 1.0.1\`):
  $ bosun adm upgrade status
  = Control Plane =
  Assessment:      Progressing
  Target Version:  1.0.1 (from 1.0.0)
  Updating:        machine-config
  Completion:      83% (5 operators updated, 1 updating, 0 waiting)
  Duration:        2m10s (Est. Time Remaining: 26s)
  Operator Health: 6 Healthy

  Updating Cluster Operators
  NAME             SINCE   REASON          MESSAGE
  machine-config   1m2s    PoolsUpdating   Pools worker are rolling out their configuration

  = Worker Upgrade =

  WORKER POOL   ASSESSMENT    COMPLETION   STATUS
  worker        Progressing   33% (1/3)    1 Available, 1 Progressing, 1 Draining

  Worker Pool Nodes: worker
  NAME       ASSESSMENT    PHASE      VERSION   EST   MESSAGE
  worker-1   Progressing   Draining   1.0.0     ?
  worker-2   Outdated      Pending    1.0.0     ?

  = Update Health =
  SINCE   LEVEL   IMPACT   MESSAGE
  2m10s   Info    None     Update is proceeding well`)
    .action(async (_opts: unknown, command: Command) => {
      const opts = command.optsWithGlobals<{ kubeconfig?: string; details: string }>();
      if (!(DETAILS as readonly string[]).includes(opts.details)) throw new UpgradeStatusError(`--details must be one of ${DETAILS.join(', ')}, not "${opts.details}"`);
      const api = new KubeClient(loadKubeConfig(opts.kubeconfig));
      const cv = await api.read(resources.clusterVersions, 'version');
      if (!cv) throw new UpgradeStatusError('ClusterVersion "version" not found: is this an OpenShift-style cluster?');
      const [operators, pools, machineConfigs, nodes] = await Promise.all([list(api, resources.clusterOperators), list(api, resources.machineConfigPools), list(api, resources.machineConfigs), list(api, resources.nodes)]);
      console.log(renderUpgradeStatus(assessUpgradeStatus({ cv, operators, pools, machineConfigs, nodes, now: new Date() }), opts.details as Details));
    });
}
