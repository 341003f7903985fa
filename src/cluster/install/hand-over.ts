// The hand-over from the bootstrap to the masters, as OpenShift's bootstrap completes: each
// bootstrap component stops once the pod that replaces it runs on a master — it releases its
// Lease on stopping, and the pod, waiting on that Lease, takes over:
//   the CVO and the machine-config and cloud-controller-manager operators when their payload
//     Deployments have an available replica (the operator then keeps its controller Deployment and server DaemonSet);
//   the machine-config controller when its Deployment is available;
//   the bootstrap machine-config server when every master's server pod is ready (the install then
//     takes it out of api-int).
import type * as api from '../../api/index.js';
import type { KubeClient } from '../../kube/client.js';
import { resources } from '../../kube/resources.js';
import { rolledOut } from '../../kube/rollout.js';
import type { Bootstrap } from './bootstrap.js';
import type { Progress } from './progress.js';

const MCO = 'openshift-machine-config-operator';

/** A Deployment's rollout, with what it shows meanwhile. */
export function deploymentReady(d: api.Deployment | undefined): { done: boolean; status: string } {
  if (!d) return { done: false, status: 'not created yet' };
  const s: NonNullable<api.Deployment['status']> = d.status ?? {};
  return { done: rolledOut(d), status: `${s.availableReplicas ?? 0}/${d.spec?.replicas ?? 1} available, ${s.updatedReplicas ?? 0} updated` };
}

export function daemonSetReady(ds: api.DaemonSet | undefined, nodes: number): { done: boolean; status: string } {
  if (!ds) return { done: false, status: 'not created yet' };
  const s: Partial<NonNullable<api.DaemonSet['status']>> = ds.status ?? {};
  const done = (s.observedGeneration ?? 0) >= (ds.metadata.generation ?? 0) && (s.numberReady ?? 0) >= nodes && (s.desiredNumberScheduled ?? 0) >= nodes;
  return { done, status: `${s.numberReady ?? 0}/${s.desiredNumberScheduled ?? 0} ready` };
}

export async function handOver(o: { client: KubeClient; bootstrap: Bootstrap; progress: Progress; masters: number }): Promise<void> {
  const { client, bootstrap, progress } = o;
  const deployment = (namespace: string, name: string) => async () => deploymentReady(await client.read(resources.deployments, name, namespace));
  const timeoutMs = 240_000;
  await progress.waitFor('the cluster-version operator pod', deployment('openshift-cluster-version', 'cluster-version-operator'), { timeoutMs });
  await progress.waitFor('the machine-config operator pod', deployment(MCO, 'machine-config-operator'), { timeoutMs });
  await progress.waitFor('the cloud-controller-manager operator pod', deployment('openshift-cloud-controller-manager-operator', 'cluster-cloud-controller-manager-operator'), { timeoutMs });
  await bootstrap.stopParts('cvo', 'operator', 'ccm-operator');
  progress.detail('hand-over: the bootstrap cluster-version, machine-config and cloud-controller-manager operators stopped; their pods take their Leases');
  await progress.waitFor('the machine-config controller pod', deployment(MCO, 'machine-config-controller'), { timeoutMs });
  await bootstrap.stopParts('controller');
  await progress.waitFor(`the machine-config server on ${o.masters} master${o.masters === 1 ? '' : 's'}`, async () => daemonSetReady(await client.read(resources.daemonSets, 'machine-config-server', MCO), o.masters), { timeoutMs });
  await bootstrap.stopParts('server');
  progress.detail('hand-over: the bootstrap machine-config controller and server stopped');
}
