// PodDisruptionBudgets (policy/v1): the MIN AVAILABLE / MAX UNAVAILABLE / ALLOWED DISRUPTIONS columns.
import type * as api from '../../api/index.js';
import { AGE_COLUMN, ageCell, column, NAME_COLUMN, orNone } from '../printing/columns.js';
import { builtinType, specChanged, type KindStrategy } from './strategy.js';

export const poddisruptionbudgets: KindStrategy<api.PodDisruptionBudget> = {
  type: builtinType('policy', 'v1', 'poddisruptionbudgets', 'PodDisruptionBudget', { shortNames: ['pdb'], status: true }),
  generation: specChanged,
  printer: {
    columns: [NAME_COLUMN, column('Min Available'), column('Max Unavailable'), column('Allowed Disruptions', 'integer'), AGE_COLUMN],
    cells: (o, now) => [o.metadata.name, orNone(o.spec?.minAvailable ?? 'N/A'), orNone(o.spec?.maxUnavailable ?? 'N/A'), o.status?.disruptionsAllowed ?? 0, ageCell(o, now)],
  },
};
