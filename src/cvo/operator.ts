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
//
// Beside the loop, the CVO asks the update service (spec.upstream + spec.channel) for the
// releases the cluster may move to (status.availableUpdates, conditionalUpdates,
// desired.channels, RetrievedUpdates), resolves a version-only desiredUpdate against them, and
// runs the upgrade preconditions before it starts an update (ReleaseAccepted=False reason
// PreconditionChecks when they block; force records them in history[].acceptedRisks).
//
// Before loading, a release is verified (verify.ts): its content against its digest, and its
// digest against signatures from the keys of the verification ConfigMap; failures refuse it
// (ReleaseAccepted=False, RetrievePayload, "The update cannot be verified: …") unless forced.
//
// Leader election (runClusterVersionOperator) keeps two CVOs from applying at once.
//
// Waiting on ClusterOperators during an update is progress, not failure: an operator not yet
// Available or not yet at the new version is named in Progressing ("…, waiting on X") with
// Failing=False; after slowOperatorMs (30 minutes; 90 for machine-config, which reboots nodes)
// Failing=Unknown, reason SlowClusterOperator; a Degraded operator is tolerated for
// degradedToleranceMs (40 minutes) from the start of the update before Failing=True.
//
// The ClusterVersion and the ClusterOperators are watched through informers: a change to the
// ClusterVersion's spec starts a pass at once, and waiting reads the caches rather than the API.
// Metrics (metrics.ts) are computed from the same caches.
import { createHash } from 'node:crypto';
import * as k8s from '@kubernetes/client-node';
import { logger } from '../common/log.js';
import { loadPayload } from './payload/payload.js';
import type { Payload } from './payload/payload.js';
import { resolvePullspec } from './payload/release-store.js';
import { filterManifests } from './payload/inclusion.js';
import { enabledCapabilities, knownCapabilities } from './payload/capabilities.js';
import { enabledFeatureGates, majorVersionOf } from './payload/feature-gates.js';
import { buildTaskGraph, workersFor, type GraphMode } from './task-graph.js';
import { runTaskGraph } from './task-graph-runner.js';
import { applyManifest, UpdateError } from './apply.js';
import { describeManifest } from './payload/manifest.js';
import { fetchUpdateGraph, RetrievalError } from './updates/upstream.js';
import { walkGraph, GraphWalkError, type Release } from './updates/graph-walk.js';
import { evaluateConditionalUpdate } from './updates/risks.js';
import { prometheusEvaluator } from './updates/prometheus.js';
import { resolveDesiredUpdate, ResolveError } from './updates/resolve.js';
import { checkPreconditions } from './updates/preconditions.js';
import { digestProblem, loadVerifier, verifyRelease } from './verify.js';
import { LeaderElector } from '../kube/leader-election.js';
import { KubeClient, type ResourceRef } from '../kube/client.js';
import { InformerFactory, type Informer } from '../kube/informer.js';
import { Controller } from '../kube/controller.js';
import { rfc3339, setCondition as setKubeCondition, type Condition } from '../kube/conditions.js';
import { createCvoMetrics, type CvoMetrics } from './metrics.js';
import { serveMetrics } from '../kube/metrics.js';

type Obj = Record<string, any>;
const log = logger('cluster-version-operator');

const GROUP = 'config.openshift.io';
const VERSION = 'v1';
const PLURAL = 'clusterversions';
const NAME = 'version';
const CLUSTER_VERSIONS: ResourceRef = { group: GROUP, version: VERSION, resource: PLURAL, namespaced: false };
const CLUSTER_OPERATORS: ResourceRef = { group: GROUP, version: VERSION, resource: 'clusteroperators', namespaced: false };
/** Reasons a ClusterOperator gate gives while it waits on the operator. */
const OPERATOR_WAIT_REASONS = new Set(['ClusterOperatorNotAvailable', 'ClusterOperatorDegraded', 'ClusterOperatorUpdating']);

export interface CvoOptions {
  kubeconfig: k8s.KubeConfig;
  releaseStore: string;
  /** How often a completed release is applied again (OpenShift: every few minutes). */
  reconcileIntervalMs?: number;
  /** How long one attempt waits on a CRD, Job or ClusterOperator. */
  waitTimeoutMs?: number;
  signal: AbortSignal;
  /** A Prometheus-compatible API that PromQL risks are evaluated against (else they are Unknown). */
  metricsUrl?: string;
  /** How often the update service is asked for updates (default 5 minutes). */
  upstreamPollMs?: number;
  /** Called with each progress message while a release is being applied (for a CLI to show). */
  onProgress?: (message: string) => void;
  /** How long a Degraded ClusterOperator is tolerated during an update before Failing (default 40 minutes). */
  degradedToleranceMs?: number;
  /** How long waiting on a ClusterOperator during an update is normal (default 30 minutes; machine-config 3×). */
  slowOperatorMs?: number;
  /** Metrics to record into (default: a registry of this operator's own; see `metrics`). */
  metrics?: CvoMetrics;
}

interface Loaded {
  image: string;
  payload: Payload;
}

const now = (): string => rfc3339();

/** Sets a condition (lastTransitionTime moves only when the status changes) and puts it last. */
export function setCondition(conditions: Obj[], type: string, status: string, reason: string, message: string): Obj[] {
  const [next] = setKubeCondition(conditions.filter((c) => c.type === type) as Condition[], { type, status, reason, message });
  return [...conditions.filter((c) => c.type !== type), next];
}


export class ClusterVersionOperator {
  private readonly custom: k8s.CustomObjectsApi;
  private readonly objects: k8s.KubernetesObjectApi;
  private loaded?: Loaded;
  private failures = 0;
  private lastPoll = 0;
  private pollFailures = 0;
  private lastPollKey = '';
  private readonly client: KubeClient;
  private readonly informers: InformerFactory;
  private readonly cvInformer: Informer;
  private readonly coInformer: Informer;
  /** Whether the last pass was held by a ClusterOperator gate. */
  private waitingOn = false;
  private lastPayload?: { version: string; applied: number; pending: number };
  readonly metrics: CvoMetrics;

  constructor(private readonly options: CvoOptions) {
    this.custom = options.kubeconfig.makeApiClient(k8s.CustomObjectsApi);
    this.objects = k8s.KubernetesObjectApi.makeApiClient(options.kubeconfig);
    this.client = new KubeClient(options.kubeconfig);
    this.informers = new InformerFactory(this.client);
    this.cvInformer = this.informers.forResource(CLUSTER_VERSIONS, { fieldSelector: `metadata.name=${NAME}` });
    this.coInformer = this.informers.forResource(CLUSTER_OPERATORS);
    this.metrics = options.metrics ?? createCvoMetrics(this);
  }

  /** What the metrics are computed from (the informer caches). */
  clusterVersion(): Obj | undefined {
    return this.cvInformer.get(NAME);
  }

  clusterOperators(): Obj[] {
    return this.coInformer.list();
  }

  lastPayloadApplied(): { version: string; applied: number; pending: number } | undefined {
    return this.lastPayload;
  }

  /** The ClusterVersion from the informer's cache, or from the API before the cache is synced. */
  private async cachedClusterVersion(): Promise<Obj | undefined> {
    return this.cvInformer.hasSynced() ? this.cvInformer.get(NAME) : this.readClusterVersion();
  }

  private async readClusterVersion(): Promise<Obj | undefined> {
    try {
      return (await this.custom.getClusterCustomObject({ group: GROUP, version: VERSION, plural: PLURAL, name: NAME })) as Obj;
    } catch (e) {
      if ((e as { code?: number }).code === 404) return undefined;
      throw e;
    }
  }

  /** Read-modify-write of the status, retried on conflicts. */
  private async updateStatus(change: (status: Obj, cv: Obj) => Obj): Promise<Obj | undefined> {
    // Nothing to write when the cached object already says it (the common case while waiting).
    const cached = this.cvInformer.hasSynced() ? this.cvInformer.get(NAME) : undefined;
    if (cached && JSON.stringify(change({ availableUpdates: null, ...structuredClone(cached.status ?? {}) }, cached)) === JSON.stringify(cached.status ?? {})) return cached;
    for (let attempt = 0; attempt < 5; attempt++) {
      const cv = await this.readClusterVersion();
      if (!cv) return undefined;
      // availableUpdates is required (and nullable) in OpenShift's schema.
      const status = change({ availableUpdates: null, ...structuredClone(cv.status ?? {}) }, cv);
      if (JSON.stringify(status) === JSON.stringify(cv.status ?? {})) return cv;
      try {
        return (await this.custom.replaceClusterCustomObjectStatus({ group: GROUP, version: VERSION, plural: PLURAL, name: NAME, body: { ...cv, status } })) as Obj;
      } catch (e) {
        if ((e as { code?: number }).code !== 409) throw e;
      }
    }
    return undefined;
  }

  /**
   * Runs until the signal aborts, as two controllers of the toolkit on the key "version": the
   * payload controller (load, apply, report; requeued after the wait the pass asks for, and at
   * once when the ClusterVersion's spec changes) and the status controller (Upgradeable from the
   * ClusterOperators, available updates from the update service), so that asking the update
   * service and aggregating operators go on while a long update waits on an operator.
   */
  async run(): Promise<void> {
    const { signal } = this.options;
    log.info({ releaseStore: this.options.releaseStore }, 'cluster-version operator started');
    // Only spec changes (a new generation) are news to the payload controller: its own status
    // writes must not wake it.
    const specChanged = (object: Obj, type: string, old?: Obj) =>
      object.metadata?.name === NAME && (type !== 'update' || object.metadata?.generation !== old?.metadata?.generation) ? NAME : undefined;
    const queue = { baseDelayMs: 1000, maxDelayMs: 30_000 };
    const payload = new Controller({
      name: 'cluster-version-operator',
      queue,
      sync: async () => ({ requeueAfterMs: await this.syncOnce() }),
    })
      .watch(this.cvInformer, specChanged)
      // While a pass waits on operators, their changes are news too.
      .watch(this.coInformer, () => (this.waitingOn ? NAME : undefined));
    const status = new Controller({
      name: 'cluster-version-status',
      queue,
      sync: async () => {
        const cv = this.cvInformer.get(NAME);
        // Only once the payload controller has written a status (the schema requires desired,
        // observedGeneration and versionHash with any).
        if (cv?.status?.desired) {
          await this.aggregateUpgradeable();
          await this.pollUpdates(cv);
        }
        return { requeueAfterMs: 1000 };
      },
    })
      .watch(this.cvInformer, specChanged)
      .watch(this.coInformer, () => NAME);
    payload.enqueue(NAME);
    status.enqueue(NAME);
    this.informers.start(signal);
    await Promise.all([payload.run(signal), status.run(signal)]);
    await this.informers.stop();
  }

  /** One pass of the state machine; returns how long to wait before the next. */
  async syncOnce(): Promise<number> {
    const cv = await this.cachedClusterVersion();
    if (!cv) return 1000;
    const desired = cv.spec?.desiredUpdate ?? {};
    let image: string | undefined = desired.image;
    if (!image && desired.version) {
      try {
        image = resolveDesiredUpdate(desired, cv.status?.availableUpdates ?? [], cv.status?.conditionalUpdates ?? []).image;
      } catch (e) {
        const message = e instanceof ResolveError ? e.message : (e as Error).message;
        await this.updateStatus((st, c) => ({ ...st, observedGeneration: c.metadata.generation, conditions: setCondition(st.conditions ?? [], 'ReleaseAccepted', 'False', 'RetrievePayload', `Retrieving payload failed version="${desired.version}" image="" failure=${message}`) }));
        return 5000;
      }
    }
    if (!image) {
      await this.updateStatus((s, c) => ({ ...s, observedGeneration: c.metadata.generation, conditions: setCondition(s.conditions ?? [], 'ReleaseAccepted', 'False', 'NoDesiredUpdate', 'spec.desiredUpdate.image names no release; set it to a release pullspec (bosun.local/release@sha256:…)') }));
      return 5000;
    }
    if (image !== this.loaded?.image) {
      const loaded = await this.load(image, desired.version, cv);
      if (!loaded) return 5000;
      this.loaded = loaded;
    }
    return this.apply(this.loaded!, cv);
  }

  /** Upgradeable=False on the ClusterVersion, with every operator's reason, when any operator says so. */
  private async aggregateUpgradeable(): Promise<void> {
    const items: Obj[] = this.coInformer.hasSynced() ? this.coInformer.list() : ((await this.custom.listClusterCustomObject({ group: GROUP, version: VERSION, plural: 'clusteroperators' })) as { items: Obj[] }).items;
    const blocking = items
      .map((co) => ({ name: co.metadata.name as string, c: (co.status?.conditions ?? []).find((x: Obj) => x.type === 'Upgradeable') as Obj | undefined }))
      .filter((x) => x.c?.status === 'False');
    await this.updateStatus((st) => {
      if (blocking.length === 0) return { ...st, conditions: (st.conditions ?? []).filter((c: Obj) => c.type !== 'Upgradeable') };
      const reason = blocking.length === 1 ? (blocking[0].c!.reason ?? 'OperatorNotUpgradeable') : 'ClusterOperatorsNotUpgradeable';
      const message =
        blocking.length === 1
          ? `Cluster operator ${blocking[0].name} should not be upgraded between minor versions: ${blocking[0].c!.message ?? blocking[0].c!.reason ?? ''}`
          : `Multiple cluster operators should not be upgraded between minor versions:\n${blocking.map((b) => `* Cluster operator ${b.name}: ${b.c!.reason ?? ''}: ${b.c!.message ?? ''}`).join('\n')}`;
      return { ...st, conditions: setCondition(st.conditions ?? [], 'Upgradeable', 'False', reason, message) };
    });
  }

  /** Asks the update service what this cluster may move to; keeps the last answer on failure. */
  private async pollUpdates(cv: Obj): Promise<void> {
    const upstream: string | undefined = cv.spec?.upstream;
    const channel: string = cv.spec?.channel ?? '';
    const current = (cv.status?.history ?? []).find((h: Obj) => h.state === 'Completed');
    const key = `${upstream}|${channel}|${current?.image}`;
    // After failures the upstream is retried sooner than the regular interval, backing off
    // exponentially (5 s, 10 s, 20 s, …) up to it, so a flapping service is neither hammered nor
    // left unasked for long.
    const interval = this.options.upstreamPollMs ?? 300_000;
    const due = this.pollFailures === 0 ? interval : Math.min(interval, Math.min(5_000, interval) * 2 ** (this.pollFailures - 1));
    if (key === this.lastPollKey && Date.now() - this.lastPoll < due) return;
    this.lastPoll = Date.now();
    this.lastPollKey = key;
    const fail = (reason: string, message: string) => {
      this.pollFailures++;
      return this.updateStatus((st) => ({ ...st, conditions: setCondition(st.conditions ?? [], 'RetrievedUpdates', 'False', reason, message) }));
    };
    if (!upstream) return void (await fail('NoUpstream', 'No upstream server has been set to retrieve updates.'));
    if (!current) return void (await fail('NoCurrentVersion', 'The cluster version does not have a semantic version assigned and cannot calculate valid upgrades.'));
    try {
      const graph = await fetchUpdateGraph({ upstream, channel, version: current.version, id: cv.spec?.clusterID });
      const choices = walkGraph(graph, current.version, current.image);
      const conditionalUpdates: Obj[] = [];
      for (const update of choices.conditionalUpdates) {
        const recommended = await evaluateConditionalUpdate(update, this.options.metricsUrl ? prometheusEvaluator(this.options.metricsUrl) : undefined);
        conditionalUpdates.push({ release: update.release, risks: update.risks, conditions: [{ ...recommended, lastTransitionTime: now() }] });
      }
      const available: Release[] = choices.availableUpdates;
      await this.updateStatus((st) => ({
        ...st,
        availableUpdates: available.length ? available : null,
        conditionalUpdates: conditionalUpdates.length ? conditionalUpdates : undefined,
        desired: { ...(st.desired ?? { version: current.version, image: current.image }), channels: choices.channels.length ? choices.channels : undefined },
        conditions: setCondition(st.conditions ?? [], 'RetrievedUpdates', 'True', 'AsExpected', ''),
      }));
      this.pollFailures = 0;
    } catch (e) {
      if (e instanceof RetrievalError || e instanceof GraphWalkError) return void (await fail(e.reason, e.message));
      return void (await fail('RemoteFailed', (e as Error).message));
    }
  }

  private async load(image: string, wantVersion: string | undefined, cv: Obj): Promise<Loaded | undefined> {
    const refuse = async (reason: string, message: string) => {
      log.warn({ image, reason }, message);
      await this.updateStatus((s, c) => ({ ...s, observedGeneration: c.metadata.generation, conditions: setCondition(s.conditions ?? [], 'ReleaseAccepted', 'False', reason, message) }));
      return undefined;
    };
    let dir: string;
    try {
      dir = resolvePullspec(this.options.releaseStore, image);
    } catch (e) {
      return refuse('RetrievePayload', `Retrieving payload failed version="${wantVersion ?? ''}" image="${image}" failure=${(e as Error).message}`);
    }
    const force = cv.spec?.desiredUpdate?.force === true;
    const risks: string[] = [];
    let verified = false;
    const unverified = (why: string) => `The update cannot be verified: ${why}`;
    const tampered = digestProblem(dir, image);
    if (tampered) {
      if (!force) return refuse('RetrievePayload', `Retrieving payload failed version="${wantVersion ?? ''}" image="${image}" failure=${unverified(tampered)}`);
      risks.push(`${unverified(tampered)}; the image may not be safe to use`);
    }
    const verifier = await loadVerifier(this.options.kubeconfig, cv.spec?.signatureStores);
    if (verifier) {
      const result = await verifyRelease(verifier, image);
      if (result.verified) verified = !tampered;
      else if (!force) return refuse('RetrievePayload', `Retrieving payload failed version="${wantVersion ?? ''}" image="${image}" failure=${unverified(result.reason)}`);
      else risks.push(`${unverified(result.reason)}; the image may not be safe to use`);
    }
    let payload: Payload;
    try {
      payload = loadPayload(dir);
    } catch (e) {
      return refuse('LoadPayload', `Loading payload failed version="${wantVersion ?? ''}" image="${image}" failure=${(e as Error).message}`);
    }
    const unknownKind = await this.firstUnknownKind(payload);
    if (unknownKind) return refuse('LoadPayload', `Loading payload failed version="${wantVersion ?? ''}" image="${image}" failure=${unknownKind}`);
    if (wantVersion && payload.version !== wantVersion) {
      return refuse('VerifyPayloadVersion', `Verifying payload failed version="${wantVersion}" image="${image}" failure=release image version ${payload.version} does not match the expected upstream version ${wantVersion}`);
    }
    // Preconditions, for an update from a completed release to another version.
    const completed: Obj[] = (cv.status?.history ?? []).filter((h: Obj) => h.state === 'Completed');
    const current = completed[0];
    let acceptedRisks: string | undefined;
    if (risks.length) acceptedRisks = risks.join('\n');
    if (current && current.image !== image && current.version !== payload.version) {
      const desired = cv.spec?.desiredUpdate ?? {};
      let target;
      try {
        target = resolveDesiredUpdate({ image }, cv.status?.availableUpdates ?? [], cv.status?.conditionalUpdates ?? []);
      } catch {
        target = { version: payload.version, image, recommended: 'NotInGraph' as const };
      }
      const result = checkPreconditions({
        currentVersion: current.version,
        target: { ...target, version: payload.version },
        previousVersion: completed[1]?.version,
        upgradeable: (cv.status?.conditions ?? []).find((c: Obj) => c.type === 'Upgradeable'),
        force: desired.force === true,
      });
      if (!result.accepted) {
        return refuse('PreconditionChecks', `Preconditions failed for payload loaded version="${payload.version}" image="${image}": ${result.blocking.map((b) => `${b.name}: ${b.message}`).join('; ')}`);
      }
      const accepted = result.acceptedRisks ?? (result.warnings.length ? result.warnings.map((w) => w.message).join('; ') : undefined);
      if (accepted) risks.push(accepted);
    }
    if (risks.length) acceptedRisks = risks.join('\n');
    const message = `Payload loaded version="${payload.version}" image="${image}" architecture="${process.arch === 'x64' ? 'amd64' : process.arch}"${acceptedRisks ? ` (accepted risks: ${acceptedRisks})` : ''}`;
    await this.updateStatus((s, c) => {
      const history: Obj[] = [...(s.history ?? [])];
      if (history[0]?.image !== image) {
        if (history[0]?.state === 'Partial') history[0] = { ...history[0], completionTime: now() };
        history.unshift({ state: 'Partial', startedTime: now(), completionTime: null, version: payload.version, image, verified, ...(acceptedRisks ? { acceptedRisks } : {}) });
      }
      return {
        ...s,
        observedGeneration: c.metadata.generation,
        desired: { version: payload.version, image, ...(s.desired?.channels ? { channels: s.desired.channels } : {}) },
        history: history.slice(0, 100),
        versionHash: createHash('sha256').update(image).digest().subarray(0, 8).toString('base64url'),
        conditions: setCondition(s.conditions ?? [], 'ReleaseAccepted', 'True', 'PayloadLoaded', message),
      };
    });
    log.info({ version: payload.version, image }, 'payload loaded');
    return { image, payload };
  }

  private async apply(loaded: Loaded, cv: Obj): Promise<number> {
    const history: Obj[] = cv.status?.history ?? [];
    const everCompleted = history.some((h) => h.state === 'Completed');
    const thisCompleted = history[0]?.image === loaded.image && history[0]?.state === 'Completed';
    const mode: GraphMode = !everCompleted ? 'Initializing' : thisCompleted ? 'Reconciling' : 'Updating';
    // Capabilities: the spec's baseline and additional ones, plus every one enabled before (a
    // capability once enabled stays enabled, as in OpenShift); the feature set from
    // FeatureGate/cluster.
    const enabled = enabledCapabilities(cv.spec?.capabilities);
    for (const c of (cv.status?.capabilities?.enabledCapabilities ?? []) as string[]) enabled.add(c);
    const featureGate = await this.client.read({ group: GROUP, version: VERSION, resource: 'featuregates', namespaced: false }, 'cluster').catch(() => undefined);
    const featureSet: string = featureGate?.spec?.featureSet ?? '';
    const { included } = filterManifests(loaded.payload.manifests, {
      overrides: cv.spec?.overrides,
      enabledCapabilities: enabled,
      knownCapabilities: new Set(knownCapabilities),
      featureSet,
      enabledFeatureGates: enabledFeatureGates(featureGate, loaded.payload.version),
      majorVersion: majorVersionOf(loaded.payload.version),
    });
    await this.updateStatus((s) => ({ ...s, capabilities: { enabledCapabilities: [...enabled].sort(), knownCapabilities: [...knownCapabilities].sort() } }));
    const graph = buildTaskGraph(included, mode, { attempt: this.failures });
    const total = included.length;
    let done = 0;
    let lastReport = 0;
    let waitingOn = '';
    const version = loaded.payload.version;
    const report = async (force = false) => {
      if (mode === 'Reconciling' || (!force && Date.now() - lastReport < 1000)) return;
      lastReport = Date.now();
      const pct = total === 0 ? 100 : Math.floor((done / total) * 100);
      const message = `Working towards ${version}: ${done} of ${total} done (${pct}% complete)${waitingOn ? `, waiting on ${waitingOn}` : ''}`;
      this.options.onProgress?.(message);
      await this.updateStatus((s) => ({ ...s, conditions: setCondition(s.conditions ?? [], 'Progressing', 'True', '', message) })).catch(() => undefined);
    };
    await report(true);
    const owner = { apiVersion: cv.apiVersion, kind: cv.kind, name: cv.metadata.name, uid: cv.metadata.uid };
    const ctx = { client: this.objects, owner, awaitVersions: mode !== 'Initializing', waitTimeoutMs: this.options.waitTimeoutMs ?? 60_000, signal: this.options.signal };
    const passStarted = Date.now();
    const result = await runTaskGraph(graph, workersFor(mode, graph), async (tasks) => {
      for (const task of tasks) {
        if (task.manifest.gvk.kind === 'ClusterOperator') {
          // Say at once what the pass is about to wait on (the wait may be long).
          waitingOn = String(task.manifest.object.metadata.name);
          void report(true);
        }
        const started = Date.now();
        await applyManifest(task.manifest, ctx);
        if (waitingOn === task.manifest.object.metadata.name) waitingOn = '';
        this.metrics.manifestDuration.observe({ kind: task.manifest.gvk.kind }, (Date.now() - started) / 1000);
        done++;
        void report();
      }
    }, this.options.signal);
    this.metrics.applyDuration.observe({ mode }, (Date.now() - passStarted) / 1000);
    this.lastPayload = { version, applied: done, pending: total - done };
    this.waitingOn = result.errors.some((e) => e instanceof UpdateError && OPERATOR_WAIT_REASONS.has(e.reason));

    if (result.errors.length === 0) {
      this.failures = 0;
      if (mode !== 'Reconciling') this.options.onProgress?.(`Working towards ${version}: ${done} of ${total} done (100% complete)`);
      await this.updateStatus((s) => {
        const h: Obj[] = [...(s.history ?? [])];
        if (h[0]?.image === loaded.image && h[0].state !== 'Completed') h[0] = { ...h[0], state: 'Completed', completionTime: now() };
        let conditions = setCondition(s.conditions ?? [], 'Available', 'True', '', `Done applying ${version}`);
        conditions = setCondition(conditions, 'Failing', 'False', '', '');
        conditions = setCondition(conditions, 'Progressing', 'False', '', `Cluster version is ${version}`);
        return { ...s, history: h, conditions };
      });
      if (mode !== 'Reconciling') log.info({ version, mode }, 'payload applied');
      return this.options.reconcileIntervalMs ?? 180_000;
    }

    this.failures++;
    if (mode === 'Updating') {
      const waiting = this.waitingOnOperators(result.errors, history[0]);
      if (waiting) {
        const pct = total === 0 ? 100 : Math.floor((done / total) * 100);
        const message = `Working towards ${version}: ${done} of ${total} done (${pct}% complete), waiting on ${waiting.names.join(', ')}`;
        this.options.onProgress?.(message);
        log.info({ version, waitingOn: waiting.names }, 'waiting on cluster operators');
        await this.updateStatus((s) => {
          let conditions = setCondition(s.conditions ?? [], 'Progressing', 'True', '', message);
          conditions = waiting.slow
            ? setCondition(conditions, 'Failing', 'Unknown', 'SlowClusterOperator', waiting.slow)
            : setCondition(conditions, 'Failing', 'False', '', '');
          return { ...s, conditions };
        });
        return 5000;
      }
    }
    const first = result.errors[0];
    const reason = first instanceof UpdateError ? first.reason : 'UpdatePayloadFailed';
    const more = result.errors.length > 1 ? `Multiple errors are preventing progress:\n* ${result.errors.map((e) => e.message).join('\n* ')}` : first.message;
    const incomplete = result.firstIncomplete ? ` (${result.incomplete} incomplete task nodes, beginning with ${describeManifest(result.firstIncomplete.manifest)})` : '';
    log.warn({ version, mode, reason, errors: result.errors.length }, first.message);
    await this.updateStatus((s) => {
      let conditions = setCondition(s.conditions ?? [], 'Failing', 'True', reason, `${more}${incomplete}`);
      if (mode !== 'Reconciling') conditions = setCondition(conditions, 'Progressing', 'True', reason, `Unable to apply ${version}: ${first.message}`);
      if (!(s.history ?? []).some((h: Obj) => h.state === 'Completed')) conditions = setCondition(conditions, 'Available', 'False', '', '');
      return { ...s, conditions };
    });
    return Math.min(1000 * 2 ** Math.min(this.failures, 5), 30_000);
  }

  /**
   * The first manifest whose kind neither the cluster serves nor a CRD of the payload defines
   * (described with its file), so that such a payload is refused before anything is applied.
   */
  private async firstUnknownKind(payload: Payload): Promise<string | undefined> {
    const defined = new Set<string>();
    for (const m of payload.manifests) {
      const crd = m.object as Obj;
      if (m.gvk.kind !== 'CustomResourceDefinition' || !crd.spec?.group || !crd.spec?.names?.kind) continue;
      for (const v of (crd.spec.versions ?? []) as Obj[]) defined.add(`${crd.spec.group}/${v.name}/${crd.spec.names.kind}`);
    }
    const checked = new Map<string, boolean>();
    for (const m of payload.manifests) {
      const apiVersion = m.object.apiVersion as string;
      const key = `${apiVersion}/${m.gvk.kind}`;
      if (defined.has(key)) continue;
      let known = checked.get(key);
      if (known === undefined) {
        try {
          await this.client.resourceFor(apiVersion, m.gvk.kind);
          known = true;
        } catch (e) {
          if ((e as { code?: number }).code !== 404) throw e;
          known = false;
        }
        checked.set(key, known);
      }
      if (!known) return `release-manifests/${m.file} (document ${m.document}): the cluster serves no kind ${m.gvk.kind} in ${apiVersion}, and no CustomResourceDefinition in the payload defines it`;
    }
    return undefined;
  }

  /**
   * When an update's only errors are ClusterOperators it waits on, and waiting is still within
   * what OpenShift tolerates, the operators to name in Progressing (and a SlowClusterOperator
   * message once waiting has gone on longer than expected); undefined when it is a failure.
   */
  private waitingOnOperators(errors: Error[], entry: Obj | undefined): { names: string[]; slow?: string } | undefined {
    const gates = errors.filter((e): e is UpdateError => e instanceof UpdateError && OPERATOR_WAIT_REASONS.has(e.reason));
    if (gates.length === 0 || gates.length !== errors.length) return undefined;
    const started = Date.parse(entry?.startedTime ?? '');
    const elapsed = Number.isFinite(started) ? Date.now() - started : 0;
    if (gates.some((e) => e.reason === 'ClusterOperatorDegraded') && elapsed >= (this.options.degradedToleranceMs ?? 40 * 60_000)) return undefined;
    const names = [...new Set(gates.map((e) => String(e.manifest?.object.metadata?.name ?? 'unknown')))].sort();
    const base = this.options.slowOperatorMs ?? 30 * 60_000;
    const slow = names.filter((name) => elapsed > (name === 'machine-config' ? 3 * base : base));
    const minutes = (ms: number) => (ms >= 60_000 ? `${Math.round(ms / 60_000)} minutes` : `${Math.round(ms / 1000)} seconds`);
    return {
      names,
      slow: slow.length ? `waiting on ${slow.join(', ')} over ${minutes(slow.includes('machine-config') && slow.length === 1 ? 3 * base : base)} which is longer than expected` : undefined,
    };
  }
}

export interface CvoLeaderElection {
  identity?: string;
  leaseDurationMs?: number;
  renewDeadlineMs?: number;
  retryPeriodMs?: number;
}

/**
 * Runs the operator until the signal aborts, only while holding the Lease
 * openshift-cluster-version/version, so that two CVOs (a bootstrap one and the Deployment's,
 * or two replicas) never apply at once.
 */
export async function runClusterVersionOperator(options: CvoOptions & { leaderElection?: CvoLeaderElection; metricsListen?: { host: string; port: number } }): Promise<void> {
  // One set of metrics for the process, fed by whichever operator instance leads (none: empty).
  let current: ClusterVersionOperator | undefined;
  const metrics =
    options.metrics ??
    createCvoMetrics({
      clusterVersion: () => current?.clusterVersion(),
      clusterOperators: () => current?.clusterOperators() ?? [],
      lastPayloadApplied: () => current?.lastPayloadApplied(),
    });
  const server = options.metricsListen ? await serveMetrics(options.metricsListen.port, options.metricsListen.host, [metrics.registry]) : undefined;
  if (server) log.info({ address: `http://${options.metricsListen!.host}:${options.metricsListen!.port}/metrics` }, 'serving metrics');
  const elector = new LeaderElector({
    kubeconfig: options.kubeconfig,
    namespace: 'openshift-cluster-version',
    name: 'version',
    ...options.leaderElection,
    signal: options.signal,
    onStartedLeading: async (leading) => {
      current = new ClusterVersionOperator({ ...options, metrics, signal: leading });
      try {
        await current.run();
      } finally {
        current = undefined;
      }
    },
  });
  try {
    await elector.run();
  } finally {
    server?.close();
  }
}
