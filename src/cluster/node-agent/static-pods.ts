// Static pods, as the kubelet runs them (pkg/kubelet/config/file.go and its mirror client): the pod
// manifests in the KubeletConfiguration's staticPodPath (/etc/kubernetes/manifests) in the
// machine root are read when the agent starts and every checkIntervalMs, and each runs at once —
// before and without any API server, which is what lets a control-plane machine start its own
// etcd and API server. A static pod's UID is its manifest's hash; a changed manifest stops the
// old pod and starts the new one, a removed one stops it; containers restart with the crash-loop
// back-off and log to /var/log/pods as any pod's. Once the API answers and the node is registered,
// each static pod gets a mirror pod there — `<name>-<node>`, bound to this node, annotated with
// the hash (kubernetes.io/config.mirror), owned by the Node as NodeRestriction requires — carrying
// its real status; a changed manifest replaces the mirror pod, a removed one deletes it, and a
// mirror pod deleted by someone else is created again. The pod manager leaves mirror pods alone.
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import type { Logger } from '../../common/log.js';
import { sleep } from '../../common/sleep.js';
import { rfc3339 } from '../../common/time.js';
import type * as api from '../../api/index.js';
import { isAlreadyExists, isNotFound, type EventKind, type EventRecorder, type KubeClient } from '../../kube/index.js';
import { podStatus } from './pod-status.js';
import { PodWorker, type PodContext } from './pod-worker.js';
import { PODS } from './resources.js';

export const MIRROR_ANNOTATION = 'kubernetes.io/config.mirror';
const HASH_ANNOTATION = 'kubernetes.io/config.hash';
const SOURCE_ANNOTATION = 'kubernetes.io/config.source';

export const isMirrorPod = (pod: api.Pod) => pod.metadata?.annotations?.[MIRROR_ANNOTATION] !== undefined;

/** A static pod manifest: a Pod with a name and containers. */
export type PodManifest = api.Pod & { spec: api.PodSpec };

/** Whether a parsed manifest file is a Pod with a name and containers (the rest is the kubelet's to take as it is). */
function isPodManifest(value: unknown): value is PodManifest {
  const m = value as { kind?: unknown; metadata?: { name?: unknown }; spec?: { containers?: unknown } } | null | undefined;
  return m?.kind === 'Pod' && Boolean(m.metadata?.name) && Array.isArray(m.spec?.containers);
}

/** A manifest's hash: the static pod's UID and its mirror pod's config.mirror annotation. Pure. */
export function manifestHash(manifest: PodManifest): string {
  return createHash('sha256').update(JSON.stringify(manifest)).digest('hex').slice(0, 32);
}

/** The mirror pod of a manifest on a node, owned by the Node (as NodeRestriction requires). Pure. */
export function mirrorPod(manifest: PodManifest, node: { name: string; uid: string }): api.Pod {
  const nodeName = node.name;
  const hash = manifestHash(manifest);
  const meta = manifest.metadata ?? {};
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: `${meta.name}-${nodeName}`,
      namespace: meta.namespace ?? 'default',
      labels: meta.labels ?? {},
      annotations: { ...meta.annotations, [MIRROR_ANNOTATION]: hash, [HASH_ANNOTATION]: hash, [SOURCE_ANNOTATION]: 'file' },
      ownerReferences: [{ apiVersion: 'v1', kind: 'Node', name: nodeName, uid: node.uid, controller: true }],
    },
    spec: { ...manifest.spec, nodeName, automountServiceAccountToken: false },
  };
}

/** The pod the node runs for a manifest: its mirror pod's name and spec, the manifest's hash as UID. Pure. */
export function staticPod(manifest: PodManifest, nodeName: string): api.Pod {
  const pod = mirrorPod(manifest, { name: nodeName, uid: '' });
  return { ...pod, metadata: { ...pod.metadata, uid: manifestHash(manifest), ownerReferences: undefined } };
}

/** The manifests of a static pod directory (YAML or JSON files), each a Pod; others are logged and skipped. */
export function readManifests(dir: string, log: Logger): PodManifest[] {
  if (!existsSync(dir)) return [];
  const out: PodManifest[] = [];
  for (const name of readdirSync(dir).filter((n) => /\.(ya?ml|json)$/.test(n)).sort()) {
    try {
      const manifest: unknown = parseYaml(readFileSync(join(dir, name), 'utf8'));
      if (!isPodManifest(manifest)) throw new Error('not a Pod with a name and containers');
      out.push(manifest);
    } catch (e) {
      log.warn({ file: name, err: (e as Error).message }, 'static pod manifest skipped');
    }
  }
  return out;
}

/** The first free address of a /24 pod CIDR from the top down (.254), so as not to meet the pod manager's, which go from .2 up. */
function allocateFromTop(cidr: string, taken: Set<string>): string | undefined {
  const prefix = cidr.replace(/\.0\/24$/, '.');
  for (let i = 254; i >= 2; i--) if (!taken.has(`${prefix}${i}`)) return `${prefix}${i}`;
  return undefined;
}

export interface StaticPodRunnerOptions extends Omit<PodContext, 'onChange' | 'client' | 'events'> {
  /** The static pod directory on the host (the machine root's staticPodPath). */
  dir: string;
  podCIDR: string;
  /** Pod IPs the pod manager has given out. */
  takenIPs?: () => Iterable<string>;
  /** How often the directory is read again (default 20 s, the kubelet's fileCheckFrequency). */
  checkIntervalMs?: number;
  /** The most a static pod gets to stop when the machine goes down (default 5 s). */
  shutdownGraceMs?: number;
}

interface Running {
  worker: PodWorker;
  hash: string;
  write?: { pending: boolean; running?: Promise<void> };
}

/** What the runner has of the API while it is connected: where statuses, mirror pods and events go. */
interface Connection {
  client: KubeClient;
  events: EventRecorder;
  node: { name: string; uid: string };
}

const keyOf = (pod: api.Pod) => `${pod.metadata.namespace ?? 'default'}/${pod.metadata.name}`;

export class StaticPodRunner {
  private readonly running = new Map<string, Running>();
  private readonly stopper = new AbortController();
  private loop?: Promise<void>;
  private connection?: Connection;
  private changed?: () => void;
  private dirty = false;

  constructor(private readonly o: StaticPodRunnerOptions) {}

  /** Reads the directory now and then every checkIntervalMs, running what it holds. */
  start(): void {
    this.loop = (async () => {
      const signal = this.stopper.signal;
      while (!signal.aborted) {
        this.dirty = false;
        try {
          await this.syncLocal();
        } catch (e) {
          if (!signal.aborted) this.o.log.warn({ err: (e as Error).message }, 'failed to sync static pods');
        }
        // A resync (a watched directory changing, often several events a write) ends this wait and its timer.
        // One that came during the sync reads the directory again at once.
        if (this.dirty) continue;
        const wake = new AbortController();
        this.changed = () => wake.abort();
        await sleep(this.o.checkIntervalMs ?? 20_000, AbortSignal.any([signal, wake.signal]));
      }
    })();
  }

  /** The static pods running now, as the node runs them (the manifest's hash as UID). */
  pods(): api.Pod[] {
    return [...this.running.values()].map((r) => r.worker.pod);
  }

  /** A running static pod by its (mirror) namespace and name. */
  pod(namespace: string, name: string): api.Pod | undefined {
    return this.running.get(`${namespace}/${name}`)?.worker.pod;
  }

  /** The pod IPs the static pods hold (hostNetwork ones hold none). */
  podIPs(): string[] {
    return [...this.running.values()].filter((r) => !r.worker.pod.spec?.hostNetwork).map((r) => r.worker.podIP);
  }

  /** Starts what the manifests hold and is not running, stops what they no longer hold. */
  async syncLocal(): Promise<void> {
    const wanted = new Map(readManifests(this.o.dir, this.o.log).map((m) => [keyOf(staticPod(m, this.o.nodeName)), m] as const));
    for (const [key, current] of [...this.running]) {
      const manifest = wanted.get(key);
      if (manifest && manifestHash(manifest) === current.hash) continue;
      this.o.log.info({ pod: key }, manifest ? 'static pod manifest changed; restarting the pod' : 'static pod manifest removed; stopping the pod');
      await this.stopPod(key, current);
    }
    for (const [key, manifest] of wanted) {
      if (this.running.has(key) || this.stopper.signal.aborted) continue;
      const pod = staticPod(manifest, this.o.nodeName);
      const podIP = pod.spec?.hostNetwork ? this.o.nodeIP : allocateFromTop(this.o.podCIDR, new Set([...this.podIPs(), ...(this.o.takenIPs?.() ?? [])]));
      if (!podIP) {
        this.o.log.error({ pod: key }, `no free pod IP left in ${this.o.podCIDR}`);
        continue;
      }
      const entry: Running = { hash: manifestHash(manifest), worker: undefined as unknown as PodWorker };
      entry.worker = new PodWorker(pod, podIP, {
        ...this.o,
        client: undefined,
        events: { event: (object: api.KubeObject, type: EventKind, reason: string, message: string) => this.event(object, type, reason, message) },
        onChange: () => this.writeStatus(key, entry),
      });
      this.running.set(key, entry);
      this.o.log.info({ pod: key, podIP }, 'static pod started');
      entry.worker.start();
    }
  }

  private async stopPod(key: string, entry: Running, capMs = Infinity): Promise<void> {
    await entry.worker.stop(Math.min(capMs, (entry.worker.pod.spec?.terminationGracePeriodSeconds ?? 30) * 1000));
    await entry.write?.running;
    if (this.running.get(key) === entry) this.running.delete(key);
  }

  /** Events go to the API while it is connected, with the mirror pod as their object; before that they are dropped. */
  private async event(object: api.KubeObject, type: EventKind, reason: string, message: string): Promise<void> {
    await this.connection?.events.event(object, type, reason, message);
  }

  /**
   * Keeps the mirror pods in the API and their statuses current while `signal` is not aborted
   * (the agent is registered as `node` and can reach the API through `client`).
   */
  async mirror(client: KubeClient, events: EventRecorder, node: { name: string; uid: string }, signal: AbortSignal): Promise<void> {
    const connection: Connection = { client, events, node };
    this.connection = connection;
    try {
      while (!signal.aborted) {
        try {
          await this.syncMirrors(connection);
        } catch (e) {
          if (!signal.aborted) this.o.log.warn({ err: (e as Error).message }, 'failed to sync mirror pods');
        }
        await sleep(this.o.checkIntervalMs ?? 20_000, signal);
      }
    } finally {
      if (this.connection === connection) this.connection = undefined;
    }
  }

  /** Makes the mirror pods match the manifests, then writes every static pod's status to its mirror pod. */
  async syncMirrors(c: Connection): Promise<void> {
    const wanted = readManifests(this.o.dir, this.o.log).map((m) => mirrorPod(m, c.node));
    const existing = (await c.client.list(PODS, undefined, { fieldSelector: `spec.nodeName=${c.node.name}` })).items.filter(isMirrorPod);
    for (const pod of wanted) {
      const current = existing.find((p) => keyOf(p) === keyOf(pod));
      if (current?.metadata.annotations?.[MIRROR_ANNOTATION] === pod.metadata.annotations?.[MIRROR_ANNOTATION] && !current?.metadata.deletionTimestamp) continue;
      if (current) await c.client.delete(PODS, current.metadata.name, current.metadata.namespace, { gracePeriodSeconds: 0, preconditions: { uid: current.metadata.uid } }).catch((e) => { if (!isNotFound(e)) throw e; });
      try {
        await c.client.create(PODS, pod);
        this.o.log.info({ pod: keyOf(pod) }, current ? 'static pod changed; mirror pod replaced' : 'mirror pod created');
      } catch (e) {
        if (!isAlreadyExists(e)) throw e;
      }
    }
    for (const pod of existing) {
      if (wanted.some((w) => keyOf(w) === keyOf(pod))) continue;
      await c.client.delete(PODS, pod.metadata.name, pod.metadata.namespace, { gracePeriodSeconds: 0 }).catch((e) => { if (!isNotFound(e)) throw e; });
      this.o.log.info({ pod: keyOf(pod) }, 'static pod removed; mirror pod deleted');
    }
    for (const [key, entry] of this.running) this.writeStatus(key, entry);
  }

  /** Writes a static pod's status to its mirror pod, when connected; changes during a write are coalesced into one more. */
  private writeStatus(key: string, entry: Running): void {
    const slot = (entry.write ??= { pending: false });
    if (slot.running) {
      slot.pending = true;
      return;
    }
    slot.running = (async () => {
      do {
        slot.pending = false;
        const c = this.connection;
        if (!c) break;
        const worker = entry.worker;
        const status = podStatus(worker.pod, worker.records, { podIP: worker.podIP, hostIP: this.o.nodeIP, startTime: worker.startTime }, rfc3339(), worker.inits, worker.terminal);
        const [namespace, name] = key.split('/');
        try {
          const written = await c.client.mergePatch(PODS, name, namespace, { status }, 'status');
          worker.pod = { ...worker.pod, status: written.status };
        } catch (e) {
          // No mirror pod yet: the next mirror sync creates it and writes again.
          if (!isNotFound(e)) this.o.log.warn({ pod: key, err: (e as Error).message }, 'failed to write the static pod status');
        }
      } while (slot.pending);
    })().finally(() => {
      slot.running = undefined;
    });
  }

  /** Reads the directory again now (tests; the kubelet's inotify). */
  resync(): void {
    this.dirty = true;
    this.changed?.();
  }

  /** The machine is going down: every static pod stops. */
  async stop(): Promise<void> {
    this.stopper.abort();
    this.changed?.();
    await this.loop;
    await Promise.all([...this.running].map(([key, entry]) => this.stopPod(key, entry, this.o.shutdownGraceMs ?? 5000)));
    this.running.clear();
  }
}
