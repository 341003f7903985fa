// Server-side apply through the real kubectl (`kubectl apply --server-side`) and raw requests:
// idempotent re-apply, conflicts between field managers and forcing, removal of dropped fields,
// a custom resource with a keyed list, the status subresource, dry runs, and the managedFields
// that ordinary writes record.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import YAML from 'yaml';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startTestApiServer, type TestApiServer } from '../helpers/apiserver.js';
import { enableAudit, type AuditLog } from '../../src/apiserver/filters/audit-log.js';

let api: TestApiServer;
let audit: AuditLog;
before(async () => {
  api = await startTestApiServer();
  audit = enableAudit(api.server, api.dataDir);
});
after(async () => {
  await api.stop();
});

const ok = (args: string[], input?: string): Promise<string> => api.kubectlOk(args, input);

async function getJson(args: string[]): Promise<any> {
  return JSON.parse(await ok(['get', ...args, '-o', 'json', '--show-managed-fields']));
}

const deployment = (options: { replicas?: number; image?: string; tier?: boolean } = {}) => `
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  labels: {app: web${options.tier === false ? '' : ', tier: front'}}
spec:
${options.replicas === undefined ? '' : `  replicas: ${options.replicas}\n`}  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - name: app
        image: ${options.image ?? 'nginx:1'}
`;

const managers = (object: any): Record<string, any> =>
  Object.fromEntries((object.metadata.managedFields ?? []).map((e: any) => [`${e.manager}/${e.operation}${e.subresource ? `/${e.subresource}` : ''}`, e.fieldsV1]));

test('apply --server-side creates, and applying again changes nothing', async () => {
  assert.match(await ok(['apply', '--server-side', '-f', '-'], deployment({ replicas: 2 })), /deployment.apps\/web serverside-applied/);
  const first = await getJson(['deployment', 'web']);
  assert.equal(first.spec.replicas, 2);
  assert.deepEqual(Object.keys(managers(first)), ['kubectl/Apply']);
  assert.deepEqual(managers(first)['kubectl/Apply']['f:spec']['f:template']['f:spec']['f:containers'], { 'k:{"name":"app"}': { '.': {}, 'f:image': {}, 'f:name': {} } });

  await ok(['apply', '--server-side', '-f', '-'], deployment({ replicas: 2 }));
  const second = await getJson(['deployment', 'web']);
  assert.equal(second.metadata.resourceVersion, first.metadata.resourceVersion);
  assert.deepEqual(second.metadata.managedFields, first.metadata.managedFields);

  // managedFields are what kubectl shows with --show-managed-fields (and hides without it).
  const shown = YAML.parse(await ok(['get', 'deployment', 'web', '-o', 'yaml', '--show-managed-fields']));
  assert.equal(shown.metadata.managedFields[0].manager, 'kubectl');
  assert.equal(shown.metadata.managedFields[0].operation, 'Apply');
  assert.equal(YAML.parse(await ok(['get', 'deployment', 'web', '-o', 'yaml'])).metadata.managedFields, undefined);
});

test('a second manager changing an owned field gets 409 unless it forces, and then owns the field', async () => {
  const refused = await api.kubectl(['apply', '--server-side', '--field-manager=other', '-f', '-'], { input: deployment({ replicas: 5 }) });
  assert.equal(refused.code, 1);
  assert.match(refused.stderr, /Apply failed with 1 conflict: conflict with "kubectl": \.spec\.replicas/);
  assert.equal((await getJson(['deployment', 'web'])).spec.replicas, 2);

  // The same as a raw request: a Conflict Status with one FieldManagerConflict cause.
  const raw = await api.request('PATCH', '/apis/apps/v1/namespaces/default/deployments/web?fieldManager=other', {
    body: 'apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec: {replicas: 5}\n', contentType: 'application/apply-patch+yaml',
  });
  assert.equal(raw.status, 409);
  assert.equal(raw.json.reason, 'Conflict');
  assert.equal(raw.json.message, 'Apply failed with 1 conflict: conflict with "kubectl": .spec.replicas');
  assert.deepEqual(raw.json.details.causes, [{ reason: 'FieldManagerConflict', message: 'conflict with "kubectl"', field: '.spec.replicas' }]);

  await ok(['apply', '--server-side', '--field-manager=other', '--force-conflicts', '-f', '-'], deployment({ replicas: 5 }));
  const forced = await getJson(['deployment', 'web']);
  assert.equal(forced.spec.replicas, 5);
  const owners = managers(forced);
  assert.ok(owners['other/Apply']['f:spec']['f:replicas']);
  assert.equal(owners['kubectl/Apply']['f:spec']['f:replicas'], undefined);
  // Fields both apply with the same value are shared.
  assert.ok(owners['kubectl/Apply']['f:spec']['f:selector'] && owners['other/Apply']['f:spec']['f:selector']);

  // kubectl now conflicts the other way round.
  const back = await api.kubectl(['apply', '--server-side', '-f', '-'], { input: deployment({ replicas: 2 }) });
  assert.match(back.stderr, /conflict with "other": \.spec\.replicas/);
});

test('a field dropped from the applied manifest is removed; one another manager shares stays', async () => {
  // "other" stops applying; kubectl applies without the tier label and without replicas.
  await ok(['apply', '--server-side', '--field-manager=other', '-f', '-'], 'apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\n');
  await ok(['apply', '--server-side', '-f', '-'], deployment({ tier: false }));
  const d = await getJson(['deployment', 'web']);
  assert.deepEqual(d.metadata.labels, { app: 'web' });
  assert.equal(d.spec.replicas, 1, 'replicas went back to its default once nobody applies it');
  assert.equal(managers(d)['other/Apply'], undefined);

  // A label both managers apply survives when one of them drops it.
  await ok(['apply', '--server-side', '-f', '-'], deployment({ tier: true }));
  await ok(['apply', '--server-side', '--field-manager=other', '-f', '-'], 'apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, labels: {tier: front}}\n');
  await ok(['apply', '--server-side', '-f', '-'], deployment({ tier: false }));
  assert.deepEqual((await getJson(['deployment', 'web'])).metadata.labels, { app: 'web', tier: 'front' });
});

test('ordinary writes record Update managers; an applier conflicts with them', async () => {
  await ok(['create', 'configmap', 'settings', '--from-literal=a=1']);
  await ok(['label', 'configmap', 'settings', 'team=blue']);
  const cm = await getJson(['configmap', 'settings']);
  const owners = managers(cm);
  assert.deepEqual(owners['kubectl-create/Update'], { 'f:data': { 'f:a': {} } });
  assert.deepEqual(owners['kubectl-label/Update'], { 'f:metadata': { 'f:labels': { 'f:team': {} } } });
  const entry = cm.metadata.managedFields.find((e: any) => e.manager === 'kubectl-create');
  assert.equal(entry.apiVersion, 'v1');
  assert.equal(entry.fieldsType, 'FieldsV1');
  assert.match(entry.time, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);

  const refused = await api.kubectl(['apply', '--server-side', '-f', '-'], { input: 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\ndata: {a: "2"}\n' });
  assert.match(refused.stderr, /Apply failed with 1 conflict: conflict with "kubectl-create" using v1: \.data\.a/);
  // Applying the value it already has makes kubectl a co-owner, without a conflict.
  await ok(['apply', '--server-side', '-f', '-'], 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\ndata: {a: "1"}\n');
  assert.deepEqual(managers(await getJson(['configmap', 'settings']))['kubectl/Apply'], { 'f:data': { 'f:a': {} } });

  // Without fieldManager, a raw write is recorded under the user agent's program name.
  const put = await api.request('PATCH', '/api/v1/namespaces/default/configmaps/settings', { body: { data: { b: '2' } }, contentType: 'application/merge-patch+json' });
  assert.equal(put.status, 200);
  assert.deepEqual(managers(put.json)['unknown/Update'], { 'f:data': { 'f:b': {} } });
});

test('scaling through /scale takes ownership of replicas, recorded with subresource "scale"', async () => {
  await ok(['apply', '--server-side', '-f', '-'], deployment({ replicas: 2 }).replace('name: web', 'name: scaled'));
  await ok(['scale', 'deployment', 'scaled', '--replicas=3']);
  const d = await getJson(['deployment', 'scaled']);
  const scaler = d.metadata.managedFields.find((e: any) => e.subresource === 'scale');
  assert.deepEqual({ operation: scaler.operation, fields: scaler.fieldsV1 }, { operation: 'Update', fields: { 'f:spec': { 'f:replicas': {} } } });
  const refused = await api.kubectl(['apply', '--server-side', '-f', '-'], { input: deployment({ replicas: 2 }).replace('name: web', 'name: scaled') });
  assert.match(refused.stderr, /conflict with "kubectl" with subresource "scale" using apps\/v1: \.spec\.replicas/);
});

test('apply needs a fieldManager; force only goes with apply; dry runs persist nothing', async () => {
  const path = '/api/v1/namespaces/default/configmaps/dry';
  const body = 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: dry}\ndata: {k: v}\n';
  const missing = await api.request('PATCH', path, { body, contentType: 'application/apply-patch+yaml' });
  assert.equal(missing.status, 422);
  assert.equal(missing.json.message, 'PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required for apply patch');
  const forced = await api.request('PATCH', `${path}?force=true`, { body: { data: { k: 'v' } }, contentType: 'application/merge-patch+json' });
  assert.equal(forced.status, 422);
  assert.match(forced.json.message, /force: Forbidden: may not be specified for non-apply patch/);

  const dry = await api.request('PATCH', `${path}?fieldManager=m&dryRun=All`, { body, contentType: 'application/apply-patch+yaml' });
  assert.equal(dry.status, 201);
  assert.equal(dry.json.metadata.managedFields[0].manager, 'm');
  assert.equal((await api.request('GET', path)).status, 404);
  const created = await api.request('PATCH', `${path}?fieldManager=m`, { body, contentType: 'application/apply-patch+yaml' });
  assert.equal(created.status, 201);
  const again = await api.request('PATCH', `${path}?fieldManager=m`, { body, contentType: 'application/apply-patch+yaml' });
  assert.equal(again.status, 200);
  assert.equal(again.json.metadata.resourceVersion, created.json.metadata.resourceVersion);
});

const CRD = `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: gadgets.ssa.example.com}
spec:
  group: ssa.example.com
  scope: Namespaced
  names: {plural: gadgets, singular: gadget, kind: Gadget}
  versions:
  - name: v1
    served: true
    storage: true
    subresources: {status: {}}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              size: {type: integer}
              tags: {type: array, items: {type: string}}
              parts:
                type: array
                x-kubernetes-list-type: map
                x-kubernetes-list-map-keys: [name]
                items:
                  type: object
                  required: [name]
                  properties:
                    name: {type: string}
                    count: {type: integer}
          status:
            type: object
            properties:
              ready: {type: boolean}
`;

const gadget = (spec: string) => `apiVersion: ssa.example.com/v1\nkind: Gadget\nmetadata: {name: g}\nspec: ${spec}\n`;

test('custom resources: list-map keys from the CRD schema, conflicts, and the status subresource', async () => {
  await ok(['apply', '--server-side', '-f', '-'], CRD);
  await ok(['wait', '--for', 'condition=established', 'crd/gadgets.ssa.example.com']);
  await ok(['apply', '--server-side', '-f', '-'], gadget('{size: 1, tags: [a], parts: [{name: wheel, count: 4}]}'));
  const rv = (await getJson(['gadget', 'g'])).metadata.resourceVersion;
  await ok(['apply', '--server-side', '-f', '-'], gadget('{size: 1, tags: [a], parts: [{name: wheel, count: 4}]}'));
  assert.equal((await getJson(['gadget', 'g'])).metadata.resourceVersion, rv);

  // Another manager adds its own item to the keyed list; the atomic list conflicts.
  await ok(['apply', '--server-side', '--field-manager=other', '-f', '-'], gadget('{parts: [{name: seat, count: 1}]}'));
  assert.deepEqual((await getJson(['gadget', 'g'])).spec.parts, [{ name: 'wheel', count: 4 }, { name: 'seat', count: 1 }]);
  const refused = await api.kubectl(['apply', '--server-side', '--field-manager=other', '-f', '-'], { input: gadget('{tags: [b], parts: [{name: seat, count: 1}]}') });
  assert.match(refused.stderr, /conflict with "kubectl": \.spec\.tags/);

  // kubectl drops its item: only the other manager's remains.
  await ok(['apply', '--server-side', '-f', '-'], gadget('{size: 1, tags: [a]}'));
  assert.deepEqual((await getJson(['gadget', 'g'])).spec.parts, [{ name: 'seat', count: 1 }]);

  // Apply to /status changes only the status, recorded with subresource "status".
  const status = await api.request('PATCH', '/apis/ssa.example.com/v1/namespaces/default/gadgets/g/status?fieldManager=gadget-controller', {
    body: 'apiVersion: ssa.example.com/v1\nkind: Gadget\nmetadata: {name: g}\nspec: {size: 99}\nstatus: {ready: true}\n', contentType: 'application/apply-patch+yaml',
  });
  assert.equal(status.status, 200, status.text);
  assert.deepEqual(status.json.status, { ready: true });
  assert.equal(status.json.spec.size, 1);
  assert.deepEqual(managers(status.json)['gadget-controller/Apply/status'], { 'f:status': { 'f:ready': {} } });
  // The main resource's appliers keep their fields, and applying there leaves the status alone.
  await ok(['apply', '--server-side', '-f', '-'], gadget('{size: 2, tags: [a]}'));
  const g = await getJson(['gadget', 'g']);
  assert.deepEqual(g.status, { ready: true });
  assert.ok(managers(g)['gadget-controller/Apply/status']);
  const missing = await api.request('PATCH', '/apis/ssa.example.com/v1/namespaces/default/gadgets/none/status?fieldManager=m', {
    body: 'apiVersion: ssa.example.com/v1\nkind: Gadget\nmetadata: {name: none}\nstatus: {ready: true}\n', contentType: 'application/apply-patch+yaml',
  });
  assert.equal(missing.status, 404);
});

test('the audit trail names the user of every change made by these applies', async () => {
  await audit.close();
  const events = readFileSync(join(api.dataDir, 'audit.log'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
  const applies = events.filter((e) => e.verb === 'patch' && e.resource === 'deployments.apps');
  assert.ok(applies.length > 0, 'the applies were audited');
  for (const e of events) assert.ok(typeof e.user === 'string' && e.user.length > 0, `an audit line without a user: ${JSON.stringify(e)}`);
  assert.ok(applies.every((e) => e.user === 'system:admin'), 'the admin kubeconfig applied them');
});
