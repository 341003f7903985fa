// `bosun adm operators` against OLM's operators and package server on the real API server: list
// what the catalogs offer, install with Manual approval (an OperatorGroup made when there is none),
// approve by Subscription, list what is installed, uninstall (the CRD stays); bad input is refused
// with a message and a non-zero exit; --help says what the README says.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { TestApiServer } from '../helpers/apiserver.js';
import { runBosun } from '../helpers/cli.js';
import { eventually } from '../helpers/eventually.js';
import { demoCatalog, getJson, olmCluster } from './fixture.js';

let api: TestApiServer;
let stop: () => Promise<void>;
before(async () => {
  ({ api, stop } = await olmCluster({}, { packageServer: true }));
  await api.kubectlOk(['apply', '-f', '-'], JSON.stringify({
    apiVersion: 'v1', kind: 'List', items: [
      ...['openshift-marketplace', 'demo'].map((name) => ({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } })),
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'bosun-operators', namespace: 'openshift-marketplace' }, data: { 'catalog.yaml': demoCatalog('demo', { stable: [{ version: '1.0.0' }, { version: '1.1.0', replaces: 'demo.v1.0.0' }] }) } },
      { apiVersion: 'operators.coreos.com/v1alpha1', kind: 'CatalogSource', metadata: { name: 'bosun-operators', namespace: 'openshift-marketplace' }, spec: { sourceType: 'configmap', configMap: 'bosun-operators', displayName: 'bosun Operators' } },
    ],
  }));
});
after(() => stop?.());

const bosun = (args: string[]) => runBosun(['adm', 'operators', ...args, '--kubeconfig', api.kubeconfigPath]);

test('list, install with Manual approval, approve, list installed, uninstall', async () => {
  const listed = await eventually('the package offered', async () => { const r = await bosun(['list', '-n', 'demo']); return r.code === 0 && r.stdout.includes('demo') && r.stdout; });
  assert.match(listed, /^PACKAGE\s+CATALOG\s+DEFAULT CHANNEL\s+CHANNELS$/m);
  assert.match(listed, /^demo\s+openshift-marketplace\/bosun-operators\s+stable\s+stable \(demo\.v1\.1\.0\)$/m);
  const installed = await bosun(['install', 'demo', '-n', 'demo', '--channel', 'stable', '--approval', 'Manual']);
  assert.equal(installed.code, 0, installed.stderr);
  assert.equal(installed.stdout, 'operatorgroup.operators.coreos.com/demo created (targets: demo)\nsubscription.operators.coreos.com/demo created (package demo, channel stable, catalog openshift-marketplace/bosun-operators, approval Manual)\n');
  const approved = await eventually('a plan to approve', async () => { const r = await bosun(['approve', 'demo', '-n', 'demo']); return r.code === 0 && r; });
  assert.match(approved.stdout, /^installplan\.operators\.coreos\.com\/install-\w+ approved \(installs demo\.v1\.1\.0\)\n$/);
  await eventually('installed', async () => (await getJson(api, ['csv', 'demo.v1.1.0', '-n', 'demo']))?.status?.phase === 'Succeeded', 30_000);
  const list = await eventually('listed as installed', async () => { const r = await bosun(['list', '-n', 'demo', '--installed']); return /AtLatestKnown/.test(r.stdout) && r.stdout; });
  assert.match(list, /^SUBSCRIPTION\s+PACKAGE\s+CHANNEL\s+CSV\s+PHASE\s+STATE\n^demo\s+demo\s+stable\s+demo\.v1\.1\.0\s+Succeeded\s+AtLatestKnown$/m);
  const removed = await bosun(['uninstall', 'demo', '-n', 'demo']);
  assert.equal(removed.code, 0, removed.stderr);
  assert.equal(removed.stdout, 'subscription.operators.coreos.com/demo deleted\nclusterserviceversion.operators.coreos.com/demo.v1.1.0 deleted\n');
  assert.ok(await getJson(api, ['crd', 'widgets.demo.bosun.io']), 'the CRD stays');
});

test('bad input: an unknown package, a bad approval mode, nothing to approve or uninstall', async () => {
  const unknown = await bosun(['install', 'nope', '-n', 'demo']);
  assert.equal(unknown.code, 1);
  assert.match(unknown.stderr, /no catalog offers package "nope" in namespace demo/);
  const mode = await bosun(['install', 'demo', '-n', 'demo', '--approval', 'Sometimes']);
  assert.equal(mode.code, 1);
  assert.match(mode.stderr, /--approval is Automatic or Manual, got "Sometimes"/);
  const approve = await bosun(['approve', 'nothing', '-n', 'demo']);
  assert.equal(approve.code, 1);
  assert.match(approve.stderr, /no InstallPlan or Subscription "nothing" in namespace demo/);
  const uninstall = await bosun(['uninstall', 'nothing', '-n', 'demo']);
  assert.equal(uninstall.code, 1);
  assert.match(uninstall.stderr, /no Subscription to package "nothing" in namespace demo/);
});

test('--help of each subcommand has its example', async () => {
  for (const [sub, example] of [['list', 'bosun adm operators list -n demo'], ['install', 'bosun adm operators install demo -n demo --channel stable --approval Manual'], ['approve', 'bosun adm operators approve demo -n demo'], ['uninstall', 'bosun adm operators uninstall demo -n demo']]) {
    const r = await runBosun(['adm', 'operators', sub, '--help']);
    assert.equal(r.code, 0);
    assert.ok(r.stdout.includes(example), `${sub} --help:\n${r.stdout}`);
  }
});
