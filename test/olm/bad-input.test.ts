// Bad input gets a clear status and breaks nothing: a malformed catalog (the CatalogSource names
// the bad blob; its Subscriptions say CatalogSourcesUnhealthy; fixed, it installs), a package,
// channel or required API that does not exist (ResolutionFailed naming it), two OperatorGroups in
// a namespace (TooManyOperatorGroups), a Subscription config that is not one
// (InvalidSubscriptionConfig), a group the CSV's install modes cannot serve
// (UnsupportedOperatorGroup), a Deployment that never becomes available (InstallCheckFailed), and
// OLM's namespace-wide Manual approval reported on the Automatic Subscription it affects.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { TestApiServer } from '../helpers/apiserver.js';
import { eventually } from '../helpers/eventually.js';
import { demoCatalog, getJson, olmCluster } from './fixture.js';

let api: TestApiServer;
let stop: () => Promise<void>;
before(async () => {
  ({ api, stop } = await olmCluster({ holdReady: (pod) => pod.metadata.namespace === 'stuck' }));
});
after(() => stop?.());

const OLM = 'operators.coreos.com';
const apply = (objects: unknown[]) => api.kubectlOk(['apply', '-f', '-'], JSON.stringify({ apiVersion: 'v1', kind: 'List', items: objects }));
const catalog = (ns: string, content: string) => [
  { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'demo-catalog', namespace: ns }, data: { 'catalog.yaml': content } },
  { apiVersion: `${OLM}/v1alpha1`, kind: 'CatalogSource', metadata: { name: 'demo-catalog', namespace: ns }, spec: { sourceType: 'configmap', configMap: 'demo-catalog' } },
];
const group = (ns: string, name = 'og', targets?: string[]) => ({ apiVersion: `${OLM}/v1`, kind: 'OperatorGroup', metadata: { name, namespace: ns }, spec: targets ? { targetNamespaces: targets } : {} });
const subscription = (ns: string, name: string, spec: Record<string, unknown> = {}) => ({ apiVersion: `${OLM}/v1alpha1`, kind: 'Subscription', metadata: { name, namespace: ns }, spec: { name: 'demo', source: 'demo-catalog', sourceNamespace: ns, ...spec } });
const condition = async (ns: string, sub: string, type: string) => (await getJson(api, ['sub', sub, '-n', ns]))?.status?.conditions?.find((c: { type: string; status: string }) => c.type === type && c.status === 'True');
const csvStatus = async (ns: string, name: string) => (await getJson(api, ['csv', name, '-n', ns]))?.status;

test('a malformed catalog: the CatalogSource names the bad blob, the Subscription says CatalogSourcesUnhealthy; fixed, it installs', async () => {
  const ns = 'broken';
  await api.kubectlOk(['create', 'namespace', ns]);
  const bad = `${demoCatalog('demo', { stable: [{ version: '1.0.0' }] })}---\n{"schema": "olm.channel", "package": "demo", "name": "fast", "entries": [{"name": "demo.v9.0.0"}]}\n`;
  await apply([...catalog(ns, bad), group(ns), subscription(ns, 'demo')]);
  const source = await eventually('the catalog failing', async () => { const s = await getJson(api, ['catsrc', 'demo-catalog', '-n', ns]); return s?.status?.connectionState?.lastObservedState === 'TRANSIENT_FAILURE' && s; });
  assert.equal(source.status.reason, 'InvalidCatalog');
  assert.match(source.status.message, /ConfigMap broken\/demo-catalog: invalid catalog: catalog\.yaml#4 \(olm\.channel "fast"\): entry "demo\.v9\.0\.0" is not a bundle of package "demo"/);
  const unhealthy = await eventually('CatalogSourcesUnhealthy', () => condition(ns, 'demo', 'CatalogSourcesUnhealthy'));
  assert.match(unhealthy.message, /catalog source broken\/demo-catalog is not healthy: .*catalog\.yaml#4/);
  assert.equal(await getJson(api, ['csv', 'demo.v1.0.0', '-n', ns]), undefined);
  await apply([catalog(ns, demoCatalog('demo', { stable: [{ version: '1.0.0' }] }))[0]]);
  await eventually('installed once fixed', async () => (await csvStatus(ns, 'demo.v1.0.0'))?.phase === 'Succeeded', 30_000);
  assert.equal((await getJson(api, ['sub', 'demo', '-n', ns])).status.conditions.find((c: { type: string }) => c.type === 'CatalogSourcesUnhealthy').status, 'False');
});

test('a package, channel or required API that does not exist: ResolutionFailed naming it', async () => {
  const ns = 'unresolvable';
  await api.kubectlOk(['create', 'namespace', ns]);
  await apply([...catalog(ns, demoCatalog('demo', { stable: [{ version: '1.0.0', requires: { group: 'db.example.com', version: 'v1', kind: 'Database' } }] })), group(ns),
    subscription(ns, 'nopkg', { name: 'nope' }), subscription(ns, 'nochannel', { channel: 'beta' }), subscription(ns, 'needsdb')]);
  const noPackage = await eventually('ResolutionFailed for the package', () => condition(ns, 'nopkg', 'ResolutionFailed'));
  assert.equal(noPackage.reason, 'ConstraintsNotSatisfiable');
  assert.match(noPackage.message, /package "nope" not found in catalog unresolvable\/demo-catalog \(it has: demo\)/);
  assert.match((await eventually('ResolutionFailed for the channel', () => condition(ns, 'nochannel', 'ResolutionFailed'))).message, /channel "beta" of package "demo" not found in catalog unresolvable\/demo-catalog \(its channels: stable\)/);
  assert.match((await eventually('ResolutionFailed for the API', () => condition(ns, 'needsdb', 'ResolutionFailed'))).message,
    /bundle demo\.v1\.0\.0 \(package "demo", channel "stable", catalog unresolvable\/demo-catalog\) requires API db\.example\.com\/v1, Kind=Database, which no installed operator provides and no bundle of any catalog offers/);
  assert.equal((await api.kubectlOk(['get', 'ip', '-n', ns, '-o', 'name'])).trim(), '', 'no plan');
});

test('two OperatorGroups: TooManyOperatorGroups; a group the install modes cannot serve: UnsupportedOperatorGroup; fixing the group installs', async () => {
  await api.kubectlOk(['create', 'namespace', 'twogroups']);
  await apply([...catalog('twogroups', demoCatalog('demo', { stable: [{ version: '1.0.0' }] })), group('twogroups', 'a'), group('twogroups', 'b'), subscription('twogroups', 'demo')]);
  const two = await eventually('TooManyOperatorGroups', async () => { const s = await csvStatus('twogroups', 'demo.v1.0.0'); return s?.reason === 'TooManyOperatorGroups' && s; });
  assert.equal(two.phase, 'Failed');
  assert.match(two.message, /multiple operatorgroups.*: a, b/);
  await api.kubectlOk(['create', 'namespace', 'ownonly']);
  await apply([...catalog('ownonly', demoCatalog('demo', { stable: [{ version: '1.0.0', installModes: { AllNamespaces: false, SingleNamespace: false } }] })), group('ownonly'), subscription('ownonly', 'demo')]);
  const unsupported = await eventually('UnsupportedOperatorGroup', async () => { const s = await csvStatus('ownonly', 'demo.v1.0.0'); return s?.reason === 'UnsupportedOperatorGroup' && s; });
  assert.equal(unsupported.phase, 'Failed');
  assert.match(unsupported.message, /OperatorGroup og targets all namespaces, which needs install mode AllNamespaces; this ClusterServiceVersion supports OwnNamespace/);
  assert.match(await api.kubectlOk(['get', 'csv', '-n', 'ownonly']), /demo\.v1\.0\.0\s+Demo demo\s+1\.0\.0\s+Failed/);
  await apply([group('ownonly', 'og', ['ownonly'])]);
  await eventually('installed once the group targets its own namespace', async () => (await csvStatus('ownonly', 'demo.v1.0.0'))?.phase === 'Succeeded', 30_000);
});

test('a Deployment that never becomes available: the CSV Failed with InstallCheckFailed', async () => {
  const ns = 'stuck';
  await api.kubectlOk(['create', 'namespace', ns]);
  await apply([...catalog(ns, demoCatalog('demo', { stable: [{ version: '1.0.0', progressDeadlineSeconds: 2 }] })), group(ns), subscription(ns, 'demo')]);
  const failed = await eventually('InstallCheckFailed', async () => { const s = await csvStatus(ns, 'demo.v1.0.0'); return s?.reason === 'InstallCheckFailed' && s; }, 30_000);
  assert.equal(failed.phase, 'Failed');
  assert.match(failed.message, /install failed: deployment demo-operator not ready before timeout: .*progress/);
});

test('one Manual Subscription makes the namespace Manual, as OLM does, and the Automatic one says so', async () => {
  const ns = 'mixed';
  await api.kubectlOk(['create', 'namespace', ns]);
  await apply([...catalog(ns, demoCatalog('demo', { stable: [{ version: '1.0.0' }] }) + demoCatalog('other', { stable: [{ version: '1.0.0' }] })), group(ns),
    subscription(ns, 'demo', { installPlanApproval: 'Manual' }), subscription(ns, 'other', { name: 'other', installPlanApproval: 'Automatic' })]);
  const forced = await eventually('NamespaceManualApproval', () => condition(ns, 'other', 'NamespaceManualApproval'));
  assert.match(forced.message, /Subscription demo in namespace mixed is Manual: OLM resolves a namespace's Subscriptions together, so this Subscription's InstallPlans need approval too/);
  const sub = await eventually('its plan', async () => { const s = await getJson(api, ['sub', 'other', '-n', ns]); return s?.status?.installPlanRef && s; });
  const plan = await getJson(api, ['ip', sub.status.installPlanRef.name, '-n', ns]);
  assert.equal(plan.spec.approval, 'Manual');
  assert.equal(plan.status.phase, 'RequiresApproval');
});

test('a Subscription config that is not one: the CSV Failed with InvalidSubscriptionConfig naming the field; fixed, it installs with the config', async () => {
  const ns = 'badconfig';
  await api.kubectlOk(['create', 'namespace', ns]);
  await apply([...catalog(ns, demoCatalog('demo', { stable: [{ version: '1.0.0' }] })), group(ns, 'og', [ns]), subscription(ns, 'demo', { config: { env: 'DEBUG=1' } })]);
  const failed = await eventually('InvalidSubscriptionConfig', async () => { const s = await csvStatus(ns, 'demo.v1.0.0'); return s?.reason === 'InvalidSubscriptionConfig' && s; }, 30_000);
  assert.equal(failed.phase, 'Failed');
  assert.equal(failed.message, 'Subscription demo: spec.config.env must be a list');
  assert.equal(await getJson(api, ['deployment', 'demo-operator', '-n', ns]), undefined, 'nothing installed');
  await api.kubectlOk(['patch', 'sub', 'demo', '-n', ns, '--type', 'merge', '-p', JSON.stringify({ spec: { config: { env: [{ name: 'DEBUG', value: '1' }] } } })]);
  await eventually('installed once fixed', async () => (await csvStatus(ns, 'demo.v1.0.0'))?.phase === 'Succeeded', 30_000);
  const deployment = await getJson(api, ['deployment', 'demo-operator', '-n', ns]);
  assert.deepEqual(deployment.spec.template.spec.containers[0].env, [{ name: 'DEBUG', value: '1' }]);
});
