// The Cluster API objects that make a local cluster manage its own machines, for the install to
// apply (pure: it only builds them): the Cluster and its LocalCluster; the masters adopted as
// Machines — a LocalMachine named as each running master instance finds that instance by name
// instead of creating one, and the Machine (labelled cluster.x-k8s.io/control-plane) links to its
// Node by providerID; the workers as a MachineDeployment over a LocalMachineTemplate, booting from
// the MCO's worker-user-data; and a MachineHealthCheck that replaces workers whose Node stays
// NotReady or Unknown past the timeout, within a remediation limit.
import type * as api from '../api/index.js';
import { API_VERSION, CLUSTER_API_NAMESPACE, INFRA_API_VERSION, INFRA_GROUP, LABEL } from './api.js';

export interface LocalClusterSpec {
  /** The Cluster's name (labels every machine: cluster.x-k8s.io/cluster-name). */
  name: string;
  /** The API server's address. */
  apiServer: { host: string; port: number };
  /** The Kubernetes version the machines run (spec.version). */
  version: string;
  /** Running master instances to adopt, by instance name (= Node name). */
  masters: { name: string; instanceType: string; zone: string }[];
  workers: { replicas: number; instanceType: string };
  /** How long a worker's Node may be NotReady/Unknown before it is replaced (default 30 s). */
  unhealthySeconds?: number;
  /** How long a new worker may take to become a Node (default 600 s). */
  nodeStartupSeconds?: number;
  /** The most unhealthy workers remediated at once (default "40%"). */
  maxUnhealthy?: number | string;
  namespace?: string;
}

const WORKER_ROLE = 'cluster.x-k8s.io/deployment-name';

/** The objects of a local cluster, each typed as its kind. */
export type LocalClusterObject = api.LocalCluster | api.Cluster | api.LocalMachine | api.Machine | api.LocalMachineTemplate | api.MachineDeployment | api.MachineHealthCheck;

export function localClusterObjects(spec: LocalClusterSpec): LocalClusterObject[] {
  const namespace = spec.namespace ?? CLUSTER_API_NAMESPACE;
  const meta = (name: string, labels: Record<string, string> = {}) => ({ name, namespace, labels: { [LABEL.clusterName]: spec.name, ...labels } });
  const infraRef = (kind: string, name: string) => ({ apiGroup: INFRA_GROUP, kind, name });
  const masters = spec.masters.flatMap((m) => [
    { apiVersion: INFRA_API_VERSION, kind: 'LocalMachine', metadata: meta(m.name, { [LABEL.controlPlane]: '' }), spec: { instanceType: m.instanceType } } satisfies api.LocalMachine,
    {
      apiVersion: API_VERSION, kind: 'Machine', metadata: meta(m.name, { [LABEL.controlPlane]: '' }),
      spec: { clusterName: spec.name, bootstrap: { dataSecretName: 'master-user-data' }, infrastructureRef: infraRef('LocalMachine', m.name), version: spec.version, failureDomain: m.zone },
    } satisfies api.Machine,
  ]);
  const workerLabels = { [WORKER_ROLE]: 'worker' };
  const unhealthy = spec.unhealthySeconds ?? 30;
  return [
    { apiVersion: INFRA_API_VERSION, kind: 'LocalCluster', metadata: meta(spec.name), spec: { controlPlaneEndpoint: spec.apiServer } } satisfies api.LocalCluster,
    { apiVersion: API_VERSION, kind: 'Cluster', metadata: meta(spec.name), spec: { controlPlaneEndpoint: spec.apiServer, infrastructureRef: infraRef('LocalCluster', spec.name) } } satisfies api.Cluster,
    ...masters,
    { apiVersion: INFRA_API_VERSION, kind: 'LocalMachineTemplate', metadata: meta('worker'), spec: { template: { spec: { instanceType: spec.workers.instanceType } } } } satisfies api.LocalMachineTemplate,
    {
      apiVersion: API_VERSION, kind: 'MachineDeployment', metadata: meta('worker'),
      spec: {
        clusterName: spec.name,
        replicas: spec.workers.replicas,
        selector: { matchLabels: workerLabels },
        rollout: { strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 1, maxUnavailable: 0 } } },
        template: {
          metadata: { labels: workerLabels },
          spec: { clusterName: spec.name, bootstrap: { dataSecretName: 'worker-user-data' }, infrastructureRef: infraRef('LocalMachineTemplate', 'worker'), version: spec.version },
        },
      },
    } satisfies api.MachineDeployment,
    {
      apiVersion: API_VERSION, kind: 'MachineHealthCheck', metadata: meta('worker'),
      spec: {
        clusterName: spec.name,
        selector: { matchLabels: workerLabels },
        checks: {
          nodeStartupTimeoutSeconds: spec.nodeStartupSeconds ?? 600,
          unhealthyNodeConditions: [{ type: 'Ready', status: 'False', timeoutSeconds: unhealthy }, { type: 'Ready', status: 'Unknown', timeoutSeconds: unhealthy }],
        },
        remediation: { triggerIf: { unhealthyLessThanOrEqualTo: spec.maxUnhealthy ?? '40%' } },
      },
    } satisfies api.MachineHealthCheck,
  ];
}
