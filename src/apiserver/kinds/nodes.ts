// Nodes (core/v1): cluster-scoped, with the STATUS, ROLES and node-info columns of `kubectl get nodes`.
import type * as api from '../../api/index.js';
import { AGE_COLUMN, ageCell, column, NAME_COLUMN, orNone } from '../printing/columns.js';
import { builtinType, type KindStrategy } from './strategy.js';
import { nodeReadyStatus } from '../../kube/readiness.js';

function nodeStatus(o: api.Node): string {
  const ready = nodeReadyStatus(o);
  const parts = [ready ? (ready === 'True' ? 'Ready' : 'NotReady') : 'Unknown'];
  if (o.spec?.unschedulable) parts.push('SchedulingDisabled');
  return parts.join(',');
}

const address = (o: api.Node, type: string): string => orNone((o.status?.addresses ?? []).find((a) => a.type === type)?.address);

function nodeRoles(o: api.Node): string {
  const roles = Object.keys(o.metadata?.labels ?? {})
    .filter((k) => k.startsWith('node-role.kubernetes.io/'))
    .map((k) => k.slice('node-role.kubernetes.io/'.length))
    .filter((r) => r !== '');
  const legacy = o.metadata?.labels?.['kubernetes.io/role'];
  if (legacy) roles.push(legacy);
  return roles.length ? [...new Set(roles)].sort().join(',') : '<none>';
}

export const nodes: KindStrategy<api.Node> = {
  type: builtinType('', 'v1', 'nodes', 'Node', { namespaced: false, shortNames: ['no'], status: true, fieldSelectors: ['spec.unschedulable'] }),
  fieldDefaults: { 'spec.unschedulable': 'false' },
  printer: {
    columns: [NAME_COLUMN, column('Status'), column('Roles'), AGE_COLUMN, column('Version'), column('Internal-IP', 'string', 1), column('External-IP', 'string', 1), column('OS-Image', 'string', 1), column('Kernel-Version', 'string', 1), column('Container-Runtime', 'string', 1)],
    cells: (o, now) => [o.metadata.name, nodeStatus(o), nodeRoles(o), ageCell(o, now), orNone(o.status?.nodeInfo?.kubeletVersion), address(o, 'InternalIP'), address(o, 'ExternalIP'), orNone(o.status?.nodeInfo?.osImage), orNone(o.status?.nodeInfo?.kernelVersion), orNone(o.status?.nodeInfo?.containerRuntimeVersion)],
  },
};
