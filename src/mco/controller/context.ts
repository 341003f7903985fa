// What the machine-config controller's four sub-controllers share in one process: the API
// client, one informer per kind, the event recorder and the options. They pass nothing to each
// other in memory: the render controller's RenderDegraded is on the pool, where the node
// controller reads it.
import type { Informer } from '../../kube/informer.js';
import type { KubeClient } from '../../kube/client.js';
import type { EventRecorder } from '../../kube/events.js';
import type { Clock } from '../../kube/clock.js';
import type { ControllerConfig, KubeletConfig, MachineConfig, MachineConfigPool, NodeView } from './types.js';
import type { ControllerMetrics } from './metrics.js';


/** The singleton ControllerConfig the operator keeps in step with the cluster. */
export const CONTROLLER_CONFIG_NAME = 'machine-config-controller';
export const TEMPLATE_COMPLETED = 'TemplateControllerCompleted';
export const TEMPLATE_FAILING = 'TemplateControllerFailing';

export interface ControllerSettings {
  controllerVersion: string;
  /** Release version for the release-image-version annotation when the ControllerConfig has none. */
  releaseVersion?: string;
  sshAuthorizedKeys?: string[];
  /** How long an unreferenced rendered config is kept before it is deleted. */
  renderedGCGraceMs: number;
  /** How long after a MachineConfig or ControllerConfig change the pools are rendered. */
  renderDelayMs: number;
}

export interface McoContext {
  client: KubeClient;
  informers: { machineConfigs: Informer<MachineConfig>; pools: Informer<MachineConfigPool>; controllerConfigs: Informer<ControllerConfig>; kubeletConfigs: Informer<KubeletConfig>; nodes: Informer<NodeView> };
  events: EventRecorder;
  settings: ControllerSettings;
  /** The clock every time rule reads: render delay, rendered-config grace, drain retries, condition times. */
  clock: Clock;
  /** mcc_* and mco_* (metrics.ts), served on the manager's /metrics. */
  metrics: ControllerMetrics;
}
