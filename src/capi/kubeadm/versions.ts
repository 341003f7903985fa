// The Kubernetes versions bosun can install on a workload cluster's machines, each with the
// versions of what kubeadm installs beside it (its constants.go: SupportedEtcdVersion, CoreDNS).
// bosun's own binaries play every version (image `bosun.local/<component>:<tag>` runs
// `bosun <component>`); the list says which versions a Machine may ask for, so that an unknown one
// is refused with a clear condition instead of a machine that never comes up.

export interface KubernetesVersion {
  /** `v1.33.1`, as KubeadmControlPlane.spec.version and Machine.spec.version write it. */
  version: string;
  /** The etcd image tag kubeadm pairs with it (`3.5.21-0`). */
  etcd: string;
  /** The CoreDNS image tag kubeadm pairs with it. */
  coreDNS: string;
}

/** Oldest first: a control plane rolls from one to the next. */
export const KUBERNETES_VERSIONS: readonly KubernetesVersion[] = [
  { version: 'v1.32.5', etcd: '3.5.16-0', coreDNS: 'v1.11.3' },
  { version: 'v1.33.1', etcd: '3.5.21-0', coreDNS: 'v1.12.0' },
];

/** The registry of bosun's images: the node agent runs `bosun.local/<x>:<tag>` as `bosun <x>`. */
export const IMAGE_REPOSITORY = 'bosun.local';

/** The newest version: the default of `bosun cluster generate`. */
export const LATEST_KUBERNETES_VERSION = KUBERNETES_VERSIONS[KUBERNETES_VERSIONS.length - 1].version;

/** The version as listed, also when written without the leading `v`; undefined when bosun cannot install it. */
export function findKubernetesVersion(version: string | undefined): KubernetesVersion | undefined {
  if (!version) return undefined;
  const wanted = version.startsWith('v') ? version : `v${version}`;
  return KUBERNETES_VERSIONS.find((v) => v.version === wanted);
}

/** Why a version cannot be installed, for a condition's message or a CLI error. */
export function unknownVersionMessage(version: string | undefined): string {
  const known = KUBERNETES_VERSIONS.map((v) => v.version).join(', ');
  return version
    ? `Kubernetes version ${JSON.stringify(version)} cannot be installed by bosun; supported versions: ${known} (bosun cluster versions)`
    : `no Kubernetes version is set; supported versions: ${known}`;
}
