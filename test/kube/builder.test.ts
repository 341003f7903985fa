// The controller builder's extensions: event filters, the owner mapping and expectations as
// tables; degraded-on-error and filtered watches against the embedded API server.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type * as api from '../../src/api/index.js';
import { startTestApiServer } from '../helpers/apiserver.js';
import { eventually } from '../helpers/eventually.js';
import type { Obj, ResourceRef } from '../../src/kube/client.js';
import { Controller, TerminalError } from '../../src/kube/controller.js';
import { CountExpectations, WriteExpectations } from '../../src/kube/expectations.js';
import { FakeClock } from '../../src/kube/clock.js';
import { loadKubeConfig } from '../../src/kube/kubeconfig.js';
import { Manager } from '../../src/kube/manager.js';
import type { WithStatusConditions } from '../../src/kube/degraded.js';
import { controllerOf, controllerReference, enqueueOwner, type OwnerReference } from '../../src/kube/owners.js';
import { annotationsChanged, anyOf, generationChanged, labelsChanged, type EventFilter } from '../../src/kube/predicates.js';
import type { EventType } from '../../src/kube/informer.js';

const obj = (meta: Partial<api.ObjectMeta>): api.KubeObject => ({ apiVersion: 'v1', kind: 'Thing', metadata: { name: 'x', namespace: 'ns', ...meta } });

test('event filters: adds and deletes pass; updates pass when their part changed', () => {
  const rows: Array<[string, EventFilter, EventType, api.KubeObject, api.KubeObject | undefined, boolean]> = [
    ['generation: add', generationChanged, 'add', obj({ generation: 1 }), undefined, true],
    ['generation: delete', generationChanged, 'delete', obj({ generation: 1 }), undefined, true],
    ['generation: spec change', generationChanged, 'update', obj({ generation: 2 }), obj({ generation: 1 }), true],
    ['generation: status-only change', generationChanged, 'update', obj({ generation: 1, resourceVersion: '9' }), obj({ generation: 1, resourceVersion: '8' }), false],
    ['labels: value changed', labelsChanged, 'update', obj({ labels: { a: '2' } }), obj({ labels: { a: '1' } }), true],
    ['labels: one added', labelsChanged, 'update', obj({ labels: { a: '1', b: '' } }), obj({ labels: { a: '1' } }), true],
    ['labels: all removed', labelsChanged, 'update', obj({}), obj({ labels: { a: '1' } }), true],
    ['labels: same, other order', labelsChanged, 'update', obj({ labels: { b: '2', a: '1' } }), obj({ labels: { a: '1', b: '2' } }), false],
    ['labels: none before or after', labelsChanged, 'update', obj({ labels: {} }), obj({}), false],
    ['annotations: changed', annotationsChanged, 'update', obj({ annotations: { x: 'new' } }), obj({ annotations: { x: 'old' } }), true],
    ['annotations: labels changed only', annotationsChanged, 'update', obj({ labels: { a: '1' }, annotations: { x: '1' } }), obj({ annotations: { x: '1' } }), false],
    ['anyOf: labels changed, generation not', anyOf(generationChanged, labelsChanged), 'update', obj({ generation: 1, labels: { a: '1' } }), obj({ generation: 1 }), true],
    ['anyOf: neither', anyOf(generationChanged, labelsChanged), 'update', obj({ generation: 1, annotations: { a: '1' } }), obj({ generation: 1 }), false],
  ];
  for (const [name, filter, type, object, old, want] of rows) assert.equal(filter(type, object, old), want, name);
});

test('enqueueOwner maps an object to its controller owner of the given kind', () => {
  const rs = { apiVersion: 'apps/v1', kind: 'ReplicaSet', metadata: { name: 'web-5d8f', namespace: 'shop', uid: 'u-1' } };
  const owned = (refs: OwnerReference[], namespace = 'shop') => ({ metadata: { name: 'pod', namespace, ownerReferences: refs } });
  const toReplicaSet = enqueueOwner({ group: 'apps', kind: 'ReplicaSet' });
  const rows: Array<[string, api.KubeObject, string | undefined]> = [
    ['controller owner', owned([controllerReference(rs)]), 'shop/web-5d8f'],
    ['owner, not controller', owned([{ ...controllerReference(rs), controller: false }]), undefined],
    ['no owners', { metadata: { name: 'pod', namespace: 'shop' } }, undefined],
    ['another kind controls it', owned([{ apiVersion: 'apps/v1', kind: 'StatefulSet', name: 'db', uid: 'u-2', controller: true }]), undefined],
    ['same kind, other group', owned([{ apiVersion: 'example.com/v1', kind: 'ReplicaSet', name: 'web', uid: 'u-3', controller: true }]), undefined],
    ['any version of the group', owned([{ apiVersion: 'apps/v1beta2', kind: 'ReplicaSet', name: 'old', uid: 'u-4', controller: true }]), 'shop/old'],
    ['controller among several owners', owned([{ apiVersion: 'v1', kind: 'ConfigMap', name: 'c', uid: 'u-5' }, controllerReference(rs)]), 'shop/web-5d8f'],
  ];
  for (const [name, object, want] of rows) assert.equal(toReplicaSet(object, 'add'), want, name);
  const toPool = enqueueOwner({ group: 'machineconfiguration.openshift.io', kind: 'MachineConfigPool', namespaced: false });
  assert.equal(toPool({ metadata: { name: 'rendered-worker-1', ownerReferences: [{ apiVersion: 'machineconfiguration.openshift.io/v1', kind: 'MachineConfigPool', name: 'worker', uid: 'p', controller: true }] } }, 'add'), 'worker', 'cluster-scoped owner');
  assert.equal(controllerOf(owned([controllerReference(rs)]))?.uid, 'u-1');
});

test('write expectations: the written object stands in for the stale cached one until the cache catches up', () => {
  const node = (name: string, rv: string, desired?: string): api.KubeObject => ({ metadata: { name, resourceVersion: rv, annotations: desired ? { desired } : {} } });
  const expectations = new WriteExpectations<api.KubeObject>();
  const cached = [node('a', '1'), node('b', '1')];
  expectations.expect(cached[0], node('a', '2', 'new'));
  assert.deepEqual(expectations.overlay(cached).map((n) => n.metadata.annotations?.desired), ['new', undefined], 'stale cache: the written object');
  expectations.expect(node('a', '2', 'new'), node('a', '3', 'newer'));
  assert.equal(expectations.overlay([node('a', '1'), node('b', '1')])[0].metadata.annotations?.desired, 'newer', 'either stale version: the latest write');
  assert.equal(expectations.overlay([node('a', '3', 'newer'), node('b', '1')])[0].metadata.resourceVersion, '3', 'caught up: the cache');
  assert.equal(expectations.size, 0, 'forgotten once seen');
  expectations.expect(node('b', '1'), node('b', '2', 'x'));
  assert.deepEqual(expectations.overlay([node('a', '3')]).map((n) => n.metadata.name), ['a'], 'a deleted object is not brought back');
  assert.equal(expectations.size, 0);
});

test('count expectations: satisfied when observed, lowered, or expired', () => {
  const clock = new FakeClock();
  const e = new CountExpectations(1000, clock);
  const steps: Array<[string, () => void, boolean]> = [
    ['nothing expected', () => undefined, true],
    ['expect 2 creations', () => e.expect('ns/rs', 2, 0), false],
    ['one observed', () => e.creationObserved('ns/rs'), false],
    ['both observed', () => e.creationObserved('ns/rs'), true],
    ['expect 1 deletion', () => e.expect('ns/rs', 0, 1), false],
    ['the delete failed', () => e.lowerExpectations('ns/rs', 0, 1), true],
    ['expect 3 creations', () => e.expect('ns/rs', 3, 0), false],
    ['an event lost: expired', () => clock.advance(1001), true],
    ['forgotten', () => e.forget('ns/rs'), true],
  ];
  for (const [name, step, satisfied] of steps) {
    step();
    assert.equal(e.satisfied('ns/rs'), satisfied, name);
  }
});

/** A Widget: a custom resource with status conditions and a spec that may say it is broken. */
type Widget = WithStatusConditions & { spec?: { broken?: string } };
const WIDGETS: ResourceRef<Widget> = { group: 'example.com', version: 'v1', resource: 'widgets', namespaced: true };
const widgetCrd = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: 'widgets.example.com' },
  spec: {
    group: 'example.com',
    scope: 'Namespaced',
    names: { plural: 'widgets', singular: 'widget', kind: 'Widget' },
    versions: [{ name: 'v1', served: true, storage: true, subresources: { status: {} }, schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } }],
  },
};

test('degraded-on-error writes a named condition on the object; filtered watches skip status-only writes', async () => {
  const api = await startTestApiServer();
  const stop = new AbortController();
  try {
    const manager = new Manager({ name: 'widget-controller', kubeconfig: loadKubeConfig(api.kubeconfigPath) });
    await manager.client.create<Obj>({ group: 'apiextensions.k8s.io', version: 'v1', resource: 'customresourcedefinitions', namespaced: false }, widgetCrd);
    await eventually('widgets to be served', async () => manager.client.resourceFor('example.com/v1', 'Widget'));
    const widgets = manager.informers.forResource(WIDGETS, { namespace: 'default' });
    let syncs = 0;
    const controller = new Controller({
      name: 'widget-controller',
      sync: (key) => {
        syncs++;
        const spec = widgets.getByKey(key)?.spec;
        if (spec?.broken) throw new TerminalError(`widget ${key} is broken: ${spec.broken}`);
      },
      degraded: { client: manager.client, resource: WIDGETS, informer: widgets, condition: 'WidgetDegraded', reason: 'SyncFailed', message: (e) => `Cannot build: ${e.message}` },
    }).watch(widgets, undefined, generationChanged);
    manager.add(controller);
    const running = manager.start(stop.signal);
    const create = await manager.client.create(WIDGETS, { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w', namespace: 'default' }, spec: { broken: 'no gears' } });
    assert.equal(create.metadata.generation, 1);
    const degraded = await eventually('WidgetDegraded=True', async () => {
      const c = (await manager.client.get(WIDGETS, 'w', 'default')).status?.conditions?.find((x: Obj) => x.type === 'WidgetDegraded');
      return c?.status === 'True' && c;
    });
    assert.equal(degraded.reason, 'SyncFailed');
    assert.equal(degraded.message, 'Cannot build: widget default/w is broken: no gears');
    // The condition write itself is a status-only update: filtered out, no new sync.
    await new Promise((r) => setTimeout(r, 300));
    const syncsAfterFailure = syncs;
    await manager.client.mergePatch(WIDGETS, 'w', 'default', { status: { note: 'status only' } }, 'status');
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(syncs, syncsAfterFailure, 'a status-only write does not reconcile');
    // Fixed: the condition goes False, keeping nothing of the failure.
    await manager.client.mergePatch(WIDGETS, 'w', 'default', { spec: { broken: null } });
    const cleared = await eventually('WidgetDegraded=False', async () => {
      const c = (await manager.client.get(WIDGETS, 'w', 'default')).status?.conditions?.find((x: Obj) => x.type === 'WidgetDegraded');
      return c?.status === 'False' && c;
    });
    assert.deepEqual([cleared.reason, cleared.message], ['', '']);
    assert.notEqual(cleared.lastTransitionTime, undefined);
    stop.abort();
    await running;
  } finally {
    stop.abort();
    await api.stop();
  }
});
