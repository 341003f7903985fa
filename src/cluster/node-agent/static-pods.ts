// Static pods: the pod manifests in the KubeletConfiguration's staticPodPath (OpenShift's
// /etc/kubernetes/manifests) in the machine root. As the kubelet does, each becomes a mirror pod in
// the API — named `<name>-<node>`, bound to this node, annotated with the manifest's hash — which
// the pod manager then runs like any pod bound here; a changed manifest replaces its mirror pod, a
// removed one deletes it. The directory is read at start and every checkIntervalMs.
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import type { Logger } from '../../common/log.js';
import { sleep } from '../../common/sleep.js';
import type * as api from '../../api/index.js';
import { isAlreadyExists, isNotFound, type KubeClient } from '../../kube/index.js';
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

/** The mirror pod of a manifest on a node, owned by the Node (as NodeRestriction requires). Pure. */
export function mirrorPod(manifest: PodManifest, node: { name: string; uid: string }): api.Pod {
  const nodeName = node.name;
  const hash = createHash('sha256').update(JSON.stringify(manifest)).digest('hex').slice(0, 32);
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

export class StaticPods {
  constructor(
    private readonly client: KubeClient,
    private readonly dir: string,
    private readonly node: { name: string; uid: string },
    private readonly log: Logger,
    private readonly checkIntervalMs = 20_000,
  ) {}

  async run(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      try {
        await this.sync();
      } catch (e) {
        if (!signal.aborted) this.log.warn({ err: (e as Error).message }, 'failed to sync static pods');
      }
      await sleep(this.checkIntervalMs, signal);
    }
  }

  /** Makes the mirror pods match the manifests. */
  async sync(): Promise<void> {
    const wanted = readManifests(this.dir, this.log).map((m) => mirrorPod(m, this.node));
    const existing = (await this.client.list(PODS, undefined, { fieldSelector: `spec.nodeName=${this.node.name}` })).items.filter(isMirrorPod);
    for (const pod of wanted) {
      const current = existing.find((p) => p.metadata.namespace === pod.metadata.namespace && p.metadata.name === pod.metadata.name);
      if (current?.metadata.annotations?.[MIRROR_ANNOTATION] === pod.metadata.annotations?.[MIRROR_ANNOTATION]) continue;
      if (current) await this.client.delete(PODS, current.metadata.name, current.metadata.namespace, { preconditions: { uid: current.metadata.uid } });
      try {
        await this.client.create(PODS, pod);
        this.log.info({ pod: `${pod.metadata.namespace}/${pod.metadata.name}` }, current ? 'static pod changed; mirror pod replaced' : 'mirror pod created');
      } catch (e) {
        if (!isAlreadyExists(e)) throw e;
      }
    }
    for (const pod of existing) {
      if (wanted.some((w) => w.metadata.namespace === pod.metadata.namespace && w.metadata.name === pod.metadata.name)) continue;
      await this.client.delete(PODS, pod.metadata.name, pod.metadata.namespace).catch((e) => { if (!isNotFound(e)) throw e; });
      this.log.info({ pod: `${pod.metadata.namespace}/${pod.metadata.name}` }, 'static pod removed; mirror pod deleted');
    }
  }
}
