// Wiring of `bosun metrics-server`: the request-header authentication read from
// kube-system/extension-apiserver-authentication, the kubelet requests' credentials (this
// component's kubeconfig identity: its service-account token in a pod) and TLS (the cluster CA
// that signs kubelet serving certificates, another CA, or --kubelet-insecure-tls as upstream
// offers), and a serving certificate (given, or self-signed at start as metrics-server does).
import { readFileSync } from 'node:fs';
import type { RequestOptions } from 'node:https';
import type { KubeConfigLike } from '../kube/kubeconfig.js';
import type * as api from '../api/index.js';
import { createCA, issueServingCert, type KeyPair } from '../common/pki.js';
import { isNotFound, resources, type KubeClient } from '../kube/index.js';
import type { RequestHeaderAuth } from './server.js';

const EXTENSION_AUTHENTICATION = { namespace: 'kube-system', name: 'extension-apiserver-authentication' };

/** The request-header settings the API server publishes; undefined when it publishes none. */
export async function readRequestHeaderAuth(client: KubeClient): Promise<RequestHeaderAuth | undefined> {
  let cm: api.ConfigMap | undefined;
  try {
    cm = await client.read(resources.configMaps, EXTENSION_AUTHENTICATION.name, EXTENSION_AUTHENTICATION.namespace);
  } catch (e) {
    if (isNotFound(e)) return undefined;
    throw e;
  }
  const data = cm?.data ?? {};
  const caPem = data['requestheader-client-ca-file'];
  if (!caPem) return undefined;
  const list = (key: string, fallback: string[]) => {
    const value = data[key];
    if (!value) return fallback;
    const parsed: unknown = JSON.parse(value);
    if (!Array.isArray(parsed) || !parsed.every((v) => typeof v === 'string')) throw new Error(`${EXTENSION_AUTHENTICATION.name}: ${key} is not a list of strings`);
    return parsed;
  };
  return {
    caPem,
    allowedNames: list('requestheader-allowed-names', []),
    usernameHeaders: list('requestheader-username-headers', ['X-Remote-User']),
    groupHeaders: list('requestheader-group-headers', ['X-Remote-Group']),
  };
}

/** The options of a kubelet request: this component's credentials, and the kubelets' CA or none. */
export function kubeletRequestOptions(kc: KubeConfigLike, tls: { insecure: boolean; caPem?: string }): () => Promise<RequestOptions> {
  return async () => {
    const options: RequestOptions = {};
    await kc.applyToHTTPSOptions(options);
    if (tls.insecure) return { ...options, ca: undefined, rejectUnauthorized: false };
    return tls.caPem ? { ...options, ca: tls.caPem, rejectUnauthorized: true } : { ...options, rejectUnauthorized: true };
  };
}

/** The serving certificate: from files, or self-signed for `hosts` (then the APIService skips verification). */
export async function servingCertificate(files: { cert?: string; key?: string }, hosts: string[]): Promise<KeyPair> {
  if (files.cert || files.key) {
    if (!files.cert || !files.key) throw new Error('--tls-cert-file and --tls-private-key-file go together');
    return { certPem: readFileSync(files.cert, 'utf8'), keyPem: readFileSync(files.key, 'utf8') };
  }
  return issueServingCert(await createCA(`metrics-server-ca@${Math.floor(Date.now() / 1000)}`), 'metrics-server', hosts);
}
