// Shared fixture for the cloud-controller-manager's tests: the embedded API server and a real local
// cloud, Nodes registered as a kubelet with an external cloud provider registers them, the CCM on a
// manager of its own (stopped and started again at will), the NodePort a node's kube-proxy would
// serve, and plain HTTP through a balancer's address.
import { randomBytes } from 'node:crypto';
import { createServer, get, type Server } from 'node:http';
import { rootCredentialPath } from '../../src/cloud/client.js';
import type { Instance, LoadBalancer } from '../../src/cloud/types.js';
import { addCloudControllers } from '../../src/ccm-operator/ccm.js';
import { NODES, UNINITIALIZED_TAINT } from '../../src/ccm-operator/context.js';
import { closeServer } from '../../src/common/http-server.js';
import { KubeClient, Manager, loadKubeConfig, rfc3339, type Obj } from '../../src/kube/index.js';
import { resources } from '../../src/kube/resources.js';
import { startTestApiServer, type TestApiServer } from '../helpers/apiserver.js';
import { startCloud, type CloudFixture } from '../cloud/cloud-fixture.js';

export const EVENTS = resources.events;

/** GET http://host:port/ → the body, or the error's code (ECONNRESET, ECONNREFUSED…). */
export function httpGet(host: string, port: number): Promise<string> {
  return new Promise((resolve) => {
    const req = get({ host, port, path: '/', agent: false, timeout: 3000 }, (res) => {
      let body = '';
      res.on('data', (d) => (body += d));
      res.on('end', () => resolve(body));
    });
    req.on('error', (e: NodeJS.ErrnoException) => resolve(e.code ?? e.message));
    req.on('timeout', () => req.destroy(Object.assign(new Error('timeout'), { code: 'TIMEOUT' })));
  });
}

export interface CcmFixture {
  api: TestApiServer;
  cloud: CloudFixture;
  client: KubeClient;
  /** The CCM's --cluster-name: a name of this run's own, so its balancer addresses (derived from it) differ from any other test's on the loopback network. */
  clusterName: string;
  /** Creates the Node of `instance` as a kubelet with an external cloud provider registers it: tainted uninitialised, Ready. */
  registerNode(instance: Instance, node?: { labels?: Record<string, string>; podCIDR?: string }): Promise<void>;
  setReady(name: string, status: 'True' | 'False'): Promise<void>;
  /** Starts a cloud-controller-manager for the cloud (one at a time). */
  startCcm(): Promise<void>;
  /** Stops the running one; resolves once it has stopped. */
  stopCcm(): Promise<void>;
  /** What the node agent's kube-proxy does on a real node: serve a Service's NodePort on the node's IP; here an HTTP server answering `answer`. */
  serveNodePort(answer: string, ip: string, port: number): Promise<Server>;
  /** The reasons of the Events about the object `name`. */
  eventReasons(name: string, namespace?: string): Promise<string[]>;
  /** The cloud's balancers of this cluster. */
  balancers(): Promise<LoadBalancer[]>;
  close(): Promise<void>;
}

export async function startCcmFixture(o: { clusterPrefix: string; cloud?: Parameters<typeof startCloud>[0] }): Promise<CcmFixture> {
  const api = await startTestApiServer();
  const cloud = await startCloud(o.cloud);
  const client = new KubeClient(loadKubeConfig(api.kubeconfigPath));
  const clusterName = `${o.clusterPrefix}${randomBytes(3).toString('hex')}`;
  const backends: Server[] = [];
  let running: { stop: AbortController; done: Promise<void> } | undefined;

  const f: CcmFixture = {
    api, cloud, client, clusterName,
    async registerNode(instance, node = {}) {
      await client.create(NODES, {
        metadata: { name: instance.name, ...(node.labels ? { labels: node.labels } : {}) },
        spec: { ...(node.podCIDR ? { podCIDR: node.podCIDR, podCIDRs: [node.podCIDR] } : {}), taints: [{ key: UNINITIALIZED_TAINT, value: 'true', effect: 'NoSchedule' }] },
      });
      await f.setReady(instance.name, 'True');
    },
    async setReady(name, status) {
      const node = await client.get(NODES, name);
      const now = rfc3339();
      const conditions = (node.status?.conditions ?? []).filter((c: Obj) => c.type !== 'Ready');
      await client.mergePatch(NODES, name, undefined, { status: { conditions: [...conditions, { type: 'Ready', status, reason: status === 'True' ? 'KubeletReady' : 'KubeletNotReady', message: '', lastHeartbeatTime: now, lastTransitionTime: now }] } }, 'status');
    },
    async startCcm() {
      if (running) throw new Error('a cloud-controller-manager runs already');
      const manager = new Manager({ name: 'cloud-controller-manager', kubeconfig: loadKubeConfig(api.kubeconfigPath) });
      await addCloudControllers(manager, {
        cloudProvider: 'local', cloudConfig: `[Global]\nurl = ${cloud.service.url}\n`, cloudCredentialsFile: rootCredentialPath(cloud.dataDir), clusterName, clusterCidr: '127.1.0.0/16',
        periods: { nodeMonitorMs: 300, routesMs: 500, nodeStatusMs: 1000 },
      });
      const stop = new AbortController();
      running = { stop, done: manager.start(stop.signal) };
    },
    async stopCcm() {
      const ccm = running;
      running = undefined;
      ccm?.stop.abort();
      await ccm?.done;
    },
    async serveNodePort(answer, ip, port) {
      const server = createServer((_req, res) => res.end(answer));
      await new Promise<void>((resolve, reject) => server.once('error', reject).listen(port, ip, () => resolve()));
      backends.push(server);
      return server;
    },
    async eventReasons(name, namespace = 'default') {
      const list = await client.list(EVENTS, namespace);
      return list.items.filter((e: Obj) => e.involvedObject?.name === name).map((e: Obj) => e.reason);
    },
    async balancers() {
      return (await cloud.client.listLoadBalancers()).filter((lb) => lb.name.startsWith(`${clusterName}-`));
    },
    async close() {
      await f.stopCcm();
      await Promise.all(backends.map(closeServer));
      await cloud.close();
      await api.stop();
    },
  };
  return f;
}
