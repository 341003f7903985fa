// The machine-config controller process: the template, kubelet-config, render, node and drain
// controllers over one set of informers, run by a component manager while holding the Lease
// openshift-machine-config-operator/machine-config-controller (so two replicas never act at once).
// `addMachineConfigController` puts them on a manager (the command's, or bring-up's);
// `runMachineConfigController` is the programmatic shorthand: a manager of its own until the
// signal aborts.
import type { KubeConfigLike } from '../../kube/kubeconfig.js';
import { createRequire } from 'node:module';
import { Manager, type ManagerOptions } from '../../kube/manager.js';
import { resources } from '../../kube/resources.js';
import type { ControllerSettings, McoContext } from './context.js';
import { kubeletConfigController } from './kubelet-config-controller.js';
import { nodeController } from './node-controller.js';
import { drainController } from './drain-controller.js';
import { DEFAULT_DRAIN_TIMING, type DrainTiming } from './drain.js';
import { renderController } from './render-controller.js';
import { templateController } from './template-controller.js';
import { type Clock, realClock } from '../../kube/clock.js';
import { createControllerMetrics } from './metrics.js';

const { version } = createRequire(import.meta.url)('../../../package.json') as { version: string };

/** Written to generated-by-controller-version unless the caller says otherwise. */
export const DEFAULT_CONTROLLER_VERSION = `bosun-${version}`;
/** OpenShift keeps old rendered configs forever; bosun deletes unreferenced ones after this. */
export const DEFAULT_RENDERED_GC_GRACE_MS = 60 * 60_000;
/** As OpenShift's render controller: changes arriving within this window render once. */
export const DEFAULT_RENDER_DELAY_MS = 5_000;

/** The component's name and its Lease, as OpenShift names them. */
export const MACHINE_CONFIG_CONTROLLER = { name: 'machine-config-controller', lease: { namespace: 'openshift-machine-config-operator', name: 'machine-config-controller' }, eventSource: 'machineconfigcontroller' };

export interface MachineConfigControllerSettings {
  controllerVersion?: string;
  releaseVersion?: string;
  /** Public keys for the `core` user (99-<role>-ssh). */
  sshAuthorizedKeys?: string[];
  renderedGCGraceMs?: number;
  renderDelayMs?: number;
  /** When failing drains are retried (default: after a minute, every 5 once failing for 10). */
  drainTiming?: Partial<DrainTiming>;
  /** The clock the controllers' time rules run on (default the wall clock). */
  clock?: Clock;
}

export interface MachineConfigControllerOptions extends MachineConfigControllerSettings {
  kubeconfig: KubeConfigLike;
  signal: AbortSignal;
  /** Leader election settings; false runs without a Lease (tests, a single instance). */
  leaderElection?: false | { identity?: string; leaseDurationMs?: number; renewDeadlineMs?: number; retryPeriodMs?: number };
  /** Serve /metrics here (default: not served). */
  metricsListen?: ManagerOptions['metricsListen'];
}

/** Adds the five controllers to a manager (which owns client, informers, events and Lease). */
export function addMachineConfigController(manager: Manager, options: MachineConfigControllerSettings): void {
  const settings: ControllerSettings = {
    controllerVersion: options.controllerVersion ?? DEFAULT_CONTROLLER_VERSION,
    releaseVersion: options.releaseVersion,
    sshAuthorizedKeys: options.sshAuthorizedKeys,
    renderedGCGraceMs: options.renderedGCGraceMs ?? DEFAULT_RENDERED_GC_GRACE_MS,
    renderDelayMs: options.renderDelayMs ?? DEFAULT_RENDER_DELAY_MS,
  };
  if (!(settings.renderedGCGraceMs >= 0)) throw new Error(`the rendered-config grace period must be a non-negative number of milliseconds, not ${options.renderedGCGraceMs}`);
  if (!(settings.renderDelayMs >= 0)) throw new Error(`the render delay must be a non-negative number of milliseconds, not ${options.renderDelayMs}`);
  const { informers } = manager;
  const shared = {
    machineConfigs: informers.forResource(resources.machineConfigs),
    pools: informers.forResource(resources.machineConfigPools),
    controllerConfigs: informers.forResource(resources.controllerConfigs),
    kubeletConfigs: informers.forResource(resources.kubeletConfigs),
    nodes: informers.forResource(resources.nodes),
  };
  const metrics = createControllerMetrics(shared);
  manager.addMetrics(metrics.registry);
  const ctx: McoContext = { client: manager.client, informers: shared, events: manager.events, settings, clock: options.clock ?? realClock, metrics };
  manager.add(templateController(ctx), kubeletConfigController(ctx), renderController(ctx), nodeController(ctx), drainController(ctx, { ...DEFAULT_DRAIN_TIMING, ...options.drainTiming }));
}

export async function runMachineConfigController(options: MachineConfigControllerOptions): Promise<void> {
  const { name, lease, eventSource } = MACHINE_CONFIG_CONTROLLER;
  const manager = new Manager({ name, eventSource, kubeconfig: options.kubeconfig, metricsListen: options.metricsListen, leaderElection: options.leaderElection === false ? undefined : { ...lease, ...options.leaderElection } });
  addMachineConfigController(manager, options);
  await manager.start(options.signal);
}
