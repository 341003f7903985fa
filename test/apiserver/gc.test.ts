// Garbage collection: Deployment → ReplicaSet → Pods under each propagation policy, dangling
// owners, and multiple owners. The actions are applied to a plain list until nothing is left to do.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { finalizersOnDelete, gcActions, gcActionsFor, indexOf, type GcObject, type PropagationPolicy } from '../../src/apiserver/controllers/garbage-collection.js';

function obj(kind: string, name: string, owner?: GcObject, block = true): GcObject {
  return {
    apiVersion: kind === 'Pod' ? 'v1' : 'apps/v1', kind,
    metadata: {
      name, namespace: 'default', uid: `${kind}-${name}`,
      ownerReferences: owner ? [{ apiVersion: owner.apiVersion!, kind: owner.kind!, name: owner.metadata.name!, uid: owner.metadata.uid!, controller: true, blockOwnerDeletion: block }] : undefined,
    },
  };
}

function world(block = true): GcObject[] {
  const d = obj('Deployment', 'web');
  const rs = obj('ReplicaSet', 'web-1', d, block);
  return [d, rs, obj('Pod', 'web-1-a', rs, block), obj('Pod', 'web-1-b', rs, block), obj('ConfigMap', 'unrelated')];
}

function del(objects: GcObject[], uid: string, policy?: PropagationPolicy): void {
  const i = objects.findIndex((o) => o.metadata.uid === uid);
  if (i < 0 || objects[i].metadata.deletionTimestamp) return;
  const { finalizers, deleteNow } = finalizersOnDelete(objects[i].metadata.finalizers, policy);
  if (deleteNow) objects.splice(i, 1);
  else objects[i] = { ...objects[i], metadata: { ...objects[i].metadata, finalizers, deletionTimestamp: 'now' } };
}

/** Runs GC to convergence, returning the names still present after each round. */
function converge(objects: GcObject[]): string[][] {
  const rounds: string[][] = [];
  for (let round = 0; round < 20; round++) {
    if (gcActions(objects).length === 0) return rounds;
    converge1(objects);
    rounds.push(objects.map((o) => o.metadata.name!));
  }
  throw new Error('garbage collection did not converge');
}

test('finalizers a DELETE leaves for each propagation policy', () => {
  assert.deepEqual(finalizersOnDelete(undefined), { finalizers: [], deleteNow: true });
  assert.deepEqual(finalizersOnDelete(['x'], 'Background'), { finalizers: ['x'], deleteNow: false });
  assert.deepEqual(finalizersOnDelete([], 'Foreground'), { finalizers: ['foregroundDeletion'], deleteNow: false });
  assert.deepEqual(finalizersOnDelete(['foregroundDeletion'], 'Orphan'), { finalizers: ['orphan'], deleteNow: false });
  assert.deepEqual(finalizersOnDelete(['orphan'], 'Background'), { finalizers: [], deleteNow: true });
});

test('nothing to do for a consistent graph', () => {
  assert.deepEqual(gcActions(world()), []);
});

test('background: the owner goes at once, then its ReplicaSet, then the pods', () => {
  const objects = world();
  del(objects, 'Deployment-web');
  const rounds = converge(objects);
  assert.deepEqual(rounds, [['web-1-a', 'web-1-b', 'unrelated'], ['unrelated']]);
});

test('foreground: the owner stays until the dependents that block it are gone', () => {
  const objects = world();
  del(objects, 'Deployment-web', 'Foreground');
  const rounds = converge(objects);
  assert.ok(rounds.slice(0, -1).every((names) => names.includes('web')), JSON.stringify(rounds));
  assert.ok(rounds[0].includes('web-1'));
  assert.deepEqual(rounds.at(-1), ['unrelated']);
});

test('foreground without blockOwnerDeletion: the owner does not wait', () => {
  const objects = world(false);
  del(objects, 'Deployment-web', 'Foreground');
  const rounds = converge(objects);
  assert.deepEqual(rounds[0], ['web-1', 'web-1-a', 'web-1-b', 'unrelated']);
  assert.deepEqual(rounds.at(-1), ['unrelated']);
});

test('orphan: dependents stay without the owner reference, then the owner goes', () => {
  const objects = world();
  del(objects, 'Deployment-web', 'Orphan');
  converge(objects);
  assert.deepEqual(objects.map((o) => o.metadata.name), ['web-1', 'web-1-a', 'web-1-b', 'unrelated']);
  assert.equal(objects[0].metadata.ownerReferences?.length, 0);
  assert.equal(objects[1].metadata.ownerReferences?.length, 1);
});

test('dangling references after a restart, owners recreated under a new uid, and multiple owners', () => {
  const objects = world().filter((o) => o.kind !== 'Deployment');
  assert.deepEqual(gcActions(objects).map((a) => [a.type, a.object.name]), [['delete', 'web-1']]);

  const recreated = [{ ...obj('Deployment', 'web'), metadata: { ...obj('Deployment', 'web').metadata, uid: 'new' } }, ...world().slice(1)];
  assert.deepEqual(gcActions(recreated).map((a) => a.object.name), ['web-1']);

  const a = obj('ConfigMap', 'a');
  const b = obj('ConfigMap', 'b');
  const shared = obj('Secret', 's', a);
  shared.metadata.ownerReferences!.push({ apiVersion: 'v1', kind: 'ConfigMap', name: 'b', uid: b.metadata.uid! });
  assert.deepEqual(gcActions([b, shared]), [{ type: 'removeOwnerReferences', object: { apiVersion: 'apps/v1', kind: 'Secret', namespace: 'default', name: 's', uid: 'Secret-s' }, ownerUids: ['ConfigMap-a'] }]);
  assert.equal(gcActions([shared])[0].type, 'delete');
});

test('the actions for some of the objects, read against the whole graph, are those a whole round finds for them', () => {
  // Every state each policy passes through, with a ConfigMap nobody owns beside it.
  const states: GcObject[][] = [];
  for (const policy of ['Background', 'Foreground', 'Orphan'] as const) {
    const objects = world();
    del(objects, 'Deployment-web', policy);
    states.push(structuredClone(objects));
    for (let round = 0; round < 6 && gcActions(objects).length > 0; round++) {
      converge1(objects);
      states.push(structuredClone(objects));
    }
  }
  const key = (a: unknown) => JSON.stringify(a);
  for (const objects of states) {
    const whole = gcActions(objects).map(key).sort();
    const index = indexOf(objects);
    // Split the graph in two every way an owner can fall apart from its dependents: the union is the whole round.
    for (let cut = 0; cut <= objects.length; cut++) {
      const parts = [...gcActionsFor(objects.slice(0, cut), index), ...gcActionsFor(objects.slice(cut), index)].map(key).sort();
      assert.deepEqual(parts, whole);
    }
    // One object alone: only its own actions, or those it takes as an owner over its dependents.
    for (const o of objects) {
      for (const a of gcActionsFor([o], index)) {
        assert.ok(a.object.uid === o.metadata.uid || o.metadata.uid !== undefined && index.dependentsOf(o.metadata.uid).some((d) => d.metadata.uid === a.object.uid), `${key(a)} for ${o.metadata.uid}`);
      }
    }
  }
  assert.ok(states.length >= 6);
});

/** One round of converge: the actions of the whole graph applied once. */
function converge1(objects: GcObject[]): void {
  for (const a of gcActions(objects)) {
    const o = objects.find((x) => x.metadata.uid === a.object.uid);
    if (!o) continue;
    if (a.type === 'delete') del(objects, a.object.uid, a.propagationPolicy);
    else if (a.type === 'removeOwnerReferences') o.metadata.ownerReferences = o.metadata.ownerReferences?.filter((r) => !a.ownerUids.includes(r.uid));
    else {
      o.metadata.finalizers = o.metadata.finalizers?.filter((f) => f !== a.finalizer);
      if (o.metadata.deletionTimestamp && o.metadata.finalizers?.length === 0) objects.splice(objects.indexOf(o), 1);
    }
  }
}
