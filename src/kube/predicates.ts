// Event filters (controller-runtime's predicates): which informer events are worth a reconcile.
// A filter sees the event as a KeyMapper does (type, object, old) and says yes or no; adds and
// deletes always pass the standard ones, updates only when the named part changed. A controller
// takes one per watch (Controller.watch(informer, map, filter)); `anyOf` combines them.
import type * as api from '../api/index.js';
import type { EventType } from './informer.js';

export type EventFilter<T extends api.KubeObject = api.KubeObject> = (type: EventType, object: T, old?: T) => boolean;

const same = (a: unknown, b: unknown) => JSON.stringify(a ?? {}) === JSON.stringify(b ?? {});

/** The spec changed: metadata.generation moved (status-only and metadata-only writes do not). */
export const generationChanged: EventFilter = (type, object, old) => type !== 'update' || object.metadata?.generation !== old?.metadata?.generation;

/** The labels changed (added, removed or a value). */
export const labelsChanged: EventFilter = (type, object, old) => type !== 'update' || !same(sortedEntries(object.metadata?.labels), sortedEntries(old?.metadata?.labels));

/** The annotations changed. */
export const annotationsChanged: EventFilter = (type, object, old) => type !== 'update' || !same(sortedEntries(object.metadata?.annotations), sortedEntries(old?.metadata?.annotations));

/** Passes when any of the filters passes (e.g. generation or labels changed). */
export function anyOf<T extends api.KubeObject>(...filters: EventFilter<T>[]): EventFilter<T> {
  return (type, object, old) => filters.some((f) => f(type, object, old));
}

function sortedEntries(map: Record<string, string> | undefined): [string, string][] {
  return Object.entries(map ?? {}).sort(([a], [b]) => a.localeCompare(b));
}
