// ServiceAccounts (core/v1): the SECRETS column.
import type * as api from '../../api/index.js';
import { AGE_COLUMN, ageCell, column, count, NAME_COLUMN } from '../printing/columns.js';
import { builtinType, type KindStrategy } from './strategy.js';

export const serviceaccounts: KindStrategy<api.ServiceAccount> = {
  type: builtinType('', 'v1', 'serviceaccounts', 'ServiceAccount', { shortNames: ['sa'] }),
  printer: { columns: [NAME_COLUMN, column('Secrets', 'integer'), AGE_COLUMN], cells: (o, now) => [o.metadata.name, count(o.secrets), ageCell(o, now)] },
};
