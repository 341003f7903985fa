// What the server needs to be reached securely, kept in `<data dir>/pki`: the CA, the serving
// certificate, the admin token, the admin kubeconfig that carries them to clients, the server's
// own client certificate towards kubelets (kube's --kubelet-client-certificate), and the
// front-proxy CA with the client certificate the aggregator presents to extension API servers
// (kube's --requestheader-client-ca-file and --proxy-client-cert-file).
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import YAML from 'yaml';
import { ensurePrivateFile, tighten } from '../common/private-files.js';
import { createCA, issueClientCert, issueServingCert, loadOrCreate, type KeyPair } from '../common/pki.js';

export interface ServingMaterial {
  caPem: string;
  keyPem: string;
  certPem: string;
  adminToken: string;
  /** CN kube-apiserver-kubelet-client, O system:masters: what pods/log presents to kubelets. */
  kubeletClientCert: KeyPair;
  /** The front-proxy CA (its certificate only): extension API servers trust request headers from its clients. */
  frontProxyCaPem: string;
  /** CN front-proxy-client, signed by the front-proxy CA: what the aggregator presents with X-Remote-User/Group. */
  proxyClientCert: KeyPair;
}

/** The name extension API servers allow to send the front-proxy headers (--requestheader-allowed-names). */
export const PROXY_CLIENT_NAME = 'front-proxy-client';

/** The cluster CA in `<data dir>/pki` (created at first start): it serves, and signs what the CSR signer issues. */
export function loadClusterCA(dataDir: string): Promise<KeyPair> {
  return loadOrCreate(join(dataDir, 'pki'), 'ca', () => createCA('bosun-ca'));
}

export async function loadServingMaterial(dataDir: string, host: string, extraNames: string[] = []): Promise<ServingMaterial> {
  const pkiDir = join(dataDir, 'pki');
  const ca = await loadClusterCA(dataDir);
  const serving = await loadOrCreate(pkiDir, 'apiserver', () => issueServingCert(ca, 'bosun-apiserver', ['127.0.0.1', 'localhost', '::1', 'kubernetes', 'kubernetes.default', 'kubernetes.default.svc', host, ...extraNames]));
  const tokenPath = join(pkiDir, 'admin.token');
  if (!existsSync(tokenPath)) writeFileSync(tokenPath, randomBytes(32).toString('base64url') + '\n', { mode: 0o600 });
  else tighten(tokenPath, 'admin token');
  const kubeletClientCert = await loadOrCreate(pkiDir, 'apiserver-kubelet-client', () => issueClientCert(ca, { commonName: 'kube-apiserver-kubelet-client', organizations: ['system:masters'] }));
  const frontProxyCa = await loadOrCreate(pkiDir, 'front-proxy-ca', () => createCA('bosun-front-proxy-ca'));
  const proxyClientCert = await loadOrCreate(pkiDir, 'front-proxy-client', () => issueClientCert(frontProxyCa, { commonName: PROXY_CLIENT_NAME }));
  return { caPem: ca.certPem, keyPem: serving.keyPem, certPem: serving.certPem, adminToken: readFileSync(tokenPath, 'utf8').trim(), kubeletClientCert, frontProxyCaPem: frontProxyCa.certPem, proxyClientCert };
}

export function writeKubeconfig(path: string, server: string, caPem: string, token: string): void {
  const kubeconfig = {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'bosun', cluster: { server, 'certificate-authority-data': Buffer.from(caPem).toString('base64') } }],
    users: [{ name: 'admin', user: { token } }],
    contexts: [{ name: 'admin@bosun', context: { cluster: 'bosun', user: 'admin', namespace: 'default' } }],
    'current-context': 'admin@bosun',
    preferences: {},
  };
  // The admin token is in it: 0600 before the first byte, an older one tightened.
  ensurePrivateFile(path, 'kubeconfig');
  writeFileSync(path, YAML.stringify(kubeconfig));
}
