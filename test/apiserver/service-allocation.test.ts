// Service cluster IPs and node ports as kube-apiserver allocates them: rebuilt from storage after
// a restart (no value handed out twice), distinct under concurrent creates, a taken value refused
// with 422 and kube's message (through kubectl too), freed on delete and on a type change, and not
// held by dry runs or failed creates; claims left behind by creates that never happened freed.
// --service-cluster-ip-range chooses the network (and the `kubernetes` Service's address); a
// LoadBalancer with externalTrafficPolicy Local gets a health-check node port, kept, refused when
// taken and freed as node ports are.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as k8s from '@kubernetes/client-node';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestApiServer, type TestApiServer } from '../helpers/apiserver.js';
import { RangeAllocator } from '../../src/apiserver/kinds/service-allocation.js';
import { openSqliteStorage } from '../../src/apiserver/storage/sqlite.js';

const SVC = '/api/v1/namespaces/default/services';

function service(name: string, type = 'NodePort', extra: Record<string, unknown> = {}, port: Record<string, unknown> = {}) {
  return { metadata: { name }, spec: { type, selector: { app: name }, ports: [{ port: 80, ...port }], ...extra } };
}

/** Every cluster IP and node port held by the stored Services, failing on any held twice. */
async function heldValues(api: TestApiServer): Promise<{ ips: Set<string>; ports: Set<number> }> {
  const list = await api.request('GET', SVC);
  assert.equal(list.status, 200);
  const ips = new Set<string>();
  const ports = new Set<number>();
  for (const s of list.json.items) {
    if (s.spec.clusterIP && s.spec.clusterIP !== 'None') {
      assert.ok(!ips.has(s.spec.clusterIP), `cluster IP ${s.spec.clusterIP} held twice`);
      ips.add(s.spec.clusterIP);
    }
    for (const port of [...(s.spec.ports ?? []).map((p: { nodePort?: number }) => p.nodePort), s.spec.healthCheckNodePort]) {
      if (!port) continue;
      assert.ok(!ports.has(port), `node port ${port} held twice`);
      ports.add(port);
    }
  }
  return { ips, ports };
}

test('RangeAllocator: dynamic values above the static band first, the band once the rest is full, released values reused', () => {
  const cases: Array<{ name: string; size: number; band: number; taken: number[]; want: Array<number | undefined> }> = [
    { name: 'starts above the band', size: 8, band: 2, taken: [], want: [2, 3, 4] },
    { name: 'skips taken values', size: 8, band: 2, taken: [2, 4], want: [3, 5, 6] },
    { name: 'falls back to the band, then full', size: 4, band: 2, taken: [2, 3], want: [0, 1, undefined] },
  ];
  for (const c of cases) {
    const r = new RangeAllocator(c.size, c.band);
    for (const t of c.taken) assert.ok(r.take(t), c.name);
    assert.deepEqual(c.want.map(() => r.next()), c.want, c.name);
  }
  const r = new RangeAllocator(4, 0);
  assert.deepEqual([r.next(), r.next(), r.next(), r.next(), r.next()], [0, 1, 2, 3, undefined]);
  assert.equal(r.take(1), false);
  r.release(1);
  assert.equal(r.next(), 1);
});

test('after a restart on the same data directory, 50 new Services get no cluster IP or node port already held', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'bosun-svc-alloc-'));
  try {
    let api = await startTestApiServer({ dataDir });
    for (let i = 0; i < 30; i++) {
      const r = await api.request('POST', SVC, { body: service(`before-${i}`, i % 3 === 0 ? 'ClusterIP' : 'NodePort') });
      assert.equal(r.status, 201, r.text);
    }
    const before = await heldValues(api);
    // The 30, and the `kubernetes` Service on the network's first address.
    assert.equal(before.ips.size, 31);
    assert.ok(before.ips.has('172.30.0.1'));
    await api.stop({ keepData: true });

    api = await startTestApiServer({ dataDir });
    try {
      for (let i = 0; i < 50; i++) {
        const r = await api.request('POST', SVC, { body: service(`after-${i}`) });
        assert.equal(r.status, 201, r.text);
        assert.ok(!before.ips.has(r.json.spec.clusterIP), `after-${i} got ${r.json.spec.clusterIP}, held before the restart`);
        assert.ok(!before.ports.has(r.json.spec.ports[0].nodePort), `after-${i} got node port ${r.json.spec.ports[0].nodePort}, held before the restart`);
      }
      const after = await heldValues(api);
      assert.equal(after.ips.size, 81);
      assert.equal(after.ports.size, 70);
    } finally {
      await api.stop({ keepData: true });
    }
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test('20 concurrent creates through client-node get distinct cluster IPs and node ports', async () => {
  const api = await startTestApiServer();
  try {
    const kc = new k8s.KubeConfig();
    kc.loadFromFile(api.kubeconfigPath);
    const core = kc.makeApiClient(k8s.CoreV1Api);
    const created = await Promise.all(Array.from({ length: 20 }, (_, i) =>
      core.createNamespacedService({ namespace: 'default', body: { metadata: { name: `c-${i}` }, spec: { type: 'NodePort', ports: [{ port: 80 }, { port: 443 }] } } })));
    const ips = created.map((s) => s.spec!.clusterIP!);
    const ports = created.flatMap((s) => s.spec!.ports!.map((p) => p.nodePort!));
    assert.equal(new Set(ips).size, 20, `duplicate cluster IPs: ${ips.join(' ')}`);
    assert.equal(new Set(ports).size, 40, `duplicate node ports: ${ports.join(' ')}`);
    for (const p of ports) assert.ok(p >= 30000 && p <= 32767, `node port ${p} out of range`);
    await heldValues(api);
  } finally {
    await api.stop();
  }
});

test('a taken node port or cluster IP is refused with 422 (kubectl and HTTPS); delete, type change, dry run and a failed create free them', async () => {
  const api = await startTestApiServer();
  try {
    const first = await api.request('POST', SVC, { body: service('first', 'NodePort', {}, { nodePort: 30080 }) });
    assert.equal(first.status, 201, first.text);
    const ip = first.json.spec.clusterIP as string;
    assert.match(ip, /^172\.30\.\d+\.\d+$/);
    assert.deepEqual(first.json.spec.clusterIPs, [ip]);

    const samePort = await api.request('POST', SVC, { body: service('second', 'NodePort', {}, { nodePort: 30080 }) });
    assert.equal(samePort.status, 422);
    assert.equal(samePort.json.reason, 'Invalid');
    assert.match(samePort.json.message, /spec\.ports\[0\]\.nodePort: Invalid value: 30080: provided port is already allocated/);
    const sameIP = await api.request('POST', SVC, { body: service('third', 'ClusterIP', { clusterIP: ip }) });
    assert.equal(sameIP.status, 422);
    assert.match(sameIP.json.message, new RegExp(`spec\\.clusterIPs: Invalid value: .*failed to allocate IP ${ip.replace(/\./g, '\\.')}: provided IP is already allocated`));
    const notAList = await api.request('POST', SVC, { body: { metadata: { name: 'bad' }, spec: { type: 'NodePort', ports: { port: 80 } } } });
    assert.equal(notAList.status, 422, notAList.text);
    const outside = await api.request('POST', SVC, { body: service('fourth', 'NodePort', {}, { nodePort: 8080 }) });
    assert.equal(outside.status, 422);
    assert.match(outside.json.message, /provided port is not in the valid range. The range of valid ports is 30000-32767/);

    const kubectlPort = await api.kubectl(['create', '-f', '-'], { input: JSON.stringify({ apiVersion: 'v1', kind: 'Service', ...service('by-kubectl', 'NodePort', {}, { nodePort: 30080 }) }) });
    assert.notEqual(kubectlPort.code, 0);
    assert.match(kubectlPort.stderr, /is invalid: spec\.ports\[0\]\.nodePort: Invalid value: 30080: provided port is already allocated/);
    const kubectlIP = await api.kubectl(['create', '-f', '-'], { input: JSON.stringify({ apiVersion: 'v1', kind: 'Service', ...service('by-kubectl', 'ClusterIP', { clusterIP: ip }) }) });
    assert.notEqual(kubectlIP.code, 0);
    assert.match(kubectlIP.stderr, /provided IP is already allocated/);

    // An update keeps what was allocated when the request leaves it out.
    const replaced = await api.request('PUT', `${SVC}/first`, { body: { ...service('first', 'NodePort'), metadata: { name: 'first' } } });
    assert.equal(replaced.status, 200, replaced.text);
    assert.equal(replaced.json.spec.clusterIP, ip);
    assert.equal(replaced.json.spec.ports[0].nodePort, 30080);
    const moved = await api.request('PUT', `${SVC}/first`, { body: { ...replaced.json, spec: { ...replaced.json.spec, clusterIP: '172.30.9.9', clusterIPs: ['172.30.9.9'] } } });
    assert.equal(moved.status, 422);
    assert.match(moved.json.message, /may not change once set/);

    // NodePort → ClusterIP frees the node port; deleting frees the cluster IP.
    const retyped = await api.request('PATCH', `${SVC}/first`, { body: { spec: { type: 'ClusterIP' } }, contentType: 'application/merge-patch+json' });
    assert.equal(retyped.status, 200, retyped.text);
    assert.equal(retyped.json.spec.ports[0].nodePort, undefined);
    await api.kubectlOk(['create', '-f', '-'], JSON.stringify({ apiVersion: 'v1', kind: 'Service', ...service('takes-port', 'NodePort', {}, { nodePort: 30080 }) }));
    assert.equal((await api.request('DELETE', `${SVC}/first`)).status, 200);
    const takesIP = await api.request('POST', SVC, { body: service('takes-ip', 'ClusterIP', { clusterIP: ip }) });
    assert.equal(takesIP.status, 201, takesIP.text);

    // A dry run and a create that fails (the name exists) hold nothing.
    const dry = await api.request('POST', `${SVC}?dryRun=All`, { body: service('dry', 'NodePort', {}, { nodePort: 30090 }) });
    assert.equal(dry.status, 201, dry.text);
    const clash = await api.request('POST', SVC, { body: service('takes-ip', 'NodePort', {}, { nodePort: 30091 }) });
    assert.equal(clash.status, 409);
    for (const [name, port] of [['real-1', 30090], ['real-2', 30091]] as const) {
      const r = await api.request('POST', SVC, { body: service(name, 'NodePort', {}, { nodePort: port }) });
      assert.equal(r.status, 201, `${name}: ${r.text}`);
    }

    // An empty cluster IP asks for one; a LoadBalancer may opt out of node ports.
    const empty = await api.request('POST', SVC, { body: service('empty-ip', 'LoadBalancer', { clusterIP: '', allocateLoadBalancerNodePorts: false }) });
    assert.equal(empty.status, 201, empty.text);
    assert.match(empty.json.spec.clusterIP, /^172\.30\./);
    assert.equal(empty.json.spec.ports[0].nodePort, undefined);

    // Headless and ExternalName Services hold no cluster IP.
    const headless = await api.request('POST', SVC, { body: service('headless', 'ClusterIP', { clusterIP: 'None' }) });
    assert.equal(headless.status, 201, headless.text);
    assert.deepEqual(headless.json.spec.clusterIPs, ['None']);
    const external = await api.request('POST', SVC, { body: { metadata: { name: 'ext' }, spec: { type: 'ExternalName', externalName: 'example.com' } } });
    assert.equal(external.status, 201, external.text);
    assert.equal(external.json.spec.clusterIP, undefined);
    await heldValues(api);
  } finally {
    await api.stop();
  }
});

test('a claim left by a create that was never written is freed at the next start once old, not while it may be in flight', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'bosun-alloc-claims-'));
  try {
    let api = await startTestApiServer({ dataDir });
    await api.stop({ keepData: true });
    // What a server that died between claiming and writing its Service leaves behind.
    const storage = openSqliteStorage(join(dataDir, 'state.db'));
    const claim = (port: number, ageMs: number) =>
      storage.create(`/allocations/servicenodeports//${port}`, { metadata: { name: String(port), creationTimestamp: new Date(Date.now() - ageMs).toISOString() }, owner: 'default/ghost' });
    await claim(30555, 120_000);
    await claim(30556, 1_000);
    await storage.close();

    api = await startTestApiServer({ dataDir });
    try {
      const old = await api.request('POST', SVC, { body: service('takes-old', 'NodePort', {}, { nodePort: 30555 }) });
      assert.equal(old.status, 201, old.text);
      const fresh = await api.request('POST', SVC, { body: service('takes-fresh', 'NodePort', {}, { nodePort: 30556 }) });
      assert.equal(fresh.status, 422, fresh.text);
      assert.match(fresh.json.message, /provided port is already allocated/);
    } finally {
      await api.stop({ keepData: true });
    }
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test('--service-cluster-ip-range: cluster IPs and the kubernetes Service (its endpoints this server) come from it; a restart on another range moves the kubernetes Service', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'bosun-svc-range-'));
  try {
    let api = await startTestApiServer({ dataDir, serviceClusterIPRange: '127.30.0.0/16' });
    try {
      const kubernetes = await api.request('GET', `${SVC}/kubernetes`);
      assert.equal(kubernetes.status, 200, kubernetes.text);
      assert.equal(kubernetes.json.spec.clusterIP, '127.30.0.1');
      assert.deepEqual(kubernetes.json.spec.ports, [{ name: 'https', port: 443, protocol: 'TCP', targetPort: api.port }]);
      const slice = await api.request('GET', '/apis/discovery.k8s.io/v1/namespaces/default/endpointslices/kubernetes');
      assert.equal(slice.status, 200, slice.text);
      assert.deepEqual([slice.json.endpoints[0].addresses, slice.json.ports[0].port], [['127.0.0.1'], api.port]);
      const created = await api.request('POST', SVC, { body: service('web', 'ClusterIP') });
      assert.equal(created.status, 201, created.text);
      assert.match(created.json.spec.clusterIP, /^127\.30\.\d+\.\d+$/);
      const outside = await api.request('POST', SVC, { body: service('outside', 'ClusterIP', { clusterIP: '172.30.0.20' }) });
      assert.equal(outside.status, 422);
      assert.match(outside.json.message, /the provided IP \(172\.30\.0\.20\) is not in the valid range\. The range of valid IPs is 127\.30\.0\.0\/16/);
      assert.match(await api.kubectlOk(['get', 'service', 'kubernetes']), /kubernetes\s+ClusterIP\s+127\.30\.0\.1\s+<none>\s+443\/TCP/);
    } finally {
      await api.stop({ keepData: true });
    }
    api = await startTestApiServer({ dataDir, serviceClusterIPRange: '10.96.0.0/12' });
    try {
      assert.equal((await api.request('GET', `${SVC}/kubernetes`)).json.spec.clusterIP, '10.96.0.1');
      // A Service already stored keeps its address, as kube-apiserver keeps it.
      assert.match((await api.request('GET', `${SVC}/web`)).json.spec.clusterIP, /^127\.30\./);
    } finally {
      await api.stop({ keepData: true });
    }
    for (const [range, message] of [['127.30.0.1/16', /no host bits set/], ['10.0.0.0/8', /from \/12 to \/28/], ['fd00::/108', /IPv4 network/]] as const) {
      await assert.rejects(startTestApiServer({ dataDir, serviceClusterIPRange: range }), message, range);
    }
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test('externalTrafficPolicy Local on a LoadBalancer gets a healthCheckNodePort: kept on updates, refused when taken or not wanted, freed when the policy or type changes', async () => {
  const api = await startTestApiServer();
  try {
    const local = await api.request('POST', SVC, { body: service('local', 'LoadBalancer', { externalTrafficPolicy: 'Local' }) });
    assert.equal(local.status, 201, local.text);
    const healthCheck = local.json.spec.healthCheckNodePort;
    assert.ok(healthCheck >= 30000 && healthCheck <= 32767, `healthCheckNodePort ${healthCheck} in the node port range`);
    assert.notEqual(healthCheck, local.json.spec.ports[0].nodePort);
    const cluster = await api.request('POST', SVC, { body: service('cluster', 'LoadBalancer') });
    assert.equal(cluster.json.spec.externalTrafficPolicy, 'Cluster', 'the policy defaults to Cluster');
    assert.equal(cluster.json.spec.healthCheckNodePort, undefined, 'no health check with policy Cluster');

    // An update that leaves it out keeps it.
    const { healthCheckNodePort: _dropped, ...specWithout } = local.json.spec;
    const kept = await api.request('PUT', `${SVC}/local`, { body: { ...local.json, spec: specWithout } });
    assert.equal(kept.status, 200, kept.text);
    assert.equal(kept.json.spec.healthCheckNodePort, healthCheck);

    // Taken: by another Service's health check or node port.
    const taken = await api.request('POST', SVC, { body: service('taken', 'LoadBalancer', { externalTrafficPolicy: 'Local', healthCheckNodePort: healthCheck }) });
    assert.equal(taken.status, 422);
    assert.match(taken.json.message, /spec\.healthCheckNodePort: Invalid value: \d+: provided port is already allocated/);
    const asNodePort = await api.request('POST', SVC, { body: service('as-node-port', 'NodePort', {}, { nodePort: healthCheck }) });
    assert.equal(asNodePort.status, 422, 'a health-check node port is a node port like the others');
    // Not wanted: only a LoadBalancer with policy Local has one.
    const unwanted = await api.request('POST', SVC, { body: service('unwanted', 'NodePort', { healthCheckNodePort: 31999 }) });
    assert.equal(unwanted.status, 422);
    assert.match(unwanted.json.message, /may only be set when `type` is 'LoadBalancer' and `externalTrafficPolicy` is 'Local'/);
    const policy = await api.request('POST', SVC, { body: service('policy', 'ClusterIP', { externalTrafficPolicy: 'Local' }) });
    assert.equal(policy.status, 422);
    assert.match(policy.json.message, /may only be set for externally-accessible services/);

    // Policy Cluster: the port is freed and can be asked for.
    const toCluster = await api.request('PUT', `${SVC}/local`, { body: { ...kept.json, spec: { ...kept.json.spec, externalTrafficPolicy: 'Cluster' } } });
    assert.equal(toCluster.status, 200, toCluster.text);
    assert.equal(toCluster.json.spec.healthCheckNodePort, undefined);
    const reuse = await api.request('POST', SVC, { body: service('reuse', 'LoadBalancer', { externalTrafficPolicy: 'Local', healthCheckNodePort: healthCheck }) });
    assert.equal(reuse.status, 201, reuse.text);
    assert.equal(reuse.json.spec.healthCheckNodePort, healthCheck);
    // Deleted: freed too.
    assert.equal((await api.request('DELETE', `${SVC}/reuse`)).status, 200);
    const again = await api.request('POST', SVC, { body: service('again', 'NodePort', {}, { nodePort: healthCheck }) });
    assert.equal(again.status, 201, again.text);
    await heldValues(api);
  } finally {
    await api.stop();
  }
});
