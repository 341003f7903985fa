// Degraded-on-error (library-go's WithSyncDegradedOnError): a controller that reports its own
// failures as a condition on an object an administrator looks at — RenderDegraded on a
// MachineConfigPool, <Name>Degraded on an operator's status. After a sync fails (at once for a
// TerminalError, else after `after` consecutive failures) the condition is True with the error's
// message; after a sync succeeds it is False. The condition is written through the status
// subresource on the object as the server has it (resourceVersion-checked, so a concurrent
// status writer is never overwritten), and only when it would change.
import { type KubeClient, type ResourceRef, isNotFound } from './client.js';
import type * as api from '../api/index.js';
import { type Condition, findCondition, setCondition } from './conditions.js';
import type { Informer } from './informer.js';
import { type Clock, realClock } from './clock.js';

export interface DegradedOnError {
  client: KubeClient;
  /** The kind of the object the condition goes on. */
  resource: ResourceRef<WithStatusConditions>;
  /** The object for a key (default: the key itself, namespace/name or name). */
  object?: (key: string) => { name: string; namespace?: string };
  /** The condition type, e.g. RenderDegraded. */
  condition: string;
  /** Its reason while True, e.g. RenderFailed. */
  reason: string;
  /** Its message while True (default: the error's message). */
  message?: (error: Error, key: string) => string;
  /** Consecutive failures before it turns True (default 1); a TerminalError turns it at once. */
  after?: number;
  /** Conditions that follow from the named one, recomputed in the same write (an aggregate
   *  Degraded), so that readers never see one without the other. */
  derive?: (object: WithStatusConditions, conditions: Condition[]) => Condition[];
  /** A cache of the objects, to skip the read when the condition already says the right thing. */
  informer?: Pick<Informer<WithStatusConditions>, 'get'>;
  /** The clock of the condition's transition time (default the wall clock). */
  clock?: Clock;
}

/** An object with status conditions: what a Degraded condition is written on. */
export type WithStatusConditions = api.KubeObject & { status?: { conditions?: Condition[] } };

function objectOf(d: DegradedOnError, key: string): { name: string; namespace?: string } {
  if (d.object) return d.object(key);
  const [a, b] = key.split('/', 2);
  return b === undefined ? { name: a } : { namespace: a, name: b };
}

/** The condition a sync outcome calls for (error undefined: it succeeded). */
export function degradedCondition(d: DegradedOnError, key: string, error: Error | undefined): Condition {
  return error ? { type: d.condition, status: 'True', reason: d.reason, message: d.message ? d.message(error, key) : error.message } : { type: d.condition, status: 'False', reason: '', message: '' };
}

const says = (current: Condition | undefined, wanted: Condition) => current?.status === wanted.status && (current.reason ?? '') === wanted.reason && (current.message ?? '') === wanted.message;

/** Writes the condition for a sync outcome; 'gone' when the object does not exist. */
export async function reportDegraded(d: DegradedOnError, key: string, error: Error | undefined): Promise<'written' | 'unchanged' | 'gone'> {
  const { name, namespace } = objectOf(d, key);
  const wanted = degradedCondition(d, key, error);
  const cached = d.informer?.get(name, namespace);
  if (cached && says(findCondition(cached.status?.conditions, d.condition), wanted)) return 'unchanged';
  const live = await d.client.read(d.resource, name, namespace);
  if (!live) return 'gone';
  const current = findCondition(live.status?.conditions, d.condition);
  if (says(current, wanted)) return 'unchanged';
  let conditions = setCondition(live.status?.conditions, wanted, new Date((d.clock ?? realClock).now()));
  if (d.derive) conditions = d.derive(live, conditions);
  try {
    await d.client.mergePatch(d.resource, name, namespace, { metadata: { resourceVersion: live.metadata.resourceVersion }, status: { conditions } }, 'status');
  } catch (e) {
    if (isNotFound(e)) return 'gone';
    throw e;
  }
  return 'written';
}
