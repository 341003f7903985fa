// The machine-config daemon: one per node (a DaemonSet pod with the host's root at /rootfs), the
// only writer of its node's currentConfig, state and reason annotations and of the node's disk.
// Its loop is state-machine.ts: each pass reads the node (from the API, not a cache, so it never
// acts on its own stale write: after a step that wrote the node, the write's answer is that
// read), the disk and the boot, asks nextStep, takes that step, and goes round again until the
// step is to wait. Rendered configs are named by the hash of their content, so each is fetched
// once and kept (a few, the newest). A failed write is rolled back (writer.ts) and reported
// as state=Degraded with the reason; the pass then fails and the work queue retries it with
// back-off, so the node recovers by itself once the cause is gone. While Done it checks the disk
// for drift every --drift-check-interval. Its metrics (metrics.ts) follow these steps: the state
// it sees and writes, a pass's failure, a write that failed, drift, and a reboot that failed: one
// the host refused to take (OpenShift's daemon: `systemctl reboot` exiting non-zero), or one the
// host took and did not carry out — the daemon still running in the same boot --reboot-timeout
// after asking (OpenShift's daemon counts that too, after its wait to be killed by the shutdown,
// "this error should be unreachable"); the reboot is then asked for again.
import { Controller, type SyncContext, type SyncResult } from '../../kube/controller.js';
import { type Clock, realClock } from '../../kube/clock.js';
import { annotationsChanged } from '../../kube/predicates.js';
import type { KubeObject, Node } from '../../api/index.js';
import { isNotFound, type KubeClient, type ResourceRef } from '../../kube/client.js';
import type { EventRecorder } from '../../kube/events.js';
import type { InformerFactory } from '../../kube/informer.js';
import type { Runnable } from '../../kube/manager.js';
import type { Registry } from 'prom-client';
import { resources } from '../../kube/resources.js';
import { isNodeReady } from '../../kube/readiness.js';
import { CURRENT_CONFIG_ANNOTATION, DESIRED_CONFIG_ANNOTATION, DESIRED_DRAIN_ANNOTATION, DRAIN_ERROR_ANNOTATION, LAST_APPLIED_DRAIN_ANNOTATION, REASON_ANNOTATION, STATE_ANNOTATION, type MachineConfig } from '../controller/types.js';
import { unreconcilableChanges } from '../controller/validation.js';
import { diffConfigs, forcedDiff } from './diff.js';
import { describeAction, planActions, type NodeDisruptionPolicy } from './disruption-policy.js';
import { DiskState } from './disk-state.js';
import type { Host } from './host.js';
import { DaemonMetrics } from './metrics.js';
import { nextStep, type NodeAnnotations, type Observation, type Step } from './state-machine.js';
import { rootReader, validateOnDisk } from './validate.js';
import { WriteError, writeDiff } from './writer.js';

/** The part of an operator.openshift.io/v1 MachineConfiguration the daemon reads (bosun ships no CRD for the kind). */
type MachineConfiguration = KubeObject & { spec?: { nodeDisruptionPolicy?: NodeDisruptionPolicy } };

/** The node disruption policy's home (operator.openshift.io/v1, cluster-scoped, named cluster). */
export const MACHINE_CONFIGURATIONS: ResourceRef<MachineConfiguration> = { group: 'operator.openshift.io', version: 'v1', resource: 'machineconfigurations', namespaced: false };
export const MACHINE_CONFIG_DAEMON = { name: 'machine-config-daemon', lease: { namespace: 'openshift-machine-config-operator', name: 'machine-config-daemon' }, eventSource: 'machineconfigdaemon' };
export const DEFAULT_DRIFT_CHECK_MS = 10_000;
/** A drain not answered after this long degrades the node (OpenShift's daemon waits an hour). */
export const DEFAULT_DRAIN_TIMEOUT_MS = 60 * 60_000;
const MAX_STEPS_PER_PASS = 30;
/** Rendered configs kept in memory (the current and desired ones, and a few before them). */
const CONFIG_CACHE_SIZE = 4;
/** A reboot asked for and not yet happened after this long has failed: counted, and asked for again. */
export const DEFAULT_REBOOT_TIMEOUT_MS = 60_000;

export interface DaemonSettings {
  nodeName: string;
  host: Host;
  /** How often a Done node's disk is compared with its config. */
  driftCheckIntervalMs?: number;
  /** How long a requested drain may go unanswered before the node is Degraded (default an hour). */
  drainTimeoutMs?: number;
  /** How long a reboot the host took may take to happen before it counts as failed (default 60 s). */
  rebootTimeoutMs?: number;
  /** Called after each step that changed something (fault injection: tests kill or reboot here). */
  afterStep?: (step: Step) => Promise<void> | void;
  /** The clock of the drain timeout, the reboot request's retry and the queue (default the wall clock). */
  clock?: Clock;
}

function annotationsOf(node: Node): NodeAnnotations {
  const a: Record<string, string> = node.metadata?.annotations ?? {};
  return {
    currentConfig: a[CURRENT_CONFIG_ANNOTATION], desiredConfig: a[DESIRED_CONFIG_ANNOTATION], state: a[STATE_ANNOTATION], reason: a[REASON_ANNOTATION],
    desiredDrain: a[DESIRED_DRAIN_ANNOTATION], lastAppliedDrain: a[LAST_APPLIED_DRAIN_ANNOTATION],
  };
}

export class MachineConfigDaemon implements Runnable {
  readonly name = 'machine-config-daemon';
  readonly needsLeaderElection = false;
  private readonly client: KubeClient;
  private readonly events: EventRecorder;
  private readonly controller: Controller;
  private readonly disk: DiskState;
  private readonly driftMs: number;
  /** The boot a reboot was last asked of, and when: one request per boot unless it goes unanswered. */
  private rebootAsked?: { bootId: string; at: number };
  /** The node as the API server answered the last write of this pass, if the last step wrote it. */
  private written?: Node;
  private readonly configs = new Map<string, MachineConfig>();
  /** The drain this daemon waits for, and since when (a restarted daemon starts the wait again, as OpenShift's). */
  private drainWait?: { value: string; since: number };
  /** The node disruption policy, read once per pass (each step of a pass plans with the same). */
  private passPolicy?: Promise<NodeDisruptionPolicy | undefined>;
  /** resourceVersions of the node this daemon wrote (the last few). */
  private readonly ownWrites = new Set<string>();
  /** mcd_* (metrics.ts), on the manager's /metrics when the daemon is given one. */
  readonly metrics = new DaemonMetrics();

  private now(): number {
    return (this.settings.clock ?? realClock).now();
  }

  constructor(from: { client: KubeClient; informers: InformerFactory; events: EventRecorder; addMetrics?(registry: Registry): unknown }, private readonly settings: DaemonSettings) {
    this.client = from.client;
    from.addMetrics?.(this.metrics.registry);
    this.events = from.events;
    this.disk = new DiskState(settings.host.root);
    this.driftMs = settings.driftCheckIntervalMs ?? DEFAULT_DRIFT_CHECK_MS;
    this.controller = new Controller({
      name: 'machine-config-daemon',
      clock: settings.clock,
      sync: (_key, sc) => this.sync(sc),
      queue: { baseDelayMs: 1000, maxDelayMs: 60_000 },
    });
    const node = from.informers.forResource(resources.nodes, { fieldSelector: `metadata.name=${settings.nodeName}` });
    // The annotations and the boot drive the loop (not the node agent's other status writes), and
    // not the daemon's own writes: the pass that wrote went on from the write's answer. (Should a
    // relist fold someone else's change into an event of ours, the periodic pass — wait and idle
    // requeue — sees it.)
    const rebooted = (object: Node, old?: Node) => object.status?.nodeInfo?.bootID !== old?.status?.nodeInfo?.bootID;
    this.controller.watch(node, () => settings.nodeName, (type, object, old) => type !== 'update' || rebooted(object, old)
      || (annotationsChanged(type, object, old) && !this.ownWrites.has(object.metadata?.resourceVersion ?? '')));
  }

  async start(signal: AbortSignal): Promise<void> {
    this.controller.enqueue(this.settings.nodeName);
    await this.controller.run(signal);
  }

  private async sync(sc: SyncContext): Promise<SyncResult | void> {
    try {
      return await this.pass(sc);
    } catch (e) {
      this.metrics.setUpdate('', (e as Error).message, this.now());
      throw e;
    }
  }

  private async pass({ log, signal }: SyncContext): Promise<SyncResult | void> {
    this.written = undefined;
    this.passPolicy = undefined;
    for (let i = 0; i < MAX_STEPS_PER_PASS && !signal.aborted; i++) {
      const node = this.written ?? await this.client.get(resources.nodes, this.settings.nodeName);
      // One kubelet health check per pass: the Ready condition the kubelet posts.
      if (i === 0) this.metrics.kubeletCheck(isNodeReady(node));
      this.written = undefined;
      const { observation, configs } = await this.observe(node);
      const seen = observation.node;
      if (seen.state) this.metrics.setState(seen.state, seen.state === 'Degraded' || seen.state === 'Unreconcilable' ? seen.reason ?? '' : '', this.now());
      const step = nextStep(observation);
      if (step.kind === 'reboot' && this.rebootAsked?.bootId === observation.bootId) {
        const waited = this.now() - this.rebootAsked.at;
        const timeout = this.settings.rebootTimeoutMs ?? DEFAULT_REBOOT_TIMEOUT_MS;
        if (waited < timeout) return { requeueAfterMs: Math.min(2_000, timeout - waited) };
        // Still in the boot that asked: the host took the request and did not reboot.
        this.rebootAsked = undefined;
        this.metrics.rebootsFailed.inc();
        const message = `Reboot into config ${observation.pending?.config} requested ${describeDuration(waited)} ago has not happened (still boot ${observation.bootId}); asking again`;
        log.warn({ node: this.settings.nodeName }, message);
        this.event(node, 'Warning', 'RebootFailed', message);
      }
      if (step.kind !== 'idle' && step.kind !== 'wait') log.info({ node: this.settings.nodeName, step: describeStep(step) }, 'step');
      const outcome = await this.take(step, node, observation, configs, log);
      if (step.kind !== 'idle' && step.kind !== 'wait') await this.settings.afterStep?.(step);
      if (outcome) return outcome;
    }
    return { requeueAfterMs: 1000 };
  }

  /** What nextStep needs, and the configs it was computed from. */
  private async observe(node: Node): Promise<{ observation: Observation; configs: { from?: MachineConfig; to?: MachineConfig } }> {
    const { host } = this.settings;
    const a = annotationsOf(node);
    const o: Observation = { node: a, bootId: host.bootId(), pending: this.disk.pending(), forceFile: host.forceFile() };
    const configs: { from?: MachineConfig; to?: MachineConfig } = {};
    if (!a.currentConfig) {
      o.firstBoot = this.disk.firstBootAnnotations();
      return { observation: o, configs };
    }
    const disk = rootReader(host.root);
    if (o.pending) {
      const pending = await this.config(o.pending.config);
      o.validationError = validateOnDisk(pending.spec, disk);
      return { observation: o, configs: { to: pending } };
    }
    const desired = a.desiredConfig || a.currentConfig;
    configs.from = await this.config(a.currentConfig);
    if (desired !== a.currentConfig || o.forceFile) {
      configs.to = await this.config(desired);
      const problems = unreconcilableChanges(configs.from.spec, configs.to.spec);
      if (problems.length) o.unreconcilable = `can't reconcile config ${a.currentConfig} with ${desired}: ${problems.map((p) => `${p.field}: ${p.message}`).join('; ')}`;
      else {
        this.passPolicy ??= this.policy();
        o.plan = planActions(diffConfigs(configs.from.spec, configs.to.spec), await this.passPolicy);
        o.drainTimedOut = this.drainTimedOut(node, a);
      }
    } else {
      o.validationError = validateOnDisk(configs.from.spec, disk);
      this.metrics.setDrift(o.validationError !== undefined, this.now());
    }
    return { observation: o, configs };
  }

  /** When the node waits on its drain request longer than the drain timeout: the reason to give. */
  private drainTimedOut(node: Node, a: NodeAnnotations): string | undefined {
    const asked = a.desiredDrain ?? '';
    if (!asked.startsWith('drain-') || a.lastAppliedDrain === asked) {
      this.drainWait = undefined;
      return undefined;
    }
    if (this.drainWait?.value !== asked) this.drainWait = { value: asked, since: this.now() };
    const timeoutMs = this.settings.drainTimeoutMs ?? DEFAULT_DRAIN_TIMEOUT_MS;
    if (this.now() - this.drainWait.since < timeoutMs) return undefined;
    const why = node.metadata?.annotations?.[DRAIN_ERROR_ANNOTATION] || 'see the machine-config-controller logs for more information';
    return `failed to drain node: ${this.settings.nodeName} after ${describeDuration(timeoutMs)}: ${why}`;
  }

  /** A rendered config: the one recorded on disk when it is that one, else from the API. */
  private async config(name: string): Promise<MachineConfig> {
    const onDisk = this.disk.currentConfig();
    if (onDisk?.metadata.name === name) return onDisk;
    const kept = this.configs.get(name);
    if (kept) return kept;
    try {
      const mc = (await this.client.get(resources.machineConfigs, name)) as MachineConfig;
      if (name.startsWith('rendered-')) {
        this.configs.set(name, mc);
        if (this.configs.size > CONFIG_CACHE_SIZE) this.configs.delete(this.configs.keys().next().value!);
      }
      return mc;
    } catch (e) {
      if (isNotFound(e)) throw new Error(`machineconfig ${name} not found`);
      throw e;
    }
  }

  private async policy(): Promise<NodeDisruptionPolicy | undefined> {
    try {
      const mc = await this.client.read(MACHINE_CONFIGURATIONS, 'cluster');
      return mc?.spec?.nodeDisruptionPolicy;
    } catch (e) {
      // A cluster without the MachineConfiguration kind has OpenShift's defaults only.
      if (isNotFound(e) || /resource|not found|no matches/i.test((e as Error).message)) return undefined;
      throw e;
    }
  }

  private async patchNode(patch: Record<string, string | null>): Promise<void> {
    this.written = await this.client.mergePatch(resources.nodes, this.settings.nodeName, undefined, { metadata: { annotations: patch } });
    const state = patch[STATE_ANNOTATION];
    if (state) this.metrics.setState(state, state === 'Degraded' || state === 'Unreconcilable' ? patch[REASON_ANNOTATION] ?? '' : '', this.now());
    this.ownWrites.add(this.written.metadata?.resourceVersion ?? '');
    if (this.ownWrites.size > 8) this.ownWrites.delete(this.ownWrites.values().next().value!);
  }

  private event(node: Node, type: 'Normal' | 'Warning', reason: string, message: string): void {
    void this.events.event({ apiVersion: 'v1', kind: 'Node', metadata: node.metadata }, type, reason, message);
  }

  /** Takes one step; answers when the pass should end (and when to look again). */
  private async take(step: Step, node: Node, o: Observation, configs: { from?: MachineConfig; to?: MachineConfig }, log: SyncContext['log']): Promise<SyncResult | undefined> {
    const { host } = this.settings;
    const desired = o.node.desiredConfig ?? '';
    switch (step.kind) {
      case 'seed': {
        const s = step.annotations;
        await this.patchNode({
          [CURRENT_CONFIG_ANNOTATION]: s.currentConfig!,
          ...(o.node.desiredConfig ? {} : { [DESIRED_CONFIG_ANNOTATION]: s.desiredConfig ?? s.currentConfig! }),
          [STATE_ANNOTATION]: 'Done', [REASON_ANNOTATION]: '',
        });
        if (this.disk.currentConfig()?.metadata.name !== s.currentConfig) this.disk.writeCurrentConfig(await this.config(s.currentConfig!));
        return undefined;
      }
      case 'set-state':
        await this.patchNode({ [STATE_ANNOTATION]: step.state, [REASON_ANNOTATION]: step.reason });
        if (step.event) this.event(node, step.event.type, step.event.reason, step.reason || (step.state === 'Working' ? `Node is updating to ${desired}` : `Node is ${step.state} on ${o.node.currentConfig}`));
        return undefined;
      case 'request-drain':
        await this.patchNode({ [DESIRED_DRAIN_ANNOTATION]: step.value });
        this.event(node, 'Normal', step.value.startsWith('drain-') ? 'Drain' : 'Uncordon', `${step.value.startsWith('drain-') ? 'Draining' : 'Uncordoning'} node ${this.settings.nodeName} (${step.value})`);
        return undefined;
      case 'wait':
        log.debug({ waitingFor: step.for }, 'waiting');
        return { requeueAfterMs: this.driftMs };
      case 'idle':
        this.metrics.setUpdate(o.node.currentConfig ?? '', '', this.now());
        return { requeueAfterMs: this.driftMs };
      case 'write':
      case 'force': {
        const from = configs.from!;
        const to = configs.to ?? from;
        const plan = o.plan ?? planActions(diffConfigs(from.spec, to.spec));
        const force = step.kind === 'force';
        try {
          writeDiff(host.root, force ? forcedDiff(from.spec, to.spec) : diffConfigs(from.spec, to.spec));
        } catch (e) {
          this.metrics.pivotErrors.inc();
          const reason = `failed to update to ${to.metadata.name}: ${(e as Error).message}`;
          await this.patchNode({ [STATE_ANNOTATION]: 'Degraded', [REASON_ANNOTATION]: reason });
          this.event(node, 'Warning', 'UpdateFailed', reason);
          if (e instanceof WriteError) throw e;
          throw new WriteError(reason, { cause: e });
        }
        this.metrics.pivotErrors.set(0);
        const reboot = force || plan.reboot;
        this.disk.writePending({ config: to.metadata.name!, bootId: o.bootId, reboot, ...(force ? { skipValidation: true } : {}) });
        this.disk.writeCurrentConfig(to);
        if (force) host.removeForceFile();
        this.event(node, 'Normal', 'OSUpdateStaged', `Changes to ${to.metadata.name} written${force ? ' (forced)' : ''}: ${plan.reasons.join('; ') || 'no file changes'}`);
        if (!reboot) {
          for (const action of plan.postActions) {
            const done = await host.runAction(action);
            log.info({ action: describeAction(action), done }, 'post-config action');
            this.event(node, 'Normal', 'PostConfigAction', `${describeAction(action)}: ${done}`);
          }
        }
        return undefined;
      }
      case 'reboot':
        if (o.node.state !== 'Rebooting') await this.patchNode({ [STATE_ANNOTATION]: 'Rebooting', [REASON_ANNOTATION]: '' });
        this.event(node, 'Normal', 'Reboot', `Node will reboot into config ${o.pending!.config}`);
        try {
          host.requestReboot();
        } catch (e) {
          this.metrics.rebootsFailed.inc();
          this.event(node, 'Warning', 'RebootFailed', `Reboot into config ${o.pending!.config} could not be requested: ${(e as Error).message}`);
          throw new Error(`reboot command failed: ${(e as Error).message}`, { cause: e });
        }
        this.rebootAsked = { bootId: o.bootId, at: this.now() };
        // Still here a while later means the reboot has not happened: a later pass asks again.
        return { requeueAfterMs: 2_000 };
      case 'complete':
        if (this.disk.currentConfig()?.metadata.name !== step.config && configs.to) this.disk.writeCurrentConfig(configs.to);
        await this.patchNode({ [CURRENT_CONFIG_ANNOTATION]: step.config, [STATE_ANNOTATION]: 'Done', [REASON_ANNOTATION]: '' });
        this.disk.clearPending();
        host.removeForceFile();
        this.event(node, 'Normal', 'NodeDone', `Setting node ${this.settings.nodeName}, currentConfig ${step.config} to Done`);
        this.metrics.setUpdate(step.config, '', this.now());
        return undefined;
    }
  }
}

/** "1 hour", "90 seconds": a timeout as a reason says it. */
function describeDuration(ms: number): string {
  const unit = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;
  if (ms % 3_600_000 === 0) return unit(ms / 3_600_000, 'hour');
  if (ms % 60_000 === 0) return unit(ms / 60_000, 'minute');
  return unit(Math.round(ms / 1000), 'second');
}

function describeStep(step: Step): string {
  switch (step.kind) {
    case 'set-state': return `state ${step.state}${step.reason ? `: ${step.reason}` : ''}`;
    case 'request-drain': return `desiredDrain ${step.value}`;
    case 'complete': return `complete ${step.config}`;
    case 'seed': return `seed from node-annotations.json (${step.annotations.currentConfig})`;
    default: return step.kind;
  }
}
