// Bring-up of a local bosun cluster on one machine (`bosun start`), in the order of an OpenShift
// install: API server → releases built and signed → update service → the payload's CRDs →
// the cluster's facts (Infrastructure, CAs, pull secret) and ClusterVersion/version naming the
// release to install → the machine-config server, operator and controller → the cluster-version
// operator, run in this process as OpenShift's bootstrap node runs it, applies the payload until
// the ClusterVersion is Available. A second start reuses the data directory: certificates,
// token, keys, releases and objects are kept.
//
// The machine-config components run in this process until the local substrate runs them as
// pods; the operator follows its Deployment's RELEASE_VERSION so that updates move it too.
// Not yet here (later issues): machines and node agents, and the hand-over from the bootstrap
// CVO to the CVO Deployment.
import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import type { ApiServer } from '../apiserver/server.js';
import { startClusterApiServer } from '../apiserver/cluster-api.js';
import { startEtcdControlPlane } from './etcd-control-plane.js';
import { buildRelease, type BuiltRelease } from '../cvo/payload/build.js';
import { generateSigningKey, parsePullspec, signRelease } from '../release/signature.js';
import { readStoredSignatures, storeSignature } from '../release/signature-store.js';
import { startUpdateService, type UpdateService } from '../update-service/server.js';
import { runClusterVersionOperator } from '../cvo/operator.js';
import { VERIFICATION_ANNOTATION, VERIFICATION_NAMESPACE } from '../cvo/verify.js';
import { loadKubeConfig } from '../kube/kubeconfig.js';
import { KubeClient, type Obj } from '../kube/client.js';
import { Manager } from '../kube/manager.js';
import { resources } from '../kube/resources.js';
import { createCA, issueServingCert as issuePkiServingCert, loadOrCreate } from '../common/pki.js';
import { MachineConfigServer } from '../mco/server/server.js';
import { ApiRenderedConfigSource } from '../mco/server/api-config-source.js';
import { MACHINE_CONFIG_OPERATOR, addMachineConfigOperator } from '../mco/operator/operator.js';
import { MACHINE_CONFIG_CONTROLLER, addMachineConfigController } from '../mco/controller/run.js';

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
  /** The machine-config server's listeners (default 127.0.0.1:22623 TLS and :22624 HTTP). */
  machineConfigServer?: { host: string; tlsPort: number; httpPort: number };
  /** #17: a local 3-member etcd and two API servers behind the `api` address, instead of one API server on SQLite. */
  etcd?: boolean;
}

export interface LocalCluster {
  api: ApiServer;
  updateService: UpdateService;
  machineConfigServer: MachineConfigServer;
  releases: BuiltRelease[];
  kubeconfigPath: string;
  stop(): Promise<void>;
}

/** The versions defined in release-payload/releases/, in file order. */
function releaseVersions(sources: string): string[] {
  return readdirSync(join(sources, 'releases'))
    .filter((f) => f.endsWith('.yaml'))
    .map((f) => f.slice(0, -'.yaml'.length))
    .sort((a, b) => a.localeCompare(b, undefined, { numeric: true }));
}

async function loadOrCreateSigningKey(dir: string): Promise<{ privateKey: string; publicKey: string }> {
  const privatePath = join(dir, 'signing-key.asc');
  const publicPath = join(dir, 'signing-key.pub.asc');
  if (existsSync(privatePath) && existsSync(publicPath)) return { privateKey: readFileSync(privatePath, 'utf8'), publicKey: readFileSync(publicPath, 'utf8') };
  mkdirSync(dir, { recursive: true });
  const key = await generateSigningKey('bosun local release signing key');
  writeFileSync(privatePath, key.privateKey, { mode: 0o600 });
  writeFileSync(publicPath, key.publicKey);
  return key;
}

/** Creates each object unless it exists (the CVO, once here, owns keeping them as they should be). */
async function createMissing(client: KubeClient, objects: Obj[]): Promise<number> {
  let created = 0;
  for (const object of objects) {
    const resource = await client.resourceFor(object.apiVersion, object.kind);
    if (await client.read(resource, object.metadata.name, object.metadata.namespace)) continue;
    await client.create(resource, object);
    created++;
  }
  return created;
}

export async function bringUp(options: BringUpOptions): Promise<LocalCluster> {
  const say = options.progress ?? (() => undefined);
  const started = Date.now();
  const step = (n: number, text: string) => say(`[${n}/7] ${text} (${((Date.now() - started) / 1000).toFixed(1)}s)`);
  mkdirSync(options.dataDir, { recursive: true });

  step(1, `starting the API server on https://${options.api.host}:${options.api.port}`);
  // #17 hook (etcd-control-plane.ts): with --etcd, a 3-member etcd and two API servers behind the api address.
  const apiOptions = { dataDir: options.dataDir, host: options.api.host, port: options.api.port, logLevel: 'warn' };
  const cluster = options.etcd ? await startEtcdControlPlane(apiOptions) : await startClusterApiServer(apiOptions);
  const api = cluster.server;
  let updateService: UpdateService | undefined;
  let mcs: MachineConfigServer | undefined;
  const stopComponents = new AbortController();
  try {
    const store = join(options.dataDir, 'releases');
    const signatures = join(options.dataDir, 'signatures');
    step(2, `building and signing releases into ${store}`);
    const key = await loadOrCreateSigningKey(join(options.dataDir, 'keys'));
    const releases: BuiltRelease[] = [];
    for (const version of releaseVersions(options.releaseSources)) {
      const built = buildRelease({ version, from: options.releaseSources, cvoManifests: options.cvoManifests, store });
      const digest = parsePullspec(built.pullspec).digest;
      if (readStoredSignatures(signatures, digest).length === 0) storeSignature(signatures, digest, await signRelease(built.pullspec, key.privateKey));
      releases.push(built);
      say(`      ${version.padEnd(8)} ${built.pullspec}`);
    }
    const target = releases.find((r) => r.version === options.version);
    if (!target) throw new Error(`release ${options.version} is not defined in ${join(options.releaseSources, 'releases')} (have: ${releases.map((r) => r.version).join(', ')})`);

    step(3, `starting the update service on http://${options.updateService.host}:${options.updateService.port}`);
    updateService = await startUpdateService({ graphData: options.releaseSources, releases: store, signatures, host: options.updateService.host, port: options.updateService.port });

    step(4, "applying the payload's CRDs");
    const kc = loadKubeConfig(api.kubeconfigPath);
    const client = new KubeClient(kc);
    // Every CRD of the payload up front (the CVO's own and the operators'), as OpenShift's
    // bootstrap does, so that the bootstrap components can watch their kinds from the start.
    const crds = ['manifests', 'release-manifests']
      .map((sub) => join(target.dir, sub))
      .flatMap((dir) => readdirSync(dir).filter((f) => /\.ya?ml$/.test(f)).sort().map((f) => join(dir, f)))
      .flatMap((file) => parseAllDocuments(readFileSync(file, 'utf8')).map((d) => d.toJS() as Obj))
      .filter((o) => o?.kind === 'CustomResourceDefinition')
      .filter((o, i, all) => all.findIndex((x) => x.metadata?.name === o.metadata?.name) === i);
    const created = await createMissing(client, crds);
    say(`      ${crds.length} CRDs (${created} new)`);

    step(5, `cluster facts and ClusterVersion/version: install ${options.version} from channel ${options.channel}`);
    await createClusterFacts(client, api.caPem, api.url);
    const upstream = `${updateService.url}/api/upgrades_info/v1/graph`;
    // The CVO trusts releases signed by this cluster's release key, found in its signature store.
    await createMissing(client, [{ apiVersion: 'v1', kind: 'Namespace', metadata: { name: VERIFICATION_NAMESPACE } }]);
    const verification = {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'release-verification', namespace: VERIFICATION_NAMESPACE, annotations: { [VERIFICATION_ANNOTATION]: '' } },
      data: { 'verifier-public-key-bosun-local': key.publicKey, 'store-bosun-local': `${updateService.url}/signatures` },
    };
    if ((await createMissing(client, [verification])) === 0) {
      const live = await client.get(resources.configMaps, verification.metadata.name, VERIFICATION_NAMESPACE);
      if (JSON.stringify(live.data) !== JSON.stringify(verification.data)) await client.update(resources.configMaps, { ...live, data: verification.data });
    }
    await createMissing(client, [
      {
        apiVersion: 'config.openshift.io/v1',
        kind: 'ClusterVersion',
        metadata: { name: 'version' },
        spec: { clusterID: randomUUID(), channel: options.channel, upstream, desiredUpdate: { version: options.version, image: target.pullspec } },
      },
    ]);
    const mcsListen = options.machineConfigServer ?? { host: '127.0.0.1', tlsPort: 22623, httpPort: 22624 };
    step(6, `starting the machine-config server on https://${mcsListen.host}:${mcsListen.tlsPort}, its operator and controller`);
    // The server's certificate comes from the cluster CA, which the user data tells machines to trust.
    const pkiDir = join(options.dataDir, 'pki');
    const clusterCa = await loadOrCreate(pkiDir, 'ca', () => createCA('bosun-ca'));
    const mcsCert = await loadOrCreate(pkiDir, 'machine-config-server', () => issuePkiServingCert(clusterCa, 'machine-config-server', ['127.0.0.1', 'localhost', mcsListen.host]));
    // Three components on managers of their own, as their Deployments and DaemonSet would run
    // them: the server on every replica, the operator and controller each under its Lease.
    // Short lease timings: a restarted bring-up should not wait minutes for its own old lease.
    const shortLease = { identity: 'bootstrap', leaseDurationMs: 15_000, renewDeadlineMs: 10_000, retryPeriodMs: 2_000 };
    const mcsManager = new Manager({ name: 'machine-config-server', kubeconfig: kc });
    mcs = new MachineConfigServer({
      source: new ApiRenderedConfigSource(mcsManager.informers),
      tls: { cert: mcsCert.certPem, key: mcsCert.keyPem, ca: clusterCa.certPem },
      listenTls: { host: mcsListen.host, port: mcsListen.tlsPort },
      listenHttp: { host: mcsListen.host, port: mcsListen.httpPort },
    });
    const mcsRunning = mcsManager.add(mcs).start(stopComponents.signal);
    await Promise.race([mcs.listening, mcsRunning.then(() => Promise.reject(new Error('the machine-config server stopped before listening')))]);
    const operator = new Manager({ ...MACHINE_CONFIG_OPERATOR, kubeconfig: kc, leaderElection: { ...MACHINE_CONFIG_OPERATOR.lease, ...shortLease } });
    addMachineConfigOperator(operator, { releaseVersion: options.version, followDeployment: true, serverPort: mcs.port('tls') });
    const controller = new Manager({ ...MACHINE_CONFIG_CONTROLLER, kubeconfig: kc, leaderElection: { ...MACHINE_CONFIG_CONTROLLER.lease, ...shortLease } });
    addMachineConfigController(controller, { renderDelayMs: 500 });
    const mcoRunning = Promise.all([mcsRunning, operator.start(stopComponents.signal), controller.start(stopComponents.signal)]);
    mcoRunning.catch((e) => say(`      the machine-config components stopped: ${(e as Error).message}`));
    say(`      http://${mcsListen.host}:${mcs.port('http')}/config/<pool> as well`);

    step(7, 'the cluster-version operator applies the payload');
    // Short lease timings: a restarted bring-up should not wait minutes for its own old lease.
    const cvoRunning = runClusterVersionOperator({
      kubeconfig: kc,
      releaseStore: store,
      signal: stopComponents.signal,
      upstreamPollMs: options.upstreamPollMs,
      onProgress: (message) => say(`      ${message}`),
      leaderElection: { identity: 'bootstrap', leaseDurationMs: 15_000, renewDeadlineMs: 10_000, retryPeriodMs: 2_000 },
    });
    await followClusterVersion(client, say, options.installTimeoutMs ?? 300_000);
    const service = updateService;
    const server = mcs;
    return {
      api,
      updateService: service,
      machineConfigServer: server,
      releases,
      kubeconfigPath: api.kubeconfigPath,
      async stop() {
        stopComponents.abort();
        await Promise.all([cvoRunning, mcoRunning]);
        await service.close();
        await cluster.stop();
      },
    };
  } catch (e) {
    stopComponents.abort();
    await mcs?.close();
    await updateService?.close();
    await cluster.stop();
    throw e;
  }
}

/**
 * What an installer writes before the operators run: Infrastructure/cluster (platform None, the
 * API endpoints), the API server's CA for the machine-config operator (openshift-config-managed/
 * kube-apiserver-server-ca, kube-system/root-ca) and a pull secret (openshift-config/pull-secret;
 * bosun's images need none, so it holds no credentials). Existing objects are kept.
 */
async function createClusterFacts(client: KubeClient, caPem: string, apiUrl: string): Promise<void> {
  await createMissing(client, ['openshift-config', 'openshift-config-managed'].map((name) => ({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } })));
  await createMissing(client, [
    { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'kube-apiserver-server-ca', namespace: 'openshift-config-managed' }, data: { 'ca-bundle.crt': caPem } },
    { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'root-ca', namespace: 'kube-system' }, data: { 'ca.crt': caPem } },
    { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'pull-secret', namespace: 'openshift-config' }, type: 'kubernetes.io/dockerconfigjson', data: { '.dockerconfigjson': Buffer.from('{"auths":{}}').toString('base64') } },
  ]);
  // Infrastructure's facts live in its status, written through the status subresource.
  const { infrastructures } = resources;
  const live = (await client.read(infrastructures, 'cluster')) ?? (await client.create(infrastructures, { apiVersion: 'config.openshift.io/v1', kind: 'Infrastructure', metadata: { name: 'cluster' }, spec: { platformSpec: { type: 'None' } } }));
  if (!live.status?.apiServerURL) {
    const status = { infrastructureName: 'bosun-local', platform: 'None', platformStatus: { type: 'None' }, controlPlaneTopology: 'HighlyAvailable', infrastructureTopology: 'HighlyAvailable', apiServerURL: apiUrl, apiServerInternalURI: apiUrl, etcdDiscoveryDomain: '' };
    await client.mergePatch(infrastructures, 'cluster', undefined, { status }, 'status');
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
