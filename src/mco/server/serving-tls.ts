// The machine-config server's TLS identity: a serving certificate and key given as files, or one
// generated and signed by a CA (the cluster's CA given as cert+key files, or a CA generated here).
// Booting machines trust the CA through the pointer config's `security.tls.certificateAuthorities`.
// @peculiar/x509 is loaded (common/pki.ts) only when a certificate is made here, not by a server given its files.
import { createPrivateKey, webcrypto } from 'node:crypto';
import { isIP } from 'node:net';
import { x509Library } from '../../common/pki.js';

type CryptoKey = webcrypto.CryptoKey;
type CryptoKeyPair = webcrypto.CryptoKeyPair;
type SigningAlgorithm = { name: string; hash: string };

export interface ServingTls {
  cert: string;
  key: string;
  /** PEM of the CA that signed `cert` (what clients must trust). */
  ca: string;
}

const EC = { name: 'ECDSA', namedCurve: 'P-256' } as const;
const SIGN = { name: 'ECDSA', hash: 'SHA-256' } as const;

function pem(label: string, der: ArrayBuffer): string {
  const b64 = Buffer.from(der).toString('base64').replace(/.{64}/g, '$&\n').replace(/\n$/, '');
  return `-----BEGIN ${label}-----\n${b64}\n-----END ${label}-----\n`;
}

async function importSigningKey(keyPem: string): Promise<{ key: CryptoKey; alg: SigningAlgorithm }> {
  const ko = createPrivateKey(keyPem);
  const der = ko.export({ format: 'der', type: 'pkcs8' });
  if (ko.asymmetricKeyType === 'ec') {
    const curve = ko.asymmetricKeyDetails?.namedCurve === 'secp384r1' ? 'P-384' : 'P-256';
    return { key: await webcrypto.subtle.importKey('pkcs8', der, { name: 'ECDSA', namedCurve: curve }, false, ['sign']) as CryptoKey, alg: SIGN };
  }
  if (ko.asymmetricKeyType === 'rsa') {
    const alg = { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' };
    return { key: await webcrypto.subtle.importKey('pkcs8', der, alg, false, ['sign']) as CryptoKey, alg };
  }
  throw new Error(`unsupported CA key type ${ko.asymmetricKeyType} (use an EC or RSA key)`);
}

/** A new self-signed CA (cert and key PEM). */
export async function generateCa(commonName = 'bosun-machine-config-server-ca'): Promise<{ cert: string; key: string }> {
  const x509 = await x509Library();
  const keys = await webcrypto.subtle.generateKey(EC, true, ['sign', 'verify']) as CryptoKeyPair;
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    name: `CN=${commonName}`,
    keys,
    signingAlgorithm: SIGN,
    notBefore: new Date(Date.now() - 60_000),
    notAfter: new Date(Date.now() + 10 * 365 * 86_400_000),
    extensions: [
      new x509.BasicConstraintsExtension(true, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
    ],
  });
  return { cert: cert.toString('pem') + '\n', key: pem('PRIVATE KEY', await webcrypto.subtle.exportKey('pkcs8', keys.privateKey)) };
}

/** A serving certificate for `hosts` (DNS names or IPs) signed by the given CA. */
export async function issueServingCert(ca: { cert: string; key: string }, hosts: string[]): Promise<ServingTls> {
  const x509 = await x509Library();
  const signer = await importSigningKey(ca.key);
  const caCert = new x509.X509Certificate(ca.cert);
  const keys = await webcrypto.subtle.generateKey(EC, true, ['sign', 'verify']) as CryptoKeyPair;
  const cert = await x509.X509CertificateGenerator.create({
    subject: `CN=${hosts[0] ?? 'machine-config-server'}`,
    issuer: caCert.subject,
    publicKey: keys.publicKey,
    signingKey: signer.key,
    signingAlgorithm: signer.alg,
    notBefore: new Date(Date.now() - 60_000),
    notAfter: new Date(Date.now() + 365 * 86_400_000),
    extensions: [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyEncipherment, true),
      new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth]),
      new x509.SubjectAlternativeNameExtension(hosts.map((h) => (isIP(h) ? { type: 'ip' as const, value: h } : { type: 'dns' as const, value: h }))),
    ],
  });
  return { cert: cert.toString('pem') + '\n', key: pem('PRIVATE KEY', await webcrypto.subtle.exportKey('pkcs8', keys.privateKey)), ca: ca.cert };
}
