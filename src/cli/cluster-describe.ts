// `bosun cluster describe NAME` (clusterctl describe cluster) and `bosun cluster get kubeconfig
// NAME` (clusterctl get kubeconfig), against the management cluster.
import type { Command } from 'commander';
import type * as api from '../api/index.js';
import { BosunError } from '../common/errors.js';
import { KubeClient, isNotFound, type ResourceRef } from '../kube/client.js';
import { loadKubeConfig } from '../kube/kubeconfig.js';
import { resources } from '../kube/resources.js';
import { clusterGroup } from './cluster-group.js';
import { clusterTreeRows, formatClusterTree, type TreeObject } from '../views/cluster-tree.js';

/** A workload cluster, or what it needs, that the management cluster does not have. */
export class ClusterNotFound extends BosunError {
  constructor(message: string) {
    super('NotFound', message);
  }
}

/** The resource of a contract reference's kind: its CRD's storage version (what the providers serve). */
export async function resolveRef(client: KubeClient, ref: { apiGroup: string; kind: string }): Promise<ResourceRef<TreeObject>> {
  const crds = (await client.list(resources.customResourceDefinitions)).items ?? [];
  const crd = crds.find((c) => c.spec?.group === ref.apiGroup && c.spec?.names?.kind === ref.kind);
  if (!crd) throw new ClusterNotFound(`no CustomResourceDefinition serves ${ref.kind}.${ref.apiGroup}: is its provider installed?`);
  const version = (crd.spec?.versions ?? []).find((v) => v.storage)?.name ?? crd.spec?.versions?.[0]?.name ?? 'v1beta2';
  return { group: ref.apiGroup, version, resource: crd.spec?.names?.plural ?? '', namespaced: crd.spec?.scope !== 'Cluster' };
}

async function readRef(client: KubeClient, ref: { apiGroup: string; kind: string; name: string } | undefined, namespace: string): Promise<TreeObject | undefined> {
  if (!ref?.name) return undefined;
  try {
    return await client.read(await resolveRef(client, ref), ref.name, namespace);
  } catch (e) {
    if (e instanceof ClusterNotFound || isNotFound(e)) return undefined;
    throw e;
  }
}

export async function getCluster(client: KubeClient, name: string, namespace: string): Promise<api.Cluster> {
  const cluster = await client.read(resources.clusters, name, namespace);
  if (!cluster) {
    const others = ((await client.list(resources.clusters)).items ?? []).map((c) => `${c.metadata.namespace}/${c.metadata.name}`);
    throw new ClusterNotFound(`cluster ${namespace}/${name} not found${others.length ? ` (clusters: ${others.join(', ')}; pick a namespace with -n)` : ''}`);
  }
  return cluster;
}

/** The tree of a cluster, as `bosun cluster describe` prints it. */
export async function describeCluster(client: KubeClient, name: string, namespace: string, options: { grouping?: boolean; now?: number } = {}): Promise<string> {
  const cluster = await getCluster(client, name, namespace);
  const mine = <T extends { spec?: { clusterName?: string } }>(items: T[] | undefined) => (items ?? []).filter((o) => o.spec?.clusterName === name);
  const [infrastructure, controlPlane, mds, mss, machines] = await Promise.all([
    readRef(client, cluster.spec?.infrastructureRef, namespace),
    readRef(client, cluster.spec?.controlPlaneRef, namespace),
    client.list(resources.machineDeployments, namespace),
    client.list(resources.machineSets, namespace),
    client.list(resources.machines, namespace),
  ]);
  const rows = clusterTreeRows({
    cluster, infrastructure, controlPlane,
    machineDeployments: mine(mds.items), machineSets: mine(mss.items), machines: mine(machines.items),
    now: options.now ?? Date.now(), grouping: options.grouping,
  });
  return `${formatClusterTree(rows)}\n`;
}

/** The workload cluster's kubeconfig: `value` of the Secret `<name>-kubeconfig`. */
export async function workloadKubeconfig(client: KubeClient, name: string, namespace: string): Promise<string> {
  await getCluster(client, name, namespace);
  const secret = await client.read(resources.secrets, `${name}-kubeconfig`, namespace);
  const value = secret?.data?.value;
  if (!value) throw new ClusterNotFound(`the kubeconfig of cluster ${namespace}/${name} is not there yet: Secret ${namespace}/${name}-kubeconfig ${secret ? 'has no key "value"' : 'does not exist'} (the control plane provider writes it once the cluster has an endpoint)`);
  return Buffer.from(value, 'base64').toString('utf8');
}

const DESCRIBE_EXAMPLE = `
Example (a workload cluster coming up: each row that is not there yet says what it waits on):
  $ bosun cluster describe dev -n default
  NAME                                        REPLICAS AVAILABLE READY UP TO DATE STATUS           REASON            SINCE MESSAGE
  Cluster/dev                                 2/5      0         0     2          Available: False NotAvailable      40s   ControlPlaneInitialized: waiting for KubeadmControlPlane dev-control-plane to initialize the control plane
  ├─ClusterInfrastructure - LocalCluster/dev                                      True             LoadBalancerReady 38s
  ├─ControlPlane - KubeadmControlPlane/dev-control-plane
  │                                           1/3      0         0     1          Available: False NotAvailable      38s   ...
  │ └─Machine/dev-control-plane-x7q2k         1        0         0     1          Ready: False     NotReady          30s   NodeReady: waiting for a Node with providerID local://i-…
  └─Workers
    └─MachineDeployment/dev-md-0              1/2      0         0     1          Available: False NotAvailable      38s   ...
      └─Machine/dev-md-0-abcde-fghij          1        0         0     1          Ready: False     NotReady          30s   BootstrapConfigReady: waiting for the control plane to be initialized`;

export function register(program: Command): void {
  const group = clusterGroup(program);
  group
    .command('describe')
    .description('show a workload cluster as a tree (as clusterctl describe cluster): the Cluster, its infrastructure, its control plane and workers with their Machines, their state and what each waits on')
    .argument('<name>', 'the Cluster')
    .option('-n, --namespace <ns>', 'the Cluster\'s namespace', 'default')
    .option('--grouping <bool>', 'collapse Machines in the same state into one line ("3 Machines...")', 'true')
    .option('--kubeconfig <file>', 'the management cluster\'s kubeconfig (default: $KUBECONFIG)')
    .addHelpText('after', DESCRIBE_EXAMPLE)
    .action(async (name: string, opts: { namespace: string; grouping: string; kubeconfig?: string }) => {
      if (!['true', 'false'].includes(opts.grouping)) throw new Error(`--grouping must be true or false, not ${JSON.stringify(opts.grouping)}`);
      const client = new KubeClient(loadKubeConfig(opts.kubeconfig));
      process.stdout.write(await describeCluster(client, name, opts.namespace, { grouping: opts.grouping === 'true' }));
    });
  const get = group.commands.find((c) => c.name() === 'get') ?? group.command('get').description('get a workload cluster\'s data');
  get
    .command('kubeconfig')
    .description('print a workload cluster\'s kubeconfig (as clusterctl get kubeconfig): the admin kubeconfig its control plane provider wrote, whose server is the cluster\'s control-plane endpoint')
    .argument('<name>', 'the Cluster')
    .option('-n, --namespace <ns>', 'the Cluster\'s namespace', 'default')
    .option('--kubeconfig <file>', 'the management cluster\'s kubeconfig (default: $KUBECONFIG)')
    .addHelpText('after', `
Example:
  $ bosun cluster get kubeconfig dev > dev.kubeconfig
  $ kubectl --kubeconfig dev.kubeconfig get nodes`)
    .action(async (name: string, opts: { namespace: string; kubeconfig?: string }) => {
      const client = new KubeClient(loadKubeConfig(opts.kubeconfig));
      process.stdout.write(await workloadKubeconfig(client, name, opts.namespace));
    });
}
