// PriorityClasses (scheduling.k8s.io/v1): kube's defaults (preemptionPolicy PreemptLowerPriority)
// and validation (a value, at most 1,000,000,000 for classes users make, the `system-` prefix
// kept for the system's classes with their values, value and preemptionPolicy fixed once made, the
// system's classes not deletable),
// and kubectl's VALUE / GLOBAL-DEFAULT / PREEMPTIONPOLICY columns. The Priority admission
// (admission/priority.ts) gives pods their class's value.
import type * as api from '../../api/index.js';
import type { FieldProblem } from '../errors.js';
import { AGE_COLUMN, ageCell, column, NAME_COLUMN } from '../printing/columns.js';
import { builtinType, type KindStrategy } from './strategy.js';

const POLICIES = ['PreemptLowerPriority', 'Never'];

/** kube's system classes: every cluster has them, with these values (the API server makes them at start). */
export const SYSTEM_PRIORITY_CLASSES: { name: string; value: number; description: string }[] = [
  { name: 'system-node-critical', value: 2_000_001_000, description: 'Used for system critical pods that must not be moved from their current node.' },
  { name: 'system-cluster-critical', value: 2_000_000_000, description: 'Used for system critical pods that must run in the cluster, but can be moved to another node if necessary.' },
];

/** The highest value a class users make may have (above it: the system's). */
export const HIGHEST_USER_PRIORITY = 1_000_000_000;

export const priorityclasses: KindStrategy<api.PriorityClass> = {
  type: builtinType('scheduling.k8s.io', 'v1', 'priorityclasses', 'PriorityClass', { namespaced: false, shortNames: ['pc'] }),
  // kube's REST storage refuses it.
  undeletable: (name) => (SYSTEM_PRIORITY_CLASSES.some((c) => c.name === name) ? 'this is a system priority class and cannot be deleted' : undefined),
  defaults(object) {
    object.preemptionPolicy ??= 'PreemptLowerPriority';
  },
  validate(o, previous) {
    const problems: FieldProblem[] = [];
    const system = SYSTEM_PRIORITY_CLASSES.find((c) => c.name === o.metadata.name);
    if (!Number.isInteger(o.value)) {
      problems.push({ type: 'FieldValueRequired', field: 'value', message: 'Required value: must be an integer' });
    } else if (system) {
      if (o.value !== system.value) problems.push({ type: 'FieldValueInvalid', field: 'metadata.name', message: `Invalid value: ${JSON.stringify(o.metadata.name)}: priority class is a system priority class with value ${system.value}; value must be ${system.value}` });
    } else if (o.value > HIGHEST_USER_PRIORITY) {
      problems.push({ type: 'FieldValueForbidden', field: 'value', message: `Forbidden: maximum allowed value of a user defined priority is ${HIGHEST_USER_PRIORITY}` });
    }
    if (!system && o.metadata.name.startsWith('system-')) {
      problems.push({ type: 'FieldValueForbidden', field: 'metadata.name', message: "Forbidden: priority class names with 'system-' prefix are reserved" });
    }
    if (!POLICIES.includes(o.preemptionPolicy ?? '')) {
      problems.push({ type: 'FieldValueNotSupported', field: 'preemptionPolicy', message: `Unsupported value: ${JSON.stringify(o.preemptionPolicy)}: supported values: "Never", "PreemptLowerPriority"` });
    }
    if (previous) {
      if (o.value !== previous.value) problems.push({ type: 'FieldValueForbidden', field: 'value', message: 'Forbidden: may not be changed in an update.' });
      if (o.preemptionPolicy !== previous.preemptionPolicy) problems.push({ type: 'FieldValueInvalid', field: 'preemptionPolicy', message: `Invalid value: ${JSON.stringify(o.preemptionPolicy)}: field is immutable` });
    }
    return problems;
  },
  printer: {
    columns: [NAME_COLUMN, column('Value', 'integer'), column('Global-Default', 'boolean'), AGE_COLUMN, column('PreemptionPolicy')],
    cells: (o, now) => [o.metadata.name, o.value, o.globalDefault === true, ageCell(o, now), o.preemptionPolicy ?? ''],
  },
};
