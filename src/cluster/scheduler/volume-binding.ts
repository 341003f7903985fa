// kube-scheduler's VolumeBinding plugin, pure: what a pod's PersistentVolumeClaims ask of a node.
//
// PreFilter, once per pod: a claim that does not exist, is being deleted, or is unbound while its
// class binds at once (Immediate, or no class: the binder must bind it first) rules out every node
// with kube's message; bound claims contribute their volumes' node affinity, unbound claims of a
// WaitForFirstConsumer class are left for the scheduler to place.
// Filter, per node: every bound volume's node affinity must allow the node ("volume node affinity
// conflict"; a bound volume that does not exist rules the node out too), and every waiting claim
// must be satisfiable there — an Available volume that fits on that node, or a class with a
// provisioner (kubernetes.io/no-provisioner has none).
// After a node is chosen, the scheduler's shell writes volume.kubernetes.io/selected-node on the
// waiting claims and binds the pod once the binder (or the provisioner) has bound them.
import type * as api from '../../api/index.js';
import { claimClass, volumeClass } from '../../kube/storage.js';
import { matchesNodeSelector } from './node-affinity.js';
import { findVolume } from '../storage/binding.js';
import type { Node, Pod, StorageSnapshot } from './types.js';

export const ERR_VOLUME_NODE_CONFLICT = 'node(s) had volume node affinity conflict';
export const ERR_VOLUME_BIND_CONFLICT = "node(s) didn't find available persistent volumes to bind";
export const ERR_PV_NOT_EXIST = 'node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)';
export const ERR_UNBOUND_IMMEDIATE = 'pod has unbound immediate PersistentVolumeClaims';
/** The provisioner of classes whose volumes are made by hand (local volumes). */
const NO_PROVISIONER = 'kubernetes.io/no-provisioner';

export interface VolumeBindingState {
  /** Why no node can take the pod now (PreFilter's verdict), if so. */
  unresolvable?: string;
  /** The volumes of the pod's bound claims (undefined: bound to a volume that does not exist). */
  bound: Array<api.PersistentVolume | undefined>;
  /** Unbound claims of WaitForFirstConsumer classes: the scheduler chooses their node. */
  waiting: api.PersistentVolumeClaim[];
}

/** The names of the claims a pod's volumes use. */
export function podClaimNames(pod: Pod): string[] {
  return (pod.spec.volumes ?? []).flatMap((v) => (v.persistentVolumeClaim?.claimName ? [v.persistentVolumeClaim.claimName] : []));
}

export function volumeBindingPreFilter(pod: Pod, storage: StorageSnapshot | undefined): VolumeBindingState {
  const state: VolumeBindingState = { bound: [], waiting: [] };
  const names = podClaimNames(pod);
  if (names.length === 0 || !storage) return state;
  let unboundImmediate = false;
  for (const name of names) {
    const claim = storage.claim(pod.metadata.namespace ?? 'default', name);
    if (!claim) return { ...state, unresolvable: `persistentvolumeclaim "${name}" not found` };
    if (claim.metadata.deletionTimestamp) return { ...state, unresolvable: `persistentvolumeclaim "${name}" is being deleted` };
    if (claim.spec?.volumeName) {
      state.bound.push(storage.volume(claim.spec.volumeName));
      continue;
    }
    const className = claimClass(claim);
    if (className !== '' && storage.storageClass(className)?.volumeBindingMode === 'WaitForFirstConsumer') state.waiting.push(claim);
    else unboundImmediate = true;
  }
  return unboundImmediate ? { ...state, unresolvable: ERR_UNBOUND_IMMEDIATE } : state;
}

/** Why the node cannot take the pod's volumes, or undefined. */
export function volumeBindingReason(state: VolumeBindingState, node: Node, storage: StorageSnapshot | undefined): string | undefined {
  if (state.bound.some((v) => v === undefined)) return ERR_PV_NOT_EXIST;
  if (state.bound.some((v) => !matchesNodeSelector(v?.spec?.nodeAffinity?.required, node as api.Node))) return ERR_VOLUME_NODE_CONFLICT;
  if (state.waiting.length === 0 || !storage) return undefined;
  const volumes = storage.volumes();
  const taken = new Set<string>();
  for (const claim of state.waiting) {
    // The node named by an earlier attempt does not bind the choice: kube chooses again.
    const match = findVolume(claim, volumes.filter((v) => !taken.has(v.metadata.name) && volumeClass(v) === claimClass(claim)), node as api.Node);
    if (match) {
      taken.add(match.metadata.name);
      continue;
    }
    const provisioner = storage.storageClass(claimClass(claim))?.provisioner;
    if (!provisioner || provisioner === NO_PROVISIONER) return ERR_VOLUME_BIND_CONFLICT;
  }
  return undefined;
}
