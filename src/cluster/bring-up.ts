// Bring-up of a local bosun cluster on one machine (`bosun start`), in the order of an OpenShift
// install: API server → releases built and signed → update service → the CVO's CRDs →
// ClusterVersion/version naming the release to install → the cluster-version operator, run in
// this process as OpenShift's bootstrap node runs it, applies the payload until the
// ClusterVersion is Available. A second start reuses the data directory: certificates, token,
// keys, releases and objects are kept.
//
// Not yet here (later issues): the machine-config server and controllers, machines and node
// agents, and the hand-over from the bootstrap CVO to the CVO Deployment.
import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as k8s from '@kubernetes/client-node';
import { parseAllDocuments } from 'yaml';
import type { ApiServer } from '../apiserver/server.js';
import { startClusterApiServer } from '../apiserver/cluster-api.js';
import { buildRelease, type BuiltRelease } from '../cvo/payload/build.js';
import { generateSigningKey, parsePullspec, signRelease } from '../release/signature.js';
import { readStoredSignatures, storeSignature } from '../release/signature-store.js';
import { startUpdateService, type UpdateService } from '../update-service/server.js';
import { runClusterVersionOperator } from '../cvo/operator.js';
import { VERIFICATION_ANNOTATION, VERIFICATION_NAMESPACE } from '../cvo/verify.js';
import { loadKubeConfig } from '../kube/kubeconfig.js';
import { forClient } from '../kube/client-node-compat.js';

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
}

export interface LocalCluster {
  api: ApiServer;
  updateService: UpdateService;
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
async function createMissing(client: k8s.KubernetesObjectApi, objects: k8s.KubernetesObject[]): Promise<number> {
  let created = 0;
  for (const object of objects) {
    try {
      await client.read(object as k8s.KubernetesObject & { metadata: { name: string } });
    } catch (e) {
      if ((e as { code?: number }).code !== 404) throw e;
      await client.create(forClient(object as Record<string, any>));
      created++;
    }
  }
  return created;
}

export async function bringUp(options: BringUpOptions): Promise<LocalCluster> {
  const say = options.progress ?? (() => undefined);
  const started = Date.now();
  const step = (n: number, text: string) => say(`[${n}/6] ${text} (${((Date.now() - started) / 1000).toFixed(1)}s)`);
  mkdirSync(options.dataDir, { recursive: true });

  step(1, `starting the API server on https://${options.api.host}:${options.api.port}`);
  const cluster = await startClusterApiServer({ dataDir: options.dataDir, host: options.api.host, port: options.api.port, logLevel: 'warn' });
  const api = cluster.server;
  let updateService: UpdateService | undefined;
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

    step(4, "applying the cluster-version operator's CRDs");
    const kc = loadKubeConfig(api.kubeconfigPath);
    const client = k8s.KubernetesObjectApi.makeApiClient(kc);
    const manifestsDir = join(target.dir, 'manifests');
    const crds = readdirSync(manifestsDir)
      .filter((f) => /\.ya?ml$/.test(f))
      .sort()
      .flatMap((f) => parseAllDocuments(readFileSync(join(manifestsDir, f), 'utf8')).map((d) => d.toJS() as k8s.KubernetesObject))
      .filter((o) => o?.kind === 'CustomResourceDefinition');
    const created = await createMissing(client, crds);
    say(`      ${crds.length} CRDs (${created} new)`);

    step(5, `ClusterVersion/version: install ${options.version} from channel ${options.channel}`);
    const upstream = `${updateService.url}/api/upgrades_info/v1/graph`;
    // The CVO trusts releases signed by this cluster's release key, found in its signature store.
    await createMissing(client, [{ apiVersion: 'v1', kind: 'Namespace', metadata: { name: VERIFICATION_NAMESPACE } } as k8s.KubernetesObject]);
    const verification = {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'release-verification', namespace: VERIFICATION_NAMESPACE, annotations: { [VERIFICATION_ANNOTATION]: '' } },
      data: { 'verifier-public-key-bosun-local': key.publicKey, 'store-bosun-local': `${updateService.url}/signatures` },
    };
    if ((await createMissing(client, [verification as k8s.KubernetesObject])) === 0) {
      const live = (await client.read(verification as k8s.KubernetesObject & { metadata: { name: string } })) as k8s.V1ConfigMap;
      if (JSON.stringify(live.data) !== JSON.stringify(verification.data)) await client.replace({ ...live, data: verification.data } as k8s.KubernetesObject);
    }
    await createMissing(client, [
      {
        apiVersion: 'config.openshift.io/v1',
        kind: 'ClusterVersion',
        metadata: { name: 'version' },
        spec: { clusterID: randomUUID(), channel: options.channel, upstream, desiredUpdate: { version: options.version, image: target.pullspec } },
      } as k8s.KubernetesObject,
    ]);
    step(6, 'the cluster-version operator applies the payload');
    const cvoStop = new AbortController();
    // Short lease timings: a restarted bring-up should not wait minutes for its own old lease.
    const cvoRunning = runClusterVersionOperator({
      kubeconfig: kc,
      releaseStore: store,
      signal: cvoStop.signal,
      upstreamPollMs: options.upstreamPollMs,
      onProgress: (message) => say(`      ${message}`),
      leaderElection: { identity: 'bootstrap', leaseDurationMs: 15_000, renewDeadlineMs: 10_000, retryPeriodMs: 2_000 },
    });
    await followClusterVersion(kc, say, options.installTimeoutMs ?? 300_000);
    const service = updateService;
    return {
      api,
      updateService: service,
      releases,
      kubeconfigPath: api.kubeconfigPath,
      async stop() {
        cvoStop.abort();
        await cvoRunning;
        await service.close();
        await cluster.stop();
      },
    };
  } catch (e) {
    await updateService?.close();
    await cluster.stop();
    throw e;
  }
}

/** Prints the ClusterVersion's Progressing message as it changes, until Available=True. */
async function followClusterVersion(kc: k8s.KubeConfig, say: (line: string) => void, timeoutMs: number): Promise<void> {
  const custom = kc.makeApiClient(k8s.CustomObjectsApi);
  const deadline = Date.now() + timeoutMs;
  let last = '';
  for (;;) {
    const cv = (await custom.getClusterCustomObject({ group: 'config.openshift.io', version: 'v1', plural: 'clusterversions', name: 'version' })) as Record<string, any>;
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
