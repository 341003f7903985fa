// `bosun adm upgrade status [--details=none|all|nodes|health|operators]`: the update's progress as
// `oc adm upgrade status` assesses and prints it (src/cli/upgrade-status/), from the objects oc
// reads: the ClusterVersion, the ClusterOperators, the MachineConfigPools, the Nodes, the rendered
// MachineConfigs the nodes name, and the machine-config-operator Deployment's image.
import type { Command } from 'commander';
import { loadKubeConfig } from '../kube/kubeconfig.js';
import { KubeClient, isNotFound, type ResourceRef } from '../kube/client.js';
import { resources } from '../kube/resources.js';
import { DETAILS, UpgradeStatusError, upgradeStatus, type ClusterState, type Details } from '../views/upgrade-status/status.js';

export { UpgradeStatusError } from '../views/upgrade-status/status.js';

async function list<T>(api: KubeClient, ref: ResourceRef<T>): Promise<T[]> {
  try {
    return (await api.list(ref)).items ?? [];
  } catch (e) {
    // A cluster without the machine-config kinds has no pools to show.
    if (isNotFound(e)) return [];
    throw e;
  }
}

/** What oc reads from the cluster to assess the update. */
export async function readClusterState(api: KubeClient): Promise<ClusterState> {
  const cv = await api.read(resources.clusterVersions, 'version');
  if (!cv) throw new UpgradeStatusError('no cluster version information available - you must be connected to an OpenShift version 4 server to fetch the current version');
  const [operators, pools, nodes, mco] = await Promise.all([
    list(api, resources.clusterOperators), list(api, resources.machineConfigPools), list(api, resources.nodes),
    api.read(resources.deployments, 'machine-config-operator', 'openshift-machine-config-operator'),
  ]);
  const configs = new Set<string>();
  for (const n of nodes) {
    for (const key of ['currentConfig', 'desiredConfig']) {
      const name = n.metadata?.annotations?.[`machineconfiguration.openshift.io/${key}`];
      if (name) configs.add(name);
    }
  }
  const machineConfigs = (await Promise.all([...configs].map((name) => api.read(resources.machineConfigs, name).catch((e) => (isNotFound(e) ? undefined : Promise.reject(e)))))).filter((mc) => mc !== undefined);
  const mcoImage: string = (mco?.spec?.template?.spec?.containers ?? []).find((c) => c.name === 'machine-config-operator')?.image ?? '';
  return { cv, operators, pools, nodes, machineConfigs, mcoImage };
}

export function registerUpgradeStatus(upgrade: Command): void {
  upgrade
    .command('status')
    .description('display the status of the current cluster version update, as `oc adm upgrade status` does: control plane, worker pools and their nodes, update health')
    .option('--kubeconfig <file>', 'kubeconfig (default: $KUBECONFIG)')
    .option('--details <what>', `show detailed output in selected section; one of: ${DETAILS.join(', ')} (nodes: every node; operators: the Updating Cluster Operators table; health: each insight's description, reference and resources)`, 'none')
    .addHelpText('after', `
Example (an update to 1.0.1 with the worker pool paused):
  $ bosun adm upgrade status
  = Control Plane =
  Assessment:      Progressing
  Target Version:  1.0.1 (from 1.0.0)
  Updating:        machine-config
  Completion:      67% (2 operators updated, 1 updating, 0 waiting)
  Duration:        3m12s (Est. Time Remaining: 1h8m)
  Operator Health: 3 Healthy

  Control Plane Nodes
  NAME       ASSESSMENT    PHASE      VERSION   EST    MESSAGE
  master-0   Progressing   Draining   1.0.0     +10m

  = Worker Upgrade =

  WORKER POOL   ASSESSMENT   COMPLETION   STATUS
  worker        Excluded     0% (0/2)     2 Available, 0 Progressing, 0 Draining, 2 Excluded

  Worker Pool Nodes: worker
  NAME       ASSESSMENT   PHASE    VERSION   EST   MESSAGE
  worker-0   Excluded     Paused   1.0.0     -
  worker-1   Excluded     Paused   1.0.0     -

  = Update Health =
  SINCE   LEVEL     IMPACT           MESSAGE
  -       Warning   Update Stalled   Outdated nodes in a paused pool 'worker' will not be updated

  Run with --details=health for additional description and links to related online documentation`)
    .action(async (_opts: unknown, command: Command) => {
      const opts = command.optsWithGlobals<{ kubeconfig?: string; details: string }>();
      if (!(DETAILS as readonly string[]).includes(opts.details)) throw new UpgradeStatusError(`invalid value for --details: ${opts.details} (must be one of ${DETAILS.join(', ')})`);
      const state = await readClusterState(new KubeClient(loadKubeConfig(opts.kubeconfig)));
      process.stdout.write(upgradeStatus(state, opts.details as Details, Date.now()));
    });
}
