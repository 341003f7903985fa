// The control plane's own components beside the API server on the host, as kube-controller-manager
// and kube-scheduler run beside kube-apiserver: the workload controllers (and the service CA), the scheduler and the
// machine approver (which needs the cloud, to check that a node's machine exists, and — once
// Cluster API manages the machines, i.e. Machines exist — a Machine with the node's address), and
// the cloud-credential controller (which mints the components' cloud credentials from their
// CredentialsRequests with the root credential: that credential stays on the host, in the cloud's
// data directory, instead of in a Secret of the cluster).
// Each under its Lease with short timings, so a restarted bring-up does not wait on its own old
// Lease.
import { CLUSTER_API_NAMESPACE, MACHINES } from '../../capi/api.js';
import { addCloudCredentialController } from '../../cloud-credential/controller.js';
import { bounded } from '../../common/bounded.js';
import { CloudClient } from '../../cloud/client.js';
import type * as api from '../../api/index.js';
import { KubeClient, isNotFound } from '../../kube/client.js';
import { Informer } from '../../kube/informer.js';
import { loadKubeConfig } from '../../kube/kubeconfig.js';
import { Manager } from '../../kube/manager.js';
import { machineApprover } from '../machine-approver.js';
import { SCHEDULER_COMPONENT, addScheduler } from '../scheduler/scheduler.js';
import { runWorkloadControllers, selectControllers } from '../workloads/run.js';

/** Lease timings for what the bring-up process runs itself, as `identity`: short, so that a
 *  restarted bring-up does not wait minutes for its own old Lease. */
export function shortLease(identity: string) {
  return { identity, leaseDurationMs: 15_000, renewDeadlineMs: 10_000, retryPeriodMs: 2_000 };
}

const SHORT_LEASE = shortLease('bring-up');
/** How long each component may take to stop after its abort. */
const PART_STOP_BOUND_MS = 15_000;

/** The Machines a node's certificate needs one of, once Cluster API manages the machines; before
 *  (the masters boot and register before Cluster API runs, as OpenShift's bootstrap approves
 *  theirs) — no Machine CRD served yet, or no Machine — undefined: the cloud's instance suffices. */
async function clusterApiMachines(client: KubeClient): Promise<api.Machine[] | undefined> {
  try {
    const machines = (await client.list(MACHINES, CLUSTER_API_NAMESPACE)).items;
    return machines.length ? machines : undefined;
  } catch (e) {
    if (isNotFound(e)) return undefined;
    throw e;
  }
}

export interface ControlPlane {
  stop(): Promise<void>;
}

/** What the machine approver may do in the cloud: look at instances, nothing else. */
const APPROVER_IDENTITY = { name: 'machine-approver', actions: ['instances:describe'] };

/** A client of the cloud as the machine approver, with a credential of its own (issued anew at each start: it lives only in memory). */
async function approverCloud(root: CloudClient, url: string): Promise<CloudClient> {
  const put = await root.putIdentity(APPROVER_IDENTITY.name, APPROVER_IDENTITY.actions);
  return new CloudClient(url, put.credential ?? (await root.rotateCredential(APPROVER_IDENTITY.name)).credential);
}

/** Each component connects on its own, as its own process would. `cloud` holds the root credential. */
export async function startControlPlane(kubeconfigPath: string, cloud: CloudClient, cloudUrl: string, say: (line: string) => void): Promise<ControlPlane> {
  const stop = new AbortController();
  const report = (what: string) => (e: unknown) => say(`      the ${what} stopped: ${(e as Error).message}`);
  // With the service CA, which issues the components' metrics serving certificates.
  const workloads = runWorkloadControllers({ kubeconfig: loadKubeConfig(kubeconfigPath), signal: stop.signal, leaderElection: SHORT_LEASE, controllers: selectControllers('*,service-ca') }).catch(report('controller manager'));
  const scheduler = new Manager({ ...SCHEDULER_COMPONENT, kubeconfig: loadKubeConfig(kubeconfigPath), leaderElection: { ...SCHEDULER_COMPONENT.lease, ...SHORT_LEASE } });
  addScheduler(scheduler);
  const scheduling = scheduler.start(stop.signal).catch(report('scheduler'));
  const approverClient = new KubeClient(loadKubeConfig(kubeconfigPath));
  const machineChanges = new Informer<api.Machine>(approverClient, MACHINES, { namespace: CLUSTER_API_NAMESPACE });
  const approving = approverCloud(cloud, cloudUrl).then((c) => machineApprover({ client: approverClient, cloud: c, machines: () => clusterApiMachines(approverClient), machineChanges }).run(stop.signal)).catch(report('machine approver'));
  const credentials = new Manager({ name: 'cloud-credential-operator', kubeconfig: loadKubeConfig(kubeconfigPath), leaderElection: { namespace: 'kube-system', name: 'cloud-credential-operator', ...SHORT_LEASE } });
  addCloudCredentialController(credentials, cloud);
  const minting = credentials.start(stop.signal).catch(report('cloud-credential controller'));
  return {
    async stop() {
      stop.abort();
      // Each ends once its loops see the abort; one that does not is named rather than waited for.
      const parts = { 'the controller manager': workloads, 'the scheduler': scheduling, 'the machine approver': approving, 'the cloud-credential controller': minting };
      const stuck = (await Promise.all(Object.entries(parts).map(([what, running]) => bounded(running, PART_STOP_BOUND_MS, `${what} stopping`).then(() => undefined, (e: Error) => e.message)))).filter(Boolean);
      if (stuck.length > 0) throw new Error(stuck.join('; '));
    },
  };
}
