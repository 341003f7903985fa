// npm run bench:console [-- N] — the web console with N simulated nodes (default 1,000, the node
// agent's scale mode: each renews its Lease and reports its status every 10 s, so the nodes list
// changes all the time), the API server in its own process, the console server in this one, and
// Debian's chromium (headless, playwright-core). Five rounds of:
//   - time to first render: a new tab opens the Nodes page and the table shows all N nodes Ready,
//     against the raw API list of the N nodes (GET /api/v1/nodes, this process, same moment);
//   - live update: one node cordoned through the API until its row says SchedulingDisabled on the
//     page, against the same change seen on a raw watch in this process.
// Reports medians and the ratios. Bounded: registration + about a minute.
import { mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import type { IncomingMessage } from 'node:http';
import { chromium } from 'playwright-core';
import { startApiServerProcess } from './lib/apiserver-process.js';
import { logger, setLogLevel } from '../src/common/log.js';
import { SimulatedNodes } from '../src/cluster/node-agent/scale.js';
import { KubeClient, loadKubeConfig } from '../src/kube/index.js';
import { resources } from '../src/kube/resources.js';
import { ConsoleServer } from '../src/console/server.js';
import { buildConsoleBundle } from '../src/console/bundle.js';
import { ServingCertificate } from '../src/kube/serving-certificate.js';

const N = Number(process.argv.slice(2).find((a) => /^\d+$/.test(a)) ?? 1000);
const ROUNDS = 5;
const CHROMIUM = process.env.CHROMIUM ?? '/usr/bin/chromium';
setLogLevel(process.env.BOSUN_LOG_LEVEL ?? 'warn');

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const ms = (x: number) => `${x.toFixed(0)} ms`;

const dataDir = mkdtempSync(join(tmpdir(), 'bosun-bench-console-'));
const server = await startApiServerProcess(dataDir);
const kubeconfig = loadKubeConfig(join(dataDir, 'kubeconfig'));
const client = new KubeClient(kubeconfig);
const token = kubeconfig.getCurrentUser()?.token ?? '';
if (!token) throw new Error('the API server\'s kubeconfig has no bearer token');
const sim = new SimulatedNodes(client, { count: N, log: logger('bench-console') });
const certificate = await ServingCertificate.load(undefined, ['127.0.0.1']);
const consoleServer = new ConsoleServer({ kubeconfig, client, listen: { host: '127.0.0.1', port: 0 }, certificate, bundle: await buildConsoleBundle() });
const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox', '--disable-dev-shm-usage', '--disable-gpu'] });
try {
  const registering = performance.now();
  await sim.start();
  console.log(`${N} simulated nodes registered in ${((performance.now() - registering) / 1000).toFixed(1)} s`);
  await consoleServer.start();
  const context = await browser.newContext({ ignoreHTTPSErrors: true, viewport: { width: 1360, height: 900 } });
  // Logged in: the token in the tab's session, as the login form leaves it.
  await context.addInitScript((t: string) => (globalThis as unknown as { sessionStorage: { setItem(k: string, v: string): void } }).sessionStorage.setItem('bosun-console-token', t), token);

  const first: number[] = [];
  const rawList: number[] = [];
  const live: number[] = [];
  const rawWatch: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    // Raw: the list the page starts with.
    let t0 = performance.now();
    const list = await client.list(resources.nodes);
    rawList.push(performance.now() - t0);
    if (list.items.length !== N) throw new Error(`expected ${N} nodes, listed ${list.items.length}`);

    // The page: a new tab to the Nodes page until its table shows every node Ready.
    const page = await context.newPage();
    t0 = performance.now();
    await page.goto(`${consoleServer.url}/#/nodes`);
    await page.getByText(`${N} nodes, ${N} Ready, live`).waitFor({ timeout: 120_000 });
    first.push(performance.now() - t0);

    // Live: a cordon through the API, seen by a raw watch and by the page.
    const name = `sim-node-${(round * 97) % N}`;
    const cordon = !(await client.get(resources.nodes, name)).spec?.unschedulable;
    const rv = (await client.list(resources.nodes, undefined, { limit: 1 })).metadata.resourceVersion;
    const watch: IncomingMessage = await client.open('GET', `/api/v1/nodes?watch=1&resourceVersion=${rv}&fieldSelector=metadata.name%3D${name}`);
    const seen = new Promise<number>((resolve) => {
      let buffered = '';
      watch.on('data', (chunk: Buffer) => {
        buffered += chunk;
        for (const line of buffered.split('\n').slice(0, -1)) if (line.includes('"unschedulable":true') === cordon || (!cordon && !line.includes('"unschedulable"'))) resolve(performance.now());
        buffered = buffered.slice(buffered.lastIndexOf('\n') + 1);
      });
    });
    const onPage = page.waitForFunction(([n, want]) => {
      type Row = { firstElementChild: { textContent: string | null } | null; textContent: string | null };
      const rows = [...(globalThis as unknown as { document: { querySelectorAll(s: string): Iterable<Row> } }).document.querySelectorAll('tbody tr')];
      const row = rows.find((r) => r.firstElementChild?.textContent === n);
      return Boolean(row) && (row!.textContent ?? '').includes('SchedulingDisabled') === want;
    }, [name, cordon] as const, { polling: 'raf', timeout: 60_000 });
    t0 = performance.now();
    await client.mergePatch(resources.nodes, name, undefined, { spec: { unschedulable: cordon ? true : null } });
    rawWatch.push((await seen) - t0);
    await onPage;
    live.push(performance.now() - t0);
    watch.destroy();
    await page.close();
  }
  const f = median(first);
  const r = median(rawList);
  const l = median(live);
  const w = median(rawWatch);
  console.log(`\nconsole with ${N} nodes, median of ${ROUNDS} rounds:`);
  console.log(`  first render of the Nodes page      ${ms(f)}   raw list of the nodes ${ms(r)}   ratio ${(f / r).toFixed(1)}`);
  console.log(`  a cordon shown on the page           ${ms(l)}   raw watch event       ${ms(w)}   ratio ${(l / Math.max(w, 1)).toFixed(1)}`);
  console.log(`  (rounds: first ${first.map(ms).join(', ')}; live ${live.map(ms).join(', ')})`);
} finally {
  await browser.close();
  await consoleServer.stop();
  certificate.close();
  await sim.stop();
  server.kill('SIGTERM');
  await new Promise((resolve) => server.once('exit', resolve));
  rmSync(dataDir, { recursive: true, force: true });
}
