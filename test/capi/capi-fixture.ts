// A cluster for the Cluster API tests: the API server as a cluster runs it (evictions with
// disruption budgets, garbage collection), the Cluster API CRDs from release-payload/manifests,
// the namespace openshift-cluster-api, a local cloud, and the Cluster API controllers on a
// component manager — plus the objects a cluster's workers come from (Cluster, LocalCluster,
// LocalMachineTemplate, bootstrap data), and `kubelets`: for tests that exercise the controllers
// rather than the node agent, a loop that plays each running instance's kubelet and cloud
// controller manager — a Ready Node named as the instance, with providerID local://<id> — and
// removes the Node when the instance is gone.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startClusterServer, type ClusterServer } from '../../src/apiserver/cluster-server.js';
import { API_VERSION, CLUSTER_API_NAMESPACE, INFRA_API_VERSION, MACHINES } from '../../src/capi/api.js';
import { addClusterApiControllers } from '../../src/capi/controllers.js';
import { CLUSTER_API_CRDS } from '../../src/capi/crds.js';
import { webhookConfigurations } from '../../src/capi/webhooks.js';
import type * as api from '../../src/api/index.js';
import { KubeClient, Manager, type Obj, isNotFound, loadKubeConfig, resources, rfc3339 } from '../../src/kube/index.js';
import { repositoryRoot } from '../../src/cli/release.js';
import { setLogLevel } from '../../src/common/log.js';
import { runKubectl, type KubectlResult } from '../helpers/apiserver.js';
import { eventually } from '../helpers/eventually.js';
import { startCloud, type CloudFixture } from '../cloud/cloud-fixture.js';
import type { ServeOptions } from '../../src/cloud/service.js';
import type { Listen } from '../../src/kube/manager.js';

// The servers' routine lines (audit, cloud) would bury a failure's output.
setLogLevel(process.env.BOSUN_LOG_LEVEL ?? 'warn');

export const NS = CLUSTER_API_NAMESPACE;
export const CLUSTER = 'local';
/** The release the controllers report on ClusterOperator/cluster-api. */
export const RELEASE = '1.0.0';
/** The smallest Ignition config a machine boots from: nothing to write, no kubelet. */
export const EMPTY_IGNITION = JSON.stringify({ ignition: { version: '3.4.0' } });

/** A control-plane provider unknown to bosun, as a third party ships one: the contract label names its version. */
export const TEST_CONTROL_PLANE_GROUP = 'controlplane.test.bosun.io';
export const TEST_CONTROL_PLANE_CRD = {
  apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition',
  metadata: { name: `testcontrolplanes.${TEST_CONTROL_PLANE_GROUP}`, labels: { 'cluster.x-k8s.io/v1beta2': 'v1beta2' } },
  spec: {
    group: TEST_CONTROL_PLANE_GROUP, scope: 'Namespaced',
    names: { kind: 'TestControlPlane', listKind: 'TestControlPlaneList', plural: 'testcontrolplanes', singular: 'testcontrolplane' },
    versions: [{ name: 'v1beta2', served: true, storage: true, subresources: { status: {} }, schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } }],
  },
};
export const testControlPlanes = { group: TEST_CONTROL_PLANE_GROUP, version: 'v1beta2', resource: 'testcontrolplanes', namespaced: true };

export interface CapiCluster {
  api: ClusterServer;
  kube: KubeClient;
  cloud: CloudFixture;
  manager: Manager;
  kubectl(args: string[], input?: string): Promise<KubectlResult>;
  kubectlOk(args: string[], input?: string): Promise<string>;
  close(): Promise<void>;
}

/** Applies every Cluster API CRD of the payload and waits until each is served. */
export async function installCrds(kubectlOk: CapiCluster['kubectlOk']): Promise<void> {
  const dir = join(repositoryRoot, 'release-payload/manifests');
  for (const { file } of CLUSTER_API_CRDS) await kubectlOk(['apply', '-f', join(dir, file)]);
  for (const { crd } of CLUSTER_API_CRDS) await kubectlOk(['wait', '--for=condition=Established', `crd/${crd.metadata.name}`, '--timeout=20s']);
}

/**
 * `webhooks`: the controllers' process serves Cluster API's admission webhooks too (on a loopback
 * port, self-signed), and the webhook configurations send the API server's writes there by URL.
 */
export async function startCapiCluster(o: { controllers?: boolean; cloud?: Partial<ServeOptions>; sharedCloud?: CloudFixture; metricsListen?: Listen; webhooks?: boolean } = {}): Promise<CapiCluster> {
  const dataDir = mkdtempSync(join(tmpdir(), 'bosun-capi-'));
  // What a set-up that fails part-way stops again, last started first: no server left running, no directory left behind.
  const undo: Array<() => unknown> = [() => rmSync(dataDir, { recursive: true, force: true })];
  try {
    const api = await startClusterServer({ dataDir, host: '127.0.0.1', port: 0, logLevel: 'warn' });
    undo.push(() => api.stop());
    const kubeconfigPath = api.server.kubeconfigPath;
    const kubectl = (args: string[], input?: string) => runKubectl(kubeconfigPath, args, { input });
    const kubectlOk = async (args: string[], input?: string) => {
      const r = await kubectl(args, input);
      if (r.code !== 0) throw new Error(`kubectl ${args.join(' ')} failed: ${r.stderr}`);
      return r.stdout;
    };
    await installCrds(kubectlOk);
    await kubectlOk(['apply', '-f', join(repositoryRoot, 'manifests/0000_00_cluster-version-operator_01_clusteroperators.crd.yaml')]);
    await kubectlOk(['create', 'namespace', NS]);
    // A second management cluster may share the first one's cloud (bosun cluster move).
    const cloud = o.sharedCloud ?? (await startCloud({ bootDelayMs: 100, ...o.cloud }));
    if (!o.sharedCloud) undo.push(() => cloud.close());
    const kubeconfig = loadKubeConfig(kubeconfigPath);
    const kube = new KubeClient(kubeconfig);
    const manager = new Manager({ name: 'cluster-api-controllers', kubeconfig, metricsListen: o.metricsListen, logLevel: process.env.BOSUN_LOG_LEVEL ?? 'warn' });
    const webhook = o.webhooks ? { listen: { host: '127.0.0.1', port: 0 } } : undefined;
    const { webhookServer } = o.controllers !== false ? addClusterApiControllers(manager, { cloudUrl: cloud.service.url, cloudCredential: cloud.service.rootCredential, releaseVersion: RELEASE, webhook }) : {};
    const running = o.controllers !== false ? manager.start() : Promise.resolve();
    undo.push(async () => {
      manager.stop();
      await running;
    });
    if (webhookServer) {
      await webhookServer.listening;
      const { port } = webhookServer.address!;
      const caBundle = Buffer.from(webhookServer.certificatePem!).toString('base64');
      const configurations = webhookConfigurations((path) => ({ url: `https://127.0.0.1:${port}${path}`, caBundle }));
      await kubectlOk(['apply', '-f', '-'], JSON.stringify({ apiVersion: 'v1', kind: 'List', items: configurations }));
    }
    return {
      api, kube, cloud, manager, kubectl, kubectlOk,
      async close() {
        manager.stop();
        await running;
        if (!o.sharedCloud) await cloud.close();
        await api.stop();
        rmSync(dataDir, { recursive: true, force: true });
      },
    };
  } catch (e) {
    for (const step of undo.reverse()) await Promise.resolve(step()).catch(() => undefined);
    throw e;
  }
}

/** The Cluster, its LocalCluster, a LocalMachineTemplate `small` and bootstrap data `worker-user-data`. */
export async function createClusterObjects(c: CapiCluster, userData = EMPTY_IGNITION): Promise<void> {
  const apply = (o: Obj) => c.kubectlOk(['apply', '-f', '-'], JSON.stringify(o));
  await apply({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'worker-user-data', namespace: NS }, data: { value: Buffer.from(userData).toString('base64'), format: Buffer.from('ignition').toString('base64') } });
  await apply({ apiVersion: INFRA_API_VERSION, kind: 'LocalCluster', metadata: { name: CLUSTER, namespace: NS }, spec: { controlPlaneEndpoint: { host: '127.0.0.1', port: 6443 } } });
  await apply({ apiVersion: API_VERSION, kind: 'Cluster', metadata: { name: CLUSTER, namespace: NS }, spec: { infrastructureRef: { apiGroup: 'infrastructure.cluster.x-k8s.io', kind: 'LocalCluster', name: CLUSTER } } });
  await apply({ apiVersion: INFRA_API_VERSION, kind: 'LocalMachineTemplate', metadata: { name: 'small', namespace: NS }, spec: { template: { spec: { instanceType: 'local.small' } } } });
}

/** A Machine's spec as the templates in these tests give it. */
export function machineSpec(extra: Partial<api.Machine['spec']> = {}): api.Machine['spec'] {
  return {
    clusterName: CLUSTER,
    bootstrap: { dataSecretName: 'worker-user-data' },
    infrastructureRef: { apiGroup: 'infrastructure.cluster.x-k8s.io', kind: 'LocalMachineTemplate', name: 'small' },
    version: 'v1.33.0',
    ...extra,
  };
}

export function machineDeployment(name: string, replicas: number, extra: Partial<api.MachineDeployment['spec']> = {}): api.MachineDeployment {
  return {
    apiVersion: API_VERSION, kind: 'MachineDeployment',
    metadata: { name, namespace: NS },
    spec: {
      clusterName: CLUSTER, replicas,
      selector: { matchLabels: { pool: name } },
      template: { metadata: { labels: { pool: name } }, spec: machineSpec() },
      ...extra,
    },
  };
}

/** A MachineHealthCheck of the machines labelled pool=<name>. */
export function machineHealthCheck(name: string, checks: api.MachineHealthCheck['spec']['checks'], remediation?: api.MachineHealthCheck['spec']['remediation']): api.MachineHealthCheck {
  return {
    apiVersion: API_VERSION, kind: 'MachineHealthCheck', metadata: { name, namespace: NS },
    spec: { clusterName: CLUSTER, selector: { matchLabels: { pool: name } }, checks, ...(remediation ? { remediation } : {}) },
  };
}

const readyCondition = (status: 'True' | 'False' | 'Unknown', message: string) => ({
  type: 'Ready', status, reason: status === 'True' ? 'KubeletReady' : 'KubeletNotReady', message, lastHeartbeatTime: rfc3339(), lastTransitionTime: rfc3339(),
});

/**
 * Plays the kubelet and the CCM for every running instance until the signal aborts: a Ready Node
 * named as the instance with providerID local://<id>; a Node whose instance was terminated is
 * deleted (as the CCM's node lifecycle controller does). `hold` names nodes it leaves alone.
 */
export function runKubelets(c: CapiCluster, signal: AbortSignal, hold: Set<string> = new Set()): Promise<void> {
  return (async () => {
    while (!signal.aborted) {
      try {
        const instances = await c.cloud.client.listInstances();
        const nodes = ((await c.kube.list(resources.nodes)).items ?? []) as Obj[];
        for (const i of instances) {
          if (hold.has(i.name)) continue;
          const node = nodes.find((n) => n.metadata.name === i.name);
          if (i.state === 'running' && i.machine.phase === 'Up' && !node) {
            await c.kube.create(resources.nodes, { apiVersion: 'v1', kind: 'Node', metadata: { name: i.name, labels: { 'kubernetes.io/hostname': i.name } }, spec: { providerID: `local://${i.id}` } });
            await c.kube.mergePatch(resources.nodes, i.name, undefined, { status: { conditions: [readyCondition('True', 'kubelet is posting ready status')], addresses: [{ type: 'InternalIP', address: i.privateIp }] } }, 'status');
          } else if (i.state === 'terminated' && node && node.spec?.providerID === `local://${i.id}`) {
            await c.kube.delete(resources.nodes, i.name);
          }
        }
      } catch (e) {
        if (!signal.aborted && !isNotFound(e)) console.error(`kubelets: ${(e as Error).message}`);
      }
      await new Promise((r) => setTimeout(r, 200));
    }
  })();
}

/** Sets a Node's Ready condition (what a kubelet, or the node lifecycle controller, reports). */
export async function setNodeReady(c: CapiCluster, name: string, status: 'True' | 'False' | 'Unknown', message = 'test'): Promise<void> {
  await c.kube.mergePatch(resources.nodes, name, undefined, { status: { conditions: [readyCondition(status, message)] } }, 'status');
}

export async function machinesOf(c: CapiCluster, labelSelector: string): Promise<Obj[]> {
  return ((await c.kube.list(MACHINES, NS, { labelSelector })).items ?? []) as Obj[];
}

/** Waits until `labelSelector` selects `count` Machines, all Running with a Ready node. */
export function waitForRunning(c: CapiCluster, labelSelector: string, count: number, timeoutMs = 30_000): Promise<Obj[]> {
  return eventually(`${count} Running machines (${labelSelector})`, async () => {
    const ms = (await machinesOf(c, labelSelector)).filter((m) => !m.metadata.deletionTimestamp);
    return ms.length === count && ms.every((m) => m.status?.phase === 'Running' && m.status?.conditions?.some((x: Obj) => x.type === 'Ready' && x.status === 'True')) ? ms : undefined;
  }, timeoutMs);
}

export const payloadFile = (file: string) => readFileSync(join(repositoryRoot, 'release-payload/manifests', file), 'utf8');
