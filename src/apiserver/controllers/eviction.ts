// Serves `pods/<p>/eviction` (policy/v1 and v1beta1) and keeps PodDisruptionBudget status current,
// wiring the pure decisions of disruption.ts into a running API server. The status is recomputed
// for a namespace whenever a pod or PDB there changes (level-triggered: rewriting an unchanged
// status is skipped, so the PDB's own watch event settles), and afresh before every eviction.
import { logger } from '../../common/log.js';
import type { ApiServer, PostRequest } from '../server.js';
import { computePdbStatus, decideEviction, type ControllerScale, type Pdb, type Pod } from './disruption.js';
import { ApiError } from '../errors.js';
import { asKind } from '../kinds/strategy.js';
import type * as api from '../../api/index.js';

const log = logger('disruption');
const PDB_PREFIX = '/policy/poddisruptionbudgets/';
const POD_PREFIX = '/core/pods/';

/** The delete options an Eviction may carry. */
type EvictionDeleteOptions = { dryRun?: string[]; preconditions?: { uid?: string; resourceVersion?: string }; gracePeriodSeconds?: number | null };

export interface DisruptionController {
  /** Starts keeping PDB statuses current (the disruption controller's loop, which one API server of several runs: leadership.ts). */
  syncStatuses(): { stop(): void };
  stop(): void;
}

/** `syncStatuses: false`: evictions only, until syncStatuses() is called. */
export function enableEvictions(server: ApiServer, options: { syncStatuses?: boolean } = {}): DisruptionController {
  const { storage, registry, resources } = server;
  const pdbType = registry.lookup('policy', 'v1', 'poddisruptionbudgets')!;
  const podType = registry.lookup('', 'v1', 'pods')!;

  const list = <T extends { metadata: object }>(prefix: string): T[] => storage.list(prefix).items.map((i) => asKind<T>(i.object));
  const replicasOf = (key: string): number | undefined => {
    const o = storage.get(key)?.object;
    return o ? ((o.spec as { replicas?: number } | undefined)?.replicas ?? 1) : undefined;
  };
  const scaleOf: ControllerScale = (ns, ref) => {
    switch (ref.kind) {
      case 'ReplicaSet': {
        const stored = storage.get(`/apps/replicasets/${ns}/${ref.name}`)?.object;
        const rs = stored && asKind<api.ReplicaSet>(stored);
        const owner = rs?.metadata.ownerReferences?.find((r) => r.controller && r.kind === 'Deployment');
        return owner ? replicasOf(`/apps/deployments/${ns}/${owner.name}`) : rs ? (rs.spec?.replicas ?? 1) : undefined;
      }
      case 'StatefulSet': return replicasOf(`/apps/statefulsets/${ns}/${ref.name}`);
      case 'ReplicationController': return replicasOf(`/core/replicationcontrollers/${ns}/${ref.name}`);
      default: return undefined;
    }
  };

  /** Writes a PDB's status; returns the PDB as stored (with its new resourceVersion). */
  const writeStatus = async (pdb: Pdb, status: Pdb['status']): Promise<Pdb> =>
    asKind<Pdb>(await resources.update(pdbType, pdb.metadata.namespace, pdb.metadata.name, { ...pdb, status }, { subresource: 'status' }));

  /** Recomputes the status of every PDB in a namespace; returns them as now stored. */
  const syncNamespace = async (ns: string): Promise<Pdb[]> => {
    const pdbs = list<Pdb>(`${PDB_PREFIX}${ns}/`);
    if (pdbs.length === 0) return [];
    const pods = list<Pod>(`${POD_PREFIX}${ns}/`);
    const out: Pdb[] = [];
    for (const pdb of pdbs) {
      const status = computePdbStatus(pdb, pods, scaleOf, new Date());
      // Keep the transition time stable: a status equal apart from it is not rewritten.
      const comparable = (s: Pdb['status']) => JSON.stringify({ ...s, conditions: s?.conditions?.map((c) => ({ ...c, lastTransitionTime: undefined })) });
      if (comparable(status) !== comparable(pdb.status)) {
        out.push(await writeStatus(pdb, status));
      } else out.push(pdb);
    }
    return out;
  };

  // Status syncs and evictions run one at a time: each reads the PDB and writes it back with its
  // resourceVersion, so interleaving them would only produce conflicts.
  let running: Promise<unknown> = Promise.resolve();
  const serialized = <T>(fn: () => Promise<T>): Promise<T> => {
    const result = running.then(fn);
    running = result.catch(() => undefined);
    return result;
  };
  const pending = new Set<string>();
  const schedule = (key: string) => {
    const ns = key.split('/')[3];
    if (!ns || pending.has(ns)) return;
    pending.add(ns);
    void serialized(async () => {
      pending.delete(ns);
      try {
        await syncNamespace(ns);
      } catch (err) {
        log.warn({ err, namespace: ns }, 'PDB status sync failed');
      }
    });
  };
  const syncing = new Set<{ stop(): void }>();
  const syncStatuses = () => {
    const from = storage.currentRevision();
    const watchers = [storage.watch(PDB_PREFIX, from, (e) => schedule(e.key)), storage.watch(POD_PREFIX, from, (e) => schedule(e.key))];
    for (const item of storage.list(PDB_PREFIX).items) schedule(item.key);
    const handle = {
      stop: () => {
        watchers.forEach((w) => w.stop());
        syncing.delete(handle);
      },
    };
    syncing.add(handle);
    return handle;
  };
  if (options.syncStatuses !== false) syncStatuses();

  /** One eviction: the PDB status afresh, the decision, then the budget and the pod written. */
  const evict = async (request: PostRequest, ns: string, name: string) => {
    const pod = asKind<Pod>(resources.get(podType, ns, name));
    const pdbs = await syncNamespace(ns);
    const decision = decideEviction(pod, pdbs, new Date());
    if (decision.action === 'refuse') {
      const s = decision.status;
      throw new ApiError(s.code, s.reason, s.message, s.details);
    }
    const deleteOptions = request.body.deleteOptions as EvictionDeleteOptions | undefined;
    const dryRun = request.dryRun || (deleteOptions?.dryRun ?? []).includes('All');
    if (decision.pdb && !dryRun) {
      const pdb = pdbs.find((p) => p.metadata.name === decision.pdb!.name)!;
      await writeStatus(pdb, decision.pdb.status);
    }
    await resources.delete(podType, ns, name, { dryRun, preconditions: deleteOptions?.preconditions, gracePeriodSeconds: deleteOptions?.gracePeriodSeconds ?? undefined });
    return { code: 201, body: { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', code: 201 } };
  };

  server.addPostHandler(async (request) => {
    if (request.group !== '' || request.resource !== 'pods' || request.subresource !== 'eviction' || !request.name || !request.namespace) return undefined;
    const ns = request.namespace;
    const name = request.name;
    // A PDB changed by someone else between read and write: decide again, as kube-apiserver does.
    for (let attempt = 1; ; attempt++) {
      try {
        return await serialized(() => evict(request, ns, name));
      } catch (err) {
        if (!(err instanceof ApiError && err.reason === 'Conflict') || attempt >= 3) throw err;
      }
    }
  });

  return { syncStatuses, stop: () => [...syncing].forEach((h) => h.stop()) };
}
