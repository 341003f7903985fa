// A new pod's spec defaults as kube-apiserver writes them (src/kube/pod-defaults.ts), seen with the
// real kubectl; a pod written again as read keeps them; which stored pods count as defaulted.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestApiServer, type TestApiServer } from '../helpers/apiserver.js';
import { defaulted, defaultPullPolicy } from '../../src/kube/pod-defaults.js';

let api: TestApiServer;
before(async () => {
  api = await startTestApiServer();
});
after(async () => {
  await api.stop();
});

const manifest = (labels: Record<string, string>) => JSON.stringify({
  apiVersion: 'v1', kind: 'Pod', metadata: { name: 'web', labels },
  spec: {
    containers: [{
      name: 'app', image: 'registry.example/app:1.2', ports: [{ containerPort: 8080 }],
      readinessProbe: { httpGet: { port: 8080 } }, resources: { limits: { cpu: '500m', memory: '64Mi' } },
    }],
    initContainers: [{ name: 'init', image: 'busybox' }],
    volumes: [{ name: 'conf', configMap: { name: 'conf' } }, { name: 'root', hostPath: { path: '/srv' } }],
  },
});

test('a new pod gets kube\'s spec defaults', async () => {
  await api.kubectlOk(['create', '-f', '-'], manifest({ app: 'web' }));
  const { spec } = JSON.parse(await api.kubectlOk(['get', 'pod', 'web', '-o', 'json']));
  const [app] = spec.containers;
  assert.equal(app.imagePullPolicy, 'IfNotPresent');
  assert.equal(spec.initContainers[0].imagePullPolicy, 'Always', 'no tag is latest');
  assert.equal(app.terminationMessagePath, '/dev/termination-log');
  assert.equal(app.terminationMessagePolicy, 'File');
  assert.deepEqual(app.ports, [{ containerPort: 8080, protocol: 'TCP' }]);
  assert.deepEqual(app.readinessProbe, { httpGet: { port: 8080, path: '/', scheme: 'HTTP' }, timeoutSeconds: 1, periodSeconds: 10, successThreshold: 1, failureThreshold: 3 });
  assert.deepEqual(app.resources, { limits: { cpu: '500m', memory: '64Mi' }, requests: { cpu: '500m', memory: '64Mi' } });
  // (then the ServiceAccount admission's token volume: service-account-admission.test.ts)
  assert.deepEqual(spec.volumes.slice(0, 2), [{ name: 'conf', configMap: { name: 'conf', defaultMode: 420 } }, { name: 'root', hostPath: { path: '/srv', type: '' } }]);
  assert.deepEqual(spec.securityContext, {});
  assert.equal(spec.enableServiceLinks, true);
  assert.equal(spec.serviceAccount, 'default');
  assert.equal(spec.serviceAccountName, 'default');
  assert.deepEqual([spec.priority, spec.preemptionPolicy], [0, 'PreemptLowerPriority'], 'the priority admission\'s, without a class');
  // Written again as read, with a label changed (a replace, a label): the defaults hold, nothing immutable moves.
  const read = JSON.parse(await api.kubectlOk(['get', 'pod', 'web', '-o', 'json']));
  read.metadata.labels.tier = 'front';
  assert.match(await api.kubectlOk(['replace', '-f', '-'], JSON.stringify(read)), /pod\/web replaced/);
  assert.match(await api.kubectlOk(['label', 'pod', 'web', 'stage=2']), /pod\/web labeled/);
  const after = JSON.parse(await api.kubectlOk(['get', 'pod', 'web', '-o', 'json']));
  assert.deepEqual(after.metadata.labels, { app: 'web', tier: 'front', stage: '2' });
  assert.deepEqual(after.spec, spec);
});

test('a pod named by the deprecated serviceAccount alone runs as that account', async () => {
  await api.kubectlOk(['create', '-f', '-'], JSON.stringify({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'old-style' }, spec: { serviceAccount: 'builder', containers: [{ name: 'c', image: 'busybox:1.36' }] } }));
  const { spec } = JSON.parse(await api.kubectlOk(['get', 'pod', 'old-style', '-o', 'json']));
  assert.deepEqual([spec.serviceAccountName, spec.serviceAccount], ['builder', 'builder']);
});

test('image pull policy by tag and digest; what counts as a defaulted spec', () => {
  const table: Array<[string, string]> = [
    ['nginx', 'Always'], ['nginx:latest', 'Always'], ['nginx:1.27', 'IfNotPresent'],
    ['registry.example:5000/team/app', 'Always'], ['registry.example:5000/team/app:v2', 'IfNotPresent'],
    ['nginx@sha256:0123', 'IfNotPresent'], ['nginx:latest@sha256:0123', 'Always'],
  ];
  for (const [image, policy] of table) assert.equal(defaultPullPolicy(image), policy, image);
  assert.equal(defaulted({ containers: [{ name: 'c', image: 'x' }] }), false, 'a pod stored before the defaults');
  assert.equal(defaulted({ enableServiceLinks: true, containers: [{ name: 'c', image: 'x', terminationMessagePath: '/dev/termination-log' }] }), true);
});

test('a malformed spec is not a server error: the defaults pass over what is not an object', async () => {
  const pod = {
    apiVersion: 'v1', kind: 'Pod', metadata: { name: 'malformed' },
    spec: {
      containers: [{ name: 'c', image: 'busybox', ports: 'x', livenessProbe: 'y', readinessProbe: { httpGet: 'z' }, resources: { limits: 'w' } }, 'not-a-container'],
      volumes: [{ name: 'v', hostPath: 'h' }, { name: 's', secret: 7 }],
    },
  };
  const r = await api.request('POST', '/api/v1/namespaces/default/pods', { body: pod });
  assert.ok(r.status < 500, `${r.status} ${r.text}`);
});
