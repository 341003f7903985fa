// kube-controller-manager's csrapproving controller, for a cluster without a machine approver (a
// workload cluster installed kubeadm-style): it approves kubelet client certificates
// (kubernetes.io/kube-apiserver-client-kubelet) for `system:node:<name>` in `system:nodes`, with
// client-auth usages and no SANs, requested either by a bootstrap-token user (group
// system:bootstrappers: kube's nodeclient, which kubeadm grants that group) or by the node itself
// (a renewal: selfnodeclient). Anything else is left to others. The API server's CSR signer then
// signs it with the cluster CA.
import { parseCertificateRequest } from '../apiserver/certificates/request.js';
import { logger, type Logger } from '../common/log.js';
import type * as api from '../api/index.js';
import { Controller, Informer, type KubeClient } from '../kube/index.js';
import { approveCsr, isDecided } from './csr-approval.js';
import { CLIENT_SIGNER } from './node-agent/credentials.js';
import { CSRS } from './node-agent/resources.js';

const CLIENT_USAGES = new Set(['digital signature', 'key encipherment', 'client auth']);

/** Why a CSR is approved (`nodeclient`/`selfnodeclient`), or undefined when it is not this controller's to approve. Pure. */
export function kubeletClientApproval(csr: api.CertificateSigningRequest): 'nodeclient' | 'selfnodeclient' | undefined {
  const spec: Partial<api.CertificateSigningRequest['spec']> = csr.spec ?? {};
  if (spec.signerName !== CLIENT_SIGNER) return undefined;
  let requested;
  try {
    requested = parseCertificateRequest(Buffer.from(spec.request ?? '', 'base64').toString('utf8'));
  } catch {
    return undefined;
  }
  const cn = requested.commonName ?? '';
  if (!/^system:node:.+/.test(cn) || requested.organizations.length !== 1 || requested.organizations[0] !== 'system:nodes') return undefined;
  if (requested.ipAddresses.length || requested.dnsNames.length) return undefined;
  const usages: string[] = spec.usages ?? [];
  if (!usages.includes('client auth') || usages.some((u) => !CLIENT_USAGES.has(u))) return undefined;
  if (spec.username === cn) return 'selfnodeclient';
  if ((spec.groups ?? []).includes('system:bootstrappers')) return 'nodeclient';
  return undefined;
}


/** The csrapproving controller over CertificateSigningRequests. */
export function csrApprover(o: { client: KubeClient; log?: Logger }): Controller {
  const log = o.log ?? logger('csrapproving');
  const csrs = new Informer(o.client, CSRS);
  const controller = new Controller({
    name: 'csrapproving',
    async sync(key) {
      const csr = csrs.getByKey(key);
      if (!csr || isDecided(csr) || csr.status?.certificate) return;
      const why = kubeletClientApproval(csr);
      if (!why) return;
      await approveCsr(o.client, csr, 'AutoApproved', `Auto approving kubelet client certificate (${why}).`);
      log.info({ csr: key, requestor: csr.spec?.username, kind: why }, 'kubelet client certificate request approved');
    },
  });
  return controller.watch(csrs);
}
