// The registry of per-kind strategies: every built-in type found by group/resource and by an
// object's apiVersion/kind, and a strategy's behaviour reaching the server (field-selector
// defaults of Pods and Nodes, read through real list requests).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { STRATEGIES, printerFor, strategyFor, strategyOf } from '../../src/apiserver/kinds/index.js';
import { BUILTIN_TYPES } from '../../src/apiserver/registry/registry.js';
import { startTestApiServer } from '../helpers/apiserver.js';

test('every built-in type has its strategy, found by group/resource and by apiVersion/kind', () => {
  assert.equal(BUILTIN_TYPES.length, STRATEGIES.length);
  for (const type of BUILTIN_TYPES) {
    const apiVersion = type.group ? `${type.group}/${type.version}` : type.version;
    assert.equal(strategyFor(type)?.type, type, `${type.group}/${type.resource}`);
    assert.equal(strategyOf({ apiVersion, kind: type.kind })?.type, type, `${apiVersion} ${type.kind}`);
  }
  const cases: Array<[Parameters<typeof strategyFor>[0], string | undefined]> = [
    [{ group: '', resource: 'events', builtin: true }, 'v1/Event'],
    [{ group: 'events.k8s.io', resource: 'events', builtin: true }, 'events.k8s.io/Event'],
    [{ group: 'example.com', resource: 'events', builtin: false }, undefined],
    [{ group: '', resource: 'widgets', builtin: true }, undefined],
  ];
  for (const [type, want] of cases) {
    const s = strategyFor(type);
    assert.equal(s ? `${s.type.group || 'v1'}/${s.type.kind}` : undefined, want, JSON.stringify(type));
  }
  assert.equal(printerFor('pods')?.columns[1].name, 'Ready');
  assert.equal(printerFor('widgets'), undefined);
});

test('field selectors read a Pod\'s unset spec.hostNetwork and a Node\'s unset spec.unschedulable as false', async () => {
  const api = await startTestApiServer();
  try {
    for (const [path, body] of [
      ['/api/v1/nodes', { metadata: { name: 'plain' } }],
      ['/api/v1/nodes', { metadata: { name: 'cordoned' }, spec: { unschedulable: true } }],
      ['/api/v1/namespaces/default/pods', { metadata: { name: 'plain' }, spec: { containers: [{ name: 'c', image: 'i' }] } }],
      ['/api/v1/namespaces/default/pods', { metadata: { name: 'host' }, spec: { hostNetwork: true, containers: [{ name: 'c', image: 'i' }] } }],
    ] as const) assert.equal((await api.request('POST', path, { body })).status, 201);
    assert.equal(await api.kubectlOk(['get', 'nodes', '--field-selector', 'spec.unschedulable=false', '-o', 'name']), 'node/plain\n');
    assert.equal(await api.kubectlOk(['get', 'pods', '--field-selector', 'spec.hostNetwork=false', '-o', 'name']), 'pod/plain\n');
    assert.equal(await api.kubectlOk(['get', 'pods', '--field-selector', 'spec.hostNetwork=true', '-o', 'name']), 'pod/host\n');
  } finally {
    await api.stop();
  }
});
