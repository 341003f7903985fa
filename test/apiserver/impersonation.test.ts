// Impersonation with the real kubectl (`--as`, `--as-group`, `--as-uid`): allowed only with the
// verb `impersonate` on users, groups, service accounts and uids; the request then runs and is
// authorized as the impersonated user; refusals are 403s naming what may not be impersonated;
// a group without a user is a 400; the audit line names both users.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startTestApiServer } from '../helpers/apiserver.js';
import { enableAccessControl } from '../../src/apiserver/auth/access-control.js';
import { enableAudit } from '../../src/apiserver/filters/audit-log.js';
import { eventually } from '../helpers/eventually.js';

test('kubectl --as: impersonation allowed by RBAC, refused otherwise, audited', { timeout: 90_000 }, async () => {
  const api = await startTestApiServer();
  await enableAccessControl(api.server, api.dataDir);
  enableAudit(api.server, api.dataDir);
  try {
    await api.kubectlOk(['create', 'namespace', 'team']);
    await api.kubectlOk(['create', 'serviceaccount', 'bob', '-n', 'team']);
    await api.kubectlOk(['create', 'serviceaccount', 'robot', '-n', 'team']);
    await api.kubectlOk(['create', 'configmap', 'settings', '-n', 'team', '--from-literal=a=1']);
    // alice may read the team namespace (the built-in view role); bob may impersonate alice and the group devs, nothing else.
    await api.kubectlOk(['create', 'rolebinding', 'alice-view', '-n', 'team', '--clusterrole=view', '--user=alice']);
    await api.kubectlOk(['create', 'clusterrole', 'impersonate-alice', '--verb=impersonate', '--resource=users', '--resource-name=alice']);
    await api.kubectlOk(['create', 'clusterrole', 'impersonate-devs', '--verb=impersonate', '--resource=groups', '--resource-name=devs']);
    await api.kubectlOk(['create', 'clusterrolebinding', 'bob-alice', '--clusterrole=impersonate-alice', '--serviceaccount=team:bob']);
    await api.kubectlOk(['create', 'clusterrolebinding', 'bob-devs', '--clusterrole=impersonate-devs', '--serviceaccount=team:bob']);
    const bob = (await api.kubectlOk(['create', 'token', 'bob', '-n', 'team'])).trim();
    const asBob = (args: string[]) => api.kubectl([`--token=${bob}`, ...args]);

    // The admin impersonates alice: alice's rights apply, not the admin's.
    const read = await api.kubectl(['--as=alice', 'get', 'configmap', 'settings', '-n', 'team', '-o', 'jsonpath={.data.a}']);
    assert.equal(read.code, 0, read.stderr);
    assert.equal(read.stdout, '1');
    const write = await api.kubectl(['--as=alice', 'delete', 'configmap', 'settings', '-n', 'team']);
    assert.notEqual(write.code, 0);
    assert.match(write.stderr, /User "alice" cannot delete resource "configmaps" in API group "" in the namespace "team"/);
    const elsewhere = await api.kubectl(['--as=alice', 'get', 'configmaps', '-n', 'default']);
    assert.match(elsewhere.stderr, /User "alice" cannot list resource "configmaps"/);

    // Who am I, as someone else: the impersonated user with the groups asked for, and system:authenticated.
    const whoami = JSON.parse(await api.kubectlOk(['--as=alice', '--as-group=devs', 'auth', 'whoami', '-o', 'json']));
    assert.equal(whoami.status.userInfo.username, 'alice');
    assert.deepEqual(whoami.status.userInfo.groups, ['devs', 'system:authenticated']);
    assert.equal((await api.kubectl(['--as=alice', 'auth', 'can-i', 'list', 'configmaps', '-n', 'team'])).stdout.trim(), 'yes');
    assert.equal((await api.kubectl(['--as=alice', 'auth', 'can-i', 'list', 'configmaps', '-n', 'default'])).stdout.trim(), 'no');

    // bob: alice and devs are allowed; carol, and the group admins, are not.
    const bobAsAlice = await asBob(['--as=alice', '--as-group=devs', 'get', 'configmaps', '-n', 'team', '-o', 'name']);
    assert.equal(bobAsAlice.code, 0, bobAsAlice.stderr);
    assert.match(bobAsAlice.stdout, /configmap\/settings/);
    const carol = await asBob(['--as=carol', 'get', 'configmaps', '-n', 'team']);
    assert.notEqual(carol.code, 0);
    assert.match(carol.stderr, /users "carol" is forbidden: User "system:serviceaccount:team:bob" cannot impersonate resource "users" in API group "" at the cluster scope/);
    const admins = await asBob(['--as=alice', '--as-group=admins', 'get', 'configmaps', '-n', 'team']);
    assert.match(admins.stderr, /groups "admins" is forbidden: User "system:serviceaccount:team:bob" cannot impersonate resource "groups"/);
    const uid = await asBob(['--as=alice', '--as-uid=1234', 'get', 'configmaps', '-n', 'team']);
    assert.match(uid.stderr, /uids.authentication.k8s.io "1234" is forbidden: .*cannot impersonate resource "uids" in API group "authentication.k8s.io"/);

    // A service account by its user name: checked as serviceaccounts in its namespace, and in its groups.
    const robot = await asBob(['--as=system:serviceaccount:team:robot', 'get', 'configmaps', '-n', 'team']);
    assert.match(robot.stderr, /serviceaccounts "robot" is forbidden: .*cannot impersonate resource "serviceaccounts" in API group "" in the namespace "team"/);
    const robotWho = JSON.parse(await api.kubectlOk(['--as=system:serviceaccount:team:robot', 'auth', 'whoami', '-o', 'json']));
    assert.deepEqual(robotWho.status.userInfo.groups, ['system:serviceaccounts', 'system:serviceaccounts:team', 'system:authenticated']);

    // A group without a user is a Bad Request.
    const partial = await api.request('GET', '/api/v1/namespaces/team/configmaps', { headers: { 'Impersonate-Group': 'devs' } });
    assert.equal(partial.status, 400);
    assert.equal(partial.json.kind, 'Status');
    assert.match(partial.json.message, /requested \[groups=\["devs"\]\] without impersonating a user/);

    // The audit line names who authenticated and whom they impersonated.
    await api.kubectl(['--as=alice', 'delete', 'configmap', 'settings', '-n', 'team']);
    await eventually('the impersonated delete in the audit log', () => {
      const lines = readFileSync(join(api.dataDir, 'audit.log'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
      return lines.find((l) => l.verb === 'delete' && l.resource === 'configmaps' && l.impersonatedUser?.username === 'alice' && l.code === 403);
    });
  } finally {
    await api.stop();
  }
});
