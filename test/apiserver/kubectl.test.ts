// The real kubectl against the embedded API server, with nothing but --kubeconfig.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { startTestApiServer, KUBECTL, type TestApiServer } from '../helpers/apiserver.js';
import { eventually } from '../helpers/eventually.js';

let api: TestApiServer;
before(async () => {
  api = await startTestApiServer();
});
after(async () => {
  await api.stop();
});

const ok = (args: string[], input?: string): Promise<string> => api.kubectlOk(args, input);

const deployment = (image: string, env: string) => `
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, labels: {app: web}}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - name: app
        image: ${image}
        env: [${env}]
`;

test('version and api-resources', async () => {
  // kubectl 1.27 prints the whole version.Info, later ones the version alone.
  assert.match(await ok(['version']), /Server Version: (v1\.33\.0\+bosun|version\.Info\{.*GitVersion:"v1\.33\.0\+bosun")/);
  const resources = await ok(['api-resources']);
  for (const line of [/^deployments\s+deploy\s+apps\/v1\s+true\s+Deployment/m, /^pods\s+po\s+v1\s+true\s+Pod/m, /^customresourcedefinitions\s+crd,crds\s+apiextensions\.k8s\.io\/v1\s+false/m]) {
    assert.match(resources, line);
  }
});

test('apply twice is unchanged, then configured; patch types, label, annotate, scale', async () => {
  assert.match(await ok(['apply', '-f', '-'], deployment('nginx:1', '{name: A, value: "1"}, {name: B, value: "2"}')), /deployment.apps\/web created/);
  assert.match(await ok(['apply', '-f', '-'], deployment('nginx:1', '{name: A, value: "1"}, {name: B, value: "2"}')), /deployment.apps\/web unchanged/);
  assert.match(await ok(['apply', '-f', '-'], deployment('nginx:2', '{name: A, value: "1"}, {name: C, value: "3"}')), /deployment.apps\/web configured/);
  const d = JSON.parse(await ok(['get', 'deployment', 'web', '-o', 'json']));
  assert.equal(d.spec.template.spec.containers[0].image, 'nginx:2');
  assert.deepEqual(d.spec.template.spec.containers[0].env, [{ name: 'A', value: '1' }, { name: 'C', value: '3' }]);
  assert.equal(d.metadata.generation, 2);

  await ok(['patch', 'deployment', 'web', '--type', 'strategic', '-p', '{"spec":{"template":{"spec":{"containers":[{"name":"app","image":"nginx:3"}]}}}}']);
  await ok(['patch', 'deployment', 'web', '--type', 'merge', '-p', '{"metadata":{"labels":{"merged":"yes"}}}']);
  await ok(['patch', 'deployment', 'web', '--type', 'json', '-p', '[{"op":"replace","path":"/spec/replicas","value":3}]']);
  await ok(['label', 'deployment', 'web', 'tier=front']);
  await ok(['annotate', 'deployment', 'web', 'note=hello']);
  await ok(['scale', 'deployment', 'web', '--replicas=4']);
  const after = JSON.parse(await ok(['get', 'deployment', 'web', '-o', 'json']));
  assert.equal(after.spec.template.spec.containers[0].image, 'nginx:3');
  assert.equal(after.spec.template.spec.containers[0].env.length, 2, 'strategic patch keeps the env');
  assert.equal(after.metadata.labels.merged, 'yes');
  assert.equal(after.metadata.labels.tier, 'front');
  assert.equal(after.metadata.annotations.note, 'hello');
  assert.equal(after.spec.replicas, 4);
  assert.match(await ok(['get', 'deployments', '-o', 'wide']), /^web\s+0\/4\s+0\s+0\s+\S+\s+app\s+nginx:3\s+app=web$/m);
  assert.match(await ok(['get', 'all']), /deployment\.apps\/web/);
});

/** Every field of `sent` is in `stored` (the server may add defaults); empty objects, null and what is not sent need not be. */
function assertSent(sent: unknown, stored: unknown, path: string): void {
  if (sent === null || sent === undefined || (typeof sent === 'object' && !Array.isArray(sent) && Object.keys(sent).length === 0)) return;
  if (Array.isArray(sent)) {
    assert.ok(Array.isArray(stored) && stored.length === sent.length, `${path}: ${JSON.stringify(stored)} is not ${JSON.stringify(sent)}`);
    sent.forEach((v, i) => assertSent(v, (stored as unknown[])[i], `${path}[${i}]`));
  } else if (typeof sent === 'object') {
    for (const [k, v] of Object.entries(sent)) assertSent(v, (stored as Record<string, unknown> | undefined)?.[k], `${path}.${k}`);
  } else assert.equal(stored, sent, path);
}

test('kubectl create generators (protobuf bodies) store what kubectl sends', async () => {
  const generators = [
    ['deployment', 'd1', 'deployment', 'd1', '--image=nginx', '--port=8080', '--replicas=0', '--', 'sleep', '10'],
    ['service', 's1', 'service', 'clusterip', 's1', '--tcp=80:8080', '--tcp=443:https'],
    ['service', 's2', 'service', 'nodeport', 's2', '--tcp=80:80', '--node-port=30080'],
    ['job', 'j1', 'job', 'j1', '--image=busybox', '--', 'echo', 'hi'],
    ['cronjob', 'cj1', 'cronjob', 'cj1', '--image=busybox', '--schedule=*/5 * * * *', '--restart=Never', '--', 'echo', 'hi'],
    ['role', 'r1', 'role', 'r1', '--verb=get,list', '--resource=pods,deployments.apps', '--resource-name=a'],
    ['clusterrole', 'cr1', 'clusterrole', 'cr1', '--verb=get', '--non-resource-url=/healthz'],
    ['rolebinding', 'rb1', 'rolebinding', 'rb1', '--role=r1', '--user=bob', '--serviceaccount=default:sa', '--group=devs'],
    ['clusterrolebinding', 'crb1', 'clusterrolebinding', 'crb1', '--clusterrole=cr1', '--user=bob'],
    ['pdb', 'p1', 'pdb', 'p1', '--selector=app=x', '--min-available=0'],
    ['priorityclass', 'pc1', 'priorityclass', 'pc1', '--value=7', '--description=for tests', '--preemption-policy=Never'],
    ['quota', 'q1', 'quota', 'q1', '--hard=pods=3,requests.cpu=500m', '--scopes=NotTerminating'],
    ['pdb', 'p2', 'pdb', 'p2', '--selector=app=y', '--max-unavailable=50%'],
  ];
  for (const [resource, name, ...args] of generators) {
    const dash = args.includes('--') ? args.indexOf('--') : args.length;
    const sent = JSON.parse(await ok(['create', ...args.slice(0, dash), '--dry-run=client', '-o', 'json', ...args.slice(dash)]));
    await ok(['create', ...args]);
    const stored = JSON.parse(await ok(['get', resource, name, '-o', 'json']));
    const { metadata, status: _status, ...body } = sent;
    assertSent({ metadata: { labels: metadata.labels }, ...body }, stored, `${resource}/${name}`);
  }
  assert.equal(JSON.parse(await ok(['get', 'deployment', 'd1', '-o', 'json'])).spec.replicas, 0, 'a pointer field set to 0 stays 0');
});

test('kubectl debug node/<name> creates its pod (a protobuf Pod): the host namespaces, the root mounted, every taint tolerated', async () => {
  await ok(['apply', '-f', '-'], JSON.stringify({ apiVersion: 'v1', kind: 'Node', metadata: { name: 'debug-me' } }));
  const out = await ok(['debug', 'node/debug-me', '--image=busybox', '--', 'true']);
  const name = /Creating debugging pod (\S+) with container debugger on node debug-me/.exec(out)?.[1];
  assert.ok(name, out);
  const pod = JSON.parse(await ok(['get', 'pod', name, '-o', 'json']));
  assert.equal(pod.spec.nodeName, 'debug-me');
  assert.equal(pod.spec.restartPolicy, 'Never');
  assert.deepEqual([pod.spec.hostNetwork, pod.spec.hostPID, pod.spec.hostIPC], [true, true, true]);
  // The host's root, then (as in kube) the ServiceAccount admission's token volume.
  assert.deepEqual(pod.spec.volumes[0], { name: 'host-root', hostPath: { path: '/', type: '' } }, JSON.stringify(pod.spec.volumes));
  const token = pod.spec.volumes[1]?.name as string;
  assert.match(token, /^kube-api-access-/, JSON.stringify(pod.spec.volumes));
  assert.deepEqual(pod.spec.tolerations, [{ operator: 'Exists' }]);
  const [container] = pod.spec.containers;
  assert.equal(container.name, 'debugger');
  assert.equal(container.image, 'busybox');
  assert.deepEqual(container.command, ['true']);
  assert.deepEqual(container.volumeMounts, [{ name: 'host-root', mountPath: '/host' }, { name: token, readOnly: true, mountPath: '/var/run/secrets/kubernetes.io/serviceaccount' }]);
  assert.equal(container.terminationMessagePolicy, 'File');
});

test('a CRD becomes established and its resources print their columns', async () => {
  await ok(['apply', '-f', '-'], readFileSync(new URL('./fixtures/widgets-crd.yaml', import.meta.url), 'utf8'));
  assert.match(await ok(['wait', '--for', 'condition=established', 'crd/widgets.example.com', '--timeout=20s']), /condition met/);
  const widget = (name: string, size: number, tier: string, extra = '') => `apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: ${name}, labels: {tier: ${tier}}}\nspec: {size: ${size}, replicas: 1${extra}}\n`;
  assert.match(await ok(['apply', '-f', '-'], widget('w1', 3, 'a')), /widget.example.com\/w1 created/);
  assert.match(await ok(['apply', '-f', '-'], widget('w1', 3, 'a')), /unchanged/);
  // kubectl validates strictly by default (the server refuses unknown fields); without validation they are pruned.
  await ok(['create', '--validate=false', '-f', '-'], widget('w2', 5, 'b', ', junk: true'));
  assert.match(await ok(['get', 'widgets']), /^NAME\s+SIZE\s+PHASE\s+AGE\nw1\s+3\s+\S+\nw2\s+5\s+\S+\n$/);
  assert.match(await ok(['get', 'wd', '-l', 'tier=b']), /^w2\s+5/m);
  assert.doesNotMatch(await ok(['get', 'wd', '-l', 'tier=b']), /^w1/m);
  assert.equal(await ok(['get', 'wd', '--field-selector', 'metadata.name=w1', '-o', 'name']), 'widget.example.com/w1\n');
  assert.equal(await ok(['get', 'wd', 'w1', '-o', 'jsonpath={.spec.color}']), 'blue', 'schema default applied');
  assert.deepEqual(JSON.parse(await ok(['get', 'wd', 'w2', '-o', 'json'])).spec, { size: 5, replicas: 1, color: 'blue' }, 'unknown field pruned, default applied');
  await ok(['get', 'wd', '-o', 'wide']);
  await ok(['scale', 'wd', 'w1', '--replicas=6']);
  assert.equal(await ok(['get', 'wd', 'w1', '-o', 'jsonpath={.spec.replicas}']), '6');
  const invalid = await api.kubectl(['create', '-f', '-'], { input: widget('bad', 0, 'a') });
  assert.notEqual(invalid.code, 0);
  assert.match(invalid.stderr, /spec\.size: Invalid value: 0: spec\.size in body should be greater than or equal to 1/);
  assert.match(await ok(['get', 'all']), /widget\.example\.com\/w1/);
});

test('a finalizer keeps a deleted object until it is removed', async () => {
  await ok(['create', 'configmap', 'held', '--from-literal=a=b']);
  await ok(['patch', 'configmap', 'held', '--type', 'merge', '-p', '{"metadata":{"finalizers":["example.com/hold"]}}']);
  await ok(['delete', 'configmap', 'held', '--wait=false']);
  assert.notEqual(await ok(['get', 'configmap', 'held', '-o', 'jsonpath={.metadata.deletionTimestamp}']), '');
  await ok(['patch', 'configmap', 'held', '--type', 'json', '-p', '[{"op":"remove","path":"/metadata/finalizers"}]']);
  const gone = await api.kubectl(['get', 'configmap', 'held']);
  assert.notEqual(gone.code, 0);
  assert.match(gone.stderr, /configmaps "held" not found/);
});

test('get -w prints changes as they happen', async () => {
  await ok(['create', 'configmap', 'watched', '--from-literal=a=b']);
  const child = spawn(KUBECTL, ['--kubeconfig', api.kubeconfigPath, 'get', 'configmaps', '-w', '--output-watch-events']);
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  const waitFor = (re: RegExp) => eventually(`kubectl get -w to print ${re}`, () => re.test(out), { timeoutMs: 10_000, detail: () => out });
  try {
    await waitFor(/ADDED\s+watched/);
    await ok(['label', 'configmap', 'watched', 'x=y']);
    await waitFor(/MODIFIED\s+watched/);
    await ok(['delete', 'configmap', 'watched']);
    await waitFor(/DELETED\s+watched/);
  } finally {
    child.kill();
  }
});

test('cordon and uncordon a node', async () => {
  await ok(['create', '-f', '-'], JSON.stringify({ apiVersion: 'v1', kind: 'Node', metadata: { name: 'node-1', labels: { 'node-role.kubernetes.io/worker': '' } }, status: { conditions: [{ type: 'Ready', status: 'True' }] } }));
  assert.match(await ok(['cordon', 'node-1']), /cordoned/);
  assert.match(await ok(['get', 'nodes']), /^node-1\s+Ready,SchedulingDisabled\s+worker/m);
  assert.equal(await ok(['get', 'nodes', '--field-selector', 'spec.unschedulable=true', '-o', 'name']), 'node/node-1\n');
  assert.match(await ok(['uncordon', 'node-1']), /uncordoned/);
  assert.match(await ok(['get', 'nodes']), /^node-1\s+Ready\s+worker/m);
});

test('get prints labels (--show-labels, -L) and namespaces (-A) from the rows, which carry no managedFields', async () => {
  await ok(['create', 'namespace', 'rows']);
  await ok(['create', 'configmap', 'labelled', '-n', 'rows', '--from-literal=k=v']);
  await ok(['label', 'configmap', 'labelled', '-n', 'rows', 'tier=web', 'zone=a']);
  assert.match(await ok(['get', 'configmaps', '-n', 'rows', '--show-labels']), /^labelled\s+1\s+\S+\s+tier=web,zone=a$/m);
  assert.match(await ok(['get', 'configmaps', '-n', 'rows', '-L', 'zone']), /^NAME\s+DATA\s+AGE\s+ZONE\nlabelled\s+1\s+\S+\s+a$/m);
  assert.match(await ok(['get', 'configmaps', '-A', '--field-selector', 'metadata.name=labelled']), /^rows\s+labelled\s+1\s+/m);
  const table = await api.request('GET', '/api/v1/namespaces/rows/configmaps', { headers: { accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' } });
  assert.equal(table.json.rows[0].object.metadata.name, 'labelled');
  assert.equal(table.json.rows[0].object.metadata.managedFields, undefined);
  assert.ok((await api.request('GET', '/api/v1/namespaces/rows/configmaps/labelled')).json.metadata.managedFields.length >= 1, 'the object keeps them');
});

test('namespaces: creating in a missing one fails; deleting one removes its contents', async () => {
  const missing = await api.kubectl(['create', 'configmap', 'x', '-n', 'nowhere']);
  assert.notEqual(missing.code, 0);
  assert.match(missing.stderr, /namespaces "nowhere" not found/);
  await ok(['create', 'namespace', 'team']);
  await ok(['create', 'configmap', 'c1', '-n', 'team', '--from-literal=a=b']);
  await ok(['delete', 'namespace', 'team', '--timeout=20s']);
  const gone = await api.kubectl(['get', 'configmap', 'c1', '-n', 'team']);
  assert.notEqual(gone.code, 0);
  assert.match((await api.kubectl(['get', 'namespace', 'team'])).stderr, /not found/);

  // A namespace held Terminating by an object's finalizer refuses new content, as Kubernetes does.
  await ok(['create', 'namespace', 'held']);
  await ok(['create', '-f', '-'], 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: keeper\n  namespace: held\n  finalizers: [example.com/hold]\n');
  await ok(['delete', 'namespace', 'held', '--wait=false']);
  const phase = async () => (await api.kubectl(['get', 'namespace', 'held', '-o', 'jsonpath={.status.phase}'])).stdout;
  await eventually('the namespace to be Terminating', async () => (await phase()) === 'Terminating', 10_000);
  const refused = await api.kubectl(['create', 'configmap', 'late', '-n', 'held']);
  assert.notEqual(refused.code, 0);
  assert.match(refused.stderr, /configmaps "late" is forbidden: unable to create new content in namespace held because it is being terminated/);
  await ok(['patch', 'configmap', 'keeper', '-n', 'held', '--type=merge', '-p', '{"metadata":{"finalizers":null}}']);
  await ok(['wait', '--for=delete', 'namespace/held', '--timeout=20s']);
});
