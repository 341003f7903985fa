// What `kubeadm init` and `kubeadm join` do on a machine, as bosun's own step of its first boot
// (`bosun kubeadm init|join --config /run/kubeadm/kubeadm.yaml`, which /etc/kubeadm.sh runs between
// preKubeadmCommands and postKubeadmCommands, as cloud-init runs the real kubeadm between them).
// It works from what the bootstrap data left (src/capi/kubeadm/bootstrap-ignition.ts): the CAs,
// kubeadm.yaml, the bootstrap kubeconfig; it makes everything that names the machine, in
// kubeadm's phases and order, each file only when it is not there yet (a failed run is run again
// at the next boot):
//
//   init                         join --control-plane          join (worker)
//   certs (leaves from the CAs)  certs                         the CA against the discovery pin
//   kubeconfig: admin,           kubeconfig: admin,
//     controller-manager,          controller-manager,
//     scheduler, kubelet           scheduler (kubelet.conf comes from the node agent's TLS bootstrap)
//   etcd: a new cluster of one   etcd: the members from the etcd mirror pods in kube-system,
//                                  MemberAdd for itself as a learner, then --initial-cluster =
//                                  all of them, --initial-cluster-state=existing; waits for its
//                                  member, promotes it once in sync
//   control-plane manifests      control-plane manifests
//   waits for its API server     waits for its API server      waits for the node's kubelet.conf
//   upload-config (kubeadm-config)  (the ClusterConfiguration comes in kubeadm.yaml)
//   /run/cluster-api/bootstrap-success.complete (Cluster API's sentinel)
//
// Nothing in it asks the management cluster: a joining control-plane machine talks to the
// workload cluster (its API through the control-plane endpoint, its etcd members) with the
// credentials it made from the CAs on its disk. Paths are the machine's (`/etc/kubernetes/…`),
// resolved in `root` (the machine root of a local machine; `/` on a real one).
import { X509Certificate, createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { request } from 'node:https';
import { dirname, join } from 'node:path';
import { parseAllDocuments, stringify } from 'yaml';
import type * as api from '../../api/index.js';
import { etcdClient } from '../../apiserver/storage/etcd.js';
import { BosunError } from '../../common/errors.js';
import { issueCertificate, type KeyPair } from '../../common/pki.js';
import { sleep } from '../../common/sleep.js';
import { KubeClient, KubeConfig, isAlreadyExists, resources } from '../../kube/index.js';
import { kubeadmLeafCertificates, kubeconfigYaml } from '../../capi/kubeadm/certificates.js';
import {
  API_SERVER_PORT, CONTROLLER_MANAGER_KUBECONFIG, ETCD_CLIENT_URLS_ANNOTATION, MANIFESTS_DIR, PKI_DIR, SCHEDULER_KUBECONFIG,
  apiServerPod, controllerManagerPod, etcdClientUrl, etcdPeerUrl, etcdPod, schedulerPod, type ControlPlaneInput,
} from '../../capi/kubeadm/static-pods.js';
import { findKubernetesVersion, unknownVersionMessage } from '../../capi/kubeadm/versions.js';

export class KubeadmError extends BosunError {}

export const ADMIN_CONF = '/etc/kubernetes/admin.conf';
export const KUBELET_CONF = '/etc/kubernetes/kubelet.conf';
export const SUCCESS_SENTINEL = '/run/cluster-api/bootstrap-success.complete';
export const KUBERNETES_VERSION_FILE = '/etc/bosun/kubernetes-version';

type ClusterConfiguration = NonNullable<api.KubeadmConfigSpec['clusterConfiguration']> & {
  clusterName?: string;
  kubernetesVersion?: string;
  controlPlaneEndpoint?: string;
  networking?: { serviceSubnet?: string; podSubnet?: string; dnsDomain?: string };
};
type NodeRegistration = { name?: string };
interface InitConfiguration { nodeRegistration?: NodeRegistration; localAPIEndpoint?: { advertiseAddress?: string } }
interface JoinConfiguration {
  nodeRegistration?: NodeRegistration;
  discovery?: { bootstrapToken?: { apiServerEndpoint?: string; token?: string; caCertHashes?: string[]; unsafeSkipCAVerification?: boolean } };
  controlPlane?: { localAPIEndpoint?: { advertiseAddress?: string } };
}

/** kubeadm.yaml's documents by kind. */
export interface KubeadmConfigFile {
  cluster?: ClusterConfiguration;
  init?: InitConfiguration;
  join?: JoinConfiguration;
}

/** The documents of a kubeadm configuration file (kubeadm.k8s.io/v1beta3 or v1beta4). Pure. */
export function parseKubeadmConfig(text: string): KubeadmConfigFile {
  const out: KubeadmConfigFile = {};
  for (const doc of parseAllDocuments(text)) {
    if (doc.errors.length) throw new KubeadmError('InvalidConfig', `kubeadm configuration: ${doc.errors[0].message}`);
    const value = doc.toJSON() as { apiVersion?: string; kind?: string } | null;
    if (!value) continue;
    if (!/^kubeadm\.k8s\.io\/v1beta[34]$/.test(value.apiVersion ?? '')) throw new KubeadmError('InvalidConfig', `kubeadm configuration: apiVersion "${value.apiVersion}" of ${value.kind} is not kubeadm.k8s.io/v1beta3 or v1beta4`);
    if (value.kind === 'ClusterConfiguration') out.cluster = value as ClusterConfiguration;
    else if (value.kind === 'InitConfiguration') out.init = value as InitConfiguration;
    else if (value.kind === 'JoinConfiguration') out.join = value as JoinConfiguration;
    // Other kinds (KubeletConfiguration, KubeProxyConfiguration) are the node agent's or nobody's here.
  }
  return out;
}

export interface KubeadmOptions {
  /** The configuration file as the machine names it (/run/kubeadm/kubeadm.yaml). */
  config: string;
  /** The machine's root on this host ('/' on a real machine). */
  root: string;
  /** The machine's address: the API server's advertise address, etcd's URLs, the serving certificates' SANs. */
  nodeIP?: string;
  /** How long each wait may take (kubeadm's timeouts.controlPlaneComponentHealthCheck, default 4 min). */
  timeoutMs?: number;
  /** How often a wait looks again (default 1 s). */
  pollMs?: number;
  /** Where progress goes, one line at a time (the boot log). */
  out: (line: string) => void;
  signal?: AbortSignal;
}

/** The context of one run: where files are and what the node is. */
class Machine {
  constructor(readonly o: KubeadmOptions) {}
  path(p: string): string {
    return this.o.root === '/' ? p : join(this.o.root, p);
  }
  has(p: string): boolean {
    return existsSync(this.path(p));
  }
  read(p: string): string {
    const file = this.path(p);
    if (!existsSync(file)) throw new KubeadmError('MissingFile', `${p} is not on this machine (the bootstrap data writes it)`);
    return readFileSync(file, 'utf8');
  }
  /** Writes whole or not at all (a temporary file renamed): the node agent reads the manifests as they appear. */
  write(p: string, text: string, mode = 0o600): void {
    const file = this.path(p);
    mkdirSync(dirname(file), { recursive: true });
    const tmp = `${file}.kubeadm-${process.pid}.tmp`;
    writeFileSync(tmp, text, { mode });
    renameSync(tmp, file);
  }
  say(line: string): void {
    this.o.out(line);
  }
}

const pkiFile = (name: string) => `${PKI_DIR}/${name}`;

function caPair(m: Machine, name: string): KeyPair {
  return { certPem: m.read(pkiFile(`${name}.crt`)), keyPem: m.read(pkiFile(`${name}.key`)) };
}

/** The machine's address: the flag's (the local cloud's instance address), else the configuration's. */
function nodeAddress(m: Machine, configured: string | undefined): string {
  const ip = m.o.nodeIP || configured;
  if (!ip) throw new KubeadmError('NoAddress', 'the machine\'s address is unknown: pass --node-ip (a local machine\'s boot sets BOSUN_HOST_IP) or set localAPIEndpoint.advertiseAddress');
  return ip;
}

/** `host:port` of the control-plane endpoint as an URL. */
const endpointServer = (endpoint: string) => `https://${endpoint.includes('://') ? new URL(endpoint).host : endpoint}`;

function clusterFacts(cluster: ClusterConfiguration, m: Machine) {
  const versionText = m.has(KUBERNETES_VERSION_FILE) ? m.read(KUBERNETES_VERSION_FILE).trim() : cluster.kubernetesVersion;
  const version = findKubernetesVersion(versionText);
  if (!version) throw new KubeadmError('UnknownVersion', unknownVersionMessage(versionText));
  if (!cluster.controlPlaneEndpoint) throw new KubeadmError('InvalidConfig', 'ClusterConfiguration.controlPlaneEndpoint is not set');
  const serviceCidr = cluster.networking?.serviceSubnet ?? '10.96.0.0/12';
  return {
    version, serviceCidr, podCidr: cluster.networking?.podSubnet, serviceDomain: cluster.networking?.dnsDomain ?? 'cluster.local',
    clusterName: cluster.clusterName ?? 'kubernetes', endpoint: cluster.controlPlaneEndpoint,
  };
}

/** kubeadm's certs phase: the leaf certificates a control-plane machine's static pods use, made from the CAs on disk. */
async function certsPhase(m: Machine, cluster: ClusterConfiguration, nodeName: string, nodeIP: string): Promise<void> {
  const facts = clusterFacts(cluster, m);
  const missingCa = ['ca', 'etcd/ca', 'front-proxy-ca'].flatMap((n) => [`${n}.crt`, `${n}.key`]).concat(['sa.key', 'sa.pub']).filter((f) => !m.has(pkiFile(f)));
  if (missingCa.length) throw new KubeadmError('MissingCertificateAuthority', `${missingCa.map(pkiFile).join(', ')} not on this machine: a control-plane machine's bootstrap data carries the cluster's CAs and service-account keys`);
  const leaves = await kubeadmLeafCertificates({ ca: caPair(m, 'ca'), etcd: caPair(m, 'etcd/ca'), proxy: caPair(m, 'front-proxy-ca') }, {
    nodeName, nodeIP, serviceCidr: facts.serviceCidr, serviceDomain: facts.serviceDomain,
    endpointHost: new URL(endpointServer(facts.endpoint)).hostname,
    apiServerCertSANs: cluster.apiServer?.certSANs,
    etcdServerCertSANs: cluster.etcd?.local?.serverCertSANs, etcdPeerCertSANs: cluster.etcd?.local?.peerCertSANs,
    days: cluster.certificateValidityPeriodDays,
  });
  for (const [name, pair] of Object.entries(leaves)) {
    if (m.has(pkiFile(`${name}.crt`)) && m.has(pkiFile(`${name}.key`))) {
      m.say(`[certs] Using the existing "${name}" certificate and key`);
      continue;
    }
    m.write(pkiFile(`${name}.key`), pair.keyPem, 0o600);
    m.write(pkiFile(`${name}.crt`), pair.certPem, 0o644);
    const sans = new X509Certificate(pair.certPem).subjectAltName;
    m.say(`[certs] Generating "${name}" certificate and key${sans ? ` (${sans})` : ''}`);
  }
}

/** kubeadm's kubeconfig phase: the files it writes on this machine, each with a client certificate from the cluster CA. */
async function kubeconfigPhase(m: Machine, cluster: ClusterConfiguration, nodeName: string, nodeIP: string, withKubelet: boolean): Promise<void> {
  const facts = clusterFacts(cluster, m);
  const ca = caPair(m, 'ca');
  const endpoint = endpointServer(facts.endpoint);
  // The components talk to the API server of their own machine; admin and the kubelet to the endpoint (kubeadm's choice).
  const local = `https://${nodeIP}:${API_SERVER_PORT}`;
  const files: Array<{ path: string; server: string; user: string; organizations: string[] }> = [
    { path: ADMIN_CONF, server: endpoint, user: 'kubernetes-admin', organizations: ['system:masters'] },
    { path: CONTROLLER_MANAGER_KUBECONFIG, server: local, user: 'system:kube-controller-manager', organizations: [] },
    { path: SCHEDULER_KUBECONFIG, server: local, user: 'system:kube-scheduler', organizations: [] },
    ...(withKubelet ? [{ path: KUBELET_CONF, server: endpoint, user: `system:node:${nodeName}`, organizations: ['system:nodes'] }] : []),
  ];
  for (const f of files) {
    const name = f.path.split('/').pop();
    if (m.has(f.path)) {
      m.say(`[kubeconfig] Using the existing "${name}"`);
      continue;
    }
    const clientCert = await issueCertificate(ca, { commonName: f.user, organizations: f.organizations }, { client: true, days: cluster.certificateValidityPeriodDays });
    m.write(f.path, kubeconfigYaml({ cluster: facts.clusterName, server: f.server, caPem: ca.certPem, user: f.user, clientCert }), 0o600);
    m.say(`[kubeconfig] Writing "${name}" kubeconfig file (server ${f.server})`);
  }
}

function manifestInput(m: Machine, cluster: ClusterConfiguration, nodeName: string, nodeIP: string, init: boolean, initialCluster?: ControlPlaneInput['initialCluster']): ControlPlaneInput {
  const facts = clusterFacts(cluster, m);
  return {
    version: facts.version, clusterName: facts.clusterName, serviceCidr: facts.serviceCidr, podCidr: facts.podCidr, serviceDomain: facts.serviceDomain,
    clusterConfiguration: cluster, nodeName, advertiseAddress: nodeIP, init, initialCluster,
  };
}

function writeManifest(m: Machine, pod: api.Pod): void {
  const path = `${MANIFESTS_DIR}/${pod.metadata.name}.yaml`;
  m.write(path, stringify(pod, { lineWidth: 0 }), 0o600);
  m.say(`[control-plane] Creating static Pod manifest for "${pod.metadata.name}" at ${path}`);
}

function controlPlanePhase(m: Machine, input: ControlPlaneInput): void {
  for (const pod of [apiServerPod(input), controllerManagerPod(input), schedulerPod(input)]) writeManifest(m, pod);
}

/** A client of the API server at `server` with the admin credentials this machine made. */
function adminClient(m: Machine, server?: string): KubeClient {
  const kc = new KubeConfig();
  kc.loadFromString(m.read(ADMIN_CONF));
  if (server) {
    const cluster = kc.getCurrentCluster()!;
    kc.clusters = kc.clusters.map((c) => (c.name === cluster.name ? { ...c, server } : c));
  }
  return new KubeClient(kc, { component: 'kubeadm' });
}

/** Repeats `attempt` until it returns a value, for at most timeoutMs; the last error names what was awaited. */
async function waitFor<T>(m: Machine, what: string, attempt: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + (m.o.timeoutMs ?? 240_000);
  let last = '';
  for (;;) {
    m.o.signal?.throwIfAborted();
    try {
      const value = await attempt();
      if (value !== undefined) return value;
    } catch (e) {
      last = (e as Error).message;
    }
    if (Date.now() > deadline) throw new KubeadmError('Timeout', `timed out waiting for ${what}${last ? `: ${last}` : ''}`);
    await sleep(m.o.pollMs ?? 1000, m.o.signal);
  }
}

/** GET `path` of the API server at `ip` with the admin client certificate; the status code. */
function apiGet(m: Machine, ip: string, path: string): Promise<number> {
  const kc = new KubeConfig();
  kc.loadFromString(m.read(ADMIN_CONF));
  const user = kc.getCurrentUser()!;
  const b64 = (s: string | undefined) => (s ? Buffer.from(s, 'base64') : undefined);
  return new Promise((resolve, reject) => {
    const req = request({ host: ip, port: API_SERVER_PORT, path, ca: m.read(pkiFile('ca.crt')), cert: b64(user.certData), key: b64(user.keyData), timeout: 5000 }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('timeout', () => req.destroy(new Error('no answer within 5 s')));
    req.on('error', reject);
    req.end();
  });
}

async function waitForApiServer(m: Machine, nodeIP: string): Promise<void> {
  m.say(`[wait-control-plane] Waiting for the API server at https://${nodeIP}:${API_SERVER_PORT} to be healthy (up to ${Math.round((m.o.timeoutMs ?? 240_000) / 1000)} s)`);
  await waitFor(m, `the API server at https://${nodeIP}:${API_SERVER_PORT}/readyz`, async () => {
    const code = await apiGet(m, nodeIP, '/readyz');
    if (code !== 200) throw new Error(`/readyz answered ${code}`);
    return true;
  });
  m.say(`[api-check] The API server at https://${nodeIP}:${API_SERVER_PORT} is healthy`);
}

/** An etcd client of `endpoints` with the API server's etcd client certificate (as kubeadm's etcd client is made). */
function etcdOf(m: Machine, endpoints: string[]) {
  return etcdClient({ endpoints, caFile: m.path(pkiFile('etcd/ca.crt')), certFile: m.path(pkiFile('apiserver-etcd-client.crt')), keyFile: m.path(pkiFile('apiserver-etcd-client.key')) }, 5000);
}

/** The client URLs of the cluster's etcd members, from the etcd mirror pods in kube-system (kubeadm's etcdutil.NewFromCluster). */
async function etcdEndpoints(m: Machine): Promise<string[]> {
  const pods = await adminClient(m).list(resources.pods, 'kube-system', { labelSelector: 'component=etcd,tier=control-plane' });
  const urls = pods.items.flatMap((p) => {
    const annotated = p.metadata.annotations?.[ETCD_CLIENT_URLS_ANNOTATION];
    if (annotated) return annotated.split(',');
    return p.status?.hostIP ? [etcdClientUrl(p.status.hostIP)] : [];
  });
  if (urls.length === 0) throw new Error('no etcd pod in kube-system yet');
  return [...new Set(urls)].sort();
}

/**
 * kubeadm's etcd join (its EtcdLearnerMode, on by default since Kubernetes 1.29): MemberAdd for
 * this machine as a learner through the existing members (or the member it added on an earlier
 * try), then the members as --initial-cluster. A learner receives the log but does not vote, so
 * the cluster's quorum is unchanged until it has caught up and is promoted (promoteEtcdMember).
 */
async function joinEtcd(m: Machine, nodeName: string, nodeIP: string): Promise<{ id: string; endpoints: string[]; members: Array<{ name: string; peerURL: string }> }> {
  const endpoints = await waitFor(m, 'the etcd members of the cluster (the etcd mirror pods in kube-system, through the control-plane endpoint)', () => etcdEndpoints(m));
  m.say(`[etcd] The cluster's etcd members serve at ${endpoints.join(', ')}`);
  const peerURL = etcdPeerUrl(nodeIP);
  const client = etcdOf(m, endpoints);
  try {
    const members = await waitFor(m, `the etcd cluster at ${endpoints.join(', ')} to add ${nodeName}`, async () => {
      const listed = await client.cluster.memberList({});
      const existing = listed.members.find((x) => x.peerURLs.includes(peerURL));
      if (existing) {
        m.say(`[etcd] ${peerURL} is a member already (ID ${existing.ID}): an earlier try added it`);
        return { id: existing.ID, members: listed.members };
      }
      const added = await client.cluster.memberAdd({ peerURLs: [peerURL], isLearner: true });
      m.say(`[etcd] Added ${nodeName} (${peerURL}) to the etcd cluster as a learner: member ID ${added.member.ID}`);
      return { id: added.member.ID, members: added.members };
    });
    return {
      id: members.id,
      endpoints,
      members: members.members.map((x) => ({ name: x.ID === members.id ? nodeName : x.name || x.ID, peerURL: x.peerURLs[0] })).sort((a, b) => a.name.localeCompare(b.name)),
    };
  } finally {
    client.close();
  }
}

/**
 * Promotes this machine's etcd member from learner to voting member once it is in sync with the
 * leader (etcd refuses until then, and kubeadm asks again), through the members that were there
 * before it (a learner answers no cluster calls). A member promoted already is left as it is.
 */
async function promoteEtcdMember(m: Machine, nodeName: string, joined: { id: string; endpoints: string[] }): Promise<void> {
  const client = etcdOf(m, joined.endpoints);
  try {
    await waitFor(m, `etcd to promote ${nodeName} (member ID ${joined.id}) from learner once it is in sync with the leader`, async () => {
      const me = (await client.cluster.memberList({})).members.find((x) => x.ID === joined.id);
      if (!me) throw new Error(`member ${joined.id} is no longer in the etcd cluster`);
      if (!me.isLearner) return true;
      await client.cluster.memberPromote({ ID: joined.id });
      m.say(`[etcd] Promoted ${nodeName} (member ID ${joined.id}) from learner to voting member`);
      return true;
    });
  } finally {
    client.close();
  }
}

async function waitForEtcdMember(m: Machine, nodeIP: string): Promise<void> {
  const url = etcdClientUrl(nodeIP);
  m.say(`[etcd] Waiting for the local etcd member at ${url} to be healthy`);
  await waitFor(m, `the etcd member at ${url}`, async () => {
    const client = etcdOf(m, [url]);
    try {
      const status = await client.maintenance.status();
      if (status.leader === '0') throw new Error('no leader yet');
      return true;
    } finally {
      client.close();
    }
  });
}

function writeSentinel(m: Machine): void {
  m.write(SUCCESS_SENTINEL, 'success\n', 0o644);
}

function readConfig(m: Machine): KubeadmConfigFile {
  return parseKubeadmConfig(m.read(m.o.config));
}

/** `kubeadm init`: this machine starts the cluster. */
export async function kubeadmInit(o: KubeadmOptions): Promise<void> {
  const m = new Machine(o);
  const config = readConfig(m);
  if (!config.cluster) throw new KubeadmError('InvalidConfig', `${o.config} holds no ClusterConfiguration: kubeadm init needs one`);
  const nodeName = config.init?.nodeRegistration?.name;
  if (!nodeName) throw new KubeadmError('InvalidConfig', `${o.config}: InitConfiguration.nodeRegistration.name is not set`);
  const nodeIP = nodeAddress(m, config.init?.localAPIEndpoint?.advertiseAddress);
  const cluster = config.cluster;
  m.say(`[init] Using Kubernetes version: ${clusterFacts(cluster, m).version.version}; node ${nodeName} at ${nodeIP}`);
  await certsPhase(m, cluster, nodeName, nodeIP);
  await kubeconfigPhase(m, cluster, nodeName, nodeIP, true);
  if (!cluster.etcd?.external) {
    writeManifest(m, etcdPod(manifestInput(m, cluster, nodeName, nodeIP, true)));
    m.say(`[etcd] A new etcd cluster of one member: ${nodeName}=${etcdPeerUrl(nodeIP)}`);
  }
  controlPlanePhase(m, manifestInput(m, cluster, nodeName, nodeIP, true));
  await waitForApiServer(m, nodeIP);
  await uploadConfig(m, cluster, nodeIP);
  writeSentinel(m);
  m.say('Your Kubernetes control-plane has initialized successfully!');
}

/** kubeadm's upload-config phase: the ClusterConfiguration in kube-system/kubeadm-config, for joining machines and upgrades. */
async function uploadConfig(m: Machine, cluster: ClusterConfiguration, nodeIP: string): Promise<void> {
  const client = adminClient(m, `https://${nodeIP}:${API_SERVER_PORT}`);
  const configMap: api.ConfigMap = {
    apiVersion: 'v1', kind: 'ConfigMap',
    metadata: { name: 'kubeadm-config', namespace: 'kube-system' },
    data: { ClusterConfiguration: stringify(cluster, { lineWidth: 0 }) },
  };
  await waitFor(m, 'the kubeadm-config ConfigMap to be stored', async () => {
    try {
      await client.create(resources.configMaps, configMap);
    } catch (e) {
      if (!isAlreadyExists(e)) throw e;
    }
    return true;
  });
  m.say('[upload-config] Stored the ClusterConfiguration in the ConfigMap "kubeadm-config" in kube-system');
}

/** `sha256:<hex>` of a CA certificate's public key (kubeadm's discovery pin). Pure. */
export function publicKeyPin(caPem: string): string {
  const spki = new X509Certificate(caPem).publicKey.export({ type: 'spki', format: 'der' });
  return `sha256:${createHash('sha256').update(spki).digest('hex')}`;
}

/** `kubeadm join`: a control-plane machine (JoinConfiguration.controlPlane) or a worker joins the cluster. */
export async function kubeadmJoin(o: KubeadmOptions): Promise<void> {
  const m = new Machine(o);
  const config = readConfig(m);
  if (!config.join) throw new KubeadmError('InvalidConfig', `${o.config} holds no JoinConfiguration: kubeadm join needs one`);
  const nodeName = config.join.nodeRegistration?.name;
  if (!nodeName) throw new KubeadmError('InvalidConfig', `${o.config}: JoinConfiguration.nodeRegistration.name is not set`);
  const token = config.join.discovery?.bootstrapToken;
  if (!token?.apiServerEndpoint) throw new KubeadmError('InvalidConfig', `${o.config}: JoinConfiguration.discovery.bootstrapToken.apiServerEndpoint is not set`);
  // Discovery: the CA this machine trusts must be the one the pins name (kubeadm checks the cluster-info CA against them).
  const pin = publicKeyPin(m.read(pkiFile('ca.crt')));
  if (token.caCertHashes?.length && !token.unsafeSkipCAVerification && !token.caCertHashes.includes(pin)) {
    throw new KubeadmError('CAPinMismatch', `the cluster CA ${pkiFile('ca.crt')} (${pin}) matches none of discovery.bootstrapToken.caCertHashes (${token.caCertHashes.join(', ')})`);
  }
  m.say(`[discovery] The cluster CA matches the pin ${pin}; joining through ${token.apiServerEndpoint} as ${nodeName}`);
  if (config.join.controlPlane) {
    const nodeIP = nodeAddress(m, config.join.controlPlane.localAPIEndpoint?.advertiseAddress);
    // kubeadm reads it from the cluster's kubeadm-config; the bootstrap data brings it (its endpoint is how the cluster is reached).
    const cluster = config.cluster;
    if (!cluster) throw new KubeadmError('InvalidConfig', `${o.config}: a control-plane join needs the ClusterConfiguration beside its JoinConfiguration (the bootstrap data writes both)`);
    await certsPhase(m, cluster, nodeName, nodeIP);
    await kubeconfigPhase(m, cluster, nodeName, nodeIP, false);
    if (!cluster.etcd?.external) {
      const joined = await joinEtcd(m, nodeName, nodeIP);
      writeManifest(m, etcdPod(manifestInput(m, cluster, nodeName, nodeIP, false, joined.members)));
      m.say(`[etcd] --initial-cluster=${joined.members.map((x) => `${x.name}=${x.peerURL}`).join(',')} --initial-cluster-state=existing`);
      await waitForEtcdMember(m, nodeIP);
      await promoteEtcdMember(m, nodeName, joined);
    }
    controlPlanePhase(m, manifestInput(m, cluster, nodeName, nodeIP, false));
    await waitForApiServer(m, nodeIP);
  }
  m.say('[kubelet-start] Waiting for the kubelet to perform the TLS Bootstrap');
  await waitFor(m, `the node agent's TLS bootstrap (${KUBELET_CONF})`, async () => (m.has(KUBELET_CONF) ? true : undefined));
  writeSentinel(m);
  m.say(config.join.controlPlane ? 'This node has joined the cluster and a new control plane instance was created.' : 'This node has joined the cluster.');
}
