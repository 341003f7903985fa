// A pod's status as the kubelet computes it from its containers: container statuses (state,
// lastState, restartCount, ready, started), the phase, and the conditions PodScheduled,
// Initialized, ContainersReady and Ready — plus the crash-loop back-off. Pure.
import type { Obj } from '../../kube/index.js';

export interface ContainerRecord {
  name: string;
  image: string;
  containerID: string;
  restartCount: number;
  state: Obj;
  lastState: Obj;
  ready: boolean;
  started: boolean;
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

export function podPhase(pod: Obj, containers: ContainerRecord[]): string {
  const policy = pod.spec?.restartPolicy;
  const done = containers.length > 0 && containers.every((c) => c.state.terminated && !restarts(policy, c.state.terminated.exitCode));
  if (done) return containers.every((c) => c.state.terminated.exitCode === 0) ? 'Succeeded' : 'Failed';
  if (containers.some((c) => c.state.running || c.restartCount > 0 || c.state.terminated)) return 'Running';
  return 'Pending';
}

function condition(type: string, ok: boolean, previous: Obj[] | undefined, now: string, reason?: string, message?: string): Obj {
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

export function podStatus(pod: Obj, containers: ContainerRecord[], addr: PodAddresses, now: string): Obj {
  const previous: Obj[] | undefined = pod.status?.conditions;
  const phase = podPhase(pod, containers);
  const notReady = containers.filter((c) => !c.ready).map((c) => c.name);
  const allReady = notReady.length === 0 && phase === 'Running';
  const message = `containers with unready status: [${notReady.join(' ')}]`;
  return {
    phase,
    conditions: [
      condition('PodReadyToStartContainers', true, previous, now),
      condition('Initialized', true, previous, now),
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
    containerStatuses: containers.map((c) => ({
      name: c.name,
      image: c.image,
      imageID: `${c.image.split('@')[0].split(':')[0]}@sha256:${'0'.repeat(64)}`,
      containerID: c.containerID,
      restartCount: c.restartCount,
      ready: c.ready,
      started: c.started,
      state: c.state,
      lastState: c.lastState,
    })),
  };
}

/** BestEffort, Burstable or Guaranteed, from the containers' requests and limits. */
export function qosClass(pod: Obj): string {
  const cs: Obj[] = pod.spec?.containers ?? [];
  const any = cs.some((c) => Object.keys(c.resources?.requests ?? {}).length || Object.keys(c.resources?.limits ?? {}).length);
  if (!any) return 'BestEffort';
  const guaranteed = cs.every((c) => ['cpu', 'memory'].every((r) => c.resources?.limits?.[r] !== undefined && (c.resources?.requests?.[r] ?? c.resources.limits[r]) === c.resources.limits[r]));
  return guaranteed ? 'Guaranteed' : 'Burstable';
}
