// Leases (coordination.k8s.io/v1): a positive leaseDurationSeconds, and the HOLDER column.
import type * as api from '../../api/index.js';
import { AGE_COLUMN, ageCell, column, NAME_COLUMN } from '../printing/columns.js';
import { builtinType, type KindStrategy } from './strategy.js';

export const leases: KindStrategy<api.Lease> = {
  type: builtinType('coordination.k8s.io', 'v1', 'leases', 'Lease'),
  validate: (o) =>
    o.spec?.leaseDurationSeconds !== undefined && !(Number.isInteger(o.spec.leaseDurationSeconds) && o.spec.leaseDurationSeconds > 0)
      ? [{ type: 'FieldValueInvalid', field: 'spec.leaseDurationSeconds', message: 'must be greater than 0' }]
      : [],
  printer: { columns: [NAME_COLUMN, column('Holder'), AGE_COLUMN], cells: (o, now) => [o.metadata.name, o.spec?.holderIdentity ?? '', ageCell(o, now)] },
};
