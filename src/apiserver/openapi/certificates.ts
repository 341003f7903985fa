// OpenAPI schemas of certificates.k8s.io/v1: CertificateSigningRequests, for `kubectl explain csr`
// and clients that read /openapi/v3.
import { int, kind, list, object, ref, SPEC, STATUS, str, strings, time, type Schema } from './builders.js';

const V1 = 'io.k8s.api.certificates.v1';

export const CERTIFICATES_SCHEMAS: Record<string, Schema> = {
  [`${V1}.CertificateSigningRequest`]: kind('CertificateSigningRequest asks a signer for an X.509 certificate: a node for its client or serving certificate, a user for a client certificate. An approver approves or denies it; the signer then issues the certificate or marks the request Failed.', {
    spec: ref(`${V1}.CertificateSigningRequestSpec`, SPEC),
    status: ref(`${V1}.CertificateSigningRequestStatus`, STATUS),
  }),
  [`${V1}.CertificateSigningRequestSpec`]: object('The request. Immutable once created; the requester\'s identity is recorded by the server.', {
    request: str('A PEM-encoded PKCS#10 certificate request ("CERTIFICATE REQUEST" block), base64-encoded in JSON.', { format: 'byte', 'x-kubernetes-list-type': 'atomic' }),
    signerName: str('The signer asked for, a qualified name such as kubernetes.io/kube-apiserver-client-kubelet, kubernetes.io/kubelet-serving or kubernetes.io/kube-apiserver-client.'),
    expirationSeconds: int('The lifetime asked for, at least 600 seconds; the signer may issue a shorter one.'),
    usages: strings('Key usages asked for: "digital signature", "key encipherment", "client auth", "server auth", …'),
    username: str('Who created the request (set by the server).'),
    uid: str('The UID of who created the request (set by the server).'),
    groups: strings('The groups of who created the request (set by the server).'),
  }, ['request', 'signerName']),
  [`${V1}.CertificateSigningRequestStatus`]: object('The approval, and what the signer did.', {
    conditions: list(`${V1}.CertificateSigningRequestCondition`, 'Approved or Denied (set through the approval subresource), Failed (set by the signer).', ['type']),
    certificate: str('The issued certificate, PEM-encoded, base64-encoded in JSON; set by the signer once approved.', { format: 'byte', 'x-kubernetes-list-type': 'atomic' }),
  }),
  [`${V1}.CertificateSigningRequestCondition`]: object('One condition of a request.', {
    type: str('Approved, Denied or Failed.'),
    status: str('True, False or Unknown; Approved, Denied and Failed are always True.'),
    reason: str('Why, in CamelCase.'),
    message: str('A human-readable explanation.'),
    lastUpdateTime: time('When this condition was last updated.'),
    lastTransitionTime: time('When this condition last changed status.'),
  }, ['type', 'status']),
};
