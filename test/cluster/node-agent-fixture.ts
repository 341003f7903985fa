// A small local cluster for the node agent's tests: the API server as a cluster runs it (RBAC,
// ServiceAccount tokens, node access, the CSR signer, the local cluster's loopback service network), the workload controllers the agent relies
// on (EndpointSlices for its NodePorts, node lifecycle for NotReady), the local cloud with
// the node agent as its machine runtime, and machines that boot (through bosun's Ignition applier)
// from the worker role's rendered MachineConfigs — the kubelet unit, kubelet.conf and CA the MCO's
// templates write — plus a bootstrap kubeconfig and, where the test says so, a node kubeconfig.
import { mkdtempSync, chmodSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startClusterServer, type ClusterServer } from '../../src/apiserver/cluster-server.js';
import { LOCAL_SERVICE_NETWORK } from '../../src/cluster/install/cluster-facts.js';
import { CloudClient } from '../../src/cloud/client.js';
import { CloudService } from '../../src/cloud/service.js';
import type { Instance } from '../../src/cloud/types.js';
import { bootstrapTokenSecret, generateBootstrapToken } from '../../src/apiserver/nodes/bootstrap-tokens.js';
import { machineApprover } from '../../src/cluster/machine-approver.js';
import { runWorkloadControllers } from '../../src/cluster/workloads/run.js';
import { NodeAgentRuntime } from '../../src/cluster/node-agent/runtime.js';
import type { NodeAgentOptions } from '../../src/cluster/node-agent/agent.js';
import { encodeDataUrl } from '../../src/ignition/data-url.js';
import { generateRoleConfigs } from '../../src/mco/controller/template.js';
import { mergeMachineConfigs } from '../../src/mco/controller/render.js';
import { KubeClient, loadKubeConfig, type Obj } from '../../src/kube/index.js';
import { runKubectl, type KubectlResult } from '../helpers/apiserver.js';
import { eventually } from '../helpers/eventually.js';
import { controllerConfig } from '../mco/controller-fixtures.js';

/** What the tests need of the API server. */
export interface Api {
  url: string;
  port: number;
  caPem: string;
  token: string;
  kubeconfigPath: string;
  dataDir: string;
  kubectl(args: string[], input?: string): Promise<KubectlResult>;
  kubectlOk(args: string[], input?: string): Promise<string>;
}

export interface NodeCluster {
  api: Api;
  apiServer: ClusterServer;
  kube: KubeClient;
  cloud: CloudService;
  client: CloudClient;
  runtime: NodeAgentRuntime;
  dataDir: string;
  /** Aborted when the cluster closes (for what tests run beside it). */
  signal: AbortSignal;
  approverStarted?: boolean;
  close(): Promise<void>;
}

export function kubeconfigText(server: string, caPem: string, user: Obj): string {
  return JSON.stringify({
    apiVersion: 'v1', kind: 'Config',
    clusters: [{ name: 'local', cluster: { server, 'certificate-authority-data': Buffer.from(caPem).toString('base64') } }],
    users: [{ name: 'kubelet', user }],
    contexts: [{ name: 'kubelet', context: { cluster: 'local', user: 'kubelet' } }],
    'current-context': 'kubelet',
  });
}

/**
 * The worker role's Ignition config as the MCO renders it for bosun's local cloud (platform
 * External, its cloud controller manager External: the kubelet unit passes
 * --cloud-provider=external), a bootstrap kubeconfig, and optionally the node's own kubeconfig
 * already in place.
 */
export function workerUserData(api: Api, opts: { bootstrapUser: Obj; nodeUser?: Obj; files?: Record<string, string> }): string {
  const cc = controllerConfig({
    kubeAPIServerServingCAData: Buffer.from(api.caPem).toString('base64'),
    platform: 'external',
    infra: { status: { platformStatus: { type: 'External', external: { cloudControllerManager: { state: 'External' } } } } },
  });
  const spec = mergeMachineConfigs(generateRoleConfigs(cc, 'worker', { controllerVersion: 'test' }));
  const config = structuredClone(spec.config) as Obj;
  const file = (path: string, text: string) => ({ path, mode: 0o600, overwrite: true, contents: { source: encodeDataUrl(text) } });
  config.storage.files.push(file('/etc/kubernetes/kubeconfig', kubeconfigText(api.url, api.caPem, opts.bootstrapUser)));
  if (opts.nodeUser) config.storage.files.push(file('/var/lib/kubelet/kubeconfig', kubeconfigText(api.url, api.caPem, opts.nodeUser)));
  for (const [path, text] of Object.entries(opts.files ?? {})) config.storage.files.push(file(path, text));
  return JSON.stringify(config);
}

export interface NodeClusterOptions {
  agent?: Partial<NodeAgentOptions>;
  /** How long a rebooting machine stays down (default 500 ms). */
  bootDelayMs?: number;
  /** The node lifecycle controller's grace period before a silent node goes NotReady (default 40 s). */
  nodeGraceMs?: number;
  /** The CSR signer's certificate lifetime (--cluster-signing-duration; default a year). */
  clusterSigningDurationMs?: number;
  /** The API server's --service-cluster-ip-range (default the local cluster's, loopback 127.30.0.0/16). */
  serviceClusterIPRange?: string;
}

/**
 * The user data of a worker that gets its credentials as a kubelet does: a bootstrap token (made
 * here, as `kubeadm token create` stores it) in its bootstrap kubeconfig, approved by the machine
 * approver, which runs from now until the cluster closes.
 */
export async function bootstrapUserData(c: NodeCluster, files?: Record<string, string>): Promise<string> {
  if (!c.approverStarted) {
    c.approverStarted = true;
    void machineApprover({ client: c.kube, cloud: c.client }).run(c.signal);
  }
  const token = generateBootstrapToken();
  await c.api.kubectlOk(['apply', '-f', '-'], JSON.stringify(bootstrapTokenSecret(token, { expiration: new Date(Date.now() + 3600_000) })));
  return workerUserData(c.api, { bootstrapUser: { token }, files });
}

export async function startNodeCluster(o: NodeClusterOptions = {}): Promise<NodeCluster> {
  const dataDir = mkdtempSync(join(tmpdir(), 'bosun-nodes-'));
  chmodSync(dataDir, 0o755);
  const apiDir = join(dataDir, 'apiserver');
  const apiServer = await startClusterServer({ dataDir: apiDir, host: '127.0.0.1', port: 0, logLevel: 'warn', clusterSigningDurationMs: o.clusterSigningDurationMs, serviceClusterIPRange: o.serviceClusterIPRange ?? LOCAL_SERVICE_NETWORK });
  const { server } = apiServer;
  const kubectl = (args: string[], input?: string) => runKubectl(server.kubeconfigPath, args, { input });
  const api: Api = {
    url: server.url, port: server.port, caPem: server.caPem, token: server.token, kubeconfigPath: server.kubeconfigPath, dataDir: apiDir,
    kubectl,
    async kubectlOk(args, input) {
      const r = await kubectl(args, input);
      if (r.code !== 0) throw new Error(`kubectl ${args.join(' ')} failed: ${r.stderr}`);
      return r.stdout;
    },
  };
  const controllers = new AbortController();
  const kube = new KubeClient(loadKubeConfig(api.kubeconfigPath));
  const workloads = runWorkloadControllers({
    kubeconfig: kube.kubeconfig, signal: controllers.signal, leaderElection: false,
    controllers: ['endpointslice', 'nodelifecycle'], nodeLifecycle: { gracePeriodMs: o.nodeGraceMs ?? 40_000 },
  });
  const runtime = new NodeAgentRuntime({ leaseRenewIntervalMs: 1000, nodeStatusUpdateMs: 1000, restartDelayMs: 1000, csrPollMs: 200, ...o.agent });
  const cloud = new CloudService({ dataDir, bootDelayMs: o.bootDelayMs ?? 500, ignition: 'builtin', runtime, host: '127.0.0.1', port: 0 });
  const client = new CloudClient(await cloud.start(), cloud.rootCredential);
  return {
    api, apiServer, cloud, client, runtime, dataDir, signal: controllers.signal,
    kube,
    async close() {
      await cloud.close();
      controllers.abort();
      await workloads;
      await apiServer.stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** Creates a machine and waits until its Node reports Ready for the given boot. */
export async function bootWorker(c: NodeCluster, name: string, userData: string, type = 'local.small'): Promise<Instance> {
  const created = await c.client.createInstance({ name, type, zone: 'local-b', userData });
  await eventually(`${name} booted`, async () => {
    const i = await c.client.getInstance(created.id);
    if (i.machine.phase === 'Failed') throw new Error(`${name} failed to boot: ${i.machine.message}`);
    return i.machine.phase === 'Up';
  }, 30_000);
  return c.client.getInstance(created.id);
}

export function readyCondition(node: Obj | undefined): Obj | undefined {
  return node?.status?.conditions?.find((c: Obj) => c.type === 'Ready');
}
