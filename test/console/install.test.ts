// What an OperatorHub install makes (src/console/web/install.ts, pure): the install modes offered
// from the channel head's installModes, the default namespace (openshift-operators for all
// namespaces, else the CSV's suggested namespace), the OperatorGroup used, made or refused with a
// reason, the Subscription, and namespace names checked before any request.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type * as api from '../../src/api/index.js';
import { defaultInstallNamespace, namespaceProblem, offeredInstallModes, operatorGroupPlan, subscriptionFor } from '../../src/console/web/install.js';

const channel = (modes: Record<string, boolean>, annotations: Record<string, string> = {}): api.PackageChannel => ({
  name: 'stable', currentCSV: 'demo.v1.0.0', currentCSVDesc: { version: '1.0.0', annotations, installModes: Object.entries(modes).map(([type, supported]) => ({ type, supported })) as api.InstallMode[] },
});
const group = (namespace: string, name: string, spec: api.OperatorGroup['spec'] = {}): api.OperatorGroup => ({ apiVersion: 'operators.coreos.com/v1', kind: 'OperatorGroup', metadata: { name, namespace }, spec }) as api.OperatorGroup;

test('install modes: AllNamespaces and OwnNamespace, when the channel head supports them', () => {
  assert.deepEqual(offeredInstallModes(channel({ OwnNamespace: true, SingleNamespace: true, MultiNamespace: false, AllNamespaces: true })), ['AllNamespaces', 'OwnNamespace']);
  assert.deepEqual(offeredInstallModes(channel({ OwnNamespace: true, AllNamespaces: false })), ['OwnNamespace']);
  assert.deepEqual(offeredInstallModes(channel({ SingleNamespace: true, MultiNamespace: true })), []);
  assert.deepEqual(offeredInstallModes(undefined), []);
});

test('default namespace: openshift-operators for all namespaces; else the suggested one, else the fallback', () => {
  assert.equal(defaultInstallNamespace('AllNamespaces', channel({}), 'team'), 'openshift-operators');
  assert.equal(defaultInstallNamespace('OwnNamespace', channel({}, { 'operatorframework.io/suggested-namespace': 'demo-system' }), 'team'), 'demo-system');
  assert.equal(defaultInstallNamespace('OwnNamespace', channel({}), 'team'), 'team');
});

test('OperatorGroup: made when there is none, used when it fits, refused in words when it does not', () => {
  assert.deepEqual(operatorGroupPlan('AllNamespaces', 'openshift-operators', []), { create: { apiVersion: 'operators.coreos.com/v1', kind: 'OperatorGroup', metadata: { name: 'global-operators', namespace: 'openshift-operators' }, spec: {} } });
  assert.deepEqual(operatorGroupPlan('OwnNamespace', 'team', [group('other', 'x')]), { create: { apiVersion: 'operators.coreos.com/v1', kind: 'OperatorGroup', metadata: { generateName: 'team-', namespace: 'team' }, spec: { targetNamespaces: ['team'] } } });
  assert.deepEqual(operatorGroupPlan('AllNamespaces', 'openshift-operators', [group('openshift-operators', 'global-operators')]), { use: 'global-operators' });
  assert.deepEqual(operatorGroupPlan('OwnNamespace', 'team', [group('team', 'og', { targetNamespaces: ['team'] })]), { use: 'og' });
  const refused = (plan: ReturnType<typeof operatorGroupPlan>) => ('problem' in plan ? plan.problem : `not refused: ${JSON.stringify(plan)}`);
  assert.equal(refused(operatorGroupPlan('OwnNamespace', 'team', [group('team', 'og')])), 'namespace team already has OperatorGroup og, which targets all namespaces; this install mode needs one that targets only team: choose another namespace or install mode');
  assert.match(refused(operatorGroupPlan('AllNamespaces', 'team', [group('team', 'og', { targetNamespaces: ['team', 'b'] })])), /targets namespaces team, b; this install mode needs one that targets all namespaces/);
  assert.match(refused(operatorGroupPlan('OwnNamespace', 'team', [group('team', 'og', { selector: { matchLabels: { a: 'b' } } })])), /targets the namespaces its selector picks/);
  assert.match(refused(operatorGroupPlan('OwnNamespace', 'team', [group('team', 'a'), group('team', 'b')])), /namespace team has 2 OperatorGroups \(a, b\); OLM installs nothing/);
});

test('the Subscription: the package, its catalog, the channel from its head, the approval', () => {
  const pkg = { apiVersion: 'packages.operators.coreos.com/v1', kind: 'PackageManifest', metadata: { name: 'demo', namespace: 'team' }, spec: {}, status: { catalogSource: 'cat', catalogSourceNamespace: 'openshift-marketplace', packageName: 'demo', defaultChannel: 'stable', channels: [channel({})] } } as api.PackageManifest;
  assert.deepEqual(subscriptionFor(pkg, pkg.status.channels[0], 'team', 'Manual'), {
    apiVersion: 'operators.coreos.com/v1alpha1', kind: 'Subscription', metadata: { name: 'demo', namespace: 'team' },
    spec: { name: 'demo', source: 'cat', sourceNamespace: 'openshift-marketplace', channel: 'stable', startingCSV: 'demo.v1.0.0', installPlanApproval: 'Manual' },
  });
});

test('namespace names: a DNS label or a reason', () => {
  assert.equal(namespaceProblem('team-ops'), undefined);
  assert.equal(namespaceProblem(''), 'choose the namespace to install the operator in');
  assert.match(namespaceProblem('Team_Ops') ?? '', /"Team_Ops" is not a namespace name/);
  assert.match(namespaceProblem('a'.repeat(64)) ?? '', /at most 63 characters/);
});
