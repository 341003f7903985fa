// The cluster-version operator's metrics, named, labelled and computed as OpenShift's CVO
// (pkg/cvo/metrics.go, pkg/payload/task.go, pkg/cvo/sync_worker.go) so that the same alerts,
// dashboards and conditional-update risk rules work:
//   cluster_version{type,version,image,from_version}   Unix time of each milestone: initial
//       (oldest history entry; ClusterVersion creation), cluster (the current release; ClusterVersion
//       creation; from_version the initial version once some update completed), completed (last
//       completed update; from the completed one before), current (the release being reconciled;
//       the release's creation, 0 if unknown), desired (spec.desiredUpdate not yet the current
//       image; the most recent status change), updating (history[0] Partial; its start),
//       failure (Failing=True; its transition)
//   cluster_version_available_updates{upstream,channel} number of available updates
//   cluster_version_capability{name}                     1 enabled, 0 known but not enabled
//   cluster_version_payload{type,version}                manifests applied / pending in the last pass
//   cluster_operator_payload_errors{version}             errors applying the payload, counted up
//   cluster_operator_up{name,version,reason}             1 when Available=True; reason
//       NoAvailableCondition when there is none; name="version" is the CVO itself (the
//       ClusterVersion's Available, version the last completed one)
//   cluster_operator_conditions{name,condition,reason}   1 True, 0 False, Unknown left out; the
//       ClusterVersion's own conditions under name="version"
//   cluster_installer{type,version,invoker}              from ConfigMap openshift-config/
//       openshift-install (type openshift-install), else openshift-install-manifests (other)
//   cluster_version_operator_update_retrieval_timestamp_seconds{name} last successful retrieval
//       of updates (or change of upstream/channel)
//   cluster_version_conditional_update_condition_seconds{version,condition,status,reason} when
//       each conditional update's Recommended condition took its status
//   cluster_version_risk_conditions{condition,risk,reason} whether each risk of the last
//       evaluation applies: 1 True (Match), 0 False (NotMatch), -1 Unknown (EvaluationFailed);
//       condition is Applies (upstream reports it from status.conditionalUpdateRisks, which
//       bosun's ClusterVersion does not have, so it comes from the evaluation itself)
//   cluster_version_operator_apply_duration_seconds{mode} time per pass over the payload
//   cluster_version_operator_manifest_apply_duration_seconds{kind} time per manifest
// The gauges are computed at scrape time from the operator's informer caches (payload errors are
// counted as passes report them).
import { Gauge, Histogram, Registry } from 'prom-client';

import type * as api from '../api/index.js';

/** The release the CVO is reconciling (OpenShift's optr.release), when loaded. */
export interface CurrentRelease {
  version: string;
  image: string;
  /** When the release was created (ms since the epoch), if known. */
  created?: number;
}

export interface CvoMetricsSource {
  clusterVersion(): api.ClusterVersion | undefined;
  clusterOperators(): api.ClusterOperator[];
  lastPayloadApplied(): { version: string; applied: number; pending: number } | undefined;
  /** The loaded release (else the ClusterVersion's status.desired stands for it). */
  currentRelease?(): CurrentRelease | undefined;
  /** A ConfigMap of openshift-config from the cache (openshift-install, openshift-install-manifests). */
  configMap?(name: string): api.ConfigMap | undefined;
  /** When updates were last retrieved successfully, or upstream/channel changed (ms since the epoch). */
  lastUpdateRetrieval?(): number | undefined;
  /** The update service the CVO was started with, overriding spec.upstream. */
  updateService?(): string | undefined;
  /** Whether each conditional-update risk applies, from the last evaluation. */
  riskConditions?(): RiskCondition[];
}

/** One risk's Applies condition: True (reason Match), False (NotMatch) or Unknown (EvaluationFailed). */
export interface RiskCondition {
  risk: string;
  status: 'True' | 'False' | 'Unknown';
  reason: string;
}

const seconds = (time: string | undefined | null): number | undefined => {
  if (!time) return undefined;
  const ms = Date.parse(time);
  return Number.isFinite(ms) ? Math.floor(ms / 1000) : undefined;
};

/** OpenShift's mostRecentTimestamp: the latest of history[0]'s start and completion, the conditions' transitions and the creation. */
function mostRecentTimestamp(cv: api.ClusterVersion): number {
  const times: (string | undefined | null)[] = [cv.metadata?.creationTimestamp];
  const first = cv.status?.history?.[0];
  if (first) times.push(first.startedTime, first.completionTime);
  for (const c of cv.status?.conditions ?? []) times.push(c.lastTransitionTime);
  return Math.max(0, ...times.map((t) => seconds(t) ?? 0));
}

export interface CvoMetrics {
  registry: Registry;
  applyDuration: Histogram<'mode'>;
  manifestDuration: Histogram<'kind'>;
  /** Counted up by the operator for each error a pass reports (OpenShift: each failed apply). */
  payloadErrors: Gauge<'version'>;
}

export function createCvoMetrics(source: CvoMetricsSource): CvoMetrics {
  const registry = new Registry();
  /** The current release and the last completed history entry (OpenShift's current and completed). */
  const releases = (cv: api.ClusterVersion | undefined) => {
    const history: api.UpdateHistory[] = cv?.status?.history ?? [];
    const completedAt = history.findIndex((h) => h.state === 'Completed');
    const completed = completedAt >= 0 ? history[completedAt] : undefined;
    const previous = completedAt >= 0 ? history.slice(completedAt + 1).find((h) => h.state === 'Completed') : undefined;
    const desired = cv?.status?.desired;
    const current: CurrentRelease = source.currentRelease?.() ?? { version: desired?.version ?? '', image: desired?.image ?? '' };
    return { history, completed, previous, current };
  };
  new Gauge({
    name: 'cluster_version',
    help: "Reports the version of the cluster in terms of seconds since the epoch. Type 'current' is the version being applied and the value is the creation date of the payload. The type 'desired' is returned if spec.desiredUpdate is set but the operator has not yet updated and the value is the most recent status transition time. The type 'failure' is set if an error is preventing sync or upgrade with the last transition timestamp of the condition. The type 'completed' is the timestamp when the last image was successfully applied. The type 'cluster' is the creation date of the cluster version object and the current version. The type 'updating' is set when the cluster is transitioning to a new version but has not reached the completed state and is the time the update was started. The type 'initial' is set to the oldest entry in the history. The from_version label will be set to the last completed version for most types, the initial version for 'cluster', empty for 'initial', and the penultimate completed version for 'completed'.",
    labelNames: ['type', 'version', 'image', 'from_version'],
    registers: [registry],
    collect() {
      this.reset();
      const cv = source.clusterVersion();
      const { history, completed, previous, current } = releases(cv);
      const set = (type: string, version: string | undefined, image: string | undefined, from: string | undefined, value: number) =>
        this.set({ type, version: version ?? '', image: image ?? '', from_version: from ?? '' }, value);
      if (cv) {
        const created = seconds(cv.metadata?.creationTimestamp) ?? 0;
        if (completed) set('completed', completed.version, completed.image, previous?.version, seconds(completed.completionTime) ?? 0);
        const initial = history[history.length - 1];
        set('initial', initial?.version, initial?.image, '', created);
        set('cluster', current.version, current.image, completed ? initial?.version : '', created);
        const update = cv.spec?.desiredUpdate;
        const pending = update && update.image !== current.image ? update : undefined;
        if (pending) set('desired', pending.version, pending.image, completed?.version, mostRecentTimestamp(cv));
        const failing = (cv.status?.conditions ?? []).find((c) => c.type === 'Failing');
        if (failing?.status === 'True') {
          const which = pending ?? current;
          set('failure', which.version, which.image, completed?.version, seconds(failing.lastTransitionTime) ?? 0);
        }
        if (history[0]?.state === 'Partial') set('updating', history[0].version, history[0].image, completed?.version, seconds(history[0].startedTime) ?? 0);
      }
      if (cv || source.currentRelease?.()) set('current', current.version, current.image, completed?.version, current.created ? Math.floor(current.created / 1000) : 0);
    },
  });
  new Gauge({
    name: 'cluster_version_available_updates',
    help: 'Report the count of available versions for an upstream and channel.',
    labelNames: ['upstream', 'channel'],
    registers: [registry],
    collect() {
      this.reset();
      const cv = source.clusterVersion();
      if (!cv) return;
      const available = cv.status?.availableUpdates ?? [];
      const retrieved = (cv.status?.conditions ?? []).some((c) => c.type === 'RetrievedUpdates' && c.status === 'True');
      if (!cv.spec?.upstream && !available.length && !retrieved) return;
      const upstream = source.updateService?.() || cv.spec?.upstream || '<default>';
      this.set({ upstream, channel: cv.spec?.channel ?? '' }, available.length);
    },
  });
  new Gauge({
    name: 'cluster_version_capability',
    help: 'Report currently enabled cluster capabilities.  0 is disabled, and 1 is enabled.',
    labelNames: ['name'],
    registers: [registry],
    collect() {
      this.reset();
      const capabilities = source.clusterVersion()?.status?.capabilities;
      const enabled = new Set<string>(capabilities?.enabledCapabilities ?? []);
      for (const name of enabled) this.set({ name }, 1);
      for (const name of capabilities?.knownCapabilities ?? []) if (!enabled.has(name)) this.set({ name }, 0);
    },
  });
  new Gauge({
    name: 'cluster_version_payload',
    help: 'Report the number of entries in the payload.',
    // Label order as bosun has always printed it (Prometheus does not care; OpenShift's client sorts by name).
    labelNames: ['type', 'version'],
    registers: [registry],
    collect() {
      this.reset();
      const last = source.lastPayloadApplied();
      if (!last) return;
      this.set({ type: 'applied', version: last.version }, last.applied);
      this.set({ type: 'pending', version: last.version }, last.pending);
    },
  });
  const payloadErrors = new Gauge({
    name: 'cluster_operator_payload_errors',
    help: 'Report the number of errors encountered applying the payload.',
    labelNames: ['version'],
    registers: [registry],
  });
  new Gauge({
    name: 'cluster_operator_up',
    help: "1 if a cluster operator is Available=True.  0 otherwise, including if a cluster operator sets no Available condition.  The 'version' label tracks the 'operator' version.  The 'reason' label is passed through from the Available condition, unless the cluster operator sets no Available condition, in which case NoAvailableCondition is used.",
    labelNames: ['name', 'version', 'reason'],
    registers: [registry],
    collect() {
      this.reset();
      const cv = source.clusterVersion();
      if (cv) {
        // The CVO itself: its Available condition (True or False; Unknown is left out, as upstream).
        const available = (cv.status?.conditions ?? []).find((c) => c.type === 'Available');
        const version = releases(cv).completed?.version ?? '';
        if (!available) this.set({ name: 'version', version, reason: 'NoAvailableCondition' }, 0);
        else if (available.status === 'True' || available.status === 'False') this.set({ name: 'version', version, reason: available.reason ?? '' }, available.status === 'True' ? 1 : 0);
      }
      for (const co of source.clusterOperators()) {
        const available = (co.status?.conditions ?? []).find((c) => c.type === 'Available');
        const version = (co.status?.versions ?? []).find((v) => v.name === 'operator')?.version ?? '';
        const reason = available ? (available.reason ?? '') : 'NoAvailableCondition';
        this.set({ name: co.metadata?.name ?? '', version, reason }, available?.status === 'True' ? 1 : 0);
      }
    },
  });
  new Gauge({
    name: 'cluster_operator_conditions',
    help: 'Report the conditions for active cluster operators. 0 is False and 1 is True.',
    labelNames: ['name', 'condition', 'reason'],
    registers: [registry],
    collect() {
      this.reset();
      const report = (name: string, conditions: readonly { type: string; status: string; reason?: string }[]) => {
        for (const c of conditions) {
          if (c.status !== 'True' && c.status !== 'False') continue;
          this.set({ name, condition: c.type, reason: c.reason ?? '' }, c.status === 'True' ? 1 : 0);
        }
      };
      const cv = source.clusterVersion();
      if (cv) report('version', cv.status?.conditions ?? []);
      for (const co of source.clusterOperators()) report(co.metadata?.name ?? '', co.status?.conditions ?? []);
    },
  });
  new Gauge({
    name: 'cluster_installer',
    help: "Reports info about the installation process and, if applicable, the install tool. The type is either 'openshift-install', indicating that openshift-install was used to install the cluster, or 'other', indicating that an unknown process installed the cluster. The invoker is 'user' by default, but it may be overridden by a consuming tool. The version reported is that of the openshift-install that was used to generate the manifests and, if applicable, provision the infrastructure.",
    labelNames: ['type', 'version', 'invoker'],
    registers: [registry],
    collect() {
      this.reset();
      // Only with the ClusterVersion at hand (so not on a replica that does not lead, nor before the caches fill).
      if (!source.configMap || !source.clusterVersion()) return;
      const installer = source.configMap('openshift-install');
      const manifests = installer ? undefined : source.configMap('openshift-install-manifests');
      const cm = installer ?? manifests;
      if (!cm) return this.set({ type: '', version: '', invoker: '' }, 1);
      this.set({ type: installer ? 'openshift-install' : 'other', version: cm.data?.version ?? '<missing>', invoker: cm.data?.invoker ?? '<missing>' }, 1);
    },
  });
  new Gauge({
    name: 'cluster_version_operator_update_retrieval_timestamp_seconds',
    help: 'Reports when updates were last successfully retrieved.',
    labelNames: ['name'],
    registers: [registry],
    collect() {
      this.reset();
      const at = source.lastUpdateRetrieval?.();
      if (at !== undefined) this.set({ name: '' }, Math.floor(at / 1000));
    },
  });
  new Gauge({
    name: 'cluster_version_conditional_update_condition_seconds',
    help: 'Reports when the Recommended condition status on a conditional update changed to its current state.',
    labelNames: ['version', 'condition', 'status', 'reason'],
    registers: [registry],
    collect() {
      this.reset();
      for (const update of source.clusterVersion()?.status?.conditionalUpdates ?? []) {
        for (const c of update.conditions ?? []) {
          if (c.type !== 'Recommended') continue;
          this.set({ version: update.release?.version ?? '', condition: c.type, status: c.status, reason: c.reason ?? '' }, seconds(c.lastTransitionTime) ?? 0);
        }
      }
    },
  });
  new Gauge({
    name: 'cluster_version_risk_conditions',
    help: 'Report the risk conditions for the cluster version. -1 is Unknown, 0 is False and 1 is True.',
    labelNames: ['condition', 'risk', 'reason'],
    registers: [registry],
    collect() {
      this.reset();
      for (const r of source.riskConditions?.() ?? []) this.set({ condition: 'Applies', risk: r.risk, reason: r.reason }, r.status === 'True' ? 1 : r.status === 'Unknown' ? -1 : 0);
    },
  });
  const applyDuration = new Histogram({
    name: 'cluster_version_operator_apply_duration_seconds',
    help: 'Time of one pass over the payload, by mode (Initializing, Updating, Reconciling).',
    labelNames: ['mode'],
    buckets: [0.1, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800, 3600],
    registers: [registry],
  });
  const manifestDuration = new Histogram({
    name: 'cluster_version_operator_manifest_apply_duration_seconds',
    help: 'Time to apply one manifest (including waits on CRDs, Jobs and ClusterOperators), by kind.',
    labelNames: ['kind'],
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 5, 30, 120],
    registers: [registry],
  });
  return { registry, applyDuration, manifestDuration, payloadErrors };
}
