// What a pod requests and what a node has left, as kube-scheduler counts them (its NodeInfo and
// the resource helpers it shares with the kubelet):
//   - a pod's request = max(sum of its containers + its sidecars, each init container on top of
//     the sidecars started before it) + the pod overhead;
//   - a node's requested = the sum over the non-terminal pods bound (or assumed) to it;
//   - for scoring only, a container without a cpu or memory request counts as 100m / 200Mi, so
//     that best-effort pods still spread (kube's "non-zero" requests).
import { QuantityError, quantityMilliValue, quantityValue } from '../../kube/quantity.js';
import type { Container, ContainerPort, Node, Pod, ResourceList } from './types.js';

export interface Resources {
  milliCPU: number;
  memory: number;
  ephemeralStorage: number;
  /** Extended resources (example.com/gpu) and hugepages, in whole units. */
  scalar: Record<string, number>;
}

export const DEFAULT_MILLI_CPU_REQUEST = 100;
export const DEFAULT_MEMORY_REQUEST = 200 * 1024 * 1024;

function empty(): Resources {
  return { milliCPU: 0, memory: 0, ephemeralStorage: 0, scalar: {} };
}

/**
 * Resources other than cpu, memory, ephemeral-storage and pods that the scheduler counts (kube's
 * IsScalarResourceName): extended (`example.com/gpu`), `kubernetes.io/`-prefixed, hugepages and
 * attachable volumes.
 */
export function isScalarResource(name: string): boolean {
  return name.startsWith('hugepages-') || name.startsWith('attachable-volumes-') || (name.includes('/') && !name.startsWith('requests.'));
}

/** A resource list as Resources; unparsable quantities throw a QuantityError. */
export function toResources(list: ResourceList | null | undefined): Resources {
  const r = empty();
  for (const [name, quantity] of Object.entries(list ?? {})) {
    if (name === 'cpu') r.milliCPU = quantityMilliValue(quantity);
    else if (name === 'memory') r.memory = quantityValue(quantity);
    else if (name === 'ephemeral-storage') r.ephemeralStorage = quantityValue(quantity);
    else if (isScalarResource(name)) r.scalar[name] = quantityValue(quantity);
  }
  return r;
}

function add(into: Resources, other: Resources): void {
  into.milliCPU += other.milliCPU;
  into.memory += other.memory;
  into.ephemeralStorage += other.ephemeralStorage;
  for (const [name, v] of Object.entries(other.scalar)) into.scalar[name] = (into.scalar[name] ?? 0) + v;
}

function max(into: Resources, other: Resources): void {
  into.milliCPU = Math.max(into.milliCPU, other.milliCPU);
  into.memory = Math.max(into.memory, other.memory);
  into.ephemeralStorage = Math.max(into.ephemeralStorage, other.ephemeralStorage);
  for (const [name, v] of Object.entries(other.scalar)) into.scalar[name] = Math.max(into.scalar[name] ?? 0, v);
}

function copy(r: Resources): Resources {
  return { ...r, scalar: { ...r.scalar } };
}

const isSidecar = (c: Container) => c.restartPolicy === 'Always';

// Pods from the informer are immutable snapshots (an update is a new object), so what each one
// requests is computed once, not on every scheduling cycle for every pod in the cluster.
const memo = [new WeakMap<Pod, Resources>(), new WeakMap<Pod, Resources>()];

/**
 * A pod's effective request. With `nonZero`, containers without a cpu/memory request count the
 * scoring defaults instead. The result is shared: do not modify it.
 */
export function podRequests(pod: Pod, nonZero = false): Resources {
  const cache = memo[nonZero ? 1 : 0];
  let requests = cache.get(pod);
  if (!requests) cache.set(pod, (requests = computePodRequests(pod, nonZero)));
  return requests;
}

function computePodRequests(pod: Pod, nonZero: boolean): Resources {
  const of = (c: Container) => {
    const r = toResources(c.resources?.requests);
    if (nonZero) {
      const requests = c.resources?.requests ?? {};
      if (!('cpu' in requests)) r.milliCPU = DEFAULT_MILLI_CPU_REQUEST;
      if (!('memory' in requests)) r.memory = DEFAULT_MEMORY_REQUEST;
    }
    return r;
  };
  const total = empty();
  for (const c of pod.spec.containers ?? []) add(total, of(c));
  // Init containers run one at a time, each beside the sidecars started before it; sidecars keep
  // running beside the regular containers.
  const sidecars = empty();
  const initPeak = empty();
  for (const c of pod.spec.initContainers ?? []) {
    const request = of(c);
    if (isSidecar(c)) {
      add(total, request);
      add(sidecars, request);
      max(initPeak, sidecars);
    } else {
      const running = copy(request);
      add(running, sidecars);
      max(initPeak, running);
    }
  }
  max(total, initPeak);
  if (pod.spec.overhead) add(total, toResources(pod.spec.overhead));
  return total;
}

export interface HostPort {
  hostIP: string;
  protocol: string;
  port: number;
}

/** The host ports a pod's containers (and sidecars) bind; "" and 0.0.0.0 mean every address. */
export function podHostPorts(pod: Pod): HostPort[] {
  const containers = [...(pod.spec.containers ?? []), ...(pod.spec.initContainers ?? []).filter(isSidecar)];
  return containers
    .flatMap((c) => c.ports ?? [])
    .filter((p: ContainerPort) => (p.hostPort ?? 0) > 0)
    .map((p) => ({ hostIP: p.hostIP || '0.0.0.0', protocol: p.protocol || 'TCP', port: p.hostPort! }));
}

/** Whether two host ports collide: same port and protocol, and an address in common. */
export function portsConflict(a: HostPort, b: HostPort): boolean {
  return a.port === b.port && a.protocol === b.protocol && (a.hostIP === b.hostIP || a.hostIP === '0.0.0.0' || b.hostIP === '0.0.0.0');
}

/** A node with what its pods use: kube-scheduler's NodeInfo. */
export interface NodeInfo {
  node: Node;
  name: string;
  labels: Record<string, string>;
  pods: readonly Pod[];
  allocatable: Resources;
  allowedPods: number;
  requested: Resources;
  nonZeroRequested: Resources;
  usedPorts: HostPort[];
}

/** `compute()`, or `fallback` when some quantity in it cannot be parsed. */
function orElse<T>(compute: () => T, fallback: T): T {
  try {
    return compute();
  } catch (e) {
    if (e instanceof QuantityError) return fallback;
    throw e;
  }
}

/**
 * A node and what its pods use. Quantities the API server let through but that do not parse
 * must not stop every other pod from being scheduled: a bound pod's unparsable request counts as
 * nothing, and a node with an unparsable allocatable offers nothing.
 */
export function nodeInfo(node: Node, pods: readonly Pod[]): NodeInfo {
  const allocatableList = node.status?.allocatable ?? {};
  const requested = empty();
  const nonZeroRequested = empty();
  for (const pod of pods) {
    add(requested, orElse(() => podRequests(pod), empty()));
    add(nonZeroRequested, orElse(() => podRequests(pod, true), empty()));
  }
  return {
    node,
    name: node.metadata.name,
    labels: node.metadata.labels ?? {},
    pods,
    allocatable: orElse(() => toResources(allocatableList), empty()),
    // A node that does not say how many pods it takes takes none, as in kube.
    allowedPods: orElse(() => (allocatableList.pods === undefined ? 0 : quantityValue(allocatableList.pods)), 0),
    requested,
    nonZeroRequested,
    usedPorts: pods.flatMap(podHostPorts),
  };
}

/**
 * NodeInfos kept from one scheduling cycle to the next: a node whose object and pods are the same
 * objects as last time (informer objects are replaced, never changed, on update) keeps its
 * NodeInfo, so a cycle costs a comparison per pod rather than a recount of the cluster.
 */
export class NodeInfoCache {
  private infos = new Map<string, NodeInfo>();

  get(nodes: readonly Node[], podsByNode: ReadonlyMap<string, readonly Pod[]>): NodeInfo[] {
    const next = new Map<string, NodeInfo>();
    const out = nodes.map((node) => {
      const pods = podsByNode.get(node.metadata.name) ?? [];
      const previous = this.infos.get(node.metadata.name);
      const same = previous && previous.node === node && previous.pods.length === pods.length && previous.pods.every((p, i) => p === pods[i]);
      const info = same ? previous : nodeInfo(node, pods);
      next.set(node.metadata.name, info);
      return info;
    });
    this.infos = next;
    return out;
  }
}
