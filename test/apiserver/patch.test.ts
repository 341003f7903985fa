// JSON patch, merge patch and strategic merge patch, including the patches kubectl sends.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PatchError, applyJsonPatch, applyMergePatch, applyStrategicMergePatch } from '../../src/apiserver/apply/patch.js';

test('JSON patch operations', () => {
  const doc = { a: { b: [1, 2, 3] }, 'x/y': { '~t': 1 } };
  assert.deepEqual(applyJsonPatch(doc, [{ op: 'add', path: '/a/b/-', value: 4 }]).a.b, [1, 2, 3, 4]);
  assert.deepEqual(applyJsonPatch(doc, [{ op: 'add', path: '/a/b/0', value: 0 }]).a.b, [0, 1, 2, 3]);
  assert.deepEqual(applyJsonPatch(doc, [{ op: 'remove', path: '/a/b/1' }]).a.b, [1, 3]);
  assert.deepEqual(applyJsonPatch(doc, [{ op: 'replace', path: '/x~1y/~0t', value: 2 }])['x/y'], { '~t': 2 });
  assert.deepEqual(applyJsonPatch(doc, [{ op: 'move', from: '/a/b', path: '/c' }]), { a: {}, c: [1, 2, 3], 'x/y': { '~t': 1 } });
  assert.equal((applyJsonPatch(doc, [{ op: 'copy', from: '/a/b/2', path: '/d' }]) as Record<string, unknown>).d, 3);
  assert.deepEqual(applyJsonPatch(doc, [{ op: 'test', path: '/a/b/0', value: 1 }]), doc);
  assert.deepEqual(doc.a.b, [1, 2, 3], 'input untouched');
  const bad: Array<[unknown, RegExp]> = [
    [[{ op: 'test', path: '/a/b/0', value: 9 }], /test operation at "\/a\/b\/0" failed/],
    [[{ op: 'remove', path: '/nope' }], /remove operation: path "\/nope" does not exist/],
    [[{ op: 'add', path: '/a/b/9', value: 1 }], /out of bounds/],
    [[{ op: 'bogus', path: '/a' }], /unknown op "bogus"/],
    [[{ op: 'replace', path: '/a' }], /missing "value"/],
    [[{ op: 'add', path: 'a', value: 1 }], /must start with "\/"/],
    [{ op: 'add' }, /must be an array/],
  ];
  for (const [ops, message] of bad) assert.throws(() => applyJsonPatch(doc, ops), (e: unknown) => e instanceof PatchError && message.test(e.message));
});

test('merge patch: objects merge, null deletes, lists replace', () => {
  const doc = { metadata: { labels: { a: '1', b: '2' } }, spec: { list: [1, 2], n: 1 } };
  assert.deepEqual(applyMergePatch(doc, { metadata: { labels: { a: null, c: '3' } }, spec: { list: [3] } }), {
    metadata: { labels: { b: '2', c: '3' } },
    spec: { list: [3], n: 1 },
  });
  assert.deepEqual(applyMergePatch(doc, { spec: null }), { metadata: doc.metadata });
});

const deployment = {
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'web', finalizers: ['a'] },
  spec: {
    replicas: 1,
    template: {
      spec: {
        containers: [
          { name: 'app', image: 'app:1', env: [{ name: 'A', value: '1' }, { name: 'B', value: '2' }], ports: [{ containerPort: 80, name: 'http' }] },
          { name: 'sidecar', image: 'side:1' },
        ],
        tolerations: [{ key: 'x' }],
      },
    },
  },
};

test('strategic merge patch as kubectl apply sends it', () => {
  // kubectl apply changing the image, dropping env B, adding env C and a port.
  const patch = {
    spec: {
      template: {
        spec: {
          $setElementOrder: undefined,
          '$setElementOrder/containers': [{ name: 'app' }, { name: 'sidecar' }],
          containers: [
            {
              name: 'app',
              image: 'app:2',
              '$setElementOrder/env': [{ name: 'A' }, { name: 'C' }],
              env: [{ name: 'B', $patch: 'delete' }, { name: 'C', value: '3' }],
              '$setElementOrder/ports': [{ containerPort: 80 }, { containerPort: 443 }],
              ports: [{ containerPort: 443, name: 'https' }],
            },
          ],
        },
      },
    },
  };
  delete (patch.spec.template.spec as Record<string, unknown>).$setElementOrder;
  const out = applyStrategicMergePatch(deployment, patch);
  const [app, sidecar] = out.spec.template.spec.containers as Array<Record<string, unknown>>;
  assert.equal(app.image, 'app:2');
  assert.deepEqual(app.env, [{ name: 'A', value: '1' }, { name: 'C', value: '3' }]);
  assert.deepEqual(app.ports, [{ containerPort: 80, name: 'http' }, { containerPort: 443, name: 'https' }]);
  assert.deepEqual(sidecar, { name: 'sidecar', image: 'side:1' });
});

test('strategic merge patch directives and list kinds', () => {
  // Lists without a merge key are replaced; finalizers merge as a set (in the patch's order).
  const out = applyStrategicMergePatch(deployment, { metadata: { finalizers: ['b', 'a'] }, spec: { template: { spec: { tolerations: [{ key: 'y' }] } } } });
  assert.deepEqual(out.metadata.finalizers, ['b', 'a']);
  assert.deepEqual(applyStrategicMergePatch({ metadata: { finalizers: ['a', 'b'] } }, { metadata: { finalizers: ['c'] } }).metadata.finalizers, ['c', 'a', 'b']);
  assert.deepEqual(out.spec.template.spec.tolerations, [{ key: 'y' }]);
  // $deleteFromPrimitiveList, $patch: replace on a list and on a map, null deletes, cordon.
  assert.deepEqual(applyStrategicMergePatch(deployment, { metadata: { '$deleteFromPrimitiveList/finalizers': ['a'] } }).metadata.finalizers, []);
  const replaced = applyStrategicMergePatch(deployment, { spec: { template: { spec: { containers: [{ $patch: 'replace' }, { name: 'only', image: 'o' }] } } } });
  assert.deepEqual(replaced.spec.template.spec.containers, [{ name: 'only', image: 'o' }]);
  assert.deepEqual(applyStrategicMergePatch(deployment, { spec: { template: { $patch: 'replace', metadata: {} } } }).spec.template, { metadata: {} });
  assert.equal(applyStrategicMergePatch(deployment, { spec: { replicas: null } }).spec.replicas, undefined);
  assert.deepEqual(applyStrategicMergePatch({ spec: {} }, { spec: { unschedulable: true } }), { spec: { unschedulable: true } });
  // $retainKeys drops fields not named.
  assert.deepEqual(applyStrategicMergePatch({ spec: { strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 1 } } } }, { spec: { strategy: { $retainKeys: ['type'], type: 'Recreate' } } }), {
    spec: { strategy: { type: 'Recreate' } },
  });
  // Service ports merge by port; node conditions by type.
  const svc = applyStrategicMergePatch({ spec: { ports: [{ port: 80, targetPort: 8080 }] } }, { spec: { ports: [{ port: 80, targetPort: 9090 }, { port: 443 }] } });
  assert.deepEqual(svc.spec.ports, [{ port: 80, targetPort: 9090 }, { port: 443 }]);
  const node = applyStrategicMergePatch({ status: { conditions: [{ type: 'Ready', status: 'False' }, { type: 'DiskPressure', status: 'False' }] } }, { status: { conditions: [{ type: 'Ready', status: 'True' }] } });
  assert.deepEqual(node.status.conditions, [{ type: 'Ready', status: 'True' }, { type: 'DiskPressure', status: 'False' }]);
  assert.throws(() => applyStrategicMergePatch(deployment, { spec: { template: { spec: { containers: [{ image: 'x' }] } } } }), /merged by "name"/);
  assert.throws(() => applyStrategicMergePatch(deployment, [1]), PatchError);
});

// Element order after a strategic merge, as kube-apiserver's normalizeElementOrder leaves it:
// elements named by the patch (or its $setElementOrder) in that order, live-only elements slotted
// in by their live position.
test('strategic merge patch element order', () => {
  const env = (...names: string[]) => names.map((name) => ({ name, value: name.toLowerCase() }));
  const names = (list: unknown) => (list as Array<{ name: string }>).map((e) => e.name).join(',');
  const cases: Array<[string, string[], Record<string, unknown>, string]> = [
    ['a new element without an order goes first', ['A', 'B'], { env: [{ name: 'C', value: 'c' }] }, 'C,A,B'],
    ['patch order wins over live order', ['A', 'B'], { env: [{ name: 'B', value: 'x' }, { name: 'A', value: 'y' }] }, 'B,A'],
    ['live-only elements keep their place before later patched ones', ['D', 'A', 'B'], { env: [{ name: 'A', value: 'x' }, { name: 'C', value: 'c' }] }, 'D,A,C,B'],
    ['setElementOrder places new elements', ['A', 'B'], { '$setElementOrder/env': [{ name: 'A' }, { name: 'C' }, { name: 'B' }], env: [{ name: 'C', value: 'c' }] }, 'A,C,B'],
    ['setElementOrder alone reorders', ['A', 'B', 'C'], { '$setElementOrder/env': [{ name: 'C' }, { name: 'A' }, { name: 'B' }] }, 'C,A,B'],
    ['live-only element ahead of the ordered ones stays ahead', ['X', 'A', 'B'], { '$setElementOrder/env': [{ name: 'A' }, { name: 'C' }], env: [{ name: 'B', $patch: 'delete' }, { name: 'C', value: 'c' }] }, 'X,A,C'],
    ['live-only element after the ordered ones stays after', ['A', 'B', 'X'], { '$setElementOrder/env': [{ name: 'A' }, { name: 'C' }], env: [{ name: 'B', $patch: 'delete' }, { name: 'C', value: 'c' }] }, 'A,C,X'],
  ];
  for (const [name, live, patch, expected] of cases) {
    const out = applyStrategicMergePatch({ spec: { containers: [{ name: 'app', env: env(...live) }] } }, { spec: { containers: [{ name: 'app', ...patch }] } });
    assert.equal(names(out.spec.containers[0].env), expected, name);
  }
});
