// test: shared-addresses, test: e2e (npm run test:e2e; minutes on its own cluster)
// ClusterOperatorDown on an installed local cluster (3 masters, its own: the shared install test's
// file has no time left for it), as `bosun start` installs it:
//   1. The test-only flag reaches the monitoring operator the way an administrator changes a
//      CVO-managed Deployment on OpenShift: ClusterVersion spec.overrides marks Deployment
//      openshift-monitoring/cluster-monitoring-operator unmanaged, then its args gain
//      --alert-for-override (and a shorter --evaluation-interval); the operator's new pod rewrites
//      the rule files, and Prometheus reloads them (ClusterOperatorDown's for: 10m → 20s).
//   2. An operator's pods are stopped: the cloud controller manager's (operand of ClusterOperator
//      cloud-controller-manager) — the masters cordoned and its pods deleted, so its Deployment
//      has no available replica while the replacements wait unschedulable; its operator reports
//      Available=False (DeploymentUnavailable), the CVO's cluster_operator_up{name=
//      "cloud-controller-manager"} goes 0, and Prometheus fires ClusterOperatorDown, which
//      `bosun adm alerts` lists through thanos-querier.
//   3. Restored: the masters uncordoned, the CCM runs again, the operator Available, the alert
//      gone; the override removed and the CVO puts the operator's payload args back.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Obj } from '../../src/kube/client.js';
import { runBosun } from '../helpers/cli.js';
import { eventually } from '../helpers/eventually.js';
import { installCluster, type InstalledCluster } from '../helpers/installed-cluster.js';

const MONITORING = 'openshift-monitoring';
const OPERATOR = 'cluster-monitoring-operator';
const CCM_NS = 'openshift-cloud-controller-manager';
const FOR = '20s';
const TEST_ARGS = [`--alert-for-override=${FOR}`, '--evaluation-interval=5s'];
const OVERRIDE = { kind: 'Deployment', group: 'apps', namespace: MONITORING, name: OPERATOR, unmanaged: true };

type Alert = { labels: Record<string, string>; state: string };
type Rule = { name: string; type: string; duration?: number };

let c: InstalledCluster;

before(async () => {
  c = await installCluster(0);
});

after(async () => {
  await c?.destroy();
});

test('the cloud controller manager\'s pods stopped: ClusterOperatorDown fires (for: shortened by --alert-for-override through an unmanaged override), bosun adm alerts lists it, and it resolves once they run again', async () => {
  await eventually('ClusterOperator monitoring Available', async () => /^monitoring\s+1\.0\.0\s+True\s+False\s+False/m.test(await c.kubectl(['get', 'co', 'monitoring'])), 240_000);
  const json = (args: string[]) => c.json(args);
  const prometheusPod = ((await json(['get', 'pods', '-n', MONITORING, '-l', 'app.kubernetes.io/name=prometheus'])).items as Obj[])[0];
  const prometheus = async <T>(path: string): Promise<T> => ((await (await fetch(`http://${prometheusPod.status.podIP}:9090${path}`)).json()) as { data: T }).data;
  const alerts = async () => (await prometheus<{ alerts: Alert[] }>('/api/v1/alerts')).alerts;
  const ruleFor = async (alert: string) => (await prometheus<{ groups: Array<{ rules: Rule[] }> }>('/api/v1/rules')).groups.flatMap((g) => g.rules).find((r) => r.name === alert);
  const ccmDown = (a: Alert) => a.labels.alertname === 'ClusterOperatorDown' && a.labels.name === 'cloud-controller-manager';
  const masters = ((await json(['get', 'nodes', '-l', 'node-role.kubernetes.io/master'])).items as Obj[]).map((n) => n.metadata.name as string);
  // The CCM's pods, by its Deployment's selector (the one Deployment of its namespace).
  const ccm = ((await json(['get', 'deployments', '-n', CCM_NS])).items as Obj[])[0];
  const CCM_PODS = Object.entries(ccm.spec.selector.matchLabels as Record<string, string>).map(([k, v]) => `${k}=${v}`).join(',');
  const payloadArgs = (await json(['get', 'deployment', OPERATOR, '-n', MONITORING])).spec.template.spec.containers[0].args as string[];
  assert.ok(!payloadArgs.some((a) => a.startsWith('--alert-for-override')), 'the payload never shortens alerts');
  assert.equal((await ruleFor('ClusterOperatorDown'))?.duration, 600, 'ClusterOperatorDown waits 10 minutes as shipped');

  try {
    // 1. The flag, through an unmanaged override (tests only).
    await c.kubectl(['patch', 'clusterversion', 'version', '--type=merge', '-p', JSON.stringify({ spec: { overrides: [OVERRIDE] } })]);
    await c.kubectl(['patch', 'deployment', OPERATOR, '-n', MONITORING, '--type=json', '-p', JSON.stringify(TEST_ARGS.map((value) => ({ op: 'add', path: '/spec/template/spec/containers/0/args/-', value })))]);
    await eventually('Prometheus evaluating ClusterOperatorDown with for: 20s', async () => (await ruleFor('ClusterOperatorDown'))?.duration === 20, { timeoutMs: 180_000, intervalMs: 2000 });

    // 2. The cloud controller manager's pods stopped.
    for (const m of masters) await c.kubectl(['cordon', m]);
    await c.kubectl(['delete', 'pods', '-n', CCM_NS, '-l', CCM_PODS, '--wait=false']);
    const co = await eventually('ClusterOperator cloud-controller-manager Available=False', async () => {
      const available = ((await json(['get', 'co', 'cloud-controller-manager'])).status?.conditions as Obj[] | undefined)?.find((x) => x.type === 'Available');
      return available?.status === 'False' && available;
    }, { timeoutMs: 120_000, intervalMs: 1000 });
    assert.equal(co.reason, 'DeploymentUnavailable');
    const pending = ((await json(['get', 'pods', '-n', CCM_NS, '-l', CCM_PODS])).items as Obj[]).filter((p) => !p.metadata.deletionTimestamp);
    assert.ok(pending.every((p) => p.status.phase === 'Pending'), 'the replacements wait: every master is cordoned');
    const fired = await eventually('ClusterOperatorDown firing for cloud-controller-manager', async () => (await alerts()).find((a) => ccmDown(a) && a.state === 'firing'), { timeoutMs: 180_000, intervalMs: 2000 });
    assert.equal(fired.labels.reason, 'DeploymentUnavailable');
    assert.equal(fired.labels.severity, 'critical');
    const listed = await runBosun(['adm', 'alerts', '--kubeconfig', c.cluster.kubeconfigPath]);
    assert.equal(listed.code, 0, listed.stderr);
    assert.match(listed.stdout, /^ClusterOperatorDown\s+critical\s+firing\s+\d+[sm]\s+Cluster operator has not been available for 10 minutes\./m);
    console.log(`bosun adm alerts, the cloud controller manager stopped:\n${listed.stdout}`);
  } finally {
    // 3. Restored, whatever happened above.
    for (const m of masters) await c.kubectl(['uncordon', m]).catch(() => undefined);
    await c.kubectl(['patch', 'clusterversion', 'version', '--type=json', '-p', JSON.stringify([{ op: 'remove', path: '/spec/overrides' }])]).catch(() => undefined);
  }
  await eventually('ClusterOperator cloud-controller-manager Available again', async () =>
    ((await json(['get', 'co', 'cloud-controller-manager'])).status?.conditions as Obj[]).some((x) => x.type === 'Available' && x.status === 'True'), { timeoutMs: 180_000, intervalMs: 1000 });
  await eventually('ClusterOperatorDown for cloud-controller-manager resolved', async () => !(await alerts()).some(ccmDown), { timeoutMs: 120_000, intervalMs: 2000 });
  await eventually('the CVO putting the operator\'s payload args back', async () =>
    JSON.stringify((await json(['get', 'deployment', OPERATOR, '-n', MONITORING])).spec.template.spec.containers[0].args) === JSON.stringify(payloadArgs), { timeoutMs: 300_000, intervalMs: 2000 });
  await eventually('Prometheus evaluating ClusterOperatorDown with for: 10m again', async () => (await ruleFor('ClusterOperatorDown'))?.duration === 600, { timeoutMs: 180_000, intervalMs: 2000 });
});
