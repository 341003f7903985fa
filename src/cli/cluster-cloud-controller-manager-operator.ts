// `bosun cluster-cloud-controller-manager-operator`: deploys the cloud controller manager for the
// platform Infrastructure/cluster names and reports ClusterOperator/cloud-controller-manager
// (src/ccm-operator/operator), on the component manager until SIGTERM.
import type { Command } from 'commander';
import { registerComponent } from '../kube/manager-flags.js';
import { addCloudControllerManagerOperator, CLOUD_CONTROLLER_MANAGER_OPERATOR } from '../ccm-operator/operator/operator.js';
import { requireReleaseVersion } from '../kube/operator-status.js';

export function register(program: Command): void {
  registerComponent<{ releaseVersion?: string }>(program, {
    ...CLOUD_CONTROLLER_MANAGER_OPERATOR,
    description: "run the cloud-controller-manager operator: deploy the platform's cloud controller manager, report ClusterOperator/cloud-controller-manager",
    flags: (command) => command.option('--release-version <version>', 'the release this operator belongs to (default: $RELEASE_VERSION)'),
    help: `
Leader election: the Lease openshift-cloud-controller-manager-operator/cluster-cloud-controller-manager-leader.

Platform: Infrastructure/cluster status.platformStatus.type. Only platform External with
spec.platformSpec.external.platformName "local" and status.platformStatus.external.
cloudControllerManager.state "External" gets a CCM (the local cloud's); any other platform gets
none, and the ClusterOperator says so (Available=True, reason NoCloudControllerManager).

Cloud config: ConfigMap openshift-config-managed/kube-cloud-config (key cloud.conf), else the
ConfigMap in openshift-config named by Infrastructure spec.cloudConfig.name (key spec.cloudConfig.key,
default "config"); for "local" it holds "url = <the local cloud's API URL>".

Deploys in openshift-cloud-controller-manager: ConfigMap cloud-conf, Deployment
local-cloud-controller-manager (image from ConfigMap openshift-cloud-controller-manager-operator/
cloud-controller-manager-images, images.json key cloudControllerManagerLocal), PodDisruptionBudget
local-cloud-controller-manager. The version is reported once the Deployment has rolled out.

Example:
  $ RELEASE_VERSION=1.0.0 bosun cluster-cloud-controller-manager-operator --kubeconfig .bosun/kubeconfig
  $ kubectl get co cloud-controller-manager
  NAME                       VERSION   AVAILABLE   PROGRESSING   DEGRADED   SINCE
  cloud-controller-manager   1.0.0     True        False         False      8s`,
    setup(manager, o) {
      const version = requireReleaseVersion(o.releaseVersion);
      addCloudControllerManagerOperator(manager, { releaseVersion: version });
    },
  });
}
