// The ServiceAccount admission's token volume (admission/service-account.ts), seen with the real
// kubectl: a new pod gets kube's projected `kube-api-access-xxxxx` volume, mounted read-only where
// clients look for the token, unless the pod or its service account turns the token off; a
// container that mounts something there keeps it; the volume stays the same through updates.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestApiServer, type TestApiServer } from '../helpers/apiserver.js';

let api: TestApiServer;
before(async () => {
  api = await startTestApiServer();
});
after(async () => {
  await api.stop();
});

const PATH = '/var/run/secrets/kubernetes.io/serviceaccount';
const create = (name: string, spec: object) => api.kubectlOk(['create', '-f', '-'], JSON.stringify({ apiVersion: 'v1', kind: 'Pod', metadata: { name }, spec }));
const read = async (name: string) => JSON.parse(await api.kubectlOk(['get', 'pod', name, '-o', 'json']));

test('a new pod gets the projected kube-api-access volume, mounted read-only in every container and init container', async () => {
  await create('web', { initContainers: [{ name: 'init', image: 'busybox' }], containers: [{ name: 'app', image: 'nginx' }, { name: 'side', image: 'envoy', volumeMounts: [{ name: 'conf', mountPath: '/etc/envoy' }] }], volumes: [{ name: 'conf', emptyDir: {} }] });
  const { spec } = await read('web');
  const token = spec.volumes.find((v: { name: string }) => v.name.startsWith('kube-api-access-'));
  assert.ok(token, JSON.stringify(spec.volumes));
  assert.match(token.name, /^kube-api-access-[bcdfghjklmnpqrstvwxz2456789]{5}$/);
  assert.deepEqual(token.projected, {
    defaultMode: 420,
    sources: [
      { serviceAccountToken: { expirationSeconds: 3607, path: 'token' } },
      { configMap: { name: 'kube-root-ca.crt', items: [{ key: 'ca.crt', path: 'ca.crt' }] } },
      { downwardAPI: { items: [{ path: 'namespace', fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' } }] } },
    ],
  });
  assert.deepEqual(spec.volumes.map((v: { name: string }) => v.name), ['conf', token.name], 'added after the pod\'s own');
  const mount = { name: token.name, readOnly: true, mountPath: PATH };
  assert.deepEqual(spec.initContainers[0].volumeMounts, [mount]);
  assert.deepEqual(spec.containers[0].volumeMounts, [mount]);
  assert.deepEqual(spec.containers[1].volumeMounts, [{ name: 'conf', mountPath: '/etc/envoy' }, mount]);
  const described = await api.kubectlOk(['describe', 'pod', 'web']);
  assert.match(described, new RegExp(`${PATH} from ${token.name} \\(ro\\)`));
  assert.match(described, new RegExp(`${token.name}:\\s+Type:\\s+Projected`));
  // Updated (a label, a replace of what was read): the same volume, not a second one.
  assert.match(await api.kubectlOk(['label', 'pod', 'web', 'tier=front']), /pod\/web labeled/);
  const again = await read('web');
  assert.match(await api.kubectlOk(['replace', '-f', '-'], JSON.stringify(again)), /pod\/web replaced/);
  assert.deepEqual((await read('web')).spec, spec);
});

test('no token volume when the pod, or else its service account, turns automounting off; the pod\'s word wins', async () => {
  await create('off', { automountServiceAccountToken: false, containers: [{ name: 'c', image: 'busybox' }] });
  assert.equal((await read('off')).spec.volumes, undefined);
  await api.kubectlOk(['create', '-f', '-'], JSON.stringify({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'quiet' }, automountServiceAccountToken: false }));
  await create('quiet', { serviceAccountName: 'quiet', containers: [{ name: 'c', image: 'busybox' }] });
  const quiet = (await read('quiet')).spec;
  assert.equal(quiet.volumes, undefined, 'the account says no');
  assert.equal(quiet.automountServiceAccountToken, false, 'and the pod says so too, for the node agent, which reads only the pod');
  await create('asks', { serviceAccountName: 'quiet', automountServiceAccountToken: true, containers: [{ name: 'c', image: 'busybox' }] });
  assert.match((await read('asks')).spec.volumes?.[0]?.name ?? '', /^kube-api-access-/, 'the pod says yes');
});

test('a container that mounts its own volume at the token\'s path keeps it; a kube-api-access volume the pod brings is the one used', async () => {
  await create('own', { containers: [{ name: 'c', image: 'busybox', volumeMounts: [{ name: 'mine', mountPath: PATH }] }], volumes: [{ name: 'mine', emptyDir: {} }] });
  const own = (await read('own')).spec;
  assert.deepEqual(own.volumes.map((v: { name: string }) => v.name), ['mine'], 'no container needs the token volume');
  assert.deepEqual(own.containers[0].volumeMounts, [{ name: 'mine', mountPath: PATH }]);
  await create('brought', { containers: [{ name: 'c', image: 'busybox' }], volumes: [{ name: 'kube-api-access-abcde', emptyDir: {} }] });
  const brought = (await read('brought')).spec;
  assert.deepEqual(brought.volumes, [{ name: 'kube-api-access-abcde', emptyDir: {} }]);
  assert.deepEqual(brought.containers[0].volumeMounts, [{ name: 'kube-api-access-abcde', readOnly: true, mountPath: PATH }]);
});
