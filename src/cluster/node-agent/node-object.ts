// The Node as the kubelet registers and reports it, from the machine's facts: addresses, labels,
// taints, capacity and allocatable (the instance type less what the KubeletConfiguration
// reserves), nodeInfo, daemon endpoints and the four conditions. Pure: the heartbeat decides when
// to send what this computes.
import type * as api from '../../api/index.js';
import type { KubeletConfiguration } from './kubelet-files.js';

export const KUBELET_VERSION = 'v1.33.0+bosun';
export const KUBELET_PORT = 10250;
export const UNINITIALIZED_TAINT = { key: 'node.cloudprovider.kubernetes.io/uninitialized', value: 'true', effect: 'NoSchedule' };
const EPHEMERAL_STORAGE_KI = 100 * 1024 * 1024; // 100Gi of disk per machine
const DEFAULT_MAX_PODS = 110;

export interface NodeFacts {
  name: string;
  internalIP: string;
  hostname: string;
  instanceType: { name: string; cpu: number; memoryMiB: number };
  zone?: string;
  region?: string;
  podCIDR: string;
  bootId: string;
  machineId: string;
  kernelVersion: string;
  architecture: string;
  /** Labels from --node-labels. */
  labels: Record<string, string>;
  registerWithTaints: Array<{ key: string; value?: string; effect: string }>;
  externalCloudProvider: boolean;
  /** The KubeletConfiguration (maxPods, systemReserved, kubeReserved, evictionHard). */
  config: KubeletConfiguration;
  /** The Kubernetes version the machine was installed with (nodeInfo's kubelet and kube-proxy versions); default bosun's. */
  kubeletVersion?: string;
}

/** Node.js's process.arch in GOARCH's words, as nodeInfo and kubernetes.io/arch use them. */
export function goArch(arch: string): string {
  return ({ x64: 'amd64', ia32: '386', arm: 'arm', arm64: 'arm64', ppc64: 'ppc64le', s390x: 's390x' } as Record<string, string>)[arch] ?? arch;
}

/** A resource quantity in its base unit (cores for cpu, bytes otherwise). */
export function parseQuantity(q: string | number | undefined): number {
  if (q === undefined) return 0;
  if (typeof q === 'number') return q;
  const m = /^([0-9.]+)(m|Ki|Mi|Gi|Ti|k|M|G|T)?$/.exec(q.trim());
  if (!m) return 0;
  const factor: Record<string, number> = { m: 1e-3, Ki: 1024, Mi: 1024 ** 2, Gi: 1024 ** 3, Ti: 1024 ** 4, k: 1e3, M: 1e6, G: 1e9, T: 1e12 };
  return Number(m[1]) * (m[2] ? factor[m[2]] : 1);
}

export function capacityOf(f: NodeFacts): Record<string, string> {
  return {
    cpu: String(f.instanceType.cpu),
    memory: `${f.instanceType.memoryMiB * 1024}Ki`,
    pods: String(f.config.maxPods ?? DEFAULT_MAX_PODS),
    'ephemeral-storage': `${EPHEMERAL_STORAGE_KI}Ki`,
    'hugepages-1Gi': '0',
    'hugepages-2Mi': '0',
  };
}

/** Capacity less system and kube reservations and the hard eviction thresholds, as the kubelet computes it. */
export function allocatableOf(f: NodeFacts): Record<string, string> {
  const reserved = (r: string) => parseQuantity(f.config.systemReserved?.[r]) + parseQuantity(f.config.kubeReserved?.[r]);
  const eviction = (signal: string, fallback: string) => parseQuantity(f.config.evictionHard?.[signal] ?? fallback);
  const cpuMilli = Math.max(0, Math.round((f.instanceType.cpu - reserved('cpu')) * 1000));
  const memoryKi = Math.max(0, Math.floor((f.instanceType.memoryMiB * 1024 ** 2 - reserved('memory') - eviction('memory.available', '100Mi')) / 1024));
  const storageKi = Math.max(0, Math.floor(EPHEMERAL_STORAGE_KI - reserved('ephemeral-storage') / 1024 - EPHEMERAL_STORAGE_KI * 0.1));
  return {
    ...capacityOf(f),
    cpu: cpuMilli % 1000 === 0 ? String(cpuMilli / 1000) : `${cpuMilli}m`,
    memory: `${memoryKi}Ki`,
    'ephemeral-storage': `${storageKi}Ki`,
  };
}

export function nodeLabels(f: NodeFacts): Record<string, string> {
  const arch = goArch(f.architecture);
  return {
    'beta.kubernetes.io/arch': arch,
    'beta.kubernetes.io/os': 'linux',
    'kubernetes.io/arch': arch,
    'kubernetes.io/hostname': f.hostname,
    'kubernetes.io/os': 'linux',
    'node.kubernetes.io/instance-type': f.instanceType.name,
    ...(f.zone ? { 'topology.kubernetes.io/zone': f.zone } : {}),
    ...(f.region ? { 'topology.kubernetes.io/region': f.region } : {}),
    ...f.labels,
  };
}

/** The Node the agent creates when it first registers. */
export function nodeForRegistration(f: NodeFacts): api.Node {
  const taints = [...f.registerWithTaints];
  if (f.externalCloudProvider && !taints.some((t) => t.key === UNINITIALIZED_TAINT.key)) taints.push(UNINITIALIZED_TAINT);
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name: f.name,
      labels: nodeLabels(f),
      annotations: { 'volumes.kubernetes.io/controller-managed-attach-detach': 'true' },
    },
    spec: { podCIDR: f.podCIDR, podCIDRs: [f.podCIDR], ...(taints.length ? { taints } : {}) },
  };
}

const CONDITIONS: Array<{ type: string; healthy: string; reason: string; message: string }> = [
  { type: 'MemoryPressure', healthy: 'False', reason: 'KubeletHasSufficientMemory', message: 'kubelet has sufficient memory available' },
  { type: 'DiskPressure', healthy: 'False', reason: 'KubeletHasNoDiskPressure', message: 'kubelet has no disk pressure' },
  { type: 'PIDPressure', healthy: 'False', reason: 'KubeletHasSufficientPID', message: 'kubelet has sufficient PID available' },
  { type: 'Ready', healthy: 'True', reason: 'KubeletReady', message: 'kubelet is posting ready status' },
];

/** The node's status as of `now`, keeping each condition's transition time while it holds. */
export type NodeStatus = NonNullable<api.Node['status']>;

export function nodeStatus(f: NodeFacts, previous: api.NodeCondition[] | undefined, now: string): NodeStatus {
  const conditions = CONDITIONS.map((c) => {
    const before = previous?.find((p) => p.type === c.type);
    const lastTransitionTime = before && before.status === c.healthy ? before.lastTransitionTime : now;
    return { type: c.type, status: c.healthy, reason: c.reason, message: c.message, lastHeartbeatTime: now, lastTransitionTime };
  });
  return {
    capacity: capacityOf(f),
    allocatable: allocatableOf(f),
    conditions,
    addresses: [{ type: 'InternalIP', address: f.internalIP }, { type: 'Hostname', address: f.hostname }],
    daemonEndpoints: { kubeletEndpoint: { Port: KUBELET_PORT } },
    nodeInfo: {
      machineID: f.machineId,
      systemUUID: f.machineId.replace(/^(.{8})(.{4})(.{4})(.{4})(.{12})$/, '$1-$2-$3-$4-$5'),
      bootID: f.bootId,
      kernelVersion: f.kernelVersion,
      osImage: 'Bosun Local Machine',
      containerRuntimeVersion: 'bosun-node-agent://1.0.0',
      kubeletVersion: f.kubeletVersion ?? KUBELET_VERSION,
      kubeProxyVersion: f.kubeletVersion ?? KUBELET_VERSION,
      operatingSystem: 'linux',
      architecture: goArch(f.architecture),
    },
  };
}

/** Whether two statuses differ in anything but heartbeat times (a change is reported at once). */
export function statusChanged(a: NodeStatus | undefined, b: NodeStatus): boolean {
  const strip = (s: NodeStatus | undefined) => JSON.stringify({ ...s, conditions: (s?.conditions ?? []).map(({ lastHeartbeatTime: _, ...c }) => c) });
  return strip(a) !== strip(b);
}
