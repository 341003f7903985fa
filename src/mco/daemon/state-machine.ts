// The machine-config daemon's update loop as a pure decision: from what the node's annotations,
// the disk and this boot say, the one next step. The daemon (daemon.ts) takes the step, reads the
// world again and asks again, until the answer is to wait or nothing is to be done. Because each
// step is decided from persisted state alone, killing the daemon or rebooting the machine at any
// point resumes where it stopped.
//
//   first boot    no currentConfig annotation → seed current/desired/state=Done from
//                 /etc/machine-config-daemon/node-annotations.json
//   force         /run/machine-config-daemon-force → remove it, rewrite the whole desired config,
//                 reboot, and skip validation once after the boot
//   update        desiredConfig ≠ currentConfig:
//     Working       state=Working
//     reconcile     unreconcilable change → state=Unreconcilable with the reason; nothing written
//     drain         the plan drains (Reboot or Drain actions) → desiredDrain=drain-<desired>,
//                   wait for lastAppliedDrain to say the same; still waiting after the drain
//                   timeout (an hour, as OpenShift's) → state=Degraded, "failed to drain node: …"
//                   with what the controller says blocks it; the wait goes on, and the drain
//                   answered, the update continues (Working)
//     write         files, units, ssh keys, kernel arguments (writer.ts; rolled back on failure →
//                   Degraded, retried with back-off), then the pending record
//                   {config, bootId, reboot} and /etc/machine-config-daemon/currentconfig
//   pending       a pending record exists:
//     reboot        reboot needed and still the boot that wrote it → ask the host to reboot
//     validate      the disk against the pending config ("unexpected on-disk state validating
//                   against X: …" → Degraded; skipped once after a forced update, or when
//                   the forcefile is there, which completing removes)
//     uncordon      desiredDrain=uncordon-<config>, wait for lastAppliedDrain
//     complete      currentConfig=config, state=Done, reason cleared; pending record removed
//   steady        desiredConfig = currentConfig:
//     drift         the disk differs from the current config → Degraded naming the file, Event
//                   ConfigDriftDetected
//     recover       the disk matches again but the state is not Done → Done
//     idle          nothing to do (check for drift again later)
import type { Plan } from './disruption-policy.js';

export const DRAIN_PREFIX = 'drain-';
export const UNCORDON_PREFIX = 'uncordon-';

export interface NodeAnnotations {
  currentConfig?: string;
  desiredConfig?: string;
  state?: string;
  reason?: string;
  desiredDrain?: string;
  lastAppliedDrain?: string;
}

export interface PendingRecord {
  config: string;
  /** The boot the write happened in. */
  bootId: string;
  reboot: boolean;
  skipValidation?: boolean;
}

export interface Observation {
  node: NodeAnnotations;
  bootId: string;
  /** node-annotations.json, when the node has never been seeded. */
  firstBoot?: NodeAnnotations;
  pending?: PendingRecord;
  forceFile: boolean;
  /** For an update: why it cannot be applied (unreconcilable), if so. */
  unreconcilable?: string;
  /** For an update: what the change needs. */
  plan?: Plan;
  /** How the disk differs from the config it should hold now (the pending one, else the current one). */
  validationError?: string;
  /** The requested drain has not been answered within the drain timeout: why, for the reason. */
  drainTimedOut?: string;
}

export type Step =
  | { kind: 'seed'; annotations: NodeAnnotations }
  | { kind: 'force' }
  | { kind: 'set-state'; state: 'Working' | 'Done' | 'Degraded' | 'Unreconcilable'; reason: string; event?: { reason: string; type: 'Normal' | 'Warning' } }
  | { kind: 'request-drain'; value: string }
  | { kind: 'wait'; for: string }
  | { kind: 'write' }
  | { kind: 'reboot' }
  | { kind: 'complete'; config: string }
  | { kind: 'idle' };

const validating = (config: string, error: string) => `unexpected on-disk state validating against ${config}: ${error}`;

export function nextStep(o: Observation): Step {
  const n = o.node;
  if (!n.currentConfig) {
    if (o.firstBoot?.currentConfig) return { kind: 'seed', annotations: o.firstBoot };
    return { kind: 'wait', for: 'the node to be seeded: no currentConfig annotation and no node-annotations.json' };
  }

  if (o.pending) {
    const p = o.pending;
    if (p.reboot && p.bootId === o.bootId) return { kind: 'reboot' };
    if (o.validationError && !p.skipValidation && !o.forceFile) return degraded(n, validating(p.config, o.validationError));
    const uncordon = `${UNCORDON_PREFIX}${p.config}`;
    if (n.desiredDrain !== uncordon) return { kind: 'request-drain', value: uncordon };
    if (n.lastAppliedDrain !== uncordon) return { kind: 'wait', for: `the controller to uncordon the node (${uncordon})` };
    return { kind: 'complete', config: p.config };
  }

  if (o.forceFile) return { kind: 'force' };

  const desired = n.desiredConfig ?? '';
  if (desired && desired !== n.currentConfig) {
    if (o.unreconcilable) {
      if (n.state === 'Unreconcilable' && n.reason === o.unreconcilable) return { kind: 'wait', for: 'a reconcilable desired config' };
      return { kind: 'set-state', state: 'Unreconcilable', reason: o.unreconcilable, event: { reason: 'Unreconcilable', type: 'Warning' } };
    }
    const drain = `${DRAIN_PREFIX}${desired}`;
    if (o.plan?.drain && o.drainTimedOut && n.desiredDrain === drain && n.lastAppliedDrain !== drain) {
      if (n.state === 'Degraded' && n.reason === o.drainTimedOut) return { kind: 'wait', for: `the controller to drain the node (${drain}); the drain timed out` };
      return { kind: 'set-state', state: 'Degraded', reason: o.drainTimedOut, event: { reason: 'FailedToDrain', type: 'Warning' } };
    }
    if (n.state !== 'Working') return { kind: 'set-state', state: 'Working', reason: '', event: { reason: 'SetDesiredConfig', type: 'Normal' } };
    if (o.plan?.drain) {
      if (n.desiredDrain !== drain) return { kind: 'request-drain', value: drain };
      if (n.lastAppliedDrain !== drain) return { kind: 'wait', for: `the controller to drain the node (${drain})` };
    }
    return { kind: 'write' };
  }

  if (o.validationError) {
    const reason = validating(n.currentConfig, o.validationError);
    if (n.state === 'Degraded' && n.reason === reason) return { kind: 'wait', for: 'the drift to be repaired' };
    return { kind: 'set-state', state: 'Degraded', reason, event: { reason: 'ConfigDriftDetected', type: 'Warning' } };
  }
  if (n.state !== 'Done') return { kind: 'set-state', state: 'Done', reason: '', event: { reason: 'NodeDone', type: 'Normal' } };
  return { kind: 'idle' };
}

function degraded(n: NodeAnnotations, reason: string): Step {
  if (n.state === 'Degraded' && n.reason === reason) return { kind: 'wait', for: 'the disk to match (or the forcefile)' };
  return { kind: 'set-state', state: 'Degraded', reason, event: { reason: 'ValidationFailed', type: 'Warning' } };
}
