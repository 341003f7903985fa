// The built-in signers of kube-controller-manager's csrsigning controller and what each accepts
// (pkg/controller/certificates/signer, certificates' ValidateKubeletClientCSR /
// ValidateKubeletServingCSR): a request for a signer it does not fit is failed, not signed. Pure:
// the parsed request and the usages in, a refusal or nothing out.
import type { ParsedRequest } from './request.js';

export const KUBELET_CLIENT_SIGNER = 'kubernetes.io/kube-apiserver-client-kubelet';
export const KUBELET_SERVING_SIGNER = 'kubernetes.io/kubelet-serving';
export const APISERVER_CLIENT_SIGNER = 'kubernetes.io/kube-apiserver-client';

export const NODES_GROUP = 'system:nodes';
export const NODE_USER_PREFIX = 'system:node:';

/** Checks that `usages` hold `required` and nothing outside `allowed` (kube's usage sets). */
function usageProblem(usages: string[], required: string, optional: string[], what: string): string | undefined {
  const allowed = new Set([required, ...optional]);
  const stray = usages.find((u) => !allowed.has(u));
  if (stray !== undefined) return `invalid usage for ${what} certificate: ${stray}`;
  if (!usages.includes(required)) return `missing required usage for ${what} certificate: ${required}`;
  return undefined;
}

/** A node's identity in the subject: organization exactly system:nodes, common name system:node:<name>. */
function nodeSubjectProblem(request: ParsedRequest): string | undefined {
  if (request.organizations.length !== 1 || request.organizations[0] !== NODES_GROUP) return `subject organization is not ${NODES_GROUP}`;
  if (!request.commonName.startsWith(NODE_USER_PREFIX)) return `subject common name does not begin with ${NODE_USER_PREFIX}`;
  return undefined;
}

function kubeletClient(request: ParsedRequest, usages: string[]): string | undefined {
  const subject = nodeSubjectProblem(request);
  if (subject) return subject;
  if (request.dnsNames.length > 0) return 'dnsNames are not allowed';
  if (request.emailAddresses.length > 0) return 'emailAddresses are not allowed';
  if (request.ipAddresses.length > 0) return 'ipAddresses are not allowed';
  if (request.uris.length > 0) return 'uris are not allowed';
  return usageProblem(usages, 'client auth', ['digital signature', 'key encipherment'], 'kubelet client');
}

function kubeletServing(request: ParsedRequest, usages: string[]): string | undefined {
  const subject = nodeSubjectProblem(request);
  if (subject) return subject;
  if (request.dnsNames.length === 0 && request.ipAddresses.length === 0) return 'DNS or IP subjectAltName is required';
  if (request.emailAddresses.length > 0) return 'email subjectAltNames are not allowed';
  if (request.uris.length > 0) return 'URI subjectAltNames are not allowed';
  return usageProblem(usages, 'server auth', ['digital signature', 'key encipherment'], 'kubelet serving');
}

function apiServerClient(_request: ParsedRequest, usages: string[]): string | undefined {
  return usageProblem(usages, 'client auth', ['digital signature', 'key encipherment'], 'client');
}

const CHECKS: Record<string, (request: ParsedRequest, usages: string[]) => string | undefined> = {
  [KUBELET_CLIENT_SIGNER]: kubeletClient,
  [KUBELET_SERVING_SIGNER]: kubeletServing,
  [APISERVER_CLIENT_SIGNER]: apiServerClient,
};

/** Whether one of the built-in signers signs for `signerName` (others are left to their own signers). */
export function isBuiltinSigner(signerName: string): boolean {
  return signerName in CHECKS;
}

/** Why the built-in signer `signerName` refuses the request, or undefined when it fits. */
export function signerRefusal(signerName: string, request: ParsedRequest, usages: string[]): string | undefined {
  const check = CHECKS[signerName];
  if (!check) return `unrecognized signerName: ${JSON.stringify(signerName)}`;
  return check(request, usages);
}
