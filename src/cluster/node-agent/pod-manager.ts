// The pods bound to this node (a watch on spec.nodeName, as the kubelet's pod config source): a
// worker per pod, a pod IP from the node's podCIDR (the node IP for hostNetwork pods), the status
// written to pods/status whenever a worker reports a change, and termination — a pod deleted with a
// grace period (deletionTimestamp set) is stopped within it, reported in its terminal phase, and
// then deleted with grace 0; a pod that is simply gone from the API is stopped.
import type { Logger } from '../../common/log.js';
import type * as api from '../../api/index.js';
import { Informer, isNotFound, type KubeClient } from '../../kube/index.js';
import { allocatePodIP } from './pod-spec.js';
import { podStatus } from './pod-status.js';
import { PodWorker, type PodContext } from './pod-worker.js';
import { isMirrorPod } from './static-pods.js';
import { PODS } from './resources.js';
import { rfc3339 } from '../../common/time.js';
import { bounded } from '../../common/bounded.js';

/** How much longer than its grace a pod may take to stop at a machine's shutdown before it is given up on. */
const STOP_MARGIN_MS = 10_000;

export interface PodManagerOptions extends Omit<PodContext, 'onChange' | 'log' | 'client'> {
  client: KubeClient;
  podCIDR: string;
  /** Pod IPs taken by pods run elsewhere on the node (the static pods). */
  reservedIPs?: () => Iterable<string>;
  log: Logger;
  /** The most a pod gets to stop when the machine goes down (default 5 s). */
  shutdownGraceMs?: number;
  /** A pod reported Running for the first time, `seconds` after the agent first saw it. */
  onPodRunning?: (seconds: number) => void;
}

const TERMINAL = new Set(['Succeeded', 'Failed']);

export class PodManager {
  private readonly informer: Informer<api.Pod>;
  private readonly workers = new Map<string, PodWorker>();
  private readonly terminating = new Map<string, Promise<void>>();
  private readonly writes = new Map<string, { pending: boolean; running?: Promise<void> }>();
  private readonly reportedRunning = new WeakSet<PodWorker>();
  private stopped = false;

  constructor(private readonly o: PodManagerOptions) {
    this.informer = new Informer(o.client, PODS, { fieldSelector: `spec.nodeName=${o.nodeName}` });
    this.informer.on((type, pod) => {
      if (this.stopped) return;
      if (type === 'delete') void this.terminate(pod, false);
      else this.sync(pod);
    });
  }

  start(signal: AbortSignal): Promise<void> {
    this.informer.start(signal);
    return this.informer.waitForSync(signal);
  }

  /** The pods bound to this node, as last seen (for the logs endpoint). */
  pods(): api.Pod[] {
    return this.informer.list();
  }

  /** The workers of the pods running here now (for the metrics). */
  podWorkers(): PodWorker[] {
    return [...this.workers.values()];
  }

  private sync(pod: api.Pod): void {
    const uid = pod.metadata.uid ?? '';
    // A mirror pod stands for a static pod, which the static pod runner runs from its manifest
    // (static-pods.ts); one being deleted is deleted at once (below), and mirrored again.
    if (isMirrorPod(pod) && !pod.metadata.deletionTimestamp) return;
    if (pod.metadata.deletionTimestamp) {
      void this.terminate(pod, true);
      return;
    }
    const existing = this.workers.get(uid);
    if (existing) {
      existing.pod = { ...pod, status: existing.pod.status };
      return;
    }
    if (TERMINAL.has(pod.status?.phase ?? '') || this.terminating.has(uid)) return;
    const podIP = pod.spec?.hostNetwork ? this.o.nodeIP : this.podIP(pod);
    if (!podIP) {
      this.o.log.error({ pod: pod.metadata.name }, `no free pod IP left in ${this.o.podCIDR}`);
      return;
    }
    const worker: PodWorker = new PodWorker(pod, podIP, { ...this.o, log: this.o.log, onChange: () => this.writeStatus(worker) });
    this.workers.set(uid, worker);
    this.o.log.info({ pod: `${pod.metadata.namespace}/${pod.metadata.name}`, podIP }, 'pod admitted');
    worker.start();
  }

  private podIP(pod: api.Pod): string | undefined {
    const taken = new Set([...this.workers.values()].filter((w) => !w.pod.spec?.hostNetwork).map((w) => w.podIP));
    for (const ip of this.o.reservedIPs?.() ?? []) taken.add(ip);
    const previous = pod.status?.podIP;
    if (previous && previous.startsWith(this.o.podCIDR.replace(/0\/24$/, '')) && !taken.has(previous)) return previous;
    return allocatePodIP(this.o.podCIDR, taken);
  }

  /** Stops a pod's containers; when the API asked for a graceful deletion, finishes it. */
  private terminate(pod: api.Pod, finishDeletion: boolean): Promise<void> {
    const uid = pod.metadata.uid ?? '';
    const worker = this.workers.get(uid);
    const graceMs = (pod.metadata.deletionGracePeriodSeconds ?? pod.spec?.terminationGracePeriodSeconds ?? 30) * 1000;
    const running = this.terminating.get(uid);
    if (running) {
      // A later request shortened the grace period (kubectl delete --grace-period=1): the kubelet honours it.
      worker?.shortenGrace(graceMs);
      return running;
    }
    const done = (async () => {
      if (worker) {
        this.o.log.info({ pod: `${pod.metadata.namespace}/${pod.metadata.name}`, graceMs }, 'stopping pod');
        await worker.stop(graceMs, finishDeletion);
        this.workers.delete(uid);
        await this.writes.get(uid)?.running;
      }
      if (finishDeletion && !this.stopped) {
        await this.o.client.delete(PODS, pod.metadata.name, pod.metadata.namespace, { gracePeriodSeconds: 0, preconditions: { uid } })
          .catch((e) => { if (!isNotFound(e) && (e as { code?: number }).code !== 409) this.o.log.warn({ pod: pod.metadata.name, err: (e as Error).message }, 'failed to delete the stopped pod'); });
      }
    })().finally(() => this.terminating.delete(uid));
    this.terminating.set(uid, done);
    return done;
  }

  /** Writes a worker's status; changes arriving while a write is in flight are coalesced into one more. */
  private writeStatus(worker: PodWorker): void {
    const uid = worker.pod.metadata.uid ?? '';
    let slot = this.writes.get(uid);
    if (!slot) this.writes.set(uid, (slot = { pending: false }));
    if (slot.running) {
      slot.pending = true;
      return;
    }
    const s = slot;
    s.running = (async () => {
      do {
        s.pending = false;
        const status = podStatus(worker.pod, worker.records, { podIP: worker.podIP, hostIP: this.o.nodeIP, startTime: worker.startTime }, rfc3339(), worker.inits, worker.terminal);
        if (status.phase === 'Running' && !this.reportedRunning.has(worker)) {
          this.reportedRunning.add(worker);
          this.o.onPodRunning?.((Date.now() - worker.seenAt) / 1000);
        }
        try {
          const written = await this.o.client.mergePatch(PODS, worker.pod.metadata.name, worker.pod.metadata.namespace, { status }, 'status');
          worker.pod = { ...worker.pod, status: written.status };
        } catch (e) {
          if (isNotFound(e)) break;
          this.o.log.warn({ pod: worker.pod.metadata.name, err: (e as Error).message }, 'failed to write the pod status');
        }
      } while (s.pending);
    })().finally(() => {
      s.running = undefined;
      if (this.writes.get(uid) === s && !this.workers.has(uid)) this.writes.delete(uid);
    });
  }

  /** The machine is going down: every pod stops (within the shutdown grace), the watch ends. */
  async stop(): Promise<void> {
    this.stopped = true;
    const grace = this.o.shutdownGraceMs ?? 5000;
    // Each pod within its grace (its containers are killed then) and a margin; a pod that still
    // has not stopped, or a status write that does not end, is named in the log, not waited for.
    const gaveUp = (e: Error) => this.o.log.warn({ err: e.message }, 'machine shutdown: giving up on it');
    await Promise.all([...this.workers.values()].map((w) => {
      const graceMs = Math.min(grace, (w.pod.spec?.terminationGracePeriodSeconds ?? 30) * 1000);
      return bounded(w.stop(graceMs), graceMs + STOP_MARGIN_MS, `pod ${w.pod.metadata.namespace}/${w.pod.metadata.name} stopping`).catch(gaveUp);
    }));
    await Promise.all([...this.writes.values()].map((s) => s.running && bounded(s.running, STOP_MARGIN_MS, 'the last pod status write').catch(gaveUp)));
    this.workers.clear();
    await this.informer.stop();
  }
}
