// The machine-config operator: keeps the machine-config controller's inputs and workloads in step
// with the cluster and reports the component's health, as OpenShift's MCO does.
//
// One key ("cluster"), reconciled whenever any input changes:
//   ControllerConfig machine-config-controller  ← Infrastructure/cluster, Network/cluster, the
//       API server CA (ConfigMap openshift-config-managed/kube-apiserver-server-ca), the root CA
//       (ConfigMap kube-system/root-ca, else the API server CA), the pull secret
//       (Secret openshift-config/pull-secret), the payload's images (ConfigMap
//       openshift-machine-config-operator/machine-config-operator-images, images.json), and the
//       release version (annotation machineconfiguration.openshift.io/release-image-version);
//       not written before images.json exists, so the first render is the release's own;
//   MachineConfigPools master and worker       created with OpenShift's selectors when missing;
//                                              an administrator's changes are kept;
//   the controller Deployment, the server DaemonSet (masters) and the daemon DaemonSet (every
//       node; only when images.json names machineConfigDaemon), from the payload's images;
//   Secrets openshift-machine-api/{master,worker}-user-data: pointer Ignition configs merging
//       https://<api-int host>:22623/config/<pool>, trusting the root CA, that new machines boot from;
//   ClusterOperator/machine-config: Available once the templates are generated and both pools
//       have a rendered config; Progressing while a pool is not yet rendered for this release or
//       is rolling out; Degraded when a pool is (naming it and why); Upgradeable=False while a
//       pool is degraded; versions[operator] = the release version only once every pool's
//       rendered config was generated for it and (with the daemon deployed) the master pool's
//       nodes all run it; a sync failing 3 times in a row is reported as Degraded with its message
//       (written by the operator-status library, kube/operator-status.ts).
import { DEFAULT_SERVICE_CIDR, nthAddress, parseCidr } from '../../common/ipv4.js';
import { logger } from '../../common/log.js';
import type * as api from '../../api/index.js';
import type { IgnitionConfig } from '../../ignition/types.js';
import { isConflict, type KubeClient } from '../../kube/client.js';
import type { InformerFactory, Informer } from '../../kube/informer.js';
import { Controller } from '../../kube/controller.js';
import { applyObject } from '../../kube/apply.js';
import { findCondition, type Condition } from '../../kube/conditions.js';
import { Manager } from '../../kube/manager.js';
import { ClusterOperatorStatus, releaseVersion } from '../../kube/operator-status.js';
import type { Clock } from '../../kube/clock.js';
import { resources as R } from '../../kube/resources.js';
import { conditionsOf } from '../controller/types.js';
import type { KubeConfigLike } from '../../kube/kubeconfig.js';

const log = logger('machine-config-operator');
const MCO = 'machineconfiguration.openshift.io';
export const OPERATOR_NAMESPACE = 'openshift-machine-config-operator';
export const MACHINE_API_NAMESPACE = 'openshift-machine-api';
const RELEASE_VERSION_ANNOTATION = `${MCO}/release-image-version`;
const KEY = 'cluster';

/** The component's name and its Lease, as OpenShift names them. */
export const MACHINE_CONFIG_OPERATOR = { name: 'machine-config-operator', lease: { namespace: OPERATOR_NAMESPACE, name: 'machine-config' } };

export interface MachineConfigOperatorSettings {
  /** The release this operator belongs to (OpenShift: $RELEASE_VERSION), or a function giving it. */
  releaseVersion: string | (() => string | undefined);
  /**
   * Run as the payload's operator Deployment would (bosun start runs the operator in-process):
   * the version is the RELEASE_VERSION of Deployment openshift-machine-config-operator/
   * machine-config-operator once the CVO has applied it, so an update moves this operator too.
   */
  followDeployment?: boolean;
  /** Port of the machine-config server's TLS listener that user data points at (default 22623). */
  serverPort?: number;
  resyncPeriodMs?: number;
  /** The clock of the retries, the resync and the conditions' times (default the wall clock). */
  clock?: Clock;
}

export interface MachineConfigOperatorOptions extends MachineConfigOperatorSettings {
  kubeconfig: KubeConfigLike;
  signal: AbortSignal;
  leaderElection?: false | { identity?: string; leaseDurationMs?: number; renewDeadlineMs?: number; retryPeriodMs?: number };
}

/** A pointer Ignition config that merges the pool's config from the machine-config server. */
export function pointerIgnition(source: string, caPem: string | undefined): IgnitionConfig {
  return {
    ignition: {
      version: '3.2.0',
      config: { merge: [{ source }] },
      ...(caPem ? { security: { tls: { certificateAuthorities: [{ source: `data:text/plain;charset=utf-8;base64,${Buffer.from(caPem).toString('base64')}` }] } } } : {}),
    },
  };
}

/** The host booting machines reach the machine-config server on: the internal API endpoint's. */
export function serverHost(infrastructure: api.Infrastructure | undefined): string {
  const url = infrastructure?.status?.apiServerInternalURI ?? infrastructure?.status?.apiServerURL;
  if (!url) return '127.0.0.1';
  try {
    return new URL(url).hostname;
  } catch {
    return '127.0.0.1';
  }
}

/**
 * The cluster DNS service IP: the 10th address of the first service network (OpenShift's rule),
 * of OpenShift's default network while Network/cluster says none (or none that is IPv4).
 */
export function clusterDnsIp(network: api.Network | undefined): string {
  const cidr: string | undefined = network?.status?.serviceNetwork?.[0] ?? network?.spec?.serviceNetwork?.[0];
  return nthAddress(cidr && parseCidr(cidr) ? cidr : DEFAULT_SERVICE_CIDR, 10);
}

type EnvVar = NonNullable<api.Container['env']>[number];

const b64 = (text: string | undefined) => (text ? Buffer.from(text).toString('base64') : '');

interface PoolView {
  name: string;
  rendered?: string;
  renderedVersion?: string;
  degraded?: Condition;
  updating: boolean;
  /** Every node of the pool runs its target config (Updated, status.configuration caught up). */
  updated: boolean;
}

/** Where a workload's metrics serving certificate (the service CA's Secret) is mounted. */
const METRICS_TLS_DIR = '/etc/tls/private';

/**
 * The metrics endpoint of a rendered workload, as OpenShift's: HTTPS on `address` (a `$(VAR)` the
 * node agent expands) with the service CA's certificate from Secret `secretName` (the payload's
 * Services ask for it), for callers the API server authorises.
 */
function metricsEndpoint(address: string, port: number, secretName: string) {
  return {
    args: [`--metrics-listen=${address}:${port}`, `--tls-cert-file=${METRICS_TLS_DIR}/tls.crt`, `--tls-private-key-file=${METRICS_TLS_DIR}/tls.key`],
    mount: { name: 'metrics-tls', mountPath: METRICS_TLS_DIR, readOnly: true },
    volume: { name: 'metrics-tls', secret: { secretName } },
  };
}

/** The machine-config components' metrics port (OpenShift's kube-rbac-proxy port). */
export const MCO_METRICS_PORT = 9001;

/**
 * The machine-config daemon's DaemonSet, as OpenShift runs it: on every node (tolerating every
 * taint: a cordoned or tainted node still needs its daemon), the host's root at /rootfs, the
 * host's network and PID namespace, privileged; metrics on the node's address, port 9001, with
 * Secret proxy-tls's certificate.
 */
export function daemonDaemonSet(image: string, env: EnvVar[]): api.DaemonSet {
  const metrics = metricsEndpoint('$(HOST_IP)', MCO_METRICS_PORT, 'proxy-tls');
  return {
    apiVersion: 'apps/v1',
    kind: 'DaemonSet',
    metadata: { name: 'machine-config-daemon', namespace: OPERATOR_NAMESPACE, labels: { 'k8s-app': 'machine-config-daemon' } },
    spec: {
      selector: { matchLabels: { 'k8s-app': 'machine-config-daemon' } },
      updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: '10%' } },
      template: {
        metadata: { labels: { 'k8s-app': 'machine-config-daemon' } },
        spec: {
          serviceAccountName: 'machine-config-daemon',
          hostNetwork: true,
          hostPID: true,
          priorityClassName: 'system-node-critical',
          nodeSelector: { 'kubernetes.io/os': 'linux' },
          tolerations: [{ operator: 'Exists' }],
          containers: [{
            name: 'machine-config-daemon', image, command: ['bosun', 'machine-config-daemon'],
            args: metrics.args,
            env: [...env, { name: 'NODE_NAME', valueFrom: { fieldRef: { fieldPath: 'spec.nodeName' } } }, { name: 'HOST_IP', valueFrom: { fieldRef: { fieldPath: 'status.hostIP' } } }],
            ports: [{ name: 'metrics', containerPort: MCO_METRICS_PORT, hostPort: MCO_METRICS_PORT }],
            securityContext: { privileged: true },
            volumeMounts: [{ name: 'rootfs', mountPath: '/rootfs', mountPropagation: 'HostToContainer' }, metrics.mount],
          }],
          volumes: [{ name: 'rootfs', hostPath: { path: '/' } }, metrics.volume],
        },
      },
    },
  };
}

/** The machine-config controller's Deployment: one replica on the masters; metrics on the pod's
 *  address, port 9001, with Secret mcc-proxy-tls's certificate. */
export function controllerDeployment(image: string, env: EnvVar[], tolerations: api.Toleration[]): api.Deployment {
  const controllerMetrics = metricsEndpoint('$(POD_IP)', MCO_METRICS_PORT, 'mcc-proxy-tls');
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'machine-config-controller', namespace: OPERATOR_NAMESPACE, labels: { 'k8s-app': 'machine-config-controller' } },
    spec: {
      replicas: 1,
      selector: { matchLabels: { 'k8s-app': 'machine-config-controller' } },
      template: {
        metadata: { labels: { 'k8s-app': 'machine-config-controller' } },
        spec: {
          serviceAccountName: 'machine-config-controller',
          nodeSelector: { 'node-role.kubernetes.io/master': '' },
          tolerations,
          containers: [{
            name: 'machine-config-controller',
            image,
            command: ['bosun', 'machine-config-controller'],
            args: controllerMetrics.args,
            env: [...env, { name: 'POD_IP', valueFrom: { fieldRef: { fieldPath: 'status.podIP' } } }],
            ports: [{ name: 'metrics', containerPort: MCO_METRICS_PORT }],
            volumeMounts: [controllerMetrics.mount],
          }],
          volumes: [controllerMetrics.volume],
        },
      },
    },
  };
}

/** The operator's reconciler: one controller on the key "cluster" over the manager's informers
 *  (machineConfigOperatorController builds it; the manager runs the controller). */
export class MachineConfigOperator {
  readonly name = 'machine-config-operator';
  private readonly client: KubeClient;
  private readonly factory: InformerFactory;
  private readonly informers: {
    infrastructures: Informer<api.Infrastructure>;
    networks: Informer<api.Network>;
    controllerConfigs: Informer<api.ControllerConfig>;
    pools: Informer<api.MachineConfigPool>;
    machineConfigs: Informer<api.MachineConfig>;
    operatorConfigMaps: Informer<api.ConfigMap>;
    managedConfigMaps: Informer<api.ConfigMap>;
    kubeSystemConfigMaps: Informer<api.ConfigMap>;
    configSecrets: Informer<api.Secret>;
    clusterOperators: Informer<api.ClusterOperator>;
    deployments: Informer<api.Deployment>;
  };
  readonly controller: Controller;
  private readonly status: ClusterOperatorStatus;
  readonly version: () => string | undefined;

  constructor(
    from: { client: KubeClient; informers: InformerFactory },
    private readonly options: MachineConfigOperatorSettings,
  ) {
    this.client = from.client;
    this.factory = from.informers;
    this.informers = {
      infrastructures: this.factory.forResource(R.infrastructures),
      networks: this.factory.forResource(R.networks),
      controllerConfigs: this.factory.forResource(R.controllerConfigs),
      pools: this.factory.forResource(R.machineConfigPools),
      machineConfigs: this.factory.forResource(R.machineConfigs),
      operatorConfigMaps: this.factory.forResource(R.configMaps, { namespace: OPERATOR_NAMESPACE }),
      managedConfigMaps: this.factory.forResource(R.configMaps, { namespace: 'openshift-config-managed' }),
      kubeSystemConfigMaps: this.factory.forResource(R.configMaps, { namespace: 'kube-system' }),
      configSecrets: this.factory.forResource(R.secrets, { namespace: 'openshift-config' }),
      clusterOperators: this.factory.forResource(R.clusterOperators, { fieldSelector: 'metadata.name=machine-config' }),
      deployments: this.factory.forResource(R.deployments, { namespace: OPERATOR_NAMESPACE }),
    };
    this.version = releaseVersion({
      version: this.options.releaseVersion,
      deployment: this.options.followDeployment ? { informer: this.informers.deployments, namespace: OPERATOR_NAMESPACE, name: 'machine-config-operator' } : undefined,
    });
    this.status = new ClusterOperatorStatus({
      client: this.client,
      name: 'machine-config',
      clock: this.options.clock,
      informer: this.informers.clusterOperators,
      relatedObjects: [
        { group: '', resource: 'namespaces', name: OPERATOR_NAMESPACE },
        { group: MCO, resource: 'machineconfigpools', name: '' },
        { group: MCO, resource: 'controllerconfigs', name: '' },
        { group: MCO, resource: 'machineconfigs', name: '' },
      ],
      // The operator's own syncs are what fails: the failure is written at once, not by a sync.
      onFailureChange: (failure) => {
        if (failure) void this.reportFailure(failure.message).catch(() => undefined);
      },
    });
    this.controller = new Controller({
      name: 'machine-config-operator',
      clock: this.options.clock,
      // Once at every start even when no input exists yet (the pools are created here).
      keys: [KEY],
      resyncPeriodMs: this.options.resyncPeriodMs ?? 300_000,
      queue: { baseDelayMs: 500, maxDelayMs: 60_000 },
      sync: () => this.sync(),
    });
    this.controller.reportTo(this.status.degradedOnError(this.name, { after: 3, reason: 'MachineConfigOperatorFailing', message: (error) => `Failed to resync ${this.version() ?? ''}: ${error.message}` }));
    for (const informer of Object.values(this.informers)) this.controller.watch(informer as Informer<api.KubeObject>, () => KEY);
  }

  private async sync(): Promise<void> {
    const version = this.version();
    if (!version) {
      log.info('no release version yet; waiting');
      return;
    }
    const infrastructure = this.informers.infrastructures.get('cluster');
    const network = this.informers.networks.get('cluster');
    const serverCa: string | undefined = this.informers.managedConfigMaps.get('kube-apiserver-server-ca', 'openshift-config-managed')?.data?.['ca-bundle.crt'];
    const rootCa: string | undefined = this.informers.kubeSystemConfigMaps.get('root-ca', 'kube-system')?.data?.['ca.crt'] ?? serverCa;
    const imagesText: string | undefined = this.informers.operatorConfigMaps.get('machine-config-operator-images', OPERATOR_NAMESPACE)?.data?.['images.json'];
    let images: Record<string, string> = {};
    if (imagesText) {
      try {
        // images.json, as the payload writes it: image names to pull specs.
        images = JSON.parse(imagesText) as Record<string, string>;
      } catch (e) {
        throw new Error(`ConfigMap ${OPERATOR_NAMESPACE}/machine-config-operator-images: images.json is not JSON: ${(e as Error).message}`);
      }
    }
    const pullSecret = this.informers.configSecrets.get('pull-secret', 'openshift-config');

    // The controller's inputs, once the release's images are known. The bootstrap operator starts
    // before the CVO has applied the images ConfigMap: a ControllerConfig written without them
    // would render configs (no OS image, no release file) that the in-cluster operator's would
    // replace a moment later, and every node that booted from the first would roll. OpenShift's
    // bootstrap renders from the release's images for the same reason.
    if (!imagesText) log.info({ configMap: `${OPERATOR_NAMESPACE}/machine-config-operator-images` }, 'no release images yet; the ControllerConfig waits for them');
    else await applyObject(
      this.client,
      {
        apiVersion: `${MCO}/v1`,
        kind: 'ControllerConfig',
        metadata: { name: 'machine-config-controller', annotations: { [RELEASE_VERSION_ANNOTATION]: version } },
        spec: {
          clusterDNSIP: clusterDnsIp(network),
          cloudProviderConfig: '',
          ipFamilies: String(network?.status?.serviceNetwork?.[0] ?? network?.spec?.serviceNetwork?.[0] ?? '').includes(':') ? 'IPv6' : 'IPv4',
          kubeAPIServerServingCAData: b64(serverCa),
          rootCAData: b64(rootCa),
          releaseImage: images.releaseImage ?? '',
          // images.json names the pause image infraImage; the templates read it as infraImageKey,
          // as OpenShift's operator hands it to its controller.
          images: { ...images, ...(images.infraImage ? { infraImageKey: images.infraImage } : {}) },
          ...(images.baseOSContainerImage ? { baseOSContainerImage: images.baseOSContainerImage } : {}),
          platform: String(infrastructure?.status?.platformStatus?.type ?? infrastructure?.status?.platform ?? 'None').toLowerCase(),
          ...(pullSecret ? { pullSecret: { namespace: 'openshift-config', name: 'pull-secret' } } : {}),
          ...(infrastructure ? { infra: { apiVersion: infrastructure.apiVersion, kind: infrastructure.kind, spec: infrastructure.spec ?? {}, status: infrastructure.status ?? {} } } : {}),
        },
      },
      R.controllerConfigs,
    );

    // The two pools every cluster has; only created (an administrator may pause or tune them).
    for (const role of ['master', 'worker']) {
      if (this.informers.pools.get(role)) continue;
      await this.client
        .create(R.machineConfigPools, {
          apiVersion: `${MCO}/v1`,
          kind: 'MachineConfigPool',
          metadata: { name: role, labels: { [`pools.operator.machineconfiguration.openshift.io/${role}`]: '' } },
          spec: {
            machineConfigSelector: { matchLabels: { [`${MCO}/role`]: role } },
            nodeSelector: { matchLabels: { [`node-role.kubernetes.io/${role}`]: '' } },
            paused: false,
            maxUnavailable: 1,
          },
        })
        .catch((e) => {
          if (!isConflict(e)) throw e;
        });
    }

    // The workloads, from the payload's image. The daemon runs from the image images.json names
    // machineConfigDaemon (OpenShift runs it from the operator's image; bosun's payload names it
    // once the install runs the daemon on its nodes): without it nothing moves nodes.
    const image = images.machineConfigOperator;
    const daemonImage = images.machineConfigDaemon;
    if (image) await this.applyWorkloads(image, version, daemonImage);

    // User data for new machines.
    await this.ensureNamespace(MACHINE_API_NAMESPACE);
    const host = serverHost(infrastructure);
    for (const role of ['master', 'worker']) {
      const userData = JSON.stringify(pointerIgnition(`https://${host}:${this.options.serverPort ?? 22623}/config/${role}`, rootCa));
      await applyObject(
        this.client,
        {
          apiVersion: 'v1',
          kind: 'Secret',
          metadata: { name: `${role}-user-data`, namespace: MACHINE_API_NAMESPACE, labels: { 'machine.openshift.io/cluster-api-cluster': infrastructure?.status?.infrastructureName ?? 'bosun' } },
          type: 'Opaque',
          data: { userData: Buffer.from(userData).toString('base64'), disableTemplating: Buffer.from('true').toString('base64') },
        },
        R.secrets,
      );
    }

    await this.reportStatus(version, Boolean(image && daemonImage));
  }

  private async ensureNamespace(name: string): Promise<void> {
    if (await this.client.read(R.namespaces, name)) return;
    await this.client.create(R.namespaces, { apiVersion: 'v1', kind: 'Namespace', metadata: { name } }).catch((e) => {
      if (!isConflict(e)) throw e;
    });
  }

  private async applyWorkloads(image: string, version: string, daemonImage: string | undefined): Promise<void> {
    const env = [{ name: 'RELEASE_VERSION', value: version }, { name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } }];
    const tolerations = [{ key: 'node-role.kubernetes.io/master', operator: 'Exists', effect: 'NoSchedule' }];
    await applyObject(this.client, controllerDeployment(image, env, tolerations), R.deployments);
    await applyObject(
      this.client,
      {
        apiVersion: 'apps/v1',
        kind: 'DaemonSet',
        metadata: { name: 'machine-config-server', namespace: OPERATOR_NAMESPACE, labels: { 'k8s-app': 'machine-config-server' } },
        spec: {
          selector: { matchLabels: { 'k8s-app': 'machine-config-server' } },
          template: {
            metadata: { labels: { 'k8s-app': 'machine-config-server' } },
            spec: {
              serviceAccountName: 'machine-config-server',
              hostNetwork: true,
              nodeSelector: { 'node-role.kubernetes.io/master': '' },
              tolerations,
              // As OpenShift's: the serving certificate from Secret machine-config-server-tls and
              // the kubelet's bootstrap kubeconfig from Secret node-bootstrapper-token (both
              // written by the installer); each replica listens on its node's address, which the
              // api-int balancer's 22623/22624 listeners forward to.
              containers: [{
                name: 'machine-config-server',
                image,
                command: ['bosun', 'machine-config-server'],
                args: ['--listen-tls', '$(HOST_IP):22623', '--listen-http', '$(HOST_IP):22624', '--cert', '/etc/ssl/mcs/tls.crt', '--key', '/etc/ssl/mcs/tls.key', '--bootstrap-kubeconfig', '/etc/mcs/bootstrap-token/kubeconfig'],
                env: [...env, { name: 'HOST_IP', valueFrom: { fieldRef: { fieldPath: 'status.hostIP' } } }],
                ports: [{ name: 'tls', containerPort: 22623, hostPort: 22623 }, { name: 'http', containerPort: 22624, hostPort: 22624 }],
                // Ready once it serves: the install takes the bootstrap server out of api-int then.
                // Asked every second while it starts (the startup probe), so that it is found ready
                // within a second of serving rather than at the next readiness period.
                startupProbe: { httpGet: { path: '/healthz', port: 22624 }, periodSeconds: 1, failureThreshold: 120 },
                readinessProbe: { httpGet: { path: '/healthz', port: 22624 }, periodSeconds: 5 },
                volumeMounts: [{ name: 'certs', mountPath: '/etc/ssl/mcs' }, { name: 'node-bootstrap-token', mountPath: '/etc/mcs/bootstrap-token' }],
              }],
              volumes: [{ name: 'certs', secret: { secretName: 'machine-config-server-tls' } }, { name: 'node-bootstrap-token', secret: { secretName: 'node-bootstrapper-token' } }],
            },
          },
        },
      },
      R.daemonSets,
    );
    if (daemonImage) await applyObject(this.client, daemonDaemonSet(daemonImage, env), R.daemonSets);
  }

  private pools(): PoolView[] {
    return ['master', 'worker', ...this.informers.pools.list().map((p) => String(p.metadata.name)).filter((n) => n !== 'master' && n !== 'worker').sort()].map((name) => {
      const pool = this.informers.pools.get(name);
      const rendered: string | undefined = pool?.spec?.configuration?.name || undefined;
      const mc = rendered ? this.informers.machineConfigs.get(rendered) : undefined;
      const conditions: Condition[] = (pool && conditionsOf(pool)) ?? [];
      const degraded = findCondition(conditions, 'Degraded');
      return {
        name,
        rendered,
        renderedVersion: mc?.metadata?.annotations?.[RELEASE_VERSION_ANNOTATION],
        degraded: degraded?.status === 'True' ? degraded : undefined,
        updating: findCondition(conditions, 'Updating')?.status === 'True',
        updated: Boolean(rendered) && pool?.status?.configuration?.name === rendered && findCondition(conditions, 'Updated')?.status === 'True',
      };
    });
  }

  private async reportStatus(version: string, daemonDeployed: boolean): Promise<void> {
    const cc = this.informers.controllerConfigs.get('machine-config-controller');
    const templated = findCondition(cc && conditionsOf(cc), 'TemplateControllerCompleted')?.status === 'True';
    const pools = this.pools();
    const unrendered = pools.filter((p) => (p.name === 'master' || p.name === 'worker') && !p.rendered).map((p) => p.name);
    const behind = pools.filter((p) => p.rendered && p.renderedVersion !== version).map((p) => p.name);
    const degraded = pools.filter((p) => p.degraded);
    const updating = pools.filter((p) => p.updating).map((p) => p.name);
    // As OpenShift's required pools: the new version is reported once the master pool's nodes run
    // the config rendered for it (the CVO's update completes only then); workers may still roll.
    // Without daemons nothing moves nodes, so there is nothing to wait for.
    const mastersBehind = daemonDeployed && pools.some((p) => p.name === 'master' && p.rendered && !p.updated);
    const done = templated && unrendered.length === 0 && behind.length === 0 && !mastersBehind;
    const versions = this.status.versions(done, version);
    const available = templated && unrendered.length === 0;
    const progressing = !done || updating.length > 0;
    const conditions = this.status.conditions([
      available
        ? { type: 'Available', status: 'True', reason: 'AsExpected', message: `Cluster has deployed ${(versions ?? [])[0]?.version ?? version}` }
        : { type: 'Available', status: 'False', reason: templated ? 'PoolsNotRendered' : 'TemplatesNotGenerated', message: templated ? `Waiting for the render controller to render pools ${unrendered.join(', ')}` : 'Waiting for the template controller to generate the base MachineConfigs' },
      progressing
        ? { type: 'Progressing', status: 'True', reason: done ? 'PoolsUpdating' : 'RenderingForRelease', message: done ? `Pools ${updating.join(', ')} are rolling out their configuration` : `Working towards ${version}${behind.length ? `: pools ${behind.join(', ')} not yet rendered for it` : mastersBehind ? ': the master pool is rolling out its configuration' : ''}` }
        : { type: 'Progressing', status: 'False', reason: 'AsExpected', message: `Cluster version is ${version}` },
      degraded.length
        ? { type: 'Degraded', status: 'True', reason: 'MachineConfigPoolsDegraded', message: degraded.map((p) => `Failed to resync ${version} because: pool ${p.name} is degraded: ${p.degraded!.message || p.degraded!.reason}`).join('; ') }
        : { type: 'Degraded', status: 'False', reason: 'AsExpected', message: '' },
      degraded.length
        ? { type: 'Upgradeable', status: 'False', reason: 'DegradedPool', message: `One or more machine config pools are degraded: ${degraded.map((p) => p.name).join(', ')}` }
        : { type: 'Upgradeable', status: 'True', reason: 'AsExpected', message: '' },
    ]);
    // This sync got this far: its own earlier failures are over.
    await this.status.write({ conditions, versions }, { from: this.name });
  }

  /** A sync that keeps failing is the operator's own degradation (Degraded comes from the status library). */
  private async reportFailure(message: string): Promise<void> {
    let conditions: Condition[] = this.status.current()?.status?.conditions ?? [];
    if (!findCondition(conditions, 'Available')) conditions = this.status.conditions([{ type: 'Available', status: 'False', reason: 'MachineConfigOperatorFailing', message: 'The operator cannot bring up the machine-config component; see Degraded' }], conditions);
    await this.status.write({ conditions });
    log.error({ err: message }, 'sync keeps failing; reported Degraded');
  }
}

/** The operator's controller, for a manager (which owns client, informers and the Lease). */
export function machineConfigOperatorController(from: { client: KubeClient; informers: InformerFactory }, settings: MachineConfigOperatorSettings): Controller {
  return new MachineConfigOperator(from, settings).controller;
}

/** Adds the operator to a manager. */
export function addMachineConfigOperator(manager: Manager, settings: MachineConfigOperatorSettings): void {
  manager.add(machineConfigOperatorController(manager, settings));
}

/** Runs the operator on a manager of its own, holding the Lease openshift-machine-config-operator/machine-config. */
export async function runMachineConfigOperator(options: MachineConfigOperatorOptions): Promise<void> {
  const { name, lease } = MACHINE_CONFIG_OPERATOR;
  const manager = new Manager({ name, kubeconfig: options.kubeconfig, leaderElection: options.leaderElection === false ? undefined : { ...lease, ...options.leaderElection } });
  addMachineConfigOperator(manager, options);
  await manager.start(options.signal);
}
