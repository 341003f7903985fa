// Paged lists of nodes as kubectl reads them — `limit` and `continue`, as JSON and as a Table —
// are the same whether the store decodes each object again or hands out the decoded objects it
// keeps for lists (storage/sqlite.ts, ListOptions.shared): a write between two listings shows
// in the second, a page continued at an older revision still shows that revision, and the real
// kubectl prints every node.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestApiServer, type TestApiServer } from '../helpers/apiserver.js';

const TABLE = 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json';
const COUNT = 25;

let api: TestApiServer;
before(async () => {
  api = await startTestApiServer();
  for (let i = 0; i < COUNT; i++) {
    const name = `node-${String(i).padStart(2, '0')}`;
    const created = await api.request('POST', '/api/v1/nodes', {
      body: { apiVersion: 'v1', kind: 'Node', metadata: { name, labels: { 'node-role.kubernetes.io/worker': '', zone: `z${i % 3}` } } },
    });
    assert.equal(created.status, 201, created.text);
    const status = await api.request('PATCH', `/api/v1/nodes/${name}/status`, {
      contentType: 'application/merge-patch+json',
      body: { status: { conditions: [{ type: 'Ready', status: 'True', reason: 'KubeletReady', message: 'ready' }], addresses: [{ type: 'InternalIP', address: `10.0.0.${i}` }], nodeInfo: { kubeletVersion: 'v1.33.0' } } },
    });
    assert.equal(status.status, 200, status.text);
  }
});
after(async () => {
  await api.stop();
});

interface Page { text: string; json: any }

/** Every page of a list, following `continue`. */
async function pages(path: string, accept?: string): Promise<Page[]> {
  const out: Page[] = [];
  let token: string | undefined;
  do {
    const res = await api.request('GET', `${path}${path.includes('?') ? '&' : '?'}limit=10${token ? `&continue=${token}` : ''}`, { accept });
    assert.equal(res.status, 200, res.text);
    out.push({ text: res.text, json: res.json });
    token = res.json.metadata.continue;
  } while (token);
  return out;
}

const rows = (ps: Page[]) => ps.flatMap((p) => p.json.rows as Array<{ cells: unknown[]; object: { kind: string; apiVersion: string; metadata: any } }>);
const items = (ps: Page[]) => ps.flatMap((p) => p.json.items as Array<{ metadata: any }>);

test('a paged Table of nodes: every node once, in order, each row the metadata of the object a JSON list returns', async () => {
  for (let round = 0; round < 2; round++) {
    const table = await pages('/api/v1/nodes', TABLE);
    const list = await pages('/api/v1/nodes');
    assert.equal(table.length, 3);
    // The text is plain JSON.stringify output: no key reordered, nothing left out.
    for (const p of table) assert.equal(p.text, JSON.stringify(p.json));
    const names = rows(table).map((r) => r.cells[0]);
    assert.deepEqual(names, Array.from({ length: COUNT }, (_, i) => `node-${String(i).padStart(2, '0')}`));
    // The metadata without managedFields (tables.ts: no printer reads them).
    assert.ok(items(list).every((o) => o.metadata.managedFields?.length));
    const withoutManagedFields = ({ managedFields: _managedFields, ...metadata }: Record<string, unknown>) => metadata;
    assert.deepEqual(rows(table).map((r) => r.object), items(list).map((o) => ({ kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: withoutManagedFields(o.metadata) })));
    assert.deepEqual(rows(table)[3].cells.slice(1, 3), ['Ready', 'worker']);
    assert.equal(table[0].json.columnDefinitions[0].name, 'Name');
    assert.equal(table[1].json.metadata.resourceVersion, table[0].json.metadata.resourceVersion);
  }
  const none = await pages('/api/v1/nodes?includeObject=None', TABLE);
  assert.equal(rows(none).length, COUNT);
  assert.ok(rows(none).every((r) => r.object === undefined));
  const whole = await pages('/api/v1/nodes?includeObject=Object', TABLE);
  assert.deepEqual(rows(whole).map((r) => r.object), items(await pages('/api/v1/nodes')));
});

test('a write shows in the next listing; a page continued from before it still shows the older revision', async () => {
  const before = await pages('/api/v1/nodes', TABLE);
  const first = await api.request('GET', '/api/v1/nodes?limit=10', { accept: TABLE });
  const patched = await api.request('PATCH', '/api/v1/nodes/node-15', { contentType: 'application/merge-patch+json', body: { metadata: { labels: { zone: 'moved' } } } });
  assert.equal(patched.status, 200, patched.text);
  const deleted = await api.request('DELETE', '/api/v1/nodes/node-20');
  assert.equal(deleted.status, 200, deleted.text);

  // The rest of the listing that started before the writes: node-15 as it was, node-20 still there.
  const second = await api.request('GET', `/api/v1/nodes?limit=10&continue=${first.json.metadata.continue}`, { accept: TABLE });
  const third = await api.request('GET', `/api/v1/nodes?limit=10&continue=${second.json.metadata.continue}`, { accept: TABLE });
  const old = [...second.json.rows, ...third.json.rows];
  assert.equal(old.find((r: any) => r.cells[0] === 'node-15').object.metadata.labels.zone, 'z0');
  assert.ok(old.some((r: any) => r.cells[0] === 'node-20'));
  assert.deepEqual([...first.json.rows, ...old].map((r: any) => r.object), rows(before).map((r) => r.object));

  // A new listing: the write and the deletion.
  const after = rows(await pages('/api/v1/nodes', TABLE));
  assert.equal(after.length, COUNT - 1);
  assert.equal(after.find((r) => r.cells[0] === 'node-15')!.object.metadata.labels.zone, 'moved');
  assert.equal(after.find((r) => r.cells[0] === 'node-15')!.object.metadata.resourceVersion, patched.json.metadata.resourceVersion);
  assert.ok(!after.some((r) => r.cells[0] === 'node-20'));
  const json = items(await pages('/api/v1/nodes'));
  assert.equal(json.find((o) => o.metadata.name === 'node-15')!.metadata.labels.zone, 'moved');
  // A label selector over the same decoded objects.
  assert.deepEqual(items(await pages('/api/v1/nodes?labelSelector=zone%3Dmoved')).map((o) => o.metadata.name), ['node-15']);
});

test('the real kubectl pages through every node', async () => {
  const out = await api.kubectlOk(['get', 'nodes', '--chunk-size=7']);
  const lines = out.trim().split('\n');
  assert.match(lines[0], /^NAME\s+STATUS\s+ROLES\s+AGE\s+VERSION$/);
  assert.equal(lines.length - 1, COUNT - 1);
  assert.match(out, /^node-15\s+Ready\s+worker\s+\S+\s+v1\.33\.0$/m);
  const names = await api.kubectlOk(['get', 'nodes', '-o', 'name', '--chunk-size=7']);
  assert.equal(names.trim().split('\n').length, COUNT - 1);
});
