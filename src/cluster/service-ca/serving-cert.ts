// The service CA's rules, as OpenShift's service-ca operator has them (pkg/controller/api,
// servingcert/controller): the names and annotations, the signing Secret, what a Service's
// serving-certificate Secret holds, and when one is issued again. Pure functions over objects and
// certificates; the controllers (controllers.ts) only read, call these and write.
//
// A Service annotated `service.beta.openshift.io/serving-cert-secret-name: NAME` gets a
// `kubernetes.io/tls` Secret NAME in its namespace: a certificate for `<svc>.<ns>.svc` and
// `<svc>.<ns>.svc.cluster.local`, signed by the service CA, valid two years, followed in tls.crt
// by the CA itself (as library-go's MakeServerCert does); annotated with the Service's name and
// uid and the certificate's expiry, owned by the Service. It is issued again when it is missing,
// was not issued by the current CA, has lost its owner reference or expiry annotation, or has
// less than an hour left; a Secret of that name that another Service (another uid) owns is an
// error written on the Service (serving-cert-generation-error), never overwritten.
import { type KeyPair, createCA, signPublicKey } from '../../common/pki.js';
import { x509 } from '../../common/x509.js';
import type * as api from '../../api/index.js';
import { webcrypto } from 'node:crypto';

export const SERVICE_CA_NAMESPACE = 'openshift-service-ca';
/** The signing CA: Secret openshift-service-ca/signing-key (tls.crt, tls.key). */
export const SIGNING_SECRET = 'signing-key';
/** The CA bundle in the operand namespace (key ca-bundle.crt), as OpenShift's signing-cabundle. */
export const SIGNING_CABUNDLE = 'signing-cabundle';
/** The CA bundle published for the platform: ConfigMap openshift-config-managed/service-ca, key ca-bundle.crt. */
export const PUBLISHED_CABUNDLE = { namespace: 'openshift-config-managed', name: 'service-ca', key: 'ca-bundle.crt' };

export const ANNOTATIONS = {
  secretName: 'service.beta.openshift.io/serving-cert-secret-name',
  alphaSecretName: 'service.alpha.openshift.io/serving-cert-secret-name',
  signedBy: 'service.beta.openshift.io/serving-cert-signed-by',
  alphaSignedBy: 'service.alpha.openshift.io/serving-cert-signed-by',
  error: 'service.beta.openshift.io/serving-cert-generation-error',
  errorNum: 'service.beta.openshift.io/serving-cert-generation-error-num',
  serviceUid: 'service.beta.openshift.io/originating-service-uid',
  serviceName: 'service.beta.openshift.io/originating-service-name',
  expiry: 'service.beta.openshift.io/expiry',
  alphaExpiry: 'service.alpha.openshift.io/expiry',
  injectCabundle: 'service.beta.openshift.io/inject-cabundle',
  alphaInjectCabundle: 'service.alpha.openshift.io/inject-cabundle',
} as const;

/** The key an injected ConfigMap gets the bundle under. */
export const INJECTION_KEY = 'service-ca.crt';

const HOUR = 60 * 60 * 1000;
const DAY = 24 * HOUR;
/** Serving certificates are valid two years (service-ca's certificateLifetime). */
export const SERVING_CERT_LIFETIME_MS = 730 * DAY;
/** Issued again when less than this is left (service-ca's minTimeLeftForCert). */
export const MIN_TIME_LEFT_MS = HOUR;

/** The name of the Secret a Service asks for, if any (beta annotation first). */
export function requestedSecretName(service: api.Service): string | undefined {
  const a = service.metadata.annotations ?? {};
  return a[ANNOTATIONS.secretName] || a[ANNOTATIONS.alphaSecretName] || undefined;
}

/** The Service a serving-cert Secret was issued for, by its annotation. */
export function originatingService(secret: api.Secret): string | undefined {
  const a = secret.metadata.annotations ?? {};
  return a[ANNOTATIONS.serviceName] || undefined;
}

/** Whether a ConfigMap asks for the CA bundle (either annotation, "true" in any case). */
export function wantsCaBundle(object: { metadata: api.ObjectMeta }): boolean {
  const a = object.metadata.annotations ?? {};
  return [a[ANNOTATIONS.injectCabundle], a[ANNOTATIONS.alphaInjectCabundle]].some((v) => v?.toLowerCase() === 'true');
}

/** The DNS names a Service's certificate is for. */
export function serviceHostnames(service: api.Service): string[] {
  const name = `${service.metadata.name}.${service.metadata.namespace}.svc`;
  return [name, `${name}.cluster.local`];
}

/** The service CA, parsed once. */
export interface ServiceCa {
  pair: KeyPair;
  cert: x509.X509Certificate;
  commonName: string;
  subjectKeyId: string;
}

export function parseServiceCa(pair: KeyPair): ServiceCa {
  const cert = new x509.X509Certificate(pair.certPem);
  const ski = cert.getExtension(x509.SubjectKeyIdentifierExtension);
  return { pair, cert, commonName: cert.subjectName.getField('CN')[0] ?? cert.subject, subjectKeyId: ski?.keyId ?? '' };
}

/** A new service CA, named as OpenShift names its signer (`openshift-service-serving-signer@<unix seconds>`). */
export async function createServiceCa(now: Date): Promise<ServiceCa> {
  return parseServiceCa(await createCA(`openshift-service-serving-signer@${Math.floor(now.getTime() / 1000)}`));
}

const b64 = (text: string) => Buffer.from(text).toString('base64');
const unb64 = (text: string | undefined) => (text ? Buffer.from(text, 'base64').toString('utf8') : '');

/** The signing Secret holding a CA. */
export function signingSecret(ca: ServiceCa): api.Secret {
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: SIGNING_SECRET, namespace: SERVICE_CA_NAMESPACE },
    type: 'kubernetes.io/tls',
    data: { 'tls.crt': b64(ca.pair.certPem), 'tls.key': b64(ca.pair.keyPem) },
  };
}

/** The CA a signing Secret holds; an error saying what is wrong with it otherwise. */
export function caFromSigningSecret(secret: api.Secret): ServiceCa {
  const certPem = unb64(secret.data?.['tls.crt']);
  const keyPem = unb64(secret.data?.['tls.key']);
  if (!certPem || !keyPem) throw new Error(`Secret ${SERVICE_CA_NAMESPACE}/${SIGNING_SECRET} has no tls.crt and tls.key`);
  try {
    return parseServiceCa({ certPem, keyPem });
  } catch (e) {
    throw new Error(`Secret ${SERVICE_CA_NAMESPACE}/${SIGNING_SECRET}: tls.crt is not a certificate: ${(e as Error).message}`);
  }
}

/** The first certificate of a PEM text, or undefined when there is none that parses. */
function firstCertificate(pem: string): x509.X509Certificate | undefined {
  const block = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/.exec(pem)?.[0];
  if (!block) return undefined;
  try {
    return new x509.X509Certificate(block);
  } catch {
    return undefined;
  }
}

function issuedBy(cert: x509.X509Certificate, ca: ServiceCa): boolean {
  const aki = cert.getExtension(x509.AuthorityKeyIdentifierExtension)?.keyId;
  return ca.subjectKeyId ? aki === ca.subjectKeyId : cert.issuerName.getField('CN')[0] === ca.commonName;
}

export type SecretVerdict =
  | { action: 'none'; renewAt: Date }
  | { action: 'issue'; why: string }
  | { action: 'conflict'; message: string };

/** What a Service's serving-cert Secret needs, now. */
export function judgeServingSecret(service: api.Service, secret: api.Secret | undefined, ca: ServiceCa, now: Date): SecretVerdict {
  if (!secret) return { action: 'issue', why: 'no Secret yet' };
  const a = secret.metadata.annotations ?? {};
  const uid = service.metadata.uid ?? '';
  if (a[ANNOTATIONS.serviceUid] !== uid) {
    return { action: 'conflict', message: `secret ${secret.metadata.namespace}/${secret.metadata.name} does not have corresponding service UID ${uid}` };
  }
  if (!(secret.metadata.ownerReferences ?? []).some((o) => o.kind === 'Service' && o.uid === uid)) return { action: 'issue', why: 'the Secret lost its owner reference' };
  const expiry = Date.parse(a[ANNOTATIONS.expiry] ?? a[ANNOTATIONS.alphaExpiry] ?? '');
  if (!Number.isFinite(expiry)) return { action: 'issue', why: 'no expiry annotation' };
  if (now.getTime() + MIN_TIME_LEFT_MS > expiry) return { action: 'issue', why: `expires at ${new Date(expiry).toISOString()}` };
  const data = secret.data ?? {};
  const cert = firstCertificate(unb64(data['tls.crt']));
  if (!cert || !data['tls.key']) return { action: 'issue', why: 'tls.crt or tls.key is missing or not a certificate' };
  if (!issuedBy(cert, ca)) return { action: 'issue', why: 'not issued by the current service CA' };
  const names = cert.getExtension(x509.SubjectAlternativeNameExtension)?.names.items.map((n) => n.value) ?? [];
  if (serviceHostnames(service).some((h) => !names.includes(h))) return { action: 'issue', why: 'the certificate does not name the Service' };
  if (Object.keys(data).length !== 2) return { action: 'issue', why: 'keys beside tls.crt and tls.key' };
  return { action: 'none', renewAt: new Date(expiry - MIN_TIME_LEFT_MS) };
}

/** A fresh serving certificate for a Service, as its Secret. */
export async function servingSecret(service: api.Service, secretName: string, ca: ServiceCa, now: Date): Promise<api.Secret> {
  const keys = await webcrypto.subtle.generateKey({ name: 'ECDSA', namedCurve: 'P-256' }, true, ['sign', 'verify']);
  const hosts = serviceHostnames(service);
  const notAfter = new Date(now.getTime() + SERVING_CERT_LIFETIME_MS);
  // Whole seconds: the expiry annotation is RFC 3339 without fractions, as Go formats it.
  notAfter.setMilliseconds(0);
  const certPem = await signPublicKey(ca.pair, keys.publicKey, {
    subject: `CN=${hosts[0]}`,
    keyUsages: x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyEncipherment,
    extendedKeyUsages: [x509.ExtendedKeyUsage.serverAuth],
    altNames: hosts.map((value) => ({ type: 'dns' as const, value })),
    notBefore: new Date(now.getTime() - 5 * 60 * 1000),
    notAfter,
  });
  const keyPem = Buffer.from(await webcrypto.subtle.exportKey('pkcs8', keys.privateKey)).toString('base64').replace(/(.{64})/g, '$1\n').trimEnd();
  const expiry = notAfter.toISOString().replace(/\.\d{3}Z$/, 'Z');
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: {
      name: secretName,
      namespace: service.metadata.namespace,
      annotations: {
        [ANNOTATIONS.serviceUid]: service.metadata.uid ?? '',
        [ANNOTATIONS.serviceName]: service.metadata.name,
        [ANNOTATIONS.expiry]: expiry,
        [ANNOTATIONS.alphaExpiry]: expiry,
      },
      ownerReferences: [{ apiVersion: 'v1', kind: 'Service', name: service.metadata.name, uid: service.metadata.uid ?? '' }],
    },
    type: 'kubernetes.io/tls',
    data: {
      'tls.crt': b64(certPem + ca.pair.certPem),
      'tls.key': b64(`-----BEGIN PRIVATE KEY-----\n${keyPem}\n-----END PRIVATE KEY-----\n`),
    },
  };
}
