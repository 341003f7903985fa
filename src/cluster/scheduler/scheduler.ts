// The scheduler's controller shell, around the pure core in schedule.ts. It watches pods, nodes
// (and the Services, ReplicaSets, StatefulSets and Namespaces that spreading and affinity read),
// and schedules one pod at a time, as kube-scheduler's scheduling cycle does:
//
//   pending pod (unbound, spec.schedulerName ours, not terminating)
//     → schedule against a snapshot (informers + assumed pods)
//     → fits: assume it onto the node in the cache, then bind (POST pods/<name>/binding) without
//       waiting — the next pod already sees the assumed placement; a failed binding forgets the
//       assumption and the pod comes back after its back-off; success records a `Scheduled` Event;
//     → fits nowhere: a `FailedScheduling` Warning Event and the `PodScheduled=False` condition
//       (reason `Unschedulable`) with kube's message; the pod waits among the unschedulable. Where
//       deleting pods of lower priority would make room (preemption.ts), they are preempted — the
//       DisruptionTarget condition, deleted, a `Preempted` Event — and the pod is nominated to the
//       node (status.nominatedNodeName, where pods of lower priority do not get the room) until
//       they are gone; pods nominated elsewhere count on their node for pods of no higher priority.
//     → fits, with claims of a WaitForFirstConsumer class not bound yet (volume-binding.ts): the
//       binding first writes volume.kubernetes.io/selected-node on them and waits (up to 10
//       minutes, kube's bind timeout) until the binder or a provisioner has bound them; a claim
//       that is not bound in time fails the binding, which is retried after the back-off.
//
// Unschedulable pods are retried when the cluster changes in a way that could help them — a node
// added, or its labels, taints, unschedulable flag or allocatable changed, that now passes the
// pod's filters (kube's queueing hints; any such node change for pods with inter-pod affinity or
// spread constraints); a bound pod deleted or
// finished; for pods with inter-pod affinity or spread constraints, a pod bound — but no sooner
// than their back-off (1 s doubling to 10 s per attempt, kube's defaults), and at the latest every
// 5 minutes (kube's podMaxInUnschedulablePodsDuration); pods with claims, when a claim, volume or
// StorageClass changes. A back-off only paces a busy scheduler: with
// nothing else to schedule, the pod whose back-off ends first is tried at once (kube-scheduler's
// SchedulerPopFromBackoffQ, KEP-5142) — at an install, the masters' pods no longer wait out the
// back-off their attempts while the nodes registered built up.
//
// It runs on the component manager (`addScheduler`), leading through the Lease
// kube-system/kube-scheduler as kube-scheduler does; `bosun scheduler` is that declaration.
import { Counter, Gauge } from 'prom-client';
import type { MetaLabelSelector } from '../../common/label-selectors.js';
import type { Logger } from '../../common/log.js';
import type * as api from '../../api/index.js';
import { type KubeClient, isConflict, isNotFound, resourcePath } from '../../kube/client.js';
import { rfc3339 } from '../../common/time.js';
import { Controller, type SyncContext, type SyncResult, TerminalError } from '../../kube/controller.js';
import { EventRecorder } from '../../kube/events.js';
import { type Clock, realClock, sleepOn } from '../../kube/clock.js';
import type { EventType, Informer, InformerFactory } from '../../kube/informer.js';
import type { Manager, Runnable } from '../../kube/manager.js';
import { registry } from '../../kube/metrics.js';
import { QuantityError } from '../../kube/quantity.js';
import { resources } from '../../kube/resources.js';
import { isTerminal, podKey, SchedulerCache } from './cache.js';
import { NodeInfoCache } from './resources.js';
import { buildNodeInfos, ERR_NO_NODES_AVAILABLE, schedulePod } from './schedule.js';
import { type DisruptionBudget, findPreemption, priorityOf, type Preemption } from './preemption.js';
import { fromLabelSelectorObject } from '../../common/label-selectors.js';
import { filterNode, preFilter } from './filters.js';
import { pinnedNodeNames } from './node-affinity.js';
import { defaultSpreadSelector } from './topology-spread.js';
import { podClaimNames, volumeBindingPreFilter } from './volume-binding.js';
import { SELECTED_NODE } from '../../kube/storage.js';
import { DEFAULT_SCHEDULER_NAME, type Node, type Pod, type StorageSnapshot } from './types.js';

export const SCHEDULING_GATED_MESSAGE = 'Scheduling is blocked due to non-empty scheduling gates';

/** The component as the manager runs it: kube-scheduler's Lease and Event source. */
export const SCHEDULER_COMPONENT = { name: 'scheduler', lease: { namespace: 'kube-system', name: 'kube-scheduler' }, eventSource: DEFAULT_SCHEDULER_NAME };

const attempts = new Counter({
  name: 'scheduler_schedule_attempts_total',
  help: 'Scheduling attempts by result (scheduled, unschedulable, error).',
  labelNames: ['result'],
  registers: [registry],
});
const pendingPods = new Gauge({
  name: 'scheduler_pending_pods',
  help: 'Pods waiting to be scheduled, by queue (unschedulable: tried, fit nowhere, waiting for a change).',
  labelNames: ['queue'],
  registers: [registry],
});

export interface SchedulerOptions {
  client: KubeClient;
  informers: InformerFactory;
  /** Records Scheduled / FailedScheduling Events (component default-scheduler). */
  events: EventRecorder;
  /** Pods naming this scheduler (or none) are ours (default "default-scheduler"). */
  schedulerName?: string;
  initialBackoffMs?: number;
  maxBackoffMs?: number;
  /** Retry an unschedulable pod at least this often even when nothing changed. */
  unschedulableRetryMs?: number;
  /** The clock of back-offs and condition times (default the wall clock). */
  clock?: Clock;
  /** How long a binding waits for the pod's WaitForFirstConsumer claims to be bound (default 10 minutes, kube's bindTimeoutSeconds). */
  volumeBindTimeoutMs?: number;
}

interface Waiting {
  attempts: number;
  lastAttemptAt: number;
  /** Whether bound pods can change its fate (it has inter-pod affinity or spread constraints). */
  podSensitive: boolean;
}

export class Scheduler implements Runnable {
  readonly name = 'scheduler';
  readonly controller: Controller;
  private readonly cache = new SchedulerCache();
  private readonly nodeInfos = new NodeInfoCache();
  private readonly unschedulable = new Map<string, Waiting>();
  /** Pods a change moved back to the queue, waiting out their back-off: when each back-off ends. */
  private readonly backingOff = new Map<string, number>();
  private popPending = false;
  private readonly bindings = new Set<Promise<void>>();
  private readonly pods: Informer<api.Pod>;
  private readonly nodes: Informer<api.Node>;
  private readonly namespaces: Informer<api.Namespace>;
  private readonly services: Informer<api.Service>;
  private readonly replicaSets: Informer<api.ReplicaSet>;
  private readonly statefulSets: Informer<api.StatefulSet>;
  private readonly claims: Informer<api.PersistentVolumeClaim>;
  private readonly volumes: Informer<api.PersistentVolume>;
  private readonly storageClasses: Informer<api.StorageClass>;
  private readonly budgets: Informer<api.PodDisruptionBudget>;
  /** The claims, volumes and classes the VolumeBinding filter reads, from the informers. */
  private readonly storage: StorageSnapshot;
  private readonly schedulerName: string;
  /** The current term's signal: a binding waiting for its claims stops with it. */
  private signal?: AbortSignal;

  private get clock(): Clock {
    return this.options.clock ?? realClock;
  }

  constructor(private readonly options: SchedulerOptions) {
    this.schedulerName = options.schedulerName ?? DEFAULT_SCHEDULER_NAME;
    const f = options.informers;
    this.pods = f.forResource(resources.pods);
    this.nodes = f.forResource(resources.nodes);
    this.namespaces = f.forResource(resources.namespaces);
    this.services = f.forResource(resources.services);
    this.replicaSets = f.forResource(resources.replicaSets);
    this.statefulSets = f.forResource(resources.statefulSets);
    this.claims = f.forResource(resources.persistentVolumeClaims);
    this.volumes = f.forResource(resources.persistentVolumes);
    this.storageClasses = f.forResource(resources.storageClasses);
    this.budgets = f.forResource(resources.podDisruptionBudgets);
    this.storage = {
      claim: (namespace, name) => this.claims.get(name, namespace),
      volume: (name) => this.volumes.get(name),
      volumes: () => this.volumes.list(),
      storageClass: (name) => this.storageClasses.get(name),
    };
    // A claim, volume or class changing may let a pod with claims fit (kube's queueing hints for VolumeBinding).
    const storageChanged = () => {
      this.retryClaimUsers();
      return undefined;
    };
    const none = () => undefined; // read from the cache only; the controller starts and syncs them
    // Pods of higher priority are tried first, as kube-scheduler's active queue orders them.
    const priorityOf = (key: string) => {
      const pod = this.pods.getByKey(key);
      return pod ? (asPod(pod).spec?.priority ?? 0) : 0;
    };
    this.controller = new Controller({ name: 'scheduler', workers: 1, clock: options.clock, queue: { priorityOf }, sync: (key, context) => this.scheduleOne(key, context) })
      .watch(this.pods, (object, type, old) => this.onPod(asPod(object), type, old && asPod(old)))
      .watch(this.nodes, (object, type, old) => this.onNode(asNode(object), type, old && asNode(old)))
      .watch(this.namespaces, none)
      .watch(this.services, none)
      .watch(this.replicaSets, none)
      .watch(this.statefulSets, none)
      .watch(this.claims, storageChanged)
      .watch(this.volumes, storageChanged)
      .watch(this.storageClasses, storageChanged)
      .watch(this.budgets, none);
  }

  /** Schedules until `signal` aborts (one leadership term); bindings in flight are awaited before it returns. */
  async start(signal: AbortSignal): Promise<void> {
    this.signal = signal;
    await this.controller.run(signal);
    await Promise.allSettled([...this.bindings]);
  }

  /** Records (or clears) a pod's place among the unschedulable. */
  private setWaiting(key: string, waiting: Waiting | undefined): void {
    if (waiting) this.unschedulable.set(key, waiting);
    else this.unschedulable.delete(key);
    this.backingOff.delete(key);
    pendingPods.set({ queue: 'unschedulable' }, this.unschedulable.size);
  }

  private ours(pod: Pod): boolean {
    return (pod.spec.schedulerName || DEFAULT_SCHEDULER_NAME) === this.schedulerName;
  }

  private needsScheduling(pod: Pod): boolean {
    return !pod.spec.nodeName && this.ours(pod) && !pod.metadata.deletionTimestamp && !isTerminal(pod);
  }

  private backoffMs(attempt: number): number {
    const initial = this.options.initialBackoffMs ?? 1000;
    return Math.min(initial * 2 ** Math.max(0, attempt - 1), this.options.maxBackoffMs ?? 10_000);
  }

  /** Moves a waiting pod back to the queue after what is left of its back-off. */
  private requeue(key: string, waiting: Waiting, now: number): void {
    const delayMs = Math.max(0, waiting.lastAttemptAt + this.backoffMs(waiting.attempts) - now);
    this.controller.enqueue(key, delayMs);
    if (delayMs === 0) return;
    this.backingOff.set(key, now + delayMs);
    this.popBackoffWhenIdle();
  }

  /**
   * KEP-5142: once the scheduler has nothing to do (its queue empty, no attempt under way), the
   * pod whose back-off ends first is tried now rather than leaving the scheduler idle until then.
   * Looked at after the current turn of the event loop (every pod one change moves back is queued
   * first); only pods a change moved back are taken, so an idle cluster costs no attempt.
   */
  private popBackoffWhenIdle(): void {
    if (this.popPending || this.backingOff.size === 0) return;
    this.popPending = true;
    setImmediate(() => this.controller.queue.whenIdle(() => {
      this.popPending = false;
      if (this.controller.queue.isShuttingDown) return;
      let first: [string, number] | undefined;
      for (const entry of this.backingOff) if (!first || entry[1] < first[1]) first = entry;
      if (!first) return;
      this.backingOff.delete(first[0]);
      this.controller.enqueue(first[0]);
    }));
  }

  /** Moves unschedulable pods back to the queue, each after what is left of its back-off. */
  private retryUnschedulable(podSensitiveOnly: boolean): void {
    const now = this.clock.now();
    for (const [key, waiting] of this.unschedulable) {
      if (podSensitiveOnly && !waiting.podSensitive) continue;
      this.requeue(key, waiting, now);
    }
  }

  /** Moves the waiting pods that use claims back to the queue, each after what is left of its back-off. */
  private retryClaimUsers(): void {
    const now = this.clock.now();
    for (const [key, waiting] of this.unschedulable) {
      const cached = this.pods.getByKey(key);
      if (cached && podClaimNames(asPod(cached)).length > 0) this.requeue(key, waiting, now);
    }
  }

  private onPod(pod: Pod, type: EventType, old: Pod | undefined): string | undefined {
    const key = podKey(pod);
    if (type === 'delete') {
      this.cache.forget(key);
      this.setWaiting(key, undefined);
      if (pod.spec.nodeName && !isTerminal(pod)) this.retryUnschedulable(false); // its room is free
      return undefined;
    }
    this.cache.observe(pod);
    if (pod.spec.nodeName) {
      this.setWaiting(key, undefined);
      if (old && !isTerminal(old) && isTerminal(pod)) this.retryUnschedulable(false);
      else if (!old?.spec.nodeName || JSON.stringify(old.metadata.labels) !== JSON.stringify(pod.metadata.labels)) this.retryUnschedulable(true);
      return undefined;
    }
    if (!this.needsScheduling(pod)) return undefined;
    const waiting = this.unschedulable.get(key);
    if (!waiting) return key;
    // Our own status write comes back as an update: only a change to what scheduling reads
    // (spec, labels) is worth another attempt, after the back-off.
    if (old && JSON.stringify([old.spec, old.metadata.labels]) === JSON.stringify([pod.spec, pod.metadata.labels])) return undefined;
    this.requeue(key, waiting, this.clock.now());
    return undefined;
  }

  private onNode(node: Node, type: EventType, old: Node | undefined): undefined {
    const relevant = (n: Node) => JSON.stringify([n.metadata.labels, n.spec?.taints, n.spec?.unschedulable, n.status?.allocatable]);
    if (type === 'add' || (type === 'update' && (!old || relevant(old) !== relevant(node)))) this.retryUnschedulableFor(node);
    return undefined;
  }

  /**
   * A node added or changed: kube's queueing hints. A waiting pod is retried (after what is left of
   * its back-off) only when this node now passes its filters — a node that registers still
   * tainted, say, costs the pods that cannot tolerate the taint no attempt, and so no longer
   * back-off for when the taint goes. Pods with inter-pod affinity or spreading, which a node can
   * help without fitting itself (a new topology domain), are retried as before.
   */
  private retryUnschedulableFor(node: Node): void {
    if (this.unschedulable.size === 0) return;
    const namespaceLabels = new Map(this.namespaces.list().map((ns) => [ns.metadata.name, ns.metadata.labels ?? {}]));
    const snapshot = this.cache.snapshot(this.nodes.list().map(asNode), this.pods.list().map(asPod), namespaceLabels);
    const infos = this.nodeInfos.get(snapshot.nodes, snapshot.podsByNode);
    const info = infos.find((i) => i.name === node.metadata.name);
    const now = this.clock.now();
    for (const [key, waiting] of this.unschedulable) {
      const cached = this.pods.getByKey(key);
      if (!cached) continue;
      if (!waiting.podSensitive) {
        const pod = asPod(cached);
        const pinned = pinnedNodeNames(pod);
        if (!info || (pinned && !pinned.has(info.name)) || filterNode(preFilter(pod, infos, namespaceLabels, this.storage), info)) continue;
      }
      this.requeue(key, waiting, now);
    }
  }

  private defaultSpreadSelector(pod: Pod): MetaLabelSelector | undefined {
    const owner = pod.metadata.ownerReferences?.find((r) => r.controller);
    let ownerSelector: MetaLabelSelector | undefined;
    if (owner?.apiVersion === 'apps/v1' && (owner.kind === 'ReplicaSet' || owner.kind === 'StatefulSet')) {
      const informer = owner.kind === 'ReplicaSet' ? this.replicaSets : this.statefulSets;
      ownerSelector = informer.get(owner.name, pod.metadata.namespace)?.spec?.selector;
    }
    return defaultSpreadSelector(pod, this.services.list(), ownerSelector);
  }

  private async scheduleOne(key: string, context: SyncContext): Promise<SyncResult | void> {
    this.backingOff.delete(key);
    try {
      return await this.attempt(key, context);
    } finally {
      this.popBackoffWhenIdle();
    }
  }

  private async attempt(key: string, { log }: SyncContext): Promise<SyncResult | void> {
    const cached = this.pods.getByKey(key);
    const pod = cached && asPod(cached);
    if (!pod || !this.needsScheduling(pod) || this.cache.isAssumed(key)) {
      this.setWaiting(key, undefined);
      return;
    }
    if ((pod.spec.schedulingGates ?? []).length > 0) {
      // Not attempted until its gates are removed (that update brings it back). kube-apiserver
      // writes this condition when such a pod is created; bosun's API server does not (yet), so
      // the scheduler does — a no-op where the condition is already there.
      this.setWaiting(key, undefined);
      await this.setPodScheduledFalse(pod, 'SchedulingGated', SCHEDULING_GATED_MESSAGE);
      return;
    }
    const namespaceLabels = new Map(this.namespaces.list().map((ns) => [ns.metadata.name, ns.metadata.labels ?? {}]));
    const snapshot = this.withNominatedPods(pod, { ...this.cache.snapshot(this.nodes.list().map(asNode), this.pods.list().map(asPod), namespaceLabels), storage: this.storage });
    let result;
    let infos;
    try {
      infos = this.nodeInfos.get(snapshot.nodes, snapshot.podsByNode);
      result = schedulePod(pod, snapshot, { defaultSpreadSelector: this.defaultSpreadSelector(pod) }, infos);
    } catch (e) {
      attempts.inc({ result: 'error' });
      if (!(e instanceof QuantityError)) throw e;
      // The pod's own requests do not parse: retrying cannot help until the pod changes (which
      // brings it back). Say so where `kubectl describe pod` shows it, as kube's SchedulerError.
      this.setWaiting(key, undefined);
      await this.options.events.event(pod, 'Warning', 'FailedScheduling', e.message);
      await this.setPodScheduledFalse(pod, 'SchedulerError', e.message);
      throw new TerminalError(e.message);
    }
    if ('error' in result) {
      attempts.inc({ result: 'unschedulable' });
      let message = result.error.message;
      // kube's PostFilter: preempt lower-priority pods where that makes room (preemption.ts). As in
      // kube, only after a fit error: with no nodes at all there is nothing to preempt or say.
      const preempted = message === ERR_NO_NODES_AVAILABLE ? undefined : findPreemption(pod, snapshot, infos ?? buildNodeInfos(snapshot), this.disruptionBudgets());
      if (preempted && 'preemption' in preempted) await this.preempt(pod, preempted.preemption, log);
      else {
        if (preempted) message = `${message} ${preempted.message}`;
        if (pod.status?.nominatedNodeName && !preempted?.keepNomination) await this.nominate(pod, null);
      }
      const previous = this.unschedulable.get(key);
      const podSensitive = !!(pod.spec.affinity?.podAffinity || pod.spec.affinity?.podAntiAffinity || (pod.spec.topologySpreadConstraints ?? []).length > 0);
      this.setWaiting(key, { attempts: (previous?.attempts ?? 0) + 1, lastAttemptAt: this.clock.now(), podSensitive });
      log.info({ pod: key, reason: message }, 'unable to schedule pod; waiting');
      await this.options.events.event(pod, 'Warning', 'FailedScheduling', message);
      await this.setPodScheduledFalse(pod, 'Unschedulable', message);
      return { requeueAfterMs: this.options.unschedulableRetryMs ?? 5 * 60_000 };
    }
    this.setWaiting(key, undefined);
    this.cache.assume(pod, result.node);
    const binding = this.bind(pod, result.node, log).finally(() => this.bindings.delete(binding));
    this.bindings.add(binding);
  }

  private async bind(pod: Pod, nodeName: string, log: Logger): Promise<void> {
    const key = podKey(pod);
    const { name, namespace, uid } = pod.metadata;
    try {
      await this.bindVolumes(pod, nodeName);
      await this.options.client.request('POST', resourcePath(resources.pods, namespace, name, 'binding'), {
        body: { apiVersion: 'v1', kind: 'Binding', metadata: { name, namespace, uid }, target: { apiVersion: 'v1', kind: 'Node', name: nodeName } },
      });
      attempts.inc({ result: 'scheduled' });
      log.info({ pod: key, node: nodeName }, 'bound pod');
      await this.options.events.event(pod, 'Normal', 'Scheduled', `Successfully assigned ${namespace}/${name} to ${nodeName}`);
    } catch (e) {
      this.cache.forget(key);
      attempts.inc({ result: 'error' });
      // Gone, or bound by someone else meanwhile: the informer will say so; nothing to retry.
      if (isNotFound(e) || isConflict(e)) {
        log.info({ pod: key, node: nodeName, err: (e as Error).message }, 'binding not needed any more');
        return;
      }
      const waiting = this.unschedulable.get(key) ?? { attempts: 0, lastAttemptAt: 0, podSensitive: false };
      const retryInMs = this.backoffMs(waiting.attempts + 1);
      this.setWaiting(key, { ...waiting, attempts: waiting.attempts + 1, lastAttemptAt: this.clock.now() });
      log.warn({ pod: key, node: nodeName, err: (e as Error).message, retryInMs }, 'binding failed; retrying');
      this.controller.enqueue(key, retryInMs);
    }
  }

  /**
   * kube's VolumeBinding PreBind: the pod's unbound WaitForFirstConsumer claims are given the
   * chosen node (volume.kubernetes.io/selected-node), and the pod is bound only once every one of
   * them is: the binder binds a volume there, or the class's provisioner makes one.
   */
  private async bindVolumes(pod: Pod, nodeName: string): Promise<void> {
    const { waiting } = volumeBindingPreFilter(pod, this.storage);
    if (waiting.length === 0) return;
    for (const claim of waiting) {
      if (claim.metadata.annotations?.[SELECTED_NODE] === nodeName) continue;
      try {
        await this.options.client.mergePatch(resources.persistentVolumeClaims, claim.metadata.name, claim.metadata.namespace, { metadata: { annotations: { [SELECTED_NODE]: nodeName } } });
      } catch (e) {
        // Retried after the back-off like any failed binding (a NotFound here is the claim's, not the pod's).
        throw new Error(`selecting node ${nodeName} for claim ${claim.metadata.name}: ${(e as Error).message}`);
      }
    }
    const deadline = this.clock.now() + (this.options.volumeBindTimeoutMs ?? 10 * 60_000);
    const unbound = () => waiting.filter((c) => this.claims.get(c.metadata.name, c.metadata.namespace)?.status?.phase !== 'Bound');
    while (unbound().length > 0) {
      if (this.signal?.aborted) throw new Error('the scheduler stopped before the claims were bound');
      if (this.clock.now() >= deadline) throw new Error(`binding volumes: timed out waiting for the claims ${unbound().map((c) => c.metadata.name).join(', ')} to be bound`);
      await sleepOn(this.clock, 100, this.signal);
    }
  }

  /**
   * The pods nominated to a node by an earlier preemption, of at least this pod's priority, count
   * on that node (kube's addNominatedPods): the room a preemption made is theirs.
   */
  private withNominatedPods<T extends { podsByNode: ReadonlyMap<string, readonly Pod[]> }>(pod: Pod, snapshot: T): T {
    const key = podKey(pod);
    const nominated = this.pods
      .list()
      .map(asPod)
      .filter((p) => !p.spec.nodeName && p.status?.nominatedNodeName && podKey(p) !== key && priorityOf(p) >= priorityOf(pod) && !isTerminal(p) && !p.metadata.deletionTimestamp);
    if (nominated.length === 0) return snapshot;
    const podsByNode = new Map(snapshot.podsByNode);
    for (const p of nominated) podsByNode.set(p.status!.nominatedNodeName!, [...(podsByNode.get(p.status!.nominatedNodeName!) ?? []), { ...p, spec: { ...p.spec, nodeName: p.status!.nominatedNodeName } }]);
    return { ...snapshot, podsByNode };
  }

  /** The PodDisruptionBudgets preemption weighs (one whose selector does not parse covers nothing). */
  private disruptionBudgets(): DisruptionBudget[] {
    return this.budgets.list().flatMap((b) => {
      try {
        return [{ namespace: b.metadata.namespace ?? '', selector: fromLabelSelectorObject(b.spec?.selector), disruptionsAllowed: b.status?.disruptionsAllowed ?? 0 }];
      } catch {
        return [];
      }
    });
  }

  /**
   * Carries out a preemption (kube's prepareCandidate and PreemptPod): each victim gets the
   * DisruptionTarget condition, is deleted and told why in an Event; lower-priority pods nominated
   * to the node lose the nomination; the pod is nominated to the node and is tried again as the
   * victims go.
   */
  private async preempt(pod: Pod, { node, victims }: Preemption, log: Logger): Promise<void> {
    for (const victim of victims) {
      const { name, namespace } = victim.metadata;
      try {
        await this.options.client.request('PATCH', resourcePath(resources.pods, namespace, name, 'status'), {
          contentType: 'application/strategic-merge-patch+json',
          body: { status: { conditions: [{ type: 'DisruptionTarget', status: 'True', reason: 'PreemptionByScheduler', message: `${this.schedulerName}: preempting to accommodate a higher priority pod`, lastTransitionTime: rfc3339(new Date(this.clock.now())) }] } },
        });
        await this.options.client.request('DELETE', resourcePath(resources.pods, namespace, name), { body: { kind: 'DeleteOptions', apiVersion: 'v1', preconditions: { uid: victim.metadata.uid } } });
      } catch (e) {
        if (isNotFound(e) || isConflict(e)) continue;
        throw e;
      }
      log.info({ pod: podKey(pod), victim: podKey(victim), node }, 'preempted a pod');
      await this.options.events.event(victim, 'Normal', 'Preempted', `Preempted by pod ${pod.metadata.uid} on node ${node}`);
    }
    for (const other of this.pods.list().map(asPod)) {
      if (other.status?.nominatedNodeName === node && !other.spec.nodeName && priorityOf(other) < priorityOf(pod)) await this.nominate(other, null);
    }
    await this.nominate(pod, node);
  }

  /** Sets (or clears, with null) a pod's status.nominatedNodeName. */
  private async nominate(pod: Pod, node: string | null): Promise<void> {
    try {
      await this.options.client.request('PATCH', resourcePath(resources.pods, pod.metadata.namespace, pod.metadata.name, 'status'), {
        contentType: 'application/merge-patch+json',
        body: { status: { nominatedNodeName: node } },
      });
    } catch (e) {
      if (!isNotFound(e)) throw e;
    }
  }

  /** Writes PodScheduled=False (as kube's updatePod: only when status, reason or message change). */
  private async setPodScheduledFalse(pod: Pod, reason: string, message: string): Promise<void> {
    const current = pod.status?.conditions?.find((c) => c.type === 'PodScheduled') as { status?: string; reason?: string; message?: string; lastTransitionTime?: string } | undefined;
    if (current?.status === 'False' && current.reason === reason && current.message === message) return;
    const lastTransitionTime = current?.status === 'False' && current.lastTransitionTime ? current.lastTransitionTime : rfc3339(new Date(this.clock.now()));
    try {
      await this.options.client.request('PATCH', resourcePath(resources.pods, pod.metadata.namespace, pod.metadata.name, 'status'), {
        contentType: 'application/strategic-merge-patch+json',
        body: { status: { conditions: [{ type: 'PodScheduled', status: 'False', reason, message, lastProbeTime: null, lastTransitionTime }] } },
      });
    } catch (e) {
      if (!isNotFound(e)) throw e;
    }
  }
}

/**
 * A stored pod as the scheduler reads it (types.ts: the part of a Pod the scheduler reads, its spec
 * required — the API server never stores a pod without one).
 */
function asPod(pod: api.Pod): Pod {
  return pod as Pod;
}

/** A stored node as the scheduler reads it (types.ts). */
function asNode(node: api.Node): Node {
  return node as Node;
}

/**
 * Puts a scheduler on a manager (the command's, or bring-up's). Its Events name the scheduler as
 * their source, as kube-scheduler's name the profile's scheduler.
 */
export function addScheduler(manager: Manager, options: { schedulerName?: string } = {}): Scheduler {
  const schedulerName = options.schedulerName ?? DEFAULT_SCHEDULER_NAME;
  const events = schedulerName === SCHEDULER_COMPONENT.eventSource ? manager.events : new EventRecorder(manager.client, { component: schedulerName });
  const scheduler = new Scheduler({ client: manager.client, informers: manager.informers, events, schedulerName, clock: manager.clock });
  manager.add(scheduler);
  return scheduler;
}
