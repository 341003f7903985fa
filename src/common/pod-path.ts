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
