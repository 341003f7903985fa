// Kubeconfig loading for every bosun component: an explicit file, else $KUBECONFIG / ~/.kube/config,
// else the in-cluster service account — and connection reuse. client-node 1.x builds a new HTTPS
// agent for every request, so each call pays a TLS handshake; the KubeConfig returned here hands
// out one keep-alive agent per cluster and set of TLS options instead.
import * as k8s from '@kubernetes/client-node';
import { Agent as HttpsAgent } from 'node:https';
import { existsSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { BosunError } from '../common/errors.js';

type CreateAgent = (cluster: k8s.Cluster | null, options: Record<string, unknown>) => unknown;

/** Makes a KubeConfig reuse connections (one keep-alive agent per cluster and TLS settings). */
export function withConnectionReuse(kc: k8s.KubeConfig): k8s.KubeConfig {
  const target = kc as unknown as { createAgent: CreateAgent };
  const original = target.createAgent.bind(kc);
  const agents = new Map<string, unknown>();
  target.createAgent = (cluster, options) => {
    // Proxies, and plain HTTP (which client-node refuses unless TLS checks are off), as before.
    if (cluster?.proxyUrl || cluster?.server?.startsWith('http:')) return original(cluster, options);
    const key = JSON.stringify([cluster?.server, cluster?.skipTLSVerify, options.ca?.toString(), options.cert?.toString(), options.rejectUnauthorized, options.servername]);
    let agent = agents.get(key);
    if (!agent) {
      const base = { keepAlive: true, maxSockets: 32 };
      agent = new HttpsAgent({ ...options, ...base });
      agents.set(key, agent);
    }
    return agent;
  };
  return kc;
}

/**
 * A kubeconfig that cannot be used: `KubeconfigNotFound` (none anywhere a client looks, or a file
 * named that does not exist) or `KubeconfigNoCurrentCluster`.
 */
export class KubeconfigError extends BosunError {
  constructor(message: string, reason: 'KubeconfigNotFound' | 'KubeconfigNoCurrentCluster' = 'KubeconfigNotFound') {
    super(reason, message);
  }
}

/** How to point at the local cluster (`npm start` writes its kubeconfig to `<data-dir>/kubeconfig`). */
function localClusterHint(): string {
  const local = join('.bosun', 'kubeconfig');
  return existsSync(local)
    ? `The local cluster's kubeconfig is in this directory: export KUBECONFIG=${local}`
    : `For the local cluster, use the kubeconfig \`npm start\` prints (in the directory it runs in): export KUBECONFIG=${local}`;
}

/**
 * Loads a kubeconfig: `path` if given, else $KUBECONFIG or ~/.kube/config, else the in-cluster
 * service account ($KUBERNETES_SERVICE_HOST/PORT, the token and CA under
 * /var/run/secrets/kubernetes.io/serviceaccount — below $BOSUN_IN_CLUSTER_ROOT when set, as the
 * local substrate mounts a pod's secrets). The token file is read again at most once a minute
 * (as client-go does), so rotated bound tokens are picked up. With none of these, or a named file
 * missing, it throws KubeconfigError saying where it looked: client-node would fall back to
 * http://localhost:8080 and fail later with a riddle about TLS.
 */
export function loadKubeConfig(path?: string): k8s.KubeConfig {
  const kc = new k8s.KubeConfig();
  const home = process.env.HOME ?? process.env.USERPROFILE;
  const defaultFile = home ? join(home, '.kube', 'config') : undefined;
  const fromEnv = (process.env.KUBECONFIG ?? '').split(delimiter).filter(Boolean);
  if (path) {
    if (!existsSync(path)) throw new KubeconfigError(`the kubeconfig ${path} does not exist\n${localClusterHint()}`);
    kc.loadFromFile(path);
  } else if (fromEnv.length > 0) {
    const missing = fromEnv.filter((file) => !existsSync(file));
    if (missing.length > 0) throw new KubeconfigError(`$KUBECONFIG names ${missing.join(', ')}, which ${missing.length === 1 ? 'does' : 'do'} not exist\n${localClusterHint()}`);
    kc.loadFromDefault();
  } else if (defaultFile && existsSync(defaultFile)) {
    kc.loadFromFile(defaultFile);
  } else if (process.env.KUBERNETES_SERVICE_HOST) {
    kc.loadFromCluster(process.env.BOSUN_IN_CLUSTER_ROOT ?? '');
  } else {
    const looked = ['no --kubeconfig', '$KUBECONFIG is not set', defaultFile ? `${defaultFile} does not exist` : '$HOME is not set', 'and this is not a pod ($KUBERNETES_SERVICE_HOST is not set)'];
    throw new KubeconfigError(`no kubeconfig found: ${looked.join(', ')}\n${localClusterHint()}`);
  }
  if (!kc.getCurrentCluster()) {
    const source = path ?? (fromEnv.length > 0 ? `$KUBECONFIG (${fromEnv.join(delimiter)})` : defaultFile);
    throw new KubeconfigError(`${source} names no current cluster: its current-context is not set, or names no cluster`, 'KubeconfigNoCurrentCluster');
  }
  return withConnectionReuse(kc);
}
