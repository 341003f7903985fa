// Where a component finds a file it was given by absolute path. Run as a pod by a node agent of
// the local cluster, a component is a process of this machine, not a container: its filesystem
// view (service-account token, ConfigMap/Secret/hostPath volumes at their mount paths) is a
// directory, $BOSUN_IN_CLUSTER_ROOT, rather than `/`. Everywhere else the path is used as given.
import { isAbsolute, join } from 'node:path';

/** `path` as the pod sees it: below $BOSUN_IN_CLUSTER_ROOT when set and the path is absolute. */
export function podPath(path: string): string;
export function podPath(path: string | undefined): string | undefined;
export function podPath(path: string | undefined): string | undefined {
  const root = process.env.BOSUN_IN_CLUSTER_ROOT;
  if (path === undefined || !root || !isAbsolute(path) || path === root || path.startsWith(`${root}/`)) return path;
  return join(root, path);
}

/**
 * A host a hostNetwork pod binds or dials, as the local machine has it: the loopback (127.0.0.1,
 * localhost, ::1) is the machine's own address, $BOSUN_HOST_IP, since every local machine shares
 * the host's loopback (kubeadm's etcd listens on 127.0.0.1:2379 on every control-plane machine).
 * Anything else, or outside a bosun pod, is left as it is.
 */
export function machineHost(host: string): string {
  const ip = process.env.BOSUN_HOST_IP;
  return ip && ['127.0.0.1', 'localhost', '::1', '[::1]'].includes(host) ? ip : host;
}

/** A URL whose host is mapped by machineHost (`https://127.0.0.1:2379` → `https://<machine>:2379`). */
export function machineUrl(url: string): string {
  try {
    const u = new URL(url);
    const host = machineHost(u.hostname);
    if (host === u.hostname) return url;
    u.hostname = host;
    return u.toString().replace(/\/$/, url.endsWith('/') ? '/' : '');
  } catch {
    return url;
  }
}
