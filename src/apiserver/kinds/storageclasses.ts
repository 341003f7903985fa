// StorageClasses (storage.k8s.io/v1, cluster-scoped): kube's defaults (reclaimPolicy Delete,
// volumeBindingMode Immediate), its validation (a provisioner that is a qualified name, at most
// 512 parameters of 256 KiB in all, known policies; provisioner, parameters, reclaimPolicy and
// volumeBindingMode fixed once made) and kubectl's columns, the default class's name followed by
// " (default)". The DefaultStorageClass admission (admission/storage.ts) gives claims the default.
import type * as api from '../../api/index.js';
import { jsonEqual } from '../../common/json.js';
import { labelKeyProblem } from '../../common/label-selectors.js';
import { isDefaultClass } from '../../kube/storage.js';
import { unsupported, type FieldProblem } from '../errors.js';
import { AGE_COLUMN, ageCell, column, NAME_COLUMN } from '../printing/columns.js';
import { unchanged } from './immutable.js';
import { builtinType, type KindStrategy } from './strategy.js';

const RECLAIM_POLICIES = ['Delete', 'Retain'];
const BINDING_MODES = ['Immediate', 'WaitForFirstConsumer'];
const MAX_PARAMETERS = 512;
const MAX_PARAMETERS_SIZE = 256 * 1024;

function createProblems(o: api.StorageClass): FieldProblem[] {
  const problems: FieldProblem[] = [];
  if (!o.provisioner) problems.push({ type: 'FieldValueRequired', field: 'provisioner', message: 'Required value' });
  else {
    const problem = labelKeyProblem(o.provisioner.toLowerCase());
    if (problem) problems.push({ type: 'FieldValueInvalid', field: 'provisioner', message: `Invalid value: ${JSON.stringify(o.provisioner)}: ${problem}` });
  }
  const parameters = Object.entries(o.parameters ?? {});
  if (parameters.length > MAX_PARAMETERS) problems.push({ type: 'FieldValueTooLong', field: 'parameters', message: `Too long: may not have more than ${MAX_PARAMETERS} items` });
  if (parameters.some(([k]) => k === '')) problems.push({ type: 'FieldValueInvalid', field: 'parameters', message: 'Invalid value: "": field can not be empty.' });
  if (parameters.reduce((n, [k, v]) => n + k.length + String(v).length, 0) > MAX_PARAMETERS_SIZE) {
    problems.push({ type: 'FieldValueTooLong', field: 'parameters', message: `Too long: must have at most ${MAX_PARAMETERS_SIZE} bytes` });
  }
  if (!RECLAIM_POLICIES.includes(o.reclaimPolicy ?? '')) problems.push(unsupported('reclaimPolicy', o.reclaimPolicy, RECLAIM_POLICIES));
  if (!BINDING_MODES.includes(o.volumeBindingMode ?? '')) problems.push(unsupported('volumeBindingMode', o.volumeBindingMode, BINDING_MODES));
  return problems;
}

function updateProblems(o: api.StorageClass, previous: api.StorageClass): FieldProblem[] {
  const problems: FieldProblem[] = [];
  if (!jsonEqual(o.parameters ?? {}, previous.parameters ?? {})) problems.push({ type: 'FieldValueForbidden', field: 'parameters', message: 'Forbidden: updates to parameters are forbidden.' });
  if (o.provisioner !== previous.provisioner) problems.push({ type: 'FieldValueForbidden', field: 'provisioner', message: 'Forbidden: updates to provisioner are forbidden.' });
  if (o.reclaimPolicy !== previous.reclaimPolicy) problems.push({ type: 'FieldValueForbidden', field: 'reclaimPolicy', message: 'Forbidden: updates to reclaimPolicy are forbidden.' });
  problems.push(...unchanged('volumeBindingMode', o.volumeBindingMode, previous.volumeBindingMode));
  return problems;
}

export const storageclasses: KindStrategy<api.StorageClass> = {
  type: builtinType('storage.k8s.io', 'v1', 'storageclasses', 'StorageClass', { namespaced: false, shortNames: ['sc'] }),
  defaults(object) {
    object.reclaimPolicy ??= 'Delete';
    object.volumeBindingMode ??= 'Immediate';
  },
  validate: (o, previous) => [...createProblems(o), ...(previous ? updateProblems(o, previous) : [])],
  printer: {
    columns: [NAME_COLUMN, column('Provisioner'), column('ReclaimPolicy'), column('VolumeBindingMode'), column('AllowVolumeExpansion'), AGE_COLUMN],
    cells: (o, now) => [
      isDefaultClass(o) ? `${o.metadata.name} (default)` : o.metadata.name, o.provisioner, o.reclaimPolicy ?? 'Delete', o.volumeBindingMode ?? 'Immediate', o.allowVolumeExpansion ?? false, ageCell(o, now),
    ],
  },
};
