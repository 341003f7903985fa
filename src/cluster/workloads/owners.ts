// Which workload owns what, as kube's controllers resolve it: an owner's selector (a malformed one
// is the owner's terminal error; an empty one selects nothing, as kube's listers treat it), and
// the owners a change of an owned object concerns — its controller, when that is one of them and
// still the same object, else, for an orphan, every owner in its namespace whose selector matches
// it (each may adopt it).
import type * as api from '../../api/index.js';
import { type Informer, TerminalError, controllerOf } from '../../kube/index.js';
import { fromLabelSelectorObject, matchesLabels, SelectorError } from '../../common/label-selectors.js';
import { controllingOwner, keyFor } from './context.js';

/** A workload with a label selector. */
export type SelectingOwner = api.ReplicaSet | api.Deployment | api.DaemonSet | api.StatefulSet | api.Job;

export function selectorOf(object: SelectingOwner) {
  try {
    return fromLabelSelectorObject(object.spec?.selector);
  } catch (e) {
    if (e instanceof SelectorError) throw new TerminalError(`invalid selector on ${object.kind} ${keyFor(object)}: ${e.message}`);
    throw e;
  }
}

/** Whether `owner` selects `object`: never with an empty or malformed selector. */
export function selects(owner: SelectingOwner, object: api.KubeObject): boolean {
  try {
    const selector = selectorOf(owner);
    return selector.length > 0 && matchesLabels(selector, object.metadata?.labels);
  } catch {
    return false;
  }
}

/**
 * The keys of the owners of `kind` that an event of `object` (and of its previous state `old`)
 * concerns; `candidate` narrows the orphan's possible adopters.
 */
export function ownerKeys<T extends SelectingOwner>(object: api.KubeObject, old: api.KubeObject | undefined, kind: string, owners: Informer<T>, candidate: (owner: T) => boolean = () => true): string[] {
  const of = (o: api.KubeObject): string[] => {
    const owner = controllingOwner(o, kind, owners);
    if (owner) return [keyFor(owner)];
    if (controllerOf(o)) return [];
    return owners.list().filter((w) => w.metadata.namespace === o.metadata.namespace && candidate(w) && selects(w, o)).map(keyFor);
  };
  return [...new Set([...of(object), ...(old ? of(old) : [])])];
}
