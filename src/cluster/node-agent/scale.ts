// Scale mode: many simulated machines inside one process, for scale work (npm run bench:nodes).
// Each simulated node runs the agent's own presence code — registration, the Lease renewed every
// renewInterval, the Node status — through NodeStatusReporter; what differs is the pod runtime:
// pods bound to a simulated node run no process (kwok-style), they are admitted with a pod IP from
// the node's CIDR and reported Running and Ready through the agent's own podStatus, and a pod
// deleted gracefully is finished at once (or after podStopMs, as containers taking that long to
// stop). No machine root, logs server or service proxy per node
// (those are a machine's own processes), and no TLS bootstrap: every node shares one KubeClient,
// so in scale mode the nodes act with the credentials that client carries (the admin kubeconfig
// in the bench), not as system:node:<name>.
import { setMaxListeners } from 'node:events';
import type { Logger } from '../../common/log.js';
import { sleep } from '../../common/sleep.js';
import { rfc3339 } from '../../common/time.js';
import type * as api from '../../api/index.js';
import { EventRecorder, Informer, isNotFound, type KubeClient } from '../../kube/index.js';
import type { NodeFacts } from './node-object.js';
import { NodeStatusReporter, type NodeStatusTiming } from './node-status.js';
import { allocatePodIP, ownedByJob } from './pod-spec.js';
import { completedState, podStatus, type ContainerRecord } from './pod-status.js';
import { PODS } from './resources.js';

export interface SimulatedNodesOptions {
  /** How many nodes, named `<prefix><index>` (default prefix `sim-node-`). */
  count: number;
  namePrefix?: string;
  /** The first node's index (default 0): several processes simulating nodes of one cluster each take their own range. */
  firstIndex?: number;
  /** Lease renewal period (default 10 s, as the kubelet). */
  leaseRenewIntervalMs?: number;
  /** Node status computation period (default 10 s, nodeStatusUpdateFrequency). */
  statusUpdateMs?: number;
  /** How long a gracefully deleted pod takes to stop before it is finished (default 0: at once). */
  podStopMs?: number;
  /** How many nodes register at the same time (default 20). */
  registerConcurrency?: number;
  /** Called with the duration of every Lease renewal request, in milliseconds. */
  onLeaseRenewed?: (ms: number) => void;
  log: Logger;
}

/** The facts of the i-th simulated node: a 4-core machine in one of three zones, its own /24 for pods. */
export function simulatedNodeFacts(name: string, index: number): NodeFacts {
  const hi = index >> 8;
  const lo = index & 255;
  return {
    name, hostname: name, internalIP: `172.16.${hi}.${lo}`, podCIDR: `10.${128 + hi}.${lo}.0/24`,
    instanceType: { name: 'simulated', cpu: 4, memoryMiB: 16384 },
    zone: `local-${'abc'[index % 3]}`, region: 'local',
    bootId: `00000000-0000-4000-8000-${index.toString(16).padStart(12, '0')}`,
    machineId: index.toString(16).padStart(32, '0'),
    kernelVersion: 'simulated', architecture: process.arch,
    labels: { 'node-role.kubernetes.io/worker': '', 'bosun.local/simulated': 'true' },
    registerWithTaints: [], externalCloudProvider: false, config: {},
  };
}

/** A node reporter whose Lease renewals are timed. */
class TimedReporter extends NodeStatusReporter {
  constructor(client: KubeClient, facts: NodeFacts, timing: NodeStatusTiming, events: EventRecorder, log: Logger, private readonly observe?: (ms: number) => void) {
    super(client, facts, timing, events, log);
  }

  override async renewLease(): Promise<api.Lease> {
    const started = performance.now();
    const lease = await super.renewLease();
    this.observe?.(performance.now() - started);
    return lease;
  }
}

interface SimulatedNode {
  facts: NodeFacts;
  reporter: TimedReporter;
  /** Pod uid → pod IP, for the pods this node runs. */
  podIPs: Map<string, string>;
}

export class SimulatedNodes {
  private readonly stopper = new AbortController();
  private readonly nodes = new Map<string, SimulatedNode>();
  private readonly informer: Informer<api.Pod>;
  private readonly events: EventRecorder;
  private loops: Array<Promise<void>> = [];
  /** Pods being stopped (podStopMs), by uid: each is finished once. */
  private readonly stopping = new Set<string>();

  constructor(private readonly client: KubeClient, private readonly o: SimulatedNodesOptions) {
    // Every node's heartbeat sleeps on this one signal: thousands of listeners are expected.
    setMaxListeners(0, this.stopper.signal);
    this.events = new EventRecorder(client, { component: 'kubelet', host: 'simulated' });
    // One watch for the pods of every simulated node instead of one per node.
    this.informer = new Informer(client, PODS, {});
    this.informer.on((type, pod) => {
      if (type !== 'delete') void this.syncPod(pod);
      else this.nodes.get(pod.spec?.nodeName ?? '')?.podIPs.delete(pod.metadata.uid ?? '');
    });
  }

  get names(): string[] {
    return [...this.nodes.keys()];
  }

  /** Registers every node (Ready), then keeps their Leases and status until stop(). */
  async start(): Promise<void> {
    const signal = this.stopper.signal;
    const prefix = this.o.namePrefix ?? 'sim-node-';
    const timing: NodeStatusTiming = {
      leaseDurationSeconds: 40, renewIntervalMs: this.o.leaseRenewIntervalMs ?? 10_000,
      statusUpdateMs: this.o.statusUpdateMs ?? 10_000, statusReportMs: 5 * 60_000,
    };
    const pending = Array.from({ length: this.o.count }, (_, i) => (this.o.firstIndex ?? 0) + i);
    const register = async (): Promise<void> => {
      for (let i = pending.shift(); i !== undefined && !signal.aborted; i = pending.shift()) {
        const facts = simulatedNodeFacts(`${prefix}${i}`, i);
        const log = this.o.log.child({ node: facts.name });
        const reporter = new TimedReporter(this.client, facts, timing, this.events, log, this.o.onLeaseRenewed);
        await reporter.register();
        await reporter.renewLease();
        this.nodes.set(facts.name, { facts, reporter, podIPs: new Map() });
        // Kubelets start at different times, so their renewals are spread over the interval; nodes
        // registered together would renew in lockstep, a burst no real cluster sees.
        this.loops.push(sleep(Math.random() * timing.renewIntervalMs, signal).then(() => signal.aborted ? undefined : reporter.run(signal)));
      }
    };
    await Promise.all(Array.from({ length: this.o.registerConcurrency ?? 20 }, register));
    signal.throwIfAborted();
    this.informer.start(signal);
    await this.informer.waitForSync(signal);
    for (const pod of this.informer.list()) void this.syncPod(pod);
  }

  /** A pod bound to a simulated node: running and ready at once, or finished when deleted gracefully. */
  private async syncPod(pod: api.Pod): Promise<void> {
    const node = this.nodes.get(pod.spec?.nodeName ?? '');
    if (!node || this.stopper.signal.aborted) return;
    const { name, namespace } = pod.metadata;
    const uid = pod.metadata.uid ?? '';
    try {
      if (pod.metadata.deletionTimestamp) {
        if (this.stopping.has(uid)) return;
        this.stopping.add(uid);
        try {
          if (this.o.podStopMs) await sleep(this.o.podStopMs, this.stopper.signal);
          if (this.stopper.signal.aborted) return;
          node.podIPs.delete(uid);
          await this.client.delete(PODS, name, namespace, { gracePeriodSeconds: 0, preconditions: { uid } });
        } finally {
          this.stopping.delete(uid);
        }
        return;
      }
      if (pod.status?.phase === 'Running' || pod.status?.phase === 'Succeeded' || pod.status?.phase === 'Failed') return;
      let podIP = pod.spec?.hostNetwork ? node.facts.internalIP : node.podIPs.get(uid);
      if (!podIP) {
        podIP = allocatePodIP(node.facts.podCIDR, new Set(node.podIPs.values()));
        if (!podIP) throw new Error(`no free pod IP left in ${node.facts.podCIDR}`);
        node.podIPs.set(uid, podIP);
      }
      const now = rfc3339();
      // A Job's containers complete at once, as on a machine's node agent (pod-worker.ts); the rest run.
      const completes = pod.spec?.restartPolicy !== 'Always' && ownedByJob(pod);
      const records: ContainerRecord[] = (pod.spec?.containers ?? []).map((c) => {
        const containerID = `simulated://${uid}/${c.name}`;
        return {
          name: c.name, image: c.image ?? '', containerID, restartCount: 0, lastState: {},
          ...(completes
            ? { state: { terminated: completedState(now, now, containerID) }, ready: false, started: false }
            : { state: { running: { startedAt: now } }, ready: true, started: true }),
        };
      });
      const status = podStatus(pod, records, { podIP, hostIP: node.facts.internalIP, startTime: now }, now);
      await this.client.mergePatch(PODS, name, namespace, { status }, 'status');
    } catch (e) {
      if (!isNotFound(e)) this.o.log.warn({ pod: `${namespace}/${name}`, err: (e as Error).message }, 'failed to sync a simulated pod');
    }
  }

  /** Stops every heartbeat and the pod watch; the Nodes stay (their Leases expire, as on a power cut). */
  async stop(): Promise<void> {
    this.stopper.abort();
    await Promise.all(this.loops);
    await this.informer.stop();
  }
}
