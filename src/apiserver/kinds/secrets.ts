// Secrets (core/v1): type Opaque by default, stringData folded into data (base64) on write as
// kube-apiserver does, data that must be base64, and the TYPE and DATA columns.
import type * as api from '../../api/index.js';
import { AGE_COLUMN, ageCell, column, count, NAME_COLUMN } from '../printing/columns.js';
import { dataKeyProblems } from './configmaps.js';
import { builtinType, type KindStrategy } from './strategy.js';
import { immutableDataProblems, unchanged } from './immutable.js';

export const secrets: KindStrategy<api.Secret> = {
  type: builtinType('', 'v1', 'secrets', 'Secret', { fieldSelectors: ['type'] }),
  defaults(object) {
    object.type ??= 'Opaque';
    if (object.stringData) {
      object.data = { ...(object.data ?? {}) };
      for (const [k, v] of Object.entries(object.stringData as Record<string, string>)) object.data[k] = Buffer.from(String(v)).toString('base64');
      delete object.stringData;
    }
  },
  validate(object, previous) {
    const problems = [...dataKeyProblems(object), ...immutableDataProblems(object, previous), ...(previous ? unchanged('type', object.type, previous.type) : [])];
    for (const [key, value] of Object.entries((object.data ?? {}) as Record<string, unknown>)) {
      if (typeof value === 'string' && !/^[A-Za-z0-9+/]*={0,2}$/.test(value)) problems.push({ type: 'FieldValueInvalid', field: `data[${key}]`, message: 'illegal base64 data' });
    }
    return problems;
  },
  printer: { columns: [NAME_COLUMN, column('Type'), column('Data', 'integer'), AGE_COLUMN], cells: (o, now) => [o.metadata.name, o.type ?? 'Opaque', count(o.data) + count(o.stringData), ageCell(o, now)] },
};
