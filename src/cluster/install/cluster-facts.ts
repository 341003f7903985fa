// What an installer writes before the operators run, as openshift-install does:
//   Infrastructure/cluster — the platform and the API endpoints (`api` for users, `api-int` for
//     the cluster's own machines and pods);
//   Network/cluster — the service network the API server allocates cluster IPs from and the pod
//     network (install-config's networking), which the MCO derives the cluster DNS address from;
//   the API server's CA for the machine-config operator (openshift-config-managed/
//     kube-apiserver-server-ca, kube-system/root-ca) and a pull secret (openshift-config/
//     pull-secret; bosun's images need none, so it holds no credentials);
//   with machines: the machine-config server's serving certificate (Secret
//     openshift-machine-config-operator/machine-config-server-tls) and the kubelet's bootstrap
//     credentials it serves to booting machines (Secret node-bootstrapper-token: a kubeconfig on
//     a bootstrap token, whose CSRs the machine approver approves), and the cloud's address for
//     the cloud controller manager (ConfigMap openshift-config/cloud-provider-config, named by
//     Infrastructure spec.cloudConfig).
// Existing objects are kept: a second start changes nothing the first one wrote.
import { randomBytes } from 'node:crypto';
import { bootstrapTokenSecret } from '../../apiserver/nodes/bootstrap-tokens.js';
import { issueServingCert, type KeyPair } from '../../common/pki.js';
import type * as api from '../../api/index.js';
import type { KubeClient, ResourceRef } from '../../kube/client.js';
import { resources } from '../../kube/resources.js';

export const INFRASTRUCTURE_NAME = 'bosun-local';

/**
 * The local cluster's service network: loopback, so that the node agents can listen on its
 * cluster IPs without root. Apart from bosun's other loopback ranges: machines 127.0.1.N, api-int
 * 127.0.100.0/24, load balancers 127.0.200.0/24, pods 127.1.0.0/16.
 */
export const LOCAL_SERVICE_NETWORK = '127.30.0.0/16';
/** The pods' network: machine N's podCIDR is 127.1.N.0/24. */
export const LOCAL_CLUSTER_NETWORK = { cidr: '127.1.0.0/16', hostPrefix: 24 };
export const MCO_NAMESPACE = 'openshift-machine-config-operator';

export interface ClusterFacts {
  caPem: string;
  /** The API as users reach it. */
  apiUrl: string;
  /** The API as the cluster's machines and pods reach it (the api-int balancer with machines). */
  apiInternalUrl: string;
  /** The service network (the API server's --service-cluster-ip-range). */
  serviceNetwork: string;
  /** With machines: the platform is External, named `local`, and these are written too. */
  machines?: { cloudUrl: string; clusterCa: KeyPair; serverNames: string[] };
  /** How many masters and workers the install makes: the Infrastructure's topologies follow from them. */
  size?: { masters: number; workers: number };
}

type Topology = 'HighlyAvailable' | 'SingleReplica';

/**
 * The Infrastructure's topologies as OpenShift's installer derives them from the install's replica
 * counts: one master is a SingleReplica control plane (operators then run one replica of what
 * would have two, with no PodDisruptionBudget); the infrastructure (where ingress and the like
 * run) follows the workers — none: the control plane's, one: SingleReplica, more: HighlyAvailable.
 */
export function topologies(size: { masters: number; workers: number } | undefined): { controlPlaneTopology: Topology; infrastructureTopology: Topology } {
  if (!size || size.masters === 0) return { controlPlaneTopology: 'HighlyAvailable', infrastructureTopology: 'HighlyAvailable' };
  const controlPlaneTopology: Topology = size.masters === 1 ? 'SingleReplica' : 'HighlyAvailable';
  const infrastructureTopology: Topology = size.workers === 0 ? controlPlaneTopology : size.workers === 1 ? 'SingleReplica' : 'HighlyAvailable';
  return { controlPlaneTopology, infrastructureTopology };
}

/** Creates each object unless it exists; returns how many were created. */
export async function createMissing<T extends api.KubeObject>(client: KubeClient, objects: readonly T[]): Promise<number> {
  let created = 0;
  for (const object of objects) {
    // Every object given here names its apiVersion and kind.
    const resource = (await client.resourceFor(object.apiVersion ?? '', object.kind ?? '')) as unknown as ResourceRef<T>;
    if (await client.read(resource, object.metadata.name, object.metadata.namespace)) continue;
    await client.create(resource, object);
    created++;
  }
  return created;
}

const namespace = (name: string): api.Namespace => ({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
const b64 = (text: string) => Buffer.from(text).toString('base64');

/** A kubeconfig (JSON, which is YAML) for `server` trusting `caPem`, authenticating as `user`. */
export function kubeconfigFor(server: string, caPem: string, user: Record<string, string>): string {
  return JSON.stringify({
    apiVersion: 'v1', kind: 'Config',
    clusters: [{ name: 'cluster', cluster: { server, 'certificate-authority-data': b64(caPem) } }],
    users: [{ name: 'user', user }],
    contexts: [{ name: 'default', context: { cluster: 'cluster', user: 'user' } }],
    'current-context': 'default',
  });
}

export async function writeClusterFacts(client: KubeClient, facts: ClusterFacts): Promise<void> {
  await createMissing(client, ['openshift-config', 'openshift-config-managed', MCO_NAMESPACE].map(namespace));
  await createMissing(client, [
    { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'kube-apiserver-server-ca', namespace: 'openshift-config-managed' }, data: { 'ca-bundle.crt': facts.caPem } },
    { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'root-ca', namespace: 'kube-system' }, data: { 'ca.crt': facts.caPem } },
    { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'pull-secret', namespace: 'openshift-config' }, type: 'kubernetes.io/dockerconfigjson', data: { '.dockerconfigjson': b64('{"auths":{}}') } },
  ]);
  const m = facts.machines;
  if (m) {
    const serving = await issueServingCert(m.clusterCa, 'machine-config-server', m.serverNames);
    // Never expiring, as the node-bootstrapper token OpenShift's machine-config server serves.
    const token = `${randomBytes(3).toString('hex')}.${randomBytes(8).toString('hex')}`;
    const tokenSecret = bootstrapTokenSecret(token, { description: 'bootstrap credentials the machine-config server gives booting machines' });
    const existingToken = await client.read(resources.secrets, 'node-bootstrapper-token', MCO_NAMESPACE);
    // bootstrapTokenSecret's Secret is still untyped (src/apiserver).
    if (!existingToken) await createMissing(client, [tokenSecret as api.Secret]);
    await createMissing(client, [
      { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'machine-config-server-tls', namespace: MCO_NAMESPACE }, type: 'kubernetes.io/tls', data: { 'tls.crt': b64(serving.certPem), 'tls.key': b64(serving.keyPem) } },
      { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'node-bootstrapper-token', namespace: MCO_NAMESPACE }, type: 'Opaque', data: { kubeconfig: b64(kubeconfigFor(facts.apiInternalUrl, facts.caPem, { token })) } },
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cloud-provider-config', namespace: 'openshift-config' }, data: { config: JSON.stringify({ url: m.cloudUrl }, null, 2) } },
    ]);
  }
  await writeInfrastructure(client, facts);
  await writeNetwork(client, facts.serviceNetwork);
}

/** Network/cluster: what the installer asked for in spec, and (no network operator running) the same in status. */
async function writeNetwork(client: KubeClient, serviceNetwork: string): Promise<void> {
  const networking = { serviceNetwork: [serviceNetwork], clusterNetwork: [LOCAL_CLUSTER_NETWORK] };
  const live = (await client.read(resources.networks, 'cluster')) ?? (await client.create(resources.networks, {
    apiVersion: 'config.openshift.io/v1', kind: 'Network', metadata: { name: 'cluster' }, spec: networking,
  }));
  if (live.status?.serviceNetwork) return;
  await client.mergePatch(resources.networks, 'cluster', undefined, { status: networking }, 'status');
}

/** Infrastructure/cluster; its facts live in its status, written through the status subresource. */
async function writeInfrastructure(client: KubeClient, facts: ClusterFacts): Promise<void> {
  const { infrastructures } = resources;
  const external = facts.machines !== undefined;
  // OpenShift names a cloud whose CCM it does not ship with platform External and its name.
  const platformSpec = external ? { type: 'External' as const, external: { platformName: 'local' } } : { type: 'None' as const };
  const live = (await client.read(infrastructures, 'cluster')) ?? (await client.create(infrastructures, {
    apiVersion: 'config.openshift.io/v1',
    kind: 'Infrastructure',
    metadata: { name: 'cluster' },
    spec: { platformSpec, ...(external ? { cloudConfig: { name: 'cloud-provider-config', key: 'config' } } : {}) },
  }));
  if (live.status?.apiServerURL) return;
  const status = {
    infrastructureName: INFRASTRUCTURE_NAME,
    platform: platformSpec.type,
    platformStatus: external ? { type: 'External', external: { cloudControllerManager: { state: 'External' } } } : { type: 'None' },
    ...topologies(facts.size),
    apiServerURL: facts.apiUrl,
    apiServerInternalURI: facts.apiInternalUrl,
    etcdDiscoveryDomain: '',
  };
  await client.mergePatch(infrastructures, 'cluster', undefined, { status }, 'status');
}
