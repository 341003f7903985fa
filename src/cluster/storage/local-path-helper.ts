// What the local-path provisioner's helper pods do on a node (rancher's helper pod runs `rm -rf`
// on the volume's directory): delete one volume's directory below the mount of the provisioner's
// directory, and nothing else — not the mount itself, nothing outside it.
import { rmSync } from 'node:fs';
import { posix } from 'node:path';
import { podPath } from '../../common/pod-path.js';

/** Deletes `path` (as the pod sees it: a directory below `mount`); returns the path removed on the machine. */
export function deleteVolumeDirectory(path: string, mount = '/data'): string {
  const normal = posix.normalize(path);
  if (!posix.isAbsolute(normal) || posix.dirname(normal) !== mount) throw new Error(`refusing to delete ${JSON.stringify(path)}: a volume's directory is one level below ${mount}`);
  const onMachine = podPath(normal);
  rmSync(onMachine, { recursive: true, force: true });
  return onMachine;
}
