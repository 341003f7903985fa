// The node agent's key material: a key pair with a PKCS#10 request for a node identity (as the
// kubelet's certificate manager makes for its client and serving certificates), a self-signed
// serving certificate for the time before the serving CSR is signed, and whether a certificate
// can still be used (to tell whether stored credentials can be).
import { webcrypto, X509Certificate } from 'node:crypto';
import { isIP } from 'node:net';
import { createCertificateRequest } from '../../common/pki.js';
import { x509 } from '../../common/x509.js';

const EC = { name: 'ECDSA', namedCurve: 'P-256' } as const;
const SIGN = { name: 'ECDSA', hash: 'SHA-256' } as const;

function toPem(der: ArrayBuffer, label: string): string {
  const base64 = Buffer.from(der).toString('base64').replace(/(.{64})/g, '$1\n');
  return `-----BEGIN ${label}-----\n${base64.trimEnd()}\n-----END ${label}-----\n`;
}

async function newKeys(): Promise<webcrypto.CryptoKeyPair> {
  return webcrypto.subtle.generateKey(EC, true, ['sign', 'verify']) as Promise<webcrypto.CryptoKeyPair>;
}

function subjectAltNames(hosts: string[]): x509.Extension[] {
  if (hosts.length === 0) return [];
  return [new x509.SubjectAlternativeNameExtension(hosts.map((h) => (isIP(h) ? { type: 'ip' as const, value: h } : { type: 'dns' as const, value: h })))];
}

export interface CertificateRequest {
  /** PEM "CERTIFICATE REQUEST". */
  csrPem: string;
  /** PEM PKCS#8 private key. */
  keyPem: string;
}

/** A key and a request for `CN=system:node:<name>, O=system:nodes`, with SANs for a serving certificate. */
export async function nodeCertificateRequest(nodeName: string, hosts: string[] = []): Promise<CertificateRequest> {
  const { keyPem, requestPem } = await createCertificateRequest({ commonName: `system:node:${nodeName}`, organizations: ['system:nodes'] }, hosts);
  return { csrPem: requestPem, keyPem };
}

/** A self-signed serving certificate for `hosts` (the kubelet's fallback when it has no signed one). */
export async function selfSignedServing(commonName: string, hosts: string[]): Promise<{ certPem: string; keyPem: string }> {
  const keys = await newKeys();
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    name: `CN=${commonName}`,
    keys,
    signingAlgorithm: SIGN,
    notBefore: new Date(Date.now() - 60_000),
    notAfter: new Date(Date.now() + 365 * 86_400_000),
    extensions: [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
      new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth]),
      ...subjectAltNames(hosts),
    ],
  });
  return { certPem: `${cert.toString('pem')}\n`, keyPem: toPem(await webcrypto.subtle.exportKey('pkcs8', keys.privateKey), 'PRIVATE KEY') };
}

/** Whether a PEM certificate is for `commonName` and valid for at least `marginMs` more. */
export function certificateUsable(certPem: string, commonName: string, marginMs = 60_000): boolean {
  try {
    const cert = new X509Certificate(certPem);
    const cn = /(?:^|\n)CN=([^\n]*)/.exec(cert.subject)?.[1];
    return cn === commonName && Date.parse(cert.validTo) - marginMs > Date.now() && Date.parse(cert.validFrom) <= Date.now() + 60_000;
  } catch {
    return false;
  }
}
