// `bosun cluster generate NAME`: a workload cluster's manifests, as `clusterctl generate cluster`
// prints them — the cluster template (src/capi/kubeadm/cluster-template.ts) with its variables
// filled in from the flags, then from the environment, then from the template's defaults. Prints
// YAML for `kubectl apply -f -`; touches no cluster.
import { Command, InvalidArgumentError } from 'commander';
import { FLAVORS, clusterNetworkFor, renderObjects, substitute, toYaml } from '../capi/kubeadm/cluster-template.js';
import { findKubernetesVersion, unknownVersionMessage } from '../capi/kubeadm/versions.js';
import { clusterGroup } from './cluster-group.js';
import { isDnsLabel } from '../common/dns-names.js';

interface GenerateOptions {
  kubernetesVersion?: string;
  controlPlaneMachineCount: number;
  workerMachineCount: number;
  targetNamespace: string;
  flavor: string;
}

const count = (flag: string) => (value: string): number => {
  if (!/^\d+$/.test(value)) throw new InvalidArgumentError(`${flag} must be a whole number, not ${JSON.stringify(value)}`);
  return Number(value);
};


/** The YAML of a workload cluster; throws with a message for the user on bad input. */
export function generateCluster(name: string, o: GenerateOptions, env: Record<string, string | undefined> = process.env): string {
  if (!isDnsLabel(name)) throw new Error(`cluster name ${JSON.stringify(name)} must be a DNS label: lowercase letters, digits and '-', at most 63 characters`);
  if (!isDnsLabel(o.targetNamespace)) throw new Error(`--target-namespace ${JSON.stringify(o.targetNamespace)} is not a namespace name`);
  const template = FLAVORS[o.flavor];
  if (template === undefined) throw new Error(`no flavor ${JSON.stringify(o.flavor)}: the flavors are ${Object.keys(FLAVORS).map((f) => (f ? f : '(default, no --flavor)')).join(', ')}`);
  const version = o.kubernetesVersion ?? env.KUBERNETES_VERSION;
  if (!version) throw new Error(`--kubernetes-version is required (or KUBERNETES_VERSION in the environment); ${unknownVersionMessage(undefined)}`);
  if (!findKubernetesVersion(version)) throw new Error(unknownVersionMessage(version));
  if (o.controlPlaneMachineCount < 1) throw new Error('--control-plane-machine-count must be at least 1');
  if (o.controlPlaneMachineCount % 2 === 0) throw new Error(`--control-plane-machine-count ${o.controlPlaneMachineCount}: spec.replicas: Forbidden: cannot be an even number when etcd is stacked (use 1, 3 or 5)`);
  const network = clusterNetworkFor(o.targetNamespace, name);
  const values = {
    POD_CIDR: network.podCidr,
    SERVICE_CIDR: network.serviceCidr,
    // The environment's variables, as clusterctl reads them (an empty one counts as unset).
    ...Object.fromEntries(Object.entries(env).filter(([, v]) => v)),
    CLUSTER_NAME: name,
    NAMESPACE: o.targetNamespace,
    KUBERNETES_VERSION: version.startsWith('v') ? version : `v${version}`,
    CONTROL_PLANE_MACHINE_COUNT: String(o.controlPlaneMachineCount),
    WORKER_MACHINE_COUNT: String(o.workerMachineCount),
  };
  return toYaml(renderObjects(substitute(template, values), o.targetNamespace));
}

export function clusterGenerateCommand(): Command {
  return new Command('generate')
    .description('print the manifests of a new workload cluster (as clusterctl generate cluster): Cluster, KubeadmControlPlane, LocalCluster, LocalMachineTemplates, KubeadmConfigTemplate, MachineDeployment')
    .argument('<name>', 'the cluster\'s name')
    .option('--kubernetes-version <version>', 'the Kubernetes version to install (bosun cluster versions lists them); default $KUBERNETES_VERSION')
    .option('--control-plane-machine-count <n>', 'control-plane machines (odd: etcd is stacked)', count('--control-plane-machine-count'), 1)
    .option('--worker-machine-count <n>', 'worker machines', count('--worker-machine-count'), 0)
    .option('--target-namespace <namespace>', 'the namespace of the objects', 'default')
    .option('--flavor <flavor>', 'the template variant (none besides the default yet)', '')
    .addHelpText('after', `
Variables the template reads from the environment, as clusterctl does:
  POD_CIDR, SERVICE_CIDR   the cluster's networks (default: a pair of loopback /16s chosen from the
                           namespace and name, overlapping none of the management cluster's ranges)
  SERVICE_DOMAIN           default cluster.local
  LOCAL_CONTROL_PLANE_MACHINE_TYPE, LOCAL_NODE_MACHINE_TYPE   instance types, default local.medium

Example:
  bosun cluster generate dev --kubernetes-version v1.33.1 --control-plane-machine-count 3 --worker-machine-count 2 | kubectl apply -f -
`)
    .action((name: string, o: GenerateOptions) => {
      process.stdout.write(generateCluster(name, o));
    });
}

export function register(program: Command): void {
  clusterGroup(program).addCommand(clusterGenerateCommand());
}
