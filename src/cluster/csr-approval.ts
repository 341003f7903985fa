// What the two approvers share about a CertificateSigningRequest (csr-approver.ts,
// kube-controller-manager's csrapproving; machine-approver.ts, OpenShift's cluster-machine-approver):
// whether it has been decided already, and approving it through its approval subresource with the
// approver's reason and message.
import type * as api from '../api/index.js';
import { rfc3339 } from '../common/time.js';
import { resourcePath, type KubeClient } from '../kube/index.js';
import { CSRS } from './node-agent/resources.js';

/** Approved, denied or failed: no approver touches it again. */
export function isDecided(csr: api.CertificateSigningRequest): boolean {
  return (csr.status?.conditions ?? []).some((c) => ['Approved', 'Denied', 'Failed'].includes(c.type));
}

/** Adds the Approved condition (`reason`, `message`) through the approval subresource. */
export async function approveCsr(client: KubeClient, csr: api.CertificateSigningRequest, reason: string, message: string): Promise<void> {
  const approved = {
    ...csr,
    status: {
      ...csr.status,
      conditions: [...(csr.status?.conditions ?? []), { type: 'Approved', status: 'True', reason, message, lastUpdateTime: rfc3339() }],
    },
  };
  await client.request('PUT', `${resourcePath(CSRS, undefined, csr.metadata.name)}/approval`, { body: approved });
}
