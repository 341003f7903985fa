// Server-side apply: fieldsV1 encoding, idempotent re-apply, conflicts with another manager and
// forcing, removal of fields a manager stops applying, shared ownership, custom-resource list
// types, and Update-operation bookkeeping.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  crdListTypes, decodeFieldSet, encodeFieldSet, fieldSetOf, managerFromUserAgent, recordUpdate, serverSideApply,
  type ManagedFieldsEntry,
} from '../../src/apiserver/apply/server-side-apply.js';

const now = new Date('2026-01-01T00:00:00Z');

function deployment(replicas: number | undefined, image: string, labels: Record<string, string> = { app: 'web' }) {
  const spec: Record<string, unknown> = {
    selector: { matchLabels: { app: 'web' } },
    template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'web', image, args: ['a', 'b'] }] } },
  };
  if (replicas !== undefined) spec.replicas = replicas;
  return { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web', namespace: 'default', labels }, spec };
}

function ok(r: ReturnType<typeof serverSideApply>) {
  if (!r.ok) throw new Error(r.status.message as string);
  return r;
}

test('field sets encode to fieldsV1 as Kubernetes writes them, and back', () => {
  const fields = encodeFieldSet(fieldSetOf(deployment(3, 'nginx:1')));
  assert.deepEqual(fields, {
    'f:metadata': { 'f:labels': { 'f:app': {} } },
    'f:spec': {
      'f:replicas': {},
      'f:selector': { 'f:matchLabels': { 'f:app': {} } },
      'f:template': {
        'f:metadata': { 'f:labels': { 'f:app': {} } },
        'f:spec': { 'f:containers': { 'k:{"name":"web"}': { '.': {}, 'f:args': {}, 'f:image': {}, 'f:name': {} } } },
      },
    },
  });
  assert.deepEqual(encodeFieldSet(decodeFieldSet(fields)), fields);
  const withSet = fieldSetOf({ metadata: { finalizers: ['a/b'] }, spec: { ports: [{ port: 80, protocol: 'TCP', targetPort: 8080 }] } });
  assert.deepEqual(encodeFieldSet(withSet), {
    'f:metadata': { 'f:finalizers': { 'v:"a/b"': {} } },
    'f:spec': { 'f:ports': { 'k:{"port":80,"protocol":"TCP"}': { '.': {}, 'f:port': {}, 'f:protocol': {}, 'f:targetPort': {} } } },
  });
});

test('applying creates, re-applying is idempotent', () => {
  const first = ok(serverSideApply(undefined, deployment(3, 'nginx:1'), { manager: 'kubectl', now }));
  assert.equal((first.object.spec as { replicas: number }).replicas, 3);
  assert.equal(first.managedFields.length, 1);
  assert.equal(first.managedFields[0].operation, 'Apply');
  const second = ok(serverSideApply(first.object, deployment(3, 'nginx:1'), { manager: 'kubectl', now }));
  assert.deepEqual(second.object, first.object);
});

test('a field dropped from the applied manifest is removed, unless another manager owns it', () => {
  const first = ok(serverSideApply(undefined, deployment(3, 'nginx:1', { app: 'web', tier: 'front' }), { manager: 'kubectl', now }));
  const dropped = ok(serverSideApply(first.object, deployment(undefined, 'nginx:1'), { manager: 'kubectl', now }));
  assert.equal((dropped.object.spec as Record<string, unknown>).replicas, undefined);
  assert.deepEqual((dropped.object.metadata as { labels: unknown }).labels, { app: 'web' });

  // Another manager applied the same replicas value: shared, so it stays when kubectl drops it.
  const shared = ok(serverSideApply(first.object, { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web' }, spec: { replicas: 3 } }, { manager: 'hpa', now }));
  const kept = ok(serverSideApply(shared.object, deployment(undefined, 'nginx:1'), { manager: 'kubectl', now }));
  assert.equal((kept.object.spec as { replicas: number }).replicas, 3);
  assert.deepEqual(kept.managedFields.map((m) => m.manager).sort(), ['hpa', 'kubectl']);
});

test('two managers conflict on a differing value unless forced; forcing takes ownership', () => {
  const first = ok(serverSideApply(undefined, deployment(3, 'nginx:1'), { manager: 'kubectl', now }));
  const other = { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web' }, spec: { replicas: 5, template: { spec: { containers: [{ name: 'web', image: 'nginx:2' }] } } } };
  const refused = serverSideApply(first.object, other, { manager: 'ops', now });
  assert.equal(refused.ok, false);
  if (!refused.ok) {
    assert.deepEqual(refused.conflicts.map((c) => c.field), ['.spec.replicas', '.spec.template.spec.containers[name="web"].image']);
    assert.equal(refused.status.code, 409);
    assert.equal(refused.status.reason, 'Conflict');
    assert.equal(refused.status.message, 'Apply failed with 2 conflicts: conflicts with "kubectl":\n- .spec.replicas\n- .spec.template.spec.containers[name="web"].image');
    assert.deepEqual((refused.status.details as { causes: unknown[] }).causes[0], { reason: 'FieldManagerConflict', message: 'conflict with "kubectl"', field: '.spec.replicas' });
  }
  const forced = ok(serverSideApply(first.object, other, { manager: 'ops', force: true, now }));
  assert.equal((forced.object.spec as { replicas: number }).replicas, 5);
  const kubectlFields = decodeFieldSet(forced.managedFields.find((m) => m.manager === 'kubectl')!.fieldsV1);
  assert.equal(kubectlFields.has(JSON.stringify(['f:spec', 'f:replicas'])), false);
  // kubectl re-applying its manifest now conflicts the other way.
  const back = serverSideApply(forced.object, deployment(3, 'nginx:1'), { manager: 'kubectl', now });
  assert.ok(!back.ok && back.conflicts.every((c) => c.manager === '"ops"'));
});

test('an Update manager conflicts with an applier, printed with its API version', () => {
  const created = deployment(1, 'nginx:1');
  const managedFields = recordUpdate(undefined, created, { manager: 'kubectl-client-side-apply', apiVersion: 'apps/v1', now });
  assert.equal(managedFields[0].operation, 'Update');
  const live = { ...created, metadata: { ...created.metadata, managedFields } };
  const r = serverSideApply(live, { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web' }, spec: { replicas: 2 } }, { manager: 'kubectl', now });
  assert.ok(!r.ok);
  if (!r.ok) assert.equal(r.status.message, 'Apply failed with 1 conflict: conflict with "kubectl-client-side-apply" using apps/v1: .spec.replicas');
});

test('Update bookkeeping moves changed fields to the writer and forgets removed ones', () => {
  const a = ok(serverSideApply(undefined, deployment(3, 'nginx:1'), { manager: 'kubectl', now }));
  const scaled = structuredClone(a.object) as ReturnType<typeof deployment>;
  scaled.spec.replicas = 4;
  delete (scaled.metadata as { labels?: unknown }).labels;
  const mf: ManagedFieldsEntry[] = recordUpdate(a.object, scaled, { manager: 'kube-controller-manager', apiVersion: 'apps/v1', now });
  const kcm = decodeFieldSet(mf.find((m) => m.manager === 'kube-controller-manager')!.fieldsV1);
  const kubectl = decodeFieldSet(mf.find((m) => m.manager === 'kubectl')!.fieldsV1);
  assert.deepEqual([...kcm], [JSON.stringify(['f:spec', 'f:replicas'])]);
  assert.equal(kubectl.has(JSON.stringify(['f:spec', 'f:replicas'])), false);
  assert.equal(kubectl.has(JSON.stringify(['f:metadata', 'f:labels', 'f:app'])), false);
  assert.equal(managerFromUserAgent('kubectl/v1.32.0 (linux/amd64) kubernetes/abc'), 'kubectl');
  assert.equal(managerFromUserAgent(undefined), 'unknown');
});

test('custom resources: list-map-keys from the schema, other lists atomic', () => {
  const schema = { type: 'object', properties: { spec: { type: 'object', properties: {
    items: { type: 'array', 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['id'], items: { type: 'object' } },
    tags: { type: 'array', items: { type: 'string' } },
  } } } };
  const listTypes = crdListTypes(schema);
  const cr = (items: unknown[], tags: string[]) => ({ apiVersion: 'x.io/v1', kind: 'Thing', metadata: { name: 't' }, spec: { items, tags } });
  const a = ok(serverSideApply(undefined, cr([{ id: 1, v: 'a' }], ['x', 'y']), { manager: 'm1', listTypes, now }));
  const b = ok(serverSideApply(a.object, { apiVersion: 'x.io/v1', kind: 'Thing', metadata: { name: 't' }, spec: { items: [{ id: 2, v: 'b' }] } }, { manager: 'm2', listTypes, now }));
  assert.deepEqual((b.object.spec as { items: unknown }).items, [{ id: 1, v: 'a' }, { id: 2, v: 'b' }]);
  const c = serverSideApply(b.object, { apiVersion: 'x.io/v1', kind: 'Thing', metadata: { name: 't' }, spec: { tags: ['z'] } }, { manager: 'm2', listTypes, now });
  assert.ok(!c.ok && c.conflicts[0].field === '.spec.tags');
  // m1 stops applying item 1: it is removed; item 2 (m2's) stays.
  const d = ok(serverSideApply(b.object, cr([], ['x', 'y']), { manager: 'm1', listTypes, now }));
  assert.deepEqual((d.object.spec as { items: unknown }).items, [{ id: 2, v: 'b' }]);
});

test('Update bookkeeping: added items are the adder\'s, status owners survive main writes, unchanged entries stay as they were', () => {
  const created = { ...deployment(1, 'nginx:1'), status: { replicas: 0 } };
  const byCreator = recordUpdate(undefined, created, { manager: 'creator', apiVersion: 'apps/v1', now });
  const withStatus = recordUpdate({ ...created, metadata: { ...created.metadata, managedFields: byCreator } }, { ...created, status: { replicas: 1 } },
    { manager: 'controller', apiVersion: 'apps/v1', now, subresource: 'status' });
  assert.deepEqual(withStatus.find((e) => e.manager === 'controller')!.fieldsV1, { 'f:status': { 'f:replicas': {} } });
  const live = { ...created, status: { replicas: 1 }, metadata: { ...created.metadata, managedFields: withStatus } };

  // Another writer changes the image and adds a container: the new item (with its fields) is
  // its own; the existing item stays the creator's, only its image moves.
  const next = structuredClone(live) as any;
  next.spec.template.spec.containers = [{ name: 'web', image: 'nginx:2', args: ['a', 'b'] }, { name: 'side', image: 'busybox', args: [] }];
  const later = new Date('2026-01-02T00:00:00Z');
  const mf = recordUpdate(live, next, { manager: 'editor', apiVersion: 'apps/v1', now: later });
  const editor = decodeFieldSet(mf.find((e) => e.manager === 'editor')!.fieldsV1);
  const containers = ['f:spec', 'f:template', 'f:spec', 'f:containers'];
  assert.ok(editor.has(JSON.stringify([...containers, 'k:{"name":"side"}'])));
  assert.ok(editor.has(JSON.stringify([...containers, 'k:{"name":"side"}', 'f:image'])));
  assert.ok(editor.has(JSON.stringify([...containers, 'k:{"name":"web"}', 'f:image'])));
  assert.ok(!editor.has(JSON.stringify([...containers, 'k:{"name":"web"}'])));
  assert.ok(decodeFieldSet(mf.find((e) => e.manager === 'creator')!.fieldsV1).has(JSON.stringify([...containers, 'k:{"name":"web"}'])));
  // The status manager's entry is untouched by a write to the main resource: the same object.
  assert.equal(mf.find((e) => e.manager === 'controller'), withStatus.find((e) => e.manager === 'controller'));
  // Writing again without changes leaves every entry (and its time) as it was.
  const again = recordUpdate({ ...next, metadata: { ...next.metadata, managedFields: mf } }, next, { manager: 'editor', apiVersion: 'apps/v1', now: new Date('2026-01-03T00:00:00Z') });
  assert.deepEqual(again, mf);
  assert.equal(again.find((e) => e.manager === 'editor')!.time, '2026-01-02T00:00:00Z');
  // Changing a value it already owns keeps the writer's fields and moves its time (kube's
  // managedFieldsUpdater: any field the write took stamps the entry); the others stay as they were.
  const bumped = structuredClone(next);
  bumped.spec.template.spec.containers[0].image = 'nginx:3';
  const renewed = recordUpdate({ ...next, metadata: { ...next.metadata, managedFields: mf } }, bumped, { manager: 'editor', apiVersion: 'apps/v1', now: new Date('2026-01-04T00:00:00Z') });
  assert.equal(renewed.find((e) => e.manager === 'editor')!.time, '2026-01-04T00:00:00Z');
  assert.deepEqual(renewed.find((e) => e.manager === 'editor')!.fieldsV1, mf.find((e) => e.manager === 'editor')!.fieldsV1);
  assert.equal(renewed.find((e) => e.manager === 'creator'), mf.find((e) => e.manager === 'creator'));
});
