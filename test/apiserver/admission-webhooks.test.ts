// Dynamic admission against a real webhook server (HTTPS on loopback, its certificate signed by a
// CA the configurations carry as caBundle): MutatingWebhookConfiguration and
// ValidatingWebhookConfiguration are served kinds kubectl applies and lists, with kube's defaults
// and validation; a mutating webhook's JSONPatch changes the object before schema validation, a
// validating one's denial comes back as its status with kube's message, on create, update and
// delete; a webhook reached through a Service resolves to its endpoint; namespace and object
// selectors choose what is sent; failurePolicy Fail refuses with kube's 500 when the server is
// down or slower than timeoutSeconds, Ignore lets the write pass; dry runs say so and store nothing.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:https';
import type * as api from '../../src/api/index.js';
import { createCA, issueServingCert } from '../../src/common/pki.js';
import { rulesMatch } from '../../src/apiserver/admission/webhooks.js';
import { startTestApiServer, type TestApiServer } from '../helpers/apiserver.js';

let s: TestApiServer;
let hooks: Server;
let port: number;
let caBundle: string;
/** Every AdmissionReview request the webhook server received, with the path it came to. */
const received: Array<{ path: string; request: api.AdmissionRequest }> = [];

const allow = (uid: string, extra: Partial<api.AdmissionResponse> = {}): api.AdmissionReview => ({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response: { uid, allowed: true, ...extra } });

/** The webhook server: /mutate labels what it sees, /deny refuses data.forbidden and protected deletions, /slow answers after 3 s. */
function answer(path: string, request: api.AdmissionRequest): api.AdmissionReview | Promise<api.AdmissionReview> {
  const object = request.object as api.ConfigMap | null;
  switch (path) {
    case '/mutate': {
      const patch: Array<{ op: string; path: string; value: unknown }> = object?.metadata?.labels ? [{ op: 'add', path: '/metadata/labels/mutated', value: 'true' }] : [{ op: 'add', path: '/metadata/labels', value: { mutated: 'true' } }];
      // What a ConfigMap may not hold (data values are strings): the kind's validation, after the webhook, refuses it.
      if (object?.data?.['bad-patch']) patch.push({ op: 'add', path: '/data/number', value: 7 });
      return allow(request.uid, { patchType: 'JSONPatch', patch: Buffer.from(JSON.stringify(patch)).toString('base64'), warnings: ['mutated by the test webhook'] });
    }
    case '/deny': {
      const old = request.oldObject as api.ConfigMap | null;
      if (request.operation === 'DELETE' && old?.metadata.labels?.protected === 'true') {
        return { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response: { uid: request.uid, allowed: false, status: { code: 403, reason: 'Forbidden', message: 'this ConfigMap is protected' } } };
      }
      if (object?.data?.forbidden !== undefined) {
        return { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response: { uid: request.uid, allowed: false, status: { code: 422, message: 'data.forbidden: Forbidden: may not be set here' } } };
      }
      return allow(request.uid);
    }
    case '/scale-cap': {
      // A Scale: more than 3 replicas become 3.
      const scale = request.object as { spec?: { replicas?: number } } | null;
      if ((scale?.spec?.replicas ?? 0) <= 3) return allow(request.uid);
      return allow(request.uid, { patchType: 'JSONPatch', patch: Buffer.from(JSON.stringify([{ op: 'replace', path: '/spec/replicas', value: 3 }])).toString('base64') });
    }
    case '/slow':
      return new Promise((resolve) => setTimeout(() => resolve(allow(request.uid)), 3000));
    default:
      return allow(request.uid);
  }
}

const namespaceFor = (scenario: string) => ({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: `wh-${scenario}`, labels: { hooks: scenario } } });

function webhook(name: string, scenario: string, clientConfig: object, extra: object = {}) {
  return {
    name, clientConfig: { ...clientConfig, caBundle }, sideEffects: 'None', admissionReviewVersions: ['v1'],
    rules: [{ operations: ['CREATE', 'UPDATE', 'DELETE'], apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'] }],
    namespaceSelector: { matchLabels: { hooks: scenario } }, ...extra,
  };
}

before(async () => {
  s = await startTestApiServer();
  const ca = await createCA('webhook-ca');
  caBundle = Buffer.from(ca.certPem).toString('base64');
  const tls = await issueServingCert(ca, 'hooks', ['hooks.tools.svc', '127.0.0.1']);
  hooks = createServer({ cert: tls.certPem, key: tls.keyPem }, (req, res) => {
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', async () => {
      const url = new URL(req.url ?? '/', 'https://hooks');
      const review = JSON.parse(body) as api.AdmissionReview;
      received.push({ path: url.pathname, request: review.request! });
      const out = await answer(url.pathname, review.request!);
      if (res.destroyed) return;
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(out));
    });
  });
  await new Promise<void>((r) => hooks.listen(0, '127.0.0.1', () => r()));
  port = (hooks.address() as { port: number }).port;
  await s.kubectlOk(['apply', '-f', '-'], JSON.stringify({
    apiVersion: 'v1', kind: 'List', items: [
      { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'tools' } },
      { apiVersion: 'v1', kind: 'Service', metadata: { name: 'hooks', namespace: 'tools' }, spec: { ports: [{ name: 'https', port: 443, targetPort: 9443 }] } },
      { apiVersion: 'v1', kind: 'Endpoints', metadata: { name: 'hooks', namespace: 'tools' }, subsets: [{ addresses: [{ ip: '127.0.0.1' }], ports: [{ name: 'https', port }] }] },
      ...['mutate', 'deny', 'plain', 'down', 'ignored', 'slow', 'dry', 'scale'].map(namespaceFor),
      {
        apiVersion: 'admissionregistration.k8s.io/v1', kind: 'MutatingWebhookConfiguration', metadata: { name: 'test-mutating' },
        webhooks: [webhook('mutate.hooks.bosun.io', 'mutate', { service: { namespace: 'tools', name: 'hooks', path: '/mutate' } }),
          webhook('dry.hooks.bosun.io', 'dry', { service: { namespace: 'tools', name: 'hooks', path: '/mutate' } }, { sideEffects: 'NoneOnDryRun' }),
          webhook('scale.hooks.bosun.io', 'scale', { url: `https://127.0.0.1:${port}/scale-cap` }, { rules: [{ operations: ['UPDATE'], apiGroups: ['apps'], apiVersions: ['v1'], resources: ['deployments/scale'] }] })],
      },
      {
        apiVersion: 'admissionregistration.k8s.io/v1', kind: 'ValidatingWebhookConfiguration', metadata: { name: 'test-validating' },
        webhooks: [webhook('deny.hooks.bosun.io', 'deny', { url: `https://127.0.0.1:${port}/deny` }, { objectSelector: { matchExpressions: [{ key: 'skip-checks', operator: 'DoesNotExist' }] } })],
      },
    ],
  }));
});

after(async () => {
  await s?.stop();
  hooks?.closeAllConnections();
  hooks?.close();
});

const configMap = (namespace: string, name: string, data: Record<string, string> = {}, labels?: Record<string, string>) =>
  ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace, ...(labels ? { labels } : {}) }, data });

test('kubectl lists the webhook configurations with their count; kube\'s defaults are filled in', async () => {
  const shown = await s.kubectlOk(['get', 'mutatingwebhookconfigurations,validatingwebhookconfigurations']);
  assert.match(shown, /^mutatingwebhookconfiguration\.admissionregistration\.k8s\.io\/test-mutating\s+3\s+/m);
  assert.match(shown, /^validatingwebhookconfiguration\.admissionregistration\.k8s\.io\/test-validating\s+1\s+/m);
  const stored = (await s.request('GET', '/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations/test-mutating')).json;
  const w = stored.webhooks[0];
  assert.deepEqual([w.failurePolicy, w.matchPolicy, w.timeoutSeconds, w.reinvocationPolicy, w.objectSelector, w.rules[0].scope, w.clientConfig.service.port], ['Fail', 'Equivalent', 10, 'Never', {}, '*', 443]);
});

test('a configuration kube would refuse is refused, every problem named', async () => {
  const bad = await s.kubectl(['apply', '-f', '-'], { input: JSON.stringify({
    apiVersion: 'admissionregistration.k8s.io/v1', kind: 'MutatingWebhookConfiguration', metadata: { name: 'bad' },
    webhooks: [{ name: 'short.io', clientConfig: { url: 'http://127.0.0.1/x', service: { namespace: 'a', name: 'b' } }, sideEffects: 'Some', admissionReviewVersions: ['v2'], timeoutSeconds: 60, reinvocationPolicy: 'IfNeeded', rules: [{ operations: ['PATCH'], apiGroups: [''], apiVersions: ['v1'], resources: ['a/b/c'] }] }],
  }) });
  assert.notEqual(bad.code, 0);
  for (const expected of [
    /webhooks\[0\]\.name: Invalid value: "short\.io": should be a domain with at least three segments/,
    /webhooks\[0\]\.sideEffects: Unsupported value: "Some": supported values: "None", "NoneOnDryRun"/,
    /webhooks\[0\]\.admissionReviewVersions: Invalid value/,
    /webhooks\[0\]\.timeoutSeconds: Invalid value: 60: the timeout value must be between 1 and 30 seconds/,
    /webhooks\[0\]\.reinvocationPolicy: Unsupported value: "IfNeeded"/,
    /webhooks\[0\]\.clientConfig: Required value: exactly one of url or service is required/,
    /webhooks\[0\]\.clientConfig\.url: Invalid value: "http:\/\/127\.0\.0\.1\/x": 'https' is the only allowed URL scheme/,
    /webhooks\[0\]\.rules\[0\]\.operations: Unsupported value: "PATCH"/,
    /webhooks\[0\]\.rules\[0\]\.resources: Invalid value: "a\/b\/c"/,
  ]) assert.match(bad.stderr, expected);
});

test('a mutating webhook reached through its Service patches the object; the namespace selector chooses where', async () => {
  const before = received.length;
  const created = await s.request('POST', '/api/v1/namespaces/wh-mutate/configmaps', { body: configMap('wh-mutate', 'one', { a: 'b' }, { app: 'x' }) });
  assert.equal(created.status, 201, created.text);
  assert.deepEqual(created.json.metadata.labels, { app: 'x', mutated: 'true' });
  assert.match(String(created.headers.warning), /mutated by the test webhook/);
  const call = received.slice(before).find((r) => r.path === '/mutate')!;
  assert.equal(call.request.operation, 'CREATE');
  assert.deepEqual(call.request.kind, { group: '', version: 'v1', kind: 'ConfigMap' });
  assert.deepEqual(call.request.resource, { group: '', version: 'v1', resource: 'configmaps' });
  assert.equal(call.request.namespace, 'wh-mutate');
  assert.equal(call.request.userInfo.username, 'system:admin');
  assert.equal(call.request.dryRun, false);
  // kubectl apply (a patch, then an update through the same chain) keeps the label coming back.
  await s.kubectlOk(['apply', '-f', '-'], JSON.stringify(configMap('wh-mutate', 'two', { c: 'd' })));
  assert.equal(JSON.parse(await s.kubectlOk(['-n', 'wh-mutate', 'get', 'configmap', 'two', '-o', 'json'])).metadata.labels.mutated, 'true');
  const update = received.filter((r) => r.path === '/mutate' && r.request.operation === 'UPDATE').length;
  await s.kubectlOk(['-n', 'wh-mutate', 'label', 'configmap', 'two', 'more=yes']);
  const updates = received.filter((r) => r.path === '/mutate' && r.request.operation === 'UPDATE');
  assert.equal(updates.length, update + 1);
  assert.equal((updates.at(-1)!.request.oldObject as api.ConfigMap).metadata.labels?.more, undefined, 'the old object is the stored one');
  // Another namespace: not sent.
  const plain = await s.request('POST', '/api/v1/namespaces/wh-plain/configmaps', { body: configMap('wh-plain', 'one') });
  assert.equal(plain.status, 201);
  assert.equal(plain.json.metadata.labels, undefined);
});

test('a webhook on a scale subresource is sent the autoscaling/v1 Scale, and the replicas it patches are stored', async () => {
  await s.kubectlOk(['-n', 'wh-scale', 'create', 'deployment', 'web', '--image=registry.local/web:1', '--replicas=1']);
  const before = received.length;
  await s.kubectlOk(['-n', 'wh-scale', 'scale', 'deployment', 'web', '--replicas=10']);
  const call = received.slice(before).find((r) => r.path === '/scale-cap')!;
  assert.ok(call, 'the scale webhook was called');
  assert.deepEqual(call.request.kind, { group: 'autoscaling', version: 'v1', kind: 'Scale' });
  assert.deepEqual(call.request.resource, { group: 'apps', version: 'v1', resource: 'deployments' });
  assert.equal(call.request.subResource, 'scale');
  assert.equal((call.request.object as { spec: { replicas: number } }).spec.replicas, 10);
  assert.equal((call.request.oldObject as { kind: string; spec: { replicas: number } }).kind, 'Scale');
  assert.equal((call.request.oldObject as { spec: { replicas: number } }).spec.replicas, 1);
  assert.equal(JSON.parse(await s.kubectlOk(['-n', 'wh-scale', 'get', 'deployment', 'web', '-o', 'json'])).spec.replicas, 3, 'the webhook capped it');
  // A write of the Deployment itself does not match a rule for deployments/scale.
  const beforeEdit = received.length;
  await s.kubectlOk(['-n', 'wh-scale', 'label', 'deployment', 'web', 'tier=front']);
  assert.equal(received.slice(beforeEdit).filter((r) => r.path === '/scale-cap').length, 0);
});

test('what a mutating webhook adds is validated after it, as kube orders it', async () => {
  const r = await s.request('POST', '/api/v1/namespaces/wh-mutate/configmaps', { body: configMap('wh-mutate', 'bad-patch', { 'bad-patch': 'yes' }) });
  assert.equal(r.status, 422, r.text);
  assert.match(r.json.message, /data\[number\]: must be a string/);
  assert.equal(await s.request('GET', '/api/v1/namespaces/wh-mutate/configmaps/bad-patch').then((x) => x.status), 404);
});

test('a validating webhook\'s denial is its status with kube\'s message, on create, update and delete; the object selector exempts', async () => {
  const denied = await s.request('POST', '/api/v1/namespaces/wh-deny/configmaps', { body: configMap('wh-deny', 'no', { forbidden: 'x' }) });
  assert.equal(denied.status, 422);
  assert.equal(denied.json.kind, 'Status');
  assert.equal(denied.json.message, 'admission webhook "deny.hooks.bosun.io" denied the request: data.forbidden: Forbidden: may not be set here');
  const viaKubectl = await s.kubectl(['-n', 'wh-deny', 'create', 'configmap', 'no', '--from-literal=forbidden=x']);
  assert.notEqual(viaKubectl.code, 0);
  assert.match(viaKubectl.stderr, /admission webhook "deny\.hooks\.bosun\.io" denied the request: data\.forbidden: Forbidden: may not be set here/);
  // Exempt by label: the object selector does not match.
  assert.equal((await s.request('POST', '/api/v1/namespaces/wh-deny/configmaps', { body: configMap('wh-deny', 'exempt', { forbidden: 'x' }, { 'skip-checks': 'yes' }) })).status, 201);
  // An update that adds the field is refused too.
  await s.kubectlOk(['-n', 'wh-deny', 'create', 'configmap', 'ok', '--from-literal=a=b']);
  const patched = await s.kubectl(['-n', 'wh-deny', 'patch', 'configmap', 'ok', '--type=merge', '-p', '{"data":{"forbidden":"y"}}']);
  assert.notEqual(patched.code, 0);
  assert.match(patched.stderr, /denied the request: data\.forbidden/);
  // Delete: a protected one stays.
  await s.kubectlOk(['-n', 'wh-deny', 'create', 'configmap', 'keep', '--from-literal=a=b']);
  await s.kubectlOk(['-n', 'wh-deny', 'label', 'configmap', 'keep', 'protected=true']);
  const deleted = await s.request('DELETE', '/api/v1/namespaces/wh-deny/configmaps/keep');
  assert.equal(deleted.status, 403);
  assert.equal(deleted.json.reason, 'Forbidden');
  assert.equal(deleted.json.message, 'admission webhook "deny.hooks.bosun.io" denied the request: this ConfigMap is protected');
  assert.equal((await s.request('GET', '/api/v1/namespaces/wh-deny/configmaps/keep')).status, 200);
  assert.equal((await s.request('DELETE', '/api/v1/namespaces/wh-deny/configmaps/ok')).status, 200);
});

test('a dry run is sent with dryRun and stores nothing', async () => {
  const before = received.length;
  const r = await s.request('POST', '/api/v1/namespaces/wh-dry/configmaps?dryRun=All', { body: configMap('wh-dry', 'dry') });
  assert.equal(r.status, 201, r.text);
  assert.equal(r.json.metadata.labels.mutated, 'true');
  const call = received.slice(before).find((x) => x.request.namespace === 'wh-dry')!;
  assert.equal(call.request.dryRun, true);
  assert.deepEqual(call.request.options, { kind: 'CreateOptions', apiVersion: 'meta.k8s.io/v1', dryRun: ['All'] });
  assert.equal((await s.request('GET', '/api/v1/namespaces/wh-dry/configmaps/dry')).status, 404);
});

test('a webhook that cannot be called: Fail refuses with kube\'s 500, Ignore lets the write pass; a slow one times out', async () => {
  // A port nothing listens on: a server started and stopped.
  const gone = createServer();
  await new Promise<void>((r) => gone.listen(0, '127.0.0.1', () => r()));
  const downPort = (gone.address() as { port: number }).port;
  await new Promise<void>((r) => gone.close(() => r()));
  await s.kubectlOk(['apply', '-f', '-'], JSON.stringify({
    apiVersion: 'admissionregistration.k8s.io/v1', kind: 'ValidatingWebhookConfiguration', metadata: { name: 'test-unreachable' },
    webhooks: [
      webhook('down.hooks.bosun.io', 'down', { url: `https://127.0.0.1:${downPort}/deny` }),
      webhook('ignored.hooks.bosun.io', 'ignored', { url: `https://127.0.0.1:${downPort}/deny` }, { failurePolicy: 'Ignore' }),
      webhook('slow.hooks.bosun.io', 'slow', { service: { namespace: 'tools', name: 'hooks', path: '/slow' } }, { timeoutSeconds: 1 }),
    ],
  }));
  const down = await s.request('POST', '/api/v1/namespaces/wh-down/configmaps', { body: configMap('wh-down', 'x') });
  assert.equal(down.status, 500);
  assert.equal(down.json.reason, 'InternalError');
  assert.match(down.json.message, new RegExp(`^Internal error occurred: failed calling webhook "down\\.hooks\\.bosun\\.io": failed to call webhook: Post "https://127\\.0\\.0\\.1:${downPort}/deny\\?timeout=10s": .*ECONNREFUSED`));
  const ignored = await s.request('POST', '/api/v1/namespaces/wh-ignored/configmaps', { body: configMap('wh-ignored', 'x') });
  assert.equal(ignored.status, 201, ignored.text);
  const slow = await s.request('POST', '/api/v1/namespaces/wh-slow/configmaps', { body: configMap('wh-slow', 'x') });
  assert.equal(slow.status, 500);
  assert.match(slow.json.message, /failed calling webhook "slow\.hooks\.bosun\.io": failed to call webhook: Post "https:\/\/hooks\.tools\.svc:443\/slow\?timeout=1s": context deadline exceeded/);
  // The configurations themselves never go to a webhook: the broken one can be removed.
  await s.kubectlOk(['delete', 'validatingwebhookconfiguration', 'test-unreachable']);
  assert.equal((await s.request('POST', '/api/v1/namespaces/wh-down/configmaps', { body: configMap('wh-down', 'x') })).status, 201);
});

test('rules match operations, groups, versions, resources with "*" and subresources, and scope', () => {
  const type = { group: 'apps', version: 'v1', resource: 'deployments', kind: 'Deployment', namespaced: true } as Parameters<typeof rulesMatch>[1]['type'];
  const rule = (resources: string[], extra: Partial<api.WebhookRule> = {}): api.WebhookRule[] => [{ operations: ['CREATE'], apiGroups: ['apps'], apiVersions: ['*'], resources, ...extra }];
  const create = { operation: 'CREATE' as const, type };
  assert.equal(rulesMatch(rule(['deployments']), create), true);
  assert.equal(rulesMatch(rule(['*']), create), true);
  assert.equal(rulesMatch(rule(['deployments']), { ...create, subresource: 'scale' }), false);
  assert.equal(rulesMatch(rule(['deployments/*']), { ...create, subresource: 'scale' }), true);
  assert.equal(rulesMatch(rule(['*/status']), { ...create, subresource: 'status' }), true);
  assert.equal(rulesMatch(rule(['*/status']), create), false);
  assert.equal(rulesMatch(rule(['*/*']), { ...create, subresource: 'status' }), true);
  assert.equal(rulesMatch(rule(['deployments']), { ...create, operation: 'DELETE' }), false);
  assert.equal(rulesMatch(rule(['deployments'], { operations: ['*'] }), { ...create, operation: 'DELETE' }), true);
  assert.equal(rulesMatch(rule(['deployments'], { apiGroups: [''] }), create), false);
  assert.equal(rulesMatch(rule(['deployments'], { scope: 'Cluster' }), create), false);
  assert.equal(rulesMatch(rule(['deployments'], { scope: 'Namespaced' }), create), true);
});
