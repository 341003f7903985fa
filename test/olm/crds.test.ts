// OLM's APIs as kubectl sees them: the five kinds with OLM's short names and printer columns
// (`kubectl get csv` shows DISPLAY, VERSION, REPLACES, PHASE), their types generated from the CRDs.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { TestApiServer } from '../helpers/apiserver.js';
import { olmApiServer } from './fixture.js';

let api: TestApiServer;
before(async () => {
  ({ api } = await olmApiServer());
  await api.kubectlOk(['create', 'namespace', 'demo']);
});
after(() => api?.stop());

const OBJECTS = `
apiVersion: operators.coreos.com/v1alpha1
kind: CatalogSource
metadata: {name: demo-catalog, namespace: demo}
spec: {sourceType: configmap, configMap: demo-catalog, displayName: Demo Operators, publisher: bosun}
---
apiVersion: operators.coreos.com/v1
kind: OperatorGroup
metadata: {name: demo, namespace: demo}
spec: {targetNamespaces: [demo]}
---
apiVersion: operators.coreos.com/v1alpha1
kind: Subscription
metadata: {name: etcd, namespace: demo}
spec: {name: etcd, source: demo-catalog, sourceNamespace: demo, channel: stable, installPlanApproval: Manual}
---
apiVersion: operators.coreos.com/v1alpha1
kind: InstallPlan
metadata: {name: install-abcde, namespace: demo}
spec: {clusterServiceVersionNames: [etcdoperator.v0.9.4], approval: Manual, approved: false}
---
apiVersion: operators.coreos.com/v1alpha1
kind: ClusterServiceVersion
metadata: {name: etcdoperator.v0.9.4, namespace: demo}
spec:
  displayName: etcd
  version: 0.9.4
  replaces: etcdoperator.v0.9.2
  installModes: [{type: OwnNamespace, supported: true}, {type: AllNamespaces, supported: false}]
  install: {strategy: deployment, spec: {deployments: []}}
`;

test('the five kinds answer to their short names with OLM\'s printer columns', async () => {
  await api.kubectlOk(['apply', '-f', '-'], OBJECTS);
  const status = { status: { phase: 'Succeeded', reason: 'InstallSucceeded', message: 'install strategy completed with no errors' } };
  await api.kubectlOk(['patch', 'csv', 'etcdoperator.v0.9.4', '-n', 'demo', '--subresource=status', '--type=merge', '-p', JSON.stringify(status)]);
  const header = (text: string) => text.split('\n')[0].split(/\s{2,}/).map((s) => s.trim());
  const csv = await api.kubectlOk(['get', 'csv', '-n', 'demo']);
  assert.deepEqual(header(csv), ['NAME', 'DISPLAY', 'VERSION', 'REPLACES', 'PHASE']);
  assert.match(csv, /^etcdoperator\.v0\.9\.4\s+etcd\s+0\.9\.4\s+etcdoperator\.v0\.9\.2\s+Succeeded$/m);
  assert.deepEqual(header(await api.kubectlOk(['get', 'sub', '-n', 'demo'])), ['NAME', 'PACKAGE', 'SOURCE', 'CHANNEL']);
  assert.match(await api.kubectlOk(['get', 'sub', '-n', 'demo']), /^etcd\s+etcd\s+demo-catalog\s+stable$/m);
  assert.deepEqual(header(await api.kubectlOk(['get', 'ip', '-n', 'demo'])), ['NAME', 'CSV', 'APPROVAL', 'APPROVED']);
  assert.match(await api.kubectlOk(['get', 'ip', '-n', 'demo']), /^install-abcde\s+etcdoperator\.v0\.9\.4\s+Manual\s+false$/m);
  assert.deepEqual(header(await api.kubectlOk(['get', 'catsrc', '-n', 'demo'])), ['NAME', 'DISPLAY', 'TYPE', 'PUBLISHER', 'AGE']);
  assert.match(await api.kubectlOk(['get', 'catsrc', '-n', 'demo']), /^demo-catalog\s+Demo Operators\s+configmap\s+bosun\s+\S+$/m);
  assert.match(await api.kubectlOk(['get', 'og', '-n', 'demo']), /^demo\s+\S+$/m);
  // The category olm lists them all.
  const all = await api.kubectlOk(['get', 'olm', '-n', 'demo', '-o', 'name']);
  for (const name of ['catalogsource.operators.coreos.com/demo-catalog', 'subscription.operators.coreos.com/etcd', 'installplan.operators.coreos.com/install-abcde', 'clusterserviceversion.operators.coreos.com/etcdoperator.v0.9.4', 'operatorgroup.operators.coreos.com/demo']) {
    assert.ok(all.includes(name), `${name} in:\n${all}`);
  }
});

test('bad objects are refused with the field named', async () => {
  const bad = await api.kubectl(['apply', '-f', '-'], { input: 'apiVersion: operators.coreos.com/v1alpha1\nkind: Subscription\nmetadata: {name: bad, namespace: demo}\nspec: {name: x, source: y, sourceNamespace: demo, installPlanApproval: Sometimes}\n' });
  assert.notEqual(bad.code, 0);
  assert.match(bad.stderr, /installPlanApproval/);
  const noSource = await api.kubectl(['apply', '-f', '-'], { input: 'apiVersion: operators.coreos.com/v1alpha1\nkind: CatalogSource\nmetadata: {name: bad, namespace: demo}\nspec: {sourceType: carrier-pigeon}\n' });
  assert.notEqual(noSource.code, 0);
  assert.match(noSource.stderr, /sourceType/);
});
