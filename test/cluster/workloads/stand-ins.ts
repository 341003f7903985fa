// Stand-ins for the components the workload controllers hand their pods to, so that tests can run
// them against the embedded API server alone: a scheduler that binds pending pods through
// pods/binding (to the node a daemon pod's node affinity names, else round-robin over the nodes
// whose taints it tolerates) — the scheduler's job — and a kubelet that reports bound pods Running
// and Ready, with a pod IP, through pods/status, and finishes graceful deletions (grace 0) — the
// kubelet's job. They act only through the API, as the real ones do. `holdReady` keeps chosen pods not ready.
import type * as api from '../../../src/api/index.js';
import { type EventType, Informer, InformerFactory, KubeClient, type ResourceRef, keyOf, loadKubeConfig, rfc3339 } from '../../../src/kube/index.js';
import { NODES, PODS } from '../../../src/cluster/workloads/resources.js';
import { targetNode } from '../../../src/cluster/workloads/daemonset.js';
import { firstUntoleratedTaint } from '../../../src/cluster/scheduler/taints.js';
import { startTestApiServer, type TestApiServer } from '../../helpers/apiserver.js';

export interface StandInOptions {
  /** Delay before a bound pod is reported ready (default 50 ms). */
  readyAfterMs?: number;
  /** Pods for which this returns true are reported Running but never Ready. */
  holdReady?: (pod: api.Pod) => boolean;
  /** The phase each bound pod reaches (default Running); Succeeded/Failed pods are reported not ready. */
  phase?: (pod: api.Pod) => 'Running' | 'Succeeded' | 'Failed';
  /** Whether a node's kubelet is running (default: all are); a stopped one reports nothing. */
  kubeletUp?: (node: string) => boolean;
  /** Run the scheduler stand-in (default true). */
  schedule?: boolean;
  /** Whether the kubelet finishes a pod's graceful deletion now (default: always); it is looked at again on the pod's next event. */
  finishDeletion?: (pod: api.Pod) => boolean;
}

export interface StandIns {
  stop(): Promise<void>;
}

export function startStandIns(client: KubeClient, options: StandInOptions = {}): StandIns {
  const factory = new InformerFactory(client);
  const pods = factory.forResource(PODS);
  const nodes = factory.forResource(NODES);
  const busy = new Set<string>();
  let next = 0;
  let nextIp = 0;
  const stop = new AbortController();

  const act = (key: string, work: () => Promise<unknown>, afterMs = 0) => {
    if (busy.has(key)) return;
    busy.add(key);
    setTimeout(() => {
      work()
        .catch(() => undefined) // gone or changed meanwhile: the next event brings it back
        .finally(() => busy.delete(key));
    }, afterMs);
  };

  const handle = (pod: api.Pod) => {
    if (stop.signal.aborted) return;
    const { name, namespace } = pod.metadata;
    const key = `${namespace}/${name}`;
    // A pod deleted gracefully: its kubelet stops it and then deletes it with grace 0.
    if (pod.metadata.deletionTimestamp) {
      if (pod.spec?.nodeName && (options.kubeletUp?.(pod.spec.nodeName) ?? true) && (options.finishDeletion?.(pod) ?? true)) {
        act(`finish ${key}`, () => client.delete(PODS, name, namespace, { gracePeriodSeconds: 0, preconditions: { uid: pod.metadata.uid } }), options.readyAfterMs ?? 50);
      }
      return;
    }
    if (pod.status?.phase === 'Succeeded' || pod.status?.phase === 'Failed') return;
    if (!pod.spec?.nodeName) {
      if (options.schedule === false) return;
      // Nodes whose NoSchedule/NoExecute taints the pod tolerates (the scheduler's taint filter).
      const names = nodes
        .list()
        .filter((n) => !firstUntoleratedTaint(n.spec?.taints, pod.spec?.tolerations))
        .map((n) => n.metadata.name)
        .sort();
      // (A pod seen again while its binding is on the way takes no second turn of the round robin,
      // which would put the next pod on the same node.)
      if (busy.has(`bind ${key}`)) return;
      const node = targetNode(pod) ?? names[next++ % Math.max(1, names.length)];
      if (!node) return;
      act(`bind ${key}`, () => client.request('POST', `/api/v1/namespaces/${namespace}/pods/${name}/binding`, { body: { apiVersion: 'v1', kind: 'Binding', metadata: { name }, target: { kind: 'Node', name: node } } }));
      return;
    }
    if (options.kubeletUp && !options.kubeletUp(pod.spec.nodeName)) return;
    const phase = options.phase?.(pod) ?? 'Running';
    const held = phase !== 'Running' || (options.holdReady?.(pod) ?? false);
    const ready = (pod.status?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True');
    if (pod.status?.phase === phase && ready === !held) return;
    act(
      `ready ${key}`,
      () => {
        const now = rfc3339();
        const status = held ? 'False' : 'True';
        const podIP = pod.status?.podIP ?? `10.128.${Math.floor(++nextIp / 250)}.${(nextIp % 250) + 1}`;
        return client.mergePatch(PODS, name, namespace, {
          status: {
            phase,
            startTime: pod.status?.startTime ?? now,
            podIP,
            podIPs: [{ ip: podIP }],
            conditions: ['PodScheduled', 'Initialized', 'ContainersReady', 'Ready'].map((type) => ({ type, status: type === 'PodScheduled' || type === 'Initialized' ? 'True' : status, lastTransitionTime: now })),
          },
        }, 'status');
      },
      options.readyAfterMs ?? 50,
    );
  };
  pods.on((type, pod) => type !== 'delete' && handle(pod));
  nodes.on(() => {
    for (const pod of pods.list()) if (!pod.spec?.nodeName) handle(pod);
  });
  factory.start(stop.signal);
  return {
    async stop() {
      stop.abort();
      await factory.stop();
    },
  };
}

/** An API server with namespace `default`, a client, and helpers to create nodes. */
export async function startWorkloadTestServer(): Promise<{ api: TestApiServer; client: KubeClient }> {
  const api = await startTestApiServer();
  const client = new KubeClient(loadKubeConfig(api.kubeconfigPath));
  return { api, client };
}

/** A Node with what its kubelet would report on registering: capacity and allocatable. */
export async function createNode(client: KubeClient, name: string, extra: { labels?: Record<string, string>; taints?: api.Taint[]; unschedulable?: boolean } = {}): Promise<api.Node> {
  await client.create(NODES, {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name, labels: { 'kubernetes.io/hostname': name, ...(extra.labels ?? {}) } },
    spec: { ...(extra.taints ? { taints: extra.taints } : {}), ...(extra.unschedulable ? { unschedulable: true } : {}) },
  });
  const resources = { cpu: '4', memory: '8Gi', pods: '110' };
  return client.mergePatch(NODES, name, undefined, { status: { capacity: resources, allocatable: resources } }, 'status');
}

/**
 * An informer whose cache and events lag the API server by `lagMs`: a slow watch, for showing that
 * a controller's expectations keep it from acting twice on what it has not seen yet.
 */
export class LaggingInformer<T extends api.KubeObject> extends Informer<T> {
  private readonly mirror = new Map<string, T>();
  private readonly lagging: Array<(type: EventType, object: T, old?: T) => void> = [];

  constructor(client: KubeClient, resource: ResourceRef<T>, lagMs: number) {
    super(client, resource);
    super.on((type, object, old) => {
      setTimeout(() => {
        if (type === 'delete') this.mirror.delete(keyOf(object));
        else this.mirror.set(keyOf(object), object);
        for (const handler of this.lagging) handler(type, object, old);
      }, lagMs);
    });
  }

  override on(handler: (type: EventType, object: T, old?: T) => void): void {
    this.lagging.push(handler);
    for (const object of this.mirror.values()) handler('add', object);
  }

  override list(): T[] {
    return [...this.mirror.values()];
  }

  override get(name: string, namespace?: string): T | undefined {
    return this.mirror.get(namespace ? `${namespace}/${name}` : name);
  }

  override getByKey(key: string): T | undefined {
    return this.mirror.get(key);
  }
}
