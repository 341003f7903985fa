// A ClusterServiceVersion's phase (pure), as OLM's operator moves it. Each sync observes the world
// and this decides the phase, its reason and message, and whether the install strategy is to be
// applied. In order of precedence:
//
//   a newer CSV replaces it (spec.replaces) and has Succeeded → Deleting (Replaced); then deleted
//   a newer CSV replaces it, not Succeeded yet                → Replacing (BeingReplaced); its
//                                                                Deployments keep running
//   no OperatorGroup in the namespace                         → Failed (NoOperatorGroup)
//   more than one                                             → Failed (TooManyOperatorGroups)
//   the group's targets need an install mode it lacks         → Failed (UnsupportedOperatorGroup)
//   a required or owned CRD missing or not Established        → Pending (RequirementsNotMet)
//   Pending (or new), requirements met                        → InstallReady (AllRequirementsMet)
//   InstallReady                                              → Installing (InstallWaiting): apply
//   Installing, a Deployment past its progress deadline       → Failed (InstallCheckFailed)
//   Installing, every Deployment Available                    → Succeeded (InstallSucceeded)
//   Succeeded, a Deployment no longer Available               → Failed (ComponentUnhealthy)
//   Failed for its Deployments, all Available again           → Succeeded (InstallSucceeded)
// The strategy is applied in Installing, Succeeded and when Failed for its Deployments (so an
// edited CSV or a deleted Deployment is repaired), never while Replacing or Deleting.
import type * as api from '../api/index.js';

export type InstallModeType = 'OwnNamespace' | 'SingleNamespace' | 'MultiNamespace' | 'AllNamespaces';

export interface DeploymentHealth {
  name: string;
  /** available: rolled out and Available; failed: past its progress deadline; else waiting. */
  state: 'available' | 'waiting' | 'failed' | 'missing';
  message: string;
}

export interface CsvObservation {
  phase: string;
  reason?: string;
  replacedBy?: { name: string; succeeded: boolean };
  /** The OperatorGroup problem (reason and message), if any. */
  groupProblem?: { reason: string; message: string };
  requirements: api.RequirementStatus[];
  deployments: DeploymentHealth[];
}

export interface CsvDecision {
  phase: string;
  reason: string;
  message: string;
  /** Apply the install strategy (Deployments, ServiceAccounts, RBAC). */
  install: boolean;
  /** Delete the CSV (Deleting reached). */
  remove: boolean;
}

const DEPLOYMENT_FAILURES = new Set(['InstallCheckFailed', 'ComponentUnhealthy']);

export function nextCsvPhase(o: CsvObservation): CsvDecision {
  const decide = (phase: string, reason: string, message: string, install = false, remove = false): CsvDecision => ({ phase, reason, message, install, remove });
  if (o.replacedBy?.succeeded) return decide('Deleting', 'Replaced', `has been replaced by a newer ClusterServiceVersion that has successfully installed: ${o.replacedBy.name}`, false, true);
  if (o.replacedBy) return decide('Replacing', 'BeingReplaced', `being replaced by csv: ${o.replacedBy.name}`);
  if (o.groupProblem) return decide('Failed', o.groupProblem.reason, o.groupProblem.message);
  const missing = o.requirements.filter((r) => r.status !== 'Present');
  if (missing.length > 0) return decide('Pending', 'RequirementsNotMet', `one or more requirements couldn't be found: ${missing.map((r) => `${r.kind} ${r.name} (${r.message})`).join(', ')}`);
  const failed = o.deployments.find((d) => d.state === 'failed');
  const notAvailable = o.deployments.find((d) => d.state !== 'available');
  const allAvailable = !notAvailable;
  switch (o.phase) {
    case '':
    case 'Pending':
      return decide('InstallReady', 'AllRequirementsMet', 'all requirements found, attempting install');
    case 'InstallReady':
      return decide('Installing', 'InstallWaiting', 'installing: waiting for deployments to be created', true);
    case 'Installing':
      if (failed) return decide('Failed', 'InstallCheckFailed', `install failed: deployment ${failed.name} not ready before timeout: ${failed.message}`, true);
      if (allAvailable && o.deployments.length > 0) return decide('Succeeded', 'InstallSucceeded', 'install strategy completed with no errors', true);
      if (allAvailable) return decide('Succeeded', 'InstallSucceeded', 'install strategy completed with no errors (it has no deployments)', true);
      return decide('Installing', 'InstallWaiting', `installing: waiting for deployment ${notAvailable!.name} to become ready: ${notAvailable!.message}`, true);
    case 'Succeeded':
      if (allAvailable) return decide('Succeeded', 'InstallSucceeded', 'install strategy completed with no errors', true);
      return decide('Failed', 'ComponentUnhealthy', `installing: deployment ${notAvailable!.name} is not ready: ${notAvailable!.message}`, true);
    case 'Failed':
      if (DEPLOYMENT_FAILURES.has(o.reason ?? '')) {
        if (allAvailable) return decide('Succeeded', 'InstallSucceeded', 'install strategy completed with no errors', true);
        return decide('Failed', o.reason!, failed ? `install failed: deployment ${failed.name} not ready before timeout: ${failed.message}` : `deployment ${notAvailable!.name} is not ready: ${notAvailable!.message}`, true);
      }
      // Failed for a reason now gone (the OperatorGroup was fixed): start again.
      return decide('Pending', 'NeedsReinstall', 'requirements are met again; installing anew');
    default:
      // Replacing/Deleting whose replacement went away, or a phase this does not know: start again.
      return decide('Pending', 'NeedsReinstall', `phase ${o.phase} no longer holds; installing anew`);
  }
}

/** The install mode an OperatorGroup's target namespaces ask of an operator in `namespace`. */
export function installModeFor(targets: readonly string[], namespace: string): InstallModeType {
  if (targets.length === 0 || (targets.length === 1 && targets[0] === '')) return 'AllNamespaces';
  if (targets.length === 1) return targets[0] === namespace ? 'OwnNamespace' : 'SingleNamespace';
  return 'MultiNamespace';
}

/** The OperatorGroup problem of a CSV in `namespace` given the namespace's groups, or undefined. */
export function operatorGroupProblem(csv: api.ClusterServiceVersion, groups: readonly api.OperatorGroup[]): { reason: string; message: string } | undefined {
  const namespace = csv.metadata.namespace ?? '';
  if (groups.length === 0) return { reason: 'NoOperatorGroup', message: `csv in namespace ${namespace} with no operatorgroups: create an OperatorGroup (kind OperatorGroup, operators.coreos.com/v1) in ${namespace}` };
  if (groups.length > 1) return { reason: 'TooManyOperatorGroups', message: `csv created in namespace with multiple operatorgroups, can't pick one automatically: ${groups.map((g) => g.metadata.name).sort().join(', ')}` };
  const group = groups[0];
  const targets = group.status?.namespaces;
  if (!targets) return { reason: 'OperatorGroupNotReady', message: `OperatorGroup ${group.metadata.name} has not resolved its target namespaces yet` };
  const mode = installModeFor(targets, namespace);
  const supported = (csv.spec.installModes ?? []).some((m) => m.type === mode && m.supported);
  if (!supported) {
    const offered = (csv.spec.installModes ?? []).filter((m) => m.supported).map((m) => m.type);
    return { reason: 'UnsupportedOperatorGroup', message: `OperatorGroup ${group.metadata.name} targets ${targets[0] === '' ? 'all namespaces' : targets.join(', ')}, which needs install mode ${mode}; this ClusterServiceVersion supports ${offered.join(', ') || 'no install mode'}` };
  }
  return undefined;
}

/** A Deployment's health as the CSV judges it. */
export function deploymentHealth(name: string, d: api.Deployment | undefined): DeploymentHealth {
  if (!d) return { name, state: 'missing', message: 'not created yet' };
  const conditions = d.status?.conditions ?? [];
  const progressing = conditions.find((c) => c.type === 'Progressing');
  if (progressing?.status === 'False' && progressing.reason === 'ProgressDeadlineExceeded') return { name, state: 'failed', message: progressing.message ?? 'progress deadline exceeded' };
  const want = d.spec?.replicas ?? 1;
  const observed = (d.status?.observedGeneration ?? 0) >= (d.metadata.generation ?? 0);
  const available = conditions.some((c) => c.type === 'Available' && c.status === 'True');
  if (observed && available && (d.status?.updatedReplicas ?? 0) >= want && (d.status?.availableReplicas ?? 0) >= want) return { name, state: 'available', message: 'available' };
  return { name, state: 'waiting', message: `${d.status?.availableReplicas ?? 0} of ${want} replicas available` };
}
