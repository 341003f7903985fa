// Which operation an instance accepts in which state, and the state it moves to: the pure core of
// the cloud's instance operations, as EC2 answers them (stopping a stopped instance or terminating
// a terminated one succeeds and changes nothing; rebooting anything but a running one is refused).
import { conflict } from './errors.js';
import type { InstanceState } from './types.js';

/** How long a rebooting machine stays down unless configured otherwise. */
export const DEFAULT_BOOT_DELAY_MS = 3000;

export type Operation = 'start' | 'stop' | 'reboot' | 'terminate';
export const OPERATIONS: readonly Operation[] = ['start', 'stop', 'reboot', 'terminate'];

/** `next`: the state recorded when the operation is accepted; undefined: nothing to do. */
type Rule = { next: InstanceState } | { noop: true } | { refuse: string };

const RULES: Record<Operation, Record<InstanceState, Rule>> = {
  start: {
    stopped: { next: 'pending' },
    pending: { noop: true },
    running: { noop: true },
    stopping: { refuse: 'is stopping; start it once it is stopped' },
    terminated: { refuse: 'is terminated and cannot be started' },
  },
  stop: {
    pending: { next: 'stopping' },
    running: { next: 'stopping' },
    stopping: { noop: true },
    stopped: { noop: true },
    terminated: { refuse: 'is terminated and cannot be stopped' },
  },
  reboot: {
    running: { next: 'running' },
    pending: { refuse: 'is pending (still booting); only a running instance can be rebooted' },
    stopping: { refuse: 'is stopping; only a running instance can be rebooted' },
    stopped: { refuse: 'is stopped; only a running instance can be rebooted (start it instead)' },
    terminated: { refuse: 'is terminated; only a running instance can be rebooted' },
  },
  terminate: {
    pending: { next: 'terminated' },
    running: { next: 'terminated' },
    stopping: { next: 'terminated' },
    stopped: { next: 'terminated' },
    terminated: { noop: true },
  },
};

/** The state to record for `op` on an instance in `state`, undefined for a no-op; throws 409. */
export function transition(op: Operation, id: string, state: InstanceState): InstanceState | undefined {
  const rule = RULES[op][state];
  if ('refuse' in rule) throw conflict('IncorrectInstanceState', `cannot ${op} instance ${id}: it ${rule.refuse}`);
  return 'next' in rule ? rule.next : undefined;
}
