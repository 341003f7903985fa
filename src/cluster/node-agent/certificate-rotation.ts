// Client certificate rotation, as the kubelet's certificate manager does it (--rotate-certificates,
// client-go's util/certificate): once a jittered 70–90% of the current certificate's lifetime has
// passed, a new key and a CertificateSigningRequest for `system:node:<name>` sent with the current
// credentials (the node renews itself; the machine approver approves a renewal requested by the
// node it names), then the key, certificate and kubeconfig written where the bootstrap wrote them
// and the running agent's kubeconfig reloaded from them, so that every new connection presents
// the new certificate — pods and watches carry on. Credentials without a certificate (a token)
// have nothing to rotate. A failed attempt is retried after a tenth of the time left, at least 5 s.
import type * as k8s from '@kubernetes/client-node';
import { X509Certificate } from 'node:crypto';
import type { Logger } from '../../common/log.js';
import { sleep } from '../../common/sleep.js';
import type { KubeClient } from '../../kube/index.js';
import { nodeCertificateRequest } from './certificates.js';
import { CLIENT_SIGNER, requestCertificate, writeClientCredentials } from './credentials.js';

/** When to renew a certificate valid from `notBefore` to `notAfter` (ms): 70–90% of its lifetime, by `random` in [0, 1). Pure. */
export function rotationDeadline(notBefore: number, notAfter: number, random: number): number {
  return notBefore + (notAfter - notBefore) * (0.7 + 0.2 * random);
}

export interface RotationOptions {
  root: string;
  nodeName: string;
  /** The node kubeconfig on the host, which `kubeconfig` was loaded from. */
  kubeconfigFile: string;
  kubeconfig: k8s.KubeConfig;
  client: KubeClient;
  signal: AbortSignal;
  log: Logger;
  pollMs?: number;
  /** Where in the 70–90% window the deadline falls, in [0, 1) (default random, as the kubelet's jitter). */
  jitter?: () => number;
}

function currentCertificate(kc: k8s.KubeConfig): X509Certificate | undefined {
  const data = kc.getCurrentUser()?.certData;
  return data ? new X509Certificate(Buffer.from(data, 'base64')) : undefined;
}

/** Renews the client certificate whenever its deadline comes, until `signal` aborts. */
export async function rotateClientCertificate(o: RotationOptions): Promise<void> {
  while (!o.signal.aborted) {
    const cert = currentCertificate(o.kubeconfig);
    if (!cert) return;
    const notAfter = Date.parse(cert.validTo);
    const deadline = rotationDeadline(Date.parse(cert.validFrom), notAfter, (o.jitter ?? Math.random)());
    o.log.info({ expires: cert.validTo, renewIn: `${Math.max(0, Math.round((deadline - Date.now()) / 1000))}s` }, 'client certificate rotation scheduled');
    await sleep(Math.max(0, deadline - Date.now()), o.signal);
    while (!o.signal.aborted) {
      try {
        const request = await nodeCertificateRequest(o.nodeName);
        const certPem = await requestCertificate(o.client, { csrPem: request.csrPem, signerName: CLIENT_SIGNER, usages: ['digital signature', 'client auth'] }, o.signal, o.log, o.pollMs);
        writeClientCredentials(o.root, o.kubeconfigFile, o.kubeconfig.getCurrentCluster()!, certPem, request.keyPem);
        o.kubeconfig.loadFromFile(o.kubeconfigFile);
        const renewed = currentCertificate(o.kubeconfig)!;
        o.log.info({ expires: renewed.validTo }, 'client certificate rotated');
        break;
      } catch (e) {
        if (o.signal.aborted) return;
        const retryMs = Math.max(5000, (notAfter - Date.now()) / 10);
        o.log.warn({ err: (e as Error).message, retryIn: `${Math.round(retryMs / 1000)}s` }, 'client certificate rotation failed');
        await sleep(retryMs, o.signal);
      }
    }
  }
}
