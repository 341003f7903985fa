// What installing an operator from OperatorHub makes, as OpenShift's console makes it: in the
// namespace the operator is installed in, an OperatorGroup when there is none (all namespaces for
// an AllNamespaces install, in the cluster's global operator namespace; just that namespace for an
// OwnNamespace install) and a Subscription to the package's channel from its catalog, starting at
// the channel's head, with the approval chosen (Manual: each InstallPlan waits for an Approve).
// An OperatorGroup that is there already is used when it targets what the install mode needs, and
// is a problem said in words when it does not (OLM would leave the CSV Failed with
// UnsupportedOperatorGroup or TooManyOperatorGroups). Pure: the page does the requests.
import type * as api from '../../api/index.js';
import { isDnsLabel } from '../../common/dns-names.js';

/** Where AllNamespaces operators are installed (OpenShift's openshift-operators, with its global OperatorGroup). */
export const GLOBAL_OPERATORS_NAMESPACE = 'openshift-operators';
/** The annotation a CSV names its preferred namespace with. */
export const SUGGESTED_NAMESPACE = 'operatorframework.io/suggested-namespace';

export type InstallMode = 'AllNamespaces' | 'OwnNamespace';
export type Approval = 'Automatic' | 'Manual';

/** The install modes the console offers for a channel's head CSV: those it supports, of the two. */
export function offeredInstallModes(channel: api.PackageChannel | undefined): InstallMode[] {
  const supported = new Set((channel?.currentCSVDesc?.installModes ?? []).filter((m) => m.supported).map((m) => m.type));
  return (['AllNamespaces', 'OwnNamespace'] as const).filter((m) => supported.has(m));
}

/** The namespace offered for an install: the global one for AllNamespaces, else the CSV's suggestion or `fallback`. */
export function defaultInstallNamespace(mode: InstallMode, channel: api.PackageChannel | undefined, fallback: string): string {
  if (mode === 'AllNamespaces') return GLOBAL_OPERATORS_NAMESPACE;
  return channel?.currentCSVDesc?.annotations?.[SUGGESTED_NAMESPACE] ?? fallback;
}

/** Whether an OperatorGroup targets every namespace (no targetNamespaces, no selector). */
const targetsAll = (g: api.OperatorGroup) => !g.spec?.selector && (g.spec?.targetNamespaces ?? []).filter(Boolean).length === 0;
/** Whether it targets exactly its own namespace. */
const targetsOwn = (g: api.OperatorGroup) => !g.spec?.selector && (g.spec?.targetNamespaces ?? []).length === 1 && g.spec?.targetNamespaces?.[0] === g.metadata.namespace;

export type OperatorGroupPlan = { use: string } | { create: api.OperatorGroup } | { problem: string };

/** The OperatorGroup an install into `namespace` uses, makes, or why it cannot go there. */
export function operatorGroupPlan(mode: InstallMode, namespace: string, groups: api.OperatorGroup[]): OperatorGroupPlan {
  const inNamespace = groups.filter((g) => g.metadata.namespace === namespace);
  if (inNamespace.length > 1) {
    return { problem: `namespace ${namespace} has ${inNamespace.length} OperatorGroups (${inNamespace.map((g) => g.metadata.name).join(', ')}); OLM installs nothing in a namespace with more than one` };
  }
  const [group] = inNamespace;
  if (group) {
    if (mode === 'AllNamespaces' ? targetsAll(group) : targetsOwn(group)) return { use: group.metadata.name };
    const targets = group.spec?.selector ? 'the namespaces its selector picks' : targetsAll(group) ? 'all namespaces' : `namespaces ${(group.spec?.targetNamespaces ?? []).join(', ')}`;
    const wanted = mode === 'AllNamespaces' ? 'all namespaces' : `only ${namespace}`;
    return { problem: `namespace ${namespace} already has OperatorGroup ${group.metadata.name}, which targets ${targets}; this install mode needs one that targets ${wanted}: choose another namespace or install mode` };
  }
  // A generated name for a namespace's own group, as OpenShift's console names it (no name field at all).
  const metadata = mode === 'AllNamespaces' ? { name: 'global-operators', namespace } : { generateName: `${namespace}-`, namespace };
  const create = { apiVersion: 'operators.coreos.com/v1', kind: 'OperatorGroup', metadata, spec: mode === 'AllNamespaces' ? {} : { targetNamespaces: [namespace] } };
  return { create: create as unknown as api.OperatorGroup };
}

/** The Subscription to package `pkg`'s channel `channel`, in `namespace`. */
export function subscriptionFor(pkg: api.PackageManifest, channel: api.PackageChannel, namespace: string, approval: Approval): api.Subscription {
  return {
    apiVersion: 'operators.coreos.com/v1alpha1', kind: 'Subscription',
    metadata: { name: pkg.status.packageName, namespace },
    spec: {
      name: pkg.status.packageName,
      source: pkg.status.catalogSource,
      sourceNamespace: pkg.status.catalogSourceNamespace,
      channel: channel.name,
      startingCSV: channel.currentCSV,
      installPlanApproval: approval,
    },
  } as api.Subscription;
}

/** Why a namespace name cannot be used, or undefined (a DNS label, as the API server requires). */
export function namespaceProblem(name: string): string | undefined {
  if (!name) return 'choose the namespace to install the operator in';
  if (!isDnsLabel(name)) return `"${name}" is not a namespace name: lower-case letters, digits and '-', starting and ending with a letter or digit, at most 63 characters`;
  return undefined;
}
