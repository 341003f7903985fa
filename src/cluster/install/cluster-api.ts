// The install hands the cluster's machines to Cluster API, as OpenShift's installer leaves them to
// the Machine API: once the payload's Cluster API controllers run on the masters and have copied
// the MCO's user data into openshift-cluster-api as bootstrap data, it creates the Cluster and its
// LocalCluster, adopts the running masters as control plane Machines (their LocalMachines find
// the instances by name), and creates the workers through MachineDeployment `worker` with
// MachineHealthCheck `worker` (src/capi/local-cluster.ts) — then waits until the workers' Machines
// run with Ready nodes. It creates them once Cluster API's admission webhooks answer, since every
// write of its kinds goes through them: both webhook configurations stored (the CVO applies them
// after the controllers' Deployment is healthy), the service CA's bundle in every webhook, and a
// dry run passing through them. A dry run alone passed while the configurations did not exist yet
// and the objects then raced the CVO's create and the injection: a write between the two was sent
// with no caBundle and failed ("self-signed certificate in certificate chain"). Only what is
// missing is created, so a second pass changes nothing.
import { CLUSTER_API_NAMESPACE, LABEL, MACHINES } from '../../capi/api.js';
import { CONTROLLERS_DEPLOYMENT } from '../../capi/cluster-operator.js';
import { MUTATING_CONFIGURATION, VALIDATING_CONFIGURATION } from '../../capi/webhooks.js';
import { localClusterObjects } from '../../capi/local-cluster.js';
import type { Instance } from '../../cloud/types.js';
import type * as api from '../../api/index.js';
import type { KubeClient } from '../../kube/client.js';
import { resources } from '../../kube/resources.js';
import { KUBELET_VERSION } from '../node-agent/node-object.js';
import { API_INT_ADDRESS } from './api-int.js';
import { INFRASTRUCTURE_NAME, createMissing } from './cluster-facts.js';
import { deploymentReady } from './hand-over.js';
import type { Progress } from './progress.js';
import { isNodeReady } from '../../kube/readiness.js';

/** The label of the workers' Machines (MachineDeployment `worker`). */
const WORKER_SELECTOR = `${LABEL.deploymentName}=worker`;
/** The most workers the health check replaces at once: more unhealthy at the same time looks like
 *  a cluster-wide failure (the cloud, the network), which new machines would not fix. */
const MAX_UNHEALTHY = 1;

export interface ClusterApiWorkers {
  client: KubeClient;
  progress: Progress;
  /** The running masters, adopted as Machines. */
  masters: Instance[];
  apiPort: number;
  workers: number;
  instanceType: string;
}

export async function workersThroughClusterApi(o: ClusterApiWorkers): Promise<void> {
  const { client, progress } = o;
  await progress.waitFor('the Cluster API controllers and the bootstrap data they copy', async () => {
    const deployment = deploymentReady(await client.read(resources.deployments, CONTROLLERS_DEPLOYMENT, CLUSTER_API_NAMESPACE));
    const copied = await Promise.all(['worker-user-data', 'master-user-data'].map(async (name) => (await client.read(resources.secrets, name, CLUSTER_API_NAMESPACE))?.data?.value !== undefined));
    const webhooks = deployment.done ? await webhooksAnswer(client) : 'waiting for the controllers';
    return { done: deployment.done && copied.every(Boolean) && webhooks === 'answering', status: `controllers ${deployment.status}; bootstrap data ${copied.filter(Boolean).length}/2 copied; webhooks ${webhooks}` };
  }, { timeoutMs: 180_000 });
  const objects = localClusterObjects({
    name: INFRASTRUCTURE_NAME,
    apiServer: { host: API_INT_ADDRESS, port: o.apiPort },
    version: KUBELET_VERSION.split('+')[0],
    masters: o.masters.map((m) => ({ name: m.name, instanceType: m.type, zone: m.zone })),
    workers: { replicas: o.workers, instanceType: o.instanceType },
    maxUnhealthy: MAX_UNHEALTHY,
  });
  // localClusterObjects' objects are still untyped (src/capi).
  await createMissing(client, objects as api.KubeObject[]);
  progress.detail(`Cluster ${INFRASTRUCTURE_NAME}, ${o.masters.length} masters adopted as Machines, MachineDeployment worker (${o.workers} replicas) and MachineHealthCheck worker in ${CLUSTER_API_NAMESPACE}`);
  await progress.waitFor(`${o.masters.length} master Machines adopted`, async () => machinesRunning(client, LABEL.controlPlane, o.masters.length), { timeoutMs: 120_000 });
  await progress.waitFor(`${o.workers} worker Machine${o.workers === 1 ? '' : 's'} Running with Ready nodes`, async () => machinesRunning(client, WORKER_SELECTOR, o.workers), { timeoutMs: 240_000 });
  for (const m of await machinesOf(client, WORKER_SELECTOR)) {
    const ip = (m.status?.addresses ?? []).find((a) => a.type === 'InternalIP')?.address ?? '';
    progress.detail(`${String(m.metadata.name).padEnd(28)} ${String(m.spec.providerID).replace('local://', '')}  ${ip.padEnd(12)} ${m.spec.failureDomain ?? m.status?.failureDomain ?? ''}`);
  }
}

/**
 * Whether Cluster API's admission webhooks answer: 'answering', or what is missing. Both
 * configurations must be stored with the service CA's bundle in every webhook (a webhook without
 * one is called trusting the system's roots, which never verify the service CA), and a dry-run
 * create must pass through them (their Service has the controllers' endpoint, the server serves
 * the certificate the bundle verifies); it stores nothing.
 */
export async function webhooksAnswer(client: KubeClient): Promise<string> {
  const configurations = await Promise.all([
    client.read(resources.mutatingWebhookConfigurations, MUTATING_CONFIGURATION),
    client.read(resources.validatingWebhookConfigurations, VALIDATING_CONFIGURATION),
  ]);
  const missing = [MUTATING_CONFIGURATION, VALIDATING_CONFIGURATION].filter((_, i) => !configurations[i]);
  if (missing.length > 0) return `not answering yet (${missing.join(' and ')} not created yet)`;
  const uninjected = configurations.filter((c) => (c?.webhooks ?? []).some((w) => !w.clientConfig?.caBundle)).map((c) => c?.metadata.name);
  if (uninjected.length > 0) return `not answering yet (the service CA's bundle not injected into ${uninjected.join(' and ')} yet)`;
  const probe = { apiVersion: 'infrastructure.cluster.x-k8s.io/v1beta2', kind: 'LocalMachineTemplate', metadata: { name: 'webhook-probe', namespace: CLUSTER_API_NAMESPACE }, spec: { template: { spec: {} } } };
  try {
    await client.create(resources.localMachineTemplates, probe, { dryRun: 'All' });
    return 'answering';
  } catch (e) {
    return `not answering yet (${(e as Error).message})`;
  }
}

async function machinesOf(client: KubeClient, labelSelector: string): Promise<api.Machine[]> {
  return (await client.list(MACHINES, CLUSTER_API_NAMESPACE, { labelSelector })).items.filter((m) => !m.metadata.deletionTimestamp);
}

/** Done when `count` Machines of the selector are Running with a Ready node. */
async function machinesRunning(client: KubeClient, labelSelector: string, count: number): Promise<{ done: boolean; status: string }> {
  const machines = await machinesOf(client, labelSelector);
  const nodes = new Map((await client.list(resources.nodes)).items.map((n) => [n.metadata.name, n]));
  const ready = machines.filter((m) => m.status?.phase === 'Running' && isNodeReady(nodes.get(m.status?.nodeRef?.name ?? '')));
  const phases = machines.map((m) => `${m.metadata.name} ${m.status?.phase ?? 'Pending'}`).sort();
  return { done: machines.length === count && ready.length === count, status: `${ready.length}/${count} Running with a Ready node${phases.length ? ` (${phases.join(', ')})` : ''}` };
}
