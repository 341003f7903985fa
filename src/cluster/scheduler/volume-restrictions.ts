// kube-scheduler's VolumeRestrictions plugin, the part bosun's volumes need: a claim with the
// ReadWriteOncePod access mode is used by one pod at a time, so a pod naming one that a bound (or
// assumed) pod already uses fits no node (kube's PreFilter verdict, in its words).
import type { ClusterSnapshot, Pod } from './types.js';
import { podClaimNames } from './volume-binding.js';

export const ERR_READ_WRITE_ONCE_POD_CONFLICT = 'node has pod using PersistentVolumeClaim with the same name and ReadWriteOncePod access mode';

/** kube's message when another pod holds one of the pod's ReadWriteOncePod claims, else undefined. */
export function readWriteOncePodConflict(pod: Pod, snapshot: Pick<ClusterSnapshot, 'podsByNode' | 'storage'>): string | undefined {
  const namespace = pod.metadata.namespace ?? 'default';
  const exclusive = podClaimNames(pod).filter((name) => snapshot.storage?.claim(namespace, name)?.spec?.accessModes?.includes('ReadWriteOncePod'));
  if (exclusive.length === 0) return undefined;
  for (const pods of snapshot.podsByNode.values()) {
    for (const other of pods) {
      if ((other.metadata.namespace ?? 'default') !== namespace || other.metadata.name === pod.metadata.name) continue;
      if (podClaimNames(other).some((name) => exclusive.includes(name))) return ERR_READ_WRITE_ONCE_POD_CONFLICT;
    }
  }
  return undefined;
}
