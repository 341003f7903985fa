// What a CredentialsRequest may ask the cloud for (pure): named actions from the cloud's list, never
// the root's own (credentials:manage, `*`), which would let a component mint itself anything.
import { CLOUD_ACTIONS, ROOT_ONLY_ACTIONS } from '../cloud/actions.js';

export function judgeActions(actions: string[] | undefined): { actions: string[]; problem?: string } {
  if (!actions?.length) return { actions: [], problem: 'spec.providerSpec.actions lists no action' };
  const reserved = actions.filter((a) => ROOT_ONLY_ACTIONS.includes(a));
  if (reserved.length) return { actions: [], problem: `spec.providerSpec.actions: ${reserved.map((a) => `"${a}"`).join(', ')} cannot be granted to a component` };
  const unknown = actions.filter((a) => !(CLOUD_ACTIONS as readonly string[]).includes(a));
  if (unknown.length) return { actions: [], problem: `spec.providerSpec.actions: unknown action${unknown.length > 1 ? 's' : ''} ${unknown.map((a) => `"${a}"`).join(', ')} (known: ${CLOUD_ACTIONS.filter((a) => !ROOT_ONLY_ACTIONS.includes(a)).join(', ')})` };
  return { actions: [...new Set(actions)].sort() };
}
