// The base MachineConfigs every role starts from, generated from the cluster facts in the
// ControllerConfig (the template controller writes them; OpenShift keeps the same names):
//   00-<role>                   CA bundle for the kubelet, pull secret, extra trust bundle,
//                               cloud provider config, proxy environment, and /etc/bosun-release
//                               naming the release whose templates these are
//   01-<role>-kubelet           /etc/kubernetes/kubelet.conf and kubelet.service
//   01-<role>-container-runtime CRI-O drop-in (systemd cgroups, pause image)
//   99-<role>-ssh               the `core` user's sshAuthorizedKeys (the installer's objects in
//                               OpenShift; here generated when keys are given)
// Pure and deterministic: the same ControllerConfig and inputs give byte-identical objects.
//
// The templates come with the release, as OpenShift's come in the MCO image of its release:
// /etc/bosun-release carries the release version from the ControllerConfig's images
// (spec.images.releaseVersion, the release payload's machine-config-operator-images), so every
// release renders new configs for every pool and an update rolls every node onto them.
import type * as api from '../../api/index.js';
import { BosunError } from '../../common/errors.js';
import { encodeDataUrl } from '../../ignition/data-url.js';
import type { FileEntry, IgnitionConfig, Unit } from '../../ignition/types.js';
import { canonicalJson } from './render.js';
import {
  GENERATED_BY_VERSION_ANNOTATION, MCO_API_VERSION, ROLE_LABEL,
  ownerReferenceTo, type ControllerConfig, type MachineConfig,
} from './types.js';

export const ROLES = ['master', 'worker'] as const;
export type Role = (typeof ROLES)[number];

export const KUBELET_CONFIG_PATH = '/etc/kubernetes/kubelet.conf';
export const KUBELET_CA_PATH = '/etc/kubernetes/kubelet-ca.crt';
export const PULL_SECRET_PATH = '/var/lib/kubelet/config.json';
export const RELEASE_FILE_PATH = '/etc/bosun-release';
export const TEMPLATE_IGNITION_VERSION = '3.2.0';

export interface TemplateInputs {
  controllerVersion: string;
  /** The pull secret's `.dockerconfigjson` (the Secret ControllerConfig spec.pullSecret names). */
  pullSecret?: string;
  /** Public keys for the `core` user. */
  sshAuthorizedKeys?: string[];
}

export class TemplateError extends BosunError {
  constructor(message: string, options?: ErrorOptions) {
    super('TemplateInvalid', message, options);
  }
}

/** Every base MachineConfig for every role, sorted by name. */
export function generateTemplateConfigs(cc: ControllerConfig, inputs: TemplateInputs): MachineConfig[] {
  return ROLES.flatMap((role) => generateRoleConfigs(cc, role, inputs)).sort((a, b) => (a.metadata.name! < b.metadata.name! ? -1 : 1));
}

export function generateRoleConfigs(cc: ControllerConfig, role: Role, inputs: TemplateInputs): MachineConfig[] {
  const mc = (name: string, config: Omit<IgnitionConfig, 'ignition'>): MachineConfig => ({
    apiVersion: MCO_API_VERSION,
    kind: 'MachineConfig',
    metadata: {
      name,
      labels: { [ROLE_LABEL]: role },
      annotations: { [GENERATED_BY_VERSION_ANNOTATION]: inputs.controllerVersion },
      ownerReferences: [ownerReferenceTo(cc, 'ControllerConfig')],
    },
    spec: { config: { ignition: { version: TEMPLATE_IGNITION_VERSION }, ...config } },
  });

  const out = [
    mc(`00-${role}`, { storage: { files: baseFiles(cc, inputs) } }),
    mc(`01-${role}-container-runtime`, { storage: { files: [file('/etc/crio/crio.conf.d/01-bosun-base', crioDropIn(cc))] } }),
    mc(`01-${role}-kubelet`, {
      storage: { files: [file(KUBELET_CONFIG_PATH, serializeKubeletConfig(baseKubeletConfiguration(cc, role)))] },
      systemd: { units: [kubeletUnit(role, cloudProvider(cc))] },
    }),
  ];
  const keys = (inputs.sshAuthorizedKeys ?? []).map((k) => k.trim()).filter(Boolean);
  if (keys.length > 0) out.push(mc(`99-${role}-ssh`, { passwd: { users: [{ name: 'core', sshAuthorizedKeys: keys }] } }));
  return out;
}

function file(path: string, contents: string, mode = 0o644): FileEntry {
  return { path, mode, overwrite: true, contents: { source: encodeDataUrl(contents) } };
}

function decodeBase64Field(cc: ControllerConfig, field: keyof ControllerConfig['spec']): string {
  const value = cc.spec[field];
  if (typeof value !== 'string' || value === '') return '';
  const compact = value.replace(/\s+/g, '');
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(compact)) throw new TemplateError(`ControllerConfig ${cc.metadata.name}: spec.${field} is not base64`);
  return Buffer.from(compact, 'base64').toString('utf8');
}

function baseFiles(cc: ControllerConfig, inputs: TemplateInputs): FileEntry[] {
  const ca = decodeBase64Field(cc, 'kubeAPIServerServingCAData');
  if (!ca.includes('-----BEGIN CERTIFICATE-----')) throw new TemplateError(`ControllerConfig ${cc.metadata.name}: spec.kubeAPIServerServingCAData holds no PEM certificate`);
  const files = [file(KUBELET_CA_PATH, ca)];
  if (inputs.pullSecret !== undefined) {
    try { JSON.parse(inputs.pullSecret); } catch { throw new TemplateError('the pull secret is not JSON (expected a .dockerconfigjson)'); }
    files.push(file(PULL_SECRET_PATH, inputs.pullSecret, 0o600));
  }
  const trust = decodeBase64Field(cc, 'additionalTrustBundle');
  if (trust) files.push(file('/etc/pki/ca-trust/source/anchors/openshift-config-user-ca-bundle.crt', trust));
  if (cc.spec.cloudProviderConfig) files.push(file('/etc/kubernetes/cloud.conf', cc.spec.cloudProviderConfig));
  const proxy = cc.spec.proxy;
  if (proxy && (proxy.httpProxy || proxy.httpsProxy || proxy.noProxy)) {
    const lines = [['HTTP_PROXY', proxy.httpProxy], ['HTTPS_PROXY', proxy.httpsProxy], ['NO_PROXY', proxy.noProxy]]
      .filter(([, v]) => v).map(([k, v]) => `${k}=${v}`);
    files.push(file('/etc/mco/proxy.env', `${lines.join('\n')}\n`));
  }
  const release = releaseVersion(cc);
  if (release) files.push(file(RELEASE_FILE_PATH, `# The bosun release whose machine-config templates rendered this node's configuration.\nVERSION=${release}\n`));
  return files;
}

/** The release the ControllerConfig's images come from (images.json `releaseVersion`), if it says. */
export function releaseVersion(cc: ControllerConfig): string | undefined {
  const v: unknown = cc.spec.images?.releaseVersion;
  if (v === undefined || v === '') return undefined;
  if (typeof v !== 'string' || !/^[0-9A-Za-z.+-]+$/.test(v)) throw new TemplateError(`ControllerConfig ${cc.metadata.name}: spec.images.releaseVersion ${JSON.stringify(v)} is not a version`);
  return v;
}

/** The kubelet configuration every node of the role starts from; KubeletConfigs layer on it. */
export function baseKubeletConfiguration(cc: ControllerConfig, role: Role): Record<string, unknown> {
  if (!cc.spec.clusterDNSIP) throw new TemplateError(`ControllerConfig ${cc.metadata.name}: spec.clusterDNSIP is empty`);
  return {
    apiVersion: 'kubelet.config.k8s.io/v1beta1',
    kind: 'KubeletConfiguration',
    authentication: { anonymous: { enabled: false }, webhook: { enabled: true, cacheTTL: '0s' }, x509: { clientCAFile: KUBELET_CA_PATH } },
    authorization: { mode: 'Webhook', webhook: { cacheAuthorizedTTL: '0s', cacheUnauthorizedTTL: '0s' } },
    cgroupDriver: 'systemd',
    cgroupRoot: '/',
    clusterDNS: [cc.spec.clusterDNSIP],
    clusterDomain: 'cluster.local',
    containerLogMaxSize: '50Mi',
    containerRuntimeEndpoint: 'unix:///var/run/crio/crio.sock',
    enableSystemLogQuery: true,
    featureGates: {},
    kubeAPIBurst: 100,
    kubeAPIQPS: 50,
    maxPods: 250,
    nodeStatusReportFrequency: '5m0s',
    nodeStatusUpdateFrequency: '10s',
    podPidsLimit: 4096,
    protectKernelDefaults: true,
    rotateCertificates: true,
    serializeImagePulls: false,
    serverTLSBootstrap: true,
    shutdownGracePeriod: '0s',
    staticPodPath: '/etc/kubernetes/manifests',
    systemCgroups: '/system.slice',
    systemReserved: { 'ephemeral-storage': '1Gi', cpu: '500m', memory: '1Gi' },
    tlsMinVersion: 'VersionTLS12',
    ...(role === 'master' ? { registerWithTaints: [{ key: 'node-role.kubernetes.io/master', effect: 'NoSchedule' }] } : {}),
  };
}

/** kubelet.conf text: JSON (valid YAML) with sorted keys, so equal settings give equal bytes. */
export function serializeKubeletConfig(config: Record<string, unknown>): string {
  return `${canonicalJson(config, 2)}\n`;
}

function nodeLabels(role: Role): string {
  return role === 'master' ? 'node-role.kubernetes.io/control-plane,node-role.kubernetes.io/master' : 'node-role.kubernetes.io/worker';
}

/** Platforms whose cloud provider runs outside the kubelet, in a cloud controller manager (OpenShift 4.14+). */
const EXTERNAL_CLOUD_PLATFORMS = new Set(['alibabacloud', 'aws', 'azure', 'gcp', 'ibmcloud', 'nutanix', 'openstack', 'powervs', 'vsphere']);

/**
 * The kubelet's --cloud-provider, as the MCO's template function `cloudProvider` gives it:
 * `external` where a cloud controller manager initialises the nodes (the cloud platforms, and an
 * External platform whose platformStatus says its CCM is External — bosun's local cloud), so
 * that each node registers with the node.cloudprovider.kubernetes.io/uninitialized taint; empty
 * where no cloud provider runs (None, BareMetal).
 */
export function cloudProvider(cc: ControllerConfig): string {
  // spec.infra is the cluster's Infrastructure object, kept whole by the CRD (unknown fields preserved).
  const status = (cc.spec.infra as Partial<api.Infrastructure> | undefined)?.status?.platformStatus;
  const platform = String(status?.type ?? cc.spec.platform ?? '').toLowerCase();
  if (platform === 'external') return status?.external?.cloudControllerManager?.state === 'External' ? 'external' : '';
  return EXTERNAL_CLOUD_PLATFORMS.has(platform) ? 'external' : '';
}

function kubeletUnit(role: Role, provider: string): Unit {
  const contents = [
    '[Unit]',
    'Description=Kubernetes Kubelet',
    'Wants=network-online.target',
    'Requires=crio.service',
    'After=network-online.target crio.service',
    '',
    '[Service]',
    'Type=notify',
    'ExecStartPre=/bin/mkdir --parents /etc/kubernetes/manifests',
    'EnvironmentFile=-/etc/mco/proxy.env',
    'Environment="KUBELET_LOG_LEVEL=2"',
    'ExecStart=/usr/bin/kubelet \\',
    `    --config=${KUBELET_CONFIG_PATH} \\`,
    '    --bootstrap-kubeconfig=/etc/kubernetes/kubeconfig \\',
    '    --kubeconfig=/var/lib/kubelet/kubeconfig \\',
    `    --node-labels=${nodeLabels(role)} \\`,
    `    --cloud-provider=${provider} \\`,
    '    --v=${KUBELET_LOG_LEVEL}',
    'Restart=always',
    'RestartSec=10',
    '',
    '[Install]',
    'WantedBy=multi-user.target',
    '',
  ].join('\n');
  return { name: 'kubelet.service', enabled: true, contents };
}

function crioDropIn(cc: ControllerConfig): string {
  const pause = cc.spec.images?.infraImageKey;
  return [
    '[crio.runtime]',
    'cgroup_manager = "systemd"',
    'conmon_cgroup = "pod"',
    ...(pause ? ['', '[crio.image]', `pause_image = "${pause}"`] : []),
    '',
  ].join('\n');
}
