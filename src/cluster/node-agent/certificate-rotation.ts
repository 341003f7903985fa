// Certificate rotation, as the kubelet's certificate manager does it (--rotate-certificates,
// client-go's util/certificate): once a jittered 70–90% of the current certificate's lifetime has
// passed, a new key and a CertificateSigningRequest for `system:node:<name>` sent with the current
// credentials (the node renews itself; the machine approver approves a renewal requested by the
// node it names), then the key, certificate and kubeconfig written where the bootstrap wrote them
// and the running agent's kubeconfig reloaded from them, so that every new connection presents
// the new certificate — pods and watches carry on. Credentials without a certificate (a token)
// have nothing to rotate. A failed attempt is retried after a tenth of the time left, at least 5 s.
// The serving certificate on :10250 (serverTLSBootstrap) is renewed the same way with
// kubelet-serving CSRs, and one from an earlier boot is reused while still valid.
import type { KubeConfig } from '../../kube/kubeconfig.js';
import { X509Certificate } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from '../../common/log.js';
import { sleep } from '../../common/sleep.js';
import type { KubeClient } from '../../kube/index.js';
import { certificateUsable, nodeCertificateRequest } from './certificates.js';
import { CLIENT_SIGNER, requestCertificate, SERVING_CERT_PATH, SERVING_SIGNER, writeClientCredentials, writePrivate } from './credentials.js';

/** When to renew a certificate valid from `notBefore` to `notAfter` (ms): 70–90% of its lifetime, by `random` in [0, 1). Pure. */
export function rotationDeadline(notBefore: number, notAfter: number, random: number): number {
  return notBefore + (notAfter - notBefore) * (0.7 + 0.2 * random);
}

export interface RotationOptions {
  root: string;
  nodeName: string;
  /** The node kubeconfig on the host, which `kubeconfig` was loaded from. */
  kubeconfigFile: string;
  kubeconfig: KubeConfig;
  client: KubeClient;
  signal: AbortSignal;
  log: Logger;
  pollMs?: number;
  /** Where in the 70–90% window the deadline falls, in [0, 1) (default random, as the kubelet's jitter). */
  jitter?: () => number;
}

function currentCertificate(kc: KubeConfig): X509Certificate | undefined {
  const data = kc.getCurrentUser()?.certData;
  return data ? new X509Certificate(Buffer.from(data, 'base64')) : undefined;
}

/**
 * Renews a certificate whenever its deadline comes, until `signal` aborts: `current()` is the one
 * in use (none: renewed at once), `renew()` gets a new one and puts it in use. A failed attempt is
 * retried after a tenth of the time left, at least 5 s.
 */
async function keepRenewed(o: { what: 'client' | 'serving'; current: () => X509Certificate | undefined; renew: () => Promise<X509Certificate>; signal: AbortSignal; log: Logger; jitter?: () => number }): Promise<void> {
  while (!o.signal.aborted) {
    const cert = o.current();
    const notAfter = cert ? Date.parse(cert.validTo) : Date.now();
    if (cert) {
      const deadline = rotationDeadline(Date.parse(cert.validFrom), notAfter, (o.jitter ?? Math.random)());
      o.log.info({ expires: cert.validTo, renewIn: `${Math.max(0, Math.round((deadline - Date.now()) / 1000))}s` }, `${o.what} certificate rotation scheduled`);
      await sleep(Math.max(0, deadline - Date.now()), o.signal);
    }
    while (!o.signal.aborted) {
      try {
        const renewed = await o.renew();
        o.log.info({ expires: renewed.validTo }, cert ? `${o.what} certificate rotated` : `${o.what} certificate issued`);
        break;
      } catch (e) {
        if (o.signal.aborted) return;
        const retryMs = Math.max(5000, (notAfter - Date.now()) / 10);
        o.log.warn({ err: (e as Error).message, retryIn: `${Math.round(retryMs / 1000)}s` }, `${o.what} certificate ${cert ? 'rotation' : 'request'} failed`);
        await sleep(retryMs, o.signal);
      }
    }
  }
}

/** Renews the client certificate whenever its deadline comes, until `signal` aborts. */
export async function rotateClientCertificate(o: RotationOptions): Promise<void> {
  if (!currentCertificate(o.kubeconfig)) return;
  await keepRenewed({
    what: 'client', current: () => currentCertificate(o.kubeconfig), signal: o.signal, log: o.log, jitter: o.jitter,
    renew: async () => {
      const request = await nodeCertificateRequest(o.nodeName);
      const certPem = await requestCertificate(o.client, { csrPem: request.csrPem, signerName: CLIENT_SIGNER, usages: ['digital signature', 'client auth'] }, o.signal, o.log, o.pollMs);
      writeClientCredentials(o.root, o.kubeconfigFile, o.kubeconfig.getCurrentCluster()!, certPem, request.keyPem);
      o.kubeconfig.loadFromFile(o.kubeconfigFile);
      return currentCertificate(o.kubeconfig)!;
    },
  });
}

export interface ServingRotationOptions extends Pick<RotationOptions, 'root' | 'nodeName' | 'client' | 'signal' | 'log' | 'pollMs' | 'jitter'> {
  /** The addresses and names the certificate is for. */
  hosts: string[];
  /** Puts a certificate and key in use on the node's HTTPS server. */
  install(certPem: string, keyPem: string): void;
}

/** The certificate and key of a combined PEM file (the kubelet's *-current.pem), when it holds a usable certificate for `commonName`. */
function readCombined(file: string, commonName: string): { certPem: string; keyPem: string } | undefined {
  if (!existsSync(file)) return undefined;
  const text = readFileSync(file, 'utf8');
  const end = text.indexOf(PEM_CERT_END);
  if (end < 0) return undefined;
  const certPem = `${text.slice(0, end + PEM_CERT_END.length)}\n`;
  const keyPem = text.slice(end + PEM_CERT_END.length).trim();
  return keyPem && certificateUsable(certPem, commonName) ? { certPem, keyPem: `${keyPem}\n` } : undefined;
}

const PEM_CERT_END = '-----END CERTIFICATE-----';

/**
 * The serving certificate (serverTLSBootstrap with rotation, as the kubelet's serving certificate
 * manager): the one of an earlier boot, while still usable, serves at once; otherwise, and then at
 * 70–90% of each one's lifetime, a kubelet-serving CSR, its certificate and key written to
 * SERVING_CERT_PATH and put in use — new connections get it, open ones carry on.
 */
export async function rotateServingCertificate(o: ServingRotationOptions): Promise<void> {
  const file = join(o.root, SERVING_CERT_PATH);
  const kept = readCombined(file, `system:node:${o.nodeName}`);
  let current = kept && new X509Certificate(kept.certPem);
  if (kept) o.install(kept.certPem, kept.keyPem);
  await keepRenewed({
    what: 'serving', current: () => current, signal: o.signal, log: o.log, jitter: o.jitter,
    renew: async () => {
      const request = await nodeCertificateRequest(o.nodeName, o.hosts);
      const certPem = await requestCertificate(o.client, { csrPem: request.csrPem, signerName: SERVING_SIGNER, usages: ['digital signature', 'server auth'] }, o.signal, o.log, o.pollMs);
      writePrivate(file, `${certPem.trimEnd()}\n${request.keyPem}`);
      o.install(certPem, request.keyPem);
      current = new X509Certificate(certPem);
      return current;
    },
  });
}
