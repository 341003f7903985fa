// Endpoints (core/v1): the ENDPOINTS column, the first three addresses and how many more.
import type * as api from '../../api/index.js';
import { AGE_COLUMN, ageCell, column, NAME_COLUMN } from '../printing/columns.js';
import { builtinType, type KindStrategy } from './strategy.js';

export const endpoints: KindStrategy<api.Endpoints> = {
  type: builtinType('', 'v1', 'endpoints', 'Endpoints', { shortNames: ['ep'], singular: 'endpoints' }),
  printer: {
    columns: [NAME_COLUMN, column('Endpoints'), AGE_COLUMN],
    cells: (o, now) => {
      const eps: string[] = [];
      for (const s of o.subsets ?? []) for (const a of s.addresses ?? []) for (const p of s.ports ?? [undefined]) eps.push(p?.port ? `${a.ip}:${p.port}` : a.ip);
      return [o.metadata.name, eps.length ? eps.slice(0, 3).join(',') + (eps.length > 3 ? ` + ${eps.length - 3} more...` : '') : '<none>', ageCell(o, now)];
    },
  },
};
