// The garbage collector's loop: after any change (debounced), reads every object, asks
// garbage-collection.ts what to do, and does it through the server's object semantics. Being
// level-triggered over the whole store, it also finds dependents orphaned while the server was
// down. A full scan per round is fine at the sizes a single-machine control plane holds.
import { logger } from '../common/log.js';
import type { ApiServer } from './server.js';
import type { ResourceType } from './registry.js';
import { gcActions, type GcAction, type GcObject } from './garbage-collection.js';

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
    const meta = storage.get(key!)?.object.metadata ?? {};
    const [field, kept] = action.type === 'removeOwnerReferences'
      ? ['ownerReferences', ((meta.ownerReferences ?? []) as { uid: string }[]).filter((r) => !action.ownerUids.includes(r.uid))]
      : ['finalizers', ((meta.finalizers ?? []) as string[]).filter((f) => f !== action.finalizer)];
    // An emptied list goes away entirely, as Kubernetes serialises it (omitempty).
    await resources.patch(type, ns, action.object.name, 'merge', { metadata: { [field]: kept.length > 0 ? kept : null } }, {});
  };

  let timer: NodeJS.Timeout | undefined;
  let round: Promise<void> = Promise.resolve();
  let stopped = false;
  const runRound = async (): Promise<boolean> => {
    const items = storage.list('/').items;
    const keyByUid = new Map<string, string>();
    for (const i of items) if (typeof i.object.metadata.uid === 'string') keyByUid.set(i.object.metadata.uid, i.key);
    const actions = gcActions(items.map((i) => i.object as GcObject));
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
    }, options.debounceMs ?? 100);
  };
  const watcher = storage.watch('/', storage.currentRevision(), schedule);
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
