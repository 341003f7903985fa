// The machine-config controller against the embedded API server: templates from the
// ControllerConfig, the worker pool rendered and rolled out at most maxUnavailable nodes at a time
// as the test plays the daemon (marks targeted nodes Done), RenderDegraded for an invalid and an
// unreconcilable MachineConfig (naming it, changing nothing else) and its clearing, garbage
// collection of unreferenced rendered configs (never one a node references), KubeletConfigs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadKubeConfig } from '../../src/kube/kubeconfig.js';
import { runMachineConfigController } from '../../src/mco/controller/run.js';
import { decodeDataUrl, encodeDataUrl } from '../../src/ignition/data-url.js';
import type { TestApiServer } from '../helpers/apiserver.js';
import { builtInPools, controllerConfig, getJson, MCO, send, startMcoApiServer, waitFor, workerNode } from './controller-fixtures.js';

const CURRENT = 'machineconfiguration.openshift.io/currentConfig';
const DESIRED = 'machineconfiguration.openshift.io/desiredConfig';
const STATE = 'machineconfiguration.openshift.io/state';
const SSH_KEY = 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIBosunTest admin@example.com';
const GRACE_MS = 400;

async function withController(fn: (api: TestApiServer) => Promise<void>, workerMaxUnavailable?: number | string): Promise<void> {
  const api = await startMcoApiServer();
  const stop = new AbortController();
  let running: Promise<void> | undefined;
  try {
    await send(api, 'POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'openshift-config' } });
    await send(api, 'POST', '/api/v1/namespaces/openshift-config/secrets', {
      apiVersion: 'v1', kind: 'Secret', metadata: { name: 'pull-secret', namespace: 'openshift-config' }, type: 'kubernetes.io/dockerconfigjson',
      data: { '.dockerconfigjson': Buffer.from('{"auths":{"quay.io":{"auth":"Ym9zdW46dGVzdA=="}}}').toString('base64') },
    });
    await send(api, 'POST', `${MCO}/controllerconfigs`, controllerConfig({ pullSecret: { namespace: 'openshift-config', name: 'pull-secret' } }));
    for (const pool of builtInPools(workerMaxUnavailable)) await send(api, 'POST', `${MCO}/machineconfigpools`, pool);
    running = runMachineConfigController({ kubeconfig: loadKubeConfig(api.kubeconfigPath), signal: stop.signal, sshAuthorizedKeys: [SSH_KEY], renderedGCGraceMs: GRACE_MS, renderDelayMs: 50, leaderElection: false, controllerVersion: 'test-version' });
    await fn(api);
  } finally {
    stop.abort();
    await running;
    await api.stop();
  }
}

const pool = (api: TestApiServer, name: string) => getJson(api, `${MCO}/machineconfigpools/${name}`);
const cond = (p: any, type: string) => (p.status?.conditions ?? []).find((c: any) => c.type === type);
const renderedNames = async (api: TestApiServer, poolName: string) =>
  ((await getJson(api, `${MCO}/machineconfigs`)).items as any[]).map((m) => m.metadata.name as string).filter((n) => n.startsWith(`rendered-${poolName}-`)).sort();
const exists = async (api: TestApiServer, path: string) => (await api.request('GET', path)).status === 200;

/** Waits for the worker pool to settle: templates in its sources, all nodes updated. */
async function settledWorker(api: TestApiServer, nodes: number): Promise<any> {
  return waitFor('the worker pool to be rendered and updated', async () => {
    const p = await pool(api, 'worker');
    const sources = (p.spec.configuration?.source ?? []).map((s: any) => s.name);
    return ['00-worker', '01-worker-container-runtime', '01-worker-kubelet', '99-worker-ssh'].every((s) => sources.includes(s))
      && p.status?.machineCount === nodes && p.status?.updatedMachineCount === nodes && cond(p, 'Updated')?.status === 'True'
      && p.status.configuration?.name === p.spec.configuration.name && p;
  });
}

test('a new worker MachineConfig renders a new config and rolls out at most maxUnavailable nodes at a time; old rendered configs are collected once unreferenced', async () => {
  await withController(async (api) => {
    const initial = await waitFor('a rendered worker config', async () => {
      const p = await pool(api, 'worker');
      return (p.spec.configuration?.source ?? []).some((s: any) => s.name === '99-worker-ssh') && p.spec.configuration.name;
    });
    const zones = ['a', 'a', 'b', 'b', 'c'];
    for (const [i, zone] of zones.entries()) await send(api, 'POST', '/api/v1/nodes', workerNode(`worker-${i}`, initial, zone));
    const settled = await settledWorker(api, zones.length);
    const r1 = settled.spec.configuration.name as string;
    assert.equal(r1, initial);

    // The rendered config: owner, annotations, content from the templates and the pull secret.
    const rendered = await getJson(api, `${MCO}/machineconfigs/${r1}`);
    assert.equal(rendered.metadata.ownerReferences[0].kind, 'MachineConfigPool');
    assert.equal(rendered.metadata.ownerReferences[0].name, 'worker');
    assert.equal(rendered.metadata.annotations['machineconfiguration.openshift.io/generated-by-controller-version'], 'test-version');
    const files = rendered.spec.config.storage.files as any[];
    assert.equal(decodeDataUrl(files.find((f) => f.path === '/var/lib/kubelet/config.json').contents.source).toString(), '{"auths":{"quay.io":{"auth":"Ym9zdW46dGVzdA=="}}}');
    assert.deepEqual(rendered.spec.config.passwd.users, [{ name: 'core', sshAuthorizedKeys: [SSH_KEY] }]);

    await send(api, 'PATCH', `${MCO}/machineconfigpools/worker`, { spec: { maxUnavailable: 2 } }, 'application/merge-patch+json');
    await send(api, 'POST', `${MCO}/machineconfigs`, {
      apiVersion: 'machineconfiguration.openshift.io/v1', kind: 'MachineConfig',
      metadata: { name: '50-worker-motd', labels: { 'machineconfiguration.openshift.io/role': 'worker' } },
      spec: { config: { ignition: { version: '3.2.0' }, storage: { files: [{ path: '/etc/motd', mode: 420, contents: { source: encodeDataUrl('managed by bosun\n') } }] } } },
    });
    const r2 = await waitFor('the worker pool to target a new rendered config', async () => {
      const name = (await pool(api, 'worker')).spec.configuration.name;
      return name !== r1 && name;
    });
    assert.match(r2, /^rendered-worker-[0-9a-f]{32}$/);

    // Until the daemon moves, two nodes are targeted and the other three carry UpdateInProgress.
    const hasTaint = (n: any) => (n.spec?.taints ?? []).some((t: any) => t.key === 'UpdateInProgress' && t.effect === 'PreferNoSchedule');
    await waitFor('untargeted nodes to be tainted UpdateInProgress', async () => {
      const nodes = (await getJson(api, '/api/v1/nodes')).items as any[];
      return nodes.every((n) => (n.metadata.annotations[DESIRED] === r2) !== hasTaint(n)) && nodes.filter(hasTaint).length === 3;
    });

    // Play the daemon until every node is on r2, watching the invariants on the way.
    let most = 0;
    const order: string[] = [];
    await waitFor('every node to be updated to the new config', async () => {
      const nodes = (await getJson(api, '/api/v1/nodes')).items as any[];
      const inFlight = nodes.filter((n) => n.metadata.annotations[DESIRED] === r2 && n.metadata.annotations[CURRENT] !== r2);
      most = Math.max(most, inFlight.length);
      assert.ok(inFlight.length <= 2, `more than maxUnavailable nodes updating: ${inFlight.map((n) => n.metadata.name)}`);
      if (nodes.some((n) => n.metadata.annotations[CURRENT] === r1 || n.metadata.annotations[DESIRED] === r1)) {
        assert.ok(await exists(api, `${MCO}/machineconfigs/${r1}`), `${r1} was deleted while a node still references it`);
      }
      for (const n of inFlight) {
        order.push(`${n.metadata.labels['topology.kubernetes.io/zone']}:${n.metadata.name}`);
        await send(api, 'PATCH', `/api/v1/nodes/${n.metadata.name}`, { metadata: { annotations: { [CURRENT]: r2, [STATE]: 'Done' } } }, 'application/merge-patch+json');
      }
      return nodes.every((n) => n.metadata.annotations[CURRENT] === r2) || undefined;
    }, 20_000);
    assert.equal(most, 2, 'the rollout used the two slots it had');
    assert.equal(order.length, 5);
    // The first pair spans two zones (a then b): a rollout never takes two nodes of one zone first.
    assert.deepEqual(order.slice(0, 2).map((o) => o.split(':')[0]).sort(), ['a', 'b']);

    const done = await settledWorker(api, zones.length);
    await waitFor('the UpdateInProgress taints to go', async () => ((await getJson(api, '/api/v1/nodes')).items as any[]).every((n) => !hasTaint(n)));
    assert.equal(done.status.configuration.name, r2);
    assert.equal(cond(done, 'Updating').status, 'False');
    assert.match(cond(done, 'Updated').message, new RegExp(`All nodes are updated with MachineConfig ${r2}`));
    // r1 is referenced by nothing now: collected after the grace period; r2 stays.
    await waitFor(`${r1} to be garbage-collected`, async () => !(await exists(api, `${MCO}/machineconfigs/${r1}`)), 5_000);
    assert.deepEqual(await renderedNames(api, 'worker'), [r2]);
  }, 1);
});

test('an invalid or unreconcilable MachineConfig sets RenderDegraded naming it and changes nothing else; deleting it clears the condition; a bad maxUnavailable degrades; a paused pool renders without rolling out', async () => {
  await withController(async (api) => {
    const initial = await waitFor('a rendered worker config', async () => {
      const p = await pool(api, 'worker');
      return (p.spec.configuration?.source ?? []).some((s: any) => s.name === '99-worker-ssh') && p.spec.configuration.name;
    });
    for (const i of [0, 1]) await send(api, 'POST', '/api/v1/nodes', workerNode(`worker-${i}`, initial, 'a'));
    const before = await settledWorker(api, 2);
    const target = before.spec.configuration.name;

    const cases = [
      { name: '60-worker-bad', message: /MachineConfig 60-worker-bad is invalid: spec\.config\.storage\.files\[0\]\.path: "etc\/relative" is not absolute/, storage: { files: [{ path: 'etc/relative', contents: { source: 'data:,x' } }] } },
      { name: '70-worker-dirs', message: /MachineConfig 70-worker-dirs: change cannot be applied to running nodes of pool worker: spec\.config\.storage\.directories/, storage: { directories: [{ path: '/var/lib/extra' }] } },
    ];
    for (const c of cases) {
      await send(api, 'POST', `${MCO}/machineconfigs`, {
        apiVersion: 'machineconfiguration.openshift.io/v1', kind: 'MachineConfig',
        metadata: { name: c.name, labels: { 'machineconfiguration.openshift.io/role': 'worker' } },
        spec: { config: { ignition: { version: '3.2.0' }, storage: c.storage } },
      });
      const degraded = await waitFor(`RenderDegraded for ${c.name}`, async () => {
        const p = await pool(api, 'worker');
        return cond(p, 'RenderDegraded')?.status === 'True' && p;
      });
      assert.match(cond(degraded, 'RenderDegraded').message, c.message);
      assert.equal(cond(degraded, 'Degraded').status, 'True');
      assert.match(cond(degraded, 'Degraded').message, new RegExp(c.name));
      // Nothing else moved: same target, no new rendered config, nodes untouched, master unaffected.
      assert.equal(degraded.spec.configuration.name, target);
      assert.deepEqual(await renderedNames(api, 'worker'), [target]);
      for (const n of (await getJson(api, '/api/v1/nodes')).items) assert.equal(n.metadata.annotations[DESIRED], target);
      assert.equal(cond(await pool(api, 'master'), 'RenderDegraded')?.status, 'False');

      await send(api, 'DELETE', `${MCO}/machineconfigs/${c.name}`);
      const cleared = await waitFor(`RenderDegraded to clear after deleting ${c.name}`, async () => {
        const p = await pool(api, 'worker');
        return cond(p, 'RenderDegraded')?.status === 'False' && p;
      });
      assert.equal(cond(cleared, 'Degraded').status, 'False');
      assert.equal(cleared.spec.configuration.name, target);
    }

    // A maxUnavailable the controller cannot read: Degraded (InvalidSpec), nothing rolls.
    await send(api, 'PATCH', `${MCO}/machineconfigpools/worker`, { spec: { maxUnavailable: 'lots' } }, 'application/merge-patch+json');
    const invalid = await waitFor('Degraded for a bad maxUnavailable', async () => {
      const p = await pool(api, 'worker');
      return cond(p, 'Degraded')?.reason === 'InvalidSpec' && p;
    });
    assert.match(cond(invalid, 'Degraded').message, /spec\.maxUnavailable must be an integer or a percentage like "30%", not "lots"/);

    // A paused pool renders but does not roll out; unpausing resumes.
    await send(api, 'PATCH', `${MCO}/machineconfigpools/worker`, { spec: { maxUnavailable: 1, paused: true } }, 'application/merge-patch+json');
    await send(api, 'POST', `${MCO}/machineconfigs`, {
      apiVersion: 'machineconfiguration.openshift.io/v1', kind: 'MachineConfig',
      metadata: { name: '80-worker-paused', labels: { 'machineconfiguration.openshift.io/role': 'worker' } },
      spec: { config: { ignition: { version: '3.4.0' } }, kernelArguments: ['nosmt'] },
    });
    const paused = await waitFor('a new target while paused, reported as paused', async () => {
      const p = await pool(api, 'worker');
      return p.spec.configuration.name !== target && /^Pool is paused; will not update to rendered-worker-/.test(cond(p, 'Updating')?.message ?? '') && p;
    });
    assert.equal(cond(paused, 'Degraded').status, 'False');
    assert.equal(cond(paused, 'Updated').status, 'False');
    for (const n of (await getJson(api, '/api/v1/nodes')).items) assert.equal(n.metadata.annotations[DESIRED], target, 'no node is targeted while paused');
    await send(api, 'PATCH', `${MCO}/machineconfigpools/worker`, { spec: { paused: false } }, 'application/merge-patch+json');
    await waitFor('one node targeted after unpausing', async () => ((await getJson(api, '/api/v1/nodes')).items as any[]).filter((n) => n.metadata.annotations[DESIRED] === paused.spec.configuration.name).length === 1);
  });
});

test('KubeletConfig: generated 99-worker-generated-kubelet, Success or Failure on the KubeletConfig, removed with it', async () => {
  await withController(async (api) => {
    await waitFor('templates', async () => exists(api, `${MCO}/machineconfigs/01-worker-kubelet`));
    const kc = (name: string, kubeletConfig: object) => ({
      apiVersion: 'machineconfiguration.openshift.io/v1', kind: 'KubeletConfig',
      metadata: { name },
      spec: { machineConfigPoolSelector: { matchLabels: { 'pools.operator.machineconfiguration.openshift.io/worker': '' } }, kubeletConfig },
    });
    await send(api, 'POST', `${MCO}/kubeletconfigs`, kc('set-max-pods', { maxPods: 500 }));
    await send(api, 'POST', `${MCO}/kubeletconfigs`, kc('bad-driver', { cgroupDriver: 'cgroupfs' }));
    const generated = await waitFor('99-worker-generated-kubelet', async () => (await api.request('GET', `${MCO}/machineconfigs/99-worker-generated-kubelet`)).json?.spec && (await getJson(api, `${MCO}/machineconfigs/99-worker-generated-kubelet`)));
    const conf = JSON.parse(decodeDataUrl(generated.spec.config.storage.files[0].contents.source).toString());
    assert.equal(conf.maxPods, 500);
    assert.deepEqual(conf.clusterDNS, ['172.30.0.10']);
    const ok = await waitFor('Success on set-max-pods', async () => (await getJson(api, `${MCO}/kubeletconfigs/set-max-pods`)).status?.conditions?.[0]);
    assert.deepEqual([ok.type, ok.status, ok.message], ['Success', 'True', 'Success']);
    const bad = await waitFor('Failure on bad-driver', async () => (await getJson(api, `${MCO}/kubeletconfigs/bad-driver`)).status?.conditions?.[0]);
    assert.deepEqual([bad.type, bad.status], ['Failure', 'False']);
    assert.match(bad.message, /^Error: KubeletConfiguration: cgroupDriver is not allowed to be set/);
    assert.ok(!(await exists(api, `${MCO}/machineconfigs/99-worker-generated-kubelet-1`)), 'a refused KubeletConfig generates nothing');
    // The pool renders with it.
    await waitFor('the worker pool to include the generated kubelet config', async () => ((await pool(api, 'worker')).spec.configuration?.source ?? []).some((s: any) => s.name === '99-worker-generated-kubelet'));

    await send(api, 'DELETE', `${MCO}/kubeletconfigs/set-max-pods`);
    await waitFor('the generated config to go with its KubeletConfig', async () => !(await exists(api, `${MCO}/machineconfigs/99-worker-generated-kubelet`)));
  });
});

test('a MachineConfig with spec-2 leftovers renders as Ignition reads it; the warning is an Event on it and the pool is not degraded', async () => {
  await withController(async (api) => {
    await waitFor('a rendered worker config', async () => ((await pool(api, 'worker')).spec.configuration?.source ?? []).some((s: any) => s.name === '99-worker-ssh'));
    // Seen on real clusters: configs converted from spec 2 keep `networkd` and files' `filesystem`.
    await send(api, 'POST', `${MCO}/machineconfigs`, {
      apiVersion: 'machineconfiguration.openshift.io/v1', kind: 'MachineConfig',
      metadata: { name: '60-worker-spec2-leftovers', labels: { 'machineconfiguration.openshift.io/role': 'worker' } },
      spec: { config: { ignition: { version: '3.2.0' }, networkd: {}, storage: { files: [{ path: '/etc/leftover.conf', filesystem: 'root', mode: 0o644, contents: { source: encodeDataUrl('leftover=1\n') } }] } } },
    });
    const rendered = await waitFor('the worker pool to target a config with the new MachineConfig', async () => {
      const p = await pool(api, 'worker');
      return (p.spec.configuration?.source ?? []).some((s: any) => s.name === '60-worker-spec2-leftovers') && p;
    });
    assert.notEqual(cond(rendered, 'RenderDegraded')?.status, 'True');
    const config = (await getJson(api, `${MCO}/machineconfigs/${rendered.spec.configuration.name}`)).spec.config;
    const file = config.storage.files.find((f: any) => f.path === '/etc/leftover.conf');
    assert.equal(decodeDataUrl(file.contents.source).toString(), 'leftover=1\n');
    assert.equal('filesystem' in file, false, 'keys Ignition ignores are not rendered');
    assert.equal('networkd' in config, false);

    const events = await waitFor('the IgnitionWarnings Event', async () => {
      const list = JSON.parse(await api.kubectlOk(['get', 'events', '-A', '--field-selector', 'involvedObject.name=60-worker-spec2-leftovers', '-o', 'json'])).items as any[];
      return list.length > 0 && list;
    });
    assert.equal(events.length, 1);
    assert.equal(events[0].type, 'Warning');
    assert.equal(events[0].reason, 'IgnitionWarnings');
    assert.equal(events[0].involvedObject.kind, 'MachineConfig');
    assert.match(events[0].message, /spec\.config\.networkd: unused key/);
    assert.match(events[0].message, /spec\.config\.storage\.files\[0\]\.filesystem: unused key/);
    assert.equal(cond(await pool(api, 'worker'), 'RenderDegraded')?.status, 'False');
  });
});
