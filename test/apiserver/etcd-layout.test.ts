// The etcd key layout: kube-apiserver's (`/registry/namespaces/<name>`, `/registry/secrets/<ns>/<name>`,
// `/registry/services/specs/...`, `/registry/<group>/<resource>/...` for custom resources), as a
// table of keys; a real `bosun apiserver` on a real etcd whose objects `etcdctl` finds there; and
// a store written in the layout used before, moved on start with every object kept.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { promisify } from 'node:util';
import { etcdPath, legacyStorageKey, storageKeyOf, UNGROUPED_RESOURCES } from '../../src/apiserver/storage/etcd-layout.js';
import { openEtcdStorage } from '../../src/apiserver/storage/etcd.js';
import type { WatchEvent } from '../../src/apiserver/storage/types.js';
import { STRATEGIES } from '../../src/apiserver/kinds/index.js';
import { storageKey } from '../../src/apiserver/registry/resource-type.js';
import { eventually } from '../helpers/eventually.js';
import { skipWithoutEtcd, startApiServersOnEtcd, startTestEtcd, type EtcdApiServer, type TestEtcd } from '../helpers/etcd.js';

const ETCDCTL = '/usr/bin/etcdctl';
const skipWithoutEtcdctl = skipWithoutEtcd || (!existsSync(ETCDCTL) && !process.env.CI ? 'etcdctl not installed (apt-get install etcd-client)' : false);

test('storage keys map to kube-apiserver\'s etcd keys and back', () => {
  const cases: Array<[string, string]> = [
    ['/core/namespaces//default', '/namespaces/default'],
    ['/core/secrets/kube-system/token', '/secrets/kube-system/token'],
    ['/core/pods/default/web-1', '/pods/default/web-1'],
    ['/core/services/default/kubernetes', '/services/specs/default/kubernetes'],
    ['/core/endpoints/default/kubernetes', '/services/endpoints/default/kubernetes'],
    ['/core/nodes//node-1', '/minions/node-1'],
    ['/core/events/default/e.1', '/events/default/e.1'],
    ['/apps/deployments/default/web', '/deployments/default/web'],
    ['/coordination.k8s.io/leases/kube-node-lease/node-1', '/leases/kube-node-lease/node-1'],
    ['/rbac.authorization.k8s.io/clusterroles//admin', '/clusterroles/admin'],
    ['/certificates.k8s.io/certificatesigningrequests//csr-1', '/certificatesigningrequests/csr-1'],
    ['/apiextensions.k8s.io/customresourcedefinitions//machines.cluster.x-k8s.io', '/apiextensions.k8s.io/customresourcedefinitions/machines.cluster.x-k8s.io'],
    ['/cluster.x-k8s.io/machines/openshift-cluster-api/worker-1', '/cluster.x-k8s.io/machines/openshift-cluster-api/worker-1'],
    ['/config.openshift.io/clusterversions//version', '/config.openshift.io/clusterversions/version'],
    ['/events.k8s.io/events/default/e.1', '/events.k8s.io/events/default/e.1'],
    ['/allocations/serviceips//127.30.0.1', '/allocations/serviceips/127.30.0.1'],
  ];
  for (const [key, path] of cases) {
    assert.equal(etcdPath(key), path, key);
    assert.equal(storageKeyOf(path), key, path);
    // The layout before: the storage key itself; no key of the new layout unless it is the same.
    assert.equal(legacyStorageKey(key), key);
    if (key !== path) assert.equal(storageKeyOf(key), undefined, key);
  }
  assert.equal(storageKeyOf('/compact_rev_key'), undefined);
  assert.equal(storageKeyOf('/pods/a/b/c/d'), undefined);
  assert.throws(() => etcdPath('/core/pods/web'), /is not a storage key/);
});

test('every built-in kind bosun serves is kept where kube-apiserver keeps it', () => {
  for (const { type } of STRATEGIES) {
    const key = storageKey(type, type.namespaced ? 'ns' : undefined, 'n');
    assert.equal(storageKeyOf(etcdPath(key)), key, key);
    // Without their group, as kube keeps them, except the groups kube keeps with theirs.
    const grouped = type.group === 'apiextensions.k8s.io' || type.group === 'apiregistration.k8s.io' || type.group === 'events.k8s.io';
    assert.equal(UNGROUPED_RESOURCES.includes(`${type.group || 'core'}/${type.resource}`), !grouped, `${type.group}/${type.resource}`);
  }
});

let etcd: TestEtcd | undefined;
let server: EtcdApiServer | undefined;
const etcdctl = async (...args: string[]): Promise<string> =>
  (await promisify(execFile)(ETCDCTL, ['--endpoints', etcd!.cluster.client.endpoints.join(','), ...args], { env: { ...process.env, ETCDCTL_API: '3' } })).stdout;

/** Writes `object` at `key` exactly as the previous layout did: the prefix followed by the storage key. */
async function putLegacy(key: string, object: Record<string, unknown>): Promise<number> {
  const raw = etcd!.cluster.connect();
  try {
    const response = await raw.kv.put({ key: Buffer.from(`/registry${key}`), value: Buffer.from(JSON.stringify(object)) });
    return Number(response.header.revision);
  } finally {
    raw.close();
  }
}

const meta = (name: string, namespace?: string) => ({ name, ...(namespace ? { namespace } : {}), uid: `uid-${name}`, creationTimestamp: '2026-01-01T00:00:00Z' });

before(async () => {
  if (skipWithoutEtcd) return;
  etcd = await startTestEtcd({ members: 1 });
  // A store as the previous layout wrote it, before any server of this version starts on it.
  await putLegacy('/core/namespaces//legacy', { apiVersion: 'v1', kind: 'Namespace', metadata: meta('legacy'), spec: { finalizers: ['kubernetes'] }, status: { phase: 'Active' } });
  await putLegacy('/core/configmaps/legacy/kept', { apiVersion: 'v1', kind: 'ConfigMap', metadata: meta('kept', 'legacy'), data: { k: 'v' } });
  await putLegacy('/rbac.authorization.k8s.io/clusterroles//legacy-reader', {
    apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: meta('legacy-reader'), rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get'] }],
  });
  [server] = await startApiServersOnEtcd(1, etcd.dir, ['--etcd-servers', etcd.cluster.client.endpoints.join(',')]);
});
after(async () => {
  await server?.kill('SIGTERM');
  await etcd?.stop();
});

test('etcdctl finds what `bosun apiserver` stores where kube-apiserver stores it', { skip: skipWithoutEtcdctl, timeout: 30_000 }, async () => {
  const created = await server!.kubectl(['create', 'secret', 'generic', 'db', '--from-literal=password=p']);
  assert.equal(created.code, 0, created.stderr);
  const svc = await server!.kubectl(['create', 'service', 'clusterip', 'web', '--tcp=80:8080']);
  assert.equal(svc.code, 0, svc.stderr);

  const namespace = JSON.parse(await etcdctl('get', '/registry/namespaces/default', '--print-value-only'));
  assert.equal(namespace.kind, 'Namespace');
  assert.equal(namespace.metadata.name, 'default');
  const secret = JSON.parse(await etcdctl('get', '/registry/secrets/default/db', '--print-value-only'));
  assert.equal(Buffer.from(secret.data.password, 'base64').toString(), 'p');
  assert.equal(JSON.parse(await etcdctl('get', '/registry/services/specs/default/web', '--print-value-only')).spec.ports[0].port, 80);
  assert.match(await etcdctl('get', '/registry/clusterroles/cluster-admin', '--keys-only'), /^\/registry\/clusterroles\/cluster-admin$/m);

  // Nothing is left under a key of the layout before (a group or "core" first, "//" for cluster-scoped).
  const keys = (await etcdctl('get', '/registry/', '--prefix', '--keys-only')).split('\n').filter(Boolean);
  assert.ok(keys.length > 20, keys.join('\n'));
  assert.deepEqual(keys.filter((k) => k.startsWith('/registry/core/') || k.startsWith('/registry/apps/') || k.includes('//')), []);
});

test('a store written in the layout before comes up with every object, under kube-apiserver\'s keys', { skip: skipWithoutEtcd, timeout: 30_000 }, async () => {
  const kept = await server!.request('GET', '/api/v1/namespaces/legacy/configmaps/kept');
  assert.equal(kept.status, 200, kept.text);
  assert.deepEqual(kept.json.data, { k: 'v' });
  assert.equal(kept.json.metadata.uid, 'uid-kept');
  const role = await server!.kubectl(['get', 'clusterrole', 'legacy-reader', '-o', 'jsonpath={.rules[0].resources[0]}']);
  assert.equal(role.stdout, 'configmaps', role.stderr);
  const ns = await server!.kubectl(['get', 'namespace', 'legacy', '-o', 'jsonpath={.status.phase}']);
  assert.equal(ns.stdout, 'Active', ns.stderr);

  const raw = etcd!.cluster.connect();
  try {
    const at = async (key: string) => (await raw.kv.range({ key: Buffer.from(key) })).kvs[0];
    assert.equal(await at('/registry/core/configmaps/legacy/kept'), undefined);
    assert.equal(await at('/registry/core/namespaces//legacy'), undefined);
    // The object's resourceVersion is the revision of its new key.
    assert.equal((await at('/registry/configmaps/legacy/kept'))?.mod_revision, kept.json.metadata.resourceVersion);
    assert.ok(await at('/registry/namespaces/legacy'));
    assert.ok(await at('/registry/clusterroles/legacy-reader'));
  } finally {
    raw.close();
  }
  // And it is written there from now on.
  const updated = await server!.request('PUT', '/api/v1/namespaces/legacy/configmaps/kept', { body: { ...kept.json, data: { k: 'w' } } });
  assert.equal(updated.status, 200, updated.text);
});

test('a move: two stores starting at once move each object once; a watch from before sees MODIFIED; unmoved keys keep their revision', { skip: skipWithoutEtcd, timeout: 30_000 }, async () => {
  const prefix = '/layout-move';
  const raw = etcd!.cluster.connect();
  const put = async (key: string, object: Record<string, unknown>) => Number((await raw.kv.put({ key: Buffer.from(prefix + key), value: Buffer.from(JSON.stringify(object)) })).header.revision);
  const cms = Array.from({ length: 150 }, (_, i) => `/core/configmaps/default/c${String(i).padStart(3, '0')}`);
  try {
    for (const key of cms) await put(key, { apiVersion: 'v1', kind: 'ConfigMap', metadata: meta(key.split('/').pop()!, 'default') });
    const widgetRevision = await put('/example.com/widgets/default/w', { apiVersion: 'example.com/v1', kind: 'Widget', metadata: meta('w', 'default') });
    const gadgetRevision = await put('/example.com/gadgets//g', { apiVersion: 'example.com/v1', kind: 'Gadget', metadata: meta('g') });
    const options = { endpoints: etcd!.cluster.client.endpoints, prefix };
    const [s1, s2] = await Promise.all([openEtcdStorage(options), openEtcdStorage(options)]);
    try {
      for (const s of [s1, s2]) {
        assert.deepEqual(s.list('/core/configmaps/').items.map((i) => i.key), cms);
        assert.equal(s.get('/example.com/widgets/default/w')?.revision, widgetRevision);
        assert.ok(s.get('/example.com/gadgets//g')!.revision > gadgetRevision);
        assert.equal(s.get('/core/configmaps/default/c007')?.object.metadata.uid, 'uid-c007');
      }
      const keys = (await raw.kv.range({ key: Buffer.from(prefix + '/'), range_end: Buffer.from(prefix + '0'), keys_only: true })).kvs.map((kv) => kv.key.toString().slice(prefix.length));
      assert.equal(keys.filter((k) => k.startsWith('/configmaps/default/')).length, 150);
      assert.deepEqual(keys.filter((k) => k.startsWith('/core/') || k.includes('//')), []);

      // A watch from before the move: each moved object changes once, none is deleted.
      const seen: WatchEvent[] = [];
      const watcher = s1.watch('/core/configmaps/', gadgetRevision, (e) => seen.push(e));
      await eventually('the move replayed', () => seen.length >= 150, 5_000);
      watcher.stop();
      assert.deepEqual([...new Set(seen.map((e) => e.type))], ['MODIFIED']);
      assert.deepEqual(seen.map((e) => e.key).sort(), cms);
    } finally {
      await Promise.all([s1.close(), s2.close()]);
    }
  } finally {
    raw.close();
  }
});
