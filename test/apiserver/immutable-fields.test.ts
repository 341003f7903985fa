// What an update may not change, as kube-apiserver refuses it, through the real kubectl: a
// workload's selector, a Job's template, a StatefulSet's spec beyond its mutable fields, a Pod's
// spec beyond images, deadlines and added tolerations (the scheduler's binding still sets the
// node), a Secret's type, and the data of an immutable ConfigMap or Secret. Each refusal is a 422
// naming the field; what is allowed still goes through.
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

async function refused(args: string[], pattern: RegExp): Promise<void> {
  const result = await api.kubectl(args);
  assert.notEqual(result.code, 0, `${args.join(' ')} was accepted`);
  assert.match(result.stderr, pattern, args.join(' '));
}

const ok = (args: string[]) => api.kubectlOk(args);

test('an immutable ConfigMap or Secret keeps its data and the mark; a Secret keeps its type', async () => {
  await ok(['create', 'configmap', 'frozen', '--from-literal=a=b']);
  await ok(['patch', 'configmap', 'frozen', '-p', '{"data":{"a":"c"}}']);
  await ok(['patch', 'configmap', 'frozen', '-p', '{"immutable":true}']);
  await refused(['patch', 'configmap', 'frozen', '-p', '{"data":{"a":"d"}}'], /ConfigMap "frozen" is invalid: data: Forbidden: field is immutable when `immutable` is set/);
  await refused(['patch', 'configmap', 'frozen', '-p', '{"immutable":false}'], /immutable: Forbidden: field is immutable when `immutable` is set/);
  await ok(['label', 'configmap', 'frozen', 'still=labelable']);
  assert.equal(await ok(['get', 'configmap', 'frozen', '-o', 'jsonpath={.data.a}']), 'c');

  await ok(['create', 'secret', 'generic', 'sealed', '--from-literal=a=b']);
  await ok(['patch', 'secret', 'sealed', '-p', '{"immutable":true}']);
  await refused(['patch', 'secret', 'sealed', '-p', '{"stringData":{"a":"c"}}'], /Secret "sealed" is invalid: data: Forbidden: field is immutable when `immutable` is set/);
  await refused(['patch', 'secret', 'sealed', '-p', '{"type":"example.com/other"}'], /type: Invalid value: "example.com\/other": field is immutable/);
});

test('workload selectors, a Job\'s template and a StatefulSet\'s fixed spec cannot change', async () => {
  await ok(['create', 'deployment', 'web', '--image=busybox']);
  const relabel = '{"spec":{"selector":{"matchLabels":{"app":"other"}},"template":{"metadata":{"labels":{"app":"other"}}}}}';
  await refused(['patch', 'deployment', 'web', '-p', relabel], /Deployment "web" is invalid: spec\.selector: Invalid value: .*field is immutable/);
  await ok(['set', 'image', 'deployment/web', 'busybox=busybox:2']);
  await ok(['scale', 'deployment', 'web', '--replicas=3']);

  await ok(['create', 'job', 'once', '--image=busybox']);
  await refused(['patch', 'job', 'once', '--type=json', '-p', '[{"op":"replace","path":"/spec/template/spec/containers/0/image","value":"busybox:2"}]'], /Job "once" is invalid: spec\.template: Invalid value: .*field is immutable/);
  await ok(['patch', 'job', 'once', '-p', '{"spec":{"suspend":true}}']);

  await api.kubectlOk(['apply', '-f', '-'], [
    'apiVersion: apps/v1', 'kind: StatefulSet', 'metadata: {name: db}',
    'spec:', '  serviceName: db', '  selector: {matchLabels: {app: db}}',
    '  template: {metadata: {labels: {app: db}}, spec: {containers: [{name: db, image: busybox}]}}',
  ].join('\n'));
  await refused(['patch', 'statefulset', 'db', '-p', '{"spec":{"serviceName":"other"}}'], /spec: Forbidden: updates to statefulset spec for fields other than 'replicas', .* and 'minReadySeconds' are forbidden/);
  await ok(['patch', 'statefulset', 'db', '-p', '{"spec":{"replicas":2,"minReadySeconds":5}}']);
});

test('a Pod: images, a lower deadline and more tolerations may change, nothing else; the binding sets the node', async () => {
  await ok(['run', 'p', '--image=busybox', '--restart=Never']);
  await ok(['set', 'image', 'pod/p', 'p=busybox:2']);
  await ok(['patch', 'pod', 'p', '-p', '{"spec":{"activeDeadlineSeconds":600}}']);
  await ok(['patch', 'pod', 'p', '-p', '{"spec":{"activeDeadlineSeconds":300}}']);
  await refused(['patch', 'pod', 'p', '-p', '{"spec":{"activeDeadlineSeconds":900}}'], /spec\.activeDeadlineSeconds: Invalid value: 900: must be less than or equal to previous value/);
  await ok(['patch', 'pod', 'p', '--type=json', '-p', '[{"op":"add","path":"/spec/tolerations/-","value":{"key":"example.com/k","operator":"Exists"}}]']);
  await refused(['patch', 'pod', 'p', '--type=json', '-p', '[{"op":"remove","path":"/spec/tolerations/0"}]'], /pod updates may not change fields other than/);
  await refused(['patch', 'pod', 'p', '-p', '{"spec":{"restartPolicy":"Always"}}'], /Pod "p" is invalid: spec: Forbidden: pod updates may not change fields other than .*\(spec\.restartPolicy changed\)/);
  await refused(['patch', 'pod', 'p', '-p', '{"spec":{"nodeName":"node-1"}}'], /spec\.nodeName changed/);

  const bound = await api.request('POST', '/api/v1/namespaces/default/pods/p/binding', { body: { apiVersion: 'v1', kind: 'Binding', metadata: { name: 'p' }, target: { apiVersion: 'v1', kind: 'Node', name: 'node-1' } } });
  assert.equal(bound.status, 201, bound.text);
  assert.equal(await ok(['get', 'pod', 'p', '-o', 'jsonpath={.spec.nodeName}']), 'node-1');
  await ok(['label', 'pod', 'p', 'metadata=still-changes']);
});
