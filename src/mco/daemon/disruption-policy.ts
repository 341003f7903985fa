// Node disruption policy: what a change needs done to the node, as OpenShift's MachineConfiguration
// `cluster` (operator.openshift.io/v1) says in spec.nodeDisruptionPolicy, over OpenShift's defaults.
//
// - A file change takes the actions of the policy with the closest path (the path itself, else its
//   nearest directory with a policy); a unit change those of the unit's policy; ssh keys (and the
//   core user's password) the sshkey policy. A change with no policy, and any change of kernel
//   arguments, kernel type, extensions or OS image, means Reboot.
// - Any Reboot makes the whole list one Reboot (which drains first). Otherwise Drain drains before
//   the write, and Reload / Restart / DaemonReload run after it, each once, in that order.
// - Special (the registries file): a change that only adds lines reloads crio; one that removes or
//   rewrites lines drains first as well, as OpenShift treats registry removals.
// An administrator's policy for a path, unit or the ssh keys replaces the default for it. Pure.
import type { ConfigDiff } from './diff.js';

export type ActionType = 'None' | 'Reboot' | 'Drain' | 'Reload' | 'Restart' | 'DaemonReload' | 'Special';
export interface PolicyAction { type: ActionType; reload?: { serviceName: string }; restart?: { serviceName: string } }
export interface NodeDisruptionPolicy {
  files?: { path: string; actions: PolicyAction[] }[];
  units?: { name: string; actions: PolicyAction[] }[];
  sshkey?: { actions: PolicyAction[] };
}

const reload = (serviceName: string): PolicyAction => ({ type: 'Reload', reload: { serviceName } });
const restart = (serviceName: string): PolicyAction => ({ type: 'Restart', restart: { serviceName } });

/** OpenShift's cluster defaults (MachineConfiguration status.nodeDisruptionPolicyStatus.clusterPolicies). */
export const DEFAULT_POLICY: Required<NodeDisruptionPolicy> = {
  files: [
    { path: '/etc/mco/internal-registry-pull-secret.json', actions: [{ type: 'None' }] },
    { path: '/var/lib/kubelet/config.json', actions: [{ type: 'None' }] },
    { path: '/etc/machine-config-daemon/no-reboot/containers-gpg.pub', actions: [reload('crio.service')] },
    { path: '/etc/containers/policy.json', actions: [reload('crio.service')] },
    { path: '/etc/containers/registries.conf', actions: [{ type: 'Special' }] },
    { path: '/etc/containers/registries.d', actions: [reload('crio.service')] },
    { path: '/etc/crio/policies', actions: [reload('crio.service')] },
    { path: '/etc/kubernetes/credential-providers', actions: [restart('kubelet.service')] },
  ],
  units: [],
  sshkey: { actions: [{ type: 'None' }] },
};

/** The administrator's policy over the defaults: theirs wins for the same path, unit or the ssh keys. */
export function effectivePolicy(admin: NodeDisruptionPolicy | undefined): Required<NodeDisruptionPolicy> {
  const files = new Map(DEFAULT_POLICY.files.map((f) => [f.path.replace(/\/+$/, ''), f.actions]));
  for (const f of admin?.files ?? []) files.set(f.path.replace(/\/+$/, ''), f.actions);
  const units = new Map(DEFAULT_POLICY.units.map((u) => [u.name, u.actions]));
  for (const u of admin?.units ?? []) units.set(u.name, u.actions);
  return {
    files: [...files].map(([path, actions]) => ({ path, actions })),
    units: [...units].map(([name, actions]) => ({ name, actions })),
    sshkey: admin?.sshkey ?? DEFAULT_POLICY.sshkey,
  };
}

/** The policy whose path is the file or its nearest directory. */
export function closestFilePolicy(policy: Required<NodeDisruptionPolicy>, path: string): { path: string; actions: PolicyAction[] } | undefined {
  let best: { path: string; actions: PolicyAction[] } | undefined;
  for (const f of policy.files) {
    if (path === f.path || path.startsWith(`${f.path}/`)) if (!best || f.path.length > best.path.length) best = f;
  }
  return best;
}

export interface Plan {
  reboot: boolean;
  drain: boolean;
  /** Run after the write, in order (never Reboot, Drain, None or Special). */
  postActions: PolicyAction[];
  /** Why, one line per change, for the log and the node's Event. */
  reasons: string[];
}

function onlyAddsLines(before: Buffer | undefined, after: Buffer | undefined): boolean {
  if (!before || !after) return false;
  const now = new Set(after.toString('utf8').split('\n'));
  return before.toString('utf8').split('\n').every((l) => now.has(l));
}

export function planActions(diff: ConfigDiff, admin?: NodeDisruptionPolicy): Plan {
  const policy = effectivePolicy(admin);
  const wanted: PolicyAction[] = [];
  const reasons: string[] = [];
  const take = (what: string, actions: PolicyAction[] | undefined) => {
    const list = actions?.length ? actions : [{ type: 'Reboot' as const }];
    wanted.push(...list);
    reasons.push(`${what}: ${list.map(describeAction).join(', ')}${actions?.length ? '' : ' (no policy)'}`);
  };
  for (const p of diff.paths) {
    if (p.source !== 'file') continue;
    const found = closestFilePolicy(policy, p.path);
    if (found?.actions.some((a) => a.type === 'Special')) {
      const before = p.before?.kind === 'file' ? p.before.data : undefined;
      const after = p.after?.kind === 'file' ? p.after.data : undefined;
      take(`file ${p.path} (${p.change})`, onlyAddsLines(before, after) ? [reload('crio.service')] : [{ type: 'Drain' }, reload('crio.service')]);
    } else take(`file ${p.path} (${p.change})`, found?.actions);
  }
  for (const name of diff.units) take(`unit ${name}`, policy.units.find((u) => u.name === name)?.actions);
  if (diff.sshKeys || diff.passwordHash) take(diff.sshKeys ? 'ssh keys' : 'password', policy.sshkey.actions);
  if (diff.kernelArguments.add.length || diff.kernelArguments.remove.length) take('kernel arguments', [{ type: 'Reboot' }]);
  if (diff.kernelType) take('kernel type', [{ type: 'Reboot' }]);
  if (diff.extensions) take('extensions', [{ type: 'Reboot' }]);
  if (diff.osImageURL) take('OS image', [{ type: 'Reboot' }]);

  const reboot = wanted.some((a) => a.type === 'Reboot');
  if (reboot) return { reboot, drain: true, postActions: [], reasons };
  const post: PolicyAction[] = [];
  const seen = new Set<string>();
  for (const type of ['DaemonReload', 'Reload', 'Restart'] as const) {
    for (const a of wanted.filter((x) => x.type === type)) {
      const key = describeAction(a);
      if (!seen.has(key)) { seen.add(key); post.push(a); }
    }
  }
  return { reboot: false, drain: wanted.some((a) => a.type === 'Drain'), postActions: post, reasons };
}

export function describeAction(a: PolicyAction): string {
  if (a.type === 'Reload') return `Reload ${a.reload?.serviceName ?? '?'}`;
  if (a.type === 'Restart') return `Restart ${a.restart?.serviceName ?? '?'}`;
  return a.type;
}
