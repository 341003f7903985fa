// `bosun cloud-controller-manager`: the cloud controller manager (src/ccm-operator) on the
// component manager until SIGTERM, under the Lease kube-system/cloud-controller-manager —
// the node, node lifecycle, service and route controllers over one cloud provider.
import type { Command } from 'commander';
import { readFileSync } from 'node:fs';
import { podPath } from '../common/pod-path.js';
import { registerComponent } from '../kube/manager-flags.js';

interface Options {
  cloudProvider?: string;
  cloudConfig?: string;
  cloudCredentialsFile?: string;
  controllers: string;
  clusterName: string;
  clusterCidr?: string;
  configureCloudRoutes: string;
}

export function register(program: Command): void {
  registerComponent<Options>(program, {
    name: 'cloud-controller-manager',
    lease: { namespace: 'kube-system', name: 'cloud-controller-manager' },
    description: 'run the cloud controller manager: initialise nodes from the cloud, delete nodes whose instance is gone, load balancers for LoadBalancer Services, routes for pod CIDRs',
    // The cloud-controller-manager's lease timings (as kube-controller-manager's).
    defaults: { leaseDuration: 15, renewDeadline: 10, retryPeriod: 2 },
    flags: (command) =>
      command
        .option('--cloud-provider <name>', 'the cloud provider (known: local)')
        .option('--cloud-config <file>', "the provider's configuration file, INI, YAML or JSON (for local: url = <cloud API> or dataDir = <data directory>)")
        .option('--cloud-credentials-file <file>', 'the cloud credential to call the cloud with (in the cluster: Secret openshift-cloud-controller-manager/cloud-controller-manager-cloud-credentials, from CredentialsRequest openshift-cloud-controller-manager; default with dataDir in the cloud config: that cloud\'s root credential)')
        .option('--controllers <list>', 'controllers to run: * for all, NAME to enable, -NAME to disable (known: cloud-node, cloud-node-lifecycle, service, route)', '*')
        .option('--cluster-name <name>', "the cluster's name: prefixes its load balancers and routes in the cloud", 'kubernetes')
        .option('--cluster-cidr <cidr>', 'the pods\' CIDR: routes inside it that no node explains are removed')
        .option('--configure-cloud-routes <bool>', 'create routes for the nodes\' pod CIDRs (the route controller)', 'true'),
    help: `
Leader election: the Lease kube-system/cloud-controller-manager.

Controllers (--controllers):
  cloud-node            nodes tainted node.cloudprovider.kubernetes.io/uninitialized get their
                        providerID, instance-type and zone/region labels and addresses; taint removed
  cloud-node-lifecycle  a NotReady node whose instance is gone is deleted; shut down: tainted
                        node.cloudprovider.kubernetes.io/shutdown until Ready again
  service               type: LoadBalancer Services get a cloud balancer and status.loadBalancer
  route                 a cloud route per node podCIDR; NetworkUnavailable=False (RouteCreated)

Example (the local cloud running for .bosun):
  $ printf 'dataDir = .bosun\\n' > cloud.conf
  $ bosun cloud-controller-manager --kubeconfig .bosun/kubeconfig --cloud-provider local --cloud-config cloud.conf --cluster-cidr 127.1.0.0/16
  $ kubectl expose deployment web --type LoadBalancer --port 80 --target-port 8080
  $ kubectl get service web -o jsonpath='{.status.loadBalancer.ingress[0].ip}'
  127.0.200.113
  $ curl http://127.0.200.113/`,
    async setup(manager, o) {
      if (!o.cloudProvider) throw new Error('--cloud-provider is required (known: local)');
      if (!['true', 'false'].includes(o.configureCloudRoutes)) throw new Error(`--configure-cloud-routes must be true or false, got "${o.configureCloudRoutes}"`);
      // The controllers' code loads only when the command runs (not for `bosun --help`).
      const { addCloudControllers, selectCcmControllers } = await import('../ccm-operator/ccm.js');
      const { cidrWithin } = await import('../ccm-operator/route-controller.js');
      if (o.clusterCidr !== undefined && !cidrWithin(o.clusterCidr, o.clusterCidr)) throw new Error(`--cluster-cidr "${o.clusterCidr}" is not an IPv4 network such as 127.1.0.0/16`);
      const controllers = selectCcmControllers(o.controllers);
      if (controllers.length === 0) throw new Error(`--controllers "${o.controllers}" leaves no controller to run`);
      let cloudConfig: string | undefined;
      if (o.cloudConfig) {
        // Given by absolute path, it is found where the pod's volumes are (see podPath).
        try { cloudConfig = readFileSync(podPath(o.cloudConfig), 'utf8'); } catch (e) { throw new Error(`cannot read --cloud-config ${o.cloudConfig}: ${(e as Error).message}`); }
      }
      // Given by absolute path, it is found where the pod's volumes are (as --cloud-config).
      await addCloudControllers(manager, { cloudProvider: o.cloudProvider, cloudConfig, cloudCredentialsFile: podPath(o.cloudCredentialsFile), controllers, clusterName: o.clusterName, clusterCidr: o.clusterCidr, configureCloudRoutes: o.configureCloudRoutes === 'true' });
    },
  });
}
