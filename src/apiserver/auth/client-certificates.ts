// Client-certificate authentication (kube-apiserver's x509 authenticator): a certificate the
// client presented and that verifies against the cluster CA names the user by its common name
// and the groups by its organizations, plus `system:authenticated`. The server asks for a
// certificate but does not require one, so bearer tokens keep working beside it.
import type { TLSSocket } from 'node:tls';
import type { UserInfo } from './request-attributes.js';

/** The user of a verified peer certificate's subject, or undefined when its subject has no CN. */
export function userFromSubject(subject: { CN?: string | string[]; O?: string | string[] } | undefined): UserInfo | undefined {
  const list = (v: string | string[] | undefined): string[] => (v === undefined ? [] : Array.isArray(v) ? v : [v]);
  const [name] = list(subject?.CN);
  if (!name) return undefined;
  return { name, groups: [...list(subject?.O), 'system:authenticated'] };
}

/**
 * Who the client is by its certificate: undefined when it sent none, or one that does not verify
 * against the CA the server trusts (a bad certificate is not a credential; kube answers 401 when
 * nothing else authenticates the request).
 */
export function certificateUser(socket: TLSSocket): UserInfo | undefined {
  if (typeof socket.getPeerCertificate !== 'function' || !socket.authorized) return undefined;
  const cert = socket.getPeerCertificate();
  if (!cert || Object.keys(cert).length === 0) return undefined;
  return userFromSubject(cert.subject as { CN?: string | string[]; O?: string | string[] });
}
