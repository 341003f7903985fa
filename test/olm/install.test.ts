// Subscribing installs an operator from a File-Based Catalog in a ConfigMap, with OLM's operators,
// the Deployment and ReplicaSet controllers and a kubelet stand-in against the real API server:
// Automatic — InstallPlan Complete, CSV Pending → InstallReady → Installing → Succeeded, its
// Deployment, ServiceAccount and RBAC made, the OperatorGroup's targets in the pods' annotations;
// Manual — the plan waits in RequiresApproval until approved with kubectl patch; a newer bundle in
// the channel makes a new plan, approving it upgrades one replaces step at a time (the old CSV
// Replacing, then gone) or in one jump where skipRange allows; uninstall leaves the CRD and its
// objects.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { TestApiServer } from '../helpers/apiserver.js';
import { eventually } from '../helpers/eventually.js';
import { demoCatalog, getJson, olmCluster, type DemoVersion } from './fixture.js';

let api: TestApiServer;
let stop: () => Promise<void>;
before(async () => {
  ({ api, stop } = await olmCluster());
});
after(() => stop?.());

const catalogSource = (ns: string, name: string) => ({ apiVersion: 'operators.coreos.com/v1alpha1', kind: 'CatalogSource', metadata: { name, namespace: ns }, spec: { sourceType: 'configmap', configMap: name, displayName: 'Demo', publisher: 'bosun' } });
const configMap = (ns: string, name: string, catalog: string) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: ns }, data: { 'catalog.yaml': catalog } });
const apply = (objects: unknown[]) => api.kubectlOk(['apply', '-f', '-'], JSON.stringify({ apiVersion: 'v1', kind: 'List', items: objects }));

const V1: DemoVersion = { version: '1.0.0' };
const V11: DemoVersion = { version: '1.1.0', replaces: 'demo.v1.0.0' };
const V12: DemoVersion = { version: '1.2.0', replaces: 'demo.v1.1.0' };
const V2: DemoVersion = { version: '2.0.0', replaces: 'demo.v1.2.0', skipRange: '>=1.0.0 <2.0.0' };

/** The phase of the CSV installed in `ns` (not a copy of an all-namespaces operator elsewhere, labelled olm.copiedFrom). */
async function csvPhase(ns: string, name: string): Promise<string | undefined> {
  const csv = await getJson(api, ['csv', name, '-n', ns]);
  return csv?.metadata.labels?.['olm.copiedFrom'] ? undefined : csv?.status?.phase;
}

test('an Automatic Subscription installs the channel head: plan Complete, CSV Succeeded, its Deployment, ServiceAccount and RBAC, the group annotations', async () => {
  const ns = 'auto';
  await api.kubectlOk(['create', 'namespace', ns]);
  await apply([
    configMap(ns, 'demo-catalog', demoCatalog('demo', { stable: [V1, V11] })),
    catalogSource(ns, 'demo-catalog'),
    { apiVersion: 'operators.coreos.com/v1', kind: 'OperatorGroup', metadata: { name: 'og', namespace: ns }, spec: { targetNamespaces: [ns] } },
    { apiVersion: 'operators.coreos.com/v1alpha1', kind: 'Subscription', metadata: { name: 'demo', namespace: ns }, spec: { name: 'demo', source: 'demo-catalog', sourceNamespace: ns, channel: 'stable', installPlanApproval: 'Automatic' } },
  ]);
  const source = await eventually('the catalog READY', async () => { const s = await getJson(api, ['catsrc', 'demo-catalog', '-n', ns]); return s?.status?.connectionState?.lastObservedState === 'READY' && s; });
  assert.equal(source.status.configMapReference.name, 'demo-catalog');
  await eventually('CSV demo.v1.1.0 Succeeded', async () => (await csvPhase(ns, 'demo.v1.1.0')) === 'Succeeded', 30_000);
  const csv = await getJson(api, ['csv', 'demo.v1.1.0', '-n', ns]);
  assert.deepEqual(csv.status.conditions.map((c: { phase: string }) => c.phase), ['InstallReady', 'Installing', 'Succeeded']);
  assert.equal(csv.status.reason, 'InstallSucceeded');
  assert.deepEqual(csv.status.requirementStatus.map((r: { name: string; status: string }) => `${r.name} ${r.status}`), ['widgets.demo.bosun.io Present']);
  assert.equal(csv.metadata.annotations['olm.targetNamespaces'], ns);
  const sub = await eventually('the Subscription AtLatestKnown', async () => { const s = await getJson(api, ['sub', 'demo', '-n', ns]); return s?.status?.state === 'AtLatestKnown' && s; });
  assert.equal(sub.status.installedCSV, 'demo.v1.1.0');
  assert.equal(sub.status.currentCSV, 'demo.v1.1.0');
  const plan = await getJson(api, ['ip', sub.status.installPlanRef.name, '-n', ns]);
  assert.equal(plan.status.phase, 'Complete');
  assert.deepEqual(plan.spec.clusterServiceVersionNames, ['demo.v1.1.0']);
  assert.deepEqual(plan.status.plan.map((s: { resource: { kind: string; name: string }; status: string }) => `${s.resource.kind}/${s.resource.name} ${s.status}`), ['CustomResourceDefinition/widgets.demo.bosun.io Created', 'ClusterServiceVersion/demo.v1.1.0 Created']);
  const deployment = await getJson(api, ['deployment', 'demo-operator', '-n', ns]);
  assert.equal(deployment.spec.template.metadata.annotations['olm.targetNamespaces'], ns);
  assert.equal(deployment.spec.template.metadata.annotations['olm.operatorGroup'], 'og');
  assert.equal(deployment.spec.template.spec.containers[0].image, 'example.com/demo:1.1.0');
  assert.ok(await getJson(api, ['serviceaccount', 'demo-operator', '-n', ns]));
  const role = await getJson(api, ['role', 'demo.v1.1.0-demo-operator', '-n', ns]);
  assert.deepEqual(role.rules[0].resources, ['widgets', 'widgets/status']);
  assert.ok(await getJson(api, ['clusterrolebinding', 'demo.v1.1.0-demo-operator']));
  const can = await api.kubectl(['auth', 'can-i', 'update', 'widgets.demo.bosun.io', '-n', ns, '--as', `system:serviceaccount:${ns}:demo-operator`]);
  assert.equal(can.stdout.trim(), 'yes');
  assert.match(await api.kubectlOk(['get', 'csv', '-n', ns]), /^demo\.v1\.1\.0\s+Demo demo\s+1\.1\.0\s+demo\.v1\.0\.0\s+Succeeded$/m);
});

test('Manual: RequiresApproval until approved; a newer bundle makes a new plan; upgrades go one replaces step at a time, then a skipRange jump; the old CSV goes', async () => {
  const ns = 'manual';
  await api.kubectlOk(['create', 'namespace', ns]);
  await apply([
    configMap(ns, 'demo-catalog', demoCatalog('demo', { stable: [V1] })),
    catalogSource(ns, 'demo-catalog'),
    { apiVersion: 'operators.coreos.com/v1', kind: 'OperatorGroup', metadata: { name: 'og', namespace: ns } },
    { apiVersion: 'operators.coreos.com/v1alpha1', kind: 'Subscription', metadata: { name: 'demo', namespace: ns }, spec: { name: 'demo', source: 'demo-catalog', sourceNamespace: ns, installPlanApproval: 'Manual' } },
  ]);
  const approveNext = async (csv: string) => {
    const sub = await eventually(`a plan for ${csv} waiting for approval`, async () => {
      const s = await getJson(api, ['sub', 'demo', '-n', ns]);
      return s?.status?.state === 'UpgradePending' && s.status.currentCSV === csv && s.status.conditions?.find((c: { type: string; reason: string }) => c.type === 'InstallPlanPending' && c.reason === 'RequiresApproval') && s;
    }, 30_000);
    const name = sub.status.installPlanRef.name;
    const plan = await getJson(api, ['ip', name, '-n', ns]);
    assert.equal(plan.status.phase, 'RequiresApproval');
    assert.equal(plan.spec.approved, false);
    assert.match(await api.kubectlOk(['get', 'ip', '-n', ns]), new RegExp(`^${name}\\s+${csv.replace(/\./g, '\\.')}\\s+Manual\\s+false$`, 'm'));
    assert.equal(await csvPhase(ns, csv), undefined, 'nothing is installed before approval');
    await api.kubectlOk(['patch', 'installplan', name, '-n', ns, '--type', 'merge', '-p', '{"spec":{"approved":true}}']);
    await eventually(`CSV ${csv} Succeeded`, async () => (await csvPhase(ns, csv)) === 'Succeeded', 30_000);
    return name;
  };
  const first = await approveNext('demo.v1.0.0');
  await eventually('AtLatestKnown at 1.0.0', async () => (await getJson(api, ['sub', 'demo', '-n', ns]))?.status?.state === 'AtLatestKnown');
  // Two newer bundles in the channel: the upgrade goes to 1.1.0 first, then 1.2.0.
  await apply([configMap(ns, 'demo-catalog', demoCatalog('demo', { stable: [V1, V11, V12] }))]);
  const second = await approveNext('demo.v1.1.0');
  assert.notEqual(second, first);
  await eventually('the old CSV gone', async () => !(await getJson(api, ['csv', 'demo.v1.0.0', '-n', ns])), 30_000);
  const third = await approveNext('demo.v1.2.0');
  assert.notEqual(third, second);
  // 2.0.0 replaces 1.2.0 and its skipRange covers every 1.x: from 1.2.0 it is one step anyway; a
  // fresh Subscription starting at 1.0.0 jumps straight to it.
  await apply([configMap(ns, 'demo-catalog', demoCatalog('demo', { stable: [V1, V11, V12, V2] }))]);
  await approveNext('demo.v2.0.0');
  await eventually('only 2.0.0 left', async () => (await api.kubectlOk(['get', 'csv', '-n', ns, '-o', 'name'])).trim() === 'clusterserviceversion.operators.coreos.com/demo.v2.0.0', 30_000);
  const deployment = await getJson(api, ['deployment', 'demo-operator', '-n', ns]);
  assert.equal(deployment.spec.template.spec.containers[0].image, 'example.com/demo:2.0.0');
  assert.deepEqual(deployment.metadata.ownerReferences.map((r: { name: string }) => r.name), ['demo.v2.0.0']);
});

test('skipRange: an operator at 1.0.0 upgrades to the head in one jump; the replaced CSV goes Replacing then away', async () => {
  const ns = 'jump';
  await api.kubectlOk(['create', 'namespace', ns]);
  await apply([
    configMap(ns, 'demo-catalog', demoCatalog('demo', { stable: [V1, V11, V12, V2] })),
    catalogSource(ns, 'demo-catalog'),
    { apiVersion: 'operators.coreos.com/v1', kind: 'OperatorGroup', metadata: { name: 'og', namespace: ns } },
    { apiVersion: 'operators.coreos.com/v1alpha1', kind: 'Subscription', metadata: { name: 'demo', namespace: ns }, spec: { name: 'demo', source: 'demo-catalog', sourceNamespace: ns, startingCSV: 'demo.v1.0.0' } },
  ]);
  await eventually('2.0.0 Succeeded', async () => (await csvPhase(ns, 'demo.v2.0.0')) === 'Succeeded', 30_000);
  const plans = JSON.parse(await api.kubectlOk(['get', 'ip', '-n', ns, '-o', 'json'])).items.map((p: { spec: { clusterServiceVersionNames: string[] } }) => p.spec.clusterServiceVersionNames[0]).sort();
  assert.deepEqual(plans, ['demo.v1.0.0', 'demo.v2.0.0'], 'no plan for 1.1.0 or 1.2.0');
  await eventually('1.0.0 gone (at most a copy from another namespace left)', async () => { const csv = await getJson(api, ['csv', 'demo.v1.0.0', '-n', ns]); return !csv || Boolean(csv.metadata.labels?.['olm.copiedFrom']); }, 30_000);
});

test('uninstall: deleting the Subscription and the CSV removes the operator and its RBAC, and leaves the CRD and its objects', async () => {
  const ns = 'auto';
  await api.kubectlOk(['apply', '-f', '-'], JSON.stringify({ apiVersion: 'demo.bosun.io/v1', kind: 'Widget', metadata: { name: 'w', namespace: ns }, spec: { size: 1 } }));
  await api.kubectlOk(['delete', 'sub', 'demo', '-n', ns]);
  await api.kubectlOk(['delete', 'csv', 'demo.v1.1.0', '-n', ns]);
  await eventually('the Deployment gone', async () => !(await getJson(api, ['deployment', 'demo-operator', '-n', ns])), 30_000);
  await eventually('the ClusterRoleBinding gone', async () => !(await getJson(api, ['clusterrolebinding', 'demo.v1.1.0-demo-operator'])), 30_000);
  assert.ok(await getJson(api, ['crd', 'widgets.demo.bosun.io']));
  assert.ok(await getJson(api, ['widget', 'w', '-n', ns]));
});
