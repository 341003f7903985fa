// A pod's status as the kubelet computes it from its containers: container and init container
// statuses (state, lastState, restartCount, ready, started), the phase (Pending until the init
// containers have completed, Failed when one failed for good), and the conditions PodScheduled,
// Initialized, ContainersReady and Ready — plus the crash-loop back-off. Pure.
import type * as api from '../../api/index.js';
import { signalNumber, type ProcessExit } from './container-process.js';

type ContainerState = NonNullable<api.ContainerStatus['state']>;
type TerminatedState = NonNullable<ContainerState['terminated']>;

export interface ContainerRecord {
  name: string;
  image: string;
  containerID: string;
  restartCount: number;
  state: ContainerState;
  lastState: ContainerState;
  ready: boolean;
  started: boolean;
  /** An init container with restartPolicy Always (a sidecar): it keeps running beside the app containers. */
  restartable?: boolean;
}

/** The back-off before the next restart after `crashes` consecutive failures: base doubling to max. */
export function crashBackoffMs(crashes: number, baseMs: number, maxMs: number): number {
  return Math.min(maxMs, baseMs * 2 ** Math.max(0, crashes - 1));
}

/** Whether a container that exited with `exitCode` is started again under the pod's restart policy. */
export function restarts(restartPolicy: string | undefined, exitCode: number): boolean {
  if (restartPolicy === 'Never') return false;
  if (restartPolicy === 'OnFailure') return exitCode !== 0;
  return true;
}

/** The restart policy an init container runs under: a failed one is retried unless the pod's policy is Never; a finished one is done. */
export function initRestartPolicy(pod: api.Pod, init: ContainerRecord): string {
  if (init.restartable) return 'Always';
  return pod.spec?.restartPolicy === 'Never' ? 'Never' : 'OnFailure';
}

/** The init containers not yet done: regular ones until they exit 0, sidecars until they have started. */
export function incompleteInit(inits: ContainerRecord[]): ContainerRecord[] {
  return inits.filter((c) => (c.restartable ? !c.started : c.state.terminated?.exitCode !== 0));
}

/** An init container that failed and will not be retried (the pod's restartPolicy is Never). */
function initFailed(pod: api.Pod, inits: ContainerRecord[]): boolean {
  return inits.some((c) => !c.restartable && c.state.terminated && c.state.terminated.exitCode !== 0 && !restarts(initRestartPolicy(pod, c), c.state.terminated.exitCode));
}

export function podPhase(pod: api.Pod, containers: ContainerRecord[], inits: ContainerRecord[] = []): string {
  if (initFailed(pod, inits)) return 'Failed';
  if (incompleteInit(inits).length > 0) return 'Pending';
  const policy = pod.spec?.restartPolicy;
  const done = containers.length > 0 && containers.every((c) => c.state.terminated && !restarts(policy, c.state.terminated.exitCode));
  if (done) return containers.every((c) => c.state.terminated?.exitCode === 0) ? 'Succeeded' : 'Failed';
  if (containers.some((c) => c.state.running || c.restartCount > 0 || c.state.terminated)) return 'Running';
  return 'Pending';
}

/**
 * A pod condition as the kubelet writes it: lastProbeTime null (Go's zero time), which
 * client-node's model, where it is a Date or absent, does not allow for.
 */
export type WrittenPodCondition = Omit<api.PodCondition, 'lastProbeTime'> & { lastProbeTime: null };

/** The pod status the node agent writes. */
export type WrittenPodStatus = Omit<NonNullable<api.Pod['status']>, 'conditions'> & { conditions: WrittenPodCondition[] };

function condition(type: string, ok: boolean, previous: api.PodCondition[] | undefined, now: string, reason?: string, message?: string): WrittenPodCondition {
  const status = ok ? 'True' : 'False';
  const before = previous?.find((c) => c.type === type);
  return {
    type, status,
    lastProbeTime: null,
    lastTransitionTime: before?.status === status ? before.lastTransitionTime : now,
    ...(ok || !reason ? {} : { reason, message }),
  };
}

export interface PodAddresses { podIP: string; hostIP: string; startTime: string }

/**
 * The status to write. `terminal`: the pod was stopped for good because it is being deleted, and
 * ends Succeeded when every container exited 0, else Failed (the kubelet's terminal phase before
 * it deletes a pod, whatever its restart policy).
 */
export function podStatus(pod: api.Pod, containers: ContainerRecord[], addr: PodAddresses, now: string, inits: ContainerRecord[] = [], terminal = false): WrittenPodStatus {
  const previous: api.PodCondition[] | undefined = pod.status?.conditions;
  const phase = terminal ? (containers.every((c) => c.state.terminated?.exitCode === 0) ? 'Succeeded' : 'Failed') : podPhase(pod, containers, inits);
  const sidecars = inits.filter((c) => c.restartable);
  const notReady = [...sidecars, ...containers].filter((c) => !c.ready).map((c) => c.name);
  const allReady = notReady.length === 0 && phase === 'Running';
  const message = `containers with unready status: [${notReady.join(' ')}]`;
  const incomplete = incompleteInit(inits).map((c) => c.name);
  return {
    phase,
    conditions: [
      condition('PodReadyToStartContainers', true, previous, now),
      condition('Initialized', incomplete.length === 0, previous, now, 'ContainersNotInitialized', `containers with incomplete status: [${incomplete.join(' ')}]`),
      condition('Ready', allReady, previous, now, 'ContainersNotReady', message),
      condition('ContainersReady', allReady, previous, now, 'ContainersNotReady', message),
      condition('PodScheduled', true, previous, now),
    ],
    hostIP: addr.hostIP,
    hostIPs: [{ ip: addr.hostIP }],
    podIP: addr.podIP,
    podIPs: [{ ip: addr.podIP }],
    startTime: addr.startTime,
    qosClass: qosClass(pod),
    ...(inits.length > 0 ? { initContainerStatuses: inits.map(containerStatus) } : {}),
    containerStatuses: containers.map(containerStatus),
  };
}

function containerStatus(c: ContainerRecord): api.ContainerStatus {
  return {
    name: c.name,
    image: c.image,
    imageID: `${c.image.split('@')[0].split(':')[0]}@sha256:${'0'.repeat(64)}`,
    containerID: c.containerID,
    restartCount: c.restartCount,
    ready: c.ready,
    started: c.started,
    state: c.state,
    lastState: c.lastState,
  };
}

/** BestEffort, Burstable or Guaranteed, from the containers' requests and limits. */
export function qosClass(pod: api.Pod): string {
  const cs: api.Container[] = pod.spec?.containers ?? [];
  const any = cs.some((c) => Object.keys(c.resources?.requests ?? {}).length || Object.keys(c.resources?.limits ?? {}).length);
  if (!any) return 'BestEffort';
  const guaranteed = cs.every((c) => ['cpu', 'memory'].every((r) => c.resources?.limits?.[r] !== undefined && (c.resources?.requests?.[r] ?? c.resources?.limits?.[r]) === c.resources?.limits?.[r]));
  return guaranteed ? 'Guaranteed' : 'Burstable';
}

/** A container that ended with exit code 0 (a simulated one that completes, or one stopped as its pod is deleted). */
export function completedState(startedAt: string | undefined, finishedAt: string, containerID: string | undefined): TerminatedState {
  return { exitCode: 0, reason: 'Completed', startedAt, finishedAt, containerID };
}

/**
 * A container's terminated state from how its process ended. A signal is given by its number, as
 * the API's ContainerStateTerminated has it (an int32; the process reports the signal's name).
 */
export function terminatedState(exit: ProcessExit, startedAt: string, containerID: string, livenessFailed: boolean): TerminatedState {
  return {
    exitCode: exit.exitCode, ...(exit.signal ? { signal: signalNumber(exit.signal) } : {}),
    reason: exit.error ? 'StartError' : exit.exitCode === 0 ? 'Completed' : 'Error',
    ...(exit.error ? { message: exit.error } : livenessFailed ? { message: 'Container failed liveness probe' } : {}),
    startedAt, finishedAt: exit.finishedAt, containerID,
  };
}
