// The controller toolkit every bosun controller is built from.
export { loadKubeConfig, withConnectionReuse } from './kubeconfig.js';
export { KubeClient, KubeApiError, type Obj, type ResourceRef, apiVersionOf, isAlreadyExists, isConflict, isNotFound, resourcePath } from './client.js';
export { Informer, InformerFactory, keyOf, type EventType, type InformerOptions } from './informer.js';
export { WorkQueue, type WorkQueueOptions } from './workqueue.js';
export { Controller, TerminalError, type ControllerOptions, type KeyMapper, type SyncContext, type SyncFunction, type SyncResult } from './controller.js';
export { LeaderElector, type LeaderElectionOptions } from './leader-election.js';
export { type Condition, type ConditionStatus, findCondition, isFalse, isTrue, removeCondition, rfc3339, sameConditions, setCondition } from './conditions.js';
export { EventRecorder, type EventKind, type EventRecorderOptions } from './events.js';
export { applyObject, applyStatus, isSubset, type ApplyAction, type ApplyResult } from './apply.js';
export { registry as metricsRegistry, serveMetrics } from './metrics.js';
export { type Clock, type ClockTimer, FakeClock, realClock, sleepOn } from './clock.js';
export { Manager, type LeaderElectionSettings, type ManagerOptions, type Runnable } from './manager.js';
export { addManagerFlags, managerOptionsFromFlags, registerComponent, type ComponentCommand, type ManagerFlagDefaults, type ManagerFlags } from './manager-flags.js';
export { HealthChecks, type HealthCheck, type Listen } from './endpoints.js';
export { resources, type ResourceDefinition } from './resources.js';
