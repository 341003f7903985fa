// A workload cluster's API, reached as Cluster API reaches it: through the kubeconfig in the Secret
// `<cluster>-kubeconfig` (key `value`) in the Cluster's namespace, written by the control-plane
// provider. One client per Secret version, so a renewed kubeconfig is picked up and an unchanged one
// keeps its connections.
import * as k8s from '@kubernetes/client-node';
import type * as api from '../api/index.js';
import { BosunError } from '../common/errors.js';
import { KubeClient, withConnectionReuse, resources, isNotFound } from '../kube/index.js';
import type { CapiContext } from './context.js';

export const kubeconfigSecretName = (clusterName: string) => `${clusterName}-kubeconfig`;

/** Why a workload cluster cannot be reached: no Secret, or a Secret without a usable kubeconfig. */
export class RemoteUnavailable extends BosunError {
  constructor(message: string) {
    super('RemoteUnavailable', message);
  }
}

export class RemoteClients {
  private readonly clients = new Map<string, { version: string; client: KubeClient }>();

  constructor(private readonly ctx: CapiContext) {}

  /** The workload cluster's client; throws RemoteUnavailable naming what is missing. */
  async client(cluster: api.Cluster): Promise<KubeClient> {
    const ns = cluster.metadata.namespace ?? 'default';
    const name = kubeconfigSecretName(cluster.metadata.name);
    let secret: api.Secret | undefined;
    try {
      secret = await this.ctx.client.get(resources.secrets, name, ns);
    } catch (e) {
      if (isNotFound(e)) throw new RemoteUnavailable(`Secret ${ns}/${name} with the workload cluster's kubeconfig does not exist yet`);
      throw e;
    }
    const key = `${ns}/${name}`;
    const version = secret.metadata.resourceVersion ?? '';
    const cached = this.clients.get(key);
    if (cached?.version === version) return cached.client;
    const value = secret.data?.value;
    if (!value) throw new RemoteUnavailable(`Secret ${key} has no key "value"`);
    const kc = new k8s.KubeConfig();
    try {
      kc.loadFromString(Buffer.from(value, 'base64').toString('utf8'));
    } catch (e) {
      throw new RemoteUnavailable(`Secret ${key} does not hold a kubeconfig: ${(e as Error).message}`);
    }
    if (!kc.getCurrentCluster()) throw new RemoteUnavailable(`the kubeconfig in Secret ${key} names no current cluster`);
    const client = new KubeClient(withConnectionReuse(kc), { component: 'cluster-api-controllers' });
    this.clients.set(key, { version, client });
    return client;
  }

  forget(cluster: api.Cluster): void {
    this.clients.delete(`${cluster.metadata.namespace ?? 'default'}/${kubeconfigSecretName(cluster.metadata.name)}`);
  }
}
