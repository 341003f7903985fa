// The static pods of a control-plane machine, as kubeadm writes them to /etc/kubernetes/manifests
// (kubernetes cmd/kubeadm/app/phases/controlplane/manifests.go and phases/etcd/local.go): etcd,
// kube-apiserver, kube-controller-manager and kube-scheduler in kube-system, host network,
// kubeadm's flags, hostPath volumes, probes and labels (`component`, `tier: control-plane`).
// Images are bosun's (`bosun.local/<component>:<tag>`, which the node agent runs as
// `bosun <component>`). They are made on the machine (`bosun kubeadm init|join`, src/cluster/kubeadm),
// as kubeadm makes them, with the node's name and address, and kubeadm's annotations that carry
// the address (etcd's client URL, the API server's endpoint: how a joining machine finds etcd).
import type * as api from '../../api/index.js';
import { IMAGE_REPOSITORY, type KubernetesVersion } from './versions.js';

export const MANIFESTS_DIR = '/etc/kubernetes/manifests';
export const PKI_DIR = '/etc/kubernetes/pki';
export const ETCD_DATA_DIR = '/var/lib/etcd';
export const API_SERVER_PORT = 6443;

type ExtraArg = { name: string; value: string };
type ExtraVolume = { name: string; hostPath: string; mountPath: string; readOnly?: boolean; pathType?: string };
type ClusterConfiguration = NonNullable<api.KubeadmConfigSpec['clusterConfiguration']>;

export interface ControlPlaneInput {
  version: KubernetesVersion;
  /** Cluster.metadata.name: kube-controller-manager's --cluster-name. */
  clusterName: string;
  serviceCidr: string;
  /** Unset: no node CIDRs are allocated. */
  podCidr?: string;
  serviceDomain: string;
  clusterConfiguration?: ClusterConfiguration;
  /** The node's name (etcd's member name) and address (the advertise address, etcd's URLs). */
  nodeName: string;
  advertiseAddress: string;
  /**
   * etcd's members as `--initial-cluster` lists them: init has only itself (a new cluster); a
   * joining machine every member the cluster has after adding it (`--initial-cluster-state=existing`).
   */
  initialCluster?: Array<{ name: string; peerURL: string }>;
  /** Whether this machine starts the etcd cluster (init) or joins it. */
  init: boolean;
}

/** The annotations kubeadm puts on its etcd and API server pods: where each serves. */
export const ETCD_CLIENT_URLS_ANNOTATION = 'kubeadm.kubernetes.io/etcd.advertise-client-urls';
export const API_SERVER_ENDPOINT_ANNOTATION = 'kubeadm.kubernetes.io/kube-apiserver.advertise-address.endpoint';

/** etcd's peer URL on a machine. */
export const etcdPeerUrl = (address: string) => `https://${address}:2380`;
export const etcdClientUrl = (address: string) => `https://${address}:2379`;
const pki = (file: string) => `${PKI_DIR}/${file}`;

/** kubeadm's flags with the user's extraArgs: a name the user gives replaces kubeadm's; new names are appended. */
export function mergeArgs(defaults: Record<string, string>, extra: ExtraArg[] | undefined): string[] {
  const byName = new Map<string, string[]>(Object.entries(defaults).map(([k, v]) => [k, [v]]));
  const overridden = new Set<string>();
  for (const { name, value } of extra ?? []) {
    if (!overridden.has(name)) byName.set(name, []);
    overridden.add(name);
    byName.get(name)!.push(value);
  }
  return [...byName.keys()].sort().flatMap((name) => byName.get(name)!.map((v) => `--${name}=${v}`));
}

interface Volume { name: string; hostPath: string; mountPath: string; readOnly: boolean; type: string }

const CA_VOLUMES: Volume[] = [
  { name: 'ca-certs', hostPath: '/etc/ssl/certs', mountPath: '/etc/ssl/certs', readOnly: true, type: 'DirectoryOrCreate' },
  { name: 'etc-ca-certificates', hostPath: '/etc/ca-certificates', mountPath: '/etc/ca-certificates', readOnly: true, type: 'DirectoryOrCreate' },
  { name: 'k8s-certs', hostPath: PKI_DIR, mountPath: PKI_DIR, readOnly: true, type: 'DirectoryOrCreate' },
  { name: 'usr-local-share-ca-certificates', hostPath: '/usr/local/share/ca-certificates', mountPath: '/usr/local/share/ca-certificates', readOnly: true, type: 'DirectoryOrCreate' },
  { name: 'usr-share-ca-certificates', hostPath: '/usr/share/ca-certificates', mountPath: '/usr/share/ca-certificates', readOnly: true, type: 'DirectoryOrCreate' },
];

const extraVolumes = (extra: ExtraVolume[] | undefined): Volume[] =>
  (extra ?? []).map((v) => ({ name: v.name, hostPath: v.hostPath, mountPath: v.mountPath, readOnly: v.readOnly ?? false, type: v.pathType ?? '' }));

/** An HTTPS probe; without a host it goes to the pod's IP. */
const probe = (host: string | undefined, path: string, port: number, failureThreshold: number, periodSeconds = 10): api.Probe => ({
  failureThreshold, httpGet: { ...(host ? { host } : {}), path, port, scheme: 'HTTPS' }, initialDelaySeconds: 10, periodSeconds, timeoutSeconds: 15,
});

function staticPod(component: string, image: string, command: string[], volumes: Volume[], o: { cpu: string; probes: Pick<api.Container, 'livenessProbe' | 'readinessProbe' | 'startupProbe'>; annotations?: Record<string, string> }): api.Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: component, namespace: 'kube-system', labels: { component, tier: 'control-plane' }, ...(o.annotations ? { annotations: o.annotations } : {}) },
    spec: {
      containers: [{
        name: component,
        image,
        imagePullPolicy: 'IfNotPresent',
        command,
        resources: { requests: { cpu: o.cpu } },
        ...o.probes,
        volumeMounts: volumes.map((v) => ({ name: v.name, mountPath: v.mountPath, ...(v.readOnly ? { readOnly: true } : {}) })),
      }],
      hostNetwork: true,
      priority: 2000001000,
      priorityClassName: 'system-node-critical',
      securityContext: { seccompProfile: { type: 'RuntimeDefault' } },
      volumes: volumes.map((v) => ({ name: v.name, hostPath: { path: v.hostPath, ...(v.type ? { type: v.type } : {}) } })),
    },
  };
}

const image = (component: string, tag: string, repository?: string) => `${repository ?? IMAGE_REPOSITORY}/${component}:${tag}`;

export function etcdPod(input: ControlPlaneInput): api.Pod {
  const local = input.clusterConfiguration?.etcd?.local;
  const dataDir = local?.dataDir ?? ETCD_DATA_DIR;
  const clientUrl = etcdClientUrl(input.advertiseAddress);
  const peerUrl = etcdPeerUrl(input.advertiseAddress);
  const members = input.initialCluster ?? [{ name: input.nodeName, peerURL: peerUrl }];
  const args = mergeArgs({
    'advertise-client-urls': clientUrl,
    'cert-file': pki('etcd/server.crt'),
    'client-cert-auth': 'true',
    'data-dir': dataDir,
    'experimental-initial-corrupt-check': 'true',
    'experimental-watch-progress-notify-interval': '5s',
    'initial-advertise-peer-urls': peerUrl,
    'initial-cluster': members.map((m) => `${m.name}=${m.peerURL}`).join(','),
    ...(input.init ? {} : { 'initial-cluster-state': 'existing' }),
    'key-file': pki('etcd/server.key'),
    'listen-client-urls': `https://127.0.0.1:2379,${clientUrl}`,
    'listen-metrics-urls': 'http://127.0.0.1:2381',
    'listen-peer-urls': peerUrl,
    name: input.nodeName,
    'peer-cert-file': pki('etcd/peer.crt'),
    'peer-client-cert-auth': 'true',
    'peer-key-file': pki('etcd/peer.key'),
    'peer-trusted-ca-file': pki('etcd/ca.crt'),
    'snapshot-count': '10000',
    'trusted-ca-file': pki('etcd/ca.crt'),
  }, local?.extraArgs);
  const volumes: Volume[] = [
    { name: 'etcd-certs', hostPath: pki('etcd'), mountPath: pki('etcd'), readOnly: false, type: 'DirectoryOrCreate' },
    { name: 'etcd-data', hostPath: dataDir, mountPath: dataDir, readOnly: false, type: 'DirectoryOrCreate' },
  ];
  const httpProbe = (path: string, failureThreshold: number): api.Probe => ({ failureThreshold, httpGet: { host: '127.0.0.1', path, port: 2381, scheme: 'HTTP' }, initialDelaySeconds: 10, periodSeconds: 10, timeoutSeconds: 15 });
  return staticPod('etcd', image('etcd', local?.imageTag ?? input.version.etcd, local?.imageRepository ?? input.clusterConfiguration?.imageRepository), ['etcd', ...args], volumes, {
    cpu: '100m',
    probes: { livenessProbe: httpProbe('/livez', 8), readinessProbe: { ...httpProbe('/readyz', 3), periodSeconds: 1 }, startupProbe: httpProbe('/readyz', 24) },
    annotations: { [ETCD_CLIENT_URLS_ANNOTATION]: clientUrl },
  });
}

export function apiServerPod(input: ControlPlaneInput): api.Pod {
  const c = input.clusterConfiguration?.apiServer;
  const external = input.clusterConfiguration?.etcd?.external;
  const args = mergeArgs({
    'advertise-address': input.advertiseAddress,
    'allow-privileged': 'true',
    'authorization-mode': 'Node,RBAC',
    'client-ca-file': pki('ca.crt'),
    'enable-admission-plugins': 'NodeRestriction',
    'enable-bootstrap-token-auth': 'true',
    ...(external
      ? { 'etcd-cafile': external.caFile, 'etcd-certfile': external.certFile, 'etcd-keyfile': external.keyFile, 'etcd-servers': external.endpoints.join(',') }
      : { 'etcd-cafile': pki('etcd/ca.crt'), 'etcd-certfile': pki('apiserver-etcd-client.crt'), 'etcd-keyfile': pki('apiserver-etcd-client.key'), 'etcd-servers': 'https://127.0.0.1:2379' }),
    'kubelet-client-certificate': pki('apiserver-kubelet-client.crt'),
    'kubelet-client-key': pki('apiserver-kubelet-client.key'),
    'kubelet-preferred-address-types': 'InternalIP,ExternalIP,Hostname',
    'proxy-client-cert-file': pki('front-proxy-client.crt'),
    'proxy-client-key-file': pki('front-proxy-client.key'),
    'requestheader-allowed-names': 'front-proxy-client',
    'requestheader-client-ca-file': pki('front-proxy-ca.crt'),
    'requestheader-extra-headers-prefix': 'X-Remote-Extra-',
    'requestheader-group-headers': 'X-Remote-Group',
    'requestheader-username-headers': 'X-Remote-User',
    'secure-port': String(API_SERVER_PORT),
    'service-account-issuer': `https://kubernetes.default.svc.${input.serviceDomain}`,
    'service-account-key-file': pki('sa.pub'),
    'service-account-signing-key-file': pki('sa.key'),
    'service-cluster-ip-range': input.serviceCidr,
    'tls-cert-file': pki('apiserver.crt'),
    'tls-private-key-file': pki('apiserver.key'),
  }, c?.extraArgs);
  return staticPod('kube-apiserver', image('kube-apiserver', input.version.version, input.clusterConfiguration?.imageRepository), ['kube-apiserver', ...args], [...CA_VOLUMES, ...extraVolumes(c?.extraVolumes)], {
    cpu: '250m',
    probes: {
      livenessProbe: probe(input.advertiseAddress, '/livez', API_SERVER_PORT, 8),
      readinessProbe: { ...probe(input.advertiseAddress, '/readyz', API_SERVER_PORT, 3), periodSeconds: 1 },
      startupProbe: probe(input.advertiseAddress, '/livez', API_SERVER_PORT, 24),
    },
    annotations: { [API_SERVER_ENDPOINT_ANNOTATION]: `${input.advertiseAddress}:${API_SERVER_PORT}` },
  });
}

export const CONTROLLER_MANAGER_KUBECONFIG = '/etc/kubernetes/controller-manager.conf';
export const SCHEDULER_KUBECONFIG = '/etc/kubernetes/scheduler.conf';

export function controllerManagerPod(input: ControlPlaneInput): api.Pod {
  const c = input.clusterConfiguration?.controllerManager;
  const kubeconfig = CONTROLLER_MANAGER_KUBECONFIG;
  const args = mergeArgs({
    ...(input.podCidr ? { 'allocate-node-cidrs': 'true', 'cluster-cidr': input.podCidr } : {}),
    'authentication-kubeconfig': kubeconfig,
    'authorization-kubeconfig': kubeconfig,
    'bind-address': '127.0.0.1',
    'client-ca-file': pki('ca.crt'),
    'cluster-name': input.clusterName,
    'cluster-signing-cert-file': pki('ca.crt'),
    'cluster-signing-key-file': pki('ca.key'),
    controllers: '*,bootstrapsigner,tokencleaner',
    kubeconfig,
    'leader-elect': 'true',
    'requestheader-client-ca-file': pki('front-proxy-ca.crt'),
    'root-ca-file': pki('ca.crt'),
    'service-account-private-key-file': pki('sa.key'),
    'service-cluster-ip-range': input.serviceCidr,
    'use-service-account-credentials': 'true',
  }, c?.extraArgs);
  const volumes: Volume[] = [
    ...CA_VOLUMES,
    { name: 'flexvolume-dir', hostPath: '/usr/libexec/kubernetes/kubelet-plugins/volume/exec', mountPath: '/usr/libexec/kubernetes/kubelet-plugins/volume/exec', readOnly: false, type: 'DirectoryOrCreate' },
    { name: 'kubeconfig', hostPath: kubeconfig, mountPath: kubeconfig, readOnly: true, type: 'FileOrCreate' },
    ...extraVolumes(c?.extraVolumes),
  ].sort((a, b) => a.name.localeCompare(b.name));
  return staticPod('kube-controller-manager', image('kube-controller-manager', input.version.version, input.clusterConfiguration?.imageRepository), ['kube-controller-manager', ...args], volumes, {
    cpu: '200m',
    probes: { livenessProbe: probe('127.0.0.1', '/healthz', 10257, 8), startupProbe: probe('127.0.0.1', '/healthz', 10257, 24) },
  });
}

export function schedulerPod(input: ControlPlaneInput): api.Pod {
  const c = input.clusterConfiguration?.scheduler;
  const kubeconfig = SCHEDULER_KUBECONFIG;
  const args = mergeArgs({
    'authentication-kubeconfig': kubeconfig,
    'authorization-kubeconfig': kubeconfig,
    'bind-address': '127.0.0.1',
    kubeconfig,
    'leader-elect': 'true',
  }, c?.extraArgs);
  const volumes: Volume[] = [{ name: 'kubeconfig', hostPath: kubeconfig, mountPath: kubeconfig, readOnly: true, type: 'FileOrCreate' }, ...extraVolumes(c?.extraVolumes)];
  return staticPod('kube-scheduler', image('kube-scheduler', input.version.version, input.clusterConfiguration?.imageRepository), ['kube-scheduler', ...args], volumes, {
    cpu: '100m',
    probes: { livenessProbe: probe('127.0.0.1', '/livez', 10259, 8), readinessProbe: { ...probe('127.0.0.1', '/readyz', 10259, 3), periodSeconds: 1 }, startupProbe: probe('127.0.0.1', '/livez', 10259, 24) },
  });
}
