// The RBAC kinds (rbac.authorization.k8s.io/v1): names that are path segments (so that
// `system:masters` is one), CREATED AT for roles, and ROLE / USERS / GROUPS / SERVICEACCOUNTS
// for bindings.
import { AGE_COLUMN, ageCell, column, NAME_COLUMN, type Printer } from '../printing/columns.js';
import { builtinType, type KindStrategy } from './strategy.js';
import type * as api from '../../api/index.js';

const GROUP = 'rbac.authorization.k8s.io';

const rolePrinter: Printer<api.Role | api.ClusterRole> = { columns: [NAME_COLUMN, column('Created At', 'string')], cells: (o) => [o.metadata.name, o.metadata?.creationTimestamp ?? ''] };

const bindingPrinter: Printer<api.RoleBinding | api.ClusterRoleBinding> = {
  columns: [NAME_COLUMN, column('Role'), AGE_COLUMN, column('Users', 'string', 1), column('Groups', 'string', 1), column('ServiceAccounts', 'string', 1)],
  cells: (o, now) => {
    const subjects = o.subjects ?? [];
    const names = (kind: string) => subjects.filter((s) => s.kind === kind).map((s) => (kind === 'ServiceAccount' ? `${s.namespace}/${s.name}` : s.name)).join(', ');
    return [o.metadata.name, `${o.roleRef?.kind}/${o.roleRef?.name}`, ageCell(o, now), names('User'), names('Group'), names('ServiceAccount')];
  },
};

export const roles: KindStrategy<api.Role> = { type: builtinType(GROUP, 'v1', 'roles', 'Role'), names: 'path', printer: rolePrinter };
export const rolebindings: KindStrategy<api.RoleBinding> = { type: builtinType(GROUP, 'v1', 'rolebindings', 'RoleBinding'), names: 'path', printer: bindingPrinter };
export const clusterroles: KindStrategy<api.ClusterRole> = { type: builtinType(GROUP, 'v1', 'clusterroles', 'ClusterRole', { namespaced: false }), names: 'path', printer: rolePrinter };
export const clusterrolebindings: KindStrategy<api.ClusterRoleBinding> = { type: builtinType(GROUP, 'v1', 'clusterrolebindings', 'ClusterRoleBinding', { namespaced: false }), names: 'path', printer: bindingPrinter };
