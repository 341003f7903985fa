// OpenAPI schemas of storage: PersistentVolumes and PersistentVolumeClaims (core/v1) and
// StorageClasses (storage.k8s.io/v1).
import { bool, CORE, free, intOrString, kind, META, object, ref, SPEC, STATUS, str, stringMap, strings, time, type Schema } from './builders.js';

const quantities = (description: string): Schema => ({ type: 'object', additionalProperties: intOrString('A quantity.'), description });
const ACCESS_MODES = 'ReadWriteOnce (one node), ReadOnlyMany, ReadWriteMany, ReadWriteOncePod (one pod).';

export const STORAGE_SCHEMAS: Record<string, Schema> = {
  [`${CORE}.PersistentVolume`]: kind('PersistentVolume is a piece of storage in the cluster, made by an administrator or by a provisioner for a claim.', {
    spec: object(SPEC, {
      capacity: quantities('How much the volume holds: storage only.'),
      accessModes: strings(`How the volume can be mounted: ${ACCESS_MODES}`),
      persistentVolumeReclaimPolicy: str('What happens to the volume once its claim is deleted: Retain (default; it becomes Released), Delete, or Recycle.', { enum: ['Delete', 'Recycle', 'Retain'] }),
      storageClassName: str('The class of the volume; only claims of this class bind to it. Empty: claims that ask for no class.'),
      volumeMode: str('Filesystem (default) or Block.', { enum: ['Block', 'Filesystem'] }),
      volumeAttributesClassName: str('The VolumeAttributesClass of the volume.'),
      claimRef: ref(`${CORE}.ObjectReference`, 'The claim bound to the volume, or reserved for it. Set by the binder, or by an administrator to reserve the volume.'),
      mountOptions: strings('Options used when the volume is mounted.'),
      nodeAffinity: object('The nodes from which the volume can be used.', {
        required: object('Node selector terms, one of which must match the node.', {
          nodeSelectorTerms: { type: 'array', items: free('A node selector term: matchExpressions and matchFields, all of which must hold.'), description: 'The terms, ORed.' },
        }, ['nodeSelectorTerms']),
      }),
      hostPath: object('A directory of the node (single-node use).', { path: str('The path on the node.'), type: str('What must be there: "", DirectoryOrCreate, Directory, FileOrCreate, File, Socket, CharDevice, BlockDevice.') }, ['path']),
      local: object('A local disk or directory of one node; needs nodeAffinity.', { path: str('The path on the node.'), fsType: str('The filesystem type.') }, ['path']),
      nfs: object('An NFS export.', { server: str('The server.'), path: str('The exported path.'), readOnly: bool('Mount read-only.') }, ['server', 'path']),
      csi: object('A volume of a CSI driver.', { driver: str('The driver.'), volumeHandle: str('The volume, as the driver names it.'), readOnly: bool('Mount read-only.'), fsType: str('The filesystem type.'), volumeAttributes: stringMap('Driver-specific attributes.') }, ['driver', 'volumeHandle']),
    }),
    status: object(STATUS, {
      phase: str('Pending, Available (free), Bound, Released (its claim was deleted) or Failed.', { enum: ['Available', 'Bound', 'Failed', 'Pending', 'Released'] }),
      message: str('Why the volume is in this phase.'),
      reason: str('A brief CamelCase reason for a failed volume.'),
      lastPhaseTransitionTime: time('When the phase last changed.'),
    }),
  }),
  [`${CORE}.PersistentVolumeClaim`]: kind('PersistentVolumeClaim is a request for storage; it binds to one PersistentVolume, which a pod then mounts through the claim.', {
    spec: object(SPEC, {
      accessModes: strings(`The access modes the volume must offer: ${ACCESS_MODES}`),
      resources: object('How much storage the claim asks for.', { requests: quantities('storage: at least this much.'), limits: quantities('Not used for storage.') }),
      selector: ref(`${META}.LabelSelector`, 'Only volumes with these labels may bind.'),
      storageClassName: str('The class of the volume wanted; unset: the default class; "": volumes without a class.'),
      volumeName: str('The volume bound to the claim. Set by the binder, or by the user to ask for one volume.'),
      volumeMode: str('Filesystem (default) or Block.', { enum: ['Block', 'Filesystem'] }),
      volumeAttributesClassName: str('The VolumeAttributesClass the claim asks for.'),
      dataSource: free('An existing claim or snapshot to fill the new volume from.'),
      dataSourceRef: free('An object to fill the new volume from.'),
    }),
    status: object(STATUS, {
      phase: str('Pending (not bound yet), Bound, or Lost (its volume is gone).', { enum: ['Bound', 'Lost', 'Pending'] }),
      accessModes: strings('The access modes of the bound volume.'),
      capacity: quantities('The capacity of the bound volume.'),
      conditions: { type: 'array', items: free('A condition of the claim (resizing).'), description: 'The current conditions of the claim.' },
    }),
  }),
  'io.k8s.api.storage.v1.StorageClass': kind('StorageClass describes a kind of storage: the provisioner that makes its volumes on demand and how.', {
    provisioner: str('The provisioner that makes volumes of this class (bosun.io/local-path on bosun). Fixed once set.'),
    parameters: stringMap('Settings for the provisioner. Fixed once set.'),
    reclaimPolicy: str('The reclaim policy of the volumes made: Delete (default) or Retain. Fixed once set.', { enum: ['Delete', 'Retain'] }),
    volumeBindingMode: str('Immediate (default): claims are bound or provisioned at once; WaitForFirstConsumer: once a pod using the claim is scheduled, on its node. Fixed once set.', { enum: ['Immediate', 'WaitForFirstConsumer'] }),
    allowVolumeExpansion: bool('Whether claims of this class may ask for more storage.'),
    mountOptions: strings('Options the volumes made are mounted with.'),
    allowedTopologies: { type: 'array', items: free('A topology selector term.'), description: 'Where volumes may be provisioned; anywhere when empty.' },
  }),
};
