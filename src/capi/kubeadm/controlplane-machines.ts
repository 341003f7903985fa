// The judgements of the KubeadmControlPlane controller over its Machines, as Cluster API's KCP
// makes them (controlplane/kubeadm/internal: control_plane.go, filters, remediation.go). Pure:
//   - the KubeadmConfig a new Machine gets from spec.kubeadmConfigSpec: the first one
//     initConfiguration and clusterConfiguration, the others joinConfiguration with controlPlane
//     set (and clusterConfiguration, which the bootstrap data carries for the static pods);
//   - whether a Machine is up to date, with what differs: its version, the infrastructure template
//     it was cloned from (the cloned-from annotations), its KubeadmConfig, rollout.after;
//   - the failure domain of a new Machine (the one with the fewest up-to-date Machines), and the
//     Machine to delete (the first non-empty of: outdated with cluster.x-k8s.io/delete-machine;
//     any with it; outdated with unhealthy components; outdated; all — then, of the failure
//     domains holding one, the one with the most Machines, then its oldest there);
//   - the Machine to remediate first, and remediation's retry limits.
import type * as api from '../../api/index.js';
import { canonicalJson } from '../../kube/canonical.js';
import { ANNOTATION, CONDITION, conditionIs, type InfraMachine } from '../api.js';

type Spec = api.KubeadmConfigSpec;

/** The conditions KCP keeps on its Machines (api/controlplane/kubeadm/v1beta2). */
export const KCP_MACHINE_CONDITION = {
  apiServerPodHealthy: 'APIServerPodHealthy',
  controllerManagerPodHealthy: 'ControllerManagerPodHealthy',
  schedulerPodHealthy: 'SchedulerPodHealthy',
  etcdPodHealthy: 'EtcdPodHealthy',
  etcdMemberHealthy: 'EtcdMemberHealthy',
} as const;

/** The static pods of a control-plane Node (their `component` label) and the Machine condition of each. */
export const CONTROL_PLANE_COMPONENTS = [
  { component: 'kube-apiserver', condition: KCP_MACHINE_CONDITION.apiServerPodHealthy },
  { component: 'kube-controller-manager', condition: KCP_MACHINE_CONDITION.controllerManagerPodHealthy },
  { component: 'kube-scheduler', condition: KCP_MACHINE_CONDITION.schedulerPodHealthy },
  { component: 'etcd', condition: KCP_MACHINE_CONDITION.etcdPodHealthy },
] as const;

/** The health conditions preflight wants True on every Machine (the etcd ones only with stacked etcd). */
export function healthConditions(etcdManaged: boolean): string[] {
  return [
    KCP_MACHINE_CONDITION.apiServerPodHealthy, KCP_MACHINE_CONDITION.controllerManagerPodHealthy, KCP_MACHINE_CONDITION.schedulerPodHealthy,
    ...(etcdManaged ? [KCP_MACHINE_CONDITION.etcdPodHealthy, KCP_MACHINE_CONDITION.etcdMemberHealthy] : []),
  ];
}

/** The KubeadmConfig spec of a new Machine: init for the first, join (control plane) for the others. */
export function machineKubeadmConfigSpec(spec: Spec | undefined, init: boolean): Spec {
  const s: Spec = structuredClone(spec ?? {});
  if (init) {
    delete s.joinConfiguration;
    return s;
  }
  delete s.initConfiguration;
  return { ...s, joinConfiguration: { ...(s.joinConfiguration ?? {}), controlPlane: s.joinConfiguration?.controlPlane ?? {} } };
}

/** A config spec as compared: what the bootstrap provider adds (the join token) left out, defaults written. */
function comparable(spec: Spec | undefined): string {
  const s: Spec = structuredClone(spec ?? {});
  if (s.joinConfiguration?.discovery?.bootstrapToken) {
    const { token: _token, ...rest } = s.joinConfiguration.discovery.bootstrapToken;
    s.joinConfiguration.discovery = { ...s.joinConfiguration.discovery, bootstrapToken: rest };
    if (Object.keys(rest).length === 0) delete s.joinConfiguration.discovery.bootstrapToken;
    if (Object.keys(s.joinConfiguration.discovery).length === 0) delete s.joinConfiguration.discovery;
  }
  s.format ??= 'ignition';
  return canonicalJson(s);
}

export interface UpToDateInput {
  kcp: api.KubeadmControlPlane;
  machine: api.Machine;
  /** The Machine's KubeadmConfig, when it exists. */
  config?: api.KubeadmConfig;
  /** The Machine's infrastructure machine, when it exists. */
  infra?: InfraMachine;
  now: number;
}

/** Why the Machine is not up to date (empty: it is), in Cluster API's words. */
export function outdatedReasons(o: UpToDateInput): string[] {
  const { kcp, machine } = o;
  const reasons: string[] = [];
  if (machine.spec?.version !== kcp.spec.version) reasons.push(`Version ${machine.spec?.version ?? '(unset)'}, ${kcp.spec.version} required`);
  const ref = kcp.spec.machineTemplate.spec.infrastructureRef;
  const annotations = o.infra?.metadata.annotations ?? {};
  if (o.infra && (annotations[ANNOTATION.clonedFromName] !== ref.name || annotations[ANNOTATION.clonedFromGroupKind] !== `${ref.kind}.${ref.apiGroup}`)) {
    reasons.push(`${o.infra.kind ?? machine.spec.infrastructureRef.kind} is not up-to-date (cloned from ${annotations[ANNOTATION.clonedFromGroupKind] ?? '?'} ${annotations[ANNOTATION.clonedFromName] ?? '?'}, ${ref.kind}.${ref.apiGroup} ${ref.name} required)`);
  }
  if (o.config) {
    const init = o.config.spec?.joinConfiguration === undefined;
    if (comparable(o.config.spec) !== comparable(machineKubeadmConfigSpec(kcp.spec.kubeadmConfigSpec, init))) reasons.push('KubeadmConfig is not up-to-date');
  }
  const after = kcp.spec.rollout?.after ? Date.parse(kcp.spec.rollout.after) : Number.NaN;
  const created = Date.parse(machine.metadata.creationTimestamp ?? '');
  if (Number.isFinite(after) && after <= o.now && created < after) reasons.push(`Machine was created before rollout.after (${kcp.spec.rollout!.after})`);
  // Certificates that run out within rollout.before.certificatesExpiryDays: the Machine is replaced.
  const days = kcp.spec.rollout?.before?.certificatesExpiryDays;
  const expiry = machine.status?.certificatesExpiryDate ?? o.config?.metadata.annotations?.[ANNOTATION.certificatesExpiry];
  const expiresAt = expiry ? Date.parse(expiry) : Number.NaN;
  if (days !== undefined && Number.isFinite(expiresAt) && expiresAt <= o.now + days * 86_400_000) {
    reasons.push(`Certificates will expire soon (${expiry}): rollout.before.certificatesExpiryDays is ${days}`);
  }
  return reasons;
}

const created = (m: api.Machine) => String(m.metadata.creationTimestamp ?? '');
const byAge = (a: api.Machine, b: api.Machine) => created(a).localeCompare(created(b)) || a.metadata.name.localeCompare(b.metadata.name);
const domainOf = (m: api.Machine) => m.spec?.failureDomain ?? '';

/**
 * The failure domain a new Machine goes to: of the control-plane domains, the one with the fewest
 * up-to-date Machines, then the fewest Machines, then by name; undefined without domains.
 */
export function nextFailureDomain(domains: string[], machines: api.Machine[], isUpToDate: (m: api.Machine) => boolean): string | undefined {
  if (domains.length === 0) return undefined;
  const count = (d: string, filter: (m: api.Machine) => boolean) => machines.filter((m) => domainOf(m) === d && filter(m)).length;
  return [...domains].sort((a, b) => count(a, isUpToDate) - count(b, isUpToDate) || count(a, () => true) - count(b, () => true) || a.localeCompare(b))[0];
}

/**
 * The Machine to delete (scale down, or a rollout step): the first non-empty group of Cluster
 * API's, then of it the failure domain holding the most Machines (a Machine in a domain that no
 * longer exists goes first), then the oldest there.
 */
export function machineToDelete(machines: api.Machine[], o: { isOutdated: (m: api.Machine) => boolean; isUnhealthy: (m: api.Machine) => boolean; domains: string[] }): api.Machine | undefined {
  const marked = (m: api.Machine) => m.metadata.annotations?.[ANNOTATION.deleteMachine] !== undefined;
  const groups = [
    machines.filter((m) => o.isOutdated(m) && marked(m)),
    machines.filter(marked),
    machines.filter((m) => o.isOutdated(m) && o.isUnhealthy(m)),
    machines.filter(o.isOutdated),
    machines,
  ];
  const group = groups.find((g) => g.length > 0);
  if (!group) return undefined;
  const lost = group.filter((m) => domainOf(m) && o.domains.length > 0 && !o.domains.includes(domainOf(m)));
  if (lost.length) return [...lost].sort(byAge)[0];
  // Of the domains holding a candidate, the one with the most Machines of all (so that the
  // control plane stays spread), then the most candidates, then by name.
  const inDomain = (d: string, of: api.Machine[]) => of.filter((m) => domainOf(m) === d);
  const domains = [...new Set(group.map(domainOf))].sort((a, b) => inDomain(b, machines).length - inDomain(a, machines).length || inDomain(b, group).length - inDomain(a, group).length || a.localeCompare(b));
  return [...inDomain(domains[0], group)].sort(byAge)[0];
}

/** Machines a MachineHealthCheck handed to the control plane (HealthCheckSucceeded and OwnerRemediated False). */
export function machinesToRemediate(machines: api.Machine[]): api.Machine[] {
  return machines.filter((m) => conditionIs(m, CONDITION.healthCheckSucceeded, 'False') && conditionIs(m, CONDITION.ownerRemediated, 'False'));
}

/**
 * Which of the unhealthy Machines is remediated first (Cluster API's pickMachineToBeRemediated):
 * the remediate-machine annotation, no Node, then an unhealthy etcd member, etcd pod, API server,
 * controller manager, scheduler; then the oldest.
 */
export function pickMachineToRemediate(unhealthy: api.Machine[], etcdManaged: boolean): api.Machine | undefined {
  const notTrue = (type: string) => (m: api.Machine) => !conditionIs(m, type, 'True');
  const rank: Array<(m: api.Machine) => boolean> = [
    (m) => m.metadata.annotations?.[ANNOTATION.remediateMachine] !== undefined,
    (m) => !m.status?.nodeRef?.name,
    ...(etcdManaged ? [notTrue(KCP_MACHINE_CONDITION.etcdMemberHealthy), notTrue(KCP_MACHINE_CONDITION.etcdPodHealthy)] : []),
    notTrue(KCP_MACHINE_CONDITION.apiServerPodHealthy),
    notTrue(KCP_MACHINE_CONDITION.controllerManagerPodHealthy),
    notTrue(KCP_MACHINE_CONDITION.schedulerPodHealthy),
  ];
  const score = (m: api.Machine) => {
    const i = rank.findIndex((r) => r(m));
    return i < 0 ? rank.length : i;
  };
  return [...unhealthy].sort((a, b) => score(a) - score(b) || byAge(a, b))[0];
}

/** What a remediation leaves behind: on the KCP while its replacement is due, then on the replacement. */
export interface RemediationData {
  machine: string;
  timestamp: string;
  retryCount: number;
}

/** On the KCP: the remediation whose replacement Machine is not created yet. */
export const REMEDIATION_IN_PROGRESS_ANNOTATION = 'controlplane.cluster.x-k8s.io/remediation-in-progress';
/** On a Machine: the remediation it replaced a Machine for. */
export const REMEDIATION_FOR_ANNOTATION = 'controlplane.cluster.x-k8s.io/remediation-for';

export function parseRemediationData(text: string | undefined): RemediationData | undefined {
  if (!text) return undefined;
  try {
    const d = JSON.parse(text) as Partial<RemediationData>;
    return typeof d.machine === 'string' && typeof d.timestamp === 'string' ? { machine: d.machine, timestamp: d.timestamp, retryCount: Number(d.retryCount ?? 0) } : undefined;
  } catch {
    return undefined;
  }
}

export type RetryVerdict = { allowed: true; retryCount: number } | { allowed: false; deferred: boolean; message: string };

/**
 * Remediation's retry limits (Cluster API's checkRetryLimits). A Machine that replaced a remediated
 * one less than minHealthyPeriodSeconds ago counts as a retry of it: not allowed past maxRetry,
 * nor sooner than retryPeriodSeconds after the last one.
 */
export function checkRetryLimits(machine: api.Machine, remediation: api.KubeadmControlPlane['spec']['remediation'], now: number): RetryVerdict {
  const last = parseRemediationData(machine.metadata.annotations?.[REMEDIATION_FOR_ANNOTATION]);
  if (!last) return { allowed: true, retryCount: 0 };
  const lastTime = Date.parse(last.timestamp);
  const minHealthyMs = (remediation?.minHealthyPeriodSeconds ?? 3600) * 1000;
  if (!Number.isFinite(lastTime) || now > lastTime + minHealthyMs) return { allowed: true, retryCount: 0 };
  const retryCount = last.retryCount + 1;
  const maxRetry = remediation?.maxRetry;
  if (maxRetry !== undefined && retryCount > maxRetry) {
    return { allowed: false, deferred: false, message: `KubeadmControlPlane can't remediate this Machine because the operation already failed ${last.retryCount + 1} times (spec.remediation.maxRetry is ${maxRetry})` };
  }
  const retryMs = (remediation?.retryPeriodSeconds ?? 0) * 1000;
  if (retryMs > 0 && now < lastTime + retryMs) {
    return { allowed: false, deferred: true, message: `KubeadmControlPlane can't remediate this Machine because the operation already failed in the latest ${remediation!.retryPeriodSeconds}s (spec.remediation.retryPeriodSeconds); it retries after ${new Date(lastTime + retryMs).toISOString()}` };
  }
  return { allowed: true, retryCount };
}

/** The lowest of the versions (`v1.32.5` < `v1.33.1`), as status.version reports the control plane's. */
export function lowestVersion(versions: Array<string | undefined>): string | undefined {
  const parts = (v: string) => v.replace(/^v/, '').split(/[.+-]/).slice(0, 3).map((x) => Number.parseInt(x, 10) || 0);
  const cmp = (a: string, b: string) => {
    const [x, y] = [parts(a), parts(b)];
    for (let i = 0; i < 3; i++) if (x[i] !== y[i]) return x[i] - y[i];
    return 0;
  };
  return versions.filter((v): v is string => Boolean(v)).sort(cmp)[0];
}
