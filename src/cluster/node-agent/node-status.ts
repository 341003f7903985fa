// The node's presence in the API: registration (create the Node, or take over the existing one
// after a reboot), the Lease in kube-node-lease renewed every renewInterval (the heartbeat the
// node lifecycle controller watches), and the Node's status — computed every
// nodeStatusUpdateFrequency and written when it changed, or every nodeStatusReportFrequency
// otherwise, as the kubelet does since node leases.
import type { Logger } from '../../common/log.js';
import { sleep } from '../../common/sleep.js';
import type * as api from '../../api/index.js';
import { isAlreadyExists, isConflict, isNotFound, type EventRecorder, type KubeClient } from '../../kube/index.js';
import { nodeForRegistration, nodeLabels, nodeStatus, statusChanged, type NodeFacts, type NodeStatus } from './node-object.js';
import { LEASES, NODES } from './resources.js';
import { rfc3339, rfc3339Micro } from '../../common/time.js';

export const NODE_LEASE_NAMESPACE = 'kube-node-lease';

export interface NodeStatusTiming {
  leaseDurationSeconds: number;
  renewIntervalMs: number;
  statusUpdateMs: number;
  statusReportMs: number;
}


/**
 * A period lengthened by up to 4% at random, as the kubelet's lease and node status loops wait
 * (wait.JitterUntil with a jitter factor of 0.04, counted from the end of each round). Without
 * it, heartbeats that once finished together (queued behind one slow response) start together
 * every round from then on, and with many nodes on one API server such a burst never disperses.
 * Whole milliseconds: Node keeps one timer list per distinct duration, and ten thousand nodes'
 * fractional durations would make ten thousand lists.
 */
export function jittered(ms: number): number {
  return Math.round(ms * (1 + 0.04 * Math.random()));
}

/**
 * The Node as the reporter keeps it: without its managedFields, which it never reads — a third of
 * what 10,000 simulated nodes hold in one process (bench:nodes), and so of its garbage collector's
 * work.
 */
function kept(node: api.Node): api.Node {
  if (node.metadata) delete node.metadata.managedFields;
  return node;
}

export class NodeStatusReporter {
  private node?: api.Node;
  private lease?: api.Lease;
  private lastStatus?: NodeStatus;
  private lastReport = 0;

  constructor(
    private readonly client: KubeClient,
    private readonly facts: NodeFacts,
    private readonly timing: NodeStatusTiming,
    private readonly events: EventRecorder,
    private readonly log: Logger,
  ) {}

  /** Creates the Node, or updates the existing one's labels the kubelet owns; then reports status. */
  async register(): Promise<api.Node> {
    // The Node is created with its status, as the kubelet's initial Node is: one without capacity
    // and allocatable looks to the scheduler like a node with no room at all ("Insufficient cpu,
    // Insufficient memory, Too many pods") until the first status report.
    const wanted = { ...nodeForRegistration(this.facts), status: nodeStatus(this.facts, undefined, rfc3339()) };
    try {
      this.node = kept(await this.client.create(NODES, wanted));
      this.log.info('node registered');
    } catch (e) {
      if (!isAlreadyExists(e)) throw e;
      // Re-registration (a reboot): the kubelet keeps the existing Node and reconciles its own labels.
      const existing = await this.client.get(NODES, this.facts.name);
      const previousBoot = existing.status?.nodeInfo?.bootID;
      if (previousBoot && previousBoot !== this.facts.bootId) {
        void this.events.event(nodeRef(existing), 'Warning', 'Rebooted', `Node ${this.facts.name} has been rebooted, boot id: ${this.facts.bootId}`);
      }
      const labels = { ...existing.metadata.labels, ...nodeLabels(this.facts) };
      const spec = existing.spec?.podCIDR ? {} : { podCIDR: this.facts.podCIDR, podCIDRs: [this.facts.podCIDR] };
      this.node = kept(await this.client.mergePatch(NODES, this.facts.name, undefined, { metadata: { labels }, ...(Object.keys(spec).length ? { spec } : {}) }));
      this.log.info('node already registered; taken over');
    }
    void this.events.event(nodeRef(this.node!), 'Normal', 'Starting', 'Starting kubelet.');
    await this.reportStatus(true);
    void this.events.event(nodeRef(this.node!), 'Normal', 'NodeReady', `Node ${this.facts.name} status is now: NodeReady`);
    return this.node!;
  }

  /** Renews the lease and reports status until `signal` aborts. */
  async run(signal: AbortSignal): Promise<void> {
    await Promise.all([this.leaseLoop(signal), this.statusLoop(signal)]);
  }

  private async leaseLoop(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      try {
        await this.renewLease();
      } catch (e) {
        if (!signal.aborted) this.log.warn({ err: (e as Error).message }, 'failed to renew the node lease');
      }
      await sleep(jittered(this.timing.renewIntervalMs), signal);
    }
  }

  private async statusLoop(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      await sleep(jittered(this.timing.statusUpdateMs), signal);
      if (signal.aborted) return;
      try {
        await this.reportStatus(false);
      } catch (e) {
        if (!signal.aborted) this.log.warn({ err: (e as Error).message }, 'failed to update the node status');
      }
    }
  }

  async renewLease(): Promise<api.Lease> {
    const name = this.facts.name;
    const spec = { holderIdentity: name, leaseDurationSeconds: this.timing.leaseDurationSeconds, renewTime: rfc3339Micro() };
    if (this.lease) {
      try {
        this.lease = await this.client.update(LEASES, { ...this.lease, spec: { ...this.lease.spec, ...spec } });
        return this.lease;
      } catch (e) {
        if (!isConflict(e) && !isNotFound(e)) throw e;
        this.lease = undefined;
      }
    }
    const current = await this.client.read(LEASES, name, NODE_LEASE_NAMESPACE);
    if (current) {
      this.lease = await this.client.update(LEASES, { ...current, spec: { ...current.spec, ...spec } });
    } else {
      const owner = this.node ? [{ apiVersion: 'v1', kind: 'Node', name, uid: this.node.metadata.uid ?? '' }] : undefined;
      this.lease = await this.client.create(LEASES, {
        apiVersion: 'coordination.k8s.io/v1', kind: 'Lease',
        metadata: { name, namespace: NODE_LEASE_NAMESPACE, ...(owner ? { ownerReferences: owner } : {}) },
        spec,
      });
    }
    return this.lease!;
  }

  private async reportStatus(force: boolean): Promise<void> {
    const status = nodeStatus(this.facts, this.lastStatus?.conditions ?? this.node?.status?.conditions, rfc3339());
    if (!force && !statusChanged(this.lastStatus, status) && Date.now() - this.lastReport < this.timing.statusReportMs) return;
    this.node = kept(await this.client.mergePatch(NODES, this.facts.name, undefined, { status }, 'status'));
    this.lastStatus = status;
    this.lastReport = Date.now();
  }
}

/** Events about a Node name it by its name as uid, as the kubelet's node reference does. */
function nodeRef(node: api.Node): api.KubeObject {
  return { apiVersion: 'v1', kind: 'Node', metadata: { name: node.metadata.name, uid: node.metadata.name } };
}
