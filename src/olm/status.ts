// Writing a status, and the conditions OLM's kinds carry: the status is replaced as a whole
// (PUT of the status subresource against the resourceVersion read), only when it says something
// new; times are left out of the comparison so that a steady state writes nothing.
import type * as api from '../api/index.js';
import { jsonEqual } from '../common/json.js';
import { type Condition, type KubeClient, type ResourceRef, isNotFound, setCondition, removeCondition } from '../kube/index.js';

const TIME_FIELDS = new Set(['lastTransitionTime', 'lastUpdateTime', 'lastUpdated', 'lastHeartbeatTime', 'lastConnect', 'startTime']);

/** The value without its time fields, at any depth. */
function timeless(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(timeless);
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).filter(([k]) => !TIME_FIELDS.has(k)).map(([k, v]) => [k, timeless(v)]));
  return value;
}

/** Writes `status` when it differs from the live object's (times aside); returns whether it wrote. */
export async function writeStatus<T extends api.KubeObject & { status?: object }>(client: KubeClient, resource: ResourceRef<T>, live: T, status: NonNullable<T['status']>): Promise<boolean> {
  if (jsonEqual(timeless(status), timeless(live.status ?? {}))) return false;
  try {
    await client.update(resource, { ...live, status } as T, 'status');
  } catch (e) {
    if (isNotFound(e)) return false;
    throw e;
  }
  return true;
}

/** A condition to set: its status, reason and message. */
export interface ConditionUpdate {
  status: 'True' | 'False' | 'Unknown';
  reason?: string;
  message?: string;
}

/** Conditions with `type` set (True/False with reason and message) or, when `update` is undefined, removed. */
export function withCondition<C extends Condition>(conditions: readonly C[] | undefined, type: string, update: ConditionUpdate | undefined, now: Date): C[] {
  return (update ? setCondition(conditions, { type, ...update }, now) : removeCondition(conditions, type)) as C[];
}
