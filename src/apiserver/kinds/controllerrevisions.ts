// ControllerRevisions (apps/v1): the template history DaemonSets (and StatefulSets) keep, which
// `kubectl rollout history` and `rollout undo` read; the CONTROLLER / REVISION columns.
import type * as api from '../../api/index.js';
import { AGE_COLUMN, ageCell, column, NAME_COLUMN } from '../printing/columns.js';
import { builtinType, type KindStrategy } from './strategy.js';

export const controllerrevisions: KindStrategy<api.ControllerRevision> = {
  type: builtinType('apps', 'v1', 'controllerrevisions', 'ControllerRevision'),
  printer: {
    columns: [NAME_COLUMN, column('Controller'), column('Revision', 'integer'), AGE_COLUMN],
    cells: (o, now) => {
      const owner = (o.metadata?.ownerReferences ?? []).find((r) => r.controller);
      const controller = owner ? `${String(owner.kind).toLowerCase()}.${String(owner.apiVersion).split('/')[0]}/${owner.name}` : '<none>';
      return [o.metadata.name, controller, o.revision ?? 0, ageCell(o, now)];
    },
  },
};
