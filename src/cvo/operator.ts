// The cluster-version operator's sync loop: ClusterVersion/version names the release to run;
// the CVO loads that payload from the release store, applies it as a task graph, and reports
// what it is doing in the ClusterVersion's status as OpenShift's CVO does.
//
// State machine of the loop (one iteration per pass):
//   no ClusterVersion            → wait
//   desired image not loaded     → load it (RetrievePayload → LoadPayload → VerifyPayloadVersion);
//                                  failure: ReleaseAccepted=False naming the step and the file,
//                                  the cluster stays on what it had; success: ReleaseAccepted=True
//                                  (PayloadLoaded) and a Partial history entry
//   mode                         → Initializing until some release has Completed, Updating
//                                  while the loaded release has not, Reconciling after
//   apply the graph              → progress "Working towards X: n of m done (p% complete)";
//                                  success: history Completed, Available=True,
//                                  Progressing=False, Failing=False; failure: Failing=True with
//                                  the reason and the manifest or operator named, retried with
//                                  backoff
//   Reconciling                  → the whole payload again every reconcile interval, so a
//                                  deleted or edited managed object is put back; a change of
//                                  desiredUpdate interrupts the wait.
//   new work during a pass       → a change of the desired release, the overrides, the
//                                  capabilities or the feature gates cancels the pass and the
//                                  next one starts on the new work at once, as OpenShift's sync
//                                  worker cancels its loop (a change of release while
//                                  Initializing waits for the install's pass to end, as there).
//
// Beside the loop, the CVO asks the update service (spec.upstream + spec.channel) for the
// releases the cluster may move to (status.availableUpdates, conditionalUpdates,
// desired.channels, RetrievedUpdates; PromQL risks asked of thanos-querier through a throttled
// cache, promql-target.ts), resolves a version-only desiredUpdate against them, and
// runs the upgrade preconditions before it starts an update (ReleaseAccepted=False reason
// PreconditionChecks when they block; force records them in history[].acceptedRisks).
//
// Before loading, a release is verified (verify.ts): its content against its digest, and its
// digest against signatures from the keys of the verification ConfigMap; failures refuse it
// (ReleaseAccepted=False, RetrievePayload, "The update cannot be verified: …") unless forced.
//
// The CVO runs on the component manager (addClusterVersionOperator): its Lease
// openshift-cluster-version/version keeps two CVOs from applying at once, and every leadership
// term starts a fresh operator on the manager's client and informers.
//
// Waiting on ClusterOperators during an update is progress, not failure: an operator not yet
// Available or not yet at the new version is named in Progressing ("…, waiting on X") with
// Failing=False; after slowOperatorMs (30 minutes; 90 for machine-config, which reboots nodes)
// Failing=Unknown, reason SlowClusterOperator; a Degraded operator is tolerated for
// degradedToleranceMs (40 minutes) from the start of the update before Failing=True. Which
// errors are waiting and which are failures is each error's effect (errors.ts).
//
// The ClusterVersion, the ClusterOperators and FeatureGate/cluster are watched through
// informers: a change to the ClusterVersion's spec, or to the feature set or gates, starts a
// pass at once, and waiting reads the caches rather than the API.
// Metrics (metrics.ts) are computed from the same caches, and so are the cluster-configuration
// metrics OpenShift's kube-apiserver operator exports (cluster-config-metrics.ts: Infrastructure,
// FeatureGate and Proxy "cluster"), which bosun, without that operator, serves from the CVO.
//
// This file is the shell: informers, controllers, reading and writing the ClusterVersion. The
// steps live beside it — loading (load.ts), one pass of the graph (sync.ts), the status each
// step leads to (status.ts, pure), available updates (available-updates.ts) — and every time
// rule reads the injected clock (options.clock), so tests move time instead of waiting.
import type { KubeConfigLike } from '../kube/kubeconfig.js';
import { setMaxListeners } from 'node:events';
import { logger } from '../common/log.js';
import { resolveDesiredUpdate } from './updates/resolve.js';
import { knownCapabilities } from './payload/capabilities.js';
import { loadRelease, type Loaded } from './load.js';
import { enabledFeatureGates } from './payload/feature-gates.js';
import { passCapabilities, passMode, syncPayload } from './sync.js';
import type { GraphMode } from './task-graph.js';
import { UpdatePoller } from './available-updates.js';
import {
  acceptedStatus, defaultTimers, progressingStatus, progressMessage, refusedStatus, syncStatus, upgradeableStatus, type VersionStatus,
} from './status.js';
import { Manager, type Listen, type LeaderElectionSettings } from '../kube/manager.js';
import { isConflict, KubeClient } from '../kube/client.js';
import { resources } from '../kube/resources.js';
import { InformerFactory, type Informer } from '../kube/informer.js';
import { Controller } from '../kube/controller.js';
import { realClock, type Clock, type ClockTimer } from '../kube/clock.js';
import { createCvoMetrics, type CvoMetrics, type CurrentRelease, type RiskCondition } from './metrics.js';
import { clusterPromQLCache, type PromQLSettings } from './promql-target.js';
import { createClusterConfigMetrics } from './cluster-config-metrics.js';

import type * as api from '../api/index.js';
const log = logger('cluster-version-operator');

const NAME = 'version';
const CLUSTER_VERSIONS = resources.clusterVersions;
const CLUSTER_OPERATORS = resources.clusterOperators;
const FEATURE_GATES = resources.featureGates;
const CONFIG_MAPS = resources.configMaps;
/** Where the installer's ConfigMaps (openshift-install, openshift-install-manifests) live. */
const CONFIG_NAMESPACE = 'openshift-config';

export interface CvoOptions {
  kubeconfig: KubeConfigLike;
  releaseStore: string;
  /** How often a completed release is applied again (OpenShift: every few minutes). */
  reconcileIntervalMs?: number;
  /** How long one attempt waits on a CRD, Job or ClusterOperator. */
  waitTimeoutMs?: number;
  signal: AbortSignal;
  /** Where PromQL risks are evaluated, and with which CA and token (promql-target.ts; default thanos-querier). */
  promql?: PromQLSettings;
  /** How often the update service is asked for updates (default 5 minutes). */
  upstreamPollMs?: number;
  /** Called with each progress message while a release is being applied (for a CLI to show). */
  onProgress?: (message: string) => void;
  /** How long a Degraded ClusterOperator is tolerated during an update before Failing (default 40 minutes). */
  degradedToleranceMs?: number;
  /** How long waiting on a ClusterOperator during an update is normal (default 30 minutes; machine-config 3×). */
  slowOperatorMs?: number;
  /** Watch Infrastructure and Proxy "cluster" for the cluster-configuration metrics (addClusterVersionOperator does). */
  clusterConfigMetrics?: boolean;
  /** Metrics to record into (default: a registry of this operator's own; see `metrics`). */
  metrics?: CvoMetrics;
  /** The clock every time rule reads (default: the wall clock). */
  clock?: Clock;
  /** A client and informers to share (a manager's); without them the operator makes and runs its own. */
  client?: KubeClient;
  informers?: InformerFactory;
}

/** The component: its name and the Lease its replicas campaign for. */
export const CLUSTER_VERSION_OPERATOR = { name: 'cluster-version-operator', lease: { namespace: 'openshift-cluster-version', name: 'version' } };

export class ClusterVersionOperator {
  private loaded?: Loaded;
  private failures = 0;
  private readonly client: KubeClient;
  private readonly informers: InformerFactory;
  private readonly cvInformer: Informer<api.ClusterVersion>;
  private readonly coInformer: Informer<api.ClusterOperator>;
  private readonly fgInformer: Informer<api.FeatureGate>;
  private readonly cmInformer: Informer<api.ConfigMap>;
  /** Watched only for the cluster-configuration metrics (options.clusterConfigMetrics). */
  private readonly infraInformer?: Informer<api.Infrastructure>;
  private readonly proxyInformer?: Informer<api.Proxy>;
  private readonly clock: Clock;
  private readonly poller: UpdatePoller;
  /** Whether the last pass was held by ClusterOperators it waits on. */
  private waitingOn = false;
  /** Whether a ClusterOperator changed since the current (or last) pass began. */
  private operatorChangedInPass = false;
  private lastPayload?: { version: string; applied: number; pending: number };
  private requeue?: ClockTimer;
  /** The pass under way: what it works towards (workOf) and how to cancel it. */
  private pass?: { work: PassWork; mode: GraphMode; cancel: AbortController };
  readonly metrics: CvoMetrics;

  constructor(private readonly options: CvoOptions) {
    this.client = options.client ?? new KubeClient(options.kubeconfig, { component: 'cluster-version-operator' });
    this.clock = options.clock ?? realClock;
    // The informers, both controllers and each pass (apply()) listen to this signal: more than
    // Node's default of 10 listeners is expected.
    setMaxListeners(0, options.signal);
    this.informers = options.informers ?? new InformerFactory(this.client);
    this.cvInformer = this.informers.forResource(CLUSTER_VERSIONS, { fieldSelector: `metadata.name=${NAME}` });
    this.coInformer = this.informers.forResource(CLUSTER_OPERATORS);
    this.fgInformer = this.informers.forResource(FEATURE_GATES, { fieldSelector: 'metadata.name=cluster' });
    this.cmInformer = this.informers.forResource(CONFIG_MAPS, { namespace: CONFIG_NAMESPACE });
    if (options.clusterConfigMetrics) {
      this.infraInformer = this.informers.forResource(resources.infrastructures, { fieldSelector: 'metadata.name=cluster' });
      this.proxyInformer = this.informers.forResource(resources.proxies, { fieldSelector: 'metadata.name=cluster' });
    }
    const promql = clusterPromQLCache(options.promql ?? {}, this.client, options.kubeconfig, this.clock);
    this.poller = new UpdatePoller({ clock: this.clock, intervalMs: options.upstreamPollMs, promql: promql && ((rule) => promql.match(rule)) });
    this.metrics = options.metrics ?? createCvoMetrics(this);
  }

  /** What the metrics are computed from (the informer caches). */
  clusterVersion(): api.ClusterVersion | undefined {
    return this.cvInformer.get(NAME);
  }

  clusterOperators(): api.ClusterOperator[] {
    return this.coInformer.list();
  }

  lastPayloadApplied(): { version: string; applied: number; pending: number } | undefined {
    return this.lastPayload;
  }

  currentRelease(): CurrentRelease | undefined {
    return this.loaded ? { version: this.loaded.payload.version, image: this.loaded.image } : undefined;
  }

  configMap(name: string): api.ConfigMap | undefined {
    return this.cmInformer.get(name, CONFIG_NAMESPACE);
  }

  lastUpdateRetrieval(): number | undefined {
    return this.poller.lastRetrieval();
  }

  riskConditions(): RiskCondition[] {
    return this.poller.riskConditions();
  }

  /** The cluster configuration the config metrics (cluster-config-metrics.ts) report. */
  infrastructure(): api.Infrastructure | undefined {
    return this.infraInformer?.get('cluster');
  }

  featureGate(): api.FeatureGate | undefined {
    return this.fgInformer.get('cluster');
  }

  proxy(): api.Proxy | undefined {
    return this.proxyInformer?.get('cluster');
  }

  private now(): number {
    return this.clock.now();
  }

  /** The ClusterVersion from the informer's cache, or from the API before the cache is synced. */
  private async cachedClusterVersion(): Promise<api.ClusterVersion | undefined> {
    return this.cvInformer.hasSynced() ? this.cvInformer.get(NAME) : this.client.read(CLUSTER_VERSIONS, NAME);
  }

  /** Read-modify-write of the status, retried on conflicts. */
  private async updateStatus(change: (status: VersionStatus, cv: api.ClusterVersion) => VersionStatus): Promise<api.ClusterVersion | undefined> {
    // availableUpdates is required (and nullable) in OpenShift's schema.
    const current = (cv: api.ClusterVersion): VersionStatus => ({ availableUpdates: null, ...structuredClone(cv.status ?? {}) });
    // Nothing to write when the cached object already says it (the common case while waiting).
    const cached = this.cvInformer.hasSynced() ? this.cvInformer.get(NAME) : undefined;
    if (cached && JSON.stringify(change(current(cached), cached)) === JSON.stringify(cached.status ?? {})) return cached;
    for (let attempt = 0; attempt < 5; attempt++) {
      const cv = await this.client.read(CLUSTER_VERSIONS, NAME);
      if (!cv) return undefined;
      const status = change(current(cv), cv);
      if (JSON.stringify(status) === JSON.stringify(cv.status ?? {})) return cv;
      try {
        return await this.client.update(CLUSTER_VERSIONS, { ...cv, status: status as api.ClusterVersionStatus }, 'status');
      } catch (e) {
        if (!isConflict(e)) throw e;
      }
    }
    return undefined;
  }

  /**
   * Runs until the signal aborts, as two controllers of the toolkit on the key "version": the
   * payload controller (load, apply, report; enqueued again after the wait the pass asks for,
   * timed on the clock, and at once when the ClusterVersion's spec changes) and the status
   * controller (Upgradeable from the ClusterOperators, available updates from the update
   * service), so that asking the update service and aggregating operators go on while a long
   * update waits on an operator.
   */
  async run(): Promise<void> {
    const { signal } = this.options;
    log.info({ releaseStore: this.options.releaseStore }, 'cluster-version operator started');
    // Only spec changes (a new generation) are news to the payload controller: its own status
    // writes must not wake it.
    const specChanged = (object: api.ClusterVersion, type: string, old?: api.ClusterVersion) =>
      object.metadata?.name === NAME && (type !== 'update' || object.metadata?.generation !== old?.metadata?.generation) ? NAME : undefined;
    // The payload controller's: new work also cancels the pass under way.
    const newWork = (object: api.ClusterVersion, type: string, old?: api.ClusterVersion) => {
      const key = specChanged(object, type, old);
      if (key && this.pass) {
        const changed = changedWork(this.pass.work, workOf(object));
        // As OpenShift's CVO, a change of release while Initializing waits for the install's pass.
        if (changed.length && !(this.pass.mode === 'Initializing' && changed.every((c) => c === 'release'))) this.cancelPass(changed);
      }
      return key;
    };
    const queue = { baseDelayMs: 1000, maxDelayMs: 30_000 };
    const payload = new Controller({
      name: 'cluster-version-operator',
      queue,
      sync: async () => {
        this.operatorChangedInPass = false;
        // Whatever started this pass, the one scheduled by the last pass is now this one.
        if (this.requeue) this.clock.clearTimeout(this.requeue);
        this.requeue = undefined;
        const delay = await this.syncOnce();
        // A pass that ends waiting on operators may have read one before a change that came while
        // it ran, and that change was not news then (the pass was not yet waiting): no later event
        // would start the next pass, which would wait out its delay instead — look again now.
        if (this.waitingOn && this.operatorChangedInPass) payload.enqueue(NAME);
        else this.schedule(() => payload.enqueue(NAME), delay);
        return {};
      },
    })
      .watch(this.cvInformer, newWork)
      // While a pass waits on operators, their changes are news too.
      .watch(this.coInformer, () => {
        this.operatorChangedInPass = true;
        return this.waitingOn ? NAME : undefined;
      })
      // A change of the feature set or of the gates enabled at the loaded version changes what
      // the payload includes (OpenShift's CVO refreshes the payload then too).
      .watch(this.fgInformer, (object, type, old) => {
        const gates = this.gatesKey(type === 'delete' ? undefined : object);
        if (this.pass && this.pass.work.featureGates !== gates) this.cancelPass(['featureGates']);
        return type === 'update' && this.gatesKey(old) === gates ? undefined : NAME;
      });
    const status = new Controller({
      name: 'cluster-version-status',
      queue,
      sync: async () => {
        const cv = this.cvInformer.get(NAME);
        // Only once the payload controller has written a status (the schema requires desired,
        // observedGeneration and versionHash with any).
        if (cv?.status?.desired) {
          const operators = this.coInformer.hasSynced() ? this.coInformer.list() : (await this.client.list(CLUSTER_OPERATORS)).items;
          await this.updateStatus((st) => upgradeableStatus(st, operators, this.now()));
          const change = await this.poller.poll(cv);
          if (change) await this.updateStatus(change);
        }
        return { requeueAfterMs: 1000 };
      },
    })
      .watch(this.cvInformer, specChanged)
      .watch(this.coInformer, () => NAME);
    payload.enqueue(NAME);
    status.enqueue(NAME);
    // Shared informers are the manager's to run; our own are ours.
    const ownInformers = !this.options.informers;
    if (ownInformers) this.informers.start(signal);
    signal.addEventListener('abort', () => this.requeue && this.clock.clearTimeout(this.requeue), { once: true });
    await Promise.all([payload.run(signal), status.run(signal)]);
    if (ownInformers) await this.informers.stop();
  }

  /** What payload inclusion reads of FeatureGate/cluster: two with the same key include the same manifests. */
  private gatesKey(fg: api.FeatureGate | undefined): string {
    const version = this.loaded?.payload.version ?? '';
    return JSON.stringify([fg?.spec?.featureSet ?? '', [...enabledFeatureGates(fg, version)].sort()]);
  }

  /** Cancels the pass under way, if any (the controller runs the next one: the same event enqueued it). */
  private cancelPass(changed: string[]): void {
    if (!this.pass || this.pass.cancel.signal.aborted) return;
    log.info({ mode: this.pass.mode, changed }, `cancelling the pass: new work (${changed.join(', ')} changed)`);
    this.pass.cancel.abort();
  }

  /** Runs `fn` after `ms` on the clock, replacing what was scheduled before. */
  private schedule(fn: () => void, ms: number): void {
    if (this.requeue) this.clock.clearTimeout(this.requeue);
    if (this.options.signal.aborted) return;
    this.requeue = this.clock.setTimeout(fn, ms);
  }

  /** One pass of the state machine; returns how long to wait before the next. */
  async syncOnce(): Promise<number> {
    const cv = await this.cachedClusterVersion();
    if (!cv) return 1000;
    const generation = cv.metadata?.generation;
    const desired = cv.spec?.desiredUpdate ?? {};
    const refuse = async (reason: string, message: string) => {
      await this.updateStatus((st, c) => refusedStatus(st, c.metadata.generation, reason, message, this.now()));
      return 5000;
    };
    let image: string | undefined = desired.image;
    if (!image && desired.version) {
      try {
        image = resolveDesiredUpdate(desired, cv.status?.availableUpdates ?? [], cv.status?.conditionalUpdates ?? []).image;
      } catch (e) {
        return refuse('RetrievePayload', `Retrieving payload failed version="${desired.version}" image="" failure=${(e as Error).message}`);
      }
    }
    if (!image) return refuse('NoDesiredUpdate', 'spec.desiredUpdate.image names no release; set it to a release pullspec (bosun.local/release@sha256:…)');
    if (image !== this.loaded?.image) {
      const result = await loadRelease(this.client, this.options.releaseStore, image, desired.version, cv);
      if ('refused' in result) {
        log.warn({ image, reason: result.refused.reason }, result.refused.message);
        return refuse(result.refused.reason, result.refused.message);
      }
      await this.updateStatus((st, c) => acceptedStatus(st, c.metadata.generation ?? generation, result.accepted, this.now()));
      log.info({ version: result.loaded.payload.version, image }, 'payload loaded');
      this.loaded = result.loaded;
    }
    return this.apply(this.loaded!, (await this.cachedClusterVersion()) ?? cv);
  }

  /** Applies the loaded payload once and writes the status the pass leads to; returns the wait before the next. */
  private async apply(loaded: Loaded, cv: api.ClusterVersion): Promise<number> {
    const featureGate = this.fgInformer.hasSynced() ? this.fgInformer.get('cluster') : await this.client.read(FEATURE_GATES, 'cluster');
    const enabled = passCapabilities(cv);
    await this.updateStatus((s) => ({ ...s, capabilities: { enabledCapabilities: [...enabled].sort(), knownCapabilities: [...knownCapabilities].sort() } }));
    const version = loaded.payload.version;
    const mode = passMode(cv.status?.history ?? [], loaded.image);
    const reconciling = mode === 'Reconciling';
    // The pass's signal: aborted when the operator stops, or when new work cancels the pass. Every
    // worker of an Initializing pass may be pausing on it at once (apply.ts's retries, health waits).
    const cancel = new AbortController();
    const signal = cancel.signal;
    setMaxListeners(0, signal);
    const stopping = () => cancel.abort();
    this.options.signal.addEventListener('abort', stopping, { once: true });
    this.pass = { work: { ...workOf(cv), featureGates: this.gatesKey(featureGate) }, mode, cancel };
    let lastReport: number | undefined;
    let lastWaiting = '';
    // Progress is written without holding up the pass, one write after the other; the pass's own
    // status is written after the last of them, so that a late progress write (one that met a
    // conflict and tried again) cannot put Progressing back once the pass has completed.
    let progressWrites: Promise<unknown> = Promise.resolve();
    const result = await syncPayload(loaded, cv, featureGate, {
      client: this.client,
      clock: this.clock,
      metrics: this.metrics,
      attempt: this.failures,
      waitTimeoutMs: this.options.waitTimeoutMs ?? 60_000,
      signal,
      onProgress: (done, total, waitingOn) => {
        // Progress is shown while working towards a release (not while reconciling one), at
        // most once a second, and at once when the pass is about to wait on an operator.
        if (reconciling) return;
        const now = this.now();
        if (lastReport !== undefined && now - lastReport < 1000 && !(waitingOn && waitingOn !== lastWaiting)) return;
        lastReport = now;
        lastWaiting = waitingOn;
        const message = progressMessage(version, done, total, waitingOn ? [waitingOn] : []);
        this.options.onProgress?.(message);
        progressWrites = progressWrites.then(() => this.updateStatus((s) => progressingStatus(s, message, this.now()))).catch(() => undefined);
      },
    }).finally(() => {
      this.pass = undefined;
      this.options.signal.removeEventListener('abort', stopping);
    });
    await progressWrites;
    this.lastPayload = { version, applied: result.done, pending: result.total - result.done };
    if (result.errors.length && !signal.aborted) this.metrics.payloadErrors.inc({ version }, result.errors.length);
    // A pass cut short because this operator is stopping (its pod replaced by the payload's new
    // Deployment, its Lease lost) failed at nothing: the next leader goes on from where the
    // cluster is. Writing "incomplete task nodes" as Failing would show a healthy update as failed.
    if (this.options.signal.aborted) {
      log.info({ version, applied: result.done, total: result.total }, 'pass interrupted: the operator is stopping');
      return 0;
    }
    // Cancelled for new work: what it did stays, what it left is the next pass's, which starts now.
    if (signal.aborted) {
      log.info({ version, mode, applied: result.done, total: result.total }, 'pass cancelled: the next pass starts on the new work');
      return 0;
    }
    const timers = { slowOperatorMs: this.options.slowOperatorMs ?? defaultTimers.slowOperatorMs, degradedToleranceMs: this.options.degradedToleranceMs ?? defaultTimers.degradedToleranceMs };
    const now = this.now();
    // Computed on the status as it is when written (the status controller writes too).
    let outcome = syncStatus({ availableUpdates: null, ...structuredClone(((await this.cachedClusterVersion()) ?? cv).status ?? {}) }, result, now, timers);
    await this.updateStatus((s) => (outcome = syncStatus(s, result, now, timers)).status);
    // Held by ClusterOperators (waiting or failing on them): their changes start the next pass.
    this.waitingOn = result.errors.some((e) => e.operator !== undefined);
    switch (outcome.verdict) {
      case 'completed':
        this.failures = 0;
        if (result.mode !== 'Reconciling') {
          this.options.onProgress?.(progressMessage(version, result.done, result.total));
          log.info({ version, mode: result.mode }, 'payload applied');
        }
        return this.options.reconcileIntervalMs ?? 180_000;
      case 'waiting':
        this.failures++;
        this.options.onProgress?.(outcome.progress!);
        log.info({ version, waitingOn: outcome.waitingOn }, 'waiting on cluster operators');
        return 5000;
      case 'failing':
        this.failures++;
        log.warn({ version, mode: result.mode, reason: result.errors[0].reason, errors: result.errors.length }, result.errors[0].message);
        return Math.min(1000 * 2 ** Math.min(this.failures, 5), 30_000);
    }
  }
}

/** What a pass works towards, as OpenShift's sync worker compares it (equalSyncWork): the release, the overrides, the capabilities, the feature gates. */
interface PassWork {
  release: string;
  overrides: string;
  capabilities: string;
  featureGates: string;
}

/** The work the ClusterVersion asks for (the feature gates are FeatureGate/cluster's). */
function workOf(cv: api.ClusterVersion): Omit<PassWork, 'featureGates'> {
  const desired = cv.spec?.desiredUpdate;
  return {
    release: JSON.stringify([desired?.image ?? '', desired?.version ?? '']),
    overrides: JSON.stringify(cv.spec?.overrides ?? []),
    capabilities: JSON.stringify(cv.spec?.capabilities ?? {}),
  };
}

/** Which of the parts `next` names differ from the pass's. */
function changedWork(current: PassWork, next: Partial<PassWork>): (keyof PassWork)[] {
  return (Object.keys(next) as (keyof PassWork)[]).filter((k) => current[k] !== next[k]);
}

export type CvoSettings = Omit<CvoOptions, 'kubeconfig' | 'signal' | 'client' | 'informers'>;

/**
 * Adds the CVO to a manager: a fresh operator for every leadership term, on the manager's client
 * and informers, with one set of metrics for the process (fed by the operator of the current
 * term; empty while not leading).
 */
export function addClusterVersionOperator(manager: Manager, settings: CvoSettings): CvoMetrics {
  let current: ClusterVersionOperator | undefined;
  const metrics =
    settings.metrics ??
    createCvoMetrics({
      clusterVersion: () => current?.clusterVersion(),
      clusterOperators: () => current?.clusterOperators() ?? [],
      lastPayloadApplied: () => current?.lastPayloadApplied(),
      currentRelease: () => current?.currentRelease(),
      configMap: (name) => current?.configMap(name),
      lastUpdateRetrieval: () => current?.lastUpdateRetrieval(),
      riskConditions: () => current?.riskConditions() ?? [],
    });
  manager.addMetrics(metrics.registry);
  // OpenShift's kube-apiserver operator exports these; bosun has none, so the CVO process does.
  manager.addMetrics(createClusterConfigMetrics({ infrastructure: () => current?.infrastructure(), featureGate: () => current?.featureGate(), proxy: () => current?.proxy() }));
  manager.add({
    name: CLUSTER_VERSION_OPERATOR.name,
    start: async (signal) => {
      current = new ClusterVersionOperator({ ...settings, metrics, clusterConfigMetrics: true, kubeconfig: manager.kubeconfig, client: manager.client, informers: manager.informers, signal });
      try {
        await current.run();
      } finally {
        current = undefined;
      }
    },
  });
  return metrics;
}

/**
 * Runs the CVO on a manager of its own until the signal aborts, holding the Lease
 * openshift-cluster-version/version (timings and identity from `leaderElection`), serving
 * metrics on `metricsListen` when given. For callers that run the CVO in-process (bring-up).
 */
export async function runClusterVersionOperator(options: CvoOptions & { leaderElection?: Partial<LeaderElectionSettings>; metricsListen?: Listen }): Promise<void> {
  const { kubeconfig, signal, leaderElection, metricsListen, ...settings } = options;
  const manager = new Manager({ name: CLUSTER_VERSION_OPERATOR.name, kubeconfig, metricsListen, leaderElection: { ...CLUSTER_VERSION_OPERATOR.lease, ...leaderElection } });
  addClusterVersionOperator(manager, settings);
  await manager.start(signal);
}
