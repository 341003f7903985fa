// ConfigMaps (core/v1): keys that are valid config keys and file names (shared with Secrets),
// string values, and the DATA column.
import type * as api from '../../api/index.js';
import type { FieldProblem } from '../errors.js';
import { AGE_COLUMN, ageCell, column, count, NAME_COLUMN } from '../printing/columns.js';
import { builtinType, type KindStrategy } from './strategy.js';
import { immutableDataProblems } from './immutable.js';

const CONFIG_KEY = /^[-._a-zA-Z0-9]+$/;

/** Problems with the keys and values of data, binaryData and stringData (ConfigMaps and Secrets). */
export function dataKeyProblems(object: { data?: unknown; binaryData?: unknown; stringData?: unknown }): FieldProblem[] {
  const problems: FieldProblem[] = [];
  for (const field of ['data', 'binaryData', 'stringData'] as const) {
    for (const [key, value] of Object.entries((object[field] ?? {}) as Record<string, unknown>)) {
      if (!CONFIG_KEY.test(key) || key.length > 253) problems.push({ type: 'FieldValueInvalid', field: `${field}[${key}]`, message: `Invalid value: "${key}": a valid config key must consist of alphanumeric characters, '-', '_' or '.'` });
      // Keys become file names in volumes: kube-apiserver refuses '.', '..' and a '..' prefix.
      else if (key === '.' || key.startsWith('..')) problems.push({ type: 'FieldValueInvalid', field: `${field}[${key}]`, message: `Invalid value: "${key}": ${key === '.' ? "must not be '.'" : key === '..' ? "must not be '..'" : "must not start with '..'"}` });
      if (typeof value !== 'string') problems.push({ type: 'FieldValueInvalid', field: `${field}[${key}]`, message: 'must be a string' });
    }
  }
  return problems;
}

export const configmaps: KindStrategy<api.ConfigMap> = {
  type: builtinType('', 'v1', 'configmaps', 'ConfigMap', { shortNames: ['cm'] }),
  validate: (o, previous) => [...dataKeyProblems(o), ...immutableDataProblems(o, previous)],
  printer: { columns: [NAME_COLUMN, column('Data', 'integer'), AGE_COLUMN], cells: (o, now) => [o.metadata.name, count(o.data) + count(o.binaryData), ageCell(o, now)] },
};
