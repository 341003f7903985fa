// OpenAPI through the real kubectl and raw requests: `kubectl explain` of built-ins and of custom
// resources (also right after a CRD is created or changed), the /openapi/v3 index and documents
// (hashes, ETags, redirects, content negotiation), /openapi/v2, and kubectl's strict field
// validation of custom resources, which it leaves to the server because the v3 documents say so.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestApiServer, type TestApiServer } from '../helpers/apiserver.js';
import { enableAccessControl } from '../../src/apiserver/auth/access-control.js';

let api: TestApiServer;
before(async () => {
  api = await startTestApiServer();
});
after(async () => {
  await api.stop();
});

const ok = (args: string[], input?: string): Promise<string> => api.kubectlOk(args, input);

const crd = (extraField = '') => `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.explain.example.com}
spec:
  group: explain.example.com
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        description: Widget is something made to a specification.
        properties:
          spec:
            type: object
            description: What the widget should be.
            properties:
              size: {type: integer, description: How big the widget is in centimetres.}
              color: {type: string, enum: [red, blue], description: The colour of the widget.}
              parts:
                type: array
                description: The parts the widget is made of.
                items:
                  type: object
                  properties:
                    name: {type: string, description: The name of the part.}
${extraField}
          status:
            type: object
            properties:
              ready: {type: boolean, description: Whether the widget is ready.}
`;

test('kubectl explain prints fields and descriptions of built-ins', async () => {
  const cm = await ok(['explain', 'configmap']);
  assert.match(cm, /^KIND:\s+ConfigMap$/m);
  assert.match(cm, /^VERSION:\s+v1$/m);
  assert.match(cm, /ConfigMap holds configuration data/);
  assert.match(cm, /^ {2}data\t<map\[string\]string>$/m);
  assert.match(cm, /^ {2}metadata\t<ObjectMeta>$/m);

  const replicas = await ok(['explain', 'deployment.spec.replicas']);
  assert.match(replicas, /^GROUP:\s+apps$/m);
  assert.match(replicas, /^FIELD: replicas <integer>$/m);
  assert.match(replicas, /The number of pods wanted\. Defaults to 1\./);

  const containers = await ok(['explain', 'pods.spec.containers']);
  assert.match(containers, /^FIELD: containers <\[\]Container>$/m);
  assert.match(containers, /^ {2}image\t<string>$/m);
  assert.match(await ok(['explain', 'pod.spec.restartPolicy']), /ENUM:\n\s+Always/);
  for (const resource of ['secret', 'namespace', 'service.spec.ports', 'node.spec.taints', 'lease.spec', 'pdb.spec', 'clusterrole.rules', 'crd.spec.names', 'endpoints']) {
    assert.match(await ok(['explain', resource]), /DESCRIPTION:\n {4}\S/, resource);
  }
  const meta = await ok(['explain', 'configmap.metadata.ownerReferences']);
  assert.match(meta, /^ {2}uid\t<string> -required-$/m);
});

test("kubectl apply builds its strategic merge patches from the published schemas, without falling back", async () => {
  const deployment = (image: string, env: string, podExtra: string, containerExtra: string) => `
apiVersion: apps/v1
kind: Deployment
metadata: {name: patched}
spec:
  selector: {matchLabels: {app: patched}}
  template:
    metadata: {labels: {app: patched}}
    spec:
      ${podExtra}
      containers:
      - name: app
        image: ${image}
        env: [${env}]
        ${containerExtra}
`;
  await ok(['apply', '-f', '-'], deployment('nginx:1', '{name: A, value: "1"}, {name: B, value: "2"}', 'securityContext: {runAsUser: 1}', 'livenessProbe: {httpGet: {path: /, port: 80}}'));
  const second = await api.kubectl(['apply', '-f', '-'], {
    input: deployment('nginx:2', '{name: A, value: "1"}, {name: C, valueFrom: {fieldRef: {fieldPath: metadata.name}}}',
      'affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{matchExpressions: [{key: a, operator: Exists}]}]}}}',
      'livenessProbe: {tcpSocket: {port: 81}}\n        securityContext: {capabilities: {drop: [ALL]}}'),
  });
  assert.equal(second.code, 0, second.stderr);
  assert.doesNotMatch(second.stderr, /warning/i);
  const spec = JSON.parse(await ok(['get', 'deployment', 'patched', '-o', 'json'])).spec.template.spec;
  // env B deleted by the patch's merge-key directives; securityContext dropped (and defaulted again,
  // as kube-apiserver does, to an empty one); probe replaced (with kube's timings).
  assert.deepEqual(spec.containers[0].env, [{ name: 'A', value: '1' }, { name: 'C', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } }]);
  assert.deepEqual(spec.securityContext, {});
  assert.deepEqual(spec.containers[0].livenessProbe, { tcpSocket: { port: 81 }, timeoutSeconds: 1, periodSeconds: 10, successThreshold: 1, failureThreshold: 3 });
  assert.deepEqual(spec.containers[0].securityContext, { capabilities: { drop: ['ALL'] } });
});

test('kubectl explain shows a CRD from its schema, as soon as it exists and after it changes', async () => {
  const missing = await api.kubectl(['explain', 'widgets']);
  assert.notEqual(missing.code, 0);
  await ok(['apply', '-f', '-'], crd());
  await ok(['wait', '--for', 'condition=established', 'crd/widgets.explain.example.com']);

  const widget = await ok(['explain', 'widgets']);
  assert.match(widget, /^GROUP:\s+explain\.example\.com$/m);
  assert.match(widget, /^KIND:\s+Widget$/m);
  assert.match(widget, /Widget is something made to a specification\./);
  assert.match(widget, /^ {2}spec\t<Object>\n {4}What the widget should be\.$/m);
  assert.match(widget, /^ {2}metadata\t<ObjectMeta>$/m);

  const color = await ok(['explain', 'widget.spec.color']);
  assert.match(color, /^FIELD: color <string>$/m);
  assert.match(color, /The colour of the widget\./);
  assert.match(color, /ENUM:\n\s+red\n\s+blue/);
  assert.match(await ok(['explain', 'widget.spec.parts']), /^ {2}name\t<string>\n {4}The name of the part\.$/m);
  assert.match((await api.kubectl(['explain', 'widget.spec.weight'])).stderr, /field "weight" does not exist/);

  // A new field in the CRD's schema is explained right away (the cached document is rebuilt).
  await ok(['apply', '-f', '-'], crd('              weight: {type: number, description: The weight in grams.}'));
  assert.match(await ok(['explain', 'widget.spec.weight']), /The weight in grams\./);
});

test('strict validation of a custom resource reports unknown fields (kubectl leaves it to the server)', async () => {
  const object = 'apiVersion: explain.example.com/v1\nkind: Widget\nmetadata: {name: w}\nspec: {size: 3, bogus: 1, parts: [{name: a, extra: 2}]}\n';
  const strict = await api.kubectl(['apply', '-f', '-'], { input: object });
  assert.notEqual(strict.code, 0);
  assert.match(strict.stderr, /Widget in version "v1" cannot be handled as a Widget: strict decoding error: unknown field "spec\.bogus", unknown field "spec\.parts\[0\]\.extra"/);
  const serverSide = await api.kubectl(['apply', '--server-side', '-f', '-'], { input: object });
  assert.match(serverSide.stderr, /failed to create typed patch object \(explain\.example\.com\/v1, Kind=Widget\): errors:\n {2}\.spec\.bogus: field not declared in schema/);
  assert.equal((await api.kubectl(['get', 'widget', 'w'])).code, 1, 'nothing was created');

  // --validate=warn: created (the unknown fields pruned), with kubectl printing the server's warnings.
  const warn = await api.kubectl(['apply', '--validate=warn', '-f', '-'], { input: object });
  assert.equal(warn.code, 0, warn.stderr);
  assert.match(warn.stderr, /Warning: unknown field "spec\.bogus"/);
  const stored = JSON.parse(await ok(['get', 'widget', 'w', '-o', 'json']));
  assert.deepEqual(stored.spec, { size: 3, parts: [{ name: 'a' }] });
  // Known fields pass strict validation.
  await ok(['apply', '-f', '-'], 'apiVersion: explain.example.com/v1\nkind: Widget\nmetadata: {name: w}\nspec: {size: 4}\n');
});

test('/openapi/v3: an index of hashed documents with Kubernetes-named schemas; ETags, redirects, negotiation', async () => {
  const index = await api.request('GET', '/openapi/v3');
  assert.equal(index.status, 200);
  assert.equal(index.headers['content-type'], 'application/json');
  const core = index.json.paths['api/v1'].serverRelativeURL as string;
  assert.match(core, /^\/openapi\/v3\/api\/v1\?hash=[0-9A-F]{128}$/);
  assert.ok(index.json.paths['apis/apps/v1'] && index.json.paths['apis/rbac.authorization.k8s.io/v1'] && index.json.paths['apis/explain.example.com/v1']);

  const doc = await api.request('GET', core, { accept: 'application/json' });
  assert.equal(doc.status, 200);
  assert.equal(doc.headers['cache-control'], 'public, immutable');
  assert.equal(doc.headers.etag, `"${core.split('hash=')[1]}"`);
  const configMap = doc.json.components.schemas['io.k8s.api.core.v1.ConfigMap'];
  assert.deepEqual(configMap['x-kubernetes-group-version-kind'], [{ group: '', kind: 'ConfigMap', version: 'v1' }]);
  assert.equal(configMap.properties.data.additionalProperties.type, 'string');
  assert.ok(doc.json.components.schemas['io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta'].properties.labels);
  const patch = doc.json.paths['/api/v1/namespaces/{namespace}/configmaps/{name}'].patch;
  assert.ok(patch.parameters.some((p: any) => p.name === 'fieldValidation' && p.in === 'query'));

  const custom = await api.request('GET', index.json.paths['apis/explain.example.com/v1'].serverRelativeURL);
  assert.deepEqual(custom.json.components.schemas['com.example.explain.v1.Widget']['x-kubernetes-group-version-kind'], [{ group: 'explain.example.com', kind: 'Widget', version: 'v1' }]);

  const notModified = await api.request('GET', core, { headers: { 'if-none-match': doc.headers.etag as string } });
  assert.equal(notModified.status, 304);
  const stale = await api.request('GET', '/openapi/v3/api/v1?hash=0123');
  assert.equal(stale.status, 301);
  assert.equal(stale.headers.location, core);
  assert.equal((await api.request('GET', core, { accept: 'application/com.github.proto-openapi.spec.v3@v1.0+protobuf' })).status, 406);
  assert.equal((await api.request('GET', '/openapi/v3/apis/nothing.example.com/v1')).status, 404);
  assert.equal((await api.request('GET', '/openapi/v3', { token: null })).status, 401);
});

test('/openapi/v2: JSON with every definition, protobuf for the clients that ask for it', async () => {
  const json = await api.request('GET', '/openapi/v2', { accept: 'application/json' });
  assert.equal(json.status, 200);
  assert.equal(json.json.swagger, '2.0');
  const deployment = json.json.definitions['io.k8s.api.apps.v1.Deployment'];
  assert.deepEqual(deployment['x-kubernetes-group-version-kind'], [{ group: 'apps', kind: 'Deployment', version: 'v1' }]);
  assert.equal(deployment.properties.spec.$ref, '#/definitions/io.k8s.api.apps.v1.DeploymentSpec');
  assert.ok(json.json.definitions['com.example.explain.v1.Widget']);
  assert.ok(json.json.paths['/apis/apps/v1/namespaces/{namespace}/deployments/{name}'].patch.parameters.some((p: any) => p.name === 'fieldValidation'));

  const proto = await api.request('GET', '/openapi/v2', { accept: 'application/com.github.proto-openapi.spec.v2@v1.0+protobuf' });
  assert.equal(proto.status, 200);
  assert.equal(proto.headers['content-type'], 'application/com.github.proto-openapi.spec.v2.v1.0+protobuf');
  assert.equal((await api.request('GET', '/openapi/v2', { accept: 'text/html' })).status, 406);
});

test('with RBAC enforced, OpenAPI stays open to any authenticated user', async () => {
  const access = await enableAccessControl(api.server, api.dataDir);
  try {
    await ok(['create', 'serviceaccount', 'nobody']);
    const token = access.issueServiceAccountToken('default', 'nobody')!.token;
    const index = await api.request('GET', '/openapi/v3', { token });
    assert.equal(index.status, 200);
    assert.equal((await api.request('GET', index.json.paths['apis/apps/v1'].serverRelativeURL, { token })).status, 200);
    assert.equal((await api.request('GET', '/openapi/v2', { token, accept: 'application/json' })).status, 200);
    assert.equal((await api.request('GET', '/api/v1/namespaces/default/configmaps', { token })).status, 403);
  } finally {
    access.stop();
  }
});
