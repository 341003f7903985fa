// `default`, `kube-system` and `kube-public` cannot be deleted, as kube-apiserver's
// NamespaceLifecycle admission refuses it: a single delete is a 403 "this namespace may not be
// deleted"; namespaces have no collection delete (405, not in discovery's verbs), so `kubectl
// delete namespaces --all` deletes the others one by one and is refused for these three.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestApiServer } from '../helpers/apiserver.js';

const IMMORTAL = ['default', 'kube-system', 'kube-public'];

test('immortal namespaces survive single and collection deletes', { timeout: 60_000 }, async () => {
  const api = await startTestApiServer();
  try {
    await api.kubectlOk(['create', 'namespace', 'mortal']);
    await api.kubectlOk(['create', 'configmap', 'keep', '-n', 'kube-system']);
    for (const name of IMMORTAL) {
      const r = await api.kubectl(['delete', 'namespace', name]);
      assert.notEqual(r.code, 0, name);
      assert.match(r.stderr, new RegExp(`Error from server \\(Forbidden\\): namespaces "${name}" is forbidden: this namespace may not be deleted`));
      const raw = await api.request('DELETE', `/api/v1/namespaces/${name}`);
      assert.equal(raw.status, 403);
      assert.equal(raw.json.reason, 'Forbidden');
    }
    const collection = await api.request('DELETE', '/api/v1/namespaces');
    assert.equal(collection.status, 405);
    assert.equal(collection.json.reason, 'MethodNotAllowed');
    const discovery = (await api.request('GET', '/api/v1')).json.resources.find((r: any) => r.name === 'namespaces');
    assert.ok(!discovery.verbs.includes('deletecollection'));

    const all = await api.kubectl(['delete', 'namespaces', '--all', '--wait=false']);
    assert.notEqual(all.code, 0);
    assert.match(all.stdout, /namespace "mortal" deleted/);
    for (const name of IMMORTAL) assert.match(all.stderr, new RegExp(`namespaces "${name}" is forbidden: this namespace may not be deleted`));

    const left = JSON.parse(await api.kubectlOk(['get', 'namespaces', '-o', 'json'])).items;
    for (const name of IMMORTAL) {
      const ns = left.find((n: any) => n.metadata.name === name);
      assert.ok(ns && !ns.metadata.deletionTimestamp, `${name} is still there and not terminating`);
    }
    assert.equal(JSON.parse(await api.kubectlOk(['get', 'configmap', 'keep', '-n', 'kube-system', '-o', 'json'])).metadata.name, 'keep');
  } finally {
    await api.stop();
  }
});
