// PersistentVolumes (v1, cluster-scoped): kube's defaults (reclaim policy Retain, volume mode
// Filesystem, a new volume Pending with the time of its phase), its validation (access modes,
// a capacity of storage only and above zero, exactly one volume source, a hostPath with a path,
// a class name, the volume source and mode fixed once made, node affinity fixed once set), a
// status update stamping lastPhaseTransitionTime when the phase changes, and kubectl's columns.
// The checks a claim shares (access modes, class names, volume modes) are exported from here.
import type * as api from '../../api/index.js';
import { rfc3339 } from '../../common/time.js';
import { jsonEqual } from '../../common/json.js';
import { quantityMilli } from '../../kube/quantity.js';
import { ACCESS_MODES, accessModesString, volumeClass } from '../../kube/storage.js';
import { unsupported, type FieldProblem } from '../errors.js';
import { nameProblem } from '../admission/validation.js';
import { AGE_COLUMN, ageCell, column, NAME_COLUMN } from '../printing/columns.js';
import { unchanged } from './immutable.js';
import { builtinType, replaceStatus, type KindStrategy } from './strategy.js';

const RECLAIM_POLICIES = ['Delete', 'Recycle', 'Retain'];
const VOLUME_MODES = ['Block', 'Filesystem'];
const HOST_PATH_TYPES = ['', 'BlockDevice', 'CharDevice', 'Directory', 'DirectoryOrCreate', 'File', 'FileOrCreate', 'Socket'];
/** The volume sources of a PersistentVolumeSpec, as kube names them. */
const VOLUME_SOURCES = [
  'hostPath', 'gcePersistentDisk', 'awsElasticBlockStore', 'glusterfs', 'flocker', 'nfs', 'rbd', 'quobyte', 'cephfs', 'iscsi', 'cinder', 'fc',
  'flexVolume', 'azureFile', 'vsphereVolume', 'photonPersistentDisk', 'portworxVolume', 'azureDisk', 'scaleIO', 'local', 'storageos', 'csi',
];


/** Access modes known, and ReadWriteOncePod alone. */
export function accessModeProblems(modes: unknown[], field: string): FieldProblem[] {
  const problems = modes.filter((m) => !ACCESS_MODES.includes(m as string)).map((m) => unsupported(field, m, ACCESS_MODES));
  if (modes.includes('ReadWriteOncePod') && modes.some((m) => m !== 'ReadWriteOncePod' && ACCESS_MODES.includes(m as string))) {
    problems.push({ type: 'FieldValueForbidden', field, message: 'Forbidden: may not use ReadWriteOncePod with other access modes' });
  }
  return problems;
}

/** A storage class name, when given: a DNS subdomain. */
export function classNameProblems(name: unknown, field: string): FieldProblem[] {
  if (typeof name !== 'string' || name === '') return [];
  const problem = nameProblem('subdomain', name);
  return problem ? [{ type: 'FieldValueInvalid', field, message: `Invalid value: ${JSON.stringify(name)}: ${problem}` }] : [];
}

export function volumeModeProblems(mode: unknown, field: string): FieldProblem[] {
  return mode === undefined || VOLUME_MODES.includes(mode as string) ? [] : [unsupported(field, mode, VOLUME_MODES)];
}

/** A quantity above zero (kube's ValidatePositiveQuantityValue, after its parse). */
export function positiveQuantityProblems(value: unknown, field: string): FieldProblem[] {
  let milli: bigint;
  try {
    milli = quantityMilli(value as string);
  } catch {
    return [{ type: 'FieldValueInvalid', field, message: `Invalid value: ${JSON.stringify(value)}: quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'` }];
  }
  return milli > 0n ? [] : [{ type: 'FieldValueInvalid', field, message: `Invalid value: ${JSON.stringify(value)}: must be greater than zero` }];
}

function specProblems(spec: api.PersistentVolume['spec'] & object): FieldProblem[] {
  const problems: FieldProblem[] = [];
  const modes = spec.accessModes ?? [];
  if (modes.length === 0) problems.push({ type: 'FieldValueRequired', field: 'spec.accessModes', message: 'Required value' });
  problems.push(...accessModeProblems(modes, 'spec.accessModes'));
  const capacity = (spec.capacity ?? {}) as Record<string, unknown>;
  const names = Object.keys(capacity);
  if (names.length === 0) problems.push({ type: 'FieldValueRequired', field: 'spec.capacity', message: 'Required value' });
  else if (!names.includes('storage') || names.length > 1) problems.push(unsupported('spec.capacity', Object.fromEntries(names.map((n) => [n, capacity[n]])), ['storage']));
  for (const name of names) problems.push(...positiveQuantityProblems(capacity[name], `spec.capacity[${name}]`));
  const policy = spec.persistentVolumeReclaimPolicy;
  if (policy && !RECLAIM_POLICIES.includes(policy)) problems.push(unsupported('spec.persistentVolumeReclaimPolicy', policy, RECLAIM_POLICIES));
  const sources = VOLUME_SOURCES.filter((s) => (spec as Record<string, unknown>)[s] !== undefined && (spec as Record<string, unknown>)[s] !== null);
  if (sources.length === 0) problems.push({ type: 'FieldValueRequired', field: 'spec', message: 'Required value: must specify a volume type' });
  for (const extra of sources.slice(1)) problems.push({ type: 'FieldValueForbidden', field: `spec.${extra}`, message: 'Forbidden: may not specify more than 1 volume type' });
  if (spec.hostPath) {
    if (!spec.hostPath.path) problems.push({ type: 'FieldValueRequired', field: 'spec.hostPath.path', message: 'Required value' });
    if (spec.hostPath.type !== undefined && !HOST_PATH_TYPES.includes(spec.hostPath.type)) problems.push(unsupported('spec.hostPath.type', spec.hostPath.type, HOST_PATH_TYPES));
  }
  if (spec.local) {
    if (!spec.local.path) problems.push({ type: 'FieldValueRequired', field: 'spec.local.path', message: 'Required value' });
    if (!spec.nodeAffinity?.required) problems.push({ type: 'FieldValueRequired', field: 'spec.nodeAffinity', message: 'Required value: Local volume requires node affinity' });
  }
  if (spec.nodeAffinity && (spec.nodeAffinity.required?.nodeSelectorTerms ?? []).length === 0) {
    problems.push({ type: 'FieldValueRequired', field: 'spec.nodeAffinity.required.nodeSelectorTerms', message: 'Required value: must have at least one node selector term' });
  }
  problems.push(...classNameProblems(spec.storageClassName, 'spec.storageClassName'), ...volumeModeProblems(spec.volumeMode, 'spec.volumeMode'));
  return problems;
}

/** The spec fields that hold the volume source (kube's PersistentVolumeSource). */
const sourceOf = (spec: api.PersistentVolume['spec']) => Object.fromEntries(VOLUME_SOURCES.map((s) => [s, (spec as Record<string, unknown> | undefined)?.[s]]).filter(([, v]) => v !== undefined));

function updateProblems(o: api.PersistentVolume, previous: api.PersistentVolume): FieldProblem[] {
  const problems: FieldProblem[] = [];
  if (!jsonEqual(sourceOf(o.spec), sourceOf(previous.spec))) {
    problems.push({ type: 'FieldValueForbidden', field: 'spec.persistentvolumesource', message: 'Forbidden: spec.persistentvolumesource is immutable after creation' });
  }
  problems.push(...unchanged('volumeMode', o.spec?.volumeMode, previous.spec?.volumeMode));
  if (previous.spec?.nodeAffinity) problems.push(...unchanged('nodeAffinity', o.spec?.nodeAffinity, previous.spec.nodeAffinity));
  return problems;
}

export const persistentvolumes: KindStrategy<api.PersistentVolume> = {
  type: builtinType('', 'v1', 'persistentvolumes', 'PersistentVolume', { namespaced: false, status: true, shortNames: ['pv'] }),
  defaults(object) {
    const spec = (object.spec ??= {});
    spec.persistentVolumeReclaimPolicy ||= 'Retain';
    spec.volumeMode ??= 'Filesystem';
    if (spec.hostPath) spec.hostPath.type ??= '';
  },
  // A new volume starts Pending, whatever status it was sent with (kube's PrepareForCreate).
  prepareForCreate(object) {
    object.status = { phase: 'Pending', lastPhaseTransitionTime: rfc3339() };
  },
  subresourceUpdates: {
    status(incoming, previous) {
      const next = replaceStatus(incoming, previous);
      if (next.status && next.status.phase !== previous.status?.phase) next.status.lastPhaseTransitionTime = rfc3339();
      return next;
    },
  },
  validate: (o, previous) => [...specProblems(o.spec ?? {}), ...(previous ? updateProblems(o, previous) : [])],
  printer: {
    columns: [NAME_COLUMN, column('Capacity'), column('Access Modes'), column('Reclaim Policy'), column('Status'), column('Claim'), column('StorageClass'), column('VolumeAttributesClass'), column('Reason'), AGE_COLUMN, column('VolumeMode', 'string', 1)],
    cells: (o, now) => {
      const claim = o.spec?.claimRef ? `${o.spec.claimRef.namespace ?? ''}/${o.spec.claimRef.name ?? ''}` : '';
      const phase = o.metadata.deletionTimestamp ? 'Terminating' : (o.status?.phase ?? '');
      return [
        o.metadata.name, String(o.spec?.capacity?.storage ?? ''), accessModesString(o.spec?.accessModes), o.spec?.persistentVolumeReclaimPolicy ?? '', phase, claim,
        volumeClass(o), o.spec?.volumeAttributesClassName ?? '<unset>', o.status?.reason ?? '', ageCell(o, now), o.spec?.volumeMode ?? '<unset>',
      ];
    },
  },
};
