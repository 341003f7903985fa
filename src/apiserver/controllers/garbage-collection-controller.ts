// The garbage collector's loop: it keeps the graph of objects — what garbage-collection.ts reads
// of each (identity, owner references, finalizers, deletionTimestamp), filled from one read of
// the store at start and kept from its watch, as kube's GC keeps its graph from informers — and
// after a change to that graph (debounced) asks garbage-collection.ts what to do over all of it,
// and does it through the server's object semantics. Level-triggered over the whole graph, it
// also finds dependents orphaned while the server was down. Writes that leave the graph as it was
// (a Lease renewed, a status written) start no round: rereading and parsing every stored object
// after each of them kept the server busy in bursts that delayed every request (bench:nodes).
// A round reads the whole graph, so rounds are spaced by at least ten times the last one's
// duration: with tens of thousands of objects changing without pause (10,000 nodes registering,
// each Lease owned by its Node) the collector takes at most about a tenth of a core, and answers
// as fast as before on a small graph.
//
// controllers/ holds what kube-controller-manager and kube-apiserver's own loops would run, done
// inside the API server: the garbage collector (pure rules in garbage-collection.ts, this loop),
// namespace lifecycle, the `kubernetes` Service, PodDisruptionBudget status with the eviction
// subresource (pure rules in disruption.ts, eviction.ts).
import { logger } from '../../common/log.js';
import type { ApiServer } from '../server.js';
import type { ResourceType } from '../registry/resource-type.js';
import { gcActions, type GcAction, type GcObject } from './garbage-collection.js';
import type { KubeObject } from '../storage/types.js';

const log = logger('garbage-collector');

export interface GarbageCollector {
  /** Resolves once no action is left (for tests and shutdown). */
  idle(): Promise<void>;
  stop(): void;
}

export function enableGarbageCollector(server: ApiServer, options: { debounceMs?: number } = {}): GarbageCollector {
  const { storage, registry, resources } = server;
  const typeOfKey = (key: string): ResourceType | undefined => {
    const [, group, resource] = key.split('/');
    if (group === 'core') return registry.lookup('', 'v1', resource);
    const versions = registry.groups().find((g) => g.name === group)?.versions ?? [];
    for (const v of versions) {
      const t = registry.lookup(group, v, resource);
      if (t) return t;
    }
    return undefined;
  };

  const apply = async (action: GcAction, keyByUid: Map<string, string>): Promise<void> => {
    const key = keyByUid.get(action.object.uid);
    const type = key ? typeOfKey(key) : undefined;
    if (!type) return;
    const ns = action.object.namespace || undefined;
    if (action.type === 'delete') {
      await resources.delete(type, ns, action.object.name, { propagationPolicy: action.propagationPolicy, preconditions: { uid: action.object.uid } });
      return;
    }
    const meta: Partial<KubeObject['metadata']> = storage.get(key!)?.object.metadata ?? {};
    const [field, kept] = action.type === 'removeOwnerReferences'
      ? ['ownerReferences', (meta.ownerReferences ?? []).filter((r) => !action.ownerUids.includes(r.uid))]
      : ['finalizers', (meta.finalizers ?? []).filter((f) => f !== action.finalizer)];
    // An emptied list goes away entirely, as Kubernetes serialises it (omitempty).
    await resources.patch(type, ns, action.object.name, 'merge', { metadata: { [field]: kept.length > 0 ? kept : null } }, {});
  };

  let timer: NodeJS.Timeout | undefined;
  let round: Promise<void> = Promise.resolve();
  let stopped = false;
  /** The graph: each stored object by key, as much of it as garbage collection reads. */
  const graph = new Map<string, { node: GcObject; text: string }>();
  /** How long the last round took to compute its actions, in milliseconds. */
  let lastRoundMs = 0;
  const runRound = async (): Promise<boolean> => {
    const started = performance.now();
    const keyByUid = new Map<string, string>();
    for (const [key, { node }] of graph) if (typeof node.metadata.uid === 'string') keyByUid.set(node.metadata.uid, key);
    const actions = gcActions([...graph.values()].map((e) => e.node));
    lastRoundMs = performance.now() - started;
    for (const action of actions) {
      try {
        await apply(action, keyByUid);
      } catch (err) {
        // NotFound/Conflict: the world moved on; the next round sees it afresh.
        log.debug({ err, action: action.type, object: action.object }, 'garbage collection action skipped');
      }
    }
    return actions.length > 0;
  };
  const schedule = () => {
    if (stopped || timer) return;
    timer = setTimeout(() => {
      timer = undefined;
      round = round.then(runRound).then(() => undefined, (err) => log.warn({ err }, 'garbage collection round failed'));
    }, Math.max(options.debounceMs ?? 100, 10 * lastRoundMs));
  };
  /** Records an object in the graph; true when what garbage collection reads of it changed. */
  const record = (key: string, object: KubeObject): boolean => {
    const { name, namespace, uid, ownerReferences, finalizers, deletionTimestamp } = object.metadata as GcObject['metadata'];
    const node: GcObject = { apiVersion: object.apiVersion, kind: object.kind, metadata: { name, namespace, uid, ownerReferences, finalizers, deletionTimestamp } };
    const text = JSON.stringify(node);
    const before = graph.get(key);
    graph.set(key, { node, text });
    return before ? before.text !== text : Boolean(ownerReferences?.length || deletionTimestamp);
  };
  const start = storage.currentRevision();
  for (const item of storage.list('/').items) record(item.key, item.object);
  const watcher = storage.watch('/', start, (event) => {
    if (event.type === 'DELETED' ? graph.delete(event.key) : record(event.key, event.object)) schedule();
  });
  schedule();

  return {
    async idle() {
      for (let i = 0; i < 50; i++) {
        await round;
        if (timer) { await new Promise((r) => setTimeout(r, (options.debounceMs ?? 100) + 10)); continue; }
        if (!(await runRound())) return;
      }
    },
    stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      watcher.stop();
    },
  };
}
