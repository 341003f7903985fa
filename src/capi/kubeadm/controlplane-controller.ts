// The KubeadmControlPlane controller (Cluster API's KubeadmControlPlaneReconciler): keeps
// spec.replicas control-plane Machines of a workload cluster, one operation at a time, in KCP's
// reconcile order — every wait named in a condition:
//   1. the Cluster (its owner) and its infrastructure (status.initialization.infrastructureProvisioned);
//      the certificates `<cluster>-ca/-etcd/-sa/-proxy` looked up or generated, owned by the KCP as
//      controller (CertificatesAvailable); spec.controlPlaneEndpoint; the admin kubeconfig
//      `<cluster>-kubeconfig`, owned by the KCP, renewed when its client certificate has less than
//      six months left;
//   2. the Machines and their conditions: through the workload cluster's API (remote.ts) the
//      mirror pods `<component>-<node>` in kube-system give APIServerPodHealthy,
//      ControllerManagerPodHealthy, SchedulerPodHealthy, EtcdPodHealthy; each Machine's etcd member,
//      dialled at https://<machine IP>:2379 with a certificate from the `<cluster>-etcd` CA
//      (etcd-members.ts), gives EtcdMemberHealthy; UpToDate says what differs from the spec;
//      status.initialization.controlPlaneInitialized once the workload API answers and has
//      kubeadm's kube-system/kubeadm-config or a control-plane Node (never back to false);
//   3. etcd members without a Machine are removed (once no Machine is still provisioning);
//   4. remediation: a Machine a MachineHealthCheck handed over (HealthCheckSucceeded=False,
//      OwnerRemediated=False) is deleted — one at a time, only if etcd keeps quorum without it,
//      within remediation.maxRetry / retryPeriodSeconds / minHealthyPeriodSeconds; a refusal says
//      why on the Machine's OwnerRemediated and the KCP's Remediating;
//   5. rollout (a Machine not up to date): with replicas + maxSurge Machines or more, delete an
//      outdated one; else add an up-to-date one (maxSurge 1 adds first, 0 deletes first);
//   6. scale: none → the init Machine; fewer → join one; more → delete one (controlplane-machines.ts
//      chooses whom and where). Preflight before each: no Machine deleting, the control plane
//      initialized, every Machine with a Node and every health condition True — and when it
//      blocks, ScalingUp/ScalingDown/RollingOut say on what, Machine by Machine.
// A new Machine `<kcp>-<5 random>`: its infrastructure machine cloned from
// spec.machineTemplate.spec.infrastructureRef and a KubeadmConfig, both of the same name (the
// Node's), then the Machine — labelled cluster-name, control-plane and control-plane-name, owned by
// the KCP. Before a Machine is deleted its etcd member is removed (the leadership moved off it
// first), so the members left keep quorum.
// Status: replicas, ready/available/up-to-date counts, version (the lowest), selector (the scale
// subresource's), lastRemediation, conditions Available, Initialized, CertificatesAvailable,
// EtcdClusterHealthy, ControlPlaneComponentsHealthy, MachinesReady, MachinesUpToDate, RollingOut,
// ScalingUp, ScalingDown, Remediating, Deleting, Paused. Deleting a KCP waits for the workers,
// then deletes its Machines, then lets go (its finalizer).
import { X509Certificate, randomInt } from 'node:crypto';
import { parse as parseYaml } from 'yaml';
import type * as api from '../../api/index.js';
import { Controller, type SyncResult, controllerOf, controllerReference, isConflict, isNotFound, keyOf, resources, rfc3339 } from '../../kube/index.js';
import {
  ANNOTATION, API_VERSION, CONDITION, type InfraMachine, type InfraMachineTemplate, LABEL, MACHINES, type NewCapiCondition,
  conditionIs, eventTarget, isControlPlane, isDeleting, machineCondition, setCapiCondition,
} from '../api.js';
import { type CapiContext, type ContractRef, informers, onUnpause, pausedCheck } from '../context.js';
import { sameStatus } from '../machine-status.js';
import { RemoteClients } from '../remote.js';
import { BOOTSTRAP_API_VERSION, BOOTSTRAP_GROUP, CONTROL_PLANE_API_VERSION, CONTROL_PLANE_GROUP, CONTROL_PLANE_NODE_ROLE, KUBEADM_CONFIGS, KUBEADM_CONTROL_PLANES } from './api.js';
import { type ClusterCertificates, adminKubeconfig, clusterSecretName, endpointUrl, kubeconfigSecret, lookupOrGenerateCertificates, servingCertificateExpiry, CERTIFICATE_PURPOSES } from './certificates.js';
import {
  CONTROL_PLANE_COMPONENTS, KCP_MACHINE_CONDITION, REMEDIATION_FOR_ANNOTATION, REMEDIATION_IN_PROGRESS_ANNOTATION, type RemediationData,
  checkRetryLimits, healthConditions, lowestVersion, machineKubeadmConfigSpec, machineToDelete, machinesToRemediate, nextFailureDomain,
  outdatedReasons, parseRemediationData, pickMachineToRemediate,
} from './controlplane-machines.js';
import { EtcdAccess, type MemberReport, etcdClientUrl, keepsQuorumWithout } from './etcd-members.js';
import { API_SERVER_PORT } from './static-pods.js';
import { logger } from '../../common/log.js';
import { defaultKubeadmControlPlane, validateKubeadmControlPlane } from './validation.js';
import { findKubernetesVersion, unknownVersionMessage } from './versions.js';

const log = logger('kubeadm-control-plane');

type KCP = api.KubeadmControlPlane;
type KCPStatus = NonNullable<KCP['status']>;

export const KCP_FINALIZER = 'kubeadmcontrolplane.controlplane.cluster.x-k8s.io';
/** The label naming a control-plane Machine's KubeadmControlPlane. */
export const CONTROL_PLANE_NAME_LABEL = 'cluster.x-k8s.io/control-plane-name';
/**
 * KCP's pre-terminate hook on each of its Machines (Cluster API's): a deleted control-plane
 * Machine is first taken out of the API server's balancer and drained while its etcd member still
 * serves it; only then does KCP remove the member and take the hook away, and the instance goes.
 */
export const KCP_CLEANUP_HOOK = `${ANNOTATION.preTerminateHookPrefix}/kcp-cleanup`;
const hasCleanupHook = (m: api.Machine) => m.metadata.annotations?.[KCP_CLEANUP_HOOK] !== undefined;

/** The conditions a KubeadmControlPlane carries (api/controlplane/kubeadm/v1beta2). */
export const KCP_CONDITION = {
  available: 'Available',
  initialized: 'Initialized',
  certificatesAvailable: 'CertificatesAvailable',
  etcdClusterHealthy: 'EtcdClusterHealthy',
  controlPlaneComponentsHealthy: 'ControlPlaneComponentsHealthy',
  machinesReady: 'MachinesReady',
  machinesUpToDate: 'MachinesUpToDate',
  rollingOut: 'RollingOut',
  scalingUp: 'ScalingUp',
  scalingDown: 'ScalingDown',
  remediating: 'Remediating',
  deleting: 'Deleting',
  paused: 'Paused',
} as const;

/** How often what is not watched (the workload cluster, etcd) is looked at while something waits on it. */
const POLL_MS = 5_000;
/** … and while all is well. */
const HEALTHY_POLL_MS = 20_000;
const WORKLOAD_TIMEOUT_MS = 5_000;
/** The admin kubeconfig is renewed when its certificate has less than this left (Cluster API: half of a year's). */
const KUBECONFIG_RENEW_MS = 182 * 24 * 3600_000;
/** How long a Machine the controller created or deleted may take to show in its cache. */
const EXPECTATION_MS = 60_000;

const SUFFIX_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';
const randomSuffix = () => Array.from({ length: 5 }, () => SUFFIX_ALPHABET[randomInt(SUFFIX_ALPHABET.length)]).join('');

const cond = (type: string, status: 'True' | 'False' | 'Unknown', reason: string, message = ''): NewCapiCondition => ({ type, status, reason, message });
const list = (items: string[]) => items.map((i) => `* ${i}`).join('\n');
const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

/** A Machine's address the management cluster reaches it on (its InternalIP). */
const machineAddress = (m: api.Machine) => (m.status?.addresses ?? []).find((a) => a.type === 'InternalIP')?.address;

/** The condition a mirror pod gives its component on the Machine (Cluster API's static pod check). */
export function podCondition(type: string, podName: string, pod: api.Pod | undefined): NewCapiCondition {
  if (!pod) return cond(type, 'False', 'DoesNotExist', `Pod ${podName} does not exist`);
  if (isDeleting(pod)) return cond(type, 'False', 'Deleting', `Pod ${podName} is deleting`);
  const states = (pod.status?.containerStatuses ?? []).map((c) => {
    if (c.state?.waiting) return `${c.name} waiting: ${c.state.waiting.reason ?? ''}${c.state.waiting.message ? ` (${c.state.waiting.message})` : ''}`;
    if (c.state?.terminated) return `${c.name} terminated: ${c.state.terminated.reason ?? `exit code ${c.state.terminated.exitCode}`}`;
    return '';
  }).filter(Boolean);
  const detail = states.length ? `: ${states.join('; ')}` : '';
  switch (pod.status?.phase) {
    case 'Running': {
      const ready = (pod.status?.conditions ?? []).find((c) => c.type === 'Ready')?.status === 'True';
      if (ready) return cond(type, 'True', 'Running');
      const crashing = (pod.status?.containerStatuses ?? []).some((c) => c.state?.waiting?.reason === 'CrashLoopBackOff');
      return cond(type, 'False', crashing ? 'Failed' : 'Provisioning', `Pod ${podName} is running but not ready${detail}`);
    }
    case 'Pending':
      return cond(type, 'False', 'Provisioning', `Pod ${podName} is pending${detail}`);
    case 'Succeeded':
    case 'Failed':
      return cond(type, 'False', 'Failed', `All the containers of Pod ${podName} have been terminated${detail}`);
    default:
      return cond(type, 'Unknown', 'InspectionFailed', `Pod ${podName} reports phase ${pod.status?.phase ?? 'Unknown'}`);
  }
}

/** The client certificate's expiry of a kubeconfig (its first user's), or undefined. */
function kubeconfigCertExpiry(kubeconfig: string): number | undefined {
  try {
    const doc = parseYaml(kubeconfig) as { users?: Array<{ user?: Record<string, string> }> };
    const data = doc.users?.[0]?.user?.['client-certificate-data'];
    return data ? Date.parse(new X509Certificate(Buffer.from(data, 'base64')).validTo) : undefined;
  } catch {
    return undefined;
  }
}

/** What the workload cluster and its etcd say, gathered once per pass. */
interface Observation {
  reachable: boolean;
  message: string;
  initializedNow: boolean;
  controlPlaneNodes: api.Node[];
  pods: Map<string, api.Pod>;
  /** Per Machine name: its etcd member's report, or why none. */
  etcd: Map<string, MemberReport | Error>;
}

export function kubeadmControlPlaneController(ctx: CapiContext): Controller {
  const inf = informers(ctx);
  const paused = pausedCheck(ctx);
  const kcps = ctx.informer(KUBEADM_CONTROL_PLANES);
  const machines = inf.machines();
  const clusters = inf.clusters();
  const configs = ctx.informer(KUBEADM_CONFIGS);
  const remote = new RemoteClients(ctx);
  const etcd = new EtcdAccess();
  const events = ctx.events('kubeadm-control-plane-controller');
  /** Machines created or deleted that the cache does not show yet, per KCP. */
  const pending = new Map<string, Map<string, { until: number; deleted: boolean }>>();

  const target = (kcp: KCP) => eventTarget(kcp, 'KubeadmControlPlane', CONTROL_PLANE_API_VERSION);
  const ownerRef = (kcp: KCP) => controllerReference({ ...kcp, apiVersion: CONTROL_PLANE_API_VERSION, kind: 'KubeadmControlPlane' });
  const ownedMachines = (kcp: KCP) => machines.list().filter((m) => m.metadata.namespace === kcp.metadata.namespace && controllerOf(m)?.uid === kcp.metadata.uid);

  function expect(kcp: KCP, name: string, deleted: boolean): void {
    const key = keyOf(kcp);
    const forKcp = pending.get(key) ?? new Map();
    forKcp.set(name, { until: ctx.clock.now() + EXPECTATION_MS, deleted });
    pending.set(key, forKcp);
  }

  /** True when the cache shows every creation and deletion this controller made. */
  function cacheCaughtUp(kcp: KCP): boolean {
    const forKcp = pending.get(keyOf(kcp));
    if (!forKcp) return true;
    for (const [name, e] of forKcp) {
      const m = machines.get(name, kcp.metadata.namespace);
      const seen = e.deleted ? !m || isDeleting(m) : Boolean(m);
      if (seen || e.until < ctx.clock.now()) forKcp.delete(name);
    }
    return forKcp.size === 0;
  }

  function clusterOf(kcp: KCP): api.Cluster | undefined {
    const owner = (kcp.metadata.ownerReferences ?? []).find((r) => r.kind === 'Cluster');
    const name = owner?.name ?? kcp.metadata.labels?.[LABEL.clusterName];
    return name ? clusters.get(name, kcp.metadata.namespace) : undefined;
  }

  /** Reads the infrastructure machine behind a Machine (undefined when it is gone). */
  async function readInfra(machine: api.Machine): Promise<InfraMachine | undefined> {
    const ref = machine.spec?.infrastructureRef;
    if (!ref?.name) return undefined;
    return ctx.client.read(await ctx.resolve<InfraMachine>(ref), ref.name, machine.metadata.namespace);
  }

  // --- 1. certificates and the kubeconfig -----------------------------------------------------

  async function reconcileCertificates(kcp: KCP, cluster: api.Cluster): Promise<ClusterCertificates> {
    const clusterKey = { name: cluster.metadata.name, namespace: cluster.metadata.namespace! };
    const certs = await lookupOrGenerateCertificates(ctx.client, clusterKey, ownerRef(kcp));
    // Certificates another party made without a controller (the bootstrap provider's, a user's) become the KCP's, as Cluster API's ensureCertificatesOwnerRef does.
    for (const purpose of CERTIFICATE_PURPOSES) {
      const name = clusterSecretName(clusterKey.name, purpose);
      const secret = await ctx.client.read(resources.secrets, name, clusterKey.namespace);
      if (!secret || controllerOf(secret)) continue;
      const others = (secret.metadata.ownerReferences ?? []).filter((r) => r.uid !== kcp.metadata.uid);
      await ctx.client.update(resources.secrets, { ...secret, metadata: { ...secret.metadata, ownerReferences: [...others, ownerRef(kcp)] } });
    }
    return certs;
  }

  /** Writes `<cluster>-kubeconfig` when missing, adopts it when no one controls it, renews it when its certificate runs out. */
  async function reconcileKubeconfig(kcp: KCP, cluster: api.Cluster, certs: ClusterCertificates): Promise<void> {
    const clusterKey = { name: cluster.metadata.name, namespace: cluster.metadata.namespace! };
    const name = clusterSecretName(clusterKey.name, 'kubeconfig');
    const server = endpointUrl(cluster.spec!.controlPlaneEndpoint!);
    const fresh = async () => kubeconfigSecret(clusterKey, await adminKubeconfig(clusterKey.name, server, certs.ca), ownerRef(kcp));
    const secret = await ctx.client.read(resources.secrets, name, clusterKey.namespace);
    if (!secret) {
      await ctx.client.create(resources.secrets, await fresh());
      void events.event(target(kcp), 'Normal', 'KubeconfigCreated', `Created Secret ${clusterKey.namespace}/${name} (the workload cluster's admin kubeconfig for ${server})`);
      return;
    }
    const controller = controllerOf(secret);
    if (controller && controller.uid !== kcp.metadata.uid) return; // someone else's: left alone
    let current = secret;
    if (!controller) {
      const others = (secret.metadata.ownerReferences ?? []).filter((r) => r.uid !== kcp.metadata.uid);
      current = await ctx.client.update(resources.secrets, { ...secret, metadata: { ...secret.metadata, ownerReferences: [...others, ownerRef(kcp)] } });
    }
    const text = current.data?.value ? Buffer.from(current.data.value, 'base64').toString('utf8') : '';
    const expiry = kubeconfigCertExpiry(text);
    if (expiry !== undefined && expiry - ctx.clock.now() > KUBECONFIG_RENEW_MS) return;
    const renewed = await fresh();
    await ctx.client.update(resources.secrets, { ...current, type: renewed.type, data: renewed.data });
    void events.event(target(kcp), 'Normal', 'KubeconfigRenewed', expiry === undefined
      ? `Rewrote Secret ${clusterKey.namespace}/${name}: it held no client certificate to renew`
      : `Renewed Secret ${clusterKey.namespace}/${name}: its client certificate expires ${new Date(expiry).toISOString()}`);
  }

  // --- 2. what the workload cluster says ------------------------------------------------------

  /** The Node a Machine is: its nodeRef, else a workload Node named as its infrastructure machine (the bootstrap data's node name). */
  /**
   * Cluster API's reconcileCertificateExpiries: for each Machine with a Node whose KubeadmConfig
   * does not say yet when its certificates expire, the expiry of the certificate its API server
   * serves (a TLS handshake with the machine's address) goes into the config's certificates-expiry
   * annotation; the Machine controller copies it to the Machine's status.certificatesExpiryDate,
   * and rollout.before.certificatesExpiryDays rolls the Machine out before that. A machine that
   * does not answer is asked again at the next pass.
   */
  async function reconcileCertificateExpiries(own: api.Machine[], obs: Observation, certs: ClusterCertificates): Promise<void> {
    // The machines are asked at once: one that does not answer holds up none of the others.
    await Promise.all(own.map(async (m) => {
      if (isDeleting(m) || !nodeNameOf(m, obs)) return;
      const ref = m.spec?.bootstrap?.configRef;
      const config = ref?.name ? configs.get(ref.name, m.metadata.namespace) : undefined;
      if (!config || config.metadata.annotations?.[ANNOTATION.certificatesExpiry]) return;
      const address = machineAddress(m);
      if (!address) return;
      try {
        const expiry = await servingCertificateExpiry(address, API_SERVER_PORT, certs.ca.certPem);
        await ctx.client.mergePatch(KUBEADM_CONFIGS, config.metadata.name, config.metadata.namespace, { metadata: { annotations: { [ANNOTATION.certificatesExpiry]: rfc3339(expiry) } } });
      } catch (e) {
        log.debug({ machine: m.metadata.name, err: (e as Error).message }, 'certificate expiry not read');
      }
    }));
  }

  function nodeNameOf(machine: api.Machine, obs?: Observation): string | undefined {
    if (machine.status?.nodeRef?.name) return machine.status.nodeRef.name;
    const name = machine.spec?.infrastructureRef?.name;
    return name && obs?.controlPlaneNodes.some((n) => n.metadata.name === name) ? name : undefined;
  }

  async function observe(cluster: api.Cluster, kcp: KCP, own: api.Machine[], certs: ClusterCertificates, etcdManaged: boolean): Promise<Observation> {
    const obs: Observation = { reachable: false, message: '', initializedNow: false, controlPlaneNodes: [], pods: new Map(), etcd: new Map() };
    if (own.length === 0) {
      obs.message = 'no control-plane Machine exists yet';
      return obs;
    }
    try {
      const client = await remote.client(cluster);
      const signal = () => AbortSignal.timeout(WORKLOAD_TIMEOUT_MS);
      const nodes = await client.request<{ items?: api.Node[] }>('GET', `/api/v1/nodes?labelSelector=${encodeURIComponent(CONTROL_PLANE_NODE_ROLE)}`, { signal: signal() });
      obs.controlPlaneNodes = nodes.items ?? [];
      const kubeadmConfig = await client.request('GET', '/api/v1/namespaces/kube-system/configmaps/kubeadm-config', { signal: signal() }).catch((e) => { if (isNotFound(e)) return undefined; throw e; });
      const pods = await client.request<{ items?: api.Pod[] }>('GET', '/api/v1/namespaces/kube-system/pods', { signal: signal() });
      for (const p of pods.items ?? []) obs.pods.set(p.metadata.name, p);
      obs.reachable = true;
      obs.initializedNow = Boolean(kubeadmConfig) || obs.controlPlaneNodes.length > 0;
      if (!obs.initializedNow) obs.message = `the workload API at ${endpointUrl(cluster.spec!.controlPlaneEndpoint!)} answers but has neither kube-system/kubeadm-config nor a control-plane Node yet`;
    } catch (e) {
      obs.message = `the workload API at ${endpointUrl(cluster.spec?.controlPlaneEndpoint ?? {})} does not answer: ${(e as Error).message}`;
    }
    if (etcdManaged) {
      await Promise.all(own.filter((m) => !isDeleting(m)).map(async (m) => {
        const address = machineAddress(m);
        if (!address) return void obs.etcd.set(m.metadata.name, new Error(`Machine ${m.metadata.name} has no InternalIP address yet`));
        try {
          obs.etcd.set(m.metadata.name, await etcd.inspect(certs.etcd, etcdClientUrl(address)));
        } catch (e) {
          obs.etcd.set(m.metadata.name, e as Error);
        }
      }));
    }
    void kcp;
    return obs;
  }

  /** The etcd members, as the members that answer agree on them (the first report's list). */
  function etcdMembers(obs: Observation): MemberReport['members'] | undefined {
    for (const r of obs.etcd.values()) if (!(r instanceof Error)) return r.members;
    return undefined;
  }

  /** The conditions KCP keeps on one Machine, from the observation. */
  function machineConditions(kcp: KCP, machine: api.Machine, obs: Observation, initialized: boolean, etcdManaged: boolean, outdated: string[]): NewCapiCondition[] {
    const out: NewCapiCondition[] = [
      outdated.length ? cond(CONDITION.upToDate, 'False', 'NotUpToDate', list(outdated)) : cond(CONDITION.upToDate, 'True', 'UpToDate'),
    ];
    const components = CONTROL_PLANE_COMPONENTS.filter((c) => etcdManaged || c.component !== 'etcd');
    const nodeName = nodeNameOf(machine, obs);
    const unknownAll = (reason: string, message: string) => {
      for (const c of components) out.push(cond(c.condition, 'Unknown', reason, message));
      if (etcdManaged) out.push(cond(KCP_MACHINE_CONDITION.etcdMemberHealthy, 'Unknown', reason, message));
    };
    if (isDeleting(machine)) {
      unknownAll('Deleting', 'Machine is deleting');
      return out;
    }
    if (!initialized && !obs.reachable) {
      unknownAll('InspectionFailed', `Waiting for the control plane to be initialized (${obs.message})`);
      return out;
    }
    if (!nodeName) {
      const message = `Waiting for a Node${machine.spec?.providerID ? ` with spec.providerID ${machine.spec.providerID}` : ''} to exist`;
      for (const c of components) out.push(cond(c.condition, 'Unknown', 'InspectionFailed', message));
    } else if (!obs.reachable) {
      for (const c of components) out.push(cond(c.condition, 'Unknown', 'ConnectionDown', `Cannot reach the workload cluster: ${obs.message}`));
    } else {
      for (const c of components) {
        const name = `${c.component}-${nodeName}`;
        out.push(podCondition(c.condition, name, obs.pods.get(name)));
      }
    }
    if (!etcdManaged) return out;
    const report = obs.etcd.get(machine.metadata.name);
    const type = KCP_MACHINE_CONDITION.etcdMemberHealthy;
    const memberName = nodeName ?? machine.spec?.infrastructureRef?.name;
    if (!report) out.push(cond(type, 'Unknown', 'InspectionFailed', 'etcd not inspected'));
    else if (report instanceof Error) out.push(cond(type, 'False', 'InspectionFailed', `Failed to connect to the etcd member on this Machine: ${report.message}`));
    else {
      const self = report.members.find((m) => m.id === report.memberId);
      const problems: string[] = [];
      if (!self || self.name !== memberName) problems.push(`the etcd member at ${report.endpoint} is ${self?.name ? `named ${self.name}` : 'unnamed'}, not after Node ${memberName}`);
      if (report.leaderId === '0') problems.push('it has no leader');
      if (report.alarms.length) problems.push(`it reports alarms: ${report.alarms.join(', ')}`);
      if (report.errors.length) problems.push(`it reports errors: ${report.errors.join(', ')}`);
      const agreed = etcdMembers(obs);
      const names = (ms: MemberReport['members']) => ms.map((m) => m.name || m.id).sort().join(', ');
      if (agreed && names(agreed) !== names(report.members)) problems.push(`it reports the members [${names(report.members)}] while others report [${names(agreed)}]`);
      out.push(problems.length ? cond(type, 'False', 'NotHealthy', `etcd member ${memberName}: ${problems.join('; ')}`) : cond(type, 'True', 'Healthy'));
    }
    void kcp;
    return out;
  }

  /** Writes the Machine's KCP conditions when they change (the Machine controller keeps conditions it does not own). */
  async function writeMachineConditions(machine: api.Machine, updates: NewCapiCondition[]): Promise<api.Machine> {
    for (let attempt = 0; attempt < 3; attempt++) {
      const fresh = attempt === 0 ? machine : await ctx.client.read(MACHINES, machine.metadata.name, machine.metadata.namespace);
      if (!fresh) return machine;
      const now = new Date(ctx.clock.now());
      let conditions = fresh.status?.conditions ?? [];
      for (const u of updates) conditions = setCapiCondition(conditions, u, now);
      if (sameStatus({ conditions }, { conditions: fresh.status?.conditions })) return fresh;
      try {
        return await ctx.client.update(MACHINES, { ...fresh, status: { ...(fresh.status ?? {}), conditions } }, 'status');
      } catch (e) {
        if (isNotFound(e)) return fresh;
        if (!isConflict(e)) throw e;
      }
    }
    return machine;
  }

  // --- Machines ---------------------------------------------------------------------------------

  async function cloneInfrastructure(kcp: KCP, name: string, labels: Record<string, string>): Promise<ContractRef> {
    const templateRef = kcp.spec.machineTemplate.spec.infrastructureRef;
    const template = await ctx.client.read(await ctx.resolve<InfraMachineTemplate>(templateRef), templateRef.name, kcp.metadata.namespace);
    if (!template) throw new Error(`${templateRef.kind} ${kcp.metadata.namespace}/${templateRef.name} (spec.machineTemplate.spec.infrastructureRef) does not exist`);
    const kind = String(templateRef.kind).replace(/Template$/, '');
    const resource = await ctx.resolve({ apiGroup: templateRef.apiGroup, kind });
    await ctx.client.create(resource, {
      apiVersion: template.apiVersion, kind,
      metadata: {
        name, namespace: kcp.metadata.namespace,
        labels: { ...(template.spec?.template?.metadata?.labels ?? {}), ...labels },
        annotations: { ...(template.spec?.template?.metadata?.annotations ?? {}), [ANNOTATION.clonedFromName]: templateRef.name, [ANNOTATION.clonedFromGroupKind]: `${templateRef.kind}.${templateRef.apiGroup}` },
        ownerReferences: [ownerRef(kcp)],
      },
      spec: structuredClone(template.spec?.template?.spec ?? {}),
    });
    return { apiGroup: templateRef.apiGroup, kind, name };
  }

  /** Creates one Machine: the init Machine when `init`, else a joining one. */
  async function createMachine(kcp: KCP, cluster: api.Cluster, failureDomain: string | undefined, init: boolean): Promise<string> {
    const name = `${kcp.metadata.name}-${randomSuffix()}`;
    const namespace = kcp.metadata.namespace;
    const template = kcp.spec.machineTemplate;
    const labels: Record<string, string> = {
      ...(template.metadata?.labels ?? {}),
      [LABEL.clusterName]: cluster.metadata.name,
      [LABEL.controlPlane]: '',
      [CONTROL_PLANE_NAME_LABEL]: kcp.metadata.name,
    };
    const annotations: Record<string, string> = { ...(template.metadata?.annotations ?? {}) };
    // The replacement of a remediated Machine carries the remediation's record (retry limits read
    // it); read afresh, as the remediation wrote it a moment ago and the cache may not show it yet.
    const inProgress = ((await ctx.client.read(KUBEADM_CONTROL_PLANES, kcp.metadata.name, namespace)) ?? kcp).metadata.annotations?.[REMEDIATION_IN_PROGRESS_ANNOTATION];
    if (inProgress) annotations[REMEDIATION_FOR_ANNOTATION] = inProgress;
    annotations[KCP_CLEANUP_HOOK] = '';
    const infrastructureRef = await cloneInfrastructure(kcp, name, labels);
    const cleanup = async () => {
      await ctx.client.delete(await ctx.resolve(infrastructureRef), name, namespace).catch(() => undefined);
      await ctx.client.delete(KUBEADM_CONFIGS, name, namespace).catch(() => undefined);
    };
    try {
      await ctx.client.create(KUBEADM_CONFIGS, {
        apiVersion: BOOTSTRAP_API_VERSION, kind: 'KubeadmConfig',
        metadata: { name, namespace, labels, annotations: { ...(template.metadata?.annotations ?? {}) }, ownerReferences: [ownerRef(kcp)] },
        spec: machineKubeadmConfigSpec(kcp.spec.kubeadmConfigSpec, init),
      });
      const spec = template.spec;
      await ctx.client.create(MACHINES, {
        apiVersion: API_VERSION, kind: 'Machine',
        metadata: { name, namespace, labels, annotations, ownerReferences: [ownerRef(kcp)] },
        spec: {
          clusterName: cluster.metadata.name,
          version: kcp.spec.version,
          bootstrap: { configRef: { apiGroup: BOOTSTRAP_GROUP, kind: 'KubeadmConfig', name } },
          infrastructureRef,
          ...(failureDomain ? { failureDomain } : {}),
          ...(spec.readinessGates ? { readinessGates: spec.readinessGates } : {}),
          ...(spec.deletion ? { deletion: spec.deletion } : {}),
        },
      });
    } catch (e) {
      await cleanup();
      throw e;
    }
    expect(kcp, name, false);
    if (inProgress) await patchKcpAnnotations(kcp, { [REMEDIATION_IN_PROGRESS_ANNOTATION]: null });
    void events.event(target(kcp), 'Normal', 'SuccessfulCreate', `Created ${init ? 'the init' : 'a joining'} control-plane Machine ${name}${failureDomain ? ` in failure domain ${failureDomain}` : ''}`);
    return name;
  }

  async function patchKcpAnnotations(kcp: KCP, annotations: Record<string, string | null>): Promise<void> {
    await ctx.client.mergePatch(KUBEADM_CONTROL_PLANES, kcp.metadata.name, kcp.metadata.namespace, { metadata: { annotations } });
  }

  /** The etcd reports of the control plane's other Machines not being deleted: the members to act through. */
  const otherMemberReports = (machine: api.Machine, own: api.Machine[], obs: Observation): MemberReport[] =>
    own.filter((m) => m !== machine && !isDeleting(m)).map((m) => obs.etcd.get(m.metadata.name)).filter((r): r is MemberReport => Boolean(r) && !(r instanceof Error));

  /**
   * Deletes a control-plane Machine: the etcd leadership is moved off it to the newest other
   * healthy member; its member is removed through the others by KCP's pre-terminate hook once the
   * Machine is drained (runCleanupHooks), or now for a Machine made before the hook existed.
   * Returns why it cannot yet, if so.
   */
  async function deleteMachine(kcp: KCP, machine: api.Machine, own: api.Machine[], obs: Observation, certs: ClusterCertificates, etcdManaged: boolean, why: string): Promise<string | undefined> {
    const members = etcdMembers(obs);
    const memberName = nodeNameOf(machine, obs) ?? machine.spec?.infrastructureRef?.name;
    const member = members?.find((m) => m.name === memberName);
    if (etcdManaged && member) {
      const others = own.filter((m) => m !== machine && !isDeleting(m));
      const otherReports = otherMemberReports(machine, own, obs);
      if (otherReports.length === 0) return `no other etcd member answers to remove ${memberName}'s member through`;
      const self = obs.etcd.get(machine.metadata.name);
      const leaderId = otherReports[0].leaderId;
      if (leaderId === member.id && self && !(self instanceof Error)) {
        const newest = [...others].filter((m) => conditionIs(m, KCP_MACHINE_CONDITION.etcdMemberHealthy, 'True')).sort((a, b) => String(b.metadata.creationTimestamp).localeCompare(String(a.metadata.creationTimestamp)))[0];
        const targetReport = newest && obs.etcd.get(newest.metadata.name);
        if (targetReport && !(targetReport instanceof Error)) {
          await etcd.moveLeader(certs.etcd, self.endpoint, targetReport.memberId);
          void events.event(target(kcp), 'Normal', 'EtcdLeadershipMoved', `Moved etcd leadership from ${memberName} to ${newest.metadata.name}`);
        }
      }
      // With KCP's hook the member goes once the Machine is drained (runCleanupHooks); a Machine
      // made before the hook existed loses its member now, as it used to.
      if (!hasCleanupHook(machine)) {
        await etcd.removeMember(certs.etcd, otherReports.map((r) => r.endpoint), member.id);
        void events.event(target(kcp), 'Normal', 'EtcdMemberRemoved', `Removed etcd member ${memberName} (${member.id}) before deleting Machine ${machine.metadata.name}`);
      }
    }
    await ctx.client.delete(MACHINES, machine.metadata.name, machine.metadata.namespace);
    expect(kcp, machine.metadata.name, true);
    void events.event(target(kcp), 'Normal', 'SuccessfulDelete', `Deleted control-plane Machine ${machine.metadata.name}: ${why}`);
    return undefined;
  }

  /** Why scaling or a rollout step may not go on now (empty: it may), Machine by Machine. */
  function preflight(own: api.Machine[], initialized: boolean, etcdManaged: boolean, obs: Observation, exclude?: api.Machine): string[] {
    if (own.length === 0) return [];
    const out: string[] = [];
    const deleting = own.filter(isDeleting);
    if (deleting.length) out.push(`waiting for control-plane Machine${deleting.length > 1 ? 's' : ''} ${deleting.map((m) => m.metadata.name).join(', ')} to complete deletion`);
    if (!initialized) out.push(`waiting for the control plane to be initialized: ${obs.message || 'the workload API has not answered yet'}`);
    const types = healthConditions(etcdManaged);
    for (const m of own) {
      if (m === exclude || isDeleting(m)) continue;
      if (!nodeNameOf(m, obs)) {
        out.push(`Machine ${m.metadata.name} does not have a Node yet (phase ${m.status?.phase ?? 'Pending'})`);
        continue;
      }
      const bad = types.map((t) => machineCondition(m, t) ?? { type: t, status: 'Unknown', message: 'not reported yet' }).filter((c) => c.status !== 'True');
      if (bad.length) out.push(`Machine ${m.metadata.name}: ${bad.map((c) => `${c.type} is ${c.status}${c.message ? ` (${c.message.replace(/\n/g, ' ')})` : ''}`).join('; ')}`);
    }
    return out;
  }

  // --- the pass ---------------------------------------------------------------------------------

  interface Pass {
    conditions: NewCapiCondition[];
    scalingUp?: string;
    scalingDown?: string;
    rollingOut?: string;
    remediating?: string;
    initialized: boolean;
    requeueMs?: number;
  }

  async function writeStatus(kcp: KCP, own: api.Machine[], pass: Pass): Promise<void> {
    const fresh = (await ctx.client.read(KUBEADM_CONTROL_PLANES, kcp.metadata.name, kcp.metadata.namespace)) ?? kcp;
    const now = new Date(ctx.clock.now());
    let conditions = fresh.status?.conditions ?? [];
    const desired = fresh.spec.replicas ?? 1;
    const live = own.filter((m) => !isDeleting(m));
    const set = (c: NewCapiCondition) => (conditions = setCapiCondition(conditions, c, now));
    for (const c of pass.conditions) set(c);
    set(pass.scalingUp !== undefined || live.length < desired
      ? cond(KCP_CONDITION.scalingUp, 'True', 'ScalingUp', pass.scalingUp ?? `Scaling up from ${live.length} to ${desired} replicas`)
      : cond(KCP_CONDITION.scalingUp, 'False', 'NotScalingUp'));
    set(pass.scalingDown !== undefined || own.length > desired
      ? cond(KCP_CONDITION.scalingDown, 'True', 'ScalingDown', pass.scalingDown ?? `Scaling down from ${own.length} to ${desired} replicas`)
      : cond(KCP_CONDITION.scalingDown, 'False', 'NotScalingDown'));
    set(pass.rollingOut !== undefined ? cond(KCP_CONDITION.rollingOut, 'True', 'RollingOut', pass.rollingOut) : cond(KCP_CONDITION.rollingOut, 'False', 'NotRollingOut'));
    set(pass.remediating !== undefined ? cond(KCP_CONDITION.remediating, 'True', 'Remediating', pass.remediating) : cond(KCP_CONDITION.remediating, 'False', 'NotRemediating'));
    const notReady = own.filter((m) => !conditionIs(m, CONDITION.ready, 'True'));
    set(own.length === 0 ? cond(KCP_CONDITION.machinesReady, 'True', 'NoReplicas')
      : notReady.length ? cond(KCP_CONDITION.machinesReady, 'False', 'NotReady', list(notReady.map((m) => `Machine ${m.metadata.name}: ${machineCondition(m, CONDITION.ready)?.message || 'not Ready'}`)))
        : cond(KCP_CONDITION.machinesReady, 'True', 'Ready'));
    const outdated = own.filter((m) => conditionIs(m, CONDITION.upToDate, 'False'));
    set(outdated.length ? cond(KCP_CONDITION.machinesUpToDate, 'False', 'NotUpToDate', list(outdated.map((m) => `Machine ${m.metadata.name}: ${(machineCondition(m, CONDITION.upToDate)?.message ?? '').replace(/\n?\* /g, ' ').trim()}`)))
      : cond(KCP_CONDITION.machinesUpToDate, 'True', 'UpToDate'));
    set(isDeleting(fresh) ? cond(KCP_CONDITION.deleting, 'True', 'Deleting', pass.scalingDown ?? '') : cond(KCP_CONDITION.deleting, 'False', 'NotDeleting'));
    const lastRemediation = lastRemediationOf(fresh, own);
    const status: KCPStatus = {
      ...(fresh.status ?? {}),
      // The scale subresource's selector: the cluster's control-plane Machines (Cluster API's ControlPlaneSelectorForCluster).
      selector: `${LABEL.clusterName}=${clusterNameOf(fresh)},${LABEL.controlPlane}`,
      replicas: own.length,
      readyReplicas: own.filter((m) => conditionIs(m, CONDITION.ready, 'True')).length,
      availableReplicas: own.filter((m) => conditionIs(m, CONDITION.available, 'True')).length,
      upToDateReplicas: own.filter((m) => conditionIs(m, CONDITION.upToDate, 'True')).length,
      ...(own.length ? { version: lowestVersion(own.map((m) => m.spec?.version)) } : {}),
      ...(pass.initialized ? { initialization: { controlPlaneInitialized: true } } : {}),
      ...(lastRemediation ? { lastRemediation } : {}),
      ...(fresh.metadata.generation ? { observedGeneration: fresh.metadata.generation } : {}),
      conditions,
    };
    if (!sameStatus(status, fresh.status)) await ctx.client.update(KUBEADM_CONTROL_PLANES, { ...fresh, status }, 'status');
  }

  const clusterNameOf = (kcp: KCP) => clusterOf(kcp)?.metadata.name ?? kcp.metadata.labels?.[LABEL.clusterName] ?? '';

  /** status.lastRemediation: the remediation in progress, else the newest a Machine records. */
  function lastRemediationOf(kcp: KCP, own: api.Machine[]): KCPStatus['lastRemediation'] {
    const records = [kcp.metadata.annotations?.[REMEDIATION_IN_PROGRESS_ANNOTATION], ...own.map((m) => m.metadata.annotations?.[REMEDIATION_FOR_ANNOTATION])]
      .map(parseRemediationData).filter((r): r is RemediationData => Boolean(r)).sort((a, b) => b.timestamp.localeCompare(a.timestamp));
    const r = records[0];
    return r ? { machine: r.machine, time: r.timestamp, retryCount: r.retryCount } : kcp.status?.lastRemediation;
  }

  /** The health conditions while the cluster cannot be inspected yet, all saying why. */
  const uninspected = (message: string, etcdManaged: boolean): NewCapiCondition[] => [
    ...(etcdManaged ? [cond(KCP_CONDITION.etcdClusterHealthy, 'Unknown', 'InspectionFailed', message)] : []),
    cond(KCP_CONDITION.controlPlaneComponentsHealthy, 'Unknown', 'InspectionFailed', message),
  ];

  async function removeCleanupHook(machine: api.Machine): Promise<void> {
    await ctx.client.mergePatch(MACHINES, machine.metadata.name, machine.metadata.namespace, { metadata: { annotations: { [KCP_CLEANUP_HOOK]: null } } }).catch((e) => { if (!isNotFound(e)) throw e; });
  }

  /**
   * KCP's pre-terminate hook on deleted Machines: once the Machine controller waits on it (the
   * node is drained), the Machine's etcd member is removed through the other members, then the
   * hook goes. Returns whether it acted (the pass ends there).
   */
  async function runCleanupHooks(kcp: KCP, own: api.Machine[], obs: Observation, certs: ClusterCertificates, etcdManaged: boolean): Promise<boolean> {
    let acted = false;
    for (const m of own.filter((x) => isDeleting(x) && hasCleanupHook(x))) {
      if (machineCondition(m, CONDITION.deleting)?.reason !== 'WaitingForPreTerminateHook') continue;
      const members = etcdMembers(obs);
      const memberName = nodeNameOf(m, obs) ?? m.spec?.infrastructureRef?.name;
      const member = etcdManaged ? members?.find((x) => x.name === memberName) : undefined;
      if (member) {
        const reports = otherMemberReports(m, own, obs);
        if (reports.length === 0) continue;
        await etcd.removeMember(certs.etcd, reports.map((r) => r.endpoint), member.id);
        void events.event(target(kcp), 'Normal', 'EtcdMemberRemoved', `Removed etcd member ${memberName} (${member.id}) of deleted Machine ${m.metadata.name}, drained`);
      } else if (etcdManaged && !members) {
        continue; // etcd did not answer: the member may still be there
      }
      await removeCleanupHook(m);
      acted = true;
    }
    return acted;
  }

  async function reconcileDelete(kcp: KCP): Promise<SyncResult | void> {
    if (!(kcp.metadata.finalizers ?? []).includes(KCP_FINALIZER)) return;
    const own = ownedMachines(kcp);
    const clusterName = clusterNameOf(kcp);
    const workers = machines.list().filter((m) => m.metadata.namespace === kcp.metadata.namespace && m.spec?.clusterName === clusterName && !isControlPlane(m));
    let message: string | undefined;
    if (clusterName && workers.length) message = `waiting for worker Machines to be deleted first: ${workers.slice(0, 5).map((m) => m.metadata.name).join(', ')}${workers.length > 5 ? ` and ${workers.length - 5} more` : ''}`;
    else if (own.length) {
      for (const m of own) if (!isDeleting(m)) await ctx.client.delete(MACHINES, m.metadata.name, m.metadata.namespace).catch((e) => { if (!isNotFound(e)) throw e; });
      // The whole control plane goes: no member is worth removing one by one (Cluster API does the same).
      for (const m of own) if (hasCleanupHook(m)) await removeCleanupHook(m);
      message = `waiting for control-plane Machines ${own.map((m) => m.metadata.name).join(', ')} to be deleted`;
    }
    if (message) {
      await writeStatus(kcp, own, { conditions: [], initialized: kcp.status?.initialization?.controlPlaneInitialized === true, scalingDown: message });
      return { requeueAfterMs: POLL_MS };
    }
    await ctx.client.update(KUBEADM_CONTROL_PLANES, { ...kcp, metadata: { ...kcp.metadata, finalizers: (kcp.metadata.finalizers ?? []).filter((f) => f !== KCP_FINALIZER) } });
  }

  async function reconcile(kcp: KCP): Promise<SyncResult | void> {
    if (isDeleting(kcp)) return reconcileDelete(kcp);
    if (!(kcp.metadata.finalizers ?? []).includes(KCP_FINALIZER)) {
      await ctx.client.update(KUBEADM_CONTROL_PLANES, { ...kcp, metadata: { ...kcp.metadata, finalizers: [...(kcp.metadata.finalizers ?? []), KCP_FINALIZER] } });
      return;
    }
    const own = ownedMachines(kcp);
    const wasInitialized = kcp.status?.initialization?.controlPlaneInitialized === true;
    const pass: Pass = { conditions: [], initialized: wasInitialized };
    const finish = async (requeueMs?: number): Promise<SyncResult | void> => {
      await writeStatus(kcp, own, pass);
      return requeueMs ? { requeueAfterMs: requeueMs } : undefined;
    };
    const cluster = clusterOf(kcp);
    if (!cluster) {
      pass.conditions.push(cond(KCP_CONDITION.available, 'False', 'WaitingForCluster', 'waiting for a Cluster to name this KubeadmControlPlane in spec.controlPlaneRef (and own it)'));
      return finish();
    }
    if (paused(kcp) || cluster.spec?.paused) {
      const why = cluster.spec?.paused ? `Cluster ${cluster.metadata.name} is paused` : `KubeadmControlPlane has the ${ANNOTATION.paused} annotation`;
      const fresh = (await ctx.client.read(KUBEADM_CONTROL_PLANES, kcp.metadata.name, kcp.metadata.namespace)) ?? kcp;
      const conditions = setCapiCondition(fresh.status?.conditions, cond(KCP_CONDITION.paused, 'True', 'Paused', why), new Date(ctx.clock.now()));
      if (!sameStatus({ conditions }, { conditions: fresh.status?.conditions })) await ctx.client.update(KUBEADM_CONTROL_PLANES, { ...fresh, status: { ...(fresh.status ?? {}), conditions } }, 'status');
      return;
    }
    pass.conditions.push(cond(KCP_CONDITION.paused, 'False', 'NotPaused'));
    if (!cacheCaughtUp(kcp)) return { requeueAfterMs: 500 };

    const defaulted = defaultKubeadmControlPlane(kcp);
    const invalid = validateKubeadmControlPlane(defaulted);
    if (!findKubernetesVersion(defaulted.spec.version)) invalid.push(`spec.version: ${unknownVersionMessage(defaulted.spec.version)}`);
    if (invalid.length) {
      pass.conditions.push(cond(KCP_CONDITION.available, 'False', 'InvalidSpec', `invalid KubeadmControlPlane: ${invalid.join('; ')}`));
      pass.scalingUp = own.length < (kcp.spec.replicas ?? 1) ? `Scaling up from ${own.length} to ${kcp.spec.replicas ?? 1} replicas is blocked because:\n* the spec is invalid (see Available)` : undefined;
      return finish();
    }
    const spec = defaulted.spec;
    const desired = spec.replicas ?? 1;
    const etcdManaged = !spec.kubeadmConfigSpec?.clusterConfiguration?.etcd?.external;
    const blocked = (what: 'up' | 'down', reasons: string[]) => {
      const live = own.filter((m) => !isDeleting(m)).length;
      return `Scaling ${what} from ${what === 'up' ? live : own.length} to ${desired} replicas is blocked because:\n${list(reasons)}`;
    };

    // 1. Infrastructure, certificates, endpoint, kubeconfig.
    const infraName = cluster.spec?.infrastructureRef ? `${cluster.spec.infrastructureRef.kind} ${cluster.spec.infrastructureRef.name}` : 'its infrastructure';
    if (cluster.status?.initialization?.infrastructureProvisioned !== true) {
      const message = `waiting for Cluster ${cluster.metadata.name}'s infrastructure (${infraName}) to be provisioned (status.initialization.infrastructureProvisioned)`;
      pass.conditions.push(...uninspected(message, etcdManaged), cond(KCP_CONDITION.available, 'False', 'NotAvailable', message), cond(KCP_CONDITION.initialized, 'False', 'NotInitialized', message));
      if (own.length < desired) pass.scalingUp = blocked('up', [message]);
      return finish();
    }
    let certs: ClusterCertificates;
    try {
      certs = await reconcileCertificates(kcp, cluster);
      pass.conditions.push(cond(KCP_CONDITION.certificatesAvailable, 'True', 'Available'));
    } catch (e) {
      pass.conditions.push(cond(KCP_CONDITION.certificatesAvailable, 'False', 'InternalError', `the cluster's certificates could not be read or generated: ${(e as Error).message}`));
      await finish();
      throw e;
    }
    const endpoint = cluster.spec?.controlPlaneEndpoint;
    if (!endpoint?.host) {
      const message = `waiting for Cluster ${cluster.metadata.name}'s spec.controlPlaneEndpoint (from ${infraName})`;
      pass.conditions.push(...uninspected(message, etcdManaged), cond(KCP_CONDITION.available, 'False', 'NotAvailable', message), cond(KCP_CONDITION.initialized, 'False', 'NotInitialized', message));
      if (own.length < desired) pass.scalingUp = blocked('up', [message]);
      return finish();
    }
    await reconcileKubeconfig(kcp, cluster, certs);

    // 2. The Machines and what the workload cluster says of them.
    const obs = await observe(cluster, kcp, own, certs, etcdManaged);
    const initialized = wasInitialized || obs.initializedNow;
    pass.initialized = initialized;
    pass.conditions.push(initialized
      ? cond(KCP_CONDITION.initialized, 'True', 'Initialized')
      : cond(KCP_CONDITION.initialized, 'False', 'NotInitialized', own.length ? `waiting for the first control-plane Machine to initialize the control plane: ${obs.message}` : 'no control-plane Machine exists yet'));
    if (initialized && obs.reachable) await reconcileCertificateExpiries(own, obs, certs);
    const now = ctx.clock.now();
    const outdatedByName = new Map<string, string[]>();
    const updated: api.Machine[] = [];
    for (const m of own) {
      const reasons = outdatedReasons({ kcp: defaulted, machine: m, config: configs.get(m.spec?.bootstrap?.configRef?.name ?? m.metadata.name, m.metadata.namespace), infra: await readInfra(m), now });
      outdatedByName.set(m.metadata.name, reasons);
      updated.push(await writeMachineConditions(m, machineConditions(kcp, m, obs, initialized, etcdManaged, reasons)));
    }
    own.splice(0, own.length, ...updated);
    const live = own.filter((m) => !isDeleting(m));
    const isOutdated = (m: api.Machine) => (outdatedByName.get(m.metadata.name) ?? []).length > 0;

    // Aggregates: components and etcd.
    const componentTypes = CONTROL_PLANE_COMPONENTS.filter((c) => etcdManaged || c.component !== 'etcd').map((c) => c.condition);
    const componentProblems: string[] = [];
    for (const m of live) {
      const bad = componentTypes.map((t) => machineCondition(m, t)).filter((c) => c && c.status !== 'True');
      if (bad.length) componentProblems.push(`Machine ${m.metadata.name}: ${bad.map((c) => `${c!.type}: ${c!.message}`).join('; ')}`);
    }
    const machineNodes = new Set(own.map((m) => nodeNameOf(m, obs)).filter(Boolean));
    for (const n of obs.controlPlaneNodes) if (!machineNodes.has(n.metadata.name)) componentProblems.push(`Control plane Node ${n.metadata.name} does not have a corresponding Machine`);
    if (!obs.reachable && !initialized) pass.conditions.push(...uninspected(`waiting for the control plane to be initialized: ${obs.message}`, false));
    else if (!obs.reachable) pass.conditions.push(cond(KCP_CONDITION.controlPlaneComponentsHealthy, 'Unknown', 'ConnectionDown', obs.message));
    else pass.conditions.push(componentProblems.length ? cond(KCP_CONDITION.controlPlaneComponentsHealthy, 'False', 'NotHealthy', list(componentProblems)) : cond(KCP_CONDITION.controlPlaneComponentsHealthy, 'True', 'Healthy'));

    const members = etcdMembers(obs) ?? [];
    const memberOwner = (name: string) => live.find((m) => (nodeNameOf(m, obs) ?? m.spec?.infrastructureRef?.name) === name);
    const memberHealthy = (name: string) => {
      const m = memberOwner(name);
      return Boolean(m && conditionIs(m, KCP_MACHINE_CONDITION.etcdMemberHealthy, 'True'));
    };
    if (etcdManaged) {
      const problems: string[] = [];
      for (const m of live) {
        const c = machineCondition(m, KCP_MACHINE_CONDITION.etcdMemberHealthy);
        if (c && c.status !== 'True') problems.push(`Machine ${m.metadata.name}: ${c.message}`);
      }
      // A member of a deleted Machine KCP still holds with its hook is removed by the hook, not as an orphan.
      const held = new Set(own.filter((m) => isDeleting(m) && hasCleanupHook(m)).map((m) => nodeNameOf(m, obs) ?? m.spec?.infrastructureRef?.name));
      const orphans = members.filter((mem) => !memberOwner(mem.name) && !held.has(mem.name));
      for (const o of orphans) problems.push(`etcd member ${o.name || `(unstarted) ${o.id}`} does not have a corresponding Machine`);
      const voters = members.filter((mem) => !mem.isLearner);
      const healthyCount = voters.filter((mem) => memberHealthy(mem.name)).length;
      if (voters.length && healthyCount < Math.floor(voters.length / 2) + 1) problems.unshift(`${healthyCount} of ${plural(voters.length, 'voting etcd member')} healthy: etcd does not have quorum`);
      if (!initialized && members.length === 0) pass.conditions.push(cond(KCP_CONDITION.etcdClusterHealthy, 'Unknown', 'InspectionFailed', `waiting for the control plane to be initialized: ${obs.message}`));
      else if (members.length === 0) pass.conditions.push(cond(KCP_CONDITION.etcdClusterHealthy, 'Unknown', 'InspectionFailed', `no etcd member answers${problems.length ? `:\n${list(problems)}` : ''}`));
      else pass.conditions.push(problems.length ? cond(KCP_CONDITION.etcdClusterHealthy, 'False', 'NotHealthy', list(problems)) : cond(KCP_CONDITION.etcdClusterHealthy, 'True', 'Healthy'));

      // 3. Members without a Machine go, once no Machine is still provisioning and quorum allows.
      const provisioning = live.some((m) => !nodeNameOf(m, obs));
      for (const o of orphans) {
        if (provisioning || !o.name) break;
        if (!keepsQuorumWithout(members, memberHealthy, o.name).ok) break;
        const endpoints = [...obs.etcd.values()].filter((r): r is MemberReport => !(r instanceof Error)).map((r) => r.endpoint);
        await etcd.removeMember(certs.etcd, endpoints, o.id);
        void events.event(target(kcp), 'Normal', 'EtcdMemberRemoved', `Removed etcd member ${o.name} (${o.id}): no Machine of this control plane has it`);
        return finish(500);
      }
    }

    // 4. Deleted Machines held by KCP's hook: their etcd member goes once they are drained.
    if (await runCleanupHooks(kcp, own, obs, certs, etcdManaged)) return finish(500);

    const healthyMachines = live.filter((m) => nodeNameOf(m, obs) && healthConditions(etcdManaged).every((t) => conditionIs(m, t, 'True')));
    const voting = members.filter((mem) => !mem.isLearner);
    const quorate = !etcdManaged || (voting.length > 0 && voting.filter((mem) => memberHealthy(mem.name)).length >= Math.floor(voting.length / 2) + 1);
    pass.conditions.push(!initialized
      ? cond(KCP_CONDITION.available, 'False', 'NotAvailable', 'Control plane not yet initialized')
      : !quorate ? cond(KCP_CONDITION.available, 'False', 'NotAvailable', 'etcd does not have quorum (see EtcdClusterHealthy)')
        : healthyMachines.length === 0 ? cond(KCP_CONDITION.available, 'False', 'NotAvailable', 'There are no Machines with healthy control plane components, at least 1 required (see ControlPlaneComponentsHealthy)')
          : cond(KCP_CONDITION.available, 'True', 'Available'));

    // Machines a health check no longer finds unhealthy are not handed over any more.
    for (const m of live) {
      if (conditionIs(m, CONDITION.healthCheckSucceeded, 'True') && machineCondition(m, CONDITION.ownerRemediated)) {
        const fresh = await ctx.client.read(MACHINES, m.metadata.name, m.metadata.namespace);
        if (fresh) await ctx.client.update(MACHINES, { ...fresh, status: { ...(fresh.status ?? {}), conditions: (fresh.status?.conditions ?? []).filter((c) => c.type !== CONDITION.ownerRemediated) } }, 'status').catch((e) => { if (!isConflict(e) && !isNotFound(e)) throw e; });
      }
    }

    // 4. Remediation.
    const unhealthy = machinesToRemediate(live);
    if (unhealthy.length) {
      const result = await remediate(kcp, defaulted, own, unhealthy, obs, certs, initialized, etcdManaged, memberHealthy, members);
      pass.remediating = result.message;
      if (result.acted) return finish(500);
    }

    const maxSurge = Number(spec.rollout?.strategy?.rollingUpdate?.maxSurge ?? 1) || 0;
    const failureDomains = (cluster.status?.failureDomains ?? []).filter((d) => d.controlPlane !== false).map((d) => d.name);
    const scaleUp = async (reason: string): Promise<number | undefined> => {
      const reasons = preflight(own, initialized || own.length === 0, etcdManaged, obs);
      if (own.length > 0 && reasons.length) {
        pass.scalingUp = blocked('up', reasons);
        return POLL_MS;
      }
      const domain = nextFailureDomain(failureDomains, live, (m) => !isOutdated(m));
      await createMachine(kcp, cluster, domain, own.length === 0);
      pass.scalingUp = `Scaling up from ${live.length} to ${desired} replicas (${reason})`;
      return 500;
    };
    const scaleDown = async (candidates: api.Machine[], reason: string, blockedAs: 'down' | 'rollout'): Promise<number | undefined> => {
      const victim = machineToDelete(candidates, { isOutdated, isUnhealthy: (m) => !healthConditions(etcdManaged).every((t) => conditionIs(m, t, 'True')), domains: failureDomains });
      if (!victim) return undefined;
      const reasons = preflight(own, initialized, etcdManaged, obs, victim);
      if (reasons.length) {
        const text = blockedAs === 'down' ? blocked('down', reasons) : `Deleting outdated Machine ${victim.metadata.name} is blocked because:\n${list(reasons)}`;
        if (blockedAs === 'down') pass.scalingDown = text;
        else pass.rollingOut = `${pass.rollingOut}\n${text}`;
        return POLL_MS;
      }
      const cannot = await deleteMachine(kcp, victim, own, obs, certs, etcdManaged, reason);
      if (cannot) {
        const text = `Deleting Machine ${victim.metadata.name} is blocked because:\n* ${cannot}`;
        if (blockedAs === 'down') pass.scalingDown = text;
        else pass.rollingOut = `${pass.rollingOut}\n${text}`;
        return POLL_MS;
      }
      return 500;
    };

    // 5. Rollout.
    const outdated = live.filter(isOutdated);
    if (outdated.length) {
      pass.rollingOut = `Rolling out ${plural(outdated.length, 'outdated Machine')} (maxSurge ${maxSurge}):\n${list(outdated.map((m) => `Machine ${m.metadata.name}: ${outdatedByName.get(m.metadata.name)!.join('; ')}`))}`;
      if (live.length < desired + maxSurge) return finish(await scaleUp(`rolling out: ${plural(outdated.length, 'outdated Machine')} to replace`));
      return finish(await scaleDown(live, `rolling out (${outdatedByName.get(outdated[0].metadata.name)!.join('; ')})`, 'rollout'));
    }

    // 6. Scale.
    if (live.length < desired) return finish(await scaleUp(live.length === 0 ? 'the init Machine' : 'a joining Machine'));
    if (live.length > desired) return finish(await scaleDown(live, `scaling down from ${live.length} to ${desired} replicas`, 'down'));
    const waiting = !initialized || componentProblems.length > 0 || !quorate || own.some(isDeleting);
    return finish(waiting ? POLL_MS : HEALTHY_POLL_MS);
  }

  /** One remediation step; what it says goes to the Remediating condition. */
  async function remediate(kcp: KCP, defaulted: KCP, own: api.Machine[], unhealthy: api.Machine[], obs: Observation, certs: ClusterCertificates, initialized: boolean,
    etcdManaged: boolean, memberHealthy: (name: string) => boolean, members: MemberReport['members']): Promise<{ acted: boolean; message: string }> {
    const machine = pickMachineToRemediate(unhealthy, etcdManaged)!;
    const name = machine.metadata.name;
    const refuse = async (reason: 'CannotBeRemediated' | 'RemediationDeferred', message: string) => {
      await writeMachineConditions(machine, [cond(CONDITION.ownerRemediated, 'False', reason, message)]);
      return { acted: false, message: `Machine ${name} needs remediation: ${message}` };
    };
    const inProgress = parseRemediationData(kcp.metadata.annotations?.[REMEDIATION_IN_PROGRESS_ANNOTATION]);
    // A record whose replacement exists already (made before the record could be handed over) is stale.
    if (inProgress && own.some((m) => Date.parse(m.metadata.creationTimestamp ?? '') > Date.parse(inProgress.timestamp))) {
      await patchKcpAnnotations(kcp, { [REMEDIATION_IN_PROGRESS_ANNOTATION]: null });
      return { acted: true, message: `the remediation of Machine ${inProgress.machine} is complete` };
    }
    if (inProgress && inProgress.machine !== name) return refuse('RemediationDeferred', `waiting for the replacement of Machine ${inProgress.machine} (remediated at ${inProgress.timestamp}) before remediating another`);
    if (inProgress) return { acted: false, message: `Machine ${name} is being remediated` };
    const live = own.filter((m) => !isDeleting(m));
    if (initialized) {
      if (live.length <= 1) return refuse('CannotBeRemediated', 'KubeadmControlPlane can\'t remediate if current replicas are less or equal to 1');
      const provisioning = live.filter((m) => m !== machine && !nodeNameOf(m, obs) && !conditionIs(m, CONDITION.healthCheckSucceeded, 'False'));
      if (provisioning.length) return refuse('RemediationDeferred', `KubeadmControlPlane waiting for control plane Machine ${provisioning.map((m) => m.metadata.name).join(', ')} to complete provisioning before triggering remediation`);
      const deleting = own.filter(isDeleting);
      if (deleting.length) return refuse('RemediationDeferred', `KubeadmControlPlane waiting for control plane Machine ${deleting.map((m) => m.metadata.name).join(', ')} to complete deletion before triggering remediation`);
    }
    const retry = checkRetryLimits(machine, defaulted.spec.remediation, ctx.clock.now());
    if (!retry.allowed) return refuse(retry.deferred ? 'RemediationDeferred' : 'CannotBeRemediated', retry.message);
    if (initialized && etcdManaged) {
      const memberName = nodeNameOf(machine, obs) ?? machine.spec?.infrastructureRef?.name ?? name;
      const known = members.length ? members : [];
      const q = keepsQuorumWithout(known, memberHealthy, memberName);
      if (!known.length) {
        return refuse('CannotBeRemediated', `A control plane Machine needs remediation, but no etcd member answers with the member list, so removing this Machine could result in etcd quorum loss. Remediation cannot proceed`);
      }
      if (!q.ok) {
        return refuse('CannotBeRemediated', `A control plane Machine needs remediation, but removing this Machine could result in etcd quorum loss: ${q.healthy} of the ${plural(q.left, 'etcd member')} left would be healthy, ${q.quorum} needed for quorum. Remediation cannot proceed`);
      }
    }
    await writeMachineConditions(machine, [cond(CONDITION.ownerRemediated, 'False', 'MachineDeleting', 'Machine is deleting')]);
    const data: RemediationData = { machine: name, timestamp: rfc3339(new Date(ctx.clock.now())), retryCount: retry.retryCount };
    const cannot = await deleteMachine(kcp, machine, own, obs, certs, etcdManaged, `remediating: ${machineCondition(machine, CONDITION.healthCheckSucceeded)?.message ?? 'health check failed'}`);
    if (cannot) return refuse('RemediationDeferred', cannot);
    await patchKcpAnnotations(kcp, { [REMEDIATION_IN_PROGRESS_ANNOTATION]: JSON.stringify(data) });
    void events.event(eventTarget(machine, 'Machine'), 'Normal', 'MachineRemediated', `Deleted unhealthy control-plane Machine ${name} for remediation (retry ${retry.retryCount})`);
    return { acted: true, message: `Remediating Machine ${name} (retry ${retry.retryCount})` };
  }

  const controller = new Controller({
    name: 'kubeadm-control-plane-controller',
    clock: ctx.clock,
    resyncPeriodMs: 60_000,
    sync: async (key) => {
      const kcp = kcps.getByKey(key);
      if (!kcp) return void pending.delete(key);
      return reconcile(kcp);
    },
  });
  controller.watch(kcps);
  controller.watch(machines, (m) => {
    const owner = controllerOf(m);
    return owner?.kind === 'KubeadmControlPlane' && owner.apiVersion.startsWith(`${CONTROL_PLANE_GROUP}/`) ? `${m.metadata.namespace}/${owner.name}` : undefined;
  });
  controller.watch(clusters, (c, type, old) => {
    const ref = c.spec?.controlPlaneRef;
    const unpaused = onUnpause(kcps)(c, type, old);
    if (unpaused) return unpaused;
    return ref?.kind === 'KubeadmControlPlane' ? `${c.metadata.namespace}/${ref.name}` : undefined;
  });
  return controller;
}

