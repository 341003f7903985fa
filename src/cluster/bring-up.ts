// Bring-up of a local bosun cluster on one machine (`bosun start`), in the order of an OpenShift
// install:
//   API server → releases built and signed → update service → the payload's CRDs → the
//   installer's facts (Infrastructure, CAs, pull secret, the machine-config server's certificate
//   and bootstrap credentials) and ClusterVersion/version naming the release to install →
//   bootstrap (install/bootstrap.ts: machine-config server, operator and controller and the CVO,
//   run in this process as OpenShift's bootstrap node runs them) → the masters, created in the
//   local cloud, boot from the bootstrap server through the api-int balancer and register → the
//   CVO applies the payload, whose operators now run as pods on the masters → at the same time,
//   the hand-over (each bootstrap component stops once its pod runs, and the bootstrap server
//   leaves api-int) and Cluster API taking the machines (install/cluster-api.ts): the masters
//   adopted as Machines, the workers created by MachineDeployment `worker` with a
//   MachineHealthCheck, booting from the machine-config servers behind api-int → ClusterVersion
//   Available.
//
// The service network is loopback (127.30.0.0/16, the API server's --service-cluster-ip-range and
// Network/cluster's serviceNetwork), so that the node agents can serve cluster IPs without root.
//
// The host keeps what OpenShift's control-plane nodes run outside pods: the API server, and
// beside it the workload controllers, the scheduler and the machine approver
// (install/control-plane.ts), and the local cloud whose machines run node agents.
//
// A second start reuses the data directory: certificates, token, keys, releases, objects and
// machines are kept; the machines boot again (without Ignition) and their pods come back, and no
// bootstrap runs. With no masters (`masters: 0`) there are no machines: the bootstrap components
// run the cluster in this process for as long as it runs.
import { randomUUID } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseAllDocuments } from 'yaml';
import type { ApiServer } from '../apiserver/server.js';
import { startClusterServer } from '../apiserver/cluster-server.js';
import { CloudClient } from '../cloud/client.js';
import { CloudService } from '../cloud/service.js';
import { DEFAULT_INSTANCE_TYPE } from '../cloud/catalogue.js';
import { BoundExceeded, bounded } from '../common/bounded.js';
import { logger } from '../common/log.js';
import { createCA, loadOrCreate } from '../common/pki.js';
import type { BuiltRelease } from '../cvo/payload/build.js';
import type { MachineConfigServer } from '../mco/server/server.js';
import { VERIFICATION_ANNOTATION, VERIFICATION_NAMESPACE } from '../cvo/verify.js';
import type * as api from '../api/index.js';
import { KubeClient } from '../kube/client.js';
import { loadKubeConfig } from '../kube/kubeconfig.js';
import { resources } from '../kube/resources.js';
import { startUpdateService, type UpdateService } from '../update-service/server.js';
import { NodeAgentRuntime } from './node-agent/runtime.js';
import { API_INT_ADDRESS, MCS_HTTP_PORT, MCS_TLS_PORT, ensureApiInt } from './install/api-int.js';
import { Bootstrap } from './install/bootstrap.js';
import { LOCAL_SERVICE_NETWORK, MCO_NAMESPACE, createMissing, writeClusterFacts } from './install/cluster-facts.js';
import { startControlPlane } from './install/control-plane.js';
import { SharedReleaseStore, createMasters, nodesReady, userData } from './install/machines.js';
import { workersThroughClusterApi } from './install/cluster-api.js';
import type { Instance } from '../cloud/types.js';
import { Progress } from './install/progress.js';
import { publishReleases, releaseSigningKey } from './install/releases.js';
import { handOver } from './install/hand-over.js';

export interface BringUpOptions {
  dataDir: string;
  /** bosun's release sources (release-payload/) and the CVO's manifests (manifests/). */
  releaseSources: string;
  cvoManifests: string;
  api: { host: string; port: number };
  updateService: { host: string; port: number };
  /** The release to install and the channel to follow. */
  version: string;
  channel: string;
  progress?: (line: string) => void;
  /** How often the CVO asks the update service for updates (default 5 minutes). */
  upstreamPollMs?: number;
  /** How long to wait for the ClusterVersion to become Available (default 5 minutes). */
  installTimeoutMs?: number;
  /** The bootstrap machine-config server's listeners (default 127.0.0.1:22623 TLS and :22624 HTTP;
   *  with machines the ports must be 22623/22624, which api-int forwards to). */
  machineConfigServer?: { host: string; tlsPort: number; httpPort: number };
  /** Masters (default 0: no machines; the bootstrap components run the cluster in this process). */
  masters?: number;
  /** Workers (default 0). */
  workers?: number;
  /** How long a rebooting machine stays down (default 3 s). */
  bootDelayMs?: number;
  /** The local cloud's API (default 127.0.0.1 on a free port). */
  cloud?: { host: string; port: number };
  instanceType?: string;
  /** The first host number of the machines' addresses 127.0.1.N (default 1). */
  firstInstanceHost?: number;
  /** #17: a local 3-member etcd and two API servers behind the `api` address, instead of one API server on SQLite. */
  etcd?: boolean;
  /** Run monitoring (Prometheus, thanos-querier; default true). Without machines there is no node to run it on: off. */
  monitoring?: boolean;
}

/** What keeps the CVO from running monitoring: ClusterVersion spec.overrides marking the monitoring
 *  operator's Deployment and ClusterOperator unmanaged (its CRDs, RBAC, Services, ServiceMonitors
 *  and rules are still applied; nothing runs them and nothing waits for them). */
export const MONITORING_OFF_OVERRIDES = [
  { kind: 'Deployment', group: 'apps', namespace: 'openshift-monitoring', name: 'cluster-monitoring-operator', unmanaged: true },
  { kind: 'ClusterOperator', group: 'config.openshift.io', namespace: '', name: 'monitoring', unmanaged: true },
];

/** Without machines no node runs the web console: its Deployment and ClusterOperator are left
 *  unmanaged too (its Service, RBAC and namespace are still applied). */
export const CONSOLE_OFF_OVERRIDES = [
  { kind: 'Deployment', group: 'apps', namespace: 'openshift-console', name: 'console', unmanaged: true },
  { kind: 'ClusterOperator', group: 'config.openshift.io', namespace: '', name: 'console', unmanaged: true },
];

/** Without machines no node runs OLM either: its Deployments, ClusterOperators and the package
 *  server's APIService are left unmanaged (its CRDs, RBAC, namespaces, the default catalog and the
 *  global OperatorGroup are still applied). */
export const OLM_OFF_OVERRIDES = [
  ...['olm-operator', 'catalog-operator', 'package-server'].map((name) => ({ kind: 'Deployment', group: 'apps', namespace: 'openshift-operator-lifecycle-manager', name, unmanaged: true })),
  ...['operator-lifecycle-manager', 'operator-lifecycle-manager-catalog', 'operator-lifecycle-manager-packageserver'].map((name) => ({ kind: 'ClusterOperator', group: 'config.openshift.io', namespace: '', name, unmanaged: true })),
  { kind: 'APIService', group: 'apiregistration.k8s.io', namespace: '', name: 'v1.packages.operators.coreos.com', unmanaged: true },
];

export interface LocalCluster {
  api: ApiServer;
  updateService: UpdateService;
  /** The bootstrap machine-config server while it runs (always, without machines). */
  machineConfigServer?: MachineConfigServer;
  cloud?: CloudService;
  /** The releases in the store (their parsed payloads are not kept: the CVO pods read them from the store). */
  releases: Array<Omit<BuiltRelease, 'payload'>>;
  kubeconfigPath: string;
  /** True when this start installed the cluster; false when it brought an installed one back. */
  installed: boolean;
  /** Stops every part, last started first, each within a bound; rejects naming the parts that did
   *  not stop cleanly (after trying all of them). */
  stop(): Promise<void>;
}

/** How long one part of the cluster may take to stop before the stop goes on without it. */
const STOP_BOUND_MS = 30_000;
/** The local cloud bounds each step of its close itself (cloud/service.ts); this is their sum. */
const CLOUD_STOP_BOUND_MS = 120_000;

/**
 * Stops what was started, last first, each part within its bound: a part that does not finish
 * (or fails) is said in the log by name and the next one stops anyway, so a stop always ends —
 * and says which part it left behind.
 */
class Stack {
  private readonly stops: Array<{ what: string; stop: () => Promise<void>; boundMs: number }> = [];
  private readonly log = logger('bring-up');
  push(what: string, stop: () => Promise<void>, boundMs = STOP_BOUND_MS): void {
    this.stops.push({ what, stop, boundMs });
  }
  /** Resolves with the parts that did not stop cleanly (what, and why), after trying every one. */
  async unwind(): Promise<string[]> {
    const problems: string[] = [];
    while (this.stops.length) {
      const { what, stop, boundMs } = this.stops.pop()!;
      const started = Date.now();
      try {
        await bounded(stop(), boundMs, `stopping ${what}`);
        this.log.info({ part: what, ms: Date.now() - started }, `stopped ${what}`);
      } catch (e) {
        const problem = e instanceof BoundExceeded ? `${e.message}; going on without it` : `stopping ${what} failed: ${(e as Error).message}`;
        this.log.warn({ part: what, ms: Date.now() - started }, problem);
        problems.push(problem);
      }
    }
    return problems;
  }
}

export async function bringUp(given: BringUpOptions): Promise<LocalCluster> {
  // Absolute: machines, pods and Ignition run with other working directories.
  const options = { ...given, dataDir: resolve(given.dataDir) };
  const say = options.progress ?? (() => undefined);
  const masters = options.masters ?? 0;
  const workers = options.workers ?? 0;
  if (masters === 0 && workers > 0) throw new Error('workers need masters: give --masters 1 or more');
  const withMachines = masters > 0;
  // An installed cluster with machines comes back as it was: no bootstrap, no new machines.
  const installed = withMachines && existsSync(installedMarker(options.dataDir));
  const progress = new Progress(say, installed ? 6 : withMachines ? 9 : 7);
  const stack = new Stack();
  try {
    // Made while the API server starts, if this is the first start (step 2 signs with it).
    const signingKey = releaseSigningKey(options.dataDir);
    progress.step(1, `starting the API server on https://${options.api.host}:${options.api.port}`);
    const apiOptions = {
      dataDir: options.dataDir, host: options.api.host, port: options.api.port, logLevel: 'warn',
      servingNames: withMachines ? [API_INT_ADDRESS] : [],
      serviceClusterIPRange: LOCAL_SERVICE_NETWORK,
    };
    // #17 hook (etcd-control-plane.ts): with --etcd, a 3-member etcd and two API servers behind the api address.
    // etcd's client is loaded only then (gRPC, protobufs: some 25 MiB in this process).
    const cluster = options.etcd ? await (await import('./etcd-control-plane.js')).startEtcdControlPlane(apiOptions) : await startClusterServer(apiOptions);
    // With etcd: two API server processes, then three etcd members, one after another.
    stack.push(options.etcd ? 'the API servers and etcd' : 'the API server', () => cluster.stop(), options.etcd ? 2 * STOP_BOUND_MS : STOP_BOUND_MS);
    const api = cluster.server;
    const kc = loadKubeConfig(api.kubeconfigPath);
    const client = new KubeClient(kc);

    progress.step(2, `building and signing releases into ${join(options.dataDir, 'releases')}`);
    const published = await publishReleases({ dataDir: options.dataDir, sources: options.releaseSources, cvoManifests: options.cvoManifests, say, signingKey });
    const target = published.releases.find((r) => r.version === options.version);
    if (!target) throw new Error(`release ${options.version} is not defined in ${join(options.releaseSources, 'releases')} (have: ${published.releases.map((r) => r.version).join(', ')})`);

    progress.step(3, `starting the update service on http://${options.updateService.host}:${options.updateService.port}`);
    const updateService = await startUpdateService({ graphData: options.releaseSources, releases: published.store, signatures: published.signatures, host: options.updateService.host, port: options.updateService.port });
    stack.push('the update service', () => updateService.close());


    let cloud: CloudService | undefined;
    let cloudClient: CloudClient | undefined;
    const machinesStartedAt = Date.now();
    // The control plane's controllers beside the API server; on an install, once the payload's
    // CRDs are there (the machine approver watches Machines, the cloud-credential controller
    // CredentialsRequests: started before, their informers would fail and back off meanwhile).
    const startPlane = async () => {
      const plane = await startControlPlane(api.kubeconfigPath, cloudClient!, cloud!.url, say);
      stack.push("the control plane's controllers", () => plane.stop());
    };
    if (withMachines) {
      const listen = options.cloud ?? { host: '127.0.0.1', port: 0 };
      progress.step(4, `starting the local cloud on http://${listen.host}:${listen.port}${installed ? " and the control plane's controllers" : ''}`);
      const runtime = new SharedReleaseStore(published.store, new NodeAgentRuntime());
      cloud = new CloudService({ dataDir: options.dataDir, bootDelayMs: options.bootDelayMs, firstInstanceHost: options.firstInstanceHost, runtime, host: listen.host, port: listen.port });
      // The installer is the cloud's owner: it uses the root credential the cloud made (cloud/root.credential).
      cloudClient = new CloudClient(await cloud.start(), cloud.rootCredential);
      const service = cloud;
      stack.push('the local cloud (its machines, load balancers and API)', () => service.close(), CLOUD_STOP_BOUND_MS);
      if (installed) await startPlane();
      progress.detail(`cloud API ${cloud.url}; machines under ${join(options.dataDir, 'machines')}`);
    }

    if (installed) {
      const cc = cloudClient!;
      progress.step(5, 'bringing the installed cluster back: its machines boot again (no Ignition, no bootstrap)');
      await ensureApiInt(cc, { api: { host: api.host, port: api.port }, masters: await mastersInCloud(cc) });
      const names = (await cc.listInstances({ states: ['pending', 'running'] })).map((i) => i.name);
      await progress.waitFor(`${names.length} nodes Ready`, async () => {
        const bootIds = new Map((await cc.listInstances({ states: ['running'] })).filter((i) => i.machine.phase === 'Up').map((i) => [i.name, i.bootId]));
        return nodesReady(client, names, bootIds);
      }, { timeoutMs: 180_000 });
      progress.step(6, 'the operators run as pods again on the masters; waiting for them and the ClusterVersion');
      await progress.waitFor('the operator pods running again', () => operatorPodsRestarted(client, machinesStartedAt - 1000), { timeoutMs: 180_000 });
      await followClusterVersion(client, say, options.installTimeoutMs ?? 300_000);
      return localCluster({ api, updateService, cloud, releases: published.releases, installed: false, stack });
    }

    progress.step(withMachines ? 5 : 4, `applying the payload's CRDs and the installer's facts${withMachines ? "; starting the control plane's controllers" : ''}`);
    const { crds, operatorImages } = bootstrapManifests(target.dir);
    const created = await createMissing(client, crds);
    progress.detail(`${crds.length} CRDs (${created} new)`);
    // The bootstrap operators' images, from the release being installed (as OpenShift's bootstrap
    // renders with the release's image references): the machine-config operator renders the
    // pools, and the cloud-controller-manager operator deploys the CCM, without waiting for the
    // CVO to load the payload and apply these same objects (it finds them as it would write them).
    await createMissing(client, operatorImages);
    if (withMachines) await startPlane();
    const pkiDir = join(options.dataDir, 'pki');
    const apiInternalUrl = withMachines ? `https://${API_INT_ADDRESS}:${api.port}` : api.url;
    const serverNames = withMachines ? [API_INT_ADDRESS] : [];
    await writeClusterFacts(client, {
      caPem: api.caPem,
      serviceNetwork: LOCAL_SERVICE_NETWORK,
      apiUrl: api.url,
      apiInternalUrl,
      machines: withMachines ? { cloudUrl: cloud!.url, clusterCa: await loadOrCreate(pkiDir, 'ca', () => createCA('bosun-ca')), serverNames: ['127.0.0.1', 'localhost', ...serverNames] } : undefined,
      size: { masters, workers },
    });
    await writeReleaseVerification(client, published.publicKey, `${updateService.url}/signatures`);
    await createMissing(client, [{
      apiVersion: 'config.openshift.io/v1',
      kind: 'ClusterVersion',
      metadata: { name: 'version' },
      spec: {
        clusterID: randomUUID(), channel: options.channel, upstream: `${updateService.url}/api/upgrades_info/v1/graph`, desiredUpdate: { version: options.version, image: target.pullspec },
        ...(withMachines ? (options.monitoring !== false ? {} : { overrides: MONITORING_OFF_OVERRIDES }) : { overrides: [...MONITORING_OFF_OVERRIDES, ...CONSOLE_OFF_OVERRIDES, ...OLM_OFF_OVERRIDES] }),
      },
    }]);
    progress.detail(`install ${options.version} from channel ${options.channel}`);

    const serverListen = options.machineConfigServer ?? { host: '127.0.0.1', tlsPort: MCS_TLS_PORT, httpPort: MCS_HTTP_PORT };
    if (withMachines && (serverListen.tlsPort !== MCS_TLS_PORT || serverListen.httpPort !== MCS_HTTP_PORT)) {
      throw new Error(`with machines the bootstrap machine-config server must listen on ${MCS_TLS_PORT}/${MCS_HTTP_PORT}, where api-int forwards (got ${serverListen.tlsPort}/${serverListen.httpPort})`);
    }
    progress.step(withMachines ? 6 : 5, `bootstrap: the machine-config server on https://${serverListen.host}:${serverListen.tlsPort}, its operator and controller, and the cluster-version operator`);
    const bootstrapKubeconfig = withMachines ? await secretValue(client, MCO_NAMESPACE, 'node-bootstrapper-token', 'kubeconfig') : undefined;
    const bootstrap = await Bootstrap.start({
      bootstrapKubeconfig,
      kubeconfigPath: api.kubeconfigPath, pkiDir, releaseStore: published.store, releaseVersion: options.version, server: serverListen, serverNames,
      userDataPort: withMachines ? MCS_TLS_PORT : undefined, upstreamPollMs: options.upstreamPollMs, clusterApiReport: !withMachines, say,
    });
    stack.push('the bootstrap components', () => bootstrap.stop());

    if (withMachines) {
      const cc = cloudClient!;
      await ensureApiInt(cc, { api: { host: api.host, port: api.port }, bootstrapServer: serverListen.host, masters: [] });
      progress.detail(`api-int: ${API_INT_ADDRESS}:${api.port} (API), :${MCS_TLS_PORT}/:${MCS_HTTP_PORT} (machine configs)`);
      progress.step(7, `creating ${masters} master${masters === 1 ? '' : 's'}; they boot from the bootstrap machine-config server`);
      const masterMachines = await bootMasters(client, cc, progress, masters, options.instanceType);
      const masterIds = masterMachines.map((m) => m.id);
      await ensureApiInt(cc, { api: { host: api.host, port: api.port }, bootstrapServer: serverListen.host, masters: masterIds });
      // The hand-over and the workers go on together, as OpenShift's workers are created by the
      // Machine API while the bootstrap completes: neither waits for the other (a worker that boots
      // meanwhile gets its config from whichever machine-config server api-int sends it to).
      const handingOver = (async () => {
        await handOver({ client, bootstrap, progress, masters });
        await ensureApiInt(cc, { api: { host: api.host, port: api.port }, masters: masterIds });
        progress.detail('the bootstrap machine-config server left api-int; the masters serve machine configs');
      })();
      progress.step(8, `Cluster API takes the machines: the masters adopted as Machines, ${workers} worker${workers === 1 ? '' : 's'} created by MachineDeployment worker with a MachineHealthCheck, while the bootstrap hands over; they boot from the machine-config servers behind api-int`);
      const workersUp = workersThroughClusterApi({ client, progress, masters: masterMachines, apiPort: api.port, workers, instanceType: options.instanceType ?? DEFAULT_INSTANCE_TYPE });
      await Promise.all([handingOver, workersUp]);
    }

    progress.step(withMachines ? 9 : 6, 'the cluster-version operator applies the payload');
    await followClusterVersion(client, say, options.installTimeoutMs ?? 300_000);
    if (withMachines) writeFileSync(installedMarker(options.dataDir), `${new Date().toISOString()} ${options.version}\n`);
    else progress.step(7, 'the cluster is Available');
    return localCluster({ api, updateService, cloud, bootstrap, releases: published.releases, installed: true, stack });
  } catch (e) {
    await stack.unwind();
    throw e;
  }
}

function localCluster(o: { api: ApiServer; updateService: UpdateService; cloud?: CloudService; bootstrap?: Bootstrap; releases: BuiltRelease[]; installed: boolean; stack: Stack }): LocalCluster {
  const bootstrap = o.bootstrap;
  return {
    api: o.api,
    updateService: o.updateService,
    cloud: o.cloud,
    machineConfigServer: bootstrap?.parts().includes('server') ? bootstrap.server : undefined,
    releases: o.releases.map(({ version, digest, pullspec, dir }) => ({ version, digest, pullspec, dir })),
    kubeconfigPath: o.api.kubeconfigPath,
    installed: o.installed,
    async stop() {
      const problems = await o.stack.unwind();
      if (problems.length > 0) throw new Error(`the cluster stopped, but not cleanly: ${problems.join('; ')}`);
    },
  };
}

/** Creates the masters from their user data and waits until their nodes are Ready. */
async function bootMasters(client: KubeClient, cloud: CloudClient, progress: Progress, count: number, type = DEFAULT_INSTANCE_TYPE): Promise<Instance[]> {
  let data: string | undefined;
  // The machines boot from the pool's rendered config: it must exist before they fetch it.
  await progress.waitFor('the master pool\'s rendered config and master-user-data', async () => {
    const pool = await client.read(resources.machineConfigPools, 'master');
    const rendered: string | undefined = pool?.spec?.configuration?.name;
    data = await userData(client, 'master');
    return { done: Boolean(rendered && data), status: rendered ? `${rendered}; user data ${data ? 'written' : 'not written yet'}` : 'not rendered yet' };
  }, { timeoutMs: 120_000 });
  const machines = await createMasters(cloud, count, data!, type);
  for (const m of machines) progress.detail(`${m.name.padEnd(28)} ${m.id}  ${m.privateIp.padEnd(12)} ${m.zone}`);
  await progress.waitFor(`${count} master node${count === 1 ? '' : 's'} Ready`, () => nodesReady(client, machines.map((m) => m.name)), { timeoutMs: 180_000 });
  return machines;
}

async function secretValue(client: KubeClient, namespace: string, name: string, key: string): Promise<string | undefined> {
  const data: string | undefined = (await client.read(resources.secrets, name, namespace))?.data?.[key];
  return data === undefined ? undefined : Buffer.from(data, 'base64').toString('utf8');
}

/** The live masters' instance IDs (named <infra>-master-N). */
async function mastersInCloud(cloud: CloudClient): Promise<string[]> {
  const live = await cloud.listInstances({ states: ['pending', 'running', 'stopping', 'stopped'] });
  return live.filter((i) => /-master-\d+$/.test(i.name)).map((i) => i.id);
}

/** Written when an install with machines completed: later starts bring the cluster back. */
function installedMarker(dataDir: string): string {
  return join(dataDir, 'installed');
}

/** Done when every pod of the payload's operator namespaces runs a container started since `since`. */
async function operatorPodsRestarted(client: KubeClient, since: number): Promise<{ done: boolean; status: string }> {
  const pods = (await Promise.all(['openshift-cluster-version', 'openshift-machine-config-operator', 'openshift-cloud-controller-manager-operator', 'openshift-cloud-controller-manager', 'openshift-cluster-api'].map(async (ns) => (await client.list(resources.pods, ns)).items))).flat();
  const fresh = pods.filter((p) => (p.status?.containerStatuses ?? []).some((c) => c.ready && Date.parse(c.state?.running?.startedAt ?? '') >= since));
  return { done: pods.length > 0 && fresh.length === pods.length, status: `${fresh.length}/${pods.length} running again` };
}

/** The ConfigMaps of images the bootstrap operators deploy from (the machine-config and
 *  cloud-controller-manager operators'), with their namespaces. */
const BOOTSTRAP_IMAGES = [
  { namespace: 'openshift-machine-config-operator', name: 'machine-config-operator-images' },
  { namespace: 'openshift-cloud-controller-manager-operator', name: 'cloud-controller-manager-images' },
];

/** Every CRD of the payload (the CVO's own and the operators'), as OpenShift's bootstrap applies
 *  them up front, so that the bootstrap components can watch their kinds from the start; and the
 *  bootstrap operators' images ConfigMaps (BOOTSTRAP_IMAGES) after their namespaces. */
function bootstrapManifests(releaseDir: string): { crds: api.CustomResourceDefinition[]; operatorImages: api.KubeObject[] } {
  const documents = ['manifests', 'release-manifests']
    .map((sub) => join(releaseDir, sub))
    .flatMap((dir) => readdirSync(dir).filter((f) => /\.ya?ml$/.test(f)).sort().map((f) => join(dir, f)))
    .flatMap((file) => parseAllDocuments(readFileSync(file, 'utf8')).map((d): unknown => d.toJS()))
    .filter((o): o is api.KubeObject => typeof (o as { kind?: unknown } | null)?.kind === 'string');
  // The payload's manifests: a document of kind CustomResourceDefinition is taken for one (the API server validates it).
  const crds = documents
    .filter((o): o is api.CustomResourceDefinition => o.kind === 'CustomResourceDefinition')
    .filter((o, i, all) => all.findIndex((x) => x.metadata?.name === o.metadata?.name) === i);
  const namespaces = documents.filter((o) => o.kind === 'Namespace' && BOOTSTRAP_IMAGES.some((b) => b.namespace === o.metadata?.name));
  const configMaps = documents.filter((o) => o.kind === 'ConfigMap' && BOOTSTRAP_IMAGES.some((b) => b.namespace === o.metadata?.namespace && b.name === o.metadata?.name));
  return { crds, operatorImages: [...namespaces, ...configMaps] };
}

/** The CVO trusts releases signed by this cluster's release key, found in its signature store. */
async function writeReleaseVerification(client: KubeClient, publicKey: string, store: string): Promise<void> {
  await createMissing(client, [{ apiVersion: 'v1', kind: 'Namespace', metadata: { name: VERIFICATION_NAMESPACE } }]);
  const verification = {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'release-verification', namespace: VERIFICATION_NAMESPACE, annotations: { [VERIFICATION_ANNOTATION]: '' } },
    data: { 'verifier-public-key-bosun-local': publicKey, 'store-bosun-local': store },
  };
  if ((await createMissing(client, [verification])) === 0) {
    const live = await client.get(resources.configMaps, verification.metadata.name, VERIFICATION_NAMESPACE);
    if (JSON.stringify(live.data) !== JSON.stringify(verification.data)) await client.update(resources.configMaps, { ...live, data: verification.data });
  }
}

/** Prints the ClusterVersion's Progressing message as it changes, until Available=True. */
async function followClusterVersion(client: KubeClient, say: (line: string) => void, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = '';
  for (;;) {
    const cv = await client.get(resources.clusterVersions, 'version');
    const conditions: Array<Record<string, string>> = cv.status?.conditions ?? [];
    const get = (type: string) => conditions.find((c) => c.type === type);
    const line = [get('Failing')?.status === 'True' ? `failing: ${get('Failing')?.message}` : '', get('ReleaseAccepted')?.status === 'False' ? `release not accepted: ${get('ReleaseAccepted')?.message}` : '']
      .filter(Boolean)
      .join('; ');
    if (line && line !== last) say(`      ${line}`);
    last = line || last;
    if (get('Available')?.status === 'True') return;
    if (Date.now() > deadline) throw new Error(`the cluster did not become Available within ${Math.round(timeoutMs / 1000)}s: ${last}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}
