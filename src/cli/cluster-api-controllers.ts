// `bosun cluster-api-controllers`: Cluster API's core controllers (Cluster, Machine, MachineSet,
// MachineDeployment, MachineHealthCheck), the bootstrap data copy, and the local infrastructure
// provider (LocalCluster, LocalMachine) on the component manager until SIGTERM, under the Lease
// openshift-cluster-api/cluster-api-controllers.
import type { Command } from 'commander';
import { readFileSync } from 'node:fs';
import { podPath } from '../common/pod-path.js';
import type { Manager } from '../kube/manager.js';
import { registerComponent, releaseVersionOption } from '../kube/manager-flags.js';

interface Options {
  cloudUrl?: string;
  cloudDataDir?: string;
  cloudConfig?: string;
  cloudConfigMap?: string;
  cloudCredentialsFile?: string;
  namespace: string;
  releaseVersion?: string;
  webhookListen: string;
  webhookCertDir?: string;
}

export function register(program: Command): void {
  registerComponent<Options>(program, {
    name: 'cluster-api-controllers',
    lease: { namespace: 'openshift-cluster-api', name: 'cluster-api-controllers' },
    description: 'run Cluster API: machines, machine sets and deployments, health checks, and the local infrastructure provider',
    defaults: { leaseDuration: 137, renewDeadline: 107, retryPeriod: 26 },
    flags: (command) =>
      command
        .option('--cloud-url <url>', "the local cloud's API (as `bosun cloud serve` prints it)")
        .option('--cloud-data-dir <dir>', 'find the local cloud through the data directory it serves instead')
        .option('--cloud-config <file>', 'or read it from a cloud config file, as the cloud controller manager\'s (url = … or dataDir = …, INI, YAML or JSON)')
        .option('--cloud-config-map <namespace/name>', 'or from that cloud config in a ConfigMap\'s key "config" (in the cluster: openshift-config/cloud-provider-config)')
        .option('--cloud-credentials-file <file>', 'the cloud credential to call the cloud with (in the cluster: Secret openshift-cluster-api/capi-cloud-credentials, from CredentialsRequest openshift-cluster-api; default with --cloud-data-dir: that cloud\'s root credential)')
        .option('--namespace <name>', 'where the bootstrap data Secrets (worker-user-data, master-user-data) are copied to', 'openshift-cluster-api')
        .addOption(releaseVersionOption('cluster-api'))
        .option('--webhook-listen <host:port>', "serve Cluster API's admission webhooks (defaults and validation) on https://HOST:PORT, or \"off\"", 'off')
        .option('--webhook-cert-dir <dir>', "the webhooks' certificate: tls.crt and tls.key in DIR (reloaded when they change; default: self-signed at start)"),
    help: `
Leader election: the Lease openshift-cluster-api/cluster-api-controllers.

Controllers:
  cluster            Cluster phase, failure domains and machine counts from its LocalCluster
  machine            bootstrap data → LocalMachine → providerID → nodeRef; on delete: drain the
                     node (evictions honour PodDisruptionBudgets), delete the instance, the node
  machineset         replicas, spec.deletion.order, the cluster.x-k8s.io/delete-machine annotation,
                     machines a health check handed over are replaced
  machinedeployment  rolling updates (maxSurge/maxUnavailable) through MachineSets; scale subresource
  machinehealthcheck unhealthy node conditions, node startup timeout, the remediation limit
  bootstrap-data     openshift-machine-api/{worker,master}-user-data copied as Cluster API bootstrap data
  localcluster, localmachine   the local infrastructure provider (instances in the local cloud)

Webhooks (--webhook-listen; every replica serves them): Cluster API's defaults and validation at
its paths (/mutate-cluster-x-k8s-io-v1beta2-machinedeployment, /validate-…) for MachineDeployment,
MachineSet, Machine, KubeadmControlPlane, KubeadmConfig, KubeadmConfigTemplate, LocalCluster,
LocalMachine and LocalMachineTemplate; the payload's capi-mutating-webhook-configuration and
capi-validating-webhook-configuration send them there through the Service capi-controllers.

Example (the local cloud running for .bosun):
  $ bosun cluster-api-controllers --kubeconfig .bosun/kubeconfig --cloud-data-dir .bosun &
  (with --cloud-data-dir the cloud's root credential; in the cluster --cloud-credentials-file names the mounted Secret's key)
  $ kubectl get machines -A
  NAMESPACE               NAME                       CLUSTER   NODE NAME                  FAILURE DOMAIN   READY   AVAILABLE   UP-TO-DATE   PHASE     AGE   VERSION
  openshift-cluster-api   workers-865b744446-6wx68   local     workers-865b744446-6wx68   local-a          True    True        True         Running   3s    v1.33.0
  openshift-cluster-api   workers-865b744446-k9h46   local     workers-865b744446-k9h46   local-b          True    True        True         Running   3s    v1.33.0
  $ kubectl -n openshift-cluster-api scale machinedeployment workers --replicas 3
  machinedeployment.cluster.x-k8s.io/workers scaled`,
    async setup(manager, o) {
      const given = [o.cloudUrl, o.cloudDataDir, o.cloudConfig, o.cloudConfigMap].filter((v) => v !== undefined);
      if (given.length !== 1) throw new Error('give the local cloud with one of --cloud-url, --cloud-data-dir, --cloud-config or --cloud-config-map');
      const cloudUrl = await resolveCloudUrl(manager, o);
      if (!/^https?:\/\//.test(cloudUrl)) throw new Error(`the local cloud's URL must be http(s), got "${cloudUrl}"`);
      // Given by absolute path in a pod, it is found where the pod's volumes are.
      const credentialsFile = podPath(o.cloudCredentialsFile) ?? (o.cloudDataDir ? (await import('../cloud/client.js')).rootCredentialPath(o.cloudDataDir) : undefined);
      if (!credentialsFile) throw new Error('give the cloud credential with --cloud-credentials-file (the cloud answers 401 without one)');
      const { CloudClient } = await import('../cloud/client.js');
      CloudClient.withCredentialFile(cloudUrl, credentialsFile); // a missing or malformed file fails now, with its name
      const { addClusterApiControllers } = await import('../capi/controllers.js');
      const webhook = o.webhookListen === 'off' ? undefined : { listen: parseListen(o.webhookListen), certDir: o.webhookCertDir };
      addClusterApiControllers(manager, { cloudUrl, namespace: o.namespace, releaseVersion: o.releaseVersion, webhook, cloudCredentialsFile: credentialsFile });
    },
  });
}

/** The local cloud's API URL from whichever flag gave it. */
async function resolveCloudUrl(manager: Manager, o: Options): Promise<string> {
  if (o.cloudUrl) return o.cloudUrl;
  if (o.cloudDataDir) return (await import('../cloud/endpoint.js')).readEndpoint(o.cloudDataDir);
  const { cloudUrlFromConfig } = await import('../ccm-operator/local-provider.js');
  // The install writes the config as JSON ({"url": …}); a cloud config file is INI or YAML.
  const fromConfig = (text: string): string => {
    let json: { url?: unknown; dataDir?: unknown } | undefined;
    try { json = JSON.parse(text); } catch { json = undefined; }
    return json && typeof json === 'object' ? cloudUrlFromConfig(Object.entries(json).map(([k, v]) => `${k} = ${String(v)}`).join('\n')) : cloudUrlFromConfig(text);
  };
  if (o.cloudConfig) {
    try {
      return fromConfig(readFileSync(o.cloudConfig, 'utf8'));
    } catch (e) {
      throw new Error(`cannot use --cloud-config ${o.cloudConfig}: ${(e as Error).message}`);
    }
  }
  const [namespace, name] = String(o.cloudConfigMap).split('/');
  if (!namespace || !name) throw new Error(`--cloud-config-map must be <namespace>/<name>, got "${o.cloudConfigMap}"`);
  const { resources } = await import('../kube/resources.js');
  const map = await manager.client.read(resources.configMaps, name, namespace);
  if (!map?.data?.config) throw new Error(`ConfigMap ${namespace}/${name} ${map ? 'has no key "config"' : 'does not exist'}`);
  return fromConfig(map.data.config);
}

/** HOST:PORT for --webhook-listen. */
function parseListen(value: string): { host: string; port: number } {
  const m = /^(.+):(\d+)$/.exec(value);
  const port = m ? Number(m[2]) : NaN;
  if (!m || !(port >= 0 && port < 65536)) throw new Error(`--webhook-listen must be HOST:PORT or "off", got "${value}"`);
  return { host: m[1].replace(/^\[|\]$/g, ''), port };
}
