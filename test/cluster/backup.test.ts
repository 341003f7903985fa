// Backup and restore (issue #25): `bosun backup` copies a running API server's and local cloud's
// stores while writes go on, `bosun restore` brings the copy into a fresh directory, and an API
// server started there serves every write acknowledged before the backup began — same objects,
// same Secrets, same resourceVersions — and replays a watch from a restored resourceVersion.
// `bosun apiserver migrate --to-etcd` moves an SQLite store into a real etcd (Debian's etcd-server;
// skipped without it) and an API server on etcd lists the same objects; a cluster on etcd is backed
// up with an etcd snapshot and restored from it. Bad input gets clear errors.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { Agent } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { gzipSync } from 'node:zlib';
import { CloudService } from '../../src/cloud/service.js';
import { CloudStore } from '../../src/cloud/store.js';
import { startApiServerProcess } from '../../bench/lib/apiserver-process.js';
import { startEtcdControlPlane } from '../../src/cluster/etcd-control-plane.js';
import { httpsJson, runKubectl, startTestApiServer, type TestApiServer } from '../helpers/apiserver.js';
import { runBosun } from '../helpers/cli.js';
import { skipWithoutEtcd, startTestEtcd } from '../helpers/etcd.js';

const root = mkdtempSync(join(tmpdir(), 'bosun-backup-'));
after(() => rmSync(root, { recursive: true, force: true }));

interface Acked { kind: 'configmaps' | 'secrets'; name: string; resourceVersion: string; value: string }

/** Writes ConfigMaps and Secrets in `workers` loops until stopped; every acknowledged write is kept in order. */
function writeContinuously(api: TestApiServer, workers: number): { acked: Acked[]; stop: () => Promise<void> } {
  const acked: Acked[] = [];
  let running = true;
  let n = 0;
  const loop = async () => {
    while (running) {
      const i = n++;
      const kind = i % 2 === 0 ? 'configmaps' : 'secrets';
      const value = randomBytes(8).toString('hex');
      const body = kind === 'configmaps'
        ? { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `w-${i}` }, data: { value } }
        : { apiVersion: 'v1', kind: 'Secret', metadata: { name: `w-${i}` }, data: { value: Buffer.from(value).toString('base64') } };
      const r = await api.request('POST', `/api/v1/namespaces/default/${kind}`, { body });
      assert.equal(r.status, 201, r.text);
      acked.push({ kind, name: `w-${i}`, resourceVersion: r.json.metadata.resourceVersion, value });
    }
  };
  const loops = Array.from({ length: workers }, loop);
  return { acked, stop: async () => { running = false; await Promise.all(loops); } };
}

test('a backup taken while writes go on restores into a fresh directory with every acknowledged write, its Secrets and resourceVersions', async () => {
  const dataDir = join(root, 'live');
  const api = await startTestApiServer({ dataDir });
  const cloud = new CloudService({ dataDir, host: '127.0.0.1', port: 0, ignition: 'builtin', bootDelayMs: 0 });
  await cloud.start();
  let restored: TestApiServer | undefined;
  try {
    cloud.cloud.createInstance({ name: 'kept-machine' });
    const writes = writeContinuously(api, 4);
    while (writes.acked.length < 100) await new Promise((r) => setTimeout(r, 20));
    const before = [...writes.acked];
    const file = join(root, 'live.backup');
    // The cloud's store is written during the backup too: instances created one after another.
    let backingUp = true;
    const instances: string[] = [];
    const cloudWrites = (async () => {
      for (let i = 0; backingUp; i++) {
        cloud.cloud.createInstance({ name: `during-${i}` });
        instances.push(`during-${i}`);
        await new Promise((r) => setTimeout(r, 25));
      }
    })();
    const backup = await runBosun(['backup', '--data-dir', dataDir, '--to', file], { timeoutMs: 120_000 });
    backingUp = false;
    await cloudWrites;
    const during = writes.acked.length - before.length;
    await writes.stop();
    assert.equal(backup.code, 0, backup.stderr);
    assert.match(backup.stdout, /\[1\/3\] copying the API server's store \(state\.db\) with SQLite's online backup/);
    assert.match(backup.stdout, /\[2\/3\] copying the local cloud's store \(cloud\/state\.db\)/);
    const revision = Number(/backed up revision (\d+) \((\d+) objects/.exec(backup.stdout)?.[1]);
    assert.equal(statSync(file).mode & 0o777, 0o600, 'the backup file is 0600');
    assert.ok(during > 0, 'writes went on while the backup ran');

    const target = join(root, 'restored');
    const restore = await runBosun(['restore', file, '--data-dir', target]);
    assert.equal(restore.code, 0, restore.stderr);
    assert.match(restore.stdout, /\[3\/3\] restored \d+ files; start the cluster/);
    assert.equal(statSync(target).mode & 0o777, 0o700);
    for (const name of readdirSync(target)) if (statSync(join(target, name)).isFile()) assert.equal(statSync(join(target, name)).mode & 0o077, 0, `${name} is private`);

    restored = await startTestApiServer({ dataDir: target });
    assert.equal(restored.token, api.token, 'the same admin token and CA (pki restored)');
    assert.equal(restored.caPem, api.caPem);
    const listed = new Map<string, any>();
    for (const kind of ['configmaps', 'secrets']) {
      const r = await restored.request('GET', `/api/v1/namespaces/default/${kind}`);
      assert.equal(r.status, 200, r.text);
      for (const item of r.json.items) listed.set(`${kind}/${item.metadata.name}`, item);
      assert.ok(Number(r.json.metadata.resourceVersion) >= revision, 'the restored server is at the backup\'s revision');
    }
    for (const w of before) {
      const item = listed.get(`${w.kind}/${w.name}`);
      assert.ok(item, `${w.kind}/${w.name}, acknowledged before the backup, is restored`);
      assert.equal(item.metadata.resourceVersion, w.resourceVersion, `${w.name} keeps its resourceVersion`);
      assert.equal(w.kind === 'secrets' ? Buffer.from(item.data.value, 'base64').toString() : item.data.value, w.value);
    }
    for (const item of listed.values()) assert.ok(Number(item.metadata.resourceVersion) <= revision, 'nothing newer than the backup');
    // One consistent point: every acknowledged write at or below the backup's revision is there,
    // none above it (writes acknowledged while the backup ran included).
    for (const w of writes.acked) {
      assert.equal(listed.has(`${w.kind}/${w.name}`), Number(w.resourceVersion) <= revision, `${w.name} at ${w.resourceVersion} against the backup's revision ${revision}`);
    }

    // A watch from a restored resourceVersion replays what followed it, in order.
    const from = before[0].resourceVersion;
    const watch = await restored.request('GET', `/api/v1/namespaces/default/configmaps?watch=1&resourceVersion=${from}&timeoutSeconds=2`);
    const events = watch.text.trim().split('\n').filter(Boolean).map((l) => JSON.parse(l));
    const replayed = events.filter((e) => e.type === 'ADDED').map((e) => e.object.metadata.name);
    const expected = [...listed.entries()].filter(([key, i]) => key.startsWith('configmaps/') && Number(i.metadata.resourceVersion) > Number(from))
      .map(([, i]) => i).sort((a, b) => Number(a.metadata.resourceVersion) - Number(b.metadata.resourceVersion)).map((i) => i.metadata.name);
    assert.deepEqual(replayed, expected, 'the watch replays every ConfigMap written after the resourceVersion, in order');

    // The cloud's store came back at one point too: its instance from before, and those created
    // during the backup up to some moment, with none missing before it.
    const store = new CloudStore(join(target, 'cloud', 'state.db'));
    try {
      const names = store.instances.list().map((i) => i.name);
      assert.equal(names[0], 'kept-machine');
      assert.deepEqual(names.slice(1), instances.slice(0, names.length - 1), 'a prefix of the instances created during the backup');
    } finally {
      store.close();
    }
  } finally {
    await restored?.stop();
    await cloud.close();
    await api.stop();
  }
});

test('bad input: a missing, corrupt or truncated file, a running or non-empty directory, an existing target — clear errors, non-zero exits', async () => {
  const dataDir = join(root, 'bad');
  const api = await startTestApiServer({ dataDir });
  try {
    const file = join(root, 'bad.backup');
    const ok = await runBosun(['backup', '--data-dir', dataDir, '--to', file]);
    assert.equal(ok.code, 0, ok.stderr);

    const cases: Array<{ args: string[]; error: RegExp }> = [];
    cases.push({ args: ['restore', join(root, 'missing.backup'), '--data-dir', join(root, 'r1')], error: /missing\.backup does not exist/ });
    writeFileSync(join(root, 'random.backup'), randomBytes(4096));
    cases.push({ args: ['restore', join(root, 'random.backup'), '--data-dir', join(root, 'r2')], error: /random\.backup is not a bosun backup or is damaged/ });
    const bytes = readFileSync(file);
    writeFileSync(join(root, 'truncated.backup'), bytes.subarray(0, Math.floor(bytes.length / 2)));
    cases.push({ args: ['restore', join(root, 'truncated.backup'), '--data-dir', join(root, 'r3')], error: /truncated\.backup is not a bosun backup or is damaged \(unexpected end of file\)/ });
    writeFileSync(join(root, 'other.backup'), gzipSync(Buffer.from('{"format":"something-else"}\n')));
    cases.push({ args: ['restore', join(root, 'other.backup'), '--data-dir', join(root, 'r4')], error: /other\.backup is not a bosun backup: its manifest is not one/ });
    writeFileSync(join(root, 'escape.backup'), gzipSync(Buffer.from(`${JSON.stringify({ format: 'bosun-backup', version: 1, files: [{ path: '../outside', mode: 0o600, size: 0, sha256: '' }] })}\n`)));
    cases.push({ args: ['restore', join(root, 'escape.backup'), '--data-dir', join(root, 'r5')], error: /names a file outside the data directory \("\.\.\/outside"\)/ });
    cases.push({ args: ['restore', file, '--data-dir', dataDir, '--force'], error: /the cluster in .*bad is running: process \d+ has its stores open; stop it first/ });
    mkdirSync(join(root, 'full'));
    writeFileSync(join(root, 'full', 'something'), '');
    cases.push({ args: ['restore', file, '--data-dir', join(root, 'full')], error: /full is not empty \(1 entry\): restore into a new or empty directory, or give --force/ });
    cases.push({ args: ['backup', '--data-dir', dataDir, '--to', file], error: /bad\.backup already exists; give another --to or remove it/ });
    cases.push({ args: ['backup', '--data-dir', join(root, 'nowhere'), '--to', join(root, 'x.backup')], error: /nowhere does not exist: give the data directory of a cluster/ });
    cases.push({ args: ['backup', '--data-dir', join(root, 'full'), '--to', join(root, 'y.backup')], error: /has no API server store \(state\.db, or etcd\/ of a cluster started with --etcd\): it is not a bosun data directory/ });
    for (const c of cases) {
      const r = await runBosun(c.args);
      assert.equal(r.code, 1, `bosun ${c.args.join(' ')} exits 1 (stdout: ${r.stdout})`);
      assert.match(r.stderr, c.error, `bosun ${c.args.join(' ')}`);
    }
    assert.ok(!existsSync(join(root, 'outside')), 'nothing written outside the directory');
    assert.ok(!existsSync(join(root, 'x.backup')) && !existsSync(join(root, 'y.backup')), 'a failed backup leaves no file');
    assert.deepEqual(readdirSync(join(root, 'full')), ['something'], 'a refused restore changes nothing');
  } finally {
    await api.stop();
  }
});

test('bosun apiserver migrate --to-etcd moves an SQLite store into etcd; an API server on etcd lists the same objects', { skip: skipWithoutEtcd }, async () => {
  const dataDir = join(root, 'migrate');
  const api = await startTestApiServer({ dataDir });
  const etcd = await startTestEtcd({ members: 1 });
  let server: Awaited<ReturnType<typeof startApiServerProcess>> | undefined;
  try {
    for (let i = 0; i < 30; i++) {
      const kind = i % 3 === 0 ? 'secrets' : 'configmaps';
      const data = { n: Buffer.from(String(i)).toString(kind === 'secrets' ? 'base64' : 'utf8') };
      const r = await api.request('POST', `/api/v1/namespaces/default/${kind}`, { body: { metadata: { name: `m-${i}` }, data } });
      assert.equal(r.status, 201, r.text);
    }
    await api.request('PUT', '/api/v1/namespaces/default/configmaps/m-1', { body: { metadata: { name: 'm-1' }, data: { n: 'updated' } } });
    const snapshot = async (request: TestApiServer['request']) => {
      const out = new Map<string, any>();
      for (const path of ['/api/v1/namespaces', '/api/v1/namespaces/default/configmaps', '/api/v1/namespaces/default/secrets', '/api/v1/namespaces/kube-system/configmaps']) {
        const r = await request('GET', path);
        assert.equal(r.status, 200, r.text);
        for (const item of r.json.items) out.set(`${path} ${item.metadata.name}`, item);
      }
      return out;
    };
    const before = await snapshot(api.request);
    const oldRevision = (await api.request('GET', '/api/v1/namespaces/default/configmaps')).json.metadata.resourceVersion;

    const running = await runBosun(['apiserver', 'migrate', '--data-dir', dataDir, '--to-etcd', etcd.cluster.client.endpoints.join(',')]);
    assert.equal(running.code, 1);
    assert.match(running.stderr, /is running: process \d+ has its stores open; stop it first/);
    await api.stop({ keepData: true });

    const migrated = await runBosun(['apiserver', 'migrate', '--data-dir', dataDir, '--to-etcd', etcd.cluster.client.endpoints.join(',')], { timeoutMs: 120_000 });
    assert.equal(migrated.code, 0, migrated.stderr);
    assert.match(migrated.stdout, /migrated \d+ objects to etcd .* \(prefix \/registry\); the SQLite store was at revision \d+, etcd is now at \d+/);
    assert.match(migrated.stdout, /\[2\/3\] writing the objects to etcd under \/registry\/ \(oldest first\)/);
    const again = await runBosun(['apiserver', 'migrate', '--data-dir', dataDir, '--to-etcd', etcd.cluster.client.endpoints.join(',')]);
    assert.equal(again.code, 1);
    assert.match(again.stderr, /etcd already holds \d+ keys under \/registry\/: migrate into an empty prefix/);

    server = await startApiServerProcess(dataDir, ['--etcd-servers', etcd.cluster.client.endpoints.join(',')]);
    const agent = new Agent({ ca: readFileSync(join(dataDir, 'pki', 'ca.crt')), keepAlive: true });
    const token = readFileSync(join(dataDir, 'pki', 'admin.token'), 'utf8').trim();
    const request: TestApiServer['request'] = (method, path, options) => httpsJson(agent, server!.url, token, method, path, options);
    const after = await snapshot(request);
    assert.deepEqual([...after.keys()].sort(), [...before.keys()].sort(), 'the same objects');
    const order = (m: Map<string, any>) => [...m.entries()].sort((a, b) => Number(a[1].metadata.resourceVersion) - Number(b[1].metadata.resourceVersion)).map(([k]) => k);
    assert.deepEqual(order(after), order(before), 'resourceVersions in the same order');
    for (const [key, item] of before) {
      const { resourceVersion: _a, ...was } = item.metadata;
      const { resourceVersion: _b, ...now } = after.get(key).metadata;
      assert.deepEqual(now, was, `${key}: the same metadata (uid, creationTimestamp, …)`);
      assert.deepEqual(after.get(key).data, item.data, `${key}: the same data`);
    }
    // An old resourceVersion is gone: the client relists.
    const watch = await request('GET', `/api/v1/namespaces/default/configmaps?watch=1&resourceVersion=${oldRevision}&timeoutSeconds=2`);
    assert.match(watch.text, /"code":410|too old resource version/, watch.text);
    agent.destroy();
  } finally {
    if (server && server.exitCode === null) {
      const exited = new Promise((r) => server!.once('exit', r));
      server.kill('SIGTERM');
      await exited;
    }
    await etcd.stop();
    await api.stop().catch(() => undefined);
  }
});

test("a cluster on etcd (bosun start --etcd's control plane) is backed up with an etcd snapshot and restored with its resourceVersions", { skip: skipWithoutEtcd, timeout: 180_000 }, async () => {
  const dataDir = join(root, 'on-etcd');
  let plane = await startEtcdControlPlane({ dataDir, host: '127.0.0.1', port: 0, logLevel: 'warn' });
  let kubectl = (args: string[]) => runKubectl(plane.server.kubeconfigPath, args);
  let secret: any;
  const file = join(root, 'on-etcd.backup');
  try {
    assert.equal((await kubectl(['create', 'secret', 'generic', 'kept', '--from-literal=password=s3cret'])).code, 0);
    secret = JSON.parse((await kubectl(['get', 'secret', 'kept', '-o', 'json'])).stdout);
    const backup = await runBosun(['backup', '--data-dir', dataDir, '--to', file], { timeoutMs: 120_000 });
    assert.equal(backup.code, 0, backup.stderr);
    assert.match(backup.stdout, /\[1\/3\] taking a snapshot of the cluster's etcd \(etcd\/snapshot\.db\)/);
    assert.equal((await kubectl(['create', 'configmap', 'after-backup'])).code, 0);
  } finally {
    await plane.stop();
  }
  const target = join(root, 'etcd-restored');
  const restore = await runBosun(['restore', file, '--data-dir', target], { timeoutMs: 120_000 });
  assert.equal(restore.code, 0, restore.stderr);
  assert.match(restore.stdout, /etcd member etcd-0: from the snapshot/);
  plane = await startEtcdControlPlane({ dataDir: target, host: '127.0.0.1', port: 0, logLevel: 'warn' });
  kubectl = (args: string[]) => runKubectl(plane.server.kubeconfigPath, args);
  try {
    const restored = JSON.parse((await kubectl(['get', 'secret', 'kept', '-o', 'json'])).stdout);
    assert.equal(restored.metadata.uid, secret.metadata.uid);
    assert.equal(restored.metadata.resourceVersion, secret.metadata.resourceVersion, 'etcd keeps the revisions');
    assert.deepEqual(restored.data, secret.data);
    const after = await kubectl(['get', 'configmap', 'after-backup']);
    assert.notEqual(after.code, 0, 'what came after the backup is not there');
  } finally {
    await plane.stop();
  }
});
