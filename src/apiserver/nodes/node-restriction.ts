// The NodeRestriction admission plugin (plugin/pkg/admission/noderestriction): what a node may
// write once the Node authorizer has let a request through. Its own Node only (no taint changes,
// no configSource, no labels outside what kubelets may set), its own Lease, the status of pods
// bound to it (labels untouched), mirror pods bound to it that refer to nothing else, deletions
// and evictions of its pods, and service-account tokens bound to its pods. Pure: the request,
// the objects involved and a pod lookup in; the reason for a 403 out, or nothing.
import { qualifiedResource } from '../errors.js';
import { NODE_LEASE_NAMESPACE, nodeIdentity } from './node-authorizer.js';
import { podReferences } from './node-graph.js';
import { jsonEqual } from '../../common/json.js';
import type { UserInfo } from '../auth/request-attributes.js';

import type * as api from '../../api/index.js';

export interface AdmissionRequest {
  user: UserInfo;
  operation: 'CREATE' | 'UPDATE' | 'DELETE';
  group: string;
  resource: string;
  subresource: string;
  namespace: string;
  /** The object's name (from the URL, or the body on create). */
  name: string;
  /** The object as it would be stored (create, update), or the request body (eviction, TokenRequest). */
  object?: api.KubeObject | Partial<api.Unstructured>;
  /** The stored object (update, delete). */
  oldObject?: api.KubeObject;
}

export interface AdmissionLookups {
  pod(namespace: string, name: string): api.Pod | undefined;
  node(name: string): api.Node | undefined;
}

const MIRROR_POD_ANNOTATION = 'kubernetes.io/config.mirror';

// Labels a kubelet may set on its Node (k8s.io/kubelet's IsKubeletLabel) …
const KUBELET_LABELS = new Set([
  'kubernetes.io/hostname', 'topology.kubernetes.io/zone', 'topology.kubernetes.io/region',
  'failure-domain.beta.kubernetes.io/zone', 'failure-domain.beta.kubernetes.io/region',
  'kubernetes.io/arch', 'kubernetes.io/os', 'beta.kubernetes.io/arch', 'beta.kubernetes.io/os',
  'node.kubernetes.io/instance-type', 'beta.kubernetes.io/instance-type',
  // … plus the role labels OpenShift's kubelets register with (its well_known_openshift_labels).
  'node-role.kubernetes.io/control-plane', 'node-role.kubernetes.io/master', 'node-role.kubernetes.io/worker',
  'node-role.kubernetes.io/etcd', 'node-role.kubernetes.io/arbiter',
]);
const KUBELET_LABEL_NAMESPACES = ['kubelet.kubernetes.io', 'node.kubernetes.io'];

const labelNamespace = (key: string): string => (key.includes('/') ? key.slice(0, key.indexOf('/')) : '');
const inNamespace = (ns: string, suffix: string): boolean => ns === suffix || ns.endsWith(`.${suffix}`);

/** Label keys a node may not set, change or remove on itself. */
export function forbiddenNodeLabels(next: Record<string, string> = {}, previous: Record<string, string> = {}): string[] {
  const modified = [...new Set([...Object.keys(next), ...Object.keys(previous)])].filter((k) => next[k] !== previous[k]);
  return modified.filter((key) => {
    const ns = labelNamespace(key);
    if (inNamespace(ns, 'node-restriction.kubernetes.io')) return true;
    const kubernetes = inNamespace(ns, 'kubernetes.io') || inNamespace(ns, 'k8s.io');
    const kubelet = KUBELET_LABELS.has(key) || KUBELET_LABEL_NAMESPACES.some((suffix) => inNamespace(ns, suffix));
    return kubernetes && !kubelet;
  }).sort();
}

function admitNode(node: string, a: AdmissionRequest): string | undefined {
  if (a.name !== node) return `node "${node}" is not allowed to modify node "${a.name}"`;
  const object: Partial<api.Node> = a.object ?? {};
  if (a.operation === 'CREATE') {
    if (object.spec?.configSource) return `node "${node}" is not allowed to create pods with a non-nil configSource`;
    const forbidden = forbiddenNodeLabels(object.metadata?.labels);
    if (forbidden.length > 0) return `node "${node}" is not allowed to set the following labels: ${forbidden.join(', ')}`;
  }
  if (a.operation === 'UPDATE') {
    const old: Partial<api.Node> = a.oldObject ?? {};
    if (object.spec?.configSource && !jsonEqual(object.spec.configSource, old.spec?.configSource)) {
      return `node "${node}" is not allowed to update configSource to a new non-nil configSource`;
    }
    if (!jsonEqual(object.spec?.taints ?? [], old.spec?.taints ?? [])) return `node "${node}" is not allowed to modify taints`;
    const forbidden = forbiddenNodeLabels(object.metadata?.labels, old.metadata?.labels);
    if (forbidden.length > 0) return `is not allowed to modify labels: ${forbidden.join(', ')}`;
  }
  return undefined;
}

function admitMirrorPod(node: string, pod: Partial<api.Pod>, lookups: AdmissionLookups): string | undefined {
  if (!Object.hasOwn(pod.metadata?.annotations ?? {}, MIRROR_POD_ANNOTATION)) {
    return `pod does not have "${MIRROR_POD_ANNOTATION}" annotation, node "${node}" can only create mirror pods`;
  }
  if (pod.spec?.nodeName !== node) return `node "${node}" can only create pods with spec.nodeName set to itself`;
  const owners = pod.metadata?.ownerReferences ?? [];
  if (owners.length > 1) return `node "${node}" can only create pods with a single owner reference set to itself`;
  if (owners.length === 0) return `node "${node}" can only create pods with an owner reference set to itself`;
  const [owner] = owners;
  if (owner.apiVersion !== 'v1' || owner.kind !== 'Node' || owner.name !== node) return `node "${node}" can only create pods with an owner reference set to itself`;
  if (owner.controller !== true) return `node "${node}" can only create pods with a controller owner reference set to itself`;
  if (owner.blockOwnerDeletion === true) return `node "${node}" must not set blockOwnerDeletion on an owner reference`;
  const nodeObject = lookups.node(node);
  if (!nodeObject) return `error looking up node ${node} to verify uid: node not found`;
  if (owner.uid !== nodeObject.metadata?.uid) return `node ${node} UID mismatch: expected ${owner.uid} got ${nodeObject.metadata?.uid}`;
  // A node may not reach other objects through a pod it makes up itself. (A service account
  // name the server defaulted counts: kube checks the pod after defaulting too.)
  const references = podReferences(pod);
  if (references.some((r) => r.resource === 'serviceaccounts')) return `node "${node}" can not create pods that reference a service account`;
  if (references.some((r) => r.resource === 'secrets')) return `node "${node}" can not create pods that reference secrets`;
  if (references.some((r) => r.resource === 'configmaps')) return `node "${node}" can not create pods that reference configmaps`;
  if ((pod.spec?.volumes ?? []).some((v) => (v?.projected?.sources ?? []).some((s) => s?.clusterTrustBundle))) {
    return `node "${node}" can not create pods that reference clustertrustbundles`;
  }
  if (references.some((r) => r.resource === 'persistentvolumeclaims')) return `node "${node}" can not create pods that reference persistentvolumeclaims`;
  return undefined;
}

function admitPod(node: string, a: AdmissionRequest, lookups: AdmissionLookups): string | undefined {
  const oldPod: Partial<api.Pod> | undefined = a.oldObject;
  switch (a.subresource) {
    case '':
      if (a.operation === 'CREATE') return admitMirrorPod(node, a.object ?? {}, lookups);
      if (a.operation === 'DELETE') {
        return oldPod?.spec?.nodeName === node ? undefined : `node "${node}" can only delete pods with spec.nodeName set to itself`;
      }
      return `unexpected operation "${a.operation}", node "${node}" can only create and delete mirror pods`;
    case 'status':
      if (a.operation !== 'UPDATE') return `unexpected operation "${a.operation}"`;
      if (oldPod?.spec?.nodeName !== node) return `node "${node}" can only update pod status for pods with spec.nodeName set to itself`;
      if (!jsonEqual(a.object?.metadata?.labels ?? {}, a.oldObject?.metadata?.labels ?? {})) return `node "${node}" cannot update labels through pod status`;
      return undefined;
    case 'eviction': {
      if (a.operation !== 'CREATE') return `unexpected operation ${a.operation}`;
      const podName = a.name || a.object?.metadata?.name;
      if (!podName) return 'could not determine pod from request data';
      const pod = lookups.pod(a.namespace, podName);
      if (pod && pod.spec?.nodeName !== node) return `node ${node} can only evict pods with spec.nodeName set to itself`;
      return undefined;
    }
    default:
      return `unexpected pod subresource "${a.subresource}", only 'status' and 'eviction' are allowed`;
  }
}

function admitServiceAccountToken(node: string, a: AdmissionRequest, lookups: AdmissionLookups): string | undefined {
  if (a.operation !== 'CREATE' || a.subresource !== 'token') return undefined;
  // A TokenRequest's binding, as sent.
  const ref = (a.object as { spec?: { boundObjectRef?: { apiVersion?: string; kind?: string; name?: string; uid?: string } } } | undefined)?.spec?.boundObjectRef;
  if (!ref || ref.apiVersion !== 'v1' || ref.kind !== 'Pod' || !ref.name) return 'node requested token not bound to a pod';
  if (!ref.uid) return 'node requested token with a pod binding without a uid';
  const pod = lookups.pod(a.namespace, ref.name);
  if (!pod) return `pods "${ref.name}" not found`;
  if (ref.uid !== pod.metadata?.uid) {
    return `the UID in the bound object reference (${ref.uid}) does not match the UID in record. The object might have been deleted and then recreated`;
  }
  if (pod.spec?.nodeName !== node) return 'node requested token bound to a pod scheduled on a different node';
  return undefined;
}

function admitLease(node: string, a: AdmissionRequest): string | undefined {
  if (a.namespace !== NODE_LEASE_NAMESPACE) return `can only access leases in the "${NODE_LEASE_NAMESPACE}" system namespace`;
  if (a.name !== node) return 'can only access node lease with the same name as the requesting node';
  return undefined;
}

/** Why NodeRestriction refuses the request, or undefined (requests from non-nodes always pass). */
export function nodeRestrictionRefusal(a: AdmissionRequest, lookups: AdmissionLookups): string | undefined {
  const node = nodeIdentity(a.user);
  if (node === undefined) return undefined;
  if (node === '') return `could not determine node from user "${a.user.name}"`;
  if (a.group === '') {
    switch (a.resource) {
      case 'pods': return admitPod(node, a, lookups);
      case 'nodes': return admitNode(node, a);
      case 'persistentvolumeclaims':
        if (a.subresource !== 'status') return 'may only update PVC status';
        return undefined;
      case 'serviceaccounts': return admitServiceAccountToken(node, a, lookups);
    }
  }
  if (a.group === 'coordination.k8s.io' && a.resource === 'leases') return admitLease(node, a);
  return undefined;
}

/** The 403 message kube's admission.NewForbidden gives a refusal. */
export function admissionForbiddenMessage(a: Pick<AdmissionRequest, 'group' | 'resource' | 'name'>, refusal: string): string {
  return `${qualifiedResource(a.resource, a.group)} "${a.name}" is forbidden: ${refusal}`;
}
