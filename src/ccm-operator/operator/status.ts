// ClusterOperator/cloud-controller-manager's status, as a pure function of what the operator
// found: the four conditions OpenShift's operators report and the version, which is reported only
// once there is nothing left to roll out — no CCM for the platform, or the CCM Deployment rolled
// out at this release (observedGeneration caught up, every replica updated and available, as the
// Deployment controller writes them). Until then the versions already reported stay, so the CVO
// keeps waiting during an update.
import type * as api from '../../api/index.js';
import { type Condition, setCondition } from '../../kube/index.js';
import { rolledOut } from './operands.js';
import type { PlatformDecision } from './platform.js';

export const CLUSTER_OPERATOR = 'cloud-controller-manager';

export interface StatusInput {
  version: string;
  /** Undefined while Infrastructure/cluster names no platform. */
  decision?: PlatformDecision;
  /** The CCM Deployment as last written or read (with its status). */
  deployment?: api.Deployment;
  /** What of this release the operator still waits for before it can deploy (its images). */
  waiting?: string;
  /** Why the operator cannot do its work (a sync failing again and again, a missing cloud config). */
  failure?: { reason: string; message: string };
  /** The ClusterOperator's current status. */
  current?: api.ClusterOperator;
}

export interface OperatorStatus {
  conditions: Condition[];
  versions?: Array<{ name: string; version: string }>;
}

const ok = (type: string): Condition => ({ type, status: type === 'Progressing' || type === 'Degraded' ? 'False' : 'True', reason: 'AsExpected', message: '' });

export function operatorStatus(input: StatusInput, now: Date = new Date()): OperatorStatus {
  const { version, decision, deployment, failure, current } = input;
  const previous: Condition[] = current?.status?.conditions ?? [];
  const reported: OperatorStatus['versions'] = current?.status?.versions?.length ? current.status.versions : undefined;
  const done = [{ name: 'operator', version }];
  const set = (list: Condition[], c: Condition) => setCondition(list, c, now);
  let conditions = previous;

  if (failure) {
    conditions = set(conditions, { type: 'Degraded', status: 'True', reason: failure.reason, message: `Failed to resync for operator: ${version} because ${failure.message}` });
    conditions = set(conditions, { type: 'Upgradeable', status: 'False', reason: failure.reason, message: 'The operator cannot reconcile its cloud controller manager; see Degraded' });
    // Available stays as it was (the CCM may well be running); unknown at first means False.
    if (!conditions.some((c) => c.type === 'Available')) conditions = set(conditions, { type: 'Available', status: 'False', reason: failure.reason, message: 'No cloud controller manager is running yet; see Degraded' });
    if (!conditions.some((c) => c.type === 'Progressing')) conditions = set(conditions, { type: 'Progressing', status: 'True', reason: failure.reason, message: `Progressing towards operator: ${version}` });
    return { conditions, versions: reported };
  }

  if (!decision) {
    conditions = set(conditions, { type: 'Available', status: 'False', reason: 'WaitingForInfrastructure', message: 'Infrastructure/cluster names no platform yet (status.platformStatus.type)' });
    conditions = set(conditions, { type: 'Progressing', status: 'True', reason: 'WaitingForInfrastructure', message: `Progressing towards operator: ${version}` });
    conditions = set(conditions, ok('Degraded'));
    conditions = set(conditions, ok('Upgradeable'));
    return { conditions, versions: reported };
  }

  if (!decision.deploy) {
    conditions = set(conditions, { type: 'Available', status: 'True', reason: 'NoCloudControllerManager', message: `Cluster Cloud Controller Manager Operator is available at ${version}: ${decision.message}` });
    for (const type of ['Progressing', 'Degraded', 'Upgradeable']) conditions = set(conditions, ok(type));
    return { conditions, versions: done };
  }

  if (input.waiting) {
    conditions = set(conditions, { type: 'Progressing', status: 'True', reason: 'WaitingForRelease', message: `Progressing towards operator: ${version}: ${input.waiting}` });
    if (!conditions.some((c) => c.type === 'Available')) conditions = set(conditions, { type: 'Available', status: 'False', reason: 'WaitingForRelease', message: input.waiting });
    conditions = set(conditions, ok('Degraded'));
    conditions = set(conditions, ok('Upgradeable'));
    return { conditions, versions: reported };
  }

  const name = `${deployment?.metadata?.namespace}/${deployment?.metadata?.name}`;
  const want = deployment?.spec?.replicas ?? 1;
  const st: NonNullable<api.Deployment['status']> = deployment?.status ?? {};
  const counts = `${st.updatedReplicas ?? 0} of ${want} updated, ${st.availableReplicas ?? 0} available`;
  if (rolledOut(deployment)) {
    conditions = set(conditions, { type: 'Available', status: 'True', reason: 'AsExpected', message: `Cluster Cloud Controller Manager Operator is available at ${version}: deployment ${name} runs ${want} of ${want} replicas` });
    for (const type of ['Progressing', 'Degraded', 'Upgradeable']) conditions = set(conditions, ok(type));
    return { conditions, versions: done };
  }
  conditions = set(conditions, (st.availableReplicas ?? 0) > 0
    ? { type: 'Available', status: 'True', reason: 'AsExpected', message: `deployment ${name} has ${st.availableReplicas} available replicas while it rolls out` }
    : { type: 'Available', status: 'False', reason: 'DeploymentUnavailable', message: `deployment ${name} has no available replica yet (${counts})` });
  conditions = set(conditions, { type: 'Progressing', status: 'True', reason: 'SyncingResources', message: `Progressing towards operator: ${version}: deployment ${name}: ${counts}` });
  const stalled = (st.conditions ?? []).find((c) => c.type === 'Progressing' && c.status === 'False' && c.reason === 'ProgressDeadlineExceeded');
  conditions = set(conditions, stalled
    ? { type: 'Degraded', status: 'True', reason: 'DeploymentStalled', message: `deployment ${name} does not roll out: ${stalled.message ?? 'ProgressDeadlineExceeded'}` }
    : ok('Degraded'));
  conditions = set(conditions, ok('Upgradeable'));
  return { conditions, versions: reported };
}
