// What the console's tests run against: the embedded API server with access control, the
// payload's CRDs, the objects the pages show (a cluster at 1.0.0 with a recommended and a
// conditional update, operators, pools, configs, nodes, Cluster API's local cluster), the console
// server in this process (a self-signed certificate, the admin kubeconfig as its own identity),
// and Debian's chromium driven by playwright-core (nothing downloads a browser).
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import type * as api from '../../src/api/index.js';
import { KubeClient, loadKubeConfig, type Obj } from '../../src/kube/index.js';
import { enableAccessControl } from '../../src/apiserver/auth/access-control.js';
import { repositoryRoot } from '../../src/cli/release.js';
import { ConsoleServer } from '../../src/console/server.js';
import { buildConsoleBundle } from '../../src/console/bundle.js';
import { ServingCertificate } from '../../src/kube/serving-certificate.js';
import { localClusterObjects } from '../../src/capi/local-cluster.js';
import { startTestApiServer, type TestApiServer } from '../helpers/apiserver.js';
import { createReleaseCrds } from '../helpers/cluster-objects.js';
import { eventually } from '../helpers/eventually.js';
import { clusterOperator, clusterVersion, machineConfig, node, pool } from '../cli/upgrade-status-fixtures.js';

export const CHROMIUM = process.env.CHROMIUM ?? '/usr/bin/chromium';
export const skipWithoutChromium = !existsSync(CHROMIUM) && process.env.CI !== 'true' ? `${CHROMIUM} is not installed (apt-get install chromium)` : false;

/** Where the test run writes its screenshots (the README's copies are in docs/images/). */
export const SCREENSHOTS = join(repositoryRoot, 'test-logs', 'console');

const ago = (minutes: number) => new Date(Date.now() - minutes * 60_000).toISOString().replace(/\.\d+Z$/, 'Z');
const release = (version: string) => `bosun.local/release@sha256:${version.replaceAll('.', '').padStart(64, 'a')}`;

/** A cluster at 1.0.0 on stable-1.0: 1.0.1 recommended, 1.1.0 conditional with a risk that applies. */
export function steadyClusterVersion(): api.ClusterVersion {
  const cv = clusterVersion('1.0.0', [{ state: 'Completed', version: '1.0.0', started: ago(90), completed: ago(80), image: release('1.0.0') }], { progressing: ['False', ago(80), '', 'Cluster version is 1.0.0'] });
  cv.spec = { ...cv.spec, channel: 'stable-1.0', upstream: 'http://127.0.0.1:8080/graph' };
  cv.status = {
    ...cv.status!,
    desired: { version: '1.0.0', image: release('1.0.0'), channels: ['candidate-1.0', 'fast-1.0', 'stable-1.0'] },
    conditions: [...(cv.status?.conditions ?? []), { type: 'Upgradeable', status: 'True', lastTransitionTime: ago(80) }, { type: 'RetrievedUpdates', status: 'True', lastTransitionTime: ago(80) }],
    availableUpdates: [{ version: '1.0.1', image: release('1.0.1') }],
    conditionalUpdates: [{
      release: { version: '1.1.0', image: release('1.1.0') },
      risks: [{ name: 'DiskPressureReboots', message: 'Nodes under disk pressure may not come back after the 1.1.0 reboot.', url: 'https://example.com/bosun/risks/disk-pressure', matchingRules: [{ type: 'Always' }] }],
      conditions: [{ type: 'Recommended', status: 'False', reason: 'DiskPressureReboots', message: 'Nodes under disk pressure may not come back after the 1.1.0 reboot.', lastTransitionTime: ago(70) }],
    }],
  };
  return cv;
}

export function clusterObjects(): Obj[] {
  const ops = ['cloud-controller-manager', 'cluster-api', 'machine-config', 'monitoring'].map((name) => clusterOperator(name, { version: '1.0.0' }));
  const pools = [pool('master', 'rendered-master-1'), pool('worker', 'rendered-worker-1')].map((p, i) => ({
    ...p, status: { configuration: { name: p.spec!.configuration!.name }, machineCount: i ? 2 : 3, readyMachineCount: i ? 2 : 3, updatedMachineCount: i ? 2 : 3, degradedMachineCount: 0, unavailableMachineCount: 0,
      conditions: [{ type: 'Updated', status: 'True', lastTransitionTime: ago(80) }, { type: 'Updating', status: 'False', lastTransitionTime: ago(80) }, { type: 'Degraded', status: 'False', lastTransitionTime: ago(80) }] },
  }));
  const nodes = [...['master-0', 'master-1', 'master-2'].map((n) => node(n, 'master', { current: 'rendered-master-1' })), ...['worker-0', 'worker-1'].map((n) => node(n, 'worker', { current: 'rendered-worker-1' }))];
  for (const n of nodes) n.status = { ...n.status, nodeInfo: { kubeletVersion: 'v1.33.0', architecture: 'amd64', bootID: '', containerRuntimeVersion: '', kernelVersion: '', kubeProxyVersion: '', machineID: '', operatingSystem: 'linux', osImage: 'bosun', systemUUID: '' } };
  const infrastructure: api.Infrastructure = {
    apiVersion: 'config.openshift.io/v1', kind: 'Infrastructure', metadata: { name: 'cluster' }, spec: { platformSpec: { type: 'External', external: { platformName: 'local' } } },
    status: { infrastructureName: 'bosun-local', apiServerURL: 'https://127.0.0.1:6443', apiServerInternalURI: 'https://127.0.100.1:6443', platform: 'External', platformStatus: { type: 'External', external: { cloudControllerManager: { state: 'External' } } }, controlPlaneTopology: 'HighlyAvailable', infrastructureTopology: 'HighlyAvailable' },
  } as api.Infrastructure;
  const local = (namespace: string, name: string, replicas: number) => localClusterObjects({
    name, namespace, apiServer: { host: '127.0.0.1', port: 6443 }, version: 'v1.33.0', masters: namespace === 'openshift-cluster-api' ? [{ name: 'master-0', instanceType: 'small', zone: 'local-a' }] : [], workers: { replicas, instanceType: 'small' },
  });
  return [
    { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'openshift-cluster-api' } },
    { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'team-a' } },
    steadyClusterVersion(), infrastructure, ...ops, ...pools, machineConfig('rendered-master-1', '1.0.0'), machineConfig('rendered-worker-1', '1.0.0'), ...nodes,
    ...local('openshift-cluster-api', 'bosun-local', 2), ...local('team-a', 'team-cluster', 1),
    { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'bosun-local-kubeconfig', namespace: 'openshift-cluster-api' }, data: { value: Buffer.from('apiVersion: v1\nkind: Config\nclusters: []\n').toString('base64') } },
  ] as Obj[];
}

/** Creates each object, then its status through the status subresource. */
export async function load(client: KubeClient, objects: Obj[]): Promise<void> {
  for (const o of objects) {
    const { status, ...rest } = o;
    const ref = await client.resourceFor(o.apiVersion, o.kind);
    await client.create(ref, rest as Obj as api.Unstructured);
    if (status && o.kind !== 'Secret') await client.mergePatch(ref, o.metadata.name, o.metadata.namespace, { status }, 'status');
  }
}

export interface ConsoleFixture {
  api: TestApiServer;
  admin: KubeClient;
  console: ConsoleServer;
  url: string;
  stop(): Promise<void>;
}

/** The API server with access control, the payload's CRDs, `objects`, and the console in front of it. */
export async function startConsole(objects: Obj[] = clusterObjects()): Promise<ConsoleFixture> {
  const api = await startTestApiServer();
  await enableAccessControl(api.server, api.dataDir);
  const kubeconfig = loadKubeConfig(api.kubeconfigPath);
  const admin = new KubeClient(kubeconfig);
  await createReleaseCrds(admin, `${repositoryRoot}release-payload`);
  await eventually('the payload\'s CRDs served', async () => {
    await admin.list(await admin.resourceFor('cluster.x-k8s.io/v1beta2', 'MachineDeployment'));
    await admin.list(await admin.resourceFor('config.openshift.io/v1', 'ClusterVersion'));
    return true;
  });
  await load(admin, objects);
  const served = await serveConsole(api.kubeconfigPath, admin);
  return {
    api, admin, console: served.console, url: served.console.url,
    async stop() {
      await served.stop();
      await api.stop();
    },
  };
}

/** The console server in this process in front of the API server of `kubeconfigPath` (a self-signed certificate). */
export async function serveConsole(kubeconfigPath: string, client: KubeClient): Promise<{ console: ConsoleServer; stop(): Promise<void> }> {
  const certificate = await ServingCertificate.load(undefined, ['127.0.0.1']);
  const server = new ConsoleServer({ kubeconfig: loadKubeConfig(kubeconfigPath), client, listen: { host: '127.0.0.1', port: 0 }, certificate, bundle: await buildConsoleBundle() });
  await server.start();
  return {
    console: server,
    async stop() {
      await server.stop();
      certificate.close();
    },
  };
}

export async function launchBrowser(): Promise<Browser> {
  const { chromium } = await import('playwright-core');
  // As root chromium needs --no-sandbox; the pages it opens are the console's own.
  return chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox', '--disable-dev-shm-usage', '--disable-gpu'] });
}

export async function newPage(browser: Browser): Promise<{ context: BrowserContext; page: Page }> {
  // bypassCSP: the accessibility check injects axe-core, which the console's policy would refuse.
  const context = await browser.newContext({ ignoreHTTPSErrors: true, bypassCSP: true, viewport: { width: 1360, height: 900 }, acceptDownloads: true });
  return { context, page: await context.newPage() };
}

export async function logIn(page: Page, url: string, token: string): Promise<void> {
  await page.goto(url);
  await page.getByLabel('Bearer token').fill(token);
  await page.getByRole('button', { name: 'Log in' }).click();
  await page.getByText('Logged in as').waitFor();
}

export async function screenshot(page: Page, name: string): Promise<void> {
  mkdirSync(SCREENSHOTS, { recursive: true });
  await page.screenshot({ path: join(SCREENSHOTS, `${name}.png`), fullPage: true });
}

/** axe-core's serious and critical violations on the page as it is now. */
export async function accessibilityViolations(page: Page): Promise<string[]> {
  await page.addScriptTag({ path: join(repositoryRoot, 'node_modules', 'axe-core', 'axe.min.js') });
  const result = await page.evaluate(async () => {
    const axe = (globalThis as unknown as { axe: { run: (ctx: unknown, opts: unknown) => Promise<{ violations: { id: string; impact: string; help: string; nodes: { target: string[] }[] }[] }> } }).axe;
    return axe.run((globalThis as unknown as { document: unknown }).document, { resultTypes: ['violations'] });
  });
  return result.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => `${v.id} (${v.impact}): ${v.help} at ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
}
