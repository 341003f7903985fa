// ResourceQuotas end to end: the API server's admission refuses what would pass a quota (kube's
// messages) and charges what it admits, and the controller manager's quota controller counts the
// namespace's objects into status (and gives back what finished or was deleted). One API server
// and controller for the file; each test in a namespace of its own.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type * as kube from '../../src/api/index.js';
import { loadKubeConfig, type KubeClient } from '../../src/kube/index.js';
import { runWorkloadControllers } from '../../src/cluster/workloads/run.js';
import { CONFIG_MAPS, NAMESPACES, PODS, RESOURCE_QUOTAS } from '../../src/cluster/workloads/resources.js';
import { eventually } from '../helpers/eventually.js';
import { startWorkloadTestServer } from './workloads/stand-ins.js';
import type { TestApiServer } from '../helpers/apiserver.js';

let api: TestApiServer;
let client: KubeClient;
const stop = new AbortController();
let running: Promise<void>;
before(async () => {
  ({ api, client } = await startWorkloadTestServer());
  running = runWorkloadControllers({ kubeconfig: loadKubeConfig(api.kubeconfigPath), signal: stop.signal, controllers: ['resourcequota'], leaderElection: false, resourceQuota: { resyncPeriodMs: 60_000 } });
});
after(async () => {
  stop.abort();
  await running;
  await api.stop();
});

async function namespace(name: string): Promise<void> {
  await client.create(NAMESPACES, { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
}

async function quota(ns: string, name: string, spec: NonNullable<kube.ResourceQuota['spec']>): Promise<kube.ResourceQuota> {
  await client.create(RESOURCE_QUOTAS, { apiVersion: 'v1', kind: 'ResourceQuota', metadata: { name, namespace: ns }, spec });
  // Counted once: admission holds back until the controller has written status.used.
  return eventually(`${ns}/${name} counted`, async () => {
    const q = await client.get(RESOURCE_QUOTAS, name, ns);
    return Object.keys(q.status?.used ?? {}).length === Object.keys(spec.hard ?? {}).length ? q : undefined;
  });
}

const used = async (ns: string, name: string) => (await client.get(RESOURCE_QUOTAS, name, ns)).status?.used;

const configMap = (ns: string, name: string) => api.request('POST', `/api/v1/namespaces/${ns}/configmaps`, { body: { metadata: { name }, data: { k: 'v' } } });

const pod = (name: string, resources?: kube.Container['resources'], extra: Partial<kube.PodSpec> = {}) => ({
  metadata: { name },
  spec: { containers: [{ name: 'app', image: 'app:1', ...(resources ? { resources } : {}) }], ...extra },
});

test('object counts: the write past the limit is refused in kube\'s words; a deletion gives the unit back', async () => {
  await namespace('counts');
  const q = await quota('counts', 'objects', { hard: { configmaps: '2', 'count/deployments.apps': '1' } });
  assert.deepEqual(q.status, { hard: { configmaps: '2', 'count/deployments.apps': '1' }, used: { configmaps: '0', 'count/deployments.apps': '0' } });
  assert.equal((await configMap('counts', 'c1')).status, 201);
  assert.equal((await configMap('counts', 'c2')).status, 201);
  assert.deepEqual(await used('counts', 'objects'), { configmaps: '2', 'count/deployments.apps': '0' }, 'charged at admission');
  const refused = await configMap('counts', 'c3');
  assert.equal(refused.status, 403, refused.text);
  assert.equal(refused.json.message, 'configmaps "c3" is forbidden: exceeded quota: objects, requested: configmaps=1, used: configmaps=2, limited: configmaps=2');
  const dry = await api.request('POST', '/api/v1/namespaces/counts/configmaps?dryRun=All', { body: { metadata: { name: 'c3' } } });
  assert.equal(dry.status, 403, 'a dry run is checked too');

  const deployment = { metadata: { name: 'd1' }, spec: { selector: { matchLabels: { a: 'b' } }, template: { metadata: { labels: { a: 'b' } }, spec: { containers: [{ name: 'c', image: 'i' }] } } } };
  assert.equal((await api.request('POST', '/apis/apps/v1/namespaces/counts/deployments', { body: deployment })).status, 201);
  const second = await api.request('POST', '/apis/apps/v1/namespaces/counts/deployments', { body: { ...deployment, metadata: { name: 'd2' } } });
  assert.equal(second.status, 403);
  assert.match(second.json.message, /^deployments\.apps "d2" is forbidden: exceeded quota: objects, requested: count\/deployments\.apps=1, used: count\/deployments\.apps=1, limited: count\/deployments\.apps=1$/);

  await client.delete(CONFIG_MAPS, 'c1', 'counts');
  await eventually('the deleted ConfigMap given back', async () => (await used('counts', 'objects'))?.configmaps === '1');
  assert.equal((await configMap('counts', 'c3')).status, 201);
  const table = await api.kubectl(['get', 'quota', '-n', 'counts']);
  assert.match(table.stdout, /^objects\s+\S+\s+configmaps: 2\/2, count\/deployments\.apps: 1\/1\s*$/m);
});

test('compute: containers must say what a quota limits; requests and limits are summed; a finished pod gives its share back', async () => {
  await namespace('compute');
  await quota('compute', 'compute', { hard: { pods: '2', 'requests.cpu': '1', 'limits.memory': '1Gi' } });
  const bare = await api.request('POST', '/api/v1/namespaces/compute/pods', { body: pod('bare') });
  assert.equal(bare.status, 403);
  assert.equal(bare.json.message, 'pods "bare" is forbidden: failed quota: compute: must specify limits.memory for: app; requests.cpu for: app');
  const sized = { requests: { cpu: '600m' }, limits: { memory: '512Mi' } };
  assert.equal((await api.request('POST', '/api/v1/namespaces/compute/pods', { body: pod('p1', sized) })).status, 201);
  assert.deepEqual(await used('compute', 'compute'), { 'limits.memory': '512Mi', pods: '1', 'requests.cpu': '600m' });
  const over = await api.request('POST', '/api/v1/namespaces/compute/pods', { body: pod('p2', sized) });
  assert.equal(over.status, 403);
  assert.equal(over.json.message, 'pods "p2" is forbidden: exceeded quota: compute, requested: requests.cpu=600m, used: requests.cpu=600m, limited: requests.cpu=1');

  // p1 finishes: its CPU and memory are free again (its object still exists).
  const p1 = await client.get(PODS, 'p1', 'compute');
  await client.update(PODS, { ...p1, status: { ...p1.status, phase: 'Succeeded' } }, 'status');
  await eventually('the finished pod given back', async () => (await used('compute', 'compute'))?.['requests.cpu'] === '0');
  assert.equal((await api.request('POST', '/api/v1/namespaces/compute/pods', { body: pod('p2', sized) })).status, 201);
});

test('storage: claims count, with their storage requests, in all and per StorageClass', async () => {
  await namespace('storage');
  await quota('storage', 'disks', { hard: { persistentvolumeclaims: '3', 'requests.storage': '10Gi', 'gold.storageclass.storage.k8s.io/requests.storage': '2Gi' } });
  const claim = (name: string, storage: string, storageClassName: string) => api.request('POST', '/api/v1/namespaces/storage/persistentvolumeclaims', {
    body: { metadata: { name }, spec: { accessModes: ['ReadWriteOnce'], storageClassName, resources: { requests: { storage } } } },
  });
  assert.equal((await claim('plain', '4Gi', 'standard')).status, 201);
  assert.equal((await claim('gold-1', '2Gi', 'gold')).status, 201);
  assert.deepEqual(await used('storage', 'disks'), { 'gold.storageclass.storage.k8s.io/requests.storage': '2Gi', persistentvolumeclaims: '2', 'requests.storage': '6Gi' });
  const overGold = await claim('gold-2', '1Gi', 'gold');
  assert.equal(overGold.status, 403);
  assert.equal(overGold.json.message, 'persistentvolumeclaims "gold-2" is forbidden: exceeded quota: disks, requested: gold.storageclass.storage.k8s.io/requests.storage=1Gi, used: gold.storageclass.storage.k8s.io/requests.storage=2Gi, limited: gold.storageclass.storage.k8s.io/requests.storage=2Gi');
  const overAll = await claim('big', '5Gi', 'standard');
  assert.equal(overAll.status, 403);
  assert.match(overAll.json.message, /exceeded quota: disks, requested: requests\.storage=5Gi, used: requests\.storage=6Gi, limited: requests\.storage=10Gi$/);
  // The controller recounts from the claims themselves: a deleted claim (its finalizer removed, as the protection controller would) gives its storage back.
  await api.request('PATCH', '/api/v1/namespaces/storage/persistentvolumeclaims/plain', { contentType: 'application/merge-patch+json', body: { metadata: { finalizers: null } } });
  assert.equal((await api.request('DELETE', '/api/v1/namespaces/storage/persistentvolumeclaims/plain')).status, 200);
  await eventually('the deleted claim given back', async () => (await used('storage', 'disks'))?.['requests.storage'] === '2Gi');
  assert.equal((await claim('big', '5Gi', 'standard')).status, 201);
});

test('scopes: a BestEffort quota counts only pods without requests or limits', async () => {
  await namespace('scoped');
  await quota('scoped', 'best-effort', { hard: { pods: '1' }, scopes: ['BestEffort'] });
  assert.equal((await api.request('POST', '/api/v1/namespaces/scoped/pods', { body: pod('be1') })).status, 201);
  const second = await api.request('POST', '/api/v1/namespaces/scoped/pods', { body: pod('be2') });
  assert.equal(second.status, 403);
  assert.match(second.json.message, /exceeded quota: best-effort, requested: pods=1, used: pods=1, limited: pods=1/);
  assert.equal((await api.request('POST', '/api/v1/namespaces/scoped/pods', { body: pod('sized', { requests: { cpu: '100m' } }) })).status, 201, 'not BestEffort: not counted');
});

test('writes at once cannot together pass a quota: of 20 creates against 5 left, exactly 5 succeed', async () => {
  await namespace('race');
  await quota('race', 'five', { hard: { configmaps: '5' } });
  const codes = await Promise.all(Array.from({ length: 20 }, (_, i) => configMap('race', `r${i}`).then((r) => r.status)));
  assert.deepEqual([codes.filter((c) => c === 201).length, codes.filter((c) => c === 403).length], [5, 15]);
  assert.equal((await client.list(CONFIG_MAPS, 'race')).items.length, 5);
  assert.equal((await used('race', 'five'))?.configmaps, '5');
});

test('a quota not counted yet holds back what it limits, "status unknown"', async () => {
  // A server of its own with no quota controller: the status is written here as the controller would.
  const { api: bare, client: own } = await startWorkloadTestServer();
  try {
    const q = await own.create(RESOURCE_QUOTAS, { apiVersion: 'v1', kind: 'ResourceQuota', metadata: { name: 'fresh', namespace: 'default' }, spec: { hard: { secrets: '3' } } });
    const secret = (name: string) => bare.request('POST', '/api/v1/namespaces/default/secrets', { body: { metadata: { name } } });
    assert.equal((await secret('before')).status, 201, 'a quota without status limits nothing yet');
    const limits = await own.update(RESOURCE_QUOTAS, { ...q, status: { hard: { secrets: '3' } } }, 'status');
    const held = await secret('s1');
    assert.equal(held.status, 403);
    assert.equal(held.json.message, 'secrets "s1" is forbidden: status unknown for quota: fresh, resources: secrets');
    await own.update(RESOURCE_QUOTAS, { ...limits, status: { hard: { secrets: '3' }, used: { secrets: '1' } } }, 'status');
    assert.equal((await secret('s1')).status, 201);
    assert.deepEqual((await own.get(RESOURCE_QUOTAS, 'fresh', 'default')).status?.used, { secrets: '2' });
  } finally {
    await bare.stop();
  }
});

test('kubectl create quota (a protobuf body) and bad quotas refused', async () => {
  await namespace('cli');
  const created = await api.kubectl(['create', 'quota', 'q1', '-n', 'cli', '--hard=pods=4,requests.memory=2Gi,limits.cpu=1500m', '--scopes=NotTerminating']);
  assert.equal(created.code, 0, created.stderr);
  const q1 = await client.get(RESOURCE_QUOTAS, 'q1', 'cli');
  assert.deepEqual([q1.spec?.hard, q1.spec?.scopes], [{ pods: '4', 'requests.memory': '2Gi', 'limits.cpu': '1500m' }, ['NotTerminating']]);
  const bad: [Record<string, unknown>, RegExp][] = [
    [{ hard: { pods: '-1' } }, /spec\.hard\[pods\]: Invalid value: "-1": must be greater than or equal to 0/],
    [{ hard: { pods: 'lots' } }, /spec\.hard\[pods\]: Invalid value: "lots": quantities must match/],
    [{ hard: { 'bogus name': '1' } }, /spec\.hard\[bogus name\]: Invalid value: "bogus name": must be a standard resource for quota/],
    [{ hard: { pods: '1' }, scopes: ['Sometimes'] }, /spec\.scopes\[0\]: Invalid value: "Sometimes": unsupported scope/],
    [{ hard: { pods: '1' }, scopes: ['BestEffort', 'NotBestEffort'] }, /conflicting scopes/],
    [{ hard: { configmaps: '1' }, scopes: ['Terminating'] }, /spec\.hard\[configmaps\]: Invalid value: "configmaps": unsupported scope applied to resource/],
  ];
  for (const [spec, message] of bad) {
    const r = await api.request('POST', '/api/v1/namespaces/cli/resourcequotas', { body: { metadata: { name: 'bad' }, spec } });
    assert.equal(r.status, 422, r.text);
    assert.match(r.json.message, message);
  }
});
