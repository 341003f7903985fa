// OperatorHub in a real browser (Debian's chromium, headless, driven by playwright-core) against
// the embedded API server with access control and OLM's components as OLM's own tests run them
// (catalog and OLM operators, the package server behind its APIService, the Deployment and
// ReplicaSet controllers with a kubelet stand-in): a ConfigMap catalog in openshift-marketplace
// offers two packages; `demo` is installed from the page into one namespace with Manual approval
// (the namespace and its OperatorGroup made, the Subscription), its InstallPlan approved on
// Installed Operators and its CSV seen reaching Succeeded; `gizmo` is installed for all namespaces
// with Automatic approval (openshift-operators and its global OperatorGroup made); an install
// into a namespace whose OperatorGroup does not fit is refused in words; a namespace user with a
// Role for OLM's kinds only installs into their namespace; axe-core finds no serious violation on
// either page. Screenshots go to test-logs/console/.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Browser, Page } from 'playwright-core';
import { resources } from '../../src/kube/resources.js';
import type { KubeClient } from '../../src/kube/index.js';
import type { TestApiServer } from '../helpers/apiserver.js';
import { eventually } from '../helpers/eventually.js';
import { demoCatalog, olmCluster } from '../olm/fixture.js';
import { accessibilityViolations, launchBrowser, logIn, newPage, screenshot, serveConsole, skipWithoutChromium } from './fixture.js';

let api: TestApiServer;
let client: KubeClient;
let url: string;
let stop: () => Promise<void>;
let browser: Browser;
let page: Page;

before(async () => {
  if (skipWithoutChromium) return;
  const cluster = await olmCluster({}, { packageServer: true });
  ({ api, client } = cluster);
  const served = await serveConsole(api.kubeconfigPath, client);
  url = served.console.url;
  stop = async () => {
    await served.stop();
    await cluster.stop();
  };
  browser = await launchBrowser();
  ({ page } = await newPage(browser));
});

after(async () => {
  await browser?.close();
  await stop?.();
});

const t = (name: string, fn: () => Promise<void>) => test(name, { skip: skipWithoutChromium, timeout: 120_000 }, fn);

/** A catalog of two packages, both installable in one namespace or in all. */
const CATALOG = demoCatalog('demo', { stable: [{ version: '1.0.0' }], fast: [{ version: '1.0.0' }, { version: '1.1.0', replaces: 'demo.v1.0.0' }] }, 'stable') + demoCatalog('gizmo', { stable: [{ version: '0.3.0' }] });

async function openOperatorHub(): Promise<void> {
  await page.getByRole('navigation').getByRole('link', { name: 'OperatorHub', exact: true }).click();
  await page.getByRole('heading', { name: 'OperatorHub', level: 1 }).waitFor();
}

t('OperatorHub: the catalogs, live, and their packages', async () => {
  await logIn(page, url, api.token);
  await openOperatorHub();
  // No catalog yet: the page says so, and shows the catalog once it is there.
  await page.getByText('No packages: no catalog is READY here.').waitFor();
  await api.kubectlOk(['create', 'namespace', 'openshift-marketplace']);
  await api.kubectlOk(['apply', '-f', '-'], JSON.stringify({
    apiVersion: 'v1', kind: 'List', items: [
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'demo-catalog', namespace: 'openshift-marketplace' }, data: { 'catalog.yaml': CATALOG } },
      { apiVersion: 'operators.coreos.com/v1alpha1', kind: 'CatalogSource', metadata: { name: 'demo-catalog', namespace: 'openshift-marketplace' }, spec: { sourceType: 'configmap', configMap: 'demo-catalog', displayName: 'Demo Operators', publisher: 'bosun' } },
    ],
  }));
  const catalogRow = page.getByRole('row', { name: /openshift-marketplace demo-catalog Demo Operators bosun configmap READY/ });
  await catalogRow.waitFor();
  // The packages are read again once the catalog is READY.
  const demoRow = page.getByRole('row', { name: /^demo Demo demo 1\.0\.0 bosun Demo Operators \(openshift-marketplace\) stable fast, stable AllNamespaces, OwnNamespace/ });
  await demoRow.waitFor();
  await page.getByRole('button', { name: 'Install gizmo' }).waitFor();
});

t('install into one namespace with Manual approval: the namespace, an OperatorGroup for it and the Subscription made', async () => {
  await page.getByRole('button', { name: 'Install demo' }).click();
  await page.getByRole('heading', { name: 'Install Demo demo' }).waitFor();
  await page.getByLabel('fast (1.1.0)').check();
  await page.getByLabel('A specific namespace on the cluster').check();
  await page.getByLabel('Installed namespace').fill('team-ops');
  await page.getByLabel(/^Manual/).check();
  await screenshot(page, 'operatorhub');
  await page.getByRole('button', { name: 'Install', exact: true }).click();
  await page.getByText(/Subscription demo created in team-ops \(namespace team-ops created, OperatorGroup team-ops-\w+ created\)\. Its InstallPlan waits for your approval/).waitFor();
  const groups = await client.list(resources.operatorGroups, 'team-ops');
  assert.equal(groups.items.length, 1);
  assert.deepEqual(groups.items[0].spec?.targetNamespaces, ['team-ops']);
  const sub = await client.get(resources.subscriptions, 'demo', 'team-ops');
  assert.deepEqual(sub.spec, { name: 'demo', source: 'demo-catalog', sourceNamespace: 'openshift-marketplace', channel: 'fast', startingCSV: 'demo.v1.1.0', installPlanApproval: 'Manual' });
  // The same again: the API's own message.
  await page.getByRole('button', { name: 'Install', exact: true }).click();
  await page.getByText('subscriptions.operators.coreos.com "demo" already exists').waitFor();
});

t('Installed Operators: the InstallPlan waits; approved from the page, the CSV reaches Succeeded', async () => {
  await page.getByRole('link', { name: 'Installed Operators' }).first().click();
  await page.getByRole('heading', { name: 'Installed Operators', level: 1 }).waitFor();
  await page.getByText('1 install plan waits for approval.').waitFor();
  const approve = page.getByRole('button', { name: /^Approve install plan install-/ });
  await approve.waitFor();
  const plan = (await approve.getAttribute('aria-label'))!.replace('Approve install plan ', '');
  assert.equal((await client.get(resources.installPlans, plan, 'team-ops')).status?.phase, 'RequiresApproval');
  assert.equal(await client.read(resources.clusterServiceVersions, 'demo.v1.1.0', 'team-ops'), undefined);
  await page.getByText('No operator installed here.').waitFor();
  await screenshot(page, 'installed-operators-approval');
  await approve.click();
  await eventually('the plan approved', async () => (await client.get(resources.installPlans, plan, 'team-ops')).spec.approved === true);
  // Live: the plan completes and the CSV goes through its phases to Succeeded without a reload.
  await page.getByRole('row', { name: new RegExp(`team-ops ${plan} demo\\.v1\\.1\\.0 Manual Complete`) }).waitFor({ timeout: 60_000 });
  await page.getByRole('row', { name: /team-ops demo\.v1\.1\.0 Demo demo 1\.1\.0 Succeeded InstallSucceeded/ }).waitFor({ timeout: 60_000 });
  await page.getByRole('row', { name: /team-ops demo demo demo-catalog \(openshift-marketplace\) fast Manual AtLatestKnown demo\.v1\.1\.0/ }).waitFor();
  await screenshot(page, 'installed-operators');
});

t('install for all namespaces with Automatic approval: openshift-operators and its global OperatorGroup made; a namespace whose group does not fit refused', async () => {
  await openOperatorHub();
  await page.getByRole('button', { name: 'Install gizmo' }).click();
  await page.getByLabel('All namespaces on the cluster').check();
  assert.equal(await page.getByLabel('Installed namespace').inputValue(), 'openshift-operators');
  await page.getByLabel(/^Automatic/).check();
  await page.getByRole('button', { name: 'Install', exact: true }).click();
  await page.getByText('Subscription gizmo created in openshift-operators (namespace openshift-operators created, OperatorGroup global-operators created).').waitFor();
  const group = await client.get(resources.operatorGroups, 'global-operators', 'openshift-operators');
  assert.equal(group.spec?.targetNamespaces, undefined);
  await eventually('gizmo.v0.3.0 Succeeded', async () => (await client.read(resources.clusterServiceVersions, 'gizmo.v0.3.0', 'openshift-operators'))?.status?.phase === 'Succeeded', 60_000);
  // openshift-operators' group targets every namespace: an OwnNamespace install cannot use it.
  await page.getByLabel('A specific namespace on the cluster').check();
  await page.getByLabel('Installed namespace').fill('openshift-operators');
  await page.getByRole('button', { name: 'Install', exact: true }).click();
  await page.getByText('namespace openshift-operators already has OperatorGroup global-operators, which targets all namespaces; this install mode needs one that targets only openshift-operators').waitFor();
  await page.getByLabel('Installed namespace').fill('Not_A_Namespace');
  await page.getByRole('button', { name: 'Install', exact: true }).click();
  await page.getByText(/"Not_A_Namespace" is not a namespace name/).waitFor();
});

t('a namespace user with a Role for OLM\'s kinds (who may not read the namespace object) installs into that namespace', async () => {
  await api.kubectlOk(['create', 'namespace', 'team-inst']);
  await api.kubectlOk(['create', 'serviceaccount', 'installer', '-n', 'team-inst']);
  await api.kubectlOk(['create', 'role', 'installer', '-n', 'team-inst', '--verb=get,list,watch,create', '--resource=subscriptions.operators.coreos.com,operatorgroups.operators.coreos.com,installplans.operators.coreos.com,clusterserviceversions.operators.coreos.com,packagemanifests.packages.operators.coreos.com']);
  await api.kubectlOk(['create', 'rolebinding', 'installer', '-n', 'team-inst', '--role=installer', '--serviceaccount=team-inst:installer']);
  const token = (await api.kubectlOk(['create', 'token', 'installer', '-n', 'team-inst'])).trim();
  const other = await newPage(browser);
  try {
    const p = other.page;
    await logIn(p, url, token);
    await p.getByLabel('Namespace').fill('team-inst');
    await p.getByRole('button', { name: 'Show' }).click();
    await p.getByRole('navigation').getByRole('link', { name: 'OperatorHub', exact: true }).click();
    // The global catalog's packages are offered in the namespace; its CatalogSources are not the user's to list.
    await p.getByText('Your user may not list catalogsources in namespace team-inst.').waitFor();
    await p.getByRole('button', { name: 'Install demo' }).click();
    await p.getByLabel('A specific namespace on the cluster').check();
    assert.equal(await p.getByLabel('Installed namespace').inputValue(), 'team-inst');
    await p.getByRole('button', { name: 'Install', exact: true }).click();
    await p.getByText(/^Subscription demo created in team-inst \(OperatorGroup team-inst-\w+ created\)\.$/).waitFor();
    assert.equal((await client.get(resources.subscriptions, 'demo', 'team-inst')).spec.installPlanApproval, 'Automatic');
  } finally {
    await other.context.close();
  }
});

t('accessibility: no serious or critical axe-core violations on OperatorHub (with its install form) and Installed Operators', async () => {
  assert.deepEqual(await accessibilityViolations(page), [], 'OperatorHub');
  await page.getByRole('navigation').getByRole('link', { name: 'Installed Operators', exact: true }).click();
  await page.getByRole('heading', { name: 'Installed Operators', level: 1 }).waitFor();
  await page.getByRole('row', { name: /gizmo\.v0\.3\.0 .* Succeeded/ }).waitFor();
  assert.deepEqual(await accessibilityViolations(page), [], 'Installed Operators');
});
