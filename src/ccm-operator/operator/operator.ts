// The cluster-cloud-controller-manager operator (OpenShift's cluster-cloud-controller-manager-
// operator): one key ("cluster"), reconciled whenever any input changes.
//   Infrastructure/cluster                the platform (platform.ts): a CCM to deploy, or none;
//                                         status.infrastructureName → --cluster-name,
//                                         status.controlPlaneTopology SingleReplica → 1 replica
//   Network/cluster                       the pods' network → --cluster-cidr
//   the cloud config (platform.ts)        copied into openshift-cloud-controller-manager/cloud-conf
//   ConfigMap openshift-cloud-controller-manager-operator/cloud-controller-manager-images
//                                         images.json: the CCM image per platform
//                                         (cloudControllerManager<Name>, e.g. cloudControllerManagerLocal)
//   → the operands (operands.ts) applied, and ClusterOperator/cloud-controller-manager (status.ts).
// A sync failing three times in a row (an OperatorFailure at once) is reported as Degraded with its
// message; the ClusterOperator is written by the operator-status library (kube/operator-status.ts).
import type * as api from '../../api/index.js';
import { logger } from '../../common/log.js';
import {
  applyObject, type Clock, ClusterOperatorStatus, Controller, type Informer, type KubeClient, type InformerFactory, type Manager,
  releaseVersion, resources as R,
} from '../../kube/index.js';
import { CCM_NAMESPACE, ccmOperands, deploymentName } from './operands.js';
import { cloudConfigFor, CONFIG_NAMESPACE, MANAGED_CLOUD_CONFIG, platformDecision, type PlatformDecision } from './platform.js';
import { CLUSTER_OPERATOR, operatorStatus, type StatusInput } from './status.js';

const log = logger('cloud-controller-manager-operator');
export const OPERATOR_NAMESPACE = 'openshift-cloud-controller-manager-operator';
export const IMAGES_CONFIGMAP = 'cloud-controller-manager-images';
const KEY = 'cluster';

/** The component's name and its Lease (OpenShift's operator campaigns in its own namespace). */
export const CLOUD_CONTROLLER_MANAGER_OPERATOR = { name: 'cluster-cloud-controller-manager-operator', lease: { namespace: OPERATOR_NAMESPACE, name: 'cluster-cloud-controller-manager-leader' } };

export interface CcmOperatorSettings {
  /** The release this operator belongs to ($RELEASE_VERSION), or a function giving it. */
  releaseVersion: string | (() => string);
  /**
   * Run as the payload's operator Deployment would (when a process other than that Deployment's
   * pod runs the operator, as an in-process bring-up may): the version is the RELEASE_VERSION of
   * Deployment openshift-cloud-controller-manager-operator/cluster-cloud-controller-manager-operator
   * once the CVO has applied it, so an update moves this operator too. Needs deployments read in
   * that namespace.
   */
  followDeployment?: boolean;
  resyncPeriodMs?: number;
  /** The clock of the retries, the resync and the conditions' times (default the wall clock). */
  clock?: Clock;
}

/** The operator's own Deployment in the payload. */
export const OPERATOR_DEPLOYMENT = 'cluster-cloud-controller-manager-operator';

/** images.json's key for a platform's CCM image: cloudControllerManager + the name capitalised. */
export const imageKey = (name: string) => `cloudControllerManager${name.charAt(0).toUpperCase()}${name.slice(1)}`;

/** Not a failure: an input of this release is not there yet (reported as Progressing). */
class OperatorWaiting extends Error {}

/** A failure the operator reports as such (Degraded with this reason) rather than retrying blindly. */
class OperatorFailure extends Error {
  constructor(readonly reason: string, message: string) {
    super(message);
  }
}

/** The operator's reconciler; the manager runs its `controller` (on the one key "cluster"). */
export class CloudControllerManagerOperator {
  readonly name = 'cloud-controller-manager-operator';
  private readonly client: KubeClient;
  private readonly informers: {
    infrastructures: Informer<api.Infrastructure>;
    networks: Informer<api.Network>;
    configConfigMaps: Informer<api.ConfigMap>;
    managedConfigMaps: Informer<api.ConfigMap>;
    operatorConfigMaps: Informer<api.ConfigMap>;
    deployments: Informer<api.Deployment>;
    clusterOperators: Informer<api.ClusterOperator>;
  };
  readonly controller: Controller;
  private readonly ownDeployments?: Informer<api.Deployment>;
  private readonly status: ClusterOperatorStatus;
  /** The release this operator runs at: its own Deployment's RELEASE_VERSION when it follows it, else the setting's. */
  readonly version: () => string;

  constructor(from: { client: KubeClient; informers: InformerFactory }, private readonly settings: CcmOperatorSettings) {
    this.client = from.client;
    const f = from.informers;
    this.informers = {
      infrastructures: f.forResource(R.infrastructures),
      networks: f.forResource(R.networks),
      configConfigMaps: f.forResource(R.configMaps, { namespace: CONFIG_NAMESPACE }),
      managedConfigMaps: f.forResource(R.configMaps, { namespace: MANAGED_CLOUD_CONFIG.namespace, fieldSelector: `metadata.name=${MANAGED_CLOUD_CONFIG.name}` }),
      operatorConfigMaps: f.forResource(R.configMaps, { namespace: OPERATOR_NAMESPACE }),
      deployments: f.forResource(R.deployments, { namespace: CCM_NAMESPACE }),
      clusterOperators: f.forResource(R.clusterOperators, { fieldSelector: `metadata.name=${CLUSTER_OPERATOR}` }),
    };
    this.controller = new Controller({
      name: this.name,
      clock: settings.clock,
      // Once at every start even when no input exists yet.
      keys: [KEY],
      resyncPeriodMs: settings.resyncPeriodMs ?? 300_000,
      queue: { baseDelayMs: 500, maxDelayMs: 30_000 },
      sync: () => this.sync(),
    });
    for (const informer of Object.values(this.informers) as Informer<api.KubeObject>[]) this.controller.watch(informer, () => KEY);
    if (settings.followDeployment) {
      this.ownDeployments = f.forResource(R.deployments, { namespace: OPERATOR_NAMESPACE, fieldSelector: `metadata.name=${OPERATOR_DEPLOYMENT}` });
      this.controller.watch(this.ownDeployments, () => KEY);
    }
    const version = releaseVersion({ version: settings.releaseVersion, deployment: this.ownDeployments && { informer: this.ownDeployments, namespace: OPERATOR_NAMESPACE, name: OPERATOR_DEPLOYMENT } });
    this.version = () => version() ?? '';
    this.status = new ClusterOperatorStatus({
      client: this.client,
      name: CLUSTER_OPERATOR,
      clock: settings.clock,
      informer: this.informers.clusterOperators,
      relatedObjects: [
        { group: 'config.openshift.io', resource: 'clusteroperators', name: CLUSTER_OPERATOR },
        { group: '', resource: 'namespaces', name: OPERATOR_NAMESPACE },
        { group: '', resource: 'namespaces', name: CCM_NAMESPACE },
      ],
      // The operator's own syncs are what fails: the failure is written at once, not by a sync.
      onFailureChange: (failure) => {
        if (failure) void this.report({ failure }).catch((e) => log.warn({ err: (e as Error).message }, 'could not report Degraded'));
      },
    });
    // The failure as operatorStatus (status.ts) words it: from the error's own message.
    this.controller.reportTo(this.status.degradedOnError(this.name, {
      after: 3,
      immediate: (error) => error instanceof OperatorFailure,
      reason: (error) => (error instanceof OperatorFailure ? error.reason : 'SyncingFailed'),
    }));
  }

  private async sync(): Promise<void> {
    const infrastructure = this.informers.infrastructures.get('cluster');
    const decision = platformDecision(infrastructure);
    // One version for the whole pass: what is deployed and what is reported must be the same release.
    const version = this.version();
    if (!decision?.deploy) return this.report({ decision }, version);
    try {
      const deployment = await this.applyOperands(decision, infrastructure!, version);
      await this.report({ decision, deployment }, version);
    } catch (e) {
      if (!(e instanceof OperatorWaiting)) throw e;
      await this.report({ decision, waiting: e.message }, version);
    }
  }

  private async applyOperands(decision: Extract<PlatformDecision, { deploy: true }>, infrastructure: api.Infrastructure, version: string): Promise<api.Deployment> {
    const config = cloudConfigFor(infrastructure, (namespace, name) =>
      (namespace === MANAGED_CLOUD_CONFIG.namespace ? this.informers.managedConfigMaps : this.informers.configConfigMaps).get(name, namespace));
    if ('missing' in config) throw new OperatorFailure('CloudConfigMissing', `the ${decision.name} cloud controller manager needs a cloud config: ${config.missing}`);
    const imagesText: string | undefined = this.informers.operatorConfigMaps.get(IMAGES_CONFIGMAP, OPERATOR_NAMESPACE)?.data?.['images.json'];
    if (imagesText === undefined) throw new OperatorFailure('ImagesMissing', `ConfigMap ${OPERATOR_NAMESPACE}/${IMAGES_CONFIGMAP} with images.json does not exist`);
    let images: Record<string, unknown>;
    try {
      images = JSON.parse(imagesText);
    } catch (e) {
      throw new OperatorFailure('ImagesInvalid', `ConfigMap ${OPERATOR_NAMESPACE}/${IMAGES_CONFIGMAP}: images.json is not JSON: ${(e as Error).message}`);
    }
    // Images of another release (the CVO has not applied this release's yet): keep what runs.
    if (images.releaseVersion !== undefined && images.releaseVersion !== version) {
      throw new OperatorWaiting(`ConfigMap ${OPERATOR_NAMESPACE}/${IMAGES_CONFIGMAP} names the images of release ${String(images.releaseVersion)}; waiting for those of ${version}`);
    }
    const image = images[imageKey(decision.name)];
    if (typeof image !== 'string' || !image) throw new OperatorFailure('ImagesMissing', `ConfigMap ${OPERATOR_NAMESPACE}/${IMAGES_CONFIGMAP}: images.json has no "${imageKey(decision.name)}"`);
    const network = this.informers.networks.get('cluster');
    const operands = ccmOperands({
      provider: decision.provider,
      name: decision.name,
      image,
      cloudConfig: config.text,
      clusterName: infrastructure.status?.infrastructureName || undefined,
      clusterCidr: network?.status?.clusterNetwork?.[0]?.cidr ?? network?.spec?.clusterNetwork?.[0]?.cidr,
      singleReplica: infrastructure.status?.controlPlaneTopology === 'SingleReplica',
    });
    await applyObject(this.client, operands.configMap, R.configMaps);
    // Before the pods, which mount the serving certificate the service CA issues for it.
    await applyObject(this.client, operands.service, R.services);
    if (operands.pdb) await applyObject(this.client, operands.pdb, R.podDisruptionBudgets);
    // applyObject is untyped; through R.deployments its object is the Deployment.
    const object = (await applyObject(this.client, operands.deployment, R.deployments)).object as api.Deployment;
    // The informer may not have seen the write yet; the fresher of the two decides.
    const cached = this.informers.deployments.get(deploymentName(decision.name), CCM_NAMESPACE);
    return cached && Number(cached.metadata.resourceVersion) >= Number(object.metadata.resourceVersion) ? cached : object;
  }

  private async report(input: Omit<StatusInput, 'version' | 'current'>, version = this.version()): Promise<void> {
    const current = await this.status.live();
    const { conditions, versions } = operatorStatus({ ...input, version, current }, this.status.now());
    // operatorStatus says the operator's own failure (input.failure) itself.
    await this.status.write({ conditions, versions }, { from: this.name });
  }
}

/** Adds the operator to a manager (which owns the client, the informers and the Lease). */
export function addCloudControllerManagerOperator(manager: Manager, settings: CcmOperatorSettings): CloudControllerManagerOperator {
  const operator = new CloudControllerManagerOperator(manager, settings);
  manager.add(operator.controller);
  return operator;
}
