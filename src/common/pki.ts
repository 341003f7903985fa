// The cluster's certificates: a self-signed CA kept in the data directory, serving
// certificates it issues (the API server's, the machine-config server's), client certificates
// (the API server's own to kubelets), and certificates signed from a PKCS#10 request (what the
// CSR signer hands out), plus the key and request a client makes for one. ECDSA P-256, which
// every client in play (kubectl, client-node, Ignition) accepts.
import type * as X509 from '@peculiar/x509';
import { webcrypto } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { join } from 'node:path';
import { ensurePrivateDir, tighten } from './private-files.js';

type CryptoKey = webcrypto.CryptoKey;

/** @peculiar/x509 (common/x509.ts), loaded at the first certificate or request made here, not by
 *  every process importing this file: most components only read the certificates they are given. */
export async function x509Library(): Promise<typeof X509> {
  return (await import('./x509.js')).x509;
}

const ALGORITHM = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as const;
const DAY = 24 * 60 * 60 * 1000;

export interface KeyPair {
  certPem: string;
  keyPem: string;
}

function toPem(der: ArrayBuffer, label: string): string {
  const base64 = Buffer.from(der).toString('base64').replace(/(.{64})/g, '$1\n');
  return `-----BEGIN ${label}-----\n${base64.trimEnd()}\n-----END ${label}-----\n`;
}

function serial(): string {
  return Buffer.from(webcrypto.getRandomValues(new Uint8Array(16))).toString('hex').replace(/^[89a-f]/, '1');
}

async function exportKey(key: CryptoKey): Promise<string> {
  return toPem(await webcrypto.subtle.exportKey('pkcs8', key), 'PRIVATE KEY');
}

async function importKey(pem: string): Promise<CryptoKey> {
  const der = Buffer.from(pem.replace(/-----[^-]+-----/g, '').replace(/\s+/g, ''), 'base64');
  return webcrypto.subtle.importKey('pkcs8', der, ALGORITHM, true, ['sign']);
}

/** A key pair without a certificate (a service-account signing key): PKCS#8 private, SPKI public, both PEM. */
export async function createKeyPair(): Promise<{ keyPem: string; publicKeyPem: string }> {
  const keys = await webcrypto.subtle.generateKey(ALGORITHM, true, ['sign', 'verify']);
  return { keyPem: await exportKey(keys.privateKey), publicKeyPem: toPem(await webcrypto.subtle.exportKey('spki', keys.publicKey), 'PUBLIC KEY') };
}

/** Creates a new self-signed CA valid for ten years. */
export async function createCA(commonName: string): Promise<KeyPair> {
  const x509 = await x509Library();
  const keys = await webcrypto.subtle.generateKey(ALGORITHM, true, ['sign', 'verify']);
  const now = Date.now();
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: serial(),
    name: `CN=${commonName}`,
    notBefore: new Date(now - DAY),
    notAfter: new Date(now + 3650 * DAY),
    signingAlgorithm: ALGORITHM,
    keys,
    extensions: [
      new x509.BasicConstraintsExtension(true, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign | x509.KeyUsageFlags.digitalSignature, true),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
    ],
  });
  return { certPem: cert.toString('pem') + '\n', keyPem: await exportKey(keys.privateKey) };
}

/** Issues a serving certificate for `hosts` (DNS names and IP addresses), valid for two years. */
export async function issueServingCert(ca: KeyPair, commonName: string, hosts: string[]): Promise<KeyPair> {
  const x509 = await x509Library();
  const keys = await webcrypto.subtle.generateKey(ALGORITHM, true, ['sign', 'verify']);
  const now = Date.now();
  const certPem = await signPublicKey(ca, keys.publicKey, {
    subject: `CN=${commonName}`,
    keyUsages: x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyEncipherment,
    extendedKeyUsages: [x509.ExtendedKeyUsage.serverAuth],
    altNames: hosts.map((h) => ({ type: isIP(h) ? 'ip' : 'dns', value: h })),
    notBefore: new Date(now - DAY),
    notAfter: new Date(now + 730 * DAY),
  });
  return { certPem, keyPem: await exportKey(keys.privateKey) };
}

/**
 * Issues a leaf certificate for `subject` with its own new key: serving (`hosts` as DNS/IP names),
 * client, or both (etcd's server and peer certificates), valid for `days` (default one year).
 */
export async function issueCertificate(ca: KeyPair, subject: Subject, o: { server?: boolean; client?: boolean; hosts?: string[]; days?: number }): Promise<KeyPair> {
  const x509 = await x509Library();
  const keys = await webcrypto.subtle.generateKey(ALGORITHM, true, ['sign', 'verify']);
  const certPem = await signPublicKey(ca, keys.publicKey, {
    subject: subjectName(subject),
    keyUsages: x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyEncipherment,
    extendedKeyUsages: [...(o.server ? [x509.ExtendedKeyUsage.serverAuth] : []), ...(o.client ? [x509.ExtendedKeyUsage.clientAuth] : [])],
    altNames: (o.hosts ?? []).map((h) => ({ type: isIP(h) ? 'ip' : 'dns', value: h })),
    notAfter: new Date(Date.now() + (o.days ?? 365) * DAY),
  });
  return { certPem, keyPem: await exportKey(keys.privateKey) };
}

/** A subject as kube's signers read it: the common name is the user, organizations its groups. */
export interface Subject {
  commonName: string;
  organizations?: string[];
}

/** Escapes a value for an RFC 4514 string name (`CN=…,O=…`). */
function rdnValue(value: string): string {
  return value.replace(/([,+"\\<>;=])/g, '\\$1').replace(/^([ #])/, '\\$1').replace(/ $/, '\\ ');
}

export function subjectName(subject: Subject): string {
  return [`CN=${rdnValue(subject.commonName)}`, ...(subject.organizations ?? []).map((o) => `O=${rdnValue(o)}`)].join(', ');
}

/** Issues a client certificate (`client auth`) for `subject`, valid for one year. */
export async function issueClientCert(ca: KeyPair, subject: Subject): Promise<KeyPair> {
  const x509 = await x509Library();
  const keys = await webcrypto.subtle.generateKey(ALGORITHM, true, ['sign', 'verify']);
  const certPem = await signPublicKey(ca, keys.publicKey, {
    subject: subjectName(subject),
    keyUsages: x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyEncipherment,
    extendedKeyUsages: [x509.ExtendedKeyUsage.clientAuth],
    notAfter: new Date(Date.now() + 365 * DAY),
  });
  return { certPem, keyPem: await exportKey(keys.privateKey) };
}

/** What a certificate issued for a key says: its subject, usages, alternative names and end of validity. */
export interface CertificateTemplate {
  subject: string | X509.Name;
  keyUsages: number;
  extendedKeyUsages: string[];
  /** DNS names, IP addresses, e-mail addresses and URIs, as the request carried them. */
  altNames?: { type: 'dns' | 'ip' | 'email' | 'url'; value: string }[];
  notBefore?: Date;
  notAfter: Date;
}

/** Signs `publicKey` with the CA as `template` says (not a CA itself). Returns the certificate's PEM. */
export async function signPublicKey(ca: KeyPair, publicKey: X509.PublicKey | CryptoKey, template: CertificateTemplate): Promise<string> {
  const x509 = await x509Library();
  const caCert = new x509.X509Certificate(ca.certPem);
  const extensions: X509.Extension[] = [
    new x509.BasicConstraintsExtension(false, undefined, true),
    await x509.AuthorityKeyIdentifierExtension.create(caCert),
  ];
  if (template.keyUsages !== 0) extensions.push(new x509.KeyUsagesExtension(template.keyUsages, true));
  if (template.extendedKeyUsages.length > 0) extensions.push(new x509.ExtendedKeyUsageExtension(template.extendedKeyUsages));
  if (template.altNames && template.altNames.length > 0) extensions.push(new x509.SubjectAlternativeNameExtension(template.altNames));
  const cert = await x509.X509CertificateGenerator.create({
    serialNumber: serial(),
    subject: template.subject,
    issuer: caCert.subject,
    // Backdated a little, as kube's signer does, so that clocks slightly behind accept it.
    notBefore: template.notBefore ?? new Date(Date.now() - 5 * 60 * 1000),
    notAfter: template.notAfter,
    signingAlgorithm: ALGORITHM,
    publicKey,
    signingKey: await importKey(ca.keyPem),
    extensions,
  });
  return cert.toString('pem') + '\n';
}

/**
 * A new key and a PKCS#10 certificate request for `subject` (and `hosts` as DNS/IP alternative
 * names, for serving certificates), as a kubelet makes one for its CSR.
 */
export async function createCertificateRequest(subject: Subject, hosts: string[] = []): Promise<{ keyPem: string; requestPem: string }> {
  const x509 = await x509Library();
  const keys = await webcrypto.subtle.generateKey(ALGORITHM, true, ['sign', 'verify']);
  const request = await x509.Pkcs10CertificateRequestGenerator.create({
    name: subjectName(subject),
    keys,
    signingAlgorithm: ALGORITHM,
    extensions: hosts.length > 0 ? [new x509.SubjectAlternativeNameExtension(hosts.map((h) => ({ type: isIP(h) ? 'ip' : 'dns', value: h })))] : [],
  });
  return { keyPem: await exportKey(keys.privateKey), requestPem: request.toString('pem') + '\n' };
}

/**
 * Loads `<dir>/<name>.crt` + `.key`, or creates them with `make` and writes them (key mode 0600).
 * Later starts reuse what the first start wrote.
 */
export async function loadOrCreate(dir: string, name: string, make: () => Promise<KeyPair>): Promise<KeyPair> {
  const certPath = join(dir, `${name}.crt`);
  const keyPath = join(dir, `${name}.key`);
  if (existsSync(certPath) && existsSync(keyPath)) {
    tighten(keyPath, 'private key');
    return { certPem: readFileSync(certPath, 'utf8'), keyPem: readFileSync(keyPath, 'utf8') };
  }
  ensurePrivateDir(dir);
  const pair = await make();
  writeFileSync(keyPath, pair.keyPem, { mode: 0o600 });
  writeFileSync(certPath, pair.certPem, { mode: 0o600 });
  return pair;
}
