// A machine's bootstrap data as Ignition (spec 3.3): what Cluster API's kubeadm bootstrap provider
// leaves on a machine before `kubeadm init` or `kubeadm join` runs there, in kubeadm's layout, for
// bosun's node agent and `bosun kubeadm` (src/cluster/kubeadm) to run from. Pure: the CAs and the
// bootstrap kubeconfig come in made (bootstrap-controller.ts makes them).
//
// Every machine:
//   /etc/systemd/system/kubelet.service   the kubelet unit (where bosun's node agent reads it):
//                                         --bootstrap-kubeconfig=/etc/kubernetes/bootstrap-kubelet.conf
//                                         --kubeconfig=/etc/kubernetes/kubelet.conf
//                                         --config=/var/lib/kubelet/config.yaml, then kubeadm's
//                                         $KUBELET_KUBEADM_ARGS from the EnvironmentFile
//   /var/lib/kubelet/config.yaml          kubeadm's KubeletConfiguration (static pods from
//                                         /etc/kubernetes/manifests, client CA, cluster DNS)
//   /var/lib/kubelet/kubeadm-flags.env    KUBELET_KUBEADM_ARGS="--node-labels=… --register-with-taints=…"
//                                         (and nodeRegistration.kubeletExtraArgs)
//   /etc/kubernetes/pki/ca.crt            the cluster CA
//   /etc/bosun/kubernetes-version         one line: the Kubernetes version (`v1.33.1`)
//   /etc/kubeadm.sh + kubeadm.service     preKubeadmCommands, `bosun kubeadm init|join --config
//                                         /run/kubeadm/kubeadm.yaml`, postKubeadmCommands (a oneshot
//                                         the local machine's boot runs: src/cluster/node-agent/boot-units.ts)
//   /run/kubeadm/kubeadm.yaml             kubeadm's configuration (kubeadm.k8s.io/v1beta4), as Cluster
//                                         API writes it: Init+ClusterConfiguration, or JoinConfiguration
//                                         (a control-plane join also the ClusterConfiguration its
//                                         static pods are made from, which kubeadm would read from
//                                         the cluster's kubeadm-config ConfigMap)
//   the spec's files and users
// Control-plane machines, besides, the CAs and the service-account key pair:
//   /etc/kubernetes/pki/{ca.key,sa.key,sa.pub,front-proxy-ca.crt,front-proxy-ca.key,etcd/ca.crt,etcd/ca.key}
// Joining machines (control plane and workers): /etc/kubernetes/bootstrap-kubelet.conf with the
// bootstrap token (kubeadm join's TLS bootstrap).
// Everything that names the machine's address is made on the machine by `bosun kubeadm`, as
// kubeadm makes it: the leaf certificates, the kubeconfigs (admin.conf, controller-manager.conf,
// scheduler.conf, and on init kubelet.conf), the static pod manifests and the etcd membership.
import { X509Certificate, createHash } from 'node:crypto';
import { stringify } from 'yaml';
import type * as api from '../../api/index.js';
import { encodeDataUrl } from '../../ignition/data-url.js';
import type { FileEntry, IgnitionConfig, Unit, User } from '../../ignition/types.js';
import { CONTROL_PLANE_NODE_ROLE } from './api.js';
import { CLUSTER_CERTIFICATES, type ClusterCertificates } from './certificates.js';
import { PKI_DIR, MANIFESTS_DIR } from './static-pods.js';
import { nthAddress } from '../../common/ipv4.js';
import { IMAGE_REPOSITORY, type KubernetesVersion } from './versions.js';

export const BOOTSTRAP_IGNITION_VERSION = '3.3.0';

export const KUBELET_UNIT_PATH = '/etc/systemd/system/kubelet.service';
export const KUBELET_CONFIG_PATH = '/var/lib/kubelet/config.yaml';
export const KUBEADM_FLAGS_PATH = '/var/lib/kubelet/kubeadm-flags.env';
export const KUBELET_KUBECONFIG_PATH = '/etc/kubernetes/kubelet.conf';
export const BOOTSTRAP_KUBELET_KUBECONFIG_PATH = '/etc/kubernetes/bootstrap-kubelet.conf';
export const ADMIN_KUBECONFIG_PATH = '/etc/kubernetes/admin.conf';
export const KUBERNETES_VERSION_PATH = '/etc/bosun/kubernetes-version';
export const COMMANDS_SCRIPT_PATH = '/etc/kubeadm.sh';
export const COMMANDS_UNIT = 'kubeadm.service';
export const KUBEADM_CONFIG_PATH = '/run/kubeadm/kubeadm.yaml';

/** What kubeadm does on this machine: start the cluster, or join it as a control-plane machine or a worker. */
export type BootstrapRole = 'init' | 'join-control-plane' | 'join-worker';

export interface ClusterNetwork {
  serviceCidr: string;
  podCidr?: string;
  serviceDomain: string;
}

export interface BootstrapInput {
  clusterName: string;
  /** Cluster.spec.controlPlaneEndpoint: `host:port`. */
  controlPlaneEndpoint: string;
  /** The node's name (the instance's, which the node agent registers as). */
  nodeName: string;
  /** A joining machine's bootstrap token. */
  token?: string;
  network: ClusterNetwork;
  role: BootstrapRole;
  version: KubernetesVersion;
  spec: api.KubeadmConfigSpec;
  certificates: ClusterCertificates;
  /** The kubeconfigs the data carries, by path (kubeconfigPaths: a joining machine's bootstrap-kubelet.conf). */
  kubeconfigs: Record<string, string>;
  /** The spec's files' contents taken from Secrets (contentFrom), by index in spec.files. */
  fileContents?: Record<number, string>;
  /** The users' password hashes taken from Secrets (passwdFrom), by index in spec.users. */
  passwordHashes?: Record<number, string>;
}

const isControlPlane = (role: BootstrapRole) => role !== 'join-worker';

function file(path: string, contents: string | Buffer, mode = 0o644, owner?: string): FileEntry {
  return { path, mode, overwrite: true, contents: { source: encodeDataUrl(contents) }, ...ownership(owner) };
}

/** `user:group` as Ignition's user and group; root by id, since a fresh root may have no /etc/passwd to look it up in. */
function ownership(owner: string | undefined): Pick<FileEntry, 'user' | 'group'> {
  if (!owner) return {};
  const [user, group] = owner.split(':');
  const node = (name: string | undefined) => (!name ? undefined : name === 'root' ? { id: 0 } : { name });
  const u = node(user);
  const g = node(group);
  return { ...(u ? { user: u } : {}), ...(g ? { group: g } : {}) };
}

/** The taints a node registers with: the spec's, else kubeadm's default (the control-plane taint on control-plane nodes). */
export function registerTaints(role: BootstrapRole, spec: api.KubeadmConfigSpec): Array<{ key: string; value?: string; effect: string }> {
  const registration = role === 'init' ? spec.initConfiguration?.nodeRegistration : spec.joinConfiguration?.nodeRegistration;
  if (registration?.taints) return registration.taints.map((t) => ({ key: t.key, ...(t.value ? { value: t.value } : {}), effect: t.effect ?? 'NoSchedule' }));
  return isControlPlane(role) ? [{ key: CONTROL_PLANE_NODE_ROLE, effect: 'NoSchedule' }] : [];
}

/** kubeadm-flags.env: the kubelet flags kubeadm decides per node. */
export function kubeadmFlags(role: BootstrapRole, spec: api.KubeadmConfigSpec): string {
  const registration = role === 'init' ? spec.initConfiguration?.nodeRegistration : spec.joinConfiguration?.nodeRegistration;
  const taints = registerTaints(role, spec).map((t) => `${t.key}${t.value ? `=${t.value}` : ''}:${t.effect}`);
  const extra = registration?.kubeletExtraArgs ?? [];
  const labelsFromExtra = extra.filter((a) => a.name === 'node-labels').map((a) => a.value);
  const labels = [...(isControlPlane(role) ? [`${CONTROL_PLANE_NODE_ROLE}=`] : []), ...labelsFromExtra].join(',');
  const args = [
    ...(labels ? [`--node-labels=${labels}`] : []),
    ...(taints.length ? [`--register-with-taints=${taints.join(',')}`] : []),
    ...(registration?.name ? [`--hostname-override=${registration.name}`] : []),
    ...extra.filter((a) => a.name !== 'node-labels').map((a) => `--${a.name}=${a.value}`),
  ];
  return `KUBELET_KUBEADM_ARGS="${args.join(' ')}"\n`;
}

/** kubeadm's KubeletConfiguration (its componentconfigs defaults), as YAML. */
export function kubeletConfiguration(network: ClusterNetwork): string {
  return [
    'apiVersion: kubelet.config.k8s.io/v1beta1',
    'kind: KubeletConfiguration',
    'authentication:',
    '  anonymous:',
    '    enabled: false',
    '  webhook:',
    '    cacheTTL: 0s',
    '    enabled: true',
    '  x509:',
    `    clientCAFile: ${PKI_DIR}/ca.crt`,
    'authorization:',
    '  mode: Webhook',
    '  webhook:',
    '    cacheAuthorizedTTL: 0s',
    '    cacheUnauthorizedTTL: 0s',
    'cgroupDriver: systemd',
    'clusterDNS:',
    `- ${nthAddress(network.serviceCidr, 10)}`,
    `clusterDomain: ${network.serviceDomain}`,
    'healthzBindAddress: 127.0.0.1',
    'healthzPort: 10248',
    // bosun's addition to kubeadm's file: the cluster's pod network, of which the node agent takes its
    // machine's /24 (the kubelet would get it from kube-controller-manager's --allocate-node-cidrs).
    ...(network.podCidr ? [`podCIDR: ${network.podCidr}`] : []),
    'rotateCertificates: true',
    `staticPodPath: ${MANIFESTS_DIR}`,
    'streamingConnectionIdleTimeout: 0s',
    'syncFrequency: 0s',
    '',
  ].join('\n');
}

export function kubeletUnit(): Unit {
  const contents = [
    '[Unit]',
    'Description=kubelet: The Kubernetes Node Agent',
    'Documentation=https://kubernetes.io/docs/',
    'Wants=network-online.target',
    'After=network-online.target',
    '',
    '[Service]',
    `EnvironmentFile=-${KUBEADM_FLAGS_PATH}`,
    'EnvironmentFile=-/etc/default/kubelet',
    'ExecStart=/usr/bin/kubelet \\',
    `    --bootstrap-kubeconfig=${BOOTSTRAP_KUBELET_KUBECONFIG_PATH} \\`,
    `    --kubeconfig=${KUBELET_KUBECONFIG_PATH} \\`,
    `    --config=${KUBELET_CONFIG_PATH} \\`,
    '    $KUBELET_KUBEADM_ARGS $KUBELET_EXTRA_ARGS',
    'Restart=always',
    'StartLimitInterval=0',
    'RestartSec=10',
    '',
    '[Install]',
    'WantedBy=multi-user.target',
    '',
  ].join('\n');
  return { name: 'kubelet.service', enabled: true, contents };
}

/** kubeadm's step of the script: `bosun kubeadm init|join`, which does what kubeadm does on the machine. */
export const kubeadmCommand = (role: BootstrapRole) => `bosun kubeadm ${role === 'init' ? 'init' : 'join'} --config ${KUBEADM_CONFIG_PATH}`;

/**
 * The spec's commands around kubeadm's, as Cluster API's Ignition writes them: one script, run
 * once by a oneshot unit (the boot moves it away once it has succeeded, as the script's last line
 * does in Cluster API's).
 */
export function commandsScript(spec: api.KubeadmConfigSpec, role: BootstrapRole): string {
  return [
    '#!/bin/bash',
    'set -e',
    ...(spec.preKubeadmCommands ?? []),
    kubeadmCommand(role),
    ...(spec.postKubeadmCommands ?? []),
    '',
  ].join('\n');
}

function commandsUnit(): Unit {
  const contents = [
    '[Unit]',
    'Description=kubeadm',
    '# Run only once. After successful run, this file is moved to /tmp/.',
    `ConditionPathExists=${COMMANDS_SCRIPT_PATH}`,
    'After=network.target',
    '',
    '[Service]',
    '# To not restart the unit when it exits, as it is expected.',
    'Type=oneshot',
    `ExecStart=${COMMANDS_SCRIPT_PATH}`,
    '',
    '[Install]',
    'WantedBy=multi-user.target',
    '',
  ].join('\n');
  return { name: COMMANDS_UNIT, enabled: true, contents };
}

function specFiles(spec: api.KubeadmConfigSpec, contentFrom: Record<number, string>): FileEntry[] {
  return (spec.files ?? []).map((f, i) => {
    const raw = contentFrom[i] ?? f.content ?? '';
    const contents = f.encoding === 'base64' ? Buffer.from(raw, 'base64') : raw;
    const mode = f.permissions ? Number.parseInt(f.permissions, 8) : 0o644;
    const source = { source: encodeDataUrl(contents) };
    if (f.append) return { path: f.path, mode, append: [source], ...ownership(f.owner) };
    return { path: f.path, mode, overwrite: true, contents: source, ...ownership(f.owner) };
  });
}

function specUsers(spec: api.KubeadmConfigSpec, passwordHashes: Record<number, string>): { users: User[]; sudoers: FileEntry[] } {
  const users: User[] = [];
  const sudoers: FileEntry[] = [];
  (spec.users ?? []).forEach((u, i) => {
    const passwordHash = passwordHashes[i] ?? u.passwd;
    users.push({
      name: u.name,
      ...(u.gecos ? { gecos: u.gecos } : {}),
      ...(u.homeDir ? { homeDir: u.homeDir } : {}),
      ...(u.shell ? { shell: u.shell } : {}),
      ...(u.primaryGroup ? { primaryGroup: u.primaryGroup } : {}),
      ...(u.groups ? { groups: u.groups.split(',').map((g) => g.trim()).filter(Boolean) } : {}),
      ...(passwordHash ? { passwordHash } : {}),
      ...(u.sshAuthorizedKeys?.length ? { sshAuthorizedKeys: u.sshAuthorizedKeys } : {}),
    });
    if (u.sudo) sudoers.push(file(`/etc/sudoers.d/${u.name}`, `${u.name} ${u.sudo}\n`, 0o440, 'root:root'));
  });
  return { users, sudoers };
}

/** `sha256:<hex>` of the CA's public key, as kubeadm's discovery pins it (caCertHashes). */
export function caCertHash(caPem: string): string {
  const spki = new X509Certificate(caPem).publicKey.export({ type: 'spki', format: 'der' });
  return `sha256:${createHash('sha256').update(spki).digest('hex')}`;
}

/** kubeadm's configuration for this machine (v1beta4, which Cluster API's v1beta2 types mirror). */
export function kubeadmConfigYaml(input: BootstrapInput): string {
  const { spec, role } = input;
  const API = 'kubeadm.k8s.io/v1beta4';
  const nodeRegistration = (r: NonNullable<api.KubeadmConfigSpec['initConfiguration']>['nodeRegistration']) => ({ name: input.nodeName, ...(r ?? {}), taints: registerTaints(role, spec) });
  const cluster = {
      apiVersion: API, kind: 'ClusterConfiguration',
      imageRepository: IMAGE_REPOSITORY,
      ...(spec.clusterConfiguration ?? {}),
      clusterName: input.clusterName,
      kubernetesVersion: input.version.version,
      controlPlaneEndpoint: input.controlPlaneEndpoint,
      networking: { serviceSubnet: input.network.serviceCidr, ...(input.network.podCidr ? { podSubnet: input.network.podCidr } : {}), dnsDomain: input.network.serviceDomain },
  };
  const clusterYaml = stringify(cluster, { lineWidth: 0 });
  if (role === 'init') {
    const init = { apiVersion: API, kind: 'InitConfiguration', ...(spec.initConfiguration ?? {}), nodeRegistration: nodeRegistration(spec.initConfiguration?.nodeRegistration) };
    return `${clusterYaml}---\n${stringify(init, { lineWidth: 0 })}`;
  }
  const join = spec.joinConfiguration ?? {};
  const bootstrapToken = { ...(join.discovery?.bootstrapToken ?? {}), apiServerEndpoint: input.controlPlaneEndpoint, token: input.token, caCertHashes: [caCertHash(input.certificates.ca.certPem)] };
  const joinYaml = stringify({
    apiVersion: API, kind: 'JoinConfiguration',
    ...join,
    discovery: { ...(join.discovery ?? {}), bootstrapToken },
    nodeRegistration: nodeRegistration(join.nodeRegistration),
    ...(isControlPlane(role) ? { controlPlane: join.controlPlane ?? {} } : {}),
  }, { lineWidth: 0 });
  // A control-plane join makes its static pods from the cluster's configuration, which comes with it.
  return isControlPlane(role) ? `${clusterYaml}---\n${joinYaml}` : joinYaml;
}

/** The bootstrap data: an Ignition config (spec 3.3) as an object. */
export function bootstrapIgnition(input: BootstrapInput): IgnitionConfig {
  const { role, spec, certificates } = input;
  const files: FileEntry[] = [
    file(`${PKI_DIR}/ca.crt`, certificates.ca.certPem),
    file(KUBELET_CONFIG_PATH, kubeletConfiguration(input.network)),
    file(KUBEADM_FLAGS_PATH, kubeadmFlags(role, spec)),
    file(KUBERNETES_VERSION_PATH, `${input.version.version}\n`),
    file(KUBEADM_CONFIG_PATH, kubeadmConfigYaml(input), 0o640),
    file(COMMANDS_SCRIPT_PATH, commandsScript(spec, role), 0o700),
  ];
  if (isControlPlane(role)) {
    for (const purpose of ['ca', 'proxy', 'etcd'] as const) {
      const name = CLUSTER_CERTIFICATES[purpose].file;
      if (purpose !== 'ca') files.push(file(`${PKI_DIR}/${name}.crt`, certificates[purpose].certPem));
      files.push(file(`${PKI_DIR}/${name}.key`, certificates[purpose].keyPem, 0o600));
    }
    files.push(file(`${PKI_DIR}/sa.pub`, certificates.sa.certPem), file(`${PKI_DIR}/sa.key`, certificates.sa.keyPem, 0o600));
  }
  for (const [path, contents] of Object.entries(input.kubeconfigs).sort(([a], [b]) => a.localeCompare(b))) files.push(file(path, contents, 0o600));
  const { users, sudoers } = specUsers(spec, input.passwordHashes ?? {});
  files.push(...sudoers, ...specFiles(spec, input.fileContents ?? {}));
  return {
    ignition: { version: BOOTSTRAP_IGNITION_VERSION },
    ...(users.length ? { passwd: { users } } : {}),
    storage: { files },
    systemd: { units: [kubeletUnit(), commandsUnit()] },
  };
}

/**
 * The kubeconfig paths a machine of `role` gets in its data (what bootstrap-controller.ts makes
 * for it): a joining machine's bootstrap-kubelet.conf. The others (admin.conf,
 * controller-manager.conf, scheduler.conf, init's kubelet.conf) `bosun kubeadm` makes on the
 * machine from the CA, as kubeadm's kubeconfig phase does.
 */
export function kubeconfigPaths(role: BootstrapRole): string[] {
  return role === 'init' ? [] : [BOOTSTRAP_KUBELET_KUBECONFIG_PATH];
}
