// The kubelet's TLS bootstrap: the agent's own credentials from the bootstrap kubeconfig Ignition
// wrote. As the kubelet does it (pkg/kubelet/certificate/bootstrap): when the kubeconfig named by
// --kubeconfig exists and its client certificate is still good (or it holds other credentials), it
// is used as it is; otherwise a key and a CertificateSigningRequest for `system:node:<name>`
// (signer kubernetes.io/kube-apiserver-client-kubelet) are sent with the bootstrap credentials,
// the agent waits for the signed certificate, and writes the key and certificate under
// /var/lib/kubelet/pki and a kubeconfig using them at the --kubeconfig path in the machine root.
// The serving certificate's CSR (kubernetes.io/kubelet-serving) goes through requestCertificate too,
// and so does the client certificate's renewal (certificate-rotation.ts).
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { Logger } from '../../common/log.js';
import { sleep } from '../../common/sleep.js';
import type * as api from '../../api/index.js';
import { Informer, KubeClient, KubeConfig, loadKubeConfig } from '../../kube/index.js';
import { certificateUsable, nodeCertificateRequest } from './certificates.js';
import { CSRS } from './resources.js';

export const CLIENT_SIGNER = 'kubernetes.io/kube-apiserver-client-kubelet';
export const SERVING_SIGNER = 'kubernetes.io/kubelet-serving';
export const CLIENT_CERT_PATH = '/var/lib/kubelet/pki/kubelet-client-current.pem';
export const SERVING_CERT_PATH = '/var/lib/kubelet/pki/kubelet-server-current.pem';

/** Whether a kubeconfig file can be used as the node `nodeName`'s credentials. */
export function kubeconfigUsable(file: string, nodeName: string): boolean {
  if (!existsSync(file)) return false;
  try {
    const kc = new KubeConfig();
    kc.loadFromFile(file);
    const user = kc.getCurrentUser();
    if (!kc.getCurrentCluster() || !user) return false;
    const certData = user.certData ? Buffer.from(user.certData, 'base64').toString('utf8') : user.certFile ? readFileSync(user.certFile, 'utf8') : undefined;
    if (certData) return certificateUsable(certData, `system:node:${nodeName}`);
    return Boolean(user.token || user.authProvider || user.exec || user.username);
  } catch {
    return false;
  }
}

export interface CertificateRequestSpec {
  csrPem: string;
  signerName: string;
  usages: string[];
}

/**
 * Sends a CSR and waits until it is signed (its PEM certificate) or denied/failed (an error). It
 * waits on a watch of this one request, as client-go's WaitForCertificate does, so the certificate
 * is taken as soon as the signer writes it; the request is also read every `pollMs`, which a watch
 * that cannot be opened (or misses an event) falls back on.
 */
export async function requestCertificate(client: KubeClient, spec: CertificateRequestSpec, signal: AbortSignal, log: Logger, pollMs = 1000): Promise<string> {
  const created = await client.create(CSRS, {
    apiVersion: 'certificates.k8s.io/v1',
    kind: 'CertificateSigningRequest',
    // No name: the API server makes one from generateName.
    metadata: { generateName: 'csr-' } as api.ObjectMeta,
    spec: { request: Buffer.from(spec.csrPem).toString('base64'), signerName: spec.signerName, usages: spec.usages },
  });
  const name = created.metadata.name;
  log.info({ csr: name, signer: spec.signerName }, 'certificate signing request sent; waiting for approval and signing');
  const watching = new AbortController();
  const stopWatching = () => watching.abort();
  signal.addEventListener('abort', stopWatching, { once: true });
  const informer = new Informer(client, CSRS, { fieldSelector: `metadata.name=${name}` });
  // Set by every event of the watch: one that came while the request was being read is not missed.
  let changed = false;
  let wake = () => undefined as void;
  informer.on(() => {
    changed = true;
    wake();
  });
  informer.start(watching.signal);
  try {
    for (;;) {
      changed = false;
      const csr = await client.get(CSRS, name);
      const refused = (csr.status?.conditions ?? []).find((c) => (c.type === 'Denied' || c.type === 'Failed') && c.status !== 'False');
      if (refused) throw new Error(`certificate signing request ${name} was ${refused.type.toLowerCase()}: ${refused.message ?? refused.reason ?? ''}`);
      if (csr.status?.certificate) return Buffer.from(csr.status.certificate, 'base64').toString('utf8');
      // The next change the watch brings, or the next read, whichever comes first.
      if (!changed) {
        await new Promise<void>((resolve) => {
          wake = resolve;
          sleep(pollMs, signal).then(resolve, resolve);
        });
      }
      signal.throwIfAborted();
    }
  } finally {
    signal.removeEventListener('abort', stopWatching);
    await informer.stop();
  }
}

export interface BootstrapOptions {
  root: string;
  nodeName: string;
  kubeconfigPath: string;
  bootstrapKubeconfigPath?: string;
  signal: AbortSignal;
  log: Logger;
  pollMs?: number;
}

/** The node's kubeconfig (host path), bootstrapping it through a CSR when there is none usable. */
export async function ensureClientCredentials(o: BootstrapOptions): Promise<string> {
  const target = join(o.root, o.kubeconfigPath);
  if (kubeconfigUsable(target, o.nodeName)) return target;
  if (!o.bootstrapKubeconfigPath) throw new Error(`${o.kubeconfigPath} holds no usable credentials and the kubelet unit names no --bootstrap-kubeconfig`);
  const bootstrapFile = join(o.root, o.bootstrapKubeconfigPath);
  if (!existsSync(bootstrapFile)) throw new Error(`the bootstrap kubeconfig ${o.bootstrapKubeconfigPath} is not in the machine root`);
  const bootstrap = loadKubeConfig(bootstrapFile);
  const request = await nodeCertificateRequest(o.nodeName);
  // ECDSA keys: "digital signature" and "client auth" (the kubelet adds "key encipherment" for RSA).
  const certPem = await requestCertificate(new KubeClient(bootstrap), { csrPem: request.csrPem, signerName: CLIENT_SIGNER, usages: ['digital signature', 'client auth'] }, o.signal, o.log, o.pollMs);
  writeClientCredentials(o.root, target, bootstrap.getCurrentCluster()!, certPem, request.keyPem);
  o.log.info({ kubeconfig: o.kubeconfigPath }, 'client certificate issued; kubeconfig written');
  return target;
}

/** Writes a signed client certificate with its key (kubelet-client-current.pem) and the kubeconfig at `target` that uses them. */
export function writeClientCredentials(root: string, target: string, cluster: { server: string; caData?: string; caFile?: string }, certPem: string, keyPem: string): void {
  writePrivate(join(root, CLIENT_CERT_PATH), `${certPem.trimEnd()}\n${keyPem}`);
  const caData = cluster.caData ?? (cluster.caFile ? Buffer.from(readFileSync(cluster.caFile)).toString('base64') : undefined);
  const kubeconfig = {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'default-cluster', cluster: { server: cluster.server, ...(caData ? { 'certificate-authority-data': caData } : {}) } }],
    users: [{ name: 'default-auth', user: { 'client-certificate-data': Buffer.from(certPem).toString('base64'), 'client-key-data': Buffer.from(keyPem).toString('base64') } }],
    contexts: [{ name: 'default-context', context: { cluster: 'default-cluster', user: 'default-auth', namespace: 'default' } }],
    'current-context': 'default-context',
  };
  writePrivate(target, JSON.stringify(kubeconfig, null, 2));
}

export function writePrivate(file: string, content: string): void {
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, content, { mode: 0o600 });
}
