// `bosun adm upgrade status` through the embedded API server: the cluster states of
// adm-upgrade-status.test.ts (whose text is checked there against oc's) created as objects, read
// back the way the command reads them, and the real command run against them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import type { Obj } from '../../src/kube/index.js';
import { KubeClient, loadKubeConfig, resourcePath, type ResourceRef } from '../../src/kube/index.js';
import { resources } from '../../src/kube/resources.js';
import { repositoryRoot } from '../../src/cli/release.js';
import { readClusterState } from '../../src/cli/adm-upgrade-status.js';
import { upgradeStatus } from '../../src/cli/upgrade-status/status.js';
import { runBosun } from '../helpers/cli.js';
import { startTestApiServer, type TestApiServer } from '../helpers/apiserver.js';
import { NOW, pausedWorkers, stalled } from './upgrade-status-fixtures.js';

const REFS: Record<string, ResourceRef<Obj>> = {
  ClusterVersion: resources.clusterVersions, ClusterOperator: resources.clusterOperators, MachineConfigPool: resources.machineConfigPools,
  MachineConfig: resources.machineConfigs, Node: resources.nodes, Deployment: resources.deployments,
};

/** Creates the objects through the API server, their status through the status subresource. */
async function load(api: TestApiServer, objects: Obj[]): Promise<void> {
  for (const o of objects) {
    const { status, ...rest } = o;
    const ns = o.metadata.namespace;
    const created = await api.request('POST', resourcePath(REFS[o.kind], ns), { body: rest });
    assert.equal(created.status, 201, created.text);
    if (!status) continue;
    const patched = await api.request('PATCH', resourcePath(REFS[o.kind], ns, o.metadata.name, 'status'), { body: { status }, contentType: 'application/merge-patch+json' });
    assert.equal(patched.status, 200, patched.text);
  }
}

test('through the embedded API server and the real command: the same objects, the same text', async () => {
  const api = await startTestApiServer();
  try {
    const crds = ['0000_00_cluster-version-operator_01_clusteroperators.crd.yaml', '0000_00_cluster-version-operator_01_clusterversions.crd.yaml', '0000_80_machine-config_01_machineconfigpools.crd.yaml', '0000_80_machine-config_01_machineconfigs.crd.yaml'];
    await api.kubectlOk(['apply', '-f', '-'], crds.map((f) => readFileSync(`${repositoryRoot}/release-payload/manifests/${f}`, 'utf8')).join('\n---\n'));
    await api.kubectlOk(['wait', '--for=condition=Established', 'crd', '--all', '--timeout=20s']);
    const s = stalled();
    await load(api, [s.cv, ...s.operators, ...s.pools, ...s.machineConfigs, ...s.nodes]);
    const read = await readClusterState(new KubeClient(loadKubeConfig(api.kubeconfigPath)));
    assert.deepEqual(read.machineConfigs.map((m) => m.metadata.name).sort(), ['rendered-master-old', 'rendered-worker-old'], 'only the configs the nodes name');
    for (const details of ['none', 'all'] as const) assert.equal(upgradeStatus(read, details, NOW), upgradeStatus(s, details, NOW));

    // The command itself, at the real time: the ClusterVersion, operators and nodes of the
    // paused-pool state, written now, with the machine-config-operator's Deployment.
    const now = Date.now();
    const live = pausedWorkers(now);
    for (const kind of ['clusterversion', 'clusteroperator', 'machineconfigpool', 'machineconfig', 'node']) await api.kubectlOk(['delete', kind, '--all']);
    await api.kubectlOk(['create', 'namespace', 'openshift-machine-config-operator']);
    const deployment = parse(readFileSync(`${repositoryRoot}/release-payload/manifests/0000_80_machine-config_05_deployment.yaml`, 'utf8').replaceAll('{{VERSION}}', '1.0.0'));
    await load(api, [deployment, live.cv, ...live.operators, ...live.pools, ...live.machineConfigs, ...live.nodes]);
    const r = await runBosun(['adm', 'upgrade', 'status', '--kubeconfig', api.kubeconfigPath]);
    assert.equal(r.code, 0, r.stderr);
    const took = Date.now() - now;
    // Durations move with the clock: compare the rest exactly, and the durations within `took`.
    const durations = /\b(?:\d+h)?(?:\d+m)?\d+s\b|\b(?:\d+h)?\d+m\b/g;
    const expected = upgradeStatus(live, 'none', now);
    assert.equal(r.stdout.replace(durations, 'D'), expected.replace(durations, 'D'));
    // Started 3m12s before `now`; the command ran within `took` (a minute or more on a loaded machine).
    const m = /^Duration: {8}(\d+)m(\d+)s \(Est\. Time Remaining: 1h\d+m\)$/m.exec(r.stdout);
    const elapsed = Number(m?.[1]) * 60 + Number(m?.[2]);
    assert.ok(elapsed >= 192 && elapsed <= 193 + took / 1000, `${r.stdout}\ntook ${took} ms`);
  } finally {
    await api.stop();
  }
});
