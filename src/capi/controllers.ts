// Cluster API's controllers and the local infrastructure provider's, added to one component
// manager (`bosun cluster-api-controllers` and the tests run them this way). The manager holds
// the Lease openshift-cluster-api/cluster-api-controllers while it acts (the command's flags).
// Without a cloud (platform None) there is no infrastructure provider: only ClusterOperator/
// cluster-api is reported, saying so. With the report, every controller's failures reach it as
// Degraded (degraded-on-error: a key failing 5 times in a row, until it syncs again). With the
// controllers, the manager's /metrics serves capi_* as kube-state-metrics names them (metrics.ts),
// from the controllers' informer caches.
import { CloudClient } from '../cloud/client.js';
import { resources, type Clock, type Manager } from '../kube/index.js';
import { CLUSTER_API_NAMESPACE } from './api.js';
import { bootstrapDataController } from './bootstrap-data.js';
import { clusterController } from './cluster-controller.js';
import { clusterApiStatus, clusterOperatorController } from './cluster-operator.js';
import { capiContext, informers } from './context.js';
import { localClusterController } from './local/localcluster-controller.js';
import { localMachineController } from './local/localmachine-controller.js';
import { kubeadmBootstrapController } from './kubeadm/bootstrap-controller.js';
import { kubeadmControlPlaneController } from './kubeadm/controlplane-controller.js';
import { machineController } from './machine-controller.js';
import { machineDeploymentController } from './machinedeployment-controller.js';
import { machineHealthCheckController } from './machinehealthcheck-controller.js';
import { machineSetController } from './machineset-controller.js';
import { createClusterApiMetrics } from './metrics.js';
import { ClusterApiWebhookServer, type WebhookServerOptions } from './webhook-server.js';

export interface ClusterApiSettings {
  /** The local cloud's API (the infrastructure provider's); none: no provider, only the report. */
  cloudUrl?: string;
  /** The file holding the provider's cloud credential (its CredentialsRequest's Secret, mounted). */
  cloudCredentialsFile?: string;
  /** Or the credential itself. */
  cloudCredential?: string;
  /** Where the bootstrap data Secrets are copied to (default openshift-cluster-api). */
  namespace?: string;
  /** The release these controllers belong to (RELEASE_VERSION): reported on ClusterOperator/cluster-api. */
  releaseVersion?: string;
  /** Report ClusterOperator/cluster-api (default true). */
  clusterOperator?: boolean;
  /** Report the release of the payload's Deployment (see cluster-operator.ts). */
  followDeployment?: boolean;
  clock?: Clock;
  /** Serve Cluster API's admission webhooks (webhook-server.ts) from this process too. */
  webhook?: WebhookServerOptions;
}

export function addClusterApiControllers(manager: Manager, settings: ClusterApiSettings): { webhookServer?: ClusterApiWebhookServer } {
  const webhookServer = settings.webhook && new ClusterApiWebhookServer({ readKubeadmControlPlane: (namespace, name) => manager.client.read(resources.kubeadmControlPlanes, name, namespace), ...settings.webhook });
  if (webhookServer) manager.add(webhookServer);
  const ctx = capiContext(manager, settings.clock);
  const reporting = settings.clusterOperator !== false;
  const status = reporting ? clusterApiStatus(ctx) : undefined;
  const report = () => clusterOperatorController(ctx, { version: settings.releaseVersion, followDeployment: settings.followDeployment, noProvider: !settings.cloudUrl }, status);
  if (!settings.cloudUrl) {
    if (reporting) manager.add(report());
    return { webhookServer };
  }
  const cloud = settings.cloudCredentialsFile ? CloudClient.withCredentialFile(settings.cloudUrl, settings.cloudCredentialsFile) : new CloudClient(settings.cloudUrl, settings.cloudCredential);
  const controllers = [
    bootstrapDataController(ctx, settings.namespace ?? CLUSTER_API_NAMESPACE),
    clusterController(ctx),
    machineController(ctx),
    machineSetController(ctx),
    machineDeploymentController(ctx),
    machineHealthCheckController(ctx),
    localClusterController(ctx, cloud),
    localMachineController(ctx, cloud),
    kubeadmBootstrapController(ctx),
    kubeadmControlPlaneController(ctx),
  ];
  manager.addMetrics(createClusterApiMetrics(informers(ctx)).registry);
  if (status) for (const c of controllers) c.reportTo(status.degradedOnError(c.name, { after: 5, message: (e) => `${c.name}: ${e.message}` }));
  manager.add(...controllers);
  if (reporting) manager.add(report());
  return { webhookServer };
}
