// The install as `bosun start` runs it, on one shared cluster (test: shared-addresses — machines
// on 127.0.1.N, api-int on 127.0.100.1): 3 masters and 2 workers boot from Ignition, the
// operators run as pods on the masters and the bootstrap hands over to them; Cluster API manages
// the machines — the masters adopted, the workers from MachineDeployment worker — so scaling it
// adds and removes (drained) nodes, and a worker's death moves its pods and gets it replaced by
// its MachineHealthCheck; OLM runs on the masters with the default catalog, and an add-on operator
// installed from it runs as a pod, reconciles its resource and upgrades along its channel; the
// cluster stops and comes back with the same machines. (The update on
// an installed cluster: install-update.test.ts. Every component's metrics endpoint and Prometheus's
// targets are checked here too. The remediation limit is tested against the
// controllers in test/capi/healthcheck.test.ts: here it would cost two more replacements.)
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CloudClient } from '../../src/cloud/client.js';
import { runBosun } from '../helpers/cli.js';
import { runKubectl } from '../helpers/apiserver.js';
import { eventually } from '../helpers/eventually.js';
import { installCluster, OPERATOR_NAMESPACES, type InstalledCluster } from '../helpers/installed-cluster.js';
import type { Obj } from '../../src/kube/client.js';
import { scrape, metricsReader } from '../helpers/metrics.js';

const NS = 'openshift-cluster-api';
const WORKERS = 'cluster.x-k8s.io/deployment-name=worker';

const TABLE = [
  { namespace: 'openshift-cluster-version', service: 'cluster-version-operator', port: 9099 },
  { namespace: 'openshift-machine-config-operator', service: 'machine-config-operator', port: 9001 },
  { namespace: 'openshift-machine-config-operator', service: 'machine-config-controller', port: 9001 },
  { namespace: 'openshift-machine-config-operator', service: 'machine-config-daemon', port: 9001 },
  { namespace: 'openshift-cloud-controller-manager-operator', service: 'cluster-cloud-controller-manager-operator', port: 9258 },
  { namespace: 'openshift-cloud-controller-manager', service: 'cloud-controller-manager', port: 10258 },
  { namespace: 'openshift-cluster-api', service: 'capi-controllers', port: 8443 },
];

const METRICS_READER = metricsReader('test-metrics-reader', 'scraper');

let c: InstalledCluster;
const kubectl = (args: string[]) => c.kubectl(args);
const json = (args: string[]) => c.json(args);
/** The daemon runs on every node; everything else of the operators runs on the masters. */
const onEveryNode = (pod: Obj) => pod.metadata.labels?.['k8s-app'] === 'machine-config-daemon';
const isReady = (node: Obj | undefined) => Boolean(node?.status?.conditions?.some((x: Obj) => x.type === 'Ready' && x.status === 'True'));

/** The worker Machines (not being deleted) once `count` of them are Running with Ready nodes. */
function runningWorkers(count: number, timeoutMs: number): Promise<Obj[]> {
  return eventually(`${count} worker Machines Running with Ready nodes`, async () => {
    const machines = ((await json(['get', 'machines', '-n', NS, '-l', WORKERS])).items as Obj[]).filter((m) => !m.metadata.deletionTimestamp);
    if (machines.length !== count || !machines.every((m) => m.status?.phase === 'Running' && m.status?.nodeRef)) return undefined;
    const nodes = new Map(((await json(['get', 'nodes'])).items as Obj[]).map((n) => [n.metadata.name, n]));
    return machines.every((m) => isReady(nodes.get(m.status.nodeRef.name))) && machines;
  }, { timeoutMs, intervalMs: 500 });
}

before(async () => {
  c = await installCluster(2);
});

after(async () => {
  await c?.destroy();
});

test('a fresh install: 3 masters and 2 workers Ready, the operators as pods on the masters, ClusterVersion Available', async () => {
  assert.equal(c.cluster.installed, true);
  const steps = c.lines.filter((l) => /^\[\d\/9\]/.test(l)).map((l) => l.slice(0, 5));
  assert.deepEqual(steps, ['[1/9]', '[2/9]', '[3/9]', '[4/9]', '[5/9]', '[6/9]', '[7/9]', '[8/9]', '[9/9]']);
  assert.ok(c.lines.some((l) => /hand-over: the bootstrap cluster-version, machine-config and cloud-controller-manager operators stopped/.test(l)), 'the hand-over was shown');
  assert.ok(c.lines.some((l) => /waiting for 3 master nodes Ready/.test(l)), 'what is waited on was shown');
  assert.ok(c.lines.some((l) => /^\[8\/9\] Cluster API takes the machines: .*2 workers created by MachineDeployment worker with a MachineHealthCheck/.test(l)), c.lines.join('\n'));
  assert.ok(c.lines.some((l) => /2 worker Machines Running with Ready nodes: 2\/2/.test(l)), 'the workers\' Machines were waited for');
  const step8 = c.lines.findIndex((l) => l.startsWith('[8/9]'));
  console.log(c.lines.slice(step8, c.lines.findIndex((l) => l.startsWith('[9/9]')) + 1).join('\n'));

  const workers = await runningWorkers(2, 60_000);
  const workerNames = workers.map((m) => m.metadata.name as string);
  for (const name of workerNames) assert.match(name, /^worker-[a-z0-9]+-[a-z0-9]{5}$/, 'named by the MachineSet');
  const nodes = await kubectl(['get', 'nodes', '-o', 'wide']);
  for (const name of ['bosun-local-master-0', 'bosun-local-master-1', 'bosun-local-master-2']) {
    // (Ready,SchedulingDisabled while its daemon rolls it: see the note on #15.)
    assert.match(nodes, new RegExp(`^${name}\\s+Ready(,SchedulingDisabled)?\\s+control-plane,master\\s+\\S+\\s+v\\S+\\s+127\\.0\\.1\\.\\d+`, 'm'));
  }
  for (const name of workerNames) assert.match(nodes, new RegExp(`^${name}\\s+Ready(,SchedulingDisabled)?\\s+worker\\s`, 'm'));
  const masters = (await json(['get', 'nodes', '-l', 'node-role.kubernetes.io/master'])).items as Obj[];
  assert.ok(masters.every((n) => n.spec.taints?.some((t: Obj) => t.key === 'node-role.kubernetes.io/master' && t.effect === 'NoSchedule')), 'masters are tainted NoSchedule');

  // Every operator pod runs, on a master, as a process.
  const masterNames = new Set(masters.map((n) => n.metadata.name));
  for (const ns of OPERATOR_NAMESPACES) {
    // (A worker's daemon may still be starting: the workers have just joined.)
    const pods = await eventually(`every pod in ${ns} running`, async () => {
      const items = (await json(['get', 'pods', '-n', ns])).items as Obj[];
      return items.length > 0 && items.every((p) => p.status.phase === 'Running') && items;
    }, 60_000);
    for (const pod of pods) {
      if (!onEveryNode(pod)) assert.ok(masterNames.has(pod.spec.nodeName), `${pod.metadata.name} is on a master (${pod.spec.nodeName})`);
    }
  }
  assert.equal(((await json(['get', 'pods', '-n', 'openshift-machine-config-operator', '-l', 'k8s-app=machine-config-server'])).items as Obj[]).length, 3);
  assert.equal(((await json(['get', 'pods', '-n', 'openshift-machine-config-operator', '-l', 'k8s-app=machine-config-daemon'])).items as Obj[]).length, 5, 'a daemon on every node');
  // The cloud controller manager initialised every node: providerID, zone, no uninitialized taint.
  for (const node of (await json(['get', 'nodes'])).items as Obj[]) {
    assert.match(node.spec.providerID ?? '', /^local:\/\/i-/, `${node.metadata.name} has its providerID`);
    assert.ok(!node.spec.taints?.some((t: Obj) => t.key === 'node.cloudprovider.kubernetes.io/uninitialized'), `${node.metadata.name} is initialised`);
  }
  assert.match(await kubectl(['get', 'co', 'cloud-controller-manager']), /^cloud-controller-manager\s+1\.0\.0\s+True\s/m);
  // The daemons took the nodes: both pools are Updated on their rendered configs.
  await eventually('both pools Updated', async () => ((await json(['get', 'mcp'])).items as Obj[]).every((p) => p.status?.conditions?.some((c: Obj) => c.type === 'Updated' && c.status === 'True')), 180_000);
  // The CVO that now leads is the pod, not the bootstrap.
  // (The bootstrap released the Lease; the pod takes it at its next try, within its retry period.)
  await eventually('the CVO pod holding the Lease, by its name', async () =>
    /^cluster-version-operator-[a-z0-9]+-[a-z0-9]+$/.test((await json(['get', 'lease', 'version', '-n', 'openshift-cluster-version'])).spec.holderIdentity ?? ''), 60_000);
  const logs = await kubectl(['logs', '-n', 'openshift-cluster-version', 'deploy/cluster-version-operator']);
  assert.match(logs, /became leader/);

  // (A master its daemon just drained may have moved the CVO pod, which then makes a pass again.)
  await eventually('ClusterVersion 1.0.0 Available and not Progressing', async () => /^version\s+1\.0\.0\s+True\s+False\s/m.test(await kubectl(['get', 'clusterversion'])), 120_000).catch(async (e) => {
    // What the CVO waits on, to tell why.
    const conditions = async (args: string[]) => JSON.stringify(((await json(args)).status?.conditions ?? []).map((x: Obj) => [x.type, x.status, x.reason, x.message]));
    console.log(`clusterversion: ${await conditions(['get', 'clusterversion', 'version'])}\nco/machine-config: ${await conditions(['get', 'co', 'machine-config'])}\n${await kubectl(['get', 'mcp,co'])}\n${await kubectl(['get', 'pods', '-A', '-o', 'wide'])}`);
    console.log((await kubectl(['logs', '-n', 'openshift-cluster-version', 'deploy/cluster-version-operator'])).split('\n').slice(-40).join('\n'));
    throw e;
  });
  assert.match(await kubectl(['get', 'co', 'machine-config']), /^machine-config\s+1\.0\.0\s+True\s/m);
  // Workers booted from the masters' servers through api-int: the bootstrap server is gone from it.
  const cloud = new CloudClient(c.cluster.cloud!.url, c.cluster.cloud!.rootCredential);
  const apiInt = (await cloud.listLoadBalancers()).find((lb) => lb.name === 'bosun-local-api-int')!;
  assert.equal(apiInt.address, '127.0.100.1');
  assert.deepEqual(apiInt.ports.find((p) => p.port === 22623)!.targets!.sort(), (await cloud.listInstances({ names: [...masterNames] })).map((i) => i.id).sort());
  const userData = JSON.parse(Buffer.from((await json(['get', 'secret', 'worker-user-data', '-n', 'openshift-machine-api'])).data.userData, 'base64').toString());
  assert.deepEqual(userData.ignition.config.merge, [{ source: 'https://127.0.100.1:22623/config/worker' }]);

  // Cluster API: the masters adopted (their instances, not new ones), the workers from the
  // MachineDeployment, each Machine with its Node; its controllers report at the release.
  const listing = await kubectl(['get', 'machines,machinesets,machinedeployments', '-A']);
  console.log(`kubectl get machines,machinesets,machinedeployments -A\n${listing}`);
  for (const name of [...masterNames, ...workerNames]) {
    assert.match(listing, new RegExp(`^${NS}\\s+machine\\.cluster\\.x-k8s\\.io/${name}\\s+bosun-local\\s+${name}\\s+local-[abc]\\s+True\\s+True\\s+(True\\s+)?(<none>\\s+)?Running\\s`, 'm'));
  }
  assert.match(listing, /^openshift-cluster-api\s+machineset\.cluster\.x-k8s\.io\/worker-[a-z0-9]+\s+bosun-local\s+2\s+2\s+2\s+2\s+2\s/m);
  assert.match(listing, /^openshift-cluster-api\s+machinedeployment\.cluster\.x-k8s\.io\/worker\s+bosun-local\s+True\s+2\s+2\s+2\s+2\s+2\s+Running\s/m);
  const instances = await cloud.listInstances({ states: ['pending', 'running'] });
  assert.equal(instances.length, 5, `no instance was made twice: ${instances.map((i) => i.name).join(', ')}`);
  for (const m of ((await json(['get', 'machines', '-n', NS])).items as Obj[])) {
    assert.equal(m.spec.providerID, `local://${instances.find((i) => i.name === m.metadata.name)!.id}`);
    assert.equal((await json(['get', 'node', m.status.nodeRef.name])).spec.providerID, m.spec.providerID);
  }
  const health = await json(['get', 'machinehealthcheck', 'worker', '-n', NS]);
  assert.deepEqual(health.status.targets, [...workerNames].sort());
  assert.equal(health.status.remediationsAllowed, 1, 'one worker at a time (unhealthyLessThanOrEqualTo: 1)');
  // The machine approver approved the workers' certificates for their Machines, not just their instances.
  const csrs = ((await json(['get', 'csr'])).items as Obj[]).filter((r) => workerNames.some((w) => r.spec.username === `system:node:${w}`));
  assert.ok(csrs.length >= 2, 'the workers\' serving certificate requests');
  for (const r of csrs) assert.match(r.status.conditions.find((x: Obj) => x.type === 'Approved').message, /Machine openshift-cluster-api\/worker-/);
  assert.match(await kubectl(['get', 'co', 'cluster-api']), /^cluster-api\s+1\.0\.0\s+True\s+False\s+False\s/m);
});

test("cloud credentials: the payload's CredentialsRequests minted into their components' namespaces; the cloud refuses anonymous calls and its audit log names the components", async () => {
  const requests = await eventually('CredentialsRequests provisioned', async () => {
    const out = await kubectl(['get', 'credentialsrequests', '-n', 'openshift-cloud-credential-operator']);
    return /^openshift-cluster-api\s+true\s+openshift-cluster-api\s+capi-cloud-credentials\s/m.test(out) && /^openshift-cloud-controller-manager\s+true\s+openshift-cloud-controller-manager\s+cloud-controller-manager-cloud-credentials\s/m.test(out) ? out : undefined;
  }, 60_000);
  console.log(`kubectl get credentialsrequests -n openshift-cloud-credential-operator\n${requests}`);
  const minted = ((await json(['get', 'secrets', '-A', '-l', 'cloudcredential.openshift.io/credentials-request=true'])).items as Obj[]).map((x) => `${x.metadata.namespace}/${x.metadata.name}`).sort();
  assert.deepEqual(minted, ['openshift-cloud-controller-manager/cloud-controller-manager-cloud-credentials', 'openshift-cluster-api/capi-cloud-credentials']);
  const anonymous = await fetch(`${c.cluster.cloud!.url}/v1/instances`);
  assert.equal(anonymous.status, 401);
  // Who did what: Cluster API made the workers, the CCM and the machine approver looked at instances, each as itself.
  const audit = readFileSync(join(c.options.dataDir, 'cloud', 'audit.log'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { identity: string | null; action: string; status: number });
  const did = (identity: string, action: string) => audit.some((l) => l.identity === identity && l.action === action && l.status < 300);
  assert.ok(did('openshift-cluster-api', 'instances:create'), 'Cluster API created instances with its own credential');
  assert.ok(did('openshift-cloud-controller-manager', 'instances:describe'), 'the CCM described instances with its own');
  assert.ok(did('machine-approver', 'instances:describe'), 'the machine approver with its own');
  assert.ok(audit.some((l) => l.identity === null && l.status === 401));
});

test('monitoring: Prometheus runs on a master, every component is a target and up, the issue\'s series exist, and Watchdog fires', async () => {
  await eventually('ClusterOperator monitoring Available at 1.0.0', async () => /^monitoring\s+1\.0\.0\s+True\s+False\s+False/m.test(await kubectl(['get', 'co', 'monitoring'])), 120_000);
  const pod = ((await json(['get', 'pods', '-n', 'openshift-monitoring', '-l', 'app.kubernetes.io/name=prometheus'])).items as Obj[])[0];
  assert.ok(pod?.spec.nodeName?.startsWith('bosun-local-master-'), `Prometheus runs on a master (${pod?.spec.nodeName})`);
  const prometheus = async (path: string): Promise<Obj> => (await fetch(`http://${pod.status.podIP}:9090${path}`)).json() as Promise<Obj>;
  const up = await eventually('the API server target up', async () => {
    const r = await prometheus('/api/v1/query?query=up%7Bjob%3D%22apiserver%22%7D');
    return r.data?.result?.[0]?.value?.[1] === '1' ? r.data.result[0] : undefined;
  }, { timeoutMs: 90_000, intervalMs: 1000 });
  assert.equal(up.metric.service, 'kubernetes');
  const list = await prometheus('/api/v1/query?query=apiserver_request_total%7Bverb%3D%22LIST%22%2Cresource%3D%22pods%22%2Cscope%3D%22cluster%22%7D');
  assert.ok(list.data.result.length > 0, 'apiserver_request_total has LIST pods at cluster scope');
  // Every component is a target, and up: the API server, the kubelets, the CVO, the MCO's three,
  // the CCM and its operator, Cluster API.
  const JOBS = ['apiserver', 'kubelet', 'cluster-version-operator', 'machine-config-operator', 'machine-config-controller', 'machine-config-daemon', 'cloud-controller-manager', 'cluster-cloud-controller-manager-operator', 'capi-controllers'];
  let seen: Obj[] = [];
  const targets = await eventually('every component\'s targets up', async () => {
    seen = (await prometheus('/api/v1/targets')).data.activeTargets as Obj[];
    return JOBS.every((job) => seen.some((t) => t.labels.job === job)) && seen.every((t) => t.health === 'up') ? seen : undefined;
  }, { timeoutMs: 120_000, intervalMs: 2000, detail: () => JSON.stringify(seen.filter((t) => t.health !== 'up').map((t) => `${t.labels.job} ${t.scrapeUrl}: ${t.health} ${t.lastError}`)) });
  assert.equal(targets.filter((t) => t.labels.job === 'machine-config-daemon').length, 5, 'a daemon on every node');
  assert.equal(targets.filter((t) => t.labels.job === 'kubelet').length, 10, '/metrics and /metrics/resource of every node');
  for (const query of ['cluster_operator_up{name="version"}', 'mcd_update_state', 'apiserver_storage_objects{resource="machineconfigs.machineconfiguration.openshift.io"}', 'capi_machine_status_phase', 'cluster_infrastructure_provider']) {
    const r = await eventually(`series of ${query}`, async () => {
      const x = await prometheus(`/api/v1/query?query=${encodeURIComponent(query)}`);
      return x.data?.result?.length > 0 ? x : undefined;
    }, { timeoutMs: 60_000, intervalMs: 2000 });
    assert.ok(r.data.result.length > 0, query);
  }
  await eventually('Watchdog firing', async () => ((await prometheus('/api/v1/alerts')).data.alerts as Obj[]).some((a) => a.labels.alertname === 'Watchdog' && a.state === 'firing'), 60_000);
});

test('OLM: its components run on the masters at the release; kubectl get packagemanifests -n openshift-marketplace lists the default catalog; installing the greeter runs its operator as a pod, which reconciles a Greeting', async () => {
  for (const co of ['operator-lifecycle-manager', 'operator-lifecycle-manager-catalog', 'operator-lifecycle-manager-packageserver']) {
    await eventually(`ClusterOperator ${co} Available at 1.0.0`, async () => new RegExp(`^${co}\\s+1\\.0\\.0\\s+True\\s+False\\s+False`, 'm').test(await kubectl(['get', 'co', co])), 120_000);
  }
  const olmPods = (await json(['get', 'pods', '-n', 'openshift-operator-lifecycle-manager'])).items as Obj[];
  assert.deepEqual(olmPods.map((p) => p.metadata.labels.app).sort(), ['catalog-operator', 'olm-operator', 'package-server']);
  for (const pod of olmPods) assert.ok(pod.spec.nodeName?.startsWith('bosun-local-master-'), `${pod.metadata.name} runs on a master (${pod.spec.nodeName})`);
  const packages = await eventually('the default catalog\'s packages', async () => {
    const r = await runKubectl(c.cluster.kubeconfigPath, ['get', 'packagemanifests', '-n', 'openshift-marketplace'], { timeoutMs: 30_000 });
    return r.code === 0 && /^greeter\s/m.test(r.stdout) && r.stdout;
  }, { timeoutMs: 120_000, intervalMs: 1000 });
  console.log(`kubectl get packagemanifests -n openshift-marketplace\n${packages}`);
  assert.match(packages, /^echo\s+bosun Operators\s/m);
  assert.match(packages, /^greeter\s+bosun Operators\s/m);

  await kubectl(['create', 'namespace', 'olm-demo']);
  const installed = await runBosun(['adm', 'operators', 'install', 'greeter', '-n', 'olm-demo', '--kubeconfig', c.cluster.kubeconfigPath]);
  assert.equal(installed.code, 0, installed.stderr);
  assert.match(installed.stdout, /^subscription\.operators\.coreos\.com\/greeter created \(package greeter, channel default, catalog openshift-marketplace\/bosun-operators, approval Automatic\)$/m);
  await eventually('CSV greeter.v1.0.0 Succeeded', async () => /^greeter\.v1\.0\.0\s+Greeter\s+1\.0\.0\s+greeter\.v0\.2\.0\s+Succeeded/m.test(await kubectl(['get', 'csv', '-n', 'olm-demo'])), { timeoutMs: 180_000, intervalMs: 1000 });
  const operatorPod = ((await json(['get', 'pods', '-n', 'olm-demo', '-l', 'name=greeter-operator'])).items as Obj[])[0];
  assert.equal(operatorPod.status.phase, 'Running');
  assert.equal(operatorPod.metadata.annotations['olm.targetNamespaces'], 'olm-demo');
  const greeting = { apiVersion: 'greeter.samples.bosun.io/v1', kind: 'Greeting', metadata: { name: 'hello', namespace: 'olm-demo' }, spec: { name: 'world' } };
  const applied = await runKubectl(c.cluster.kubeconfigPath, ['apply', '-f', '-'], { input: JSON.stringify(greeting), timeoutMs: 30_000 });
  assert.equal(applied.code, 0, applied.stderr);
  const table = await eventually('Greeting hello reconciled by the operator pod', async () => { const out = await kubectl(['get', 'greetings', '-n', 'olm-demo']); return /^hello\s+Hello, world!\s+Ready\s+1\.0\.0\s/m.test(out) && out; }, { timeoutMs: 60_000, intervalMs: 1000 });
  console.log(`kubectl get greetings -n olm-demo\n${table}`);
  assert.equal((await json(['get', 'configmap', 'hello-greeting', '-n', 'olm-demo'])).data.greeting, 'Hello, world!');
});

test('OLM upgrades along a channel: the greeter from 0.1.0 on alpha goes 0.2.0 then 0.3.0, one replaces step at a time, each version\'s pod reconciling the Greeting with its own version', async () => {
  const ns = 'olm-upgrade';
  await kubectl(['create', 'namespace', ns]);
  const installed = await runBosun(['adm', 'operators', 'install', 'greeter', '-n', ns, '--channel', 'alpha', '--starting-csv', 'greeter.v0.1.0', '--kubeconfig', c.cluster.kubeconfigPath]);
  assert.equal(installed.code, 0, installed.stderr);
  const greeting = { apiVersion: 'greeter.samples.bosun.io/v1', kind: 'Greeting', metadata: { name: 'hi', namespace: ns }, spec: { name: 'upgrades', greeting: 'Hi' } };
  await eventually('the Greeting CRD served', async () => (await runKubectl(c.cluster.kubeconfigPath, ['apply', '-f', '-'], { input: JSON.stringify(greeting), timeoutMs: 30_000 })).code === 0, { timeoutMs: 120_000, intervalMs: 1000 });
  await eventually('the Subscription at greeter.v0.3.0, AtLatestKnown', async () => { const sub = await json(['get', 'sub', 'greeter', '-n', ns]); return sub.status?.state === 'AtLatestKnown' && sub.status.installedCSV === 'greeter.v0.3.0'; }, { timeoutMs: 240_000, intervalMs: 1000 });
  await eventually('CSV greeter.v0.3.0 Succeeded, the older ones gone', async () => {
    const csvs = (await json(['get', 'csv', '-n', ns])).items as Obj[];
    return csvs.length === 1 && csvs[0].metadata.name === 'greeter.v0.3.0' && csvs[0].status?.phase === 'Succeeded';
  }, { timeoutMs: 120_000, intervalMs: 1000 });
  const plans = ((await json(['get', 'ip', '-n', ns])).items as Obj[]).map((p) => p.spec.clusterServiceVersionNames[0]).sort();
  assert.deepEqual(plans, ['greeter.v0.1.0', 'greeter.v0.2.0', 'greeter.v0.3.0'], 'one plan per replaces step');
  const hi = await eventually('the Greeting reconciled by 0.3.0', async () => { const g = await json(['get', 'greeting', 'hi', '-n', ns]); return g.status?.operatorVersion === '0.3.0' && g; }, { timeoutMs: 60_000, intervalMs: 1000 });
  assert.equal(hi.status.text, 'Hi, upgrades!');
  const pods = ((await json(['get', 'pods', '-n', ns, '-l', 'name=greeter-operator'])).items as Obj[]).filter((p) => !p.metadata.deletionTimestamp);
  assert.deepEqual(pods.map((p) => p.spec.containers[0].image), ['bosun.local/greeter-operator:v0.3.0']);
});

test('each metrics Service answers 401 anonymous, 403 unprivileged, 200 to a token granted get on /metrics, with the service CA\'s certificate', { timeout: 600_000 }, async () => {
  await c.kubectl(['create', 'serviceaccount', 'scraper', '-n', 'default']);
  await c.kubectl(['create', 'serviceaccount', 'nobody', '-n', 'default']);
  const applied = await runKubectl(c.cluster.kubeconfigPath, ['apply', '-f', '-'], { input: METRICS_READER });
  assert.equal(applied.code, 0, applied.stderr);
  const scraper = (await c.kubectl(['create', 'token', 'scraper', '-n', 'default'])).trim();
  const nobody = (await c.kubectl(['create', 'token', 'nobody', '-n', 'default'])).trim();
  const ca = (await c.json(['get', 'configmap', 'service-ca', '-n', 'openshift-config-managed'])).data['ca-bundle.crt'] as string;
  assert.match(ca, /BEGIN CERTIFICATE/);

  for (const row of TABLE) {
    const servername = `${row.service}.${row.namespace}.svc`;
    const addresses = await eventually(`ready endpoints of ${row.namespace}/${row.service}`, async () => {
      const endpoints = await c.json(['get', 'endpoints', row.service, '-n', row.namespace]).catch(() => undefined);
      const list = ((endpoints?.subsets ?? []) as Obj[]).flatMap((s) => (s.addresses ?? []).flatMap((a: Obj) => (s.ports ?? []).filter((p: Obj) => p.name === 'metrics').map((p: Obj) => `${a.ip}:${p.port}`)));
      return list.length > 0 && list;
    }, { timeoutMs: 240_000, intervalMs: 1000 });
    for (const address of addresses) {
      const what = `${row.service} at ${address}`;
      const anonymous = await eventually(`${what} to answer`, () => scrape(address, { ca, servername }).catch(() => undefined), { timeoutMs: 120_000, intervalMs: 1000 });
      assert.equal(anonymous.status, 401, `${what}: anonymous`);
      assert.equal((await scrape(address, { ca, servername, token: nobody })).status, 403, `${what}: unprivileged`);
      const allowed = await scrape(address, { ca, servername, token: scraper });
      assert.equal(allowed.status, 200, `${what}: granted: ${allowed.text}`);
      assert.match(allowed.text, /^# HELP /m);
      console.log(`${what}: 401 anonymous, 403 unprivileged, 200 granted (${allowed.text.split('\n').length} lines)`);
    }
  }
});

test('kubectl scale machinedeployment worker --replicas=3 adds a Ready node; back to 2 removes one, drained first', async () => {
  const two = await runningWorkers(2, 30_000);
  assert.match(await kubectl(['scale', 'machinedeployment', 'worker', '-n', NS, '--replicas=3']), /machinedeployment.cluster.x-k8s.io\/worker scaled/);
  const three = await runningWorkers(3, 120_000);
  const added = three.find((m) => !two.some((t) => t.metadata.name === m.metadata.name))!;
  assert.match(await kubectl(['get', 'node', added.metadata.name]), /\sReady(,SchedulingDisabled)?\s+worker\s/);
  await kubectl(['scale', 'machinedeployment', 'worker', '-n', NS, '--replicas=2']);
  const left = await runningWorkers(2, 60_000);
  const removed = three.find((m) => !left.some((t) => t.metadata.name === m.metadata.name))!;
  await eventually(`${removed.metadata.name}'s Machine, Node and instance gone`, async () => {
    const machines = ((await json(['get', 'machines', '-n', NS])).items as Obj[]).map((m) => m.metadata.name);
    const nodes = ((await json(['get', 'nodes'])).items as Obj[]).map((n) => n.metadata.name);
    const live = await new CloudClient(c.cluster.cloud!.url, c.cluster.cloud!.rootCredential).listInstances({ names: [removed.metadata.name], states: ['pending', 'running', 'stopping', 'stopped'] });
    return !machines.includes(removed.metadata.name) && !nodes.includes(removed.metadata.name) && live.length === 0;
  }, 60_000);
  const events = ((await json(['get', 'events', '-n', NS, '--field-selector', `involvedObject.name=${removed.metadata.name}`])).items as Obj[]).map((e) => e.reason);
  assert.ok(events.includes('SuccessfulDrainNode'), `drained before it went: ${events}`);
});

test("a worker's instance terminated: its pods are recreated elsewhere, and its MachineHealthCheck gets it replaced by a new Ready node", async () => {
  const deployment = {
    apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web', namespace: 'default' },
    spec: {
      replicas: 2, selector: { matchLabels: { app: 'web' } },
      template: {
        metadata: { labels: { app: 'web' } },
        spec: {
          containers: [{ name: 'web', image: 'bosun.local/echo' }],
          tolerations: ['not-ready', 'unreachable'].map((t) => ({ key: `node.kubernetes.io/${t}`, operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 2 })),
          topologySpreadConstraints: [{ maxSkew: 1, topologyKey: 'kubernetes.io/hostname', whenUnsatisfiable: 'ScheduleAnyway', labelSelector: { matchLabels: { app: 'web' } } }],
        },
      },
    },
  };
  const r = await runKubectl(c.cluster.kubeconfigPath, ['apply', '-f', '-'], { input: JSON.stringify(deployment) });
  assert.equal(r.code, 0, r.stderr);
  const before = await runningWorkers(2, 30_000);
  const workerNames = before.map((m) => m.metadata.name as string);
  const running = async () => ((await json(['get', 'pods', '-l', 'app=web'])).items as Obj[]).filter((p) => p.status.phase === 'Running' && !p.metadata.deletionTimestamp);
  await eventually('two web pods running, one per worker', async () => {
    const pods = await running();
    return pods.length === 2 && new Set(pods.map((p) => p.spec.nodeName)).size === 2 && pods.every((p) => workerNames.includes(p.spec.nodeName));
  }, 60_000);
  const [victim, survivor] = before;
  const cloud = new CloudClient(c.cluster.cloud!.url, c.cluster.cloud!.rootCredential);
  const started = Date.now();
  await cloud.operate('terminate', victim.spec.providerID.replace('local://', ''));
  // Both at once: the replacement's time is not that of the pods'.
  const healed = eventually('a replacement worker Running with a Ready node', async () => {
    const ms = await runningWorkers(2, 1_000).catch(() => undefined);
    return ms && !ms.some((m) => m.metadata.name === victim.metadata.name) && { ms, seconds: (Date.now() - started) / 1000 };
  }, { timeoutMs: 240_000, intervalMs: 500 });
  // (Recreated on the survivor, or on the replacement if it is Ready by then.)
  const moved = eventually(`both web pods running again, none on ${victim.metadata.name}`, async () => {
    const pods = await running();
    return pods.length === 2 && pods.every((p) => p.spec.nodeName !== victim.metadata.name);
  }, 180_000);
  const [{ ms: after, seconds }] = await Promise.all([healed, moved]);
  const replacement = after.find((m) => m.metadata.name !== survivor.metadata.name)!.metadata.name;
  const marked = ((await json(['get', 'events', '-n', NS, '--field-selector', `involvedObject.name=${victim.metadata.name},reason=MachineMarkedUnhealthy`])).items as Obj[]);
  assert.equal(marked.length, 1, 'the MachineHealthCheck marked the machine');
  console.log(`self-healing on the installed cluster: ${victim.metadata.name}'s instance terminated → replacement ${replacement} Ready in ${seconds.toFixed(1)} s (${marked[0].message})`);
  assert.equal(((await json(['get', 'machines', '-n', NS])).items as Obj[]).some((m) => m.metadata.name === victim.metadata.name), false, 'the dead Machine is gone');
  await kubectl(['delete', 'deployment', 'web']);
});

test('a stopped cluster comes back: the same nodes and machines, the operators running again, no bootstrap', async () => {
  const machinesNow = async () => (((await json(['get', 'machines', '-n', NS])).items as Obj[]).map((m) => `${m.metadata.uid} ${m.spec.providerID}`)).sort();
  const machines = await machinesNow();
  const before = (((await json(['get', 'nodes'])).items as Obj[]).map((n) => n.metadata.uid as string)).sort();
  await c.restart();
  assert.equal(c.cluster.installed, false);
  assert.ok(c.lines.some((l) => /^\[5\/6\] bringing the installed cluster back/.test(l)), c.lines.join('\n'));
  assert.ok(!c.lines.some((l) => /bootstrap:/.test(l)), 'no bootstrap ran');
  const now = (((await json(['get', 'nodes'])).items as Obj[]).map((n) => n.metadata.uid as string)).sort();
  assert.deepEqual(now, before, 'the same Node objects');
  const ready = (await json(['get', 'nodes'])).items.filter(isReady);
  assert.equal(ready.length, 5, 'the three masters and the two workers');
  assert.match(await kubectl(['get', 'clusterversion']), /^version\s+1\.0\.0\s+True\s/m);
  // Cluster API runs again and finds every machine where it was: nothing created, nothing replaced.
  await eventually('the Cluster API controllers running again', async () => ((await json(['get', 'pods', '-n', NS])).items as Obj[]).some((p) => p.status?.containerStatuses?.[0]?.ready), 60_000);
  await runningWorkers(2, 60_000);
  await new Promise((r) => setTimeout(r, 5_000));
  assert.deepEqual(await machinesNow(), machines, 'the same Machines on the same instances');
  assert.equal((await new CloudClient(c.cluster.cloud!.url, c.cluster.cloud!.rootCredential).listInstances({ states: ['pending', 'running'] })).length, 5, 'no instance made twice');
});
