// `runMachineConfigController`: the machine-config controller process — the template, kubelet-
// config, render and node controllers over one set of informers — while holding the Lease
// openshift-machine-config-operator/machine-config-controller (so two replicas never act at once),
// until the signal aborts.
import type * as k8s from '@kubernetes/client-node';
import { setMaxListeners } from 'node:events';
import { createRequire } from 'node:module';
import { KubeClient } from '../../kube/client.js';
import { EventRecorder } from '../../kube/events.js';
import { InformerFactory } from '../../kube/informer.js';
import { LeaderElector } from '../../kube/leader-election.js';
import { CONTROLLER_CONFIGS, KUBELET_CONFIGS, MACHINE_CONFIG_POOLS, MACHINE_CONFIGS, NODES, type ControllerSettings, type McoContext } from './context.js';
import { kubeletConfigController } from './kubelet-config-controller.js';
import { nodeController } from './node-controller.js';
import { renderController } from './render-controller.js';
import { templateController } from './template-controller.js';

const { version } = createRequire(import.meta.url)('../../../package.json') as { version: string };

/** Written to generated-by-controller-version unless the caller says otherwise. */
export const DEFAULT_CONTROLLER_VERSION = `bosun-${version}`;
/** OpenShift keeps old rendered configs forever; bosun deletes unreferenced ones after this. */
export const DEFAULT_RENDERED_GC_GRACE_MS = 60 * 60_000;
/** As OpenShift's render controller: changes arriving within this window render once. */
export const DEFAULT_RENDER_DELAY_MS = 5_000;

export interface MachineConfigControllerOptions {
  kubeconfig: k8s.KubeConfig;
  signal: AbortSignal;
  controllerVersion?: string;
  releaseVersion?: string;
  /** Public keys for the `core` user (99-<role>-ssh). */
  sshAuthorizedKeys?: string[];
  renderedGCGraceMs?: number;
  renderDelayMs?: number;
  /** Leader election settings; false runs without a Lease (tests, a single instance). */
  leaderElection?: false | { identity?: string; leaseDurationMs?: number; renewDeadlineMs?: number; retryPeriodMs?: number };
}

export async function runMachineConfigController(options: MachineConfigControllerOptions): Promise<void> {
  const settings: ControllerSettings = {
    controllerVersion: options.controllerVersion ?? DEFAULT_CONTROLLER_VERSION,
    releaseVersion: options.releaseVersion,
    sshAuthorizedKeys: options.sshAuthorizedKeys,
    renderedGCGraceMs: options.renderedGCGraceMs ?? DEFAULT_RENDERED_GC_GRACE_MS,
    renderDelayMs: options.renderDelayMs ?? DEFAULT_RENDER_DELAY_MS,
  };
  if (!(settings.renderedGCGraceMs >= 0)) throw new Error(`the rendered-config grace period must be a non-negative number of milliseconds, not ${options.renderedGCGraceMs}`);
  if (!(settings.renderDelayMs >= 0)) throw new Error(`the render delay must be a non-negative number of milliseconds, not ${options.renderDelayMs}`);
  if (options.leaderElection === false) return runControllers(options.kubeconfig, settings, options.signal);
  const elector = new LeaderElector({
    kubeconfig: options.kubeconfig,
    namespace: 'openshift-machine-config-operator',
    name: 'machine-config-controller',
    ...options.leaderElection,
    signal: options.signal,
    onStartedLeading: (leading) => runControllers(options.kubeconfig, settings, leading),
  });
  await elector.run();
}

async function runControllers(kubeconfig: k8s.KubeConfig, settings: ControllerSettings, outer: AbortSignal): Promise<void> {
  // Four controllers over five informers each listen for the stop; one signal of our own, linked
  // to the caller's, carries all of those listeners without Node's leak warning.
  const stopper = new AbortController();
  setMaxListeners(64, stopper.signal);
  if (outer.aborted) stopper.abort();
  else outer.addEventListener('abort', () => stopper.abort(), { once: true });
  const signal = stopper.signal;
  const client = new KubeClient(kubeconfig);
  const factory = new InformerFactory(client);
  const ctx: McoContext = {
    client,
    informers: {
      machineConfigs: factory.forResource(MACHINE_CONFIGS),
      pools: factory.forResource(MACHINE_CONFIG_POOLS),
      controllerConfigs: factory.forResource(CONTROLLER_CONFIGS),
      kubeletConfigs: factory.forResource(KUBELET_CONFIGS),
      nodes: factory.forResource(NODES),
    },
    events: new EventRecorder(client, { component: 'machineconfigcontroller' }),
    settings,
    renderOutcome: new Map(),
    // Called only once the controllers run, after `node` below exists.
    refreshPoolStatus: (pool) => node.enqueue(pool),
  };
  const node = nodeController(ctx);
  const controllers = [templateController(ctx), kubeletConfigController(ctx), renderController(ctx), node];
  factory.start(signal);
  await Promise.all(controllers.map((c) => c.run(signal)));
  await factory.stop();
}
