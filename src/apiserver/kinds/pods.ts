// Pods (core/v1): defaults (with DefaultTolerationSeconds' tolerations), the containers' validation (shared with the workloads that embed a
// pod template), the READY/STATUS/RESTARTS columns as kubectl computes them, a generation
// bumped by spec changes (kube-apiserver's pod strategy since pod generation tracking), and the
// grace period a deletion gives a pod (registry/graceful-deletion.ts applies it).
import type * as api from '../../api/index.js';
import type { FieldProblem } from '../errors.js';
import { AGE_COLUMN, ageCell, column, condition, humanDuration, NAME_COLUMN, orNone, type Printer } from '../printing/columns.js';
import { DNS1123_LABEL } from '../../common/dns-names.js';
import { podUpdateProblems } from './immutable.js';
import { defaulted, defaultNewPodSpec } from '../../kube/pod-defaults.js';
import { ALL, builtinType, specChanged, type KindStrategy } from './strategy.js';
import { isPodReady } from '../../kube/readiness.js';

/**
 * kube-apiserver's DefaultTolerationSeconds admission: a new pod that does not tolerate the
 * not-ready and unreachable NoExecute taints tolerates them for 300 s, so that a node's short
 * outage does not evict it at once.
 */
function withDefaultTolerations(tolerations: api.Toleration[] | undefined): api.Toleration[] {
  const list = [...(tolerations ?? [])];
  const tolerates = (key: string) => list.some((t) => (t.key === key || !t.key) && (t.effect === 'NoExecute' || !t.effect));
  for (const key of ['node.kubernetes.io/not-ready', 'node.kubernetes.io/unreachable']) {
    if (!tolerates(key)) list.push({ key, operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 });
  }
  return list;
}

/** Problems with a list of containers: present, named as DNS labels without duplicates, with an image. */
export function containersProblems(containers: unknown, field: string): FieldProblem[] {
  if (!Array.isArray(containers) || containers.length === 0) return [{ type: 'FieldValueRequired', field, message: 'Required value' }];
  const problems: FieldProblem[] = [];
  const names = new Set<string>();
  // Any JSON: validation is where it is checked.
  (containers as Array<Partial<api.Container> | null | undefined>).forEach((c, i) => {
    if (!c?.name) problems.push({ type: 'FieldValueRequired', field: `${field}[${i}].name`, message: 'Required value' });
    else if (typeof c.name !== 'string' || c.name.length > 63 || !DNS1123_LABEL.test(c.name)) {
      problems.push({ type: 'FieldValueInvalid', field: `${field}[${i}].name`, message: `Invalid value: ${JSON.stringify(c.name)}: a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character` });
    } else if (names.has(c.name)) problems.push({ type: 'FieldValueDuplicate', field: `${field}[${i}].name`, message: `Duplicate value: "${c.name}"` });
    else names.add(c.name);
    if (!c?.image) problems.push({ type: 'FieldValueRequired', field: `${field}[${i}].image`, message: 'Required value' });
  });
  return problems;
}

const isRestartableInit = (c: api.Container | undefined): boolean => c?.restartPolicy === 'Always';
const laterTime = (a: number, t: unknown): number => {
  const parsed = typeof t === 'string' ? Date.parse(t) : NaN;
  return Number.isNaN(parsed) ? a : Math.max(a, parsed);
};
const exitReason = (t: { signal?: number; exitCode?: number }): string => (t.signal ? `Signal:${t.signal}` : `ExitCode:${t.exitCode ?? 0}`);

/**
 * Ready, Status and Restarts of a pod as kubectl's printPod computes them: init containers first
 * (`Init:1/2`, `Init:CrashLoopBackOff`), then the first container with a waiting or terminated
 * reason, `Completed` turned back to Running/NotReady while a container still runs, and
 * `Terminating` for a pod being deleted that has not finished.
 */
function podSummary(o: api.Pod, now: number): { ready: string; status: string; restarts: string } {
  const spec: Partial<api.PodSpec> = o.spec ?? {};
  const status: NonNullable<api.Pod['status']> = o.status ?? {};
  const initSpecs = new Map<string, api.Container>((spec.initContainers ?? []).map((c) => [c.name, c]));
  const total = (spec.containers ?? []).length + [...initSpecs.values()].filter(isRestartableInit).length;
  let readyCount = 0;
  let reason: string = status.reason || status.phase || '';
  if ((status.conditions ?? []).some((c) => c.type === 'PodScheduled' && c.reason === 'SchedulingGated')) reason = 'SchedulingGated';

  let restarts = 0;
  let sidecarRestarts = 0;
  let lastRestart = 0;
  let lastSidecarRestart = 0;
  let initializing = false;
  const initStatuses = status.initContainerStatuses ?? [];
  for (let i = 0; i < initStatuses.length; i++) {
    const cs = initStatuses[i];
    const restartable = isRestartableInit(initSpecs.get(cs.name));
    restarts += cs.restartCount ?? 0;
    lastRestart = laterTime(lastRestart, cs.lastState?.terminated?.finishedAt);
    if (restartable) {
      sidecarRestarts += cs.restartCount ?? 0;
      lastSidecarRestart = laterTime(lastSidecarRestart, cs.lastState?.terminated?.finishedAt);
    }
    const terminated = cs.state?.terminated;
    const waiting = cs.state?.waiting;
    if (terminated && (terminated.exitCode ?? 0) === 0) continue;
    if (restartable && cs.started === true) {
      if (cs.ready) readyCount++;
      continue;
    }
    if (terminated) reason = terminated.reason ? `Init:${terminated.reason}` : `Init:${exitReason(terminated)}`;
    else if (waiting?.reason && waiting.reason !== 'PodInitializing') reason = `Init:${waiting.reason}`;
    else reason = `Init:${i}/${initSpecs.size}`;
    initializing = true;
    break;
  }

  const initialized = (status.conditions ?? []).some((c) => c.type === 'Initialized' && c.status === 'True');
  if (!initializing || initialized) {
    restarts = sidecarRestarts;
    lastRestart = lastSidecarRestart;
    let hasRunning = false;
    const statuses = status.containerStatuses ?? [];
    // Walked backwards so that the first container's reason wins, as in kubectl.
    for (let i = statuses.length - 1; i >= 0; i--) {
      const cs = statuses[i];
      restarts += cs.restartCount ?? 0;
      lastRestart = laterTime(lastRestart, cs.lastState?.terminated?.finishedAt);
      const terminated = cs.state?.terminated;
      if (cs.state?.waiting?.reason) reason = cs.state.waiting.reason;
      else if (terminated?.reason) reason = terminated.reason;
      else if (terminated) reason = exitReason(terminated);
      else if (cs.ready && cs.state?.running) {
        hasRunning = true;
        readyCount++;
      }
    }
    if (reason === 'Completed' && hasRunning) reason = isPodReady(o) ? 'Running' : 'NotReady';
  }

  const terminal = status.phase === 'Succeeded' || status.phase === 'Failed';
  if (o.metadata?.deletionTimestamp && status.reason === 'NodeLost') reason = 'Unknown';
  else if (o.metadata?.deletionTimestamp && !terminal) reason = 'Terminating';

  const restartsCell = restarts !== 0 && lastRestart > 0 ? `${restarts} (${humanDuration(now - lastRestart)} ago)` : String(restarts);
  return { ready: `${readyCount}/${total}`, status: reason, restarts: restartsCell };
}

const printer: Printer<api.Pod> = {
  columns: [NAME_COLUMN, column('Ready'), column('Status'), column('Restarts', 'string'), AGE_COLUMN, column('IP', 'string', 1), column('Node', 'string', 1), column('Nominated Node', 'string', 1), column('Readiness Gates', 'string', 1)],
  cells: (o, now) => {
    const { ready, status, restarts } = podSummary(o, now);
    const gates = o.spec?.readinessGates ?? [];
    const gatesCell = gates.length ? `${gates.filter((g) => condition(o, g.conditionType)?.status === 'True').length}/${gates.length}` : '<none>';
    const ip = o.status?.podIPs?.[0]?.ip ?? o.status?.podIP;
    return [o.metadata.name, ready, status, restarts, ageCell(o, now), orNone(ip), orNone(o.spec?.nodeName), orNone(o.status?.nominatedNodeName), gatesCell];
  },
};

/** A kubelet's mirror of one of its static pods (kube's ServiceAccount admission leaves these alone). */
export function isMirrorPod(pod: api.Pod): boolean {
  return Object.hasOwn(pod.metadata?.annotations ?? {}, 'kubernetes.io/config.mirror');
}

/** The service account a pod runs as: serviceAccountName, else the deprecated serviceAccount alone (kube's conversion), else default. */
export function podServiceAccount(spec: api.PodSpec | undefined): string {
  return spec?.serviceAccountName || spec?.serviceAccount || 'default';
}

export const pods: KindStrategy<api.Pod> = {
  type: builtinType('', 'v1', 'pods', 'Pod', {
    shortNames: ['po'],
    categories: ALL,
    status: true,
    fieldSelectors: ['spec.nodeName', 'spec.restartPolicy', 'spec.schedulerName', 'spec.serviceAccountName', 'spec.hostNetwork', 'status.phase', 'status.podIP', 'status.nominatedNodeName'],
  }),
  defaults(object, previous) {
    // Mirror pods (a kubelet's static pods) get no service account, as kube's ServiceAccount
    // admission leaves them alone: NodeRestriction refuses a node's pod that refers to one.
    // The containers it may lack are refused by validation, which follows.
    const spec = (object.spec = { restartPolicy: 'Always', dnsPolicy: 'ClusterFirst', schedulerName: 'default-scheduler', terminationGracePeriodSeconds: 30, ...object.spec, ...(isMirrorPod(object) ? {} : { serviceAccountName: podServiceAccount(object.spec) }) } as api.PodSpec);
    if (!object.status?.phase) object.status = { ...(object.status ?? {}), phase: 'Pending', qosClass: 'BestEffort' };
    if (!previous) spec.tolerations = withDefaultTolerations(spec.tolerations);
    // The spec's defaults on every write, as kube-apiserver decodes (a `kubectl replace` of the
    // manifest a pod was made from matches the stored spec) — but not into a pod stored before
    // they existed, whose update would then change its immutable spec.
    if (!previous || defaulted((previous as api.Pod).spec)) defaultNewPodSpec(spec);
  },
  fieldDefaults: { 'spec.hostNetwork': 'false' },
  validate: (o, previous, subresource) => [
    ...containersProblems(o.spec?.containers, 'spec.containers'),
    ...(Array.isArray(o.spec?.initContainers) && o.spec.initContainers.length > 0 ? containersProblems(o.spec.initContainers, 'spec.initContainers') : []),
    // The binding sets spec.nodeName, which no update may.
    ...(subresource === 'binding' ? [] : podUpdateProblems(o, previous)),
  ],
  printer,
  generation: specChanged,
  // A pod on a node gets its grace period (asked for, else its own) for its kubelet to stop it; a
  // pod no kubelet runs (unscheduled, or finished) has nothing to wait for.
  gracePeriod(o, requested) {
    if (!o.spec?.nodeName || o.status?.phase === 'Succeeded' || o.status?.phase === 'Failed') return 0;
    return requested ?? o.spec?.terminationGracePeriodSeconds ?? 0;
  },
};
