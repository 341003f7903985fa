// Two `bosun apiserver` processes on one real 3-member etcd cluster: a write through one is read
// and watched through the other, kubectl works through either, CRDs are shared, and Service IPs and
// node ports allocated through both at once stay distinct; and faults, each bounded in time: the
// etcd leader killed while 16 clients write (no acknowledged write lost, both servers take writes
// again within seconds), the killed member restarted from its data directory rejoins with what
// was written meanwhile, every member killed in turn, one API server killed while the other's
// clients go on unaffected; and kube-controller-manager's loops that the API servers run (garbage
// collector, CSR signer, …) in one of them at a time, taken over when it dies.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { eventually } from '../helpers/eventually.js';
import { skipWithoutEtcd, startApiServersOnEtcd, startTestEtcd, type EtcdApiServer, type TestEtcd } from '../helpers/etcd.js';
import { controllersIdentity } from '../../src/apiserver/controllers/leadership.js';

const skip = skipWithoutEtcd;
let etcd: TestEtcd;
let a: EtcdApiServer;
let b: EtcdApiServer;

before(async () => {
  if (skip) return;
  etcd = await startTestEtcd({ members: 3 });
  [a, b] = await startApiServersOnEtcd(2, etcd.dir, ['--etcd-servers', etcd.cluster.client.endpoints.join(',')]);
});
after(async () => {
  if (skip) return;
  await Promise.all([a, b].filter(Boolean).map((s) => s.kill('SIGTERM')));
  await etcd?.stop();
});

const cm = (name: string, data: Record<string, string> = {}) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data });

test('a write through one server is read and watched through the other; kubectl works through either', { skip, timeout: 30_000 }, async () => {
  const watchB = b.watch('/api/v1/namespaces/default/configmaps?watch=1&resourceVersion=0');
  const watchA = a.watch('/api/v1/namespaces/default/configmaps?watch=1&resourceVersion=0');
  try {
    const created = await a.request('POST', '/api/v1/namespaces/default/configmaps', { body: cm('from-a', { k: 'v' }) });
    assert.equal(created.status, 201, created.text);
    const rv = created.json.metadata.resourceVersion;
    const read = await eventually('B serves what A wrote', async () => {
      const r = await b.request('GET', '/api/v1/namespaces/default/configmaps/from-a');
      return r.status === 200 && r.json;
    }, 5_000);
    assert.equal(read.metadata.resourceVersion, rv);
    assert.deepEqual(read.data, { k: 'v' });
    await eventually('B watchers get A\'s write', () => watchB.events.find((e) => e.type === 'ADDED' && e.object.metadata.name === 'from-a'), 5_000);

    const applied = await b.kubectl(['create', 'configmap', 'from-b', '--from-literal=x=y']);
    assert.equal(applied.code, 0, applied.stderr);
    await eventually('A watchers get B\'s write', () => watchA.events.find((e) => e.type === 'ADDED' && e.object.metadata.name === 'from-b'), 5_000);
    const viaA = await a.kubectl(['get', 'configmap', 'from-b', '-o', 'jsonpath={.data.x}']);
    assert.equal(viaA.code, 0, viaA.stderr);
    assert.equal(viaA.stdout, 'y');

    // Optimistic concurrency is decided by etcd, whichever server is asked.
    const stale = await b.request('PUT', '/api/v1/namespaces/default/configmaps/from-a', { body: { ...cm('from-a', { k: 'b' }), metadata: { name: 'from-a', resourceVersion: rv } } });
    assert.equal(stale.status, 200, stale.text);
    const conflict = await a.request('PUT', '/api/v1/namespaces/default/configmaps/from-a', { body: { ...cm('from-a', { k: 'a' }), metadata: { name: 'from-a', resourceVersion: rv } } });
    assert.equal(conflict.status, 409, conflict.text);
    assert.equal(conflict.json.reason, 'Conflict');
    const deleted = await b.kubectl(['delete', 'configmap', 'from-a']);
    assert.equal(deleted.code, 0, deleted.stderr);
    await eventually('A watchers see the deletion', () => watchA.events.find((e) => e.type === 'DELETED' && e.object.metadata.name === 'from-a'), 5_000);
  } finally {
    watchA.close();
    watchB.close();
  }
});

test('a CRD made through one server is served by the other; Services get distinct IPs and node ports across both', { skip, timeout: 30_000 }, async () => {
  const crd = {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: 'widgets.example.com' },
    spec: {
      group: 'example.com',
      scope: 'Namespaced',
      names: { plural: 'widgets', singular: 'widget', kind: 'Widget' },
      versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } }],
    },
  };
  assert.equal((await a.request('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', { body: crd })).status, 201);
  await eventually('B serves the CRD made through A', async () => {
    const r = await b.request('POST', '/apis/example.com/v1/namespaces/default/widgets', { body: { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w1' }, size: 3 } });
    return r.status === 201;
  }, 5_000);

  // Both servers allocate at once: the claims in etcd keep every value to one Service.
  const created = await Promise.all(
    Array.from({ length: 24 }, (_, i) => (i % 2 === 0 ? a : b).request('POST', '/api/v1/namespaces/default/services', { body: { apiVersion: 'v1', kind: 'Service', metadata: { name: `svc-${i}` }, spec: { type: 'NodePort', ports: [{ port: 80 }] } } })),
  );
  for (const r of created) assert.equal(r.status, 201, r.text);
  const ips = created.map((r) => r.json.spec.clusterIP as string);
  const ports = created.map((r) => r.json.spec.ports[0].nodePort as number);
  assert.equal(new Set(ips).size, ips.length, `a cluster IP handed out twice: ${ips.join(' ')}`);
  assert.equal(new Set(ports).size, ports.length, `a node port handed out twice: ${ports.join(' ')}`);
  // A value taken through one server is refused through the other, and free again once its Service is gone.
  const svcDup = { apiVersion: 'v1', kind: 'Service', metadata: { name: 'svc-dup' }, spec: { type: 'NodePort', ports: [{ port: 80, nodePort: ports[0] }] } };
  const refused = await b.request('POST', '/api/v1/namespaces/default/services', { body: svcDup });
  assert.equal(refused.status, 422, refused.text);
  assert.match(refused.json.message, /provided port is already allocated/);
  assert.equal((await a.request('DELETE', '/api/v1/namespaces/default/services/svc-0')).status, 200);
  await eventually('the freed node port is taken through the other server', async () => (await b.request('POST', '/api/v1/namespaces/default/services', { body: svcDup })).status === 201, 5_000);
});

/** `clients` writers creating ConfigMaps through `servers` in turn until `stop` is set. */
function writers(servers: EtcdApiServer[], clients: number, namespace: string) {
  const state = { stop: false, acked: [] as Array<{ name: string; at: number; started: number; via: number }>, failed: 0 };
  const done = Promise.all(
    Array.from({ length: clients }, async (_, c) => {
      const via = c % servers.length;
      for (let n = 0; !state.stop; n++) {
        const name = `c${c}-${n}`;
        const started = Date.now();
        try {
          const r = await servers[via].request('POST', `/api/v1/namespaces/${namespace}/configmaps`, { body: cm(name, { n: String(n) }) });
          if (r.status === 201) state.acked.push({ name, at: Date.now(), started, via });
          else state.failed++;
        } catch {
          state.failed++;
        }
        if (state.failed > 0) await new Promise((r) => setTimeout(r, 20));
      }
    }),
  );
  return { state, done };
}

async function names(server: EtcdApiServer, namespace: string): Promise<Set<string>> {
  const r = await server.request('GET', `/api/v1/namespaces/${namespace}/configmaps`);
  assert.equal(r.status, 200, r.text);
  return new Set(r.json.items.map((i: { metadata: { name: string } }) => i.metadata.name));
}

test('the etcd leader killed while 16 clients write: no acknowledged write is lost, writes succeed again within seconds, the member restarted from its data directory rejoins', { skip, timeout: 60_000 }, async (t) => {
  assert.equal((await a.request('POST', '/api/v1/namespaces', { body: { metadata: { name: 'faults' } } })).status, 201);
  await eventually('B sees the namespace', async () => (await b.request('GET', '/api/v1/namespaces/faults')).status === 200, 5_000);
  const { state, done } = writers([a, b], 16, 'faults');
  await new Promise((r) => setTimeout(r, 1_000));
  const leader = await etcd.cluster.leader();
  const killedAt = Date.now();
  await etcd.cluster.killMember(leader);
  await new Promise((r) => setTimeout(r, 6_000));
  state.stop = true;
  await done;

  assert.ok(state.acked.length > 50, `only ${state.acked.length} writes acknowledged`);
  for (const via of [0, 1]) {
    const recovered = state.acked.filter((w) => w.via === via && w.started > killedAt + 100).sort((x, y) => x.at - y.at)[0];
    assert.ok(recovered, `server ${via} acknowledged no write started after the leader was killed`);
    t.diagnostic(`server ${via}: writes acknowledged again ${recovered.at - killedAt} ms after the leader was killed (${state.acked.length} acknowledged, ${state.failed} failed in all)`);
    assert.ok(recovered.at - killedAt < 5_000, `server ${via} took ${recovered.at - killedAt} ms to take writes again`);
  }
  for (const server of [a, b]) {
    const stored = await eventually('every acknowledged write is listed', async () => {
      const have = await names(server, 'faults');
      return state.acked.every((w) => have.has(w.name)) && have;
    }, 10_000);
    assert.ok(stored.size >= state.acked.length);
  }

  // The killed member comes back from its data directory and catches up on what it missed.
  etcd.cluster.startMember(leader);
  await etcd.cluster.waitHealthy(20_000);
  const member = etcd.cluster.connect([etcd.cluster.client.endpoints[leader]]);
  try {
    const key = Buffer.from('/registry/configmaps/faults/');
    const end = Buffer.from('/registry/configmaps/faults0');
    await eventually('the restarted member has every acknowledged write', async () => {
      // A serializable read answers from this member's own copy.
      const r = await member.kv.range({ key, range_end: end, serializable: true, keys_only: true });
      const have = new Set(r.kvs.map((kv) => kv.key.toString().split('/').pop()));
      return state.acked.every((w) => have.has(w.name));
    }, 15_000);
  } finally {
    member.close();
  }
});

test('each etcd member killed in turn and restarted: both servers keep delivering each other\'s writes to their watchers', { skip, timeout: 60_000 }, async () => {
  assert.equal((await a.request('POST', '/api/v1/namespaces', { body: { metadata: { name: 'rolling' } } })).status, 201);
  await eventually('B sees the namespace', async () => (await b.request('GET', '/api/v1/namespaces/rolling')).status === 200, 5_000);
  const watches = [a, b].map((s) => s.watch('/api/v1/namespaces/rolling/configmaps?watch=1&resourceVersion=0'));
  try {
    // Whichever member each server's watch stream is on, one of these kills breaks it.
    for (let member = 0; member < 3; member++) {
      await etcd.cluster.killMember(member);
      const pairs: Array<[EtcdApiServer, (typeof watches)[number]]> = [[a, watches[1]], [b, watches[0]]];
      for (const [i, [writer, watch]] of pairs.entries()) {
        const name = `m${member}-${i}`;
        await eventually(`a write through server ${i} with member ${member} down`, async () => {
          const r = await writer.request('POST', '/api/v1/namespaces/rolling/configmaps', { body: cm(name) });
          return r.status === 201 || r.status === 409;
        }, 10_000);
        await eventually(`the other server's watcher gets ${name}`, () => watch.events.some((e) => e.object.metadata.name === name), 10_000);
      }
      etcd.cluster.startMember(member);
      await etcd.cluster.waitHealthy(20_000);
    }
  } finally {
    for (const w of watches) w.close();
  }
});

test('one API server killed: the other\'s clients are unaffected', { skip, timeout: 30_000 }, async () => {
  const ns = await a.request('POST', '/api/v1/namespaces', { body: { metadata: { name: 'survivors' } } });
  assert.equal(ns.status, 201, ns.text);
  const watch = a.watch('/api/v1/namespaces/survivors/configmaps?watch=1&resourceVersion=0');
  try {
    const { state, done } = writers([a], 4, 'survivors');
    await new Promise((r) => setTimeout(r, 500));
    await b.kill('SIGKILL');
    await new Promise((r) => setTimeout(r, 1_500));
    state.stop = true;
    await done;
    assert.equal(state.failed, 0, `${state.failed} writes through the surviving server failed`);
    assert.ok(state.acked.length > 20, `only ${state.acked.length} writes acknowledged`);
    await eventually('the surviving server\'s watch saw every write', () => state.acked.every((w) => watch.events.some((e) => e.object.metadata?.name === w.name)), 5_000);
    const kubectl = await a.kubectl(['get', 'configmaps', '-n', 'survivors', '-o', 'name']);
    assert.equal(kubectl.code, 0, kubectl.stderr);
    assert.equal(kubectl.stdout.trim().split('\n').length, state.acked.length);
  } finally {
    watch.close();
  }
});

test("kube-controller-manager's loops run in one API server at a time: the Lease names it; killed, another takes the Lease over and collects garbage", { skip, timeout: 90_000 }, async () => {
  // b was killed by the test before; a third server joins a.
  const [c] = await startApiServersOnEtcd(1, etcd.dir, ['--etcd-servers', etcd.cluster.client.endpoints.join(',')], 2);
  try {
    const identity = new Map([[controllersIdentity(a.dataDir), a], [controllersIdentity(c.dataDir), c]]);
    const lease = async (via: EtcdApiServer) => (await via.request('GET', '/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/bosun-apiserver-controllers')).json;
    // b may have held it: then it expires (15 s) and one of the living takes it.
    const held = await eventually('a living server holds the Lease', async () => {
      const l = await lease(c);
      return identity.has(l?.spec?.holderIdentity) && l;
    }, 30_000);
    const leader = identity.get(held.spec.holderIdentity)!;
    const survivor = leader === a ? c : a;
    await leader.kill('SIGKILL');
    // Not given up (killed): the survivor waits out the lease, then takes it.
    const taken = await eventually('the survivor takes the Lease over', async () => {
      const l = await lease(survivor);
      return l?.spec?.holderIdentity === controllersIdentity(survivor.dataDir) && l;
    }, 30_000);
    assert.equal(taken.spec.leaseTransitions, (held.spec.leaseTransitions ?? 0) + 1);
    assert.equal(taken.spec.leaseDurationSeconds, 15);
    // The garbage collector now runs in the survivor: a dependent goes with its owner.
    const owner = await survivor.request('POST', '/api/v1/namespaces/default/configmaps', { body: cm('gc-owner') });
    assert.equal(owner.status, 201, owner.text);
    const dependent = await survivor.request('POST', '/api/v1/namespaces/default/configmaps', {
      body: { ...cm('gc-dependent'), metadata: { name: 'gc-dependent', ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'gc-owner', uid: owner.json.metadata.uid }] } },
    });
    assert.equal(dependent.status, 201, dependent.text);
    assert.equal((await survivor.request('DELETE', '/api/v1/namespaces/default/configmaps/gc-owner')).status, 200);
    await eventually('the dependent collected', async () => (await survivor.request('GET', '/api/v1/namespaces/default/configmaps/gc-dependent')).status === 404, 15_000);
  } finally {
    await c.kill('SIGTERM');
  }
});
