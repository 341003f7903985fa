// One pass of the CVO over a loaded payload (OpenShift's sync worker apply): picks the manifests
// the cluster gets (inclusion.ts: capabilities, feature set and gates, major version,
// overrides), builds the task graph for the mode, applies it (apply.ts) and says how far it got
// and what went wrong, as a SyncResult for the status computation (status.ts). Progress is
// reported through a callback while the pass runs; durations go to the CVO's metrics.
import type { Clock } from '../kube/clock.js';
import type { KubeClient } from '../kube/client.js';
import { filterManifests } from './payload/inclusion.js';
import { enabledCapabilities, knownCapabilities } from './payload/capabilities.js';
import { enabledFeatureGates, majorVersionOf } from './payload/feature-gates.js';
import { buildTaskGraph, workersFor, type GraphMode } from './task-graph.js';
import { runTaskGraph } from './task-graph-runner.js';
import { applyManifest } from './apply.js';
import { asUpdateError } from './errors.js';
import type { Loaded } from './load.js';
import type { SyncResult } from './status.js';
import type { CvoMetrics } from './metrics.js';

import type * as api from '../api/index.js';

export interface PassContext {
  client: KubeClient;
  clock: Clock;
  metrics: CvoMetrics;
  /** Failed passes in a row: rotates the Reconciling order so one stuck node does not starve the rest. */
  attempt: number;
  waitTimeoutMs: number;
  signal: AbortSignal;
  /** Called as the pass moves: manifests done, and the ClusterOperator it is about to wait on ('' once through). */
  onProgress: (done: number, total: number, waitingOn: string) => void;
}

/** The mode of a pass: Initializing until some release has Completed, Updating until this one has, Reconciling after. */
export function passMode(history: readonly api.UpdateHistory[], image: string): GraphMode {
  const everCompleted = history.some((h) => h.state === 'Completed');
  const thisCompleted = history[0]?.image === image && history[0]?.state === 'Completed';
  return !everCompleted ? 'Initializing' : thisCompleted ? 'Reconciling' : 'Updating';
}

/**
 * The capabilities a pass enables: the spec's baseline and additional ones, plus every one
 * enabled before (a capability once enabled stays enabled, as in OpenShift).
 */
export function passCapabilities(cv: api.ClusterVersion): Set<string> {
  const enabled = enabledCapabilities(cv.spec?.capabilities);
  for (const c of (cv.status?.capabilities?.enabledCapabilities ?? []) as string[]) enabled.add(c);
  return enabled;
}

/** Applies the loaded payload once for ClusterVersion `cv` under FeatureGate/cluster `featureGate`. */
export async function syncPayload(loaded: Loaded, cv: api.ClusterVersion, featureGate: api.FeatureGate | undefined, ctx: PassContext): Promise<SyncResult> {
  const { clock, metrics } = ctx;
  const mode = passMode(cv.status?.history ?? [], loaded.image);
  const version = loaded.payload.version;
  const { included } = filterManifests(loaded.payload.manifests, {
    overrides: cv.spec?.overrides,
    enabledCapabilities: passCapabilities(cv),
    knownCapabilities: new Set(knownCapabilities),
    featureSet: featureGate?.spec?.featureSet ?? '',
    enabledFeatureGates: enabledFeatureGates(featureGate, version),
    majorVersion: majorVersionOf(version),
  });
  const graph = buildTaskGraph(included, mode, { attempt: ctx.attempt });
  const total = included.length;
  let done = 0;
  let waitingOn = '';
  ctx.onProgress(done, total, waitingOn);
  const owner = { apiVersion: cv.apiVersion ?? 'config.openshift.io/v1', kind: cv.kind ?? 'ClusterVersion', name: cv.metadata.name, uid: cv.metadata.uid ?? '' };
  const applyContext = { client: ctx.client, owner, mode, waitTimeoutMs: ctx.waitTimeoutMs, signal: ctx.signal };
  const passStarted = clock.now();
  const result = await runTaskGraph(graph, workersFor(mode, graph), async (tasks) => {
    for (const task of tasks) {
      if (task.manifest.gvk.kind === 'ClusterOperator') {
        // Say at once what the pass is about to wait on (the wait may be long).
        waitingOn = String(task.manifest.object.metadata.name);
        ctx.onProgress(done, total, waitingOn);
      }
      const started = clock.now();
      await applyManifest(task.manifest, applyContext);
      if (waitingOn === task.manifest.object.metadata.name) waitingOn = '';
      metrics.manifestDuration.observe({ kind: task.manifest.gvk.kind }, (clock.now() - started) / 1000);
      done++;
      ctx.onProgress(done, total, waitingOn);
    }
  }, ctx.signal);
  metrics.applyDuration.observe({ mode }, (clock.now() - passStarted) / 1000);
  return {
    mode, version, image: loaded.image, done, total,
    errors: result.errors.map(asUpdateError),
    firstIncomplete: result.firstIncomplete?.manifest,
    incomplete: result.incomplete,
  };
}
