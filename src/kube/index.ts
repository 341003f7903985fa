// The controller toolkit every bosun controller is built from.
export { KubeConfig, loadKubeConfig, SERVICE_ACCOUNT_DIR, withConnectionReuse, type Cluster, type Context, type KubeConfigLike, type User } from './kubeconfig.js';
export { KubeClient, KubeApiError, type Obj, type ResourceRef, apiVersionOf, isAlreadyExists, isConflict, isNotFound, resourcePath } from './client.js';
export { Informer, InformerFactory, keyOf, type EventType, type InformerOptions } from './informer.js';
export { WorkQueue, type WorkQueueOptions } from './workqueue.js';
export { Controller, TerminalError, type ControllerOptions, type KeyMapper, type SyncContext, type SyncFunction, type SyncReporter, type SyncResult } from './controller.js';
export { LeaderElector, type LeaderElectionOptions } from './leader-election.js';
export { type Condition, type ConditionStatus, findCondition, isFalse, isTrue, removeCondition, sameConditions, setCondition } from './conditions.js';
export { rfc3339, rfc3339Micro } from '../common/time.js';
export { EventRecorder, type EventKind, type EventRecorderOptions } from './events.js';
export { applyObject, applyStatus, type ApplyAction, type ApplyResult } from './apply.js';
export { isSubset, type SubsetOptions } from '../common/subset.js';
export { registry as metricsRegistry } from './metrics.js';
export { type Clock, type ClockTimer, FakeClock, realClock, sleepOn } from './clock.js';
export { Manager, type LeaderElectionSettings, type ManagerOptions, type Runnable } from './manager.js';
export { addManagerFlags, managerOptionsFromFlags, registerComponent, releaseVersionOption, type ComponentCommand, type ManagerFlagDefaults, type ManagerFlags } from './manager-flags.js';
export { HealthChecks, type HealthCheck, type Listen } from './endpoints.js';
export { DelegatedAuth, bearerToken, verbForMethod, writeRefusal, type AuthAttributes, type AuthDecision, type AuthRefusal, type AuthUser, type DelegatedAuthOptions, type NonResourceAttributes, type ResourceAttributes } from './delegated-auth.js';
export { resources, type ResourceDefinition } from './resources.js';
export { annotationsChanged, anyOf, generationChanged, labelsChanged, type EventFilter } from './predicates.js';
export { controllerOf, controllerReference, enqueueOwner, type OwnerReference } from './owners.js';
export { CountExpectations, WriteExpectations } from './expectations.js';
export { degradedCondition, reportDegraded, type DegradedOnError } from './degraded.js';
export { conditionStatus, isClusterOperatorAvailable, isCrdEstablished, isMachineReady, isNodeReady, isPodReady, nodeReadyStatus, type WithConditions } from './readiness.js';
export {
  ClusterOperatorStatus, RELEASE_VERSION, releaseVersion, releaseVersionFromEnvironment, releaseVersionOf, requireReleaseVersion,
  type ClusterOperatorStatusOptions, type DegradedOnErrorOptions, type Failure, type OperandVersion, type RelatedObject, type ReleaseVersionSource,
} from './operator-status.js';
export { aggregatedApiRefusal, aggregatedServerOptions, readRequestHeaderAuth, type RequestHeaderAuth } from './front-proxy.js';
