// The web console in a real browser (Debian's chromium, headless, driven by playwright-core)
// against the embedded API server with access control: the login page alone without a token; the
// overview; the channel changed and an update started on Cluster Settings, with the update graph
// and its risks; nodes cordoned and a Ready change arriving through the watch; a MachineDeployment
// scaled; the workload cluster's tree and kubeconfig; a user bound only to `view` in one namespace
// told what the cluster-wide pages need; OperatorHub saying that no package server is served; the
// API's own message shown when it refuses an action; axe-core finding no serious violations.
// Screenshots go to test-logs/console/.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'node:https';
import { readFileSync } from 'node:fs';
import type { Browser, Page } from 'playwright-core';
import { resources } from '../../src/kube/resources.js';
import { eventually } from '../helpers/eventually.js';
import { accessibilityViolations, launchBrowser, logIn, newPage, screenshot, skipWithoutChromium, startConsole, type ConsoleFixture } from './fixture.js';

let fixture: ConsoleFixture;
let browser: Browser;
let page: Page;

before(async () => {
  if (skipWithoutChromium) return;
  fixture = await startConsole();
  browser = await launchBrowser();
  ({ page } = await newPage(browser));
});

after(async () => {
  await browser?.close();
  await fixture?.stop();
});

/** A GET through the console's proxy from Node (no browser): status and body. */
function proxied(path: string, token?: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(`${fixture.url}${path}`, { rejectUnauthorized: false, headers: token ? { authorization: `Bearer ${token}` } : {} }, (res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

const t = (name: string, fn: () => Promise<void>) => test(name, { skip: skipWithoutChromium, timeout: 120_000 }, fn);

t('without credentials: only the login page, and the proxy answers 401 with a Status', async () => {
  await page.goto(fixture.url);
  await page.getByLabel('Bearer token').waitFor();
  assert.equal(await page.getByRole('navigation').count(), 0);
  assert.equal(await page.getByText('Cluster Operators').count(), 0);
  const refused = await proxied('/api/kubernetes/api/v1/nodes');
  assert.equal(refused.status, 401);
  assert.match(JSON.parse(refused.body).message, /log in/);
  // An Authorization: Bearer header is honoured, for automation.
  const allowed = await proxied('/apis/config.openshift.io/v1/clusterversions/version'.replace(/^/, '/api/kubernetes'), fixture.api.token);
  assert.equal(allowed.status, 200);
  assert.equal(JSON.parse(allowed.body).status.desired.version, '1.0.0');
  await page.getByLabel('Bearer token').fill('not-a-token');
  await page.getByRole('button', { name: 'Log in' }).click();
  await page.getByText('The API server does not accept this token').waitFor();
  await screenshot(page, 'login');
});

t('overview: version, channel, platform, API server, operators, pools and nodes Ready', async () => {
  await logIn(page, fixture.url, fixture.api.token);
  await page.getByRole('heading', { name: 'Overview' }).waitFor();
  await eventually('the cluster facts', async () => (await page.getByTestId('version').textContent())?.startsWith('1.0.0'));
  assert.equal(await page.getByTestId('channel').textContent(), 'stable-1.0');
  // The Infrastructure and the Nodes are fetched apart from the ClusterVersion: under load they may arrive later.
  await eventually('the API server URL', async () => (await page.getByTestId('api-url').textContent()) === 'https://127.0.0.1:6443');
  await eventually('the nodes Ready', async () => (await page.getByTestId('nodes-ready').textContent()) === '5 of 5 Ready');
  for (const name of ['cloud-controller-manager', 'cluster-api', 'machine-config', 'monitoring']) await page.getByRole('list', { name: 'Cluster operators' }).getByText(name).waitFor();
  await page.getByRole('cell', { name: 'rendered-worker-1' }).waitFor();
  // This cluster has no Prometheus: the charts say so instead of failing.
  await page.getByText('this cluster runs no Prometheus API').first().waitFor();
  await screenshot(page, 'overview');
});

t('cluster settings: the update graph with its conditional update and risk; the channel changed', async () => {
  await page.getByRole('link', { name: 'Cluster Settings' }).first().click();
  await page.getByRole('heading', { name: 'Update graph' }).waitFor();
  assert.equal(await page.locator('g.edge-recommended[data-version="1.0.1"]').count(), 1);
  assert.equal(await page.locator('g.edge-conditional.not-recommended[data-version="1.1.0"]').count(), 1);
  await page.getByRole('link', { name: 'https://example.com/bosun/risks/disk-pressure' }).waitFor();
  await page.getByTestId('assessment').getByText('The cluster is not updating.').waitFor();
  await page.getByLabel('Channel').selectOption('fast-1.0');
  await page.getByRole('button', { name: 'Save channel' }).click();
  await page.getByText('channel set to fast-1.0').waitFor();
  const cv = await fixture.admin.get(resources.clusterVersions, 'version');
  assert.equal(cv.spec?.channel, 'fast-1.0');
  await screenshot(page, 'cluster-settings');
});

t('starting an update: a conditional one only once its risks are acknowledged', async () => {
  await page.getByLabel(/^1\.1\.0/).check();
  assert.equal(await page.getByRole('button', { name: 'Start update' }).isDisabled(), true);
  await page.getByLabel('I have read the risks and want to update anyway').check();
  await page.getByRole('button', { name: 'Start update' }).click();
  await page.getByText('update to 1.1.0 requested').waitFor();
  const cv = await fixture.admin.get(resources.clusterVersions, 'version');
  assert.equal(cv.spec?.desiredUpdate?.version, '1.1.0');
  assert.match(cv.spec?.desiredUpdate?.image ?? '', /@sha256:/);
});

t('absent and null fields render: no updates offered, no history', async () => {
  // As the CVO writes it when the update service has no answer: availableUpdates null (an update,
  // not a merge patch, where null would remove the required field).
  const cv = await fixture.admin.get(resources.clusterVersions, 'version');
  const { conditionalUpdates: _gone, ...status } = cv.status!;
  await fixture.admin.update(resources.clusterVersions, { ...cv, status: { ...status, availableUpdates: null as unknown as [], history: [] } }, 'status');
  await page.getByText('No update can be started: no updates are offered on channel fast-1.0.').waitFor();
  await page.getByText('No history yet.').waitFor();
  assert.equal(await page.locator('g.edge-group').count(), 0);
});

t('nodes: cordon and uncordon; a Ready change arrives through the watch', async () => {
  await page.getByRole('link', { name: 'Nodes' }).click();
  await page.getByRole('button', { name: 'Cordon worker-1' }).click();
  await eventually('worker-1 cordoned', async () => (await fixture.admin.get(resources.nodes, 'worker-1')).spec?.unschedulable === true);
  await page.getByRole('button', { name: 'Uncordon worker-1' }).waitFor();
  await page.getByRole('button', { name: 'Uncordon worker-1' }).click();
  await eventually('worker-1 uncordoned', async () => !(await fixture.admin.get(resources.nodes, 'worker-1')).spec?.unschedulable);
  await fixture.admin.mergePatch(resources.nodes, 'worker-0', undefined, { status: { conditions: [{ type: 'Ready', status: 'False', reason: 'KubeletNotReady', message: 'kubelet stopped', lastHeartbeatTime: new Date().toISOString(), lastTransitionTime: new Date().toISOString() }] } }, 'status');
  await page.getByText('5 nodes, 4 Ready, live').waitFor();
  await screenshot(page, 'nodes');
  // Ages keep counting although the rows are drawn again only when their objects change.
  const ageOf = async () => (await page.getByRole('row').filter({ hasText: 'worker-1' }).getByRole('cell').nth(8).textContent()) ?? '';
  const before = await ageOf();
  assert.match(before, /^\d+[smhd]$/);
  await eventually(`worker-1's age to move on from ${before}`, async () => (await ageOf()) !== before, 70_000);
});

t('MachineDeployments: scaled from the page', async () => {
  await page.getByRole('link', { name: 'MachineSets and MachineDeployments' }).click();
  const row = page.getByRole('row', { name: /openshift-cluster-api worker/ }).first();
  await row.getByLabel('Replicas of worker').fill('3');
  await row.getByRole('button', { name: 'Scale' }).click();
  await page.getByText('scaled to 3').waitFor();
  const md = await fixture.admin.get(resources.machineDeployments, 'worker', 'openshift-cluster-api');
  assert.equal(md.spec?.replicas, 3);
  await screenshot(page, 'machinedeployments');
});

t('workload clusters: the describe tree and the kubeconfig download', async () => {
  await page.getByRole('link', { name: 'Workload Clusters' }).click();
  await page.getByRole('cell', { name: 'Cluster/bosun-local', exact: true }).waitFor();
  await page.getByRole('cell', { name: 'Cluster/team-cluster', exact: true }).waitFor();
  const download = page.waitForEvent('download');
  await page.getByRole('button', { name: 'Download the kubeconfig of bosun-local' }).click();
  const file = await (await download).path();
  assert.match(readFileSync(file, 'utf8'), /kind: Config/);
  // team-cluster has no kubeconfig Secret: the API's message is shown.
  await page.getByRole('button', { name: 'Download the kubeconfig of team-cluster' }).click();
  await page.getByText(/secrets "team-cluster-kubeconfig" not found/).waitFor();
  await screenshot(page, 'workload-clusters');
});

t('OperatorHub without a package server: the page says what is missing', async () => {
  // The payload's OLM CRDs are served here, OLM's package server (an aggregated API) is not.
  await page.getByRole('navigation').getByRole('link', { name: 'OperatorHub', exact: true }).click();
  await page.getByText('0 catalog sources, live').waitFor();
  await page.getByText('No package server here.').waitFor();
  await page.getByRole('navigation').getByRole('link', { name: 'Installed Operators', exact: true }).click();
  await page.getByText('No operator installed here.').waitFor();
});

t('accessibility: no serious or critical axe-core violations on the pages', async () => {
  for (const [link, heading] of [['Overview', 'Overview'], ['Cluster Settings', 'Cluster Settings'], ['Nodes', 'Nodes'], ['MachineSets and MachineDeployments', 'MachineSets and MachineDeployments'], ['Cluster Operators', 'Cluster Operators'], ['OperatorHub', 'OperatorHub'], ['Installed Operators', 'Installed Operators'], ['Workload Clusters', 'Workload Clusters']]) {
    await page.getByRole('navigation').getByRole('link', { name: link, exact: true }).click();
    await page.getByRole('heading', { name: heading, exact: true, level: 1 }).waitFor();
    // Loaded: no list still says it is loading (the watches stay open, so the network is never idle).
    await page.waitForFunction(() => !(globalThis as unknown as { document: { body: { textContent: string } } }).document.body.textContent.includes('Loading'));
    assert.deepEqual(await accessibilityViolations(page), [], `${link}`);
  }
  // Reachable by keyboard: from the top, Tab goes to "Skip to content", the namespace chooser, the
  // navigation's links and on into the page.
  await page.reload();
  await page.getByRole('heading', { name: 'Workload Clusters', level: 1 }).waitFor();
  const focused: string[] = [];
  for (let i = 0; i < 8; i++) {
    await page.keyboard.press('Tab');
    focused.push(await page.evaluate(() => {
      const el = (globalThis as unknown as { document: { activeElement: { id: string; textContent: string } } }).document.activeElement;
      return el.id || el.textContent.trim();
    }));
  }
  assert.deepEqual(focused.slice(0, 6), ['Skip to content', 'namespace', 'Show', 'Log out', 'Overview', 'Cluster Settings']);
});

t('a user bound only to view in one namespace sees its objects and is told what the cluster-wide pages need', async () => {
  await fixture.api.kubectlOk(['create', 'serviceaccount', 'viewer', '-n', 'team-a']);
  // The built-in ClusterRole view (the API server's bootstrap policy), bound in team-a only.
  await fixture.api.kubectlOk(['create', 'rolebinding', 'viewer', '-n', 'team-a', '--clusterrole=view', '--serviceaccount=team-a:viewer']);
  const token = (await fixture.api.kubectlOk(['create', 'token', 'viewer', '-n', 'team-a'])).trim();
  const viewer = await newPage(browser);
  try {
    const p = viewer.page;
    await logIn(p, fixture.url, token);
    await p.getByText('Logged in as system:serviceaccount:team-a:viewer').waitFor();
    await p.getByText('Your user may not list nodes.').waitFor();
    await p.getByText(/only a cluster role bound cluster-wide grants/).first().waitFor();
    await p.getByRole('navigation').getByRole('link', { name: 'MachineSets and MachineDeployments' }).click();
    await p.getByText('Your user may not list machinedeployments in all namespaces.').waitFor();
    await p.getByText(/choose a namespace you may read in the header/).first().waitFor();
    await p.getByLabel('Namespace').fill('team-a');
    await p.getByRole('button', { name: 'Show' }).click();
    await p.getByRole('row', { name: /team-a worker/ }).first().waitFor();
    // The API's message when it refuses an action.
    const row = p.getByRole('row', { name: /team-a worker/ }).first();
    await row.getByLabel('Replicas of worker').fill('2');
    await row.getByRole('button', { name: 'Scale' }).click();
    await p.getByText(/cannot patch resource "machinedeployments"/).waitFor();
    await screenshot(p, 'view-user');
    assert.deepEqual(await accessibilityViolations(p), []);
  } finally {
    await viewer.context.close();
  }
});

