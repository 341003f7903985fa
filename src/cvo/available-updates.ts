// The CVO's available updates: asks the update service (spec.upstream + spec.channel) what the
// cluster may move to, evaluates the risks of conditional updates, and gives the status change
// (availableUpdates, conditionalUpdates, desired.channels, RetrievedUpdates). Polls every
// interval on the CVO's clock, sooner after failures (5 s, 10 s, 20 s, … up to the interval) so
// a flapping service is neither hammered nor left unasked for long; keeps the last answer on
// failure.
import type { Clock } from '../kube/clock.js';
import { rfc3339 } from '../common/time.js';
import { fetchUpdateGraph, RetrievalError } from './updates/upstream.js';
import { walkGraph, GraphWalkError, type Release } from './updates/graph-walk.js';
import { evaluateConditionalUpdate } from './updates/risks.js';
import { prometheusEvaluator } from './updates/prometheus.js';
import { setCondition } from './status.js';

import type * as api from '../api/index.js';
import type { VersionStatus } from './status.js';

export type StatusChange = (status: VersionStatus) => VersionStatus;

export interface UpdatePollerOptions {
  clock: Clock;
  /** How often the update service is asked (default 5 minutes). */
  intervalMs?: number;
  /** A Prometheus-compatible API that PromQL risks are evaluated against (else they are Unknown). */
  metricsUrl?: string;
}

export class UpdatePoller {
  private lastPoll = 0;
  private failures = 0;
  private lastKey = '';
  private lastConfig?: string;
  private lastSyncOrConfigChange?: number;

  constructor(private readonly options: UpdatePollerOptions) {}

  /**
   * When updates were last retrieved successfully, or the upstream or channel last changed (the
   * first attempt counts as a change), in ms on the clock: OpenShift's LastSyncOrConfigChange,
   * exported as cluster_version_operator_update_retrieval_timestamp_seconds.
   */
  lastRetrieval(): number | undefined {
    return this.lastSyncOrConfigChange;
  }

  /** The status change to write when a poll is due for `cv`, else undefined. */
  async poll(cv: api.ClusterVersion): Promise<StatusChange | undefined> {
    const { clock } = this.options;
    const upstream: string | undefined = cv.spec?.upstream;
    const channel: string = cv.spec?.channel ?? '';
    const current = (cv.status?.history ?? []).find((h) => h.state === 'Completed');
    const key = `${upstream}|${channel}|${current?.image}`;
    const interval = this.options.intervalMs ?? 300_000;
    const due = this.failures === 0 ? interval : Math.min(interval, Math.min(5_000, interval) * 2 ** (this.failures - 1));
    if (key === this.lastKey && clock.now() - this.lastPoll < due) return undefined;
    this.lastPoll = clock.now();
    this.lastKey = key;
    const config = `${upstream}|${channel}`;
    if (config !== this.lastConfig) this.lastSyncOrConfigChange = this.lastPoll;
    this.lastConfig = config;
    const attempted = this.lastPoll;
    const fail = (reason: string, message: string): StatusChange => {
      this.failures++;
      return (st) => ({ ...st, conditions: setCondition(st.conditions ?? [], 'RetrievedUpdates', 'False', reason, message, clock.now()) });
    };
    if (!upstream) return fail('NoUpstream', 'No upstream server has been set to retrieve updates.');
    if (!current?.version) return fail('NoCurrentVersion', 'The cluster version does not have a semantic version assigned and cannot calculate valid upgrades.');
    const currentVersion = current.version;
    try {
      const graph = await fetchUpdateGraph({ upstream, channel, version: current.version, id: cv.spec?.clusterID });
      const choices = walkGraph(graph, current.version, current.image);
      const conditionalUpdates: api.ConditionalUpdate[] = [];
      for (const update of choices.conditionalUpdates) {
        const recommended = await evaluateConditionalUpdate(update, this.options.metricsUrl ? prometheusEvaluator(this.options.metricsUrl) : undefined);
        // The graph's rule types are the CRD's (Always, PromQL); the update service serves no others.
        conditionalUpdates.push({ release: update.release, risks: update.risks as api.ConditionalUpdate['risks'], conditions: [{ ...recommended, lastTransitionTime: rfc3339(new Date(clock.now())) }] });
      }
      const available: Release[] = choices.availableUpdates;
      this.failures = 0;
      this.lastSyncOrConfigChange = attempted;
      return (st) => ({
        ...st,
        availableUpdates: available.length ? available : null,
        conditionalUpdates: conditionalUpdates.length ? conditionalUpdates : undefined,
        desired: { ...(st.desired ?? { version: currentVersion, image: current.image }), channels: choices.channels.length ? choices.channels : undefined },
        conditions: setCondition(st.conditions ?? [], 'RetrievedUpdates', 'True', 'AsExpected', '', clock.now()),
      });
    } catch (e) {
      if (e instanceof RetrievalError || e instanceof GraphWalkError) return fail(e.reason, e.message);
      return fail('RemoteFailed', (e as Error).message);
    }
  }
}
