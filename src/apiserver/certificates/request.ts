// A CertificateSigningRequest's `spec.request` read as kube reads it (certificates.ParseCSR): one
// PEM "CERTIFICATE REQUEST" block holding a PKCS#10 request, with its subject and alternative
// names; and the key usages certificates.k8s.io/v1 knows, with what each means in a certificate.
import 'reflect-metadata';
import * as x509 from '@peculiar/x509';
import { webcrypto } from 'node:crypto';

x509.cryptoProvider.set(webcrypto as unknown as Parameters<typeof x509.cryptoProvider.set>[0]);

export interface ParsedRequest {
  request: x509.Pkcs10CertificateRequest;
  commonName: string;
  organizations: string[];
  dnsNames: string[];
  ipAddresses: string[];
  emailAddresses: string[];
  uris: string[];
}

export class RequestError extends Error {}

const PEM_BLOCK = /-----BEGIN ([A-Z0-9 ]+)-----([\s\S]*?)-----END \1-----/g;

/** The PEM blocks of a text, as label and DER. */
export function pemBlocks(text: string): { label: string; der: Buffer }[] {
  return [...text.matchAll(PEM_BLOCK)].map((m) => ({ label: m[1], der: Buffer.from(m[2].replace(/\s+/g, ''), 'base64') }));
}

/** Parses a PEM-encoded PKCS#10 request; throws RequestError with kube's wording when it is not one. */
export function parseCertificateRequest(pem: string): ParsedRequest {
  const block = pemBlocks(pem).find((b) => b.label === 'CERTIFICATE REQUEST' || b.label === 'NEW CERTIFICATE REQUEST');
  if (!block) throw new RequestError('PEM block type must be CERTIFICATE REQUEST');
  let request: x509.Pkcs10CertificateRequest;
  try {
    request = new x509.Pkcs10CertificateRequest(block.der);
  } catch (e) {
    throw new RequestError(`x509: malformed certificate request: ${(e as Error).message}`);
  }
  const san = request.getExtension('2.5.29.17'); // subjectAltName
  const names = san ? new x509.SubjectAlternativeNameExtension(san.rawData).names.items : [];
  const of = (type: string) => names.filter((n) => n.type === type).map((n) => n.value);
  return {
    request,
    commonName: request.subjectName.getField('CN')[0] ?? '',
    organizations: request.subjectName.getField('O'),
    dnsNames: of('dns'),
    ipAddresses: of('ip'),
    emailAddresses: of('email'),
    uris: of('url'),
  };
}

/** Whether the request is signed by the key it carries (proof that the requester holds that key). */
export function signatureValid(parsed: ParsedRequest): Promise<boolean> {
  return parsed.request.verify();
}

const K = x509.KeyUsageFlags;
const E = x509.ExtendedKeyUsage;

/** Every usage certificates.k8s.io/v1 accepts, with its key usage bit or extended key usage. */
export const KEY_USAGES: Record<string, { keyUsage?: number; extended?: string }> = {
  'signing': { keyUsage: K.digitalSignature },
  'digital signature': { keyUsage: K.digitalSignature },
  'content commitment': { keyUsage: K.nonRepudiation },
  'key encipherment': { keyUsage: K.keyEncipherment },
  'key agreement': { keyUsage: K.keyAgreement },
  'data encipherment': { keyUsage: K.dataEncipherment },
  'cert sign': { keyUsage: K.keyCertSign },
  'crl sign': { keyUsage: K.cRLSign },
  'encipher only': { keyUsage: K.encipherOnly },
  'decipher only': { keyUsage: K.decipherOnly },
  'any': { extended: '2.5.29.37.0' },
  'server auth': { extended: E.serverAuth },
  'client auth': { extended: E.clientAuth },
  'code signing': { extended: E.codeSigning },
  'email protection': { extended: E.emailProtection },
  's/mime': { extended: E.emailProtection },
  'ipsec end system': { extended: '1.3.6.1.5.5.7.3.5' },
  'ipsec tunnel': { extended: '1.3.6.1.5.5.7.3.6' },
  'ipsec user': { extended: '1.3.6.1.5.5.7.3.7' },
  'timestamping': { extended: E.timeStamping },
  'ocsp signing': { extended: E.ocspSigning },
  'microsoft sgc': { extended: '1.3.6.1.4.1.311.10.3.3' },
  'netscape sgc': { extended: '2.16.840.1.113730.4.1' },
};

/** The key usage bits and extended key usages of a list of usages. */
export function usageBits(usages: string[]): { keyUsages: number; extendedKeyUsages: string[] } {
  let keyUsages = 0;
  const extendedKeyUsages: string[] = [];
  for (const usage of usages) {
    const meaning = KEY_USAGES[usage];
    if (meaning?.keyUsage) keyUsages |= meaning.keyUsage;
    if (meaning?.extended && !extendedKeyUsages.includes(meaning.extended)) extendedKeyUsages.push(meaning.extended);
  }
  return { keyUsages, extendedKeyUsages };
}
