// Kubeconfig loading for every bosun component: an explicit file, else $KUBECONFIG / ~/.kube/config,
// else the in-cluster service account — and connection reuse. client-node 1.x builds a new HTTPS
// agent for every request, so each call pays a TLS handshake; the KubeConfig returned here hands
// out one keep-alive agent per cluster and set of TLS options instead.
import * as k8s from '@kubernetes/client-node';
import { Agent as HttpsAgent } from 'node:https';
import { existsSync } from 'node:fs';
import { join } from 'node:path';

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
 * Loads a kubeconfig: `path` if given, else $KUBECONFIG or ~/.kube/config, else the in-cluster
 * service account ($KUBERNETES_SERVICE_HOST/PORT, the token and CA under
 * /var/run/secrets/kubernetes.io/serviceaccount — below $BOSUN_IN_CLUSTER_ROOT when set, as the
 * local substrate mounts a pod's secrets). The token file is read again at most once a minute
 * (as client-go does), so rotated bound tokens are picked up.
 */
export function loadKubeConfig(path?: string): k8s.KubeConfig {
  const kc = new k8s.KubeConfig();
  const home = process.env.HOME ?? process.env.USERPROFILE;
  const defaultFile = home ? join(home, '.kube', 'config') : undefined;
  if (path) kc.loadFromFile(path);
  else if (!process.env.KUBECONFIG && !(defaultFile && existsSync(defaultFile)) && process.env.KUBERNETES_SERVICE_HOST) kc.loadFromCluster(process.env.BOSUN_IN_CLUSTER_ROOT ?? '');
  else kc.loadFromDefault();
  if (!kc.getCurrentCluster()) throw new Error(path ? `${path} names no current cluster` : 'no kubeconfig found: set --kubeconfig or KUBECONFIG, or run in a pod with a service account');
  return withConnectionReuse(kc);
}
