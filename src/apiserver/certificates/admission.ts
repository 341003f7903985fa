// The admission plugins kube-apiserver runs on CertificateSigningRequests by default:
// CertificateApproval (approving or denying needs the `approve` verb on the `signers` resource
// named for the CSR's signer, or `<domain>/*`), CertificateSigning (writing status.certificate
// needs `sign` likewise) and CertificateSubjectRestriction (no `system:masters` certificates from
// the kube-apiserver-client signer: that group is all-powerful). Writes by the server itself
// (its own signer) carry no user and pass.
import { errors } from '../errors.js';
import type { RequestAttributes, UserInfo } from '../auth/request-attributes.js';
import type { ResourceHooks } from '../registry/write-context.js';
import { csrHasCondition } from '../kinds/certificatesigningrequests.js';
import { asKind } from '../kinds/strategy.js';
import { parseCertificateRequest, RequestError } from './request.js';
import { APISERVER_CLIENT_SIGNER } from './signers.js';

import type * as api from '../../api/index.js';

type CSR = api.CertificateSigningRequest;

const GROUP = 'certificates.k8s.io';

/** Whether `user` may `verb` the signer `signerName` (by its name, or its domain's wildcard), as kube's IsAuthorizedForSignerName asks. */
export function authorizedForSigner(authorize: (attributes: RequestAttributes) => string | undefined, user: UserInfo, verb: 'approve' | 'sign', signerName: string): boolean {
  const attributes = (name: string): RequestAttributes => ({
    user, verb, resourceRequest: true, apiGroup: GROUP, apiVersion: '*', resource: 'signers', subresource: '', namespace: '', name, path: '',
  });
  if (authorize(attributes(signerName)) === undefined) return true;
  const domain = signerName.split('/')[0];
  return authorize(attributes(`${domain}/*`)) === undefined;
}

const forbidden = (name: string, message: string) => errors.forbidden(`certificatesigningrequests.${GROUP} "${name}" is forbidden: ${message}`);
const decision = (o: CSR | undefined) => ['Approved', 'Denied'].map((t) => csrHasCondition(o, t)).join();

export function certificateAdmission(authorize: (attributes: RequestAttributes) => string | undefined): ResourceHooks {
  return {
    beforeWrite(type, written, stored, context) {
      if (type.group !== GROUP || type.resource !== 'certificatesigningrequests') return;
      const object = asKind<CSR>(written);
      const previous = stored && asKind<CSR>(stored);
      const name = String(object.metadata?.name ?? '');
      const signerName = String(object.spec?.signerName ?? '');
      if (!previous && signerName === APISERVER_CLIENT_SIGNER && typeof object.spec?.request === 'string') {
        try {
          const request = parseCertificateRequest(Buffer.from(object.spec.request, 'base64').toString('utf8'));
          if (request.organizations.includes('system:masters')) throw forbidden(name, `use of ${APISERVER_CLIENT_SIGNER} signer with system:masters group is not allowed`);
        } catch (e) {
          // An unparseable request is validation's to refuse, with its own message.
          if (!(e instanceof RequestError)) throw e;
        }
      }
      const user = context.user;
      if (!user || !previous) return;
      if (context.subresource === 'approval' && decision(object) !== decision(previous) && !authorizedForSigner(authorize, user, 'approve', signerName)) {
        throw forbidden(name, `user not permitted to approve requests with signerName "${signerName}"`);
      }
      if (context.subresource === 'status' && (object.status?.certificate ?? '') !== (previous.status?.certificate ?? '') && !authorizedForSigner(authorize, user, 'sign', signerName)) {
        throw forbidden(name, `user not permitted to sign requests with signerName "${signerName}"`);
      }
    },
  };
}
