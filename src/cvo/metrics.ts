// The cluster-version operator's metrics, named and labelled as OpenShift's CVO exports them so
// that the same alerts and dashboards work:
//   cluster_version{type,version,image,from_version}   Unix time of each milestone: cluster
//       (ClusterVersion created), initial (first release), completed (last completed update),
//       current (the release being reconciled), desired, updating (while an update runs),
//       failure (since when Failing=True)
//   cluster_version_available_updates{upstream,channel} number of recommended updates
//   cluster_version_payload{type,version}               manifests applied / pending in the last pass
//   cluster_operator_up{name,version,reason}             1 when the operator is Available
//   cluster_operator_conditions{name,condition,reason}   1 True, 0 False, -1 Unknown
//   cluster_version_operator_apply_duration_seconds{mode} time per pass over the payload
//   cluster_version_operator_manifest_apply_duration_seconds{kind} time per manifest
// The gauges are computed at scrape time from the operator's informer caches.
import { Gauge, Histogram, Registry } from 'prom-client';
import { isClusterOperatorAvailable } from '../kube/readiness.js';

import type * as api from '../api/index.js';

export interface CvoMetricsSource {
  clusterVersion(): api.ClusterVersion | undefined;
  clusterOperators(): api.ClusterOperator[];
  lastPayloadApplied(): { version: string; applied: number; pending: number } | undefined;
}

const seconds = (time: string | undefined | null): number | undefined => {
  if (!time) return undefined;
  const ms = Date.parse(time);
  return Number.isFinite(ms) ? ms / 1000 : undefined;
};

export interface CvoMetrics {
  registry: Registry;
  applyDuration: Histogram<'mode'>;
  manifestDuration: Histogram<'kind'>;
}

export function createCvoMetrics(source: CvoMetricsSource): CvoMetrics {
  const registry = new Registry();
  new Gauge({
    name: 'cluster_version',
    help: 'Reports the version of the cluster in terms of seconds since the epoch: type cluster (created), initial (first release), completed (last completed update), current, desired, updating and failure.',
    labelNames: ['type', 'version', 'image', 'from_version'],
    registers: [registry],
    collect() {
      this.reset();
      const cv = source.clusterVersion();
      if (!cv) return;
      const history: api.UpdateHistory[] = cv.status?.history ?? [];
      const completed = history.filter((h) => h.state === 'Completed');
      const current = completed[0];
      const previous = completed[1];
      const set = (type: string, entry: { version?: string; image?: string } | undefined, value: number | undefined, from?: string) => {
        if (value === undefined) return;
        this.set({ type, version: entry?.version ?? '', image: entry?.image ?? '', from_version: from ?? '' }, value);
      };
      set('cluster', undefined, seconds(cv.metadata?.creationTimestamp));
      const initial = history[history.length - 1];
      set('initial', initial, seconds(initial?.startedTime));
      if (current) {
        set('completed', current, seconds(current.completionTime), previous?.version);
        set('current', current, seconds(current.startedTime), previous?.version);
      }
      const desired = cv.status?.desired;
      if (desired?.version || desired?.image) {
        const entry = history.find((h) => h.image === desired.image);
        set('desired', { version: desired.version, image: desired.image }, seconds(entry?.startedTime) ?? Date.now() / 1000, current?.version);
      }
      if (history[0]?.state === 'Partial') set('updating', history[0], seconds(history[0].startedTime), current?.version);
      const failing = (cv.status?.conditions ?? []).find((c) => c.type === 'Failing');
      if (failing?.status === 'True') set('failure', history[0], seconds(failing.lastTransitionTime), current?.version);
    },
  });
  new Gauge({
    name: 'cluster_version_available_updates',
    help: 'Number of recommended updates the update service offers this cluster.',
    labelNames: ['upstream', 'channel'],
    registers: [registry],
    collect() {
      this.reset();
      const cv = source.clusterVersion();
      if (!cv?.spec?.upstream) return;
      this.set({ upstream: cv.spec.upstream, channel: cv.spec.channel ?? '' }, (cv.status?.availableUpdates ?? []).length);
    },
  });
  new Gauge({
    name: 'cluster_version_payload',
    help: 'Manifests of the payload applied and pending in the last pass.',
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
  new Gauge({
    name: 'cluster_operator_up',
    help: '1 if a cluster operator is Available, 0 otherwise; version is the operator version it reports.',
    labelNames: ['name', 'version', 'reason'],
    registers: [registry],
    collect() {
      this.reset();
      for (const co of source.clusterOperators()) {
        const available = (co.status?.conditions ?? []).find((c) => c.type === 'Available');
        const version = (co.status?.versions ?? []).find((v) => v.name === 'operator')?.version ?? '';
        this.set({ name: co.metadata?.name, version, reason: available?.reason ?? '' }, isClusterOperatorAvailable(co) ? 1 : 0);
      }
    },
  });
  new Gauge({
    name: 'cluster_operator_conditions',
    help: 'The conditions of each cluster operator: 1 True, 0 False, -1 Unknown.',
    labelNames: ['name', 'condition', 'reason'],
    registers: [registry],
    collect() {
      this.reset();
      for (const co of source.clusterOperators()) {
        for (const c of co.status?.conditions ?? []) {
          this.set({ name: co.metadata?.name, condition: c.type, reason: c.reason ?? '' }, c.status === 'True' ? 1 : c.status === 'False' ? 0 : -1);
        }
      }
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
  return { registry, applyDuration, manifestDuration };
}
