// Garbage collection by owner references, as kube-controller-manager's garbage collector decides
// it: what a DELETE does to the object's finalizers for each propagation policy, and, over the
// whole graph of objects, which actions converge it — delete dependents whose owners are gone,
// delete the dependents of an owner in foreground deletion and release it once no dependent blocks
// it, strip the owner reference from the dependents of an orphaning owner and then release it.
// Pure and level-triggered: `gcActions(objects)` is recomputed from the current objects, so after a
// restart the dependents of owners deleted meanwhile are still found (their owners are absent).

import type { ObjectMeta, OwnerReference } from '../../common/kube-types.js';

export const FOREGROUND_FINALIZER = 'foregroundDeletion';
export const ORPHAN_FINALIZER = 'orphan';

export type PropagationPolicy = 'Background' | 'Foreground' | 'Orphan';

export interface GcObject {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta;
}

export interface ObjectRef {
  apiVersion: string;
  kind: string;
  namespace: string;
  name: string;
  uid: string;
}

export type GcAction =
  | { type: 'delete'; object: ObjectRef; propagationPolicy: PropagationPolicy }
  | { type: 'removeOwnerReferences'; object: ObjectRef; ownerUids: string[] }
  | { type: 'removeFinalizer'; object: ObjectRef; finalizer: string };

/**
 * The finalizers an object has after a DELETE with this policy: Foreground adds
 * `foregroundDeletion`, Orphan adds `orphan`, and each policy drops the other's finalizer. With none
 * left the object goes at once; otherwise it gets a deletionTimestamp and stays.
 */
export function finalizersOnDelete(existing: string[] | undefined, policy: PropagationPolicy = 'Background'): { finalizers: string[]; deleteNow: boolean } {
  const kept = (existing ?? []).filter((f) => f !== FOREGROUND_FINALIZER && f !== ORPHAN_FINALIZER);
  if (policy === 'Foreground') kept.push(FOREGROUND_FINALIZER);
  if (policy === 'Orphan') kept.push(ORPHAN_FINALIZER);
  return { finalizers: kept, deleteNow: kept.length === 0 };
}

function refOf(o: GcObject): ObjectRef {
  return {
    apiVersion: o.apiVersion ?? '', kind: o.kind ?? '', namespace: o.metadata.namespace ?? '',
    name: o.metadata.name ?? '', uid: o.metadata.uid ?? '',
  };
}

function has(o: GcObject, finalizer: string): boolean {
  return (o.metadata.finalizers ?? []).includes(finalizer);
}

/** The relations the rules read: an object by its uid, and the objects naming a uid as their owner. */
export interface GcIndex {
  byUid(uid: string): GcObject | undefined;
  dependentsOf(uid: string): readonly GcObject[];
}

/** The index of a whole set of objects, built in one pass. */
export function indexOf(objects: Iterable<GcObject>): GcIndex {
  const byUid = new Map<string, GcObject>();
  const dependents = new Map<string, GcObject[]>();
  for (const o of objects) {
    if (o.metadata.uid) byUid.set(o.metadata.uid, o);
    for (const r of o.metadata.ownerReferences ?? []) {
      let list = dependents.get(r.uid);
      if (!list) dependents.set(r.uid, list = []);
      list.push(o);
    }
  }
  return { byUid: (uid) => byUid.get(uid), dependentsOf: (uid) => dependents.get(uid) ?? [] };
}

/** Every action that moves the objects towards their collected state; empty when converged. */
export function gcActions(objects: GcObject[]): GcAction[] {
  return gcActionsFor(objects, indexOf(objects));
}

/**
 * The actions that concern `candidates`, each as an owner (being deleted, waiting on or orphaning
 * its dependents) and as a dependent (of owners gone or waiting), reading their relations from
 * `index`, which holds every object. Over all objects it is gcActions; over the objects changed
 * since the last round and their owners and dependents, the same actions as a whole round would
 * find for them, without reading the rest.
 */
export function gcActionsFor(candidates: Iterable<GcObject>, index: GcIndex): GcAction[] {
  const actions: GcAction[] = [];
  const objects = [...candidates];

  for (const owner of objects) {
    if (!owner.metadata.deletionTimestamp) continue;
    const uid = owner.metadata.uid ?? '';
    const deps = index.dependentsOf(uid);
    if (has(owner, ORPHAN_FINALIZER)) {
      for (const d of deps) actions.push({ type: 'removeOwnerReferences', object: refOf(d), ownerUids: [uid] });
      if (deps.length === 0) actions.push({ type: 'removeFinalizer', object: refOf(owner), finalizer: ORPHAN_FINALIZER });
    } else if (has(owner, FOREGROUND_FINALIZER)) {
      const blocking = deps.filter((d) => d.metadata.ownerReferences!.some((r) => r.uid === uid && r.blockOwnerDeletion));
      if (blocking.length === 0) actions.push({ type: 'removeFinalizer', object: refOf(owner), finalizer: FOREGROUND_FINALIZER });
    }
  }

  for (const item of objects) {
    const refs = item.metadata.ownerReferences ?? [];
    if (refs.length === 0 || item.metadata.deletionTimestamp) continue;
    const absent: OwnerReference[] = [];
    const waiting: OwnerReference[] = [];
    let solid = 0;
    for (const r of refs) {
      const owner = index.byUid(r.uid);
      // An object of the same name but another uid is a different object: the owner is gone.
      if (!owner || owner.metadata.name !== r.name || owner.kind !== r.kind) absent.push(r);
      else if (owner.metadata.deletionTimestamp && has(owner, FOREGROUND_FINALIZER)) waiting.push(r);
      else if (owner.metadata.deletionTimestamp && has(owner, ORPHAN_FINALIZER)) continue;
      else solid++;
    }
    if (absent.length === 0 && waiting.length === 0) continue;
    if (solid > 0) {
      actions.push({ type: 'removeOwnerReferences', object: refOf(item), ownerUids: [...absent, ...waiting].map((r) => r.uid) });
      continue;
    }
    if (absent.length + waiting.length < refs.length) continue; // the rest are orphaning owners
    // A dependent that itself has dependents is deleted in the foreground when an owner waits for
    // it, so that the owner's wait covers the whole subtree.
    const itemDeps = index.dependentsOf(item.metadata.uid ?? '');
    const policy: PropagationPolicy = has(item, ORPHAN_FINALIZER) ? 'Orphan'
      : waiting.length > 0 && itemDeps.length > 0 ? 'Foreground' : has(item, FOREGROUND_FINALIZER) ? 'Foreground' : 'Background';
    actions.push({ type: 'delete', object: refOf(item), propagationPolicy: policy });
  }
  return actions;
}
