// `bosun machine-config-operator`: keeps ControllerConfig, the pools, the controller and server
// workloads and the user-data Secrets in step with the cluster, and reports
// ClusterOperator/machine-config, on the component manager until SIGTERM.
import type { Command } from 'commander';
import { registerComponent } from '../kube/manager-flags.js';
import { MACHINE_CONFIG_OPERATOR, addMachineConfigOperator } from '../mco/operator/operator.js';
import { requireReleaseVersion } from '../kube/operator-status.js';

export function register(program: Command): void {
  registerComponent<{ releaseVersion?: string; serverPort: string }>(program, {
    ...MACHINE_CONFIG_OPERATOR,
    description: 'run the machine-config operator: ControllerConfig, pools, controller and server workloads, user-data Secrets, ClusterOperator/machine-config',
    flags: (command) =>
      command
        .option('--release-version <version>', 'the release this operator belongs to (default: $RELEASE_VERSION)')
        .option('--server-port <port>', 'TLS port of the machine-config server that user data points at', '22623'),
    help: `
Leader election: the Lease openshift-machine-config-operator/machine-config.

Inputs: Infrastructure/cluster, Network/cluster, ConfigMaps openshift-config-managed/kube-apiserver-server-ca
and kube-system/root-ca, Secret openshift-config/pull-secret, ConfigMap
openshift-machine-config-operator/machine-config-operator-images (images.json).

Example:
  $ RELEASE_VERSION=1.0.0 bosun machine-config-operator --kubeconfig .bosun/kubeconfig
  $ kubectl get co machine-config
  NAME             VERSION   AVAILABLE   PROGRESSING   DEGRADED   SINCE
  machine-config   1.0.0     True        False         False      12s`,
    setup(manager, o) {
      const version = requireReleaseVersion(o.releaseVersion);
      const port = Number(o.serverPort);
      if (!Number.isInteger(port) || port <= 0 || port > 65535) throw new Error(`--server-port must be a port number, got "${o.serverPort}"`);
      addMachineConfigOperator(manager, { releaseVersion: version, serverPort: port });
    },
  });
}
