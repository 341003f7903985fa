// LimitRanges as kube-apiserver applies them: kube's defaults on the object, validation, and the
// LimitRanger admission — a pod's containers get the default requests and limits they do not say
// (recorded in kubernetes.io/limit-ranger), and a pod outside min, max or the ratio is refused
// with kube's words; the defaults count in a quota, which is charged after them.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestApiServer, type TestApiServer } from '../helpers/apiserver.js';

let api: TestApiServer;
before(async () => {
  api = await startTestApiServer();
  for (const name of ['ranged', 'bounded', 'withquota', 'claims']) assert.equal((await api.request('POST', '/api/v1/namespaces', { body: { metadata: { name } } })).status, 201);
});
after(async () => {
  await api.stop();
});

const LR = (ns: string) => `/api/v1/namespaces/${ns}/limitranges`;
const PODS = (ns: string) => `/api/v1/namespaces/${ns}/pods`;
const pod = (name: string, resources?: object, containers = 1) => ({
  metadata: { name },
  spec: { containers: Array.from({ length: containers }, (_, i) => ({ name: `c${i}`, image: 'app:1', ...(resources ? { resources } : {}) })) },
});

test('a LimitRange gets kube\'s defaults; what cannot hold is refused', async () => {
  const r = await api.request('POST', LR('ranged'), { body: { metadata: { name: 'defaults' }, spec: { limits: [{ type: 'Container', max: { cpu: '2' }, min: { memory: '64Mi' }, default: { memory: '512Mi' } }] } } });
  assert.equal(r.status, 201, r.text);
  assert.deepEqual(r.json.spec.limits[0], { type: 'Container', max: { cpu: '2' }, min: { memory: '64Mi' }, default: { cpu: '2', memory: '512Mi' }, defaultRequest: { cpu: '2', memory: '512Mi' } });
  const bad: [object, RegExp][] = [
    [{ limits: [{ type: 'Node' }] }, /spec\.limits\[0\]\.type: Unsupported value: "Node"/],
    [{ limits: [{ type: 'Container', min: { cpu: '2' }, max: { cpu: '1' } }] }, /spec\.limits\[0\]\.min\[cpu\]: Invalid value: "2": min value 2 is greater than max value 1/],
    [{ limits: [{ type: 'Pod', default: { cpu: '1' } }] }, /spec\.limits\[0\]\.default: Forbidden: may not be specified when `type` is 'Pod'/],
    [{ limits: [{ type: 'Container', maxLimitRequestRatio: { cpu: '500m' } }] }, /ratio 500m is less than 1/],
    [{ limits: [{ type: 'Container', max: { cpu: 'lots' } }] }, /spec\.limits\[0\]\.max\[cpu\]: Invalid value: "lots": quantities must match/],
  ];
  for (const [spec, message] of bad) {
    const refused = await api.request('POST', LR('ranged'), { body: { metadata: { name: 'bad' }, spec } });
    assert.equal(refused.status, 422, refused.text);
    assert.match(refused.json.message, message);
  }
  assert.match((await api.kubectl(['get', 'limits', '-n', 'ranged'])).stdout, /^NAME\s+CREATED AT\ndefaults\s+\d{4}-\d\d-\d\dT/);
});

test('pods get the defaults they do not say, and the annotation says so', async () => {
  await api.request('POST', LR('bounded'), { body: { metadata: { name: 'std' }, spec: { limits: [
    { type: 'Container', default: { cpu: '500m', memory: '256Mi' }, defaultRequest: { cpu: '100m', memory: '128Mi' }, max: { cpu: '1' }, maxLimitRequestRatio: { cpu: '10' } },
    { type: 'Pod', max: { memory: '1Gi' } },
  ] } } });
  const r = await api.request('POST', PODS('bounded'), { body: pod('plain') });
  assert.equal(r.status, 201, r.text);
  assert.deepEqual(r.json.spec.containers[0].resources, { limits: { cpu: '500m', memory: '256Mi' }, requests: { cpu: '100m', memory: '128Mi' } });
  assert.equal(r.json.metadata.annotations['kubernetes.io/limit-ranger'], 'LimitRanger plugin set: cpu, memory request for container c0; cpu, memory limit for container c0');
  const own = await api.request('POST', PODS('bounded'), { body: pod('own', { requests: { cpu: '200m' }, limits: { cpu: '800m' } }) });
  assert.equal(own.status, 201, own.text);
  assert.deepEqual(own.json.spec.containers[0].resources, { limits: { cpu: '800m', memory: '256Mi' }, requests: { cpu: '200m', memory: '128Mi' } }, 'what it says is kept');
});

test('a pod outside the ranges is refused, each problem in kube\'s words', async () => {
  const over = await api.request('POST', PODS('bounded'), { body: pod('big', { requests: { cpu: '1' }, limits: { cpu: '2' } }) });
  assert.equal(over.status, 403, over.text);
  assert.equal(over.json.message, 'pods "big" is forbidden: maximum cpu usage per Container is 1, but limit is 2');
  const ratio = await api.request('POST', PODS('bounded'), { body: pod('spiky', { requests: { cpu: '10m' }, limits: { cpu: '1' } }) });
  assert.equal(ratio.status, 403);
  assert.equal(ratio.json.message, 'pods "spiky" is forbidden: cpu max limit to request ratio per Container is 10, but provided ratio is 100.000000');
  const total = await api.request('POST', PODS('bounded'), { body: pod('many', { limits: { memory: '512Mi' } }, 3) });
  assert.equal(total.status, 403);
  assert.equal(total.json.message, 'pods "many" is forbidden: maximum memory usage per Pod is 1Gi, but limit is 1536Mi');
  const both = await api.request('POST', PODS('bounded'), { body: pod('worse', { requests: { cpu: '2' }, limits: { cpu: '3', memory: '900Mi' } }, 2) });
  assert.equal(both.status, 403);
  assert.match(both.json.message, /^pods "worse" is forbidden: \[maximum cpu usage per Container is 1, but limit is 3, .*maximum memory usage per Pod is 1Gi, but limit is 1800Mi\]$/);
  // The pod as kube totals it: an init container needs its limit beside the sidecars started
  // before it (restartPolicy Always), and the sidecars run beside the containers.
  const withInit = (name: string, init: Array<{ memory: string; sidecar?: boolean }>) => {
    const plain = pod(name, { limits: { memory: '300Mi' } });
    const initContainers = init.map((c, i) => ({ name: `i${i}`, image: 'x', ...(c.sidecar ? { restartPolicy: 'Always' } : {}), resources: { limits: { cpu: '500m', memory: c.memory } } }));
    return api.request('POST', PODS('bounded'), { body: { ...plain, spec: { ...plain.spec, initContainers } } });
  };
  const bigInit = await withInit('big-init', [{ memory: '1100Mi' }]);
  assert.equal(bigInit.status, 403);
  assert.equal(bigInit.json.message, 'pods "big-init" is forbidden: maximum memory usage per Pod is 1Gi, but limit is 1100Mi');
  const sidecar = await withInit('sidecar', [{ memory: '800Mi', sidecar: true }]);
  assert.equal(sidecar.json.message, 'pods "sidecar" is forbidden: maximum memory usage per Pod is 1Gi, but limit is 1100Mi');
  const fits = await withInit('fits', [{ memory: '200Mi', sidecar: true }, { memory: '700Mi' }]);
  assert.equal(fits.status, 201, fits.text);
});

test('the defaults count in a quota on the same namespace', async () => {
  await api.request('POST', LR('withquota'), { body: { metadata: { name: 'std' }, spec: { limits: [{ type: 'Container', defaultRequest: { cpu: '300m' }, default: { cpu: '300m' } }] } } });
  const q = (await api.request('POST', '/api/v1/namespaces/withquota/resourcequotas', { body: { metadata: { name: 'cpu' }, spec: { hard: { 'requests.cpu': '500m' } } } })).json;
  // Counted as the quota controller would (none runs here).
  assert.equal((await api.request('PUT', `/api/v1/namespaces/withquota/resourcequotas/cpu/status`, { body: { ...q, status: { hard: { 'requests.cpu': '500m' }, used: { 'requests.cpu': '0' } } } })).status, 200);
  assert.equal((await api.request('POST', PODS('withquota'), { body: pod('first') })).status, 201, 'a pod saying nothing gets 300m and fits');
  const second = await api.request('POST', PODS('withquota'), { body: pod('second') });
  assert.equal(second.status, 403);
  assert.equal(second.json.message, 'pods "second" is forbidden: exceeded quota: cpu, requested: requests.cpu=300m, used: requests.cpu=300m, limited: requests.cpu=500m');
});

test('claims: the storage request between the PersistentVolumeClaim items\' min and max, on create and on resize', async () => {
  await api.request('POST', LR('claims'), { body: { metadata: { name: 'storage' }, spec: { limits: [{ type: 'PersistentVolumeClaim', min: { storage: '1Gi' }, max: { storage: '10Gi' } }] } } });
  await api.request('POST', '/apis/storage.k8s.io/v1/storageclasses', { body: { metadata: { name: 'manual' }, provisioner: 'example.com/manual', allowVolumeExpansion: true } });
  const claim = (name: string, storage: string) => api.request('POST', '/api/v1/namespaces/claims/persistentvolumeclaims', { body: { metadata: { name }, spec: { accessModes: ['ReadWriteOnce'], storageClassName: 'manual', resources: { requests: { storage } } } } });
  const small = await claim('small', '500Mi');
  assert.equal(small.status, 403, small.text);
  assert.equal(small.json.message, 'persistentvolumeclaims "small" is forbidden: minimum storage usage per PersistentVolumeClaim is 1Gi, but request is 500Mi');
  const big = await claim('big', '20Gi');
  assert.equal(big.status, 403);
  assert.equal(big.json.message, 'persistentvolumeclaims "big" is forbidden: maximum storage usage per PersistentVolumeClaim is 10Gi, but request is 20Gi');
  assert.equal((await claim('fits', '5Gi')).status, 201);
  // Bound (as the binder writes it), the claim may grow, but not past max.
  await api.request('PATCH', '/api/v1/namespaces/claims/persistentvolumeclaims/fits/status', { contentType: 'application/merge-patch+json', body: { status: { phase: 'Bound', capacity: { storage: '5Gi' } } } });
  const grown = await api.request('PATCH', '/api/v1/namespaces/claims/persistentvolumeclaims/fits', { contentType: 'application/merge-patch+json', body: { spec: { resources: { requests: { storage: '12Gi' } } } } });
  assert.equal(grown.status, 403, grown.text);
  assert.equal(grown.json.message, 'persistentvolumeclaims "fits" is forbidden: maximum storage usage per PersistentVolumeClaim is 10Gi, but request is 12Gi');
  assert.equal((await api.request('PATCH', '/api/v1/namespaces/claims/persistentvolumeclaims/fits', { contentType: 'application/merge-patch+json', body: { spec: { resources: { requests: { storage: '8Gi' } } } } })).status, 200);
});
