// The update's progress on Cluster Settings, live, assessed as `bosun adm upgrade status` assesses
// it: a cluster updating 1.0.0 → 1.0.1 with master-0 draining and the worker pool paused
// (test/cli/upgrade-status-fixtures.ts's pausedWorkers, the state whose text is checked against
// oc's), loaded into the embedded API server; the page's assessment and its text are the
// command's; then machine-config reports 1.0.1 and the page follows through its watch.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Browser, Page } from 'playwright-core';
import type { Obj } from '../../src/kube/index.js';
import { resources } from '../../src/kube/resources.js';
import { readClusterState } from '../../src/cli/adm-upgrade-status.js';
import { upgradeStatus } from '../../src/views/upgrade-status/status.js';
import { pausedWorkers } from '../cli/upgrade-status-fixtures.js';
import { launchBrowser, logIn, newPage, screenshot, skipWithoutChromium, startConsole, type ConsoleFixture } from './fixture.js';

let fixture: ConsoleFixture;
let browser: Browser;
let page: Page;

before(async () => {
  if (skipWithoutChromium) return;
  const s = pausedWorkers(Date.now());
  fixture = await startConsole([s.cv, ...s.operators, ...s.pools, ...s.machineConfigs, ...s.nodes] as unknown as Obj[]);
  browser = await launchBrowser();
  ({ page } = await newPage(browser));
});

after(async () => {
  await browser?.close();
  await fixture?.stop();
});

/** The lines of the report that do not depend on the moment it is made (no durations). */
const timeless = (text: string) => text.split('\n').filter((line) => !/Duration|SINCE|^\S*\s+\d+[smh]|Est\./.test(line) && !/^\s*\d+m?\d*s\s/.test(line));

test('progress: the same assessment as adm upgrade status, live', { skip: skipWithoutChromium, timeout: 120_000 }, async () => {
  await logIn(page, fixture.url, fixture.api.token);
  await page.getByRole('link', { name: 'Cluster Settings' }).first().click();
  await page.getByTestId('assessment').getByText('Progressing').waitFor();
  await page.getByTestId('operators-updated').getByText('2/3 updated; updating: machine-config').waitFor();
  await page.getByText(/master: Progressing, 0\/1 nodes updated \(0%\) — now draining master-0/).waitFor();
  await page.getByText('paused: its nodes will not be updated until it is unpaused').waitFor();
  await page.locator('ul.insights').getByText("Outdated nodes in a paused pool 'worker' will not be updated").waitFor();
  await page.getByText('As bosun adm upgrade status prints it').click();
  const shown = (await page.getByTestId('upgrade-status-text').textContent()) ?? '';
  const expected = upgradeStatus(await readClusterState(fixture.admin), 'none', Date.now());
  assert.deepEqual(timeless(shown), timeless(expected));
  assert.match(shown, /Target Version: {2}1\.0\.1 \(from 1\.0\.0\)/);
  await screenshot(page, 'update-progress');

  // machine-config reports the new release: the page follows the watch.
  const mco = await fixture.admin.get(resources.clusterOperators, 'machine-config');
  const now = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
  await fixture.admin.mergePatch(resources.clusterOperators, 'machine-config', undefined, {
    status: { versions: [{ name: 'operator', version: '1.0.1' }], conditions: (mco.status?.conditions ?? []).map((c) => (c.type === 'Progressing' ? { ...c, status: 'False', lastTransitionTime: now, message: '' } : c)) },
  }, 'status');
  await page.getByTestId('operators-updated').getByText('3/3 updated').waitFor();
});
