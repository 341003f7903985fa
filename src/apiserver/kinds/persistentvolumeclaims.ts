// PersistentVolumeClaims (v1): kube's defaults (volume mode Filesystem, a new claim Pending), its
// validation (at least one known access mode, ReadWriteOncePod alone, a storage request above
// zero, a class name, a selector), the update rule (the spec is fixed once made, except
// `volumeName`, which may be set once, `storageClassName` on a claim that had none, and the
// storage request of a bound claim, which may grow — or shrink back while above what
// status.capacity says — but not below it), and kubectl's
// columns. DefaultStorageClass and StorageObjectInUseProtection (admission/storage.ts) fill in the
// class and the protection finalizer.
import type * as api from '../../api/index.js';
import { jsonEqual } from '../../common/json.js';
import { quantityMilli } from '../../kube/quantity.js';
import { accessModesString, BETA_CLASS_ANNOTATION, claimClass } from '../../kube/storage.js';
import type { FieldProblem } from '../errors.js';
import { AGE_COLUMN, ageCell, column, NAME_COLUMN } from '../printing/columns.js';
import { unchanged } from './immutable.js';
import { accessModeProblems, classNameProblems, positiveQuantityProblems, volumeModeProblems } from './persistentvolumes.js';
import { builtinType, type KindStrategy } from './strategy.js';
import { labelKeyProblem } from '../../common/label-selectors.js';

type Claim = api.PersistentVolumeClaim;
type ClaimSpec = NonNullable<Claim['spec']>;

const SELECTOR_OPERATORS = ['In', 'NotIn', 'Exists', 'DoesNotExist'];

function selectorProblems(selector: ClaimSpec['selector']): FieldProblem[] {
  const problems: FieldProblem[] = [];
  for (const key of Object.keys(selector?.matchLabels ?? {})) {
    const problem = labelKeyProblem(key);
    if (problem) problems.push({ type: 'FieldValueInvalid', field: 'spec.selector.matchLabels', message: `Invalid value: ${JSON.stringify(key)}: ${problem}` });
  }
  (selector?.matchExpressions ?? []).forEach((e, i) => {
    if (!SELECTOR_OPERATORS.includes(e.operator)) {
      problems.push({ type: 'FieldValueInvalid', field: `spec.selector.matchExpressions[${i}].operator`, message: `Invalid value: ${JSON.stringify(e.operator)}: not a valid selector operator` });
    } else if ((e.operator === 'In' || e.operator === 'NotIn') !== (e.values ?? []).length > 0) {
      problems.push(e.operator === 'In' || e.operator === 'NotIn'
        ? { type: 'FieldValueRequired', field: `spec.selector.matchExpressions[${i}].values`, message: 'Required value: must be specified when `operator` is \'In\' or \'NotIn\'' }
        : { type: 'FieldValueForbidden', field: `spec.selector.matchExpressions[${i}].values`, message: 'Forbidden: may not be specified when `operator` is \'Exists\' or \'DoesNotExist\'' });
    }
  });
  return problems;
}

function specProblems(spec: ClaimSpec): FieldProblem[] {
  const problems: FieldProblem[] = [];
  const modes = spec.accessModes ?? [];
  if (modes.length === 0) problems.push({ type: 'FieldValueRequired', field: 'spec.accessModes', message: 'Required value: at least 1 access mode is required' });
  problems.push(...selectorProblems(spec.selector), ...accessModeProblems(modes, 'spec.accessModes'));
  const storage = (spec.resources?.requests as Record<string, unknown> | undefined)?.storage;
  if (storage === undefined) problems.push({ type: 'FieldValueRequired', field: 'spec.resources[storage]', message: 'Required value' });
  else problems.push(...positiveQuantityProblems(storage, 'spec.resources[storage]'));
  problems.push(...classNameProblems(spec.storageClassName, 'spec.storageClassName'), ...volumeModeProblems(spec.volumeMode, 'spec.volumeMode'));
  return problems;
}

const storageOf = (list: Record<string, unknown> | undefined): bigint | undefined => {
  try {
    return list?.storage === undefined ? undefined : quantityMilli(list.storage as string);
  } catch {
    return undefined;
  }
};

/** kube's ValidatePersistentVolumeClaimUpdate, with RecoverVolumeExpansionFailure on (kube 1.32+). */
function updateProblems(o: Claim, previous: Claim): FieldProblem[] {
  const problems: FieldProblem[] = [];
  const comparable = (claim: Claim, volumeName: string | undefined): ClaimSpec => {
    const spec = structuredClone(claim.spec ?? {}) as ClaimSpec;
    if (volumeName !== undefined) spec.volumeName = volumeName;
    // A bound claim's storage request may change; other requests may not.
    if (o.status?.phase === 'Bound' && spec.resources?.requests) spec.resources.requests.storage = previous.spec?.resources?.requests?.storage as string;
    delete spec.volumeAttributesClassName;
    return spec;
  };
  // volumeName may be set once (by the binder, or by the user before binding).
  const before = comparable(previous, previous.spec?.volumeName ? undefined : o.spec?.volumeName);
  // A class may be given to a claim that had none at all (the binder's retroactive default class),
  // unless its beta annotation names another.
  const betaClass = previous.metadata.annotations?.[BETA_CLASS_ANNOTATION];
  if ((previous.spec?.storageClassName ?? undefined) === undefined && o.spec?.storageClassName && (betaClass === undefined || betaClass === o.spec.storageClassName)) {
    before.storageClassName = o.spec.storageClassName;
  }
  if (!jsonEqual(comparable(o, undefined), before)) {
    problems.push({ type: 'FieldValueForbidden', field: 'spec', message: 'Forbidden: spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims' });
  }
  const oldSize = storageOf(previous.spec?.resources?.requests);
  const newSize = storageOf(o.spec?.resources?.requests);
  const statusSize = storageOf(previous.status?.capacity) ?? 0n;
  if (oldSize !== undefined && newSize !== undefined && newSize < oldSize && newSize <= statusSize) {
    problems.push({ type: 'FieldValueForbidden', field: 'spec.resources.requests.storage', message: 'Forbidden: field can not be less than status.capacity' });
  }
  problems.push(...unchanged('volumeMode', o.spec?.volumeMode, previous.spec?.volumeMode));
  return problems;
}

export const persistentvolumeclaims: KindStrategy<Claim> = {
  type: builtinType('', 'v1', 'persistentvolumeclaims', 'PersistentVolumeClaim', { status: true, shortNames: ['pvc'] }),
  defaults(object) {
    (object.spec ??= {}).volumeMode ??= 'Filesystem';
  },
  // A new claim starts Pending, whatever status it was sent with (kube's PrepareForCreate and defaults).
  prepareForCreate(object) {
    object.status = { phase: 'Pending' };
  },
  validate: (o, previous) => [...specProblems(o.spec ?? {}), ...(previous ? updateProblems(o, previous) : [])],
  printer: {
    columns: [NAME_COLUMN, column('Status'), column('Volume'), column('Capacity'), column('Access Modes'), column('StorageClass'), column('VolumeAttributesClass'), AGE_COLUMN, column('VolumeMode', 'string', 1)],
    cells: (o, now) => {
      const bound = Boolean(o.spec?.volumeName);
      const phase = o.metadata.deletionTimestamp ? 'Terminating' : (o.status?.phase ?? '');
      return [
        o.metadata.name, phase, o.spec?.volumeName ?? '', bound ? String(o.status?.capacity?.storage ?? '') : '', bound ? accessModesString(o.status?.accessModes) : '',
        claimClass(o), o.spec?.volumeAttributesClassName ?? '<unset>', ageCell(o, now), o.spec?.volumeMode ?? '<unset>',
      ];
    },
  },
};
