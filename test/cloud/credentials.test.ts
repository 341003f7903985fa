// test: shared-addresses (binds the local cloud's machine and balancer addresses; run alone)
// The local cloud's credentials, against a real cloud on loopback: no credential or an unknown one
// is 401; each component's credential — with the actions its CredentialsRequest in the payload
// lists, and the machine approver's — performs each of its actions (2xx) and is refused every
// other one (403 naming identity and action), table-driven over every action the cloud defines;
// credentials are stored hashed in a 0600 file, a rotated one stops working, and the audit log
// (0600) records who did what.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { CLOUD_ACTIONS, type CloudAction } from '../../src/cloud/actions.js';
import type { AuditRecord } from '../../src/cloud/audit.js';
import { CloudClient, rootCredentialPath } from '../../src/cloud/client.js';
import { CloudError } from '../../src/cloud/errors.js';
import { repositoryRoot } from '../../src/cli/release.js';
import type * as api from '../../src/api/index.js';
import { startCloud, waitForBoot, type CloudFixture } from './cloud-fixture.js';

let cloud: CloudFixture;
before(async () => { cloud = await startCloud(); });
after(async () => { await cloud?.close(); });

/** Status and body of a raw request, with `credential` as the bearer (none: no header). */
async function call(method: string, path: string, credential?: string, body?: unknown): Promise<{ status: number; body: any; headers: Headers }> {
  const res = await fetch(`${cloud.service.url}${path}`, {
    method,
    headers: { ...(credential ? { authorization: `Bearer ${credential}` } : {}), ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: res.headers.get('content-type')?.startsWith('application/json') ? JSON.parse(text) : text, headers: res.headers };
}

/** The payload's CredentialsRequests: what each component is given. */
function payloadRequests(): api.CredentialsRequest[] {
  const dir = join(repositoryRoot, 'release-payload/manifests');
  return readdirSync(dir).filter((f) => f.endsWith('.yaml')).flatMap((f) => parseAllDocuments(readFileSync(join(dir, f), 'utf8')).map((d) => d.toJS() as api.CredentialsRequest))
    .filter((o) => o?.kind === 'CredentialsRequest');
}

const mode = (file: string) => statSync(file).mode & 0o777;

test('without a credential, or with one the cloud does not know, every API route is 401 with a clear error; /healthz needs none', async () => {
  const routes: [string, string][] = [
    ['GET', '/v1/instances'], ['POST', '/v1/instances'], ['GET', '/v1/instances/i-00000000000000000'], ['DELETE', '/v1/instances/i-00000000000000000'],
    ['POST', '/v1/instances/i-00000000000000000/stop'], ['GET', '/v1/zones'], ['GET', '/v1/instance-types'], ['GET', '/v1/loadbalancers'], ['PUT', '/v1/loadbalancers/x'],
    ['GET', '/v1/routes'], ['POST', '/v1/routes'], ['GET', '/v1/credentials'], ['PUT', '/v1/credentials/x'], ['GET', '/v1/identity'],
  ];
  for (const [method, path] of routes) {
    const none = await call(method, path, undefined, method === 'GET' || method === 'DELETE' ? undefined : {});
    assert.equal(none.status, 401, `${method} ${path}`);
    assert.equal(none.body.error.code, 'AuthFailure');
    assert.match(none.body.error.message, /^no credential: send "Authorization: Bearer <credential>"/);
    assert.equal(none.headers.get('www-authenticate'), 'Bearer realm="bosun-cloud"');
  }
  for (const bad of ['BCK0123456789ABCDEF.not-the-secret', 'garbage', `${cloud.service.rootCredential}x`]) {
    const r = await call('GET', '/v1/instances', bad);
    assert.equal(r.status, 401, bad);
    assert.equal(r.body.error.message, 'the credential is not valid: no identity has it (deleted, rotated, or mistyped)');
  }
  assert.equal((await call('GET', '/healthz')).status, 200);
  assert.equal((await call('GET', '/v1/instances', cloud.service.rootCredential)).status, 200);
});

test("each component's credential: 2xx for every action it holds, 403 naming identity and action for every other", { timeout: 240_000 }, async () => {
  const root = cloud.client;
  const identities = [
    ...payloadRequests().map((r) => ({ name: r.metadata.name!, actions: r.spec!.providerSpec.actions })),
    { name: 'machine-approver', actions: ['instances:describe'] },
  ];
  assert.deepEqual(identities.map((i) => i.name).sort(), ['machine-approver', 'openshift-cloud-controller-manager', 'openshift-cluster-api']);
  // What each component is meant to hold (issue #25): nothing more.
  assert.deepEqual(identities.find((i) => i.name === 'openshift-cluster-api')!.actions.slice().sort(), ['instances:create', 'instances:describe', 'instances:reboot', 'instances:terminate', 'loadbalancers:describe', 'loadbalancers:manage']);
  assert.deepEqual(identities.find((i) => i.name === 'openshift-cloud-controller-manager')!.actions.slice().sort(), ['instances:describe', 'loadbalancers:describe', 'loadbalancers:manage', 'routes:describe', 'routes:manage']);

  let n = 0;
  for (const identity of identities) {
    const { credential } = await root.putIdentity(identity.name, identity.actions);
    assert.ok(credential);
    n++;
    const target = await waitForBoot(root, (await root.createInstance({ name: `target-${n}` })).id);
    // One request per action, in an order that leaves each later one something to act on.
    const probes: [CloudAction, string, string, unknown?][] = [
      ['instances:describe', 'GET', '/v1/instances'],
      ['instances:create', 'POST', '/v1/instances', { name: `made-by-${n}` }],
      ['instances:stop', 'POST', `/v1/instances/${target.id}/stop`],
      ['instances:start', 'POST', `/v1/instances/${target.id}/start`],
      ['instances:reboot', 'POST', `/v1/instances/${target.id}/reboot`],
      ['loadbalancers:describe', 'GET', '/v1/loadbalancers'],
      ['loadbalancers:manage', 'PUT', `/v1/loadbalancers/probe-${n}`, { ports: [{ port: 31000 + n, targetPort: 30080 }], targets: [target.id] }],
      ['routes:describe', 'GET', '/v1/routes'],
      ['routes:manage', 'POST', '/v1/routes', { name: `probe-${n}`, destinationCidr: `127.9.${n}.0/24`, targetInstance: target.id }],
      ['credentials:manage', 'GET', '/v1/credentials'],
      ['instances:terminate', 'POST', `/v1/instances/${target.id}/terminate`],
    ];
    assert.deepEqual(probes.map((p) => p[0]).sort(), [...CLOUD_ACTIONS].sort(), 'every action is probed');
    for (const [action, method, path, body] of probes) {
      const r = await call(method, path, credential, body);
      if (identity.actions.includes(action)) {
        assert.ok(r.status >= 200 && r.status < 300, `${identity.name} ${action}: ${r.status} ${JSON.stringify(r.body)}`);
      } else {
        assert.equal(r.status, 403, `${identity.name} ${action}: ${r.status} ${JSON.stringify(r.body)}`);
        assert.equal(r.body.error.code, 'UnauthorizedOperation');
        assert.equal(r.body.error.message, `identity "${identity.name}" is not allowed to perform ${action} (${method} ${path}); it may: ${[...identity.actions].sort().join(', ')}`);
      }
    }
    const me = await new CloudClient(cloud.service.url, credential).identity();
    assert.deepEqual({ name: me.name, actions: me.actions }, { name: identity.name, actions: [...identity.actions].sort() });
  }
});

test('identities: only the root mints; a component cannot be given the root\'s actions; rotation revokes the old credential', async () => {
  const root = cloud.client;
  const { credential: first } = await root.putIdentity('rotating', ['instances:describe']);
  const minted = new CloudClient(cloud.service.url, first);
  await assert.rejects(minted.putIdentity('escalate', ['instances:create']), (e: CloudError) => e.status === 403 && /identity "rotating" is not allowed to perform credentials:manage/.test(e.message));
  await assert.rejects(root.putIdentity('greedy', ['credentials:manage']), (e: CloudError) => e.status === 400 && e.code === 'InvalidAction' && /"credentials:manage" is the root identity's alone/.test(e.message));
  await assert.rejects(root.putIdentity('typo', ['instances:explode']), (e: CloudError) => e.status === 400 && /unknown action "instances:explode"/.test(e.message));
  await assert.rejects(root.putIdentity('Bad_Name', ['instances:describe']), (e: CloudError) => e.status === 400 && /invalid identity name "Bad_Name"/.test(e.message));
  await assert.rejects(root.deleteIdentity('root'), (e: CloudError) => e.status === 409);
  // Setting actions again keeps the credential (no new one answered).
  const again = await root.putIdentity('rotating', ['instances:describe', 'routes:describe']);
  assert.equal(again.credential, undefined);
  assert.deepEqual((await minted.identity()).actions, ['instances:describe', 'routes:describe']);
  const { credential: second } = await root.rotateCredential('rotating');
  await assert.rejects(minted.listInstances(), (e: CloudError) => e.status === 401);
  assert.equal((await new CloudClient(cloud.service.url, second).listInstances()).length >= 0, true);
  await root.deleteIdentity('rotating');
  await assert.rejects(new CloudClient(cloud.service.url, second).listInstances(), (e: CloudError) => e.status === 401);
});

test('on disk: secrets only as hashes in credentials.db (0600, WAL and SHM too), the root credential 0600, and the audit log (0600) says who did what', async () => {
  const dir = join(cloud.dataDir, 'cloud');
  const { credential } = await cloud.client.putIdentity('auditee', ['instances:describe']);
  await new CloudClient(cloud.service.url, credential).listInstances();
  await call('DELETE', '/v1/routes/nothing', credential);
  await call('GET', '/v1/instances');
  for (const f of ['credentials.db', 'credentials.db-wal', 'credentials.db-shm', 'root.credential', 'audit.log']) assert.equal(mode(join(dir, f)), 0o600, f);
  assert.equal(readFileSync(rootCredentialPath(cloud.dataDir), 'utf8').trim(), cloud.service.rootCredential);
  const secret = credential!.split('.')[1];
  for (const f of ['credentials.db', 'credentials.db-wal']) assert.ok(!readFileSync(join(dir, f)).includes(secret), `${f} holds no secret`);

  const lines = readFileSync(join(dir, 'audit.log'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as AuditRecord);
  const keyId = credential!.split('.')[0];
  const of = (identity: string | null, action: string, status: number) => lines.find((l) => l.identity === identity && l.action === action && l.status === status);
  assert.deepEqual({ ...of('auditee', 'instances:describe', 200), time: undefined, remote: undefined }, { time: undefined, identity: 'auditee', keyId, action: 'instances:describe', method: 'GET', path: '/v1/instances', status: 200, remote: undefined });
  assert.equal(of('auditee', 'routes:manage', 403)?.path, '/v1/routes/nothing');
  assert.equal(of(null, 'instances:describe', 401)?.keyId, null);
  assert.ok(of('root', 'credentials:manage', 201), 'the root minting is recorded');
  assert.ok(lines.every((l) => !Number.isNaN(Date.parse(l.time)) && l.remote === '127.0.0.1'));
});

test('a restart keeps identities and the root credential; a lost root.credential file gets a new root credential', async () => {
  const before = cloud.service.rootCredential;
  const { credential } = await cloud.client.putIdentity('survivor', ['instances:describe']);
  await cloud.restart();
  assert.equal(cloud.service.rootCredential, before);
  assert.equal((await new CloudClient(cloud.service.url, credential).identity()).name, 'survivor');
  rmSync(rootCredentialPath(cloud.dataDir));
  await cloud.restart();
  assert.notEqual(cloud.service.rootCredential, before);
  assert.equal(readFileSync(rootCredentialPath(cloud.dataDir), 'utf8').trim(), cloud.service.rootCredential);
  assert.equal((await call('GET', '/v1/instances', before)).status, 401, 'the lost one no longer works');
  assert.equal((await cloud.client.identity()).name, 'root');
});
