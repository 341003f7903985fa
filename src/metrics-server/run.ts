// Wiring of `bosun metrics-server`: the kubelet requests' credentials (this component's kubeconfig
// identity: its service-account token in a pod) and TLS (the cluster CA that signs kubelet serving
// certificates, another CA, or --kubelet-insecure-tls as upstream offers), and a serving
// certificate (given, or self-signed at start as metrics-server does). The request-header
// authentication is read by kube/front-proxy.ts, which every aggregated API server shares.
import { readFileSync } from 'node:fs';
import type { RequestOptions } from 'node:https';
import type { KubeConfigLike } from '../kube/kubeconfig.js';
import { createCA, issueServingCert, type KeyPair } from '../common/pki.js';

/** The options of a kubelet request: this component's credentials, and the kubelets' CA or none. */
export function kubeletRequestOptions(kc: KubeConfigLike, tls: { insecure: boolean; caPem?: string }): () => Promise<RequestOptions> {
  return async () => {
    const options: RequestOptions = {};
    await kc.applyToHTTPSOptions(options);
    if (tls.insecure) return { ...options, ca: undefined, rejectUnauthorized: false };
    return tls.caPem ? { ...options, ca: tls.caPem, rejectUnauthorized: true } : { ...options, rejectUnauthorized: true };
  };
}

/**
 * The serving certificate: from files, or self-signed for `hosts` (then the APIService skips
 * verification). `server` names the self-signed one (the package server uses it too).
 */
export async function servingCertificate(files: { cert?: string; key?: string }, hosts: string[], server = 'metrics-server'): Promise<KeyPair> {
  if (files.cert || files.key) {
    if (!files.cert || !files.key) throw new Error('--tls-cert-file and --tls-private-key-file go together');
    return { certPem: readFileSync(files.cert, 'utf8'), keyPem: readFileSync(files.key, 'utf8') };
  }
  return issueServingCert(await createCA(`${server}-ca@${Math.floor(Date.now() / 1000)}`), server, hosts);
}
