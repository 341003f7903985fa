// The binder's decisions, pure (kube's pkg/controller/volume/persistentvolume index and
// findMatchingVolume): which volume a claim may bind to, whether its class delays binding until a
// pod is scheduled, and how a volume refers to its claim.
//
// A volume fits a claim when it is not being deleted, has the claim's class and volume mode,
// offers every access mode the claim asks for, holds at least the storage requested, carries the
// labels of the claim's selector, and (when a node is given: a WaitForFirstConsumer claim whose
// pod is placed) lets that node use it. A volume pre-bound to the claim (its claimRef names the
// claim) is taken before any other; otherwise only Available volumes with no claimRef are
// candidates, and the smallest wins.
import type * as api from '../../api/index.js';
import { storedSelectorMatches } from '../../common/label-selectors.js';
import { quantityMilli } from '../../kube/quantity.js';
import { claimClass, volumeClass } from '../../kube/storage.js';
import { matchesNodeSelector } from '../scheduler/node-affinity.js';

type Claim = api.PersistentVolumeClaim;
type Volume = api.PersistentVolume;

/** Storage in thousandths of a byte; undefined when unset or unreadable. */
function storage(list: Record<string, string> | undefined): bigint | undefined {
  try {
    return list?.storage === undefined ? undefined : quantityMilli(list.storage);
  } catch {
    return undefined;
  }
}

/** Whether the volume's claimRef names this claim (by namespace and name, and uid when it has one). */
export function boundToClaim(volume: Volume, claim: Claim): boolean {
  const ref = volume.spec?.claimRef;
  if (!ref || ref.name !== claim.metadata.name || (ref.namespace ?? '') !== (claim.metadata.namespace ?? '')) return false;
  return !ref.uid || ref.uid === claim.metadata.uid;
}

/** The claimRef a volume bound to `claim` carries. */
export function claimRefOf(claim: Claim): NonNullable<NonNullable<Volume['spec']>['claimRef']> {
  return { kind: 'PersistentVolumeClaim', apiVersion: 'v1', namespace: claim.metadata.namespace, name: claim.metadata.name, uid: claim.metadata.uid, resourceVersion: claim.metadata.resourceVersion };
}

/** Whether a claim of this class waits for its first pod to be scheduled before it is bound or provisioned. */
export function delaysBinding(claim: Claim, classes: api.StorageClass[]): boolean {
  const name = claimClass(claim);
  return name !== '' && classes.find((c) => c.metadata.name === name)?.volumeBindingMode === 'WaitForFirstConsumer';
}

/** Everything but availability and pre-binding: can this volume serve this claim (on this node)? */
export function volumeFits(volume: Volume, claim: Claim, node?: api.Node): boolean {
  if (volume.metadata.deletionTimestamp) return false;
  if (volumeClass(volume) !== claimClass(claim)) return false;
  if ((volume.spec?.volumeMode ?? 'Filesystem') !== (claim.spec?.volumeMode ?? 'Filesystem')) return false;
  const offered = volume.spec?.accessModes ?? [];
  if (!(claim.spec?.accessModes ?? []).every((mode) => offered.includes(mode))) return false;
  const have = storage(volume.spec?.capacity);
  const want = storage(claim.spec?.resources?.requests);
  if (have === undefined || want === undefined || have < want) return false;
  if (claim.spec?.selector && !storedSelectorMatches(claim.spec.selector, volume.metadata.labels ?? {})) return false;
  return !node || matchesNodeSelector(volume.spec?.nodeAffinity?.required, node);
}

/** The volume the claim should bind to: one pre-bound to it, else the smallest Available one that fits. */
export function findVolume(claim: Claim, volumes: Volume[], node?: api.Node): Volume | undefined {
  const prebound = volumes.find((v) => boundToClaim(v, claim) && volumeFits(v, claim, node));
  if (prebound) return prebound;
  const candidates = volumes.filter((v) => !v.spec?.claimRef && v.status?.phase === 'Available' && volumeFits(v, claim, node));
  return candidates.sort((a, b) => {
    const [x, y] = [storage(a.spec?.capacity)!, storage(b.spec?.capacity)!];
    return x < y ? -1 : x > y ? 1 : a.metadata.name.localeCompare(b.metadata.name);
  })[0];
}
