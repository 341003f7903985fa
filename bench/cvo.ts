// npm run bench:cvo — how long the cluster-version operator takes to apply a synthetic payload of
// 800 manifests across 40 run levels and 30 components, first install (Initializing) and an
// update of every manifest (Updating), against the embedded API server over HTTPS; the API
// requests it made per manifest; and, for comparison, the lower bound set by the task graph's
// critical path at the measured per-request latency.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as k8s from '@kubernetes/client-node';
import { startTestApiServer } from '../test/helpers/apiserver.js';
import { buildRelease } from '../src/cvo/payload/build.js';
import { loadPayload } from '../src/cvo/payload/payload.js';
import { buildTaskGraph } from '../src/cvo/task-graph.js';
import { ClusterVersionOperator } from '../src/cvo/operator.js';
import { withConnectionReuse } from '../src/kube/kubeconfig.js';
import { KubeClient } from '../src/kube/client.js';
import { createReleaseCrds } from '../test/helpers/cluster-objects.js';

const LEVELS = 40;
/** The reference's concurrency: as many clients as the CVO's Initializing workers may run. */
const REFERENCE_CLIENTS = 16;
const COMPONENTS = 30;
const MANIFESTS = 800;

const work = mkdtempSync(join(tmpdir(), 'bosun-bench-cvo-'));
const sources = join(work, 'sources');
mkdirSync(join(sources, 'manifests'), { recursive: true });
const include = { 'include.release.openshift.io/self-managed-high-availability': 'true' };
/** The payload's objects, for the reference: the API server creating the same objects itself. */
const docs: any[] = [];
writeFileSync(join(sources, 'manifests', '0000_00_bench_00_namespace.yaml'), JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'bench', annotations: include } }));
for (let i = 0; i < MANIFESTS - 1; i++) {
  const level = String(1 + (i % (LEVELS - 1))).padStart(2, '0');
  // 11 is coprime to 30: every component appears, spread over the levels.
  const component = `component${(i * 11) % COMPONENTS}`;
  const meta = (prefix: string) => ({ name: `${prefix}-${i}`, namespace: 'bench', annotations: include, labels: { 'bench/version': '{{VERSION}}' } });
  // Mostly ConfigMaps, as in a real payload; every 10th a Secret, every 25th a ServiceAccount.
  const doc =
    i % 25 === 0
      ? { apiVersion: 'v1', kind: 'ServiceAccount', metadata: meta('sa') }
      : i % 10 === 0
        ? { apiVersion: 'v1', kind: 'Secret', metadata: meta('secret'), type: 'Opaque', stringData: { version: '{{VERSION}}', index: String(i) } }
        : { apiVersion: 'v1', kind: 'ConfigMap', metadata: meta('cm'), data: { version: '{{VERSION}}', index: String(i) } };
  writeFileSync(join(sources, 'manifests', `0000_${level}_${component}_${String(i).padStart(4, '0')}.yaml`), JSON.stringify(doc));
  docs.push(doc);
}
const store = join(work, 'store');
const cvoManifests = new URL('../manifests', import.meta.url).pathname;
const v1 = buildRelease({ version: '1.0.0', from: sources, cvoManifests, store });
const v2 = buildRelease({ version: '1.0.1', from: sources, cvoManifests, store });
const payload = loadPayload(v1.dir);

const api = await startTestApiServer();
// client-node's KubeConfig, for its typed clients below (bosun's own reads only connection settings).
const kc = withConnectionReuse(new k8s.KubeConfig());
kc.loadFromFile(api.kubeconfigPath);
const custom = kc.makeApiClient(k8s.CustomObjectsApi);
const objects = k8s.KubernetesObjectApi.makeApiClient(kc);
await createReleaseCrds(new KubeClient(kc), v1.dir);

async function requests(): Promise<{ total: number; seconds: number; count: number; byVerb: Map<string, number> }> {
  const text = (await api.request('GET', '/metrics')).text;
  let total = 0;
  const byVerb = new Map<string, number>(); // keyed "VERB resource"
  for (const m of text.matchAll(/^apiserver_request_total\{([^}]*)\} (\d+)/gm)) {
    total += Number(m[2]);
    const verb = `${/verb="([^"]*)"/.exec(m[1])?.[1]} ${/resource="([^"]*)"/.exec(m[1])?.[1]}`;
    byVerb.set(verb, (byVerb.get(verb) ?? 0) + Number(m[2]));
  }
  const seconds = Number(/^apiserver_request_duration_seconds_sum (\S+)/m.exec(text)?.[1] ?? /apiserver_request_duration_seconds_sum\{[^}]*\} (\S+)/.exec(text)?.[1] ?? 0);
  let sum = 0;
  let count = 0;
  for (const m of text.matchAll(/^apiserver_request_duration_seconds_sum\{[^}]*\} (\S+)/gm)) sum += Number(m[1]);
  for (const m of text.matchAll(/^apiserver_request_duration_seconds_count\{[^}]*\} (\S+)/gm)) count += Number(m[1]);
  return { total, seconds: sum || seconds, count, byVerb };
}

async function until(check: (cv: any) => boolean): Promise<void> {
  for (;;) {
    const cv = (await custom.getClusterCustomObject({ group: 'config.openshift.io', version: 'v1', plural: 'clusterversions', name: 'version' })) as any;
    if (check(cv)) return;
    await new Promise((r) => setTimeout(r, 50));
  }
}

const stop = new AbortController();
const cvo = new ClusterVersionOperator({ kubeconfig: kc, releaseStore: store, reconcileIntervalMs: 3_600_000, signal: stop.signal });
const running = cvo.run();
const report = async (mode: string, image: string, trigger: () => Promise<void>) => {
  const before = await requests();
  const started = performance.now();
  await trigger();
  await until((cv) => cv.status?.history?.[0]?.image === image && cv.status.history[0].state === 'Completed');
  const seconds = (performance.now() - started) / 1000;
  const after = await requests();
  const reqs = after.total - before.total;
  const perRequest = (after.seconds - before.seconds) / Math.max(1, after.count - before.count);
  const graph = buildTaskGraph(payload.manifests, mode === 'Initializing' ? 'Initializing' : 'Updating');
  // Critical path: the longest chain of manifests that must be applied one after another.
  const longest = new Map<string, number>();
  const order = (graph.graph as any).nodes() as string[];
  const depth = (id: string): number => {
    if (longest.has(id)) return longest.get(id)!;
    const preds: string[] = (graph.graph as any).predecessors(id) ?? [];
    const d = graph.nodes[Number(id)].tasks.length + Math.max(0, ...preds.map(depth));
    longest.set(id, d);
    return d;
  };
  const chain = Math.max(...order.map(depth));
  const reqsPerManifest = reqs / MANIFESTS;
  const bound = chain * reqsPerManifest * perRequest;
  const verbs = [...after.byVerb].map(([verb, n]) => [verb, n - (before.byVerb.get(verb) ?? 0)] as const).filter(([, n]) => n > 0).sort((a, b) => b[1] - a[1]);
  console.log(`${mode.padEnd(12)} ${seconds.toFixed(2)} s for ${MANIFESTS} manifests   ${reqs} API requests (${reqsPerManifest.toFixed(2)} per manifest, mean ${(perRequest * 1000).toFixed(2)} ms server time)`);
  console.log(`${''.padEnd(12)} requests by verb and resource: ${verbs.map(([verb, n]) => `${verb} ${n}`).join(', ')}`);
  console.log(`${''.padEnd(12)} critical path ${chain} manifests in sequence → lower bound ${bound.toFixed(2)} s at that latency (${(seconds / Math.max(bound, 1e-9)).toFixed(1)}x of it)`);
  return seconds;
};

/** The reference: the same objects created straight through the API by REFERENCE_CLIENTS clients, in a namespace of their own. */
async function referenceCreates(): Promise<number> {
  const client = new KubeClient(kc);
  await client.create({ group: '', version: 'v1', resource: 'namespaces', namespaced: false }, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'bench-reference' } });
  // As the release build renders them: {{VERSION}} becomes the release's version.
  const queue = docs.map((d) => JSON.parse(JSON.stringify(d).replaceAll('{{VERSION}}', '1.0.0').replaceAll('"namespace":"bench"', '"namespace":"bench-reference"')));
  const started = performance.now();
  await Promise.all(Array.from({ length: REFERENCE_CLIENTS }, async () => {
    for (let doc = queue.shift(); doc; doc = queue.shift()) {
      const ref = await client.resourceFor(doc.apiVersion, doc.kind);
      await client.create(ref, doc as any);
    }
  }));
  return (performance.now() - started) / 1000;
}
try {
  console.log(`synthetic payload: ${MANIFESTS} manifests, ${LEVELS} run levels, ${COMPONENTS} components\n`);
  const reference = await referenceCreates();
  const initializing = await report('Initializing', v1.pullspec, async () => {
    await objects.create({ apiVersion: 'config.openshift.io/v1', kind: 'ClusterVersion', metadata: { name: 'version' }, spec: { clusterID: '00000000-0000-4000-8000-000000000000', desiredUpdate: { image: v1.pullspec } } } as k8s.KubernetesObject);
  });
  console.log(`${''.padEnd(12)} the API server creates the same ${MANIFESTS} objects from ${REFERENCE_CLIENTS} clients in ${reference.toFixed(2)} s: Initializing took ${(initializing / reference).toFixed(2)}x of it`);
  await report('Updating', v2.pullspec, async () => {
    const cv = (await custom.getClusterCustomObject({ group: 'config.openshift.io', version: 'v1', plural: 'clusterversions', name: 'version' })) as any;
    await custom.replaceClusterCustomObject({ group: 'config.openshift.io', version: 'v1', plural: 'clusterversions', name: 'version', body: { ...cv, spec: { ...cv.spec, desiredUpdate: { image: v2.pullspec } } } });
  });
} finally {
  stop.abort();
  await running;
  await api.stop();
  rmSync(work, { recursive: true, force: true });
}
