// A workload cluster's certificates and the Secrets Cluster API keeps them in (util/secret): the
// cluster CA, the etcd CA, the front-proxy CA and the service-account key pair as
// `<cluster>-ca`, `-etcd`, `-proxy`, `-sa` (keys `tls.crt`, `tls.key`; for `-sa` the public and
// the private key), and the admin kubeconfig `<cluster>-kubeconfig` (key `value`), every one of
// type `cluster.x-k8s.io/secret` with the label `cluster.x-k8s.io/cluster-name`. The pure part
// builds them; lookupOrGenerateCertificates reads what exists and creates what is missing, as
// Cluster API's LookupOrGenerate does, for the bootstrap provider (init) and the control plane.
import { isIP } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import { stringify } from 'yaml';
import type * as api from '../../api/index.js';
import { type KeyPair, type Subject, createCA, createKeyPair, issueCertificate, issueClientCert } from '../../common/pki.js';
import { nthAddress } from '../../common/ipv4.js';
import { type KubeClient, type OwnerReference, isAlreadyExists, resources } from '../../kube/index.js';
import { LABEL } from '../api.js';
import { CLUSTER_SECRET_TYPE } from './api.js';

/** What each certificate Secret is for, its CA's common name (kubeadm's) and its path under /etc/kubernetes/pki. */
export const CLUSTER_CERTIFICATES = {
  ca: { suffix: 'ca', commonName: 'kubernetes', file: 'ca' },
  etcd: { suffix: 'etcd', commonName: 'etcd-ca', file: 'etcd/ca' },
  proxy: { suffix: 'proxy', commonName: 'front-proxy-ca', file: 'front-proxy-ca' },
  sa: { suffix: 'sa', commonName: undefined, file: 'sa' },
} as const;

export type CertificatePurpose = keyof typeof CLUSTER_CERTIFICATES;
export const CERTIFICATE_PURPOSES = Object.keys(CLUSTER_CERTIFICATES) as CertificatePurpose[];

/** A pair as a Secret holds it: `tls.crt` is the certificate (for `sa`, the public key), `tls.key` the private key. */
export type CertificateMaterial = KeyPair;

export type ClusterCertificates = Record<CertificatePurpose, CertificateMaterial>;

/** `<cluster>-<purpose>`, Cluster API's secret.Name. */
export const clusterSecretName = (cluster: string, purpose: CertificatePurpose | 'kubeconfig') => `${cluster}-${purpose === 'kubeconfig' ? 'kubeconfig' : CLUSTER_CERTIFICATES[purpose].suffix}`;

/** The admin kubeconfig's names (Cluster API's util/kubeconfig). */
export const kubeconfigNames = (cluster: string) => ({ user: `${cluster}-admin`, context: `${cluster}-admin@${cluster}` });

/** The subject of the admin kubeconfig's client certificate. */
export const ADMIN_SUBJECT: Subject = { commonName: 'kubernetes-admin', organizations: ['system:masters'] };

/** A new CA or key pair for one purpose. */
export async function generateCertificate(purpose: CertificatePurpose): Promise<CertificateMaterial> {
  const commonName = CLUSTER_CERTIFICATES[purpose].commonName;
  if (commonName) return createCA(commonName);
  const { keyPem, publicKeyPem } = await createKeyPair();
  return { certPem: publicKeyPem, keyPem };
}

const b64 = (text: string) => Buffer.from(text).toString('base64');
const unb64 = (value: string | undefined) => (value === undefined ? undefined : Buffer.from(value, 'base64').toString('utf8'));

interface ClusterKey {
  name: string;
  namespace: string;
}

function clusterSecret(cluster: ClusterKey, name: string, data: Record<string, string>, owner?: OwnerReference): api.Secret {
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    type: CLUSTER_SECRET_TYPE,
    metadata: { name, namespace: cluster.namespace, labels: { [LABEL.clusterName]: cluster.name }, ...(owner ? { ownerReferences: [owner] } : {}) },
    data: Object.fromEntries(Object.entries(data).map(([k, v]) => [k, b64(v)])),
  };
}

/** The Secret of one certificate. */
export function certificateSecret(cluster: ClusterKey, purpose: CertificatePurpose, material: CertificateMaterial, owner?: OwnerReference): api.Secret {
  return clusterSecret(cluster, clusterSecretName(cluster.name, purpose), { 'tls.crt': material.certPem, 'tls.key': material.keyPem }, owner);
}

/** The certificate a Secret holds, or undefined when it lacks either key. */
export function certificateFromSecret(secret: api.Secret): CertificateMaterial | undefined {
  const certPem = unb64(secret.data?.['tls.crt']);
  const keyPem = unb64(secret.data?.['tls.key']);
  return certPem && keyPem ? { certPem, keyPem } : undefined;
}

/** A kubeconfig with one cluster, one user (a client certificate or a token) and one context, as YAML. */
export function kubeconfigYaml(o: { cluster: string; server: string; caPem: string; user: string; context?: string; clientCert?: KeyPair; token?: string }): string {
  const context = o.context ?? `${o.user}@${o.cluster}`;
  const user = o.clientCert ? { 'client-certificate-data': b64(o.clientCert.certPem), 'client-key-data': b64(o.clientCert.keyPem) } : { token: o.token };
  return stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: o.cluster, cluster: { server: o.server, 'certificate-authority-data': b64(o.caPem) } }],
    contexts: [{ name: context, context: { cluster: o.cluster, user: o.user } }],
    'current-context': context,
    preferences: {},
    users: [{ name: o.user, user }],
  }, { lineWidth: 0 });
}

/** The admin kubeconfig of a cluster whose API is at `server` (`https://host:port`), with a new one-year client certificate. */
export async function adminKubeconfig(cluster: string, server: string, ca: KeyPair): Promise<string> {
  const { user, context } = kubeconfigNames(cluster);
  return kubeconfigYaml({ cluster, server, caPem: ca.certPem, user, context, clientCert: await issueClientCert(ca, ADMIN_SUBJECT) });
}

/** `<cluster>-kubeconfig`: the admin kubeconfig under `value`. */
export function kubeconfigSecret(cluster: ClusterKey, kubeconfig: string, owner?: OwnerReference): api.Secret {
  return clusterSecret(cluster, clusterSecretName(cluster.name, 'kubeconfig'), { value: kubeconfig }, owner);
}

/** The API server URL of a control-plane endpoint. */
export const endpointUrl = (endpoint: { host?: string; port?: number }) => `https://${endpoint.host?.includes(':') ? `[${endpoint.host}]` : endpoint.host}:${endpoint.port ?? 6443}`;

/**
 * The cluster's certificates: each read from its Secret, the missing ones generated and created
 * with `owner` as their controller (a create that loses a race reads the winner's). A Secret
 * that exists without both keys is an error naming it: it is never overwritten.
 */
export async function lookupOrGenerateCertificates(client: KubeClient, cluster: ClusterKey, owner?: OwnerReference): Promise<ClusterCertificates> {
  const out: Partial<ClusterCertificates> = {};
  for (const purpose of CERTIFICATE_PURPOSES) {
    const name = clusterSecretName(cluster.name, purpose);
    let secret = await client.read(resources.secrets, name, cluster.namespace);
    if (!secret) {
      try {
        secret = await client.create(resources.secrets, certificateSecret(cluster, purpose, await generateCertificate(purpose), owner));
      } catch (e) {
        if (!isAlreadyExists(e)) throw e;
        secret = await client.get(resources.secrets, name, cluster.namespace);
      }
    }
    const material = certificateFromSecret(secret);
    if (!material) throw new Error(`Secret ${cluster.namespace}/${name} lacks tls.crt or tls.key`);
    out[purpose] = material;
  }
  return out as ClusterCertificates;
}

/** The cluster's certificates if every Secret exists (a joining machine waits for them); else the missing names. */
export async function lookupCertificates(client: KubeClient, cluster: ClusterKey): Promise<{ certificates?: ClusterCertificates; missing: string[] }> {
  const out: Partial<ClusterCertificates> = {};
  const missing: string[] = [];
  for (const purpose of CERTIFICATE_PURPOSES) {
    const name = clusterSecretName(cluster.name, purpose);
    const secret = await client.read(resources.secrets, name, cluster.namespace);
    const material = secret && certificateFromSecret(secret);
    if (material) out[purpose] = material;
    else missing.push(name);
  }
  return missing.length ? { missing } : { certificates: out as ClusterCertificates, missing };
}

/** What a control-plane machine's leaf certificates are issued for (kubeadm's certs phase). */
export interface LeafCertificateInput {
  /** The node's name and address: SANs of the API server's and etcd's serving certificates. */
  nodeName: string;
  nodeIP: string;
  serviceCidr: string;
  serviceDomain: string;
  /** The control-plane endpoint's host (the load balancer). */
  endpointHost?: string;
  /** ClusterConfiguration apiServer.certSANs, etcd.local.serverCertSANs / peerCertSANs. */
  apiServerCertSANs?: string[];
  etcdServerCertSANs?: string[];
  etcdPeerCertSANs?: string[];
  /** ClusterConfiguration certificateValidityPeriodDays: how long the leaf certificates are valid (kubeadm's default, a year). */
  days?: number;
}

/**
 * The leaf certificates `kubeadm init phase certs all` makes on a control-plane machine from the
 * CAs, by path relative to /etc/kubernetes/pki (`apiserver`, `etcd/server`, …; `.crt` and `.key`
 * each). The bootstrap data carries only the CAs (as Cluster API's does): these name the
 * machine's address, which is known only once it runs, so the machine makes them at first boot
 * — whatever runs its static pods calls this for the certificates missing on disk.
 */
export async function kubeadmLeafCertificates(cas: Pick<ClusterCertificates, 'ca' | 'etcd' | 'proxy'>, o: LeafCertificateInput): Promise<Record<string, KeyPair>> {
  const uniq = (xs: Array<string | undefined>) => [...new Set(xs.filter((x): x is string => Boolean(x)))];
  const apiServerHosts = uniq([
    o.nodeName, 'kubernetes', 'kubernetes.default', 'kubernetes.default.svc', `kubernetes.default.svc.${o.serviceDomain}`,
    nthAddress(o.serviceCidr, 1), o.nodeIP, o.endpointHost, ...(o.apiServerCertSANs ?? []),
  ]);
  const etcdHosts = (extra: string[] | undefined) => uniq([o.nodeName, 'localhost', o.nodeIP, '127.0.0.1', '::1', ...(extra ?? [])]);
  return {
    apiserver: await issueCertificate(cas.ca, { commonName: 'kube-apiserver' }, { server: true, hosts: apiServerHosts, days: o.days }),
    'apiserver-kubelet-client': await issueCertificate(cas.ca, { commonName: 'kube-apiserver-kubelet-client', organizations: ['system:masters'] }, { client: true, days: o.days }),
    'front-proxy-client': await issueCertificate(cas.proxy, { commonName: 'front-proxy-client' }, { client: true, days: o.days }),
    'etcd/server': await issueCertificate(cas.etcd, { commonName: o.nodeName }, { server: true, client: true, hosts: etcdHosts(o.etcdServerCertSANs), days: o.days }),
    'etcd/peer': await issueCertificate(cas.etcd, { commonName: o.nodeName }, { server: true, client: true, hosts: etcdHosts(o.etcdPeerCertSANs), days: o.days }),
    'etcd/healthcheck-client': await issueCertificate(cas.etcd, { commonName: 'kube-etcd-healthcheck-client' }, { client: true, days: o.days }),
    'apiserver-etcd-client': await issueCertificate(cas.etcd, { commonName: 'kube-apiserver-etcd-client' }, { client: true, days: o.days }),
  };
}

/**
 * When the certificate an API server serves expires, read from a TLS handshake with it (trusting
 * the cluster CA, the address checked against its names): what Cluster API's KubeadmControlPlane
 * reads of each control-plane machine to roll out machines whose certificates run out.
 */
export function servingCertificateExpiry(host: string, port: number, caPem: string, timeoutMs = 3_000): Promise<Date> {
  return new Promise((resolve, reject) => {
    const socket = tlsConnect({ host, port, ca: caPem, ...(isIP(host) ? {} : { servername: host }) }, () => {
      const notAfter = socket.getPeerCertificate().valid_to;
      socket.destroy();
      const at = Date.parse(notAfter);
      if (Number.isFinite(at)) resolve(new Date(at));
      else reject(new Error(`the API server at ${host}:${port} served a certificate without an expiry date`));
    });
    socket.setTimeout(timeoutMs, () => socket.destroy(new Error(`no TLS handshake with ${host}:${port} within ${timeoutMs} ms`)));
    socket.on('error', reject);
  });
}
