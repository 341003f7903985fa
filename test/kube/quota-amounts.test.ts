// A pod's requests and limits as kube totals them for quota and LimitRange (component-helpers'
// PodRequests / PodLimits): the containers and the sidecars together, at least each other init
// container beside the sidecars started before it, plus the overhead (limits: only where set).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type * as api from '../../src/api/index.js';
import { podAmounts } from '../../src/kube/quota.js';

const c = (name: string, cpu: string, extra: Partial<api.Container> = {}): api.Container => ({ name, image: 'x', resources: { requests: { cpu }, limits: { cpu } }, ...extra });
const amounts = (spec: Partial<api.PodSpec>, which: 'requests' | 'limits' = 'requests') =>
  Object.fromEntries([...podAmounts({ metadata: { name: 'p' }, spec: { containers: [], ...spec } }, which)].map(([k, v]) => [k, Number(v)]));

test('a pod\'s total: containers, sidecars, init containers at their peak, overhead', () => {
  assert.deepEqual(amounts({ containers: [c('a', '100m'), c('b', '200m')] }), { cpu: 300 });
  // A regular init container runs alone: the larger of it and the containers.
  assert.deepEqual(amounts({ containers: [c('a', '100m')], initContainers: [c('i', '500m')] }), { cpu: 500 });
  // A sidecar runs beside the containers, and beside the init containers after it.
  assert.deepEqual(amounts({ containers: [c('a', '100m')], initContainers: [c('s', '50m', { restartPolicy: 'Always' })] }), { cpu: 150 });
  assert.deepEqual(amounts({ containers: [c('a', '100m')], initContainers: [c('s', '50m', { restartPolicy: 'Always' }), c('i', '500m')] }), { cpu: 550 });
  assert.deepEqual(amounts({ containers: [c('a', '100m')], initContainers: [c('i', '500m'), c('s', '50m', { restartPolicy: 'Always' })] }), { cpu: 500 }, 'an init container before the sidecar runs without it');
  // Overhead: added to requests; to limits only where something limits.
  assert.deepEqual(amounts({ containers: [c('a', '100m')], overhead: { cpu: '10m', memory: '1Mi' } }), { cpu: 110, memory: 1048576000 });
  assert.deepEqual(amounts({ containers: [c('a', '100m')], overhead: { cpu: '10m', memory: '1Mi' } }, 'limits'), { cpu: 110 });
});
