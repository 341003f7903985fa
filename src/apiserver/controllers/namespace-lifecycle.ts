// Namespace lifecycle, done inside the API server where kube-controller-manager would do it: a
// new namespace gets its `default` ServiceAccount; a namespace being deleted (Terminating) has
// everything in it deleted, then goes itself. Interrupted clean-ups resume at start-up. (The
// namespaces the cluster itself relies on cannot be deleted: kinds/namespaces.ts, `undeletable`.)
import { logger } from '../../common/log.js';
import type { Registry } from '../registry/registry.js';
import type { ResourceType } from '../registry/resource-type.js';
import type { Resources } from '../registry/resources.js';
import type { ResourceHooks } from '../registry/write-context.js';

const log = logger('apiserver', { controller: 'namespace' });

function allNamespacedTypes(registry: Registry): ResourceType[] {
  const types: ResourceType[] = [...registry.resources('', 'v1')];
  for (const group of registry.groups()) types.push(...registry.resources(group.name, group.versions[0]));
  return types.filter((t) => t.namespaced);
}

const inProgress = new Set<string>();


/** Deletes everything in a Terminating namespace, then the namespace. Retries until done. */
async function finalize(resources: Resources, registry: Registry, name: string): Promise<void> {
  if (inProgress.has(name)) return;
  inProgress.add(name);
  try {
    for (let attempt = 0; attempt < 100; attempt++) {
      let remaining = 0;
      for (const type of allNamespacedTypes(registry)) {
        const { items } = resources.store.list(resources.prefix(type, name));
        for (const item of items) {
          remaining++;
          const meta = item.object.metadata;
          if (meta.deletionTimestamp) continue;
          await resources.delete(type, name, meta.name).catch(() => undefined);
        }
      }
      if (remaining === 0) {
        const key = `/core/namespaces//${name}`;
        if (resources.store.get(key)) await resources.store.delete(key).catch(() => undefined);
        log.info({ namespace: name }, 'namespace removed');
        return;
      }
      // Objects held by finalizers: wait for their controllers to let go.
      await new Promise((r) => setTimeout(r, Math.min(100 * 2 ** attempt, 2000)));
    }
    log.warn({ namespace: name }, 'namespace still has content held by finalizers');
  } finally {
    inProgress.delete(name);
  }
}

export function namespaceHooks(resources: Resources, registry: Registry): ResourceHooks {
  return {
    afterWrite(type, object, previous, deleted) {
      if (type.resource !== 'namespaces' || type.group !== '' || deleted) return;
      const name = object.metadata.name as string;
      if (object.metadata.deletionTimestamp) {
        void finalize(resources, registry, name);
      } else if (!previous) {
        const sa = registry.lookup('', 'v1', 'serviceaccounts')!;
        void resources.create(sa, name, { metadata: { name: 'default' } }).catch(() => undefined);
      }
    },
  };
}

/** Resumes the clean-up of namespaces left Terminating by an earlier run. */
export function cleanUpTerminatingNamespaces(resources: Resources, registry: Registry): void {
  for (const item of resources.store.list('/core/namespaces/').items) {
    const meta = item.object.metadata;
    if (meta.deletionTimestamp) void finalize(resources, registry, meta.name);
  }
}
