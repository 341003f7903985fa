// The PersistentVolume binder, as kube-controller-manager's persistentvolume-binder: it binds
// claims to volumes and gives volumes back when their claims go. One controller over two kinds of
// key — a claim's `namespace/name` and a volume's `name` (a cluster-scoped name has no slash) —
// each read afresh from the caches and converged (binding.ts decides which volume fits).
//
// A claim:
//   unbound (no spec.volumeName)
//     - no storageClassName at all while a default StorageClass exists: given the default (kube's
//       retroactive default class assignment), and looked at again;
//     - its class is WaitForFirstConsumer and the scheduler has not chosen a node
//       (volume.kubernetes.io/selected-node): stays Pending, event WaitForFirstConsumer;
//     - a volume fits (pre-bound to it, else the smallest Available one; on the selected node
//       when there is one): bind, in kube's order — the volume's claimRef (and
//       pv.kubernetes.io/bound-by-controller), the volume Bound, the claim's volumeName (and
//       pv.kubernetes.io/bind-completed, bound-by-controller), the claim Bound with the volume's
//       capacity and access modes. A step that fails is retried; each step is skipped once done;
//     - none fits, and the class has a provisioner: the claim is annotated
//       volume.kubernetes.io/storage-provisioner for it, event ExternalProvisioning; no class:
//       event FailedBinding; a class that does not exist: event ProvisioningFailed.
//   bound (spec.volumeName)
//     - its volume names it (or names no claim yet): finish the binding as above;
//     - its volume is gone after the binding completed: Lost, event ClaimLost; before: Pending;
//     - its volume is bound to another claim: event FailedBinding (ClaimMisbound and Lost when
//       the binding had completed).
// A volume:
//   - no claimRef: Available; a claimRef without uid (reserved by an administrator): Available;
//   - its claim exists with that uid: Bound once the claim names it; bound by this controller to a
//     claim now bound elsewhere: the claimRef removed, Available;
//   - its claim is gone (or another claim has its name): Released, then by its reclaim policy —
//     Retain: kept Released for an administrator; Delete: deleted, unless a provisioner made it
//     (pv.kubernetes.io/provisioned-by), which then deletes it; Recycle (deprecated): Failed.
// Unbound claims are looked at again every 15 s (kube's sync period) and whenever a volume
// becomes free or a class changes.
import type * as api from '../../api/index.js';
import { Controller, resources } from '../../kube/index.js';
import { BETA_CLASS_ANNOTATION, BIND_COMPLETED, BOUND_BY_CONTROLLER, claimClass, defaultClass, PROVISIONED_BY, SELECTED_NODE, STORAGE_PROVISIONER } from '../../kube/storage.js';
import type { WorkloadContext } from '../workloads/context.js';
import { boundToClaim, claimRefOf, delaysBinding, findVolume, volumeFits } from './binding.js';

type Claim = api.PersistentVolumeClaim;
type Volume = api.PersistentVolume;

const CLAIMS = resources.persistentVolumeClaims;
const VOLUMES = resources.persistentVolumes;
/** kube's beta spelling of the provisioner annotation, still written beside the GA one. */
const BETA_STORAGE_PROVISIONER = 'volume.beta.kubernetes.io/storage-provisioner';
const SYNC_PERIOD_MS = 15_000;

const claimKey = (namespace: string | undefined, name: string) => `${namespace ?? ''}/${name}`;

export function persistentVolumeBinder(ctx: WorkloadContext): Controller {
  const { persistentVolumeClaims: claims, persistentVolumes: volumes, storageClasses: classes, nodes } = ctx.informers;
  const controller = new Controller({ name: 'persistentvolume-binder-controller', clock: ctx.clock, sync: (key) => (key.includes('/') ? syncClaim(key) : syncVolume(key)), resyncPeriodMs: SYNC_PERIOD_MS });
  const unboundClaims = () => claims.list().filter((c) => !c.spec?.volumeName).map((c) => claimKey(c.metadata.namespace, c.metadata.name));
  controller.watch(claims);
  controller.watch(volumes);
  controller.watch(claims, (c, type, old) => [c.spec?.volumeName, old?.spec?.volumeName].filter((n): n is string => Boolean(n)));
  controller.watch(volumes, (v) => {
    const ref = v.spec?.claimRef;
    if (ref?.name) return [claimKey(ref.namespace, ref.name)];
    return v.status?.phase === 'Available' ? unboundClaims() : [];
  });
  controller.watch(classes, () => unboundClaims());

  const event = (object: api.KubeObject, type: 'Normal' | 'Warning', reason: string, message: string) => ctx.events.event(object, type, reason, message);

  async function syncClaim(key: string): Promise<void> {
    const claim = claims.getByKey(key);
    if (!claim) return;
    const volumeName = claim.spec?.volumeName;
    if (!volumeName) return syncUnboundClaim(claim);
    const volume = volumes.get(volumeName);
    const completed = claim.metadata.annotations?.[BIND_COMPLETED] !== undefined;
    if (!volume) {
      if (completed && claim.status?.phase !== 'Lost') {
        await ctx.client.mergePatch(CLAIMS, claim.metadata.name, claim.metadata.namespace, { status: { phase: 'Lost' } }, 'status');
        await event(claim, 'Warning', 'ClaimLost', 'Bound claim has lost reference to PersistentVolume. Data on the volume is lost!');
      }
      return;
    }
    if (!volume.spec?.claimRef) {
      if (!volumeFits(volume, claim)) return void (await event(claim, 'Warning', 'VolumeMismatch', `Cannot bind to requested volume "${volumeName}": it does not satisfy the claim's class, mode, access modes or size`));
      return bind(claim, volume);
    }
    if (boundToClaim(volume, claim)) return bind(claim, volume);
    if (completed) {
      if (claim.status?.phase !== 'Lost') await ctx.client.mergePatch(CLAIMS, claim.metadata.name, claim.metadata.namespace, { status: { phase: 'Lost' } }, 'status');
      return void (await event(claim, 'Warning', 'ClaimMisbound', 'Two claims are bound to the same volume, this one is bound incorrectly'));
    }
    await event(claim, 'Warning', 'FailedBinding', `volume "${volumeName}" already bound to a different claim.`);
  }

  async function syncUnboundClaim(claim: Claim): Promise<void> {
    if (claim.metadata.deletionTimestamp) return;
    const allClasses = classes.list();
    // Retroactive default class (kube 1.28+): a claim made while there was no default gets it now.
    if ((claim.spec?.storageClassName ?? undefined) === undefined && claim.metadata.annotations?.[BETA_CLASS_ANNOTATION] === undefined) {
      const fallback = defaultClass(allClasses);
      if (fallback) return void (await ctx.client.update(CLAIMS, { ...claim, spec: { ...claim.spec, storageClassName: fallback.metadata.name } }));
    }
    let node: api.Node | undefined;
    if (delaysBinding(claim, allClasses)) {
      const selected = claim.metadata.annotations?.[SELECTED_NODE];
      if (!selected) return void (await event(claim, 'Normal', 'WaitForFirstConsumer', 'waiting for first consumer to be created before binding'));
      node = nodes.get(selected);
      if (!node) return;
    }
    const volume = findVolume(claim, volumes.list(), node);
    if (volume) return bind(claim, volume);
    const className = claimClass(claim);
    if (className === '') return void (await event(claim, 'Normal', 'FailedBinding', 'no persistent volumes available for this claim and no storage class is set'));
    const storageClass = allClasses.find((c) => c.metadata.name === className);
    if (!storageClass) return void (await event(claim, 'Warning', 'ProvisioningFailed', `storageclass.storage.k8s.io "${className}" not found`));
    const annotations = claim.metadata.annotations ?? {};
    if (annotations[STORAGE_PROVISIONER] !== storageClass.provisioner) {
      await ctx.client.mergePatch(CLAIMS, claim.metadata.name, claim.metadata.namespace, { metadata: { annotations: { [STORAGE_PROVISIONER]: storageClass.provisioner, [BETA_STORAGE_PROVISIONER]: storageClass.provisioner } } });
    }
    await event(claim, 'Normal', 'ExternalProvisioning', `Waiting for a volume to be created either by the external provisioner '${storageClass.provisioner}' or manually by the system administrator. If volume creation is delayed, please verify that the provisioner is running and correctly registered.`);
  }

  /** Binds claim and volume, step by step in kube's order; steps already done are skipped. */
  async function bind(claim: Claim, volume: Volume): Promise<void> {
    let pv = volume;
    if (!boundToClaim(pv, claim) || !pv.spec?.claimRef?.uid) {
      const annotations = { ...pv.metadata.annotations, ...(pv.spec?.claimRef ? {} : { [BOUND_BY_CONTROLLER]: 'yes' }) };
      pv = await ctx.client.update(VOLUMES, { ...pv, metadata: { ...pv.metadata, annotations }, spec: { ...pv.spec, claimRef: claimRefOf(claim) } });
    }
    if (pv.status?.phase !== 'Bound') pv = await ctx.client.update(VOLUMES, { ...pv, status: { ...pv.status, phase: 'Bound' } }, 'status');
    let pvc = claim;
    const annotations = pvc.metadata.annotations ?? {};
    if (pvc.spec?.volumeName !== pv.metadata.name || annotations[BIND_COMPLETED] === undefined) {
      const added = { [BIND_COMPLETED]: 'yes', ...(pvc.spec?.volumeName ? {} : { [BOUND_BY_CONTROLLER]: 'yes' }) };
      pvc = await ctx.client.update(CLAIMS, { ...pvc, metadata: { ...pvc.metadata, annotations: { ...annotations, ...added } }, spec: { ...pvc.spec, volumeName: pv.metadata.name } });
    }
    const status = { ...pvc.status, phase: 'Bound', accessModes: pv.spec?.accessModes, capacity: pv.spec?.capacity };
    if (JSON.stringify([pvc.status?.phase, pvc.status?.accessModes, pvc.status?.capacity]) !== JSON.stringify([status.phase, status.accessModes, status.capacity])) {
      await ctx.client.update(CLAIMS, { ...pvc, status }, 'status');
    }
  }

  async function setPhase(volume: Volume, phase: string, message?: string): Promise<Volume> {
    if (volume.status?.phase === phase && volume.status?.message === message) return volume;
    return ctx.client.update(VOLUMES, { ...volume, status: { ...volume.status, phase, message } }, 'status');
  }

  /** The volume's claim, from the cache or, when the cache has none, the API server (it may be behind). */
  async function claimOf(ref: NonNullable<NonNullable<Volume['spec']>['claimRef']>): Promise<Claim | undefined> {
    return claims.get(ref.name ?? '', ref.namespace) ?? (await ctx.client.read(CLAIMS, ref.name ?? '', ref.namespace));
  }

  async function syncVolume(name: string): Promise<void> {
    const volume = volumes.get(name);
    if (!volume) return;
    const ref = volume.spec?.claimRef;
    if (!ref?.uid) {
      if (volume.status?.phase !== 'Failed' || !ref) await setPhase(volume, 'Available');
      return;
    }
    const claim = await claimOf(ref);
    if (claim && claim.metadata.uid === ref.uid) {
      if (claim.spec?.volumeName === volume.metadata.name) await setPhase(volume, 'Bound');
      else if (claim.spec?.volumeName && volume.metadata.annotations?.[BOUND_BY_CONTROLLER] !== undefined) {
        // Bound by us to a claim that ended up bound elsewhere: free it.
        const annotations = { ...volume.metadata.annotations };
        delete annotations[BOUND_BY_CONTROLLER];
        const spec = { ...volume.spec };
        delete spec.claimRef;
        await setPhase(await ctx.client.update(VOLUMES, { ...volume, metadata: { ...volume.metadata, annotations }, spec }), 'Available');
      }
      return;
    }
    // The claim is gone: the volume is released and reclaimed by its policy.
    if (volume.status?.phase === 'Failed') return;
    const released = await setPhase(volume, 'Released');
    const policy = volume.spec?.persistentVolumeReclaimPolicy ?? 'Retain';
    if (policy === 'Recycle') {
      await setPhase(released, 'Failed', 'recycling is not supported; the volume must be emptied and made Available by an administrator');
      return void (await event(volume, 'Warning', 'VolumeFailedRecycle', 'Recycle is not supported by bosun: the volume was not scrubbed'));
    }
    if (policy !== 'Delete' || volume.metadata.annotations?.[PROVISIONED_BY]) return;
    await ctx.client.delete(VOLUMES, volume.metadata.name, undefined, { preconditions: { uid: volume.metadata.uid } });
  }

  return controller;
}
