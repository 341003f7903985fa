// Priority admission, as kube-apiserver's Priority plugin: a pod created through the API gets the
// `priority` (and, unless it says one, the `preemptionPolicy`) of the PriorityClass its
// `priorityClassName` names — or of the class marked `globalDefault`, whose name it then takes;
// 0 when there is none. A name no class has, or a `priority` that differs from the class's, is
// refused (403) in kube's words. Only one class may be the global default. (The system classes
// and what may not be deleted: kinds/priorityclasses.ts.)
import type * as api from '../../api/index.js';
import { errors } from '../errors.js';
import { priorityclasses } from '../kinds/priorityclasses.js';
import { asKind } from '../kinds/strategy.js';
import { storageKey, storagePrefix, type ResourceType } from '../registry/resource-type.js';
import type { Storage } from '../storage/types.js';
import type { AdmissionPlugin } from './plugin.js';

const CLASSES = priorityclasses.type;
const same = (a: ResourceType, b: ResourceType) => a.group === b.group && a.resource === b.resource;

export class PriorityAdmission implements AdmissionPlugin {
  constructor(private readonly storage: Storage) {}

  private classes(): api.PriorityClass[] {
    return this.storage.list(storagePrefix(CLASSES)).items.map((i) => asKind<api.PriorityClass>(i.object));
  }

  /** A new pod's priority from its class. */
  mutate(type: ResourceType, object: api.Unstructured, previous: api.Unstructured | undefined): void {
    if (type.group !== '' || type.resource !== 'pods' || previous) return;
    const pod = object as api.Pod;
    const spec = (pod.spec ??= {} as api.PodSpec);
    const forbidden = (reason: string) => errors.forbiddenObject('pods', '', pod.metadata.name, reason);
    let priority = 0;
    let policy: string | undefined;
    if (spec.priorityClassName) {
      const stored = this.storage.get(storageKey(CLASSES, undefined, spec.priorityClassName));
      if (!stored) throw forbidden(`no PriorityClass with name ${spec.priorityClassName} was found`);
      const pc = asKind<api.PriorityClass>(stored.object);
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
    // The policy is the class's, PreemptLowerPriority without one: a pod may repeat it, not choose another.
    const computed = policy ?? 'PreemptLowerPriority';
    if (spec.preemptionPolicy !== undefined && spec.preemptionPolicy !== null && spec.preemptionPolicy !== computed) {
      throw forbidden(`the string value of PreemptionPolicy (${spec.preemptionPolicy}) must not be provided in pod spec; priority admission controller computed ${computed} from the given PriorityClass name`);
    }
    spec.preemptionPolicy = computed;
  }

  /** A second global default is refused. */
  validate(type: ResourceType, object: api.Unstructured): void {
    if (!same(type, CLASSES)) return;
    const pc = asKind<api.PriorityClass>(object);
    if (!pc.globalDefault) return;
    const other = this.classes().find((c) => c.globalDefault && c.metadata.name !== pc.metadata.name);
    if (other) throw errors.forbiddenObject(CLASSES.resource, CLASSES.group, pc.metadata.name, `PriorityClass ${other.metadata.name} is already marked as default. Only one default can exist`);
  }
}
