// RenderDegraded is the render controller's own condition on the pool: a new controller process
// (a restart, a new leader) finds it there and keeps it as it is — no flap through False, no
// second RenderFailed event — and clears it once the bad MachineConfig is gone.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { KubeClient } from '../../src/kube/client.js';
import { InformerFactory } from '../../src/kube/informer.js';
import { loadKubeConfig } from '../../src/kube/kubeconfig.js';
import { resources } from '../../src/kube/resources.js';
import { runMachineConfigController } from '../../src/mco/controller/run.js';
import { builtInPools, controllerConfig, MCO, send, startMcoApiServer, waitFor } from './controller-fixtures.js';

const renderDegraded = (p: any) => (p?.status?.conditions ?? []).find((c: any) => c.type === 'RenderDegraded');

test('a restarted controller keeps RenderDegraded as the pool has it, and clears it when the config is fixed', { timeout: 60_000 }, async () => {
  const api = await startMcoApiServer();
  const kubeconfig = loadKubeConfig(api.kubeconfigPath);
  const client = new KubeClient(kubeconfig);
  const watching = new AbortController();
  const informers = new InformerFactory(client);
  const seen: string[] = [];
  informers.forResource(resources.machineConfigPools).on((_type, p) => {
    const c = renderDegraded(p);
    if (p.metadata.name === 'worker' && c && seen.at(-1) !== c.status) seen.push(c.status);
  });
  informers.start(watching.signal);
  const start = () => {
    const stop = new AbortController();
    const running = runMachineConfigController({ kubeconfig, signal: stop.signal, renderDelayMs: 50, leaderElection: false });
    return async () => {
      stop.abort();
      await running;
    };
  };
  let stopController = start();
  try {
    await send(api, 'POST', `${MCO}/controllerconfigs`, controllerConfig());
    for (const pool of builtInPools()) await send(api, 'POST', `${MCO}/machineconfigpools`, pool);
    await waitFor('the worker pool rendered', async () => (await client.get(resources.machineConfigPools, 'worker')).spec.configuration?.name, 20_000);
    await client.create(resources.machineConfigs, { apiVersion: 'machineconfiguration.openshift.io/v1', kind: 'MachineConfig', metadata: { name: '99-worker-bad', labels: { 'machineconfiguration.openshift.io/role': 'worker' } }, spec: { config: { ignition: { version: '3.2.0' }, storage: { files: [{ path: 'relative/path', contents: { source: 'data:,x' } }] } } } });
    const before = await waitFor('RenderDegraded=True', async () => {
      const c = renderDegraded(await client.get(resources.machineConfigPools, 'worker'));
      return c?.status === 'True' && c;
    }, 20_000);
    assert.match(before.message, /^Failed to render configuration for pool worker: .*99-worker-bad/);

    await stopController();
    stopController = start();
    // The new controller renders the pool at once (its informers replay it): give it time to.
    await new Promise((r) => setTimeout(r, 1500));
    const after = renderDegraded(await client.get(resources.machineConfigPools, 'worker'));
    assert.deepEqual(after, before, 'the condition is kept exactly, transition time included');
    const events = (await client.list(resources.events, 'default', { fieldSelector: 'reason=RenderFailed' })).items;
    assert.equal(events.length, 1, 'one RenderFailed event');
    assert.equal(events[0].count, 1, 'not repeated by the new controller');

    await client.delete(resources.machineConfigs, '99-worker-bad');
    await waitFor('RenderDegraded=False', async () => renderDegraded(await client.get(resources.machineConfigPools, 'worker'))?.status === 'False', 20_000);
    await waitFor('the informer to see it', async () => seen.at(-1) === 'False');
    assert.deepEqual(seen, ['False', 'True', 'False'], 'no flap across the restart');
  } finally {
    await stopController();
    watching.abort();
    await informers.stop();
    await api.stop();
  }
});
