// The disruption scenario on an installed local cluster (installed-cluster.ts), shared by
// `npm run bench:disruption` and test/cluster/upgrade-disruption.test.ts: a workload behind a
// LoadBalancer Service (two echo pods with a PodDisruptionBudget, as OpenShift's
// service-load-balancer-with-pdb backend), then an upgrade (`bosun adm upgrade --to V --wait`, as an
// administrator runs it) observed from another process — the API through the `api` address and
// the Service through the cloud's balancer, each over new and reused connections, and a writer
// counting acknowledged writes — optionally with seeded faults injected while it runs. What it
// returns is what the bench prints and the test asserts.
import { CloudClient } from '../../../src/cloud/client.js';
import { KubeClient } from '../../../src/kube/client.js';
import { loadKubeConfig } from '../../../src/kube/kubeconfig.js';
import { resources } from '../../../src/kube/resources.js';
import { runBosun } from '../cli.js';
import { eventually } from '../eventually.js';
import { OPERATOR_NAMESPACES, type InstalledCluster } from '../installed-cluster.js';
import { injectFaults, planFaults, type FaultKind, type InjectedFault, type PlannedFault } from './faults.js';
import { lostWrites, startObserver, summarize, type Disruption, type WriteCheck } from './monitor.js';

export const WORKLOAD_NAMESPACE = 'disruption';
export const WRITES_NAMESPACE = 'disruption-writes';
export const COUNTER = 'counter';

export interface Workload {
  /** http://<balancer address>:<port> */
  serviceUrl: string;
}

/** The echo Deployment (2 replicas spread over the workers), its PDB and a LoadBalancer Service; resolves once the balancer answers. */
export async function deployWorkload(c: InstalledCluster): Promise<Workload> {
  const kube = new KubeClient(loadKubeConfig(c.cluster.kubeconfigPath));
  const labels = { app: 'echo' };
  await kube.create(resources.namespaces, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: WORKLOAD_NAMESPACE } });
  await kube.create(resources.deployments, {
    apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'echo', namespace: WORKLOAD_NAMESPACE },
    spec: {
      replicas: 2, selector: { matchLabels: labels },
      template: {
        metadata: { labels },
        spec: {
          containers: [{ name: 'echo', image: 'bosun.local/echo', ports: [{ name: 'http', containerPort: 8080 }], readinessProbe: { httpGet: { path: '/', port: 8080 }, periodSeconds: 1 } }],
          topologySpreadConstraints: [{ maxSkew: 1, topologyKey: 'kubernetes.io/hostname', whenUnsatisfiable: 'ScheduleAnyway', labelSelector: { matchLabels: labels } }],
        },
      },
    },
  });
  await kube.create(resources.podDisruptionBudgets, { apiVersion: 'policy/v1', kind: 'PodDisruptionBudget', metadata: { name: 'echo', namespace: WORKLOAD_NAMESPACE }, spec: { minAvailable: 1, selector: { matchLabels: labels } } });
  await kube.create(resources.services, { apiVersion: 'v1', kind: 'Service', metadata: { name: 'echo', namespace: WORKLOAD_NAMESPACE }, spec: { type: 'LoadBalancer', selector: labels, ports: [{ name: 'http', port: 8080, targetPort: 'http' }] } });
  const ip = await eventually('the echo Service\'s balancer address', async () => (await kube.get(resources.services, 'echo', WORKLOAD_NAMESPACE)).status?.loadBalancer?.ingress?.[0]?.ip, 120_000);
  const serviceUrl = `http://${ip}:8080`;
  await eventually('the echo Service answering through its balancer', async () => (await fetch(serviceUrl, { signal: AbortSignal.timeout(2_000) })).ok, 120_000);
  return { serviceUrl };
}

export interface FaultOptions {
  seed: number;
  kinds: readonly FaultKind[];
  windowMs: number;
}

export interface UpgradeRun {
  to: string;
  /** `bosun adm upgrade --wait`'s exit code and output. */
  code: number | null;
  output: string;
  seconds: number;
  disruption: Disruption[];
  writes: WriteCheck;
  plan: PlannedFault[];
  faults: InjectedFault[];
  /** The longest the observer process was held up (ms). */
  observerMaxLagMs: number;
}

/** `bosun adm upgrade --to <to> --wait`, observed (and with `faults`, faulted) from start to end. */
export async function observedUpgrade(c: InstalledCluster, workload: Workload, to: string, faults?: FaultOptions, timeoutS = 900): Promise<UpgradeRun> {
  const kc = loadKubeConfig(c.cluster.kubeconfigPath);
  const kube = new KubeClient(kc);
  // A namespace per upgrade: what one run wrote is not counted in another.
  const writes = `${WRITES_NAMESPACE}-${to.replace(/\./g, '-')}`;
  await kube.create(resources.namespaces, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: writes } });
  await kube.create(resources.configMaps, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: COUNTER, namespace: writes }, data: { value: '0' } });

  const api = c.cluster.api;
  const observer = await startObserver({
    backends: [
      { name: 'kube-api', url: api.url, path: '/api/v1/namespaces/default', ca: api.caPem, token: api.token },
      { name: 'service-lb', url: workload.serviceUrl, path: '/' },
    ],
    writer: { url: api.url, ca: api.caPem, token: api.token, namespace: writes, counter: COUNTER, intervalMs: 250 },
  });
  const started = Date.now();
  const upgrade = runBosun(['adm', 'upgrade', '--to', to, '--wait', '--timeout', String(timeoutS), '--kubeconfig', c.cluster.kubeconfigPath], { timeoutMs: (timeoutS + 60) * 1000 });
  let plan: PlannedFault[] = [];
  let injected: Promise<InjectedFault[]> = Promise.resolve([]);
  if (faults) {
    plan = planFaults({ seed: faults.seed, kinds: faults.kinds, windowMs: faults.windowMs });
    const cloud = c.cluster.cloud!;
    injected = injectFaults({
      kube,
      cloud: new CloudClient(cloud.url, cloud.rootCredential),
      dataDir: c.options.dataDir,
      operatorNamespaces: OPERATOR_NAMESPACES,
      restartCloud: async () => { await cloud.restartApi(5_000); return `the cloud's API at ${cloud.url} down for 5 s and back`; },
    }, plan, faults.seed, upgrade);
  }
  // The observer is stopped whatever happened, so that no process outlives the run.
  const result = await upgrade.catch(async (e: Error) => { await observer.stop().catch(() => undefined); throw e; });
  const seconds = (Date.now() - started) / 1000;
  const report = await observer.stop();
  const faultsDone = await injected;
  return {
    to, code: result.code, output: `${result.stdout}${result.stderr}`, seconds,
    disruption: summarize(report),
    writes: await lostWrites(kube, writes, COUNTER, report.writes!),
    plan, faults: faultsDone, observerMaxLagMs: report.maxLagMs,
  };
}

export interface UpgradeOutcome {
  history: { version: string; state: string };
  /** Nodes not Done on their pool's rendered config of the target release (those still joining among them). */
  nodesBehind: string[];
  /** Nodes whose daemon has not yet said which config they run: machines that just joined. */
  joining: string[];
  nodes: number;
}

/** Where the cluster ended: the ClusterVersion's last history entry, and every node against its pool's config rendered from `to`. */
export async function upgradeOutcome(c: InstalledCluster, to: string): Promise<UpgradeOutcome> {
  const kube = new KubeClient(loadKubeConfig(c.cluster.kubeconfigPath));
  const cv = await kube.get(resources.clusterVersions, 'version');
  const history = cv.status?.history?.[0] ?? { version: '', state: '' };
  const pools = (await kube.list(resources.machineConfigPools)).items;
  const nodes = (await kube.list(resources.nodes)).items;
  // Each pool's rendered config read once, not once per node.
  const renderedOf = new Map(await Promise.all(pools.map(async (p) => {
    const target = p.spec?.configuration?.name;
    return [p.metadata?.name, target ? await kube.read(resources.machineConfigs, target) : undefined] as const;
  })));
  const behind: string[] = [];
  const joining: string[] = [];
  for (const n of nodes) {
    const labels = n.metadata?.labels ?? {};
    const pool = pools.find((p) => p.metadata?.name === (labels['node-role.kubernetes.io/master'] !== undefined ? 'master' : 'worker'));
    const target = pool?.spec?.configuration?.name;
    const rendered = target ? renderedOf.get(pool?.metadata?.name) : undefined;
    const a = n.metadata?.annotations ?? {};
    const ok = target && a['machineconfiguration.openshift.io/currentConfig'] === target && a['machineconfiguration.openshift.io/state'] === 'Done'
      && rendered?.metadata?.annotations?.['machineconfiguration.openshift.io/release-image-version'] === to;
    if (!ok && a['machineconfiguration.openshift.io/currentConfig'] === undefined) joining.push(n.metadata?.name ?? '');
    if (!ok) behind.push(`${n.metadata?.name}: ${a['machineconfiguration.openshift.io/currentConfig']} (${a['machineconfiguration.openshift.io/state']}), pool ${pool?.metadata?.name} wants ${target} (${rendered?.metadata?.annotations?.['machineconfiguration.openshift.io/release-image-version']})`);
  }
  return { history: { version: history.version ?? '', state: history.state ?? '' }, nodesBehind: behind, joining, nodes: nodes.length };
}
