// Priority admission, as kube-apiserver's Priority plugin, and the system PriorityClasses it
// creates at start: a pod created through the API gets the `priority` (and, unless it says one,
// the `preemptionPolicy`) of the PriorityClass its `priorityClassName` names — or of the class
// marked `globalDefault`, whose name it then takes; 0 when there is none. A name no class has, or
// a `priority` that differs from the class's, is refused (403) in kube's words. Only one class may
// be the global default, and the two system classes cannot be deleted.
import type * as api from '../../api/index.js';
import { ApiError, errors } from '../errors.js';
import { storageKey, storagePrefix, type ResourceType } from '../registry/resource-type.js';
import type { Storage } from '../storage/types.js';
import { asKind } from '../kinds/strategy.js';

const PRIORITY_CLASSES = { group: 'scheduling.k8s.io', resource: 'priorityclasses', namespaced: false };

/** kube's system classes: every cluster has them, with these values. */
export const SYSTEM_PRIORITY_CLASSES: { name: string; value: number; description: string }[] = [
  { name: 'system-node-critical', value: 2_000_001_000, description: 'Used for system critical pods that must not be moved from their current node.' },
  { name: 'system-cluster-critical', value: 2_000_000_000, description: 'Used for system critical pods that must run in the cluster, but can be moved to another node if necessary.' },
];

/** The highest value a class users make may have (above it: the system's). */
export const HIGHEST_USER_PRIORITY = 1_000_000_000;

const isPods = (t: { group: string; resource: string }) => t.group === '' && t.resource === 'pods';
const isPriorityClasses = (t: { group: string; resource: string }) => t.group === PRIORITY_CLASSES.group && t.resource === PRIORITY_CLASSES.resource;

export class PriorityAdmission {
  constructor(private readonly storage: Storage) {}

  private classes(): api.PriorityClass[] {
    return this.storage.list(storagePrefix(PRIORITY_CLASSES)).items.map((i) => asKind<api.PriorityClass>(i.object));
  }

  /** Sets a new pod's priority from its class; refuses a second global default. */
  admit(type: ResourceType, object: api.Unstructured, previous: api.Unstructured | undefined): void {
    if (isPods(type) && !previous) this.admitPod(object as api.Pod);
    else if (isPriorityClasses(type)) this.admitClass(asKind<api.PriorityClass>(object));
  }

  private admitPod(pod: api.Pod): void {
    const spec = (pod.spec ??= {} as api.PodSpec);
    const forbidden = (message: string) => new ApiError(403, 'Forbidden', `pods "${pod.metadata.name}" is forbidden: ${message}`, { name: pod.metadata.name, kind: 'pods' });
    let priority = 0;
    let policy: string | undefined;
    if (spec.priorityClassName) {
      const stored = this.storage.get(storageKey(PRIORITY_CLASSES as ResourceType, undefined, spec.priorityClassName));
      const pc = stored && asKind<api.PriorityClass>(stored.object);
      if (!pc) throw forbidden(`no PriorityClass with name ${spec.priorityClassName} was found`);
      priority = pc.value;
      policy = pc.preemptionPolicy;
    } else {
      const fallback = this.classes().filter((c) => c.globalDefault).sort((a, b) => a.value - b.value)[0];
      if (fallback) {
        spec.priorityClassName = fallback.metadata.name;
        priority = fallback.value;
        policy = fallback.preemptionPolicy;
      }
    }
    if (spec.priority !== undefined && spec.priority !== null && spec.priority !== priority) {
      throw forbidden(`the integer value of priority (${spec.priority}) must not be provided in pod spec; priority admission controller computed ${priority} from the given PriorityClass name`);
    }
    spec.priority = priority;
    if (policy && spec.preemptionPolicy === undefined) spec.preemptionPolicy = policy;
  }

  private admitClass(pc: api.PriorityClass): void {
    if (!pc.globalDefault) return;
    const other = this.classes().find((c) => c.globalDefault && c.metadata.name !== pc.metadata.name);
    if (other) {
      throw new ApiError(403, 'Forbidden', `priorityclasses.scheduling.k8s.io "${pc.metadata.name}" is forbidden: PriorityClass ${other.metadata.name} is already marked as default. Only one default can exist`, { name: pc.metadata.name, group: PRIORITY_CLASSES.group, kind: PRIORITY_CLASSES.resource });
    }
  }
}

/** The system classes may not be deleted (kube's REST storage refuses it). */
export function admitPriorityClassDelete(type: ResourceType, name: string): void {
  if (type.builtin && isPriorityClasses(type) && SYSTEM_PRIORITY_CLASSES.some((c) => c.name === name)) {
    throw errors.forbidden(`priorityclasses.scheduling.k8s.io "${name}" is forbidden: this is a system priority class and cannot be deleted`);
  }
}
