// `bosun cluster move NAME --to-kubeconfig FILE`: moves a workload cluster's Cluster API objects
// from this management cluster to another, which then manages the cluster, as `clusterctl move`:
//   1. discover: the Cluster and every object of the Cluster API groups (*.cluster.x-k8s.io) in
//      its namespace that belongs to it — owned by it (transitively), labelled with its name or
//      naming it in spec.clusterName, or
//      named by one of them (templates, bootstrap data) — and the Secrets and ConfigMaps that do;
//   2. preflight: the target serves every kind to move (its providers are installed), no object
//      exists there already, and the source's objects are not being deleted; nothing is touched
//      until this passes;
//   3. pause the Cluster (spec.paused), so that neither side's controllers act meanwhile;
//   4. create each object on the target, owners first, with its owner references rebuilt to the
//      new owners' uids and without its status (the target's controllers read the real state
//      again: a LocalMachine finds its instance by name);
//   5. delete them from the source, dependents first, removing their finalizers first so that
//      nothing in the cloud is torn down;
//   6. unpause the Cluster on the target.
// A failure after step 3 says what was done and leaves the source paused, with the command to
// resume it (the known pain: clusterctl leaves clusters paused without saying so).
import type { Command } from 'commander';
import type * as api from '../api/index.js';
import { BosunError } from '../common/errors.js';
import { KubeClient, isNotFound, type ResourceRef } from '../kube/client.js';
import { loadKubeConfig } from '../kube/kubeconfig.js';
import { resources } from '../kube/resources.js';
import { clusterGroup } from './cluster-group.js';
import { getCluster } from './cluster-describe.js';

export class MoveError extends BosunError {
  constructor(message: string) {
    super('MoveFailed', message);
  }
}

interface Node {
  resource: ResourceRef;
  kind: string;
  apiVersion: string;
  object: api.Unstructured;
}

const keyOf = (n: { kind: string; object: api.Unstructured }) => `${n.kind}/${n.object.metadata.name}`;

/** Every namespaced kind of the Cluster API groups the source serves, with its storage version. */
async function capiKinds(client: KubeClient): Promise<{ resource: ResourceRef; kind: string; apiVersion: string }[]> {
  const crds = (await client.list(resources.customResourceDefinitions)).items ?? [];
  return crds
    .filter((c) => (c.spec?.group === 'cluster.x-k8s.io' || c.spec?.group?.endsWith('.cluster.x-k8s.io')) && c.spec?.scope === 'Namespaced')
    .map((c) => {
      const version = (c.spec?.versions ?? []).find((v) => v.storage)?.name ?? c.spec?.versions?.[0]?.name ?? 'v1beta2';
      return { resource: { group: c.spec!.group, version, resource: c.spec!.names.plural, namespaced: true }, kind: c.spec!.names.kind, apiVersion: `${c.spec!.group}/${version}` };
    });
}

/** Names an object's spec gives of others (infrastructureRef, configRef, controlPlaneRef, dataSecretName), anywhere in it. */
function referencedNames(value: unknown, out: Set<string>): Set<string> {
  if (Array.isArray(value)) for (const v of value) referencedNames(v, out);
  else if (value && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      if (/Ref$/.test(k) && v && typeof v === 'object' && typeof (v as { name?: unknown }).name === 'string' && typeof (v as { kind?: unknown }).kind === 'string') {
        out.add(`${(v as { kind: string }).kind}/${(v as { name: string }).name}`);
      } else if (k === 'dataSecretName' && typeof v === 'string') out.add(`Secret/${v}`);
      else referencedNames(v, out);
    }
  }
  return out;
}

/** The objects of a cluster, in owner-first order. */
export async function discover(client: KubeClient, cluster: api.Cluster): Promise<Node[]> {
  const ns = cluster.metadata.namespace ?? 'default';
  const name = cluster.metadata.name;
  const candidates: Node[] = [];
  for (const k of await capiKinds(client)) {
    for (const object of (await client.list(k.resource, ns)).items ?? []) candidates.push({ ...k, object });
  }
  for (const [ref, kind] of [[resources.secrets, 'Secret'], [resources.configMaps, 'ConfigMap']] as const) {
    for (const object of (await client.list(ref, ns)).items ?? []) {
      if ((object as { type?: string }).type === 'kubernetes.io/service-account-token') continue;
      candidates.push({ resource: ref as ResourceRef, kind, apiVersion: 'v1', object: object as unknown as api.Unstructured });
    }
  }
  const byUid = new Map(candidates.map((c) => [c.object.metadata.uid, c]));
  const chosen = new Map<string, Node>();
  const clusterNode = candidates.find((c) => c.kind === 'Cluster' && c.object.metadata.name === name)!;
  chosen.set(keyOf(clusterNode), clusterNode);
  // Grow the set until nothing more belongs: owned by a chosen object, labelled with the cluster's
  // name, or named by a chosen object's spec.
  for (let grew = true; grew;) {
    grew = false;
    const referenced = new Set<string>();
    for (const n of chosen.values()) referencedNames(n.object.spec, referenced);
    for (const c of candidates) {
      const key = keyOf(c);
      if (chosen.has(key)) continue;
      const owned = (c.object.metadata.ownerReferences ?? []).some((o) => [...chosen.values()].some((n) => n.object.metadata.uid === o.uid));
      const labelled = c.object.metadata.labels?.['cluster.x-k8s.io/cluster-name'] === name || (c.object.spec as { clusterName?: unknown } | undefined)?.clusterName === name;
      if (owned || labelled || referenced.has(key)) {
        chosen.set(key, c);
        grew = true;
      }
    }
  }
  // Owners first: an object comes after every owner it has among the moved ones.
  const ordered: Node[] = [];
  const placed = new Set<string>();
  const visit = (n: Node, path: Set<string>) => {
    const key = keyOf(n);
    if (placed.has(key) || path.has(key)) return;
    path.add(key);
    for (const o of n.object.metadata.ownerReferences ?? []) {
      const owner = byUid.get(o.uid);
      if (owner && chosen.has(keyOf(owner))) visit(owner, path);
    }
    placed.add(key);
    ordered.push(n);
  };
  const rank = (n: Node) => (n.kind === 'Cluster' ? 0 : n.kind === 'Secret' || n.kind === 'ConfigMap' ? 2 : 1);
  for (const n of [...chosen.values()].sort((a, b) => rank(a) - rank(b) || keyOf(a).localeCompare(keyOf(b)))) visit(n, new Set());
  return ordered;
}

/** What is created on the target: the object without its status and server-set fields, owners by their new uids. */
function forTarget(n: Node, newUids: Map<string, string>): api.Unstructured {
  const meta = n.object.metadata;
  const ownerReferences = (meta.ownerReferences ?? []).flatMap((o) => (newUids.has(o.uid) ? [{ ...o, uid: newUids.get(o.uid)! }] : []));
  const out: api.Unstructured = {
    ...n.object,
    apiVersion: n.apiVersion,
    kind: n.kind,
    metadata: {
      name: meta.name,
      namespace: meta.namespace,
      ...(meta.labels ? { labels: meta.labels } : {}),
      ...(meta.annotations ? { annotations: meta.annotations } : {}),
      ...(meta.finalizers ? { finalizers: meta.finalizers } : {}),
      ...(ownerReferences.length ? { ownerReferences } : {}),
    },
  };
  delete out.status;
  return out;
}

export interface MoveReport {
  moved: string[];
}

export async function moveCluster(source: KubeClient, target: KubeClient, name: string, namespace: string, log: (line: string) => void = () => {}): Promise<MoveReport> {
  const cluster = await getCluster(source, name, namespace);
  if (cluster.metadata.deletionTimestamp) throw new MoveError(`cluster ${namespace}/${name} is being deleted: nothing moved`);
  const nodes = await discover(source, cluster);
  log(`Discovered ${nodes.length} objects of cluster ${namespace}/${name}`);

  // Preflight: every kind served on the target, nothing there already.
  const targetResources = new Map<string, ResourceRef>();
  for (const n of nodes) {
    if (targetResources.has(`${n.apiVersion}/${n.kind}`)) continue;
    try {
      targetResources.set(`${n.apiVersion}/${n.kind}`, await target.resourceFor(n.apiVersion, n.kind));
    } catch (e) {
      if (isNotFound(e)) throw new MoveError(`the target cluster does not serve ${n.kind} (${n.apiVersion}): install its provider there first; nothing moved`);
      throw e;
    }
  }
  const existing: string[] = [];
  for (const n of nodes) {
    if (await target.read(targetResources.get(`${n.apiVersion}/${n.kind}`)!, n.object.metadata.name, namespace)) existing.push(keyOf(n));
  }
  if (existing.length) throw new MoveError(`the target cluster already has ${existing.join(', ')} in namespace ${namespace}: nothing moved`);
  if (!(await target.read(resources.namespaces, namespace))) {
    await target.create(resources.namespaces, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } });
  }

  const setPaused = async (client: KubeClient, paused: boolean) => {
    await client.mergePatch(resources.clusters, name, namespace, { spec: { paused } });
  };
  await setPaused(source, true);
  log(`Paused cluster ${namespace}/${name} on the source`);
  const created: string[] = [];
  try {
    const newUids = new Map<string, string>();
    for (const n of nodes) {
      const body = forTarget(n, newUids);
      if (n.kind === 'Cluster') (body.spec as { paused?: boolean }).paused = true;
      const made = await target.create(targetResources.get(`${n.apiVersion}/${n.kind}`)!, body);
      if (n.object.metadata.uid && made.metadata.uid) newUids.set(n.object.metadata.uid, made.metadata.uid);
      created.push(keyOf(n));
    }
    log(`Created ${created.length} objects on the target`);
    for (const n of [...nodes].reverse()) {
      const ref = n.resource;
      try {
        if ((n.object.metadata.finalizers ?? []).length) await source.mergePatch(ref, n.object.metadata.name, namespace, { metadata: { finalizers: null } });
        await source.delete(ref, n.object.metadata.name, namespace);
      } catch (e) {
        if (!isNotFound(e)) throw e;
      }
    }
    log(`Deleted ${nodes.length} objects from the source`);
    await setPaused(target, false);
    log(`Resumed cluster ${namespace}/${name} on the target`);
  } catch (e) {
    throw new MoveError(`move of cluster ${namespace}/${name} failed after pausing it: ${(e as Error).message}. Created on the target so far: ${created.length ? created.join(', ') : 'nothing'}. The source is still paused; once the cause is fixed, run the move again after deleting what was created on the target, or resume the source with: kubectl patch cluster ${name} -n ${namespace} --type=merge -p '{"spec":{"paused":false}}'`);
  }
  return { moved: nodes.map(keyOf) };
}

export function register(program: Command): void {
  clusterGroup(program)
    .command('move')
    .description('move a workload cluster\'s Cluster API objects to another management cluster, which then manages it (as clusterctl move): pause, create owners first on the target (no status), delete from the source, resume')
    .argument('<name>', 'the Cluster')
    .requiredOption('--to-kubeconfig <file>', 'the target management cluster\'s kubeconfig')
    .option('-n, --namespace <ns>', 'the Cluster\'s namespace', 'default')
    .option('--kubeconfig <file>', 'the source management cluster\'s kubeconfig (default: $KUBECONFIG)')
    .option('--dry-run', 'list what would move, change nothing')
    .addHelpText('after', `
Example:
  $ bosun cluster move dev --to-kubeconfig target.kubeconfig
  Discovered 23 objects of cluster default/dev
  Paused cluster default/dev on the source
  Created 23 objects on the target
  Deleted 23 objects from the source
  Resumed cluster default/dev on the target`)
    .action(async (name: string, opts: { toKubeconfig: string; namespace: string; kubeconfig?: string; dryRun?: boolean }) => {
      const source = new KubeClient(loadKubeConfig(opts.kubeconfig));
      const targetConfig = loadKubeConfig(opts.toKubeconfig); // a missing target kubeconfig is refused even in a dry run
      if (opts.dryRun) {
        const nodes = await discover(source, await getCluster(source, name, opts.namespace));
        for (const n of nodes) console.log(keyOf(n));
        return;
      }
      const target = new KubeClient(targetConfig);
      await moveCluster(source, target, name, opts.namespace, (line) => console.log(line));
    });
}
