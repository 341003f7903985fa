// The garbage collector's loop: it keeps the graph of objects — what garbage-collection.ts reads
// of each (identity, owner references, finalizers, deletionTimestamp), filled from one read of
// the store at start and kept from its watch, as kube's GC keeps its graph from informers, with
// its relations (each uid's object, each owner's dependents) — and after a change to that graph
// (debounced) asks garbage-collection.ts what to do about the objects the changes concern: each
// object changed, its owners (one in foreground deletion may be waiting for it) and its
// dependents (their owner changed or went), as kube's GC works through the nodes its graph marks.
// The first round looks at every object, so dependents orphaned while the server was down are
// found. Writes that leave the graph as it was (a Lease renewed, a status written) start no round.
// A round used to read the whole graph: 115–170 ms of the event loop at 10,000 nodes for every
// change, each holding up every request (bench:nodes' registration); now it reads what changed.
// Rounds are still spaced by at least ten times the last one's duration, so that tens of
// thousands of objects changing without pause cost the collector at most about a tenth of a core.
//
// controllers/ holds what kube-controller-manager and kube-apiserver's own loops would run, done
// inside the API server: the garbage collector (pure rules in garbage-collection.ts, this loop),
// namespace lifecycle, the `kubernetes` Service, PodDisruptionBudget status with the eviction
// subresource (pure rules in disruption.ts, eviction.ts).
import { jsonEqual } from '../../common/json.js';
import { logger } from '../../common/log.js';
import type { ApiServer } from '../server.js';
import type { ResourceType } from '../registry/resource-type.js';
import { gcActionsFor, type GcAction, type GcIndex, type GcObject } from './garbage-collection.js';
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
  const graph = new Map<string, GcObject>();
  /** The graph's relations, kept as it changes: each uid's key, and the keys of the objects naming a uid as owner. */
  const keyByUid = new Map<string, string>();
  const dependentKeys = new Map<string, Set<string>>();
  const index: GcIndex = {
    byUid: (uid) => {
      const key = keyByUid.get(uid);
      return key === undefined ? undefined : graph.get(key);
    },
    dependentsOf: (uid) => [...(dependentKeys.get(uid) ?? [])].flatMap((key) => graph.get(key) ?? []),
  };
  const link = (key: string, node: GcObject, on: boolean) => {
    const uid = node.metadata.uid;
    if (typeof uid === 'string') {
      if (on) keyByUid.set(uid, key);
      else if (keyByUid.get(uid) === key) keyByUid.delete(uid);
    }
    for (const r of node.metadata.ownerReferences ?? []) {
      let keys = dependentKeys.get(r.uid);
      if (on) {
        if (!keys) dependentKeys.set(r.uid, keys = new Set());
        keys.add(key);
      } else if (keys) {
        keys.delete(key);
        if (keys.size === 0) dependentKeys.delete(r.uid);
      }
    }
  };
  /** The keys whose actions a change may have changed: the object's own, its owners' and its dependents'. */
  let dirty = new Set<string>();
  /** Marks what a change of `key` from `before` to `after` (absent when deleted) concerns; true when anything was. */
  const markAround = (key: string, before: GcObject | undefined, after: GcObject | undefined): boolean => {
    const size = dirty.size;
    if (after && (after.metadata.ownerReferences?.length || after.metadata.deletionTimestamp)) dirty.add(key);
    for (const node of [before, after]) {
      if (!node) continue;
      if (typeof node.metadata.uid === 'string') for (const k of dependentKeys.get(node.metadata.uid) ?? []) dirty.add(k);
      for (const r of node.metadata.ownerReferences ?? []) {
        const owner = keyByUid.get(r.uid);
        if (owner !== undefined) dirty.add(owner);
      }
    }
    return dirty.size > size;
  };
  /** How long the last round took to compute its actions, in milliseconds. */
  let lastRoundMs = 0;
  const runRound = async (): Promise<boolean> => {
    const started = performance.now();
    const candidates = [...dirty].flatMap((key) => graph.get(key) ?? []);
    dirty = new Set();
    const actions = gcActionsFor(candidates, index);
    lastRoundMs = performance.now() - started;
    for (const action of actions) {
      try {
        await apply(action, keyByUid);
      } catch (err) {
        // NotFound/Conflict: the world moved on, and its change marks the object again; any other
        // failure is tried again in the next round a change starts.
        const key = keyByUid.get(action.object.uid);
        if (key !== undefined) dirty.add(key);
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
  /** Records an object in the graph; true when what garbage collection reads of it changed anything to look at. */
  const record = (key: string, object: KubeObject): boolean => {
    const { name, namespace, uid, ownerReferences, finalizers, deletionTimestamp } = object.metadata as GcObject['metadata'];
    const node: GcObject = { apiVersion: object.apiVersion, kind: object.kind, metadata: { name, namespace, uid, ownerReferences, finalizers, deletionTimestamp } };
    const before = graph.get(key);
    // Compared as values, not serialized: every write to the store comes through here.
    if (before && jsonEqual(before, node)) return false;
    if (before) link(key, before, false);
    graph.set(key, node);
    link(key, node, true);
    return markAround(key, before, node);
  };
  const forget = (key: string): boolean => {
    const before = graph.get(key);
    if (!before) return false;
    link(key, before, false);
    graph.delete(key);
    return markAround(key, before, undefined);
  };
  const start = storage.currentRevision();
  for (const item of storage.list('/').items) record(item.key, item.object);
  // The first round looks at everything: dependents orphaned while the server was down are found.
  dirty = new Set(graph.keys());
  const watcher = storage.watch('/', start, (event) => {
    if (event.type === 'DELETED' ? forget(event.key) : record(event.key, event.object)) schedule();
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
