// A workload cluster's API, reached as Cluster API reaches it: through the kubeconfig in the Secret
// `<cluster>-kubeconfig` (key `value`) in the Cluster's namespace, written by the control-plane
// provider. One client per Secret version, so a renewed kubeconfig is picked up and an unchanged one
// keeps its connections; with it, as Cluster API's ClusterCache keeps one, a Node informer per
// workload cluster, whose events reach the controllers that subscribed (the Machine controller,
// the MachineHealthCheck controller), and a health probe: an informer keeps its cache when its
// API goes away, so the API is asked every few seconds, and after a few unanswered probes the
// cluster counts as unreachable (its cache is not trusted) until it answers again — each change
// told to the subscribers.
//
// The cluster bosun runs in is the exception. Cluster API reaches even a self-hosted management
// cluster through its kubeconfig Secret, because `clusterctl move` copied it there from the
// bootstrap cluster whose control-plane provider wrote it. bosun's own Cluster was never made by a
// control-plane provider: it has neither a controlPlaneRef nor a kubeconfig Secret, and its workload
// API is the API the controllers already talk to (OpenShift's cluster-capi-operator makes the same
// choice when it points its own Cluster's kubeconfig back at api-int). So a Cluster without either
// is served by the management client and the manager's own Node informer; a Cluster with either is
// remote. A Secret that appears later (a `bosun cluster move` to a self-hosted cluster) makes it
// remote from then on.
import type * as api from '../api/index.js';
import { BosunError } from '../common/errors.js';
import { type EventType, Informer, KubeClient, KubeConfig, resources, sleepOn } from '../kube/index.js';
import type { CapiContext } from './context.js';

export const kubeconfigSecretName = (clusterName: string) => `${clusterName}-kubeconfig`;

/** Why a workload cluster cannot be reached: no Secret, or a Secret without a usable kubeconfig. */
export class RemoteUnavailable extends BosunError {
  constructor(message: string) {
    super('RemoteUnavailable', message);
  }
}

/** How the controllers reach a Cluster's nodes: its API client and a synced Node cache. */
export interface WorkloadAccess {
  /** The management API itself (the cluster bosun runs in), else the workload API. */
  local: boolean;
  client: KubeClient;
  nodes: Informer<api.Node>;
}

/** A Node event of one workload cluster (namespace and name are the Cluster's). */
export type RemoteNodeHandler = (cluster: { namespace: string; name: string }, type: EventType, node: api.Node, old?: api.Node) => void;

/** A cluster's connection changed (reachable again, or no longer): its objects are worth a look. */
export type ConnectionHandler = (cluster: { namespace: string; name: string }) => void;

/** How often a workload API is probed, how long a probe may take, and how many may fail before it is unreachable. */
const HEALTH_PERIOD_MS = 5_000;
const HEALTH_TIMEOUT_MS = 3_000;
const HEALTH_FAILURES = 3;

interface RemoteEntry {
  version: string;
  client: KubeClient;
  nodes?: { informer: Informer<api.Node>; stop: AbortController };
  health: { failures: number; down: boolean; lastError: string };
}

type ClusterKey = Pick<api.Cluster, 'metadata' | 'spec'>;

const keyOfCluster = (cluster: ClusterKey) => `${cluster.metadata.namespace ?? 'default'}/${kubeconfigSecretName(cluster.metadata.name)}`;

export class RemoteClients {
  private readonly clients = new Map<string, RemoteEntry>();
  private readonly handlers: RemoteNodeHandler[] = [];
  private readonly connectionHandlers: ConnectionHandler[] = [];
  private signal?: AbortSignal;

  constructor(private readonly ctx: CapiContext) {}

  /** The workload cluster's client; throws RemoteUnavailable naming what is missing. */
  async client(cluster: ClusterKey): Promise<KubeClient> {
    return (await this.entry(cluster)).client;
  }

  private readSecret(cluster: ClusterKey): Promise<api.Secret | undefined> {
    return this.ctx.client.read(resources.secrets, kubeconfigSecretName(cluster.metadata.name), cluster.metadata.namespace ?? 'default');
  }

  /** The client of the Secret's version; `secret` when the caller read it already. */
  private async entry(cluster: ClusterKey, secret?: api.Secret): Promise<RemoteEntry> {
    const ns = cluster.metadata.namespace ?? 'default';
    const name = kubeconfigSecretName(cluster.metadata.name);
    secret ??= await this.readSecret(cluster);
    if (!secret) throw new RemoteUnavailable(`Secret ${ns}/${name} with the workload cluster's kubeconfig does not exist yet`);
    const key = `${ns}/${name}`;
    const version = secret.metadata.resourceVersion ?? '';
    const cached = this.clients.get(key);
    if (cached?.version === version) return cached;
    const value = secret.data?.value;
    if (!value) throw new RemoteUnavailable(`Secret ${key} has no key "value"`);
    const kc = new KubeConfig();
    try {
      kc.loadFromString(Buffer.from(value, 'base64').toString('utf8'));
    } catch (e) {
      throw new RemoteUnavailable(`Secret ${key} does not hold a kubeconfig: ${(e as Error).message}`);
    }
    if (!kc.getCurrentCluster()) throw new RemoteUnavailable(`the kubeconfig in Secret ${key} names no current cluster`);
    cached?.nodes?.stop.abort(); // a renewed kubeconfig: the old watch goes with the old client
    const entry: RemoteEntry = { version, client: new KubeClient(kc, { component: 'cluster-api-controllers' }), health: { failures: 0, down: false, lastError: '' } };
    this.clients.set(key, entry);
    return entry;
  }

  /**
   * Whether the Cluster is the one bosun runs in (see the header): no controlPlaneRef and no
   * kubeconfig Secret.
   */
  async isLocal(cluster: ClusterKey): Promise<boolean> {
    return !cluster.spec?.controlPlaneRef?.name && !(await this.readSecret(cluster));
  }

  /**
   * The Cluster's API and its Node cache. Remote: throws RemoteUnavailable while there is no usable
   * kubeconfig, while the controllers are not running (attach), or until the first list of the
   * workload cluster's Nodes is in.
   */
  async access(cluster: ClusterKey): Promise<WorkloadAccess> {
    const secret = await this.readSecret(cluster);
    if (!secret && !cluster.spec?.controlPlaneRef?.name) return { local: true, client: this.ctx.client, nodes: this.ctx.informer(resources.nodes) };
    const entry = await this.entry(cluster, secret);
    if (!entry.nodes || entry.nodes.stop.signal.aborted) {
      if (!this.signal || this.signal.aborted) throw new RemoteUnavailable('the controllers that watch workload clusters are not running');
      const stop = new AbortController();
      this.signal.addEventListener('abort', () => stop.abort(), { once: true, signal: stop.signal });
      const informer = new Informer<api.Node>(entry.client, resources.nodes, { clock: this.ctx.clock });
      const owner = { namespace: cluster.metadata.namespace ?? 'default', name: cluster.metadata.name };
      informer.on((type, node, old) => {
        for (const h of this.handlers) h(owner, type, node, old);
      });
      informer.start(stop.signal);
      entry.nodes = { informer, stop };
      void this.probeHealth(entry, owner, stop.signal);
    }
    const server = entry.client.kubeconfig.getCurrentCluster()?.server;
    const at = server ? ` at ${server}` : '';
    if (entry.health.down) throw new RemoteUnavailable(`the workload cluster's API${at} does not answer: ${entry.health.lastError}`);
    if (!entry.nodes.informer.hasSynced()) throw new RemoteUnavailable(`waiting for the first list of Nodes from the workload cluster's API${at}`);
    return { local: false, client: entry.client, nodes: entry.nodes.informer };
  }

  /** Asks the workload API every few seconds while its informer runs; tells the subscribers when it goes down or comes back. */
  private async probeHealth(entry: RemoteEntry, owner: { namespace: string; name: string }, signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      await sleepOn(this.ctx.clock, HEALTH_PERIOD_MS, signal);
      if (signal.aborted) return;
      const wasDown = entry.health.down;
      try {
        await entry.client.request('GET', '/api', { signal: AbortSignal.any([signal, AbortSignal.timeout(HEALTH_TIMEOUT_MS)]) });
        entry.health = { failures: 0, down: false, lastError: '' };
      } catch (e) {
        if (signal.aborted) return;
        const failures = entry.health.failures + 1;
        entry.health = { failures, down: failures >= HEALTH_FAILURES, lastError: (e as Error).message };
      }
      if (entry.health.down !== wasDown) for (const h of this.connectionHandlers) h(owner);
    }
  }

  /** A workload cluster became unreachable, or reachable again. */
  onConnectionChange(handler: ConnectionHandler): void {
    this.connectionHandlers.push(handler);
  }

  /** Node events of every workload cluster, now and as their informers start. */
  onNodeEvent(handler: RemoteNodeHandler): void {
    this.handlers.push(handler);
    for (const [key, entry] of this.clients) {
      if (!entry.nodes || entry.nodes.stop.signal.aborted) continue;
      const [namespace, secret] = key.split('/');
      const owner = { namespace, name: secret.replace(/-kubeconfig$/, '') };
      for (const node of entry.nodes.informer.list()) handler(owner, 'add', node);
    }
  }

  /**
   * Runs the workload clusters' informers while `signal` lives (a controller's term: its
   * onStarted). A later term attaches again and the informers are made anew.
   */
  attach(signal: AbortSignal): void {
    if (this.signal && !this.signal.aborted) return;
    this.signal = signal;
  }

  forget(cluster: ClusterKey): void {
    const key = keyOfCluster(cluster);
    this.clients.get(key)?.nodes?.stop.abort();
    this.clients.delete(key);
  }
}

const shared = new WeakMap<CapiContext, RemoteClients>();

/** The one RemoteClients of a context, so its controllers share clients and Node informers. */
export function remoteClusters(ctx: CapiContext): RemoteClients {
  let remote = shared.get(ctx);
  if (!remote) shared.set(ctx, (remote = new RemoteClients(ctx)));
  return remote;
}
