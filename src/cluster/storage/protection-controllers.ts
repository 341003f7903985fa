// The pvc-protection and pv-protection controllers, as kube-controller-manager's: the
// StorageObjectInUseProtection admission puts a finalizer on every claim and volume; these
// controllers add it where it is missing, and take it off a deleted object once nothing needs the
// object any more, so that its deletion completes:
//   - a claim (kubernetes.io/pvc-protection) once no pod uses it: no pod of its namespace that is
//     scheduled and not finished names it in a persistentVolumeClaim volume — read from the API
//     server, not a cache, since a cache a moment behind could miss a pod just created;
//   - a volume (kubernetes.io/pv-protection) once it is not Bound to a claim.
import type * as api from '../../api/index.js';
import { Controller, resources, type ResourceRef } from '../../kube/index.js';
import { PV_PROTECTION_FINALIZER, PVC_PROTECTION_FINALIZER } from '../../kube/storage.js';
import type { WorkloadContext } from '../workloads/context.js';
import { isTerminal } from '../workloads/pods.js';

const CLAIMS = resources.persistentVolumeClaims;
const VOLUMES = resources.persistentVolumes;
const PODS = resources.pods;

/** The claims a pod names in its volumes, as keys. */
const claimKeysOf = (pod: api.Pod) => (pod.spec?.volumes ?? []).flatMap((v) => (v.persistentVolumeClaim ? [`${pod.metadata.namespace}/${v.persistentVolumeClaim.claimName}`] : []));

/** Whether a pod holds the claim: scheduled (a kubelet may mount it), not finished, naming it. */
export function podUsesClaim(pod: api.Pod, claimName: string): boolean {
  return Boolean(pod.spec?.nodeName) && !isTerminal(pod) && (pod.spec?.volumes ?? []).some((v) => v.persistentVolumeClaim?.claimName === claimName);
}

/** Adds the finalizer to a live object that lacks it, or removes it from a deleted one when `free` says nothing needs it. */
async function keepFinalizer<T extends api.KubeObject>(ctx: WorkloadContext, ref: ResourceRef<T>, object: T, finalizer: string, free: () => Promise<boolean>): Promise<void> {
  const finalizers = object.metadata.finalizers ?? [];
  if (!object.metadata.deletionTimestamp) {
    if (!finalizers.includes(finalizer)) await ctx.client.update(ref, { ...object, metadata: { ...object.metadata, finalizers: [...finalizers, finalizer] } });
    return;
  }
  if (!finalizers.includes(finalizer) || !(await free())) return;
  await ctx.client.update(ref, { ...object, metadata: { ...object.metadata, finalizers: finalizers.filter((f) => f !== finalizer) } });
}

export function pvcProtectionController(ctx: WorkloadContext): Controller {
  const { persistentVolumeClaims: claims, pods } = ctx.informers;
  const controller = new Controller({ name: 'pvc-protection-controller', clock: ctx.clock, sync });
  controller.watch(claims);
  // A pod going away (deleted or finished) may free its claims.
  controller.watch(pods, (pod, type, old) => [...new Set([...claimKeysOf(pod), ...(old ? claimKeysOf(old) : [])])]);
  return controller;

  async function sync(key: string): Promise<void> {
    const claim = claims.getByKey(key);
    if (!claim) return;
    await keepFinalizer(ctx, CLAIMS, claim, PVC_PROTECTION_FINALIZER, async () => {
      const live = await ctx.client.list(PODS, claim.metadata.namespace);
      return !live.items.some((pod) => podUsesClaim(pod, claim.metadata.name));
    });
  }
}

export function pvProtectionController(ctx: WorkloadContext): Controller {
  const { persistentVolumes: volumes } = ctx.informers;
  const controller = new Controller({ name: 'pv-protection-controller', clock: ctx.clock, sync });
  controller.watch(volumes);
  return controller;

  async function sync(key: string): Promise<void> {
    const volume = volumes.getByKey(key);
    if (!volume) return;
    await keepFinalizer(ctx, VOLUMES, volume, PV_PROTECTION_FINALIZER, async () => volume.status?.phase !== 'Bound');
  }
}
