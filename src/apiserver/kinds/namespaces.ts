// Namespaces (core/v1): the `kubernetes` finalizer and phase Active by default, names that are
// DNS labels, and a deletion that waits: the namespace goes Terminating while its contents are
// deleted (controllers/namespace-lifecycle.ts does the clean-up).
import type * as api from '../../api/index.js';
import { AGE_COLUMN, ageCell, column, NAME_COLUMN } from '../printing/columns.js';
import { builtinType, type KindStrategy } from './strategy.js';

/** The namespaces kube-apiserver's NamespaceLifecycle refuses to delete. */
export const IMMORTAL_NAMESPACES = new Set(['default', 'kube-system', 'kube-public']);

export const namespaces: KindStrategy<api.Namespace> = {
  type: builtinType('', 'v1', 'namespaces', 'Namespace', { namespaced: false, shortNames: ['ns'], status: true, fieldSelectors: ['status.phase'] }),
  names: 'label',
  undeletable: (name) => (IMMORTAL_NAMESPACES.has(name) ? 'this namespace may not be deleted' : undefined),
  defaults(object, previous) {
    object.spec = { finalizers: ['kubernetes'], ...(object.spec ?? {}) };
    object.status = { phase: previous?.status?.phase ?? 'Active', ...(object.status ?? {}) };
  },
  printer: { columns: [NAME_COLUMN, column('Status'), AGE_COLUMN], cells: (o, now) => [o.metadata.name, o.status?.phase ?? 'Active', ageCell(o, now)] },
  terminate(object) {
    object.status = { ...(object.status ?? {}), phase: 'Terminating' };
  },
};
